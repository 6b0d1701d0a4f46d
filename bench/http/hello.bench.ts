/**
 * Hello-world throughput of the HTTP adapter (uws and node implementations) against a bare uWS app, the
 * baseline for what the adapter costs. Each server runs in its own child process; the load generator
 * (wrk when installed, else the Node keep-alive client) keeps CONNECTIONS keep-alive sockets each with one
 * request in flight. Subjects alternate for ROUNDS rounds and the best round of each is reported, since on
 * a shared machine the best round is the one least disturbed by other work.
 *
 *   node dist/bench/http/hello.bench.js [seconds per subject, default 3] [rounds, default 3]
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { createHttpServer } from '../../engine/http/index.js'
import { hasWrk, keepAliveLoad, runWrk } from '../common/load.js'
import { serveUwsHello } from '../common/ceiling.js'

const CONNECTIONS = 32
const BODY = 'hello world'
const REQUEST = Buffer.from('GET /hello HTTP/1.1\r\nHost: bench\r\n\r\n')
const SUBJECTS = ['uws raw', 'adapter uws', 'adapter node'] as const
type Subject = (typeof SUBJECTS)[number]

async function serve(subject: Subject): Promise<number> {
  if (subject === 'uws raw') return await serveUwsHello('/hello')
  const server = createHttpServer({ impl: subject === 'adapter uws' ? 'uws' : 'node' })
  server.route('GET', '/hello', (_req, res) => {
    res.send(BODY)
  })
  return (await server.listen('127.0.0.1', 0)).port
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--serve')
  if (i !== -1) {
    const port = await serve(process.argv[i + 1] as Subject)
    process.stdout.write(`${port}\n`)
    return
  }
  const seconds = Number(process.argv[2] ?? 3)
  const rounds = Number(process.argv[3] ?? 3)
  const wrk = hasWrk()
  const best = new Map<Subject, number>()
  for (let round = 0; round < rounds; round++) {
    for (const subject of SUBJECTS) {
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve', subject], {
        stdio: ['ignore', 'pipe', 'inherit']
      })
      const [line] = (await once(child.stdout, 'data')) as [Buffer]
      const port = Number(line.toString().trim())
      const load = async (d: number): Promise<number> =>
        wrk
          ? runWrk({ url: `http://127.0.0.1:${port}/hello`, seconds: d, connections: CONNECTIONS }).rps
          : (await keepAliveLoad({ port, seconds: d, connections: CONNECTIONS, request: () => REQUEST })).rps
      await load(1) // warm-up: JIT and connection setup
      const rps = await load(seconds)
      if (rps > (best.get(subject) ?? 0)) best.set(subject, rps)
      child.kill()
      await once(child, 'exit')
    }
  }
  const base = best.get('uws raw')!
  console.log(
    `node ${process.version}, ${wrk ? 'wrk -t1' : 'node client'}, ${CONNECTIONS} keep-alive connections, ${seconds}s x ${rounds} rounds (best)`
  )
  console.table(
    SUBJECTS.map((subject) => ({
      subject,
      'req/s': Math.round(best.get(subject)!),
      'vs uws raw': (best.get(subject)! / base).toFixed(2)
    }))
  )
}

await main()
