/**
 * What a snapshot holds besides its owner's name, shared by every address and every user with the same
 * content. Most subscribers of an ISP pick from a handful of policies (a filter, the two safe switches), so
 * an address costs one cache slot and a two-field snapshot pointing here, not its own Sets. A user's own
 * lists are read once per generation and referenced by identity (two users' lists are never compared
 * entry by entry); scheduled rules come shared from the RuleCompiler (engine/policy/scheduled.ts).
 */
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

const NO_NAMES: ReadonlySet<string> = new Set()
/** The lists of every user who has none. */
export const NO_LISTS: OwnLists = { whitelist: NO_NAMES, blacklist: NO_NAMES, allowOnly: false }

/** The fields a SharedPolicy is made of, before interning. */
export interface PolicyContent {
  readonly enabled: boolean
  readonly lists: OwnLists
  readonly safesearch: boolean
  readonly safevideo: boolean
  readonly filter: readonly number[]
  readonly scheduled: ScheduledPart | undefined
}

/**
 * Interns SharedPolicy objects and users' lists for one policy generation (drop it all with `clear` when the
 * store's generation moves). Its tables grow with the distinct policies and the users with lists seen in a
 * generation, not with addresses.
 */
export class PolicyInterner {
  private readonly policies = new Map<string, SharedPolicy>()
  private readonly lists = new Map<string, OwnLists>()
  /** Identities of lists and rule parts in a policy's key; 0 is "none". */
  private readonly ids = new Map<object, number>()

  /** `user`'s lists, read by `read` the first time this generation (users with none share NO_LISTS). */
  listsOf(user: string, read: () => OwnLists): OwnLists {
    let lists = this.lists.get(user)
    if (lists === undefined) {
      lists = read()
      if (lists.whitelist.size === 0 && lists.blacklist.size === 0 && !lists.allowOnly) lists = NO_LISTS
      this.lists.set(user, lists)
    }
    return lists
  }

  /** The one SharedPolicy with this content. */
  policy(c: PolicyContent): SharedPolicy {
    const filter = [...new Set(c.filter)].sort((a, b) => a - b)
    const key = `${+c.enabled}${+c.safesearch}${+c.safevideo}|${this.id(c.lists)}|${this.id(c.scheduled)}|${filter.join(',')}`
    let p = this.policies.get(key)
    if (p === undefined) {
      // Every SharedPolicy has the same fields in the same order (one hidden class on the query path).
      p = {
        enabled: c.enabled,
        whitelist: c.lists.whitelist,
        blacklist: c.lists.blacklist,
        allowOnly: c.lists.allowOnly,
        safesearch: c.safesearch,
        safevideo: c.safevideo,
        filter: new Set(filter),
        scheduled: c.scheduled
      }
      this.policies.set(key, p)
    }
    return p
  }

  clear(): void {
    this.policies.clear()
    this.lists.clear()
    this.ids.clear()
  }

  private id(o: object | undefined): number {
    if (o === undefined || o === NO_LISTS) return 0
    let id = this.ids.get(o)
    if (id === undefined) this.ids.set(o, (id = this.ids.size + 1))
    return id
  }
}
