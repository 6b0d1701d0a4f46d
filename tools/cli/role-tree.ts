/**
 * The supervision of `filterd all`'s process tree (tools/cli/run-all.ts): each role forked as its own
 * child process, the collector first; a role other than dns that dies is started again for ever,
 * after a backoff doubling from 200 ms to 30 s (./role-restarts.ts), its restart state written for
 * `filterd status`; the dns role is started again within a budget (`MAX_DNS_RESTARTS` within
 * `DNS_RESTART_WINDOW_MS`), and its failed start, or a death past that budget, stops the whole tree.
 * `--on-crash stop` stops the tree at the first death.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { Config, RoleName } from '../../engine/config/index.js'
import { sectionOf } from './roles.js'
import { backoffMs, clearRestartState, STABLE_MS, writeRestartState } from './role-restarts.js'

const entry = fileURLToPath(new URL('../filterd.js', import.meta.url))

export interface Child {
  role: RoleName
  proc: ChildProcess
  endpoints: readonly string[]
  ready: boolean
}

/** What `filterd all` does when a role dies after its start (`--on-crash`). */
export type OnCrash = 'restart' | 'stop'

export const ON_CRASH: readonly OnCrash[] = ['restart', 'stop']

/** Restarts of the dns role allowed within DNS_RESTART_WINDOW_MS before the whole tree stops. */
const MAX_DNS_RESTARTS = 5
const DNS_RESTART_WINDOW_MS = 60_000
const DNS_FIRST_BACKOFF_MS = 200
const DNS_MAX_BACKOFF_MS = 5000

export const out = (line: string): void => {
  process.stdout.write(line + '\n')
}

/**
 * The dns role's restart budget: the delay before its next start (doubling from
 * DNS_FIRST_BACKOFF_MS), or undefined once it used MAX_DNS_RESTARTS within DNS_RESTART_WINDOW_MS.
 */
function dnsRestartBudget(): () => number | undefined {
  let restarts: number[] = []
  return () => {
    const now = Date.now()
    restarts = restarts.filter((t) => now - t < DNS_RESTART_WINDOW_MS)
    if (restarts.length >= MAX_DNS_RESTARTS) return undefined
    restarts.push(now)
    return Math.min(DNS_MAX_BACKOFF_MS, DNS_FIRST_BACKOFF_MS * 2 ** (restarts.length - 1))
  }
}

/**
 * Starts the roles, the collector first: the local service's first billing contact happens at its
 * start, and it answers 503 until a contact succeeds, so it must find the collector already listening.
 */
async function startInOrder(roles: readonly RoleName[], start: (role: RoleName) => Promise<void>): Promise<void> {
  const first: RoleName[] = roles.filter((r) => r === 'collector')
  await Promise.all(first.map(start))
  await Promise.all(roles.filter((r) => !first.includes(r)).map(start))
}

/** Resolves when `child`'s process says it is ready (its endpoints noted); rejects when it exits first. */
function untilReady(child: Child): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    child.proc.on('message', (m: unknown) => {
      const msg = m as { type?: string; endpoints?: string[] }
      if (msg.type === 'ready') {
        child.endpoints = msg.endpoints ?? []
        child.ready = true
        resolve()
      }
    })
    child.proc.on('exit', () => reject(new Error(`${child.role} exited during start`)))
  })
}

interface RoleTreeOptions {
  config: Readonly<Config>
  configPath: string
  /** The roles to run, in ROLE_NAMES order. */
  roles: readonly RoleName[]
  onCrash: OnCrash
  /** Called once every child has exited, before `done` resolves (the demo's stub upstream closes). */
  release: () => Promise<void>
}

/** The children of `filterd all` and what happens when one dies; `done` resolves with the exit code. */
export class RoleTree {
  readonly children: Child[] = []
  readonly done: Promise<number>
  private resolveDone: (code: number) => void = () => {}
  private stopping = false
  private exitCode = 0
  /** Set once every role's first start is over: from then on the dns role may restart. */
  private started = false
  private readonly dnsMayRestart = dnsRestartBudget()
  /** Deaths in a row of each role other than dns (reset once it ran STABLE_MS). */
  private readonly failures = new Map<RoleName, number>()
  private readonly stableTimers = new Map<RoleName, NodeJS.Timeout>()
  // Pending starts, cancelled when the tree stops (a 30 s backoff must not hold the exit).
  private readonly pending = new Set<NodeJS.Timeout>()

  constructor(private readonly options: RoleTreeOptions) {
    this.done = new Promise<number>((resolve) => {
      this.resolveDone = resolve
    })
  }

  /** Whether the tree is stopping (a signal, or a failure that ends it). */
  get isStopping(): boolean {
    return this.stopping
  }

