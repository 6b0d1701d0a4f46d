/*
 * The local answers (./local-answers.ts) as the config asks for them: the canary from `proxy.doh-canary`,
 * DDR from the encrypted listeners (`proxy.server-name`, `proxy.dot-listen`, `proxy.doh-listen`; DoH is
 * served on /dns-query). DDR answers NODATA until a server name and an encrypted listener are set.
 */
import { parseHostPort } from '../config/index.js'
import type { Config } from '../config/index.js'
import { LocalAnswers, type DdrEndpoints } from './local-answers.js'

const DOT_PORT = 853
const DOH_PORT = 443
const DOH_PATH = '/dns-query'

/** The distinct ports of `host:port` listen entries. */
function listenPorts(list: readonly string[], defaultPort: number): number[] {
  // Port 0 (the kernel picks one at start, as tests do) names nothing a client could use: left out.
  return [...new Set(list.map((entry) => parseHostPort(entry, defaultPort).port))].filter((port) => port !== 0)
}

/**
 * The endpoints DDR names: the DoT and DoH listeners' ports and the server name their certificate carries;
 * null without a server name or without an encrypted listener (then DDR answers NODATA).
 */
export function ddrEndpointsFromConfig(proxy: Readonly<Config['proxy']>): DdrEndpoints | null {
  const serverName = proxy['server-name']
  if (serverName === undefined || serverName === '') return null
  const dot = listenPorts(proxy['dot-listen'], DOT_PORT).map((port) => ({ port }))
  const doh = listenPorts(proxy['doh-listen'], DOH_PORT).map((port) => ({ port, path: DOH_PATH }))
  return dot.length + doh.length === 0 ? null : { serverName, dot, doh }
}

/**
 * The local answers of the DNS server (inline judge and pool workers alike): the canary as `proxy.doh-canary`
 * says, DDR naming `ddr` (the server passes `ddrEndpointsFromConfig`'s, or a test its own).
 */
export function localAnswersFor(proxy: Readonly<Config['proxy']>, ddr: DdrEndpoints | null): LocalAnswers {
  return new LocalAnswers({ canary: proxy['doh-canary'], ddr })
}
