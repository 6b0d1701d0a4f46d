// Entry of one `proxy.processes` child (see ./role.ts): config from the environment, one server.
import type { Config } from '../engine/config/types.js'
import { createLogger } from '../engine/log/index.js'
import { ENV_CONFIG, ENV_INDEX, startFrontProcess } from './role.js'

const config = JSON.parse(process.env[ENV_CONFIG] ?? '{}') as Config
const index = Number(process.env[ENV_INDEX] ?? '1')
const logger = createLogger({ destination: config.proxy.log, level: config.proxy['log-level'] ?? config.common['log-level'], role: `dns.${index}` })

try {
  const server = await startFrontProcess({ config, logger }, {}, index)
  let stopping = false
  const stop = (): void => {
    if (stopping) return
    stopping = true
    server.close().then(() => process.exit(0), () => process.exit(1))
  }
  process.on('message', (m: { type?: string }) => { if (m.type === 'dns-stop') stop() })
  process.on('disconnect', stop)
  // The primary handles SIGTERM/SIGINT and tells us; a terminal's ^C reaches us too: ignore it.
  process.on('SIGINT', () => {})
  process.on('SIGTERM', stop)
  process.send?.({ type: 'dns-ready', endpoints: server.endpoints })
} catch (err) {
  logger.error({ err }, 'dns front process failed to start')
  // The system error under it (a bind's EADDRINUSE or EACCES, with the address), for the primary to
  // report the start failure as one line naming the address.
  const errno = (e: Error): boolean => { const c = (e as { code?: unknown }).code; return typeof c === 'string' && !c.startsWith('ENGINE_') }
  let sys: unknown = err
  while (sys instanceof Error && !errno(sys)) sys = sys.cause
  const { code, address, port } = (sys instanceof Error ? sys : {}) as { code?: unknown, address?: unknown, port?: unknown }
  process.send?.({ type: 'dns-failed', message: (err as Error).message, code, address, port })
  process.exit(1)
}
