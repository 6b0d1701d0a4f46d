/**
 * The one time zone of the console: the server's (`stats.timezone`, GET /stats/timezone), in which the
 * reports count hours and days and a schedule rule without a zone runs. Every time a page shows is in it
 * and says so, whatever the browser's own zone: an operator comparing the live log with a chart or a
 * schedule window reads one clock.
 */
import { get } from './api.js'
import { h } from './dom.js'
import { t } from './i18n.js'

let zone: Promise<string> | undefined

/** The server's zone (one request per page load; 'UTC' if it cannot be read, which is the server's default). */
export function serverZone(): Promise<string> {
  zone ??= get<{ timezone: string }>('/stats/timezone').then(
    (r) => r.timezone,
    () => 'UTC'
  )
  return zone
}

/** `HH:MM:SS` of `ms` in `timeZone`. */
export function timeIn(ms: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23'
  }).format(ms)
}

/** A note saying which zone the times beside it are in; filled once the zone is known. */
export function zoneNote(): HTMLElement {
  const el = h('p', { class: 'muted zone-note' })
  void serverZone().then((z) => {
    el.dataset.zone = z
    el.textContent = t.timesIn(z)
  })
  return el
}
