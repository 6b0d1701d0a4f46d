/**
 * The HTTP load generators every HTTP benchmark uses: Debian's `wrk` when it is installed (the
 * client that costs least, so the server is what gets measured), and a Node keep-alive client as
 * the fallback. Both keep one request in flight per connection on loopback.
 */
import { spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'

export interface LoadResult {
  rps: number
  /** Latency percentiles as wrk prints them ('-' from the Node client, which does not measure them). */
  p50: string
  p99: string
  /** Answers whose status was not 2xx/3xx (wrk), or not 2xx (Node client). */
  non2xx: number
}

export function hasWrk(): boolean {
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined
}

export interface WrkOptions {
  url: string
  seconds: number
  connections: number
  headers?: Readonly<Record<string, string>>
  /** A Lua script file (e.g. rotating paths) and the environment it reads. */
  script?: string
  env?: NodeJS.ProcessEnv
}

export function runWrk(o: WrkOptions): LoadResult {
  const args = ['-t1', `-c${o.connections}`, `-d${o.seconds}s`, '--latency']
  for (const [k, v] of Object.entries(o.headers ?? {})) args.push('-H', `${k}: ${v}`)
  if (o.script !== undefined) args.push('-s', o.script)
  args.push(o.url)
  const r = spawnSync('wrk', args, { encoding: 'utf8', env: { ...process.env, ...o.env } })
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(r.stdout)
  if (rps === null) throw new Error(`wrk failed: ${r.stdout}${r.stderr}`)
  return {
    rps: Number(rps[1]),
    p50: /\s50%\s+(\S+)/.exec(r.stdout)?.[1] ?? '?',
    p99: /\s99%\s+(\S+)/.exec(r.stdout)?.[1] ?? '?',
    non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(r.stdout)?.[1] ?? 0)
  }
}

export interface KeepAliveOptions {
  port: number
  seconds: number
  connections: number
  /** The next request to send (called once per request, so it may rotate paths). */
  request: () => string | Buffer
}

const STATUS_LINE = 'HTTP/1.1 '

/**
 * Node keep-alive client: counts answers by their status line, carrying a tail across chunks so
 * a status line split between two reads is still counted once.
 */
export async function keepAliveLoad(o: KeepAliveOptions): Promise<LoadResult> {
  let count = 0
  let non2xx = 0
  let running = true
  const sockets: Socket[] = []
  for (let i = 0; i < o.connections; i++) {
    const s = connect(o.port, '127.0.0.1')
    await once(s, 'connect')
    s.setNoDelay(true)
    let tail = ''
    s.on('data', (d: Buffer) => {
      const text = tail + d.toString('latin1')
      let n = 0
      let at = text.indexOf(STATUS_LINE)
      for (
        ;
        at !== -1 && at + STATUS_LINE.length < text.length;
        at = text.indexOf(STATUS_LINE, at + STATUS_LINE.length)
      ) {
        n++
        if (text[at + STATUS_LINE.length] !== '2') non2xx++
      }
      // Keep an unfinished status line (or its start) for the next chunk.
      tail = at !== -1 ? text.slice(at) : text.slice(-(STATUS_LINE.length - 1))
      count += n
      if (running) for (let k = 0; k < n; k++) s.write(o.request())
    })
    sockets.push(s)
  }
  for (const s of sockets) s.write(o.request())
  await new Promise((resolve) => setTimeout(resolve, o.seconds * 1000))
  running = false
  for (const s of sockets) s.destroy()
  return { rps: count / o.seconds, p50: '-', p99: '-', non2xx }
}
