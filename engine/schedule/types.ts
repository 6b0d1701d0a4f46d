/**
 * Time-based policy: a scheduled rule is a set of weekly windows in an IANA time zone and
 * what applies inside them (categories blocked, names white- or blacklisted, allow-only mode). Outside
 * its windows the rule does not apply; a setting without a schedule is always on. The records are
 * plain data stored in the user record and in `/config/` and `/userconfig/` (so they travel to every
 * host with the rest of the policy); engine/schedule/compile.ts turns them into boundaries.
 */

/** Days of the week as the API spells them, Monday first (index 0). */
export const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const
export type Day = (typeof DAYS)[number]

/**
 * One weekly window: on each of `days`, from `from` to `to` (`HH:MM`, local time in the rule's zone).
 * A `to` at or before `from` ends on the next day (a window across midnight starts on the listed day);
 * `to` may be `24:00` (the end of the day).
 */
export interface ScheduleWindow {
  days: Day[]
  from: string
  to: string
}

/** What a scheduled rule does while one of its windows is open: each part adds to the always-on policy. */
export interface ScheduledRule {
  /** Unique within its owner; `/check` and the statistics name the rule by it. */
  name: string
  /** IANA time zone; absent: `stats.timezone` of the config. */
  timezone?: string
  windows: ScheduleWindow[]
  /** Categories blocked while open. */
  filter?: number[]
  /** Names (and their subdomains) passed while open. */
  whitelist?: string[]
  /** Names (and their subdomains) blocked while open. */
  blacklist?: string[]
  /** While open, block everything the whitelists do not pass. */
  allowonly?: boolean
}
