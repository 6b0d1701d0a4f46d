/**
 * One line of a hosts file (hosts(5): `address name [name…]`, `#` to the end of the line a comment),
 * read the same way for a subscribed list (engine/lists/parse.ts) and for `filterd import`
 * (tools/import/formats.ts). The names are returned as written: each caller makes them keys by its own
 * rules and counts what it could not read.
 */

/** Names a hosts file maps for the machine itself, not to block anything: never entries. */
export const HOSTS_SELF_NAMES: ReadonlySet<string> = new Set([
  'localhost',
  'localhost.localdomain',
  'local',
  'broadcasthost',
  'localhost4',
  'localhost4.localdomain4',
  'localhost6',
  'localhost6.localdomain6',
  'ip6-localhost',
  'ip6-loopback',
  'ip6-localnet',
  'ip6-mcastprefix',
  'ip6-allnodes',
  'ip6-allrouters',
  'ip6-allhosts',
  '0.0.0.0'
])

/** The address field's shape (IPv4 dotted quad, or IPv6 text): what the file answers, not checked further. */
const HOSTS_ADDRESS = /^(\d{1,3}(\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)$/

export type HostsLine =
  /** Blank or a comment. */
  | { kind: 'empty' }
  /** No address first, or no name after it. */
  | { kind: 'invalid' }
  /** The names after the address, the machine's own (HOSTS_SELF_NAMES) left out and counted in `self`. */
  | { kind: 'names'; names: string[]; self: number }

export function readHostsLine(raw: string): HostsLine {
  const hash = raw.indexOf('#')
  const text = (hash < 0 ? raw : raw.slice(0, hash)).trim()
  if (text === '') return { kind: 'empty' }
  const fields = text.split(/\s+/)
  if (fields.length < 2 || !HOSTS_ADDRESS.test(fields[0]!)) return { kind: 'invalid' }
  const names: string[] = []
  let self = 0
  for (let i = 1; i < fields.length; i++) {
    const name = fields[i]!
    if (HOSTS_SELF_NAMES.has(name.toLowerCase())) self++
    else names.push(name)
  }
  return { kind: 'names', names, self }
}
