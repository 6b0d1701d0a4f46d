/*
 * The Piscina path (docs/contract.md, "The shape of the DNS path"): the front loop collects the packets of one event-loop
 * turn (or `batch-size` of them), copies them into one ArrayBuffer and moves it to a worker
 * (Piscina's transferable protocol, the same thing `Piscina.move` does: no structured clone of
 * the bytes). The worker judges every packet with the same `Judge` and `Policy` as the inline
 * path, over its own read-only store handle, and moves back one ArrayBuffer of answers.
 *
 * perf-study/REPORT.md measured one task per packet at 18-87 µs of round trip against 1.45 µs of
 * work; batching brings the overhead down to about 1-2 µs per packet, but the front thread still
 * does all socket I/O. bench/results/2026-11-history.md has this project's numbers.
 */
import type { Config } from '../config/index.js'
import { Piscina, transferableSymbol, valueSymbol } from 'piscina'
import type { QueryLogRecord } from '../querylog/index.js'
import type { StoreOptions } from '../store/index.js'
import type { DdrEndpoints } from '../judge/index.js'

/** What each pool worker needs to build its own Policy (plain data: it crosses threads). */
export interface PoolWorkerData {
  /** LMDB environment path (common.db), opened read-only by every worker. */
  dbPath: string
  /** The config's initial `/config/` values (engine/store configuredStoreOptions). */
  storeOptions: StoreOptions
  /** The proxy section (blockpage-ip, ttl, client-subnet, safesearch-hosts), cloned to the worker. */
  proxy: Config['proxy']
  vendorNames: readonly string[]
  /** The endpoints DDR answers name, or null (engine/judge/local-answers.ts). */
  ddr: DdrEndpoints | null
  /** `stats.timezone`: the zone of a scheduled rule that names none. */
  timezone?: string
  /** Build statistics fields (the front's sink is enabled). */
  wantStats: boolean
  /** `rpz-feeds`: the feeds the worker reads from the store (engine/rpz-feeds/feed-store.ts). */
  rpzFeeds?: Config['rpz-feeds']
}

export interface BatchInput {
  /** Packets back to back. */
  bytes: ArrayBuffer
  /** [offset, length] per packet. */
  spans: Uint32Array
  /** Source address per packet. */
  sources: string[]
  /** Client ID per packet (DoH path, DoT server name), or null when no packet of the batch has one. */
  clientIds: Array<string | null> | null
}

/** Per packet: the judge kind and, for answers, where its bytes are in `bytes`. */
export interface BatchOutput {
  kinds: Uint8Array
  /** [offset, length] in `bytes` per packet (length 0: no answer). */
  spans: Uint32Array
  bytes: ArrayBuffer
  /** Safe-video target per packet ('' otherwise). */
  targets: string[]
  /** A forwarded answer's TTL cap per packet (a scheduled rule's boundary), -1 for none. */
  ttlCaps?: number[]
  /** Statistics fields per packet (time, nxdomain and rcode of forwards filled by the front), or null. */
  records: Array<QueryLogRecord | null> | null
  /** The task's input bytes, moved back (the front forwards queries from them without a copy). */
  input: ArrayBuffer
  /** A worker failure for the whole batch (codes cross threads, not classes). */
  error: { code: string; message: string } | null
}

/** A value whose ArrayBuffers are transferred, not cloned (Piscina's transferable protocol). */
export class Moved<T extends object> {
  readonly #value: T
  readonly #list: ArrayBuffer[]
  constructor(value: T, list: ArrayBuffer[]) {
    this.#value = value
    this.#list = list
  }

  get [transferableSymbol](): ArrayBuffer[] {
    return this.#list
  }
  get [valueSymbol](): T {
    return this.#value
  }
}

/** `value` with `list` transferred, marked with `Piscina.move` so Piscina transfers instead of cloning. */
export function moved<T extends object>(value: T, list: ArrayBuffer[]): Moved<T> {
  return Piscina.move(new Moved(value, list)) as unknown as Moved<T>
}

export interface JudgePoolOptions {
  workers: number
  data: PoolWorkerData
}

/** A Piscina pool of judge workers. */
export class JudgePool {
  readonly piscina: Piscina
  constructor(o: JudgePoolOptions) {
    this.piscina = new Piscina({
      filename: new URL('./worker.js', import.meta.url).href,
      minThreads: o.workers,
      maxThreads: o.workers,
      // The study: conc 1 starves the pool when batches are small; 4 in flight per worker was best.
      concurrentTasksPerWorker: 4,
      idleTimeout: Infinity,
      workerData: o.data
    })
  }

  run(input: BatchInput): Promise<BatchOutput> {
    const list = [input.bytes, input.spans.buffer as ArrayBuffer]
    return this.piscina.run(moved(input, list)) as Promise<BatchOutput>
  }

  /** Tasks waiting for a worker (the metrics' pool queue depth). */
  get queueSize(): number {
    return this.piscina.queueSize
  }

  async close(): Promise<void> {
    await this.piscina.destroy()
  }
}
