/**
 * The management API suite with Redis as the shared store: every write of the suite goes
 * through the Lua commit and comes back through the follower into the same LMDB store, so the API's
 * behaviour with `common.redis-ip` set is the single host's, request for request.
 */
import { after, before } from 'node:test'
import { silentLogger } from '../engine/log/index.js'
import { linkStore, testSettings } from '../engine/testing/replica.js'
import { startRedis, type TestRedis } from '../engine/testing/redis.js'
import { runApiSuite } from './api.case.js'

let redis: TestRedis | undefined
before(async () => {
  redis = await startRedis()
})
after(async () => {
  await redis?.stop()
})

runApiSuite('node', {
  name: 'writes through a shared Redis',
  link: async (s) => await linkStore(s.store, testSettings(redis!.host, redis!.port), silentLogger())
})
