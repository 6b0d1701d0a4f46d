/**
 * Scheduled rules through the real DNS server, with dig and the test clock
 * (FILTERD_TEST_CLOCK_FILE, engine/schedule/clock.ts): each boundary changes the answer at its second,
 * across midnight, with several windows, over the spring and autumn changes of Europe/Berlin and
 * America/New_York, for rules in other zones than the server's (the daemon runs with TZ=Asia/Tokyo),
 * and the TTL of a scheduled answer, blocked or forwarded, ends at the boundary. Both dispatch modes.
 */
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CATEGORY } from '../engine/categories/index.js'
import { TEST_CLOCK_ENV, type ScheduledRule } from '../engine/schedule/index.js'
import { BLOCK_V4, addUser, dig, digMissing, world, writeConfigFile } from '../engine/testing/dns.js'
import { startRole } from '../engine/testing/daemon.js'

const RULES: ScheduledRule[] = [
  {
    name: 'school nights',
    timezone: 'UTC',
    windows: [
      { days: ['sun', 'mon', 'tue', 'wed', 'thu'], from: '22:00', to: '07:00' },
      { days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '12:00', to: '13:00' }
    ],
    filter: [CATEGORY.SOCIAL_NETWORKS]
  },
  {
    name: 'berlin sundays',
    timezone: 'Europe/Berlin',
    windows: [{ days: ['sun'], from: '02:30', to: '04:00' }],
    blacklist: ['berlin.example']
  },
  {
    name: 'new york sundays',
    timezone: 'America/New_York',
    windows: [{ days: ['sun'], from: '01:30', to: '03:00' }],
    blacklist: ['ny.example']
  },
  {
    name: 'new york spring',
    timezone: 'America/New_York',
    windows: [{ days: ['sun'], from: '02:30', to: '05:00' }],
    blacklist: ['nyspring.example']
  }
]

/** dig's answer: the first record's TTL and data. */
async function answer(port: number, name: string): Promise<{ ttl: number; data: string } | undefined> {
  const out = await dig(['@127.0.0.1', '-p', String(port), name, 'A', '+noall', '+answer', '+tries=1', '+time=3'])
  if (out === undefined) return undefined
  const line = out.split('\n').find((l) => /\sIN\s+A\s/.test(l))
  if (line === undefined) throw new Error(`no A record for ${name}: ${out}`)
  const f = line.trim().split(/\s+/)
  return { ttl: Number(f[1]), data: f[4] ?? '' }
}

for (const dispatch of ['inline', 'pool'] as const) {
  test(`scheduled rules switch at the boundary second through dig (dispatch ${dispatch})`, async (t: TestContext) => {
    const w = await world(t, {
      cats: { 'social.example': [CATEGORY.SOCIAL_NETWORKS] },
      stub: { ttl: 300 }
    })
    await addUser(w.store, { name: 'kid', ip: ['127.0.0.1'], schedules: RULES })
    const clockFile = join(w.dir, 'clock')
    const setClock = (iso: string): void => {
      writeFileSync(clockFile, iso)
    }
    setClock('2026-11-26T21:59:59Z') // a Thursday
    const file = writeConfigFile(w, { proxy: { dispatch, ttl: 3600 } })
    const dns = await startRole(t, 'dns', file, { [TEST_CLOCK_ENV]: clockFile, TZ: 'Asia/Tokyo' })
    const probe = await answer(dns.port, 'social.example')
    if (probe === undefined) {
      digMissing(t)
      return
    }
    const expect = async (iso: string, name: string, blocked: boolean, ttl: number): Promise<void> => {
      setClock(iso)
      const a = await answer(dns.port, name)
      t.assert.deepStrictEqual({ blocked: a?.data === BLOCK_V4, ttl: a?.ttl }, { blocked, ttl }, `${name} at ${iso}`)
    }
    // 21:59:59 forwarded, its TTL ending at the boundary; 22:00:00 blocked until 07:00 (capped by proxy.ttl).
    await expect('2026-11-26T21:59:59Z', 'social.example', false, 1)
    await expect('2026-11-26T22:00:00Z', 'social.example', true, 3600)
    // Across midnight, into Friday morning; the blocked answer's TTL ends at 07:00.
    await expect('2026-11-27T06:59:30Z', 'social.example', true, 30)
    await expect('2026-11-27T07:00:00Z', 'social.example', false, 300)
    // The second window of the day: 12:00-13:00.
    await expect('2026-11-27T11:59:58Z', 'social.example', false, 2)
    await expect('2026-11-27T12:00:00Z', 'social.example', true, 3600)
    await expect('2026-11-27T13:00:00Z', 'social.example', false, 300)
    // Europe/Berlin spring: 02:30 does not exist on 2026-03-29; the window opens at 03:00 CEST (01:00 UTC).
    await expect('2026-03-29T00:59:59Z', 'berlin.example', false, 1)
    await expect('2026-03-29T01:00:00Z', 'berlin.example', true, 3600)
    await expect('2026-03-29T02:00:00Z', 'berlin.example', false, 300)
    // Europe/Berlin autumn: 02:30 happens twice on 2026-10-25; the window opens at the first (00:30 UTC), once.
    await expect('2026-10-25T00:29:59Z', 'berlin.example', false, 1)
    await expect('2026-10-25T00:30:00Z', 'berlin.example', true, 3600)
    await expect('2026-10-25T01:30:00Z', 'berlin.example', true, 3600)
    await expect('2026-10-25T04:00:00Z', 'berlin.example', false, 300)
    // America/New_York spring (2026-03-08): 02:30 does not exist; the window opens at 03:00 EDT (07:00 UTC).
    await expect('2026-03-08T06:59:59Z', 'nyspring.example', false, 1)
    await expect('2026-03-08T07:00:00Z', 'nyspring.example', true, 3600)
    // America/New_York autumn (2026-11-01): 01:30 EDT (05:30 UTC) opens, the repeated 01:30 EST does not reopen.
    await expect('2026-11-01T05:29:59Z', 'ny.example', false, 1)
    await expect('2026-11-01T05:30:00Z', 'ny.example', true, 3600)
    await expect('2026-11-01T07:59:50Z', 'ny.example', true, 10)
    await expect('2026-11-01T08:00:00Z', 'ny.example', false, 300)
  })
}
