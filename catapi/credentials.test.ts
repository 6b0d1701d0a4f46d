/**
 * The categorization API's registered listener decodes HTTP Basic strictly (engine/auth/credentials.ts):
 * a secret with a trailing NUL, or base64 with junk after it, was let in by the lenient reader.
 */
import { test, type TestContext } from 'node:test'
import { needsUws } from '../engine/testing/uws.js'
import { addClient, get, startHarness } from './testing/harness.js'

for (const impl of ['uws', 'node'] as const) {
  test(
    `HTTP Basic with a control character in the secret or non-canonical base64 gets 401 (${impl})`,
    needsUws(impl),
    async (t: TestContext) => {
      const h = await startHarness(t, { impl })
      const good = await addClient(h.store, 'acme', 's3cret')
      const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64')
      for (const authorization of [
        `Basic ${b64('acme:s3cret\0')}`,
        `Basic ${b64('acme:s3cret')}!!`,
        `Basic ${b64('acme:s3cret\n')}`,
        `Basic ${b64('acme:s3cret').replace(/=+$/, '')}`
      ]) {
        const r = await get(h.registered, '/catgroups', { Authorization: authorization })
        t.assert.strictEqual(r.status, 401, authorization)
        t.assert.strictEqual((JSON.parse(r.body) as { error: { code: string } }).error.code, 'CATAPI_UNAUTHORIZED')
      }
      t.assert.strictEqual((await get(h.registered, '/catgroups', { Authorization: good })).status, 200)
    }
  )
}
