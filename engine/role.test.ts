import { test, type TestContext } from 'node:test'
import { createServer, type Server } from 'node:net'
import { RoleStack, startWithStack } from './role.js'

/** A TCP listener on 127.0.0.1 (port 0: a free one), closed by `close()` as a role's listeners are. */
async function listener(port = 0): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve())
  })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  return {
    port: address.port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

test('a start that fails halfway undoes what it had opened, and the error goes on', async (t: TestContext) => {
  let port = 0
  const started = startWithStack(async (stack) => {
    const first = stack.own(await listener())
    port = first.port
    // The second listener wants the first one's port: EADDRINUSE, as a role whose address is taken.
    stack.own(await listener(port))
    return {}
  })
  await t.assert.rejects(started, { code: 'EADDRINUSE' })
  // The first listener was closed: its port can be bound again.
  const again = await listener(port)
  await again.close()
})

test('close() undoes last opened first, and runs every step though one fails', async (t: TestContext) => {
  const done: string[] = []
  const role = await startWithStack(async (stack) => {
    stack.defer(() => done.push('store'))
    stack.defer(() => {
      throw new Error('timer would not stop')
    })
    stack.own({ close: async () => done.push('listener') })
    stack.endpoints.push('mine http 127.0.0.1:1')
    return { health: () => ({ ok: true }) as never }
  })
  t.assert.deepStrictEqual(role.endpoints, ['mine http 127.0.0.1:1'])
  await t.assert.rejects(role.close(), /timer would not stop/)
  t.assert.deepStrictEqual(done, ['listener', 'store'])
})

test('a stack closed twice runs its steps once', async (t: TestContext) => {
  const stack = new RoleStack()
  let closed = 0
  stack.defer(() => closed++)
  await stack.close()
  await stack.close()
  t.assert.strictEqual(closed, 1)
})
