#!/usr/bin/env bash
# The feed refresh on the ISP-host data set (made by bench/dns/isp-host.sh with DATA=DIR), again and
# again: each refresh has Knot load the next serial (50,000 changes: the 25,000 owners the last serial
# added out, 25,000 new ones in), sends the NOTIFY 0.1 s into round 8 of 15 one-second rounds from
# ADDRESSES subscriber addresses (after WARM=4 warm-up passes), and prints each round's q/s with the
# CPU each process took in it (the DNS fronts, their primary, the feed process, Knot) and the machine's
# (user, system, iowait), so a dip can be put down to the process that took the cores. Per refresh and
# as medians: the q/s of the 3 s from the NOTIFY (the IXFR is applied within them) against the 5 s
# before, the lowest of those seconds, and the 3 s after them as a control (the rounds' own swing). Only the refresh part of isp-host.sh.
# FILTERD=path/to/dist/tools/filterd.js runs another build; PERF=OUT.data NODE_FLAGS=--perf-basic-prof
# records a perf profile of the feed process for 3 s from the first NOTIFY.
# Run: npm run build && DATA=DIR flock /tmp/bench.lock bash bench/dns/isp-host-refresh.sh [REFRESHES=5] [ADDRESSES=100000]
set -euo pipefail
cd "$(dirname "$0")/../.."
REFRESHES=${1:-5} USERS=${2:-100000}
: "${DATA:?DATA=DIR, a data set made by bench/dns/isp-host.sh}"
DIR=$DATA FILTERD=${FILTERD:-dist/tools/filterd.js}
UP=5590 KNOTF=5591 DNS=5592 NOTIFY=5593 METRICS=5595
. bench/dns/common.sh
. bench/dns/knot.sh
. bench/dns/feed-knot.sh
bench_processes
[ -x "$DIR/multisrc" ] || gcc -O2 -o "$DIR/multisrc" bench/dns/multisrc.c
start_knot "$DIR" $UP
start_feed_knot "$DIR" "$DIR/knot-feed-refresh.log"
soa() { dig +short +tries=1 +time=2 @127.0.0.1 -p $KNOTF feed.rpz SOA | awk '{print $3}'; }
SERIAL=$(soa)
BEFORE=$(enforced_count "$DIR/dns.log" "$SERIAL")
node ${NODE_FLAGS:-} "$FILTERD" dns --config "$DIR/filterd.yaml" >>"$DIR/dns-refresh.out" 2>&1 & DNS_PID=$!; PIDS+=($DNS_PID)
answers() { [ "$(dig +short +tries=1 +time=1 -b 127.16.0.0 @127.0.0.1 -p $DNS c0.cat0.example A 2>/dev/null)" = 192.0.2.1 ]; }
until answers; do kill -0 "$DNS_PID" || { tail -3 "$DIR/dns-refresh.out" >&2; exit 1; }; sleep 0.1; done
# The primary transfers the feed again in the background after a start: the rounds come after it.
until [ "$(enforced_count "$DIR/dns.log" "$SERIAL")" -gt "$BEFORE" ]; do sleep 0.5; done
PROCS=$(grep -o '"processes": [0-9]*' "$DIR/filterd.yaml" | grep -o '[0-9]*$')
[ "$PROCS" -le 1 ] || until [ "$(pgrep -c -P "$DNS_PID" -f cluster-worker.js)" -ge "$PROCS" ]; do sleep 0.2; done
FRONTS=$(pgrep -P "$DNS_PID" -f cluster-worker.js | tr '\n' ' ') || FRONTS=$DNS_PID
FEEDP=$(pgrep -P "$DNS_PID" -f feed-process.js)
machine() { awk '/^cpu / {print $2 + $3, $4 + $7 + $8, $6}' /proc/stat; } # user, system (irq, softirq), iowait
round() { # -> "q/s"
  local out sent received elapsed
  out=$("$DIR/multisrc" $DNS 127.16.0.0 "$USERS" "$DIR/queries.txt" "$1" 100)
  read -r sent received elapsed <<<"$out"
  awk -v r="$received" -v e="$elapsed" 'BEGIN { printf "%.0f", r / e }'
}
for pass in $(seq 1 "${WARM:-4}"); do echo "warm-up pass $pass: $(round $((USERS / 50000 + 2))) q/s" >&2; done
CORES=$(nproc)
echo "fronts: $FRONTS; primary $DNS_PID; feed process $FEEDP; Knot (feed) $KNOTF_PID" >&2
echo "round q/s | CPU %: fronts primary feed-process knot-feed | machine %: user system iowait | feed process anonymous MB"
WIN=() LOW=() CTL=()
for n in $(seq 1 "$REFRESHES"); do
  NEXT=$((SERIAL + 1))
  # Serial NEXT: the 25,000 owners the last serial added replaced by 25,000 of its own.
  sed -e "1,5s/ 2 86400 / $NEXT 86400 /" -e "s/^new\([0-9]*\)\.changed/new${NEXT}x\1.changed/" \
    "$DIR/feed-2.zone" >"$DIR/knot-feed/feed.rpz.zone.tmp"
  mv "$DIR/knot-feed/feed.rpz.zone.tmp" "$DIR/knot-feed/feed.rpz.zone"
  knotc -s "$DIR/knot-feed/knot.sock" zone-reload feed.rpz >/dev/null
  until [ "$(soa)" = "$NEXT" ]; do sleep 0.5; done
  feed_knot_idle
  BEFORE=$(enforced_count "$DIR/dns.log" "$NEXT")
  echo "refresh $n: serial $SERIAL -> $NEXT"
  # 15 one-second rounds: 1-2 settle, 3-7 the base, the NOTIFY 0.1 s into round 8, 8-10 the apply's
  # window (it is enforced within it: the log's time says), 11-15 after.
  Q=()
  for r in $(seq 1 15); do
    if [ "$r" = 8 ]; then
      (sleep 0.1; send_notify $NOTIFY; date +%s%3N >"$DIR/notify.t") &
      # PERF=OUT.data NODE_FLAGS=--perf-basic-prof: a profile of the feed process from the NOTIFY on, first refresh.
      [ -z "${PERF:-}" ] || [ "$n" != 1 ] || (perf record -F 499 -g -p "$FEEDP" -o "$PERF" -- sleep 3 >/dev/null 2>&1 &)
    fi
    f0=() ; for p in $FRONTS; do f0+=("$(proc_ticks "$p")"); done
    p0=$(proc_ticks "$DNS_PID") e0=$(proc_ticks "$FEEDP") k0=$(proc_ticks "$KNOTF_PID"); read -r u0 s0 w0 <<<"$(machine)"
    q=$(round 1)
    Q+=("$q")
    f=""; i=0; for p in $FRONTS; do f+="$(( $(proc_ticks "$p") - f0[i] )) "; i=$((i + 1)); done
    read -r u1 s1 w1 <<<"$(machine)"
    anon=$(awk '/^Anonymous:/ {printf "%d", $2 / 1024}' "/proc/$FEEDP/smaps_rollup")
    echo "$r $q | ${f}$(( $(proc_ticks "$DNS_PID") - p0 )) $(( $(proc_ticks "$FEEDP") - e0 )) $(( $(proc_ticks "$KNOTF_PID") - k0 )) | $(( (u1 - u0) / CORES )) $(( (s1 - s0) / CORES )) $(( (w1 - w0) / CORES )) | $anon"
  done
  until [ "$(enforced_count "$DIR/dns.log" "$NEXT")" -gt "$BEFORE" ]; do sleep 0.2; done
  APPLIED=$(enforced_at "$DIR/dns.log" "$NEXT")
  read -r win low ctl <<<"$(printf '%s\n' "${Q[@]}" | awk '
    NR >= 3 && NR <= 7 { b += $1 } NR >= 8 && NR <= 10 { w += $1; if (l == "" || $1 < l) l = $1 } NR >= 11 && NR <= 13 { c += $1 }
    END { b /= 5; printf "%.2f %.2f %.2f", w / 3 / b, l / b, c / 3 / b }')"
  WIN+=("$win") LOW+=("$low") CTL+=("$ctl")
  echo "refresh $n: enforced $((APPLIED - $(cat "$DIR/notify.t"))) ms after the NOTIFY; q/s in the 3 s from it ${win}x the 5 s before, lowest second ${low}x; the 3 s after them (control) ${ctl}x"
  SERIAL=$NEXT
done
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "feed refresh (IXFR of 50,000 changes), $REFRESHES refreshes from $USERS addresses: q/s in the 3 s from the NOTIFY, median $(printf '%s\n' "${WIN[@]}" | median)x the 5 s before (each: ${WIN[*]}); lowest second, median $(printf '%s\n' "${LOW[@]}" | median)x (each: ${LOW[*]}); the 3 s after them (control), median $(printf '%s\n' "${CTL[@]}" | median)x (each: ${CTL[*]}) (goal: dip <= 5%)"
echo "node $(node -v); $CORES cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
