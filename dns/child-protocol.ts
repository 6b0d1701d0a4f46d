/**
 * The start and stop protocol between the dns role's primary and its child processes (the front
 * processes of `proxy.processes`, ./cluster-worker.ts, and the feed process, ./feed-process.ts): a
 * child says `dns-ready` with its endpoints or `dns-failed` with the system error under its failure
 * (errno, address, port: the primary reports the start failure as one line naming the address,
 * tools/cli/run-role.ts); the primary asks it to stop with `dns-stop`.
 */
import type { EventEmitter } from 'node:events'

/** A child as the primary holds it: a cluster Worker or a ChildProcess. */
export interface ChildHandle extends EventEmitter {
  send(message: { type: string }): unknown
  kill(signal?: NodeJS.Signals): unknown
}

interface ChildMessage {
  type?: string
  endpoints?: string[]
  message?: string
  code?: string
  address?: string
  port?: number
}

/** The child's endpoints once it says it is ready; rejects with its start error (errno, address, port). */
export function untilReady(child: ChildHandle, what: string): Promise<string[]> {
  return new Promise<string[]>((resolve, reject) => {
    const onMessage = (m: ChildMessage): void => {
      if (m.type === 'dns-ready') {
        child.off('message', onMessage)
        resolve(m.endpoints ?? [])
      }
      if (m.type === 'dns-failed') {
        child.off('message', onMessage)
        const { code, address, port } = m
        reject(Object.assign(new Error(m.message), code === undefined ? {} : { code, address, port }))
      }
    }
    child.on('message', onMessage)
    child.once('exit', (code: unknown) => reject(new Error(`${what} exited with code ${String(code)} while starting`)))
  })
}

/** Asks the child to stop and waits for its exit; SIGKILL after 4 s. */
export async function stopChild(child: ChildHandle): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.send({ type: 'dns-stop' })
  const t = setTimeout(() => child.kill('SIGKILL'), 4000)
  await exited
  clearTimeout(t)
}

/** The child side: tells the primary it answers on `endpoints`. */
export function reportReady(endpoints: readonly string[]): void {
  process.send?.({ type: 'dns-ready', endpoints })
}

/** The child side: tells the primary why it could not start, with the system error under it. */
export function reportStartFailure(err: unknown): void {
  const errno = (e: Error): boolean => {
    const c = (e as { code?: unknown }).code
    return typeof c === 'string' && !c.startsWith('ENGINE_')
  }
  let sys: unknown = err
  while (sys instanceof Error && !errno(sys)) sys = sys.cause
  const { code, address, port } = (sys instanceof Error ? sys : {}) as {
    code?: unknown
    address?: unknown
    port?: unknown
  }
  process.send?.({ type: 'dns-failed', message: (err as Error).message, code, address, port })
}
