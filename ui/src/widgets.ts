/** Pieces several pages share: the date range, category names, the category picker, "check a domain", the live log. */
import { categoryNames, get, seg, type Check, type Groups } from './api.js'
import { clear, day, errorBox, h } from './dom.js'
import { fmt, t } from './i18n.js'
import { serverZone, timeIn } from './zone.js'

/** How often a report whose range ends today asks again (the statistics are imported every few seconds). */
export const REFRESH_MS = 5000

/**
 * The from/to form of a report. The report shows at once and, while its range ends today and the
 * page is visible, again every REFRESH_MS, so new queries appear by themselves; it stops once the
 * form has left the page.
 */
export function dateRange(onShow: (from: string, to: string) => void, days = 7, refreshMs = REFRESH_MS): HTMLElement {
  const from = h('input', { type: 'date', name: 'from', value: day(days - 1) })
  const to = h('input', { type: 'date', name: 'to', value: day(0) })
  const form = h(
    'form',
    { class: 'range' },
    h('label', {}, t.from, ' ', from),
    h('label', {}, t.to, ' ', to),
    h('button', { type: 'submit' }, t.show)
  )
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    onShow(from.value, to.value)
  })
  queueMicrotask(() => {
    onShow(from.value, to.value)
  })
  const timer = setInterval(() => {
    if (!form.isConnected) {
      clearInterval(timer)
      return
    }
    if (document.visibilityState === 'visible' && to.value >= day(0)) onShow(from.value, to.value)
  }, refreshMs)
  return form
}

export function catChips(
  cats: readonly number[],
  names: Record<string, string>,
  blocked: readonly number[] = []
): HTMLElement {
  return h(
    'span',
    { class: 'chips' },
    cats.map((c) =>
      h('span', { class: blocked.includes(c) ? 'chip bad' : 'chip', title: String(c) }, names[String(c)] ?? `#${c}`)
    )
  )
}

/** Checkboxes of every category, by group; `selected()` reads the choice. */
export function categoryPicker(
  groups: Groups,
  chosen: readonly number[],
  name = 'filter'
): { el: HTMLElement; selected: () => number[] } {
  const boxes: HTMLInputElement[] = []
  const el = h(
    'div',
    { class: 'picker' },
    groups.map((g) =>
      h(
        'fieldset',
        {},
        h('legend', {}, g.group),
        Object.entries(g.categories).map(([num, label]) => {
          const box = h('input', { type: 'checkbox', name, value: num, checked: chosen.includes(Number(num)) })
          boxes.push(box)
          return h('label', { class: 'check' }, box, ' ', label)
        })
      )
    )
  )
  return { el, selected: () => boxes.filter((b) => b.checked).map((b) => Number(b.value)) }
}

export function explainStep(c: Check, names: Record<string, string>): HTMLElement {
  const step = t.steps[c.step] ?? c.step
  return h(
    'div',
    { class: `verdict ${c.action}`, 'data-step': c.step },
    h(
      'div',
      { class: 'verdict-head' },
      h('strong', { class: 'verdict-action' }, t.action[c.action] ?? c.action),
      ' ',
      h('span', { class: 'domain' }, c.domain)
    ),
    h(
      'dl',
      {},
      h('dt', {}, t.step),
      h('dd', { class: 'verdict-step' }, step),
      c.matched !== null
        ? [h('dt', {}, t.matched), h('dd', {}, h('code', {}, c.matched), c.target !== null ? ` → ${c.target}` : '')]
        : null,
      c.categories.length > 0
        ? [h('dt', {}, t.categories), h('dd', {}, catChips(c.categories, names, c.blockedCategories))]
        : null,
      c.schedule !== null
        ? [
            h('dt', {}, t.scheduleDecided),
            h(
              'dd',
              { class: 'verdict-schedule' },
              `${c.schedule.name}: ${c.schedule.window.days.join(' ')} ${c.schedule.window.from}-${c.schedule.window.to}`
            )
          ]
        : null,
      c.changesAt !== null
        ? [
            h('dt', {}, t.changesAt),
            h('dd', { class: 'verdict-changes' }, `${c.changesAt.local} (${c.changesAt.timezone})`)
          ]
        : null,
      h('dt', {}, t.user),
      h('dd', {}, c.user ?? t.anon)
    )
  )
}

/** The "check a domain" box: by user (`user`) or by address (an address field). */
export function checkBox(user?: string): HTMLElement {
  const domain = h('input', {
    type: 'text',
    name: 'check-domain',
    placeholder: t.checkHint,
    required: true,
    autocomplete: 'off'
  })
  const address =
    user === undefined ? h('input', { type: 'text', name: 'check-ip', placeholder: '10.0.0.1', required: true }) : null
  const out = h('div', { class: 'check-result' })
  const form = h('form', { class: 'inline' }, domain, address, h('button', { type: 'submit' }, t.checkBtn))
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    const path =
      user !== undefined
        ? `/users/${seg(user)}/check/${seg(domain.value.trim())}`
        : `/check/${seg(domain.value.trim())}?ip=${encodeURIComponent(address!.value.trim())}`
    Promise.all([get<Check>(path), categoryNames()]).then(
      ([c, names]) => {
        clear(out, explainStep(c, names))
      },
      (err: unknown) => {
        clear(out, errorBox(err))
      }
    )
  })
  return h('section', { class: 'card' }, h('h2', {}, t.check), form, out)
}

