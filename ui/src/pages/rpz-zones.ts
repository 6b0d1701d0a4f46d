/**
 * The RPZ zones the rpz role serves (GET /rpz/zones, docs/rpz.md): name, kind, SOA serial and
 * trigger count, in the order a consumer lists them, and where they are transferred from.
 */
import { get, type RpzZones } from '../api.js'
import { clear, errorBox, h } from '../dom.js'
import { fmt, t } from '../i18n.js'

function zoneTable(view: RpzZones): HTMLElement {
  const r = t.rpz
  return h(
    'table',
    { class: 'rpz-zones', 'data-count': view.zones.length },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        [r.zone, r.kind, r.serial, r.triggers].map((x) => h('th', {}, x))
      )
    ),
    h(
      'tbody',
      {},
      view.zones.map((z) =>
        h(
          'tr',
          { 'data-zone': z.name },
          h('td', {}, z.name),
          h('td', {}, z.kind),
          h('td', { class: 'num', 'data-serial': z.serial }, String(z.serial)),
          h('td', { class: 'num' }, fmt(z.triggers))
        )
      )
    )
  )
}

export function rpzZonesCard(): HTMLElement {
  const body = h('div', { class: 'rpz-zones' })
  get<RpzZones>('/rpz/zones').then(
    (view) => {
      if (!view.enabled) clear(body, h('p', { class: 'muted', 'data-rpz': 'off' }, t.rpz.off))
      else if (view.error !== undefined) clear(body, h('p', { class: 'error', 'data-rpz': 'error' }, view.error))
      else clear(body, h('p', { class: 'muted' }, `${t.rpz.from} ${view.listen}`), zoneTable(view))
    },
    (err: unknown) => clear(body, errorBox(err))
  )
  return h('section', { class: 'card' }, h('h2', {}, t.rpz.title), h('p', { class: 'muted' }, t.rpz.note), body)
}
