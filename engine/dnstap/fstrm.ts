/*
 * Frame Streams (fstrm), the framing every dnstap emitter and collector speaks: a data frame is a
 * 32-bit big-endian length and that many bytes; a control frame is an escape (a zero length),
 * its own length, a control type and fields (only CONTENT_TYPE is defined). The bidirectional
 * handshake on a socket: the writer sends READY with the content types it can send, the reader
 * answers ACCEPT with the one it takes, the writer sends START with it and then data frames; it
 * ends with STOP, answered by FINISH (fstrm's "Frame Streams Control Frame Format").
 */

export const CONTROL_ACCEPT = 0x01
export const CONTROL_START = 0x02
export const CONTROL_STOP = 0x03
export const CONTROL_READY = 0x04
export const CONTROL_FINISH = 0x05
export const FIELD_CONTENT_TYPE = 0x01

/** The content type of dnstap payloads. */
export const DNSTAP_CONTENT_TYPE = 'protobuf:dnstap.Dnstap'

/** fstrm's limit on a control frame (fstrm_control's FSTRM_CONTROL_FRAME_LENGTH_MAX). */
export const MAX_CONTROL_FRAME = 512

/** A control frame with its escape and length, ready to write. */
export function controlFrame(type: number, contentTypes: readonly string[] = []): Buffer {
  let len = 4
  for (const ct of contentTypes) len += 8 + Buffer.byteLength(ct)
  const out = Buffer.alloc(8 + len)
  out.writeUInt32BE(0, 0)
  out.writeUInt32BE(len, 4)
  out.writeUInt32BE(type, 8)
  let off = 12
  for (const ct of contentTypes) {
    out.writeUInt32BE(FIELD_CONTENT_TYPE, off)
    out.writeUInt32BE(Buffer.byteLength(ct), off + 4)
    off += 8 + out.write(ct, off + 8)
  }
  return out
}

export interface ControlFrame {
  type: number
  contentTypes: string[]
}

/**
 * Reads one control frame from the start of `buf`: the frame and the bytes it took, null when
 * `buf` does not hold all of it yet, or what is wrong when it is not a control frame.
 */
export function readControlFrame(buf: Buffer): { frame: ControlFrame; size: number } | null | { problem: string } {
  if (buf.length < 8) return null
  if (buf.readUInt32BE(0) !== 0) return { problem: 'fstrm: expected a control frame, got a data frame' }
  const len = buf.readUInt32BE(4)
  if (len < 4 || len > MAX_CONTROL_FRAME) return { problem: `fstrm: control frame length ${len} out of range` }
  if (buf.length < 8 + len) return null
  const type = buf.readUInt32BE(8)
  const contentTypes: string[] = []
  let off = 12
  const end = 8 + len
  while (off < end) {
    if (off + 8 > end) return { problem: 'fstrm: truncated control field' }
    const field = buf.readUInt32BE(off)
    const flen = buf.readUInt32BE(off + 4)
    if (off + 8 + flen > end) return { problem: 'fstrm: control field overruns its frame' }
    if (field === FIELD_CONTENT_TYPE) contentTypes.push(buf.toString('latin1', off + 8, off + 8 + flen))
    off += 8 + flen
  }
  return { frame: { type, contentTypes }, size: end }
}
