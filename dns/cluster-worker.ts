// Entry of one `proxy.processes` child (see ./role.ts): config from the environment, one server.
import type { Config } from '../engine/config/index.js'
import { ENV_CONFIG, ENV_INDEX, startFrontProcess } from './role.js'
import { childLogger, dnsLogLevel, reportReady, reportStartFailure, stopOnRequest } from './child-protocol.js'

const config = JSON.parse(process.env[ENV_CONFIG] ?? '{}') as Config
const index = Number(process.env[ENV_INDEX] ?? '1')
const logger = childLogger(config, `dns.${index}`)

try {
  const server = await startFrontProcess({ config, logger }, {}, index)
  stopOnRequest(() => server.close())
  process.on('message', (m: { type?: string; config?: Config; keys?: string[] }) => {
    if (m.type === 'dns-reload' && m.config !== undefined) {
      // A config reload (SIGHUP to the primary, tools/cli/run-role.ts): the live keys, and the log level.
      const next = m.config
      logger.level = dnsLogLevel(next)
      server.reload?.(next, m.keys ?? []).then(
        () => process.send?.({ type: 'dns-reloaded' }),
        (err: unknown) => process.send?.({ type: 'dns-reloaded', error: (err as Error).message })
      )
    }
  })
  reportReady(server.endpoints)
} catch (err) {
  logger.error({ err }, 'dns front process failed to start')
  reportStartFailure(err)
  process.exit(1)
}
