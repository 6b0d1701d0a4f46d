/** Port helpers for tests (not a test file). */
import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'

/**
 * A TCP port nothing listens on right now: bound by the kernel's choice, then released. For a
 * config that must name its port before the daemon starts (another process may take it meanwhile,
 * which loopback tests on one machine accept).
 */
export async function releasedPort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}
