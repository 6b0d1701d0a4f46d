#!/usr/bin/env bash
# One ISP host: SUBSCRIBERS subscribers with two addresses each (IPv4, IPv6), one in ten with a schedule
# of its own, three list subscriptions (LIST_NAMES names), an RPZ feed of FEED_RECORDS records from Knot,
# the 1M-name category table, `proxy.processes` = the cores (bench/dns/isp-host-setup.ts writes it all
# into the store in bulk). Measures, and prints each goal with its figure:
#   start     `filterd dns` until it answers from that store (the feed already in it), and the first
#             start that transfers the feed;
#   q/s       from SUBSCRIBERS distinct addresses against 1,000 (bench/dns/multisrc.c), alternating
#             rounds, and dnsdist (its 1M-name rule, no per-subscriber policy) from the same client:
#             answered q/s, the server's CPU (all its processes, /proc) and q/s per CPU-second;
#   memory    /proc/PID/smaps_rollup of each DNS process, anonymous and file-backed, before and after
#             both addresses of every subscriber were cached (the warm-up: each in its process with
#             `udp-steering: address`, in every process with `flow`), and the
#             growth per address;
#   refresh   1 s rounds while an IXFR of 50,000 changes is applied (Knot loads serial 2 first; the
#             NOTIFY is sent by hand 0.1 s into round 8 of 15): the 3 s from it against the 5 s before;
#   write     API writes until every process enforces them (bench/dns/isp-host-write.ts).
# Run: npm run build && flock /tmp/bench.lock bash bench/dns/isp-host.sh [SUBSCRIBERS=1000000] [FEED_RECORDS=5000000] [LIST_NAMES=1000000] [ROUNDS=3] [SECONDS=6]
# DATA=DIR keeps the data set in DIR (made when missing) instead of a temp dir removed at the end (a kept
# data set has taken serial 2 of the feed: the refresh part then waits for ever; bench/dns/isp-host-cpu.sh
# measures its throughput again). FILTERD=path/to/dist/tools/filterd.js runs the DNS role of another build;
# NODE_FLAGS=... gives node flags to the DNS role (its front processes inherit them). STEERING=flow runs the
# fronts with `proxy.udp-steering: flow` (the kernel spreads each address's queries over every process, so
# each caches every address) instead of `address` (each address reaches one process; the default here).
# RELAY=1 sends every query from one relay, 127.0.0.1, with the subscriber's address as its EDNS Client
# Subnet (`proxy.client-subnet: true`; dnsdist gets the same datagrams).
set -euo pipefail
cd "$(dirname "$0")/../.."
SUBS=${1:-1000000} FEED=${2:-5000000} LISTN=${3:-1000000} ROUNDS=${4:-3} SECS=${5:-6}
PROCS=$(nproc)
UP=5590 KNOTF=5591 DNS=5592 NOTIFY=5593 API=5594 METRICS=5595 DNSDIST=5596
. bench/dns/common.sh
. bench/dns/knot.sh
. bench/dns/feed-knot.sh
bench_processes
if [ -n "${DATA:-}" ]; then DIR=$DATA; mkdir -p "$DIR"; else
  DIR=$(mktemp -d /tmp/filterd-isp.XXXXXX)
  trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$DIR"' EXIT
fi
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
gcc -O2 -o "$DIR/multisrc" bench/dns/multisrc.c
if [ ! -f "$DIR/filterd.yaml" ]; then
  t0=$(now)
  node dist/bench/dns/isp-host-setup.js "$DIR" "$SUBS" "$FEED" "$LISTN" "$PROCS" "$UP,$KNOTF,$DNS,$NOTIFY,$API,$METRICS" >&2
  echo "data generated in $(since "$t0") s; store $(du -sh "$DIR/db" | cut -f1)" >&2
fi
STEERING=${STEERING:-address} RELAY=${RELAY:-0}
node -e 'const fs = require("fs"); const f = process.argv[1]; const c = JSON.parse(fs.readFileSync(f, "utf8"));
  c.proxy["udp-steering"] = process.argv[2]; c.proxy["client-subnet"] = process.argv[3] === "1"
  fs.writeFileSync(f, JSON.stringify(c, null, 1))' "$DIR/filterd.yaml" "$STEERING" "$RELAY"
