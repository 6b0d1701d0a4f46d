/**
 * Test helper (not a test): the node:test option that skips a test needing uWebSockets.js where its
 * native addon does not load (uWS 20.30 has builds for Node 16, 18 and 20 only, none for 22 or 24), with the reason in the report.
 */
import { uwsLoadError } from '../http/index.js'

export function needsUws(impl: string = 'uws'): { skip: string | false } {
  if (impl !== 'uws') return { skip: false }
  const why = uwsLoadError()
  return { skip: why === undefined ? false : `needs uWebSockets.js, which does not load here: ${why}` }
}
