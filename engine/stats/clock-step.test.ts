// Clock steps under libfaketime: the dns and api roles run with a wall clock that steps back 2 hours
// and then forward a day while they work (what an NTP step or an operator's `date -s` does: the
// monotonic clock does not move, so FAKETIME_DONT_FAKE_MONOTONIC). Both roles share the offset file,
// as two processes of one host share its clock. After each step the DNS server keeps answering and
// the api role keeps importing: a fresh set of names reaches its raw report (whose last hour is the
// stepped clock's, like the rows' times). No crash, no stall.
import { test, type TestContext } from 'node:test'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startRole, type Child } from '../testing/daemon.js'
import { QueryFlow, flowName, flowWorld } from '../testing/stats-flow.js'
import { fetchJson, until } from '../testing/wait.js'

const LIBFAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1'
const missing = !existsSync(LIBFAKETIME)
const skip =
  missing && process.env.CI !== 'true'
    ? `${LIBFAKETIME} is missing (apt-get install faketime); the clock step test runs only where it is installed`
    : false

/** Names per phase, each phase after one clock setting. */
const PER_PHASE = 100

test(
  'clock steps of -2 h and then +1 day: DNS keeps answering and statistics keep being imported',
  { skip },
  async (t: TestContext) => {
    t.assert.ok(!missing, `${LIBFAKETIME} is missing: CI installs faketime (.ci/run)`)
    const w = await flowWorld(t)
    const offset = join(w.dir, 'faketime.rc')
    writeFileSync(offset, '+0\n')
    const env = {
      LD_PRELOAD: LIBFAKETIME,
      FAKETIME_TIMESTAMP_FILE: offset,
      // The file is read at every clock call, so a step is seen at once.
      FAKETIME_NO_CACHE: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1'
    }
    const api = await startRole(t, 'api', w.apiFile, env)
    const dns = await startRole(t, 'dns', w.dnsFile, env)
    const alive = (c: Child): boolean => c.proc.exitCode === null && c.proc.signalCode === null
    // One phase: PER_PHASE new names answered, then every one of them in the raw report.
    const flow = new QueryFlow(w.dnsPort, 3 * PER_PHASE, 50, 2)
    // Returns the time its first name was recorded at (the report's local time, read as UTC: only differences count).
    const phase = async (n: number, label: string): Promise<number> => {
      const names = Array.from({ length: PER_PHASE }, (_, i) => flowName(n * PER_PHASE + i))
      await flow.runUntil((n + 1) * PER_PHASE)
      const unanswered = names.filter((name) => !flow.answered.has(name))
      t.assert.deepStrictEqual(unanswered.slice(0, 5), [], `${label}: ${unanswered.length} names unanswered`)
      let created = new Map<string, string>()
      await until(
        `${label}: the names in the raw report`,
        async () => {
          const res = await fetchJson(`${api.url}/users/*anonymous*/stat/raw`)
          if (res.status !== 200) return false
          created = new Map((res.body as { data: string[][] }).data.map((row) => [row[3]!, row[0]!]))
          return names.every((name) => created.has(name))
        },
        60_000,
        250
      )
      t.assert.ok(alive(dns) && alive(api), `${label}: both roles still run`)
      return Date.parse(`${created.get(names[0]!)!.replace(' ', 'T')}Z`)
    }
    const real = await phase(0, 'the real time')
    writeFileSync(offset, '-2h\n')
    const back = await phase(1, 'after a step of -2 h')
    writeFileSync(offset, '+22h\n') // a day after the clock before: a step of +1 day
    const ahead = await phase(2, 'after a step of +1 day')
    // The roles did run on the stepped clock: the rows' times moved with it (a phase takes seconds, at most minutes).
    const HOUR = 3_600_000
    t.assert.ok(back - real >= -2 * HOUR && back - real < -2 * HOUR + 10 * 60_000, `-2 h: ${back - real} ms`)
    t.assert.ok(ahead - real >= 22 * HOUR && ahead - real < 22 * HOUR + 10 * 60_000, `+1 day: ${ahead - real} ms`)
    t.diagnostic(`${flow.answered.size} names answered over three clock settings, ${flow.unanswered} unanswered`)
  }
)
