/*
 * The server side of one HTTP/2 connection (RFC 9113) over a TLS socket, as small as DoH allows:
 * request streams opened by HEADERS (with CONTINUATION), their bodies as DATA, one response each
 * (HEADERS and DATA), and the connection's own frames (SETTINGS, PING, WINDOW_UPDATE, RST_STREAM,
 * GOAWAY). Frames are parsed straight from the socket's 'data' chunks, and every frame one
 * event-loop turn makes for a connection leaves in one socket write. docs/dns.md, "DNS over HTTPS".
 *
 * What a client may cost, each bounded:
 * - at most `maxStreams` streams open (SETTINGS_MAX_CONCURRENT_STREAMS; past it REFUSED_STREAM);
 * - a frame at most MAX_FRAME (FRAME_SIZE_ERROR past it); a frame split over several reads waits in
 *   one buffer of its own size, so however the client slices its bytes (one-byte TLS records) the
 *   unparsed input costs at most one frame;
 * - a header block at most MAX_HEADER_BLOCK octets over at most MAX_CONTINUATIONS frames, decoding to
 *   at most MAX_HEADER_LIST octets (the CONTINUATION flood and the HPACK bomb: ENHANCE_YOUR_CALM);
 * - DATA within the flow-control windows (FLOW_CONTROL_ERROR past them): the connection's is given
 *   back as DATA is read, a stream's is never raised (a DoH body is at most 64 KiB);
 * - SETTINGS at most MAX_SETTINGS_ENTRIES entries a frame and MAX_SETTINGS_PER_SECOND frames a second
 *   (ENHANCE_YOUR_CALM past them), an INITIAL_WINDOW_SIZE change applied to the open streams once a frame;
 * - our output: if the client does not read it, past MAX_UNSENT bytes queued the connection is closed
 *   (floods of PING or SETTINGS whose answers pile up).
 * A protocol error ends the connection with GOAWAY; the front closes one that resets too many streams.
 *
 * Stream states (RFC 9113 §5.1): a stream is open in `streams` from its HEADERS until both sides are
 * done or one resets it; an ID above `lastStream` is idle. Of the closed ones the connection keeps
 * the IDs it reset itself (the last RESET_MEMORY: frames the client sent before it saw the reset are
 * ignored, §5.4.2) and the ranges of IDs the client skipped (a HEADERS there is PROTOCOL_ERROR,
 * §5.1.1; on a stream closed after use, STREAM_CLOSED). A request that is malformed (./request-check.ts,
 * or its body not its content-length) is reset with PROTOCOL_ERROR before the DoH exchange sees it.
 */
import { performance } from 'node:perf_hooks'
import type { TLSSocket } from 'node:tls'
import type { DohSession } from '../doh-exchange.js'
import { DNS_ANSWER_MAX, encodeDnsAnswer, encodeResponse, encodedSize, HpackDecoder } from './hpack.js'
import {
  Flag,
  FRAME_HEADER,
  FrameType,
  FrameWriter,
  H2Error,
  INITIAL_WINDOW,
  MAX_FRAME,
  MAX_WINDOW,
  PREFACE,
  Setting
} from './frames.js'
import { checkRequest, checkTrailers, MALFORMED, NO_LENGTH } from './request-check.js'
import { H2Stream, type StreamConnection, type StreamPeer } from './stream.js'

/** A header block's octets at most, over all its frames. */
export const MAX_HEADER_BLOCK = 16384
/** CONTINUATION frames after one HEADERS at most. */
export const MAX_CONTINUATIONS = 16
/** A decoded header list's size at most (RFC 9113 §6.5.2), announced as SETTINGS_MAX_HEADER_LIST_SIZE. */
export const MAX_HEADER_LIST = 16384
/** Bytes written but not yet taken by the socket, at most. */
export const MAX_UNSENT = 1 << 20
/** Entries of one SETTINGS frame at most (nghttp2's limit): each may be a walk of the open streams. */
export const MAX_SETTINGS_ENTRIES = 32
/** SETTINGS frames a second at most: a client sends one or two per connection, each is acknowledged. */
export const MAX_SETTINGS_PER_SECOND = 64
/** The stream IDs we reset that are remembered (their late frames ignored): a few rounds of streams. */
const RESET_MEMORY = 256
/** The ranges of stream IDs the client skipped that are remembered. */
const SKIPPED_MEMORY = 64

