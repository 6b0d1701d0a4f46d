/**
 * The management API suite, run against each HTTP implementation (api-uws.test.ts, api-node.test.ts), over
 * real HTTP against the server the role runs. Named `.case.ts` so `node --test dist/` does not run it alone.
 */
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test, type TestContext } from 'node:test'
import { buildCats } from '../engine/testing/store.js'
import type { HttpImpl } from '../engine/http/index.js'
import type { Store } from '../engine/store/index.js'
import { httpRequest, type RawHttpResponse } from '../engine/testing/http.js'
import {
  addApiClient,
  call,
  errorOf,
  relayedFrom,
  startApi,
  type StartOptions,
  type StartedApi
} from './testing/fixtures.js'
import { ROUTES } from './routes/index.js'

/** A way of running the suite: `link` connects each fresh server's store (e.g. to a shared Redis). */
export interface ApiSuiteVariant {
  readonly name: string
  link(s: StartedApi): Promise<{ close(): Promise<void> }>
}

let variant: ApiSuiteVariant | undefined

async function start(t: TestContext, impl: HttpImpl, options: StartOptions = {}): Promise<StartedApi> {
  const s = await startApi({ ...options, impl, apiYaml: options.apiYaml ?? 'body-limit: 1024' })
  const linked = await variant?.link(s)
  t.after(async () => {
    await linked?.close()
    await s.close()
  })
  return s
}

interface UserBody {
  name: string
  safesearch: string
  safeyoutube: string
  status: string
  filter: number[]
  ip: string[]
  whitelist: string[]
  blacklist: string[]
  moved?: unknown
}

