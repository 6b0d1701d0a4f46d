import { api, categoryGroups, get, seg, type User } from '../api.js'
import { clear, errorBox, h, lines } from '../dom.js'
import { t } from '../i18n.js'
import { scheduleEditor } from '../schedules.js'
import { categoryPicker, checkBox, liveLog } from '../widgets.js'
import { reports } from './user-reports.js'

function select(name: string, value: string, options: Array<[string, string]>): HTMLSelectElement {
  const s = h(
    'select',
    { name },
    options.map(([v, text]) => h('option', { value: v }, text))
  )
  s.value = value
  return s
}

/** The user's three switches: filtering on or off, safe search, safe video. */
function switches(user: User): {
  status: HTMLSelectElement
  safesearch: HTMLSelectElement
  safevideo: HTMLSelectElement
} {
  const onOff: Array<[string, string]> = [
    ['on', t.on],
    ['off', t.off]
  ]
  return {
    status: select('status', user.status, [
      ['enabled', t.enabled],
      ['disabled', t.disabled]
    ]),
    safesearch: select('safesearch', user.safesearch, onOff),
    safevideo: select('safeyoutube', user.safeyoutube, onOff)
  }
}

/**
 * Asks the server for a new random client ID (POST …/client-ids/ without a body: it is stored at once) and
 * appends it to the form's list, keeping what was typed there and not yet saved.
 */
function randomIdButton(user: User, ids: HTMLTextAreaElement): HTMLButtonElement {
  const button = h('button', { type: 'button', name: 'random-client-id' }, t.clientIdRandom)
  button.addEventListener('click', () => {
    api<string[]>('POST', `/users/${seg(user.name)}/client-ids/`).then(
      (all) => {
        const made = all.at(-1)
        if (made !== undefined) ids.value = [...lines(ids.value), made].join('\n')
      },
      (err: unknown) => button.after(errorBox(err))
    )
  })
  return button
}

function settingsForm(user: User, onSaved: (u: User) => void): Promise<HTMLElement> {
  return categoryGroups().then((groups) => {
    const { status, safesearch, safevideo } = switches(user)
    const ips = h('textarea', { name: 'ip', rows: 3, placeholder: t.addressesHint }, user.ip.join('\n'))
    const ids = h(
      'textarea',
      { name: 'client_ids', rows: 2, placeholder: t.clientIdsHint },
      (user.client_ids ?? []).join('\n')
    )
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
      h('label', {}, t.clientIds, ids),
      h('div', { class: 'inline' }, randomIdButton(user, ids), h('span', { class: 'muted' }, t.clientIdsSecret)),
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
        client_ids: lines(ids.value),
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
