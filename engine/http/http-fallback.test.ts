import { test, type TestContext } from 'node:test'
import { needsUws } from '../testing/uws.js'
import { createHttpServer, type UwsModule } from './index.js'

test('auto mode serves with node:http and warns once when uWS does not load', async (t: TestContext) => {
  const warnings: string[] = []
  const logger = {
    warn: (m: string) => {
      warnings.push(m)
    }
  }
  let attempts = 0
  const loadUws = (): UwsModule => {
    attempts++
    throw new Error('simulated: addon missing')
  }
  const a = createHttpServer({ loadUws, logger })
  const b = createHttpServer({ loadUws, logger, impl: 'auto' })
  t.assert.strictEqual(a.impl, 'node')
  t.assert.strictEqual(b.impl, 'node')
  t.assert.strictEqual(attempts, 1)
  t.assert.strictEqual(warnings.length, 1)
  t.assert.match(warnings[0]!, /simulated: addon missing/)
  a.route('GET', '/', (_req, res) => {
    res.send('node')
  })
  const { port } = await a.listen('127.0.0.1', 0)
  t.after(() => a.close())
  t.assert.strictEqual(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'node')
})

test('explicit uws mode falls back to node:http with one warning, as auto does, when uWS does not load', async (t: TestContext) => {
  const warnings: string[] = []
  const logger = {
    warn: (m: string) => {
      warnings.push(m)
    }
  }
  const loadUws = (): UwsModule => {
    throw new Error('simulated: no build for this Node')
  }
  const a = createHttpServer({ impl: 'uws', loadUws, logger })
  const b = createHttpServer({ impl: 'uws', loadUws, logger })
  t.assert.strictEqual(a.impl, 'node')
  t.assert.strictEqual(b.impl, 'node')
  t.assert.strictEqual(warnings.length, 1)
  t.assert.match(warnings[0]!, /simulated: no build for this Node.*node:http although common\.http-server is uws/)
  a.route('GET', '/', (_req, res) => {
    res.send('node')
  })
  const { port } = await a.listen('127.0.0.1', 0)
  t.after(() => a.close())
  t.assert.strictEqual(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'node')
})

test('auto mode picks uWS when the addon loads, without warning', needsUws(), (t: TestContext) => {
  const warnings: string[] = []
  const server = createHttpServer({
    logger: {
      warn: (m) => {
        warnings.push(m)
      }
    }
  })
  t.assert.strictEqual(server.impl, 'uws')
  t.assert.strictEqual(warnings.length, 0)
})
