// h2spec (the HTTP/2 conformance suite, strict mode: every case of RFC 9113 and RFC 7541 it has)
// against the DoH listener of a real DNS server: every case must pass. h2spec is not packaged
// (../shared/tools/README.md): the test runs it when ../shared/tools/h2spec is beside the clone,
// fails under CI=true when it is not, and skips otherwise. ./conformance.test.ts checks the same
// rules with hand-made frames, so a fresh clone checks them too.
//
// The path h2spec requests is a DNS query the server answers from its policy at once (a blocked
// name), so every case that waits for a response gets it; a request its HEADERS do not end stays
// open, half-closed (local), until the client ends it, which is what the cases that send frames on
// an open stream after its response (WINDOW_UPDATE, DATA against content-length) need. No case is
// excluded.
import { test, type TestContext } from 'node:test'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { query } from '../../engine/testing/dns.js'
import { encryptedServer, encryptedWorld, run } from '../testing/encrypted.js'

// From dist/dns/h2/: the repository's root, then ../shared beside it. H2SPEC names another copy (a
// worktree whose ../shared is elsewhere).
const H2SPEC = process.env.H2SPEC ?? fileURLToPath(new URL('../../../../shared/tools/h2spec', import.meta.url))

// A passing run takes seconds; each failing case waits h2spec's timeout (-o 5) for the frame it expects.
test(
  'h2spec -S: every HTTP/2 and HPACK conformance case passes against the DoH listener',
  { timeout: 900_000 },
  async (t: TestContext) => {
    if (!existsSync(H2SPEC)) {
      if (process.env.CI === 'true')
        throw new Error(`${H2SPEC} is missing: CI has ../shared/tools/h2spec beside the clone`)
      t.skip(`${H2SPEC} is missing (see ../shared/tools/README.md); h2spec runs where it is present`)
      return
    }
    const w = await encryptedWorld(t)
    const s = await encryptedServer(t, w)
    // casino.example is blocked for 127.0.0.1: answered by the policy, never forwarded.
    const path = `/dns-query?dns=${query('casino.example', 'A').toString('base64url')}`
    const r = await run(
      H2SPEC,
      ['-h', '127.0.0.1', '-p', String(s.transports.doh[0]!), '-t', '-k', '-S', '-P', path, '-o', '5'],
      800_000
    )
    t.assert.ok(r !== undefined, 'h2spec ran')
    const summary = /(\d+) tests, (\d+) passed, (\d+) skipped, (\d+) failed/.exec(r.out)
    t.assert.ok(summary !== null, r.out)
    const [, total, passed] = summary
    t.assert.strictEqual(passed, total, r.out)
    t.assert.ok(Number(total) >= 147, `${total} cases run`)
    t.assert.strictEqual(r.code, 0, r.out)
  }
)
