/**
 * Block page templates: Handlebars, compiled once at start, rendered per request.
 *
 * The Host header and the request path are chosen by whoever sends the request, and both reach the
 * page (`Domain`, `RetryUrl`). Handlebars escapes `{{x}}` (`& < > " ' \` =`), so the one way to
 * inject markup is an unescaped `{{{x}}}` or `{{&x}}` in a template: those are refused at load, for
 * the operator's templates as for ours.
 *
 * Files (docs/blockpage.md): for a page `NAME` (`blocked`, `blocked_by_category`, `unblocked`) and a
 * language `L`, the first that exists wins:
 *   1. `NAME.L.html` in `blockpage.templates`;
 *   2. `NAME.html` in `blockpage.templates`, for the default language only (the spec's file names:
 *      one set of pages, written in the operator's language);
 *   3. the shipped `NAME.L.html` (blockpage/templates/), so every page exists in every language and a
 *      spec-style directory without `unblocked.html` still works.
 * `_NAME.html` files are partials (`{{> NAME}}`); the operator's override the shipped ones.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Handlebars from 'handlebars'
import type { Language } from '../engine/config/index.js'
import { EngineError } from '../engine/errors.js'
import { LANGUAGES } from './language.js'
import type { PageReason } from './messages.js'

/** The shipped templates: blockpage/templates/ of the checkout (this file runs from dist/blockpage/). */
export const DEFAULT_TEMPLATES_DIR = fileURLToPath(new URL('../../blockpage/templates/', import.meta.url))

export const PAGE_NAMES = ['blocked', 'blocked_by_category', 'unblocked'] as const
export type PageName = (typeof PAGE_NAMES)[number]

/** What every template receives (docs/blockpage.md, "Template variables"). */
export interface PageVars {
  /** The requested host, normalised (lower case, punycode, no port): the spec's `Domain`. */
  Domain: string
  /** `Domain` for people: IDN labels in Unicode (`кремль.рф`). */
  DisplayDomain: string
  /** Names of the categories that caused the block, in the page's language; [] except on blocked_by_category. */
  Cats: string[]
  ProductName: string
  /** `ru` or `en`: for `<html lang>`. */
  Lang: Language
  Reason: PageReason
  /** One sentence explaining `Reason`, in the page's language. */
  ReasonText: string
  /** `HH:MM` (the rule's zone) when a scheduled rule blocked and may stop at that time; '' otherwise. */
  BlockedUntil?: string
  /** The URL the browser asked for (scheme, Host, path and query as sent). */
  RetryUrl: string
}

export interface TemplateSet {
  /** Renders page `name` in `lang`; every language has every page. */
  render(name: PageName, lang: Language, vars: PageVars): string
  /** The file each page/language pair was compiled from (for the start log and tests). */
  readonly files: Readonly<Record<string, string>>
  /** True when the configured directory does not exist and only the shipped templates serve. */
  readonly missingDir: boolean
}

const SAMPLE: PageVars = {
  Domain: 'example.com',
  DisplayDomain: 'example.com',
  Cats: ['Sample'],
  ProductName: 'filterd',
  Lang: 'en',
  Reason: 'category',
  ReasonText: 'sample',
  BlockedUntil: '07:00',
  RetryUrl: 'http://example.com/'
}

// `{{{x}}}` and `{{&x}}` (also `{{~{x}}}`, `{{~& x}}`) print without escaping.
const UNESCAPED = /\{\{~?\s*(\{|&)/

function invalid(file: string, message: string, cause?: unknown): EngineError {
  return new EngineError(
    'ENGINE_CONFIG_INVALID',
    `blockpage.templates: ${file}: ${message}`,
    cause === undefined ? undefined : { cause }
  )
}

function readTemplate(file: string): string {
  const text = readFileSync(file, 'utf8')
  if (UNESCAPED.test(text)) {
    throw invalid(
      file,
      'unescaped output ({{{…}}} or {{&…}}) is not allowed: Domain and RetryUrl come from the request'
    )
  }
  return text
}

function partialsIn(dir: string): Map<string, string> {
  const out = new Map<string, string>()
  if (!existsSync(dir)) return out
  for (const entry of readdirSync(dir)) {
    const m = /^_([A-Za-z0-9_-]+)\.html$/.exec(entry)
    if (m !== null) out.set(m[1]!, join(dir, entry))
  }
  return out
}

/**
 * Loads and compiles the templates of `dir` (falling back to the shipped ones as described above).
 * Throws ENGINE_CONFIG_INVALID naming the file when a template does not compile.
 */
export function loadTemplates(
  dir: string,
  defaultLanguage: Language,
  shippedDir: string = DEFAULT_TEMPLATES_DIR
): TemplateSet {
  // A missing directory is not fatal: the shipped templates cover every page, and a block page that does not
  // start leaves users with browser errors. The caller logs `missingDir` as a warning.
  const missingDir = !existsSync(dir)
  if (!missingDir && !statSync(dir).isDirectory()) throw invalid(dir, 'is not a directory')
  // An isolated environment: helpers and partials registered here never leak into other users of handlebars.
  const hb = Handlebars.create()
  const partials = partialsIn(shippedDir)
  for (const [name, file] of partialsIn(dir)) partials.set(name, file)
  for (const [name, file] of partials) hb.registerPartial(name, readTemplate(file))

  const compiled = new Map<string, HandlebarsTemplateDelegate<PageVars>>()
  const files: Record<string, string> = {}
  const byFile = new Map<string, HandlebarsTemplateDelegate<PageVars>>()
  for (const lang of LANGUAGES) {
    for (const name of PAGE_NAMES) {
      const candidates = [join(dir, `${name}.${lang}.html`)]
      if (lang === defaultLanguage) candidates.push(join(dir, `${name}.html`))
      candidates.push(join(shippedDir, `${name}.${lang}.html`))
      const file = candidates.find((f) => existsSync(f))
      if (file === undefined)
        throw invalid(join(dir, `${name}.${lang}.html`), 'missing, and no shipped template to fall back to')
      let fn = byFile.get(file)
      if (fn === undefined) {
        fn = hb.compile<PageVars>(readTemplate(file), { strict: false, preventIndent: true })
        // compile() is lazy: render once now so that a syntax error or a missing partial stops the
        // start with the file's name instead of failing the first visitor.
        try {
          fn({ ...SAMPLE, Lang: lang })
        } catch (err) {
          throw invalid(file, (err as Error).message, err)
        }
        byFile.set(file, fn)
      }
      compiled.set(`${name}.${lang}`, fn)
      files[`${name}.${lang}`] = file
    }
  }
  return {
    files,
    missingDir,
    render(name, lang, vars) {
      // Every (name, lang) pair was filled above.
      return compiled.get(`${name}.${lang}`)!(vars)
    }
  }
}
