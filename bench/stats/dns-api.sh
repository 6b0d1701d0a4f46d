# Sourced by the statistics benchmarks that run the DNS server beside the api role's importer.
# start_dns_api DIR DNS_PORT API_PORT: the config bench/dns/setup.ts wrote in DIR (native UDP, inline,
# one process) for the dns role, and the same plus an api listener for the api role; starts both in the
# background, appends their pids to the caller's PIDS array, sets API_PID, and waits until both answer.
# Environment: THREADS (stats.duckdb-threads), PRIORITY (stats.import-priority), BOOST_AFTER
# (stats.live-boost-after, seconds; 0 = the lift off), NICE (the api role
# under `nice -n`), DNS_NICE (the dns role under `nice -n`), IONICE=1 (the api role under `ionice -c3`:
# its disk I/O, every thread's, at idle priority), API_LOG_LEVEL (the api role's log-level, e.g. info for
# its "statistics imported" lines).
start_dns_api() {
  local dir=$1 dns=$2 api=$3
  node -e '
const [file, out, port] = process.argv.slice(1)
const c = JSON.parse(require("fs").readFileSync(file, "utf8"))
// The taxonomy shipped with the demo: the bench folder has only the category table.
c.datafiles = { ...c.datafiles, cats: require("path").resolve("conf") }
if (process.env.THREADS) c.stats["duckdb-threads"] = Number(process.env.THREADS)
if (process.env.PRIORITY) c.stats["import-priority"] = process.env.PRIORITY
if (process.env.BOOST_AFTER) c.stats["live-boost-after"] = Number(process.env.BOOST_AFTER)
c.api = { listen: `127.0.0.1:${port}`, log: file + ".api.log", pid: file + ".api.pid" }
if (process.env.API_LOG_LEVEL) c.api["log-level"] = process.env.API_LOG_LEVEL
require("fs").writeFileSync(out, JSON.stringify(c, null, 1))
' "$dir/native-inline-p1.yaml" "$dir/api.yaml" "$api"
  nice -n "${DNS_NICE:-0}" node dist/tools/filterd.js dns --config "$dir/native-inline-p1.yaml" >/dev/null 2>&1 & PIDS+=($!)
  local io=()
  [ -n "${IONICE:-}" ] && io=(ionice -c3)
  "${io[@]}" nice -n "${NICE:-0}" node dist/tools/filterd.js api --config "$dir/api.yaml" >/dev/null 2>"$dir/api.err" & PIDS+=($!)
  API_PID=$!
  for _ in $(seq 1 120); do dig +tries=1 +time=1 @127.0.0.1 -p "$dns" probe.example A >/dev/null 2>&1 && break; sleep 0.5; done
  for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$api/health" >/dev/null && break; sleep 0.5; done
  kill -0 "$API_PID" 2>/dev/null || { echo "the api role did not start:" >&2; cat "$dir/api.err" >&2; exit 1; }
}
