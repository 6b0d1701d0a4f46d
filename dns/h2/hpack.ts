/*
 * HPACK (RFC 7541), as much as an HTTP/2 server of DoH needs: the whole decoder (integers, string
 * literals with and without Huffman coding, the static table and a dynamic table of
 * SETTINGS_HEADER_TABLE_SIZE with its size updates and evictions), and an encoder of responses
 * that writes each field as a literal without indexing (a static-table name where there is one,
 * `:status` fully indexed where the static table has it): it keeps no dynamic table, so a client's
 * decoder state never depends on ours. Decoding is bounded: a header block that decodes to more
 * than `maxListSize` octets (RFC 9113 §6.5.2 sizes) is refused, however it was compressed.
 */

/** RFC 7541 Appendix A. */
export const STATIC_TABLE: ReadonlyArray<readonly [string, string]> = [
  ['', ''],
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', '']
]
const STATIC_COUNT = STATIC_TABLE.length - 1

/**
 * The bit length of each symbol's Huffman code (RFC 7541 Appendix B; 0-255, then EOS), one base-36
 * digit each. The code is canonical (codes of one length are consecutive, in symbol order, and
 * follow the shorter ones), so the lengths alone give every code: see HUFFMAN_TREE.
 */
const HUFFMAN_LENGTHS =
  'dnsssssssoussussssssssusssssssss6aacd68baa8b8666555666666678f6cad67777777777777777777777878djde6f565656665776665676556' +
  '77777fbedskmkkmmmnmnnnnnonoomnonnnnlmnmnnomlkmmnnlnmmolmnnllmlnmnnkmmmnmmnqqkjmnmpqqqrrqopjlqrrqrollqqsrrrkoklmllnmm' +
  'ppooqnqrqqrrrrrsrrrrrqu'
const EOS = 256

/**
 * The decoding tree: node n's children at [2n] (bit 0) and [2n + 1] (bit 1); a child >= 0 is an
 * inner node, a child < 0 the leaf of symbol -child - 1.
 */
const HUFFMAN_TREE = buildHuffmanTree()

function buildHuffmanTree(): Int32Array {
  const lengths = Array.from(HUFFMAN_LENGTHS, (c) => parseInt(c, 36))
  const order = lengths.map((_, s) => s).sort((a, b) => lengths[a]! - lengths[b]! || a - b)
  const tree = new Int32Array(2 * 512).fill(0)
  let nodes = 1
  let code = 0
  let prev = lengths[order[0]!]!
  for (let i = 0; i < order.length; i++) {
    const s = order[i]!
    const len = lengths[s]!
    if (i > 0) code = (code + 1) * 2 ** (len - prev)
    prev = len
    let n = 0
    for (let b = len - 1; b > 0; b--) {
      const slot = 2 * n + (Math.floor(code / 2 ** b) & 1)
      if (tree[slot] === 0) tree[slot] = nodes++
      n = tree[slot]!
    }
    tree[2 * n + (code & 1)] = -s - 1
  }
  return tree
}

/** Where huffmanDecode puts a string's octets before making it one string (grown to the longest decoded). */
let huffmanOut = Buffer.allocUnsafe(256)

/** Decodes a Huffman-coded string (RFC 7541 §5.2); null when malformed (EOS, or bad padding). */
export function huffmanDecode(buf: Buffer, start: number, end: number): string | null {
  // The shortest code is 5 bits: at most 8/5 symbols per octet.
  const most = Math.ceil(((end - start) * 8) / 5)
  if (huffmanOut.length < most) huffmanOut = Buffer.allocUnsafe(most)
  const out = huffmanOut
  let len = 0
  let n = 0
  let depth = 0
  let ones = true
  for (let i = start; i < end; i++) {
    const byte = buf[i]!
    for (let b = 7; b >= 0; b--) {
      const bit = (byte >> b) & 1
      const next = HUFFMAN_TREE[2 * n + bit]!
      depth++
      ones &&= bit === 1
      if (next < 0) {
        const sym = -next - 1
        if (sym === EOS) return null
        out[len++] = sym
        n = 0
        depth = 0
        ones = true
      } else n = next
    }
  }
  // Padding: fewer than 8 bits, all ones (the most significant bits of EOS).
  return depth > 7 || !ones ? null : out.toString('latin1', 0, len)
}

