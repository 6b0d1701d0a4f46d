/*
 * The user page's reports: totals, activity per hour and day, top names, detail and raw queries, for
 * a date range.
 */
import { zoneNote } from '../zone.js'
import { categoryNames, get, seg, type Chart, type Detail, type Raw } from '../api.js'
import { chart } from '../charts.js'
import { clear, errorBox, h } from '../dom.js'
import { t } from '../i18n.js'
import { catChips, dateRange, numberCell } from '../widgets.js'

function label(l: string): string {
  return l === 'Requests' ? t.requests : l === 'Blocks' ? t.blocks : t.nxdomain
}

/** The user's requests and blocks over the range. */
function totalCards(dayChart: Chart): HTMLElement {
  const sum = (c: Chart, l: string): number =>
    (c.datasets.find((d) => d.label === l)?.data ?? []).reduce((a, b) => a + b, 0)
  return h(
    'div',
    { class: 'cards' },
    h(
      'div',
      { class: 'stat' },
      h('div', { class: 'label' }, t.requests),
      h('div', { class: 'big', id: 'user-requests' }, String(sum(dayChart, 'Requests')))
    ),
    h(
      'div',
      { class: 'stat' },
      h('div', { class: 'label' }, t.blocks),
      h('div', { class: 'big bad', id: 'user-blocks' }, String(sum(dayChart, 'Blocks')))
    )
  )
}

/** Queries per hour and per day, with the day table. */
function activitySection(hour: Chart, dayChart: Chart): HTMLElement {
  return h(
    'div',
    { class: 'grid2' },
    h(
      'section',
      { class: 'card' },
      h('h3', {}, t.perHour),
      zoneNote(),
      chart('line', { ...hour, labels: hour.labels.map((l) => l.slice(5, 13) + 'h') }, label)
    ),
    h(
      'section',
      { class: 'card' },
      h('h3', {}, t.perDay),
      zoneNote(),
      chart('bar', dayChart, label),
      h(
        'table',
        { class: 'compact', id: 'days-table' },
        h(
          'thead',
          {},
          h('tr', {}, h('th', {}, t.from), h('th', { class: 'num' }, t.requests), h('th', { class: 'num' }, t.blocks))
        ),
        h(
          'tbody',
          {},
          dayChart.labels.map((l, i) =>
            h(
              'tr',
              { 'data-day': l },
              h('td', {}, l),
              numberCell(dayChart.datasets[0]!.data[i]!),
              numberCell(dayChart.datasets[1]!.data[i]!)
            )
          )
        )
      )
    )
  )
}

/** The names the user asked for most. */
function domainsSection(domains: Chart): HTMLElement {
  const top = {
    labels: domains.labels.slice(0, 15),
    datasets: domains.datasets.map((d) => ({ ...d, data: d.data.slice(0, 15) }))
  }
  return h(
    'section',
    { class: 'card' },
    h('h3', {}, t.topDomains),
    top.labels.length > 0
      ? chart('bar', top, label, { horizontal: true, height: Math.max(140, 26 * top.labels.length + 50) })
      : h('p', { class: 'muted' }, '—'),
    h(
      'table',
      { class: 'compact', id: 'domains-table' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', {}, t.domain),
          h('th', { class: 'num' }, t.requests),
          h('th', { class: 'num' }, t.nxdomain),
          h('th', { class: 'num' }, t.blocks)
        )
      ),
      h(
        'tbody',
        {},
        domains.labels.map((l, i) =>
          h(
            'tr',
            { 'data-domain': l },
            h('td', { class: 'mono wrap' }, l),
            numberCell(domains.datasets[0]!.data[i]!),
            numberCell(domains.datasets[1]!.data[i]!),
            numberCell(domains.datasets[2]!.data[i]!)
          )
        )
      )
    )
  )
}

/** Each interval's names and their categories. */
function detailSection(detail: Detail, names: Record<string, string>): HTMLElement {
  return h(
    'section',
    { class: 'card' },
    h('h3', {}, t.detail),
    detail.timestamps.map((ts, i) => {
      const r = detail.reports[i]!
      if (r.labels.length === 0) return null
      return h(
        'details',
        { open: i === detail.timestamps.length - 1 },
        h('summary', {}, ts),
        h(
          'table',
          { class: 'compact' },
          h(
            'tbody',
            {},
            r.labels.map((l, j) =>
              h(
                'tr',
                {},
                h('td', { class: 'mono wrap' }, l),
                h('td', {}, catChips(r.cats[j] ?? [], names)),
                numberCell(r.datasets[0]!.data[j]!),
                numberCell(r.datasets[2]!.data[j]!)
              )
            )
          )
        )
      )
    })
  )
}

/** The last raw queries, newest first. */
function rawSection(raw: Raw, names: Record<string, string>): HTMLElement {
  return h(
    'section',
    { class: 'card' },
    h('h3', {}, t.raw),
    h(
      'div',
      { class: 'scroll short' },
      h(
        'table',
        { class: 'compact' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, t.time),
            h('th', {}, t.address),
            h('th', {}, t.domain),
            h('th', {}, t.reason),
            h('th', {}, t.categories)
          )
        ),
        h(
          'tbody',
          {},
          raw.data
            .slice()
            .reverse()
            .map((r) =>
              h(
                'tr',
                { class: r[4] !== '' ? 'blocked' : '' },
                h('td', { class: 'nowrap' }, r[0]),
                h('td', { class: 'mono' }, r[2]),
                h('td', { class: 'mono wrap' }, r[3]),
                h('td', {}, r[5] === 'none' ? '' : (t.steps[r[5]] ?? r[5])),
                h('td', {}, catChips(r[6], names, r[7]))
              )
            )
        )
      )
    )
  )
}

export function reports(user: string): HTMLElement {
  const body = h('div', { class: 'stack' })
  const base = `/users/${seg(user)}/stat`
  const show = (from: string, to: string): void => {
    const q = `?from=${from}&to=${to}`
    Promise.all([
      get<Chart>(`${base}/activity/hour${q}`),
      get<Chart>(`${base}/activity/day${q}`),
      get<Chart>(`${base}/domains/all${q}`),
      get<Detail>(`${base}/detail${q}`),
      get<Raw>(`${base}/raw`),
      categoryNames()
    ]).then(
      ([hour, dayChart, domains, detail, raw, names]) => {
        clear(
          body,
          totalCards(dayChart),
          activitySection(hour, dayChart),
          domainsSection(domains),
          detailSection(detail, names),
          rawSection(raw, names)
        )
      },
      (err: unknown) => {
        clear(body, errorBox(err))
      }
    )
  }
  return h(
    'section',
    { class: 'stack' },
    h('div', { class: 'page-head' }, h('h2', {}, t.reports), dateRange(show)),
    body
  )
}
