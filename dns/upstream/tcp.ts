/*
 * Tries over TCP: one short connection per try, framed as RFC 7766 says. TCP is the rare path: a
 * TCP client's query whose UDP answer came back truncated (see `Forwarder.forwardTcp`).
 */
import { connect } from 'node:net'
import { FrameReader, frame, readId, setId } from '../../engine/wire/index.js'
import type { PendingQuery } from './pending.js'
import type { Resolver } from './resolver.js'

export interface TcpTriesOptions {
  /** A fresh random ID. */
  nextId: () => number
  /** The answer's question is the one `p` asked (RFC 5452 §9.1). */
  matches: (p: PendingQuery, response: Buffer) => boolean
  /** An answer from `r` to `p`'s try in flight (the connection is closed already). */
  onAnswer: (p: PendingQuery, r: Resolver, response: Buffer) => void
  /** The connection to `r` was refused, reset or closed before an answer. */
  onFailure: (p: PendingQuery, r: Resolver, why: string) => void
}

export class TcpTries {
  /** The TCP tries in flight by key (< 0, apart from UDP keys). */
  private readonly byKey = new Map<number, PendingQuery>()
  private lastKey = 0
  private readonly o: TcpTriesOptions

  constructor(o: TcpTriesOptions) {
    this.o = o
  }

  find(key: number): PendingQuery | undefined {
    return this.byKey.get(key)
  }

  /** Sends `p`'s try (counted in `p.tries` already) to `r` over a new connection; sets `p.key` for the try queue. */
  send(p: PendingQuery, r: Resolver): void {
    setId(p.query, this.o.nextId())
    const attempt = p.tries
    if (--this.lastKey < -0x3fffffff) this.lastKey = -1
    p.key = this.lastKey
    this.byKey.set(p.key, p)
    const sock = connect({ host: r.host, port: r.port, family: r.family })
    p.tcp = sock
    const reader = new FrameReader()
    sock.setNoDelay(true)
    sock.on('connect', () => sock.write(frame(p.query)))
    sock.on('data', (chunk: Buffer) => {
      reader.push(chunk)
      for (let m = reader.read(); m !== null; m = reader.read()) {
        if (p.done || p.tries !== attempt || readId(m) !== readId(p.query) || !this.o.matches(p, m)) continue
        this.byKey.delete(p.key)
        sock.destroy()
        this.o.onAnswer(p, r, m)
        return
      }
    })
    const fail = (err?: NodeJS.ErrnoException): void => {
      if (p.done || p.tries !== attempt) return
      this.byKey.delete(p.key)
      sock.destroy()
      this.o.onFailure(p, r, `TCP connection failed (${err?.code ?? 'closed before an answer'})`)
    }
    sock.on('error', fail)
    sock.on('close', () => fail())
  }

  /** Ends the try in flight of `p` (expired): the connection is closed, no callback. */
  abandon(p: PendingQuery): void {
    this.byKey.delete(p.key)
    const sock = p.tcp
    p.tcp = null
    sock?.destroy()
  }

  /** Every TCP try in flight, taken out of the table. */
  drain(): PendingQuery[] {
    const all = [...this.byKey.values()]
    this.byKey.clear()
    return all
  }
}