/** Literals of at most this many octets are kept in the literal cache. */
const CACHED_LITERAL = 32
const LITERAL_SLOTS = 64
/**
 * The string of recently decoded short literals, by their octets and Huffman bit: a client repeats
 * the same `:path` and `content-length` literals (not indexed, as nghttp2 sends them) in every
 * request. Decoding is a pure function of the octets, so the cache is shared by every connection;
 * it is 64 slots of at most 32 octets, a slot overwritten by the next literal hashed to it.
 */
const literalOctets: Array<Uint8Array | undefined> = new Array<Uint8Array | undefined>(LITERAL_SLOTS)
const literalHuffman = new Uint8Array(LITERAL_SLOTS)
const literalText: string[] = new Array<string>(LITERAL_SLOTS)

/** The string of the literal of `len` octets at `start` (Huffman-coded or not); null when malformed. */
export function decodeLiteral(buf: Buffer, start: number, len: number, huffman: boolean): string | null {
  const end = start + len
  if (len > CACHED_LITERAL) return huffman ? huffmanDecode(buf, start, end) : buf.toString('latin1', start, end)
  const h = huffman ? 1 : 0
  let hash = len * 2 + h
  for (let i = start; i < end; i++) hash = (hash * 31 + buf[i]!) | 0
  const slot = hash & (LITERAL_SLOTS - 1)
  const seen = literalOctets[slot]
  if (seen?.length === len && literalHuffman[slot] === h) {
    let i = 0
    while (i < len && seen[i] === buf[start + i]) i++
    if (i === len) return literalText[slot]!
  }
  const text = huffman ? huffmanDecode(buf, start, end) : buf.toString('latin1', start, end)
  if (text === null) return null // a malformed literal is never cached: it fails every time
  literalOctets[slot] = Uint8Array.prototype.slice.call(buf, start, end)
  literalHuffman[slot] = h
  literalText[slot] = text
  return text
}

/** Why a header block was refused. */
export type HpackFailure = 'malformed' | 'too-large'

/** The decoder of one connection's header blocks (its dynamic table lives across them). */
export class HpackDecoder {
  /** Newest first. */
  private readonly table: Array<readonly [string, string]> = []
  private size = 0
  private maxSize: number
  private readonly limit: number
  private readonly maxListSize: number
  private pos = 0

  /** `tableSize`: the SETTINGS_HEADER_TABLE_SIZE this side announced (4096 unless said otherwise). */
  constructor(tableSize = 4096, maxListSize = 65536) {
    this.maxSize = tableSize
    this.limit = tableSize
    this.maxListSize = maxListSize
  }

  /** The entries of the dynamic table, newest first (tests). */
  get entries(): ReadonlyArray<readonly [string, string]> {
    return this.table
  }

  get tableSize(): number {
    return this.size
  }

