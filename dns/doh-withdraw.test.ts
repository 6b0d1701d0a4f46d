// A DoH client that gives up on its queries (resets their streams, or closes its connection) takes
// their upstream queries out of the forwarder's pending table at once: `filterd dns` as a child,
// an upstream that reads every query and never answers, a hand-made HTTP/2 client, and the
// pending count read from the daemon's own /metrics (proxy.metrics-listen).
import { test, type TestContext } from 'node:test'
import { startRole } from '../engine/testing/daemon.js'
import { writeConfigFile } from '../engine/testing/dns.js'
import { releasedPort } from '../engine/testing/ports.js'
import { until } from '../engine/testing/wait.js'
import { Flag, FrameType, H2Error } from './h2/frames.js'
import { encryptedWorld, SERVER_NAME } from './testing/encrypted.js'
import { dnsPath, getBlock, RawClient } from './testing/h2-client.js'

/** The longest budget the schema allows: the one try's share is all of it, so no try expires during the test. */
const UPSTREAM_TIMEOUT = 30_000
/** Queries per client: fewer than RESET_LIMIT, so resetting them all is not abuse. */
const N = 20

function cancel(): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(H2Error.CANCEL)
  return b
}

test('DoH: the upstream queries of streams the client resets, or of a connection it closes, leave the pending table at once, not at the upstream timeout', async (t: TestContext) => {
  const started: { stop?: () => Promise<void> } = {}
  t.after(async () => await started.stop?.())
  const w = await encryptedWorld(t)
  w.stub.silent = true
  const [doh, metricsPort] = [await releasedPort(), await releasedPort()]
  const file = writeConfigFile(w, {
    proxy: {
      'doh-listen': [`127.0.0.1:${doh}`],
      'tls-cert': w.cert,
      'tls-key': w.key,
      'server-name': SERVER_NAME,
      'metrics-listen': `127.0.0.1:${metricsPort}`,
      'upstream-timeout': UPSTREAM_TIMEOUT
    }
  })
  const dns = await startRole(t, 'dns', file)
  started.stop = dns.stop
  const metrics = async (): Promise<Map<string, number>> => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
    const m = new Map<string, number>()
    for (const line of text.split('\n')) {
      const at = line.lastIndexOf(' ')
      if (!line.startsWith('#') && at > 0) m.set(line.slice(0, at), Number(line.slice(at + 1)))
    }
    return m
  }
  const PENDING = 'filterd_dns_upstream_pending{process="dns-0"}'
  const WITHDRAWN = 'filterd_dns_upstream_withdrawn_total{process="dns-0"}'
  const TIMEOUTS = 'filterd_dns_upstream_timeouts_total{process="dns-0"}'
  // Opens N streams on a new connection and waits until their queries are upstream, and counted pending.
  const askN = async (): Promise<RawClient> => {
    const c = await RawClient.open(doh)
    const before = w.stub.seen.length
    for (let i = 0; i < N; i++)
      c.frame(FrameType.HEADERS, Flag.END_STREAM | Flag.END_HEADERS, 2 * i + 1, getBlock(dnsPath(i)))
    await until('the queries upstream', () => w.stub.seen.length >= before + N, 30_000, 20)
    await until('the queries pending on /metrics', async () => (await metrics()).get(PENDING) === N, 30_000, 250)
    return c
  }
  const settled = async (withdrawn: number): Promise<Map<string, number>> => {
    let m = new Map<string, number>()
    await until(
      `no query pending, ${withdrawn} withdrawn`,
      async () => (m = await metrics()).get(PENDING) === 0 && m.get(WITHDRAWN) === withdrawn,
      3 * UPSTREAM_TIMEOUT,
      250
    )
    return m
  }

  const resetting = await askN()
  for (let i = 0; i < N; i++) resetting.frame(FrameType.RST_STREAM, 0, 2 * i + 1, cancel())
  let m = await settled(N)
  // Gone because they were withdrawn: no try timed out (each had the whole budget, 30 s, to wait).
  t.assert.strictEqual(m.get(TIMEOUTS), 0, 'the pending entries left by withdrawal, not by timeout')
  // The connection whose streams were reset serves on.
  w.stub.silent = false
  resetting.frame(FrameType.HEADERS, Flag.END_STREAM | Flag.END_HEADERS, 2 * N + 1, getBlock(dnsPath(99)))
  const headers = await resetting.frameOf(FrameType.HEADERS, 2 * N + 1)
  t.assert.strictEqual(headers.payload[0], 0x88, ':status 200 (HPACK static index 8)')
  await resetting.frameOf(FrameType.DATA, 2 * N + 1)
  resetting.sock.destroy()
  w.stub.silent = true

  const closing = await askN()
  closing.sock.destroy()
  m = await settled(2 * N)
  t.assert.strictEqual(m.get(TIMEOUTS), 0, 'the pending entries left by withdrawal, not by timeout')
})
