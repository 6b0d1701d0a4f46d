/**
 * The live query log's clients (api/routes/live-log.ts): one follower of the DNS role's current CSV files
 * (engine/querylog/follow.ts) shared by every client, each client with its own filter and a bounded queue.
 *
 * A client that does not keep up loses rows and is told so: rows go straight to its socket while the socket
 * takes them; once a write answers false (the kernel's and the adapter's buffers are full) up to
 * `maxQueue` rows wait for the drain, and rows past that are counted, not kept. On the drain the client gets
 * an `event: dropped` with the count, then the waiting rows. So a client costs at most its socket buffer,
 * one chunk and `maxQueue` rows of the api role's memory, whatever it does, and the DNS server, which only
 * appends to its file, never waits for anybody. At most `maxClients` stream at once.
 *
 * The backlog a client gets first (api/live-backlog.ts) is kept here, in time order: with several DNS
 * processes (`proxy.processes`) the follower reads one file after another, so its rows come in blocks per
 * process. When the follower starts, the backlog also reaches back into the files closed in the last
 * `backlogMs` (a rotation does not leave it nearly empty).
 */
import { BLOCK_REASONS, type StatsRow, QueryLogFollower, type FollowerOptions } from '../engine/querylog/index.js'
import type { HttpStream } from '../engine/http/index.js'
import { Backlog, readClosedTails } from './live-backlog.js'

export interface LiveRow {
  time: number
  address: string
  user: string | null
  host: string
  blocked: boolean
  reason: string
  blockedHost: string
  cats: number[]
  blockedCats: number[]
  nxdomain: boolean
  /** `list:<id>` or `rpz:<zone>` when a list subscription or an RPZ feed gave the deciding entry; left out otherwise. */
  source?: string
}

export interface LiveFilter {
  /** Exact user id; `*anonymous*` for addresses with no user. */
  user?: string
  /** Exact address, or a prefix ending in `*`. */
  address?: string
  blockedOnly?: boolean
  /** Substring of the query name (lower case). */
  domain?: string
}

export interface LiveLogOptions extends FollowerOptions {
  /** Rows waiting per client for its socket; default 256. */
  maxQueue?: number
  /** Streams at once; default 32. */
  maxClients?: number
  /** Comment line sent to idle clients (keeps proxies from closing); default 15 s. */
  heartbeatMs?: number
  /** How far back the backlog reaches into closed (rotated, not yet imported) files; default 5 minutes. */
  backlogMs?: number
}

export const ANONYMOUS = '*anonymous*'

export function liveRow(r: StatsRow): LiveRow {
  return {
    time: r.created,
    address: r.address,
    user: r.user === '' ? null : r.user,
    host: r.host,
    blocked: BLOCK_REASONS.has(r.reason),
    reason: r.reason,
    blockedHost: r.blockedHost,
    cats: r.cats,
    blockedCats: r.blockedCats,
    nxdomain: r.nxdomain,
    ...(r.source === undefined ? {} : { source: r.source })
  }
}

export function matches(f: LiveFilter, r: StatsRow): boolean {
  if (f.blockedOnly === true && !BLOCK_REASONS.has(r.reason)) return false
  if (f.user !== undefined && (f.user === ANONYMOUS ? r.user !== '' : r.user !== f.user)) return false
  if (f.address !== undefined) {
    if (f.address.endsWith('*')) {
      if (!r.address.startsWith(f.address.slice(0, -1))) return false
    } else if (r.address !== f.address) return false
  }
  if (f.domain !== undefined && !r.host.includes(f.domain)) return false
  return true
}

function event(r: StatsRow): string {
  return `data: ${JSON.stringify(liveRow(r))}\n\n`
}

class LiveClient {
  readonly #stream: HttpStream
  readonly #filter: LiveFilter
  readonly #maxQueue: number
  #queue: string[] = []
  #congested = false
  dropped = 0
  /** Rows this client lost since it connected (for tests and metrics). */
  lostTotal = 0

  constructor(stream: HttpStream, filter: LiveFilter, maxQueue: number) {
    this.#stream = stream
    this.#filter = filter
    this.#maxQueue = maxQueue
    stream.onDrain(() => {
      this.#drain()
    })
  }

  get queued(): number {
    return this.#queue.length
  }