export interface H2ConnectionOptions {
  /** SETTINGS_MAX_CONCURRENT_STREAMS. */
  maxStreams: number
  /** A request stream whose headers are complete (its body may follow). */
  onStream(conn: H2Connection, stream: H2Stream): void
  /** The client reset a stream before its response. */
  onReset(conn: H2Connection): void
  /**
   * After each read is handled, its length (the front's message deadline). Called from the one
   * 'data' listener: a second listener makes every emit copy the listener array.
   */
  afterRead?(chunkLength: number): void
}

/** Connections with frames to write, written once per event-loop turn. */
const dirty: H2Connection[] = []
let flushScheduled = false

function flushAll(): void {
  flushScheduled = false
  for (let i = 0; i < dirty.length; i++) dirty[i]!.flush()
  dirty.length = 0
}

export class H2Connection implements DohSession, StreamConnection {
  readonly peer: StreamPeer
  readonly direct: string | null
  inflight = 0
  /** Streams reset by the client before their response (the front's rapid-reset count). */
  resets = 0
  private readonly sock: TLSSocket
  private readonly o: H2ConnectionOptions
  private readonly out = new FrameWriter()
  private readonly decoder = new HpackDecoder(4096, MAX_HEADER_LIST)
  private readonly streams = new Map<number, H2Stream>()
  /** Streams whose response waits for window. */
  private readonly blocked = new Set<H2Stream>()
  private queued = false
  /** Octets of the client's preface still to read. */
  private prefaceLeft = PREFACE.length
  /** The preface is read and no frame yet: the first must be SETTINGS (RFC 9113 §3.4). */
  private awaitSettings = true
  /** The header of a frame split over reads (`headHave` octets of it so far), then its payload. */
  private readonly head = Buffer.alloc(FRAME_HEADER)
  private headHave = 0
  private payload: Buffer | null = null
  private payloadHave = 0
  private lastStream = 0
  /** Streams we reset, oldest first (a Set keeps insertion order), at most RESET_MEMORY. */
  private readonly resetIds = new Set<number>()
  /** Stream IDs the client skipped, as [first, last] pairs, at most SKIPPED_MEMORY pairs. */
  private readonly skipped: number[] = []
  /** SETTINGS frames in the second that began at `settingsSince` (ms). */
  private settingsCount = 0
  private settingsSince = 0
  private recvWindow = INITIAL_WINDOW
  private recvTaken = 0
  private sendWindow = INITIAL_WINDOW
  private peerWindow = INITIAL_WINDOW
  private peerMaxFrame = MAX_FRAME
  /** The header block being read (HEADERS without END_HEADERS, then CONTINUATION). */
  private block: Buffer[] | null = null
  private blockStream = 0
  private blockFlags = 0
  private blockSize = 0
  /** The HEADERS of the block being read made its stream depend on itself. */
  private blockSelfDependent = false
  /** The client sent GOAWAY: closed when its last stream is done. */
  private peerGone = false
  /** We sent GOAWAY: nothing more is read. */
  private ended = false
  /** The client's first SETTINGS (its preface's end) has come. */
  private settingsSeen = false

  constructor(sock: TLSSocket, o: H2ConnectionOptions, direct: string | null) {
    this.sock = sock
    this.o = o
    this.peer = { remoteAddress: sock.remoteAddress, remotePort: sock.remotePort }
    this.direct = direct
    this.out.settings([
      [Setting.MAX_CONCURRENT_STREAMS, o.maxStreams],
      [Setting.ENABLE_PUSH, 0],
      [Setting.MAX_HEADER_LIST_SIZE, MAX_HEADER_LIST]
    ])
    this.schedule()
    sock.on('data', (chunk: Buffer) => {
      this.read(chunk)
      this.o.afterRead?.(chunk.length)
    })
    sock.on('close', () => this.closed())
  }

  // What the client has begun and not finished, for the front's message deadline (../doh-front.ts,
  // read after each chunk): its preface to the first SETTINGS, a header block, a frame's bytes.
  get isAwaitingPreface(): boolean {
    return !this.settingsSeen
  }

  get isInHeaderBlock(): boolean {
    return this.block !== null
  }

  get unfinishedBytes(): number {
    return this.headHave + this.payloadHave
  }

  /** Request streams open now (the front's idleness). */
  get openStreams(): number {
    return this.streams.size
  }

