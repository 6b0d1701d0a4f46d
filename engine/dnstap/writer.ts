/*
 * A Frame Streams writer to a Unix or TCP socket (./fstrm.ts), made for a DNS server that must
 * never wait for it: frames are encoded straight into a chunk buffer on the caller's turn, and
 * handed to the socket 32 KiB or 10 ms at a time (a socket write per query, or even per
 * event-loop turn, cost more than the encoding), and what the collector has not taken is held up
 * to `queueBytes`. Past that,
 * new frames are dropped and counted, so a slow, stuck or absent collector costs a few counter
 * increments per query and a bounded amount of memory, never a stalled or slower DNS path.
 *
 * The connection does the bidirectional handshake (READY, ACCEPT, START) that fstrm_capture,
 * dnstap collectors and the fstrm library's readers expect, and when it breaks (collector
 * restarted, never there) it is made again with a backoff from 100 ms doubling to 5 s; frames
 * keep queueing meanwhile and go out once the handshake is done again.
 */
import { connect, type Socket } from 'node:net'
import type { Logger } from '../log/index.js'
import {
  CONTROL_ACCEPT,
  CONTROL_FINISH,
  CONTROL_READY,
  CONTROL_START,
  CONTROL_STOP,
  DNSTAP_CONTENT_TYPE,
  controlFrame,
  readControlFrame
} from './fstrm.js'

export type FrameStreamTarget =
  | { readonly kind: 'unix'; readonly path: string }
  | { readonly kind: 'tcp'; readonly host: string; readonly port: number }

export interface FrameStreamWriterOptions {
  target: FrameStreamTarget
  /** Bytes of frames held while the collector is slow or away; past it frames are dropped. */
  queueBytes: number
  contentType?: string
  logger?: Logger
  reconnectMinMs?: number
  reconnectMaxMs?: number
  /** A collector that does not ACCEPT within this is dropped and tried again later. */
  handshakeTimeoutMs?: number
}

type State = 'down' | 'connecting' | 'handshake' | 'started' | 'stopping'

/** Frames are encoded into chunks of this size (one socket write per chunk and turn). */
const CHUNK_BYTES = 64 * 1024
/** A chunk tail smaller than this after a flush is not worth keeping: a new chunk is taken. */
const MIN_TAIL = 4096
/** Frames wait at most this long to be handed to the socket... */
const FLUSH_MS = 10
/** ...or until this many bytes are ready: a few large writes rather than one per event-loop turn. */
const FLUSH_BYTES = 32 * 1024
/** Bytes the socket itself may hold unsent before frames wait in our own (bounded) queue. */
const SOCKET_HIGH_WATER = 256 * 1024
/** Chunks kept for reuse once the socket is done with them. */
const FREE_CHUNKS = 16

/**
 * One chunk's memory, reused once every part of it handed to the socket is written: a fresh
 * 64 KiB per few hundred frames would cost an allocation, and page faults on its first writes,
 * that showed up as the largest part of the encoding cost.
 */
class Chunk {
  readonly buf: Buffer
  /** Parts queued or handed to the socket and not yet written. */
  pending = 0
  /** No more frames go into it: it is free when `pending` drops to 0. */
  retired = false
  readonly release: () => void
  constructor(size: number, free: Chunk[]) {
    this.buf = Buffer.allocUnsafe(size)
    this.release = () => {
      if (--this.pending === 0 && this.retired && free.length < FREE_CHUNKS && this.buf.length === CHUNK_BYTES) {
        this.retired = false
        free.push(this)
      }
    }
  }
}

export class FrameStreamWriter {
  /** The chunk the next frame is encoded into, from offset `used` (see beginFrame). */
  chunk: Buffer
  used = 0
  /** Frames handed to a collector's connection. */
  sentFrames = 0
  /** Frames dropped because the queue was full (collector slow or away). */
  droppedFrames = 0
  private chunkFrames = 0
  private current: Chunk
  /** Where the current chunk's frames not yet queued begin. */
  private sealedTo = 0
  private readonly free: Chunk[] = []
  private readonly queue: Array<{ bytes: Buffer; frames: number; owner: Chunk }> = []
  /** Bytes of frames not yet handed to the socket: the queue and the current chunk. */
  private queued = 0
  private readonly limit: number
  private readonly target: FrameStreamTarget
  private readonly contentType: string
  private readonly logger: Logger | undefined
  private readonly minWait: number
  private readonly maxWait: number
  private readonly handshakeMs: number
  private wait: number
  private state: State = 'down'
  private socket: Socket | null = null
  private inbound: Buffer = Buffer.alloc(0)
  private flushScheduled = false
  private flushTimer: NodeJS.Timeout | null = null
  private reconnectTimer: NodeJS.Timeout | null = null
  private handshakeTimer: NodeJS.Timeout | null = null
  private closed = false
  private failing = false
  private onFinish: (() => void) | null = null