export function runApiSuite(impl: HttpImpl, how?: ApiSuiteVariant): void {
  variant = how
  describe(`management API over ${impl}${how === undefined ? '' : ` (${how.name})`}`, () => {
    test('PUT creates a user from the /userconfig/ defaults, and GET and HEAD see it', async (t: TestContext) => {
      const s = await start(t, impl)
      t.assert.strictEqual(
        (await call(s.base, 'PUT', '/userconfig/', { filter: [1, 2], safesearch: true })).status,
        200
      )
      const put = await call(s.base, 'PUT', '/users/alice', { ip: ['10.0.0.1'], whitelist: ['Good.Example.'] })
      t.assert.strictEqual(put.status, 200)
      t.assert.deepStrictEqual(put.body, {
        name: 'alice',
        safesearch: 'on',
        safeyoutube: 'off',
        status: 'enabled',
        filter: [1, 2],
        ip: ['10.0.0.1'],
        whitelist: ['good.example'],
        blacklist: [],
        moved: []
      })
      const get = await call(s.base, 'GET', '/users/alice')
      t.assert.strictEqual(get.status, 200)
      const { moved: _moved, ...user } = put.body as UserBody
      t.assert.deepStrictEqual(get.body, user)
      const head = await call(s.base, 'HEAD', '/users/alice')
      t.assert.strictEqual(head.status, 200)
      t.assert.strictEqual(head.text, '')
      t.assert.strictEqual(head.headers.get('content-length'), get.headers.get('content-length'))
      t.assert.strictEqual(head.headers.get('content-type'), 'application/json')
      const missing = await call(s.base, 'HEAD', '/users/nobody')
      t.assert.strictEqual(missing.status, 404)
      t.assert.strictEqual(missing.text, '')
    })

    test('PUT keeps the fields it leaves out and refuses a name that differs from the path', async (t: TestContext) => {
      const s = await start(t, impl)
      await call(s.base, 'PUT', '/users/u1', { filter: [40], safeyoutube: 'on', blacklist: ['bad.example'] })
      const r = await call(s.base, 'PUT', '/users/u1', { status: 'disabled' })
      const u = r.body as UserBody
      t.assert.deepStrictEqual(
        [u.status, u.filter, u.safeyoutube, u.blacklist],
        ['disabled', [40], 'on', ['bad.example']]
      )
      const bad = await call(s.base, 'PUT', '/users/u1', { name: 'u2' })
      t.assert.strictEqual(bad.status, 422)
      t.assert.deepStrictEqual(errorOf(bad).code, 'API_NAME_MISMATCH')
      t.assert.strictEqual(errorOf(bad).field, 'name')
    })

    test("POST on a new user's addresses, filter or list creates it (201); later POSTs answer 200", async (t: TestContext) => {
      const s = await start(t, impl)
      const first = await call(s.base, 'POST', '/users/a/ip/', ['10.0.0.1'])
      t.assert.strictEqual(first.status, 201)
      t.assert.deepStrictEqual(first.body, { ip: ['10.0.0.1'], moved: [] })
      const again = await call(s.base, 'POST', '/users/a/ip/', ['10.0.0.2', '10.0.0.1'])
      t.assert.strictEqual(again.status, 200)
      t.assert.deepStrictEqual(again.body, { ip: ['10.0.0.1', '10.0.0.2'], moved: [] })
      t.assert.strictEqual((await call(s.base, 'POST', '/users/b/filter/', [40])).status, 201)
      t.assert.strictEqual((await call(s.base, 'POST', '/users/b/filter/', [1])).status, 200)
      t.assert.strictEqual((await call(s.base, 'POST', '/users/c/blacklist/', ['x.example'])).status, 201)
      t.assert.strictEqual((await call(s.base, 'POST', '/users/c/whitelist/', ['y.example'])).status, 200)
      t.assert.strictEqual((await call(s.base, 'HEAD', '/users/c')).status, 200)
    })

    test('status and safesearch switches keep every other setting, and need an existing user', async (t: TestContext) => {
      const s = await start(t, impl)
      await call(s.base, 'PUT', '/users/sw', { ip: ['10.0.0.9'], filter: [1], blacklist: ['b.example'] })
      const off = await call(s.base, 'POST', '/users/sw/status/disabled')
      t.assert.strictEqual(off.status, 200)
      t.assert.deepStrictEqual(off.body, {
        name: 'sw',
        safesearch: 'off',
        safeyoutube: 'off',
        status: 'disabled',
        filter: [1],
        ip: ['10.0.0.9'],
        whitelist: [],
        blacklist: ['b.example']
      })
      t.assert.strictEqual(((await call(s.base, 'POST', '/users/sw/safesearch/on')).body as UserBody).safesearch, 'on')
      const on = (await call(s.base, 'POST', '/users/sw/status/enabled')).body as UserBody
      t.assert.deepStrictEqual([on.status, on.safesearch, on.filter, on.ip], ['enabled', 'on', [1], ['10.0.0.9']])
      t.assert.strictEqual(
        ((await call(s.base, 'POST', '/users/sw/safesearch/off')).body as UserBody).safesearch,
        'off'
      )
      const missing = await call(s.base, 'POST', '/users/ghost/status/disabled')
      t.assert.strictEqual(missing.status, 404)
      t.assert.strictEqual(errorOf(missing).code, 'API_USER_NOT_FOUND')
      t.assert.strictEqual(s.store.hasUser('ghost'), false)
    })

    test('assigning an address held by another user moves it, and the answer names the previous owner', async (t: TestContext) => {
      const s = await start(t, impl)
      await call(s.base, 'PUT', '/users/alice/ip/', ['10.0.0.1', '10.0.0.2'])
      const r = await call(s.base, 'PUT', '/users/bob/ip/', ['10.0.0.2'])
      t.assert.strictEqual(r.status, 200)
      t.assert.deepStrictEqual(r.body, { ip: ['10.0.0.2'], moved: [{ address: '10.0.0.2', from: 'alice' }] })
      t.assert.deepStrictEqual((await call(s.base, 'GET', '/users/alice/ip/')).body, ['10.0.0.1'])
      t.assert.strictEqual(s.store.userForAddress('10.0.0.2'), 'bob')
      const viaUser = await call(s.base, 'PUT', '/users/carol', { ip: ['10.0.0.1'] })
      t.assert.deepStrictEqual((viaUser.body as UserBody).moved, [{ address: '10.0.0.1', from: 'alice' }])
      t.assert.deepStrictEqual((await call(s.base, 'GET', '/active_users/')).body, ['bob', 'carol'])
    })

    test('addresses are normalised, and a CIDR prefix owns every address inside it', async (t: TestContext) => {
      const s = await start(t, impl)
      const r = await call(s.base, 'POST', '/users/net/ip/', [
        '2001:DB8:0:0:0:0:0:1',
        '10.1.0.0/16',
        '2001:db8:1::/48',
        '192.0.2.1'
      ])
      t.assert.deepStrictEqual((r.body as { ip: string[] }).ip, [
        '2001:db8::1',
        '10.1.0.0/16',
        '2001:db8:1::/48',
        '192.0.2.1'
      ])
      t.assert.strictEqual(s.store.userForAddress('10.1.200.3'), 'net')
      t.assert.strictEqual(s.store.userForAddress('2001:db8:1:ffff::5'), 'net')
      t.assert.strictEqual(s.store.userForAddress('10.2.0.1'), undefined)
      const exact = await call(s.base, 'PUT', '/users/one/ip/', ['10.1.2.3'])
      t.assert.deepStrictEqual(
        (exact.body as { moved: unknown[] }).moved,
        [],
        'an address inside a prefix is not a move'
      )
      t.assert.strictEqual(s.store.userForAddress('10.1.2.3'), 'one', 'the exact address wins over the prefix')
      t.assert.strictEqual((await call(s.base, 'DELETE', '/users/net/ip/10.1.0.0%2F16')).status, 204)
      t.assert.strictEqual(s.store.userForAddress('10.1.200.3'), undefined)
      t.assert.strictEqual((await call(s.base, 'DELETE', '/users/net/ip/2001:db8:1::/48')).status, 204)
      t.assert.strictEqual(s.store.userForAddress('2001:db8:1::5'), undefined)
      t.assert.strictEqual((await call(s.base, 'DELETE', '/users/net/ip/2001:0db8::1')).status, 204)
      t.assert.deepStrictEqual((await call(s.base, 'GET', '/users/net/ip/')).body, ['192.0.2.1'])
      const gone = await call(s.base, 'DELETE', '/users/net/ip/192.0.2.99')
      t.assert.strictEqual(gone.status, 404)
      t.assert.strictEqual(errorOf(gone).code, 'API_ENTRY_NOT_FOUND')
      const bad = await call(s.base, 'POST', '/users/net/ip/', ['10.0.0.1', '10.0.0.5/24'])
      t.assert.strictEqual(bad.status, 422)
      t.assert.deepStrictEqual(errorOf(bad).code, 'API_INVALID_ADDRESS')
      t.assert.strictEqual(errorOf(bad).field, '[1]')
      const badParam = await call(s.base, 'DELETE', '/users/net/ip/not-an-ip')
      t.assert.strictEqual(badParam.status, 400)
      t.assert.strictEqual(errorOf(badParam).field, 'ip')
    })

    test('deleting every address disconnects the user at once; its settings stay', async (t: TestContext) => {
      const s = await start(t, impl)
      await call(s.base, 'PUT', '/users/d', { ip: ['10.0.0.1', '10.8.0.0/16'], filter: [40] })
      t.assert.deepStrictEqual((await call(s.base, 'GET', '/active_users/')).body, ['d'])
      const del = await call(s.base, 'DELETE', '/users/d/ip/')
      t.assert.strictEqual(del.status, 204)
      t.assert.strictEqual(del.text, '')
      t.assert.strictEqual(s.store.userForAddress('10.0.0.1'), undefined)
      t.assert.strictEqual(s.store.userForAddress('10.8.1.1'), undefined)
      t.assert.deepStrictEqual((await call(s.base, 'GET', '/active_users/')).body, [])
      t.assert.deepStrictEqual((await call(s.base, 'GET', '/users/d')).body, {
        name: 'd',
        safesearch: 'off',
        safeyoutube: 'off',
        status: 'enabled',
        filter: [40],
        ip: [],
        whitelist: [],
        blacklist: []
      })
      t.assert.strictEqual((await call(s.base, 'PUT', '/users/d/ip/', [])).status, 200)
    })

    test('DELETE /users/{id} removes the user, its lists and its addresses', async (t: TestContext) => {
      const s = await start(t, impl)
      await call(s.base, 'PUT', '/users/gone', { ip: ['10.0.0.7'], blacklist: ['x.example'] })
      t.assert.strictEqual((await call(s.base, 'DELETE', '/users/gone')).status, 204)
      t.assert.strictEqual((await call(s.base, 'GET', '/users/gone')).status, 404)
      t.assert.strictEqual(s.store.userForAddress('10.0.0.7'), undefined)
      t.assert.deepStrictEqual(s.store.getList('gone', 'black'), [])
      const again = await call(s.base, 'DELETE', '/users/gone')
      t.assert.strictEqual(again.status, 404)
      t.assert.strictEqual(errorOf(again).code, 'API_USER_NOT_FOUND')
    })

    test('GET /users answers the first 100 users by name; start and stop select a range', async (t: TestContext) => {
      const s = await start(t, impl)
      const ids = Array.from({ length: 130 }, (_, i) => `user${String(i).padStart(3, '0')}`)
      await s.store.write((w) => {
        for (const id of [...ids].reverse()) w.putUser(s.store.newUser(id))
      })
      const first = (await call(s.base, 'GET', '/users')).body as UserBody[]
      t.assert.deepStrictEqual(
        first.map((u) => u.name),
        ids.slice(0, 100)
      )
      t.assert.deepStrictEqual(Object.keys(first[0]!).sort(), [
        'blacklist',
        'filter',
        'ip',
        'name',
        'safesearch',
        'safeyoutube',
        'status',
        'whitelist'
      ])
      const rest = (await call(s.base, 'GET', '/users?start=100&stop=200')).body as UserBody[]
      t.assert.deepStrictEqual(
        rest.map((u) => u.name),
        ids.slice(100)
      )
      t.assert.deepStrictEqual(
        ((await call(s.base, 'GET', '/users?start=5&stop=7')).body as UserBody[]).map((u) => u.name),
        ['user005', 'user006']
      )
      t.assert.deepStrictEqual(((await call(s.base, 'GET', '/users?start=120')).body as UserBody[]).length, 10)
      for (const [q, field] of [
        ['start=-1', 'start'],
        ['start=abc', 'start'],
        ['start=10&stop=5', 'stop'],
        ['stop=20000', 'stop']
      ] as const) {
        const r = await call(s.base, 'GET', `/users?${q}`)
        t.assert.strictEqual(r.status, 400, q)
        t.assert.deepStrictEqual([errorOf(r).code, errorOf(r).field], ['API_BAD_QUERY', field], q)
      }
    })

    test('search finds users by exact name or address and by name or address prefix with "*"', async (t: TestContext) => {
      const s = await start(t, impl)
      await call(s.base, 'PUT', '/users/alpha1/ip/', ['10.1.0.5'])
      await call(s.base, 'PUT', '/users/alpha2/ip/', ['10.2.0.0/16'])
      await call(s.base, 'PUT', '/users/beta/ip/', ['2001:db8::7'])
      const names = async (q: string): Promise<string[]> => {
        const r = await call(s.base, 'GET', `/search/${q}`)
        t.assert.strictEqual(r.status, 200, q)
        return (r.body as UserBody[]).map((u) => u.name)
      }
      t.assert.deepStrictEqual(await names('beta'), ['beta'])
      t.assert.deepStrictEqual(await names('alpha*'), ['alpha1', 'alpha2'])
      t.assert.deepStrictEqual(await names('10.1.0.5'), ['alpha1'])
      t.assert.deepStrictEqual(await names('10.2.3.4'), ['alpha2'], 'an address inside a prefix')
      t.assert.deepStrictEqual(await names('10.2.0.0%2F16'), ['alpha2'])
      t.assert.deepStrictEqual(await names('10.*'), ['alpha1', 'alpha2'])
      t.assert.deepStrictEqual(await names('2001:DB8:*'), ['beta'])
      t.assert.deepStrictEqual(await names('nobody'), [])
      t.assert.deepStrictEqual(await names('*'), ['alpha1', 'alpha2', 'beta'])
      for (const q of ['a*b', 'bad%20name']) {
        const r = await call(s.base, 'GET', `/search/${q}`)
        t.assert.strictEqual(r.status, 400, q)
        t.assert.strictEqual(errorOf(r).code, 'API_BAD_QUERY')
      }
    })

    test('/config/ and /userconfig/ answer their defaults and update only the fields given', async (t: TestContext) => {
      const s = await start(t, impl)
      const initial = s.config.common.safesearchredirect
      t.assert.deepStrictEqual(
        (await call(s.base, 'GET', '/config/')).body,
        { filter: [], safesearch: false, safeyoutube: false, safesearchredirect: initial },
        'the config file gives the initial redirect'
      )
      const put = await call(s.base, 'PUT', '/config/', {
        filter: [2, 1, 2],
        safesearchredirect: 'https://safe.example/'
      })
      t.assert.deepStrictEqual(put.body, {
        filter: [1, 2],
        safesearch: false,
        safeyoutube: false,
        safesearchredirect: 'https://safe.example/'
      })
      await call(s.base, 'PUT', '/config/', { safeyoutube: true })
      t.assert.deepStrictEqual((await call(s.base, 'GET', '/config')).body, {
        filter: [1, 2],
        safesearch: false,
        safeyoutube: true,
        safesearchredirect: 'https://safe.example/'
      })
      t.assert.deepStrictEqual(s.store.getServerDefaults().filter, [1, 2])
      t.assert.deepStrictEqual((await call(s.base, 'GET', '/userconfig/')).body, {
        filter: [],
        safesearch: false,
        safeyoutube: false
      })
      t.assert.deepStrictEqual((await call(s.base, 'PUT', '/config/', { safesearchredirect: '' })).body, {
        filter: [1, 2],
        safesearch: false,
        safeyoutube: true,
        safesearchredirect: ''
      })
      t.assert.deepStrictEqual((await call(s.base, 'PUT', '/userconfig/', { safeyoutube: true })).body, {
        filter: [],
        safesearch: false,
        safeyoutube: true
      })
      const cases: Array<[string, unknown, string, string | undefined]> = [
        ['/config/', {}, 'API_INVALID_BODY', 'body'],
        ['/config/', { filter: [1, 999] }, 'API_UNKNOWN_CATEGORY', 'filter[1]'],
        ['/config/', { safesearchredirect: 'ftp://x' }, 'API_INVALID_BODY', 'safesearchredirect'],
        ['/config/', { safesearch: 'yes' }, 'API_INVALID_BODY', 'safesearch'],
        ['/userconfig/', { safesearchredirect: '' }, 'API_INVALID_BODY', 'safesearchredirect'],
        ['/userconfig/', [], 'API_INVALID_BODY', 'body']
      ]
      for (const [path, body, code, field] of cases) {
        const r = await call(s.base, 'PUT', path, body)
        t.assert.strictEqual(r.status, 422, JSON.stringify(body))
        t.assert.deepStrictEqual([errorOf(r).code, errorOf(r).field], [code, field], JSON.stringify(body))
      }
    })

    test('/categorygroups/ and /categories/ answer the names of the configured language', async (t: TestContext) => {
      const s = await start(t, impl)
      const groups = await call(s.base, 'GET', '/categorygroups/')
      t.assert.deepStrictEqual(
        (groups.body as Array<{ group: string }>).map((g) => g.group),
        ['Adult content', 'Social', 'Service']
      )
      t.assert.deepStrictEqual((groups.body as Array<{ categories: unknown }>)[1]!.categories, {
        40: 'Social networks',
        41: 'Dating'
      })
      t.assert.deepStrictEqual((await call(s.base, 'GET', '/categories/')).body, {
        0: 'Non-Existing Domain',
        1: 'Pornography',
        2: 'Erotica and nudity',
        40: 'Social networks',
        41: 'Dating'
      })
      const ru = await startApi({ impl, language: 'ru' })
      t.after(() => ru.close())
      t.assert.strictEqual(
        ((await call(ru.base, 'GET', '/categories/')).body as Record<string, string>)['40'],
        'Социальные сети'
      )
    })

    test("?lang= answers the names in the language asked (the console's), and says which in Content-Language", async (t: TestContext) => {
      const s = await start(t, impl)
      const ru = await call(s.base, 'GET', '/categories/?lang=ru')
      t.assert.strictEqual(ru.status, 200)
      t.assert.strictEqual((ru.body as Record<string, string>)['40'], 'Социальные сети')
      t.assert.strictEqual(ru.headers.get('content-language'), 'ru')
      const groups = await call(s.base, 'GET', '/categorygroups/?lang=ru')
      t.assert.deepStrictEqual(
        (groups.body as Array<{ group: string }>).map((g) => g.group),
        ['Для взрослых', 'Общение', 'Служебные']
      )
      const en = await call(s.base, 'GET', '/categories/?lang=en')
      t.assert.strictEqual((en.body as Record<string, string>)['40'], 'Social networks')
      t.assert.strictEqual(en.headers.get('content-language'), 'en')
      const bad = await call(s.base, 'GET', '/categories/?lang=de')
      t.assert.strictEqual(bad.status, 400)
      t.assert.deepStrictEqual([errorOf(bad).code, errorOf(bad).field], ['API_BAD_QUERY', 'lang'])
      // An operator who ships one language only: the configured one answers, and says so.
      const only = await startApi({ impl })
      t.after(() => only.close())
      rmSync(join(only.dir, 'cats', 'catgroups.json'))
      const fallback = await call(only.base, 'GET', '/categories/?lang=ru')
      t.assert.strictEqual(fallback.status, 200)
      t.assert.strictEqual((fallback.body as Record<string, string>)['40'], 'Social networks')
      t.assert.strictEqual(fallback.headers.get('content-language'), 'en')
    })

    test('/site/{host} answers the database key that matched and its categories', async (t: TestContext) => {
      const s = await start(t, impl)
      t.assert.strictEqual((await call(s.base, 'GET', '/site/example.com')).status, 404, 'no database built yet')
      await buildCats(s.store, { 'example.com': [40], 'xn--e1ajeds9e.xn--p1ai': [1, 2] })
      t.assert.deepStrictEqual((await call(s.base, 'GET', '/site/WWW.Example.COM.')).body, {
        domain: 'example.com',
        categories: [40]
      })
      t.assert.deepStrictEqual((await call(s.base, 'GET', `/site/${encodeURIComponent('кремль.рф')}`)).body, {
        domain: 'xn--e1ajeds9e.xn--p1ai',
        categories: [1, 2]
      })
      const miss = await call(s.base, 'GET', '/site/unknown.example')
      t.assert.deepStrictEqual([miss.status, errorOf(miss).code], [404, 'API_SITE_NOT_FOUND'])
      const bad = await call(s.base, 'GET', '/site/bad..name')
      t.assert.deepStrictEqual([bad.status, errorOf(bad).code, errorOf(bad).field], [400, 'API_BAD_PARAM', 'host'])
    })

    test("a user's filter: GET, POST adds, PUT replaces, DELETE one and DELETE all", async (t: TestContext) => {
      const s = await start(t, impl)
      t.assert.deepStrictEqual((await call(s.base, 'PUT', '/users/f/filter/', [41, 1, 41])).body, [1, 41])
      t.assert.deepStrictEqual((await call(s.base, 'POST', '/users/f/filter/', [40])).body, [1, 40, 41])
      t.assert.deepStrictEqual((await call(s.base, 'GET', '/users/f/filter/')).body, [1, 40, 41])
      t.assert.strictEqual((await call(s.base, 'DELETE', '/users/f/filter/40')).status, 204)
      t.assert.deepStrictEqual(s.store.getUser('f')?.filter, [1, 41])
      const notThere = await call(s.base, 'DELETE', '/users/f/filter/40')
      t.assert.deepStrictEqual([notThere.status, errorOf(notThere).code], [404, 'API_ENTRY_NOT_FOUND'])
      const badNumber = await call(s.base, 'DELETE', '/users/f/filter/x')
      t.assert.deepStrictEqual(
        [badNumber.status, errorOf(badNumber).code, errorOf(badNumber).field],
        [400, 'API_BAD_PARAM', 'category']
      )
      const unknown = await call(s.base, 'POST', '/users/f/filter/', [2, 77])
      t.assert.deepStrictEqual(
        [unknown.status, errorOf(unknown).code, errorOf(unknown).field],
        [422, 'API_UNKNOWN_CATEGORY', '[1]']
      )
      t.assert.strictEqual((await call(s.base, 'DELETE', '/users/f/filter/')).status, 204)
      t.assert.deepStrictEqual((await call(s.base, 'GET', '/users/f/filter/')).body, [])
    })

    test('lenient input is refused: each case a 422 with the code and the field, nothing written', async (t: TestContext) => {
      const s = await start(t, impl)
      await call(s.base, 'PUT', '/users/v', { ip: ['10.9.0.1'], whitelist: ['ok.example'] })
      const refused = async (
        method: string,
        path: string,
        body: unknown,
        code: string,
        field: string
      ): Promise<void> => {
        const r = await call(s.base, method, path, body)
        t.assert.deepStrictEqual(
          [r.status, errorOf(r).code, errorOf(r).field],
          [422, code, field],
          `${method} ${path} ${JSON.stringify(body)}: ${r.text}`
        )
      }
      for (const bad of [
        ' 1.2.3.7',
        '1.2.3.4\n',
        '1.2.3.4 ',
        'fe80::1%eth0',
        '1.2.3.4/032',
        '10.0.0.0/08',
        '01.2.3.4',
        '0.0.0.0/0',
        '::/0',
        '::ffff:0.0.0.0/96',
        '',
        '1'.repeat(200)
      ]) {
        await refused('POST', '/users/v/ip/', ['10.9.0.2', bad], 'API_INVALID_ADDRESS', '[1]')
      }
      await refused('PUT', '/users/v', { ip: ['::/0'] }, 'API_INVALID_ADDRESS', 'ip[0]')
      const long = `${'a'.repeat(60)}.`.repeat(5) + 'example' // 312 characters, labels within 63
      for (const bad of [
        '',
        '.',
        long,
        'xn--',
        'xn--zz.example',
        'www.xn--abc-.example',
        ' a.example',
        'a.example\n'
      ]) {
        await refused('POST', '/users/v/whitelist/', ['b.example', bad], 'API_INVALID_DOMAIN', '[1]')
        await refused('PUT', '/blacklist/', [bad], 'API_INVALID_DOMAIN', '[0]')
      }
      await refused('PUT', '/users/v', { blacklist: [''] }, 'API_INVALID_DOMAIN', 'blacklist[0]')
      const user = (await call(s.base, 'GET', '/users/v')).body as UserBody
      t.assert.deepStrictEqual([user.ip, user.whitelist, user.blacklist], [['10.9.0.1'], ['ok.example'], []])
      t.assert.deepStrictEqual((await call(s.base, 'GET', '/blacklist/')).body, [])
      // Still accepted: a real A-label, an IPv6 address, a /1.
      t.assert.strictEqual((await call(s.base, 'POST', '/users/v/ip/', ['2001:db8::1', '128.0.0.0/1'])).status, 200)
      t.assert.strictEqual((await call(s.base, 'POST', '/users/v/whitelist/', ['xn--e1ajeds9e.xn--p1ai'])).status, 200)
    })

    for (const prefix of ['/users/lu/blacklist/', '/users/lu/whitelist/', '/blacklist/', '/whitelist/']) {
      test(`the list at ${prefix} supports GET, POST, PUT, DELETE one and DELETE all, with normalised domains`, async (t: TestContext) => {
        const s = await start(t, impl)
        const put = await call(s.base, 'PUT', prefix, ['A.Example.', 'кремль.рф', 'a.example'])
        t.assert.strictEqual(put.status, 200)
        t.assert.deepStrictEqual(put.body, ['a.example', 'xn--e1ajeds9e.xn--p1ai'])
        const post = await call(s.base, 'POST', prefix, ['b.example', 'A.EXAMPLE'])
        t.assert.strictEqual(post.status, 200)
        t.assert.deepStrictEqual(post.body, ['a.example', 'xn--e1ajeds9e.xn--p1ai', 'b.example'])
        t.assert.deepStrictEqual((await call(s.base, 'GET', prefix)).body, [
          'a.example',
          'xn--e1ajeds9e.xn--p1ai',
          'b.example'
        ])
        t.assert.strictEqual((await call(s.base, 'DELETE', prefix + encodeURIComponent('Кремль.рф'))).status, 204)
        t.assert.deepStrictEqual((await call(s.base, 'GET', prefix)).body, ['a.example', 'b.example'])
        const missing = await call(s.base, 'DELETE', prefix + 'c.example')
        t.assert.deepStrictEqual([missing.status, errorOf(missing).code], [404, 'API_ENTRY_NOT_FOUND'])
        const bad = await call(s.base, 'POST', prefix, ['ok.example', 'not a domain'])
        t.assert.deepStrictEqual(
          [bad.status, errorOf(bad).code, errorOf(bad).field],
          [422, 'API_INVALID_DOMAIN', '[1]']
        )
        t.assert.strictEqual((await call(s.base, 'DELETE', prefix)).status, 204)
        t.assert.deepStrictEqual((await call(s.base, 'GET', prefix)).body, [])
        const scope = prefix.startsWith('/users/') ? 'lu' : null
        const kind = prefix.includes('black') ? 'black' : 'white'
        t.assert.deepStrictEqual(s.store.getList(scope, kind), [])
      })
    }

    test('the allow-only entry "-" is kept in blacklists, removed by DELETE P-, and refused in whitelists', async (t: TestContext) => {
      const s = await start(t, impl)
      for (const prefix of ['/blacklist/', '/users/ao/blacklist/']) {
        t.assert.deepStrictEqual((await call(s.base, 'POST', prefix, ['-'])).body, ['-'])
        t.assert.deepStrictEqual(s.store.getList(prefix === '/blacklist/' ? null : 'ao', 'black'), ['-'])
        t.assert.strictEqual((await call(s.base, 'DELETE', prefix + '-')).status, 204)
        t.assert.deepStrictEqual((await call(s.base, 'GET', prefix)).body, [])
      }
      for (const prefix of ['/whitelist/', '/users/ao/whitelist/']) {
        const r = await call(s.base, 'POST', prefix, ['ok.example', '-'])
        t.assert.deepStrictEqual(
          [r.status, errorOf(r).code, errorOf(r).field],
          [422, 'API_ALLOW_ONLY_WHITELIST', '[1]']
        )
        t.assert.strictEqual((await call(s.base, 'DELETE', prefix + '-')).status, 400)
      }
      const viaUser = await call(s.base, 'PUT', '/users/ao', { whitelist: ['-'] })
      t.assert.deepStrictEqual([viaUser.status, errorOf(viaUser).field], [422, 'whitelist[0]'])
      t.assert.deepStrictEqual(
        ((await call(s.base, 'PUT', '/users/ao', { blacklist: ['-'] })).body as UserBody).blacklist,
        ['-']
      )
    })

    test('a malformed user_id is a 400 naming user_id', async (t: TestContext) => {
      const s = await start(t, impl)
      for (const path of [
        '/users/bad.id',
        `/users/${'x'.repeat(33)}`,
        '/users/%E2%82%AC/ip/',
        '/users/a%20b/filter/'
      ]) {
        const r = await call(s.base, 'GET', path)
        t.assert.strictEqual(r.status, 400, path)
        t.assert.deepStrictEqual(r.body, {
          error: {
            code: 'API_BAD_USER_ID',
            message: 'user_id must be 1 to 32 characters of A-Z, a-z, 0-9, _ and -',
            field: 'user_id'
          }
        })
      }
      t.assert.strictEqual((await call(s.base, 'PUT', `/users/${'x'.repeat(32)}`, {})).status, 200)
    })

    test('bad JSON is a 400; a body of the wrong kind or missing fields is a 422 naming the field', async (t: TestContext) => {
      const s = await start(t, impl)
      const json = await call(s.base, 'POST', '/users/j/ip/', '["10.0.0.1"')
      t.assert.deepStrictEqual([json.status, errorOf(json).code], [400, 'HTTP_BAD_JSON'])
      const cases: Array<[string, string, unknown, string]> = [
        ['POST', '/users/j/ip/', { ip: ['10.0.0.1'] }, 'body'],
        ['POST', '/users/j/ip/', [1], '[0]'],
        ['PUT', '/users/j', { status: 'paused' }, 'status'],
        ['PUT', '/users/j', { filter: ['x'] }, 'filter[0]'],
        ['PUT', '/users/j', { colour: 'red' }, 'colour'],
        ['PUT', '/users/j', null, 'body'],
        ['PUT', '/users/j/filter/', [1.5], '[0]'],
        ['PUT', '/blacklist/', 'x.example', 'body']
      ]
      for (const [method, path, body, field] of cases) {
        const r = await call(s.base, method, path, JSON.stringify(body))
        t.assert.strictEqual(r.status, 422, `${method} ${path} ${JSON.stringify(body)}`)
        t.assert.deepStrictEqual([errorOf(r).code, errorOf(r).field], ['API_INVALID_BODY', field])
      }
      t.assert.strictEqual(s.store.hasUser('j'), false)
    })

    test('every 422 about the body as a whole names it: a body of the wrong kind, an empty update, a repeated name', async (t: TestContext) => {
      const s = await start(t, impl)
      await call(s.base, 'PUT', '/users/w', {})
      // One case for each whole-body problem of each request schema (api/schemas.ts): the eight that named no field.
      const wholeBody: Array<[string, string, string, RegExp]> = [
        ['PUT', '/users/w', '[]', /body must be object/],
        ['PUT', '/config/', '"x"', /body must be object/],
        [
          'PUT',
          '/config/',
          '{}',
          /at least one field is required \(filter, safesearch, safeyoutube, schedules, safesearchredirect\)/
        ],
        ['PUT', '/userconfig/', '7', /body must be object/],
        ['PUT', '/userconfig/', '{}', /at least one field is required \(filter, safesearch, safeyoutube, schedules\)/],
        ['PUT', '/users/w/ip/', '{"ip":[]}', /body must be array/],
        ['PUT', '/users/w/filter/', 'null', /body must be array/],
        ['PUT', '/users/w/blacklist/', 'true', /body must be array/]
      ]
      for (const [method, path, body, message] of wholeBody) {
        const r = await call(s.base, method, path, body)
        t.assert.deepStrictEqual(
          [r.status, errorOf(r).code, errorOf(r).field],
          [422, 'API_INVALID_BODY', 'body'],
          `${method} ${path} ${body}`
        )
        t.assert.match(errorOf(r).message, message)
      }
      // A name given twice in one object: JSON.parse would keep the last one without a word.
      const twice = await call(s.base, 'PUT', '/users/w', '{"filter":[1],"status":"disabled","filter":[2]}')
      t.assert.deepStrictEqual(
        [twice.status, errorOf(twice).code, errorOf(twice).field],
        [422, 'API_INVALID_BODY', 'filter']
      )
      t.assert.match(errorOf(twice).message, /again at character 34/)
      const defaults = await call(s.base, 'PUT', '/config/', '{ "safesearch": true, "safesearch": false }')
      t.assert.deepStrictEqual([defaults.status, errorOf(defaults).field], [422, 'safesearch'])
      const user = (await call(s.base, 'GET', '/users/w')).body as UserBody
      t.assert.deepStrictEqual([user.filter, user.status], [[], 'enabled'], 'nothing was written')
      t.assert.strictEqual((await call(s.base, 'GET', '/config/')).body !== undefined, true)
      t.assert.strictEqual(((await call(s.base, 'GET', '/config/')).body as { safesearch: boolean }).safesearch, false)
      // The same names in different objects, or a name that is only a value, are fine.
      t.assert.strictEqual(
        (await call(s.base, 'PUT', '/users/w', '{"name":"w","whitelist":["name.example"]}')).status,
        200
      )
    })

    test('a request a browser marks cross-site gets 403 API_CROSS_SITE unless its origin is allowed; same-origin pages and non-browser callers pass', async (t: TestContext) => {
      const s = await start(t, impl, { apiYaml: 'body-limit: 1024\nallowed-origins: http://console.example:8443' })
      const client = await addApiClient(s.store, 'billing')
      const raw = (
        method: string,
        path: string,
        headers: Record<string, string>,
        body?: string
      ): Promise<RawHttpResponse> =>
        httpRequest({
          port: s.port,
          method,
          path,
          headers: { host: `127.0.0.1:${s.port}`, ...headers },
          ...(body === undefined ? {} : { body })
        })
      const code = (r: RawHttpResponse): string => (JSON.parse(r.body) as { error: { code: string } }).error.code
      // The campaign's request, as curl sent it; then the same with JSON, and from a page on another port of this host.
      const campaign = await raw(
        'POST',
        '/blacklist/',
        { 'content-type': 'text/plain', origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
        '["csrf-proof.example"]'
      )
      t.assert.deepStrictEqual([campaign.status, code(campaign)], [403, 'API_CROSS_SITE'])
      const json = { 'content-type': 'application/json' }
      const refused: Array<Record<string, string>> = [
        { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
        { origin: 'http://127.0.0.1:9', 'sec-fetch-site': 'same-site' },
        { origin: 'http://127.0.0.1:9' },
        { origin: 'null' },
        { 'sec-fetch-site': 'cross-site' },
        { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', authorization: client.bearer }
      ]
      for (const h of refused) {
        const r = await raw('POST', '/blacklist/', { ...json, ...h }, '["csrf-proof.example"]')
        t.assert.deepStrictEqual([r.status, code(r)], [403, 'API_CROSS_SITE'], JSON.stringify(h))
      }
      t.assert.deepStrictEqual(s.store.getList(null, 'black'), [], 'nothing was written')
      const read = await raw('GET', '/users/', {
        origin: 'http://evil.example',
        'sec-fetch-site': 'cross-site',
        'sec-fetch-mode': 'cors'
      })
      t.assert.strictEqual(read.status, 403, 'a cross-site fetch cannot read either')
      // Passed: the console's own origin, what the user typed, a link followed to a page, the allowed origin, curl.
      const passed: Array<Record<string, string>> = [
        { origin: `http://127.0.0.1:${s.port}` },
        { origin: `http://127.0.0.1:${s.port}`, 'sec-fetch-site': 'same-origin' },
        { origin: 'http://console.example:8443', 'sec-fetch-site': 'cross-site' },
        {}
      ]
      for (const h of passed) {
        const r = await raw('POST', '/blacklist/', { ...json, ...h }, '["ok.example"]')
        t.assert.strictEqual(r.status, 200, JSON.stringify(h))
      }
      t.assert.strictEqual(
        (await raw('GET', '/ui/', { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' })).status !== 403,
        true
      )
      t.assert.strictEqual(
        (await raw('GET', '/config/', { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' })).status,
        200
      )
      t.assert.strictEqual(
        (
          await raw('POST', '/users/x/status/disabled', {
            ...json,
            'sec-fetch-site': 'cross-site',
            'sec-fetch-mode': 'navigate'
          })
        ).status,
        403,
        'a cross-site form post is a navigation too'
      )
      const audited = s.lines.filter((l) => l.audit === 'api' && l.status === 403)
      t.assert.strictEqual(audited.length, refused.length + 2, 'every refused write leaves its audit line')
      t.assert.deepStrictEqual([audited[0]!.who, audited[0]!.path], ['-', '/blacklist/'])
    })

    test('a write that does not say Content-Type: application/json gets 415 API_UNSUPPORTED_MEDIA_TYPE and changes nothing', async (t: TestContext) => {
      const s = await start(t, impl)
      const client = await addApiClient(s.store, 'billing')
      const raw = (
        method: string,
        path: string,
        headers: Record<string, string>,
        body?: string
      ): Promise<RawHttpResponse> =>
        httpRequest({
          port: s.port,
          method,
          path,
          headers: { host: '127.0.0.1', ...headers },
          ...(body === undefined ? {} : { body })
        })
      for (const type of [
        undefined,
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/jsonp',
        'text/json'
      ]) {
        for (const [method, path] of [
          ['POST', '/blacklist/'],
          ['PUT', '/users/m'],
          ['PUT', '/users/m/ip/']
        ] as const) {
          const body = path === '/users/m' ? '{"filter":[1]}' : path.endsWith('ip/') ? '["10.0.0.1"]' : '["m.example"]'
          const r = await raw(method, path, type === undefined ? {} : { 'content-type': type }, body)
          t.assert.strictEqual(r.status, 415, `${method} ${path} ${String(type)}`)
          t.assert.deepStrictEqual(JSON.parse(r.body), {
            error: {
              code: 'API_UNSUPPORTED_MEDIA_TYPE',
              message: `a ${method} must carry Content-Type: application/json${type === undefined ? '' : ` (got ${type.split(';')[0]!})`}`
            }
          })
          t.assert.strictEqual(r.headers.accept, 'application/json')
        }
      }
      const bodiless = await raw('POST', '/users/m/status/disabled', { 'content-type': 'text/plain' })
      t.assert.strictEqual(bodiless.status, 415, 'a POST without a body but with another type too: a form can send one')
      const outside = await raw(
        'PUT',
        '/users/m',
        { ...relayedFrom('192.0.2.10', { authorization: client.bearer }), 'content-type': 'text/plain' },
        '{"filter":[1]}'
      )
      t.assert.strictEqual(outside.status, 415, 'with credentials too')
      t.assert.strictEqual(s.store.hasUser('m'), false)
      t.assert.deepStrictEqual(s.store.getList(null, 'black'), [])
      t.assert.strictEqual(
        (await raw('PUT', '/users/m', { 'content-type': 'Application/JSON; charset=utf-8' }, '{"filter":[1]}')).status,
        200
      )
      t.assert.strictEqual(
        (await raw('POST', '/users/m/status/disabled', { 'content-type': 'application/json' })).status,
        200
      )
      t.assert.strictEqual(
        (await raw('DELETE', '/users/m/filter/1', {})).status,
        204,
        'a DELETE without a body needs no type'
      )
      t.assert.strictEqual(
        (await raw('DELETE', '/users/m', { 'content-type': 'text/plain', 'content-length': '1' }, 'x')).status,
        415,
        'a DELETE with one does'
      )
      t.assert.strictEqual(s.store.hasUser('m'), true)
    })

    test('a write without a body and without a type passes from curl or a script, with or without credentials; from a browser it gets 415, cross-site 403', async (t: TestContext) => {
      const s = await start(t, impl)
      const client = await addApiClient(s.store, 'billing')
      const post = (path: string, headers: Record<string, string>): Promise<RawHttpResponse> =>
        httpRequest({ port: s.port, method: 'POST', path, headers: { host: `127.0.0.1:${s.port}`, ...headers } })
      await call(s.base, 'PUT', '/users/sw', { filter: [1] })
      // node's client sends Content-Length: 0 here; curl -X POST sends none (api/spec-contract.test.ts).
      t.assert.strictEqual((await post('/users/sw/status/disabled', {})).status, 200)
      t.assert.strictEqual(s.store.getUser('sw')?.status, 'disabled')
      const outside = await post('/users/sw/safesearch/on', relayedFrom('192.0.2.10', { authorization: client.bearer }))
      t.assert.strictEqual(outside.status, 200, 'with credentials, from outside')
      t.assert.strictEqual(s.store.getUser('sw')?.safesearch, 'on')
      // A browser always marks its POST with Origin (and Sec-Fetch-Site): its writes carry the type, whatever the origin.
      const browsers: Array<[Record<string, string>, number, string]> = [
        [{ origin: `http://127.0.0.1:${s.port}` }, 415, 'API_UNSUPPORTED_MEDIA_TYPE'],
        [{ origin: `http://127.0.0.1:${s.port}`, 'sec-fetch-site': 'same-origin' }, 415, 'API_UNSUPPORTED_MEDIA_TYPE'],
        [{ 'sec-fetch-site': 'same-origin' }, 415, 'API_UNSUPPORTED_MEDIA_TYPE'],
        [{ origin: 'http://evil.example' }, 403, 'API_CROSS_SITE'],
        [
          { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' },
          403,
          'API_CROSS_SITE'
        ]
      ]
      for (const [headers, status, code] of browsers) {
        const r = await post('/users/sw/status/enabled', headers)
        t.assert.deepStrictEqual(
          [r.status, (JSON.parse(r.body) as { error: { code: string } }).error.code],
          [status, code],
          JSON.stringify(headers)
        )
      }
      // A chunked body may be empty, but that is known only once read: it needs the type.
      t.assert.strictEqual((await post('/users/sw/status/enabled', { 'transfer-encoding': 'chunked' })).status, 415)
      t.assert.strictEqual(s.store.getUser('sw')?.status, 'disabled', 'no refused switch changed anything')
    })

    test('without credentials on loopback, the Host must be a loopback name or address or api.host: another gets 421 API_MISDIRECTED_HOST', async (t: TestContext) => {
      const s = await start(t, impl)
      const client = await addApiClient(s.store, 'reader')
      const get = (host: string, headers: Record<string, string> = {}): Promise<RawHttpResponse> =>
        httpRequest({ port: s.port, path: '/users/', headers: { host, ...headers } })
      // The campaign's DNS-rebinding read.
      const rebound = await get('evil.example')
      t.assert.deepStrictEqual(
        [rebound.status, (JSON.parse(rebound.body) as { error: { code: string } }).error.code],
        [421, 'API_MISDIRECTED_HOST']
      )
      for (const host of [
        `evil.example:${s.port}`,
        'localhost.evil.example',
        '127.0.0.1.nip.io',
        '10.0.0.1',
        '[2001:db8::1]:80'
      ]) {
        t.assert.strictEqual((await get(host)).status, 421, host)
      }
      const put = await httpRequest({
        port: s.port,
        method: 'PUT',
        path: '/users/r',
        headers: { host: 'evil.example', 'content-type': 'application/json' },
        body: '{}'
      })
      t.assert.strictEqual(put.status, 421)
      t.assert.strictEqual(s.store.hasUser('r'), false)
      t.assert.ok(
        s.lines.some((l) => l.audit === 'api' && l.who === '-' && l.status === 421),
        'the refused write is audited'
      )
      for (const host of [
        `127.0.0.1:${s.port}`,
        'localhost',
        `LOCALHOST.:${s.port}`,
        'console.localhost',
        '127.9.9.9',
        '[::1]:8080',
        'api.filterd.local',
        'API.filterd.local.:80'
      ]) {
        t.assert.strictEqual((await get(host)).status, 200, host)
      }
      t.assert.strictEqual(
        (await get('evil.example', { authorization: client.bearer })).status,
        200,
        'credentials are not tied to a name'
      )
    })

    test('a body over api.body-limit is a 413 with the error body', async (t: TestContext) => {
      const s = await start(t, impl)
      const big = JSON.stringify(Array.from({ length: 200 }, (_, i) => `host${i}.example`))
      const r = await call(s.base, 'PUT', '/blacklist/', big)
      t.assert.strictEqual(r.status, 413)
      t.assert.strictEqual(errorOf(r).code, 'HTTP_BODY_TOO_LARGE')
      t.assert.deepStrictEqual(s.store.getList(null, 'black'), [])
    })

    test('unknown users, entries and paths are 404 with the error body', async (t: TestContext) => {
      const s = await start(t, impl)
      for (const [method, path] of [
        ['GET', '/users/nobody'],
        ['GET', '/users/nobody/ip/'],
        ['GET', '/users/nobody/filter/'],
        ['GET', '/users/nobody/blacklist/'],
        ['DELETE', '/users/nobody/ip/'],
        ['DELETE', '/users/nobody/ip/10.0.0.1'],
        ['DELETE', '/users/nobody/filter/'],
        ['DELETE', '/users/nobody/filter/1'],
        ['DELETE', '/users/nobody/whitelist/'],
        ['DELETE', '/users/nobody/whitelist/a.example']
      ] as const) {
        const r = await call(s.base, method, path)
        t.assert.strictEqual(r.status, 404, `${method} ${path}`)
        t.assert.deepStrictEqual(
          [errorOf(r).code, errorOf(r).field],
          ['API_USER_NOT_FOUND', 'user_id'],
          `${method} ${path}`
        )
      }
      const none = await call(s.base, 'GET', '/nothing/here')
      t.assert.deepStrictEqual([none.status, errorOf(none).code], [404, 'HTTP_NOT_FOUND'])
      t.assert.strictEqual(s.store.userCount(), 0)
    })

    test('a request that fails changes nothing: no user, no address, no generation bump', async (t: TestContext) => {
      const s = await start(t, impl)
      await call(s.base, 'PUT', '/users/keep/ip/', ['10.0.0.1'])
      const g = s.store.generation()
      const r = await call(s.base, 'PUT', '/users/thief', { ip: ['10.0.0.1'], blacklist: ['ok.example', '..'] })
      t.assert.strictEqual(r.status, 422)
      const notBlocked = await call(s.base, 'DELETE', '/users/keep/filter/1')
      t.assert.strictEqual(notBlocked.status, 404)
      t.assert.strictEqual(s.store.generation(), g)
      t.assert.strictEqual(s.store.hasUser('thief'), false)
      t.assert.strictEqual(s.store.userForAddress('10.0.0.1'), 'keep')
    })

    test('an acknowledged write is already visible to a reader polling the generation', async (t: TestContext) => {
      const s = await start(t, impl)
      const g = s.store.generation()
      const started = performance.now()
      await call(s.base, 'PUT', '/users/fast', { ip: ['198.51.100.1'], filter: [1] })
      t.assert.ok(s.store.generation() > g)
      t.assert.strictEqual(s.store.userForAddress('198.51.100.1'), 'fast')
      t.assert.deepStrictEqual(s.store.getUser('fast')?.filter, [1])
      t.assert.ok(performance.now() - started < 1000, 'well within the 100 ms budget on an idle machine')
    })

    test('a real fault is a 500 with a bare body, logged once', async (t: TestContext) => {
      const s = await start(t, impl, {
        wrapStore: (store: Store) => {
          const broken = Object.create(store) as Store
          broken.getUser = () => {
            throw new Error('disk on fire')
          }
          return broken
        }
      })
      const r = await call(s.base, 'GET', '/users/anyone')
      t.assert.strictEqual(r.status, 500)
      t.assert.deepStrictEqual(r.body, { error: { code: 'HTTP_INTERNAL', message: 'internal error' } })
      const errors = s.lines.filter((l) => l.level === 50)
      t.assert.strictEqual(errors.length, 1)
      t.assert.strictEqual((errors[0]!.err as { message: string }).message, 'disk on fire')
    })

    test('paths answer with or without their trailing slash', async (t: TestContext) => {
      const s = await start(t, impl)
      t.assert.strictEqual((await call(s.base, 'GET', '/config')).status, 200)
      t.assert.strictEqual((await call(s.base, 'GET', '/categories')).status, 200)
      t.assert.strictEqual((await call(s.base, 'POST', '/users/slash/ip', ['10.0.0.1'])).status, 201)
      t.assert.strictEqual((await call(s.base, 'GET', '/users/slash/')).status, 200)
    })

    test('a caller from outside without credentials gets 401 with a Bearer and a Basic challenge, and wrong ones 401 too', async (t: TestContext) => {
      const s = await start(t, impl)
      const client = await addApiClient(s.store, 'billing')
      const none = await call(s.base, 'GET', '/config/', undefined, relayedFrom('192.0.2.10'))
      t.assert.strictEqual(none.status, 401)
      t.assert.strictEqual(errorOf(none).code, 'API_UNAUTHORIZED')
      const challenges = none.headers.get('www-authenticate') ?? ''
      t.assert.match(challenges, /Bearer realm="filterd management API"/)
      t.assert.match(challenges, /Basic realm="filterd management API"/)
      for (const wrong of [
        `Bearer billing.${'x'.repeat(43)}`,
        `Bearer nobody.${client.secret}`,
        `Basic ${Buffer.from('billing:wrong').toString('base64')}`,
        'Bearer garbage',
        'Digest x'
      ]) {
        const r = await call(s.base, 'GET', '/config/', undefined, relayedFrom('192.0.2.10', { authorization: wrong }))
        t.assert.strictEqual(r.status, 401, wrong)
        t.assert.strictEqual(errorOf(r).code, 'API_UNAUTHORIZED')
      }
      const write = await call(s.base, 'PUT', '/users/outsider', { filter: [1] }, relayedFrom('192.0.2.10'))
      t.assert.strictEqual(write.status, 401)
      t.assert.strictEqual(s.store.getUser('outsider'), undefined, 'the refused write changed nothing')
    })

    test('a Bearer token and HTTP Basic of an API client both let a caller from outside in', async (t: TestContext) => {
      const s = await start(t, impl)
      const client = await addApiClient(s.store, 'billing')
      const bearer = await call(
        s.base,
        'PUT',
        '/users/paid',
        { filter: [40] },
        relayedFrom('192.0.2.10', { authorization: client.bearer })
      )
      t.assert.strictEqual(bearer.status, 200, bearer.text)
      const basic = await call(
        s.base,
        'GET',
        '/users/paid/filter/',
        undefined,
        relayedFrom('2001:db8::7', { authorization: client.basic })
      )
      t.assert.strictEqual(basic.status, 200, basic.text)
      t.assert.deepStrictEqual(basic.body, [40])
      // Again: now from the cache of verified headers, without scrypt.
      t.assert.strictEqual(
        (await call(s.base, 'GET', '/config/', undefined, relayedFrom('192.0.2.10', { authorization: client.bearer })))
          .status,
        200
      )
    })

    test('loopback callers need no credentials by default, and do with loopback-without-credentials: false', async (t: TestContext) => {
      const open = await start(t, impl)
      t.assert.strictEqual((await call(open.base, 'GET', '/config/')).status, 200)
      t.assert.strictEqual(
        (await call(open.base, 'GET', '/config/', undefined, relayedFrom('127.0.0.1'))).status,
        200,
        'relayed for a loopback client'
      )
      const closed = await start(t, impl, { apiYaml: 'loopback-without-credentials: false' })
      const client = await addApiClient(closed.store, 'local-script')
      const refused = await call(closed.base, 'GET', '/config/')
      t.assert.strictEqual(refused.status, 401)
      t.assert.match(refused.headers.get('www-authenticate') ?? '', /Bearer/)
      t.assert.strictEqual(
        (await call(closed.base, 'GET', '/config/', undefined, { authorization: client.bearer })).status,
        200
      )
    })

    test('require-credentials: false lets the address rules alone decide, and a wrong header is still refused', async (t: TestContext) => {
      const s = await start(t, impl, { apiYaml: 'require-credentials: false' })
      t.assert.strictEqual(
        (await call(s.base, 'PUT', '/users/ruled', { filter: [1] }, relayedFrom('192.0.2.10'))).status,
        200
      )
      t.assert.strictEqual(
        (
          await call(
            s.base,
            'GET',
            '/config/',
            undefined,
            relayedFrom('192.0.2.10', { authorization: 'Bearer nobody.nothing' })
          )
        ).status,
        401
      )
      const line = s.lines.find((l) => l.audit === 'api' && l.path === '/users/ruled')
      t.assert.deepStrictEqual([line?.who, line?.source], ['address-rule', '192.0.2.10'])
    })

    test('every write leaves one audit line with who, from where, what, the status and the time; reads leave none', async (t: TestContext) => {
      const s = await start(t, impl)
      const client = await addApiClient(s.store, 'billing')
      const before = Date.now()
      t.assert.strictEqual(
        (
          await call(
            s.base,
            'PUT',
            '/users/audited',
            { filter: [40] },
            relayedFrom('192.0.2.10', { authorization: client.bearer })
          )
        ).status,
        200
      )
      t.assert.strictEqual((await call(s.base, 'DELETE', '/users/audited/filter/40')).status, 204)
      t.assert.strictEqual(
        (
          await call(
            s.base,
            'POST',
            '/users/audited/ip/',
            ['bad address'],
            relayedFrom('192.0.2.10', { authorization: client.basic })
          )
        ).status,
        422
      )
      t.assert.strictEqual(
        (await call(s.base, 'PUT', '/users/audited', { filter: [1] }, relayedFrom('198.51.100.9'))).status,
        401
      )
      t.assert.strictEqual(
        (
          await call(
            s.base,
            'GET',
            '/users/audited',
            undefined,
            relayedFrom('192.0.2.10', { authorization: client.bearer })
          )
        ).status,
        200
      )
      const audit = s.lines.filter((l) => l.audit === 'api')
      t.assert.deepStrictEqual(
        audit.map((l) => [l.who, l.source, l.method, l.path, l.status]),
        [
          ['billing', '192.0.2.10', 'PUT', '/users/audited', 200],
          ['loopback', '127.0.0.1', 'DELETE', '/users/audited/filter/40', 204],
          ['billing', '192.0.2.10', 'POST', '/users/audited/ip/', 422],
          ['-', '198.51.100.9', 'PUT', '/users/audited', 401]
        ]
      )
      for (const l of audit) {
        // The role's logger writes ISO 8601 (engine/log); this test's in-memory one, epoch milliseconds.
        const time = typeof l.time === 'number' ? l.time : Date.parse(String(l.time))
        t.assert.ok(time >= before - 1000 && time <= Date.now() + 1000, `time ${String(l.time)}`)
      }
    })

    test('audit lines are written at log-level warn too (an audit record is not a diagnostic), and only they', async (t: TestContext) => {
      const s = await start(t, impl, { logLevel: 'warn' })
      t.assert.strictEqual((await call(s.base, 'PUT', '/users/quiet', { filter: [40] })).status, 200)
      t.assert.strictEqual(
        (await call(s.base, 'PUT', '/users/quiet', { filter: [1] }, relayedFrom('198.51.100.9'))).status,
        401
      )
      t.assert.deepStrictEqual(
        s.lines.map((l) => [l.level, l.audit, l.who, l.path, l.status]),
        [
          [30, 'api', 'loopback', '/users/quiet', 200],
          [30, 'api', '-', '/users/quiet', 401]
        ]
      )
    })

    test('GET /openapi.yaml serves docs/openapi.yaml as it is', async (t: TestContext) => {
      const s = await start(t, impl)
      const r = await call(s.base, 'GET', '/openapi.yaml')
      t.assert.strictEqual(r.status, 200)
      t.assert.strictEqual(r.headers.get('content-type'), 'application/yaml')
      t.assert.strictEqual(r.text, readFileSync(new URL('../../docs/openapi.yaml', import.meta.url), 'utf8'))
      t.assert.strictEqual(
        (await call(s.base, 'GET', '/openapi.yaml', undefined, relayedFrom('192.0.2.10'))).status,
        401,
        'behind the same rule as the rest'
      )
    })

    test('every route of the table is served for its method', async (t: TestContext) => {
      const s = await start(t, impl)
      const sample: Record<string, string> = {
        user_id: 'every',
        ip: '10.0.0.1',
        category: '1',
        domain: 'a.example',
        host: 'a.example',
        query: 'every',
        filter: 'all',
        client_id: 'every-phone',
        source_id: 'every'
      }
      const today = new Date().toISOString().slice(0, 10)
      const bodies: Record<string, unknown> = {
        UserUpdate: {},
        ServerDefaultsUpdate: { safesearch: false },
        UserDefaultsUpdate: { safesearch: false },
        AddressList: ['10.0.0.1'],
        CategoryList: [1],
        DomainList: ['a.example'],
        ClientIdList: ['every-phone'],
        SubscriptionUpdate: { url: 'http://127.0.0.1:9/list', format: 'domains', target: 'blacklist' }
      }
      for (const r of ROUTES) {
        await call(s.base, 'PUT', '/users/every', {
          ip: ['10.0.0.1'],
          client_ids: ['every-phone'],
          filter: [1],
          blacklist: ['a.example'],
          whitelist: ['a.example']
        })
        await call(s.base, 'PUT', '/blacklist/', ['a.example'])
        await call(s.base, 'PUT', '/whitelist/', ['a.example'])
        await call(s.base, 'PUT', '/subscriptions/every', bodies.SubscriptionUpdate)
        // Query parameters a route needs: the reports' date range, the check route's client address.
        const names = new Set(r.query?.map((q) => q.name) ?? [])
        const range = names.has('from') ? `?from=${today}&to=${today}` : names.has('ip') ? '?ip=10.0.0.1' : ''
        const path = r.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => sample[name]!) + range
        if (r.path === '/live/queries') {
          // An event stream stays open: its status and type are all there is to check here.
          const abort = new AbortController()
          const res = await fetch(s.base + path, { signal: abort.signal })
          t.assert.strictEqual(res.status, 200)
          t.assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/)
          abort.abort()
          continue
        }
        const a = await call(s.base, r.method, path, r.body === undefined ? undefined : bodies[r.body])
        const allowed = [...r.ok.map((o) => o.status), ...r.errors]
        t.assert.ok(allowed.includes(a.status), `${r.method} ${r.path} answered ${a.status} ${a.text}`)
        t.assert.ok(
          a.status < 300 || r.path.startsWith('/site/'),
          `${r.method} ${r.path} answered ${a.status} ${a.text}`
        )
      }
    })
  })
}
