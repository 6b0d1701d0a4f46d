import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createSocket } from 'node:dgram'
import { once } from 'node:events'
import { buildCats } from '../engine/testing/store.js'
import { fetchJson, until } from '../engine/testing/wait.js'
import { buildEmptyReply, OPCODE_NOTIFY, parseMessage } from '../engine/rpz-zones/message.js'
import { readSoa } from '../engine/rpz-zones/rdata.js'
import { BLOCK_IP, rpzWorld, tool, TSIG_NAME, TSIG_SECRET, zoneLines } from './testing/world.js'

const G = 'global.rpz.filterd'

async function serialOf(port: number, zone: string): Promise<number> {
  const out = await tool('dig', [`@127.0.0.1`, '-p', String(port), zone, 'SOA', '+short'])
  return Number(out.trim().split(/\s+/)[2])
}

test('serves the global lists and each category as RPZ zones by AXFR, answering as the policy does', async (t: TestContext) => {
  const w = await rpzWorld(t)
  const global = zoneLines(await tool('dig', ['@127.0.0.1', '-p', String(w.dnsPort), G, 'AXFR']))
  // The built-in whitelist (vendor and OS update hosts) is there too, as passthru; the test's names:
  const triggers = global.filter((l) => l.includes('.test.'))
  assert.ok(global.some((l) => l.startsWith(`*.mirrors.fedoraproject.org.${G}. cname rpz-passthru.`)))
  assert.deepEqual(
    triggers,
    [
      `*.bad.test.${G}. a ${BLOCK_IP}`,
      `*.good.test.${G}. cname rpz-passthru.`,
      `bad.test.${G}. a ${BLOCK_IP}`,
      `good.test.${G}. cname rpz-passthru.`
    ].sort(),
    'ads.good.test is left out: the whitelisted parent passes it, as the policy does'
  )
  assert.equal(global.filter((l) => l.includes(' soa ')).length, 2, 'SOA first and last')

  const cat7 = zoneLines(await tool('kdig', ['@127.0.0.1', '-p', String(w.dnsPort), 'cat-7.rpz.filterd', 'AXFR']))
  assert.ok(cat7.includes(`casino.test.cat-7.rpz.filterd. a ${BLOCK_IP}`))
  assert.ok(cat7.includes(`*.poker.test.cat-7.rpz.filterd. a ${BLOCK_IP}`))
  assert.ok(!cat7.some((l) => l.startsWith('adult.test')))

  const zones = await fetchJson(`http://127.0.0.1:${w.httpPort}/zones`)
  assert.deepEqual(
    zones.body.zones.map((z: { name: string }) => z.name),
    [G, 'cat-3.rpz.filterd', 'cat-7.rpz.filterd', 'cat-12.rpz.filterd']
  )
  const serial = await serialOf(w.dnsPort, G)
  assert.equal(zones.body.zones[0].serial, serial)
  assert.equal(serial, w.store.generation(), 'the SOA serial is the policy generation')
  const metrics = await (await fetch(`http://127.0.0.1:${w.httpPort}/metrics`)).text()
  assert.match(metrics, new RegExp(`filterd_rpz_zone_serial\\{zone="${G.replaceAll('.', '\\.')}"\\} ${serial}`))
  assert.match(metrics, /filterd_rpz_requests_total\{kind="axfr"\} 2/)
  const unknown = await tool('dig', ['@127.0.0.1', '-p', String(w.dnsPort), 'other.zone', 'AXFR'])
  assert.match(unknown, /Transfer failed|NOTAUTH/)
})

test('IXFR sends what changed since the secondary serial; a serial the journal does not know gets the whole zone', async (t: TestContext) => {
  const w = await rpzWorld(t)
  const before = await serialOf(w.dnsPort, G)
  await w.store.write((wr) => {
    wr.putList(null, 'black', ['bad.test', 'new.test'])
  })
  await until('a new serial', async () => (await serialOf(w.dnsPort, G)) !== before)
  const after = await serialOf(w.dnsPort, G)
  const ixfr = await tool('dig', ['@127.0.0.1', '-p', String(w.dnsPort), G, `IXFR=${before}`])
  const lines = zoneLines(ixfr)
  assert.deepEqual(
    lines.filter((l) => !l.includes(' soa ')),
    [`*.new.test.${G}. a ${BLOCK_IP}`, `new.test.${G}. a ${BLOCK_IP}`]
  )
  assert.equal(lines.filter((l) => l.includes(' soa ')).length, 4, 'new, old, new, new SOA')
  const current = zoneLines(await tool('dig', ['@127.0.0.1', '-p', String(w.dnsPort), G, `IXFR=${after}`]))
  assert.equal(current.length, 1, 'a current secondary gets the SOA alone')
  const old = zoneLines(await tool('dig', ['@127.0.0.1', '-p', String(w.dnsPort), G, `IXFR=${before - 1}`]))
  assert.ok(
    old.some((l) => l.startsWith(`bad.test.${G}.`)),
    'an unknown serial gets the whole zone'
  )
})

