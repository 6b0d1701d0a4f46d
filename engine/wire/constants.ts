// DNS protocol constants, named as in the RFCs (RFC 1035 §4.1, RFC 6891, RFC 8914).

export const HEADER_SIZE = 12

// Header flag bits (RFC 1035 §4.1.1, RFC 4035 §3.2 for AD/CD).
export const FLAG_QR = 0x8000
export const FLAG_AA = 0x0400
export const FLAG_TC = 0x0200
export const FLAG_RD = 0x0100
export const FLAG_RA = 0x0080
export const FLAG_AD = 0x0020
export const FLAG_CD = 0x0010
export const OPCODE_MASK = 0x7800
export const OPCODE_SHIFT = 11
export const RCODE_MASK = 0x000f

export const OPCODE_QUERY = 0

export const RCODE_NOERROR = 0
export const RCODE_FORMERR = 1
export const RCODE_SERVFAIL = 2
export const RCODE_NXDOMAIN = 3
export const RCODE_NOTIMP = 4
export const RCODE_REFUSED = 5
/** Extended RCODE 16 (RFC 6891 §6.1.3): needs an OPT RR to carry its upper 8 bits. */
export const RCODE_BADVERS = 16

export const QTYPE_A = 1
export const QTYPE_NS = 2
export const QTYPE_CNAME = 5
export const QTYPE_SOA = 6
export const QTYPE_PTR = 12
export const QTYPE_MX = 15
export const QTYPE_TXT = 16
export const QTYPE_AAAA = 28
export const QTYPE_OPT = 41
export const QTYPE_SVCB = 64
export const QTYPE_HTTPS = 65
export const QTYPE_ANY = 255

export const QCLASS_IN = 1

// EDNS(0) option codes (IANA "DNS EDNS0 Option Codes").
export const EDNS_OPTION_ECS = 8 // RFC 7871
export const EDNS_OPTION_COOKIE = 10 // RFC 7873
export const EDNS_OPTION_KEEPALIVE = 11 // RFC 7828
export const EDNS_OPTION_PADDING = 12 // RFC 7830
export const EDNS_OPTION_KEY_TAG = 14 // RFC 8145
export const EDNS_OPTION_EDE = 15 // RFC 8914

/** The DO bit in the OPT RR's TTL flags (RFC 3225). */
export const EDNS_FLAG_DO = 0x8000

// ECS address families (RFC 7871 §6, IANA address family numbers).
export const ECS_FAMILY_IPV4 = 1
export const ECS_FAMILY_IPV6 = 2

// Extended DNS Error INFO-CODEs (RFC 8914 §4).
export const EDE_OTHER = 0
export const EDE_PROHIBITED = 18
export const EDE_BLOCKED = 15
export const EDE_CENSORED = 16
export const EDE_FILTERED = 17
export const EDE_NOT_READY = 14
export const EDE_NOT_SUPPORTED = 21
export const EDE_NO_REACHABLE_AUTHORITY = 22
export const EDE_NETWORK_ERROR = 23

/** UDP payload size we advertise in our OPT RRs (DNS Flag Day 2020 value). */
export const EDNS_UDP_PAYLOAD_SIZE = 1232
/** A response must fit 512 bytes over UDP unless the query's OPT allows more (RFC 1035 §4.2.1, RFC 6891 §6.2.3). */
export const CLASSIC_UDP_SIZE = 512
/** EXTRA-TEXT of an EDE option is clipped to this many bytes so block/error answers stay under 512 bytes. */
export const MAX_EDE_EXTRA_TEXT = 128
/**
 * A Buffer of this size always fits a block answer or an error answer
 * (12 header + 259 question + 28 AAAA RR + 11 OPT + 6 EDE + 128 text = 444).
 */
export const ANSWER_BUFFER_SIZE = 512
