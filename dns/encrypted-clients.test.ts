// Conformance of the DoT and DoH listeners with real clients nobody here wrote: kdig (+tls,
// +tls-sni, +https, +https-get; Debian's knot-dnsutils), dig (+tls, +https; bind9-dnsutils) and
// curl --doh-url, each with a blocked name (the block-page address) and a forwarded one (the
// upstream's answer), with and without a client ID in the server name or the path, and each with
// a client ID that decides over the source address and an unknown ID that is refused.
import { test, type TestContext } from 'node:test'
import { once } from 'node:events'
import { createServer } from 'node:http'
import { BLOCK_V4 } from '../engine/testing/dns.js'
import { releasedPort } from '../engine/testing/ports.js'
import { encryptedServer, encryptedWorld, needsTool, run, SERVER_NAME } from './testing/encrypted.js'

const FORWARDED = '203.0.113.7'

async function setup(t: TestContext): Promise<{ dot: number; doh: number }> {
  const w = await encryptedWorld(t, {
    records: { 'www.example.org': { a: [FORWARDED] }, 'social.example': { a: [FORWARDED] } }
  })
  const s = await encryptedServer(t, w)
  return { dot: s.transports.dot[0]!, doh: s.transports.doh[0]! }
}

// Asks with `args` for a blocked and a forwarded name, and checks both answers (`+short` output).
async function checkBoth(t: TestContext, cmd: string, args: string[]): Promise<void> {
  for (const [name, want] of [
    ['casino.example', BLOCK_V4],
    ['www.example.org', FORWARDED]
  ] as const) {
    const r = await run(cmd, [...args, name, 'A', '+short'])
    t.assert.ok(r !== undefined)
    t.assert.strictEqual(r.out.trim().split('\n').at(-1), want, `${cmd} ${args.join(' ')} ${name}: ${r.out}`)
  }
}

test('kdig +tls, with and without a client ID in the server name (+tls-sni)', async (t: TestContext) => {
  if (!(await needsTool(t, 'kdig', 'knot-dnsutils'))) return
  const { dot } = await setup(t)
  await checkBoth(t, 'kdig', ['@127.0.0.1', '-p', String(dot), '+tls'])
  await checkBoth(t, 'kdig', ['@127.0.0.1', '-p', String(dot), `+tls-sni=kid1.${SERVER_NAME}`])
  await checkBoth(t, 'kdig', ['@127.0.0.1', '-p', String(dot), `+tls-sni=${SERVER_NAME}`])
})

test('kdig +https (POST) and +https-get, on /dns-query and /dns-query/{client-id}', async (t: TestContext) => {
  if (!(await needsTool(t, 'kdig', 'knot-dnsutils'))) return
  const { doh } = await setup(t)
  await checkBoth(t, 'kdig', ['@127.0.0.1', '-p', String(doh), '+https'])
  await checkBoth(t, 'kdig', ['@127.0.0.1', '-p', String(doh), '+https-get'])
  await checkBoth(t, 'kdig', ['@127.0.0.1', '-p', String(doh), '+https=/dns-query/kid1'])
  await checkBoth(t, 'kdig', ['@127.0.0.1', '-p', String(doh), '+https-get', '+https=/dns-query/kid1'])
})

// kdig's answer to one query: its status line's RCODE and the `+short`-style addresses of the answer.
async function ask(args: string[], name: string, type = 'A'): Promise<{ rcode: string; out: string }> {
  const r = await run('kdig', [...args, name, type])
  if (r === undefined) throw new Error('kdig did not run')
  return { rcode: /status: ([A-Z]+)/.exec(r.out)?.[1] ?? '', out: r.out }
}

