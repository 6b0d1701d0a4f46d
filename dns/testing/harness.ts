// Test helpers of the dns role: the engine's DNS test helpers plus an in-process server.
import { test, type TestContext } from 'node:test'
import type { DnsMetrics } from '../metrics.js'
import type { QueryLogSink } from '../../engine/querylog/index.js'
import { makeConfig, setTestIo, type ConfigOptions, type World } from '../../engine/testing/dns.js'
import { loadUdpAddon } from '../../engine/udp/index.js'
import { startDnsServer, type DnsServer } from '../server.js'

export * from '../../engine/testing/dns.js'

export async function server(
  t: TestContext,
  w: World,
  o: ConfigOptions & { querylog?: QueryLogSink; tcpMaxFrame?: number; metrics?: DnsMetrics } = {}
): Promise<DnsServer> {
  const s = await startDnsServer({
    config: makeConfig(w, o),
    store: w.store,
    ...(o.querylog === undefined ? {} : { querylog: o.querylog }),
    ...(o.metrics === undefined ? {} : { metrics: o.metrics }),
    ...(o.tcpMaxFrame === undefined ? {} : { tcpMaxFrame: o.tcpMaxFrame })
  })
  t.after(() => s.close())
  return s
}

/**
 * Registers a suite with every server and config of this file on one UDP I/O path. Without the
 * native addon the native suite is skipped, except in CI, where it fails (CI builds the addon).
 */
export function forIo(io: 'native' | 'dgram', register: () => void): void {
  if (io === 'native') {
    const addon = loadUdpAddon()
    if (addon instanceof Error) {
      if (process.env.CI !== undefined && process.env.CI !== '') {
        test('the native UDP addon is built (CI)', () => {
          throw addon
        })
      } else {
        test('native UDP I/O suite', (t) => {
          t.skip(addon.message)
        })
      }
      return
    }
  }
  setTestIo(io)
  register()
}
