/*
 * DNS over TCP framing (RFC 1035 §4.2.2, RFC 7766 §8): every message is
 * preceded by a 2-byte big-endian length. `FrameReader` collects socket
 * chunks and hands out complete messages; a frame whose announced length
 * exceeds `maxFrameSize` makes the reader stop for good (`isOversized`),
 * because after it the stream cannot be resynchronised: close the
 * connection.
 *
 * A frame that lies inside one chunk is returned as a view of that chunk
 * (no copy; it keeps the chunk alive while referenced). A frame spanning
 * chunks is copied into a new Buffer.
 */

export class FrameReader {
  readonly maxFrameSize: number
  /** Set when a frame announced more than maxFrameSize bytes; read() then returns null forever. */
  isOversized = false
  /** The announced length of the oversized frame (0 until then). */
  oversizedLength = 0
  #chunks: Buffer[] = []
  #head = 0 // bytes of #chunks[0] already consumed
  #buffered = 0 // unconsumed bytes over all chunks

  constructor(maxFrameSize = 65535) {
    this.maxFrameSize = maxFrameSize
  }

  /** Unconsumed bytes held (for a per-connection memory cap). */
  get bufferedBytes(): number {
    return this.#buffered
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0 || this.isOversized) return
    this.#chunks.push(chunk)
    this.#buffered += chunk.length
  }

  /** The next complete message (without its length prefix), or null if none is complete yet. */
  read(): Buffer | null {
    if (this.isOversized || this.#buffered < 2) return null
    const len = (this.#byteAt(0) << 8) | this.#byteAt(1)
    if (len > this.maxFrameSize) {
      this.isOversized = true
      this.oversizedLength = len
      this.#chunks = []
      this.#head = 0
      this.#buffered = 0
      return null
    }
    if (this.#buffered < 2 + len) return null
    this.#skip(2)
    const first = this.#chunks[0]
    if (first !== undefined && first.length - this.#head >= len) {
      const msg = first.subarray(this.#head, this.#head + len)
      this.#skip(len)
      return msg
    }
    const msg = Buffer.allocUnsafe(len)
    let n = 0
    while (n < len) {
      const c = this.#chunks[0]! // #buffered >= len - n > 0, so a chunk remains
      const take = Math.min(len - n, c.length - this.#head)
      c.copy(msg, n, this.#head, this.#head + take)
      n += take
      this.#skip(take)
    }
    return msg
  }

  #byteAt(k: number): number {
    let off = this.#head + k
    for (const c of this.#chunks) {
      if (off < c.length) return c[off]! // off < c.length
      off -= c.length
    }
    return 0
  }

  #skip(n: number): void {
    this.#buffered -= n
    while (n > 0) {
      const c = this.#chunks[0]! // the caller skips at most #buffered bytes
      const left = c.length - this.#head
      if (n < left) {
        this.#head += n
        return
      }
      n -= left
      this.#chunks.shift()
      this.#head = 0
    }
  }
}

/** `msg[0, length)` with a 2-byte length prefix, in a new Buffer. */
export function frame(msg: Buffer, length = msg.length): Buffer {
  if (length > 0xffff) throw new RangeError(`DNS message too long for TCP framing: ${length}`)
  const out = Buffer.allocUnsafe(2 + length)
  out[0] = length >>> 8
  out[1] = length & 0xff
  msg.copy(out, 2, 0, length)
  return out
}
