// Test helpers of the dns role: the engine's DNS test helpers plus an in-process server.
import type { TestContext } from 'node:test'
import type { QueryLogSink } from '../../engine/querylog/index.js'
import { makeConfig, type ConfigOptions, type World } from '../../engine/testing/dns.js'
import { startDnsServer, type DnsServer } from '../server.js'

export * from '../../engine/testing/dns.js'

export async function server (t: TestContext, w: World, o: ConfigOptions & { querylog?: QueryLogSink, tcpMaxFrame?: number } = {}): Promise<DnsServer> {
  const s = await startDnsServer({
    config: makeConfig(w, o),
    store: w.store,
    ...(o.querylog === undefined ? {} : { querylog: o.querylog }),
    ...(o.tcpMaxFrame === undefined ? {} : { tcpMaxFrame: o.tcpMaxFrame })
  })
  t.after(() => s.close())
  return s
}
