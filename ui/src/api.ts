/** The management API, as the console calls it: same origin, JSON, errors as { error: { code, message, field } }. */
import { lang, type Lang } from './i18n.js'

export class ApiError extends Error {
  constructor (readonly status: number, readonly code: string, message: string, readonly field?: string) {
    super(message)
  }
}

export async function api<T> (method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: {} }
  if (body !== undefined) {
    init.body = JSON.stringify(body)
    ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
  }
  const res = await fetch(path, init)
  const text = await res.text()
  const parsed: unknown = text === '' ? undefined : JSON.parse(text)
  if (!res.ok) {
    const e = (parsed as { error?: { code?: string, message?: string, field?: string } } | undefined)?.error
    throw new ApiError(res.status, e?.code ?? 'HTTP', e?.message ?? res.statusText, e?.field)
  }
  return parsed as T
}

export const get = <T>(path: string): Promise<T> => api<T>('GET', path)

export interface User {
  name: string
  safesearch: 'on' | 'off'
  safeyoutube: 'on' | 'off'
  status: 'enabled' | 'disabled'
  filter: number[]
  ip: string[]
  whitelist: string[]
  blacklist: string[]
}

export interface Chart { labels: string[], datasets: Array<{ label: string, data: number[] }> }
export interface Counts { requests: number, blocks: number }
export interface Overview {
  hours: Chart
  days: Chart
  totals: Counts
  anonymous: Counts
  users: Counts
  topBlocked: Array<{ domain: string, blocks: number, requests: number, cats: number[] }>
  topCategories: Array<{ category: number, blocks: number }>
}
export interface Check {
  domain: string
  address: string | null
  user: string | null
  action: string
  step: string
  matched: string | null
  categories: number[]
  blockedCategories: number[]
  site: { domain: string, categories: number[] } | null
  target: string | null
}
export interface Detail { timestamps: string[], reports: Array<Chart & { cats: number[][] }> }
export interface Raw { fields: string[], data: Array<[string, number, string, string, string, string, number[], number[]]> }
export interface ServerDefaults { filter: number[], safesearch: boolean, safeyoutube: boolean, safesearchredirect: string }
export interface UserDefaults { filter: number[], safesearch: boolean, safeyoutube: boolean }
export type Groups = Array<{ group: string, categories: Record<string, string> }>

// Per console language: switching languages fetches the names once more, in the new language.
const names = new Map<Lang, Promise<Record<string, string>>>()
const groups = new Map<Lang, Promise<Groups>>()
/** Category names from the taxonomy, in the console's language (the server falls back to its own when it has no file for it). */
export function categoryNames (): Promise<Record<string, string>> {
  let p = names.get(lang)
  if (p === undefined) names.set(lang, p = get<Record<string, string>>(`/categories/?lang=${lang}`))
  return p
}
export function categoryGroups (): Promise<Groups> {
  let p = groups.get(lang)
  if (p === undefined) groups.set(lang, p = get<Groups>(`/categorygroups/?lang=${lang}`))
  return p
}

/** Encodes a path segment; `*` kept readable (the search masks). */
export function seg (s: string): string {
  return encodeURIComponent(s).replace(/%2A/g, '*')
}
