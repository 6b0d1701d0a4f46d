import { api, categoryGroups, categoryNames, get, seg, type Chart, type Detail, type Raw, type User } from '../api.js'
import { chart } from '../charts.js'
import { clear, errorBox, h, lines } from '../dom.js'
import { t } from '../i18n.js'
import { scheduleEditor } from '../schedules.js'
import { catChips, categoryPicker, checkBox, dateRange, liveLog, numberCell } from '../widgets.js'

function label(l: string): string {
  return l === 'Requests' ? t.requests : l === 'Blocks' ? t.blocks : t.nxdomain
}

function select(name: string, value: string, options: Array<[string, string]>): HTMLSelectElement {
  const s = h(
    'select',
    { name },
    options.map(([v, text]) => h('option', { value: v }, text))
  )
  s.value = value
  return s
}

function settingsForm(user: User, onSaved: (u: User) => void): Promise<HTMLElement> {
  return categoryGroups().then((groups) => {
    const status = select('status', user.status, [
      ['enabled', t.enabled],
      ['disabled', t.disabled]
    ])
    const safesearch = select('safesearch', user.safesearch, [
      ['on', t.on],
      ['off', t.off]
    ])
    const safevideo = select('safeyoutube', user.safeyoutube, [
      ['on', t.on],
      ['off', t.off]
    ])
    const ips = h('textarea', { name: 'ip', rows: 3, placeholder: t.addressesHint }, user.ip.join('\n'))
    const white = h('textarea', { name: 'whitelist', rows: 4, placeholder: t.listHint }, user.whitelist.join('\n'))
    const black = h(
      'textarea',
      { name: 'blacklist', rows: 4, placeholder: t.listHint },
      user.blacklist.filter((d) => d !== '-').join('\n')
    )
    const allowOnly = h('input', { type: 'checkbox', name: 'allow-only', checked: user.blacklist.includes('-') })
    const banner = h('div', { class: 'allow-only', hidden: !user.blacklist.includes('-') }, t.allowOnlyOn)
    allowOnly.addEventListener('change', () => {
      banner.hidden = !allowOnly.checked
    })
    const picker = categoryPicker(groups, user.filter)
    const schedules = scheduleEditor(user.schedules ?? [])
    const out = h('span', { class: 'muted' })
    const form = h(
      'form',
      { class: 'stack settings' },
      banner,
      h(
        'div',
        { class: 'row3' },
        h('label', {}, t.filtering, status),
        h('label', {}, t.safesearch, safesearch),
        h('label', {}, t.safevideo, safevideo)
      ),
      h('label', {}, t.addresses, ips),
      h(
        'div',
        { class: 'row2' },
        h('label', {}, t.whitelist, white),
        h('label', {}, t.blacklist, black, h('span', { class: 'check' }, allowOnly, ' ', t.allowOnly))
      ),
      h('div', {}, h('div', { class: 'label' }, t.filter), picker.el),
      schedules.el,
      h('div', { class: 'inline' }, h('button', { type: 'submit', class: 'primary' }, t.save), out)
    )
    form.addEventListener('submit', (e) => {
      e.preventDefault()
      const body = {
        status: status.value,
        safesearch: safesearch.value,
        safeyoutube: safevideo.value,
        ip: lines(ips.value),
        whitelist: lines(white.value),
        blacklist: [...(allowOnly.checked ? ['-'] : []), ...lines(black.value)],
        filter: picker.selected(),
        schedules: schedules.value()
      }
      api<User>('PUT', `/users/${seg(user.name)}`, body).then(
        (u) => {
          clear(out, t.saved)
          onSaved(u)
        },
        (err: unknown) => {
          clear(out, errorBox(err))
        }
      )
    })
    return form
  })
}

function reports(user: string): HTMLElement {
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
        const top = {
          labels: domains.labels.slice(0, 15),
          datasets: domains.datasets.map((d) => ({ ...d, data: d.data.slice(0, 15) }))
        }
        const sum = (c: Chart, l: string): number =>
          (c.datasets.find((d) => d.label === l)?.data ?? []).reduce((a, b) => a + b, 0)
        clear(
          body,
          h(
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
          ),
          h(
            'div',
            { class: 'grid2' },
            h(
              'section',
              { class: 'card' },
              h('h3', {}, t.perHour),
              chart('line', { ...hour, labels: hour.labels.map((l) => l.slice(5, 13) + 'h') }, label)
            ),
            h(
              'section',
              { class: 'card' },
              h('h3', {}, t.perDay),
              chart('bar', dayChart, label),
              h(
                'table',
                { class: 'compact', id: 'days-table' },
                h(
                  'thead',
                  {},
                  h(
                    'tr',
                    {},
                    h('th', {}, t.from),
                    h('th', { class: 'num' }, t.requests),
                    h('th', { class: 'num' }, t.blocks)
                  )
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
          ),
          h(
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
          ),
          h(
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
          ),
          h(
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

export function userPage(app: HTMLElement, id: string): () => void {
  const live = liveLog({ user: id })
  const settings = h('section', { class: 'card' }, h('h2', {}, t.settingsOf))
  const title = h('h1', {}, id)
  get<User>(`/users/${seg(id)}`).then(
    async (user) => {
      settings.append(await settingsForm(user, () => {}))
    },
    (err: unknown) => {
      settings.append(errorBox(err))
    }
  )
  const del = h('button', { type: 'button', class: 'ghost danger' }, t.delete)
  del.addEventListener('click', () => {
    if (!confirm(`${t.delete} ${id}?`)) return
    void api('DELETE', `/users/${seg(id)}`).then(() => {
      location.hash = '#/users'
    })
  })
  clear(
    app,
    h(
      'div',
      { class: 'page-head' },
      h('div', {}, h('a', { href: '#/users', class: 'muted' }, `← ${t.back}`), title),
      del
    ),
    h('div', { class: 'grid-main' }, settings, checkBox(id)),
    live.el,
    reports(id)
  )
  return live.stop
}
