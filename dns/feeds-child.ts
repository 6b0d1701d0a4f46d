/**
 * `rpz-feeds` on a host: the dns role's primary starts one child process, ./feed-process.ts, that
 * transfers the feeds, binds `notify-listen` and writes each feed into the store, where every front
 * process, pool worker, the block page and the api role read it (engine/rpz-feeds/feed-store.ts).
 *
 * Why a process of its own: at ISP size a refresh is CPU and memory the answers must not pay for. The
 * whole feed is held in compact form (a few hundred MB at 5,000,000 records) to check and apply each
 * IXFR, and one IXFR of 50,000 changes took about half a CPU-second in one burst, which in the fronts'
 * process (one process) stopped answering for that long, and beside them (several) took a core from
 * them. The child runs at SCHED_IDLE (engine/cpu-priority/background.ts), on what the fronts leave; its
 * heap is its own. Its first loads at the role's start, which the fronts wait for, run at normal
 * priority: nothing answers yet, and a busy host would starve them at SCHED_IDLE. A child that dies
 * is started again (at most once a second): the feeds stay enforced from the store meanwhile, and it
 * picks them up from there.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { RoleContext } from '../engine/role.js'
import { restartOnDeath, stopChild, untilReady } from './child-protocol.js'

export const ENV_FEEDS_CONFIG = 'FILTERD_DNS_FEEDS_CONFIG'
/** Set ('1') when the front processes wait for this process's first loads (the role's start, not a restart). */
export const ENV_FEEDS_AWAITED = 'FILTERD_DNS_FEEDS_AWAITED'

export interface FeedsChild {
  /** The NOTIFY listener's endpoint line, if any. */
  readonly endpoints: readonly string[]
  /** A config reload: the feed process takes the log level (the `rpz-feeds` keys need a restart). */
  reload(config: RoleContext['config']): void
  close(): Promise<void>
}

/** Starts the feed process and waits until it is ready (every feed's first load in the store, or failed). */
export async function startFeedsChild(ctx: RoleContext): Promise<FeedsChild> {
  const entry = fileURLToPath(new URL('./feed-process.js', import.meta.url))
  let stopping = false
  let child: ChildProcess
  // A process started again after a reload starts with its log level.
  let current = ctx.config
  let first = true
  const start = async (): Promise<string[]> => {
    const env = { ...process.env, [ENV_FEEDS_CONFIG]: JSON.stringify(current), [ENV_FEEDS_AWAITED]: first ? '1' : '' }
    first = false
    child = fork(entry, [], { env })
    restartOnDeath(child, 'dns feed process', () => stopping, start, ctx.logger)
    return await untilReady(child, 'dns feed process')
  }
  const endpoints = await start().catch((err: unknown) => {
    stopping = true
    child.kill('SIGKILL')
    throw err
  })
  // The child writes the log file too: logrotate's SIGHUP to the primary reopens it there.
  const forwardHup = (): void => {
    if (ctx.config.proxy.log !== '-') child.kill('SIGHUP')
  }
  process.on('SIGHUP', forwardHup)
  return {
    endpoints,
    reload(config) {
      current = config
      if (child.connected) child.send({ type: 'dns-reload', config })
    },
    async close() {
      stopping = true
      process.off('SIGHUP', forwardHup)
      if (child.exitCode === null && child.signalCode === null) await stopChild(child)
    }
  }
}
