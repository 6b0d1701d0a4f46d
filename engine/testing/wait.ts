/**
 * Test and benchmark helpers (not a test file): waiting for a condition, and a JSON request. One copy
 * each for the replica, sync and multi-host tests (they had their own).
 */

/**
 * Polls `check` every `everyMs` until it returns true; throws "timed out waiting for <what>" after
 * `limitMs` (a hung test, not a timing assertion). A check that throws counts as not yet (a daemon's
 * port that refuses for a moment on a loaded machine); its last error is in the timeout's message.
 */
/** An error's message and its cause's code or message: fetch's "fetch failed" alone says nothing. */
function describe(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } }
  const text = e.message ?? JSON.stringify(err)
  const cause = e.cause?.code ?? e.cause?.message
  return cause === undefined ? text : `${text}: ${cause}`
}

export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  limitMs = 30_000,
  everyMs = 10
): Promise<void> {
  const deadline = Date.now() + limitMs
  let last: unknown
  for (;;) {
    try {
      if (await check()) return
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last === undefined ? '' : ` (last error: ${describe(last)})`}`, {
        cause: last
      })
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/**
 * One request with an optional JSON body; the status and the parsed JSON answer (undefined when empty). A
 * POST, PUT or PATCH says `Content-Type: application/json` even without a body (the management API
 * refuses a write that does not).
 */
export async function fetchJson(url: string, method = 'GET', body?: unknown): Promise<{ status: number; body: any }> {
  const json = body !== undefined || method === 'POST' || method === 'PUT' || method === 'PATCH'
  const res = await fetch(url, {
    method,
    ...(json ? { headers: { 'content-type': 'application/json' } } : {}),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000)
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
}
