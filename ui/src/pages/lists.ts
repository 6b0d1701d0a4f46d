/**
 * Remote list subscriptions (docs/lists.md): every source with its refresh state (entries, last
 * success, age, errors), a refresh button per source, removal of those added through the API, and a
 * form that adds or replaces one. Below them, the RPZ zones the policy (subscriptions included) is
 * served as to other resolvers.
 */
import { api, categoryNames, get, seg, type Subscription } from '../api.js'
import { clear, errorBox, h } from '../dom.js'
import { fmt, t } from '../i18n.js'
import { rpzZonesCard } from './rpz-zones.js'

function ago(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000))
  if (s < 120) return `${s} s`
  if (s < 7200) return `${Math.round(s / 60)} min`
  return `${Math.round(s / 3600)} h`
}

function targetOf(s: Subscription, names: Record<string, string>): string {
  if (s.target !== 'category') return s.target
  return `${s.category ?? ''} ${names[String(s.category)] ?? ''}`.trim()
}

function row(s: Subscription, names: Record<string, string>, reload: () => void): HTMLElement {
  const st = s.state
  const out = h('span', { class: 'muted' })
  const refresh = h('button', { type: 'button', 'data-refresh': s.id }, t.subs.refresh)
  refresh.addEventListener('click', () => {
    // A body, so the request carries the JSON type the API's browser guard wants of a POST.
    api<{ status: string; error?: string }>('POST', `/subscriptions/${seg(s.id)}/refresh`, {}).then(
      (r) => {
        clear(out, r.error ?? r.status)
        reload()
      },
      (err: unknown) => clear(out, errorBox(err))
    )
  })
  const remove = h('button', { type: 'button', 'data-delete': s.id }, t.delete)
  remove.addEventListener('click', () => {
    api('DELETE', `/subscriptions/${seg(s.id)}`).then(reload, (err: unknown) => clear(out, errorBox(err)))
  })
  const success = st === null || st.lastSuccess === undefined || st.lastSuccess === 0 ? 0 : st.lastSuccess
  return h(
    'tr',
    { 'data-id': s.id },
    h('td', {}, s.id, s.origin === 'config' ? h('span', { class: 'muted' }, ` (${t.subs.fromConfig})`) : null),
    h('td', {}, h('div', {}, s.url), h('div', { class: 'muted' }, s.format)),
    h('td', {}, targetOf(s, names)),
    h('td', { class: 'num', 'data-entries': st?.entries ?? 0 }, fmt(st?.entries ?? 0)),
    h('td', {}, success === 0 ? t.subs.never : new Date(success).toLocaleString()),
    h('td', {}, success === 0 ? '' : ago(success)),
    h('td', { class: 'num' }, fmt(st?.errors ?? 0)),
    h('td', { class: 'muted' }, st?.lastError ?? ''),
    h('td', {}, refresh, s.origin === 'api' ? remove : null, out)
  )
}

function table(list: HTMLElement): void {
  const reload = (): void => table(list)
  Promise.all([get<Subscription[]>('/subscriptions/'), categoryNames()]).then(
    ([subs, names]) => {
      if (subs.length === 0) {
        clear(list, h('p', { class: 'muted' }, t.subs.none))
        return
      }
      const s = t.subs
      const head = [s.id, s.source, s.target, s.entries, s.lastSuccess, s.age, s.errors, s.lastError, '']
      clear(
        list,
        h(
          'table',
          { class: 'subscriptions', 'data-count': subs.length },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              head.map((x) => h('th', {}, x))
            )
          ),
          h(
            'tbody',
            {},
            subs.map((x) => row(x, names, reload))
          )
        )
      )
    },
    (err: unknown) => clear(list, errorBox(err))
  )
}

function addForm(onDone: () => void): HTMLElement {
  const id = h('input', { name: 'id', required: true, pattern: '[a-z0-9_-]{1,32}' })
  const url = h('input', { name: 'url', type: 'url', required: true })
  const format = h(
    'select',
    { name: 'format' },
    ['hosts', 'domains', 'adblock', 'rpz'].map((f) => h('option', {}, f))
  )
  const target = h(
    'select',
    { name: 'target' },
    ['blacklist', 'whitelist', 'category'].map((f) => h('option', {}, f))
  )
  const category = h('input', { name: 'category', type: 'number', min: 0 })
  const out = h('span', { class: 'muted' })
  const form = h(
    'form',
    { class: 'inline' },
    h('label', {}, t.subs.id, id),
    h('label', {}, t.subs.url, url),
    h('label', {}, t.subs.format, format),
    h('label', {}, t.subs.target, target),
    h('label', {}, t.subs.category, category),
    h('button', { type: 'submit', class: 'primary' }, t.subs.add),
    out
  )
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    const body: Record<string, unknown> = { url: url.value.trim(), format: format.value, target: target.value }
    if (target.value === 'category') body.category = Number(category.value)
    api('PUT', `/subscriptions/${seg(id.value.trim())}`, body).then(
      () => {
        clear(out, t.saved)
        onDone()
      },
      (err: unknown) => clear(out, errorBox(err))
    )
  })
  return form
}

export function listsPage(app: HTMLElement): void {
  const list = h('div', { class: 'subscriptions' })
  clear(
    app,
    h('div', { class: 'page-head' }, h('h1', {}, t.subs.title)),
    h(
      'section',
      { class: 'card' },
      h('p', { class: 'muted' }, t.subs.note),
      list,
      addForm(() => table(list))
    ),
    rpzZonesCard()
  )
  table(list)
}
