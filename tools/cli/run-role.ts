/**
 * Runs one role as a daemon: config → log → pid file → start → wait for SIGTERM/SIGINT → close
 * → pid file removed. A second daemon started with the same pid file while the first is alive
 * refuses to start (two DNS servers would fight over the sockets).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import {
  formatHostPort,
  mergeLive,
  planReload,
  type Config,
  type LogLevel,
  type RoleName
} from '../../engine/config/index.js'
import { loadConfigFile } from '../../engine/features.js'
import { EngineError, isEngineError } from '../../engine/errors.js'
import { auditLogger, createLogger, type Logger } from '../../engine/log/index.js'
import type { RunningRole } from '../../engine/role.js'
import { outcomeFile, writeOutcome, type ReloadOutcome } from './reload-outcome.js'
import { loadRole, sectionOf } from './roles.js'

/** How long a role may take to close before the process exits anyway. */
const CLOSE_TIMEOUT_MS = 5000

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM'
  }
}

/**
 * Whether the live process `pid` is filterd running `role`. After a reboot, or in a container
 * whose run folder persists, a pid file can name a live process that is something else (pids
 * are reused): that must not block the start. On Linux /proc/<pid>/cmdline says what runs there
 * (`node …/filterd.js dns --config …`, or `…/bin/filterd dns …` when installed); without /proc,
 * or when it cannot be read, the process is taken to be ours, the safe side.
 */
function isFilterdRole(pid: number, role: RoleName): boolean {
  let cmdline: string
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1')
  } catch (err) {
    return (err as { code?: string }).code !== 'ENOENT' || !existsSync('/proc/self/cmdline')
  }
  const args = cmdline.split('\0')
  const entry = args.findIndex((a) => /(^|\/)filterd(\.js)?$/.test(a))
  return entry >= 0 && args.slice(entry + 1).includes(role)
}

/**
 * Writes our pid, unless the file names a live filterd process of the same role. An EngineError,
 * so the CLI prints its message as one line (a stack trace would bury the pid the operator needs).
 * A stale file, left by a crash or SIGKILL, or naming a pid now reused by another program, is
 * simply overwritten.
 */
function claimPidFile(role: RoleName, path: string): void {
  const old = livePid(path, role)
  if (old !== undefined) {
    throw new EngineError(
      'ENGINE_ALREADY_RUNNING',
      `${role} is already running with pid ${old} (pid file ${path}); not starting a second one`
    )
  }
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, `${process.pid}\n`)
}

/** The pid a role's pid file names when that process is alive (the role runs), else undefined. */
export function livePid(path: string, role: RoleName): number | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
  const pid = Number(text.trim())
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid) && isFilterdRole(pid, role)
    ? pid
    : undefined
}

const BIND_CODES: Readonly<Record<string, string>> = {
  EADDRINUSE: 'address already in use (another process listens there: `ss -ltnup` shows which)',
  EACCES:
    'permission denied: ports below 1024 need root or CAP_NET_BIND_SERVICE (systemd: AmbientCapabilities=CAP_NET_BIND_SERVICE; or setcap cap_net_bind_service=+ep on the node binary)',
  EADDRNOTAVAIL: 'no interface of this host has that address'
}

/**
 * A start that failed to bind, as one ENGINE_LISTEN line naming the address and what to do, whatever
 * layer raised it (node's errno error, possibly wrapped as the cause of a role's own error).
 */
function listenFailure(role: RoleName, err: unknown): EngineError | undefined {
  let e: unknown = err
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    const sys = e as Error & { code?: unknown; address?: unknown; port?: unknown }
    const reason = typeof sys.code === 'string' ? BIND_CODES[sys.code] : undefined
    if (reason !== undefined) {
      const where =
        typeof sys.address === 'string' && typeof sys.port === 'number'
          ? formatHostPort({ host: sys.address, port: sys.port })
          : 'its address'
      return new EngineError('ENGINE_LISTEN', `${role}: cannot listen on ${where}: ${reason}`, { cause: err })
    }
    e = e.cause
  }
  return undefined
}

