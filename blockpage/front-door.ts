/**
 * The front door to the management API (spec, Authentication). The `blockpage` role's HTTP listener asks
 * `isApiHost(Host)` for every request; requests for the API's host name go to `handle`, which applies the
 * ordered allow/deny rules of `api.access` (first match wins; the default lets only loopback in) and forwards
 * what they allow to the API daemon at `api.listen` (api-relay.ts). Everything else is the block page's business.
 *
 * Which address the rules judge: the socket peer, always, unless the peer is one of `api.trusted-proxies`
 * (a load balancer in front of this host). Then X-Forwarded-For is read from the right, skipping trusted
 * proxies, and the first address that is not one is the client (engine/net/client-address.ts, the rule the
 * api role follows too). A header is never believed from an untrusted peer.
 *
 * Credentials, and the checks against cross-site requests and DNS rebinding, are the API's business
 * (api/auth.ts), done after these rules on what the door forwards: the door passes `Authorization`,
 * `Host`, `Origin`, `Sec-Fetch-*` and `Content-Type` on untouched and tells the API the client address it
 * judged in `X-Filterd-Client` (RELAYED_CLIENT_HEADER, overwriting any the client sent), so a request relayed
 * from outside never counts as a loopback caller there. The TLS listener (`blockpage.tls-listen`) runs this
 * same door, so API clients can use HTTPS and keep their secrets off the wire.
 *
 * A daemon that is down or fails mid-answer gives 502 with the JSON error body. The settings come compiled
 * from the config loader (engine/net/api-network.ts).
 *
 * @example
 * const door = createFrontDoor(config, logger)
 * server.route('*', '/*', async (req, res) => {
 *   if (door.isApiHost(req.header('host'))) await door.handle(req, res)
 *   else renderBlockPage(req, res)
 * })
 */
import type { Config } from '../engine/config/index.js'
import { parseHostPort } from '../engine/config/index.js'
import {
  FRONT_DOOR_ERRORS,
  type FrontDoorErrorCode,
  type HttpRequest,
  type HttpResponse
} from '../engine/http/index.js'
import { auditLogger, type Logger } from '../engine/log/index.js'
import { compileAccessRules, apiNetwork, clientAddress, type ClientAddressRule, hostName } from '../engine/net/index.js'
import { ApiRelay } from './api-relay.js'

export interface FrontDoor {
  /** True when a Host header (port and trailing dot ignored, any case) names the API's host (`api.host`). */
  isApiHost(hostHeader: string | undefined): boolean
  /** The address the access rules judge for this request (see the module comment). */
  clientAddress(req: HttpRequest): string
  /** Applies the access rules, then forwards to the API daemon; always answers. */
  handle(req: HttpRequest, res: HttpResponse): Promise<void>
  /** Replaces the access rules (a config reload of `api.access`); the lines are valid (the config loader compiled them). */
  setAccess(lines: readonly string[]): void
  /** Drops the idle keep-alive connections to the API daemon. */
  close(): void
}

export interface FrontDoorOptions {
  /** Milliseconds before a forwarded request that got no answer is given up (502). Default 30 000. */
  timeoutMs?: number
}

/** Answers one of the front door's own errors, with the status its catalogue gives the code. */
function sendError(res: HttpResponse, code: FrontDoorErrorCode, message: string): void {
  res.json({ error: { code, message } }, FRONT_DOOR_ERRORS[code])
}

/** The methods whose requests the api role audits (api/auth.ts). */
const WRITE_METHODS: ReadonlySet<string> = new Set(['PUT', 'POST', 'DELETE', 'PATCH'])

/**
 * A request the access rules refused: its log line, then 403. A write never reaches the api daemon, so its
 * audit line is written here, in the block page's log, with the api role's fields (docs/api.md, "Audit
 * log"), whatever blockpage.log-level says.
 */
function refuse(req: HttpRequest, res: HttpResponse, client: string, logger: Logger, audit: Logger): void {
  const seen = { peer: req.remoteAddress, method: req.method, path: req.path }
  if (WRITE_METHODS.has(req.method)) {
    audit.info(
      { audit: 'api', who: '-', source: client, ...seen, status: 403, by: 'front-door' },
      'management API write refused by api.access'
    )
  } else {
    logger.info({ client, ...seen }, 'management API request denied by api.access')
  }
  sendError(res, 'API_FORBIDDEN', 'access to the management API is not allowed from this address')
}

export function createFrontDoor(
  config: Readonly<Pick<Config, 'api'>>,
  logger: Logger,
  options: FrontDoorOptions = {}
): FrontDoor {
  const network = apiNetwork(config.api)
  const rule: ClientAddressRule = { trusted: network.trustedProxies }
  let access = network.access
  const audit = auditLogger(logger)
  const relay = new ApiRelay({ listen: parseHostPort(config.api.listen), timeoutMs: options.timeoutMs ?? 30_000 })
  return {
    isApiHost(hostHeader) {
      return hostHeader !== undefined && hostName(hostHeader) === network.apiHost
    },
    clientAddress: (req) => clientAddress(req, rule),
    setAccess(lines) {
      access = compileAccessRules(lines)
    },
    async handle(req, res) {
      const client = clientAddress(req, rule)
      if (!access.allows(client)) {
        refuse(req, res, client, logger, audit)
        return
      }
      const body = await req.body()
      try {
        await relay.relay({ req, body, client, fromTrustedProxy: network.trustedProxies.has(req.remoteAddress) }, res)
      } catch (err) {
        logger.warn({ err, target: config.api.listen }, 'management API daemon unreachable')
        sendError(res, 'API_UNAVAILABLE', 'the management API is not available')
      }
    },
    close() {
      relay.close()
    }
  }
}
