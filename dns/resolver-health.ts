/**
 * The forwarder's resolvers (`dnscache.forward`) as /health problems, from the state the forwarder
 * already keeps (dns/upstream/resolver.ts: a try that timed out, an ICMP port unreachable, a refused
 * TCP connection or error answers in a row mark one down; a probe's good answer marks it up).
 *
 * Every resolver down is a failure: each forwarded query then gets SERVFAIL, so the role is not
 * healthy (503) though it still answers blocked names. Some down is a warning: the others answer
 * (200, each down one listed). With several front processes each holds its own view; a resolver
 * counts down only when every process that knows it says so, since one that answers any of them
 * still serves.
 */
import type { HealthProblem } from '../engine/health/index.js'
import type { ResolverSnapshot } from '../engine/metrics/index.js'

/** The problems of `views`: one list of resolvers per front process (empty lists are skipped). */
export function resolverProblems(views: ReadonlyArray<readonly ResolverSnapshot[]>): HealthProblem[] {
  const seen = new Map<string, { up: boolean; why: string }>()
  for (const view of views)
    for (const r of view) {
      const s = seen.get(r.resolver) ?? { up: false, why: '' }
      s.up ||= r.up
      if (!r.up && s.why === '') s.why = r.why ?? 'marked down'
      seen.set(r.resolver, s)
    }
  const down = [...seen].filter(([, s]) => !s.up)
  if (down.length === 0) return []
  if (down.length === seen.size)
    return [
      {
        what: 'resolvers',
        why: `every resolver of dnscache.forward is down (${down.map(([name, s]) => `${name}: ${s.why}`).join('; ')}): forwarded queries get SERVFAIL`
      }
    ]
  return down.map(([name, s]) => ({ what: `resolver ${name}`, why: s.why, warning: true }))
}
