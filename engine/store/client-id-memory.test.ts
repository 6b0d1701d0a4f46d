import { test, type TestContext } from 'node:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { makeTempDir } from '../testing/temp.js'
import { ClientIdMemory, CLIENT_ID_MEMORY_DIR } from './client-id-memory.js'

function memoryAt(t: TestContext, now: { ms: number }, lifetimeSeconds = 0): { memory: ClientIdMemory; dir: string } {
  const { dir, cleanup } = makeTempDir('filterd-client-id-memory-')
  const memory = ClientIdMemory.open(dir, { lifetimeSeconds, now: () => now.ms })
  t.after(async () => {
    await memory.close()
    cleanup()
  })
  return { memory, dir }
}

test('an entry answers its address and name only, until its life ends (at least 60 s)', async (t: TestContext) => {
  const now = { ms: 1_000_000 }
  const { memory, dir } = memoryAt(t, now, 10)
  await memory.remember('203.0.113.5', 'social.example', 'kid1')
  t.assert.ok(readdirSync(join(dir, CLIENT_ID_MEMORY_DIR)).includes('data.mdb'))
  t.assert.strictEqual(memory.recall('203.0.113.5', 'social.example'), 'kid1')
  t.assert.strictEqual(memory.recall('203.0.113.6', 'social.example'), undefined)
  t.assert.strictEqual(memory.recall('203.0.113.5', 'www.social.example'), undefined)
  now.ms += 59_999
  t.assert.strictEqual(memory.recall('203.0.113.5', 'social.example'), 'kid1')
  now.ms += 1
  t.assert.strictEqual(memory.recall('203.0.113.5', 'social.example'), undefined)
})

test('a repeated answer rewrites only past half the life; another ID replaces the entry at once', async (t: TestContext) => {
  const now = { ms: 1_000_000 }
  const { memory } = memoryAt(t, now, 120)
  t.assert.notStrictEqual(memory.remember('198.51.100.1', 'a.example', 'kid1'), null)
  now.ms += 59_000
  t.assert.strictEqual(memory.remember('198.51.100.1', 'a.example', 'kid1'), null)
  const other = memory.remember('198.51.100.1', 'a.example', 'kid2')
  t.assert.notStrictEqual(other, null)
  await other
  t.assert.strictEqual(memory.recall('198.51.100.1', 'a.example'), 'kid2')
  now.ms += 61_000
  const again = memory.remember('198.51.100.1', 'a.example', 'kid2')
  t.assert.notStrictEqual(again, null)
  await again
  now.ms += 100_000
  t.assert.strictEqual(memory.recall('198.51.100.1', 'a.example'), 'kid2')
})
