// Writes that evict only what they touched (engine/store/journal.ts), as the DNS server and its pool
// workers (each its own policy and store handle) enforce them: a user's change, the other user's
// verdict unchanged, the global lists and a list subscription, which evict nothing and still apply.
import { test, type TestContext } from 'node:test'
import { CATEGORY } from '../engine/categories/index.js'
import { applyEntries } from '../engine/lists/apply.js'
import { BLOCK_V4, addUser, ask, firstA, server, sleep, world } from './testing/harness.js'

const FWD = '198.51.100.10'

for (const dispatch of ['inline', 'pool'] as const) {
  test(`dispatch ${dispatch}: a user's change, the global lists and a subscription are enforced by every reader, the other user's verdict kept`, async (t: TestContext) => {
    const w = await world(t, { cats: { 'casino.example': [CATEGORY.GAMBLING] } })
    await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
    await addUser(w.store, { name: 'bob', ip: ['127.0.0.2'], filter: [CATEGORY.GAMBLING] })
    const s = await server(t, w, { proxy: { dispatch, 'batch-size': 1, workers: 2 } })
    const at = async (from: string, name: string): Promise<string | undefined> =>
      firstA(await ask(s.port, name, 'A', { from }))
    /**
     * Until 8 answers in a row are `want` (every worker has followed the write), within a generous
     * deadline; a query unanswered in time (workers still starting on a loaded machine) counts as another.
     */
    const settles = async (from: string, name: string, want: string): Promise<void> => {
      const deadline = Date.now() + 30_000
      let inRow = 0
      while (inRow < 8) {
        t.assert.ok(Date.now() < deadline, `${name} from ${from} never answered ${want}`)
        if ((await at(from, name).catch(() => undefined)) === want) inRow++
        else {
          inRow = 0
          await sleep(20)
        }
      }
    }
    for (const from of ['127.0.0.1', '127.0.0.2']) await settles(from, 'casino.example', BLOCK_V4)

    await w.store.write((wr) => wr.putUser({ ...w.store.getUser('bob')!, filter: [] }))
    await settles('127.0.0.2', 'casino.example', FWD)
    for (let i = 0; i < 8; i++) t.assert.strictEqual(await at('127.0.0.1', 'casino.example'), BLOCK_V4)

    await w.store.write((wr) => wr.putList(null, 'black', ['evil.example']))
    for (const from of ['127.0.0.1', '127.0.0.2']) await settles(from, 'www.evil.example', BLOCK_V4)

    await applyEntries(w.store, 'ads', new Set(['listed.example']), 'black')
    for (const from of ['127.0.0.1', '127.0.0.2']) await settles(from, 'listed.example', BLOCK_V4)
    t.assert.strictEqual(await at('127.0.0.2', 'casino.example'), FWD)
  })
}
