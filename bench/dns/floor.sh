#!/usr/bin/env bash
# The floor of the DNS p99 measurement at 20k q/s on this machine (the goal: p99 at most 2 ms
# beside the import): which part of the tail comes from the set-up rather than from the server. dnsdist
# 1.7 (configured as bench/dns/run.sh does) and filterd's dns role (native UDP, inline, 1 process; the
# data set of bench/dns/setup.ts) run side by side; no import. Each round measures every SET-UP below
# against both servers, one after the other, SECONDS each:
#   dnsperf        dnsperf -c 16 -q 100 -Q 20000 -v | bench/dns/stats.ts, the popular names (7 in 8
#                  forwarded to Knot), nothing pinned: bench/stats/dns-beside-import.sh's set-up until now
#   dnsperf-c1     the same with one socket (-c 1 -T 1)
#   local          dnsperf as in the first, only names of the block list (both servers answer them
#                  themselves: dnsdist's SpoofAction, filterd's block; the upstream is out of the path)
#   local-pinned   as local, the server under test on CPU 0, dnsperf and Knot on CPU 1
#   ratesrc        bench/dns/ratesrc.c (one thread, open loop, answers stamped by the kernel), local names
#   ratesrc-pinned as ratesrc, the server on CPU 0, the generator and Knot on CPU 1
#   ratesrc-mixed  as ratesrc-pinned with the popular names (Knot back in the path)
#   local-rt       as local, with dnsperf, Knot and both servers at real-time priority (SCHED_FIFO 20,
#                  `chrt -f`): the other work of the machine (other sessions' builds) no longer delays them
#   ratesrc-genrt  as ratesrc, with the generator and Knot at real-time priority, the servers not
#   ratesrc-rt     as ratesrc, with the generator, Knot and both servers at real-time priority
#   ratesrc-rt-pinned  as ratesrc-rt, the server on CPU 0, the generator and Knot on CPU 1
# Usage: bench/dns/floor.sh [SECONDS=5] [ROUNDS=3] [SET-UPS="all of the above"]   (after `npm run build`)
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-5}
ROUNDS=${2:-3}
SETUPS=${3:-dnsperf dnsperf-c1 local local-pinned ratesrc ratesrc-pinned ratesrc-mixed local-rt ratesrc-genrt ratesrc-rt ratesrc-rt-pinned}
DIR=$(mktemp -d /tmp/filterd-dns-floor.XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$DIR"' EXIT
KNOT=5390 DNSDIST=5391 FILTERD=5396
node dist/bench/dns/setup.js "$DIR" $KNOT >&2
. bench/dns/knot.sh
. bench/dns/common.sh
start_knot "$DIR" $KNOT
KNOT_PID=${PIDS[-1]}
start_dnsdist_udp "$DIR" $DNSDIST $KNOT
DNSDIST_PID=${PIDS[-1]}
node dist/tools/filterd.js dns --config "$DIR/native-inline-p1.yaml" >/dev/null 2>&1 &
PIDS+=($!)
FILTERD_PID=$!
for port in $FILTERD $DNSDIST; do
  for _ in $(seq 1 360); do dig +tries=1 +time=1 @127.0.0.1 -p $port probe.example A >/dev/null 2>&1 && break; sleep 0.5; done
done
awk 'NR % 10 == 1 { print $1 " A" }' "$DIR/blocklist.txt" | head -n 100000 >"$DIR/queries-local.txt"
gcc -O2 -o "$DIR/ratesrc" bench/dns/ratesrc.c

ALL_CPUS=0-$(($(nproc) - 1))
pin() { local p; for p in $2 $(pgrep -P "$2" 2>/dev/null); do taskset -a -p -c "$1" "$p" >/dev/null; done; } # cpus pid
place() { # pinned?: the servers on CPU 0 and Knot on CPU 1, or every process on every CPU
  if [ "$1" = 1 ]; then pin 0 $DNSDIST_PID; pin 0 $FILTERD_PID; pin 1 $KNOT_PID
  else pin "$ALL_CPUS" $DNSDIST_PID; pin "$ALL_CPUS" $FILTERD_PID; pin "$ALL_CPUS" $KNOT_PID; fi
}
realtime() { # servers? knot?: each at SCHED_FIFO 20 (1) or SCHED_OTHER (0)
  local p
  for p in $DNSDIST_PID $FILTERD_PID; do
    if [ "$1" = 1 ]; then chrt -f -a -p 20 "$p"; else chrt -o -a -p 0 "$p"; fi
  done
  if [ "$2" = 1 ]; then chrt -f -a -p 20 "$KNOT_PID"; else chrt -o -a -p 0 "$KNOT_PID"; fi
}
measure() { # set-up port: one JSON line (qps, lost, p50, p99, p999)
  local names=$DIR/queries-local.txt gen=(taskset -c "$ALL_CPUS")
  case $1 in dnsperf | dnsperf-c1 | ratesrc-mixed) names=$DIR/queries.txt ;; esac
  case $1 in *-pinned | ratesrc-mixed) place 1; gen=(taskset -c 1) ;; *) place 0 ;; esac
  case $1 in
    *-rt*) realtime 1 1; gen=(chrt -f 20 "${gen[@]}") ;;
    *-genrt) realtime 0 1; gen=(chrt -f 20 "${gen[@]}") ;;
    *) realtime 0 0 ;;
  esac
  case $1 in
    dnsperf-c1) "${gen[@]}" dnsperf -s 127.0.0.1 -p "$2" -d "$names" -c 1 -T 1 -q 100 -t 1 -l "$SECS" -Q 20000 -v 2>/dev/null | node dist/bench/dns/stats.js ;;
    dnsperf | local | local-pinned | local-rt) "${gen[@]}" dnsperf -s 127.0.0.1 -p "$2" -d "$names" -c 16 -q 100 -t 1 -l "$SECS" -Q 20000 -v 2>/dev/null | node dist/bench/dns/stats.js ;;
    ratesrc*) "${gen[@]}" "$DIR/ratesrc" "$2" "$names" 20000 "$SECS" ;;
  esac
}
for port in $FILTERD $DNSDIST; do # warm-up
  dnsperf -s 127.0.0.1 -p $port -d "$DIR/queries.txt" -c 16 -q 100 -t 1 -l 2 >/dev/null 2>&1 || true
