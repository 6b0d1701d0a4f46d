// The tables that live for a policy generation key their entries by flat strings or numbers: a key built by
// JSON.stringify or a template literal is a rope in V8 (a concatenated string over its parts), several heap
// objects a key, and 100,000 users with schedules of their own hold hundreds of thousands of such keys.
// Counted in a real heap snapshot of this process.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { getHeapSnapshot } from 'node:v8'
import { ScheduleBoard, type ScheduledRule } from '../schedule/index.js'
import { RuleCompiler } from './scheduled.js'
import { PolicyInterner } from './shared-policy.js'

/** Concatenated strings (ropes) in a heap snapshot of this process; taking it collects the garbage first. */
async function ropes(): Promise<number> {
  let text = ''
  for await (const chunk of getHeapSnapshot()) text += String(chunk)
  const snap = JSON.parse(text) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }
    nodes: number[]
  }
  const width = snap.snapshot.meta.node_fields.length
  const typeAt = snap.snapshot.meta.node_fields.indexOf('type')
  const rope = snap.snapshot.meta.node_types[0].indexOf('concatenated string')
  let n = 0
  for (let i = 0; i < snap.nodes.length; i += width) if (snap.nodes[i + typeAt] === rope) n++
  return n
}

const pad = (n: number): string => String(n).padStart(2, '0')

/** Rule i: windows no other rule has. */
const rule = (i: number): ScheduledRule => ({
  name: `own ${i}`,
  windows: [
    { days: ['mon', 'sat'], from: `${pad(i % 12)}:${pad(Math.floor(i / 12) % 60)}`, to: `${pad(13 + (i % 10))}:00` }
  ],
  filter: [3, 7]
})

test('the board, the rule compiler and the policy interner keep no rope as a key', async () => {
  const board = new ScheduleBoard(() => Date.parse('2026-12-02T12:00:00Z'))
  const rules = new RuleCompiler(board)
  const policies = new PolicyInterner()
  const COUNT = 600
  const before = await ropes()
  for (let i = 0; i < COUNT; i++) {
    const scheduled = rules.part([rule(i)], 'Europe/Berlin')
    policies.policy({ enabled: true, safesearch: i % 2 === 0, safevideo: false, filter: [1, 2], scheduled })
  }
  assert.equal(board.size, COUNT)
  const added = (await ropes()) - before
  // Four tables a user (schedule, rule, part, policy): each rope key would be at least one rope.
  assert.ok(added < COUNT / 10, `${added} ropes added for ${COUNT} users`)
  // Still found by content: the same rules again make nothing new.
  const again = rules.part([rule(7)], 'Europe/Berlin')
  assert.equal(again, rules.part([rule(7)], 'Europe/Berlin'))
  assert.equal(board.size, COUNT)
  board.clear()
})
