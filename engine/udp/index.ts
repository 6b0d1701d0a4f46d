/*
 * engine/udp: the batched UDP I/O addon (native/udp, C over Node-API) and its JS face.
 *
 * One BatchUdpSocket owns its receive and send areas (ArrayBuffers the addon reads and writes in
 * place): a batch of datagrams arrives as one callback with a count, each datagram at
 * `i * slot` in `rxBuf`, its length and peer port in `rxInfo`, its peer address in `rxAddr`;
 * answers are copied into the send slots and leave in one sendmmsg when `flush()` runs (callers
 * schedule it once per batch). No per-datagram JS object is made here. The batches every socket
 * read in one event-loop turn come in one crossing from the addon (deliverTurn), and the answers
 * they queue leave after the last of them.
 *
 * The addon is built by `npm run build` (scripts/build-native.ts) when a compiler is present;
 * `loadUdpAddon()` reports why it is not available otherwise, and the DNS role then uses
 * node:dgram (`proxy.io: auto`). FILTERD_UDP_ADDON names another addon file (tests use a
 * missing one to check the fallback).
 */
import { createRequire } from 'node:module'
import { constants } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

interface AddonHandle {
  readonly __udpHandle: never
}
interface UdpAddon {
  open(o: OpenArgs): { handle: AddonHandle; port: number; receiveBufferSize: number }
  send(h: AddonHandle, count: number): number
  sendOne(h: AddonHandle, buf: Uint8Array, length: number, addr: Uint8Array | null, port: number): number
  takeSendError(h: AddonHandle): number
  close(h: AddonHandle): void
  setTurn(deliver: (pairs: number) => void, area: Int32Array): void
}
interface OpenArgs {
  family: 4 | 6
  host: string
  port: number
  reusePort: boolean
  steerSockets: number
  steerClientSubnet: boolean
  receiveBuffer: number
  connectHost: string | null
  connectPort: number
  batch: number
  slot: number
  rxBuf: Uint8Array
  rxInfo: Int32Array
  rxAddr: Uint8Array
  txBuf: Uint8Array
  txInfo: Int32Array
  txAddr: Uint8Array
  onBatch: (count: number) => void
  id: number
}

/** The addon's sources, where `npm run build` (scripts/build-native.ts) runs node-gyp. */
export const UDP_ADDON_DIR = fileURLToPath(new URL('../../../native/udp/', import.meta.url))
/** Where node-gyp puts the addon: the one place that knows the build layout (the loader and the build use it). */
export const UDP_ADDON_PATH = join(UDP_ADDON_DIR, 'build', 'Release', 'filterd_udp.node')

let loaded: UdpAddon | Error | null = null

/** The addon, or the reason it cannot be used (not built, no compiler, wrong platform). */
export function loadUdpAddon(): UdpAddon | Error {
  if (loaded !== null) return loaded
  const path = process.env.FILTERD_UDP_ADDON ?? UDP_ADDON_PATH
  try {
    if (process.platform !== 'linux') throw new Error(`recvmmsg/sendmmsg need Linux (this is ${process.platform})`)
    const addon = createRequire(import.meta.url)(path) as Partial<UdpAddon>
    if (typeof addon.open !== 'function' || typeof addon.send !== 'function' || typeof addon.setTurn !== 'function')
      throw new Error(`${path} is not the filterd UDP addon`)
    addon.setTurn(deliverTurn, turnArea)
    loaded = addon as UdpAddon
  } catch (err) {
    const e = err as Error
    loaded = new Error(
      `the native UDP addon did not load (${e.message.split('\n')[0] ?? ''}); build it with \`npm run build\` (needs a C compiler and make)`
    )
  }
  return loaded
}

