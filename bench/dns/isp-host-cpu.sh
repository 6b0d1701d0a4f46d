#!/usr/bin/env bash
# CPU per query on the ISP-host data set (made by bench/dns/isp-host.sh with DATA=DIR): filterd's DNS
# processes and dnsdist (its 1M-name rule) in alternating rounds from the same client
# (bench/dns/multisrc.c), each round read from /proc: user and kernel µs per answered query, and q/s per
# CPU-second. Only the throughput part of isp-host.sh, so that builds can be compared quickly:
# FILTERD=path/to/dist/tools/filterd.js runs another build on the same store; BASE=path/to/dist/tools/filterd.js
# runs a second build beside it (its own ports, the same store), in the same alternating rounds.
# PERF=OUT.data NODE_FLAGS=--perf-basic-prof records a perf profile of filterd during the first round.
# WARM=SECONDS makes the warm-up round longer (3 s by default).
# POLICY=none runs filterd on an empty store instead (no users, lists or feed: every query judged and
# forwarded with nothing to find), the floor of its query path against the same dnsdist.
# Run: npm run build && DATA=DIR flock /tmp/bench.lock bash bench/dns/isp-host-cpu.sh [ROUNDS=5] [SECONDS=4] [PROCESSES=1] [ADDRESSES=1000]
# Prints one line per round and the medians; the last line is "filterd USER SYS | dnsdist USER SYS | ratio R"
# (µs per query, and filterd's q/s per CPU-second over dnsdist's).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-5} SECS=${2:-4} PROCS=${3:-1} USERS=${4:-1000}
: "${DATA:?DATA=DIR, a data set made by bench/dns/isp-host.sh}"
DIR=$DATA FILTERD=${FILTERD:-dist/tools/filterd.js}
UP=5590 KNOTF=5591 DNS=5592 DNSDIST=5596 BASE_DNS=5597
. bench/dns/common.sh
. bench/dns/knot.sh
. bench/dns/feed-knot.sh
bench_processes
[ -x "$DIR/multisrc" ] || gcc -O2 -o "$DIR/multisrc" bench/dns/multisrc.c
start_knot "$DIR" $UP
start_feed_knot "$DIR" "$DIR/knot-feed-cpu.log"
start_dnsdist_udp "$DIR" $DNSDIST $UP
# The same config with PROCS processes; with POLICY=none, on an empty store (DIR/empty-db) and no feed.
sed "s/\"processes\": [0-9]*/\"processes\": $PROCS/" "$DIR/filterd.yaml" >"$DIR/filterd-cpu.yaml"
PROBE=c0.cat0.example PROBE_ANSWER=192.0.2.1 # blocked by its category, so the store is read
if [ "${POLICY:-}" = none ]; then
  rm -rf "$DIR/empty-db"
  node -e 'const fs = require("fs"); const [file, db] = process.argv.slice(1); const c = JSON.parse(fs.readFileSync(file, "utf8"))
    delete c["rpz-feeds"]; c.common.db = db; fs.writeFileSync(file, JSON.stringify(c, null, 1))' "$DIR/filterd-cpu.yaml" "$DIR/empty-db"
  PROBE=www.site2.example PROBE_ANSWER= # forwarded: any address
fi
ENFORCED=$(enforced_count "$DIR/dns.log") ENFORCED_BASE=$(enforced_count "$DIR/dns-base.log")
node ${NODE_FLAGS:-} "$FILTERD" dns --config "$DIR/filterd-cpu.yaml" >>"$DIR/dns-cpu.out" 2>&1 & DNS_PID=$!; PIDS+=($DNS_PID)
if [ -n "${BASE:-}" ]; then # the second build: its own listen, metrics and NOTIFY ports, pid and log
  sed -e "s/127.0.0.1:$DNS/127.0.0.1:$BASE_DNS/; s/\\[::1\\]:$DNS/[::1]:$BASE_DNS/; s/127.0.0.1:5595/127.0.0.1:5598/; s/127.0.0.1:5593/127.0.0.1:5599/" \
    -e "s|$DIR/dns.pid|$DIR/dns-base.pid|; s|$DIR/dns.log|$DIR/dns-base.log|; s|$DIR/stats\"|$DIR/stats-base\"|" "$DIR/filterd-cpu.yaml" >"$DIR/filterd-base.yaml"
  node ${NODE_FLAGS:-} "$BASE" dns --config "$DIR/filterd-base.yaml" >>"$DIR/dns-base.out" 2>&1 & BASE_PID=$!; PIDS+=($BASE_PID)
