// HPACK (./hpack.ts) against RFC 7541's own examples (Appendix C.2-C.6: literals, indexing, the
// dynamic table with and without Huffman coding, evictions in a 256-octet table), malformed input
// refused, the decoded size bounded, and the response encoders read back.
import { test, type TestContext } from 'node:test'
import { randomBytes } from 'node:crypto'
import {
  decodeLiteral,
  DNS_ANSWER_MAX,
  encodeDnsAnswer,
  encodeResponse,
  encodedSize,
  HpackDecoder,
  huffmanDecode,
  writeInt
} from './hpack.js'

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex')
const pairs = (flat: string[]): string[][] => flat.flatMap((_, i) => (i % 2 === 0 ? [[flat[i]!, flat[i + 1]!]] : []))

function decodeAll(d: HpackDecoder, block: Buffer): string[][] {
  const out: string[] = []
  const failure = d.decode(block, out)
  if (failure !== null) throw new Error(`decode failed: ${failure}`)
  return pairs(out)
}

test('C.2: a literal with indexing, without indexing, never indexed, and an indexed field', (t: TestContext) => {
  const d = new HpackDecoder()
  t.assert.deepStrictEqual(decodeAll(d, hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572')), [
    ['custom-key', 'custom-header']
  ])
  t.assert.strictEqual(d.tableSize, 55)
  const e = new HpackDecoder()
  t.assert.deepStrictEqual(decodeAll(e, hex('040c 2f73 616d 706c 652f 7061 7468')), [[':path', '/sample/path']])
  t.assert.deepStrictEqual(decodeAll(e, hex('1008 7061 7373 776f 7264 0673 6563 7265 74')), [['password', 'secret']])
  t.assert.deepStrictEqual(decodeAll(e, hex('82')), [[':method', 'GET']])
  t.assert.strictEqual(e.tableSize, 0)
})

const REQUESTS = [
  [
    [':method', 'GET'],
    [':scheme', 'http'],
    [':path', '/'],
    [':authority', 'www.example.com']
  ],
  [
    [':method', 'GET'],
    [':scheme', 'http'],
    [':path', '/'],
    [':authority', 'www.example.com'],
    ['cache-control', 'no-cache']
  ],
  [
    [':method', 'GET'],
    [':scheme', 'https'],
    [':path', '/index.html'],
    [':authority', 'www.example.com'],
    ['custom-key', 'custom-value']
  ]
]
const REQUEST_TABLE = [
  ['custom-key', 'custom-value'],
  ['cache-control', 'no-cache'],
  [':authority', 'www.example.com']
]

for (const [name, blocks] of [
  [
    'C.3: requests without Huffman coding',
    [
      '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
      '8286 84be 5808 6e6f 2d63 6163 6865',
      '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65'
    ]
  ],
  [
    'C.4: requests with Huffman coding',
    [
      '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff',
      '8286 84be 5886 a8eb 1064 9cbf',
      '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf'
    ]
  ]
] as const) {
  test(`${name}, one dynamic table across three blocks`, (t: TestContext) => {
    const d = new HpackDecoder()
    for (let i = 0; i < 3; i++) t.assert.deepStrictEqual(decodeAll(d, hex(blocks[i]!)), REQUESTS[i])
    t.assert.deepStrictEqual(
      d.entries.map((e) => [...e]),
      REQUEST_TABLE
    )
    t.assert.strictEqual(d.tableSize, 164)
  })
}

