#!/usr/bin/env bash
# DNS latency while the statistics import runs at full rate beside it (issue 24's goal: p99 at 20k q/s
# at most 2 ms). One filterd DNS server (native UDP, inline, 1 process; the 1M-name table and 10,000
# users of bench/dns/setup.ts) forwarding to Knot, and the api role importing its statistics folder.
# Alternating phases of SECONDS each, ROUNDS times:
#   quiet:  the api process is stopped (SIGSTOP): nothing imports; dnsperf sends 20k q/s;
#   import: the api process runs and a feeder keeps two pre-written files of ROWS rows waiting in the
#           statistics folder (the importer never idles); dnsperf sends 20k q/s.
# The table gives p50/p99/p99.9 per phase (medians over the rounds) and the import rate reached.
# Usage: bench/stats/dns-beside-import.sh [SECONDS=20] [ROUNDS=2] [ROWS=200000] [MAX_RATE=400000]   (after `npm run build`)
# Environment: THREADS sets stats.duckdb-threads of the api role (default: the config's default); NICE
# starts the api role under `nice -n NICE` (the import as background work); PRIORITY sets
# stats.import-priority (idle, background, normal; default: the config's default, idle); DNS_NICE starts
# the DNS server under `nice -n DNS_NICE` (a negative value raises it above everything else).
# MAX_RATE: the import rate (rows/s) the pre-written files are sized for; past it the feeder runs dry.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-20}
ROUNDS=${2:-2}
ROWS=${3:-200000}
MAX_RATE=${4:-400000}
for tool in dnsperf knotd; do
  command -v "$tool" >/dev/null || { echo "installing dnsperf knot"; apt-get install -y dnsperf knot >/dev/null; break; }
done
DIR=$(mktemp -d /tmp/filterd-dns-import.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT
KNOT=5390 DNS=5396 API=5489
node dist/bench/dns/setup.js "$DIR" $KNOT >&2
. bench/dns/knot.sh
start_knot "$DIR" $KNOT
. bench/stats/dns-api.sh
start_dns_api "$DIR" $DNS $API
STATS=$DIR/stats

# Enough pre-written files for every import phase at up to MAX_RATE rows/s.
FILES=$(( (SECS * MAX_RATE / ROWS + 2) * ROUNDS ))
mkdir -p "$DIR/pregen"
node dist/bench/stats/csv-fill.js "$DIR/pregen" "$FILES" "$ROWS" >&2
QUEUE=($(ls "$DIR/pregen"/queries-*.csv))
NEXT=0

# Rows of the pre-written files the importer has taken (moved in and since deleted).
MOVED=()
taken() { local n=0 f; for f in "${MOVED[@]}"; do [ -e "$STATS/$(basename "$f")" ] || n=$((n + 1)); done; echo $((n * ROWS)); }
feed() { # keeps two pre-written files waiting until killed
  local waiting
  while :; do
    waiting=$(ls "$STATS" | grep -c -F -f <(printf '%s\n' "${QUEUE[@]##*/}") || true)
    if [ "$waiting" -lt 2 ] && [ "$NEXT" -lt "${#QUEUE[@]}" ]; then
      mv "${QUEUE[$NEXT]}" "$STATS/"; echo "${QUEUE[$NEXT]}"; NEXT=$((NEXT + 1))
    else sleep 0.1; fi
  done
}
load() { dnsperf -s 127.0.0.1 -p $DNS -d "$DIR/queries.txt" -c 16 -q 100 -t 1 -l "$SECS" -Q 20000 -v 2>/dev/null | node dist/bench/dns/stats.js; }

RESULTS=()
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
dnsperf -s 127.0.0.1 -p $DNS -d "$DIR/queries.txt" -c 16 -q 100 -t 1 -l 2 >/dev/null 2>&1 || true   # warm-up
for r in $(seq 1 "$ROUNDS"); do
  kill -STOP $API_PID
  RESULTS+=("quiet|$(load)|0")
  kill -CONT $API_PID
  before=$(taken)
  feed > "$DIR/fed-$r.txt" & FEEDER=$!
  t0=$(date +%s%N)
  q=$(load)
  kill $FEEDER; wait $FEEDER 2>/dev/null || true
  t1=$(date +%s%N)
  while read -r f; do MOVED+=("$f"); done < "$DIR/fed-$r.txt"
  NEXT=${#MOVED[@]}
  # Rows taken during the phase (a file still waiting at its end is not counted).
  RESULTS+=("import|$q|$(( ($(taken) - before) * 1000000000 / (t1 - t0) ))")
  # Let the importer finish what is waiting before the next quiet phase.
  for _ in $(seq 1 600); do [ "$(ls "$STATS" | grep -c '^queries-')" -le 1 ] && break; sleep 0.5; done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "api role: nice ${NICE:-0}, duckdb-threads ${THREADS:-default}, import-priority ${PRIORITY:-default}; dns role: nice ${DNS_NICE:-0}"
echo "node $(node -v); dnsperf $(dpkg-query -W -f='${Version}' dnsperf 2>/dev/null); $(nproc) cores; files of $ROWS rows; ${SECS} s phases"
printf '%s\n' "${RESULTS[@]}" | node -e '
const rows = require("fs").readFileSync(0, "utf8").trim().split("\n").map((l) => { const [phase, q, rate] = l.split("|"); return { phase, q: JSON.parse(q), rate: Number(rate) } })
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
console.log("| phase | rounds | p50 ms | p99 ms | p99.9 ms | lost | answered q/s | import rows/s (each round) |")
console.log("|---|---:|---:|---:|---:|---:|---:|---|")
for (const phase of ["quiet", "import"]) {
  const rs = rows.filter((r) => r.phase === phase)
  console.log(`| ${phase} | ${rs.length} | ${med(rs.map((r) => r.q.p50))} | ${med(rs.map((r) => r.q.p99))} | ${med(rs.map((r) => r.q.p999))} | ${med(rs.map((r) => r.q.lost))} | ${med(rs.map((r) => r.q.qps))} | ${rs.map((r) => r.rate).join(" / ")} |`)
}
'