# multisrc's sources: each subscriber's own addresses, or one relay naming them in ECS.
if [ "$RELAY" = 1 ]; then V4=ecs:127.16.0.0 V6=ecs6; else V4=127.16.0.0 V6=v6; fi
echo "proxy.udp-steering: $STEERING; relay: $RELAY" >&2
start_knot "$DIR" $UP
t0=$(now)
start_feed_knot "$DIR" "$DIR/knot-feed.log"
echo "Knot serves the feed after $(since "$t0") s" >&2
start_dnsdist_udp "$DIR" $DNSDIST $UP

# Subscriber 0 (127.16.0.0) filters Gambling, the category of c0.cat0.example; h0.feed0.example is in the feed.
answers() { # port -> true when the port answers with the whole store: the table for a subscriber, and the feed
  [ "$(dig +short +tries=1 +time=1 -b 127.16.0.0 @127.0.0.1 -p "$1" c0.cat0.example A 2>/dev/null)" = 192.0.2.1 ] &&
    dig +tries=1 +time=1 -b 127.16.0.0 @127.0.0.1 -p "$1" h0.feed0.example A 2>/dev/null | grep -q 'status: NXDOMAIN'
}
start_dns() { node ${NODE_FLAGS:-} "${FILTERD:-dist/tools/filterd.js}" dns --config "$DIR/filterd.yaml" >>"$DIR/dns.out" 2>&1 & DNS_PID=$!; PIDS+=($DNS_PID); }
t0=$(now)
start_dns
until answers $DNS; do sleep 0.05; done
FIRST_START=$(since "$t0")
kill "$DNS_PID"; wait "$DNS_PID" 2>/dev/null || true
until answers $DNSDIST >/dev/null 2>&1 || dig +short +tries=1 +time=1 @127.0.0.1 -p $DNSDIST c0.cat0.example A | grep -q 192.0.2.1; do sleep 0.2; done
ENFORCED=$(enforced_count "$DIR/dns.log")
t0=$(now)
start_dns
until answers $DNS; do sleep 0.02; done
START=$(since "$t0")
echo "start: first (feed transferred) ${FIRST_START} s, again with the store full ${START} s" >&2
# The restarted primary answers from the stored feed at once but transfers it again in the background
# (it keeps no copy of its own): the rounds measure the host after that, not the transfer's CPU.
until [ "$(enforced_count "$DIR/dns.log")" -gt "$ENFORCED" ]; do sleep 0.5; done
echo "the restart's background transfer done after $(since "$t0") s" >&2

