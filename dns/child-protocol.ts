/**
 * The start and stop protocol between the dns role's primary and its child processes (the front
 * processes of `proxy.processes`, ./cluster-worker.ts, and the feed process, ./feed-process.ts): a
 * child says `dns-ready` with its endpoints or `dns-failed` with the system error under its failure
 * (errno, address, port: the primary reports the start failure as one line naming the address,
 * tools/cli/run-role.ts); the primary asks it to stop with `dns-stop`. And what both kinds of child
 * set up alike: their logger, and how they stop.
 */
import type { EventEmitter } from 'node:events'
import type { Config } from '../engine/config/index.js'
import { createLogger, type Logger } from '../engine/log/index.js'

/** A child as the primary holds it: a cluster Worker or a ChildProcess. */
export interface ChildHandle extends EventEmitter {
  send(message: { type: string }): unknown
  kill(signal?: NodeJS.Signals): unknown
}

interface ChildMessage {
  type?: string
  endpoints?: string[]
  message?: string
  code?: string
  address?: string
  port?: number
}

/** The child's endpoints once it says it is ready; rejects with its start error (errno, address, port). */
export function untilReady(child: ChildHandle, what: string): Promise<string[]> {
  return new Promise<string[]>((resolve, reject) => {
    const onMessage = (m: ChildMessage): void => {
      if (m.type === 'dns-ready') {
        child.off('message', onMessage)
        resolve(m.endpoints ?? [])
      }
      if (m.type === 'dns-failed') {
        child.off('message', onMessage)
        const { code, address, port } = m
        reject(Object.assign(new Error(m.message), code === undefined ? {} : { code, address, port }))
      }
    }
    child.on('message', onMessage)
    child.once('exit', (code: unknown) => reject(new Error(`${what} exited with code ${String(code)} while starting`)))
  })
}

/**
 * When `child` exits while `stopping()` is false, logs that it died and calls `start` again after a
 * second (so a child that dies at once is started at most once a second).
 */
export function restartOnDeath(
  child: ChildHandle,
  what: string,
  stopping: () => boolean,
  start: () => Promise<unknown>,
  logger: Pick<Logger, 'error'>,
  fields: Record<string, unknown> = {}
): void {
  child.once('exit', (code: unknown, signal: unknown) => {
    if (stopping()) return
    logger.error({ code, signal, ...fields }, `${what} died; starting another`)
    setTimeout(() => {
      if (!stopping())
        start().catch((err: unknown) => logger.error({ err, ...fields }, `dns: cannot restart the ${what}`))
    }, 1000).unref()
  })
}

/** Asks the child to stop and waits for its exit; SIGKILL after 4 s. */
export async function stopChild(child: ChildHandle): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.send({ type: 'dns-stop' })
  const t = setTimeout(() => child.kill('SIGKILL'), 4000)
  await exited
  clearTimeout(t)
}

/** The child side: tells the primary it answers on `endpoints`. */
export function reportReady(endpoints: readonly string[]): void {
  process.send?.({ type: 'dns-ready', endpoints })
}

/** The child side: tells the primary why it could not start, with the system error under it. */
export function reportStartFailure(err: unknown): void {
  const errno = (e: Error): boolean => {
    const c = (e as { code?: unknown }).code
    return typeof c === 'string' && !c.startsWith('ENGINE_')
  }
  let sys: unknown = err
  while (sys instanceof Error && !errno(sys)) sys = sys.cause
  const { code, address, port } = (sys instanceof Error ? sys : {}) as {
    code?: unknown
    address?: unknown
    port?: unknown
  }
  process.send?.({ type: 'dns-failed', message: (err as Error).message, code, address, port })
}

/** The dns role's log level: `proxy.log-level`, else `common.log-level` (a reload may change it). */
export function dnsLogLevel(config: Config): Config['common']['log-level'] {
  return config.proxy['log-level'] ?? config.common['log-level']
}

/** A child's logger: the dns role's file and level, its own role name in each line. */
export function childLogger(config: Config, role: string): Logger {
  return createLogger({ destination: config.proxy.log, level: dnsLogLevel(config), role })
}

/**
 * The child side: `close` runs once, then the process exits (1 if it failed), on the primary's
 * `dns-stop`, a SIGTERM, or the primary gone (the IPC channel closed). SIGHUP reopens the log file
 * (engine/log) and SIGINT (a terminal's ^C to the process group) is the primary's to handle: neither
 * may kill a child.
 */
export function stopOnRequest(close: () => Promise<void>): void {
  let stopping = false
  const stop = (): void => {
    if (stopping) return
    stopping = true
    close().then(
      () => process.exit(0),
      () => process.exit(1)
    )
  }
  process.on('message', (m: { type?: string }) => {
    if (m.type === 'dns-stop') stop()
  })
  process.on('SIGHUP', () => {})
  process.on('SIGINT', () => {})
  process.on('SIGTERM', stop)
  process.on('disconnect', stop)
}
