/**
 * Test helper (not a test): a throwaway self-signed certificate made with the openssl CLI, for the
 * HTTPS tests of the HTTP adapter and the block page. Tests skip with `OPENSSL_MISSING` when the
 * tool is absent.
 */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'

export const OPENSSL_MISSING = 'openssl is not installed (needed to make a test certificate)'

export function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Writes `cert.pem` and `key.pem` for `commonName` into `dir`, valid for `days` (default one day). */
export function writeTestCertificate(dir: string, commonName: string, days = 1): { cert: string; key: string } {
  const cert = join(dir, 'cert.pem')
  const key = join(dir, 'key.pem')
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      String(days),
      '-subj',
      `/CN=${commonName}`
    ],
    { stdio: 'ignore' }
  )
  return { cert, key }
}
