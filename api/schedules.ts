/**
 * Scheduled rules in the management API: the check of their meaning (their shape is checked by
 * ajv with the rest of the body, api/schedule-schema.ts) (engine/schedule/validate.ts: the zone
 * exists, times are real, windows do not overlap, names are unique; categories exist), answering 422
 * with the field at fault. List entries are made canonical as the user's own lists are.
 */
import { checkSchedules, type ScheduledRule } from '../engine/schedule/index.js'
import { canonicalDomains, sortedUnique, type ApiContext } from './context.js'
import { ALLOW_ONLY } from '../engine/policy/index.js'
import { apiError } from './errors.js'

/** The rules as stored: checked (422 naming the field), lists canonical, categories sorted. */
export function checkedSchedules(ctx: ApiContext, rules: readonly ScheduledRule[], field: string): ScheduledRule[] {
  const problem = checkSchedules(rules, field, (c) => ctx.taxonomy.has(c))
  if (problem !== undefined)
    throw apiError(
      problem.kind === 'unknown-category' ? 'API_UNKNOWN_CATEGORY' : 'API_INVALID_BODY',
      problem.message,
      problem.field
    )
  return rules.map((r, i) => {
    const at = `${field}[${i}]`
    const out: ScheduledRule = {
      name: r.name,
      ...(r.timezone === undefined ? {} : { timezone: r.timezone }),
      windows: r.windows.map((w) => ({ days: [...w.days], from: w.from, to: w.to }))
    }
    if (r.filter !== undefined && r.filter.length > 0) out.filter = sortedUnique(r.filter)
    if (r.whitelist !== undefined && r.whitelist.length > 0)
      out.whitelist = canonicalDomains(r.whitelist, 'white', `${at}.whitelist`)
    // `-` in a scheduled blacklist is the rule's allow-only mode, as in a user's own blacklist.
    const black = canonicalDomains(r.blacklist ?? [], 'black', `${at}.blacklist`)
    if (black.some((n) => n !== ALLOW_ONLY)) out.blacklist = black.filter((n) => n !== ALLOW_ONLY)
    if (r.allowonly === true || black.includes(ALLOW_ONLY)) out.allowonly = true
    return out
  })
}

/** `record` with `schedules` set to `rules` (left out when empty), or unchanged when `rules` is undefined. */
export function withSchedules<T extends { schedules?: ScheduledRule[] }>(
  record: T,
  rules: ScheduledRule[] | undefined
): T {
  if (rules === undefined) return record
  const { schedules: _old, ...rest } = record
  return (rules.length === 0 ? rest : { ...rest, schedules: rules }) as T
}