export interface BatchUdpSocketOptions {
  family: 4 | 6
  host: string
  /** 0: a free port. */
  port: number
  /** SO_REUSEPORT: every front process binds its own socket on the port; the kernel spreads datagrams. */
  reusePort?: boolean
  /**
   * With `reusePort`, the number of sockets the group will hold (one per front process): at 2 or more,
   * the kernel hands every datagram of one source address to the same socket, hash(address) % N (the
   * first 64 bits of an IPv6 address), instead of spreading by address and port. 0 or absent: the kernel's choice.
   */
  steerSockets?: number
  /**
   * With `steerSockets`, steer a query by its EDNS Client Subnet address when it carries one the policy
   * can name a subscriber by (four IPv4 address bytes, at least eight IPv6 ones), else by its source.
   */
  steerClientSubnet?: boolean
  /** SO_RCVBUF in bytes (Linux grants twice the value, capped by net.core.rmem_max); 0 or absent: the kernel default. */
  receiveBuffer?: number
  /** Connect to this peer (an upstream resolver): only its datagrams arrive, sends need no address. */
  connect?: { host: string; port: number }
  /** Datagrams per recvmmsg/sendmmsg. */
  batch: number
  /** Bytes per slot: a larger datagram arrives with length -1 (truncated, to be dropped). */
  slot: number
  /**
   * A batch of `count` datagrams is in the receive area; a negative count is -errno of a socket
   * error (from a receive, or from a send that failed: then it runs inside `flush`/`sendOne`).
   */
  onBatch: (count: number) => void
}

/** The errno of a refused datagram (an ICMP port unreachable): `onBatch` gets its negative. */
export const ECONNREFUSED = constants.errno.ECONNREFUSED

export class BatchUdpSocket {
  readonly family: 4 | 6
  readonly port: number
  /** The receive buffer the kernel granted (SO_RCVBUF read back). */
  readonly receiveBufferSize: number
  readonly batch: number
  readonly slot: number
  readonly rxBuf: Buffer
  /** Per datagram: [length (-1 truncated), peer port]. */
  readonly rxInfo: Int32Array
  /** Per datagram: 16 bytes, the peer address (IPv4 in the first 4). */
  readonly rxAddr: Uint8Array
  readonly txBuf: Buffer
  readonly txInfo: Int32Array
  readonly txAddr: Uint8Array
  /** Send slots filled since the last flush. */
  txCount = 0
  /** Datagrams the kernel did not take (send queue full). */
  sendDrops = 0
  /** sendmmsg calls made by flush (how well sends are batched). */
  sendBatches = 0
  private readonly addon: UdpAddon
  private readonly handle: AddonHandle
  private readonly onBatch: (count: number) => void
  private readonly id = nextSocketId++
  private closed = false
  /** In the dirty list (a flush is scheduled). */
  queued = false

  constructor(addon: UdpAddon, o: BatchUdpSocketOptions) {
    this.addon = addon
    this.family = o.family
    this.batch = o.batch
    this.slot = o.slot
    this.rxBuf = Buffer.from(new ArrayBuffer(o.batch * o.slot))
    this.rxInfo = new Int32Array(o.batch * 2)
    this.rxAddr = new Uint8Array(o.batch * 16)
    this.txBuf = Buffer.from(new ArrayBuffer(o.batch * o.slot))
    this.txInfo = new Int32Array(o.batch * 2)
    this.txAddr = new Uint8Array(o.batch * 16)
    const r = addon.open({
      family: o.family,
      host: o.host,
      port: o.port,
      reusePort: o.reusePort ?? false,
      steerSockets: o.steerSockets ?? 0,
      steerClientSubnet: o.steerClientSubnet ?? false,
      receiveBuffer: o.receiveBuffer ?? 0,
      connectHost: o.connect?.host ?? null,
      connectPort: o.connect?.port ?? 0,
      batch: o.batch,
      slot: o.slot,
      rxBuf: this.rxBuf,
      rxInfo: this.rxInfo,
      rxAddr: this.rxAddr,
      txBuf: this.txBuf,
      txInfo: this.txInfo,
      txAddr: this.txAddr,
      id: this.id,
      // A socket error, reported at once (a batch comes once per turn, through deliverTurn).
      onBatch: (count: number): void => {
        batchDepth++
        try {
          o.onBatch(count)
        } finally {
          // The answers this batch queued (on any socket) leave now, in one sendmmsg per socket.
          if (--batchDepth === 0 && flushScheduled) flushDirty()
        }
      }
    })
    this.handle = r.handle
    this.port = r.port
    this.receiveBufferSize = r.receiveBufferSize
    this.onBatch = o.onBatch
    openSockets.set(this.id, this)
  }

  /** This turn's batch of `count` datagrams, in the receive area (deliverTurn). */
  deliver(count: number): void {
    if (!this.closed) this.onBatch(count)
  }

