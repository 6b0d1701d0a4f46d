/**
 * What the HTTP benchmarks measure against: a bare uWebSockets.js hello-world (no adapter, no
 * routing beyond uWS's own), and the CPU time a server process spent, read from /proc.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type * as Uws from 'uWebSockets.js'

/** Serves `hello world` on every path matching `pattern` (uWS syntax) at 127.0.0.1; resolves with the port. */
export async function serveUwsHello(pattern = '/*'): Promise<number> {
  const uws = createRequire(import.meta.url)('uWebSockets.js') as typeof Uws
  const app = uws.App().any(pattern, (res) => {
    res.writeHeader('Content-Type', 'text/plain').end('hello world')
  })
  return await new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (ls) => {
      if (ls === false) reject(new Error('listen failed'))
      else resolve(uws.us_socket_local_port(ls))
    })
  })
}

/**
 * User + system CPU seconds a process has used (Linux /proc; NaN elsewhere). CPU time per request is
 * the figure least moved by a noisy neighbour: it measures the server, not how much of the machine
 * the server got.
 */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100 // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return NaN
  }
}