test('the client ID decides over the source address, and an unknown ID is refused (kdig DoT and DoH)', async (t: TestContext) => {
  if (!(await needsTool(t, 'kdig', 'knot-dnsutils'))) return
  const { dot, doh } = await setup(t)
  const tls = ['@127.0.0.1', '-p', String(dot), '+tls']
  const https = ['@127.0.0.1', '-p', String(doh)]
  // 127.0.0.1 is alice's, who lets social.example through; kid, named by its ID, blocks it.
  t.assert.match((await ask(tls, 'social.example')).out, new RegExp(FORWARDED.replaceAll('.', '\\.')))
  for (const args of [
    [...tls, `+tls-sni=kid1.${SERVER_NAME}`],
    [...https, '+https=/dns-query/kid1'],
    [...https, '+https-get', '+https=/dns-query/KID1']
  ]) {
    const a = await ask(args, 'social.example')
    t.assert.strictEqual(a.rcode, 'NOERROR', a.out)
    t.assert.match(a.out, new RegExp(BLOCK_V4.replaceAll('.', '\\.')), a.out)
  }
  // An ID no user holds: REFUSED (proxy.unknown-client-id: refuse, the default), over both transports.
  for (const args of [
    [...tls, `+tls-sni=nobody.${SERVER_NAME}`],
    [...https, '+https=/dns-query/nobody']
  ]) {
    t.assert.strictEqual((await ask(args, 'www.example.org')).rcode, 'REFUSED')
  }
})

test('DDR: _dns.resolver.arpa SVCB names the DoT and DoH listeners under the server name', async (t: TestContext) => {
  if (!(await needsTool(t, 'kdig', 'knot-dnsutils'))) return
  // DDR names the configured ports, so they are fixed here (a listener on port 0 is left out of it).
  const [dot, doh] = [await releasedPort(), await releasedPort()]
  const w = await encryptedWorld(t)
  await encryptedServer(t, w, { 'dot-listen': [`127.0.0.1:${dot}`], 'doh-listen': [`127.0.0.1:${doh}`] })
  const a = await ask(['@127.0.0.1', '-p', String(dot), '+tls'], '_dns.resolver.arpa', 'SVCB')
  t.assert.strictEqual(a.rcode, 'NOERROR', a.out)
  t.assert.match(a.out, new RegExp(`SVCB\\s+1 ${SERVER_NAME.replaceAll('.', '\\.')}\\. alpn=dot port=${dot}`), a.out)
  t.assert.match(a.out, new RegExp(`SVCB\\s+2 ${SERVER_NAME.replaceAll('.', '\\.')}\\. alpn=h2 port=${doh} `), a.out)
})

test('dig +tls and dig +https (POST and GET)', async (t: TestContext) => {
  if (!(await needsTool(t, 'dig', 'bind9-dnsutils'))) return
  const { dot, doh } = await setup(t)
  await checkBoth(t, 'dig', ['@127.0.0.1', '-p', String(dot), '+tls'])
  await checkBoth(t, 'dig', ['@127.0.0.1', '-p', String(doh), '+https'])
  await checkBoth(t, 'dig', ['@127.0.0.1', '-p', String(doh), '+https-get'])
  await checkBoth(t, 'dig', ['@127.0.0.1', '-p', String(doh), '+https=/dns-query/kid1'])
})

// dig's answer to one query: its status line's RCODE and the whole output.
async function dig(args: string[], name: string): Promise<{ rcode: string; out: string }> {
  const r = await run('dig', [...args, name, 'A'])
  if (r === undefined) throw new Error('dig did not run')
  return { rcode: /status: ([A-Z]+)/.exec(r.out)?.[1] ?? '', out: r.out }
}

