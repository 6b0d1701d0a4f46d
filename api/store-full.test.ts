// A full file system under the policy store (common.db): every write is refused with 507 and nothing
// of it is kept, the api role keeps running and serving reads, and once there is room again the next
// write commits without a restart. The store sits on a small tmpfs of its own, filled with a file.
import { test, type TestContext } from 'node:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startRole } from '../engine/testing/daemon.js'
import { tempDir } from '../engine/testing/temp.js'
import { tmpfsDir, tmpfsUnavailable } from '../engine/testing/tmpfs.js'
import { writeApiRoleConfig } from './testing/fixtures.js'

const JSON_TYPE = { 'content-type': 'application/json' }

/** Fills the file system at `dir` with one file, to the last byte it takes. */
function fill(path: string): void {
  try {
    writeFileSync(path, Buffer.alloc(64 * 1024 * 1024))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err
  }
}

/** A write that needs new pages in the store: a whitelist of `n` names for `user`. */
function bigWrite(base: string, user: string, n: number): Promise<Response> {
  const names = Array.from({ length: n }, (_, i) => `site-${i}-of-a-rather-long-name.example`)
  return fetch(`${base}/users/${user}/whitelist/`, {
    method: 'POST',
    headers: JSON_TYPE,
    body: JSON.stringify(names),
    signal: AbortSignal.timeout(30_000)
  })
}

test('a full policy store refuses writes with 507 API_STORE_FULL and Retry-After, keeps serving, and takes writes again once there is room', async (t: TestContext) => {
  const why = tmpfsUnavailable()
  if (why !== undefined) {
    t.skip(why)
    return
  }
  const dir = tempDir(t, 'filterd-store-full-')
  const small = tmpfsDir(t, '2m')
  const file = writeApiRoleConfig(dir, { db: join(small.dir, 'db'), logLevel: 'info' })
  const api = await startRole(t, 'api', file)
  const before = await fetch(`${api.url}/users/early`, {
    method: 'PUT',
    headers: JSON_TYPE,
    body: JSON.stringify({ filter: [40] })
  })
  t.assert.strictEqual(before.status, 200)

  const filler = join(small.dir, 'filler')
  fill(filler)
  // More failing writes than `filterd all`'s restart budget ever allowed (5 within a minute).
  for (let i = 0; i < 8; i++) {
    const res = await bigWrite(api.url, `full${i}`, 2000)
    const body = (await res.json()) as { error?: { code?: string; message?: string } }
    t.assert.strictEqual(res.status, 507, JSON.stringify(body))
    t.assert.strictEqual(body.error?.code, 'API_STORE_FULL')
    t.assert.match(body.error?.message ?? '', /full/)
    t.assert.strictEqual(res.headers.get('retry-after'), '60')
  }
  await api.waitForLog((l) => l.msg === 'a write was refused: the file system of the policy store is full')
  t.assert.strictEqual(api.proc.exitCode, null, `the api role is still running: ${api.stderr}`)
  t.assert.strictEqual(api.proc.signalCode, null)
  const early = await fetch(`${api.url}/users/early`)
  t.assert.strictEqual(early.status, 200, 'reads still work')
  t.assert.deepStrictEqual(((await early.json()) as { filter: number[] }).filter, [40])
  const refused = await fetch(`${api.url}/users/full0/whitelist/`)
  t.assert.strictEqual(refused.status, 404, 'nothing of a refused write was kept')
  await refused.arrayBuffer()

  rmSync(filler)
  const after = await bigWrite(api.url, 'later', 2000)
  t.assert.ok(after.status === 200 || after.status === 201, `room again: ${after.status} ${await after.text()}`)
  const later = await fetch(`${api.url}/users/later/whitelist/`)
  t.assert.strictEqual(later.status, 200)
  t.assert.strictEqual(((await later.json()) as unknown[]).length, 2000)
  t.assert.strictEqual(api.proc.exitCode, null)
})
