/**
 * An open-addressing index of entry numbers: an `Int32Array` of a power-of-two length holding entry + 1
 * at each position (0 where none), linear probing, at most two thirds full. The entries' keys live with
 * their owner (the snapshot cache's typed arrays, the users' snapshots); the owner finds an entry by
 * probing from its key's hash and comparing at each position, and gives `hashOf` to move one. Deletion
 * is by backward shift, so no tombstones pile up under churn and a probe run never crosses a hole that
 * was not there when its key went in.
 */

/** The smallest power of two with at least 3 positions for every 2 entries. */
export function indexSize(entries: number): number {
  let size = 8
  while (size * 2 < entries * 3) size *= 2
  return size
}

/** Puts `entry` (not there yet) at the first free position from `hash`. */
export function placeEntry(index: Int32Array, hash: number, entry: number): void {
  const mask = index.length - 1
  let i = hash & mask
  while (index[i] !== 0) i = (i + 1) & mask
  index[i] = entry + 1
}

/**
 * Takes `entry` (whose key hashes to `hash`) out of `index`: each later entry of the probe run that may
 * sit earlier (the hole lies between its home and where it is) moves into the hole.
 */
export function removeEntry(index: Int32Array, hash: number, entry: number, hashOf: (entry: number) => number): void {
  const mask = index.length - 1
  let hole = hash & mask
  while (index[hole] !== entry + 1) hole = (hole + 1) & mask
  for (let j = (hole + 1) & mask; index[j] !== 0; j = (j + 1) & mask) {
    const home = hashOf(index[j]! - 1) & mask
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      index[hole] = index[j]!
      hole = j
    }
  }
  index[hole] = 0
}