  /** Sends GOAWAY with `code` and closes the connection once it is written. */
  goaway(code: number): void {
    if (this.ended) return
    this.ended = true
    this.out.goaway(this.lastStream, code)
    this.flush()
    this.sock.end()
    this.sock.once('finish', () => this.sock.destroy())
  }

  private read(chunk: Buffer): void {
    if (this.ended) return
    let pos = 0
    if (this.prefaceLeft > 0) {
      const n = Math.min(this.prefaceLeft, chunk.length)
      const at = PREFACE.length - this.prefaceLeft
      if (PREFACE.compare(chunk, 0, n, at, at + n) !== 0) return this.goaway(H2Error.PROTOCOL_ERROR)
      this.prefaceLeft -= n
      pos = n
    }
    if (this.headHave > 0) {
      pos = this.resume(chunk, pos)
      if (pos < 0 || this.ended) return
    }
    // Whole frames are read in place, their payloads views of the chunk.
    while (chunk.length - pos >= FRAME_HEADER) {
      const length = chunk.readUIntBE(pos, 3)
      if (length > MAX_FRAME) return this.goaway(H2Error.FRAME_SIZE_ERROR)
      if (chunk.length - pos < FRAME_HEADER + length) break
      const type = chunk[pos + 3]!
      const flags = chunk[pos + 4]!
      const id = chunk.readUInt32BE(pos + 5) & 0x7fffffff
      const payload = chunk.subarray(pos + FRAME_HEADER, pos + FRAME_HEADER + length)
      pos += FRAME_HEADER + length
      this.frame(type, flags, id, payload)
      if (this.ended) return
    }
    if (pos < chunk.length) this.resume(chunk, pos)
  }

  /**
   * Reads into the frame split over reads from `chunk` at `pos`: its header into `head`, then its
   * payload into one buffer of the frame's size, so what waits is the frame itself, never the
   * chunks it came in (a frame sent as one-byte TLS records came as 16,384 chunks, each a Buffer
   * and its share of a TLS read buffer). The frame is handled once whole. Returns the position
   * after what was taken, or -1 when the connection ended.
   */
  private resume(chunk: Buffer, pos: number): number {
    if (this.headHave < FRAME_HEADER) {
      const n = Math.min(FRAME_HEADER - this.headHave, chunk.length - pos)
      chunk.copy(this.head, this.headHave, pos, pos + n)
      this.headHave += n
      pos += n
      if (this.headHave < FRAME_HEADER) return pos
      const length = this.head.readUIntBE(0, 3)
      if (length > MAX_FRAME) {
        this.goaway(H2Error.FRAME_SIZE_ERROR)
        return -1
      }
      this.payload = Buffer.allocUnsafe(length)
      this.payloadHave = 0
    }
    const payload = this.payload!
    const n = Math.min(payload.length - this.payloadHave, chunk.length - pos)
    chunk.copy(payload, this.payloadHave, pos, pos + n)
    this.payloadHave += n
    pos += n
    if (this.payloadHave < payload.length) return pos
    this.payload = null
    this.headHave = 0
    this.frame(this.head[3]!, this.head[4]!, this.head.readUInt32BE(5) & 0x7fffffff, payload)
    return this.ended ? -1 : pos
  }

