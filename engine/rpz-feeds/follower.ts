/**
 * Keeps one RPZ feed current (RPZ in): loaded from a zone file, or transferred from a primary and
 * then refreshed as its SOA says (refresh after a success, retry after a failure, and past expire
 * without a success the feed stops being enforced, RFC 1035 3.3.13), at once on a NOTIFY. Each
 * refresh builds or patches the feed completely before it replaces the enforced one: a malformed
 * zone, a cut transfer, a bad TSIG or an IXFR with a gap leaves the previous feed enforced, and the
 * error in `status` (logged by the caller, exported on /metrics).
 */
import { stat } from 'node:fs/promises'
import { createSocket, type Socket } from 'node:dgram'
import { once } from 'node:events'
import { createServer, type Server } from 'node:net'
import { FrameReader, frame } from '../wire/index.js'
import { FeedBuilder, type FeedCounts, type FeedZone } from './feed.js'
import {
  readZoneFile,
  type TextRecord,
  buildEmptyReply,
  OPCODE_NOTIFY,
  parseMessage,
  RCODE_NOTAUTH
} from '../rpz-zones/index.js'
import { transferZone } from './transfer-in.js'
import type { TsigKey } from '../rpz-zones/index.js'

export interface FeedSource {
  zone: string
  /** A zone file, read at start and on each refresh. */
  file?: string
  /** A primary to transfer from. */
  primary?: { host: string; port: number }
  key?: TsigKey
  /** Seconds between refreshes of a zone file (a transferred zone follows its SOA). */
  fileRefresh?: number
  /** Records and bytes a zone may have (a larger one is refused whole); a transfer's idle timeout. */
  maxRecords?: number
  maxBytes?: number
  timeoutMs?: number
}

export interface FeedStatus {
  zone: string
  state: 'loading' | 'ok' | 'failing' | 'expired'
  serial: number | null
  lastSuccess: number | null
  lastError: string | null
  errors: number
  counts: FeedCounts | null
  /** Records of the feed enforced now (the SOA not counted). */
  records: number | null
}

/** The status of a feed before its first load. */
export function loadingStatus(zone: string): FeedStatus {
  return {
    zone,
    state: 'loading',
    serial: null,
    lastSuccess: null,
    lastError: null,
    errors: 0,
    counts: null,
    records: null
  }
}

export class FeedFollower {
  private readonly source: FeedSource
  private current: FeedZone | undefined
  private timer: NodeJS.Timeout | null = null
  private running: Promise<void> | null = null
  private again = false
  private closed = false
  /**
   * After an IXFR that failed in any way (refused over a limit, cut, badly signed, not applicable):
   * the next transfer is a whole zone. Asking the same IXFR again could fail the same way forever,
   * while an AXFR of the primary's current serial may well be good.
   */
  private needAxfr = false
  readonly status: FeedStatus
  /**
   * What the last attempt changed: the whole feed (an AXFR, a zone file), the owners an IXFR changed
   * with their records now, or nothing (null: a failure, or the serial held is current).
   */
  change: 'whole' | ReadonlyMap<string, readonly string[]> | null = null
  /** Called after each attempt (success or failure): the caller logs and swaps its policy. */
  onUpdate: (status: FeedStatus, error?: Error) => void = () => {}
  /**
   * Awaited after each attempt, before the next one starts (the feed does not change meanwhile): the
   * process that follows the feeds writes them into the store here. Its failure is its own to report.
   */
  afterUpdate: (() => Promise<void>) | null = null

  constructor(source: FeedSource) {
    this.source = { ...source, zone: source.zone.toLowerCase().replace(/\.$/, '') }
    this.status = loadingStatus(this.source.zone)
  }

  get zone(): string {
    return this.source.zone
  }

  /** The feed enforced now (undefined before the first success and after expiry). */
  get feed(): FeedZone | undefined {
    return this.status.state === 'expired' ? undefined : this.current
  }

  /** Loads once and schedules the refreshes; resolves after the first attempt. */
  async start(): Promise<void> {
    await this.refresh()
  }

  /** Refreshes now (a NOTIFY); one at a time, a request during one runs once more after it. */
  async refresh(): Promise<void> {
    if (this.running !== null) {
      this.again = true
      return await this.running
    }
    this.running = (async () => {
      do {
        this.again = false
        await this.attempt()
      } while (this.again && !this.closed)
    })()
    try {
      await this.running
    } finally {
      this.running = null
    }
  }

  private async attempt(): Promise<void> {
    let error: Error | undefined
    this.change = null
    try {
      this.current = await this.next()
      this.status.state = 'ok'
      this.status.serial = this.current.serial
      this.status.counts = { ...this.current.counts }
      this.status.records = this.current.recordCount
      this.status.lastSuccess = Date.now()
      this.status.lastError = null
    } catch (err) {
      error = err as Error
      this.status.errors++
      this.status.lastError = error.message
      const expire = (this.current?.timers.expire ?? Infinity) * 1000
      const since = this.status.lastSuccess === null ? Infinity : Date.now() - this.status.lastSuccess
      this.status.state = this.current !== undefined && since > expire ? 'expired' : 'failing'
    }
    this.schedule(error === undefined)
    this.onUpdate(this.status, error)
    await this.afterUpdate?.()
  }

