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
import type { RoleContext, RunningRole } from '../engine/role.js'
import { Store } from '../engine/store/index.js'
import { publishFromDatafiles } from './publish.js'
import { createCollectorServer } from './routes.js'
import { UsageDb } from './usage-db.js'

export { publishFromDatafiles } from './publish.js'

export async function startRole(ctx: RoleContext): Promise<RunningRole> {
  const { config, logger } = ctx
  const section = config.collector
  const store = Store.open(section.db)
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
  await publish()
  const onHup = (): void => {
    void publish()
  }
  process.on('SIGHUP', onHup)

  const server = createCollectorServer(config, logger, usage)
  const listen = parseHostPort(section.listen)
  const bound = await server.listen(listen.host, listen.port)
  return {
    endpoints: [`collector http ${formatHostPort({ ...listen, port: bound.port })}`],
    async close() {
      process.off('SIGHUP', onHup)
      await server.close()
      await publishing
      await store.close()
    }
  }
}
