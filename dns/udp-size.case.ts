// Answers over UDP never exceed what the client advertised (RFC 1035 §4.2.1, RFC 6891): an
// upstream answer larger than that goes out truncated with TC, the client asks again over TCP and
// gets all of it; and the EDNS size filterd advertises upstream is capped (proxy.upstream-edns-size).
import { test, type TestContext } from 'node:test'
import dnsPacket from 'dns-packet'
import { DnsMetrics } from './metrics.js'
import { dig, digMissing, query, server, udpAsk, world } from './testing/harness.js'

// 'big.example' comes from an upstream that ignores the EDNS size: 60,000 bytes over UDP and
// 64,000 over TCP. 'polite.example' from one that answers TC over UDP and 64,000 bytes over TCP.
const stub = { large: { 'big.example': { udp: 60_000, tcp: 64_000 }, 'polite.example': { udp: 0, tcp: 64_000 } } }

interface DigAnswer {
  tc: boolean
  size: number
  answers: number
}

async function digTxt(t: TestContext, port: number, name: string, flags: string[]): Promise<DigAnswer | undefined> {
  const out = await dig(['@127.0.0.1', '-p', String(port), '+tries=1', '+time=5', ...flags, name, 'TXT'])
  if (out === undefined) {
    digMissing(t)
    return undefined
  }
  const header = /;; flags:([^;]*);.*ANSWER: (\d+)/.exec(out)
  const size = /;; MSG SIZE\s+rcvd: (\d+)/.exec(out)
  t.assert.ok(header !== null && size !== null, `dig ${flags.join(' ')} ${name}:\n${out}`)
  return { tc: header[1]!.split(' ').includes('tc'), size: Number(size[1]), answers: Number(header[2]) }
}

/** Registers the UDP size cases; udp-size.native.test.ts and udp-size.dgram.test.ts run them on each UDP I/O path. */
export function udpSizeSuite(): void {
  test("an upstream answer larger than the client's UDP size is sent truncated with TC (512 without EDNS); over TCP it goes out whole", async (t: TestContext) => {
    const w = await world(t, { stub })
    const metrics = new DnsMetrics()
    const s = await server(t, w, { metrics })
    const seen: string[] = []
    for (const [flags, limit] of [
      [['+bufsize=512'], 512],
      [['+bufsize=1232'], 1232],
      [['+bufsize=4096'], 4096],
      [['+noedns'], 512],
      [['+bufsize=100'], 512]
    ] as const) {
      const a = await digTxt(t, s.port, 'big.example', [...flags, '+ignore'])
      if (a === undefined) return
      t.assert.ok(a.tc, `${flags.join(' ')}: TC set`)
      t.assert.ok(a.size <= limit, `${flags.join(' ')}: ${a.size} bytes, limit ${limit}`)
      t.assert.strictEqual(a.answers, 0, `${flags.join(' ')}: header and question only`)
      seen.push(`${flags.join(' ')}: TC, ${a.size} bytes`)
    }
    t.assert.strictEqual(metrics.udpTruncated, 5)
    // A client that allows the whole answer gets it over UDP.
    // (dig sends 1232 for a +bufsize above about 32,000, so this one is asked directly.)
    const roomy = await udpAsk(s.port, query('big.example', 'TXT', { edns: { udpPayloadSize: 65000 } }))
    t.assert.ok(!dnsPacket.decode(roomy).flag_tc && roomy.length > 59_000, `EDNS size 65000: ${roomy.length} bytes`)
    // Over TCP the whole answer (the TCP client's query went upstream over UDP, answered untruncated).
    const tcp = await digTxt(t, s.port, 'big.example', ['+tcp'])
    t.assert.ok(tcp !== undefined && !tcp.tc && tcp.size > 59_000 && tcp.answers > 50, `+tcp: ${JSON.stringify(tcp)}`)
    // Without +ignore, dig sees TC and asks again over TCP itself: the whole answer.
    const retried = await digTxt(t, s.port, 'big.example', ['+bufsize=1232'])
    t.assert.ok(
      retried !== undefined && !retried.tc && retried.size > 59_000,
      `retry over TCP: ${JSON.stringify(retried)}`
    )
    t.diagnostic(`a ${roomy.length}-byte upstream answer over UDP: ${seen.join('; ')}; over TCP ${tcp.size} bytes`)
  })

  test("the truncated answer keeps the client's ID and question, with an OPT only when the query had one", async (t: TestContext) => {
    const w = await world(t, { stub })
    const s = await server(t, w)
    const withEdns = await udpAsk(s.port, query('Big.Example', 'TXT', { id: 0x1234, edns: { udpPayloadSize: 1232 } }))
    const p = dnsPacket.decode(withEdns)
    t.assert.deepStrictEqual(
      [p.id, p.flag_tc, p.flag_qr, p.questions?.[0]?.name, p.answers?.length],
      [0x1234, true, true, 'Big.Example', 0]
    )
    t.assert.strictEqual(p.additionals?.filter((a) => a.type === 'OPT').length, 1)
    t.assert.ok(withEdns.length <= 1232)
    const plain = await udpAsk(s.port, query('big.example', 'TXT', { id: 0x4321 }))
    const q = dnsPacket.decode(plain)
    t.assert.deepStrictEqual([q.id, q.flag_tc, q.additionals?.length ?? 0], [0x4321, true, 0])
    t.assert.ok(plain.length <= 512)
  })

  test("a well-behaved upstream's TC answer is relayed over UDP, and a TCP client gets the whole answer upstream gives over TCP", async (t: TestContext) => {
    const w = await world(t, { stub })
    const s = await server(t, w)
    const udp = await digTxt(t, s.port, 'polite.example', ['+bufsize=1232', '+ignore'])
    if (udp === undefined) return
    t.assert.ok(udp.tc && udp.size <= 1232, `UDP: ${JSON.stringify(udp)}`)
    const tcp = await digTxt(t, s.port, 'polite.example', ['+tcp'])
    t.assert.ok(tcp !== undefined && !tcp.tc && tcp.size > 63_000, `+tcp: ${JSON.stringify(tcp)}`)
    t.assert.ok(w.stub.seenTcp.includes('polite.example/TXT'), 'asked upstream over TCP')
  })

  test("the EDNS size advertised upstream is the client's, at most proxy.upstream-edns-size (default 1232); a query without OPT stays without", async (t: TestContext) => {
    const w = await world(t)
    const s = await server(t, w)
    const sent = async (port: number, name: string, edns?: number): Promise<number> => {
      await udpAsk(port, query(name, 'A', edns === undefined ? {} : { edns: { udpPayloadSize: edns } }))
      return w.stub.ednsSizes[w.stub.seen.lastIndexOf(`${name}/A`)]!
    }
    t.assert.strictEqual(await sent(s.port, 'a.example', 4096), 1232)
    t.assert.strictEqual(await sent(s.port, 'b.example', 65535), 1232)
    t.assert.strictEqual(await sent(s.port, 'c.example', 800), 800)
    t.assert.strictEqual(await sent(s.port, 'd.example'), 0)
    const wide = await server(t, w, { proxy: { 'upstream-edns-size': 1400 } })
    t.assert.strictEqual(await sent(wide.port, 'e.example', 4096), 1400)
    t.assert.strictEqual(await sent(wide.port, 'f.example', 1300), 1300)
  })
}
