/**
 * `filterd build-db --config FILE [--continue] [--if-empty] [--quiet]`: compiles the layered data
 * files into the category database (engine/catdb/build.ts) and exits 0 when the new tables are
 * live, 1 when malformed lines kept the live database unchanged.
 */
import { loadConfigFile } from '../engine/features.js'
import { CategoryDb, buildCategoryDb } from '../engine/catdb/index.js'
import { Store } from '../engine/store/index.js'
import { commandArgs } from './cli/command-args.js'

const USAGE = 'usage: filterd build-db --config FILE [--continue] [--if-empty] [--quiet]\n'

export async function run(argv: string[]): Promise<number> {
  const args = commandArgs('build-db', USAGE, argv, {
    continue: { type: 'boolean' },
    'if-empty': { type: 'boolean' },
    quiet: { type: 'boolean' }
  })
  if (typeof args === 'number') return args
  const { values, config: file } = args
  const config = loadConfigFile(file)
  const store = Store.open(config.common.db)
  try {
    if (values['if-empty'] === true && new CategoryDb(store).activeVersion > 0) return 0
    const quiet = values.quiet === true
    const result = await buildCategoryDb(config, store, {
      continueOnErrors: values.continue === true,
      log: quiet
        ? (line) => {
            if (line.startsWith('error') || line.startsWith('build-db')) process.stdout.write(line + '\n')
          }
        : undefined
    })
    return result.committed ? 0 : 1
  } finally {
    await store.close()
  }
}
