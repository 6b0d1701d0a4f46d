import { api, categoryGroups, get, type ServerDefaults, type UserDefaults } from '../api.js'
import { clear, errorBox, h, lines } from '../dom.js'
import { t } from '../i18n.js'
import { scheduleEditor } from '../schedules.js'
import { categoryPicker } from '../widgets.js'

function defaultsForm(title: string, path: string, withRedirect: boolean): HTMLElement {
  // `defaults-config` / `defaults-userconfig`: the two forms share field names, a test tells them apart by it.
  const card = h('section', { class: 'card', id: `defaults-${path.replace(/\//g, '')}` }, h('h2', {}, title))
  Promise.all([get<ServerDefaults | UserDefaults>(path), categoryGroups()]).then(
    ([d, groups]) => {
      const ss = h('input', { type: 'checkbox', name: 'safesearch', checked: d.safesearch })
      const sv = h('input', { type: 'checkbox', name: 'safeyoutube', checked: d.safeyoutube })
      const redirect = h('input', {
        type: 'url',
        name: 'safesearchredirect',
        value: (d as ServerDefaults).safesearchredirect ?? ''
      })
      const picker = categoryPicker(groups, d.filter)
      // Scheduled rules of the anonymous defaults (/config/) or of the new-user default (/userconfig/).
      const schedules = scheduleEditor(d.schedules ?? [])
      const out = h('span', { class: 'muted' })
      const form = h(
        'form',
        { class: 'stack' },
        h(
          'div',
          { class: 'inline' },
          h('label', { class: 'check' }, ss, ' ', t.safesearch),
          h('label', { class: 'check' }, sv, ' ', t.safevideo)
        ),
        withRedirect ? h('label', {}, t.redirect, redirect) : null,
        h('div', {}, h('div', { class: 'label' }, t.filter), picker.el),
        schedules.el,
        h('div', { class: 'inline' }, h('button', { type: 'submit', class: 'primary' }, t.save), out)
      )
      form.addEventListener('submit', (e) => {
        e.preventDefault()
        const body: Record<string, unknown> = {
          safesearch: ss.checked,
          safeyoutube: sv.checked,
          filter: picker.selected(),
          schedules: schedules.value()
        }
        if (withRedirect) body.safesearchredirect = redirect.value.trim()
        api('PUT', path, body).then(
          () => {
            clear(out, t.saved)
          },
          (err: unknown) => {
            clear(out, errorBox(err))
          }
        )
      })
      card.append(form)
    },
    (err: unknown) => {
      card.append(errorBox(err))
    }
  )
  return card
}

function listsForm(): HTMLElement {
  const card = h(
    'section',
    { class: 'card' },
    h('h2', {}, `${t.globalWhite} · ${t.globalBlack}`),
    h('p', { class: 'muted' }, t.globalNote)
  )
  Promise.all([get<string[]>('/whitelist/'), get<string[]>('/blacklist/')]).then(
    ([white, black]) => {
      const w = h('textarea', { name: 'global-white', rows: 6, placeholder: t.listHint }, white.join('\n'))
      const b = h(
        'textarea',
        { name: 'global-black', rows: 6, placeholder: t.listHint },
        black.filter((d) => d !== '-').join('\n')
      )
      const allowOnly = h('input', { type: 'checkbox', name: 'global-allow-only', checked: black.includes('-') })
      const banner = h('div', { class: 'allow-only', hidden: !black.includes('-') }, t.allowOnlyOn)
      allowOnly.addEventListener('change', () => {
        banner.hidden = !allowOnly.checked
      })
      const out = h('span', { class: 'muted' })
      const form = h(
        'form',
        { class: 'stack' },
        banner,
        h(
          'div',
          { class: 'row2' },
          h('label', {}, t.globalWhite, w),
          h('label', {}, t.globalBlack, b, h('span', { class: 'check' }, allowOnly, ' ', t.allowOnly))
        ),
        h('div', { class: 'inline' }, h('button', { type: 'submit', class: 'primary' }, t.save), out)
      )
      form.addEventListener('submit', (e) => {
        e.preventDefault()
        Promise.all([
          api('PUT', '/whitelist/', lines(w.value)),
          api('PUT', '/blacklist/', [...(allowOnly.checked ? ['-'] : []), ...lines(b.value)])
        ]).then(
          () => {
            clear(out, t.saved)
          },
          (err: unknown) => {
            clear(out, errorBox(err))
          }
        )
      })
      card.append(form)
    },
    (err: unknown) => {
      card.append(errorBox(err))
    }
  )
  return card
}

export function settingsPage(app: HTMLElement): void {
  clear(
    app,
    h('div', { class: 'page-head' }, h('h1', {}, t.settings)),
    listsForm(),
    h(
      'div',
      { class: 'grid2' },
      defaultsForm(t.serverDefaults, '/config/', true),
      defaultsForm(t.userDefaults, '/userconfig/', false)
    )
  )
}
