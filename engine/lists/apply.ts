/**
 * Applies a list's new content to the policy store as a difference: the names it gained are put, the
 * names it lost are removed, and nothing else is written, through `Store.write` (the path every API
 * write takes, so with Redis the change is one shared-store record per batch and reaches every host).
 * Each batch also bumps `sub:rev` with what it changed, so the policy of every process applies the
 * same difference in memory (engine/lists/policy-index.ts) instead of reloading every entry.
 */
import type { Store, StoreWriter } from '../store/index.js'
import {
  currentEntries,
  entryPrefix,
  REV_KEY,
  sourceKey,
  stateKey,
  type EntryChange,
  type EntryTarget,
  type RevRecord
} from './keys.js'

/** Entry changes per write: one shared-store record each, small enough for Redis's script and stream. */
export const BATCH = 5000

export interface Difference {
  readonly added: number
  readonly removed: number
  /** Entries whose target changed (the source was mapped elsewhere). */
  readonly moved: number
}

/**
 * Inside a write: puts and removes the entries of `changes` and records in `sub:rev` what changed,
 * each entry's `from` read here, in the write, rather than trusted from when the difference was
 * computed: a write computed again (Redis ordered another host's first) or a second host applying
 * the same copy then records only what it really changed, so the policy's counts stay exact.
 */
export function writeChanges(w: StoreWriter, id: string, changes: readonly EntryChange[]): void {
  const prefix = entryPrefix(id)
  const real: EntryChange[] = []
  for (const [name, , to] of changes) {
    const from = (w.store.getSubscriptionValue(prefix + name) as EntryTarget | undefined) ?? null
    if (from === to) continue
    w.putSubscriptionValue(prefix + name, to ?? undefined)
    real.push([name, from, to])
  }
  if (real.length === 0) return
  const prev = w.store.getSubscriptionValue(REV_KEY) as RevRecord | undefined
  w.putSubscriptionValue(REV_KEY, { rev: (prev?.rev ?? 0) + 1, changes: real } satisfies RevRecord)
}

/** What turns the source's stored entries into `next`, each entry with `target`. */
export function differenceOf(
  current: ReadonlyMap<string, EntryTarget>,
  next: ReadonlySet<string>,
  target: EntryTarget
): EntryChange[] {
  const changes: EntryChange[] = []
  for (const name of next) {
    const was = current.get(name)
    if (was !== target) changes.push([name, was ?? null, target])
  }
  for (const [name, was] of current) if (!next.has(name)) changes.push([name, was, null])
  return changes
}

function summary(changes: readonly EntryChange[]): Difference {
  let added = 0
  let removed = 0
  let moved = 0
  for (const [, from, to] of changes) {
    if (from === null) added++
    else if (to === null) removed++
    else moved++
  }
  return { added, removed, moved }
}

/**
 * Makes the source's entries exactly `next` (with `target`), in batches of BATCH changes. `last` runs
 * inside the final write (the source's state goes with its last batch, so a reader never sees the new
 * state over half the entries for long). A failed batch leaves the entries written so far and the old
 * state: the next refresh computes the difference again from what the store holds.
 */
export async function applyEntries(
  store: Store,
  id: string,
  next: ReadonlySet<string>,
  target: EntryTarget,
  last?: (w: StoreWriter, difference: Difference) => void
): Promise<Difference> {
  const changes = differenceOf(currentEntries(store, id), next, target)
  const difference = summary(changes)
  for (let i = 0; i < changes.length || i === 0; i += BATCH) {
    const batch = changes.slice(i, i + BATCH)
    const final = i + BATCH >= changes.length
    await store.write((w) => {
      if (batch.length > 0) writeChanges(w, id, batch)
      if (final) last?.(w, difference)
    })
  }
  return difference
}

/** Removes a source: its entries (in batches), its state and its record. */
export async function removeSource(store: Store, id: string): Promise<number> {
  const { removed } = await applyEntries(store, id, new Set(), 'black', (w) => {
    w.putSubscriptionValue(stateKey(id), undefined)
    w.putSubscriptionValue(sourceKey(id), undefined)
  })
  return removed
}
