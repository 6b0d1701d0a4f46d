// Scheduled rules in the management API: the user, /config/ and /userconfig/ take them, bad
// ones get 422 naming the field, and /check names the rule and window that decided and when the decision
// changes next, at both sides of each boundary (the test clock, FILTERD_TEST_CLOCK_FILE, read by the API's
// policy as by the DNS server's).
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { TEST_CLOCK_ENV } from '../engine/schedule/index.js'
import { buildCats } from '../engine/testing/store.js'
import { makeTempDir } from '../engine/testing/temp.js'
import { call, errorOf, startApi, type StartedApi } from './testing/fixtures.js'

const NIGHTS = {
  name: 'school nights',
  timezone: 'UTC',
  windows: [{ days: ['sun', 'mon', 'tue', 'wed', 'thu'], from: '22:00', to: '07:00' }],
  filter: [40]
}

async function serve(t: TestContext): Promise<{ api: StartedApi; setClock: (iso: string) => void }> {
  const { dir, cleanup } = makeTempDir('filterd-sched-api-')
  t.after(cleanup)
  const file = join(dir, 'clock')
  const setClock = (iso: string): void => {
    writeFileSync(file, iso)
  }
  setClock('2026-11-26T21:59:59Z')
  const saved = process.env[TEST_CLOCK_ENV]
  process.env[TEST_CLOCK_ENV] = file
  const api = await startApi()
  if (saved === undefined) delete process.env[TEST_CLOCK_ENV]
  else process.env[TEST_CLOCK_ENV] = saved
  t.after(() => api.close())
  await buildCats(api.store, { 'social.example': [40], 'casino.example': [41] })
  return { api, setClock }
}

test('bad schedules get 422 naming the field', async (t: TestContext) => {
  const { api } = await serve(t)
  const cases: Array<[unknown, string, string]> = [
    [{ ...NIGHTS, timezone: 'Mars/Olympus' }, 'API_INVALID_BODY', 'schedules[0].timezone'],
    [
      { ...NIGHTS, windows: [{ days: ['mon'], from: '25:00', to: '07:00' }] },
      'API_INVALID_BODY',
      'schedules[0].windows[0].from'
    ],
    [
      { ...NIGHTS, windows: [{ days: ['mon'], from: '10:00', to: '9:00' }] },
      'API_INVALID_BODY',
      'schedules[0].windows[0].to'
    ],
    [{ ...NIGHTS, windows: [] }, 'API_INVALID_BODY', 'schedules[0].windows'],
    [
      {
        ...NIGHTS,
        windows: [
          { days: ['mon'], from: '22:00', to: '07:00' },
          { days: ['tue'], from: '06:00', to: '08:00' }
        ]
      },
      'API_INVALID_BODY',
      'schedules[0].windows[1]'
    ],
    [{ ...NIGHTS, filter: [40, 99] }, 'API_UNKNOWN_CATEGORY', 'schedules[0].filter[1]'],
    [
      { ...NIGHTS, windows: [{ days: ['someday'], from: '10:00', to: '11:00' }] },
      'API_INVALID_BODY',
      'schedules[0].windows[0].days[0]'
    ],
    [{ ...NIGHTS, blacklist: ['bad name'] }, 'API_INVALID_DOMAIN', 'schedules[0].blacklist[0]']
  ]
  for (const [rule, code, field] of cases) {
    for (const path of ['/users/kid', '/config/', '/userconfig/']) {
      const r = await call(api.base, 'PUT', path, { schedules: [rule] })
      t.assert.strictEqual(r.status, 422, `${path} ${JSON.stringify(rule)}: ${r.text}`)
      t.assert.deepStrictEqual([errorOf(r).code, errorOf(r).field], [code, field], JSON.stringify(rule))
    }
  }
  t.assert.strictEqual(api.store.getUser('kid'), undefined, 'nothing was written')
})

