/**
 * `filterd api-client`: credentials of the management API's clients (docs/api.md, Authorization).
 *
 *   filterd api-client add    --config FILE [--id ID] [--label TEXT]   prints the id, the secret and the Bearer token (once)
 *   filterd api-client list   --config FILE                            id, created, label (never secrets or hashes)
 *   filterd api-client remove --config FILE ID                         the client's credentials stop working
 *
 * The secret is stored as an scrypt digest (engine/auth), in the store's `clients` table under
 * `api:<id>`, apart from the categorization API's clients (`filterd client`). Works while the api
 * role runs: a change is enforced on its next request (every write bumps the store generation,
 * which drops the role's cache of verified credentials). With a shared Redis store
 * (`common.redis-ip`) the change is written there, like an API write, so every host sees it; that
 * needs this host's sync role running.
 */
import { parseArgs } from 'node:util'
import { type Config } from '../engine/config/index.js'
import { loadConfigFile } from '../engine/features.js'
import { isEngineError } from '../engine/errors.js'
import { isHttpError } from '../engine/http/index.js'
import { silentLogger } from '../engine/log/index.js'
import { openConfiguredStore, type Store } from '../engine/store/index.js'
import { bearerToken, clientRecord, isValidClientId, newClientId, newSecret } from '../engine/auth/index.js'
import { linkSharedStore, type SharedStoreLink } from '../api/shared-store.js'

const USAGE = `usage: filterd api-client add    --config FILE [--id ID] [--label TEXT]
       filterd api-client list   --config FILE
       filterd api-client remove --config FILE ID

Credentials of the management API's clients. add prints client_id, client_secret and
bearer_token once: send "Authorization: Bearer <bearer_token>", or HTTP Basic with
client_id as the user name and client_secret as the password (docs/api.md, Authorization).`

const SUBCOMMANDS = ['add', 'list', 'remove']

/** The options, parsed one way (node:util parseArgs, strict), or the message naming what is wrong. */
function parseCommandLine(argv: string[]):
  | {
      values: {
        config?: string | undefined
        id?: string | undefined
        label?: string | undefined
        help?: boolean | undefined
      }
      positionals: string[]
    }
  | string {
  try {
    return parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        config: { type: 'string', short: 'c' },
        id: { type: 'string' },
        label: { type: 'string' },
        help: { type: 'boolean', short: 'h' }
      }
    })
  } catch (err) {
    return (err as Error).message
  }
}

export async function run(argv: string[]): Promise<number> {
  const out = (s: string): void => {
    process.stdout.write(s + '\n')
  }
  const fail = (s: string, code = 2): number => {
    process.stderr.write(`filterd api-client: ${s}\n`)
    return code
  }
  const [command, ...rest] = argv
  if (command === undefined || command === '--help' || command === '-h') {
    out(USAGE)
    return command === undefined ? 2 : 0
  }
  const parsed = parseCommandLine(rest)
  if (typeof parsed === 'string') return fail(`${parsed}\n${USAGE}`)
  const { values, positionals } = parsed
  if (values.help === true) {
    out(USAGE)
    return 0
  }
  if (!SUBCOMMANDS.includes(command)) return fail(`unknown subcommand "${command}"\n${USAGE}`)
  if (values.config === undefined) return fail(`--config FILE is required\n${USAGE}`)
  const needsId = command === 'remove'
  if (needsId && positionals.length !== 1) return fail(`${command} takes exactly one client id\n${USAGE}`)
  if (!needsId && positionals.length !== 0) return fail(`unexpected argument ${positionals[0]!}\n${USAGE}`)
  if (command !== 'add' && (values.id !== undefined || values.label !== undefined))
    return fail(`--id and --label are options of add\n${USAGE}`)

  let config: Readonly<Config>
  let store: Store
  try {
    config = loadConfigFile(values.config)
    store = openConfiguredStore(config)
  } catch (err) {
    return fail(isEngineError(err) ? err.message : String(err), 1)
  }
  let shared: SharedStoreLink | undefined
  try {
    switch (command) {
      case 'add': {
        const id = values.id ?? newClientId()
        if (!isValidClientId(id)) return fail(`client id "${id}" must be 1-64 characters of A-Z a-z 0-9 . _ -`)
        const secret = newSecret()
        const record = await clientRecord(id, secret, new Date().toISOString(), values.label)
        shared = await linkSharedStore(config, store, silentLogger())
        const added = await store.write((w) => {
          if (w.store.getApiClient(id) !== undefined) return false
          w.putApiClient(record)
          return true
        })
        if (!added) return fail(`API client ${id} already exists (remove it first for a new secret)`, 1)
        out(`client_id: ${id}`)
        out(`client_secret: ${secret}`)
        out(`bearer_token: ${bearerToken(id, secret)}`)
        process.stderr.write('The secret is shown only now and is stored hashed: keep it safe.\n')
        return 0
      }
      case 'remove': {
        const id = positionals[0]!
        shared = await linkSharedStore(config, store, silentLogger())
        const removed = await store.write((w) => w.deleteApiClient(id))
        if (!removed) return fail(`no API client ${id}`, 1)
        out(`removed ${id}`)
        return 0
      }
      default: {
        out(['client_id', 'created', 'label'].join('\t'))
        for (const c of store.apiClients()) out([c.id, c.created, c.label ?? ''].join('\t'))
        return 0
      }
    }
  } catch (err) {
    // A shared store that cannot take the write answers like the API would (API_STORE_UNAVAILABLE).
    if (isHttpError(err) || isEngineError(err)) return fail(err.message, 1)
    throw err
  } finally {
    await shared?.close()
    await store.close()
  }
}
