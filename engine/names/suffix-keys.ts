/**
 * A name as the keys of its suffixes, most specific first: what every suffix walk (lists, the
 * category database) reads. The DNS server builds them from wire labels (engine/judge/judge.ts
 * QueryKeys, so a label holding a dot never reads as two labels); HostKeys builds them from a
 * normalised host name.
 */
/** The name to judge, as keys of its suffixes: `suffix(0)` is the whole name. */
export interface SuffixKeys {
  readonly labelCount: number
  suffix(fromLabel: number): string
}

/** Suffix keys of a normalised host name (block page, API, tools): labels split at dots. */
export class HostKeys implements SuffixKeys {
  readonly labelCount: number
  private readonly name: string
  private readonly starts: number[]
  constructor(name: string) {
    this.name = name
    this.starts = name === '' ? [] : [0]
    for (let i = name.indexOf('.'); i >= 0; i = name.indexOf('.', i + 1)) this.starts.push(i + 1)
    this.labelCount = this.starts.length
  }

  suffix(fromLabel: number): string {
    const s = this.starts[fromLabel]
    return s === undefined ? '' : s === 0 ? this.name : this.name.slice(s)
  }
}

/** The first suffix of `keys`, most specific first, that `names` holds (a Set, or a Map by name), or ''. */
export function firstIn(names: { readonly size: number; has(key: string): boolean }, keys: SuffixKeys): string {
  if (names.size === 0) return ''
  for (let i = 0; i < keys.labelCount; i++) {
    const k = keys.suffix(i)
    if (names.has(k)) return k
  }
  return ''
}
