/**
 * Strict decoding of the credentials both APIs accept (engine/auth/credentials.ts): one secret has one
 * spelling. Node's base64 decoder skips characters it does not know and stray bits, and scrypt as node runs
 * it gives a secret with a trailing NUL the digest of the secret without it, so a lenient reader let
 * `secret\0` and `<base64>!!` in; the API tests (api/auth.test.ts, catapi/credentials.test.ts) show it
 * over sockets.
 */
import { test, type TestContext } from 'node:test'
import { parseBasic, parseBasicOrBearer, parseBearer } from './credentials.js'

const basic = (text: string): string => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`

test('Basic credentials in canonical base64 and UTF-8 are read, the id ending at the first colon', (t: TestContext) => {
  t.assert.deepStrictEqual(parseBasic(basic('acme:s3cret')), { id: 'acme', secret: 's3cret' })
  t.assert.deepStrictEqual(parseBasic(basic('acme:a:b')), { id: 'acme', secret: 'a:b' })
  t.assert.deepStrictEqual(parseBasic(basic('acme:пароль')), { id: 'acme', secret: 'пароль' })
  t.assert.deepStrictEqual(parseBasic(`bAsIc   ${Buffer.from('acme:x').toString('base64')}`), {
    id: 'acme',
    secret: 'x'
  })
})

test('Basic credentials with a control character, invalid UTF-8 or non-canonical base64 are refused', (t: TestContext) => {
  const b64 = Buffer.from('acme:s3cret').toString('base64')
  const refused = [
    basic('acme:s3cret\0'),
    basic('acme:s3cret\n'),
    basic('acme:\0s3cret'),
    basic('ac\x01me:s3cret'),
    basic('acme:s3cret\x7f'),
    basic('acme:s3cret\u0085'),
    `Basic ${Buffer.concat([Buffer.from('acme:'), Buffer.from([0xff, 0xfe])]).toString('base64')}`,
    `Basic ${b64}!!`,
    `Basic ${b64}A`,
    `Basic ${b64.slice(0, -1)}`,
    `Basic ${b64.replace(/=+$/, '')}`,
    `Basic ${b64}\0`,
    `Basic ${b64.slice(0, 4)} ${b64.slice(4)}`,
    'Basic YWNtZTp4eQ=',
    'Basic YWNtZTp4eR==',
    'Basic ',
    'Basic',
    'Basicx',
    basic(':s3cret'),
    basic('acme')
  ]
  for (const header of refused) t.assert.strictEqual(parseBasic(header), undefined, JSON.stringify(header))
})

test('a Bearer token must be a token68: no control character or space', (t: TestContext) => {
  t.assert.deepStrictEqual(parseBearer('Bearer acme.s3cret'), { id: 'acme', secret: 's3cret' })
  t.assert.deepStrictEqual(parseBasicOrBearer('bearer a.b.c'), { id: 'a.b', secret: 'c' })
  for (const header of [
    'Bearer acme.s3cret\0',
    'Bearer acme.s3\x01cret',
    'Bearer acme. s3cret',
    'Bearer acme.',
    'Bearer .s3cret',
    'Bearer acme'
  ]) {
    t.assert.strictEqual(parseBearer(header), undefined, JSON.stringify(header))
  }
})
