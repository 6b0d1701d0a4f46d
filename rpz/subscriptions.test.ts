/**
 * Subscribed lists in the RPZ zones: the DNS role enforces them, so the zones the resolvers transfer
 * hold them too. Entries are written as the refresher writes them (engine/lists/apply.ts) and read
 * back by kdig AXFR and IXFR from the rpz role as a child process.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { until } from '../engine/testing/wait.js'
import { applyEntries } from '../engine/lists/apply.js'
import { BLOCK_IP, rpzWorld, tool, zoneLines } from './testing/world.js'

const G = 'global.rpz.filterd'

function triggers(lines: string[]): string[] {
  return lines.filter((l) => l.includes('.test.') && !l.includes(' soa '))
}

test('black/whitelist and category subscriptions are in the global and category zones, and follow a refresh', async (t) => {
  const w = await rpzWorld(t)
  const axfr = async (zone: string): Promise<string[]> =>
    zoneLines(await tool('kdig', ['@127.0.0.1', '-p', String(w.dnsPort), zone, 'AXFR']))
  const serialBefore = w.store.generation()
  await applyEntries(w.store, 'ads', new Set(['tracker.test', 'cdn.good.test']), 'black')
  await applyEntries(w.store, 'allow', new Set(['fine.test']), 'white')
  await applyEntries(w.store, 'gambling', new Set(['slots.test']), 7)
  await applyEntries(w.store, 'new-cat', new Set(['phish.test']), 40)
  await until('the zones at the new serial', async () => {
    const zones = (await (await fetch(`http://127.0.0.1:${w.httpPort}/zones`)).json()) as {
      zones: Array<{ name: string; serial: number }>
    }
    return zones.zones.some((z) => z.name === 'cat-40.rpz.filterd' && z.serial > serialBefore)
  })
  const global = triggers(await axfr(G))
  for (const l of [
    `tracker.test.${G}. a ${BLOCK_IP}`,
    `*.tracker.test.${G}. a ${BLOCK_IP}`,
    `fine.test.${G}. cname rpz-passthru.`,
    `*.fine.test.${G}. cname rpz-passthru.`
  ])
    assert.ok(global.includes(l), `${l} in ${global.join(', ')}`)
  assert.ok(
    !global.some((l) => l.startsWith('cdn.good.test')),
    'a subscribed name under an operator-whitelisted one is passed, as the policy does'
  )
  const cat7 = triggers(await axfr('cat-7.rpz.filterd'))
  assert.ok(cat7.includes(`slots.test.cat-7.rpz.filterd. a ${BLOCK_IP}`), 'beside the category database')
  assert.ok(cat7.includes(`casino.test.cat-7.rpz.filterd. a ${BLOCK_IP}`))
  assert.deepEqual(triggers(await axfr('cat-40.rpz.filterd')), [
    `*.phish.test.cat-40.rpz.filterd. a ${BLOCK_IP}`,
    `phish.test.cat-40.rpz.filterd. a ${BLOCK_IP}`
  ])

  // A refresh that drops a name and adds one: a secondary at the previous serial gets just that.
  const before = Number((await tool('dig', ['@127.0.0.1', '-p', String(w.dnsPort), G, 'SOA', '+short'])).split(' ')[2])
  await applyEntries(w.store, 'ads', new Set(['cdn.good.test', 'pixel.test']), 'black')
  await until('the global zone moved', async () => {
    const soa = await tool('dig', ['@127.0.0.1', '-p', String(w.dnsPort), G, 'SOA', '+short'])
    return Number(soa.split(' ')[2]) !== before
  })
  const ixfr = triggers(zoneLines(await tool('kdig', ['@127.0.0.1', '-p', String(w.dnsPort), G, `IXFR=${before}`])))
  assert.deepEqual(ixfr, [
    `*.pixel.test.${G}. a ${BLOCK_IP}`,
    `*.tracker.test.${G}. a ${BLOCK_IP}`,
    `pixel.test.${G}. a ${BLOCK_IP}`,
    `tracker.test.${G}. a ${BLOCK_IP}`
  ])
  assert.ok(!triggers(await axfr(G)).some((l) => l.startsWith('tracker.test')), 'the dropped name is gone')
})
