// Both dispatch modes, the CLI daemon, cluster processes, cross-process policy updates, dig.
import { test, type TestContext } from 'node:test'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { CATEGORY } from '../categories/index.js'
import { memoryQueryLogSink } from '../querylog/index.js'
import {
  BLOCK_V4, BLOCK_V6, addUser, ask, dig, digMissing, firstA, framed, query, server, sleep, tcpClient, world, writeConfigFile
} from './testing/harness.js'
import dnsPacket from 'dns-packet'

const FWD = '198.51.100.10'
const cats = { 'casino.example': [CATEGORY.GAMBLING] }
const CLI = fileURLToPath(new URL('../../tools/filterd.js', import.meta.url))

for (const dispatch of ['inline', 'pool'] as const) {
  test(`dispatch ${dispatch}: blocks, forwards, answers TCP and writes statistics`, async (t: TestContext) => {
    const w = await world(t, { cats })
    await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
    const sink = memoryQueryLogSink()
    const s = await server(t, w, { proxy: { dispatch, 'batch-size': 4 }, querylog: sink })
    t.assert.strictEqual(s.dispatch, dispatch)
    const answers = await Promise.all(Array.from({ length: 12 }, async (_, i) => await ask(s.port, i % 2 === 0 ? `n${i}.casino.example` : `n${i}.example.org`, 'A', { id: i })))
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

async function freePort (): Promise<number> {
  const srv = createServer()
  srv.listen(0, '127.0.0.1')
  await once(srv, 'listening')
  const port = (srv.address() as { port: number }).port
  srv.close()
  return port
}

async function daemon (t: TestContext, file: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [CLI, 'dns', '--config', file], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let out = ''
  child.stdout?.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr?.on('data', (d: Buffer) => { out += d.toString() })
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (m: { type?: string }) => { if (m.type === 'ready') resolve() })
    child.on('exit', (code) => reject(new Error(`filterd dns exited with ${String(code)}: ${out}`)))
  })
  await ready
  return child
}

test('the CLI daemon answers, sees a write from another process within 100 ms, and stops on SIGTERM', async (t: TestContext) => {
  const w = await world(t, { cats })
  await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'] })
  const port = await freePort()
  const file = writeConfigFile(w, { listen: [`127.0.0.1:${port}`] })
  const child = await daemon(t, file)
  t.assert.ok(existsSync(join(w.dir, 'dns.pid')))
  t.assert.strictEqual(firstA(await ask(port, 'casino.example', 'A')), FWD)
  await w.store.write((wr) => wr.putUser({ ...w.store.getUser('alice')!, filter: [CATEGORY.GAMBLING] }))
  await sleep(100)
  t.assert.strictEqual(firstA(await ask(port, 'casino.example', 'A')), BLOCK_V4)
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const [code] = await exited as [number]
  t.assert.strictEqual(code, 0)
  t.assert.ok(!existsSync(join(w.dir, 'dns.pid')))
})

test('proxy.processes runs several front processes that share the sockets', async (t: TestContext) => {
  const w = await world(t, { cats })
  await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
  const port = await freePort()
  const file = writeConfigFile(w, { listen: [`127.0.0.1:${port}`], proxy: { processes: 2 } })
  const child = await daemon(t, file)
  for (let i = 0; i < 6; i++) t.assert.strictEqual(firstA(await ask(port, `x${i}.casino.example`, 'A')), BLOCK_V4)
  t.assert.strictEqual(firstA(await ask(port, 'ok.example', 'A')), FWD)
  const c = await tcpClient(t, port)
  c.send(framed(query('casino.example', 'A', { id: 3 })))
  t.assert.strictEqual(firstA(dnsPacket.decode(await c.next())), BLOCK_V4)
  c.socket.destroy()
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  t.assert.strictEqual((await exited as [number])[0], 0)
})

test('dig sees the block answer with its EDE, over UDP and TCP', async (t: TestContext) => {
  const w = await world(t, { cats })
  await addUser(w.store, { name: 'alice', ip: ['127.0.0.1'], filter: [CATEGORY.GAMBLING] })
  const s = await server(t, w)
  const udp = await dig(['@127.0.0.1', '-p', String(s.port), '+tries=1', '+time=3', 'casino.example', 'A'])
  if (udp === undefined) { digMissing(t); return }
  t.assert.match(udp, /casino\.example\.\s+60\s+IN\s+A\s+192\.0\.2\.1/)
  t.assert.match(udp, /EDE: 17/)
  const tcp = await dig(['@127.0.0.1', '-p', String(s.port), '+tcp', '+tries=1', '+time=3', 'www.example.org', 'AAAA'])
  t.assert.match(tcp ?? '', /2001:db8::10/)
})
