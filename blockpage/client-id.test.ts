// A subscriber known by its client ID, browsing from an address that belongs to no user, as a new user
// would try it: curl resolves the name over DoH with the ID in the path (the DNS role, one process)
// and asks the block page (the blockpage role, another process on the same store) from the same
// address. The page must give the verdict the DNS answer gave: the ID's user's, not the address's.
import { test, type TestContext } from 'node:test'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { CATEGORY } from '../engine/categories/index.js'
import { startRole } from '../engine/testing/daemon.js'
import { addUser, world, writeConfigFile } from '../engine/testing/dns.js'
import { httpRequest } from '../engine/testing/http.js'
import { releasedPort } from '../engine/testing/ports.js'
import { hasOpenssl, OPENSSL_MISSING, writeTestCertificate } from '../engine/testing/tls.js'
import { DEFAULT_TEMPLATES_DIR } from './templates.js'
import { CONF_DIR, visibleText } from './testing/fixture.js'

const SERVER_NAME = 'dns.test'

/** curl's exit code and output, or undefined when curl is not installed. */
async function curl(args: string[]): Promise<{ code: number; out: string } | undefined> {
  return await new Promise((resolve) => {
    execFile('curl', args, { timeout: 20_000 }, (err, stdout) => {
      const code = (err as { code?: unknown } | null)?.code
      if (code === 'ENOENT') resolve(undefined)
      else resolve({ code: typeof code === 'number' ? code : err === null ? 0 : 1, out: stdout })
    })
  })
}

for (const dispatch of ['inline', 'pool'] as const) {
  test(`the block page judges a client-ID subscriber as its DNS answer did (two processes, dispatch ${dispatch})`, async (t: TestContext) => {
    if (!hasOpenssl()) {
      t.skip(OPENSSL_MISSING)
      return
    }
    // social.example and chat.example are social networks; 127.0.0.1 belongs to nobody (server defaults:
    // nothing blocked); the user kid, known only by the client ID kid1, blocks social networks.
    const w = await world(t, {
      cats: { 'social.example': [CATEGORY.SOCIAL_NETWORKS], 'chat.example': [CATEGORY.SOCIAL_NETWORKS] }
    })
    await addUser(w.store, { name: 'kid', client_ids: ['kid1'], filter: [CATEGORY.SOCIAL_NETWORKS] })
    const { cert, key } = writeTestCertificate(w.dir, SERVER_NAME)
    const [doh, page] = [await releasedPort(), await releasedPort()]
    const file = writeConfigFile(w, {
      blockpage: ['127.0.0.1'],
      proxy: {
        dispatch,
        'doh-listen': [`127.0.0.1:${doh}`],
        'tls-cert': cert,
        'tls-key': key,
        'server-name': SERVER_NAME
      },
      datafiles: { cats: CONF_DIR, language: 'en' },
      sections: {
        blockpage: {
          listen: `127.0.0.1:${page}`,
          templates: DEFAULT_TEMPLATES_DIR,
          log: '-',
          pid: join(w.dir, 'blockpage.pid')
        }
      }
    })
    await startRole(t, 'dns', file)
    await startRole(t, 'blockpage', file)

    const browse = async (name: string, accept = 'text/html'): Promise<{ code: number; out: string }> => {
      const r = await curl([
        '-s',
        '-4',
        '--doh-insecure',
        '--doh-url',
        `https://127.0.0.1:${doh}/dns-query/kid1`,
        '-H',
        `Accept: ${accept}`,
        '-H',
        'Accept-Language: en',
        '-w',
        '\n%{http_code}',
        `http://${name}:${page}/`
      ])
      if (r === undefined) throw new Error('curl is not installed (Debian: curl)')
      return r
    }

    // The DNS answer (kid's: blocked by category) brought curl to the block page, which says the same.
    const blocked = await browse('social.example')
    t.assert.strictEqual(blocked.code, 0, blocked.out)
    t.assert.match(blocked.out, /\n200$/, blocked.out)
    const text = visibleText(blocked.out)
    t.assert.match(text, /Social networks/, text)
    t.assert.match(text, /categories that are restricted/, text)
    t.assert.doesNotMatch(text, /no longer blocked/, text)
    // An image or a script of the blocked site gets the short answer of a block, not "retry".
    t.assert.match((await browse('social.example', 'image/png')).out, /^Blocked\n\n403$/)

    // The memory is of that address and that name: another address, or a name the ID was not answered
    // for, is judged by its address (nobody's: nothing blocked).
    const other = await httpRequest({
      port: page,
      headers: { host: 'social.example', accept: 'text/html', 'accept-language': 'en' },
      localAddress: '127.0.0.2'
    })
    t.assert.match(visibleText(other.body), /no longer blocked/)
    const unasked = await httpRequest({
      port: page,
      headers: { host: 'chat.example', accept: 'text/html', 'accept-language': 'en' }
    })
    t.assert.match(visibleText(unasked.body), /no longer blocked/)

    // The page judges now, as the ID's user: once kid lets social networks through, it says so.
    await w.store.write((wr) => {
      wr.putUser({ ...w.store.getUser('kid')!, filter: [] })
    })
    const lifted = await httpRequest({
      port: page,
      headers: { host: 'social.example', accept: 'text/html', 'accept-language': 'en' }
    })
    t.assert.match(visibleText(lifted.body), /no longer blocked/)
  })
}