  private frame(type: number, flags: number, id: number, payload: Buffer): void {
    if (this.awaitSettings) {
      if (type !== FrameType.SETTINGS || (flags & Flag.ACK) !== 0) return this.goaway(H2Error.PROTOCOL_ERROR)
      this.awaitSettings = false
    }
    if (this.block !== null && (type !== FrameType.CONTINUATION || id !== this.blockStream))
      return this.goaway(H2Error.PROTOCOL_ERROR)
    switch (type) {
      case FrameType.DATA:
        return this.onData(flags, id, payload)
      case FrameType.HEADERS:
        return this.onHeaders(flags, id, payload)
      case FrameType.CONTINUATION:
        return this.onContinuation(flags, id, payload)
      case FrameType.RST_STREAM:
        return this.onRstStream(id, payload)
      case FrameType.SETTINGS:
        return this.onSettings(flags, id, payload)
      case FrameType.PING:
        if (id !== 0) return this.goaway(H2Error.PROTOCOL_ERROR)
        if (payload.length !== 8) return this.goaway(H2Error.FRAME_SIZE_ERROR)
        if ((flags & Flag.ACK) === 0) this.out.pingAck(payload)
        return this.schedule()
      case FrameType.GOAWAY:
        if (id !== 0) return this.goaway(H2Error.PROTOCOL_ERROR)
        if (payload.length < 8) return this.goaway(H2Error.FRAME_SIZE_ERROR)
        this.peerGone = true
        return this.maybeEnd()
      case FrameType.WINDOW_UPDATE:
        return this.onWindowUpdate(id, payload)
      case FrameType.PRIORITY:
        if (id === 0) return this.goaway(H2Error.PROTOCOL_ERROR)
        if (payload.length !== 5) return this.goaway(H2Error.FRAME_SIZE_ERROR)
        // A stream depending on itself (RFC 9113 §5.3.1): a connection error, as nghttp2 makes it.
        if ((payload.readUInt32BE(0) & 0x7fffffff) === id) return this.goaway(H2Error.PROTOCOL_ERROR)
        return
      case FrameType.PUSH_PROMISE:
        return this.goaway(H2Error.PROTOCOL_ERROR)
      default:
      // Unknown frame types are ignored (RFC 9113 §4.1).
    }
  }

  // The payload less its padding (and priority fields); null when the padding is longer than the frame.
  private unpad(flags: number, payload: Buffer, priority: boolean): Buffer | null {
    let start = 0
    let pad = 0
    if (flags & Flag.PADDED) {
      if (payload.length < 1) return null
      pad = payload[0]!
      start = 1
    }
    if (priority && flags & Flag.PRIORITY) start += 5
    if (start + pad > payload.length) return null
    return start === 0 && pad === 0 ? payload : payload.subarray(start, payload.length - pad)
  }

  private onHeaders(flags: number, id: number, payload: Buffer): void {
    if (id === 0 || id % 2 === 0) return this.goaway(H2Error.PROTOCOL_ERROR)
    const fragment = this.unpad(flags, payload, true)
    if (fragment === null) return this.goaway(H2Error.PROTOCOL_ERROR)
    // The priority fields' stream dependency, after the pad length when there is one.
    const selfDependent =
      (flags & Flag.PRIORITY) !== 0 && (payload.readUInt32BE(flags & Flag.PADDED ? 1 : 0) & 0x7fffffff) === id
    if (flags & Flag.END_HEADERS) return this.headers(id, flags, fragment, selfDependent)
    this.block = [fragment]
    this.blockStream = id
    this.blockFlags = flags
    this.blockSize = fragment.length
    this.blockSelfDependent = selfDependent
  }

  private onContinuation(flags: number, id: number, payload: Buffer): void {
    const block = this.block
    if (block === null) return this.goaway(H2Error.PROTOCOL_ERROR)
    this.blockSize += payload.length
    // The CONTINUATION flood: an endless header block, or endless empty frames.
    if (this.blockSize > MAX_HEADER_BLOCK || block.length > MAX_CONTINUATIONS)
      return this.goaway(H2Error.ENHANCE_YOUR_CALM)
    block.push(payload)
    if ((flags & Flag.END_HEADERS) === 0) return
    this.block = null
    this.headers(id, this.blockFlags, Buffer.concat(block), this.blockSelfDependent)
  }

