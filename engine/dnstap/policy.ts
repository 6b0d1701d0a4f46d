/*
 * filterd's decision as dnstap's Policy message (docs/dns.md, "dnstap"): which rule decided
 * (`rule`), what the answer did (`action`, read from the answer itself), on what (`match`:
 * always QNAME, filterd decides by name) and the list entry or category-database key that
 * matched (`value`, a wire-format name). A query no rule touched carries no Policy.
 */
import type { QueryLogRecord } from '../querylog/index.js'
import { POLICY_LOCAL_DATA, POLICY_NODATA, POLICY_NXDOMAIN, POLICY_PASS, type DnstapEvent } from './message.js'

/** Reasons that let the query through unchanged (whitelists, filtering off for the user). */
const PASS_REASONS: ReadonlySet<string> = new Set([
  'builtin-whitelist',
  'global-whitelist',
  'user-whitelist',
  'user-disabled'
])

/** Fills the policy fields of `e` from the query's record and the answer sent. */
export function fillPolicy(e: DnstapEvent, rec: QueryLogRecord, answer: Buffer, answerLength: number): void {
  const reason = rec.reason
  e.policyValue = rec.blockedName
  if (reason === 'none' || reason === 'malformed' || reason === '') {
    e.policyRule = ''
    e.policyAction = 0
    return
  }
  if (reason === 'category') {
    e.policyRule = rec.blockedCats.length === 0 ? 'category' : 'category:' + rec.blockedCats.join(',')
  } else {
    e.policyRule = reason
  }
  if (PASS_REASONS.has(reason)) e.policyAction = POLICY_PASS
  else if (answerLength >= 12 && (answer[3]! & 0x0f) === 3) e.policyAction = POLICY_NXDOMAIN
  else if (answerLength >= 12 && answer[6] === 0 && answer[7] === 0) e.policyAction = POLICY_NODATA
  else e.policyAction = POLICY_LOCAL_DATA
}