fronts() { pgrep -P "$DNS_PID" -f cluster-worker.js || echo "$DNS_PID"; } # the front processes, or the one process
feedp() { pgrep -P "$DNS_PID" -f feed-process.js; } # the process that follows the feed (dns/feeds-child.ts)
all_pids() { echo "$DNS_PID"; pgrep -P "$DNS_PID" || true; }
smaps() { awk '/^Rss:/ {r=$2} /^Anonymous:/ {a=$2} END {printf "%d %d", a/1024, (r-a)/1024}' "/proc/$1/smaps_rollup"; }
round() { # port first users seconds pids... -> "qps cpu_share qps_per_cpu_second lost"
  local port=$1 first=$2 users=$3 secs=$4; shift 4
  local t0 t1 out sent received elapsed
  t0=$(proc_ticks "$@")
  out=$("$DIR/multisrc" "$port" "$first" "$users" "$DIR/queries.txt" "$secs" 100)
  t1=$(proc_ticks "$@")
  read -r sent received elapsed <<<"$out"
  awk -v s="$sent" -v r="$received" -v e="$elapsed" -v t=$((t1 - t0)) 'BEGIN { c = t / 100 / e; printf "%.0f %.2f %.0f %d\n", r / e, c, r / e / (c > 0 ? c : 1), s - r }'
}
# The front processes answer as they come up: wait for all of them before reading their memory.
[ "$PROCS" -le 1 ] || until [ "$(pgrep -c -P "$DNS_PID" -f cluster-worker.js)" -ge "$PROCS" ]; do sleep 0.2; done
echo "DNS processes: $(fronts | tr '\n' ' ')" >&2
declare -A MEM0
for p in $(fronts); do MEM0[$p]=$(smaps "$p"); done
# Warm-up: every subscriber's two addresses (IPv4 and IPv6) cached. With `udp-steering: address` each
# address reaches one process, so one pass caches it; with `flow` the kernel spreads queries over the
# processes by address and source port, and each multisrc run has a port of its own (as real clients
# change theirs), so each pass sends every address to one process or the other. Passes go on until the
# processes' policy caches (their /metrics) hold 98% of the addresses (`address`: together; `flow`: each
# of them), at most 12 of them.
ip -6 route replace local 2001:db8::/32 dev lo
cached() { curl -s "http://127.0.0.1:$METRICS/metrics" | awk '/^filterd_dns_policy_cached_addresses/ {printf "%s ", $2}'; }
t0=$(now)
for pass in $(seq 1 12); do
  WARM=$(round $DNS $V4 "$SUBS" $((SUBS / 50000 + 2)) $(all_pids))
  WARM6=$(round $DNS $V6 "$SUBS" $((SUBS / 50000 + 2)) $(all_pids))
  sleep 6 # the metrics snapshots are written every 5 s
  CACHED=$(cached)
  echo "warm-up pass $pass from all $SUBS IPv4 addresses: $WARM, IPv6: $WARM6 (q/s, CPUs busy, q/s per CPU-second, lost); cached per process: $CACHED" >&2
  echo "$CACHED" | awk -v n="$SUBS" -v steer="$STEERING" '{ s = 0; for (i = 1; i <= NF; i++) { s += $i; if (steer == "flow" && $i < 0.98 * 2 * n) exit 1 } if (s < 0.98 * 2 * n) exit 1 }' && break
done
echo "warm-up done in $(since "$t0") s" >&2
round $DNS $V4 1000 2 $(all_pids) >/dev/null
round $DNSDIST $V4 1000 2 $(pgrep -f "dnsdist.*$DIR") >/dev/null
M=() F=() D=()
for r in $(seq 1 "$ROUNDS"); do
  M+=("$(round $DNS $V4 "$SUBS" "$SECS" $(all_pids))")
  F+=("$(round $DNS $V4 1000 "$SECS" $(all_pids))")
  D+=("$(round $DNSDIST $V4 1000 "$SECS" $(pgrep -f "dnsdist.*$DIR"))")
  echo "round $r: $SUBS addresses ${M[-1]} | 1,000 addresses ${F[-1]} | dnsdist ${D[-1]} (q/s, CPUs busy, q/s per CPU-second, lost); load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
col() { local c=$1; shift; printf '%s\n' "$@" | cut -d' ' -f"$c" | median; }
MQ=$(col 1 "${M[@]}") FQ=$(col 1 "${F[@]}") DQ=$(col 1 "${D[@]}")
MC=$(col 3 "${M[@]}") FC=$(col 3 "${F[@]}") DC=$(col 3 "${D[@]}")
MEMLINES=""
# The processes' mean of cached addresses (the metrics name processes by index, not pid).
PER=$(echo "$CACHED" | awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; printf "%d", s / NF }')
for p in $(fronts); do
  read -r a0 f0 <<<"${MEM0[$p]:-0 0}"
  read -r a1 f1 <<<"$(smaps "$p")"
  MEMLINES+="  process $p: anonymous $a0 -> $a1 MB, file-backed $f0 -> $f1 MB; growth per cached address $(awk -v d=$((a1 - a0)) -v n="$PER" 'BEGIN { printf "%.0f", d * 1048576 / n }') B"$'\n'
done

