// Durability of the management API: kill -9 of the api role at random moments during a write storm.
// Every write the API acknowledged (2xx) must be in the store afterwards: the API answers only after
// its LMDB transaction is committed and flushed. DURABILITY_CYCLES raises the number of kills for the
// long run (scripts/reliability-long.sh); CI runs 10.
import { test, type TestContext } from 'node:test'
import { join } from 'node:path'
import { randomInt } from 'node:crypto'
import { Store } from '../engine/store/index.js'
import { startRole } from '../engine/testing/daemon.js'
import { tempDir, writeApiRoleConfig } from './testing/fixtures.js'

const CYCLES = Number(process.env.DURABILITY_CYCLES ?? 10)
const WRITERS = 6
const JSON_TYPE = { 'content-type': 'application/json' }

/** One write: PUT a new user, or POST a new domain to one shared list (a read-modify-write of one key). */
async function write(
  base: string,
  cycle: number,
  writer: number,
  n: number
): Promise<{ kind: 'user' | 'domain'; key: string } | undefined> {
  const user = n % 2 === 0
  const key = user ? `c${cycle}-w${writer}-${n}` : `d${cycle}-${writer}-${n}.example`
  try {
    const res = user
      ? await fetch(`${base}/users/${key}`, {
          method: 'PUT',
          headers: JSON_TYPE,
          body: JSON.stringify({ filter: [40], ip: [`10.${cycle & 255}.${writer}.${n & 255}`] }),
          signal: AbortSignal.timeout(5000)
        })
      : await fetch(`${base}/users/shared/whitelist/`, {
          method: 'POST',
          headers: JSON_TYPE,
          body: JSON.stringify([key]),
          signal: AbortSignal.timeout(5000)
        })
    await res.arrayBuffer()
    return res.status === 200 || res.status === 201 ? { kind: user ? 'user' : 'domain', key } : undefined
  } catch {
    return undefined // killed mid-request: not acknowledged, so no promise was made
  }
}

test(`kill -9 of the api role at random moments of a write storm, ${CYCLES} times: no acknowledged write is lost`, async (t: TestContext) => {
  const { dir, cleanup } = tempDir('filterd-durability-')
  t.after(cleanup)
  const file = writeApiRoleConfig(dir, { logLevel: 'error' })
  const acknowledged: Array<{ kind: 'user' | 'domain'; key: string }> = []
  let unacknowledged = 0
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    const api = await startRole(t, 'api', file)
    let stop = false
    const storm = Array.from({ length: WRITERS }, async (_, writer) => {
      for (let n = 0; !stop; n++) {
        const done = await write(api.url, cycle, writer, n)
        if (done === undefined) {
          unacknowledged++
          if (api.proc.exitCode !== null || api.proc.signalCode !== null) return
        } else acknowledged.push(done)
      }
    })
    // The kill lands anywhere in the storm: in a request, a commit, a flush, between them.
    await new Promise((resolve) => setTimeout(resolve, randomInt(50, 400)))
    api.proc.kill('SIGKILL')
    await new Promise((resolve) => api.proc.once('exit', resolve))
    stop = true
    await Promise.all(storm)
  }
  const store = Store.open(join(dir, 'db'))
  t.after(async () => {
    await store.close()
  })
  const list = new Set(store.getList('shared', 'white'))
  const lost = acknowledged.filter((w) => (w.kind === 'user' ? store.getUser(w.key) === undefined : !list.has(w.key)))
  t.diagnostic(
    `${CYCLES} kills, ${acknowledged.length} acknowledged writes, ${unacknowledged} cut off by a kill, ${lost.length} lost`
  )
  t.assert.ok(acknowledged.length >= CYCLES, `the storm wrote (${acknowledged.length} acknowledged writes)`)
  t.assert.deepStrictEqual(lost.slice(0, 5), [], `${lost.length} acknowledged writes lost`)
})
