// Preloaded into a server under test (`node --import ./dist/bench/dns/stream-trace.js ...`, with
// STREAM_TRACE_PORTS=853,53 the local ports to watch): where a DNS-over-TCP or DoT query's time goes
// inside the server process. For every socket accepted on one of the ports it follows each query
// frame by its DNS ID, from the 'data' event that brought it (bytes already decrypted for TLS) to
// the `write` of its answer, and from that `write` to its callback (the bytes handed to the kernel:
// for TLS after encryption and node's deferred write completion). Once a second, one line on stderr:
// queries answered, in→write p50/p99/max, write→done p50/p99/max (ms), 'data' events and the frames
// they carried, and the event loop's delay (p99/max) over that second. A bench tool only: it
// patches node:net's Socket.prototype (emit and write) in the process it is loaded into.
import { Socket } from 'node:net'
import { monitorEventLoopDelay } from 'node:perf_hooks'

const PORTS = new Set((process.env['STREAM_TRACE_PORTS'] ?? '').split(',').filter(Boolean).map(Number))
const loop = monitorEventLoopDelay({ resolution: 1 })
loop.enable()

interface Traced {
  arrived: Map<number, number>
  carry: Buffer | null
}
const traced = new WeakMap<Socket, Traced | null>()
const inToWrite: number[] = []
const writeToDone: number[] = []
let dataEvents = 0
let frames = 0

function state(sock: Socket): Traced | null {
  let t = traced.get(sock)
  if (t === undefined) {
    t = PORTS.has(sock.localPort ?? -1) ? { arrived: new Map(), carry: null } : null
    traced.set(sock, t)
  }
  return t
}

// The IDs of the whole frames in `chunk` (after any partial frame left from the previous chunk).
function arrivals(t: Traced, chunk: Buffer, now: number): void {
  let buf = t.carry === null ? chunk : Buffer.concat([t.carry, chunk])
  while (buf.length >= 4) {
    const len = buf.readUInt16BE(0)
    if (buf.length < 2 + len) break
    t.arrived.set(buf.readUInt16BE(2), now)
    frames++
    buf = buf.subarray(2 + len)
  }
  t.carry = buf.length > 0 ? Buffer.from(buf) : null
}

type Emit = (this: Socket, event: string | symbol, ...args: unknown[]) => boolean
const emit = Socket.prototype.emit as Emit
Socket.prototype.emit = function (this: Socket, event: string | symbol, ...args: unknown[]): boolean {
  if (event === 'data') {
    const t = state(this)
    if (t !== null && Buffer.isBuffer(args[0])) {
      dataEvents++
      arrivals(t, args[0], performance.now())
    }
  }
  return emit.call(this, event, ...args)
} as Socket['emit']

type Write = (this: Socket, chunk: unknown, ...rest: unknown[]) => boolean
const write = Socket.prototype.write as Write
Socket.prototype.write = function (this: Socket, chunk: unknown, ...rest: unknown[]): boolean {
  const t = state(this)
  if (t === null || !Buffer.isBuffer(chunk) || chunk.length < 4 || rest.length > 0)
    return write.call(this, chunk, ...rest)
  const now = performance.now()
  const at = t.arrived.get(chunk.readUInt16BE(2))
  if (at !== undefined) {
    t.arrived.delete(chunk.readUInt16BE(2))
    inToWrite.push(now - at)
  }
  return write.call(this, chunk, () => writeToDone.push(performance.now() - now))
}

const pct = (xs: number[], p: number): string =>
  xs.length === 0 ? '-' : xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!.toFixed(2)
setInterval(() => {
  const a = inToWrite.splice(0).sort((x, y) => x - y)
  const b = writeToDone.splice(0).sort((x, y) => x - y)
  if (a.length > 0 || dataEvents > 0) {
    process.stderr.write(
      `stream-trace t ${Date.now()} answered ${a.length} in->write p50 ${pct(a, 0.5)} p99 ${pct(a, 0.99)} max ${pct(a, 1)} ` +
        `write->done p50 ${pct(b, 0.5)} p99 ${pct(b, 0.99)} max ${pct(b, 1)} data ${dataEvents} frames ${frames} ` +
        `loop p99 ${(loop.percentile(99) / 1e6).toFixed(2)} max ${(loop.max / 1e6).toFixed(2)}\n`
    )
  }
  dataEvents = frames = 0
  loop.reset()
}, 1000).unref()
