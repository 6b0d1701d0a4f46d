/**
 * The container's health check: `node dist/local/healthcheck.js` asks the running service for
 * `GET /stat/` on the port of `FILTERD_LISTEN` (default 80) and exits 0 on a 200, 1 otherwise.
 * `/stat/` answers 200 even while billing fails: the process is healthy, and restarting it would
 * not bring the statistics server back (the 503s are visible in the logs instead).
 */
import { parseHostPort } from '../engine/config/index.js'

const listen = parseHostPort(process.env.FILTERD_LISTEN ?? '0.0.0.0:80', 80)
const host = listen.host === '0.0.0.0' ? '127.0.0.1' : listen.host === '::' ? '[::1]' : listen.family === 6 ? `[${listen.host}]` : listen.host
try {
  const res = await fetch(`http://${host}:${listen.port}/stat/`, { signal: AbortSignal.timeout(3000) })
  await res.arrayBuffer()
  process.exit(res.status === 200 ? 0 : 1)
} catch (err) {
  process.stderr.write(`healthcheck: ${(err as Error).message}\n`)
  process.exit(1)
}
