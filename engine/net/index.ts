/**
 * engine/net, the face: IP addresses and access rules. Parsing and matching addresses and CIDRs,
 * the one client-address rule of the front door and the api role, Host names, the PROXY protocol
 * header, and the api section's network rules compiled once by the config loader.
 */
export { type AccessList, RELAYED_CLIENT_HEADER, compileAccessRules } from './access.js'
export { type ApiNetwork, apiNetwork, compileApiNetwork, serializedOrigin } from './api-network.js'
export {
  type AddressSet,
  type ClientAddressRule,
  LOOPBACK,
  clientAddress,
  compileAddressSet
} from './client-address.js'
export { hostName, isLoopbackName } from './host.js'
export {
  type Cidr,
  cidrContains,
  formatIp,
  formatPeer,
  ipBytes,
  isLoopbackAddress,
  normalizeIp,
  parseCidr,
  parseIpBytes
} from './ip.js'
export { PROXY_V2_MAX, readProxyHeader } from './proxy-protocol.js'
