/**
 * The statistics benchmarks' synthetic query row `i` of a subscriber population of `users` users
 * (every 20th address anonymous), a few thousand names, 10% blocked, 3% NXDOMAIN, at `time`.
 */
import type { QueryLogRecord } from '../../engine/querylog/index.js'

export function syntheticRow(i: number, users: number, time: number): QueryLogRecord {
  const u = i % users
  const blocked = i % 10 === 0
  return {
    time,
    qtype: 1,
    rcode: i % 33 === 0 ? 3 : 0,
    address: `10.${(u >> 8) & 255}.${u & 255}.${i % 3}`,
    user: u % 20 === 0 ? null : `user${u}`,
    name: `host${i % 5000}.example${i % 7}.com`,
    blockedName: blocked ? `example${i % 7}.com` : '',
    reason: blocked ? 'category' : 'none',
    cats: [i % 90],
    blockedCats: blocked ? [i % 90] : [],
    nxdomain: i % 33 === 0
  }
}