  // A whole header block: a new request stream, or the trailers of an open one. The block is
  // decoded first whatever becomes of it: the decoder's table is the client's encoder's.
  private headers(id: number, flags: number, block: Buffer, selfDependent: boolean): void {
    const fields: string[] = []
    const failure = this.decoder.decode(block, fields)
    if (failure !== null)
      return this.goaway(failure === 'too-large' ? H2Error.ENHANCE_YOUR_CALM : H2Error.COMPRESSION_ERROR)
    if (selfDependent) return this.goaway(H2Error.PROTOCOL_ERROR)
    const endStream = (flags & Flag.END_STREAM) !== 0
    const open = this.streams.get(id)
    if (open !== undefined) {
      // Half-closed (remote): the client already ended it (RFC 9113 §5.1).
      if (open.remoteClosed) return this.resetStream(open, H2Error.STREAM_CLOSED)
      // Trailers: they end the stream's body, and are fields, not a new request (§8.1).
      if (!endStream || !checkTrailers(fields)) return this.resetStream(open, H2Error.PROTOCOL_ERROR)
      return this.endRequest(open)
    }
    if (id <= this.lastStream) {
      // Trailers (or anything) on a stream we reset: sent before the client saw the reset (§5.4.2).
      if (this.resetIds.has(id)) return
      return this.goaway(this.isSkipped(id) ? H2Error.PROTOCOL_ERROR : H2Error.STREAM_CLOSED)
    }
    if (id > this.lastStream + 2) this.noteSkipped(this.lastStream + 2, id - 2)
    this.lastStream = id
    const length = checkRequest(fields)
    // Malformed (§8.1.1): a body announced but none sent counts too.
    if (length === MALFORMED || (endStream && length > 0)) return this.refuse(id, H2Error.PROTOCOL_ERROR)
    if (this.streams.size >= this.o.maxStreams || this.peerGone) return this.refuse(id, H2Error.REFUSED_STREAM)
    const stream = new H2Stream(this, id, fields, this.peerWindow)
    stream.contentLength = length
    // Ended before the exchange sees it: an answer given at once (a 4xx, a local answer) closes the
    // stream with its last frame, and nothing follows it.
    stream.remoteClosed = endStream
    this.streams.set(id, stream)
    this.o.onStream(this, stream)
    if (endStream) stream.ended()
  }

  private onData(flags: number, id: number, payload: Buffer): void {
    if (id === 0) return this.goaway(H2Error.PROTOCOL_ERROR)
    this.recvWindow -= payload.length
    if (this.recvWindow < 0) return this.goaway(H2Error.FLOW_CONTROL_ERROR)
    // The connection's window is given back as it is read, half a window at a time.
    this.recvTaken += payload.length
    if (this.recvTaken >= INITIAL_WINDOW / 2) {
      this.out.windowUpdate(0, this.recvTaken)
      this.recvWindow += this.recvTaken
      this.recvTaken = 0
      this.schedule()
    }
    const data = this.unpad(flags, payload, false)
    if (data === null) return this.goaway(H2Error.PROTOCOL_ERROR)
    const stream = this.streams.get(id)
    if (stream === undefined) {
      if (id > this.lastStream) return this.goaway(H2Error.PROTOCOL_ERROR) // idle
      // A stream we reset (or refused): its DATA may still be on its way. Any other closed stream: an error.
      if (!this.resetIds.has(id)) this.refuse(id, H2Error.STREAM_CLOSED)
      return
    }
    if (stream.remoteClosed) return this.resetStream(stream, H2Error.STREAM_CLOSED)
    stream.recvWindow -= payload.length
    if (stream.recvWindow < 0) return this.resetStream(stream, H2Error.FLOW_CONTROL_ERROR)
    stream.received += data.length
    // More body than its content-length: malformed (RFC 9113 §8.1.1).
    if (stream.contentLength !== NO_LENGTH && stream.received > stream.contentLength)
      return this.resetStream(stream, H2Error.PROTOCOL_ERROR)
    if (data.length > 0) stream.data(data)
    if (flags & Flag.END_STREAM) this.endRequest(stream)
  }

  // The client ended its request (END_STREAM on DATA or trailers).
  private endRequest(stream: H2Stream): void {
    if (stream.contentLength !== NO_LENGTH && stream.received !== stream.contentLength)
      return this.resetStream(stream, H2Error.PROTOCOL_ERROR)
    stream.ended()
    // Answered before its body ended: done now.
    if (stream.responded && stream.pending === null) this.remove(stream)
  }

  private onRstStream(id: number, payload: Buffer): void {
    if (id === 0) return this.goaway(H2Error.PROTOCOL_ERROR)
    if (payload.length !== 4) return this.goaway(H2Error.FRAME_SIZE_ERROR)
    if (id > this.lastStream) return this.goaway(H2Error.PROTOCOL_ERROR)
    const stream = this.streams.get(id)
    if (stream === undefined) return
    const early = !stream.responded
    this.remove(stream)
    if (early) {
      this.resets++
      this.o.onReset(this)
    }
  }

