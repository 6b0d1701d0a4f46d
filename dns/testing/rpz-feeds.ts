// Helpers of the RPZ feed tests against the DNS daemon (not a test file): the feed zone Knot serves,
// dig's answer read into its parts, /metrics as text.
import { dig } from '../../engine/testing/dns.js'
import { KNOT_KEY } from '../../engine/testing/knot.js'

/** The stub resolver's answer to every A query. */
export const UPSTREAM_A = '198.51.100.10'

/** The feed zone `feed.rpz` at `serial`: one trigger of each kind, and `extra` lines. */
export function feedText(serial: number, extra = ''): string {
  return `$ORIGIN feed.rpz.
$TTL 300
@ IN SOA ns.feed.rpz. admin.feed.rpz. ${serial} 3600 600 86400 60
  IN NS localhost.
bad.example      CNAME .
*.bad.example    CNAME .
nodata.example   CNAME *.
pass.bad.example CNAME rpz-passthru.
drop.example     CNAME rpz-drop.
tcp.example      CNAME rpz-tcp-only.
local.example    A 198.51.100.77
walled.example   CNAME garden.example.
32.2.0.0.127.rpz-client-ip CNAME .
ns.evil.rpz-nsdname CNAME .
32.1.0.0.10.rpz-nsip CNAME .
32.9.9.0.198.rpz-ip CNAME .
${extra}`
}

/** dig's answer: its status and the answer section's data, one string each. */
export async function digged(
  port: number,
  args: string[]
): Promise<{ status: string; flags: string; answers: string[] }> {
  const out = (await dig([`@127.0.0.1`, '-p', String(port), '+tries=1', '+time=3', ...args])) ?? ''
  const status = /status: (\w+)/.exec(out)?.[1] ?? ''
  const flags = /flags: ([a-z ]+);/.exec(out)?.[1] ?? ''
  const answers: string[] = []
  let inAnswer = false
  for (const line of out.split('\n')) {
    if (line.startsWith(';; ANSWER SECTION')) inAnswer = true
    else if (line.trim() === '') inAnswer = false
    else if (inAnswer) answers.push(line.split(/\s+/).slice(3).join(' '))
  }
  return { status, flags, answers }
}

export async function metricsText(port: number): Promise<string> {
  return await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
}

/** The `rpz-feeds` section of one feed, `feed.rpz`, from Knot on `knotPort` with its TSIG key, NOTIFY to `notifyPort`. */
export function knotFeedSection(knotPort: number, notifyPort: number): Record<string, unknown> {
  return {
    'notify-listen': `127.0.0.1:${notifyPort}`,
    feeds: [
      {
        zone: 'feed.rpz',
        primary: `127.0.0.1:${knotPort}`,
        'tsig-key': { name: 'feed-key', algorithm: 'hmac-sha256', secret: KNOT_KEY.secret.toString('base64') }
      }
    ]
  }
}