  constructor(o: FrameStreamWriterOptions) {
    this.target = o.target
    this.limit = o.queueBytes
    this.contentType = o.contentType ?? DNSTAP_CONTENT_TYPE
    this.logger = o.logger
    this.minWait = o.reconnectMinMs ?? 100
    this.maxWait = o.reconnectMaxMs ?? 5000
    this.handshakeMs = o.handshakeTimeoutMs ?? 5000
    this.wait = this.minWait
    this.current = new Chunk(CHUNK_BYTES, this.free)
    this.chunk = this.current.buf
  }

  /** Starts connecting (in the background: frames queue until the collector has accepted). */
  start(): void {
    this.connect()
  }

  /** True once the collector has accepted the stream and data frames flow. */
  get connected(): boolean {
    return this.state === 'started'
  }

  /**
   * Reserves a data frame of `size` payload bytes in `chunk` and returns the offset where the
   * caller writes them now, synchronously; or -1 when the queue is full (the frame is counted
   * as dropped and the caller writes nothing).
   */
  beginFrame(size: number): number {
    const need = 4 + size
    if (this.closed || this.queued + need > this.limit) {
      this.droppedFrames++
      return -1
    }
    if (this.used + need > this.chunk.length) this.newChunk(need)
    this.chunk.writeUInt32BE(size, this.used)
    const off = this.used + 4
    this.used += need
    this.queued += need
    this.chunkFrames++
    if (this.used - this.sealedTo >= FLUSH_BYTES) {
      if (!this.flushScheduled) {
        this.flushScheduled = true
        setImmediate(this.flush)
      }
    } else if (this.flushTimer === null) {
      this.flushTimer = setTimeout(this.flush, FLUSH_MS)
      this.flushTimer.unref()
    }
    return off
  }

  // The current chunk has no room for `need` bytes: queue what it holds, take another.
  private newChunk(need: number): void {
    this.seal()
    if (this.chunk.length - this.used < need) this.retire(need)
  }

  private retire(need: number): void {
    const old = this.current
    old.retired = true
    if (old.pending === 0) {
      old.pending = 1
      old.release()
    }
    this.current =
      need <= CHUNK_BYTES ? (this.free.pop() ?? new Chunk(CHUNK_BYTES, this.free)) : new Chunk(need, this.free)
    this.chunk = this.current.buf
    this.used = this.sealedTo = 0
  }

  // Queues the frames of the current chunk; the rest of it stays for the next frames.
  private seal(): void {
    if (this.used === this.sealedTo) return
    this.queue.push({
      bytes: this.chunk.subarray(this.sealedTo, this.used),
      frames: this.chunkFrames,
      owner: this.current
    })
    this.current.pending++
    this.chunkFrames = 0
    this.sealedTo = this.used
    if (this.chunk.length - this.used < MIN_TAIL) this.retire(0)
  }

  private readonly flush = (): void => {
    this.flushScheduled = false
    if (this.flushTimer !== null) {
      clearTimeout(this.flushTimer)
      this.flushTimer = null
    }
    this.seal()
    if (this.state === 'started') this.drain()
  }

  // Hands queued chunks to the socket while it holds less than SOCKET_HIGH_WATER unsent.
  private drain(): void {
    const s = this.socket
    if (s === null) return
    while (this.queue.length > 0 && s.writableLength < SOCKET_HIGH_WATER) {
      const c = this.queue.shift()! // length > 0
      s.write(c.bytes, c.owner.release)
      this.queued -= c.bytes.length
      this.sentFrames += c.frames
    }
  }

  // ---- the connection --------------------------------------------------------------------------

