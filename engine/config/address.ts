import { isIP } from 'node:net'
import type { HostPort } from './types.js'

/**
 * Parses `address:port` (IPv6 in brackets: `[::1]:53`). A bare address takes `defaultPort`
 * when given (resolvers default to 53). Host names are refused: a daemon that binds or forwards
 * must not depend on name resolution at start.
 */
export function parseHostPort(text: string, defaultPort?: number): HostPort {
  let host: string
  let portText: string | undefined
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(text)
  if (bracket !== null) {
    host = bracket[1]!
    portText = bracket[2]
  } else if (isIP(text) !== 0) {
    host = text
  } else {
    const i = text.lastIndexOf(':')
    if (i < 0) throw new Error(`"${text}" must be address:port`)
    host = text.slice(0, i)
    portText = text.slice(i + 1)
  }
  const family = isIP(host)
  if (family === 0) throw new Error(`"${text}": "${host}" is not an IP address`)
  let port: number
  if (portText === undefined) {
    if (defaultPort === undefined) throw new Error(`"${text}" needs a port (address:port)`)
    port = defaultPort
  } else {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) throw new Error(`"${text}": port must be 0..65535`)
    port = Number(portText)
  }
  return { host, port, family: family as 4 | 6 }
}

/** `host:port` text for messages and URLs, IPv6 in brackets. */
export function formatHostPort(hp: { host: string; port: number }): string {
  return isIP(hp.host) === 6 ? `[${hp.host}]:${hp.port}` : `${hp.host}:${hp.port}`
}
