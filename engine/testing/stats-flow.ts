/**
 * Helpers for the statistics fault tests (not a test file): one config for a real `filterd dns` and
 * `filterd api` sharing a statistics folder and store, a paced flow of distinct names through the DNS
 * server (each answered name countable once in the store), and the store's raw rows counted by name.
 */
import { once } from 'node:events'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { TABLES_SQL, openStatsDb, partitionsAmong } from '../stats/db.js'
import { rawHourSources } from '../stats/raw-layout.js'
import { CONF, type Child } from './daemon.js'
import { query, udpAsk, world, writeConfigFile } from './dns.js'
import { releasedPort } from './ports.js'
import { until } from './wait.js'

export interface FlowWorld {
  dir: string
  /** The DNS server's one port, the same across restarts (127.0.0.1, UDP and TCP). */
  dnsPort: number
  dnsFile: string
  apiFile: string
  statsDir: string
  statsDb: string
}

/**
 * A store, a stub upstream and two config files on one statistics folder and store: the dns role's
 * (on a fixed port) and the api role's (the importer). `stats`: keys over the defaults (e.g. rotate).
 */
export async function flowWorld(t: TestContext, stats: Record<string, unknown> = {}): Promise<FlowWorld> {
  const w = await world(t)
  const dnsPort = await releasedPort()
  const statsDir = join(w.dir, 'stats')
  const statsDb = join(w.dir, 'statsdb')
  const dnsFile = writeConfigFile(w, {
    listen: [`127.0.0.1:${dnsPort}`],
    sections: { stats: { dir: statsDir, db: statsDb, ...stats } }
  })
  const doc = JSON.parse(readFileSync(dnsFile, 'utf8')) as Record<string, Record<string, unknown>>
  const apiFile = join(w.dir, 'api.json')
  writeFileSync(
    apiFile,
    JSON.stringify({
      ...doc,
      datafiles: { ...doc.datafiles, cats: CONF, language: 'en' },
      api: { listen: '127.0.0.1:0', log: '-', pid: join(w.dir, 'api.pid') }
    })
  )
  return { dir: w.dir, dnsPort, dnsFile, apiFile, statsDir, statsDb }
}

/** The name of the flow's query number `i` (lower case, as the store keeps it). */
export const flowName = (i: number): string => `n${i}.flow.example`

/**
 * Sends `count` distinct names (flowName(0..count-1)) to `port` at about `perSecond`, `lanes` at a
 * time, all at once (run) or in parts (runUntil); `answered` maps each name answered to the time of its answer (ms). A name not answered
 * (the server was down) is not retried: it is simply not in `answered`.
 */
export class QueryFlow {
  readonly answered = new Map<string, number>()
  unanswered = 0
  sent = 0
  #next = 0

  constructor(
    private readonly port: number,
    private readonly count: number,
    private readonly perSecond: number,
    private readonly lanes = 4
  ) {}

  /** Sends the rest of the names. */
  async run(): Promise<void> {
    await this.runUntil(this.count)
  }

  /** Sends the names from the next one not sent up to number `end` (excluded), paced from now. */
  async runUntil(end: number): Promise<void> {
    const first = this.#next
    const start = Date.now()
    await Promise.all(
      Array.from({ length: this.lanes }, async () => {
        for (;;) {
          if (this.#next >= Math.min(end, this.count)) return
          const i = this.#next++
          // Paced on the start: a slow moment is caught up, never a burst past the rate.
          const due = start + ((i - first) * 1000) / this.perSecond
          if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()))
          this.sent++
          try {
            await udpAsk(this.port, query(flowName(i), 'A'), '127.0.0.1', 2000)
            this.answered.set(flowName(i), Date.now())
          } catch {
            this.unanswered++
          }
        }
      })
    )
  }
}

/** Closed statistics files (`queries-*.csv`) and files being written (`*.part`) in `dir`. */
export function pendingFiles(dir: string): { closed: string[]; open: string[] } {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return { closed: [], open: [] }
  }
  return {
    closed: names.filter((n) => n.startsWith('queries-') && n.endsWith('.csv')),
    open: names.filter((n) => n.endsWith('.part'))
  }
}

/** Waits until every statistics file in `dir` is imported (none closed, none open). */
export async function untilImported(dir: string, limitMs = 60_000): Promise<void> {
  await until(
    'every statistics file imported',
    () => {
      const p = pendingFiles(dir)
      return p.closed.length === 0 && p.open.length === 0
    },
    limitMs,
    100
  )
}

/** The raw rows of the statistics store at `path`, counted by name (every raw partition). */
export async function rawCountsByName(path: string): Promise<Map<string, number>> {
  const db = openStatsDb(path)
  try {
    await db.ready
    return await db.read(async (c) => {
      const names = new Set((await c.runAndReadAll(TABLES_SQL)).getRows().map((r) => String(r[0])))
      const sources = partitionsAmong(names).raw.flatMap((h) => rawHourSources(names, h))
      const counts = new Map<string, number>()
      if (sources.length === 0) return counts
      const r = await c.runAndReadAll(
        `SELECT host, count(*)::DOUBLE FROM (${sources.join(' UNION ALL ')}) GROUP BY host`
      )
      for (const [host, n] of r.getRows()) counts.set(String(host), Number(n))
      return counts
    })
  } finally {
    await db.close()
  }
}

/** The names of `answered` whose count in `counts` is not exactly one, split into lost and doubled. */
export function lostAndDoubled(
  answered: Iterable<string>,
  counts: ReadonlyMap<string, number>
): { lost: string[]; doubled: string[] } {
  const lost: string[] = []
  const doubled: string[] = []
  for (const name of answered) {
    const n = counts.get(name) ?? 0
    if (n === 0) lost.push(name)
    else if (n > 1) doubled.push(name)
  }
  return { lost, doubled }
}

/** Resolves once `child` has exited (at once when it has): after a kill -9, before its restart. */
export const exited = (child: Child): Promise<unknown> =>
  child.proc.exitCode !== null || child.proc.signalCode !== null ? Promise.resolve() : once(child.proc, 'exit')
