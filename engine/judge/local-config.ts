/*
 * The local answers (./local-answers.ts) as the config asks for them: the canary from `proxy.doh-canary`,
 * DDR from the encrypted listeners. The DoT and DoH listeners and their keys (`proxy.server-name`,
 * `proxy.dot-listen`, `proxy.doh-listen`, `proxy.doh-path`) come with the DoT/DoH transports (issue 25);
 * `ddrEndpointsFromConfig` reads them when they are there, checking each value itself, so this module
 * builds before those keys exist in the schema and DDR answers NODATA until they are set.
 */
import { parseHostPort } from '../config/address.js'
import type { Config } from '../config/types.js'
import { LocalAnswers, type DdrEndpoints } from './local-answers.js'

const DOT_PORT = 853
const DOH_PORT = 443
const DOH_PATH = '/dns-query'

/** The distinct ports of listen entries (`address:port` text, one or a list); [] when `value` is none. */
function listenPorts(value: unknown, defaultPort: number): number[] {
  const list: unknown[] = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]
  const ports = new Set<number>()
  for (const entry of list) {
    if (typeof entry === 'string') ports.add(parseHostPort(entry, defaultPort).port)
    else if (typeof entry === 'object' && entry !== null && typeof (entry as { port?: unknown }).port === 'number')
      ports.add((entry as { port: number }).port)
  }
  return [...ports]
}

/**
 * The endpoints DDR names: the DoT and DoH listeners' ports and the server name their certificate carries;
 * null without a server name or without an encrypted listener (then DDR answers NODATA).
 */
export function ddrEndpointsFromConfig(proxy: Readonly<Config['proxy']>): DdrEndpoints | null {
  const p = proxy as Readonly<Record<string, unknown>>
  const serverName = p['server-name']
  if (typeof serverName !== 'string' || serverName === '') return null
  const path = typeof p['doh-path'] === 'string' ? p['doh-path'] : DOH_PATH
  const dot = listenPorts(p['dot-listen'], DOT_PORT).map((port) => ({ port }))
  const doh = listenPorts(p['doh-listen'], DOH_PORT).map((port) => ({ port, path }))
  return dot.length + doh.length === 0 ? null : { serverName, dot, doh }
}

/**
 * The local answers of the DNS server (inline judge and pool workers alike): the canary as `proxy.doh-canary`
 * says, DDR naming `ddr` (the server passes `ddrEndpointsFromConfig`'s, or a test its own).
 */
export function localAnswersFor(proxy: Readonly<Config['proxy']>, ddr: DdrEndpoints | null): LocalAnswers {
  return new LocalAnswers({ canary: proxy['doh-canary'], ddr })
}
