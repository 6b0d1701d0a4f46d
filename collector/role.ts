/**
 * The `collector` role, the vendor side (docs/collector.md):
 * - `POST /report` (also `/usage` and `/`): a local service's counters as JSON
 *   `{key, counter_cat, counter_unknown_cat}`, or an ISP filtering server's usage form
 *   (`application/x-www-form-urlencoded`, `key`, `count`, answered with the body `ok`);
 *   stored per key per day in `collector.db` (usage-db.ts);
 * - `GET /db/manifest` and `GET /db/snapshots/<version>.snap.gz`: the update channel
 *   (snapshot.ts), the key in the `X-Filterd-Key` header or the `key` query parameter.
 * An unknown key gets 403 everywhere.
 *
 * This file wires routes.ts (the routes) and publish.ts (the snapshots) to the store.
 *
 * Publishing: at start, and again on SIGHUP, the collector compiles the config's data files
 * (`datafiles.path` + `datafiles.file`, as `build-db` does) into category tables in its own
 * environment and publishes them as the next snapshot, unless the data files are byte-for-byte
 * the ones the current snapshot was built from.
 */
import { formatHostPort, parseHostPort } from '../engine/config/index.js'
import { startWithStack, type RoleContext, type RunningRole } from '../engine/role.js'
import { Store } from '../engine/store/index.js'
import { publishFromDatafiles } from './publish.js'
import { createCollectorServer } from './routes.js'
import { UsageDb } from './usage-db.js'

export { publishFromDatafiles } from './publish.js'

export async function startRole(ctx: RoleContext): Promise<RunningRole> {
  return await startWithStack(async (stack) => {
    const { config, logger } = ctx
    const section = config.collector
    const store = stack.own(Store.open(section.db))
    const usage = new UsageDb(store.root)

    let publishing: Promise<unknown> = Promise.resolve()
    const publish = (): Promise<unknown> => {
      publishing = publishing
        .then(() => publishFromDatafiles(config, store, logger))
        .catch((err: unknown) => {
          logger.error({ err }, 'publishing a snapshot failed')
        })
      return publishing
    }
    stack.defer(() => publishing)
    await publish()
    const onHup = (): void => {
      void publish()
    }
    process.on('SIGHUP', onHup)
    stack.defer(() => process.off('SIGHUP', onHup))

    const server = createCollectorServer(config, logger, usage)
    const listen = parseHostPort(section.listen)
    const bound = await server.listen(listen.host, listen.port)
    stack.own(server)
    stack.endpoints.push(`collector http ${formatHostPort({ ...listen, port: bound.port })}`)
    return {}
  })
}