  private connect(): void {
    this.reconnectTimer = null
    if (this.closed) return
    const s =
      this.target.kind === 'unix'
        ? connect({ path: this.target.path })
        : connect({ host: this.target.host, port: this.target.port })
    this.socket = s
    this.state = 'connecting'
    this.inbound = Buffer.alloc(0)
    s.on('connect', () => {
      if (this.socket !== s) return
      this.state = 'handshake'
      s.write(controlFrame(CONTROL_READY, [this.contentType]))
      this.handshakeTimer = setTimeout(() => {
        this.fail(s, new Error('no ACCEPT from the collector'))
      }, this.handshakeMs)
      this.handshakeTimer.unref()
    })
    s.on('data', (d: Buffer) => {
      this.onData(s, d)
    })
    s.on('drain', () => {
      if (this.socket === s && this.state === 'started') this.drain()
    })
    s.on('error', (err) => {
      this.fail(s, err)
    })
    s.on('close', () => {
      this.onClose(s)
    })
  }

  private onData(s: Socket, d: Buffer): void {
    if (this.socket !== s) return
    this.inbound = this.inbound.length === 0 ? d : Buffer.concat([this.inbound, d])
    for (;;) {
      const r = readControlFrame(this.inbound)
      if (r === null) return
      if ('problem' in r) {
        this.fail(s, new Error(r.problem))
        return
      }
      this.inbound = this.inbound.subarray(r.size)
      this.onControl(s, r.frame.type, r.frame.contentTypes)
      if (this.socket !== s) return
    }
  }

  private onControl(s: Socket, type: number, contentTypes: readonly string[]): void {
    if (this.state === 'handshake' && type === CONTROL_ACCEPT) {
      if (contentTypes.length > 0 && !contentTypes.includes(this.contentType)) {
        this.fail(s, new Error(`the collector accepts ${contentTypes.join(', ')}, not ${this.contentType}`))
        return
      }
      if (this.handshakeTimer !== null) clearTimeout(this.handshakeTimer)
      s.write(controlFrame(CONTROL_START, [this.contentType]))
      this.state = 'started'
      this.wait = this.minWait
      if (this.failing) this.logger?.info({ dnstap: this.describe() }, 'dnstap: collector connected again')
      this.failing = false
      this.drain()
      return
    }
    if (this.state === 'stopping' && type === CONTROL_FINISH) {
      this.onFinish?.()
      return
    }
    this.fail(s, new Error(`unexpected fstrm control frame ${type} in state ${this.state}`))
  }

  private fail(s: Socket, err: Error): void {
    if (this.socket !== s) return
    if (!this.failing && !this.closed) {
      // One line per outage, not one per reconnect attempt.
      this.failing = true
      this.logger?.warn(
        { dnstap: this.describe(), err: err.message },
        'dnstap: collector unreachable; queueing, then dropping, until it is back'
      )
    }
    s.destroy()
  }

  private onClose(s: Socket): void {
    if (this.socket !== s) return
    if (this.handshakeTimer !== null) clearTimeout(this.handshakeTimer)
    this.socket = null
    this.state = 'down'
    this.onFinish?.()
    if (this.closed) return
    if (!this.failing) {
      this.failing = true
      this.logger?.warn({ dnstap: this.describe() }, 'dnstap: collector closed the connection; reconnecting')
    }
    this.reconnectTimer = setTimeout(() => {
      this.connect()
    }, this.wait)
    this.reconnectTimer.unref()
    this.wait = Math.min(this.wait * 2, this.maxWait)
  }

  private describe(): string {
    return this.target.kind === 'unix' ? `unix:${this.target.path}` : `tcp:${this.target.host}:${this.target.port}`
  }

  /**
   * Sends what is queued and ends the stream (STOP, then FINISH from the collector, at most
   * `timeoutMs`), then closes the connection. Frames begun after close are dropped.
   */
  async close(timeoutMs = 2000): Promise<void> {
    if (this.closed) return
    this.closed = true
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer)
    if (this.flushTimer !== null) clearTimeout(this.flushTimer)
    this.seal()
    // A handshake under way (a process stopped right after it started) is given a moment to finish.
    for (
      let waited = 0;
      (this.state === 'connecting' || this.state === 'handshake') && waited < timeoutMs / 2;
      waited += 10
    ) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    const s = this.socket
    if (s === null) return
    if (this.state !== 'started') {
      s.destroy()
      return
    }
    for (const c of this.queue.splice(0)) {
      s.write(c.bytes, c.owner.release)
      this.sentFrames += c.frames
    }
    this.queued = 0
    this.state = 'stopping'
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        resolve()
      }, timeoutMs)
      this.onFinish = () => {
        clearTimeout(timer)
        resolve()
      }
      s.write(controlFrame(CONTROL_STOP))
    })
    this.onFinish = null
    s.destroy()
  }
}
