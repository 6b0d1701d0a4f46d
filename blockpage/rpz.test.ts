// The block page explains a name an RPZ feed blocked (rpz-feeds): it reads the feeds from the store
// (where the host's dns role keeps them) and runs the DNS server's policy, so the page says a provider's block list did it, or names the
// category the feed is mapped to.
import { test, type TestContext } from 'node:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadTaxonomy, CATEGORY } from '../engine/categories/index.js'
import { tempDir } from '../engine/testing/temp.js'
import { CONF_DIR, get, startFixture, visibleText } from './testing/fixture.js'
import { reasonText } from './messages.js'

test('the block page explains an RPZ feed block, by its category when the feed has one', async (t: TestContext) => {
  const dir = tempDir(t, 'filterd-bp-rpz-')
  const soa = (origin: string): string => `$ORIGIN ${origin}.\n@ 60 SOA ns. admin. 1 60 60 600 60\n`
  writeFileSync(join(dir, 'plain.zone'), soa('plain.rpz') + 'listed.example CNAME .\n')
  writeFileSync(join(dir, 'cat.zone'), soa('cat.rpz') + 'casino.example CNAME .\n')
  const f = await startFixture(t, {
    sections: [
      'rpz-feeds:',
      '  feeds:',
      `    - { zone: plain.rpz, file: ${join(dir, 'plain.zone')}, action: block }`,
      `    - { zone: cat.rpz, file: ${join(dir, 'cat.zone')}, action: block, category: ${CATEGORY.GAMBLING} }`
    ]
  })
  const plain = await get(f.bp.port, { host: 'listed.example' })
  t.assert.strictEqual(plain.status, 200)
  t.assert.ok(visibleText(plain.body).includes(reasonText('ru', 'rpz')), visibleText(plain.body))
  const cat = await get(f.bp.port, { host: 'casino.example' })
  const gambling = loadTaxonomy(CONF_DIR, 'ru').name(CATEGORY.GAMBLING)!
  t.assert.ok(visibleText(cat.body).includes(gambling), `the category is named: ${visibleText(cat.body)}`)
  const open = await get(f.bp.port, { host: 'open.example' })
  t.assert.ok(!visibleText(open.body).includes(reasonText('ru', 'rpz')), 'a name no feed lists is not explained as one')
})
