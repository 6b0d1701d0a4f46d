#!/usr/bin/env bash
# DNS server benchmark: filterd (inline, pool, inline x2 processes) vs dnsdist with an equivalent
# 1M-name SuffixMatchNode block rule vs a bare Node UDP relay (the ceiling), all forwarding to Knot
# DNS serving a wildcard root zone. Loopback only; every load run is time-bounded (dnsperf -l).
# Usage: bench/dns/run.sh [SECONDS_MAX=10] [ROUNDS=3] [LAYOUT=free]   (from the repository root, after `npm run build`)
# ONLY=REGEX runs only the rows whose name matches (the relay and dnsdist rows always run: the ratios need them).
# Rows "dnstap" are the native inline servers with proxy.dnstap on, to fstrm_capture writing to /dev/null
# (Debian's fstrm-bin; it shares the 2 cores, as a collector on the same host would).
# Rows "native" use proxy.io: native (the batched recvmmsg/sendmmsg addon, SO_REUSEPORT per process);
# the others proxy.io: dgram. "native relay" is the bare relay on the addon (its ceiling).
# LAYOUT free: nothing pinned, everything shares the 2 cores (what a 2-core box gives a multi-process server).
# LAYOUT split: dnsperf and Knot on CPU 0, the server under test alone on CPU 1 (every thread and child of
# it, re-pinned after start), the perf study's per-core comparison.
# Each round runs every server in turn (A B C D E, A B C D E, …) and the table shows each figure's
# median over the rounds, so a slow spell of this shared machine hits every server alike.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
MAXS=${1:-10}
ROUNDS=${2:-3}
LAYOUT=${3:-free}
case "$LAYOUT" in free|split) ;; *) echo "LAYOUT must be free or split" >&2; exit 2 ;; esac
for tool in dnsperf knotd dnsdist; do
  command -v "$tool" >/dev/null || { echo "installing dnsperf knot dnsdist"; apt-get install -y dnsperf knot dnsdist >/dev/null; break; }
