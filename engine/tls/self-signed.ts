/**
 * The quick start's certificate (`demo.tls-self-signed`): a self-signed pair for `proxy.server-name`
 * and its client-ID names (`*.name`), made once with the openssl command at the first start, so
 * `npm start` can serve DoT and DoH with nothing to download. Never for production.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'

/** Writes `cert` and `key` (PEM) for `name` unless both exist; true when it made them. */
export function ensureSelfSigned(cert: string, key: string, name: string): boolean {
  if (existsSync(cert) && existsSync(key)) return false
  mkdirSync(dirname(cert), { recursive: true })
  mkdirSync(dirname(key), { recursive: true })
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '825',
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=DNS:${name},DNS:*.${name},IP:127.0.0.1,IP:::1`
    ],
    { stdio: 'ignore' }
  )
  return true
}
