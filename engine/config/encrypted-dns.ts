/**
 * The rules of the encrypted DNS keys (`proxy.dot-listen`, `proxy.doh-listen`, `proxy.doh-http-listen`)
 * that the schema cannot say: the addresses parse (with their transport's default port), a TLS listener
 * has its certificate and key, and the trusted proxies are addresses or prefixes.
 */
import { parseHostPort } from './address.js'
import { compileAddressSet } from '../net/index.js'

/** The standard ports of the encrypted transports, taken when a listen address leaves the port out. */
export const DOT_PORT = 853
export const DOH_PORT = 443
export const DOH_HTTP_PORT = 80

interface EncryptedDnsKeys {
  readonly 'dot-listen': readonly string[]
  readonly 'doh-listen': readonly string[]
  readonly 'doh-http-listen': readonly string[]
  readonly 'doh-trusted-proxies': readonly string[]
  readonly 'tls-cert'?: string
  readonly 'tls-key'?: string
}

/** Appends a line naming the key for each problem of the proxy section's encrypted DNS keys. */
export function checkEncryptedDns(proxy: EncryptedDnsKeys, problems: string[]): void {
  const lists = [
    ['dot-listen', DOT_PORT],
    ['doh-listen', DOH_PORT],
    ['doh-http-listen', DOH_HTTP_PORT]
  ] as const
  for (const [key, port] of lists) {
    proxy[key].forEach((text, i) => {
      try {
        parseHostPort(text, port)
      } catch (err) {
        problems.push(`proxy.${key}[${i}]: ${(err as Error).message}`)
      }
    })
  }
  const tls = proxy['dot-listen'].length > 0 ? 'dot-listen' : proxy['doh-listen'].length > 0 ? 'doh-listen' : null
  if (tls !== null && (proxy['tls-cert'] === undefined || proxy['tls-key'] === undefined))
    problems.push(`proxy.${tls}: needs proxy.tls-cert and proxy.tls-key`)
  try {
    compileAddressSet(proxy['doh-trusted-proxies'])
  } catch (err) {
    problems.push(`proxy.doh-trusted-proxies${(err as Error).message}`)
  }
}

/** How many encrypted DNS listeners the section opens (check-config's summary). */
export function encryptedListenerCount(proxy: EncryptedDnsKeys): number {
  return proxy['dot-listen'].length + proxy['doh-listen'].length + proxy['doh-http-listen'].length
}
