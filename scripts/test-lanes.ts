/**
 * The suite's lanes. `npm test` runs every lane; CI and developers run one at a time:
 * - `fast`: tests that run in their own process only (wire, policy, store, DuckDB, in-process servers
 *   on loopback sockets). They mostly wait on I/O, so they run at a higher concurrency.
 * - `system`: tests that start other processes: the daemons as children, Redis, BIND, Knot, Unbound,
 *   PowerDNS, dnsperf, dig and kdig, Chromium, network namespaces. They compete for the CPU they
 *   measure against, so they run two at a time.
 * - `portability`: what differs between Node versions, run on the Node versions CI adds to the one
 *   that runs everything: the native UDP addon (a Node-API build), both HTTP stacks (uWS ships per
 *   Node ABI and falls back to node:http where it has no build), TLS and HTTP/2 (DoT, DoH, its own
 *   HTTP/2 server on node:net and node:tls), LMDB (a native addon), DuckDB (a native addon) through
 *   the importer, the worker pool (worker threads), and the CLI starting the daemons.
 *
 * A test's lane is read from its compiled code, so a new test file lands in the right lane without a
 * list to keep: it is a system test when it, or the test-support code it imports (`testing/` folders
 * and `*.case.js` files), imports `node:child_process` or Playwright.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

export type Lane = 'fast' | 'system' | 'portability'
export const LANES: readonly Lane[] = ['fast', 'system', 'portability']

/** The portability lane: paths relative to dist/, as the runner lists them. */
const PORTABILITY = [
  'dns/dns.1.native.test.js',
  'dns/dns.5.native.test.js',
  'dns/identity.test.js',
  'dns/udp-size.native.test.js',
  'engine/udp/udp.test.js',
  'engine/http/http-node.test.js',
  'engine/http/http-uws.test.js',
  'engine/http/http-fallback.test.js',
  'dns/dot.test.js',
  'dns/doh.test.js',
  'dns/h2/connection.test.js',
  'dns/h2/hpack.test.js',
  'engine/store/store.test.js',
  'engine/catdb/catdb.test.js',
  'engine/stats/importer.test.js',
  'engine/stats/parquet.test.js',
  'tools/cli/cli.test.js'
]

const PROCESS_MODULES = /\bfrom\s+['"](node:child_process|child_process|playwright-core)['"]/
const RELATIVE_IMPORT = /\b(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g

/** Test-support code: what a test imports to set itself up, as opposed to the product under test. */
function isSupport(path: string): boolean {
  return path.endsWith('.case.js') || path.split('/').includes('testing')
}

function startsProcesses(testFile: string, seen = new Set<string>()): boolean {
  if (seen.has(testFile)) return false
  seen.add(testFile)
  let text: string
  try {
    text = readFileSync(testFile, 'utf8')
  } catch {
    return false
  }
  if (PROCESS_MODULES.test(text)) return true
  for (const match of text.matchAll(RELATIVE_IMPORT)) {
    const target = resolve(dirname(testFile), match[1] ?? '')
    if (isSupport(target) && startsProcesses(target, seen)) return true
  }
  return false
}

/** The files of `lane` among `files` (absolute paths of compiled tests under `dist`). */
export function laneFiles(lane: Lane, files: readonly string[], dist: string): string[] {
  if (lane === 'portability') {
    const wanted = new Set(PORTABILITY.map((p) => join(dist, p)))
    return files.filter((f) => wanted.has(f))
  }
  return files.filter((f) => startsProcesses(f) === (lane === 'system'))
}

/** Portability entries that name no compiled test: a renamed test must not leave the lane silently. */
export function missingPortability(files: readonly string[], dist: string): string[] {
  const present = new Set(files.map((f) => relative(dist, f)))
  return PORTABILITY.filter((p) => !present.has(p))
}
