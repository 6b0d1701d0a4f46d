/**
 * The schedules editor: a user's time-based rules, one card each. A window is a line of text,
 * `mon tue wed 22:00-07:00` (days, then from-to), which the operator types faster than a grid of boxes;
 * the API checks the rest and its 422 names the field at fault (schedules[0].windows[1].from).
 */
import type { User } from './api.js'
import { h, lines } from './dom.js'
import { t } from './i18n.js'
import { serverZone } from './zone.js'

type Rule = NonNullable<User['schedules']>[number]
type Window = Rule['windows'][number]
type Day = Window['days'][number]

/** `mon tue 22:00-07:00` → a window; text the API will refuse is passed through for it to name. */
function parseWindow(text: string): Window {
  const words = text.trim().split(/[\s,]+/)
  const span = words.pop() ?? ''
  const [from = '', to = ''] = span.split('-')
  return { days: words.map((d) => d.toLowerCase() as Day), from, to }
}

function formatWindow(w: Window): string {
  return `${w.days.join(' ')} ${w.from}-${w.to}`
}

function ruleCard(rule: Rule, onRemove: (el: HTMLElement) => void): { el: HTMLElement; value: () => Rule } {
  const name = h('input', { type: 'text', name: 'schedule-name', value: rule.name, required: true })
  // Empty: the rule runs in the server's zone (stats.timezone), which the placeholder and the label name.
  const zone = h('input', { type: 'text', name: 'schedule-timezone', value: rule.timezone ?? '' })
  const zoneDefault = h('span', { class: 'muted schedule-zone-default' })
  void serverZone().then((z) => {
    zone.placeholder = z
    zoneDefault.textContent = ` (${t.zoneDefault(z)})`
  })
  const windows = h(
    'textarea',
    { name: 'schedule-windows', rows: 2, placeholder: 'sun mon tue wed thu 21:00-07:00' },
    rule.windows.map(formatWindow).join('\n')
  )
  const cats = h('input', {
    type: 'text',
    name: 'schedule-filter',
    value: (rule.filter ?? []).join(' '),
    placeholder: '40 52'
  })
  const white = h('textarea', { name: 'schedule-whitelist', rows: 2 }, (rule.whitelist ?? []).join('\n'))
  const black = h('textarea', { name: 'schedule-blacklist', rows: 2 }, (rule.blacklist ?? []).join('\n'))
  const allowOnly = h('input', { type: 'checkbox', name: 'schedule-allowonly', checked: rule.allowonly === true })
  const remove = h('button', { type: 'button', class: 'schedule-remove' }, t.scheduleRemove)
  const el = h(
    'fieldset',
    { class: 'stack schedule' },
    h(
      'div',
      { class: 'row2' },
      h('label', {}, t.scheduleName, name),
      h('label', {}, t.scheduleZone, zoneDefault, zone)
    ),
    h('label', {}, t.scheduleWindows, windows),
    h('label', {}, t.scheduleFilter, cats),
    h('div', { class: 'row2' }, h('label', {}, t.whitelist, white), h('label', {}, t.blacklist, black)),
    h('div', { class: 'inline' }, h('span', { class: 'check' }, allowOnly, ' ', t.allowOnly), remove)
  )
  remove.addEventListener('click', () => {
    onRemove(el)
  })
  const value = (): Rule => {
    const out: Rule = { name: name.value.trim(), windows: lines(windows.value.replace(/,/g, ' ')).map(parseWindow) }
    if (zone.value.trim() !== '') out.timezone = zone.value.trim()
    const filter = cats.value.split(/[\s,]+/).filter((c) => c !== '')
    if (filter.length > 0) out.filter = filter.map(Number)
    if (lines(white.value).length > 0) out.whitelist = lines(white.value)
    if (lines(black.value).length > 0) out.blacklist = lines(black.value)
    if (allowOnly.checked) out.allowonly = true
    return out
  }
  return { el, value }
}

/** The editor of `rules`; `value()` is the list to PUT as `schedules` ([] removes them). */
export function scheduleEditor(rules: readonly Rule[]): { el: HTMLElement; value: () => Rule[] } {
  const cards: Array<{ el: HTMLElement; value: () => Rule }> = []
  const list = h('div', { class: 'stack schedules' })
  const add = (rule: Rule): void => {
    const card = ruleCard(rule, (el) => {
      cards.splice(
        cards.findIndex((c) => c.el === el),
        1
      )
      el.remove()
    })
    cards.push(card)
    list.append(card.el)
  }
  for (const r of rules) add(r)
  const addButton = h('button', { type: 'button', class: 'schedule-add' }, t.scheduleAdd)
  addButton.addEventListener('click', () => {
    add({ name: '', windows: [] })
  })
  const el = h(
    'div',
    { class: 'stack' },
    h('div', { class: 'label' }, t.schedules),
    h('p', { class: 'muted' }, t.schedulesHint),
    list,
    h('div', {}, addButton)
  )
  return { el, value: () => cards.map((c) => c.value()) }
}
