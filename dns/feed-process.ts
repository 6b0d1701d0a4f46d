// Entry of the dns role's feed process (see ./feeds-child.ts): config from the environment; follows the
// RPZ feeds at background priority and keeps their copy in the store.
import type { Config } from '../engine/config/index.js'
import { formatHostPort, parseHostPort } from '../engine/config/index.js'
import { moveToBackground } from '../engine/cpu-priority/index.js'
import { startFeedTransfers } from '../engine/rpz-feeds/index.js'
import { createStoreIfMissing, openConfiguredStore } from '../engine/store/index.js'
import { childLogger, dnsLogLevel, reportReady, reportStartFailure, stopOnRequest } from './child-protocol.js'
import { ENV_FEEDS_CONFIG, ENV_FEEDS_AWAITED } from './feeds-child.js'

const config = JSON.parse(process.env[ENV_FEEDS_CONFIG] ?? '{}') as Config
const logger = childLogger(config, 'dns.feeds')

/**
 * To background priority: every thread there is now is moved, and every later one inherits the policy
 * (libuv's pool, lmdb-js's writer).
 */
async function toBackground(): Promise<void> {
  const priority = await moveToBackground()
  if (priority.why !== undefined)
    logger.warn(
      { why: priority.why },
      `dns: the RPZ feeds' process runs at nice 19, not SCHED_IDLE (chrt --idle failed: ${priority.why})`
    )
}

// The front processes of a starting dns role wait for the first loads: nothing of ours answers yet, so
// they run at normal priority, which a busy host cannot starve for minutes as it can SCHED_IDLE. A
// process started again beside answering fronts goes to the background first.
const awaited = process.env[ENV_FEEDS_AWAITED] === '1'
if (!awaited) await toBackground()

try {
  await createStoreIfMissing(config)
  const store = openConfiguredStore(config)
  const feeds = await startFeedTransfers(config, store, logger)
  stopOnRequest(async () => {
    feeds?.close()
    await store.close()
  })
  process.on('message', (m: { type?: string; config?: Config }) => {
    // A config reload: the log level is the one live key here (the feeds' keys need a restart).
    if (m.type === 'dns-reload' && m.config !== undefined) logger.level = dnsLogLevel(m.config)
  })
  if (awaited) await toBackground()
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