type RoleSection = ReturnType<typeof sectionOf>

/**
 * Starts the role whose pid file this process holds; a start that fails removes the pid file and
 * throws what failed (a bind error named by its config key), logged in the role's own log file too.
 */
async function startClaimed(
  role: RoleName,
  section: RoleSection,
  logger: Logger,
  start: () => Promise<RunningRole>
): Promise<RunningRole> {
  try {
    return await start()
  } catch (err) {
    rmSync(section.pid, { force: true })
    const failure = listenFailure(role, err) ?? err
    // Also in the role's own log, where the operator looks (tools/filterd.ts writes it on stderr):
    // standard output already is the log for `-`, and one copy there is enough.
    if (section.log !== undefined && section.log !== '-') {
      logger.fatal({ err: failure }, `filterd: ${failure instanceof Error ? failure.message : String(failure)}`)
    }
    throw failure
  }
}

/**
 * The role's stop, once per process whatever asks for it (a signal, the parent gone): closes it,
 * removes the pid file and exits, 1 when it fails to close or takes over CLOSE_TIMEOUT_MS.
 */
function stopper(role: RoleName, pidFile: string, running: RunningRole, logger: Logger): (signal: string) => void {
  let closing = false
  return (signal) => {
    if (closing) return
    closing = true
    logger.info({ signal }, `${role} stopping`)
    rmSync(outcomeFile(pidFile), { force: true })
    const timer = setTimeout(() => {
      logger.warn(`${role} did not close within ${CLOSE_TIMEOUT_MS} ms; exiting`)
      rmSync(pidFile, { force: true })
      process.exit(1)
    }, CLOSE_TIMEOUT_MS)
    timer.unref()
    running.close().then(
      () => {
        rmSync(pidFile, { force: true })
        logger.info(`${role} stopped`)
        logger.flush()
        process.exit(0)
      },
      (err: unknown) => {
        logger.error({ err }, `${role} failed to close`)
        rmSync(pidFile, { force: true })
        process.exit(1)
      }
    )
  }
}

/**
 * The role's SIGHUP handler: reloads, one at a time, the config the role runs with, and writes
 * each outcome beside the pid file for `filterd reload`, with the restart still pending.
 */
function reloader(
  role: RoleName,
  config: Readonly<Config>,
  pidFile: string,
  running: RunningRole,
  logger: Logger
): () => void {
  let current = config
  let reloading = Promise.resolve()
  let seq = 0
  let pendingRestart: readonly string[] = []
  return () => {
    reloading = reloading
      .then(async () => {
        const done = await reloadRole(role, current, running, logger)
        current = done.config
        // A file that did not load says nothing about the keys: the restart still pending stays.
        if (done.outcome.result !== 'refused' || done.outcome.refused?.keys.length !== 0)
          pendingRestart = done.outcome.restart
        const outcome = { ...done.outcome, restart: pendingRestart }
        try {
          writeOutcome(pidFile, { pid: process.pid, seq: ++seq, at: new Date().toISOString(), ...outcome })
        } catch (err) {
          logger.warn({ err }, `${role}: cannot write the reload outcome for filterd reload`)
        }
      })
      .catch((err: unknown) => {
        logger.error({ err }, `${role}: config reload failed`)
      })
  }
}

