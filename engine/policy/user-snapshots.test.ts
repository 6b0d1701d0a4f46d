// The users' snapshots by name: every user found after many inserts (the index doubled several times),
// after deletes in the middle of probe runs, replaced in place, and gone after clear; against a Map.
import { test, type TestContext } from 'node:test'
import { UserSnapshots } from './user-snapshots.js'

interface Snap {
  readonly user: string | null
  readonly n: number
}

test('finds every user after inserts, deletes and replacements, as a Map does', (t: TestContext) => {
  const users = new UserSnapshots<Snap>()
  const model = new Map<string, Snap>()
  // Names that differ in one character, and long ones: many share probe runs in a small index.
  const names = Array.from({ length: 5000 }, (_, i) => (i % 3 === 0 ? `user-${i}@isp.example` : `u${i}`))
  for (const [n, name] of names.entries()) {
    const snap = { user: name, n }
    users.set(snap)
    model.set(name, snap)
  }
  let seed = 1
  for (let op = 0; op < 40_000; op++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
    const name = names[seed % names.length]!
    if (op % 3 === 0) {
      users.delete(name)
      model.delete(name)
    } else if (op % 3 === 1) {
      const snap = { user: name, n: op }
      users.set(snap)
      model.set(name, snap)
    } else t.assert.strictEqual(users.get(name), model.get(name), `${name} at op ${op}`)
  }
  t.assert.strictEqual(users.size, model.size)
  for (const name of names) t.assert.strictEqual(users.get(name), model.get(name), name)
  users.clear()
  t.assert.strictEqual(users.size, 0)
  t.assert.strictEqual(users.get('u1'), undefined)
  users.set({ user: 'u1', n: 1 })
  t.assert.strictEqual(users.get('u1')?.n, 1)
})

test('refuses an anonymous snapshot, which no name finds', (t: TestContext) => {
  t.assert.throws(() => new UserSnapshots<Snap>().set({ user: null, n: 0 }), TypeError)
})
