// No production function is over 80 lines unless a comment right above it says why it must be one
// piece: a long function is where a module hides. Every tracked production .ts file is
// parsed with the TypeScript compiler; tests, test helpers (testing/), benchmarks and generated
// declarations are left out.
import { test, type TestContext } from 'node:test'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { REPO } from '../engine/testing/daemon.js'

const MAX_LINES = 80
/** The marker a comment directly above a longer function must hold, followed by the reason. */
const MARKER = 'one piece:'

function productionFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z', '*.ts'], { cwd: REPO, encoding: 'utf8' })
    .split('\0')
    .filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'))
    .filter((p) => !/\.(test|case)\.ts$/.test(p) && !p.startsWith('bench/') && !p.split('/').includes('testing'))
}

function nameOf(node: ts.Node, file: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node }
  if (named.name !== undefined) return named.name.getText(file)
  const parent = node.parent
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText(file)
  return '(anonymous)'
}

/**
 * Whether a comment holding the marker sits directly above the function: its own leading comments,
 * or those of an enclosing node that starts on the same line (`export const f = () => {`,
 * `server.on('x', () => {`).
 */
function isMarked(node: ts.Node, file: ts.SourceFile): boolean {
  const text = file.getFullText()
  const line = (n: ts.Node): number => file.getLineAndCharacterOfPosition(n.getStart(file)).line
  const first = line(node)
  for (let n: ts.Node | undefined = node; n !== undefined && !ts.isSourceFile(n) && line(n) === first; n = n.parent) {
    const comments = ts.getLeadingCommentRanges(text, n.getFullStart()) ?? []
    if (comments.some((c) => text.slice(c.pos, c.end).includes(MARKER))) return true
  }
  return false
}

/** `path:line name (N lines)` for every function over the limit without the marker. */
function longFunctions(path: string): string[] {
  const file = ts.createSourceFile(path, readFileSync(join(REPO, path), 'utf8'), ts.ScriptTarget.Latest, true)
  const out: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = file.getLineAndCharacterOfPosition(node.getStart(file)).line
      const lines = file.getLineAndCharacterOfPosition(node.getEnd()).line - start + 1
      if (lines > MAX_LINES && !isMarked(node, file))
        out.push(`${path}:${start + 1} ${nameOf(node, file)} (${lines} lines)`)
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return out
}

test(`no production function is over ${MAX_LINES} lines without a "${MARKER}" comment saying why`, (t: TestContext) => {
  const files = productionFiles()
  t.assert.ok(files.length > 100, `only ${files.length} production files found`)
  const long = files.flatMap(longFunctions)
  t.assert.deepStrictEqual(
    long,
    [],
    `split these, or say above each why it must be one piece ("// ${MARKER} ..."):\n${long.join('\n')}`
  )
})

test('the check finds a long function and accepts the marker', (t: TestContext) => {
  const body = Array.from({ length: MAX_LINES }, (_, i) => `  const v${i} = ${i}`).join('\n')
  const source = (comment: string): ts.SourceFile =>
    ts.createSourceFile('x.ts', `${comment}\nexport const f = () => {\n${body}\n}\n`, ts.ScriptTarget.Latest, true)
  const arrow = (file: ts.SourceFile): ts.Node => {
    const statement = file.statements[0] as ts.VariableStatement
    return statement.declarationList.declarations[0]!.initializer!
  }
  t.assert.equal(isMarked(arrow(source('// a plain comment')), source('// a plain comment')), false)
  const marked = source(`// ${MARKER} the reason`)
  t.assert.equal(isMarked(arrow(marked), marked), true)
})
