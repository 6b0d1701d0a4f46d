#!/usr/bin/env bash
# DNS throughput with a large RPZ feed loaded against the same names as a category table built from
# a data file, in the same run: two filterd dns servers (native UDP, inline, one process) that differ
# only in where the names come from, both forwarding misses to Knot DNS (a wildcard root zone).
# dnsperf (UDP, loopback) asks each in turn, ROUNDS times (A B A B …); the medians and their ratio.
# Usage: bench/rpz/feed-dns.sh [RECORDS=3000000] [SECONDS=15] [ROUNDS=3]   (after `npm run build`)
# The data set (files, the category database by build-db) is slow to make and is no measurement:
# `SETUP_ONLY=DIR bench/rpz/feed-dns.sh RECORDS` makes it in DIR, and `DATA=DIR bench/rpz/feed-dns.sh
# RECORDS SECONDS ROUNDS` measures on it (so only the measurement need hold the benchmark lock).
set -euo pipefail
cd "$(dirname "$0")/../.."
RECORDS=${1:-3000000}
SECS=${2:-15}
ROUNDS=${3:-3}
KNOT=5390 FEED=5410 TABLE=5411
setup() {
  local t0; t0=$(date +%s)
  node dist/bench/rpz/feed-dns-setup.js "$1" "$RECORDS" $KNOT $FEED $TABLE >&2
  node dist/tools/filterd.js build-db --config "$1/table.yaml" --quiet >&2
  echo "setup and build-db: $(( $(date +%s) - t0 )) s" >&2
}
if [ -n "${SETUP_ONLY:-}" ]; then mkdir -p "$SETUP_ONLY"; setup "$SETUP_ONLY"; exit 0; fi
PIDS=()
if [ -n "${DATA:-}" ]; then
  DIR=$DATA
  cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
else
  DIR=$(mktemp -d /tmp/filterd-rpz-dns.XXXXXX)
  cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$DIR"; }
  setup "$DIR"
fi
trap cleanup EXIT
. bench/dns/knot.sh
start_knot "$DIR" $KNOT
node dist/tools/filterd.js dns --config "$DIR/table.yaml" >/dev/null 2>&1 & PIDS+=($!)
TABLE_PID=$!
t0=$(date +%s)
node dist/tools/filterd.js dns --config "$DIR/feed.yaml" >/dev/null 2>&1 & PIDS+=($!)
FEED_PID=$!
wait_port() { for _ in $(seq 1 600); do dig +tries=1 +time=1 @127.0.0.1 -p "$1" probe.example A >/dev/null 2>&1 && return 0; sleep 0.5; done; echo "port $1 never answered" >&2; return 1; }
for p in $KNOT $TABLE $FEED; do wait_port $p; done
echo "feed server answering $(( $(date +%s) - t0 )) s after its start (the feed loaded first)" >&2
HIT=$(sed -n 1p "$DIR/queries.txt" | cut -d' ' -f1) WILD=$(sed -n 3p "$DIR/queries.txt" | cut -d' ' -f1)
MISS=$(sed -n 2p "$DIR/queries.txt" | cut -d' ' -f1)
for p in $FEED $TABLE; do
  echo "sanity :$p $HIT $(dig +short @127.0.0.1 -p $p "$HIT" | tr '\n' ' ')/ $WILD $(dig @127.0.0.1 -p $p "$WILD" | grep -o 'status: [A-Z]*') $(dig +short @127.0.0.1 -p $p "$WILD" | tr '\n' ' ')/ $MISS $(dig +short @127.0.0.1 -p $p "$MISS" | tr '\n' ' ')" >&2
done
rss() { awk '/VmRSS/ {print int($2/1024) " MB"}' "/proc/$1/status"; }
qps() {
  dnsperf -s 127.0.0.1 -p "$1" -d "$DIR/queries.txt" -c 16 -q 100 -t 1 -l 2 >/dev/null 2>&1 || true # warm-up
  dnsperf -s 127.0.0.1 -p "$1" -d "$DIR/queries.txt" -c 16 -q 100 -t 1 -l "$SECS" 2>/dev/null |
    awk '/Queries per second/ {print int($4)}'
}
F=() T=()
for r in $(seq 1 "$ROUNDS"); do
  F+=("$(qps $FEED)")
  T+=("$(qps $TABLE)")
  echo "round $r: feed ${F[-1]} q/s, table ${T[-1]} q/s; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
MF=$(median "${F[@]}") MT=$(median "${T[@]}")
echo "records $RECORDS, ${SECS}s x $ROUNDS rounds: feed $MF q/s (RSS $(rss $FEED_PID)), table from data file $MT q/s (RSS $(rss $TABLE_PID)); feed/table $(awk -v a="$MF" -v b="$MT" 'BEGIN {printf "%.3f", a/b}'); load $(cut -d' ' -f1-3 /proc/loadavg)"
