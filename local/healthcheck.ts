/**
 * The container's health check: `node dist/local/healthcheck.js` asks the running service for
 * `GET /stat/` where it listens (health-target.ts: `local.listen` of the config the service runs,
 * else `FILTERD_LISTEN`, else port 80) and exits 0 on a 200, 1 otherwise.
 * `/stat/` answers 200 even while billing fails: the process is healthy, and restarting it would
 * not bring the statistics server back (the 503s are visible in the logs instead).
 * `FILTERD_HEALTHCHECK_PID` names the service's process when it is not pid 1 (tests).
 */
import { parseHostPort } from '../engine/config/index.js'
import { healthTarget } from './health-target.js'

const target = healthTarget(process.env, process.env.FILTERD_HEALTHCHECK_PID ?? '1')
const listen = parseHostPort(target.listen, 80)
const host =
  listen.host === '0.0.0.0'
    ? '127.0.0.1'
    : listen.host === '::'
      ? '[::1]'
      : listen.family === 6
        ? `[${listen.host}]`
        : listen.host
try {
  const res = await fetch(`http://${host}:${listen.port}/stat/`, { signal: AbortSignal.timeout(3000) })
  await res.arrayBuffer()
  process.exit(res.status === 200 ? 0 : 1)
} catch (err) {
  process.stderr.write(
    `healthcheck: http://${host}:${listen.port}/stat/ from ${target.source}: ${(err as Error).message}\n`
  )
  process.exit(1)
}
