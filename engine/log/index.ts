/**
 * Structured logs: one JSON object per line (pino), to the file a role's `log` key names or to
 * standard output for `-`. Disabled levels are no-ops, so a debug line on a hot path costs a
 * property check when debug is off.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { pino, type Logger } from 'pino'
import type { LogLevel } from '../config/types.js'

export type { Logger } from 'pino'

export interface LoggerOptions {
  /** Absolute file path, or '-' for standard output. */
  destination: string
  level: LogLevel
  /** Role name put on every line. */
  role: string
}

export function createLogger (options: LoggerOptions): Logger {
  const sync = options.destination === '-'
  if (!sync) mkdirSync(dirname(options.destination), { recursive: true })
  const dest = pino.destination({ dest: sync ? 1 : options.destination, sync, mkdir: true })
  return pino({ level: options.level, base: { role: options.role, pid: process.pid } }, dest)
}

/** A logger that writes nothing (tests, library use). */
export function silentLogger (): Logger {
  return pino({ level: 'silent' })
}