  /** The next complete feed: a new one, or the current one patched by IXFR (all or nothing). */
  private async next(): Promise<FeedZone> {
    const s = this.source
    if (s.file !== undefined) {
      const feed = await this.fromFile(s.file)
      this.change = 'whole'
      return feed
    }
    if (s.primary === undefined) throw new Error(`feed ${s.zone}: neither file nor primary`)
    const req = {
      host: s.primary.host,
      port: s.primary.port,
      zone: s.zone,
      ...(s.key === undefined ? {} : { key: s.key }),
      ...(s.maxRecords === undefined ? {} : { maxRecords: s.maxRecords }),
      ...(s.maxBytes === undefined ? {} : { maxBytes: s.maxBytes }),
      ...(s.timeoutMs === undefined ? {} : { timeoutMs: s.timeoutMs })
    }
    const have = this.current
    // A whole zone goes into the new feed record by record as it arrives (never held as records);
    // the feed enforced now stays as it is until the new one is complete.
    const builder = new FeedBuilder(s.zone)
    const onRecord = (r: TextRecord): void => builder.add(r)
    const incremental = have !== undefined && !this.needAxfr
    try {
      const result = await transferZone(incremental ? { ...req, onRecord, serial: have.serial } : { ...req, onRecord })
      if (result.kind === 'axfr') {
        const feed = builder.finish()
        this.needAxfr = false
        this.change = 'whole'
        return feed
      }
      if (result.kind === 'current' || have === undefined) return have!
      // In place, but all or nothing: applySteps checks every step, and the size of the zone they
      // leave, before it changes anything.
      this.change = have.applySteps(result.steps, s.maxRecords)
      return have
    } catch (err) {
      if (incremental) this.needAxfr = true
      throw err
    }
  }

  /** A zone file read whole and checked against the limits before it becomes a feed. */
  private async fromFile(file: string): Promise<FeedZone> {
    const s = this.source
    const size = (await stat(file)).size
    if (size > (s.maxBytes ?? Infinity))
      throw new Error(`${file}: ${size} bytes, more than ${s.maxBytes} (rpz-feeds.max-bytes)`)
    const builder = new FeedBuilder(s.zone)
    const max = s.maxRecords ?? Infinity
    await readZoneFile(file, s.zone, (r) => {
      builder.add(r)
      if (builder.records > max) throw new Error(`${file}: more than ${s.maxRecords} records (rpz-feeds.max-records)`)
    })
    return builder.finish()
  }

  private schedule(ok: boolean): void {
    if (this.closed) return
    if (this.timer !== null) clearTimeout(this.timer)
    const timers = this.current?.timers
    const seconds =
      this.source.file !== undefined
        ? (this.source.fileRefresh ?? 300)
        : ok
          ? (timers?.refresh ?? 300)
          : (timers?.retry ?? 60)
    this.timer = setTimeout(() => void this.refresh(), Math.max(1, seconds) * 1000)
    this.timer.unref()
  }

  close(): void {
    this.closed = true
    if (this.timer !== null) clearTimeout(this.timer)
  }
}

/**
 * Receives NOTIFYs for the feeds (RFC 1996) on one UDP address: answers each one for a zone it
 * follows and from that zone's primary, and refreshes that feed; anything else gets NOTAUTH.
 */
export async function listenForNotify(
  host: string,
  port: number,
  followers: readonly FeedFollower[],
  primaries: ReadonlyMap<string, string>
): Promise<{ port: number; close(): void }> {
  /** The answer to one NOTIFY (undefined: not a NOTIFY, ignore it); refreshes the feed it names. */
  const handle = (raw: Buffer, address: string): Buffer | undefined => {
    let m
    try {
      m = parseMessage(raw)
    } catch {
      return undefined
    }
    if (m.header.qr || m.header.opcode !== OPCODE_NOTIFY) return undefined
    const zone = m.question[0]?.name
    const follower = followers.find((f) => f.zone === zone)
    const ok = follower !== undefined && primaries.get(follower.zone) === address.replace(/^::ffff:/, '')
    if (ok) void follower.refresh()
    return buildEmptyReply(
      { id: m.header.id, opcode: OPCODE_NOTIFY, question: m.question },
      ok ? 0 : RCODE_NOTAUTH,
      true
    )
  }
  const tcp: Server = createServer((conn) => {
    const reader = new FrameReader()
    conn.on('error', () => conn.destroy())
    conn.setTimeout(10_000, () => conn.destroy())
    conn.on('data', (chunk) => {
      reader.push(chunk)
      for (let raw = reader.read(); raw !== null; raw = reader.read()) {
        const reply = handle(Buffer.from(raw), conn.remoteAddress ?? '')
        if (reply !== undefined) conn.write(frame(reply))
      }
    })
  })
  tcp.listen(port, host)
  await once(tcp, 'listening')
  const bound = (tcp.address() as { port: number }).port
  // Primaries send NOTIFY over UDP, some (Knot) over TCP too: the same port on both.
  const socket: Socket = createSocket(host.includes(':') ? 'udp6' : 'udp4')
  socket.on('message', (raw, rinfo) => {
    const reply = handle(raw, rinfo.address)
    if (reply !== undefined) socket.send(reply, rinfo.port, rinfo.address)
  })
  socket.bind(bound, host)
  await once(socket, 'listening')
  return {
    port: bound,
    close() {
      socket.close()
      tcp.close()
    }
  }
}