  /**
   * Decodes one whole header block into `out` as name, value, name, value...; the failure, or
   * null. After a failure the table is out of step with the peer's: the connection must end
   * (COMPRESSION_ERROR).
   */
  decode(block: Buffer, out: string[]): HpackFailure | null {
    this.pos = 0
    let listSize = 0
    let fields = false
    while (this.pos < block.length) {
      const b = block[this.pos]!
      let name: string | null
      let value: string | null
      if (b & 0x80) {
        const e = this.entry(this.int(block, 7))
        if (e === null) return 'malformed'
        ;[name, value] = e
      } else if ((b & 0xe0) === 0x20) {
        // A dynamic table size update: only before the first field, at most what we announced.
        const size = this.int(block, 5)
        if (fields || size < 0 || size > this.limit) return 'malformed'
        this.maxSize = size
        this.evict(0)
        continue
      } else {
        const indexing = (b & 0xc0) === 0x40
        const index = this.int(block, indexing ? 6 : 4)
        if (index < 0) return 'malformed'
        name = index === 0 ? this.str(block) : (this.entry(index)?.[0] ?? null)
        value = name === null ? null : this.str(block)
        if (name === null || value === null) return 'malformed'
        if (indexing) this.add(name, value)
      }
      fields = true
      listSize += name.length + value.length + 32
      if (listSize > this.maxListSize) return 'too-large'
      out.push(name, value)
    }
    return null
  }

  // An integer with an N-bit prefix (RFC 7541 §5.1) at pos; -1 when truncated or over 2^28.
  private int(buf: Buffer, prefix: number): number {
    const max = (1 << prefix) - 1
    let v = buf[this.pos++]! & max
    if (v < max) return v
    for (let shift = 0; shift <= 21; shift += 7) {
      if (this.pos >= buf.length) return -1
      const b = buf[this.pos++]!
      v += (b & 0x7f) * 2 ** shift
      if ((b & 0x80) === 0) return v
    }
    return -1
  }

  // A string literal (RFC 7541 §5.2) at pos; null when truncated or malformed.
  private str(buf: Buffer): string | null {
    if (this.pos >= buf.length) return null
    const huffman = (buf[this.pos]! & 0x80) !== 0
    const len = this.int(buf, 7)
    if (len < 0 || this.pos + len > buf.length) return null
    const start = this.pos
    this.pos += len
    return decodeLiteral(buf, start, len, huffman)
  }

  private entry(index: number): readonly [string, string] | null {
    if (index <= 0) return null
    if (index <= STATIC_COUNT) return STATIC_TABLE[index]!
    return this.table[index - STATIC_COUNT - 1] ?? null
  }

  private add(name: string, value: string): void {
    const size = name.length + value.length + 32
    this.evict(size)
    // An entry larger than the whole table empties it and is not added (RFC 7541 §4.4).
    if (size > this.maxSize) return
    this.table.unshift([name, value])
    this.size += size
  }

  // Evicts the oldest entries until `room` more octets fit.
  private evict(room: number): void {
    while (this.table.length > 0 && this.size + room > this.maxSize) {
      const [n, v] = this.table.pop()!
      this.size -= n.length + v.length + 32
    }
  }
}

/** Writes `v` with an N-bit prefix whose other bits are `flags` at `buf[pos]`; the position after it. */
export function writeInt(buf: Buffer, pos: number, v: number, prefix: number, flags: number): number {
  const max = (1 << prefix) - 1
  if (v < max) {
    buf[pos++] = flags | v
    return pos
  }
  buf[pos++] = flags | max
  v -= max
  while (v >= 0x80) {
    buf[pos++] = (v & 0x7f) | 0x80
    v = Math.floor(v / 128)
  }
  buf[pos++] = v
  return pos
}

/** The static-table index of each name a DoH response uses. */
const NAME_INDEX: Record<string, number> = {}
for (let i = STATIC_COUNT; i >= 1; i--) NAME_INDEX[STATIC_TABLE[i]![0]] = i
/** `:status` values the static table holds whole. */
const STATUS_INDEX: Record<number, number> = { 200: 8, 204: 9, 206: 10, 304: 11, 400: 12, 404: 13, 500: 14 }

/**
 * Encodes a response's header block into `buf` at `pos` (room for its length assumed: see
 * encodedSize); the position after it. Names are lowercase ASCII, values latin1.
 */