done
DIR=$(mktemp -d /tmp/filterd-dnsbench.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$DIR"; }
trap cleanup EXIT
KNOT=5390 DNSDIST=5391 RELAY=5392 NRELAY=5399
ONLY=${ONLY:-.}
node dist/bench/dns/setup.js "$DIR" $KNOT >&2

# Knot: authoritative for "." with "* A 192.0.2.53" (the upstream stand-in of perf-study).
. bench/dns/knot.sh
start_knot "$DIR" $KNOT

. bench/dns/common.sh
start_dnsdist_udp "$DIR" $DNSDIST $KNOT
DNSDIST_PID=$!
node dist/bench/dns/relay.js $RELAY $KNOT & PIDS+=($!)
RELAY_PID=$!
node dist/bench/dns/native-relay.js $NRELAY $KNOT & PIDS+=($!)
NRELAY_PID=$!
command -v fstrm_capture >/dev/null || { echo "installing fstrm-bin"; apt-get install -y fstrm-bin >/dev/null; }
fstrm_capture -t protobuf:dnstap.Dnstap -u "$DIR/dnstap.sock" -w /dev/null 2>"$DIR/fstrm_capture.log" & PIDS+=($!)
CAPTURE_PID=$!
declare -A FPID
for cfg in inline-p1 pool-p1 inline-p2 native-inline-p1 native-pool-p1 native-inline-p2 native-inline-p1-dnstap native-inline-p2-dnstap; do
  node dist/tools/filterd.js dns --config "$DIR/$cfg.yaml" >/dev/null 2>&1 & PIDS+=($!)
  FPID[$cfg]=$!
done

wait_port() { for _ in $(seq 1 120); do dig +tries=1 +time=1 @127.0.0.1 -p "$1" probe.example A >/dev/null 2>&1 && return 0; sleep 0.5; done; echo "port $1 never answered" >&2; return 1; }
for p in $KNOT $DNSDIST $RELAY $NRELAY 5393 5394 5395 5396 5397 5398 5400 5401; do wait_port $p; done

# Every thread of a process and of its children onto one CPU (knotd pins its own workers, so
# `taskset` at start is not enough; cluster children are forked after start).
pin() { local p; for p in $2 $(pgrep -P "$2" 2>/dev/null); do taskset -a -p -c "$1" "$p" >/dev/null; done; }
LOAD=()
if [ "$LAYOUT" = split ]; then
  pin 0 "$(pgrep -f "knotd -c $DIR" | head -1)"
  for p in $DNSDIST_PID $RELAY_PID $NRELAY_PID "${FPID[@]}"; do pin 1 "$p"; done
  LOAD=(taskset -c 0)
fi

# Sanity: a categorized (blocked) popular name is blocked by filterd and dnsdist, not by the relay.
BLOCKED=$(head -1 "$DIR/blocklist.txt")
echo "sanity ($BLOCKED): dnsdist $(dig +short @127.0.0.1 -p $DNSDIST "$BLOCKED") filterd $(dig +short @127.0.0.1 -p 5393 "$BLOCKED") filterd native $(dig +short @127.0.0.1 -p 5396 "$BLOCKED") relay $(dig +short @127.0.0.1 -p $RELAY "$BLOCKED")" >&2

# CPU ticks (utime+stime, 1/100 s) of a process and all its descendants (cluster children).
ticks() {
  local total=0 p
  for p in $1 $(pgrep -P "$1" 2>/dev/null); do
    [ "$p" = "$1" ] || { total=$((total + $(ticks "$p"))); continue; }
    [ -r "/proc/$p/stat" ] && total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo $total
}
run() { # name port pid
  "${LOAD[@]}" dnsperf -s 127.0.0.1 -p "$2" -d "$DIR/queries.txt" -c 16 -q 100 -t 1 -l 2 >/dev/null 2>&1 || true   # warm-up
  local max q20 t0 t1 out m0 m1
  m0=$(ticks "$3")
  max=$("${LOAD[@]}" dnsperf -s 127.0.0.1 -p "$2" -d "$DIR/queries.txt" -c 16 -q 100 -t 1 -l "$MAXS" -v 2>/dev/null | node dist/bench/dns/stats.js)
  m1=$(ticks "$3")
  t0=$(ticks "$3")
  out=$("${LOAD[@]}" dnsperf -s 127.0.0.1 -p "$2" -d "$DIR/queries.txt" -c 16 -q 100 -t 1 -l 8 -Q 20000 -v 2>/dev/null)
  t1=$(ticks "$3")
  q20=$(echo "$out" | node dist/bench/dns/stats.js)
  echo "$1|$max|$q20|$((t1 - t0))|$((m1 - m0))"
}
row() { [[ "$1" =~ $ONLY ]] && RESULTS+=("$(run "$@")") || true; }
RESULTS=()
echo "layout: $LAYOUT" >&2
echo "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for _ in $(seq 1 "$ROUNDS"); do
  RESULTS+=("$(run 'node relay (ceiling)' $RELAY $RELAY_PID)")
  RESULTS+=("$(run 'dnsdist 1M SuffixMatchNode' $DNSDIST $DNSDIST_PID)")
  row 'native relay (addon ceiling)' $NRELAY $NRELAY_PID
  row 'filterd dgram inline, 1 process' 5393 "${FPID[inline-p1]}"
  row 'filterd dgram pool (1 worker, batch 64)' 5394 "${FPID[pool-p1]}"
  row 'filterd dgram inline, 2 processes' 5395 "${FPID[inline-p2]}"
  row 'filterd native inline, 1 process' 5396 "${FPID[native-inline-p1]}"
  row 'filterd native pool (1 worker, batch 64)' 5397 "${FPID[native-pool-p1]}"
  row 'filterd native inline, 2 processes' 5398 "${FPID[native-inline-p2]}"
  row 'filterd native inline, 1 process, dnstap' 5400 "${FPID[native-inline-p1-dnstap]}"
  row 'filterd native inline, 2 processes, dnstap' 5401 "${FPID[native-inline-p2-dnstap]}"
done
echo "load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# dnstap: frames the collector took, and what the servers dropped (their /metrics snapshots).
sleep 6   # a fresh metrics snapshot
for cfg in native-inline-p1-dnstap native-inline-p2-dnstap; do
  echo "dnstap $cfg: $(cat "$DIR/stats-$cfg.yaml"/metrics/dns-*.json 2>/dev/null | grep -o '"dnstap[A-Za-z]*":[0-9]*' | tr '\n' ' ')" >&2
done
kill "${FPID[native-inline-p1-dnstap]}" "${FPID[native-inline-p2-dnstap]}" 2>/dev/null || true
sleep 3
kill -INT "$CAPTURE_PID" 2>/dev/null || true
sleep 1
echo "fstrm_capture: $(grep -h 'wrote' "$DIR/fstrm_capture.log" | tail -1)" >&2

echo
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) x $(nproc); node $(node -v); dnsperf $(dpkg-query -W -f='${Version}' dnsperf 2>/dev/null); dnsdist $(dnsdist --version 2>/dev/null | head -1 | awk '{print $2}'); knot $(dpkg-query -W -f='${Version}' knot 2>/dev/null)"
printf '%s\n' "${RESULTS[@]}" | node -e '
const raw = require("fs").readFileSync(0, "utf8").trim().split("\n").map((l) => { const [n, a, b, c, d] = l.split("|"); return { n, max: JSON.parse(a), q20: JSON.parse(b), cpu: Number(c), cpuMax: Number(d) } })
// Median of every figure over the rounds, per server (first-seen order).
const med = (xs) => { const s = xs.map(Number).sort((a, b) => a - b); return s[Math.floor(s.length / 2)] }
const names = [...new Set(raw.map((r) => r.n))]
const rows = names.map((n) => {
  const rs = raw.filter((r) => r.n === n)
  const pick = (get) => med(rs.map(get))
  return {
    n, rounds: rs.length,
    max: { qps: pick((r) => r.max.qps), p50: pick((r) => r.max.p50), p99: pick((r) => r.max.p99) },
    q20: { p50: pick((r) => r.q20.p50), p99: pick((r) => r.q20.p99), p999: pick((r) => r.q20.p999), lost: pick((r) => r.q20.lost), samples: pick((r) => r.q20.samples) },
    cpu: pick((r) => r.cpu * 10000 / Math.max(1, r.q20.samples)),
    cpuMax: pick((r) => r.cpuMax * 10000 / Math.max(1, r.max.samples)),
    qpsAll: rs.map((r) => r.max.qps).join(" / ")
  }
})
const relay = rows[0].max.qps, dd = rows[1].max.qps
console.log(`medians of ${rows[0].rounds} rounds`)
console.log("| server | qps (max) | vs dnsdist | vs relay | p50 / p99 ms at max | p50 / p99 / p99.9 ms @20k qps | lost @20k | server CPU µs/query at max | server CPU µs/query @20k | qps of each round |")
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for (const r of rows) console.log(`| ${r.n} | ${r.max.qps} | ${(r.max.qps / dd).toFixed(2)}x | ${(100 * (r.max.qps / relay - 1)).toFixed(0)}% | ${r.max.p50} / ${r.max.p99} | ${r.q20.p50} / ${r.q20.p99} / ${r.q20.p999} | ${r.q20.lost} | ${r.cpuMax.toFixed(1)} | ${r.cpu.toFixed(1)} | ${r.qpsAll} |`)
'
