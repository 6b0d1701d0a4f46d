/**
 * The JSON Schema of the configuration file: the source of truth for every key, its type, its
 * default and its description (docs/config.md is checked against it by a test). ajv validates the
 * parsed YAML against it with `useDefaults`, so every role reads a complete, frozen object.
 *
 * Repeatable keys of the spec (`proxy.listen`, `proxy.blockpage-ip`, `dnscache.forward`,
 * `datafiles.file`) are YAML lists; a single scalar is accepted and read as a one-element list,
 * since YAML itself forbids a repeated key in a mapping.
 */
import { ROLE_NAMES } from './roles.js'

const listenAddress = {
  type: 'string',
  description: 'address:port; IPv6 in brackets, e.g. [::1]:53',
  minLength: 3
} as const

const listenList = {
  type: 'array',
  items: listenAddress,
  minItems: 1
} as const

const filePath = { type: 'string', minLength: 1 } as const

const logPath = {
  type: 'string',
  minLength: 1,
  description: 'absolute path of the log file, or - for standard output'
} as const

const pidPath = {
  type: 'string',
  minLength: 1,
  description: 'absolute path of the pid file'
} as const

// The spec fixes proxy.pid, datafiles.path and datafiles.file; they stay configurable for the
// quick start and the tests (docs/architecture.md, "Paths the spec fixes are configurable"). The
// descriptions say so, since docs/config.md is generated from them.
const specFixedNote = '; keep the default in production (the spec fixes it)'

/*
 * Who reads a key, and which of them apply a changed value on SIGHUP (`filterd reload`) without a
 * restart: `x-roles` on a section names the roles that read its keys, on a key it overrides that
 * for the key; `x-live` on a key names the roles that apply it live (engine/config/reload.ts). A
 * key without `x-live` needs a restart of every role that reads it, which is the safe default for a
 * new key. docs/config.md is generated from both. ROLE_NAMES (./roles.js) is every role.
 */
const logLevel = { enum: ['debug', 'info', 'warn', 'error', 'silent'] } as const

const accessRules = {
  type: 'array',
  description: 'ordered rules "allow CIDR|all" / "deny CIDR|all", first match wins',
  items: { type: 'string', pattern: '^(allow|deny)\\s+\\S+$' }
} as const

