/**
 * `filterd status --config FILE [--json]`: what an operator runs first. For each role of the config:
 * whether it runs (pid, up since), what it listens on, its `/health` (engine/health: state, what is
 * degraded and why), the store generation it reads, and from the sync and api roles the replica's
 * state and the last statistics import.
 *
 * A role with no pid file is "stopped" (not run on this host, or stopped cleanly) and does not fail
 * the command; a pid file naming a dead process is "crashed" and does; a role that `filterd all`
 * keeps starting again after failures (tools/cli/role-restarts.ts) is "restarting", with its last
 * exit, and fails it too. Exit 0 when at least one role runs and every running one is healthy, 1
 * otherwise, 2 on usage.
 */
import { statSync } from 'node:fs'
import {
  formatHostPort,
  isRoleEnabled,
  parseHostPort,
  sharesRedis,
  type Config,
  type RoleName
} from '../../engine/config/index.js'
import { loadConfigFile } from '../../engine/features.js'
import type { HealthReport } from '../../engine/health/index.js'
import { commandArgs } from './command-args.js'
import { ROLE_NAMES, sectionOf } from './roles.js'
import { readOutcome } from './reload-outcome.js'
import { livePid } from './run-role.js'
import { readRestartState, type RestartState } from './role-restarts.js'

const USAGE =
  'usage: filterd status --config FILE [--json]\n\n' +
  'Each role of FILE: pid, up since, listeners, health, store generation; the replica state and the last\n' +
  'statistics import. Exit 0 when every running role is healthy.\n'

export interface RoleStatus {
  role: RoleName
  /**
   * running; stopped: no pid file; crashed: a pid file naming no live process; restarting: not
   * running, and `filterd all` starts it again after failures.
   */
  state: 'running' | 'stopped' | 'crashed' | 'restarting'
  /** What `filterd all` recorded of its recent deaths (also for a running role, until it ran a minute). */
  restarts?: RestartState
  pid?: number
  since?: string
  healthUrl?: string
  health?: HealthReport
  /** Why there is no health report: no health listener, or the request failed. */
  healthError?: string
  healthy: boolean
  /** Keys changed by a reload that wait for this role's restart (its reload outcome, reload-outcome.ts). */
  pendingRestart?: readonly string[]
}

/** Where a role answers GET /health, or undefined (the collector; the dns role without proxy.metrics-listen). */
export function healthUrl(config: Readonly<Config>, role: RoleName): string | undefined {
  const listen: Record<RoleName, string | undefined> = {
    dns: config.proxy['metrics-listen'],
    api: config.api.listen,
    blockpage: config.blockpage.listen,
    catapi: config.catapi['anon-listen'],
    local: config.local.listen,
    sync: config.sync.listen,
    rpz: config.rpz['metrics-listen'],
    collector: undefined
  }
  const address = listen[role]
  if (address === undefined) return undefined
  const hp = parseHostPort(address)
  const host = hp.host === '0.0.0.0' ? '127.0.0.1' : hp.host === '::' ? '::1' : hp.host
  return `http://${formatHostPort({ host, port: hp.port })}/health`
}

async function fetchHealth(url: string): Promise<HealthReport | string> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000), headers: { accept: 'application/json' } })
    const body = (await res.json()) as HealthReport
    if (typeof body !== 'object' || body === null || typeof body.ok !== 'boolean')
      return `${url} answered ${res.status} without a health report`
    return body
  } catch (err) {
    return `${url}: ${(err as Error).message}`
  }
}

/** Reads the pid files and asks every running role for its health. */
export async function collectStatus(config: Readonly<Config>): Promise<RoleStatus[]> {
  const roles = ROLE_NAMES.filter((r) => isRoleEnabled(config, r))
  return await Promise.all(
    roles.map(async (role): Promise<RoleStatus> => {
      const pidFile = sectionOf(config, role).pid
      const pid = livePid(pidFile, role)
      const restarts = readRestartState(pidFile)
      if (pid === undefined && restarts !== undefined) return { role, state: 'restarting', restarts, healthy: false }
      if (pid === undefined) {
        let exists = true
        try {
          statSync(pidFile)
        } catch {
          exists = false
        }
        return { role, state: exists ? 'crashed' : 'stopped', healthy: !exists }
      }
      // The pid file is written once the role has its config and log, just before it starts.
      const since = statSync(pidFile).mtime.toISOString()
      const reloaded = readOutcome(pidFile)
      const pending = reloaded?.pid === pid && reloaded.restart.length > 0 ? { pendingRestart: reloaded.restart } : {}
      const url = healthUrl(config, role)
      const recent = restarts !== undefined ? { restarts } : {}
      if (url === undefined) {
        return {
          role,
          state: 'running',
          pid,
          since,
          ...recent,
          ...pending,
          healthy: true,
          healthError: role === 'dns' ? 'no /health: set proxy.metrics-listen' : 'no /health'
        }
      }
      const h = await fetchHealth(url)
      if (typeof h === 'string')
        return {
          role,
          state: 'running',
          pid,
          since,
          ...recent,
          ...pending,
          healthUrl: url,
          healthError: h,
          healthy: false
        }
      return {
        role,
        state: 'running',
        pid,
        since: h.since ?? since,
        ...recent,
        ...pending,
        healthUrl: url,
        health: h,
        healthy: h.ok
      }
    })
  )
}

