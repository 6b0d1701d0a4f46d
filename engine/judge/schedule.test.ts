// A scheduled block through the judge: the statistics record carries the schedule's reason,
// which the reports count as a block, and the block answer's TTL ends at the rule's boundary.
import { test, type TestContext } from 'node:test'
import dnsPacket from 'dns-packet'
import { CATEGORY } from '../categories/index.js'
import { CategoryDb } from '../catdb/index.js'
import { HostKeys, Policy, Verdict, loadSafeHosts } from '../policy/index.js'
import { BLOCK_REASONS } from '../querylog/index.js'
import { addUser, buildCats, tempStore } from '../testing/store.js'
import { createBuiltinWhitelist } from '../whitelist/index.js'
import { ANSWER_BUFFER_SIZE } from '../wire/index.js'
import { JUDGE_ANSWER, Judge, buildRecord, compileBlockAnswers } from './index.js'

test('a scheduled block is recorded as a schedule block and its TTL ends at the boundary', async (t: TestContext) => {
  const { store } = tempStore(t, 'filterd-judge-sched-')
  await buildCats(store, { 'social.example': [CATEGORY.SOCIAL_NETWORKS] })
  await addUser(store, {
    name: 'kid',
    ip: ['10.0.0.1'],
    schedules: [
      {
        name: 'evening',
        timezone: 'UTC',
        windows: [{ days: ['thu'], from: '20:00', to: '22:00' }],
        filter: [CATEGORY.SOCIAL_NETWORKS]
      }
    ]
  })
  const policy = new Policy({
    store,
    categories: new CategoryDb(store),
    builtin: createBuiltinWhitelist([]),
    safeHosts: loadSafeHosts(),
    clock: () => Date.parse('2026-11-26T21:59:20Z')
  })
  t.after(() => {
    policy.schedules.stop()
  })
  const judge = new Judge({
    policy,
    answers: compileBlockAnswers({ 'blockpage-ip': ['192.0.2.1'], ttl: 300 } as never),
    clientSubnet: false,
    wantCats: true
  })
  const out = Buffer.alloc(ANSWER_BUFFER_SIZE)
  const msg = dnsPacket.encode({ type: 'query', id: 9, questions: [{ type: 'A', name: 'www.social.example' }] })
  t.assert.strictEqual(judge.judge(msg, '10.0.0.1', out), JUDGE_ANSWER)
  const rec = buildRecord(judge, 0)
  t.assert.deepStrictEqual([rec.reason, rec.user, rec.blockedName], ['schedule-category', 'kid', 'social.example'])
  t.assert.ok(BLOCK_REASONS.has(rec.reason), 'counted as a block by the reports')
  const answer = dnsPacket.decode(out.subarray(0, judge.answerLength))
  t.assert.deepStrictEqual(
    answer.answers?.map((a) => ('ttl' in a ? a.ttl : -1)),
    [40]
  )
  // The policy alone agrees.
  t.assert.strictEqual(policy.evaluate('10.0.0.1', new HostKeys('social.example'), new Verdict()).ttlCap, 40)
})
