/**
 * Test helpers for every role's daemon tests (not run as tests): the real role as a child process
 * (`node dist/tools/filterd.js <role> --config FILE`), ready when it reports its endpoints, with its
 * log lines; a command of the CLI run to its end; a poll with a bound; a JSON GET.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestContext } from 'node:test'
import type { RoleName } from '../config/index.js'
import { beforeRemoval } from './temp.js'

export const REPO = fileURLToPath(new URL('../../../', import.meta.url))
export const FILTERD = join(REPO, 'dist/tools/filterd.js')
export const CONF = join(REPO, 'conf')

export interface LogLine {
  msg?: string
  level?: number
  [k: string]: unknown
}

export interface Child {
  proc: ChildProcess
  port: number
  url: string
  logs: LogLine[]
  stderr: string
  /** Resolves with the first log line (seen so far or later) that `pred` accepts. */
  waitForLog(pred: (l: LogLine) => boolean, what?: string): Promise<LogLine>
  stop(): Promise<void>
}

/**
 * Starts `filterd <role> --config file` and resolves once it reports ready; `port` is the one of its
 * first endpoint. `logs` holds the role's stdout log lines when its config logs to `-`. `cli`: another
 * copy of dist/tools/filterd.js (an installed or image layout).
 */
export async function startRole(
  t: TestContext,
  role: RoleName,
  config: string,
  env: NodeJS.ProcessEnv = {},
  cli = FILTERD
): Promise<Child> {
  const proc = spawn(process.execPath, [cli, role, '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, ...env }
  })
  const logs: LogLine[] = []
  const waiters: Array<{ pred: (l: LogLine) => boolean; resolve: (l: LogLine) => void }> = []
  let buffered = ''
  let stderr = ''
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
    buffered += d
    let nl
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl)
      buffered = buffered.slice(nl + 1)
      let parsed: LogLine
      try {
        parsed = JSON.parse(line) as LogLine
      } catch {
        parsed = { msg: line, nonJson: true }
      }
      logs.push(parsed)
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i]!.pred(parsed)) {
          waiters[i]!.resolve(parsed)
          waiters.splice(i, 1)
        }
      }
    }
  })
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d
  })
  let exited = false
  proc.on('exit', () => {
    exited = true
  })
  const stop = async (): Promise<void> => {
    if (exited) return
    const done = once(proc, 'exit')
    proc.kill('SIGTERM')
    await done
  }
  t.after(stop)
  beforeRemoval(t, stop)
  const ready = await Promise.race([
    once(proc, 'message') as Promise<[{ endpoints: string[] }]>,
    once(proc, 'exit').then(([code]) => {
      throw new Error(`${role} exited with ${String(code)} before ready: ${stderr}`)
    })
  ])
  // `local http 127.0.0.1:8084`, `dns udp+tcp [::1]:53`, `api http 127.0.0.1:8081 (uws)`: the last `:port`.
  const port = Number(/.*:(\d+)/.exec(ready[0].endpoints[0] ?? '')?.[1])
  return {
    proc,
    port,
    url: `http://127.0.0.1:${port}`,
    logs,
    get stderr() {
      return stderr
    },
    waitForLog(pred) {
      const seen = logs.find(pred)
      if (seen !== undefined) return Promise.resolve(seen)
      return new Promise((resolve) => {
        waiters.push({ pred, resolve })
      })
    },
    stop
  }
}

export interface CliRun {
  /** The exit code; null when a signal ended the process. */
  code: number | null
  stdout: string
  stderr: string
}

/** Runs `filterd …args` (dist/tools/filterd.js, or another copy as `cli`) to its end. */
export function runCli(args: string[], cli = FILTERD): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : null, stdout, stderr })
    })
  })
}

/**
 * The one log line a role's failed start writes on standard error (tools/filterd.ts, logStartFailure).
 * Throws when `stderr` is not exactly one line of JSON, so a test fails on plain text or extra output.
 */
export function startFailureLine(stderr: string): LogLine & { err: { type: string; message: string; code?: string } } {
  const lines = stderr.split('\n')
  if (lines.length !== 2 || lines[1] !== '')
    throw new Error(`expected exactly one line on stderr, got: ${JSON.stringify(stderr)}`)
  return JSON.parse(lines[0]!) as LogLine & { err: { type: string; message: string; code?: string } }
}
