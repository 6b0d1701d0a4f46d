// Both dispatch modes, the CLI daemon, cluster processes, cross-process policy updates, dig.
import { test, type TestContext } from 'node:test'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CATEGORY } from '../engine/categories/index.js'
import { memoryQueryLogSink } from '../engine/querylog/index.js'
import {
  BLOCK_V4,
  BLOCK_V6,
  addUser,
  ask,
  dig,
  digMissing,
  firstA,
  framed,
  query,
  server,
  sleep,
  tcpClient,
  world,
  writeConfigFile
} from './testing/harness.js'
import dnsPacket from 'dns-packet'
import { runCli } from '../engine/testing/daemon.js'
import { releasedPort } from '../engine/testing/ports.js'

/** Registers the dns.5 cases; dns.5.native.test.ts and dns.5.dgram.test.ts run them on each UDP I/O path. */
export function dnsSuite5(): void {
  const FWD = '198.51.100.10'
  const cats = { 'casino.example': [CATEGORY.GAMBLING] }
  const CLI = fileURLToPath(new URL('../tools/filterd.js', import.meta.url))
  const CONF = fileURLToPath(new URL('../../conf/', import.meta.url))

  for (const dispatch of ['inline', 'pool'] as const) {
    test(`dispatch ${dispatch}: blocks, forwards, answers TCP and writes statistics`, async (t: TestContext) => {
      const w = await world(t, { cats })
      await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
      const sink = memoryQueryLogSink()
      const s = await server(t, w, { proxy: { dispatch, 'batch-size': 4 }, querylog: sink })
      t.assert.strictEqual(s.dispatch, dispatch)
      const answers = await Promise.all(
        Array.from(
          { length: 12 },
          async (_, i) => await ask(s.port, i % 2 === 0 ? `n${i}.casino.example` : `n${i}.example.org`, 'A', { id: i })
        )
      )
      answers.forEach((a, i) => {
        t.assert.strictEqual(a.id, i)
        t.assert.strictEqual(firstA(a), i % 2 === 0 ? BLOCK_V4 : FWD)
      })
      const c = await tcpClient(t, s.port)
      c.send(framed(query('casino.example', 'AAAA', { id: 50 })))
      t.assert.strictEqual(firstA(dnsPacket.decode(await c.next())), BLOCK_V6)
      t.assert.strictEqual(sink.records.length, 13)
      t.assert.strictEqual(sink.records.filter((r) => r.reason === 'category').length, 7)
      // A policy write reaches the workers too.
      await w.store.write((wr) => wr.putUser({ ...w.store.getUser('alice')!, filter: [] }))
      await sleep(100)
      t.assert.strictEqual(firstA(await ask(s.port, 'casino.example', 'A')), FWD)
    })
  }

  /** SIGTERM, and its exit code once it is gone (before the test's folder is removed under it). */
  async function stop(child: ChildProcess): Promise<number | null> {
    if (child.exitCode !== null) return child.exitCode
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    return ((await exited) as [number | null])[0]
  }

  async function daemon(t: TestContext, file: string): Promise<ChildProcess> {
    const child = spawn(process.execPath, [CLI, 'dns', '--config', file], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
    t.after(() => {
      if (child.exitCode === null) child.kill('SIGKILL')
    })
    let out = ''
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString()
    })
    child.stderr?.on('data', (d: Buffer) => {
      out += d.toString()
    })
    const ready = new Promise<void>((resolve, reject) => {
      child.on('message', (m: { type?: string }) => {
        if (m.type === 'ready') resolve()
      })
      child.on('exit', (code) => reject(new Error(`filterd dns exited with ${String(code)}: ${out}`)))
    })
    await ready
    return child
  }

  test('the CLI daemon answers, sees a write from another process within 100 ms, and stops on SIGTERM', async (t: TestContext) => {
    const w = await world(t, { cats })
    await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'] })
    const port = await releasedPort()
    const file = writeConfigFile(w, { listen: [`127.0.0.1:${port}`] })
    const child = await daemon(t, file)
    t.assert.ok(existsSync(join(w.dir, 'dns.pid')))
    t.assert.strictEqual(firstA(await ask(port, 'casino.example', 'A')), FWD)
    await w.store.write((wr) => wr.putUser({ ...w.store.getUser('alice')!, filter: [CATEGORY.GAMBLING] }))
    await sleep(100)
    t.assert.strictEqual(firstA(await ask(port, 'casino.example', 'A')), BLOCK_V4)
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    const [code] = (await exited) as [number]
    t.assert.strictEqual(code, 0)
    t.assert.ok(!existsSync(join(w.dir, 'dns.pid')))
  })

  test('the CLI daemon stops cleanly on SIGINT and removes its pid file', async (t: TestContext) => {
    const w = await world(t, { cats })
    const port = await releasedPort()
    const child = await daemon(t, writeConfigFile(w, { listen: [`127.0.0.1:${port}`] }))
    t.assert.strictEqual(readFileSync(join(w.dir, 'dns.pid'), 'utf8').trim(), String(child.pid))
    const exited = once(child, 'exit')
    child.kill('SIGINT')
    const [code, signal] = (await exited) as [number | null, string | null]
    t.assert.deepStrictEqual({ code, signal }, { code: 0, signal: null })
    t.assert.ok(!existsSync(join(w.dir, 'dns.pid')))
  })

  test('a second start while the daemon runs refuses with one line naming the pid file and the running pid', async (t: TestContext) => {
    const w = await world(t, { cats })
    const port = await releasedPort()
    const file = writeConfigFile(w, { listen: [`127.0.0.1:${port}`] })
    const child = await daemon(t, file)
    const pidFile = join(w.dir, 'dns.pid')
    const second = await runCli(['dns', '--config', file])
    t.assert.notStrictEqual(second.code, 0)
    // One plain line (no JSON, no stack): the code and the sentence the operator reads.
    t.assert.strictEqual(
      second.stderr,
      `filterd: ENGINE_ALREADY_RUNNING: dns is already running with pid ${String(child.pid)} (pid file ${pidFile}); not starting a second one\n`
    )
    // The running daemon keeps its pid file and keeps answering.
    t.assert.strictEqual(readFileSync(pidFile, 'utf8').trim(), String(child.pid))
    t.assert.strictEqual(firstA(await ask(port, 'example.org', 'A')), FWD)
    t.assert.strictEqual(await stop(child), 0)
  })

  test('a pid file naming a live process that is not filterd (a pid reused after a reboot) does not block the start', async (t: TestContext) => {
    const w = await world(t, { cats })
    const port = await releasedPort()
    const file = writeConfigFile(w, { listen: [`127.0.0.1:${port}`] })
    const other = spawn('sleep', ['60'], { stdio: 'ignore' })
    t.after(() => other.kill('SIGKILL'))
    await once(other, 'spawn')
    const pidFile = join(w.dir, 'dns.pid')
    writeFileSync(pidFile, `${String(other.pid)}\n`)
    const child = await daemon(t, file)
    t.assert.strictEqual(readFileSync(pidFile, 'utf8').trim(), String(child.pid))
    t.assert.strictEqual(other.exitCode, null, 'the other process is left alone')
    t.assert.strictEqual(firstA(await ask(port, 'example.org', 'A')), FWD)
    t.assert.strictEqual(await stop(child), 0)
  })

  test('a running daemon follows a rebuild by filterd build-db without a restart', async (t: TestContext) => {
    const w = await world(t)
    await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
    const port = await releasedPort()
    // vendor.txt is the base; custom.txt (first, so it wins) gets corrections for the rebuild.
    writeFileSync(join(w.dir, 'custom.txt'), '')
    writeFileSync(join(w.dir, 'vendor.txt'), `casino.example ${CATEGORY.GAMBLING}\npoker.example 81\n`)
    const file = writeConfigFile(w, {
      listen: [`127.0.0.1:${port}`],
      datafiles: { file: ['custom.txt', 'vendor.txt'], cats: CONF, language: 'en' }
    })
    const first = await runCli(['build-db', '--config', file])
    t.assert.strictEqual(first.code, 0, first.stdout + first.stderr)
    const child = await daemon(t, file)
    t.assert.strictEqual(firstA(await ask(port, 'casino.example', 'A')), BLOCK_V4)
    t.assert.strictEqual(firstA(await ask(port, 'www.poker.example', 'A')), FWD)

    // casino.example is deleted, poker.example moves from news (81) to gambling.
    writeFileSync(join(w.dir, 'custom.txt'), `casino.example -\npoker.example ${CATEGORY.GAMBLING}\n`)
    const rebuilt = await runCli(['build-db', '--config', file])
    t.assert.strictEqual(rebuilt.code, 0, rebuilt.stdout + rebuilt.stderr)
    t.assert.match(rebuilt.stdout, /version 2 active: 1 domains/)
    // The daemon polls the store's generation every GENERATION_CHECK_MS (10 ms); allow it a generous second.
    const until = Date.now() + 1000
    let casino: string | undefined
    let poker: string | undefined
    do {
      await sleep(20)
      casino = firstA(await ask(port, 'casino.example', 'A'))
      poker = firstA(await ask(port, 'www.poker.example', 'A'))
    } while ((casino !== FWD || poker !== BLOCK_V4) && Date.now() < until)
    t.assert.deepStrictEqual({ casino, poker }, { casino: FWD, poker: BLOCK_V4 })
    // The same process answered throughout: no restart.
    t.assert.strictEqual(child.exitCode, null)
    t.assert.strictEqual(readFileSync(join(w.dir, 'dns.pid'), 'utf8').trim(), String(child.pid))
    t.assert.strictEqual(await stop(child), 0)
  })

  test('proxy.processes runs several front processes that share the sockets', async (t: TestContext) => {
    const w = await world(t, { cats })
    await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
    const port = await releasedPort()
    const file = writeConfigFile(w, { listen: [`127.0.0.1:${port}`], proxy: { processes: 2 } })
    const child = await daemon(t, file)
    for (let i = 0; i < 6; i++) t.assert.strictEqual(firstA(await ask(port, `x${i}.casino.example`, 'A')), BLOCK_V4)
    t.assert.strictEqual(firstA(await ask(port, 'ok.example', 'A')), FWD)
    const c = await tcpClient(t, port)
    c.send(framed(query('casino.example', 'A', { id: 3 })))
    t.assert.strictEqual(firstA(dnsPacket.decode(await c.next())), BLOCK_V4)
    c.socket.destroy()
    t.assert.strictEqual(await stop(child), 0)
  })

  test('dig sees the block answer with its EDE, over UDP and TCP', async (t: TestContext) => {
    const w = await world(t, { cats })
    await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
    const s = await server(t, w)
    const udp = await dig(['@127.0.0.1', '-p', String(s.port), '+tries=1', '+time=3', 'casino.example', 'A'])
    if (udp === undefined) {
      digMissing(t)
      return
    }
    t.assert.match(udp, /casino\.example\.\s+60\s+IN\s+A\s+192\.0\.2\.1/)
    t.assert.match(udp, /EDE: 17/)
    const tcp = await dig([
      '@127.0.0.1',
      '-p',
      String(s.port),
      '+tcp',
      '+tries=1',
      '+time=3',
      'www.example.org',
      'AAAA'
    ])
    t.assert.match(tcp ?? '', /2001:db8::10/)
  })
}
