/** A binary min-heap of numbers: the board's distinct boundary instants, nearest first. */
export class MinHeap {
  private readonly items: number[] = []

  get size(): number {
    return this.items.length
  }

  /** The smallest value, +Infinity when empty. */
  peek(): number {
    return this.items.length === 0 ? Number.POSITIVE_INFINITY : this.items[0]!
  }

  push(value: number): void {
    const a = this.items
    let i = a.length
    a.push(value)
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (a[parent]! <= value) break
      a[i] = a[parent]!
      i = parent
    }
    a[i] = value
  }

  /** Removes and returns the smallest value (+Infinity when empty). */
  pop(): number {
    const a = this.items
    if (a.length === 0) return Number.POSITIVE_INFINITY
    const top = a[0]!
    const last = a.pop()!
    if (a.length === 0) return top
    let i = 0
    for (;;) {
      const l = 2 * i + 1
      if (l >= a.length) break
      const r = l + 1
      const c = r < a.length && a[r]! < a[l]! ? r : l
      if (a[c]! >= last) break
      a[i] = a[c]!
      i = c
    }
    a[i] = last
    return top
  }

  clear(): void {
    this.items.length = 0
  }
}
