// IP address text <-> bytes for the wire layer (slow paths: config, ECS
// strings for logs, safe-video answers). IPv6 text follows RFC 5952.

/** Dotted quad of buf[off..off+3]. Caller guarantees 4 readable bytes. */
export function formatIPv4 (buf: Buffer, off: number): string {
  return `${buf[off]!}.${buf[off + 1]!}.${buf[off + 2]!}.${buf[off + 3]!}`
}

/** RFC 5952 text of buf[off..off+15]: lower case, longest zero run (≥ 2 groups) as '::'. */
export function formatIPv6 (buf: Buffer, off: number): string {
  const groups: number[] = []
  for (let g = 0; g < 8; g++) groups.push((buf[off + 2 * g]! << 8) | buf[off + 2 * g + 1]!)
  let bestStart = -1
  let bestLen = 1
  for (let g = 0; g < 8;) {
    if (groups[g] !== 0) { g++; continue }
    let h = g
    while (h < 8 && groups[h] === 0) h++
    if (h - g > bestLen) { bestStart = g; bestLen = h - g }
    g = h
  }
  if (bestStart < 0) return groups.map((x) => x.toString(16)).join(':')
  const head = groups.slice(0, bestStart).map((x) => x.toString(16)).join(':')
  const tail = groups.slice(bestStart + bestLen).map((x) => x.toString(16)).join(':')
  return `${head}::${tail}`
}

/** Writes the 4 bytes of a dotted-quad IPv4 address at `off`; false (nothing meaningful written) if not one. */
export function parseIPv4Into (s: string, out: Buffer, off: number): boolean {
  const parts = s.split('.')
  if (parts.length !== 4) return false
  for (let k = 0; k < 4; k++) {
    const p = parts[k]!   // parts.length === 4
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return false
    const v = Number(p)
    if (v > 255) return false
    out[off + k] = v
  }
  return true
}

/** Writes the 16 bytes of an IPv6 address (with '::' and a trailing dotted quad allowed) at `off`. */
export function parseIPv6Into (s: string, out: Buffer, off: number): boolean {
  const groups: number[] = []
  const tail: number[] = []
  let text = s
  const v4 = Buffer.alloc(4)
  const lastColon = text.lastIndexOf(':')
  let hasV4 = false
  if (lastColon >= 0 && text.indexOf('.', lastColon) > lastColon) {
    if (!parseIPv4Into(text.slice(lastColon + 1), v4, 0)) return false
    hasV4 = true
    text = text.slice(0, lastColon + 1) + '0:0'
  }
  const dbl = text.indexOf('::')
  if (dbl !== text.lastIndexOf('::')) return false
  const parse = (part: string, into: number[]): boolean => {
    if (part === '') return true
    for (const h of part.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(h)) return false
      into.push(parseInt(h, 16))
    }
    return true
  }
  if (dbl >= 0) {
    if (!parse(text.slice(0, dbl), groups) || !parse(text.slice(dbl + 2), tail)) return false
    if (groups.length + tail.length > 7) return false
    while (groups.length + tail.length < 8) groups.push(0)
    groups.push(...tail)
  } else {
    if (!parse(text, groups) || groups.length !== 8) return false
  }
  for (let g = 0; g < 8; g++) {
    out[off + 2 * g] = groups[g]! >>> 8     // groups.length === 8 here
    out[off + 2 * g + 1] = groups[g]! & 0xff
  }
  if (hasV4) v4.copy(out, off + 12)
  return true
}
