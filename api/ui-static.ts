/**
 * Serves the operator console (ui/, built by `npm run build` into dist/ui/) under /ui/ on the api role's
 * listener, so it sits behind the front door and its access rules like every API route. The files are read
 * into memory once (about 230 KB); hashed assets are cached for good, index.html never.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { HttpServer } from '../engine/http/index.js'

/** Where `npm run build` puts the console (dist/ui beside dist/api). */
export const UI_DIR = fileURLToPath(new URL('../ui/', import.meta.url))

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json'
}

// Everything comes from this origin; Chart.js sets inline styles on its canvas.
const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

interface Asset {
  body: Buffer
  type: string
  immutable: boolean
}

function readAll(dir: string, prefix = ''): Map<string, Asset> {
  const out = new Map<string, Asset>()
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) {
      for (const [k, v] of readAll(path, `${prefix}${name}/`)) out.set(k, v)
    } else {
      out.set(prefix + name, {
        body: readFileSync(path),
        type: TYPES[extname(name)] ?? 'application/octet-stream',
        immutable: prefix.startsWith('assets/')
      })
    }
  }
  return out
}

/** Registers GET /ui/* (and /ui → /ui/); without a build the page says how to make one. Returns whether it was found. */
export function registerUi(http: HttpServer, dir = UI_DIR): boolean {
  const assets = existsSync(join(dir, 'index.html')) ? readAll(dir) : new Map<string, Asset>()
  http.route('GET', '/ui', (_req, res) => {
    res.status(301).header('Location', '/ui/').send('')
  })
  http.route('GET', '/ui/*', (req, res) => {
    const name = req.rawParams['*'] ?? ''
    const asset = assets.get(name === '' ? 'index.html' : name)
    if (asset === undefined) {
      if (assets.size === 0) {
        res
          .status(404)
          .header('Content-Type', 'text/plain; charset=utf-8')
          .send('The console is not built: run npm run build.\n')
        return
      }
      res.status(404).header('Content-Type', 'text/plain; charset=utf-8').send('not found\n')
      return
    }
    res
      .header('Content-Type', asset.type)
      .header('Cache-Control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('Content-Security-Policy', CSP)
      .header('X-Content-Type-Options', 'nosniff')
      .header('Referrer-Policy', 'no-referrer')
      .send(asset.body)
  })
  return assets.size > 0
}
