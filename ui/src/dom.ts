/** A few DOM helpers: the console is small enough to need no framework (docs/architecture.md). */
type Child = Node | string | number | null | undefined | false
type Attrs = Record<string, string | number | boolean | EventListener | undefined>

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Array<Child | Child[]>
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v)
    else if (k === 'value' && 'value' in el) (el as HTMLInputElement).value = String(v)
    else if (k === 'checked' && 'checked' in el) (el as HTMLInputElement).checked = v === true
    else el.setAttribute(k, v === true ? '' : String(v))
  }
  append(el, children)
  return el
}

function append(el: Node, children: Array<Child | Child[]>): void {
  for (const c of children) {
    if (Array.isArray(c)) append(el, c)
    else if (c instanceof Node) el.appendChild(c)
    else if (c !== null && c !== undefined && c !== false) el.appendChild(document.createTextNode(String(c)))
  }
}

export function clear(el: Element, ...children: Array<Child | Child[]>): void {
  el.replaceChildren()
  append(el, children)
}

export function lines(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter((s) => s !== '')
}

/** YYYY-MM-DD of a local date, `daysAgo` before today. */
export function day(daysAgo = 0): string {
  const d = new Date(Date.now() - daysAgo * 86_400_000)
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`
}

export function errorBox(err: unknown): HTMLElement {
  const e = err as { status?: number; code?: string; message?: string; field?: string }
  return h(
    'div',
    { class: 'error', role: 'alert' },
    `${e.code ?? 'Error'}: ${e.message ?? String(err)}${e.field !== undefined ? ` (${e.field})` : ''}`
  )
}
