// Entry of the dns role's feed process (see ./feeds-child.ts): config from the environment; follows the
// RPZ feeds at background priority and keeps their copy in the store.
import type { Config } from '../engine/config/index.js'
import { formatHostPort, parseHostPort } from '../engine/config/index.js'
import { moveToBackground } from '../engine/cpu-priority/index.js'
import { createLogger } from '../engine/log/index.js'
import { startFeedTransfers } from '../engine/rpz-feeds/index.js'
import { createStoreIfMissing, openConfiguredStore } from '../engine/store/index.js'
import { reportReady, reportStartFailure } from './child-protocol.js'
import { ENV_FEEDS_CONFIG } from './feeds-child.js'

// First: every thread started from here on (libuv's pool, lmdb-js's writer) inherits the policy.
const priority = await moveToBackground()
const config = JSON.parse(process.env[ENV_FEEDS_CONFIG] ?? '{}') as Config
const logger = createLogger({
  destination: config.proxy.log,
  level: config.proxy['log-level'] ?? config.common['log-level'],
  role: 'dns.feeds'
})

if (priority.why !== undefined)
  logger.warn(
    { why: priority.why },
    `dns: the RPZ feeds' process runs at nice 19, not SCHED_IDLE (chrt --idle failed: ${priority.why})`
  )

try {
  await createStoreIfMissing(config)
  const store = openConfiguredStore(config)
  const feeds = await startFeedTransfers(config, store, logger)
  let stopping = false
  const stop = (): void => {
    if (stopping) return
    stopping = true
    feeds?.close()
    store.close().then(
      () => process.exit(0),
      () => process.exit(1)
    )
  }
  process.on('message', (m: { type?: string; config?: Config }) => {
    if (m.type === 'dns-stop') stop()
    // A config reload: the log level is the one live key here (the feeds' keys need a restart).
    if (m.type === 'dns-reload' && m.config !== undefined)
      logger.level = m.config.proxy['log-level'] ?? m.config.common['log-level']
  })
  // SIGHUP reopens the log file (engine/log); ^C to the process group is the primary's to handle.
  process.on('SIGHUP', () => {})
  process.on('SIGINT', () => {})
  process.on('SIGTERM', stop)
  process.on('disconnect', stop)
  const notify = config['rpz-feeds']['notify-listen']
  const port = feeds?.notifyPort
  reportReady(
    notify === undefined || port == null
      ? []
      : [`dns rpz notify udp+tcp ${formatHostPort({ host: parseHostPort(notify).host, port })}`]
  )
} catch (err) {
  logger.error({ err }, 'dns feed process failed to start')
  reportStartFailure(err)
  process.exit(1)
}