interface LiveRow {
  time: number
  address: string
  user: string | null
  host: string
  blocked: boolean
  reason: string
  blockedHost: string
  cats: number[]
  blockedCats: number[]
  nxdomain: boolean
}

const MAX_ROWS = 300

/** One query of the live log as a table row. */
function liveRow(r: LiveRow, names: Record<string, string>, zone: string): HTMLTableRowElement {
  const reason =
    r.reason === 'none'
      ? ''
      : (t.steps[r.reason] ?? r.reason) +
        (r.blockedHost !== '' && r.blockedHost !== r.host ? ` (${r.blockedHost})` : '')
  return h(
    'tr',
    { class: r.blocked ? 'blocked' : '', 'data-host': r.host, 'data-reason': r.reason },
    h('td', { class: 'nowrap live-time' }, timeIn(r.time, zone)),
    h('td', { class: 'mono' }, r.address),
    h(
      'td',
      {},
      r.user === null
        ? h('span', { class: 'muted' }, t.anon)
        : h('a', { href: `#/users/${encodeURIComponent(r.user)}` }, r.user)
    ),
    h('td', { class: 'mono wrap' }, r.host, r.nxdomain ? h('span', { class: 'tag' }, 'NX') : null),
    h('td', {}, r.blocked ? h('span', { class: 'tag bad' }, t.action.block) : null, ' ', reason),
    h('td', {}, catChips(r.cats, names, r.blockedCats))
  )
}

/** The live log's column heads. */
function liveHead(): HTMLElement {
  return h(
    'thead',
    {},
    h(
      'tr',
      {},
      h('th', { class: 'live-time' }, t.time),
      h('th', {}, t.address),
      h('th', {}, t.user),
      h('th', {}, t.domain),
      h('th', {}, t.reason),
      h('th', {}, t.categories)
    )
  )
}

/** The live log's filters as its query string: the last 50 rows, then those the filters let through. */
function liveQuery(fields: Record<'user' | 'address' | 'domain', HTMLInputElement>, blocked: boolean): string {
  const q = new URLSearchParams({ last: '50' })
  for (const [name, input] of Object.entries(fields)) if (input.value.trim() !== '') q.set(name, input.value.trim())
  if (blocked) q.set('blocked', '1')
  return q.toString()
}

/** The live query log (GET /live/queries, Server-Sent Events), newest first, at most MAX_ROWS rows on screen. */
export function liveLog(fixed: { user?: string } = {}): { el: HTMLElement; stop: () => void } {
  const user = h('input', { type: 'text', name: 'live-user', placeholder: t.user, value: fixed.user ?? '' })
  const address = h('input', { type: 'text', name: 'live-address', placeholder: t.address })
  const domain = h('input', { type: 'text', name: 'live-domain', placeholder: t.domainContains })
  const blocked = h('input', { type: 'checkbox', name: 'live-blocked' })
  const state = h('span', { class: 'muted live-state' }, t.connecting)
  const notice = h('div', { class: 'notice', hidden: true })
  const body = h('tbody')
  const table = h('table', { class: 'live' }, liveHead(), body)
  let source: EventSource | undefined
  let names: Record<string, string> = {}
  let zone = 'UTC'
  const connect = (): void => {
    source?.close()
    body.replaceChildren()
    state.textContent = t.connecting
    source = new EventSource(`/live/queries?${liveQuery({ user, address, domain }, blocked.checked)}`)
    source.onopen = () => {
      state.textContent = t.connected
    }
    source.onerror = () => {
      state.textContent = t.connecting
    }
    source.onmessage = (e: MessageEvent<string>) => {
      add(JSON.parse(e.data) as LiveRow)
    }
    source.addEventListener('dropped', (e) => {
      notice.hidden = false
      notice.textContent = t.dropped((JSON.parse((e as MessageEvent<string>).data) as { rows: number }).rows)
    })
    source.addEventListener('skipped', () => {
      notice.hidden = false
      notice.textContent = t.skipped
    })
  }
  const add = (r: LiveRow): void => {
    const tr = liveRow(r, names, zone)
    body.prepend(tr)
    while (body.rows.length > MAX_ROWS) body.deleteRow(body.rows.length - 1)
  }
  const form = h(
    'form',
    { class: 'inline filters' },
    fixed.user === undefined ? user : null,
    address,
    domain,
    h('label', { class: 'check' }, blocked, ' ', t.blockedOnly),
    h('button', { type: 'submit' }, t.show),
    state
  )
  form.addEventListener('submit', (e) => {
    e.preventDefault()
    connect()
  })
  blocked.addEventListener('change', connect)
  // Rows name their categories and show their time in the server's zone: connect once both are here.
  const head = table.querySelector('th.live-time')!
  void Promise.all([
    categoryNames().then(
      (n) => {
        names = n
      },
      () => {}
    ),
    serverZone().then((z) => {
      zone = z
      head.textContent = `${t.time} (${z})`
    })
  ]).finally(connect)
  return {
    el: h('section', { class: 'card' }, h('h2', {}, t.liveFor), form, notice, h('div', { class: 'scroll' }, table)),
    stop: () => {
      source?.close()
    }
  }
}

export function numberCell(n: number): HTMLElement {
  return h('td', { class: 'num' }, fmt(n))
}
