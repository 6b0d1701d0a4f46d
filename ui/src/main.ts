/**
 * The operator console: a hash-routed single page over the management API (same origin, so the front door's
 * access rules and the API's authorization apply to it as to any API client).
 */
import './style.css'
import { h, clear } from './dom.js'
import { lang, setLang, t, type Lang } from './i18n.js'
import { overviewPage } from './pages/overview.js'
import { settingsPage } from './pages/settings.js'
import { listsPage } from './pages/lists.js'
import { userPage } from './pages/user.js'
import { usersPage } from './pages/users.js'
import { checkBox, liveLog } from './widgets.js'

const app = document.getElementById('app')!
let cleanup: (() => void) | undefined

function nav(): void {
  const here = location.hash.split('?')[0] ?? ''
  const link = (href: string, text: string): HTMLElement =>
    h('a', { href, class: here.startsWith(href) ? 'active' : '' }, text)
  clear(
    document.getElementById('nav')!,
    link('#/overview', t.overview),
    link('#/users', t.users),
    link('#/live', t.live),
    link('#/settings', t.settings),
    link('#/lists', t.subs.nav)
  )
  const button = (l: Lang, text: string): HTMLElement => {
    const b = h('button', { type: 'button', class: l === lang ? 'active' : '', 'data-lang': l }, text)
    b.addEventListener('click', () => {
      setLang(l)
      route()
    })
    return b
  }
  clear(document.getElementById('lang')!, button('en', 'EN'), button('ru', 'RU'))
  for (const el of document.querySelectorAll<HTMLElement>('[data-t]'))
    el.textContent = (t as unknown as Record<string, string>)[el.dataset.t!] ?? ''
}

function route(): void {
  cleanup?.()
  cleanup = undefined
  document.documentElement.lang = lang
  nav()
  const [path = '', query = ''] = location.hash.replace(/^#/, '').split('?')
  const params = new URLSearchParams(query)
  const parts = path.split('/').filter((p) => p !== '')
  if (parts[0] === 'users' && parts[1] !== undefined) {
    cleanup = userPage(app, decodeURIComponent(parts[1]))
  } else if (parts[0] === 'users') {
    usersPage(app, params)
  } else if (parts[0] === 'live') {
    const live = liveLog()
    clear(app, h('div', { class: 'page-head' }, h('h1', {}, t.live)), checkBox(), live.el)
    cleanup = live.stop
  } else if (parts[0] === 'settings') {
    settingsPage(app)
  } else if (parts[0] === 'lists') {
    listsPage(app)
  } else {
    overviewPage(app)
  }
  document.title = `filterd · ${document.querySelector('h1')?.textContent ?? ''}`
}

window.addEventListener('hashchange', route)
route()