export const configSchema = {
  $id: 'filterd-config',
  type: 'object',
  additionalProperties: false,
  properties: {
    dnscache: {
      type: 'object',
      'x-roles': ['dns', 'catapi'],
      additionalProperties: false,
      default: {},
      properties: {
        forward: {
          'x-live': ['dns'],
          type: 'array',
          items: listenAddress,
          minItems: 1,
          default: ['127.0.0.1:53'],
          description: 'recursive resolvers that receive unblocked queries, tried in order'
        }
      }
    },
    proxy: {
      type: 'object',
      'x-roles': ['dns'],
      additionalProperties: false,
      default: {},
      properties: {
        listen: {
          ...listenList,
          default: ['0.0.0.0:53'],
          description: 'UDP and TCP listen addresses of the filtering DNS server; repeatable'
        },
        'blockpage-ip': {
          type: 'array',
          items: { type: 'string', minLength: 2 },
          maxItems: 2,
          default: [],
          description: 'address answered for blocked names: at most one IPv4 (A answers) and one IPv6 (AAAA answers)'
        },
        log: { ...logPath, default: '/var/log/filterd/proxy.log' },
        pid: { ...pidPath, default: '/run/filterd/proxy.pid', description: pidPath.description + specFixedNote },
        ttl: { type: 'integer', minimum: 0, maximum: 86400, default: 60, description: 'TTL of block answers, seconds' },
        dispatch: {
          enum: ['inline', 'pool'],
          default: 'inline',
          description: 'match on the socket thread (inline) or in a Piscina worker pool with batched tasks (pool)'
        },
        io: {
          enum: ['auto', 'native', 'dgram'],
          default: 'auto',
          description:
            'UDP I/O of the DNS server: the batched native addon (recvmmsg/sendmmsg, one SO_REUSEPORT socket per front process), node:dgram, or auto (the addon when it loads, else node:dgram with one warning)'
        },
        processes: {
          type: 'integer',
          minimum: 1,
          maximum: 64,
          default: 1,
          description:
            "front processes (node:cluster); each binds its own UDP socket with the native I/O, or shares the primary's with node:dgram"
        },
        workers: {
          type: 'integer',
          minimum: 1,
          maximum: 64,
          default: 1,
          description: 'worker threads per front process when dispatch is pool'
        },
        'realtime-priority': {
          type: 'integer',
          minimum: 0,
          maximum: 99,
          default: 0,
          description:
            'Linux SCHED_FIFO priority (1-99) every front process takes at start, so that answers never wait behind the statistics import or other work for a CPU; 0 = off; needs root or CAP_SYS_NICE, else a warning and normal priority (docs/statistics.md)'
        },
        'metrics-listen': {
          ...listenAddress,
          description:
            'optional HTTP listener of the DNS role serving GET /metrics (Prometheus) and nothing else, so a DNS-only host is observable; off unless set; keep it on loopback or a management network (docs/metrics.md)'
        },
        'batch-size': {
          type: 'integer',
          minimum: 1,
          maximum: 4096,
          default: 64,
          description: 'packets per pool task at most'
        },
        'policy-cache-addresses': {
          type: 'integer',
          minimum: 1,
          maximum: 100000000,
          default: 100000,
          description:
            'client addresses whose resolved policy each DNS process (and pool worker) keeps cached; when full the addresses not read recently make room (CLOCK), so size it to the active subscriber addresses (about 150-500 bytes each, docs/dns.md)'
        },
        'client-subnet': {
          type: 'boolean',
          default: false,
          description: 'take the client address from EDNS Client Subnet (deployments behind relays)'
        },
        'upstream-timeout': {
          type: 'integer',
          minimum: 50,
          maximum: 30000,
          default: 2000,
          description: 'milliseconds before an unanswered forwarded query gets SERVFAIL'
        },
        'tcp-idle-timeout': {
          type: 'integer',
          minimum: 100,
          maximum: 600000,
          default: 10000,
          description: 'milliseconds a TCP client connection may stay idle'
        },
        'tcp-message-timeout': {
          type: 'integer',
          minimum: 100,
          maximum: 600000,
          default: 3000,
          description:
            'milliseconds a TCP client has to send the whole of a message once its first byte came (slowloris: not renewed by each byte); for DoH, the preface and first SETTINGS, a frame or a header block'
        },
        'udp-receive-buffer': {
          type: 'integer',
          minimum: 0,
          maximum: 268435456,
          default: 4194304,
          description:
            'bytes of kernel receive buffer for each UDP listening socket (0: the kernel default, about 208 KiB, which bursts of a few hundred packets overflow); Linux caps it at net.core.rmem_max, so raise that sysctl too'
        },
        'udp-steering': {
          enum: ['flow', 'address'],
          default: 'flow',
          description:
            "which front process gets a UDP query with the native I/O and processes above 1: flow (the kernel's hash of the client's address and port, so one client's queries spread over every process and each process comes to cache every address) or address (every query of one client goes to the same process, so each caches only its share: by the source address, an IPv6 one's /64, or with client-subnet the query's EDNS Client Subnet address when it names a subscriber; a relay without ECS, or a CGNAT address, then loads one process)"
        },
        'rate-limit': {
          type: 'integer',
          minimum: 0,
          maximum: 10000000,
          default: 0,
          description:
            'queries per second allowed per client address or prefix, with a burst of one second; 0: no limit',
          'x-live': ['dns']
        },
        'rate-limit-prefix-v4': {
          type: 'integer',
          minimum: 8,
          maximum: 32,
          default: 32,
          description: 'IPv4 prefix length that rate-limit counts as one client',
          'x-live': ['dns']
        },
        'rate-limit-prefix-v6': {
          type: 'integer',
          minimum: 16,
          maximum: 128,
          default: 56,
          description: 'IPv6 prefix length that rate-limit counts as one client (a /56 is one subscriber)',
          'x-live': ['dns']
        },
        'rate-limit-action': {
          enum: ['refuse', 'drop'],
          default: 'refuse',
          description: 'what a query over rate-limit gets: REFUSED, or no answer at all',
          'x-live': ['dns']
        },
        'unknown-client-id': {
          enum: ['refuse', 'anonymous'],
          default: 'refuse',
          description:
            'a query naming a client ID (DoH path, DoT server name) that no user holds: refuse answers REFUSED with EDE 18 Prohibited; anonymous judges it by the server defaults of /config/ (docs/dns.md, "Subscriber identity")'
        },
        'doh-canary': {
          type: 'boolean',
          default: true,
          description:
            'answer use-application-dns.net with NXDOMAIN, never forwarded, so browsers (Firefox) keep to this resolver instead of switching to their own DNS over HTTPS (docs/dns.md, "The canary")'
        },
        'any-over-udp': {
          enum: ['truncate', 'forward'],
          default: 'truncate',
          description:
            'ANY queries over UDP get an empty answer with TC set (the client asks again over TCP, where the source address cannot be forged), so the server is no amplifier; forward: treat ANY like any other type'
        },
        dnstap: {
          type: 'string',
          pattern: '^(unix:/|tcp:).+',
          description:
            'dnstap output (Frame Streams + protobuf, as dnsdist, Unbound and BIND emit): unix:/path/of/socket or tcp:host:port of a collector such as fstrm_capture; every answered query is sent with its answer and filterd\'s decision; off unless set (docs/dns.md, "dnstap")'
        },
        'dnstap-queue': {
          type: 'integer',
          minimum: 65536,
          maximum: 1073741824,
          default: 4194304,
          description:
            'bytes of dnstap frames each front process holds while the collector is slow or away; past it new frames are dropped and counted (filterd_dns_dnstap_dropped_total), never waited for'
        },
        'dnstap-identity': {
          type: 'string',
          maxLength: 255,
          description: 'Dnstap.identity of every frame; default: the host name'
        },
        'tcp-max-connections': {
          type: 'integer',
          minimum: 1,
          maximum: 1000000,
          default: 1000,
          description:
            'concurrent TCP client connections per process; when the table is full, a new connection closes the oldest idle one (then the oldest with an unfinished message), and the idle timeout shortens as the table fills (docs/dns.md)'
        },
        'tcp-max-per-source': {
          type: 'integer',
          minimum: 1,
          maximum: 1000000,
          default: 64,
          description:
            'concurrent TCP client connections per process from one IPv4 address or one IPv6 /64 (in each of the TCP, DoT and DoH tables); a connection past it is closed on accept, so one address cannot take the table'
        },
        'upstream-edns-size': {
          type: 'integer',
          minimum: 512,
          maximum: 65535,
          default: 1232,
          description:
            "largest EDNS UDP payload size advertised to the upstream resolvers (a client's larger size is lowered to it; DNS Flag Day 2020 recommends 1232); answers over UDP never exceed the size the client advertised (512 without EDNS): larger ones are sent truncated with TC"
        },
        'safesearch-hosts': {
          ...filePath,
          description: 'data file of search-engine and video hosts (defaults to the packaged conf/safesearch.txt)',
          'x-roles': ['dns', 'blockpage']
        },
        'dot-listen': {
          type: 'array',
          items: listenAddress,
          default: [],
          description:
            'DNS over TLS (RFC 7858) listen addresses, host:port (port 853 when left out); needs tls-cert and tls-key; off when empty (docs/dns.md, "Encrypted transports")'
        },
        'doh-listen': {
          type: 'array',
          items: listenAddress,
          default: [],
          description:
            'DNS over HTTPS (RFC 8484) listen addresses, host:port (port 443 when left out): HTTP/2 and HTTP/1.1 over TLS, on /dns-query and /dns-query/{client-id}; needs tls-cert and tls-key; off when empty'
        },
        'doh-http-listen': {
          type: 'array',
          items: listenAddress,
          default: [],
          description:
            'DNS over HTTPS served as plain HTTP/1.1 (port 80 when left out), for a TLS-terminating proxy in front; the client address is read from X-Forwarded-For or a PROXY protocol v2 header, believed only from doh-trusted-proxies; off when empty'
        },
        'doh-trusted-proxies': {
          type: 'array',
          items: { type: 'string', minLength: 2 },
          default: [],
          description:
            'addresses and prefixes of the proxies in front of the DoH listeners whose X-Forwarded-For or PROXY protocol v2 header names the client; from anyone else both are ignored'
        },
        'doh-max-streams': {
          type: 'integer',
          minimum: 1,
          maximum: 1000,
          default: 100,
          description:
            'HTTP/2 streams (queries) one DoH connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS); a client that resets streams faster than they are answered is disconnected (CVE-2023-44487)'
        },
        'tls-cert': {
          ...filePath,
          description:
            'PEM certificate chain of the DoT and DoH listeners; read again without a restart when the file changes or on SIGHUP (a pair that does not load keeps the previous one, with a warning); a new path is applied by a reload too (a pair that does not load is refused, filterd reload names it)',
          'x-live': ['dns']
        },
        'tls-key': { ...filePath, description: 'PEM private key of tls-cert', 'x-live': ['dns'] },
        'server-name': {
          type: 'string',
          pattern: '^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$',
          maxLength: 253,
          description:
            'the TLS server name of the encrypted listeners (dns.example.net); a DoT client that asks for {client-id}.dns.example.net names its client ID'
        },
        'log-level': { ...logLevel, 'x-live': ['dns'] }
      }
    },
    datafiles: {
      type: 'object',
      'x-roles': ['api', 'blockpage', 'catapi', 'local'],
      additionalProperties: false,
      default: {},
      properties: {
        path: {
          ...filePath,
          default: '/var/lib/filterd/data',
          description: 'directory of the domain data files' + specFixedNote,
          'x-roles': ['collector']
        },
        file: {
          'x-roles': ['collector'],
          type: 'array',
          items: filePath,
          default: ['custom.txt', 'vendor.txt'],
          description: 'data files in order; each is a set of corrections to the files after it' + specFixedNote
        },
        cats: {
          ...filePath,
          default: '/etc/filterd',
          description: 'directory holding catgroups.json, catgroups_en.json and categories.meta.json'
        },
        language: { enum: ['ru', 'en'], default: 'ru', description: 'language of category names' }
      }
    },
    blockpage: {
      type: 'object',
      'x-roles': ['blockpage'],
      additionalProperties: false,
      default: {},
      properties: {
        listen: { ...listenAddress, default: '0.0.0.0:80', description: 'block page and front door listen address' },
        templates: { ...filePath, default: '/etc/filterd/templates', description: 'directory of block page templates' },
        log: { ...logPath, default: '/var/log/filterd/blockpage.log' },
        pid: { ...pidPath, default: '/run/filterd/blockpage.pid' },
        language: { enum: ['ru', 'en'], description: 'language of the pages (defaults to datafiles.language)' },
        'accept-language': {
          type: 'boolean',
          default: true,
          description: 'choose the page language from the browser Accept-Language header'
        },
        'product-name': { type: 'string', default: 'filterd', description: 'product name shown on the pages' },
        'tls-listen': { ...listenAddress, description: 'optional HTTPS listener (needs tls-cert and tls-key)' },
        'tls-cert': filePath,
        'tls-key': filePath,
        'log-level': { ...logLevel, 'x-live': ['blockpage'] }
      }
    },
    api: {
      type: 'object',
      'x-roles': ['api'],
      additionalProperties: false,
      default: {},
      properties: {
        listen: {
          ...listenAddress,
          default: '127.0.0.1:8080',
          description: 'management API listen address (loopback only)',
          'x-roles': ['api', 'blockpage']
        },
        log: { ...logPath, default: '/var/log/filterd/api.log' },
        pid: { ...pidPath, default: '/run/filterd/api.pid' },
        host: {
          type: 'string',
          default: 'api.filterd.local',
          description:
            'host name the front door routes to the management API, and on the credential-free loopback path one of the Host names the API answers to',
          'x-roles': ['api', 'blockpage']
        },
        access: {
          ...accessRules,
          default: ['allow 127.0.0.0/8', 'allow ::1/128', 'deny all'],
          'x-roles': ['blockpage'],
          'x-live': ['blockpage']
        },
        'trusted-proxies': {
          type: 'array',
          items: { type: 'string' },
          default: [],
          description: 'peers whose X-Forwarded-For is believed',
          'x-roles': ['api', 'blockpage']
        },
        'allowed-origins': {
          type: 'array',
          items: { type: 'string' },
          default: [],
          description:
            "browser origins (scheme://host[:port]) whose pages may call the API cross-site; any other page's request that its Origin or Sec-Fetch-Site says is cross-site gets 403 API_CROSS_SITE (docs/api.md, Browsers)"
        },
        'require-credentials': {
          type: 'boolean',
          default: true,
          description:
            "callers must present the credentials of an API client (filterd api-client add): a Bearer token or HTTP Basic, checked by the api role after the front door's api.access rules let the address in; false: the address rules alone decide, as the spec's front proxy does (docs/api.md, Authorization)"
        },
        'loopback-without-credentials': {
          type: 'boolean',
          default: true,
          description:
            "let callers on this host (127.0.0.0/8, ::1, directly or through the front door) in without credentials, the spec's default access; set false when another program on this host relays requests from elsewhere to api.listen"
        },
        'body-limit': {
          type: 'integer',
          minimum: 1024,
          maximum: 67108864,
          default: 1048576,
          description: 'largest request body, bytes',
          'x-roles': ['api', 'blockpage']
        },
        'log-level': { ...logLevel, 'x-live': ['api'] }
      }
    },
    common: {
      type: 'object',
      'x-roles': ROLE_NAMES,
      additionalProperties: false,
      default: {},
      properties: {
        db: {
          ...filePath,
          default: '/var/lib/filterd/db',
          description: 'LMDB directory shared by every role on the host'
        },
        'redis-ip': {
          type: 'string',
          description:
            'address of the Redis server shared by several hosts (docs/operations-redis.md); unset: one host, LMDB only',
          'x-roles': ['api', 'sync']
        },
        'redis-port': {
          type: 'integer',
          minimum: 1,
          maximum: 65535,
          description: 'port of the shared Redis server (6379 when unset)',
          'x-roles': ['api', 'sync']
        },
        'redis-password': {
          type: 'string',
          description: 'password (AUTH) of the shared Redis server and its Sentinels',
          'x-roles': ['api', 'sync']
        },
        'redis-prefix': {
          type: 'string',
          minLength: 1,
          maxLength: 64,
          default: 'filterd:',
          description: 'prefix of every key filterd keeps in Redis (several deployments can share one server)',
          'x-roles': ['api', 'sync']
        },
        'redis-stream-length': {
          type: 'integer',
          minimum: 1000,
          maximum: 100000000,
          default: 100000,
          description: 'change records kept in the Redis stream; a host further behind bootstraps from a snapshot',
          'x-roles': ['api', 'sync']
        },
        'redis-sentinels': {
          type: 'array',
          items: { type: 'string', pattern: '^.+:[0-9]{1,5}$' },
          default: [],
          description:
            'host:port of Redis Sentinels; when set, the master named redis-master-name is used instead of redis-ip',
          'x-roles': ['api', 'sync']
        },
        'host-id': {
          type: 'string',
          pattern: '^[A-Za-z0-9._-]{1,64}$',
          description:
            "this host's name among hosts sharing Redis (its statistics files are shipped under it); default: the system host name",
          'x-roles': ['api', 'sync']
        },
        'redis-master-name': {
          type: 'string',
          default: 'filterd',
          description: 'the Sentinel master name',
          'x-roles': ['api', 'sync']
        },
        'vendor-names': {
          type: 'array',
          items: { type: 'string' },
          default: [],
          description: 'extra host names added to the built-in whitelist',
          'x-roles': ['dns', 'api', 'blockpage']
        },
        safesearchredirect: {
          type: 'string',
          default: 'https://safe.duckduckgo.com/?kp=1',
          description:
            'initial /config/ safesearchredirect (the API changes it later); its host must not be a safe-search host of conf/safesearch.txt, or the redirect would loop back to the block page and the safe search page is shown instead (safe.duckduckgo.com is DuckDuckGo with strict safe search, not a host the DNS server redirects)',
          'x-roles': ['api', 'blockpage']
        },
        'log-level': { ...logLevel, default: 'info', 'x-live': ROLE_NAMES },
        'http-server': {
          enum: ['auto', 'uws', 'node'],
          default: 'auto',
          description:
            'HTTP implementation of the HTTP roles. auto (the default) chooses per role: node:http for api, blockpage, local and sync (its /health), which reverse proxies, health checks, browsers and billing scripts talk to (it answers HTTP/1.0, a missing or repeated Host with 400, and absolute-form targets); uWebSockets.js for catapi and collector, whose clients speak HTTP/1.1 with Host and where throughput is the job (node:http with one warning when the addon does not load: uWS 20.30 has builds for Node 16, 18 and 20 only, so on Node 22 and 24 every role serves with node:http). uws or node force one implementation on every HTTP role (uws too falls back to node:http with one warning where the addon does not load); uWS 20.30 leaves HTTP/1.0 requests and requests without Host unanswered, so put it behind a proxy that speaks HTTP/1.1 upstream (nginx: proxy_http_version 1.1)'
        },
        'tls-cert-warn-days': {
          type: 'integer',
          minimum: 0,
          maximum: 3650,
          default: 14,
          description:
            "a TLS certificate of an encrypted listener (proxy.tls-cert for DoT and DoH, blockpage.tls-cert) that expires within this many days, or has expired, makes its role's /health degraded (still 200), naming the listener and the date; 0: only an expired one. Its expiry is on /metrics either way (filterd_dns_tls_cert_not_after_seconds, filterd_blockpage_tls_cert_not_after_seconds)",
          'x-roles': ['dns', 'blockpage']
        }
      }
    },
    stats: {
      type: 'object',
      'x-roles': ['dns', 'api', 'sync'],
      additionalProperties: false,
      default: {},
      properties: {
        enabled: { type: 'boolean', default: true, description: 'write the per-query CSV log', 'x-roles': ['dns'] },
        dir: {
          ...filePath,
          default: '/var/lib/filterd/stats',
          description: 'directory of the CSV files',
          'x-roles': ['dns', 'api', 'sync']
        },
        db: {
          ...filePath,
          default: '/var/lib/filterd/statsdb',
          description:
            'directory of the statistics store (DuckDB file stats.duckdb; an old LMDB data.mdb is moved in by filterd stats-migrate)',
          'x-roles': ['api']
        },
        rotate: {
          type: 'integer',
          minimum: 1,
          maximum: 86400,
          default: 3,
          description:
            'seconds between CSV file rotations (a closed file wakes the importer: a query reaches the reports within about rotate seconds plus the import)',
          'x-roles': ['dns']
        },
        'max-file-size': {
          type: 'integer',
          minimum: 4096,
          default: 268435456,
          description: 'bytes before an early rotation',
          'x-roles': ['dns']
        },
        'import-interval': {
          type: 'integer',
          minimum: 1,
          maximum: 86400,
          default: 2,
          description:
            'seconds between imports by the api role when no closed file woke it (the backstop of the stats.dir watch)',
          'x-roles': ['api', 'sync']
        },
        'retention-months': {
          type: 'integer',
          minimum: 1,
          maximum: 36,
          default: 3,
          description:
            'calendar months of daily and hourly aggregates kept (every report but the raw one); older days are dropped at the next import',
          'x-roles': ['api', 'sync']
        },
        'raw-retention-hours': {
          type: 'integer',
          minimum: 1,
          maximum: 168,
          default: 24,
          description:
            'hours of raw rows (one per query: the raw report, top lists of today) kept; an hour is dropped once it is wholly older',
          'x-roles': ['api', 'sync']
        },
        'duckdb-memory': {
          type: 'string',
          pattern: '^[0-9]+(\\.[0-9]+)?\\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$',
          default: '512MB',
          description:
            "memory limit of the statistics store (DuckDB memory_limit: its cached tables, the import's stage, sorts), e.g. 512MB, 4GB; the api role's RSS is about 250 MiB plus 1.2 times this (docs/statistics.md)",
          'x-roles': ['api', 'sync']
        },
        'duckdb-threads': {
          type: 'integer',
          minimum: 1,
          maximum: 256,
          default: 2,
          description: 'worker threads of the statistics store (DuckDB threads)',
          'x-roles': ['api']
        },
        'live-boost-after': {
          type: 'integer',
          minimum: 0,
          maximum: 3600,
          default: 0,
          description:
            'seconds after its close a live statistics file (closed in the last minute) may wait in the background (import-priority background) before its import is lifted to nice 0 until it ends (the 10 s from query to report on a saturated host; 3 was measured); the lift takes CPU from a DNS server at normal priority, so pair it with proxy.realtime-priority; needs CAP_SYS_NICE or LimitNICE=20, else told once; 0 = never, the default (docs/statistics.md)',
          'x-roles': ['api']
        },
        'import-priority': {
          type: 'string',
          enum: ['idle', 'background', 'normal'],
          default: 'background',
          description:
            "CPU priority of the api role's statistics work (import, folds, reports): idle = Linux SCHED_IDLE, background = nice 19, normal = unchanged; the HTTP thread keeps its priority (docs/statistics.md)",
          'x-roles': ['api']
        },
        timezone: {
          type: 'string',
          default: 'UTC',
          description: 'time zone of report labels, and of scheduled rules that name none (docs/api.md, Schedules)',
          'x-roles': ['api', 'catapi', 'dns', 'blockpage']
        },
        'parquet-dir': {
          ...filePath,
          description:
            'directory of the raw query log as Parquet files, one per UTC hour (queries-YYYY-MM-DDTHH.parquet), written by the importer once the hour is over (off when absent)',
          'x-roles': ['api']
        },
        'segments-dir': {
          ...filePath,
          description:
            "directory of this host's statistics segments (Parquet) that the other hosts sharing Redis fetch (docs/operations-redis.md); default: segments under stats.dir",
          'x-roles': ['sync']
        },
        'segments-retention': {
          type: 'integer',
          minimum: 1,
          maximum: 8640000,
          default: 86400,
          description:
            'seconds a host keeps its statistics segments and their metadata in Redis; an api host away longer misses them and reports a gap on /health (docs/operations-redis.md, A statistics gap)',
          'x-roles': ['sync']
        },
        store: {
          enum: ['duckdb', 'clickhouse'],
          default: 'duckdb',
          description:
            "where the statistics live: duckdb, each api host's own store (stats.db), fed by its importer; clickhouse, one ClickHouse shared by every api host, fed by every host's sync role from its own stats.dir (stats.clickhouse; docs/statistics.md, ClickHouse)",
          'x-roles': ['api', 'sync']
        },
        clickhouse: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description: 'the ClickHouse statistics store, with stats.store: clickhouse (docs/statistics.md, ClickHouse)',
          'x-roles': ['api', 'sync'],
          properties: {
            url: {
              type: 'string',
              pattern: '^https?://',
              default: 'http://127.0.0.1:8123',
              description: "ClickHouse's HTTP interface"
            },
            user: { type: 'string', default: 'default', description: 'ClickHouse user' },
            password: { type: 'string', default: '', description: "that user's password" },
            database: {
              type: 'string',
              pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$',
              default: 'filterd',
              description: 'database of the statistics tables, made by filterd stats-migrate (or at start)'
            },
            cluster: {
              type: 'string',
              pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$',
              description:
                "a cluster of the servers' remote_servers: the tables are then ReplicatedMergeTree (ZooKeeper, macros {shard} and {replica}) under a Distributed table; absent: plain MergeTree on one server"
            },
            'batch-rows': {
              type: 'integer',
              minimum: 1000,
              maximum: 1000000,
              default: 250000,
              description: 'rows per insert at most (one insert is one block, deduplicated as a whole)'
            },
            'spool-max-bytes': {
              type: 'integer',
              minimum: 1048576,
              default: 1073741824,
              description:
                'bytes of closed statistics files a host keeps in stats.dir while ClickHouse cannot take them (the spool); past it the oldest file is dropped and its rows counted in filterd_clickhouse_spool_dropped_rows_total'
            }
          }
        },
        'vendor-url': {
          type: 'string',
          description:
            'vendor statistics endpoint for the usage report (off when absent): the vendor serves it over HTTPS on port 443 as the spec says; an http:// URL is accepted too, for a local collector and tests',
          'x-roles': ['api']
        },
        'vendor-key': { ...filePath, description: 'public key file registered with the vendor', 'x-roles': ['api'] },
        'vendor-interval': {
          type: 'integer',
          minimum: 1,
          default: 86400,
          description: 'seconds between usage reports',
          'x-roles': ['api']
        }
      }
    },
    catapi: {
      type: 'object',
      'x-roles': ['catapi'],
      additionalProperties: false,
      default: {},
      properties: {
        listen: { ...listenAddress, default: '0.0.0.0:8081', description: 'registered listener (HTTP Basic)' },
        'anon-listen': { ...listenAddress, default: '0.0.0.0:8082', description: 'anonymous listener (rate limited)' },
        'anon-limit': {
          type: 'integer',
          minimum: 1,
          default: 10,
          description: 'anonymous requests per minute per source address'
        },
        resolver: {
          type: 'array',
          items: listenAddress,
          description: 'resolvers asked whether a name exists (defaults to dnscache.forward)'
        },
        language: { enum: ['ru', 'en'], description: 'language of category names (defaults to datafiles.language)' },
        log: { ...logPath, default: '/var/log/filterd/catapi.log' },
        pid: { ...pidPath, default: '/run/filterd/catapi.pid' },
        'log-level': { ...logLevel, 'x-live': ['catapi'] }
      }
    },
    local: {
      type: 'object',
      'x-roles': ['local'],
      additionalProperties: false,
      default: {},
      properties: {
        listen: { ...listenAddress, default: '0.0.0.0:80' },
        key: { type: 'string', default: '', description: 'key identifying this installation to the statistics server' },
        'collector-url': {
          type: 'string',
          default: 'http://127.0.0.1:8090',
          description: 'statistics server and update channel base URL'
        },
        'report-interval': { type: 'integer', minimum: 1, default: 300, description: 'seconds between usage reports' },
        'update-interval': {
          type: 'integer',
          minimum: 1,
          default: 3600,
          description: 'seconds between database update checks'
        },
        db: { ...filePath, default: '/var/lib/filterd/local', description: 'directory of the local database copy' },
        language: { enum: ['ru', 'en'], default: 'en' },
        pid: { ...pidPath, default: '/run/filterd/local.pid' },
        'log-level': { ...logLevel, 'x-live': ['local'] }
      }
    },
    demo: {
      type: 'object',
      'x-roles': ['dns', 'api'],
      additionalProperties: false,
      description: 'quick start only: never set in production',
      properties: {
        upstream: {
          ...listenAddress,
          description: 'start a tiny built-in upstream responder here (for machines with no reachable resolver)',
          'x-roles': []
        },
        'build-db': {
          type: 'boolean',
          default: false,
          description: 'build the category database from datafiles at start when it is empty',
          'x-roles': []
        },
        'default-filter': {
          type: 'array',
          items: { type: 'integer', minimum: 0 },
          description: 'categories blocked for anonymous addresses while /config/ has never been set'
        },
        'tls-self-signed': {
          type: 'boolean',
          default: false,
          description:
            'make a self-signed certificate at proxy.tls-cert and proxy.tls-key (for proxy.server-name) at the first start when they do not exist, so DoT and DoH run with no certificate to get',
          'x-roles': []
        }
      }
    },
    collector: {
      type: 'object',
      'x-roles': ['collector'],
      additionalProperties: false,
      default: {},
      properties: {
        listen: { ...listenAddress, default: '0.0.0.0:8090' },
        db: { ...filePath, default: '/var/lib/filterd/collector', description: 'LMDB directory of usage reports' },
        snapshots: {
          ...filePath,
          default: '/var/lib/filterd/snapshots',
          description: 'directory of database snapshots served to local services'
        },
        keys: { type: 'array', items: { type: 'string' }, default: [], description: 'accepted installation keys' },
        log: { ...logPath, default: '/var/log/filterd/collector.log' },
        pid: { ...pidPath, default: '/run/filterd/collector.pid' },
        'log-level': { ...logLevel, 'x-live': ['collector'] }
      }
    },
    sync: {
      type: 'object',
      'x-roles': ['sync'],
      additionalProperties: false,
      default: {},
      properties: {
        listen: {
          ...listenAddress,
          default: '127.0.0.1:8095',
          description:
            'health (/health) and metrics (/metrics) of the replica follower (runs only when common.redis-ip is set)'
        },
        'segments-url': {
          type: 'string',
          pattern: '^https?://[^/]+/?$',
          description:
            "base URL at which the other hosts reach this host's sync listener to fetch its statistics segments, e.g. http://10.0.0.2:8095; default: http:// and sync.listen (which must then be reachable from them, not loopback)"
        },
        log: { ...logPath, default: '/var/log/filterd/sync.log' },
        pid: { ...pidPath, default: '/run/filterd/sync.pid' },
        'apply-timeout': {
          type: 'integer',
          minimum: 0,
          maximum: 60000,
          default: 5000,
          description: "ms an API write waits for this host's replica to apply it before answering (read-your-writes)",
          'x-roles': ['api']
        },
        'log-level': { ...logLevel, 'x-live': ['sync'] }
      }
    },
    lists: {
      type: 'object',
      'x-roles': ['api'],
      additionalProperties: false,
      default: {},
      description:
        'remote list subscriptions (docs/lists.md): refreshed by the api role; with Redis one api host fetches each and the shared store carries the result',
      properties: {
        refresh: {
          type: 'boolean',
          default: true,
          description:
            "this host's api role refreshes the subscribed lists (with Redis, any number of hosts may: they take turns per source)"
        },
        interval: {
          type: 'integer',
          minimum: 60,
          maximum: 2592000,
          default: 86400,
          description: 'seconds between refreshes of a source that sets no interval of its own'
        },
        jitter: {
          type: 'number',
          minimum: 0,
          maximum: 1,
          default: 0.1,
          description:
            'a refresh comes up to this share of the interval late, at random, so sources and hosts spread out'
        },
        retry: {
          type: 'integer',
          minimum: 10,
          maximum: 86400,
          default: 900,
          description: 'seconds before a failed refresh is tried again (the last good copy stays meanwhile)'
        },
        timeout: {
          type: 'integer',
          minimum: 1,
          maximum: 3600,
          default: 120,
          description: 'seconds a download may take in all, headers and body'
        },
        'max-bytes': {
          type: 'integer',
          minimum: 1024,
          default: 67108864,
          description: 'bytes a list may have; a larger one is refused whole'
        },
        'max-entries': {
          type: 'integer',
          minimum: 1,
          default: 2000000,
          description: 'entries a list may have; a longer one is refused whole'
        },
        'max-invalid': {
          type: 'number',
          minimum: 0,
          maximum: 1,
          default: 0.5,
          description:
            "share of a copy's lines that may be unreadable; above it the copy is refused (an error page served with 200)"
        },
        sources: {
          type: 'array',
          default: [],
          description:
            'lists defined here (the API adds more, stored in the policy store); the same on every host. A source removed from here has its entries removed',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['id', 'url', 'format', 'target'],
            properties: {
              id: {
                type: 'string',
                pattern: '^[a-z0-9_-]{1,32}$',
                description: "the source's name: 1 to 32 of a-z 0-9 _ -"
              },
              url: { type: 'string', pattern: '^https?://', description: 'http:// or https:// URL of the list' },
              format: {
                enum: ['hosts', 'domains', 'adblock', 'rpz'],
                description: "the list's format (docs/lists.md)"
              },
              target: {
                enum: ['blacklist', 'whitelist', 'category'],
                description: 'the global blacklist, the global whitelist, or the category named by category'
              },
              category: {
                type: 'integer',
                minimum: 0,
                maximum: 65535,
                description: 'the category, with target: category'
              },
              interval: { type: 'integer', minimum: 60, maximum: 2592000, description: 'seconds between refreshes' },
              enabled: { type: 'boolean', default: true }
            }
          }
        }
      }
    },
    'rpz-feeds': {
      type: 'object',
      'x-roles': ['dns', 'blockpage', 'api'],
      additionalProperties: false,
      default: {},
      properties: {
        feeds: {
          type: 'array',
          default: [],
          description:
            'RPZ feeds taken in (docs/rpz.md "RPZ in"), in precedence order: the first zone that matches a query decides',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['zone'],
            properties: {
              zone: { type: 'string', minLength: 1, description: "the policy zone's name (its SOA owner)" },
              file: { ...filePath, description: 'a zone file (master format) holding the zone; or primary' },
              primary: {
                ...listenAddress,
                description: 'address:port of a primary the zone is transferred from (AXFR, then IXFR); or file'
              },
              'tsig-key': {
                type: 'object',
                additionalProperties: false,
                required: ['name', 'secret'],
                description: 'TSIG key (RFC 8945) every transfer from the primary is signed and checked with',
                properties: {
                  name: { type: 'string', minLength: 1 },
                  algorithm: { type: 'string', default: 'hmac-sha256' },
                  secret: { type: 'string', minLength: 1, description: 'base64' }
                }
              },
              action: {
                enum: ['zone', 'block', 'nxdomain', 'nodata', 'drop', 'passthru'],
                default: 'zone',
                description:
                  "zone: each trigger's own action; block: every rewriting trigger gets filterd's block answer (the block page explains it); nxdomain, nodata, drop: that answer instead; passthru: nothing enforced, hits only logged"
              },
              category: {
                type: 'integer',
                minimum: 0,
                maximum: 65535,
                description: "the category the feed's blocks are reported as (statistics, the block page's explanation)"
              }
            }
          }
        },
        'notify-listen': {
          ...listenAddress,
          description:
            "address (UDP and TCP) the feeds' primaries send NOTIFY to (RFC 1996), bound once per host by the dns role, which transfers the feeds into the store; unset: the feeds refresh at their SOA's refresh only"
        },
        'max-records': {
          type: 'integer',
          minimum: 1,
          default: 5000000,
          description:
            'records one feed may hold; a larger zone is refused whole (the previous copy stays). An IXFR counts the zone it leaves, not its changes'
        },
        'max-bytes': {
          type: 'integer',
          minimum: 1024,
          default: 1073741824,
          description: 'bytes one transfer or zone file may have; a larger one is refused whole'
        },
        'file-refresh': {
          type: 'integer',
          minimum: 1,
          default: 300,
          description: 'seconds between re-reads of a zone-file feed'
        },
        'transfer-timeout': {
          type: 'integer',
          minimum: 1,
          default: 30,
          description: 'seconds a transfer may stay silent before it is abandoned (the previous copy stays)'
        }
      }
    },
    rpz: {
      type: 'object',
      'x-roles': ['rpz'],
      additionalProperties: false,
      default: {},
      properties: {
        enabled: {
          type: 'boolean',
          default: false,
          description: 'run the rpz role (filterd all and filterd status leave it out while false)'
        },
        listen: {
          ...listenAddress,
          default: '127.0.0.1:5305',
          description: 'DNS address (TCP for transfers, UDP for SOA queries) the zones are served on'
        },
        'metrics-listen': {
          ...listenAddress,
          default: '127.0.0.1:8096',
          description: 'HTTP address of /health, /metrics and /zones (the zone list and serials)'
        },
        suffix: {
          type: 'string',
          minLength: 1,
          default: 'rpz.filterd',
          description:
            'zone names end in this: global.SUFFIX (the global black/whitelists), cat-N.SUFFIX (category N), user-NAME.SUFFIX'
        },
        categories: {
          type: 'array',
          items: { type: 'integer', minimum: 0, maximum: 65535 },
          default: [],
          description: 'categories served as zones; empty: every category the category database holds'
        },
        users: {
          type: 'boolean',
          default: false,
          description:
            "also serve one zone per user: its black/whitelists as QNAME triggers and its addresses as CLIENT-IP triggers (for resolvers that scope a zone to clients, e.g. BIND's views)"
        },
        'block-cname': {
          type: 'string',
          default: '',
          description:
            'a blocked name is a CNAME to this host (the block page host); empty: local data, the A/AAAA of proxy.blockpage-ip (NXDOMAIN when that is empty too)'
        },
        ttl: { type: 'integer', minimum: 0, maximum: 86400, default: 60, description: "TTL of the zones' records" },
        refresh: {
          type: 'integer',
          minimum: 1,
          default: 300,
          description: 'SOA refresh (s): how often secondaries poll besides NOTIFY'
        },
        retry: { type: 'integer', minimum: 1, default: 60, description: 'SOA retry (s)' },
        expire: { type: 'integer', minimum: 1, default: 604800, description: 'SOA expire (s)' },
        'journal-owners': {
          type: 'integer',
          minimum: 0,
          default: 1000000,
          description: 'changed names each zone remembers for IXFR; a secondary further behind gets a full AXFR'
        },
        notify: {
          type: 'array',
          items: listenAddress,
          default: [],
          description: 'secondaries (address:port) sent a NOTIFY (RFC 1996) when a zone changes'
        },
        'transfer-access': {
          ...accessRules,
          default: ['allow 127.0.0.0/8', 'allow ::1/128'],
          description: 'who may transfer the zones: ordered rules "allow CIDR|all" / "deny CIDR|all", first match wins'
        },
        'tcp-max-connections': {
          type: 'integer',
          minimum: 1,
          maximum: 100000,
          default: 256,
          description:
            'concurrent TCP connections to rpz.listen; one past it is closed on accept and counted (filterd_rpz_tcp_dropped_total): a secondary retries at its SOA retry'
        },
        'tcp-idle-timeout': {
          type: 'integer',
          minimum: 100,
          maximum: 600000,
          default: 30000,
          description:
            'milliseconds a transfer connection may go without a byte read or written (also a client that stopped reading its AXFR) before it is closed'
        },
        'tcp-message-timeout': {
          type: 'integer',
          minimum: 100,
          maximum: 600000,
          default: 5000,
          description:
            'milliseconds a client has to send the whole of a request once its first byte came (a slow client cannot hold a connection by trickling)'
        },
        'tsig-keys': {
          type: 'array',
          default: [],
          description: 'TSIG keys (RFC 8945); when any is set, every transfer must be signed with one',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['name', 'secret'],
            properties: {
              name: { type: 'string', minLength: 1 },
              algorithm: { type: 'string', default: 'hmac-sha256' },
              secret: { type: 'string', minLength: 1, description: 'base64' }
            }
          }
        },
        log: { ...logPath, default: '/var/log/filterd/rpz.log' },
        pid: { ...pidPath, default: '/run/filterd/rpz.pid' },
        'log-level': { ...logLevel, 'x-live': ['rpz'] }
      }
    }
  }
} as const
