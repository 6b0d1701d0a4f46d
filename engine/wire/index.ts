// engine/wire: hand-written DNS wire fast paths (header, question, EDNS, answers, TCP framing).
export * from './constants.js'
export {
  QUERY_OK,
  QUERY_DROP,
  type QueryVerdict,
  QueryScratch,
  readQuery,
  keyOf,
  nameOf,
  ecsAddressOf
} from './query.js'
export {
  type BlockAnswerOptions,
  type AddressRecord,
  compileBlockAnswer,
  compileEdeText,
  writeBlockAnswer,
  writeErrorAnswer,
  writeCnameAnswer,
  decodeAddresses
} from './answer.js'
export { readId, setId, rcodeOf, questionMatches } from './forward.js'
export { FrameReader, frame } from './tcp-frame.js'
export { formatIPv6, parseIPv4Into, parseIPv6Into } from './ip.js'
export { capTtls } from './ttl-cap.js'
export { smallestTtl } from './ttl.js'
