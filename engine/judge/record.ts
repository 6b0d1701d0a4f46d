// Statistics records from a judged query (built only when the sink is enabled).
import type { QueryLogRecord } from '../querylog/index.js'
import { RCODE_NXDOMAIN, nameOf } from '../wire/index.js'
import type { Judge } from './judge.js'

/** The record of the query `judge` just decided; rcode/nxdomain are final for our own answers. */
export function buildRecord(judge: Judge, time: number): QueryLogRecord {
  const q = judge.scratch
  const name = q.questionEnd === 0 ? '' : nameOf(q)
  if (judge.isRejected) {
    return {
      time,
      address: judge.clientAddress,
      user: null,
      name,
      qtype: q.qtype,
      blockedName: '',
      reason: 'malformed',
      cats: [],
      blockedCats: [],
      nxdomain: false,
      rcode: judge.rcode,
      clientId: judge.clientId
    }
  }
  if (judge.localReason !== '') {
    // The canary, DDR, an unknown client ID: answered before any policy, so no user and no verdict.
    return {
      time,
      address: judge.clientAddress,
      user: null,
      name,
      qtype: q.qtype,
      blockedName: '',
      reason: judge.localReason,
      cats: [],
      blockedCats: [],
      nxdomain: judge.rcode === RCODE_NXDOMAIN,
      rcode: judge.rcode,
      clientId: judge.clientId
    }
  }
  const v = judge.verdict
  const blocked = v.action === 'block' || v.action === 'safesearch'
  return {
    time,
    address: judge.clientAddress,
    user: v.user,
    name,
    qtype: q.qtype,
    blockedName: blocked ? v.matched : '',
    reason: v.reason,
    cats: v.cats,
    blockedCats: v.blockedCats,
    nxdomain: false,
    rcode: 0,
    clientId: judge.clientId,
    source: v.source
  }
}
