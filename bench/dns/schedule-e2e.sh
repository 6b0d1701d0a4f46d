#!/usr/bin/env bash
# End-to-end DNS throughput with schedules: 100,000 users each with a two-window schedule
# against 100,000 users without, each told apart by its source address, through the real DNS server
# (native UDP, inline, 1 process) with Knot as the upstream. Two servers on one store (one per side, see
# schedule-e2e-setup.ts), loaded in alternating rounds by bench/dns/multisrc.c (every query from the
# next user's address, 100 in flight); per round: answered queries per second and the server's CPU
# time per answered query (/proc utime+stime). Medians over the rounds.
# Run: npm run build && flock /tmp/bench.lock bash bench/dns/schedule-e2e.sh [ROUNDS=5] [SECONDS=6] [USERS=100000] [DISTINCT=1000]
# (ONE=1: both sides on one server process, its proxy.policy-cache-addresses sized for both; AA=1: the users without schedules on both servers.)
set -euo pipefail
ROUNDS=${1:-5} SECS=${2:-6} USERS=${3:-100000} DISTINCT=${4:-1000}
DIR=$(mktemp -d /tmp/filterd-sched-e2e.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$DIR"; }
trap cleanup EXIT
KNOT=5490 PLAIN=5491 SCHED=5492
gcc -O2 -o "$DIR/multisrc" bench/dns/multisrc.c
node dist/bench/dns/schedule-e2e-setup.js "$DIR" $KNOT $PLAIN "$USERS" "$DISTINCT" >&2
. bench/dns/knot.sh
start_knot "$DIR" $KNOT
node dist/tools/filterd.js dns --config "$DIR/plain.yaml" >/dev/null 2>&1 & PIDS+=($!)
PLAIN_PID=$!
node dist/tools/filterd.js dns --config "$DIR/scheduled.yaml" >/dev/null 2>&1 & PIDS+=($!)
SCHED_PID=$!
# ONE=1: both sides query the first server (same process; the setup sizes its policy cache for 2 x USERS).
IDLE_PID=$SCHED_PID
if [ "${ONE:-0}" = 1 ]; then SCHED=$PLAIN SCHED_PID=$PLAIN_PID; fi
# AA=1: the users without schedules on both servers, a check of how much the two processes differ by themselves.
SCHED_FROM=127.129.0.0
if [ "${AA:-0}" = 1 ]; then SCHED_FROM=127.1.0.0; fi
wait_port() { for _ in $(seq 1 120); do dig +tries=1 +time=1 @127.0.0.1 -p "$1" probe.example A >/dev/null 2>&1 && return 0; sleep 0.5; done; echo "port $1 never answered" >&2; return 1; }
for p in $KNOT $PLAIN $SCHED; do wait_port $p; done
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# A social network's name, from a scheduled user and a plain one: shows whether the rules are open now.
SOCIAL=www.site1.example
echo "now $(date -u +%H:%M) UTC; $SOCIAL from a scheduled user: $(dig +short -b 127.129.0.5 @127.0.0.1 -p $SCHED $SOCIAL A) (192.0.2.1 = blocked, the windows open), from a plain user: $(dig +short -b 127.1.0.5 @127.0.0.1 -p $PLAIN $SOCIAL A)" >&2
round() { # port first-address pid -> "qps cpu_us_per_query lost"
  local t0 t1 out
  t0=$(ticks "$3")
  out=$("$DIR/multisrc" "$1" "$2" "$USERS" "$DIR/queries.txt" "$SECS" 100)
  t1=$(ticks "$3")
  read -r sent received elapsed <<<"$out"
  awk -v s="$sent" -v r="$received" -v e="$elapsed" -v t=$((t1 - t0)) 'BEGIN { printf "%.0f %.2f %d\n", r / e, t * 10000 / r, s - r }'
}
# Warm-up: every user's snapshot built once on each server (one query from each address, and more).
round $PLAIN 127.1.0.0 $PLAIN_PID >/dev/null
round $SCHED $SCHED_FROM $SCHED_PID >/dev/null
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
P=() S=()
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then
    P+=("$(round $PLAIN 127.1.0.0 $PLAIN_PID)"); S+=("$(round $SCHED $SCHED_FROM $SCHED_PID)")
  else
    S+=("$(round $SCHED $SCHED_FROM $SCHED_PID)"); P+=("$(round $PLAIN 127.1.0.0 $PLAIN_PID)")
  fi
  echo "round $r: without schedules ${P[-1]} | with ${S[-1]} (q/s, server CPU µs/query, lost)" >&2
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# With ONE=1 the second server only answered the start probe: its RSS against the first's is about
# the cost of the policy snapshots of both sides' addresses.
rss() { awk '/VmRSS/ { print $2 }' "/proc/$1/status"; }
echo "server RSS, KiB: queried $(rss $PLAIN_PID), the other $(rss $IDLE_PID)" >&2
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
pq=$(printf '%s\n' "${P[@]}" | cut -d' ' -f1 | median) sq=$(printf '%s\n' "${S[@]}" | cut -d' ' -f1 | median)
pc=$(printf '%s\n' "${P[@]}" | cut -d' ' -f2 | median) sc=$(printf '%s\n' "${S[@]}" | cut -d' ' -f2 | median)
awk -v pq="$pq" -v sq="$sq" -v pc="$pc" -v sc="$sc" -v n="$ROUNDS" -v u="$USERS" 'BEGIN {
  printf "%d users each side, medians of %d rounds: q/s without schedules %d, with %d (%+.1f%%); server CPU per query %.2f µs, %.2f µs (%+.1f%%)\n", u, n, pq, sq, (sq - pq) * 100 / pq, pc, sc, (sc - pc) * 100 / pc }'
echo "node $(node -v); $(nproc) cores"
