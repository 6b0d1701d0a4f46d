/**
 * One download of a subscribed list, conditional on what the last good copy was (ETag,
 * Last-Modified), under a size and a time limit. Node's own fetch (undici): no dependency. A body is
 * read to its end or the fetch fails: a connection closed before Content-Length bytes arrived, a
 * chunked body cut short, a body over the size limit (announced or counted) and a server slower than
 * the time limit all reject, so a refresh never applies part of a list.
 */

export interface FetchLimits {
  /** The whole download, headers and body. */
  readonly timeoutMs: number
  readonly maxBytes: number
}

export interface Validators {
  readonly etag?: string | undefined
  readonly lastModified?: string | undefined
}

export type FetchResult =
  | { readonly status: 'unchanged' }
  | { readonly status: 'changed'; readonly body: string; readonly bytes: number; readonly validators: Validators }

/**
 * Why a refresh failed: a word (`reason`) and a sentence for the log and the source's state. Matched
 * by its name, never by class (engine/errors.ts).
 */
export interface ListFetchError extends Error {
  readonly name: 'ListFetchError'
  readonly reason: 'http' | 'timeout' | 'too-large' | 'network' | 'refused'
}

export function listFetchError(reason: ListFetchError['reason'], message: string): ListFetchError {
  return Object.assign(new Error(message), { name: 'ListFetchError' as const, reason })
}

export function isListFetchError(err: unknown): err is ListFetchError {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'ListFetchError'
}

const USER_AGENT = 'filterd-lists/1'

/** Reads `body` to its end, refusing it past `maxBytes`. */
async function readCapped(body: ReadableStream<Uint8Array>, maxBytes: number, url: string): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  const reader = body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel()
      throw tooLarge(url, maxBytes)
    }
    chunks.push(Buffer.from(value))
  }
  return Buffer.concat(chunks, size)
}

function tooLarge(url: string, maxBytes: number): ListFetchError {
  return listFetchError('too-large', `${url}: the list is larger than ${maxBytes} bytes`)
}

function requestHeaders(previous: Validators | undefined): Record<string, string> {
  // `connection: close`: downloads are an interval apart, so no idle keep-alive socket is kept between them
  // (api/usage-report.ts says why an idle socket of Node 20's fetch is a risk).
  const headers: Record<string, string> = { 'user-agent': USER_AGENT, accept: 'text/plain, */*', connection: 'close' }
  if (previous?.etag !== undefined) headers['if-none-match'] = previous.etag
  if (previous?.lastModified !== undefined) headers['if-modified-since'] = previous.lastModified
  return headers
}

/** Downloads `url`; `previous` are the last good copy's validators (a 304 keeps that copy). */
export async function fetchList(
  url: string,
  previous: Validators | undefined,
  limits: FetchLimits
): Promise<FetchResult> {
  const signal = AbortSignal.timeout(limits.timeoutMs)
  try {
    const res = await fetch(url, { headers: requestHeaders(previous), signal, redirect: 'follow' })
    if (res.status === 304) {
      await res.body?.cancel()
      return { status: 'unchanged' }
    }
    if (res.status !== 200) {
      await res.body?.cancel()
      throw listFetchError('http', `${url}: HTTP ${res.status}`)
    }
    const announced = Number(res.headers.get('content-length') ?? NaN)
    if (announced > limits.maxBytes) {
      await res.body?.cancel()
      throw tooLarge(url, limits.maxBytes)
    }
    const body = res.body === null ? Buffer.alloc(0) : await readCapped(res.body, limits.maxBytes, url)
    const etag = res.headers.get('etag') ?? undefined
    const lastModified = res.headers.get('last-modified') ?? undefined
    return { status: 'changed', body: body.toString('utf8'), bytes: body.length, validators: { etag, lastModified } }
  } catch (err) {
    if (isListFetchError(err)) throw err
    if (signal.aborted) throw listFetchError('timeout', `${url}: no complete answer in ${limits.timeoutMs} ms`)
    const cause = (err as { cause?: { message?: string } }).cause?.message
    const message = (err as Error).message + (cause === undefined ? '' : `: ${cause}`)
    throw listFetchError('network', `${url}: ${message}`)
  }
}
