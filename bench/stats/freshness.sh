#!/usr/bin/env bash
# From query to report (the goal: at most 10 s, p99), with the default intervals
# (stats.rotate 3 s, stats.import-interval 2 s). One filterd DNS server (native UDP, inline, 1 process;
# the data set of bench/dns/setup.ts) forwarding to Knot, and the api role importing its statistics
# folder, as two processes on one host. bench/stats/freshness-probe.ts sends PROBES never-asked names
# from 127.0.0.2 (user `probe`), one every INTERVAL ms, and times each from its answer to the first
# poll of /users/probe/stat/raw that shows it. Two phases: the DNS server otherwise idle, then under
# RATE q/s from dnsperf (user `bench`, the 100k names), so every import carries RATE x the interval rows.
# Usage: bench/stats/freshness.sh [PROBES=100] [INTERVAL_MS=500] [RATE=20000]   (after `npm run build`)
# Environment: PRIORITY, THREADS, BOOST_AFTER, NICE, DNS_NICE as in bench/stats/dns-api.sh; KEEP=1 keeps the
# folder; STRESS=N runs `stress-ng --cpu N` at nice 0 through both phases (a host whose cores other work
# keeps busy, reproducibly).
set -euo pipefail
cd "$(dirname "$0")/../.."
PROBES=${1:-100}
INTERVAL=${2:-500}
RATE=${3:-20000}
for tool in dnsperf knotd; do
  command -v "$tool" >/dev/null || { echo "installing dnsperf knot"; apt-get install -y dnsperf knot >/dev/null; break; }
done
DIR=$(mktemp -d /tmp/filterd-freshness.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "kept $DIR" >&2 || rm -rf "$DIR"
}
trap cleanup EXIT
KNOT=5391 DNS=5396 API=5490
node dist/bench/dns/setup.js "$DIR" $KNOT >&2
. bench/dns/knot.sh
start_knot "$DIR" $KNOT
. bench/stats/dns-api.sh
start_dns_api "$DIR" $DNS $API
SECS=$(( PROBES * INTERVAL / 1000 + 15 ))
if [ -n "${STRESS:-}" ]; then
  command -v stress-ng >/dev/null || apt-get install -y stress-ng >/dev/null
  stress-ng --cpu "$STRESS" --cpu-method loop --quiet & PIDS+=($!)
  sleep 1
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
idle=$(node dist/bench/stats/freshness-probe.js $DNS "http://127.0.0.1:$API" "$PROBES" "$INTERVAL")
dnsperf -s 127.0.0.1 -p $DNS -d "$DIR/queries.txt" -c 16 -q 100 -l "$SECS" -Q "$RATE" >"$DIR/dnsperf.out" 2>&1 & LOAD=$!
sleep 3
loaded=$(node dist/bench/stats/freshness-probe.js $DNS "http://127.0.0.1:$API" "$PROBES" "$INTERVAL")
wait $LOAD || true
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
qps=$(awk '/Queries per second:/ {print int($4)}' "$DIR/dnsperf.out")
echo "node $(node -v); $(nproc) cores; $PROBES probes every $INTERVAL ms; stats.rotate 3 s, stats.import-interval 2 s, import-priority ${PRIORITY:-default}, live-boost-after ${BOOST_AFTER:-default}; stress-ng --cpu ${STRESS:-0}"
echo "| phase | probes sent / answered / seen | p50 ms | p90 ms | p99 ms | max ms |"
echo "|---|---|---:|---:|---:|---:|"
for phase in "idle DNS server|$idle" "beside ${qps} q/s answered (asked $RATE)|$loaded"; do
  node -e 'const [name, j] = process.argv[1].split("|"); const r = JSON.parse(j)
console.log(`| ${name} | ${r.sent} / ${r.answered} / ${r.seen} | ${r.p50} | ${r.p90} | ${r.p99} | ${r.max} |`)' "$phase"
done
