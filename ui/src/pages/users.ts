import { api, categoryGroups, categoryNames, get, seg, type User } from '../api.js'
import { clear, errorBox, h, lines } from '../dom.js'
import { t } from '../i18n.js'
import { catChips, categoryPicker } from '../widgets.js'

const PAGE = 50

/** One row per user: name, status, addresses, filter. */
function usersTable(users: User[], names: Record<string, string>): HTMLElement {
  return h(
    'table',
    { class: 'users', 'data-count': users.length },
    h(
      'thead',
      {},
      h('tr', {}, h('th', {}, t.name), h('th', {}, t.filtering), h('th', {}, t.addresses), h('th', {}, t.filter))
    ),
    h(
      'tbody',
      {},
      users.map((u) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/users/${encodeURIComponent(u.name)}` }, u.name)),
          h(
            'td',
            {},
            h(
              'span',
              { class: u.status === 'enabled' ? 'tag ok' : 'tag' },
              u.status === 'enabled' ? t.enabled : t.disabled
            ),
            u.blacklist.includes('-') ? h('span', { class: 'tag bad' }, t.allowOnly) : null
          ),
          h('td', { class: 'mono wrap' }, u.ip.join(', ')),
          h('td', {}, catChips(u.filter, names))
        )
      )
    )
  )
}

/** The form that creates a user, then opens its page. */
function newUserCard(): HTMLElement {
  const create = h('section', { class: 'card' }, h('h2', {}, t.newUser))
  void categoryGroups().then((groups) => {
    const id = h('input', {
      type: 'text',
      name: 'new-id',
      required: true,
      pattern: '[A-Za-z0-9_\\-]{1,32}',
      placeholder: t.userId
    })
    const ips = h('textarea', { name: 'new-ip', rows: 2, placeholder: t.addressesHint })
    const picker = categoryPicker(groups, [], 'new-filter')
    const out = h('div')
    const f = h(
      'form',
      { class: 'stack' },
      h('label', {}, t.userId, id),
      h('label', {}, t.addresses, ips),
      h('div', {}, h('div', { class: 'label' }, t.filter), picker.el),
      h('div', {}, h('button', { type: 'submit', class: 'primary' }, t.create)),
      out
    )
    f.addEventListener('submit', (e) => {
      e.preventDefault()
      api<User>('PUT', `/users/${seg(id.value.trim())}`, { ip: lines(ips.value), filter: picker.selected() }).then(
        () => {
          location.hash = `#/users/${encodeURIComponent(id.value.trim())}`
        },
        (err: unknown) => {
          clear(out, errorBox(err))
        }
      )
    })
    create.append(f)
  })
  return create
}

export function usersPage(app: HTMLElement, params: URLSearchParams): void {
  const q = params.get('q') ?? ''
  const start = Math.max(0, Number(params.get('start') ?? 0) || 0)
  const input = h('input', { type: 'search', name: 'q', value: q, placeholder: t.searchHint, autocomplete: 'off' })
  const form = h('form', { class: 'inline' }, input, h('button', { type: 'submit' }, t.search))
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    location.hash = `#/users?q=${encodeURIComponent(input.value.trim())}`
  })
  const list = h('div', { class: 'scroll' })
  const pager = h('div', { class: 'pager' })
  const started = performance.now()
  const load = q === '' ? get<User[]>(`/users?start=${start}&stop=${start + PAGE}`) : get<User[]>(`/search/${seg(q)}`)
  Promise.all([load, categoryNames()]).then(
    ([users, names]) => {
      list.dataset.ms = String(Math.round(performance.now() - started))
      clear(list, usersTable(users, names))
      if (q === '') {
        clear(
          pager,
          start > 0
            ? h('a', { href: `#/users?start=${Math.max(0, start - PAGE)}`, class: 'button ghost' }, `← ${t.prev}`)
            : null,
          h('span', { class: 'muted' }, `${start + 1}–${start + users.length}`),
          users.length === PAGE
            ? h('a', { href: `#/users?start=${start + PAGE}`, class: 'button ghost' }, `${t.next} →`)
            : null
        )
      }
    },
    (err: unknown) => {
      clear(list, errorBox(err))
    }
  )

  const create = newUserCard()
  clear(
    app,
    h('div', { class: 'page-head' }, h('h1', {}, t.users), form),
    h('div', { class: 'grid-main' }, h('section', { class: 'card' }, list, pager), create)
  )
}
