// Entry of one `proxy.processes` child (see ./role.ts): config from the environment, one server.
import type { Config } from '../engine/config/index.js'
import { createLogger } from '../engine/log/index.js'
import { ENV_CONFIG, ENV_INDEX, startFrontProcess } from './role.js'
import { reportReady, reportStartFailure } from './child-protocol.js'

const config = JSON.parse(process.env[ENV_CONFIG] ?? '{}') as Config
const index = Number(process.env[ENV_INDEX] ?? '1')
const logger = createLogger({
  destination: config.proxy.log,
  level: config.proxy['log-level'] ?? config.common['log-level'],
  role: `dns.${index}`
})

try {
  const server = await startFrontProcess({ config, logger }, {}, index)
  let stopping = false
  const stop = (): void => {
    if (stopping) return
    stopping = true
    server.close().then(
      () => process.exit(0),
      () => process.exit(1)
    )
  }
  process.on('message', (m: { type?: string; config?: Config; keys?: string[] }) => {
    if (m.type === 'dns-stop') stop()
    if (m.type === 'dns-reload' && m.config !== undefined) {
      // A config reload (SIGHUP to the primary, tools/cli/run-role.ts): the live keys, and the log level.
      const next = m.config
      logger.level = next.proxy['log-level'] ?? next.common['log-level']
      server.reload?.(next, m.keys ?? []).then(
        () => process.send?.({ type: 'dns-reloaded' }),
        (err: unknown) => process.send?.({ type: 'dns-reloaded', error: (err as Error).message })
      )
    }
  })
  // SIGHUP reopens the log file (engine/log) when there is one; the primary sends it only then, but
  // one sent to the whole process group must not kill a front process either.
  process.on('SIGHUP', () => {})
  process.on('disconnect', stop)
  // The primary handles SIGTERM/SIGINT and tells us; a terminal's ^C reaches us too: ignore it.
  process.on('SIGINT', () => {})
  process.on('SIGTERM', stop)
  reportReady(server.endpoints)
} catch (err) {
  logger.error({ err }, 'dns front process failed to start')
  reportStartFailure(err)
  process.exit(1)
}
