/**
 * Builds the category database from the layered data files (`datafiles.path` + `datafiles.file`),
 * streaming, with a progress line on long builds, then switches readers to it atomically
 * (./index.ts). Malformed lines are reported with file and line; a build with errors leaves the
 * live database untouched unless `continueOnErrors` is set. The `build-db` CLI
 * (tools/build-db.ts, which the demo start runs too) and the collector role call `buildCategoryDb`.
 */
import { loadTaxonomy } from '../categories/index.js'
import type { Config } from '../config/index.js'
import { createLayersReport, readLayers } from '../datafiles/index.js'
import type { Store } from '../store/index.js'
import { CategoryDbBuilder } from './index.js'

const PROGRESS_EVERY = 500_000

export interface BuildResult {
  version: number
  domains: number
  urls: number
  errors: number
  committed: boolean
}

export interface BuildOptions {
  continueOnErrors?: boolean
  log?: (line: string) => void
}

/** Builds from the config's data files into `store`. */
export async function buildCategoryDb(config: Config, store: Store, options: BuildOptions = {}): Promise<BuildResult> {
  const log =
    options.log ??
    ((line: string) => {
      process.stdout.write(line + '\n')
    })
  const taxonomy = loadTaxonomy(config.datafiles.cats, config.datafiles.language)
  const report = createLayersReport(100)
  const builder = await CategoryDbBuilder.begin(store, { countCategories: true })
  const started = process.hrtime.bigint()
  let ops = 0
  const isTty = process.stdout.isTTY === true
  for await (const op of readLayers(config.datafiles.path, config.datafiles.file, {
    isKnownCategory: (n) => taxonomy.has(n),
    report,
    onLayer: (s) =>
      log(
        `layer ${s.priority + 1} ${s.file}: ${s.entries} entries (${s.urlEntries} URL), ${s.deletions} deletions, ${s.errors} errors`
      )
  })) {
    if (op.op === 'put') await builder.put(op.key, op.isUrl, op.cats)
    else await builder.del(op.key, op.isUrl)
    if (++ops % PROGRESS_EVERY === 0) {
      const secs = Number(process.hrtime.bigint() - started) / 1e9
      const line = `  ${ops.toLocaleString('en-US')} lines applied, ${Math.round(ops / secs).toLocaleString('en-US')}/s, rss ${Math.round(process.memoryUsage.rss() / 1048576)} MiB`
      if (isTty) process.stdout.write(`\r${line}`)
      else log(line)
    }
  }
  if (isTty && ops >= PROGRESS_EVERY) process.stdout.write('\n')
  for (const e of report.errors) log(`error: ${e.file}:${e.line}: ${e.message}`)
  if (report.errorCount > report.errors.length) log(`error: … and ${report.errorCount - report.errors.length} more`)
  if (report.errorCount > 0 && options.continueOnErrors !== true) {
    log(
      `build-db: ${report.errorCount} malformed line(s); the live database is unchanged (use --continue to build without them)`
    )
    return { version: builder.version, domains: 0, urls: 0, errors: report.errorCount, committed: false }
  }
  const { domains, urls, perCategory } = await builder.commit()
  const secs = Number(process.hrtime.bigint() - started) / 1e9
  log(`build-db: version ${builder.version} active: ${domains} domains, ${urls} URLs in ${secs.toFixed(1)} s`)
  // Counted in the built tables (the layer lines above count each file's own lines): a name an
  // earlier file overrides or deletes counts only as it is served.
  const cats = [...(perCategory ?? [])]
    .sort((a, b) => a[0] - b[0])
    .map(([c, n]) => `${c} ${taxonomy.name(c) ?? '?'}: ${n}`)
  if (cats.length > 0) log(`entries per category (built database): ${cats.join('; ')}`)
  return { version: builder.version, domains, urls, errors: report.errorCount, committed: true }
}
