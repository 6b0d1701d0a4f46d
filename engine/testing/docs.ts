// Error catalogues checked against their docs: the rows `| \`CODE\` | status | …` of a doc's table.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** docs/<name> of the repository, read from dist/engine/testing/. */
export function readDoc(name: string): string {
  return readFileSync(fileURLToPath(new URL(`../../../docs/${name}`, import.meta.url)), 'utf8')
}

/** The codes starting with `prefix` that `markdown` lists in a table row, with their statuses. */
export function documentedErrorCodes(markdown: string, prefix: string): Record<string, number> {
  const out: Record<string, number> = {}
  for (const m of markdown.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| (\d{3}) \|/gm)) {
    if (m[1]!.startsWith(prefix)) out[m[1]!] = Number(m[2])
  }
  return out
}
