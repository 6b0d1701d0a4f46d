/**
 * Test helper (not a test): one HTTP request made by curl, the client the specifications' users script
 * with, sending only the headers given. curl's own `User-Agent` and `Accept` are taken off, so a request
 * carries `Host`, the given headers and, with a body, `Content-Length`: nothing a test did not write.
 * A `POST` without a body is `curl -X POST URL`, which sends no `Content-Length` at all.
 */
import { execFile } from 'node:child_process'

export interface CurlAnswer {
  readonly status: number
  /** The body as text ('' for HEAD). */
  readonly body: string
}

export interface CurlRequest {
  readonly method: string
  /** The whole URL, sent as written (`--globoff`: `*` and `[]` are not curl patterns). */
  readonly url: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
}

/** The separator between the body and the status curl writes after it (`--write-out`). */
const STATUS_MARK = '\n--curl-status:'

export function curl(r: CurlRequest): Promise<CurlAnswer> {
  const args = ['--silent', '--show-error', '--globoff', '--max-time', '60', '-H', 'User-Agent:', '-H', 'Accept:']
  // HEAD is --head: `-X HEAD` would wait for a body the answer announces and never sends.
  if (r.method === 'HEAD') args.push('--head', '--output', '/dev/null')
  else args.push('-X', r.method)
  for (const [name, value] of Object.entries(r.headers ?? {})) args.push('-H', `${name}: ${value}`)
  if (r.body !== undefined) args.push('--data-binary', r.body)
  args.push('--write-out', `${STATUS_MARK}%{http_code}`, r.url)
  return new Promise((resolve, reject) => {
    execFile('curl', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err !== null) {
        reject(new Error(`curl ${args.join(' ')}: ${err.message} ${stderr}`))
        return
      }
      const at = stdout.lastIndexOf(STATUS_MARK)
      resolve({ status: Number(stdout.slice(at + STATUS_MARK.length)), body: stdout.slice(0, at) })
    })
  })
}
