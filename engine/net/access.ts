/**
 * Ordered allow/deny rules on a source address, as the spec's front proxy evaluates them:
 * from the top, the first rule that matches decides; no match denies.
 */
import { cidrContains, ipBytes, parseCidr, type Cidr } from './ip.js'

interface Rule {
  readonly allow: boolean
  readonly cidr: Cidr | null
}

export interface AccessList {
  /** True when the rules let `address` through. */
  allows(address: string): boolean
}

/** Parses rules like `allow 10.0.0.0/8`, `deny all`; throws a message naming the bad rule. */
export function compileAccessRules(rules: readonly string[]): AccessList {
  const compiled: Rule[] = rules.map((text, i) => {
    const [verb, target] = text.trim().split(/\s+/) as [string, string | undefined]
    if ((verb !== 'allow' && verb !== 'deny') || target === undefined) {
      throw new Error(`rule ${i}: expected "allow CIDR|all" or "deny CIDR|all", got "${text}"`)
    }
    if (target === 'all') return { allow: verb === 'allow', cidr: null }
    const cidr = parseCidr(target)
    if (cidr === undefined) throw new Error(`rule ${i}: "${target}" is not an address or prefix`)
    return { allow: verb === 'allow', cidr }
  })
  return {
    allows(address: string): boolean {
      const bytes = ipBytes(address)
      if (bytes === undefined) return false
      for (const rule of compiled) {
        if (rule.cidr === null || cidrContains(rule.cidr, bytes)) return rule.allow
      }
      return false
    }
  }
}

/**
 * The request header in which the front door (blockpage/front-door.ts) tells the management API the
 * client address its rules judged; the api role believes it from a loopback peer only (api/auth.ts).
 */
export const RELAYED_CLIENT_HEADER = 'x-filterd-client'
