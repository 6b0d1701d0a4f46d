/** filterd's version: package.json's `version` (what `filterd --version` prints and backups record). */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const PACKAGE_JSON = fileURLToPath(new URL('../../../package.json', import.meta.url))

export function filterdVersion(): string {
  const v = (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version?: unknown }).version
  return typeof v === 'string' ? v : 'unknown'
}
