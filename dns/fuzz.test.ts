// Fuzz target: FUZZ_PACKETS (default 1,000,000) hostile packets through the real DNS daemon
// (`filterd dns` as a child process), over UDP and TCP, interleaved with valid queries whose answers
// are checked. It asserts: the daemon never dies, every valid query gets the right answer, and the
// worst latency of a valid query sent every 10 ms alongside stays bounded. The long run is
// `FUZZ_PACKETS=10000000 scripts/reliability-long.sh` (docs/reliability.md); FUZZ_SEED replays a run.
// The stall run there also sets FUZZ_RATE, FUZZ_BATCH, FUZZ_NICE and FUZZ_SERVER_CPU (read below).
import { test, type TestContext } from 'node:test'
import { fork, spawn, type ChildProcess } from 'node:child_process'
import { createSocket, type Socket } from 'node:dgram'
import { connect, type Socket as TcpSocket } from 'node:net'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { randomInt } from 'node:crypto'
import { setPriority } from 'node:os'
import { CATEGORY } from '../engine/categories/index.js'
import { releasedPort } from '../engine/testing/ports.js'
import { addUser, world, writeConfigFile } from './testing/harness.js'
import { FuzzGenerator } from './testing/fuzz.js'
import { Checker } from './testing/fuzz-check.js'
import { frame } from '../engine/wire/index.js'

const CLI = fileURLToPath(new URL('../tools/filterd.js', import.meta.url))
const PROBE = fileURLToPath(new URL('./testing/probe-child.js', import.meta.url))
const UPSTREAM = fileURLToPath(new URL('./testing/upstream-child.js', import.meta.url))
const PACKETS = Number(process.env.FUZZ_PACKETS ?? 1_000_000)
const SEED = Number(process.env.FUZZ_SEED ?? randomInt(1, 0x7fffffff))
const BATCH = Number(process.env.FUZZ_BATCH ?? 64)
const TCP_BATCH = 4 * BATCH
const UDP_LANES = Number(process.env.FUZZ_LANES ?? 2)
/** CI bound on the worst valid-query latency: generous, the machine is shared (docs/reliability.md). */
const WORST_MS = Number(process.env.FUZZ_WORST_MS ?? 4000)
/**
 * Fuzz packets per second over all lanes; 0 (the default): as fast as the server takes them. A rate the
 * server keeps up with measures its stalls rather than its queue (the long run, docs/reliability.md).
 */
const RATE = Number(process.env.FUZZ_RATE ?? 0)
/** Niceness of the fuzzer's main thread (0: unchanged); the stall run of scripts/reliability-long.sh sets it. */
const NICE = Number(process.env.FUZZ_NICE ?? 0)

/**
 * The upstream, on UDP and TCP (one port), in a process of its own (testing/upstream-child.ts): the
 * probe's forwarded queries then time the server, not this process's busy event loop.
 */
async function rawResponder(t: TestContext): Promise<number> {
  const child = fork(UPSTREAM, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL')
  })
  return await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => {
      resolve((m as { port: number }).port)
    })
    child.once('exit', (code) => reject(new Error(`the fuzz upstream exited with ${String(code)}`)))
  })
}

