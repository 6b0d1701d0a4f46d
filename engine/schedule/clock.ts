/**
 * The clock schedules read. Production reads `Date.now`. Tests of the daemons set the environment
 * variable FILTERD_TEST_CLOCK_FILE to a file holding an instant (ISO 8601 or UTC milliseconds): every
 * reading of the clock then reads the file, so a test moves the DNS server's and the API's time to
 * 21:59:59 and then to 22:00:00 by rewriting it. Never set in production (a file read per query).
 */
import { readFileSync } from 'node:fs'

export type Clock = () => number

export const TEST_CLOCK_ENV = 'FILTERD_TEST_CLOCK_FILE'

/** Milliseconds of `text`: a number of ms, or an ISO 8601 instant; NaN when neither. */
export function parseInstant(text: string): number {
  const t = text.trim()
  return /^-?\d+$/.test(t) ? Number(t) : Date.parse(t)
}

/** The clock of this process: Date.now, or the test clock file named by FILTERD_TEST_CLOCK_FILE. */
export function systemClock(env: NodeJS.ProcessEnv = process.env): Clock {
  const file = env[TEST_CLOCK_ENV]
  if (file === undefined || file === '') return Date.now
  return () => {
    try {
      const t = parseInstant(readFileSync(file, 'utf8'))
      return Number.isFinite(t) ? t : Date.now()
    } catch {
      return Date.now()
    }
  }
}