export function encodeResponse(
  buf: Buffer,
  pos: number,
  status: number,
  headers: Readonly<Record<string, string | number>>
): number {
  const full = STATUS_INDEX[status]
  if (full !== undefined) buf[pos++] = 0x80 | full
  else pos = literal(buf, pos, ':status', String(status))
  for (const name in headers) {
    if (name[0] === ':') continue
    pos = literal(buf, pos, name, String(headers[name]))
  }
  return pos
}

/** An upper bound of encodeResponse's size. */
export function encodedSize(headers: Readonly<Record<string, string | number>>): number {
  let n = 16
  for (const name in headers) n += name.length + String(headers[name]).length + 12
  return n
}

// A literal header field without indexing (RFC 7541 §6.2.2), its name indexed where the static table has it.
function literal(buf: Buffer, pos: number, name: string, value: string): number {
  const index = NAME_INDEX[name]
  if (index !== undefined) pos = writeInt(buf, pos, index, 4, 0)
  else {
    buf[pos++] = 0
    pos = writeInt(buf, pos, name.length, 7, 0)
    pos += buf.write(name, pos, 'latin1')
  }
  pos = writeInt(buf, pos, value.length, 7, 0)
  return pos + buf.write(value, pos, 'latin1')
}

/** The media type of a DoH answer (RFC 8484 §6). */
const DNS_MESSAGE = 'application/dns-message'
/** `:status 200` and `content-type: application/dns-message`, encoded once (what every DNS answer starts with). */
const DNS_ANSWER_PREFIX: Buffer = (() => {
  const b = Buffer.alloc(encodedSize({ 'content-type': DNS_MESSAGE }))
  return b.subarray(0, encodeResponse(b, 0, 200, { 'content-type': DNS_MESSAGE }))
})()
/** `content-length` and `cache-control` as indexed names (RFC 7541 §6.2.2, a 4-bit prefix of 15, then the rest). */
const CONTENT_LENGTH_NAME = [0x0f, NAME_INDEX['content-length']! - 15] as const
const CACHE_CONTROL_NAME = [0x0f, NAME_INDEX['cache-control']! - 15] as const
const MAX_AGE = Buffer.from('max-age=', 'latin1')
/** An upper bound of encodeDnsAnswer's size: the prefix, two names, two length octets, 16 digits at most each, `max-age=`. */
export const DNS_ANSWER_MAX = DNS_ANSWER_PREFIX.length + 4 + 2 + 2 * 16 + MAX_AGE.length

/**
 * The header block of a 200 DNS answer, the same octets as encodeResponse(200, {content-type,
 * content-length: len, cache-control: `max-age=${max(0, ttl)}`}) gives, written without making a
 * string or an object (every DoH answer has this block; only the two numbers change). `buf` has
 * room for DNS_ANSWER_MAX octets at `pos`; the position after the block.
 */
export function encodeDnsAnswer(buf: Buffer, pos: number, len: number, ttl: number): number {
  pos += DNS_ANSWER_PREFIX.copy(buf, pos)
  buf[pos++] = CONTENT_LENGTH_NAME[0]
  buf[pos++] = CONTENT_LENGTH_NAME[1]
  pos = digits(buf, pos, len, 0)
  buf[pos++] = CACHE_CONTROL_NAME[0]
  buf[pos++] = CACHE_CONTROL_NAME[1]
  return digits(buf, pos, Math.max(0, ttl), MAX_AGE.length)
}

// A string literal (length octet, no Huffman) of `before` bytes of MAX_AGE then `n`'s decimal digits.
function digits(buf: Buffer, pos: number, n: number, before: number): number {
  let count = 1
  for (let v = n; v >= 10; v = Math.floor(v / 10)) count++
  buf[pos++] = before + count // below 127: no multi-octet length
  if (before > 0) pos += MAX_AGE.copy(buf, pos)
  for (let i = pos + count - 1, v = n; i >= pos; i--, v = Math.floor(v / 10)) buf[i] = 0x30 + (v % 10)
  return pos + count
}
