/**
 * Steps 1 and 2 of the verdict per name: the built-in whitelist, the global whitelist and the global
 * blacklist (the operator's own entries, then the subscriptions mapped to each). They depend on the name
 * alone, and a resolver's names repeat. Walked one by one, each step cut the name's suffixes and probed its
 * own Set or Map with each (a fresh substring and its hash per suffix, a cache miss per probe): on the ISP
 * host's profile that was the largest share of the policy's time. Here the three walks run once per name
 * while the lists stay as they are, and a query probes one table for the three answers.
 */
import { ABSENT, KeyTable, firstIn, type SuffixKeys } from '../names/index.js'
import type { BuiltinWhitelist } from '../whitelist/index.js'

/**
 * Names whose answers are kept (two generations of half, engine/names/key-table.ts): the size of the
 * subscriptions' answer cache this replaced, so a DNS process holds no more memory than before.
 */
const CACHED_NAMES = 50_000

/** The operator's global lists. */
export interface GlobalLists {
  readonly whitelist: ReadonlySet<string>
  readonly blacklist: ReadonlySet<string>
}

/** The subscriptions mapped to the global lists (engine/lists SubscriptionIndex). */
export interface GlobalSubscriptions {
  /** The first suffix of `keys` a whitelist (blacklist) subscription lists, or ''. */
  firstWhite(keys: SuffixKeys): string
  firstBlack(keys: SuffixKeys): string
}

/** The label a step's first listed suffix starts at, plus one (0: the step lists none of the name). */
export const builtinLabel = (answer: number): number => answer & 0xff
export const whiteLabel = (answer: number): number => (answer >> 8) & 0xff
export const blackLabel = (answer: number): number => answer >>> 16

export class GlobalAnswers {
  private readonly builtin: BuiltinWhitelist
  private readonly names = new KeyTable(CACHED_NAMES)

  constructor(builtin: BuiltinWhitelist) {
    this.builtin = builtin
  }

  /** The global lists or the subscriptions changed: every answer is read again. */
  clear(): void {
    this.names.clear()
  }

  /**
   * The three steps' labels for `keys` (read them with builtinLabel, whiteLabel, blackLabel), one byte each:
   * `keys` are a DNS name's, at most 127 labels (the wire reader and normalizeDomain both hold to it).
   */
  of(keys: SuffixKeys, lists: GlobalLists, subscriptions: GlobalSubscriptions): number {
    const name = keys.suffix(0)
    let answer = this.names.get(name)
    if (answer === ABSENT) {
      answer = this.walk(keys, lists, subscriptions)
      this.names.set(name, answer)
    }
    return answer
  }

  private walk(keys: SuffixKeys, lists: GlobalLists, subscriptions: GlobalSubscriptions): number {
    let builtin = 0
    for (let i = 0; i < keys.labelCount && builtin === 0; i++)
      if (this.builtin.matchKey(keys.suffix(i))) builtin = i + 1
    const white = labelOf(keys, firstIn(lists.whitelist, keys) || subscriptions.firstWhite(keys))
    const black = labelOf(keys, firstIn(lists.blacklist, keys) || subscriptions.firstBlack(keys))
    return builtin | (white << 8) | (black << 16)
  }
}

/** The label `suffix` of `keys` starts at, plus one; 0 for ''. */
function labelOf(keys: SuffixKeys, suffix: string): number {
  if (suffix === '') return 0
  for (let i = 0; i < keys.labelCount; i++) if (keys.suffix(i) === suffix) return i + 1
  return 0
}
