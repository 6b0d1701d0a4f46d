// GET /check/{domain}: an RPZ feed (rpz-feeds) decides in /check as in the DNS server (step rpz, the
// trigger as matched, the feed's category), after the global lists and before the user's.
import { test, type TestContext } from 'node:test'
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { call, startApi } from './testing/fixtures.js'

test('check: the RPZ feed step, with its trigger, its category and the client address of CLIENT-IP', async (t: TestContext) => {
  const dir = mkdtempSync(join(tmpdir(), 'filterd-rpz-check-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const zone = join(dir, 'feed.rpz.zone')
  writeFileSync(
    zone,
    '$ORIGIN feed.rpz.\n@ 60 SOA ns. admin. 1 60 60 600 60\n*.malware.example CNAME .\nwhite.example CNAME .\n' +
      '32.7.0.0.10.rpz-client-ip CNAME .\n'
  )
  const api = await startApi({
    configYaml: `rpz-feeds:\n  feeds:\n    - { zone: feed.rpz, file: ${zone}, category: 40 }`
  })
  t.after(() => api.close())
  await call(api.base, 'PUT', '/users/kid', { ip: ['10.0.0.1'], whitelist: ['www.malware.example'] })
  await call(api.base, 'PUT', '/whitelist/', ['white.example'])
  const at = async (name: string, ip: string): Promise<unknown[]> => {
    const r = await call(api.base, 'GET', `/check/${name}?ip=${ip}`)
    const b = r.body as Record<string, unknown>
    return [b.action, b.step, b.matched, b.blockedCategories]
  }
  t.assert.deepStrictEqual(await at('www.malware.example', '10.0.0.1'), ['block', 'rpz', '*.malware.example', [40]])
  t.assert.deepStrictEqual(await at('white.example', '10.0.0.1'), ['forward', 'global-whitelist', 'white.example', []])
  t.assert.deepStrictEqual(await at('fine.example', '10.0.0.7'), ['block', 'rpz', 'client-ip 10.0.0.7', [40]])
  t.assert.deepStrictEqual(await at('fine.example', '10.0.0.1'), ['forward', 'none', null, []])
})
