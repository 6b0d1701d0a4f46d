/**
 * Duplicated member names in JSON text. `JSON.parse` keeps the last of `{"filter":[1],"filter":[2]}`
 * without a word, so a client that repeats a field by mistake (or a proxy that reads the first one while
 * the server takes the last) gets a write it did not mean. RFC 8259 §4 says names SHOULD be unique and
 * I-JSON (RFC 7493 §2.3) that they MUST; a role that refuses them finds the first one here.
 */

/** Where a duplicated name is: its path in the `filter[2]`/`users[0].ip` style, and its offset in the text. */
export interface DuplicateKey {
  /** The path of the repeated member, as `fieldOf` writes paths (api/validate.ts): `a.b[3].c`. */
  readonly field: string
  /** The character offset of its second occurrence's opening quote. */
  readonly position: number
}

interface Frame {
  /** The names seen so far (objects only). */
  readonly keys?: Set<string>
  /** Objects: the next string is a name. */
  expectName: boolean
  /** Objects: the name of the member being read; arrays: the index of the element being read. */
  at: string | number
}

/** The path down to (not including) the top frame's current member, then `name`. */
function pathTo(stack: readonly Frame[], name: string): string {
  let out = ''
  const add = (part: string | number): void => {
    out += typeof part === 'number' ? `[${part}]` : out === '' ? part : `.${part}`
  }
  for (let i = 0; i < stack.length - 1; i++) add(stack[i]!.at)
  add(name)
  return out
}

/** End of the string that opens at `start` (a `"`): the index of its closing quote. */
function stringEnd(text: string, start: number): number {
  let i = start + 1
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === 0x5c) i += 2
    else if (c === 0x22) return i
    else i++
  }
  return text.length
}

/**
 * The first member name repeated within one object of `text`, which must be valid JSON (call it after
 * `JSON.parse` succeeded); undefined when every object's names are unique.
 */
export function findDuplicateKey(text: string): DuplicateKey | undefined {
  const stack: Frame[] = []
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    const top = stack[stack.length - 1]
    if (c === '"') {
      const end = stringEnd(text, i)
      if (top?.keys !== undefined && top.expectName) {
        const name = JSON.parse(text.slice(i, end + 1)) as string
        if (top.keys.has(name)) return { field: pathTo(stack, name), position: i }
        top.keys.add(name)
        top.at = name
        top.expectName = false
      }
      i = end
    } else if (c === '{') {
      stack.push({ keys: new Set(), expectName: true, at: '' })
    } else if (c === '[') {
      stack.push({ expectName: false, at: 0 })
    } else if (c === '}' || c === ']') {
      stack.pop()
    } else if (c === ',' && top !== undefined) {
      if (top.keys !== undefined) top.expectName = true
      else top.at = (top.at as number) + 1
    }
  }
  return undefined
}
