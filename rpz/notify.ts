/**
 * NOTIFY (RFC 1996): tells each configured secondary that a zone changed, from one UDP socket,
 * retried until the secondary answers or the tries run out (3.6: a few retries at growing
 * intervals). A secondary then asks for the SOA and transfers (IXFR) what changed.
 */
import { createSocket, type Socket } from 'node:dgram'
import { randomInt } from 'node:crypto'
import { buildQuery, CLASS_IN, OPCODE_NOTIFY, parseMessage, TYPE_SOA } from '../engine/rpz-zones/index.js'
import type { RpzZone } from '../engine/rpz-zones/index.js'

const TRIES = 5
const FIRST_WAIT_MS = 1000

export interface NotifyTarget {
  host: string
  port: number
}

export class Notifier {
  private readonly socket4: Socket
  private readonly socket6: Socket
  private readonly pending = new Map<number, () => void>()
  private readonly timers = new Set<NodeJS.Timeout>()
  /** NOTIFYs a secondary acknowledged, and those it never answered. */
  acknowledged = 0
  unanswered = 0

  constructor() {
    this.socket4 = createSocket('udp4')
    this.socket6 = createSocket('udp6')
    for (const s of [this.socket4, this.socket6]) {
      s.on('message', (raw) => this.onReply(raw))
      s.on('error', () => {})
    }
  }

  private onReply(raw: Buffer): void {
    try {
      const m = parseMessage(raw)
      if (!m.header.qr || m.header.opcode !== OPCODE_NOTIFY) return
      this.pending.get(m.header.id)?.()
    } catch {
      // not an answer to us
    }
  }

  /** Sends a NOTIFY for `zone` at its current serial to every target, retrying in the background. */
  notify(zone: RpzZone, targets: readonly NotifyTarget[]): void {
    for (const target of targets) this.send(zone, target)
  }

  private send(zone: RpzZone, target: NotifyTarget): void {
    let id = randomInt(0, 0x10000)
    while (this.pending.has(id)) id = (id + 1) & 0xffff
    const msg = buildQuery(
      id,
      { name: zone.origin, type: TYPE_SOA, class: CLASS_IN },
      { opcode: OPCODE_NOTIFY, aa: true, answer: [zone.soaRecord()] }
    )
    const socket = target.host.includes(':') ? this.socket6 : this.socket4
    let tries = 0
    const attempt = (): void => {
      if (tries++ >= TRIES) {
        this.pending.delete(id)
        this.unanswered++
        return
      }
      socket.send(msg, target.port, target.host)
      const timer = setTimeout(
        () => {
          this.timers.delete(timer)
          attempt()
        },
        FIRST_WAIT_MS * 2 ** (tries - 1)
      )
      this.timers.add(timer)
      this.pending.set(id, () => {
        clearTimeout(timer)
        this.timers.delete(timer)
        this.pending.delete(id)
        this.acknowledged++
      })
    }
    attempt()
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t)
    this.socket4.close()
    this.socket6.close()
  }
}
