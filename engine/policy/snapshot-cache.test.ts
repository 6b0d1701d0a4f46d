// The snapshot cache's own structure: address keys read into words, the open-addressing index under
// collisions and deletes, CLOCK eviction of a full table, IPv6 and client-ID keys. Each case checks the
// cache against a plain Map of what it must hold.
import { test, type TestContext } from 'node:test'
import { formatIp, parseIpBytes } from '../net/index.js'
import { ipv4Text, KEY_IPV4, KEY_IPV6, KEY_TEXT, readAddressKey, SnapshotCache } from './snapshot-cache.js'

/** A deterministic generator (mulberry32), so a failure names a case that runs again the same. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** IPv6 bytes with many zero groups (so that every place and length of `::` turns up). */
function sparseIpv6(next: () => number): Uint8Array {
  const bytes = new Uint8Array(16)
  for (let g = 0; g < 8; g++) {
    if (next() < 0.55) continue
    const v = next() < 0.3 ? 1 + Math.floor(next() * 15) : Math.floor(next() * 0x10000)
    bytes[2 * g] = v >> 8
    bytes[2 * g + 1] = v & 255
  }
  return bytes
}

/** Another spelling of `bytes`: any zero run (or none) as `::`, maybe a group with a leading zero or in upper case. */
function spelling(bytes: Uint8Array, next: () => number): string {
  const groups: string[] = []
  for (let g = 0; g < 8; g++) groups.push(((bytes[2 * g]! << 8) | bytes[2 * g + 1]!).toString(16))
  const runs: Array<[number, number]> = []
  for (let i = 0; i < 8; i++)
    if (groups[i] === '0') for (let j = i + 1; j <= 8 && groups[j - 1] === '0'; j++) runs.push([i, j])
  if (next() < 0.2) {
    const g = Math.floor(next() * 8)
    if (groups[g]!.length < 4) groups[g] = '0' + groups[g]!
  }
  let text = groups.join(':')
  if (runs.length > 0 && next() < 0.8) {
    const [i, j] = runs[Math.floor(next() * runs.length)]!
    text = `${groups.slice(0, i).join(':')}::${groups.slice(j).join(':')}`
  }
  return next() < 0.1 ? text.toUpperCase() : text
}

const wordsOf = (bytes: Uint8Array): number[] => {
  const v = new DataView(bytes.buffer, bytes.byteOffset, 16)
  return [0, 4, 8, 12].map((o) => v.getInt32(o))
}

test('a canonical dotted quad is read as its 32 bits; a quad in any other form stays text', (t: TestContext) => {
  const words = new Int32Array(4)
  for (const a of ['0.0.0.0', '10.0.0.1', '127.0.0.1', '192.168.255.7', '255.255.255.255', '128.0.0.1']) {
    t.assert.strictEqual(readAddressKey(a, words), KEY_IPV4, a)
    t.assert.strictEqual(ipv4Text(words[0]!), a)
  }
  for (const a of [
    '010.0.0.1',
    '10.0.0',
    '10.0.0.1.',
    '10..0.1',
    '256.0.0.1',
    '1.2.3.4.5',
    'id:phone',
    '::ffff:10.0.0.1'
  ])
    t.assert.strictEqual(readAddressKey(a, words), KEY_TEXT, a)
})

test('IPv6 text is read as its 128 bits exactly when it is canonical (as formatIp writes it)', (t: TestContext) => {
  const next = random(7)
  const words = new Int32Array(4)
  let canonical = 0
  let other = 0
  for (let n = 0; n < 20_000; n++) {
    const bytes = sparseIpv6(next)
    const text = formatIp(bytes)
    t.assert.strictEqual(readAddressKey(text, words), KEY_IPV6, text)
    t.assert.deepStrictEqual([...words], wordsOf(bytes), text)
    const spelt = spelling(bytes, next)
    const isCanonical = spelt === formatIp(parseIpBytes(spelt)!)
    t.assert.strictEqual(readAddressKey(spelt, words), isCanonical ? KEY_IPV6 : KEY_TEXT, spelt)
    if (isCanonical) canonical++
    else other++
  }
  t.assert.ok(canonical > 1000 && other > 1000, `${canonical} canonical and ${other} other spellings`)
  for (const a of ['::', '::1', '1::', '2001:db8::1', 'fe80::1:0:0:1', '1:0:0:1::'])
    t.assert.strictEqual(readAddressKey(a, words), KEY_IPV6, a)
  for (const a of [
    ':::',
    '1:::2',
    '1::2::3',
    ':1::',
    '::1:',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7::',
    '12345::',
    'g::1'
  ])
    t.assert.strictEqual(readAddressKey(a, words), KEY_TEXT, a)
})