  offer(rows: readonly StatsRow[]): void {
    let out = ''
    for (const r of rows) {
      if (!matches(this.#filter, r)) continue
      if (!this.#congested) {
        out += event(r)
      } else if (this.#queue.length < this.#maxQueue) {
        this.#queue.push(event(r))
      } else {
        this.dropped++
        this.lostTotal++
      }
    }
    if (out !== '' && !this.#stream.write(out)) this.#congested = true
  }

  /** Rows the server itself skipped (the follower fell behind the DNS server). */
  lost(bytes: number): void {
    this.#send(`event: skipped\ndata: ${JSON.stringify({ bytes })}\n\n`)
  }

  heartbeat(): void {
    if (!this.#congested) this.#send(': ping\n\n')
  }

  #send(text: string): void {
    if (this.#congested) return
    if (!this.#stream.write(text)) this.#congested = true
  }

  #drain(): void {
    this.#congested = false
    if (this.dropped > 0) {
      const n = this.dropped
      this.dropped = 0
      this.#send(`event: dropped\ndata: ${JSON.stringify({ rows: n })}\n\n`)
    }
    const q = this.#queue
    let i = 0
    while (i < q.length && !this.#congested) this.#send(q[i++]!)
    this.#queue = i === q.length ? [] : q.slice(i)
  }
}

export class LiveLog {
  readonly follower: QueryLogFollower
  readonly #dir: string
  readonly #backlog: Backlog
  readonly #backlogMs: number
  readonly #tailBytes: number
  readonly #clients = new Set<LiveClient>()
  readonly #maxQueue: number
  readonly maxClients: number
  readonly #heartbeatMs: number
  #heartbeat: NodeJS.Timeout | undefined = undefined
  #subscribed: Promise<() => void> | undefined = undefined
  /** Clients between arrival and joining the broadcast. */
  #pending = 0

  constructor(dir: string, options: LiveLogOptions = {}) {
    // The follower's own backlog (rows in file order) is not used: this class keeps one in time order.
    this.follower = new QueryLogFollower(dir, { ...options, backlog: 0 })
    this.#dir = dir
    this.#backlog = new Backlog(options.backlog ?? 1000)
    this.#backlogMs = options.backlogMs ?? 5 * 60_000
    this.#tailBytes = options.tailBytes ?? 256 * 1024
    this.#maxQueue = options.maxQueue ?? 256
    this.maxClients = options.maxClients ?? 32
    this.#heartbeatMs = options.heartbeatMs ?? 15_000
  }

  get clients(): number {
    return this.#clients.size
  }

  /** The most rows waiting in any client's queue (bounded by maxQueue). */
  get maxQueued(): number {
    let m = 0
    for (const c of this.#clients) m = Math.max(m, c.queued)
    return m
  }

  get full(): boolean {
    return this.#clients.size + this.#pending >= this.maxClients
  }

  /**
   * Makes sure the follower runs and has read what the files hold now. Call it before `join`, then join
   * without awaiting in between: a client then gets every row written after it asked.
   */
  async ready(): Promise<void> {
    this.#pending++
    try {
      if (this.#subscribed === undefined) {
        this.#subscribed = this.#start()
        this.#heartbeat = setInterval(() => {
          for (const c of this.#clients) c.heartbeat()
        }, this.#heartbeatMs)
        this.#heartbeat.unref()
        await this.#subscribed
      } else {
        await this.#subscribed
        await this.follower.pollNow()
      }
    } finally {
      this.#pending--
    }
  }

  /**
   * Starts the follower. The closed files are read first: a file renamed after that is still open in the
   * follower (it reads it to the end), and one renamed before is not among the current files it opens, so
   * no row is in the backlog twice. The follower's first poll hands over the current files' tails as rows.
   */
  async #start(): Promise<() => void> {
    this.#backlog.clear()
    this.#backlog.add(readClosedTails(this.#dir, Date.now() - this.#backlogMs, this.#tailBytes))
    return await this.follower.subscribe({
      rows: (rows) => {
        this.#backlog.add(rows)
        for (const c of this.#clients) c.offer(rows)
      },
      skipped: (bytes) => {
        for (const c of this.#clients) c.lost(bytes)
      }
    })
  }

  /** The backlog, oldest first (tests). */
  recent(): readonly StatsRow[] {
    return this.#backlog.rows
  }

  /** Serves one client on `stream` until it leaves: the last `last` matching rows, then rows as they come. */
  join(stream: HttpStream, filter: LiveFilter, last: number): void {
    if (stream.closed) {
      this.#stopWhenIdle()
      return
    }
    const client = new LiveClient(stream, filter, this.#maxQueue)
    if (last > 0) {
      const recent = this.#backlog.rows.filter((r) => matches(filter, r))
      client.offer(recent.slice(Math.max(0, recent.length - last)))
    }
    this.#clients.add(client)
    stream.onClose(() => {
      this.#remove(client)
    })
  }

  #remove(client: LiveClient): void {
    if (this.#clients.delete(client)) this.#stopWhenIdle()
  }

  /** The follower polls only while somebody listens. */
  #stopWhenIdle(): void {
    if (this.#clients.size === 0 && this.#pending === 0) {
      const subscribed = this.#subscribed
      this.#subscribed = undefined
      void subscribed?.then((unsubscribe) => {
        unsubscribe()
      })
      if (this.#heartbeat !== undefined) clearInterval(this.#heartbeat)
      this.#heartbeat = undefined
    }
  }

  async close(): Promise<void> {
    if (this.#heartbeat !== undefined) clearInterval(this.#heartbeat)
    this.#heartbeat = undefined
    this.#subscribed = undefined
    await this.follower.stop()
  }
}