fi
answers() {
  local a; a=$(dig +short +tries=1 +time=1 -b 127.16.0.0 @127.0.0.1 -p "$1" "$PROBE" A 2>/dev/null)
  [ -n "$a" ] && { [ -z "$PROBE_ANSWER" ] || [ "$a" = "$PROBE_ANSWER" ]; }
}
until answers $DNS; do kill -0 "$DNS_PID" || { tail -3 "$DIR/dns-cpu.out" >&2; exit 1; }; sleep 0.1; done
until answers $DNSDIST; do sleep 0.1; done
[ -z "${BASE:-}" ] || until answers $BASE_DNS; do kill -0 "$BASE_PID" || { tail -3 "$DIR/dns-base.out" >&2; exit 1; }; sleep 0.1; done
[ "$PROCS" -le 1 ] || until [ "$(pgrep -c -P "$DNS_PID" -f cluster-worker.js)" -ge "$PROCS" ]; do sleep 0.2; done
# The feed process transfers the feed again in the background after a start, its CPU counted with the
# server's (a child): the rounds come after it, as in isp-host.sh.
[ "${POLICY:-}" = none ] || until [ "$(enforced_count "$DIR/dns.log")" -gt "$ENFORCED" ]; do sleep 0.5; done
[ -z "${BASE:-}" ] || until [ "$(enforced_count "$DIR/dns-base.log")" -gt "$ENFORCED_BASE" ]; do sleep 0.5; done
all_pids() { echo "$DNS_PID"; pgrep -P "$DNS_PID" || true; }
base_pids() { echo "$BASE_PID"; pgrep -P "$BASE_PID" || true; }
ticks() { local u=0 s=0 p; for p in "$@"; do read -r a b < <(awk '{print $14, $15}' "/proc/$p/stat"); u=$((u + a)); s=$((s + b)); done; echo "$u $s"; }
round() { # port users seconds pids... -> "qps user_us sys_us qps_per_cpu_second lost"
  local port=$1 users=$2 secs=$3; shift 3
  local u0 s0 u1 s1 sent received elapsed
  read -r u0 s0 <<<"$(ticks "$@")"
  read -r sent received elapsed <<<"$("$DIR/multisrc" "$port" 127.16.0.0 "$users" "$DIR/queries.txt" "$secs" 100)"
  read -r u1 s1 <<<"$(ticks "$@")"
  awk -v s="$sent" -v r="$received" -v e="$elapsed" -v u=$((u1 - u0)) -v k=$((s1 - s0)) -v hz="$(getconf CLK_TCK)" 'BEGIN {
    printf "%.0f %.2f %.2f %.0f %d\n", r / e, u / hz * 1e6 / r, k / hz * 1e6 / r, r / ((u + k) / hz), s - r }'
}
# Warm-up: the addresses' snapshots and the names' caches (WARM seconds a build; a million addresses
# take about 20 s to be cached).
round $DNS "$USERS" "${WARM:-3}" $(all_pids) >/dev/null
round $DNSDIST "$USERS" 2 $(pgrep -f "dnsdist.*$DIR") >/dev/null
[ -z "${BASE:-}" ] || round $BASE_DNS "$USERS" "${WARM:-3}" $(base_pids) >/dev/null
F=() D=() B=()
for r in $(seq 1 "$ROUNDS"); do
  if [ -n "${PERF:-}" ] && [ "$r" = 1 ]; then # a profile of filterd's first round: PERF=OUT.data NODE_FLAGS=--perf-basic-prof
    perf record -q -g -o "$PERF" -p "$(all_pids | paste -sd,)" -- sleep "$SECS" 2>/dev/null & PERF_PID=$!
  fi
  F+=("$(round $DNS "$USERS" "$SECS" $(all_pids))")
  [ -z "${PERF_PID:-}" ] || { wait "$PERF_PID" || true; PERF_PID=; }
  D+=("$(round $DNSDIST "$USERS" "$SECS" $(pgrep -f "dnsdist.*$DIR"))")
  [ -z "${BASE:-}" ] || B+=("$(round $BASE_DNS "$USERS" "$SECS" $(base_pids))")
  echo "round $r: filterd ${F[-1]} | dnsdist ${D[-1]}${BASE:+ | base ${B[-1]:-}} (q/s, user µs, kernel µs a query, q/s per CPU-second, lost); load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
col() { local c=$1; shift; printf '%s\n' "$@" | cut -d' ' -f"$c" | median; }
RATIOS=()
for i in "${!F[@]}"; do RATIOS+=("$(awk -v a="$(echo "${F[$i]}" | cut -d' ' -f4)" -v b="$(echo "${D[$i]}" | cut -d' ' -f4)" 'BEGIN { printf "%.2f", a / b }')"); done
echo "ratio per round (filterd q/s per CPU-second / dnsdist's): ${RATIOS[*]}"
if [ -n "${BASE:-}" ]; then
  BR=()
  for i in "${!B[@]}"; do BR+=("$(awk -v a="$(echo "${B[$i]}" | cut -d' ' -f4)" -v b="$(echo "${D[$i]}" | cut -d' ' -f4)" 'BEGIN { printf "%.2f", a / b }')"); done
  echo "base ratio per round: ${BR[*]}"
  echo "base $(col 2 "${B[@]}") $(col 3 "${B[@]}") | ratio $(printf '%s\n' "${BR[@]}" | median)"
fi
echo "filterd $(col 2 "${F[@]}") $(col 3 "${F[@]}") | dnsdist $(col 2 "${D[@]}") $(col 3 "${D[@]}") | ratio $(printf '%s\n' "${RATIOS[@]}" | median)"
