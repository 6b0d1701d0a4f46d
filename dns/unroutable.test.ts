// A resolver with no route to it (the host's network not up yet, an address family it lacks) must
// not stop `filterd dns` from starting: it stays down, the others answer, and one warning names it.
// Before, the role exited with "connect: Network is unreachable". The daemon runs in a network
// namespace of its own (`unshare -n`, root), where 10.255.255.1 has no route.
import { test, type TestContext } from 'node:test'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'

const CHILD = fileURLToPath(new URL('./testing/unroutable-child.js', import.meta.url))
const run = promisify(execFile)

async function canUnshare(): Promise<boolean> {
  try {
    await run('unshare', ['-n', 'true'])
    return true
  } catch {
    return false
  }
}

for (const io of ['native', 'dgram'] as const) {
  test(
    `${io}: a resolver with no route leaves the role running on the others, with one warning naming it`,
    { timeout: 60_000 },
    async (t: TestContext) => {
      if (!(await canUnshare())) {
        if (process.env.CI === 'true') t.assert.fail('unshare -n is not available (CI runs as root)')
        t.skip('unshare -n needs root')
        return
      }
      const { stdout } = await run('unshare', ['-n', process.execPath, CHILD, io], { timeout: 50_000 })
      const out = JSON.parse(stdout.trim().split('\n').pop()!) as { answer: string | null; log: string }
      t.assert.strictEqual(out.answer, '198.51.100.10', `answered by the reachable resolver; daemon log:\n${out.log}`)
      const warnings = out.log.split('\n').filter((l) => l.includes('10.255.255.1:53'))
      t.assert.strictEqual(warnings.length, 1, out.log)
      const line = JSON.parse(warnings[0]!) as { level: number; resolver: string; err: string }
      t.assert.strictEqual(line.level, 40)
      t.assert.strictEqual(line.resolver, '10.255.255.1:53')
      t.assert.match(line.err, /unreachable|ENETUNREACH/i)
    }
  )
}
