/**
 * A copy of a string as one flat heap object. V8 returns JSON.stringify's result and a template
 * literal's as a rope (a concatenated string over its parts), and a Map keeps the rope it was given:
 * a key kept for a generation is then several heap objects, the parts' headers besides the text. Parsing
 * the string's JSON makes a fresh sequential string, exact for any string. Call it when a key is stored,
 * not when one is looked up.
 */
export function flatString(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string
}