/** Kernel drops on the server's UDP socket (/proc/net/udp, last column), or -1 off Linux. */
function udpDrops(port: number): number {
  try {
    const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`
    for (const line of readFileSync('/proc/net/udp', 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      if (f[1]?.endsWith(hex) === true && f[1].startsWith('0100007F')) return Number(f[f.length - 1])
    }
  } catch {}
  return -1
}

async function startDaemon(t: TestContext, file: string): Promise<ChildProcess> {
  const nodeArgs = (process.env.FUZZ_SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '') // e.g. --cpu-prof, to profile the server
  // FUZZ_SERVER_CPU pins the server to that CPU (taskset), as an operator gives it cores of its own;
  // the stall run pins this process and the probe to the others.
  const cpu = process.env.FUZZ_SERVER_CPU ?? ''
  const argv = [process.execPath, ...nodeArgs, CLI, 'dns', '--config', file]
  if (cpu !== '') argv.unshift('taskset', '-c', cpu)
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] }) // argv is never empty
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let err = ''
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString()
  })
  await new Promise<void>((resolve, reject) => {
    child.on('message', (m: { type?: string }) => {
      if (m.type === 'ready') resolve()
    })
    child.on('exit', (code) => reject(new Error(`filterd dns exited with ${String(code)}: ${err}`)))
  })
  return child
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor(p * s.length))]!
}

test(
  `fuzz: ${PACKETS} hostile packets over UDP and TCP, valid queries interleaved, no crash, no wrong answer, bounded latency`,
  { timeout: Math.max(600_000, PACKETS / 2) },
  async (t: TestContext) => {
    const w = await world(t, { cats: { 'casino.example': [CATEGORY.GAMBLING] } })
    await addUser(w.store, { name: 'fuzz', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
    const upstream = await rawResponder(t)
    const port = await releasedPort()
    const file = writeConfigFile(w, {
      listen: [`127.0.0.1:${port}`],
      forward: [`127.0.0.1:${upstream}`],
      proxy: { 'upstream-timeout': 5000 }
    })
    const child = await startDaemon(t, file)
    let died: string | null = null
    child.on('exit', (code, signal) => {
      died = `filterd dns exited during the fuzz run: code ${String(code)}, signal ${String(signal)}`
    })
    const drops0 = udpDrops(port)
    const gen = new FuzzGenerator(SEED, ['www.casino.example', 'x.fwd.example', 'a.b.c.example', 'youtube.com'])
    let sent = 0
    let tcpSent = 0
    let reconnects = 0
    const checker = new Checker() // valid queries of the lanes
    const problems: string[] = []
    const started = performance.now()
    // The paced stall run measures the server, and the fuzzer stands for other hosts: with FUZZ_NICE
    // (niceness, e.g. 10) its main thread yields the CPU to the server and the probe when both want it.
    if (NICE !== 0) setPriority(NICE)
    // With FUZZ_RATE, a lane that is ahead of the rate waits before its next batch.
    const pace = async (): Promise<void> => {
      if (RATE <= 0) return
      const ahead = started + (sent / RATE) * 1000 - performance.now()
      if (ahead > 1) await new Promise((resolve) => setTimeout(resolve, ahead))
    }

    // UDP lanes: a batch of fuzz packets, then one valid query, wait for its answer (flow control:
    // the socket is read in order, so the batch has been taken when the answer comes).
    const udpLane = async (): Promise<void> => {
      const sock: Socket = createSocket('udp4')
      sock.on('message', (m) => checker.onMessage(m))
      await new Promise<void>((resolve) => sock.connect(port, '127.0.0.1', resolve))
      try {
        while (sent < PACKETS && died === null && problems.length === 0) {
          await pace()
          for (let i = 0; i < BATCH; i++) sock.send(gen.next())
          sent += BATCH
          const v = checker.make('u')
          sock.send(v.msg)
          const p = await v.done
          if (p !== null) problems.push(`udp ${p}`)
        }
      } finally {
        sock.close()
      }
    }

    // A TCP lane: a batch of well-framed fuzz messages in one write, then one valid query. Now and
    // then an announced frame over the size cap, which must close the connection; then reconnect.
    const tcpLane = async (): Promise<void> => {
      while (sent < PACKETS && died === null && problems.length === 0) {
        const sock: TcpSocket = connect({ host: '127.0.0.1', port })
        sock.setNoDelay(true)
        sock.on('error', () => {})
        await once(sock, 'connect')
        let buf: Buffer = Buffer.alloc(0)
        sock.on('data', (chunk: Buffer) => {
          buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk])
          while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
            checker.onMessage(buf.subarray(2, 2 + buf.readUInt16BE(0)))
            buf = buf.subarray(2 + buf.readUInt16BE(0))
          }
        })
        const closed = once(sock, 'close')
        for (let round = 0; round < 400 && sent < PACKETS && died === null && problems.length === 0; round++) {
          await pace()
          const frames: Buffer[] = []
          for (let i = 0; i < TCP_BATCH; i++) {
            const m = gen.next()
            frames.push(frame(m.length > 4096 ? m.subarray(0, 4096) : m))
          }
          sent += TCP_BATCH
          tcpSent += TCP_BATCH
          const v = checker.make('t')
          frames.push(frame(v.msg))
          sock.write(Buffer.concat(frames))
          const p = await v.done
          if (p !== null) problems.push(`tcp ${p}`)
        }
        const big = Buffer.alloc(2)
        big.writeUInt16BE(4097 + gen.rng.int(60000))
        sock.write(big)
        const gone = await Promise.race([
          closed.then(() => true),
          new Promise((resolve) => setTimeout(() => resolve(false), 5000))
        ])
        if (!gone) problems.push('a frame over the size cap did not close the TCP connection')
        sock.destroy()
        reconnects++
      }
    }

    // The latency probe: one valid query every 10 ms, none waiting on another, from a process of its own
    // (in this one it would also time the fuzzer's busy event loop).
    const probe = fork(PROBE, [String(port)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    t.after(() => {
      if (probe.exitCode === null) probe.kill('SIGKILL')
    })
    const probeResult = new Promise<{ latencies: number[]; localLatencies: number[]; problems: string[] }>(
      (resolve, reject) => {
        probe.on('message', (m) => {
          if (typeof m === 'object' && m !== null)
            resolve(m as { latencies: number[]; localLatencies: number[]; problems: string[] })
        })
        probe.on('exit', (code) => reject(new Error(`the latency probe exited with ${String(code)}`)))
      }
    )
    await new Promise<void>((resolve) => probe.once('message', () => resolve()))

    try {
      await Promise.all([...Array.from({ length: UDP_LANES }, udpLane), tcpLane()])
    } finally {
      probe.send('stop')
    }
    const ticker = await probeResult
    for (const p of ticker.problems) problems.push(`probe ${p}`)
    const seconds = (performance.now() - started) / 1000
    const cpu = process.cpuUsage()
    let serverCpu = -1
    try {
      const f = readFileSync(`/proc/${String(child.pid)}/stat`, 'utf8')
        .split(') ')[1]!
        .split(' ')
      serverCpu = (Number(f[11]) + Number(f[12])) / 100
    } catch {}
    const drops = udpDrops(port) - drops0
    t.diagnostic(
      `seed ${SEED}: ${sent} packets (${sent - tcpSent} UDP, ${tcpSent} TCP, ${reconnects} TCP connections) in ${seconds.toFixed(1)} s, ${Math.round(sent / seconds)}/s; kinds ${gen.made.join('/')}; kernel drops at the server ${drops}; CPU: server ${serverCpu.toFixed(1)} s, fuzzer ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s`
    )
    t.diagnostic(
      `valid queries: ${checker.latencies.length} in lanes (p50 ${pct(checker.latencies, 0.5).toFixed(1)} ms, p99 ${pct(checker.latencies, 0.99).toFixed(1)} ms, max ${pct(checker.latencies, 1).toFixed(1)} ms); ${ticker.latencies.length} probes every 10 ms (p50 ${pct(ticker.latencies, 0.5).toFixed(1)} ms, p99 ${pct(ticker.latencies, 0.99).toFixed(1)} ms, max ${pct(ticker.latencies, 1).toFixed(1)} ms; the blocked half, answered by the server alone: p99 ${pct(ticker.localLatencies, 0.99).toFixed(1)} ms, max ${pct(ticker.localLatencies, 1).toFixed(1)} ms)`
    )
    t.assert.strictEqual(died, null)
    t.assert.deepStrictEqual(problems.slice(0, 5), [], `${problems.length} valid queries went wrong (seed ${SEED})`)
    t.assert.ok(sent >= PACKETS)
    t.assert.ok(
      pct(ticker.latencies, 1) < WORST_MS,
      `worst valid-query latency ${pct(ticker.latencies, 1).toFixed(1)} ms (bound ${WORST_MS} ms, seed ${SEED})`
    )
    // And it still stops cleanly.
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    const [code] = (await exited) as [number | null]
    t.assert.strictEqual(code, 0)
  }
)