// dig 9.18 sends no server name (SNI) over DoT, not even with +tls-hostname (tried: the query was
// judged by its source address), so it names a client ID in the DoH path only.
test('dig: a client ID in the DoH path decides over the source address; an unknown ID is refused', async (t: TestContext) => {
  if (!(await needsTool(t, 'dig', 'bind9-dnsutils'))) return
  const w = await encryptedWorld(t, { records: { 'social.example': { a: [FORWARDED] } } })
  const s = await encryptedServer(t, w)
  const [dot, doh] = [s.transports.dot[0]!, s.transports.doh[0]!]
  // +https-get=PATH, not +https=PATH +https-get: a later +https-get puts the default path back.
  const https = (path: string, method = 'https'): string[] => ['@127.0.0.1', '-p', String(doh), `+${method}=${path}`]
  const forwarded = new RegExp(`\\sA\\s+${FORWARDED.replaceAll('.', '\\.')}`)
  const blocked = new RegExp(`\\sA\\s+${BLOCK_V4.replaceAll('.', '\\.')}`)
  // 127.0.0.1 is alice's, who lets social.example through; kid, named by its ID, blocks it.
  for (const args of [
    ['@127.0.0.1', '-p', String(dot), '+tls'],
    https('/dns-query'),
    https('/dns-query', 'https-get')
  ]) {
    const a = await dig(args, 'social.example')
    t.assert.strictEqual(a.rcode, 'NOERROR', a.out)
    t.assert.match(a.out, forwarded, a.out)
  }
  for (const args of [https('/dns-query/kid1'), https('/dns-query/kid1', 'https-get')]) {
    const a = await dig(args, 'social.example')
    t.assert.strictEqual(a.rcode, 'NOERROR', a.out)
    t.assert.match(a.out, blocked, a.out)
  }
  // An ID no user holds: REFUSED (proxy.unknown-client-id: refuse, the default).
  for (const args of [https('/dns-query/nobody'), https('/dns-query/nobody', 'https-get')]) {
    const a = await dig(args, 'www.example.org')
    t.assert.strictEqual(a.rcode, 'REFUSED', a.out)
  }
})

test('curl --doh-url: blocked and forwarded names, a client ID in the path, an unknown ID', async (t: TestContext) => {
  if (!(await needsTool(t, 'curl', 'curl'))) return
  const w = await encryptedWorld(t, {
    records: { 'www.example.org': { a: ['127.0.0.1'] }, 'social.example': { a: ['127.0.0.1'] } }
  })
  const s = await encryptedServer(t, w, {}, { blockpage: ['127.0.0.2'] })
  // Two web servers on one port: 127.0.0.1 the forwarded site, 127.0.0.2 the block page.
  const site = createServer((_req, res) => res.end('site'))
  site.listen(0, '127.0.0.1')
  await once(site, 'listening')
  const port = (site.address() as { port: number }).port
  const page = createServer((_req, res) => res.end('blockpage'))
  page.listen(port, '127.0.0.2')
  await once(page, 'listening')
  t.after(() => {
    site.close()
    page.close()
  })
  const doh = s.transports.doh[0]!
  const curl = async (path: string, name: string): Promise<{ code: number; out: string } | undefined> =>
    await run('curl', [
      '-s',
      '--doh-insecure',
      '--doh-url',
      `https://127.0.0.1:${doh}${path}`,
      `http://${name}:${port}/`
    ])
  for (const path of ['/dns-query', '/dns-query/kid1']) {
    t.assert.strictEqual((await curl(path, 'casino.example'))?.out, 'blockpage')
    t.assert.strictEqual((await curl(path, 'www.example.org'))?.out, 'site')
  }
  // 127.0.0.1 is alice's, who lets social.example through; kid, named by its ID, blocks it.
  t.assert.strictEqual((await curl('/dns-query', 'social.example'))?.out, 'site')
  t.assert.strictEqual((await curl('/dns-query/kid1', 'social.example'))?.out, 'blockpage')
  // An ID no user holds is refused: curl cannot resolve the name (exit 6, CURLE_COULDNT_RESOLVE_HOST).
  const unknown = await curl('/dns-query/nobody', 'www.example.org')
  t.assert.strictEqual(unknown?.code, 6, unknown?.out)
  t.assert.strictEqual(unknown.out, '')
})
