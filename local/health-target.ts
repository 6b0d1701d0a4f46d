/**
 * Which address the container's health check probes: `local.listen` of the config the service
 * itself was started with, so that a mounted config listening elsewhere (`--config
 * /etc/filterd/local.yaml` with `listen: 0.0.0.0:8080`) is probed where it listens, with no second
 * setting to keep in step.
 *
 * The health check is a separate process (Docker runs HEALTHCHECK like `docker exec`, with the
 * container's environment and working directory), so it reads the service's command line from
 * /proc/<pid>/cmdline: pid 1 in the container (the service, or an init such as `docker run --init`
 * whose arguments contain the service's). When that command line names no config for the `local`
 * role or the config does not load, it falls back to `FILTERD_LISTEN`, then to 0.0.0.0:80.
 */
import { readFileSync, readlinkSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'
import { loadConfigFile } from '../engine/features.js'

export interface HealthTarget {
  /** `host:port` as in the config (`0.0.0.0:80`). */
  listen: string
  /** Where it came from, for the health check's error message. */
  source: string
}

/** `--config FILE`, `-c FILE` or `--config=FILE` in a `filterd local` command line, or undefined. */
export function configOfCommandLine(argv: readonly string[]): string | undefined {
  if (!argv.includes('local')) return undefined
  const i = argv.findIndex((a) => a === '--config' || a === '-c')
  if (i >= 0) return argv[i + 1]
  return argv.find((a) => a.startsWith('--config='))?.slice('--config='.length)
}

export function healthTarget(env: NodeJS.ProcessEnv, pid: string): HealthTarget {
  const fallback = (why: string): HealthTarget =>
    env.FILTERD_LISTEN === undefined
      ? { listen: '0.0.0.0:80', source: `the default (${why})` }
      : { listen: env.FILTERD_LISTEN, source: `FILTERD_LISTEN (${why})` }
  let argv: string[]
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((a) => a !== '')
  } catch {
    return fallback(`no command line for pid ${pid}`)
  }
  const file = configOfCommandLine(argv)
  if (file === undefined) return fallback(`pid ${pid} is not filterd local --config FILE`)
  try {
    // A relative path is relative to the service's working directory, not ours.
    const path = isAbsolute(file) ? file : join(readlinkSync(`/proc/${pid}/cwd`), file)
    return { listen: loadConfigFile(path, env).local.listen, source: `local.listen of ${path}` }
  } catch (err) {
    return fallback(`config of pid ${pid}: ${(err as Error).message.split('\n')[0] ?? ''}`)
  }
}
