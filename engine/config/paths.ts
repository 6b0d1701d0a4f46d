/**
 * `filterd check-config`'s file checks: the files and folders a config refers to (data files,
 * categories, templates, TLS certificate and key, the safe-search host list, the vendor key)
 * exist and are readable, each problem naming its key, instead of a role failing later with a raw
 * ENOENT. State folders the roles create themselves (common.db, stats.dir, …) are not checked.
 *
 * Readability is checked as the user running check-config: run it as the roles' user (docs/install.md:
 * `runuser -u filterd -- filterd check-config …`), not as root, which reads everything.
 *
 * A key is checked when its section is written in the file (an operator who writes a `blockpage:`
 * section runs the block page, which needs its templates, default path or not); `datafiles.file`
 * entries only when the file lists them (the defaults, custom.txt and vendor.txt, may come later).
 */
import { accessSync, constants, statSync } from 'node:fs'
import { userInfo } from 'node:os'
import { dirname, join } from 'node:path'
import { CATEGORY_META_FILE, CATGROUPS_FILE, type TaxonomyLanguage } from '../categories/index.js'
import { enabledSections } from './enabled-roles.js'
import { ROLE_NAMES } from './roles.js'
import type { Config } from './types.js'

type Kind = 'file' | 'folder'

/** One problem line per missing or unreadable path; empty when all are there. */
export function checkReferencedPaths(config: Readonly<Config>, written: ReadonlySet<string>): string[] {
  const problems: string[] = []
  const check = (key: string, path: string | undefined, kind: Kind): void => {
    if (path === undefined) return
    const problem = pathProblem(path, kind)
    if (problem !== undefined) problems.push(`${key}: ${path}: ${problem}`)
  }
  const has = (section: string): boolean => written.has(section)
  if (has('datafiles')) {
    check('datafiles.path', config.datafiles.path, 'folder')
    check('datafiles.cats', config.datafiles.cats, 'folder')
    // What build-db and the roles read there (engine/categories, loadTaxonomy): the categories' metadata,
    // and the group names in each language the file asks for (datafiles.language, and catapi.language
    // and local.language for sections it has).
    check('datafiles.cats', join(config.datafiles.cats, CATEGORY_META_FILE), 'file')
    const languages = new Set<TaxonomyLanguage>([config.datafiles.language])
    if (has('catapi')) languages.add(config.catapi.language ?? config.datafiles.language)
    if (has('local')) languages.add(config.local.language)
    for (const lang of languages) check('datafiles.cats', join(config.datafiles.cats, CATGROUPS_FILE[lang]), 'file')
    if (written.has('datafiles.file')) {
      config.datafiles.file.forEach((f, i) => {
        check(`datafiles.file[${i}]`, join(config.datafiles.path, f), 'file')
      })
    }
  }
  if (has('blockpage')) {
    check('blockpage.templates', config.blockpage.templates, 'folder')
    check('blockpage.tls-cert', config.blockpage['tls-cert'], 'file')
    check('blockpage.tls-key', config.blockpage['tls-key'], 'file')
  }
  if (has('proxy')) check('proxy.safesearch-hosts', config.proxy['safesearch-hosts'], 'file')
  if (has('stats')) check('stats.vendor-key', config.stats['vendor-key'], 'file')
  return problems
}

function pathProblem(path: string, kind: Kind): string | undefined {
  let isDir: boolean
  try {
    isDir = statSync(path).isDirectory()
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    return code === 'ENOENT' || code === 'ENOTDIR' ? `no such ${kind}` : `cannot be read (${code ?? 'error'})`
  }
  if (kind === 'folder' && !isDir) return 'is not a folder'
  if (kind === 'file' && isDir) return 'is a folder, not a file'
  try {
    accessSync(path, kind === 'folder' ? constants.R_OK | constants.X_OK : constants.R_OK)
  } catch {
    return 'is not readable by this user'
  }
  return undefined
}

/**
 * The folders of every role's `log` and `pid` file: each must exist and be writable by the user
 * running check-config, or be creatable by it (its nearest existing parent writable), since the role
 * creates it at its start. Run as the roles' user (the systemd unit's ExecStartPre does), a folder
 * left owned by root is named here instead of failing the start.
 */
export function checkRoleFolders(config: Readonly<Config>): string[] {
  const problems: string[] = []
  const user = userName()
  // A role this config does not run (rpz while disabled, sync without Redis) writes no log or pid file.
  for (const section of enabledSections(config, ROLE_NAMES)) {
    const s = config[section] as { log?: string; pid: string }
    for (const key of ['log', 'pid'] as const) {
      const file = s[key]
      if (file === undefined || file === '-') continue
      const problem = folderProblem(dirname(file))
      if (problem !== undefined) problems.push(`${section}.${key}: ${dirname(file)}: ${problem} by ${user}`)
    }
  }
  return problems
}

function folderProblem(folder: string): string | undefined {
  let at = folder
  for (;;) {
    let isDir: boolean
    try {
      isDir = statSync(at).isDirectory()
    } catch {
      const up = dirname(at)
      if (up === at) return 'cannot be created'
      at = up
      continue
    }
    if (!isDir) return `cannot be created (${at} is not a folder)`
    try {
      accessSync(at, constants.W_OK | constants.X_OK)
    } catch {
      return at === folder ? 'is not writable' : `cannot be created (${at} is not writable)`
    }
    return undefined
  }
}

function userName(): string {
  try {
    return `user ${userInfo().username}`
  } catch {
    return `uid ${process.getuid?.() ?? '?'}`
  }
}