  private onSettings(flags: number, id: number, payload: Buffer): void {
    if (id !== 0) return this.goaway(H2Error.PROTOCOL_ERROR)
    if (flags & Flag.ACK) return payload.length === 0 ? undefined : this.goaway(H2Error.FRAME_SIZE_ERROR)
    if (payload.length % 6 !== 0) return this.goaway(H2Error.FRAME_SIZE_ERROR)
    // Each frame is acknowledged and may walk the open streams: a flood of them is refused.
    if (payload.length > 6 * MAX_SETTINGS_ENTRIES) return this.goaway(H2Error.ENHANCE_YOUR_CALM)
    const now = performance.now()
    if (now - this.settingsSince >= 1000) {
      this.settingsSince = now
      this.settingsCount = 0
    }
    if (++this.settingsCount > MAX_SETTINGS_PER_SECOND) return this.goaway(H2Error.ENHANCE_YOUR_CALM)
    this.settingsSeen = true
    let window = -1
    for (let at = 0; at < payload.length; at += 6) {
      const key = payload.readUInt16BE(at)
      const v = payload.readUInt32BE(at + 2)
      if (key === Setting.INITIAL_WINDOW_SIZE) {
        if (v > MAX_WINDOW) return this.goaway(H2Error.FLOW_CONTROL_ERROR)
        window = v
      } else if (key === Setting.MAX_FRAME_SIZE) {
        if (v < MAX_FRAME || v > 2 ** 24 - 1) return this.goaway(H2Error.PROTOCOL_ERROR)
        this.peerMaxFrame = v
      } else if (key === Setting.ENABLE_PUSH && v > 1) return this.goaway(H2Error.PROTOCOL_ERROR)
    }
    // Only the last INITIAL_WINDOW_SIZE of a frame counts; applied to the open streams once.
    if (window >= 0 && window !== this.peerWindow) {
      const delta = window - this.peerWindow
      this.peerWindow = window
      for (const s of this.streams.values()) {
        s.sendWindow += delta
        // A window pushed past its maximum (RFC 9113 §6.9.2).
        if (s.sendWindow > MAX_WINDOW) return this.goaway(H2Error.FLOW_CONTROL_ERROR)
      }
    }
    this.out.settingsAck()
    this.schedule()
    this.unblock()
  }

  private onWindowUpdate(id: number, payload: Buffer): void {
    if (payload.length !== 4) return this.goaway(H2Error.FRAME_SIZE_ERROR)
    const inc = payload.readUInt32BE(0) & 0x7fffffff
    if (id === 0) {
      if (inc === 0) return this.goaway(H2Error.PROTOCOL_ERROR)
      this.sendWindow += inc
      if (this.sendWindow > MAX_WINDOW) return this.goaway(H2Error.FLOW_CONTROL_ERROR)
      return this.unblock()
    }
    const stream = this.streams.get(id)
    if (stream === undefined) {
      // Idle: no window to update (RFC 9113 §5.1). A closed stream's may still be on its way.
      if (id > this.lastStream) this.goaway(H2Error.PROTOCOL_ERROR)
      return
    }
    if (inc === 0) return this.resetStream(stream, H2Error.PROTOCOL_ERROR)
    stream.sendWindow += inc
    if (stream.sendWindow > MAX_WINDOW) return this.resetStream(stream, H2Error.FLOW_CONTROL_ERROR)
    if (stream.pending !== null) this.send(stream)
  }

  /** The response of `stream`: HEADERS, then its body as DATA as the windows allow. */
  respond(stream: H2Stream, status: number, headers: Record<string, string | number>, body: Buffer): void {
    if (stream.closed || this.ended) return
    // A body refused for its size or its slowness: the client is asked to stop sending it (below).
    stream.stopBody = status === 413 || status === 408
    const at = this.out.header(0, FrameType.HEADERS, Flag.END_HEADERS, stream.id)
    const buf = this.out.reserve(encodedSize(headers))
    this.out.advance(encodeResponse(buf, this.out.length, status, headers) - this.out.length)
    this.out.end(at)
    stream.pending = body
    stream.pendingAt = 0
    this.send(stream)
    this.schedule()
  }

  /**
   * A 200 DNS answer (the first `len` bytes of `buf`, max-age `ttl`): its header block written from
   * the two numbers, and its body copied into one DATA frame straight from `buf` when the windows
   * take it whole (nearly always: an answer is a few hundred bytes), else as respond() sends it.
   */
  respondDns(stream: H2Stream, buf: Buffer, len: number, ttl: number): void {
    if (stream.closed || this.ended) return
    const at = this.out.header(0, FrameType.HEADERS, Flag.END_HEADERS, stream.id)
    const b = this.out.reserve(DNS_ANSWER_MAX)
    this.out.advance(encodeDnsAnswer(b, this.out.length, len, ttl) - this.out.length)
    this.out.end(at)
    this.schedule()
    if (len > stream.sendWindow || len > this.sendWindow || len > this.peerMaxFrame || !stream.remoteClosed) {
      stream.pending = buf.subarray(0, len)
      stream.pendingAt = 0
      return this.send(stream)
    }
    this.out.data(stream.id, buf, 0, len, true)
    stream.sendWindow -= len
    this.sendWindow -= len
    this.remove(stream)
  }

