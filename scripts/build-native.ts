/*
 * `npm run build`, second step: builds the batched UDP addon (native/udp) with node-gyp, offline,
 * against the running node's headers. Never fails the build: without a compiler (or headers)
 * it says so in one line and filterd uses node:dgram (`proxy.io: auto`; docs/dns.md).
 * Skipped when the addon is newer than its sources.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { UDP_ADDON_DIR as dir, UDP_ADDON_PATH as out } from '../engine/udp/index.js'

const sources = ['udp.c', 'steering.c', 'steering.h', 'binding.gyp'].map((f) => join(dir, f))

function upToDate(): boolean {
  if (!existsSync(out)) return false
  const built = statSync(out).mtimeMs
  return sources.every((s) => statSync(s).mtimeMs <= built)
}

// npm puts its bundled node-gyp on PATH for scripts and names it in npm_config_node_gyp; outside
// npm, the copy bundled with this node's npm.
function nodeGyp(): string[] {
  const fromNpm = process.env.npm_config_node_gyp
  if (fromNpm !== undefined && fromNpm !== '' && existsSync(fromNpm)) return [process.execPath, fromNpm]
  const bundled = join(
    dirname(process.execPath),
    '..',
    'lib',
    'node_modules',
    'npm',
    'node_modules',
    'node-gyp',
    'bin',
    'node-gyp.js'
  )
  if (existsSync(bundled)) return [process.execPath, bundled]
  return ['node-gyp']
}

function main(): void {
  if (process.env.FILTERD_SKIP_NATIVE === '1') {
    console.error('native UDP addon: skipped (FILTERD_SKIP_NATIVE=1); filterd will use node:dgram')
    return
  }
  if (upToDate()) return
  const [cmd, ...pre] = nodeGyp() as [string, ...string[]]
  const args = [...pre, 'rebuild']
  // Offline: the headers installed with node (…/include/node), unless npm's config names a nodedir.
  const prefix = join(dirname(process.execPath), '..')
  const npmNodedir = process.env.npm_config_nodedir
  if ((npmNodedir === undefined || npmNodedir === '') && existsSync(join(prefix, 'include', 'node', 'node_api.h')))
    args.push(`--nodedir=${prefix}`)
  const r = spawnSync(cmd, args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  if (r.status === 0 && existsSync(out)) {
    console.error(`native UDP addon: built ${out}`)
    return
  }
  const why =
    r.error?.message ??
    (r.stderr ?? '')
      .split('\n')
      .filter((l) => /error|not found|ERR!/i.test(l))
      .slice(0, 3)
      .join(' | ')
  console.error(
    `native UDP addon: NOT built (${why || `exit ${String(r.status)}`}); filterd will use node:dgram (proxy.io: auto)`
  )
}

main()