/** Keys of every kind, the address ones many more, in an order where neighbours share words. */
function keyPool(n: number): string[] {
  const keys: string[] = []
  for (let i = 0; i < n; i++) {
    if (i % 3 === 0) keys.push(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`)
    else if (i % 3 === 1)
      keys.push(formatIp(Uint8Array.from([0x20, 1, 0xd, 0xb8, 0, 0, i >> 8, i & 255, 0, 0, 0, 0, 0, 0, 0, 1])))
    else if (i % 30 === 2) keys.push(`id:client-${i}`)
    else keys.push(formatIp(Uint8Array.from([0x20, 1, 0xd, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, i >> 8, i & 255])))
  }
  return keys
}

test('sets, gets and deletes of random keys agree with a Map while nothing is evicted', (t: TestContext) => {
  const keys = keyPool(3000)
  const cache = new SnapshotCache<number>(keys.length)
  const model = new Map<string, number>()
  const next = random(11)
  for (let op = 0; op < 60_000; op++) {
    const key = keys[Math.floor(next() * keys.length)]!
    const r = next()
    if (r < 0.45) {
      cache.set(key, op)
      model.set(key, op)
    } else if (r < 0.7) {
      // Deletes make holes in probe runs: a key after one must still be found (backward shift).
      cache.delete(key)
      model.delete(key)
    } else t.assert.strictEqual(cache.get(key), model.get(key), `${key} at op ${op}`)
  }
  t.assert.strictEqual(cache.size, model.size)
  for (const key of keys) t.assert.strictEqual(cache.get(key), model.get(key), key)
  t.assert.deepStrictEqual(
    [...cache.entries()].sort((a, b) => a - b),
    [...model.values()].sort((a, b) => a - b)
  )
})

test('keys whose hashes collide are all found, and deleting any of them leaves the others found', (t: TestContext) => {
  // 1,000 keys in a cache of 1,024 slots fill its 2,048-position index to half: long probe runs.
  const keys = keyPool(1000)
  for (const deleteFirst of [true, false]) {
    const cache = new SnapshotCache<string>(1024)
    for (const key of keys) cache.set(key, key)
    for (const key of keys) t.assert.strictEqual(cache.get(key), key)
    const gone = new Set(keys.filter((_, i) => (deleteFirst ? i % 2 === 0 : i % 5 === 4)))
    for (const key of gone) cache.delete(key)
    for (const key of keys) t.assert.strictEqual(cache.get(key), gone.has(key) ? undefined : key, key)
    t.assert.strictEqual(cache.size, keys.length - gone.size)
    // The freed slots are filled again, and every key is back.
    for (const key of gone) cache.set(key, key)
    for (const key of keys) t.assert.strictEqual(cache.get(key), key, key)
  }
})

test('an IPv4 key and an IPv6 key with the same words are two entries', (t: TestContext) => {
  // 1.2.3.4 is words [0x01020304, 0, 0, 0]; so is 102:304::. Each pair shares a probe run, where only
  // the kind tells them apart.
  const twins: Array<[string, string]> = []
  for (let i = 0; i < 1365; i++) {
    const v4 = `10.${i >> 8}.${i & 255}.1`
    twins.push([v4, `${((10 << 8) | (i >> 8)).toString(16)}:${(((i & 255) << 8) | 1).toString(16)}::`])
  }
  const cache = new SnapshotCache<string>(2730)
  const words = new Int32Array(4)
  for (const [v4, v6] of twins) {
    readAddressKey(v4, words)
    const w0 = words[0]
    t.assert.strictEqual(readAddressKey(v6, words), KEY_IPV6, v6)
    t.assert.deepStrictEqual([...words], [w0, 0, 0, 0], v6)
    cache.set(v4, v4)
    cache.set(v6, v6)
  }
  for (const [v4, v6] of twins) t.assert.deepStrictEqual([cache.get(v4), cache.get(v6)], [v4, v6])
  for (const [v4] of twins) cache.delete(v4)
  for (const [v4, v6] of twins) t.assert.deepStrictEqual([cache.get(v4), cache.get(v6)], [undefined, v6])
})

test('a full table evicts the keys not read since the hand passed, of every kind, and keeps those read', (t: TestContext) => {
  const CACHE = 200
  const keys = keyPool(5000)
  const hot = keys.slice(0, 20)
  const cold = keys.slice(20)
  const cache = new SnapshotCache<string>(CACHE)
  for (const key of hot) cache.set(key, key)
  for (const key of cold) {
    cache.set(key, key)
    for (const h of hot) t.assert.strictEqual(cache.get(h), h, `${h} after ${key}`)
    t.assert.ok(cache.size <= CACHE)
  }
  t.assert.strictEqual(cache.size, CACHE)
  // What is held is exactly the hot keys and the last cold ones; no evicted key is still found.
  const held = new Set([...hot, ...cold.slice(-(CACHE - hot.length))])
  for (const key of keys) t.assert.strictEqual(cache.get(key), held.has(key) ? key : undefined, key)
  t.assert.deepStrictEqual(new Set(cache.entries()), held)
})

test('client-ID keys are cached, deleted and evicted beside the addresses', (t: TestContext) => {
  const cache = new SnapshotCache<string>(3)
  cache.set('id:phone', 'a')
  cache.set('2001:db8::1', 'b')
  t.assert.strictEqual(cache.get('id:phone'), 'a')
  cache.delete('id:phone')
  t.assert.strictEqual(cache.get('id:phone'), undefined)
  t.assert.strictEqual(cache.size, 1)
  cache.set('id:phone', 'c')
  cache.set('id:tablet', 'd')
  cache.get('2001:db8::1')
  cache.get('id:tablet')
  // Full: the hand passes the two read and takes the one not read since it was set.
  cache.set('10.0.0.1', 'e')
  t.assert.strictEqual(cache.get('id:phone'), undefined)
  t.assert.deepStrictEqual([cache.get('2001:db8::1'), cache.get('id:tablet'), cache.get('10.0.0.1')], ['b', 'd', 'e'])
  // A new client ID in the slot a text key left.
  cache.set('id:phone', 'f')
  t.assert.strictEqual(cache.size, 3)
  t.assert.strictEqual(cache.get('id:phone'), 'f')
})

test('sweep sees each key as canonical text and evicts the entries it picks', (t: TestContext) => {
  const cache = new SnapshotCache<number>(100)
  const keys = ['10.0.0.1', '255.255.255.255', '2001:db8::1', '::', 'fe80::1:0:0:1', 'id:phone', '0::1']
  keys.forEach((k, i) => cache.set(k, i))
  const seen: string[] = []
  cache.sweep((key, value) => {
    seen.push(key)
    t.assert.strictEqual(value, keys.indexOf(key))
    return key.includes(':') && !key.startsWith('id:')
  })
  t.assert.deepStrictEqual(seen.sort(), [...keys].sort())
  t.assert.deepStrictEqual(
    keys.map((k) => cache.get(k)),
    [0, 1, undefined, undefined, undefined, 5, undefined]
  )
  t.assert.strictEqual(cache.size, 3)
  cache.clear()
  t.assert.strictEqual(cache.size, 0)
  t.assert.strictEqual(cache.get('10.0.0.1'), undefined)
  cache.set('10.0.0.1', 9)
  t.assert.strictEqual(cache.get('10.0.0.1'), 9)
})
