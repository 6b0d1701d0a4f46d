/**
 * Page language: the operator's default (`blockpage.language`, else `datafiles.language`), or the
 * browser's choice from `Accept-Language` (RFC 9110 §12.5.4) when `blockpage.accept-language` is on.
 * Only the primary subtag counts (`ru-RU` → `ru`); `q=0` means "not this one"; `*` means "anything",
 * which is the default language. Ties keep the browser's order.
 */
import type { Language } from '../engine/config/index.js'

export const LANGUAGES: readonly Language[] = ['ru', 'en']

function isLanguage(s: string): s is Language {
  return s === 'ru' || s === 'en'
}

/** The language to answer in; `header` is the raw Accept-Language value (or undefined). */
export function pickLanguage(header: string | undefined, fallback: Language): Language {
  if (header === undefined || header === '') return fallback
  let best: Language | undefined
  let bestQ = 0
  // A header is a handful of entries; this loop allocates one small array per entry and no sort.
  for (const part of header.split(',')) {
    const semi = part.indexOf(';')
    const tag = (semi < 0 ? part : part.slice(0, semi)).trim().toLowerCase()
    let q = 1
    if (semi >= 0) {
      const m = /;\s*q\s*=\s*([0-9.]+)/i.exec(part)
      if (m !== null) q = Number(m[1])
      if (!Number.isFinite(q)) q = 0
    }
    if (q <= bestQ) continue
    const dash = tag.indexOf('-')
    const primary = dash < 0 ? tag : tag.slice(0, dash)
    const lang = primary === '*' ? fallback : primary
    if (isLanguage(lang)) {
      best = lang
      bestQ = q
    }
  }
  return best ?? fallback
}
