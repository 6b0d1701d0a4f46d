/**
 * A private redis-server for tests and benchmarks (Debian's `redis-server`, installed by .ci/run): on
 * a free port, in its own temp folder, killed by `stop()`. `restart({ empty })` stops it and starts it
 * again on the same port, with its data (append-only file) or without (a Redis that lost its data).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { Redis } from 'ioredis'
import { once } from 'node:events'
import { mkdirSync, rmSync } from 'node:fs'
import { createConnection } from 'node:net'
import { releasedPort } from './ports.js'
import type { Cleanup } from './temp.js'
import { makeTempDir } from './temp.js'

export interface TestRedis {
  readonly host: string
  readonly port: number
  readonly dir: string
  /** Stops the server (SIGKILL: nothing flushed beyond what appendfsync already wrote). */
  kill(): Promise<void>
  /** Starts it again on the same port; `empty` removes its data first. */
  start(options?: { empty?: boolean }): Promise<void>
  /** Stops it (SIGTERM: data written) and, unless `keepData`, removes its folder. */
  stop(options?: { keepData?: boolean }): Promise<void>
}

export function redisServerAvailable(): boolean {
  return spawnSync('redis-server', ['--version']).status === 0
}

async function reachable(host: string, port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const s = createConnection({ host, port }, () => {
      s.end()
      resolve(true)
    })
    s.on('error', () => {
      resolve(false)
    })
  })
}

export async function startRedis(options: { host?: string; bind?: string } = {}): Promise<TestRedis> {
  const host = options.host ?? '127.0.0.1'
  const port = await releasedPort()
  const { dir, cleanup } = makeTempDir('filterd-redis-')
  let proc: ChildProcess | undefined
  const start = async (opts: { empty?: boolean } = {}): Promise<void> => {
    if (opts.empty === true) {
      rmSync(dir, { recursive: true, force: true })
      mkdirSync(dir, { recursive: true })
    }
    proc = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        options.bind ?? host,
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'everysec',
        '--protected-mode',
        'no',
        '--loglevel',
        'warning'
      ],
      { stdio: 'ignore' }
    )
    const deadline = Date.now() + 10_000
    while (!(await reachable(host, port))) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode}`)
      if (Date.now() > deadline) throw new Error('redis-server did not start within 10 s')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  const kill = async (): Promise<void> => {
    const p = proc
    proc = undefined
    if (p === undefined || p.exitCode !== null) return
    p.kill('SIGKILL')
    await once(p, 'exit')
  }
  await start()
  return {
    host,
    port,
    dir,
    kill,
    start,
    async stop(opts = {}) {
      const p = proc
      proc = undefined
      if (p !== undefined && p.exitCode === null) {
        p.kill('SIGTERM')
        await once(p, 'exit')
      }
      if (opts.keepData !== true) cleanup()
    }
  }
}

/**
 * A plain client of `redis` for a test, disconnected after it; errors while the server is away
 * (a test that stops it, or its own end stopping it first) are the test's to see, not printed.
 */
export function redisClient(t: Cleanup, redis: { host: string; port: number }): Redis {
  const r = new Redis({ host: redis.host, port: redis.port })
  r.on('error', () => {})
  t.after(() => {
    r.disconnect()
  })
  return r
}
