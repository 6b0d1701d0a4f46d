/**
 * Test helpers for the local and collector roles (not run as tests): temp configs, a scriptable fake
 * collector, and a raw HTTP/1.1 client that shows every header. The daemons themselves are started
 * with engine/testing/daemon.ts, re-exported here.
 */
import { once } from 'node:events'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import { connect } from 'node:net'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { CONF } from '../../engine/testing/daemon.js'
import { tempDir as makeDir } from '../../engine/testing/temp.js'

/** A temp folder with the local role's prefix, removed after the test. */
export const tempDir = (t: TestContext): string => makeDir(t, 'filterd-local-')

export { FILTERD, REPO, startFailureLine, startRole, type Child, type LogLine } from '../../engine/testing/daemon.js'
export { fetchJson as getJson, until } from '../../engine/testing/wait.js'

export interface Setup {
  dir: string
  dataDir: string
  /** Writes the data file the collector publishes from. */
  writeData(lines: string): void
  collectorConfig(port?: number): string
  localConfig(
    collectorUrl: string,
    opts?: { reportInterval?: number; updateInterval?: number; language?: 'ru' | 'en'; httpServer?: 'uws' | 'node' }
  ): string
}

export function setup(t: TestContext, keys = ['test-key']): Setup {
  const dir = tempDir(t)
  const dataDir = join(dir, 'data')
  mkdirSync(dataDir)
  const common = `datafiles:\n  path: ${dataDir}\n  file: [vendor.txt]\n  cats: ${CONF}\n  language: en\n`
  return {
    dir,
    dataDir,
    writeData(lines) {
      writeFileSync(join(dataDir, 'vendor.txt'), lines)
    },
    collectorConfig(port = 0) {
      const file = join(dir, `collector-${port}.yaml`)
      writeFileSync(
        file,
        common +
          `collector:\n  listen: 127.0.0.1:${port}\n  db: ${join(dir, 'collector-db')}\n` +
          `  snapshots: ${join(dir, 'snapshots')}\n  keys: [${keys.join(', ')}]\n  log: "-"\n  pid: ${join(dir, 'collector.pid')}\n  log-level: debug\n`
      )
      return file
    },
    localConfig(collectorUrl, opts = {}) {
      const file = join(dir, 'local.yaml')
      writeFileSync(
        file,
        common +
          `local:\n  listen: 127.0.0.1:0\n  key: test-key\n  collector-url: ${collectorUrl}\n` +
          `  report-interval: ${opts.reportInterval ?? 3600}\n  update-interval: ${opts.updateInterval ?? 3600}\n` +
          `  db: ${join(dir, 'local-db')}\n  pid: ${join(dir, 'local.pid')}\n  log-level: debug\n` +
          (opts.language === undefined ? '' : `  language: ${opts.language}\n`) +
          (opts.httpServer === undefined ? '' : `common:\n  http-server: ${opts.httpServer}\n`)
      )
      return file
    }
  }
}

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** One HTTP/1.1 request on a fresh socket; the response is read by its Content-Length. */
export async function rawRequest(port: number, method: string, path: string, extraHeaders = ''): Promise<RawResponse> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  socket.write(
    `${method} ${path} HTTP/1.1\r\nHost: local\r\n${extraHeaders}${method === 'GET' || method === 'HEAD' ? '' : 'Content-Length: 0\r\n'}\r\n`
  )
  let data = Buffer.alloc(0)
  try {
    for await (const chunk of socket) {
      data = Buffer.concat([data, chunk as Buffer])
      const end = data.indexOf('\r\n\r\n')
      if (end < 0) continue
      const head = data.subarray(0, end).toString('latin1').split('\r\n')
      const headers: Record<string, string> = {}
      for (const h of head.slice(1)) {
        const c = h.indexOf(':')
        headers[h.slice(0, c).toLowerCase()] = h.slice(c + 1).trim()
      }
      const length = method === 'HEAD' ? 0 : Number(headers['content-length'] ?? 0)
      if (data.length - end - 4 < length) continue
      return {
        status: Number(head[0]!.split(' ')[1]),
        headers,
        body: data.subarray(end + 4, end + 4 + length).toString('utf8')
      }
    }
    throw new Error('connection closed before a full response')
  } finally {
    socket.destroy()
  }
}

export type FakeMode = 'ok' | 'error' | 'hang'

/** A stand-in statistics server: records reports, answers 200, 500 or never, as told. */
export async function fakeCollector(t: TestContext): Promise<{
  url: string
  mode: FakeMode
  reports: Array<Record<string, unknown>>
  /** The Connection header of each report, in order. */
  connections: Array<string | undefined>
  /** Holds the next report's answer until `release()` (the report is recorded when it arrives). */
  hold(): { arrived: Promise<void>; release: () => void }
  close(): Promise<void>
}> {
  const pending = new Set<ServerResponse>()
  let held: { arrived: () => void; gate: Promise<void> } | undefined
  const fake = {
    url: '',
    mode: 'ok' as FakeMode,
    reports: [] as Array<Record<string, unknown>>,
    connections: [] as Array<string | undefined>,
    hold() {
      let release!: () => void
      let arrived!: () => void
      const gate = new Promise<void>((resolve) => {
        release = resolve
      })
      const arrivedP = new Promise<void>((resolve) => {
        arrived = resolve
      })
      held = { arrived, gate }
      return { arrived: arrivedP, release }
    },
    async close() {
      for (const r of pending) r.destroy()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.url === '/report') {
        fake.reports.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>)
        fake.connections.push(req.headers.connection)
      }
      const answer = (): void => {
        if (fake.mode === 'hang') {
          pending.add(res)
          return
        }
        res.writeHead(fake.mode === 'ok' && req.url === '/report' ? 200 : fake.mode === 'ok' ? 404 : 500).end()
      }
      if (req.url === '/report' && held !== undefined) {
        const h = held
        held = undefined
        h.arrived()
        void h.gate.then(answer)
      } else {
        answer()
      }
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  fake.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  t.after(() => fake.close())
  return fake
}

/**
 * A reverse proxy that serves `target` under a path prefix, as a vendor's front server might
 * (https://vendor.example/filterd/ → the collector's `/`): `<prefix>x` is forwarded as `/x`, anything
 * outside the prefix answers 404. `paths` records every path asked for, as received.
 */
export async function prefixProxy(
  t: TestContext,
  target: string,
  prefix: string
): Promise<{ url: string; paths: string[] }> {
  const to = new URL(target)
  const paths: string[] = []
  const server = createServer((req, res) => {
    const path = req.url ?? '/'
    paths.push(path)
    if (!path.startsWith(prefix)) {
      res.writeHead(404).end()
      return
    }
    const upstream = httpRequest(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: '/' + path.slice(prefix.length),
        headers: { ...req.headers, host: to.host }
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        up.pipe(res)
      }
    )
    upstream.on('error', () => {
      res.writeHead(502).end()
    })
    req.pipe(upstream)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.after(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(resolve)
      })
  )
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}${prefix}`, paths }
}