test('large zones span several messages; TSIG and the address rules guard every transfer', async (t: TestContext) => {
  const w = await rpzWorld(t, { tsig: true })
  const names: Record<string, number[]> = {}
  for (let i = 0; i < 5000; i++) names[`site${i}.example`] = [20]
  const before = await serialOf(w.dnsPort, G)
  await buildCats(w.store, names)
  await until('the new category zone', async () => (await serialOf(w.dnsPort, 'cat-20.rpz.filterd')) > before)
  const key = `hmac-sha256:${TSIG_NAME}:${TSIG_SECRET}`
  const out = await tool('kdig', ['@127.0.0.1', '-p', String(w.dnsPort), '-y', key, 'cat-20.rpz.filterd', 'AXFR'])
  assert.match(out, /TSIG/)
  const lines = zoneLines(out)
  assert.equal(lines.filter((l) => !l.includes(' soa ') && !l.includes(' ns ')).length, 10_000)
  const messages = Number(/Received \d+ B \((\d+) messages/.exec(out)?.[1])
  assert.ok(messages > 5, `${messages} messages`)

  const unsigned = await tool('dig', ['@127.0.0.1', '-p', String(w.dnsPort), G, 'AXFR'])
  assert.match(unsigned, /Transfer failed|NOTAUTH/)
  const wrongKey = `hmac-sha256:${TSIG_NAME}:${Buffer.alloc(32, 1).toString('base64')}`
  await assert.rejects(tool('kdig', ['@127.0.0.1', '-p', String(w.dnsPort), '-y', wrongKey, G, 'AXFR']), /NOTAUTH/)
  const metrics = await (await fetch(`http://127.0.0.1:${w.httpPort}/metrics`)).text()
  assert.match(metrics, /filterd_rpz_requests_total\{kind="tsig-failed"\} 2/)
})

test('transfers from an address the rules deny are refused', async (t: TestContext) => {
  const w = await rpzWorld(t, { access: ['deny 127.0.0.1', 'allow all'] })
  const out = await tool('dig', ['@127.0.0.1', '-p', String(w.dnsPort), G, 'AXFR'])
  assert.match(out, /REFUSED|Transfer failed/)
  assert.doesNotMatch(out, /bad\.test/)
})

test('a change sends NOTIFY with the new serial to each configured secondary, until it answers', async (t: TestContext) => {
  const secondary = createSocket('udp4')
  secondary.bind(0, '127.0.0.1')
  await once(secondary, 'listening')
  t.after(() => secondary.close())
  const notified: Array<{ zone: string; serial: number }> = []
  let ignoreFrom = Infinity
  secondary.on('message', (raw, rinfo) => {
    const m = parseMessage(raw)
    if (m.header.opcode !== OPCODE_NOTIFY) return
    const soa = m.answer[0]
    const serial = soa === undefined ? -1 : readSoa(raw, soa).serial
    notified.push({ zone: m.question[0]!.name, serial })
    // The first NOTIFY of the new serial goes unanswered: the role must send it again.
    if (serial >= ignoreFrom && notified.filter((n) => n.serial === serial).length === 1) return
    secondary.send(
      buildEmptyReply({ id: m.header.id, opcode: OPCODE_NOTIFY, question: m.question }, 0, true),
      rinfo.port,
      rinfo.address
    )
  })
  const port = secondary.address().port
  const w = await rpzWorld(t, { notify: [port] })
  await until('the start NOTIFYs', () => notified.length >= 4)
  const count = notified.length
  ignoreFrom = w.store.generation() + 1
  await w.store.write((wr) => {
    wr.putList(null, 'white', ['good.test', 'fine.test'])
  })
  const serial = w.store.generation()
  await until(
    'the NOTIFY with the new serial, sent again',
    () => notified.filter((n) => n.zone === G && n.serial === serial).length === 2
  )
  await new Promise((resolve) => setTimeout(resolve, 2500))
  assert.equal(notified.filter((n) => n.serial === serial).length, 2, 'no NOTIFY after the answer')
  assert.ok(!notified.slice(count).some((n) => n.zone !== G), 'only the changed zone is notified')
})

test('per-user zones: the user lists as QNAME triggers, a disabled user addresses as CLIENT-IP passthru', async (t: TestContext) => {
  const w = await rpzWorld(t, { users: true })
  const out = zoneLines(await tool('dig', ['@127.0.0.1', '-p', String(w.dnsPort), 'user-alice.rpz.filterd', 'AXFR']))
  const triggers = out.filter((l) => !l.includes(' soa ') && !l.includes(' ns '))
  assert.deepEqual(triggers, [
    '16.0.0.9.10.rpz-client-ip.user-alice.rpz.filterd. cname rpz-passthru.',
    '32.3.2.1.10.rpz-client-ip.user-alice.rpz.filterd. cname rpz-passthru.'
  ])
})
