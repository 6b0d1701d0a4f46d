// `proxy.dnstap`: where the dnstap stream goes, `unix:/absolute/path` or `tcp:host:port`.
import { isAbsolute } from 'node:path'
import { parseHostPort } from '../config/index.js'
import type { FrameStreamTarget } from './writer.js'

/** The target of a `proxy.dnstap` value, or what is wrong with it. */
export function parseDnstapTarget(text: string): { target: FrameStreamTarget } | { problem: string } {
  if (text.startsWith('unix:')) {
    const path = text.slice(5)
    if (!isAbsolute(path)) return { problem: `"${text}": the socket path after unix: must be absolute` }
    return { target: { kind: 'unix', path } }
  }
  if (text.startsWith('tcp:')) {
    try {
      const hp = parseHostPort(text.slice(4))
      if (hp.port === 0) return { problem: `"${text}": a TCP port is required` }
      return { target: { kind: 'tcp', host: hp.host, port: hp.port } }
    } catch (err) {
      return { problem: (err as Error).message }
    }
  }
  return { problem: `"${text}": expected unix:/path/of/socket or tcp:host:port` }
}
