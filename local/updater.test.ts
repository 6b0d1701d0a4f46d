import { test, type TestContext } from 'node:test'
import { snapshotUrlPath } from '../engine/catdb/snapshot.js'
import { snapshotDownloadUrl } from './updater.js'

const cases: Array<[string, string]> = [
  ['http://127.0.0.1:8090/', 'http://127.0.0.1:8090/db/snapshots/7.snap.gz'],
  ['https://vendor.example/filterd/', 'https://vendor.example/filterd/db/snapshots/7.snap.gz'],
  ['https://vendor.example/a/b/', 'https://vendor.example/a/b/db/snapshots/7.snap.gz']
]

test('the snapshot url the collector publishes resolves under collector-url, path prefix included', (t: TestContext) => {
  t.assert.strictEqual(snapshotUrlPath(7), 'snapshots/7.snap.gz')
  for (const [base, expected] of cases) {
    t.assert.strictEqual(
      snapshotDownloadUrl(snapshotUrlPath(7), new URL('db/manifest', base), base).href,
      expected,
      base
    )
  }
})

test('a manifest of an older collector (/db/snapshots/N.snap.gz) still resolves under collector-url', (t: TestContext) => {
  for (const [base, expected] of cases) {
    t.assert.strictEqual(
      snapshotDownloadUrl('/db/snapshots/7.snap.gz', new URL('db/manifest', base), base).href,
      expected,
      base
    )
  }
})

test('a full URL in the manifest (another host) is used as it is', (t: TestContext) => {
  const base = 'https://vendor.example/filterd/'
  t.assert.strictEqual(
    snapshotDownloadUrl('https://cdn.example/s/7.snap.gz', new URL('db/manifest', base), base).href,
    'https://cdn.example/s/7.snap.gz'
  )
})
