/*
 * HTTP/2 frames (RFC 9113 §4 and §6): the constants, and the writer that lays a connection's
 * outgoing frames one after the other in one buffer, so that all the frames one event-loop turn
 * made leave in one socket write (./connection.ts).
 */

export const FRAME_HEADER = 9
/** The client's connection preface (RFC 9113 §3.4). */
export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1')
/** SETTINGS_MAX_FRAME_SIZE's initial value: we never announce more, so no frame we read is longer. */
export const MAX_FRAME = 16384
/** The initial flow-control window of a connection and of each stream (RFC 9113 §6.9.2). */
export const INITIAL_WINDOW = 65535
export const MAX_WINDOW = 2 ** 31 - 1

export const FrameType = {
  DATA: 0,
  HEADERS: 1,
  PRIORITY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PUSH_PROMISE: 5,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
  CONTINUATION: 9
} as const

export const Flag = {
  END_STREAM: 0x1,
  ACK: 0x1,
  END_HEADERS: 0x4,
  PADDED: 0x8,
  PRIORITY: 0x20
} as const

/** Error codes (RFC 9113 §7). */
export const H2Error = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  ENHANCE_YOUR_CALM: 0xb
} as const

export const Setting = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6
} as const

/** One connection's outgoing frames since its last write. */
export class FrameWriter {
  private buf = Buffer.allocUnsafe(4096)
  private len = 0

  get length(): number {
    return this.len
  }

  /** Room for `n` more bytes; the buffer to write them to at `this.length`. */
  reserve(n: number): Buffer {
    if (this.len + n > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(2 * this.buf.length, this.len + n))
      this.buf.copy(next, 0, 0, this.len)
      this.buf = next
    }
    return this.buf
  }

  /** A frame header at the end (length filled in by `end` when not known yet); the payload's offset. */
  header(length: number, type: number, flags: number, stream: number): number {
    const b = this.reserve(FRAME_HEADER + length)
    const at = this.len
    b.writeUIntBE(length, at, 3)
    b[at + 3] = type
    b[at + 4] = flags
    b.writeUInt32BE(stream, at + 5)
    this.len += FRAME_HEADER
    return at
  }

  /** Marks `n` bytes written at `this.length`. */
  advance(n: number): void {
    this.len += n
  }

  /** Sets the length of the frame whose header is at `at` to what was written after it. */
  end(at: number): void {
    this.buf.writeUIntBE(this.len - at - FRAME_HEADER, at, 3)
  }

  settings(values: ReadonlyArray<readonly [number, number]>): void {
    this.header(6 * values.length, FrameType.SETTINGS, 0, 0)
    for (const [id, v] of values) {
      this.buf.writeUInt16BE(id, this.len)
      this.buf.writeUInt32BE(v, this.len + 2)
      this.len += 6
    }
  }

  settingsAck(): void {
    this.header(0, FrameType.SETTINGS, Flag.ACK, 0)
  }

  pingAck(payload: Buffer): void {
    this.header(8, FrameType.PING, Flag.ACK, 0)
    payload.copy(this.buf, this.len, 0, 8)
    this.len += 8
  }

  windowUpdate(stream: number, increment: number): void {
    this.header(4, FrameType.WINDOW_UPDATE, 0, stream)
    this.buf.writeUInt32BE(increment, this.len)
    this.len += 4
  }

  rstStream(stream: number, code: number): void {
    this.header(4, FrameType.RST_STREAM, 0, stream)
    this.buf.writeUInt32BE(code, this.len)
    this.len += 4
  }

  goaway(lastStream: number, code: number): void {
    this.header(8, FrameType.GOAWAY, 0, 0)
    this.buf.writeUInt32BE(lastStream, this.len)
    this.buf.writeUInt32BE(code, this.len + 4)
    this.len += 8
  }

  data(stream: number, body: Buffer, start: number, end: number, endStream: boolean): void {
    this.header(end - start, FrameType.DATA, endStream ? Flag.END_STREAM : 0, stream)
    body.copy(this.buf, this.len, start, end)
    this.len += end - start
  }

  /** The frames written since the last take, as a buffer of their own; the writer starts empty. */
  take(): Buffer {
    const out = Buffer.allocUnsafe(this.len)
    this.buf.copy(out, 0, 0, this.len)
    this.len = 0
    return out
  }
}
