/** Port helpers for tests (not a test file). */
import { createSocket } from 'node:dgram'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'

/** Ports this process has handed out: never twice, even after the test that had one released it. */
const handedOut = new Set<number>()

/**
 * The lowest port of the kernel's ephemeral range. Every socket that binds port 0 or connects
 * without binding (an upstream UDP socket, an HTTP client) takes its port from that range, so a
 * port picked there and released can be taken by any other process of the suite before the daemon
 * binds it (it happened in CI: a UDP bind failed on a port the TCP check had found free).
 */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    return Number.isInteger(low) && low > 0 ? low : 32768
  } catch {
    return 32768
  }
}

/** Whether TCP and UDP both bind `port` on 127.0.0.1 right now (a DNS daemon needs both). */
async function bindsBoth(port: number): Promise<boolean> {
  const server = createServer()
  const tcp = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => resolve(true))
  })
  if (!tcp) return false
  const udp = createSocket('udp4')
  const ok = await new Promise<boolean>((resolve) => {
    udp.once('error', () => resolve(false))
    udp.bind(port, '127.0.0.1', () => resolve(true))
  })
  try {
    udp.close()
  } catch {} // a socket that failed to bind may be closed already
  await new Promise((resolve) => server.close(resolve))
  return ok
}

/** A port by the kernel's choice (when no range below the ephemeral one is left to pick from). */
async function kernelPort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * A port free for both TCP and UDP right now, for a config that must name its port before the
 * daemon starts. Picked at random below the ephemeral range, where no outgoing socket of another
 * process lands; another test process picking the same one in the same instant is the only race
 * left (about one in ten thousand per pair of picks).
 */
export async function releasedPort(): Promise<number> {
  const high = ephemeralLow() - 1
  const low = Math.max(10_000, high - 12_000)
  if (high - low < 1000) return await kernelPort()
  for (let tries = 0; tries < 200; tries++) {
    const port = low + Math.floor(Math.random() * (high - low + 1))
    if (handedOut.has(port)) continue
    if (await bindsBoth(port)) {
      handedOut.add(port)
      return port
    }
  }
  return await kernelPort()
}
