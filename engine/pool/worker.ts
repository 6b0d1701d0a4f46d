// Piscina worker entry: judges a batch of packets (see ./index.ts).
import { workerData } from 'piscina'
import type { Config } from '../config/types.js'
import { CategoryDb } from '../catdb/index.js'
import { Policy, loadSafeHosts } from '../policy/index.js'
import { Store } from '../store/index.js'
import { createBuiltinWhitelist } from '../whitelist/index.js'
import { JUDGE_ANSWER, JUDGE_SAFEVIDEO, Judge, compileBlockAnswers } from '../judge/index.js'
import { buildRecord } from '../judge/index.js'
import { kAnswerBufferSize } from '../wire/index.js'
import type { QueryLogRecord } from '../querylog/index.js'
import { moved, type Moved, type BatchInput, type BatchOutput, type PoolWorkerData } from './index.js'

const data = workerData as PoolWorkerData
const proxy = data.proxy as unknown as Readonly<Config['proxy']>
const store = Store.open(data.dbPath, { ...data.storeOptions, readOnly: true })
const policy = new Policy({
  store,
  categories: new CategoryDb(store),
  builtin: createBuiltinWhitelist(data.vendorNames),
  safeHosts: loadSafeHosts(proxy['safesearch-hosts'])
})
const judge = new Judge({ policy, answers: compileBlockAnswers(proxy), clientSubnet: proxy['client-subnet'], wantCats: data.wantStats })
const scratchOut = Buffer.allocUnsafe(kAnswerBufferSize)
// Between tasks the worker sleeps in Atomics.wait, so timers do not fire: check the store's
// generation at the start of a task when the last check is older than this.
const kGenerationCheckMs = 20
let lastCheck = 0

export default function judgeBatch (input: BatchInput): Moved<BatchOutput> {
  const now = Date.now()
  if (now - lastCheck >= kGenerationCheckMs) {
    lastCheck = now
    // lmdb-js renews its read snapshot on a later event turn, which a worker parked in
    // Atomics.wait between tasks may not get: renew it here so other processes' writes show.
    store.root.resetReadTxn()
    policy.checkGeneration()
  }
  const n = input.sources.length
  const src = Buffer.from(input.bytes)
  const kinds = new Uint8Array(n)
  const spans = new Uint32Array(2 * n)
  const targets: string[] = new Array<string>(n).fill('')
  const records: Array<QueryLogRecord | null> | null = data.wantStats ? [] : null
  // Answers are at most kAnswerBufferSize each; only block/error answers are written here.
  const out = Buffer.allocUnsafe(n * kAnswerBufferSize)
  let used = 0
  try {
    for (let i = 0; i < n; i++) {
      const off = input.spans[2 * i]!     // spans holds 2 entries per packet
      const len = input.spans[2 * i + 1]!
      const msg = src.subarray(off, off + len)
      const kind = judge.judge(msg, input.sources[i]!, scratchOut)
      kinds[i] = kind
      if (kind === JUDGE_ANSWER) {
        scratchOut.copy(out, used, 0, judge.answerLength)
        spans[2 * i] = used
        spans[2 * i + 1] = judge.answerLength
        used += judge.answerLength
      }
      if (kind === JUDGE_SAFEVIDEO) targets[i] = judge.verdict.target
      if (records !== null) records.push(kind === 0 ? null : buildRecord(judge, 0))
    }
  } catch (err) {
    const e = err as { code?: string, message?: string }
    const output: BatchOutput = { kinds, spans, bytes: new ArrayBuffer(0), targets, records: null, input: input.bytes, error: { code: e.code ?? 'ENGINE_POOL_TASK', message: String(e.message) } }
    return moved(output, [input.bytes])
  }
  const bytes = out.buffer.slice(out.byteOffset, out.byteOffset + used)
  const output: BatchOutput = { kinds, spans, bytes, targets, records, input: input.bytes, error: null }
  return moved(output, [bytes, spans.buffer, input.bytes])
}
