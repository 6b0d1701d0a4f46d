/**
 * `filterd redis-seed --config FILE [--force | --adopt]`: re-creates the shared Redis store from this
 * host's replica, after Redis lost its data (docs/operations-redis.md). The new store gets a `reseed:`
 * epoch, which tells every other host to replace its replica with it (a bootstrap); this host's
 * replica becomes its first state. Refused while Redis holds a store, unless `--force` (then the
 * store in Redis is replaced: writes made there since this replica last applied one are lost).
 *
 * `--adopt` is the other way out of `redis-behind` (Redis went back and lost its latest writes): it
 * keeps what Redis holds and gives it a new `reseed:` epoch, so every host, this one included,
 * bootstraps from it and drops the writes Redis lost.
 *
 * `--detach` makes this host's store its own again: it removes the mark that the store follows a
 * shared store (written by the sync role, engine/store/replica.ts) with its replica position, so
 * roles and commands without `common.redis-ip` may write it. Run with the host's roles stopped:
 * to turn Redis off for this host, or before a repair bootstrap of a replica that diverged (the
 * sync role then takes Redis's state in place). It needs no Redis and works with either config.
 * Exit codes: 0 done, 1 failed or refused, 2 usage.
 */
import { loadConfigFile } from '../engine/features.js'
import {
  adoptSharedStore,
  seedSharedStore,
  connectSharedStore,
  sharedStoreSettings,
  whenReady
} from '../engine/replica/index.js'
import type { Config } from '../engine/config/index.js'
import { openConfiguredStore } from '../engine/store/index.js'
import { commandArgs } from './cli/command-args.js'

const USAGE = 'usage: filterd redis-seed --config FILE [--force | --adopt | --detach]\n'

/** `--detach`: the store stops following a shared store (see the file comment). */
async function detach(config: Readonly<Config>): Promise<number> {
  const store = openConfiguredStore(config)
  try {
    const done = await store.detachReplica()
    process.stdout.write(
      done
        ? `${config.common.db} no longer follows a shared store: roles and commands without common.redis-ip write it; with common.redis-ip, the sync role takes Redis's state into it (or creates the store from it when Redis holds none)\n`
        : `${config.common.db} follows no shared store; nothing to do\n`
    )
    return 0
  } finally {
    await store.close()
  }
}

export async function run(argv: string[]): Promise<number> {
  const args = commandArgs('redis-seed', USAGE, argv, {
    force: { type: 'boolean' },
    adopt: { type: 'boolean' },
    detach: { type: 'boolean' }
  })
  if (typeof args === 'number') return args
  const { values, config: file } = args
  const config = loadConfigFile(file)
  if (values.detach === true) {
    if (values.force === true || values.adopt === true) {
      process.stderr.write(`filterd redis-seed: --detach takes neither --force nor --adopt\n${USAGE}`)
      return 2
    }
    return await detach(config)
  }
  const settings = sharedStoreSettings(config)
  if (settings === undefined) {
    process.stderr.write('filterd redis-seed: neither common.redis-ip nor common.redis-sentinels is set\n')
    return 1
  }
  const store = openConfiguredStore(config)
  const redis = connectSharedStore(settings, { commandTimeout: 30_000 })
  try {
    await whenReady(redis, 5000)
    const existing = await redis.get(settings.keys.epoch)
    if (values.adopt === true) {
      if (values.force === true) {
        process.stderr.write(`filterd redis-seed: --adopt and --force exclude each other\n${USAGE}`)
        return 2
      }
      if (existing === null) {
        process.stderr.write(
          `filterd redis-seed: Redis at ${settings.where} holds no store to adopt; seed it from the best replica (without --adopt)\n`
        )
        return 1
      }
      const epoch = await adoptSharedStore(redis, settings)
      process.stdout.write(
        `every host adopts the store Redis at ${settings.where} holds (seq ${(await redis.get(settings.keys.seq)) ?? 0}); epoch ${epoch}\n`
      )
      return 0
    }
    if (existing !== null && values.force !== true) {
      process.stderr.write(
        `filterd redis-seed: Redis at ${settings.where} holds a store (${existing}); add --force to replace it with this host's replica\n`
      )
      return 1
    }
    if (store.replicaPosition() === undefined && store.userCount() === 0) {
      process.stderr.write("filterd redis-seed: this host's store is empty; seed from a host that holds the policy\n")
      return 1
    }
    // Marked first: a writer without Redis is refused from here on, so nothing it writes misses the seed.
    await store.markFollower(settings.where)
    const epoch = await seedSharedStore(redis, settings, store, 'reseed')
    await store.completeReplica({ epoch, id: '0-0', seq: 0 })
    process.stdout.write(
      `seeded ${settings.where} from ${config.common.db} (${store.userCount()} users); epoch ${epoch}\n`
    )
    return 0
  } catch (err) {
    process.stderr.write(`filterd redis-seed: ${(err as Error).message}\n`)
    return 1
  } finally {
    redis.disconnect()
    await store.close()
  }
}
