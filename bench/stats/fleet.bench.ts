/**
 * Fleet statistics: PRODUCERS hosts, each logging RATE queries/s, exchange
 * segments through a real redis-server holding metadata only. Simulates SECONDS seconds of traffic:
 * each host writes a CSV file per `rotate` (3 s, the default) and turns it into a segment; one report
 * store fetches and applies every segment over HTTP. Prints Redis `used_memory` before and after
 * (bytes per query row), the segment bytes per row, and the production and apply rates.
 *
 *   node dist/bench/stats/fleet.bench.js [producers=3] [rate=20000] [seconds=60]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHttpServer } from '../../engine/http/index.js'
import { connectSharedStore, whenReady } from '../../engine/replica/redis.js'
import { applySegmentsOnce } from '../../engine/replica/segment-fetch.js'
import { produceSegments, segmentKeys, segmentSecret, serveSegments } from '../../engine/replica/segments.js'
import { statsKeys } from '../../engine/replica/row-stream.js'
import { CSV_HEADER } from '../../engine/querylog/index.js'
import { fileStamp } from '../../engine/querylog/files.js'
import { openStatsDb } from '../../engine/stats/db.js'
import { openSegmentWriter } from '../../engine/stats/segment.js'
import { startRedis } from '../../engine/testing/redis.js'
import { testSettings } from '../../engine/testing/replica.js'

const PRODUCERS = Number(process.argv[2] ?? 3)
const RATE = Number(process.argv[3] ?? 20_000)
const SECONDS = Number(process.argv[4] ?? 60)
const ROTATE_S = 3

function csvFile(dir: string, start: number, rows: number, n: number): void {
  const lines = [CSV_HEADER]
  for (let i = 0; i < rows; i++) {
    const user = i % 5 === 0 ? '' : `u${i % 10_000}`
    lines.push(`${start + Math.floor((i * 1000) / RATE)},0,10.${i % 250}.0.1,n${i % 3000}.example,,,1 2,,${user},\r\n`)
  }
  writeFileSync(join(dir, `queries-${fileStamp(start)}-1-${n.toString(36)}.csv`), lines.join(''))
}

async function usedMemory(r: ReturnType<typeof connectSharedStore>): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await r.info('memory'))![1])
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'filterd-fleet-bench-'))
  const redis = await startRedis()
  const r = connectSharedStore(testSettings(redis.host, redis.port, 'bench:'), { commandTimeout: 60_000 })
  await whenReady(r, 5000)
  const keys = segmentKeys('bench:')
  const hosts = await Promise.all(
    Array.from({ length: PRODUCERS }, async (_, k) => {
      const statsDir = join(root, `h${k}`, 'csv')
      const segDir = join(root, `h${k}`, 'segments')
      mkdirSync(statsDir, { recursive: true })
      const secret = await segmentSecret(segDir)
      const http = createHttpServer({ impl: 'node' })
      serveSegments(http, segDir, secret)
      const { port } = await http.listen('127.0.0.1', 0)
      const o = {
        host: `h${k}`,
        statsDir,
        segDir,
        url: `http://127.0.0.1:${port}`,
        secret,
        retentionMs: 86_400_000,
        writer: openSegmentWriter({ threads: 1 }),
        streamKeys: statsKeys('bench:')
      }
      return { o, http }
    })
  )
  const before = await usedMemory(r)
  const start = Date.now() - SECONDS * 1000
  const perFile = RATE * ROTATE_S
  let rows = 0
  let produceMs = 0
  for (let s = 0; s < SECONDS; s += ROTATE_S) {
    for (const [k, h] of hosts.entries()) csvFile(h.o.statsDir, start + s * 1000, perFile, s * 10 + k)
    const t0 = performance.now()
    for (const h of hosts) rows += await produceSegments(r, keys, h.o)
    produceMs += performance.now() - t0
  }
  const after = await usedMemory(r)
  const db = openStatsDb(join(root, 'reports'), { threads: 2, memoryLimit: '1GB' })
  const counters = { fetched: 0, applied: 0, duplicates: 0, failed: 0, rows: 0 }
  const t1 = performance.now()
  await applySegmentsOnce({
    redis: r,
    keys,
    streamKeys: statsKeys('bench:'),
    db,
    timeZone: 'UTC',
    self: 'report',
    incoming: join(root, 'incoming'),
    counters
  })
  const applyMs = performance.now() - t1
  let segBytes = 0
  for (const v of Object.values(await r.hgetall(keys.meta))) segBytes += (JSON.parse(v) as { bytes: number }).bytes
  const segments = await r.hlen(keys.meta)
  console.log(`${PRODUCERS} producers x ${RATE} q/s x ${SECONDS} s = ${rows} rows in ${segments} segments`)
  console.log(
    `Redis used_memory: ${before} -> ${after} bytes: ${((after - before) / rows).toFixed(4)} bytes per query row, ${((after - before) / segments).toFixed(0)} per segment`
  )
  console.log(`segments on disk: ${(segBytes / rows).toFixed(2)} bytes per row`)
  console.log(
    `produce (CSV -> Parquet, register): ${Math.round(rows / (produceMs / 1000))} rows/s (one process, producers in turn)`
  )
  console.log(
    `fetch + check + apply on one report store: ${Math.round(counters.rows / (applyMs / 1000))} rows/s (${counters.applied} segments)`
  )
  await db.close()
  for (const h of hosts) {
    await h.http.close()
    await h.o.writer.close()
  }
  r.disconnect()
  await redis.stop()
  rmSync(root, { recursive: true, force: true })
}

await main()
