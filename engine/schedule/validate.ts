/**
 * Checks scheduled rules as the API receives them. The API's JSON schema (api/schemas.ts)
 * has already checked their shape; this checks what a schema cannot: the time zone exists, the times
 * are real, no two windows of a rule overlap, names are unique, categories exist.
 *
 * Overlapping windows are refused (so at any instant at most one window of a rule is open, and
 * `/check` can name it); windows that touch (one ends at 12:00, the next starts at 12:00) are allowed
 * and count as one span for boundaries. An empty window list, and a window whose end equals its start,
 * are refused: a rule with no window never applies, and an always-on rule needs no schedule
 * (`00:00`-`24:00` on every day is the explicit form).
 */
import { parseClock, windowMinutes } from './compile.js'
import { DAYS, type ScheduledRule } from './types.js'
import { isTimeZone } from './zone.js'

export interface ScheduleProblem {
  /** `unknown-category` for a category the taxonomy lacks; `invalid` otherwise. */
  readonly kind: 'invalid' | 'unknown-category'
  /** The field at fault, in the API's notation: `schedules[0].windows[1].from`. */
  readonly field: string
  readonly message: string
}

const WEEK = 7 * 1440
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$/

/** The first problem of `rules` (under the field name `at`), or undefined when they are valid. */
export function checkSchedules(
  rules: readonly ScheduledRule[],
  at: string,
  isCategory: (c: number) => boolean
): ScheduleProblem | undefined {
  const names = new Set<string>()
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!
    const base = `${at}[${i}]`
    if (!NAME_RE.test(rule.name)) return invalid(`${base}.name`, 'a name of 1-64 letters, digits, space, _ . -')
    if (names.has(rule.name)) return invalid(`${base}.name`, `"${rule.name}" is used by another rule`)
    names.add(rule.name)
    if (rule.timezone !== undefined && !isTimeZone(rule.timezone))
      return invalid(`${base}.timezone`, `unknown time zone "${rule.timezone}"`)
    const problem = checkWindows(rule, base) ?? checkCategories(rule, base, isCategory)
    if (problem !== undefined) return problem
  }
  return undefined
}

function invalid(field: string, message: string): ScheduleProblem {
  return { kind: 'invalid', field, message: `${field}: ${message}` }
}

function checkWindows(rule: ScheduledRule, base: string): ScheduleProblem | undefined {
  if (rule.windows.length === 0) return invalid(`${base}.windows`, 'at least one window is required')
  for (let j = 0; j < rule.windows.length; j++) {
    const w = rule.windows[j]!
    const at = `${base}.windows[${j}]`
    if (w.days.length === 0) return invalid(`${at}.days`, 'at least one day is required')
    for (let d = 0; d < w.days.length; d++)
      if (!DAYS.includes(w.days[d]!) || w.days.indexOf(w.days[d]!) !== d)
        return invalid(`${at}.days[${d}]`, `one of ${DAYS.join(', ')}, each once`)
    const from = parseClock(w.from, false)
    if (from === undefined) return invalid(`${at}.from`, `"${w.from}" is not a time of day (HH:MM, 00:00-23:59)`)
    const to = parseClock(w.to, true)
    if (to === undefined) return invalid(`${at}.to`, `"${w.to}" is not a time of day (HH:MM, 00:00-24:00)`)
    if (to === from) return invalid(`${at}.to`, 'a window cannot end when it starts')
  }
  return checkOverlap(rule, base)
}

/** Refuses two windows (or two days of one window) that share a minute of the week. */
function checkOverlap(rule: ScheduledRule, base: string): ScheduleProblem | undefined {
  const spans: Array<{ start: number; end: number; index: number }> = []
  rule.windows.forEach((w, index) => {
    const m = windowMinutes(w)
    for (let d = 0; d < 7; d++)
      if ((m.days & (1 << d)) !== 0) spans.push({ start: d * 1440 + m.from, end: d * 1440 + m.to, index })
  })
  for (let a = 0; a < spans.length; a++) {
    for (let b = a + 1; b < spans.length; b++) {
      const x = spans[a]!
      const y = spans[b]!
      if (overlaps(x.start, x.end, y.start, y.end)) {
        const later = Math.max(x.index, y.index)
        const other = Math.min(x.index, y.index)
        const what = x.index === y.index ? 'its days overlap each other' : `it overlaps windows[${other}]`
        return invalid(`${base}.windows[${later}]`, what)
      }
    }
  }
  return undefined
}

/** Whether two spans of the week overlap, a span running past Sunday midnight wrapping to Monday. */
function overlaps(s1: number, e1: number, s2: number, e2: number): boolean {
  for (const shift of [-WEEK, 0, WEEK]) if (s1 < e2 + shift && s2 + shift < e1) return true
  return false
}

function checkCategories(
  rule: ScheduledRule,
  base: string,
  isCategory: (c: number) => boolean
): ScheduleProblem | undefined {
  const filter = rule.filter ?? []
  for (let k = 0; k < filter.length; k++) {
    if (!isCategory(filter[k]!)) {
      const field = `${base}.filter[${k}]`
      return { kind: 'unknown-category', field, message: `${field}: unknown category ${filter[k]}` }
    }
  }
  return undefined
}