done
RESULTS=()
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq 1 "$ROUNDS"); do
  for s in $SETUPS; do
    for server in dnsdist filterd; do
      port=$FILTERD
      [ $server = dnsdist ] && port=$DNSDIST
      RESULTS+=("$s|$server|$(measure "$s" $port)|$(cut -d' ' -f1 /proc/loadavg)")
      echo "round $r ${RESULTS[-1]}" >&2
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "node $(node -v); dnsperf $(dpkg-query -W -f='${Version}' dnsperf 2>/dev/null); dnsdist $(dpkg-query -W -f='${Version}' dnsdist 2>/dev/null); $(nproc) cores; ${SECS} s phases, $ROUNDS rounds"
printf '%s\n' "${RESULTS[@]}" | SETUPS="$SETUPS" node -e '
const rows = require("fs").readFileSync(0, "utf8").trim().split("\n").map((l) => { const [setup, server, q, load] = l.split("|"); return { setup, server, q: JSON.parse(q), load } })
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : +((s[n / 2 - 1] + s[n / 2]) / 2).toFixed(3) }
console.log("| set-up | server | p50 ms | p99 ms (median) | p99 ms (each round) | p99.9 ms | lost | answered q/s | load average (each round) |")
console.log("|---|---|---:|---:|---|---:|---:|---:|---|")
for (const setup of process.env.SETUPS.split(" ")) for (const server of ["dnsdist", "filterd"]) {
  const rs = rows.filter((r) => r.setup === setup && r.server === server)
  if (rs.length === 0) continue
  console.log(`| ${setup} | ${server} | ${med(rs.map((r) => r.q.p50))} | ${med(rs.map((r) => r.q.p99))} | ${rs.map((r) => r.q.p99).join(" / ")} | ${med(rs.map((r) => r.q.p999))} | ${med(rs.map((r) => r.q.lost))} | ${med(rs.map((r) => r.q.qps))} | ${rs.map((r) => r.load).join(" / ")} |`)
}
'
