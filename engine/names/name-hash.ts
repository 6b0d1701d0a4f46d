/** FNV-1a over the UTF-16 units of `text` from `from` (so a key inside a longer string hashes without a slice). */
export function fnv1a(text: string, from = 0): number {
  let h = 0x811c9dc5
  for (let i = from; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h | 0
}

/** fnv1a with its high half folded into the low, for tables that index by the low bits. */
export function foldedHash(text: string, from = 0): number {
  const h = fnv1a(text, from)
  return h ^ (h >>> 16)
}
