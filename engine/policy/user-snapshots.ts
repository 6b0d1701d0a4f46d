/**
 * Each user's current snapshot, found by the user's name: so that a write touching the user marks its one
 * snapshot stale (no walk of the address cache) and its other addresses reuse it. One entry a user whose
 * addresses are cached, a million on an ISP host: an array element and a few bytes of open-addressing index
 * (engine/policy/open-index.ts) where a `Map` entry took about 37 B; the key is the snapshot's own `user`,
 * not a second reference to the name.
 */
import { foldedHash as hashName } from '../names/index.js'
import { indexSize, placeEntry, removeEntry } from './open-index.js'

export class UserSnapshots<S extends { readonly user: string | null }> {
  /** The snapshots held, each at its entry number; undefined where an entry was deleted (see `free`). */
  private snapshots: Array<S | undefined> = []
  private readonly free: number[] = []
  private index = new Int32Array(indexSize(0))
  private count = 0
  private readonly rehash = (entry: number): number => hashName(this.snapshots[entry]!.user!)

  get size(): number {
    return this.count
  }

  get(name: string): S | undefined {
    const entry = this.entryOf(name)
    return entry < 0 ? undefined : this.snapshots[entry]
  }

  /** Holds `snap` as its user's snapshot (`snap.user`, never null), in place of the one held. */
  set(snap: S): void {
    const name = snap.user
    if (name === null) throw new TypeError('an anonymous snapshot has no user to be found by')
    const held = this.entryOf(name)
    if (held >= 0) {
      this.snapshots[held] = snap
      return
    }
    if (2 * this.index.length < 3 * (this.count + 1)) this.grow()
    const entry = this.free.pop() ?? this.snapshots.length
    this.snapshots[entry] = snap
    placeEntry(this.index, hashName(name), entry)
    this.count++
  }

  delete(name: string): void {
    const entry = this.entryOf(name)
    if (entry < 0) return
    removeEntry(this.index, hashName(name), entry, this.rehash)
    this.snapshots[entry] = undefined
    this.free.push(entry)
    this.count--
  }

  /** Drops every entry and gives the memory back. */
  clear(): void {
    this.snapshots = []
    this.free.length = 0
    this.index = new Int32Array(indexSize(0))
    this.count = 0
  }

  private entryOf(name: string): number {
    const index = this.index
    const mask = index.length - 1
    for (let i = hashName(name) & mask; ; i = (i + 1) & mask) {
      const e = index[i]!
      if (e === 0) return -1
      if (this.snapshots[e - 1]!.user === name) return e - 1
    }
  }

  /** Doubles the index and places every entry again. */
  private grow(): void {
    this.index = new Int32Array(this.index.length * 2)
    for (let entry = 0; entry < this.snapshots.length; entry++) {
      const snap = this.snapshots[entry]
      if (snap !== undefined) placeEntry(this.index, hashName(snap.user!), entry)
    }
  }
}
