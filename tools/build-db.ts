/**
 * `filterd build-db --config FILE [--continue] [--if-empty] [--quiet]`: compiles the layered data
 * files into the category database (engine/catdb/build.ts) and exits 0 when the new tables are
 * live, 1 when malformed lines kept the live database unchanged.
 */
import { loadConfigFile } from '../engine/config/index.js'
import { CategoryDb } from '../engine/catdb/index.js'
import { buildCategoryDb } from '../engine/catdb/build.js'
import { Store } from '../engine/store/index.js'

export async function run (argv: string[]): Promise<number> {
  const i = argv.indexOf('--config')
  const file = i >= 0 ? argv[i + 1] : undefined
  if (file === undefined) {
    process.stderr.write('usage: filterd build-db --config FILE [--continue] [--if-empty] [--quiet]\n')
    return 2
  }
  const config = loadConfigFile(file)
  const store = Store.open(config.common.db)
  try {
    if (argv.includes('--if-empty') && new CategoryDb(store).activeVersion > 0) return 0
    const quiet = argv.includes('--quiet')
    const result = await buildCategoryDb(config, store, {
      continueOnErrors: argv.includes('--continue'),
      log: quiet ? (line) => { if (line.startsWith('error') || line.startsWith('build-db')) process.stdout.write(line + '\n') } : undefined
    })
    return result.committed ? 0 : 1
  } finally {
    await store.close()
  }
}
