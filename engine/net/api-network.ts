/**
 * The management API's network settings compiled once: `api.access` (the front door's address rules),
 * `api.trusted-proxies` (whose X-Forwarded-For the front door believes), `api.allowed-origins` (browser
 * origins the API accepts cross-site requests from) and `api.host`. The config loader compiles them while it
 * checks the file (so a bad entry stops the start with its key) and keeps the result, keyed by the config's
 * frozen `api` section; the front door and the api role then take that result instead of parsing again.
 */
import { compileAccessRules, type AccessList } from './access.js'
import { compileAddressSet, type AddressSet } from './client-address.js'
import { hostName } from './host.js'

/**
 * The keys of the `api` section compiled here, by shape: the config loader (engine/config, which
 * imports this folder) hands them over, so this folder knows no config type.
 */
interface ApiSection {
  readonly access: readonly string[]
  readonly 'trusted-proxies': readonly string[]
  readonly 'allowed-origins': readonly string[]
  readonly host: string
}

export interface ApiNetwork {
  /** `api.access`, compiled. */
  readonly access: AccessList
  /** `api.trusted-proxies`, compiled. */
  readonly trustedProxies: AddressSet
  /** `api.allowed-origins` as browsers serialize origins (`https://console.example:8443`). */
  readonly allowedOrigins: ReadonlySet<string>
  /** `api.host`, bare and lower case (engine/net/host.ts). */
  readonly apiHost: string
}

const kept = new WeakMap<object, ApiNetwork>()

/**
 * An origin as a browser sends it in `Origin`: `scheme://host[:port]`, lower case, default port left out.
 * Undefined for anything else (a path, credentials, another scheme, `null`).
 */
export function serializedOrigin(text: string): string | undefined {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return undefined
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') return undefined
  if (url.pathname !== '/' || /^[a-z]+:\/\/[^/]+\/./i.test(text)) return undefined
  return url.origin
}

/**
 * Compiles the section; every problem is named by its key (`api.access: rule 2: …`). The result is kept
 * for `apiNetwork`, when there is no problem.
 */
export function compileApiNetwork(api: ApiSection): { network?: ApiNetwork; problems: string[] } {
  const problems: string[] = []
  let access: AccessList | undefined
  let trustedProxies: AddressSet | undefined
  try {
    access = compileAccessRules(api.access)
  } catch (err) {
    problems.push(`api.access: ${(err as Error).message}`)
  }
  try {
    trustedProxies = compileAddressSet(api['trusted-proxies'])
  } catch (err) {
    problems.push(`api.trusted-proxies${(err as Error).message}`)
  }
  const allowedOrigins = new Set<string>()
  api['allowed-origins'].forEach((text, i) => {
    const origin = serializedOrigin(text)
    if (origin === undefined)
      problems.push(
        `api.allowed-origins[${i}]: "${text}" is not an origin (http:// or https://, a host, an optional port, nothing after)`
      )
    else allowedOrigins.add(origin)
  })
  if (access === undefined || trustedProxies === undefined || problems.length > 0) return { problems }
  const network: ApiNetwork = { access, trustedProxies, allowedOrigins, apiHost: hostName(api.host) }
  kept.set(api, network)
  return { network, problems }
}

/** The compiled section: the loader's result when it loaded this config, else compiled (and kept) now. */
export function apiNetwork(api: ApiSection): ApiNetwork {
  const known = kept.get(api)
  if (known !== undefined) return known
  const { network, problems } = compileApiNetwork(api)
  if (network === undefined) throw new Error(problems.join('; '))
  return network
}
