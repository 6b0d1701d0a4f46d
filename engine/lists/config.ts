/**
 * The `lists` section of the config as the refresher reads it (engine/lists/refresher.ts), and the
 * checks JSON Schema cannot say: ids unique, a category exactly when the target is one.
 */
import type { ListSource } from './keys.js'

/** A config source as the schema has it (`lists.sources[i]`). */
interface ConfigSource {
  readonly id: string
  readonly url: string
  readonly format: ListSource['format']
  readonly target: ListSource['target']
  readonly category?: number
  readonly interval?: number
  readonly enabled: boolean
}

export function configSources(sources: readonly ConfigSource[]): ListSource[] {
  return sources.map((s) => ({
    id: s.id,
    url: s.url,
    format: s.format,
    target: s.target,
    ...(s.category === undefined ? {} : { category: s.category }),
    ...(s.interval === undefined ? {} : { interval: s.interval }),
    enabled: s.enabled
  }))
}

/** Why a source cannot be, in the words of the config's or the API's field, or undefined. */
export function sourceProblem(s: Pick<ListSource, 'target' | 'category'>): { field: string; why: string } | undefined {
  if (s.target === 'category' && s.category === undefined)
    return { field: 'category', why: 'target category needs a category number' }
  if (s.target !== 'category' && s.category !== undefined)
    return { field: 'category', why: `a category goes with target category, not ${s.target}` }
  return undefined
}

/** The config's problems with `lists.sources`, each naming its key. */
export function configSourceProblems(sources: readonly ConfigSource[]): string[] {
  const problems: string[] = []
  const seen = new Set<string>()
  sources.forEach((s, i) => {
    if (seen.has(s.id)) problems.push(`lists.sources[${i}].id: "${s.id}" is used by an earlier source`)
    seen.add(s.id)
    const p = sourceProblem(s)
    if (p !== undefined) problems.push(`lists.sources[${i}].${p.field}: ${p.why}`)
  })
  return problems
}