  /** The next free send slot's byte offset in txBuf, flushing first when every slot is taken. */
  nextSlot(): number {
    if (this.txCount >= this.batch) this.flush()
    return this.txCount * this.slot
  }

  /**
   * Marks the slot `nextSlot()` gave as filled: `len` bytes to `port` (address already in txAddr).
   * The filled slots leave together when the turn's batch call that filled them returns (any
   * socket's batch: an upstream answer fills the front's slots), so one sendmmsg carries the answers
   * of every batch of the turn. Outside a batch callback (a timer's SERVFAIL, a TCP, DoT or DoH client's query) they
   * leave once per event-loop turn, after its I/O (setImmediate): HTTP/2 delivers each stream's query
   * in its own callback, and a microtask per callback made one system call per query. setImmediate
   * allocates, so the packet path does without it.
   */
  commit(len: number, port: number): void {
    const i = this.txCount++
    this.txInfo[2 * i] = len
    this.txInfo[2 * i + 1] = port
    if (!this.queued) {
      this.queued = true
      dirty.push(this)
      if (!flushScheduled) {
        flushScheduled = true
        if (batchDepth === 0) setImmediate(flushDirty)
      }
    }
  }

  /** Sends the filled slots in one sendmmsg. */
  flush(): void {
    const n = this.txCount
    if (n === 0) return
    this.txCount = 0
    if (this.closed) return
    this.sendBatches++
    const sent = this.addon.send(this.handle, n)
    if (sent < n) {
      this.sendDrops += n - sent
      this.reportSendError()
    }
  }

  // A send can consume the socket's pending error (an ICMP refusal) before a receive sees it: hand
  // it to the batch callback as a receive error would be.
  private reportSendError(): void {
    const e = this.addon.takeSendError(this.handle)
    if (e !== 0) this.onBatch(-e)
  }

  /** Sends one datagram at once (one larger than a slot); `addr` is ignored on a connected socket. */
  sendOne(buf: Buffer, len: number, addr: Uint8Array | null, port: number): void {
    if (this.closed) return
    if (this.addon.sendOne(this.handle, buf, len, addr, port) !== 1) {
      this.sendDrops++
      this.reportSendError()
    }
  }

  close(): void {
    if (this.closed) return
    this.flush() // what this turn queued still leaves
    this.closed = true
    openSockets.delete(this.id)
    this.addon.close(this.handle)
  }
}

/** The open sockets by the number the addon names them by in a turn's pairs. */
const openSockets = new Map<number, BatchUdpSocket>()
let nextSocketId = 1
/** A turn's [socket id, count] pairs, written by the addon before it calls deliverTurn. */
const turnArea = new Int32Array(2 * 256)

/**
 * Once per event-loop turn, after the poll phase: the batches every socket read in it. The answers
 * they queue (on any socket) leave after the last, in one sendmmsg per socket.
 */
function deliverTurn(pairs: number): void {
  batchDepth++
  try {
    for (let i = 0; i < pairs; i++) openSockets.get(turnArea[2 * i]!)?.deliver(turnArea[2 * i + 1]!)
  } finally {
    if (--batchDepth === 0 && flushScheduled) flushDirty()
  }
}

const dirty: BatchUdpSocket[] = []
let flushScheduled = false
/** Above 0 while a batch callback runs: its end flushes the dirty sockets. */
let batchDepth = 0

function flushDirty(): void {
  flushScheduled = false
  // By index: a flush's send error runs a callback that may queue more (a socket flushed already
  // is queued again and comes later in the list).
  for (let i = 0; i < dirty.length; i++) {
    const s = dirty[i]! // i < length
    s.queued = false
    s.flush()
  }
  dirty.length = 0
}

/**
 * Opens a batched socket; throws the addon's error with `code` (e.g. EADDRINUSE), and for a failed bind
 * `address` and `port` as node's own bind errors carry them, so a caller can name the address it could not bind.
 */
export function openBatchUdpSocket(o: BatchUdpSocketOptions): BatchUdpSocket {
  const addon = loadUdpAddon()
  if (addon instanceof Error) throw addon
  try {
    return new BatchUdpSocket(addon, o)
  } catch (err) {
    // The addon's message is `<call>: <strerror>`; only bind's failure is about the local address.
    if (err instanceof Error && err.message.startsWith('bind:')) Object.assign(err, { address: o.host, port: o.port })
    throw err
  }
}
