import { test, type TestContext } from 'node:test'
import { FrameReader, frame } from './tcp-frame.js'
import { query } from './testing/build.js'

function drain(r: FrameReader): Buffer[] {
  const out: Buffer[] = []
  for (let m = r.read(); m !== null; m = r.read()) out.push(m)
  return out
}

test('frames a message with a 2-byte length prefix', (t: TestContext) => {
  const msg = query('example.com', 'A')
  const f = frame(msg)
  t.assert.strictEqual(f.readUInt16BE(0), msg.length)
  t.assert.deepStrictEqual(f.subarray(2), msg)
  t.assert.deepStrictEqual(frame(msg, 5).subarray(2), msg.subarray(0, 5))
  t.assert.throws(() => frame(Buffer.alloc(70000)), RangeError)
})

test('yields messages split at every byte boundary', (t: TestContext) => {
  const msgs = [query('a.example', 'A'), query('bb.example', 'AAAA'), Buffer.alloc(0), query('c.example', 'TXT')]
  const stream = Buffer.concat(msgs.map((m) => frame(m)))
  for (let cut = 1; cut < stream.length; cut++) {
    const r = new FrameReader()
    r.push(stream.subarray(0, cut))
    const got = drain(r)
    r.push(stream.subarray(cut))
    got.push(...drain(r))
    t.assert.deepStrictEqual(got, msgs, `cut at ${cut}`)
    t.assert.strictEqual(r.bufferedBytes, 0)
  }
  const r = new FrameReader()
  const got: Buffer[] = []
  for (const b of stream) {
    r.push(Buffer.from([b]))
    got.push(...drain(r))
  }
  t.assert.deepStrictEqual(got, msgs, 'one byte at a time')
})

test('returns a frame inside one chunk as a view without copying', (t: TestContext) => {
  const chunk = frame(query('a.example', 'A'))
  const r = new FrameReader()
  r.push(chunk)
  const m = r.read()!
  t.assert.strictEqual(m.buffer, chunk.buffer)
  t.assert.strictEqual(m.byteOffset, chunk.byteOffset + 2)
})

test('reports an oversized frame and stops reading', (t: TestContext) => {
  const r = new FrameReader(512)
  r.push(frame(query('ok.example', 'A')))
  r.push(Buffer.from([0x02, 0x01, 1, 2, 3]))
  r.push(frame(query('after.example', 'A')))
  t.assert.strictEqual(drain(r).length, 1)
  t.assert.strictEqual(r.isOversized, true)
  t.assert.strictEqual(r.oversizedLength, 513)
  t.assert.strictEqual(r.bufferedBytes, 0)
  r.push(frame(query('later.example', 'A')))
  t.assert.strictEqual(r.read(), null)
})