const DATE1 = 'Mon, 21 Oct 2013 20:13:21 GMT'
const DATE2 = 'Mon, 21 Oct 2013 20:13:22 GMT'
const COOKIE = 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'
const RESPONSES = [
  [
    [':status', '302'],
    ['cache-control', 'private'],
    ['date', DATE1],
    ['location', 'https://www.example.com']
  ],
  [
    [':status', '307'],
    ['cache-control', 'private'],
    ['date', DATE1],
    ['location', 'https://www.example.com']
  ],
  [
    [':status', '200'],
    ['cache-control', 'private'],
    ['date', DATE2],
    ['location', 'https://www.example.com'],
    ['content-encoding', 'gzip'],
    ['set-cookie', COOKIE]
  ]
]
const TABLES = [
  [
    ['location', 'https://www.example.com'],
    ['date', DATE1],
    ['cache-control', 'private'],
    [':status', '302']
  ],
  [
    [':status', '307'],
    ['location', 'https://www.example.com'],
    ['date', DATE1],
    ['cache-control', 'private']
  ],
  [
    ['set-cookie', COOKIE],
    ['content-encoding', 'gzip'],
    ['date', DATE2]
  ]
]
const SIZES = [222, 222, 215]

for (const [name, blocks] of [
  [
    'C.5: responses without Huffman coding',
    [
      '4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
      '4803 3330 37c1 c0bf',
      '88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31'
    ]
  ],
  [
    'C.6: responses with Huffman coding',
    [
      '4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3',
      '4883 640e ffc1 c0bf',
      '88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07'
    ]
  ]
] as const) {
  test(`${name}: a 256-octet table, entries evicted oldest first`, (t: TestContext) => {
    const d = new HpackDecoder(256)
    for (let i = 0; i < 3; i++) {
      t.assert.deepStrictEqual(decodeAll(d, hex(blocks[i]!)), RESPONSES[i])
      t.assert.deepStrictEqual(
        d.entries.map((e) => [...e]),
        TABLES[i],
        `table after block ${i + 1}`
      )
      t.assert.strictEqual(d.tableSize, SIZES[i])
    }
  })
}

test('malformed blocks are refused: truncated, bad index, bad Huffman, table size over the limit, after a field', (t: TestContext) => {
  const bad = [
    '0f', // an integer whose continuation never comes
    '0f ff ff ff ff ff 01', // an integer over 2^28
    'be', // dynamic index 62 in an empty table
    '80', // index 0
    '400a 6375 7374', // a literal name cut short
    '4083 ffff ff 01 61', // a Huffman string holding EOS
    '4081 00 01 61', // a Huffman string whose padding is not all ones
    '3fe2 1f', // a table size update to 4096 + 1 over the 4096 announced
    '82 20' // a table size update after a field
  ]
  for (const b of bad) t.assert.strictEqual(new HpackDecoder().decode(hex(b), []), 'malformed', b)
  t.assert.strictEqual(huffmanDecode(hex('ff ff ff ff'), 0, 4), null)
})

test('a block that decodes to more than the list size is refused, however small it is (HPACK bomb)', (t: TestContext) => {
  const d = new HpackDecoder(4096, 16384)
  // One 4,000-octet entry, then indexed 5 times: 20 KB from a few bytes.
  const value = 'x'.repeat(4000)
  const lit = Buffer.alloc(8 + value.length)
  let pos = 0
  lit[pos++] = 0x40
  lit[pos++] = 1
  lit[pos++] = 0x61
  pos = writeInt(lit, pos, value.length, 7, 0)
  pos += lit.write(value, pos, 'latin1')
  t.assert.strictEqual(d.decode(lit.subarray(0, pos), []), null)
  t.assert.strictEqual(d.decode(hex('be be be be be'), []), 'too-large')
})

