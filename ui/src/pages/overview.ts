import { categoryNames, get, type Overview } from '../api.js'
import { zoneNote } from '../zone.js'
import { chart, doughnut } from '../charts.js'
import { clear, errorBox, h } from '../dom.js'
import { fmt, t } from '../i18n.js'
import { catChips, dateRange, numberCell } from '../widgets.js'

function label(l: string): string {
  return l === 'Requests' ? t.requests : l === 'Blocks' ? t.blocks : t.nxdomain
}

/** The four numbers: all queries, blocks, anonymous and known users' queries. */
function statCards(o: Overview): HTMLElement {
  return h(
    'div',
    { class: 'cards' },
    h(
      'div',
      { class: 'stat' },
      h('div', { class: 'label' }, t.total),
      h('div', { class: 'big', id: 'total-requests' }, fmt(o.totals.requests))
    ),
    h(
      'div',
      { class: 'stat' },
      h('div', { class: 'label' }, t.blocks),
      h('div', { class: 'big bad', id: 'total-blocks' }, fmt(o.totals.blocks))
    ),
    h(
      'div',
      { class: 'stat' },
      h('div', { class: 'label' }, t.anonymous),
      h('div', { class: 'big' }, fmt(o.anonymous.requests)),
      h('div', { class: 'muted' }, `${t.blocks}: ${fmt(o.anonymous.blocks)}`)
    ),
    h(
      'div',
      { class: 'stat' },
      h('div', { class: 'label' }, t.knownUsers),
      h('div', { class: 'big' }, fmt(o.users.requests)),
      h('div', { class: 'muted' }, `${t.blocks}: ${fmt(o.users.blocks)}`)
    )
  )
}

/** Queries over time: per hour (up to a week) or per day, and per day. */
function activityCharts(o: Overview): HTMLElement {
  const hourly = o.hours.labels.length <= 24 * 7
  return h(
    'div',
    { class: 'grid2' },
    h(
      'section',
      { class: 'card' },
      h('h2', {}, hourly ? t.perHour : t.perDay),
      zoneNote(),
      hourly
        ? chart('line', { ...o.hours, labels: o.hours.labels.map((l) => l.slice(5, 13) + 'h') }, label)
        : chart('bar', o.days, label)
    ),
    h('section', { class: 'card' }, h('h2', {}, t.perDay), zoneNote(), chart('bar', o.days, label))
  )
}

/** The most blocked names and categories, and anonymous against known users. */
function topLists(o: Overview, names: Record<string, string>): HTMLElement {
  return h(
    'div',
    { class: 'grid2' },
    h(
      'section',
      { class: 'card' },
      h('h2', {}, t.topBlocked),
      h(
        'table',
        {},
        h(
          'thead',
          {},
          h('tr', {}, h('th', {}, t.domain), h('th', {}, t.categories), h('th', { class: 'num' }, t.blocks))
        ),
        h(
          'tbody',
          {},
          o.topBlocked.map((d) =>
            h(
              'tr',
              {},
              h('td', { class: 'mono wrap' }, d.domain),
              h('td', {}, catChips(d.cats, names, d.cats)),
              numberCell(d.blocks)
            )
          )
        )
      )
    ),
    h(
      'div',
      { class: 'stack' },
      h(
        'section',
        { class: 'card' },
        h('h2', {}, t.topCategories),
        o.topCategories.length === 0
          ? h('p', { class: 'muted' }, '—')
          : chart(
              'bar',
              {
                labels: o.topCategories.map((c) => names[String(c.category)] ?? `#${c.category}`),
                datasets: [{ label: 'Blocks', data: o.topCategories.map((c) => c.blocks) }]
              },
              label,
              { horizontal: true, height: Math.max(140, 28 * o.topCategories.length + 40) }
            )
      ),
      h(
        'section',
        { class: 'card' },
        h('h2', {}, t.anonVsKnown),
        doughnut([t.anonymous, t.knownUsers], [o.anonymous.requests, o.users.requests])
      )
    )
  )
}

export function overviewPage(app: HTMLElement): void {
  const body = h('div', { class: 'stack' })
  const show = (from: string, to: string): void => {
    Promise.all([get<Overview>(`/stats/overview?from=${from}&to=${to}`), categoryNames()]).then(
      ([o, names]) => {
        clear(
          body,
          statCards(o),
          o.totals.requests === 0 ? h('p', { class: 'notice' }, t.noData) : null,
          activityCharts(o),
          topLists(o, names)
        )
      },
      (err: unknown) => {
        clear(body, errorBox(err))
      }
    )
  }
  clear(app, h('div', { class: 'page-head' }, h('h1', {}, t.overview), dateRange(show)), body)
}