  // As much of the stream's pending body as the windows let through; the stream ends with its last byte.
  private send(stream: H2Stream): void {
    const body = stream.pending!
    for (;;) {
      const left = body.length - stream.pendingAt
      const n = Math.min(left, stream.sendWindow, this.sendWindow, this.peerMaxFrame)
      if (n < left && n <= 0) {
        // The body may be the dispatcher's or the upstream socket's buffer (DohResponse.copiesBody):
        // one that must wait is copied.
        if (!stream.owned) {
          stream.pending = Buffer.from(body.subarray(stream.pendingAt))
          stream.pendingAt = 0
          stream.owned = true
        }
        this.blocked.add(stream)
        return this.schedule()
      }
      const end = stream.pendingAt + n
      this.out.data(stream.id, body, stream.pendingAt, end, end === body.length)
      stream.pendingAt = end
      stream.sendWindow -= n
      this.sendWindow -= n
      if (end === body.length) break
    }
    stream.pending = null
    if (this.blocked.size > 0) this.blocked.delete(stream)
    this.schedule()
    if (stream.remoteClosed) return this.remove(stream)
    // Answered before the request ended. A body refused (413, 408): the client is told to stop
    // sending it, without error (RFC 9113 §8.1). Else the stream stays half-closed (local) until
    // the client ends it, its frames checked as any open stream's.
    if (stream.stopBody) this.resetStream(stream, H2Error.NO_ERROR)
  }

  private unblock(): void {
    for (const s of this.blocked) {
      if (this.sendWindow <= 0) return
      if (s.sendWindow > 0) this.send(s)
    }
  }

  private resetStream(stream: H2Stream, code: number): void {
    this.refuse(stream.id, code)
    this.remove(stream)
  }

  // RST_STREAM on a stream that is not (or no longer) open; its late frames are then ignored.
  private refuse(id: number, code: number): void {
    this.out.rstStream(id, code)
    this.schedule()
    if (this.resetIds.size >= RESET_MEMORY) this.resetIds.delete(this.resetIds.values().next().value!)
    this.resetIds.add(id)
  }

  // Stream IDs first..last were never used: the client opened a higher one (RFC 9113 §5.1.1).
  private noteSkipped(first: number, last: number): void {
    if (this.skipped.length >= 2 * SKIPPED_MEMORY) this.skipped.splice(0, 2)
    this.skipped.push(first, last)
  }

  private isSkipped(id: number): boolean {
    const r = this.skipped
    for (let i = 0; i < r.length; i += 2) if (id >= r[i]! && id <= r[i + 1]!) return true
    return false
  }

  private remove(stream: H2Stream): void {
    this.streams.delete(stream.id)
    if (this.blocked.size > 0) this.blocked.delete(stream)
    stream.close()
    this.maybeEnd()
  }

  // The client said GOAWAY and its last stream is done: the connection ends.
  private maybeEnd(): void {
    if (this.peerGone && this.streams.size === 0 && !this.ended) {
      this.ended = true
      this.flush()
      this.sock.end()
    }
  }

  private schedule(): void {
    if (this.queued) return
    this.queued = true
    dirty.push(this)
    if (!flushScheduled) {
      flushScheduled = true
      setImmediate(flushAll)
    }
  }

  /** Writes every frame queued since the last write, in one write. */
  flush(): void {
    this.queued = false
    if (this.out.length === 0 || this.sock.destroyed || this.sock.writableEnded) return
    // A client that does not read what it asked for (PING or SETTINGS floods): closed.
    if (this.sock.writableLength > MAX_UNSENT) {
      this.sock.destroy()
      return
    }
    this.sock.write(this.out.take())
  }

  private closed(): void {
    this.ended = true
    for (const s of this.streams.values()) s.close()
    this.streams.clear()
    this.blocked.clear()
    this.payload = null
    this.headHave = 0
    this.block = null
  }
}
