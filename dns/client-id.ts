/**
 * Where an encrypted transport finds the subscriber's client ID (docs/dns.md, "Client IDs"): the
 * first label of the TLS server name `{client-id}.{proxy.server-name}` (DoT), or the path
 * `/dns-query/{client-id}` (DoH). What the ID means (which user, an unknown ID) is the policy's
 * business; here it is only read and checked for shape.
 */

/** A client ID: a DNS label's letters, digits and hyphens (so it fits a server name), 1 to 63 of them. */
const CLIENT_ID = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** `text` as a client ID (lower case), or null when it is not one. */
export function checkedClientId(text: string): string | null {
  const id = text.toLowerCase()
  return CLIENT_ID.test(id) ? id : null
}

/**
 * The client ID a TLS server name carries: the one label before `serverName` (`kid1` in
 * `kid1.dns.example.net` under `dns.example.net`); null without SNI, for the server name itself,
 * for another name, or when no `proxy.server-name` is set.
 */
export function clientIdFromServerName(
  sni: string | false | null | undefined,
  serverName: string | null
): string | null {
  if (typeof sni !== 'string' || serverName === null) return null
  const name = sni.toLowerCase()
  const suffix = '.' + serverName.toLowerCase()
  if (!name.endsWith(suffix)) return null
  const label = name.slice(0, name.length - suffix.length)
  return label.includes('.') ? null : checkedClientId(label)
}