export async function runRole(role: RoleName, config: Readonly<Config>): Promise<void> {
  const section = sectionOf(config, role)
  const level = (section['log-level'] ?? config.common['log-level']) as LogLevel
  const logger = createLogger({ destination: section.log ?? '-', level, role })
  const start = await loadRole(role)
  // From the moment the pid file names this process, SIGHUP (`filterd reload`, logrotate) must not kill
  // it: one arriving during the start is remembered and handled once the role runs.
  let hupDuringStart = false
  const onEarlyHup = (): void => {
    hupDuringStart = true
  }
  process.on('SIGHUP', onEarlyHup)
  claimPidFile(role, section.pid)
  const running = await startClaimed(role, section, logger, () => start({ config, logger }))
  logger.info({ endpoints: running.endpoints, config: config.source }, `${role} started`)
  const stop = stopper(role, section.pid, running, logger)
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  // SIGHUP: the log file is reopened (engine/log) and the config read again. Every role has this
  // handler, a role logging to `-` too: without one, SIGHUP's default action would kill it.
  const onHup = reloader(role, config, section.pid, running, logger)
  process.on('SIGHUP', onHup)
  process.off('SIGHUP', onEarlyHup)
  if (hupDuringStart) onHup()
  // `filterd all` stops its children through the IPC channel too: a closed channel means the
  // parent is gone, and a role left running without it would hold the ports.
  process.on('disconnect', () => stop('parent exited'))
  // Ready only once the handlers are in place: a parent that signals as soon as it hears "ready"
  // would otherwise kill a process that has not yet replaced the default SIGINT/SIGTERM action.
  process.send?.({ type: 'ready', role, endpoints: running.endpoints })
}

/**
 * Reads the config file again and applies to `running` what changed for `role`: the keys the schema
 * marks live for it, and its log level. Logs one line naming what was applied and what needs a
 * restart (kept at its old value). A config that does not load is refused, naming the key, and the
 * running one stays. Resolves with the config the role now runs with.
 */
export async function reloadRole(
  role: RoleName,
  current: Readonly<Config>,
  running: RunningRole,
  roleLogger: Logger
): Promise<{ config: Readonly<Config>; outcome: Pick<ReloadOutcome, 'result' | 'applied' | 'restart' | 'refused'> }> {
  // A record of a config change, written whatever the role's log-level (like an audit line), so a
  // reload that sets `warn` still says so. Made again once a new level is set: a pino child whose
  // level equals its parent's follows the parent's later changes.
  let logger = auditLogger(roleLogger)
  let next: Readonly<Config>
  try {
    next = loadConfigFile(current.source)
  } catch (err) {
    const code = isEngineError(err) ? err.code : undefined
    const why = (err as Error).message
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '')
      .join('; ')
    logger.error(
      { code, config: current.source },
      `${role}: config reload refused, still running on the previous config: ${why}`
    )
    return {
      config: current,
      outcome: { result: 'refused', applied: [], restart: [], refused: { keys: [], reason: why } }
    }
  }
  const plan = planReload(role, current, next)
  if (plan.live.length === 0 && plan.restart.length === 0) {
    logger.info({ config: current.source }, `${role}: config reloaded: nothing this role reads changed`)
    return { config: current, outcome: { result: 'unchanged', applied: [], restart: [] } }
  }
  const merged = mergeLive(current, next, plan.live)
  try {
    const level = (sectionOf(merged, role)['log-level'] ?? merged.common['log-level']) as LogLevel
    if (roleLogger.level !== level) {
      roleLogger.level = level
      logger = auditLogger(roleLogger)
    }
    await running.reload?.(merged, plan.live)
  } catch (err) {
    logger.error(
      { err, keys: plan.live },
      `${role}: config reload failed while applying ${plan.live.join(', ')}; restart the ${role} role to apply the new config`
    )
    return {
      config: current,
      outcome: {
        result: 'refused',
        applied: [],
        restart: plan.restart,
        refused: { keys: plan.live, reason: (err as Error).message }
      }
    }
  }
  const parts: string[] = []
  if (plan.live.length > 0) parts.push(`applied ${plan.live.join(', ')}`)
  if (plan.restart.length > 0)
    parts.push(`needs a restart of the ${role} role, still running on the old value: ${plan.restart.join(', ')}`)
  const line = { config: current.source, applied: plan.live, restartNeeded: plan.restart }
  if (plan.restart.length > 0) logger.warn(line, `${role}: config reloaded: ${parts.join('; ')}`)
  else logger.info(line, `${role}: config reloaded: ${parts.join('; ')}`)
  return { config: merged, outcome: { result: 'applied', applied: plan.live, restart: plan.restart } }
}
