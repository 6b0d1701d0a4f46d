import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ANONYMOUS_USER, BLOCK_REASONS, CSV_HEADER, decodeRow, formatRow, parseRecords } from '../querylog/index.js'
import { ReportTime, formatDay } from '../stats/index.js'
import { DAY_MS, HOUR_MS } from '../time/index.js'
import { readBatch } from './batches.js'
import { tsvField } from './sql.js'

const START = Date.parse('2024-05-14T21:10:00Z')

/** A file of records of the writer's usual form and of every other form it or a damaged disk makes. */
function file(): Buffer {
  const names = ['a.example', 'q"uote.example', 'com,ma.example', 'ünï.example', 'back\\slash', 'x'.repeat(300)]
  const parts: Buffer[] = [Buffer.from(CSV_HEADER)]
  for (let i = 0; i < 3000; i++) {
    const reason = ['none', 'blocked', 'allowed', 'category'][i % 4]!
    const row = formatRow(
      START + i * 20_000,
      i % 33 === 0,
      `10.0.${i & 255}.1`,
      names[i % names.length]!,
      i % 4 === 1 ? 'ads.example' : '',
      reason,
      i % 5 === 0 ? [] : [1, 23, 40],
      i % 4 === 3 ? [23] : [],
      i % 7 === 0 ? '' : `user${i % 50}`,
      i % 3 === 0 ? null : 'cid,x',
      i % 11 === 0 ? 'list:3' : ''
    )
    parts.push(Buffer.from(row))
    if (i % 500 === 0) {
      // Not the writer's forms: categories spelled otherwise, a leading zero, eight fields, junk, LF only,
      // a name whose bytes are not UTF-8.
      parts.push(Buffer.from(`${START + i * 20_000},0,1.2.3.4,cats.example,,none,007  8,,u\r\n`))
      parts.push(Buffer.from(`0${START + i * 20_000},1,1.2.3.4,zero.example,,blocked,,,u,c\n`))
      parts.push(Buffer.from(`${START + i * 20_000},0,1.2.3.4,eight.example,,none,,\r\n`))
      parts.push(Buffer.from('not a record\r\n'))
      parts.push(
        Buffer.concat([
          Buffer.from(`${START + i * 20_000},0,1.2.3.4,bad`),
          Buffer.from([0xff]),
          Buffer.from(',,none,,,\r\n')
        ])
      )
    }
  }
  return Buffer.concat(parts)
}

/** What a batch's text must hold: each record decoded by the query log's decodeRow, as the columns. */
function expected(text: string, start: number, end: number, id: string, time: ReportTime): string {
  const records: string[][] = []
  parseRecords(text.slice(0, end), start, Infinity, records)
  let out = ''
  let n = 0
  for (const fields of records) {
    const r = decodeRow(fields)
    if (r === undefined) continue
    const row = [
      formatDay(Math.floor(r.created / DAY_MS)),
      r.created,
      Math.floor(r.created / HOUR_MS),
      time.dayOf(r.created),
      r.user === '' ? ANONYMOUS_USER : r.user,
      r.nxdomain ? 1 : 0,
      r.address,
      r.host,
      r.blockedHost,
      r.reason,
      r.cats.join(' '),
      r.blockedCats.join(' '),
      r.clientId,
      r.source ?? '',
      BLOCK_REASONS.has(r.reason) ? 1 : 0,
      id,
      n++
    ]
    out += row.map((v) => tsvField(String(v))).join('\t') + '\n'
  }
  return out
}

test("a batch's TabSeparated text holds the query log's decoded rows, whatever form their records take", () => {
  const bytes = file()
  const text = bytes.toString('latin1')
  for (const zone of ['UTC', 'Asia/Kolkata', 'America/St_Johns']) {
    const time = new ReportTime(zone)
    let batches = 0
    let rows = 0
    for (let pos = 0, b = readBatch(bytes, 0, 700, (s) => `h/f@${s}`, time); b !== undefined;) {
      assert.equal(b.tsv.toString('utf8'), expected(text, b.start, b.end, b.id, time), `${zone} ${b.id}`)
      batches++
      rows += b.rows
      pos = b.end
      b = readBatch(bytes, pos, 700, (s) => `h/f@${s}`, time)
    }
    assert.equal(rows, 3000 + 6 * 4, `${zone}: every row once`)
    assert.ok(batches >= 5, `${zone}: batches cut at 700 rows and at each day`)
  }
})

test('a batch ends before a record that starts at stopAt', () => {
  const bytes = file()
  const time = new ReportTime('UTC')
  const first = readBatch(bytes, 0, 99, (s) => `h/f@${s}`, time)!
  const part = readBatch(bytes, 0, 100, (s) => `h/f@${s}`, time, first.end)!
  assert.equal(part.rows, 99)
  assert.equal(part.end, first.end)
  assert.equal(readBatch(bytes, 0, 100, (s) => `h/f@${s}`, time, first.end + 1)!.rows, 100)
})
