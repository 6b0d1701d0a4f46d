/**
 * Host names as HTTP requests carry them (the `Host` header, the host of an `Origin`): one reading for the
 * front door, which routes by it (blockpage/front-door.ts), and the management API, which refuses a request
 * on its credential-free loopback path whose Host it does not answer to (DNS rebinding, api/browser-guard.ts).
 */
import { isLoopbackAddress } from './ip.js'

/** `Api.Example.` / `api.example:8080` / `[::1]:80` → the bare lower-case name or address. */
export function hostName(header: string): string {
  let h = header.trim().toLowerCase()
  if (h.startsWith('[')) {
    const end = h.indexOf(']')
    return end < 0 ? h : h.slice(1, end)
  }
  const colon = h.indexOf(':')
  if (colon >= 0 && h.indexOf(':', colon + 1) < 0) h = h.slice(0, colon)
  return h.endsWith('.') ? h.slice(0, -1) : h
}

/**
 * True for a name that always means this host: `localhost` and the names under it (RFC 6761 §6.3 says
 * resolvers answer them with loopback, and browsers never send them to DNS), and loopback addresses
 * (127.0.0.0/8, ::1). `name` is bare, as `hostName` gives it.
 */
export function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost') || isLoopbackAddress(name)
}
