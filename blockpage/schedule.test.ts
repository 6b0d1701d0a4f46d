// The block page for a scheduled block: the schedule's reason text and `BlockedUntil`, the
// next boundary in the rule's time zone ("blocked until 07:00"), with the test clock the policy reads.
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CATEGORY } from '../engine/categories/index.js'
import { TEST_CLOCK_ENV } from '../engine/schedule/index.js'
import { tempDir } from '../engine/testing/temp.js'
import { ALICE, get, startFixture, visibleText, type Fixture } from './testing/fixture.js'

async function withClock(t: TestContext, iso: string): Promise<Fixture & { setClock: (iso: string) => void }> {
  const saved = process.env[TEST_CLOCK_ENV]
  const file = join(tempDir(t), 'clock')
  const setClock = (at: string): void => {
    writeFileSync(file, at)
  }
  setClock(iso)
  process.env[TEST_CLOCK_ENV] = file
  try {
    return { ...(await startFixture(t)), setClock }
  } finally {
    if (saved === undefined) delete process.env[TEST_CLOCK_ENV]
    else process.env[TEST_CLOCK_ENV] = saved
  }
}

test('a scheduled block says until when, in the rule time zone; outside the window the name is open', async (t: TestContext) => {
  // Thursday 22:30 in Berlin.
  const { bp, store, setClock } = await withClock(t, '2026-11-26T21:30:00Z')
  await store.write((w) => {
    w.putUser({
      ...w.store.getUser('alice')!,
      schedules: [
        {
          name: 'nights',
          timezone: 'Europe/Berlin',
          windows: [{ days: ['thu'], from: '22:00', to: '07:00' }],
          filter: [CATEGORY.GAMBLING],
          blacklist: ['games.example']
        }
      ]
    })
  })
  const cat = visibleText((await get(bp.port, { host: 'casino.example', from: ALICE, acceptLanguage: 'en' })).body)
  t.assert.match(cat, /schedule restricts sites of these categories/)
  t.assert.match(cat, /Blocked until 07:00\./)
  t.assert.match(cat, /Category Gambling/)
  const listed = visibleText((await get(bp.port, { host: 'games.example', from: ALICE })).body)
  t.assert.match(listed, /Заблокировано до 07:00\./)
  // An always-on block says no time.
  const always = visibleText((await get(bp.port, { host: 'social.example', from: ALICE, acceptLanguage: 'en' })).body)
  t.assert.doesNotMatch(always, /Blocked until/)
  // Friday 07:00 in Berlin: the window has closed.
  setClock('2026-11-27T06:00:00Z')
  const open = await get(bp.port, { host: 'games.example', from: ALICE })
  t.assert.doesNotMatch(visibleText(open.body), /Заблокировано/)
})