# Feed refresh: Knot takes serial 2 in without telling filterd (its config sends no NOTIFY), so Knot's own
# work is done before the rounds; the NOTIFY is sent by hand in them.
ENFORCED_BEFORE=$(enforced_count "$DIR/dns.log" 2)
cp "$DIR/feed-2.zone" "$DIR/knot-feed/feed.rpz.zone"
t0=$(now)
knotc -s "$DIR/knot-feed/knot.sock" zone-reload feed.rpz >/dev/null
until [ "$(dig +short +tries=1 +time=2 @127.0.0.1 -p $KNOTF feed.rpz SOA | awk '{print $3}')" = 2 ]; do sleep 0.5; done
echo "Knot loaded serial 2 (50,000 changes) in $(since "$t0") s" >&2
feed_knot_idle
# 15 one-second rounds: 1-2 settle, 3-7 the base, the NOTIFY 0.1 s into round 8, 8-10 the apply's window
# (it is enforced within it: the log's time says), 11-13 a control window of the same length after it
# (the rounds' own swing), as bench/dns/isp-host-refresh.sh does for several refreshes.
R=()
for r in $(seq 1 15); do
  if [ "$r" = 8 ]; then
    (sleep 0.1; T_NOTIFY=$(now); send_notify $NOTIFY; echo "$T_NOTIFY" > "$DIR/notify.t") &
  fi
  R+=("$(round $DNS $V4 "$SUBS" 1 $(all_pids) | cut -d' ' -f1)")
done
until [ "$(enforced_count "$DIR/dns.log" 2)" -gt "$ENFORCED_BEFORE" ]; do sleep 0.2; done
APPLIED=$(enforced_at "$DIR/dns.log" 2)
REFRESH_MS=$(awk -v a="$(cat "$DIR/notify.t")" -v b="${APPLIED:-0}" 'BEGIN { printf "%.0f", b - a * 1000 }')
read -r WINDOW LOWEST CONTROL <<<"$(printf '%s\n' "${R[@]}" | awk '
  NR >= 3 && NR <= 7 { b += $1 } NR >= 8 && NR <= 10 { w += $1; if (l == "" || $1 < l) l = $1 } NR >= 11 && NR <= 13 { c += $1 }
  END { b /= 5; printf "%.2f %.2f %.2f", w / 3 / b, l / b, c / 3 / b }')"
echo "refresh rounds (q/s, 1 s each, NOTIFY 0.1 s into round 8): ${R[*]}" >&2

# Policy change: the api role on the same store.
node dist/tools/filterd.js api --config "$DIR/filterd.yaml" >/dev/null 2>&1 & PIDS+=($!)
until curl -sf "http://127.0.0.1:$API/config/" >/dev/null; do sleep 0.2; done
WRITE=$(node dist/bench/dns/isp-host-write.js $API $DNS "$SUBS" 100 16)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo
echo "ISP host: $SUBS subscribers ($((2 * SUBS)) addresses, $((SUBS / 10)) schedules of their own), $LISTN list names in 3 subscriptions, $FEED feed records from Knot, 1M-name table, $PROCS processes, udp-steering $STEERING, relay $RELAY; medians of $ROUNDS rounds of ${SECS} s"
echo "q/s from $SUBS addresses $MQ, from 1,000 $FQ: $(ratio "$MQ" "$FQ")x (goal >= 0.8x)"
echo "q/s per CPU-second (per core): filterd from $SUBS addresses $MC, from 1,000 $FC; dnsdist $DC: $(ratio "$MC" "$DC")x and $(ratio "$FC" "$DC")x (goal >= 1.0x); dnsdist's q/s $DQ"
echo "memory per DNS process (goal: anonymous <= 400 MB), before -> after the warm-up; addresses cached per process: $CACHED"
printf '%s' "$MEMLINES"
echo "  the feed process (follows the feed, holds its compact copy; answers nothing): $(smaps "$(feedp)" | awk '{ printf "anonymous %s MB, file-backed %s MB", $1, $2 }')"
echo "start with the store full: $START s (goal <= 10 s); the first start, feed transferred: $FIRST_START s"
echo "feed refresh (IXFR of 50,000 changes, applied ${REFRESH_MS} ms after the NOTIFY): q/s in the 3 s from the NOTIFY ${WINDOW}x the 5 s before, lowest second ${LOWEST}x; the 3 s after them (control) ${CONTROL}x (goal: dip <= 5%)"
echo "$WRITE (goal p99 <= 100 ms)"
echo "node $(node -v); $PROCS cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