test('schedules are stored on the user, /config/ and /userconfig/, and a new user starts with the default', async (t: TestContext) => {
  const { api } = await serve(t)
  const r = await call(api.base, 'PUT', '/users/kid', {
    ip: ['10.0.0.1'],
    schedules: [{ ...NIGHTS, blacklist: ['Games.Example', '-'] }]
  })
  t.assert.strictEqual(r.status, 200, r.text)
  const got = (await call(api.base, 'GET', '/users/kid')).body as { schedules: unknown }
  t.assert.deepStrictEqual(got.schedules, [{ ...NIGHTS, blacklist: ['games.example'], allowonly: true }])
  // Fields left out keep their value; an empty list removes the rules.
  await call(api.base, 'PUT', '/users/kid', { safesearch: 'on' })
  t.assert.strictEqual(api.store.getUser('kid')?.schedules?.length, 1)
  await call(api.base, 'PUT', '/users/kid', { schedules: [] })
  t.assert.strictEqual(api.store.getUser('kid')?.schedules, undefined)
  const conf = await call(api.base, 'PUT', '/config/', { schedules: [NIGHTS] })
  t.assert.deepStrictEqual((conf.body as { schedules: unknown }).schedules, [NIGHTS])
  await call(api.base, 'PUT', '/userconfig/', { schedules: [NIGHTS] })
  await call(api.base, 'PUT', '/users/fresh', { ip: ['10.0.0.2'] })
  t.assert.deepStrictEqual(api.store.getUser('fresh')?.schedules, [NIGHTS])
})

interface CheckBody {
  action: string
  step: string
  schedule: { name: string; timezone: string; window: { index: number; from: string; to: string } } | null
  changesAt: { utc: string; local: string; timezone: string } | null
}

test('/check names the rule and window that decided and when the decision changes, at each side of the boundary', async (t: TestContext) => {
  const { api, setClock } = await serve(t)
  const berlin = {
    name: 'berlin sundays',
    timezone: 'Europe/Berlin',
    windows: [
      { days: ['sat'], from: '20:00', to: '21:00' },
      { days: ['sun'], from: '02:30', to: '04:00' }
    ],
    whitelist: ['casino.example']
  }
  await call(api.base, 'PUT', '/users/kid', {
    ip: ['10.0.0.1'],
    filter: [41],
    schedules: [NIGHTS, berlin]
  })
  const check = async (iso: string, name: string): Promise<CheckBody> => {
    setClock(iso)
    const r = await call(api.base, 'GET', `/check/${name}?ip=10.0.0.1`)
    t.assert.strictEqual(r.status, 200, r.text)
    return r.body as CheckBody
  }
  const before = await check('2026-11-26T21:59:59Z', 'social.example')
  t.assert.deepStrictEqual([before.action, before.step, before.schedule], ['forward', 'none', null])
  t.assert.deepStrictEqual(before.changesAt, {
    utc: '2026-11-26T22:00:00.000Z',
    local: '2026-11-26 22:00:00',
    timezone: 'UTC'
  })
  const after = await check('2026-11-26T22:00:00Z', 'social.example')
  t.assert.deepStrictEqual([after.action, after.step], ['block', 'schedule-category'])
  t.assert.deepStrictEqual(after.schedule, {
    name: 'school nights',
    timezone: 'UTC',
    window: { index: 0, days: ['sun', 'mon', 'tue', 'wed', 'thu'], from: '22:00', to: '07:00' }
  })
  t.assert.strictEqual(after.changesAt?.utc, '2026-11-27T07:00:00.000Z')
  // The user's own always-on filter blocks casino.example; Berlin's spring gap opens the window at 03:00 CEST.
  const spring = await check('2026-03-29T00:59:59Z', 'casino.example')
  t.assert.deepStrictEqual(
    [spring.action, spring.step, spring.changesAt?.local],
    ['block', 'category', '2026-03-29 03:00:00']
  )
  const open = await check('2026-03-29T01:00:00Z', 'casino.example')
  t.assert.deepStrictEqual(
    [open.action, open.step, open.schedule?.name, open.schedule?.window.index],
    ['forward', 'schedule-whitelist', 'berlin sundays', 1]
  )
  t.assert.deepStrictEqual(open.changesAt, {
    utc: '2026-03-29T02:00:00.000Z',
    local: '2026-03-29 04:00:00',
    timezone: 'Europe/Berlin'
  })
})
