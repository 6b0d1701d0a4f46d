import { test, type TestContext } from 'node:test'
import { request } from 'node:https'
import { connect } from 'node:net'
import { once } from 'node:events'
import { hasOpenssl, OPENSSL_MISSING, writeTestCertificate } from '../engine/testing/tls.js'
import { makeStore, PAGE_ACCEPT, startFixture } from './testing/fixture.js'
import { startBlockPage } from './server.js'

test('with tls-listen set the block page also answers over HTTPS with the operator\'s certificate', { skip: hasOpenssl() ? false : OPENSSL_MISSING }, async (t: TestContext) => {
  const { dir, store, config } = await makeStore(t)
  const { cert, key } = writeTestCertificate(dir, 'blockpage.test')
  const bp = await startBlockPage({
    config: { ...config, blockpage: { ...config.blockpage, 'tls-listen': '127.0.0.1:0', 'tls-cert': cert, 'tls-key': key } },
    store
  })
  t.after(() => bp.close())
  t.assert.ok(bp.tlsPort !== undefined && bp.tlsPort > 0)
  t.assert.strictEqual(bp.endpoints.length, 2)
  const answer = await new Promise<{ status: number, body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: bp.tlsPort, path: '/x', rejectUnauthorized: false, headers: { Host: 'news.example', Accept: PAGE_ACCEPT, 'Accept-Language': 'en' } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => { body += c })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body }) })
    })
    req.on('error', reject)
    req.end()
  })
  t.assert.strictEqual(answer.status, 200)
  t.assert.match(answer.body, /href="https:\/\/news\.example\/x"/)
})

test('without tls-listen nothing listens for HTTPS, so a connection to that port is refused at once', async (t: TestContext) => {
  const { bp } = await startFixture(t)
  t.assert.strictEqual(bp.tlsPort, undefined)
  t.assert.deepStrictEqual(bp.endpoints, [`blockpage http 127.0.0.1:${bp.port}`])
  // A port the block page does not hold: the kernel answers RST, the browser shows its error without waiting.
  const probe = await startFixture(t)
  const free = probe.bp.port
  await probe.bp.close()
  const socket = connect(free, '127.0.0.1')
  const [err] = await once(socket, 'error') as [NodeJS.ErrnoException]
  t.assert.strictEqual(err.code, 'ECONNREFUSED')
})