/** The human report: one block per role, then the replica and the statistics import. */
export function formatStatus(config: Readonly<Config>, rows: readonly RoleStatus[]): string {
  const lines: string[] = []
  for (const r of rows) {
    if (r.state === 'restarting' && r.restarts !== undefined) {
      const x = r.restarts
      lines.push(
        `${r.role.padEnd(10)} RESTARTING: ${x.lastExit} at ${x.lastExitAt}, ${x.failures} failure${x.failures === 1 ? '' : 's'} in a row; filterd all (pid ${x.supervisor}) starts it again at ${x.nextStartAt}, the other roles keep running`
      )
      continue
    }
    if (r.state !== 'running') {
      lines.push(
        `${r.role.padEnd(10)} ${r.state === 'crashed' ? `CRASHED: its pid file ${sectionOf(config, r.role).pid} names no live process` : 'stopped (no pid file)'}`
      )
      continue
    }
    const h = r.health
    const health =
      h !== undefined ? (h.ok ? h.state : `${h.state.toUpperCase()}`) : r.healthUrl !== undefined ? 'UNREACHABLE' : '-'
    const gen = h?.generation !== undefined ? `  generation ${h.generation}` : ''
    lines.push(`${r.role.padEnd(10)} pid ${r.pid}  up since ${r.since}  health ${health}${gen}`)
    for (const l of h?.listeners ?? []) lines.push(`${' '.repeat(11)}${l}`)
    for (const d of h?.degraded ?? []) lines.push(`${' '.repeat(11)}degraded: ${d.what}: ${d.why}`)
    if (r.healthError !== undefined) lines.push(`${' '.repeat(11)}${r.healthError}`)
    if (r.restarts !== undefined)
      lines.push(
        `${' '.repeat(11)}restarted by filterd all after ${r.restarts.failures} failure${r.restarts.failures === 1 ? '' : 's'} in a row, the last: ${r.restarts.lastExit} at ${r.restarts.lastExitAt}`
      )
    if (r.pendingRestart !== undefined)
      lines.push(
        `${' '.repeat(11)}restart pending: a reload changed ${r.pendingRestart.join(', ')} (still the old value until the ${r.role} role restarts)`
      )
  }
  const sync = rows.find((r) => r.role === 'sync')
  lines.push('')
  lines.push(
    `replica: ${!sharesRedis(config) ? 'none (one host: common.redis-ip is not set)' : sync?.health !== undefined ? `${sync.health.state} (${String(sync.health.redis)})` : 'unknown (the sync role does not answer)'}`
  )
  const api = rows.find((r) => r.role === 'api')?.health
  const last = api?.statsImport as { at?: string; files?: number; rows?: number; error?: string } | null | undefined
  lines.push(
    `last statistics import: ${
      sharesRedis(config)
        ? 'through Redis (the sync role ships, every api role applies)'
        : last === undefined
          ? 'unknown (the api role does not answer)'
          : last === null
            ? 'none yet'
            : last.error !== undefined
              ? `${last.at ?? '?'} FAILED: ${last.error}`
              : `${last.at ?? '?'} (${last.files ?? 0} files, ${last.rows ?? 0} rows)`
    }`
  )
  const healthy = rows.every((r) => r.healthy) && rows.some((r) => r.state === 'running')
  lines.push(healthy ? 'all running roles are healthy' : 'NOT HEALTHY: see above')
  return lines.join('\n') + '\n'
}

export async function run(argv: string[]): Promise<number> {
  const args = commandArgs('status', USAGE, argv, { json: { type: 'boolean' } })
  if (typeof args === 'number') return args
  let config
  try {
    config = loadConfigFile(args.config)
  } catch (err) {
    process.stderr.write(`filterd status: ${(err as Error).message}\n`)
    return 1
  }
  const rows = await collectStatus(config)
  const healthy = rows.every((r) => r.healthy) && rows.some((r) => r.state === 'running')
  if (args.values.json === true) process.stdout.write(JSON.stringify({ healthy, roles: rows }, null, 2) + '\n')
  else process.stdout.write(formatStatus(config, rows))
  return healthy ? 0 : 1
}
