/**
 * Client credentials, one implementation for every role that has clients: the categorization API's
 * registered listener (`client_id` + `client_secret` as HTTP Basic, categorization-api.md,
 * "Authentication") and the management API (`filterd api-client`: the same pair as HTTP Basic, or
 * `<id>.<secret>` as a Bearer token).
 *
 * The secret is never stored: the `clients` table keeps a random salt and an scrypt digest
 * (node:crypto, RFC 7914). The digest string names its parameters (`scrypt:N:r:p:<hex>`), so the
 * cost can be raised later without invalidating existing clients. Verification compares digests
 * with `timingSafeEqual`, so the time taken does not depend on how many bytes match.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import type { ClientRecord } from '../store/index.js'

/** scrypt cost parameters; N=2^14, r=8, p=1 is node's default (about 50 ms, 16 MiB per verification). */
export interface ScryptParams {
  readonly N: number
  readonly r: number
  readonly p: number
}

export const DEFAULT_SCRYPT: ScryptParams = Object.freeze({ N: 16384, r: 8, p: 1 })
const KEY_LENGTH = 32

/** A client id: what may stand before the `:` of Basic credentials (RFC 7617 §2: no colon). */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/

export function isValidClientId(id: string): boolean {
  return CLIENT_ID_PATTERN.test(id)
}

/** A fresh client id: `c` + 12 hex digits. */
export function newClientId(): string {
  return 'c' + randomBytes(6).toString('hex')
}

/** A fresh secret: 32 random bytes, base64url (43 characters, no `:` and no `.`). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url')
}

function scryptAsync(secret: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // maxmem: scrypt needs 128·N·r bytes; node's default cap (32 MiB) is just enough for N=2^14, r=8.
    scrypt(
      secret,
      salt,
      KEY_LENGTH,
      { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r + 1024 * 1024 },
      (err, key) => {
        if (err !== null) reject(err)
        else resolve(key)
      }
    )
  })
}

/** Hashes `secret` with a new random salt: the two fields stored in the ClientRecord. */
export async function hashSecret(
  secret: string,
  params: ScryptParams = DEFAULT_SCRYPT
): Promise<{ salt: string; hash: string }> {
  const salt = randomBytes(16)
  const key = await scryptAsync(secret, salt, params)
  return { salt: salt.toString('hex'), hash: `scrypt:${params.N}:${params.r}:${params.p}:${key.toString('hex')}` }
}

/** Builds the record for a new (or rotated) client. */
export async function clientRecord(
  id: string,
  secret: string,
  created: string,
  label: string | undefined,
  params: ScryptParams = DEFAULT_SCRYPT
): Promise<ClientRecord> {
  const { salt, hash } = await hashSecret(secret, params)
  const record: ClientRecord = { id, salt, hash, created }
  if (label !== undefined) record.label = label
  return record
}

/** True when `secret` matches the record. A record with an unreadable hash never matches. */
export async function verifySecret(secret: string, record: ClientRecord): Promise<boolean> {
  const m = /^scrypt:(\d+):(\d+):(\d+):([0-9a-f]+)$/.exec(record.hash)
  if (m === null) return false
  const params = { N: Number(m[1]), r: Number(m[2]), p: Number(m[3]) }
  const expected = Buffer.from(m[4]!, 'hex')
  const actual = await scryptAsync(secret, Buffer.from(record.salt, 'hex'), params)
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}

// A record no client owns, made once with the default cost: checking a secret against it takes
// as long as checking one against a real client's record.
let decoy: Promise<ClientRecord> | undefined

/**
 * The same scrypt work as `verifySecret` for an id that has no record, so the time an answer
 * takes does not tell whether a client id exists. Always false.
 */
export async function verifyUnknown(secret: string): Promise<false> {
  decoy ??= clientRecord('', newSecret(), '', undefined)
  await verifySecret(secret, await decoy)
  return false
}

/** What an `Authorization` header claims: a client id and the secret to check against its record. */
export interface Credentials {
  readonly id: string
  readonly secret: string
}

/** RFC 7235 §2.1 token68: what may follow the scheme name. */
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/
/** Canonical base64 (RFC 4648 §4): the alphabet, whole groups of four, padding only at the end. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
/** Control characters (RFC 7617 §2: neither the user-id nor the password may hold one). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** The text after `<scheme> ` (one or more spaces), or undefined when the header has another scheme. */
function schemeValue(header: string | undefined, scheme: string): string | undefined {
  if (header === undefined || header.length <= scheme.length + 1) return undefined
  if (header.slice(0, scheme.length).toLowerCase() !== scheme || header[scheme.length] !== ' ') return undefined
  return header.slice(scheme.length + 1).replace(/^ +| +$/g, '')
}

/**
 * Reads `Authorization: Basic <base64(id:secret)>` (RFC 7617). The scheme name is case-insensitive; the id
 * ends at the first `:`. Decoding is strict, so one secret has one spelling: canonical base64 only (node's
 * decoder would skip a character it does not know, a NUL among them, and ignore stray bits), valid UTF-8,
 * and no control character in the id or the secret. Returns undefined for anything else.
 */
export function parseBasic(header: string | undefined): Credentials | undefined {
  const value = schemeValue(header, 'basic')
  if (value === undefined || value === '' || !BASE64.test(value)) return undefined
  const bytes = Buffer.from(value, 'base64')
  if (bytes.toString('base64') !== value) return undefined
  let decoded: string
  try {
    decoded = UTF8.decode(bytes)
  } catch {
    return undefined
  }
  if (CONTROL.test(decoded)) return undefined
  const colon = decoded.indexOf(':')
  if (colon <= 0) return undefined
  return { id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) }
}

/** The Bearer token of a client: its id, a `.`, its secret (the secret has no `.`, so the last one splits). */
export function bearerToken(id: string, secret: string): string {
  return `${id}.${secret}`
}

/**
 * Reads `Authorization: Bearer <id>.<secret>` (RFC 6750 §2.1; the token is what `bearerToken` makes).
 * The scheme name is case-insensitive; the token must be a token68 (no control character, no space).
 * Returns undefined for anything else.
 */
export function parseBearer(header: string | undefined): Credentials | undefined {
  const token = schemeValue(header, 'bearer')
  if (token === undefined || !TOKEN68.test(token)) return undefined
  const dot = token.lastIndexOf('.')
  if (dot <= 0 || dot === token.length - 1) return undefined
  return { id: token.slice(0, dot), secret: token.slice(dot + 1) }
}

/** Basic or Bearer, whichever the header carries. */
export function parseBasicOrBearer(header: string | undefined): Credentials | undefined {
  return parseBasic(header) ?? parseBearer(header)
}
