/**
 * Readers for single-list source formats. Each streams one file into an EntryCollector with one
 * category list (the command's `--category`), counting invalid and skipped entries.
 *
 * - domain lists: one name per line, `#` comments; `*.name` and `.name` are read as `name`
 *   (our entries match a name and all its subdomains anyway);
 * - hosts files: `0.0.0.0 name [name…]` / `127.0.0.1 name`; localhost-style names are skipped;
 * - AdBlock-style lists: only the plain domain rule `||name^` (optionally `^|`) is imported;
 *   every other rule (paths, wildcards, options, exceptions `@@`, cosmetic `##`) is skipped.
 */
import { normalizeDomain, normalizeUrlEntry } from '../../engine/names/index.js'
import { readHostsLine } from '../../engine/lists/index.js'
import { readLines, type EntryCollector } from './collect.js'

export type ListFormat = 'domains' | 'hosts' | 'adblock'
export const LIST_FORMATS: readonly ListFormat[] = Object.freeze(['domains', 'hosts', 'adblock'])

/** Strips a `#` comment that starts the line or follows whitespace. */
function stripComment(line: string): string {
  for (let i = line.indexOf('#'); i !== -1; i = line.indexOf('#', i + 1)) {
    if (i === 0 || line[i - 1] === ' ' || line[i - 1] === '\t') return line.slice(0, i)
  }
  return line
}

/** Adds one domain-list name; `allowUrls` also takes `host/path` entries (UT1 `urls` files). */
export function addName(raw: string, cats: readonly number[], into: EntryCollector, allowUrls = false): void {
  into.counts.read++
  let name = raw
  if (name.startsWith('*.')) name = name.slice(2)
  else if (name.startsWith('.')) name = name.slice(1)
  const key = allowUrls && name.includes('/') ? normalizeUrlEntry(name)?.key : normalizeDomain(name)
  if (key === undefined) {
    into.counts.invalid++
    return
  }
  into.add(key, cats)
}

/** Plain domain list (also UT1 `domains` files). With `allowUrls`, `host/path` lines are URL entries. */
export async function importDomainList(
  file: string,
  cats: readonly number[],
  into: EntryCollector,
  allowUrls = false
): Promise<void> {
  for await (const line of readLines(file)) {
    const text = stripComment(line).trim()
    if (text.length === 0) continue
    if (/\s/.test(text)) {
      into.counts.read++
      into.counts.invalid++
      continue
    }
    addName(text, cats, into, allowUrls)
  }
}

/** hosts file (engine/lists/hosts-line.ts): every name after the address is an entry. */
export async function importHosts(file: string, cats: readonly number[], into: EntryCollector): Promise<void> {
  for await (const raw of readLines(file)) {
    const line = readHostsLine(raw)
    if (line.kind === 'empty') continue
    if (line.kind === 'invalid') {
      into.counts.read++
      into.counts.invalid++
      continue
    }
    into.counts.read += line.self
    into.counts.skipped += line.self
    for (const name of line.names) addName(name, cats, into)
  }
}

const ADBLOCK_DOMAIN_RULE = /^\|\|([^/^$*|@#]+)\^\|?$/

/** AdBlock-style list: `||name^` rules are imported, all other rules are counted as skipped. */
export async function importAdblock(file: string, cats: readonly number[], into: EntryCollector): Promise<void> {
  for await (const line of readLines(file)) {
    const text = line.trim()
    // `!` comments, `[Adblock Plus 2.0]` headers, and `#` comments some DNS lists use.
    if (text.length === 0 || text.startsWith('!') || text.startsWith('[') || text.startsWith('# ') || text === '#')
      continue
    const m = ADBLOCK_DOMAIN_RULE.exec(text)
    if (m === null) {
      into.counts.read++
      into.counts.skipped++
      continue
    }
    addName(m[1]!, cats, into)
  }
}

/** Dispatches to the reader of `format`. */
export async function importList(
  format: ListFormat,
  file: string,
  cats: readonly number[],
  into: EntryCollector
): Promise<void> {
  switch (format) {
    case 'domains':
      return await importDomainList(file, cats, into)
    case 'hosts':
      return await importHosts(file, cats, into)
    case 'adblock':
      return await importAdblock(file, cats, into)
  }
}
