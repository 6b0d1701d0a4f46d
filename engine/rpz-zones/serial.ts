/**
 * SOA serial arithmetic (RFC 1982, SERIAL_BITS = 32): serials wrap, so "newer" is decided on the
 * circle, not by plain comparison. A pair exactly 2^31 apart is undefined by the RFC; we call it
 * "not newer" both ways, so neither side transfers on it.
 */
const HALF = 0x80000000
const MOD = 0x100000000

/** `n` as a 32-bit serial (a generation may grow past 2^32: it wraps like a serial). */
export function toSerial(n: number): number {
  return ((n % MOD) + MOD) % MOD
}

/** `s + n` for 0 <= n <= 2^31 - 1 (RFC 1982 3.1). */
export function serialAdd(s: number, n: number): number {
  if (n < 0 || n > HALF - 1) throw new RangeError(`serial increment out of range: ${n}`)
  return (s + n) % MOD
}

/** -1, 0 or 1 as `a` is older than, equal to or newer than `b`; NaN when undefined (2^31 apart). */
export function serialCompare(a: number, b: number): number {
  if (a === b) return 0
  const d = (b - a + MOD) % MOD
  if (d === HALF) return NaN
  return d < HALF ? -1 : 1
}

/** True when `a` is newer than `b`. */
export function serialNewer(a: number, b: number): boolean {
  return serialCompare(a, b) === 1
}
