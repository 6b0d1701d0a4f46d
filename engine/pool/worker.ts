// Piscina worker entry: judges a batch of packets (see ./index.ts).
import { workerData } from 'piscina'
import { createPolicy } from '../policy/index.js'
import { Store } from '../store/index.js'
import { storedFeedsFromConfig } from '../rpz-feeds/index.js'
import {
  JUDGE_ANSWER,
  JUDGE_LOCAL,
  JUDGE_SAFEVIDEO,
  Judge,
  compileBlockAnswers,
  localAnswersFor,
  buildRecord
} from '../judge/index.js'
import { ANSWER_BUFFER_SIZE } from '../wire/index.js'
import type { QueryLogRecord } from '../querylog/index.js'
import { moved, type Moved, type BatchInput, type BatchOutput, type PoolWorkerData } from './index.js'

const data = workerData as PoolWorkerData
const proxy = data.proxy
const store = Store.open(data.dbPath, { ...data.storeOptions, readOnly: true })
// Between tasks the worker sleeps in Atomics.wait, so timers do not fire and lmdb-js may not get
// the event turn on which it renews its read snapshot: the generation is polled at the start of a
// task, with the snapshot renewed first so other processes' writes show.
const policy = createPolicy(
  { proxy, common: { 'vendor-names': data.vendorNames }, stats: { timezone: data.timezone ?? 'UTC' } },
  store,
  {
    watcher: { renewSnapshot: true },
    feeds: data.rpzFeeds === undefined ? null : storedFeedsFromConfig({ 'rpz-feeds': data.rpzFeeds }, store)
  }
)
const judge = new Judge({
  policy,
  answers: compileBlockAnswers(proxy),
  clientSubnet: proxy['client-subnet'],
  wantCats: data.wantStats,
  local: localAnswersFor(proxy, data.ddr),
  unknownClientId: proxy['unknown-client-id']
})
const scratchOut = Buffer.allocUnsafe(ANSWER_BUFFER_SIZE)

export default function judgeBatch(input: BatchInput): Moved<BatchOutput> {
  policy.watcher.poll()
  const n = input.sources.length
  const src = Buffer.from(input.bytes)
  const kinds = new Uint8Array(n)
  const spans = new Uint32Array(2 * n)
  const targets: string[] = new Array<string>(n).fill('')
  const ttlCaps: number[] = new Array<number>(n).fill(-1)
  const records: Array<QueryLogRecord | null> | null = data.wantStats ? [] : null
  // Answers are at most ANSWER_BUFFER_SIZE each; only block/error answers are written here.
  const out = Buffer.allocUnsafe(n * ANSWER_BUFFER_SIZE)
  let used = 0
  try {
    for (let i = 0; i < n; i++) {
      const off = input.spans[2 * i]! // spans holds 2 entries per packet
      const len = input.spans[2 * i + 1]!
      const msg = src.subarray(off, off + len)
      const kind = judge.judge(msg, input.sources[i]!, scratchOut, input.clientIds?.[i] ?? null)
      kinds[i] = kind
      if (kind === JUDGE_ANSWER || kind === JUDGE_LOCAL) {
        scratchOut.copy(out, used, 0, judge.answerLength)
        spans[2 * i] = used
        spans[2 * i + 1] = judge.answerLength
        used += judge.answerLength
      }
      if (kind === JUDGE_SAFEVIDEO) targets[i] = judge.verdict.target
      ttlCaps[i] = judge.verdict.ttlCap
      if (records !== null) records.push(kind === 0 ? null : buildRecord(judge, 0))
    }
  } catch (err) {
    const e = err as { code?: string; message?: string }
    const output: BatchOutput = {
      kinds,
      spans,
      bytes: new ArrayBuffer(0),
      targets,
      records: null,
      input: input.bytes,
      error: { code: e.code ?? 'ENGINE_POOL_TASK', message: String(e.message) }
    }
    return moved(output, [input.bytes])
  }
  const bytes = out.buffer.slice(out.byteOffset, out.byteOffset + used)
  const output: BatchOutput = { kinds, spans, bytes, targets, ttlCaps, records, input: input.bytes, error: null }
  return moved(output, [bytes, spans.buffer, input.bytes])
}