  /**
   * Starts every role, the restart states of an earlier run cleared first. Only the dns role's
   * failed start rejects; another role's comes back to `restart`.
   */
  startAll(): Promise<void> {
    for (const role of this.options.roles) clearRestartState(this.pidFileOf(role))
    return startInOrder(this.options.roles, (role) =>
      role === 'dns' ? this.startRole(role) : this.startRole(role).catch(() => {})
    )
  }

  /** Notes that the first start is over: a death of the dns role is now restarted within its budget. */
  markStarted(): void {
    this.started = true
  }

  /** Forwards SIGHUP to every running role (each reloads its config and reopens its log). */
  hangUp(): void {
    for (const c of this.children) if (c.proc.exitCode === null) c.proc.kill('SIGHUP')
  }

  stopAll(code: number): void {
    if (this.stopping) return
    this.stopping = true
    this.exitCode = code
    for (const c of this.children) if (c.proc.exitCode === null) c.proc.kill('SIGTERM')
    if (this.children.every((c) => c.proc.exitCode !== null)) this.finish()
  }

  private finish(): void {
    for (const timer of [...this.pending, ...this.stableTimers.values()]) clearTimeout(timer)
    for (const role of this.options.roles) clearRestartState(this.pidFileOf(role))
    void this.options.release().then(() => this.resolveDone(this.exitCode))
  }

  private pidFileOf(role: RoleName): string {
    return sectionOf(this.options.config, role).pid
  }

  private startAgain(child: Child, delay: number): void {
    const timer = setTimeout(() => {
      this.pending.delete(timer)
      if (this.stopping) return
      this.children.splice(this.children.indexOf(child), 1)
      this.startRole(child.role).catch(() => {}) // its exit during the start comes back here
    }, delay)
    this.pending.add(timer)
  }

  // The dns role: started again within its budget; at its start or past the budget, the tree stops.
  private restartDns(child: Child, why: string): void {
    const delay = this.started ? this.dnsMayRestart() : undefined
    if (delay === undefined) {
      const reason = this.started
        ? `its ${MAX_DNS_RESTARTS}th restart within ${DNS_RESTART_WINDOW_MS / 1000} s`
        : 'during its start'
      out(`filterd all: the dns role exited (${why}, ${reason}): DNS cannot run here; stopping every role`)
      this.stopAll(1)
      return
    }
    out(`filterd all: the dns role exited (${why}); starting it again in ${delay} ms`)
    this.startAgain(child, delay)
  }

  // Any other role: started again for ever with a capped backoff; DNS keeps answering meanwhile.
  private restartOther(child: Child, why: string): void {
    clearTimeout(this.stableTimers.get(child.role))
    const n = (this.failures.get(child.role) ?? 0) + 1
    this.failures.set(child.role, n)
    const delay = backoffMs(n)
    const lastExit = child.ready ? why : `exited during its start (${why})`
    out(
      `filterd all: the ${child.role} role exited (${lastExit}); starting it again in ${delay} ms (${n} failure${n === 1 ? '' : 's'} in a row; the others keep running)`
    )
    const now = Date.now()
    writeRestartState(this.pidFileOf(child.role), {
      role: child.role,
      failures: n,
      lastExit,
      lastExitAt: new Date(now).toISOString(),
      nextStartAt: new Date(now + delay).toISOString(),
      supervisor: process.pid
    })
    this.startAgain(child, delay)
  }

  private restart(child: Child, why: string): void {
    if (this.options.onCrash === 'stop') {
      out(`filterd all: the ${child.role} role exited (${why}); stopping the others`)
      this.stopAll(1)
    } else if (child.role === 'dns') this.restartDns(child, why)
    else this.restartOther(child, why)
  }

  // A role that ran STABLE_MS after its start is well again: its backoff starts anew, its state file goes.
  private onReady(role: RoleName): void {
    if (!this.failures.has(role)) return
    clearTimeout(this.stableTimers.get(role))
    this.stableTimers.set(
      role,
      setTimeout(() => {
        this.failures.delete(role)
        clearRestartState(this.pidFileOf(role))
      }, STABLE_MS).unref()
    )
  }

  private async startRole(role: RoleName): Promise<void> {
    const proc = fork(entry, [role, '--config', this.options.configPath], { stdio: 'inherit' })
    const child: Child = { role, proc, endpoints: [], ready: false }
    this.children.push(child)
    proc.on('exit', (code, signal) => {
      if (!this.stopping) this.restart(child, signal ?? `code ${code}`)
      if (this.stopping && this.children.every((c) => c.proc.exitCode !== null || c.proc.signalCode !== null))
        this.finish()
    })
    await untilReady(child)
    this.onReady(role)
  }
}