test('a size update to 0 empties the table; an entry larger than the table empties it and is not added', (t: TestContext) => {
  const d = new HpackDecoder(100)
  decodeAll(d, hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572'))
  t.assert.strictEqual(d.entries.length, 1)
  t.assert.deepStrictEqual(decodeAll(d, hex('20')), [])
  t.assert.strictEqual(d.tableSize, 0)
  const e = new HpackDecoder(64)
  decodeAll(e, hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572'))
  decodeAll(e, hex('4003 6b65 79' + '1e' + Buffer.from('v'.repeat(30)).toString('hex')))
  t.assert.strictEqual(e.entries.length, 0)
})

test('the response encoder: read back by the decoder, :status indexed when the static table has it', (t: TestContext) => {
  const headers = {
    'content-type': 'application/dns-message',
    'content-length': 53,
    'cache-control': 'max-age=300',
    allow: 'GET, POST',
    'x-long': 'y'.repeat(300)
  }
  for (const status of [200, 400, 413, 503]) {
    const buf = Buffer.alloc(encodedSize(headers))
    const end = encodeResponse(buf, 0, status, headers)
    const got = decodeAll(new HpackDecoder(), buf.subarray(0, end))
    t.assert.deepStrictEqual(got, [
      [':status', String(status)],
      ...Object.entries(headers).map(([k, v]) => [k, String(v)])
    ])
  }
  const buf = Buffer.alloc(64)
  t.assert.strictEqual(encodeResponse(buf, 0, 200, {}), 1)
  t.assert.strictEqual(buf[0], 0x88)
})

test("a DNS answer's header block: the octets the general encoder makes, read back with the numbers it was given", (t: TestContext) => {
  for (const len of [0, 9, 10, 99, 100, 512, 1232, 9999, 65535]) {
    for (const ttl of [-1, 0, 7, 10, 300, 3600, 86400, 2 ** 31 - 1, 2 ** 32 - 1]) {
      const want = {
        'content-type': 'application/dns-message',
        'content-length': len,
        'cache-control': `max-age=${Math.max(0, ttl)}`
      }
      const general = Buffer.alloc(encodedSize(want))
      const generalEnd = encodeResponse(general, 0, 200, want)
      // At an offset, after other bytes, into a buffer of exactly the room promised.
      const buf = Buffer.alloc(5 + DNS_ANSWER_MAX, 0xee)
      const end = encodeDnsAnswer(buf, 5, len, ttl)
      t.assert.ok(end <= buf.length)
      t.assert.deepStrictEqual(buf.subarray(5, end), general.subarray(0, generalEnd), `len ${len} ttl ${ttl}`)
      t.assert.deepStrictEqual(buf.subarray(0, 5), Buffer.alloc(5, 0xee))
      t.assert.deepStrictEqual(decodeAll(new HpackDecoder(), buf.subarray(5, end)), [
        [':status', '200'],
        ['content-type', 'application/dns-message'],
        ['content-length', String(len)],
        ['cache-control', `max-age=${Math.max(0, ttl)}`]
      ])
    }
  }
})

test('the literal cache: the same octets always give the same string, Huffman-coded or not, over many colliding literals', (t: TestContext) => {
  // RFC 7541 C.4.1: "www.example.com" Huffman-coded; the same octets read as a plain literal are other text.
  const huffman = hex('f1e3 c2e5 f23a 6ba0 ab90 f4ff')
  const values = Array.from({ length: 400 }, (_, i) => randomBytes(1 + (i % 40)))
  for (let round = 0; round < 3; round++) {
    t.assert.strictEqual(decodeLiteral(huffman, 0, huffman.length, true), 'www.example.com')
    t.assert.strictEqual(decodeLiteral(huffman, 0, huffman.length, false), huffman.toString('latin1'))
    for (const v of values) {
      // At an offset inside a larger buffer whose other octets change between rounds.
      const buf = Buffer.concat([randomBytes(3), v, randomBytes(2)])
      t.assert.strictEqual(decodeLiteral(buf, 3, v.length, false), v.toString('latin1'))
    }
  }
  // A malformed Huffman literal (EOS padding too long) fails every time, never cached.
  for (let i = 0; i < 3; i++) t.assert.strictEqual(decodeLiteral(hex('ffff ffff'), 0, 4, true), null)
  // Through the decoder: the same header block twice, then one that differs in a single octet.
  const d = new HpackDecoder()
  const block = Buffer.concat([hex('040a'), Buffer.from('/dns-query'), hex('0f0d 02'), Buffer.from('17')])
  t.assert.deepStrictEqual(decodeAll(d, block), [
    [':path', '/dns-query'],
    ['content-length', '17']
  ])
  t.assert.deepStrictEqual(decodeAll(d, block), decodeAll(new HpackDecoder(), block))
  block[block.length - 1] = 0x38
  t.assert.deepStrictEqual(decodeAll(d, block)[1], ['content-length', '18'])
})
