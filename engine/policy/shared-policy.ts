/**
 * What a snapshot holds besides its owner's name, shared by every address and every user with the same
 * content. Most subscribers of an ISP pick from a handful of policies (a filter, the two safe switches), so
 * an address costs one cache slot and a two-field snapshot pointing here, not its own Sets. A user with lists
 * of its own has a policy of its own, its lists read once per generation and referenced by each of its
 * addresses (two users' lists are never compared entry by entry); scheduled rules come shared from the
 * RuleCompiler (engine/policy/scheduled.ts).
 */
import { flatString } from '../schedule/index.js'
import type { ScheduledPart } from './scheduled.js'

/** The owner-independent part of a snapshot. Immutable, shared: compare by identity. */
export interface SharedPolicy {
  readonly enabled: boolean
  readonly whitelist: ReadonlySet<string>
  readonly blacklist: ReadonlySet<string>
  readonly allowOnly: boolean
  readonly safesearch: boolean
  readonly safevideo: boolean
  readonly filter: ReadonlySet<number>
  /** The owner's scheduled rules, when it has any. */
  readonly scheduled?: ScheduledPart | undefined
}

/** A user's own lists as the policy reads them. */
export interface OwnLists {
  readonly whitelist: ReadonlySet<string>
  readonly blacklist: ReadonlySet<string>
  /** The blacklist held `-` (block what the whitelist does not pass). */
  readonly allowOnly: boolean
}

/** Any empty list. */
export const NO_NAMES: ReadonlySet<string> = new Set()
/** The lists of a policy with none of its own. */
const NO_LISTS: OwnLists = { whitelist: NO_NAMES, blacklist: NO_NAMES, allowOnly: false }

/** The fields of a SharedPolicy besides the lists, before interning. */
export interface PolicyContent {
  readonly enabled: boolean
  readonly safesearch: boolean
  readonly safevideo: boolean
  readonly filter: readonly number[]
  readonly scheduled: ScheduledPart | undefined
}

/** Whether `lists` holds nothing. */
const isEmpty = (lists: OwnLists): boolean =>
  lists.whitelist.size === 0 && lists.blacklist.size === 0 && !lists.allowOnly

/**
 * Interns SharedPolicy objects. A policy without lists of its own is keyed by its content (the rule part
 * by identity), so it stays right across store writes; one with lists is its user's alone, kept by user
 * name so that each of the user's addresses references the one read, and forgotten (`forgetUser`) when a
 * write touches that user. Filter sets are interned by content under both. The tables grow with the
 * distinct policies and the users with lists seen, not with addresses; the policy drops them all
 * (`clear`) on a global change, or when they outgrow its cache (engine/policy/index.ts).
 */
export class PolicyInterner {
  private readonly policies = new Map<string, SharedPolicy>()
  private readonly owned = new Map<string, SharedPolicy>()
  private readonly filters = new Map<string, ReadonlySet<number>>()
  /** Identities of rule parts in a policy's key; 0 is "none". */
  private readonly parts = new Map<ScheduledPart, number>()

  /** The policy of `user`: its own lists are read (by `readLists`) once this generation. */
  policyOf(user: string, content: PolicyContent, readLists: () => OwnLists): SharedPolicy {
    let p = this.owned.get(user)
    if (p !== undefined) return p
    const lists = readLists()
    if (isEmpty(lists)) return this.policy(content)
    p = this.make(content, lists, this.filter(content.filter).set)
    this.owned.set(user, p)
    return p
  }

  /** The one SharedPolicy with this content and no lists of its own. */
  policy(content: PolicyContent): SharedPolicy {
    const filter = this.filter(content.filter)
    const c = content
    const key = `${+c.enabled}${+c.safesearch}${+c.safevideo}|${this.partId(c.scheduled)}|${filter.key}`
    let p = this.policies.get(key)
    // Stored flat: the template literal is a rope of its parts.
    if (p === undefined) this.policies.set(flatString(key), (p = this.make(content, NO_LISTS, filter.set)))
    return p
  }

  /** Forgets `user`'s own lists: the next `policyOf` reads them again. */
  forgetUser(user: string): void {
    this.owned.delete(user)
  }

  clear(): void {
    this.policies.clear()
    this.owned.clear()
    this.filters.clear()
    this.parts.clear()
  }

  private make(c: PolicyContent, lists: OwnLists, filter: ReadonlySet<number>): SharedPolicy {
    // Every SharedPolicy has the same fields in the same order (one hidden class on the query path).
    return {
      enabled: c.enabled,
      whitelist: lists.whitelist,
      blacklist: lists.blacklist,
      allowOnly: lists.allowOnly,
      safesearch: c.safesearch,
      safevideo: c.safevideo,
      filter,
      scheduled: c.scheduled
    }
  }

  private filter(categories: readonly number[]): { key: string; set: ReadonlySet<number> } {
    const key = [...new Set(categories)].sort((a, b) => a - b).join(',')
    let set = this.filters.get(key)
    if (set === undefined) this.filters.set(key, (set = new Set(categories)))
    return { key, set }
  }

  private partId(part: ScheduledPart | undefined): number {
    if (part === undefined) return 0
    let id = this.parts.get(part)
    if (id === undefined) this.parts.set(part, (id = this.parts.size + 1))
    return id
  }
}
