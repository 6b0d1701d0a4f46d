/**
 * `filterd client`: credentials and usage of the categorization API's registered clients.
 *
 *   filterd client add    --config FILE [--id ID] [--label TEXT]   prints client_id and client_secret (once)
 *   filterd client list   --config FILE                            id, created, label (never secrets)
 *   filterd client remove --config FILE ID
 *   filterd client rotate --config FILE ID                         new secret (printed once); the old one stops working
 *   filterd client usage  --config FILE [--client ID] [--from YYYY-MM-DD] [--to YYYY-MM-DD]
 *
 * Works on the store at `common.db` while the catapi role runs: a change is seen by the role on its
 * next request (every write bumps the store generation, which drops the role's verification cache).
 * With a shared Redis store (`common.redis-ip`) add, rotate and remove write there, like an API
 * write, so every host's replica (and so every host's catapi role) has the change, and the next
 * bootstrap of this host keeps it; that needs this host's sync role running. list and usage read
 * the local replica (usage counts are per host).
 */
import { parseArgs } from 'node:util'
import { type Config } from '../engine/config/index.js'
import { loadConfigFile } from '../engine/features.js'
import { isEngineError } from '../engine/errors.js'
import { isHttpError } from '../engine/http/index.js'
import { silentLogger } from '../engine/log/index.js'
import { openConfiguredStore, type Store } from '../engine/store/index.js'
import { clientRecord, isValidClientId, newClientId, newSecret } from '../engine/auth/index.js'
import { readUsage } from '../catapi/usage.js'
import { linkSharedStore, type SharedStoreLink } from '../api/shared-store.js'

const USAGE = `usage: filterd client add    --config FILE [--id ID] [--label TEXT]
       filterd client list   --config FILE
       filterd client remove --config FILE ID
       filterd client rotate --config FILE ID
       filterd client usage  --config FILE [--client ID] [--from YYYY-MM-DD] [--to YYYY-MM-DD]`

interface Parsed {
  readonly options: Map<string, string>
  readonly positional: string[]
}

/** The options, parsed one way (node:util parseArgs, strict), kept as `--name` → value. */
function parseCommandLine(argv: readonly string[]): Parsed | string {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        config: { type: 'string', short: 'c' },
        id: { type: 'string' },
        label: { type: 'string' },
        client: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        help: { type: 'boolean', short: 'h' }
      }
    })
    const options = new Map<string, string>()
    for (const [k, v] of Object.entries(values)) options.set(`--${k}`, String(v))
    return { options, positional: positionals }
  } catch (err) {
    return (err as Error).message
  }
}

const DATE = /^\d{4}-\d{2}-\d{2}$/

const out = (s: string): void => {
  process.stdout.write(s + '\n')
}
const fail = (s: string, code = 2): number => {
  process.stderr.write(`filterd client: ${s}\n`)
  return code
}

export async function run(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === undefined || command === '--help' || command === '-h') {
    out(USAGE)
    return command === undefined ? 2 : 0
  }
  const parsed = parseCommandLine(rest)
  if (typeof parsed === 'string') return fail(`${parsed}\n${USAGE}`)
  if (parsed.options.has('--help')) {
    out(USAGE)
    return 0
  }
  const file = parsed.options.get('--config')
  if (file === undefined) return fail(`--config FILE is required\n${USAGE}`)
  if (!['add', 'list', 'remove', 'rotate', 'usage'].includes(command))
    return fail(`unknown subcommand "${command}"\n${USAGE}`)
  const needsId = command === 'remove' || command === 'rotate'
  if (needsId && parsed.positional.length !== 1) return fail(`${command} takes exactly one client id\n${USAGE}`)
  if (!needsId && parsed.positional.length !== 0) return fail(`unexpected argument ${parsed.positional[0]!}\n${USAGE}`)
  for (const key of ['--from', '--to']) {
    const v = parsed.options.get(key)
    if (v !== undefined && !DATE.test(v)) return fail(`${key} must be YYYY-MM-DD (got "${v}")`)
  }

  let config: Readonly<Config>
  let store: Store
  try {
    config = loadConfigFile(file)
    store = openConfiguredStore(config)
  } catch (err) {
    return fail(isEngineError(err) ? err.message : String(err), 1)
  }
  let shared: SharedStoreLink | undefined
  try {
    // The changing subcommands write through the shared store when Redis is configured (no-op without).
    if (command === 'add' || command === 'rotate' || command === 'remove')
      shared = await linkSharedStore(config, store, silentLogger())
    return await subcommand(command, parsed, store)
  } catch (err) {
    // A shared store that cannot take the write answers like the API would (API_STORE_UNAVAILABLE).
    if (isHttpError(err) || isEngineError(err)) return fail(err.message, 1)
    throw err
  } finally {
    await shared?.close()
    await store.close()
  }
}

/** Runs a checked subcommand on the open store. */
async function subcommand(command: string, parsed: Parsed, store: Store): Promise<number> {
  switch (command) {
    case 'add': {
      const id = parsed.options.get('--id') ?? newClientId()
      if (!isValidClientId(id)) return fail(`client id "${id}" must be 1-64 characters of A-Z a-z 0-9 . _ -`)
      const secret = newSecret()
      const record = await clientRecord(id, secret, new Date().toISOString(), parsed.options.get('--label'))
      const added = await store.write((w) => {
        if (w.store.getClient(id) !== undefined) return false
        w.putClient(record)
        return true
      })
      if (!added) return fail(`client ${id} already exists (use rotate for a new secret)`, 1)
      out(`client_id: ${id}`)
      out(`client_secret: ${secret}`)
      process.stderr.write('The secret is shown only now and is stored hashed: keep it safe.\n')
      return 0
    }
    case 'rotate': {
      const id = parsed.positional[0]!
      const old = store.getClient(id)
      if (old === undefined) return fail(`no client ${id}`, 1)
      const secret = newSecret()
      const record = await clientRecord(id, secret, old.created, old.label)
      const ok = await store.write((w) => {
        if (w.store.getClient(id) === undefined) return false
        w.putClient(record)
        return true
      })
      if (!ok) return fail(`no client ${id}`, 1)
      out(`client_id: ${id}`)
      out(`client_secret: ${secret}`)
      process.stderr.write('The old secret no longer works. The new one is shown only now.\n')
      return 0
    }
    case 'remove': {
      const id = parsed.positional[0]!
      const removed = await store.write((w) => w.deleteClient(id))
      if (!removed) return fail(`no client ${id}`, 1)
      out(`removed ${id}`)
      return 0
    }
    case 'list': {
      const rows = [...store.clients()]
      out(['client_id', 'created', 'label'].join('\t'))
      for (const c of rows) out([c.id, c.created, c.label ?? ''].join('\t'))
      return 0
    }
    default: {
      const filter: { client?: string; from?: string; to?: string } = {}
      for (const [opt, key] of [
        ['--client', 'client'],
        ['--from', 'from'],
        ['--to', 'to']
      ] as const) {
        const v = parsed.options.get(opt)
        if (v !== undefined) filter[key] = v
      }
      const rows = readUsage(store, filter)
      out(['client_id', 'day', 'requests'].join('\t'))
      let total = 0
      for (const r of rows) {
        out([r.client, r.day, String(r.requests)].join('\t'))
        total += r.requests
      }
      out(['total', '', String(total)].join('\t'))
      return 0
    }
  }
}
