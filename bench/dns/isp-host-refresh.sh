#!/usr/bin/env bash
# The feed refresh on the ISP-host data set (made by bench/dns/isp-host.sh with DATA=DIR), again and
# again: each refresh has Knot load the next serial (50,000 changes: the 25,000 owners the last serial
# added out, 25,000 new ones in), sends the NOTIFY at the start of round 4 of 12 one-second rounds from
# ADDRESSES subscriber addresses, and prints each round's q/s with the CPU each process took in it
# (the DNS fronts, the primary that follows the feed, Knot) and the machine's (user, system, iowait),
# so a dip can be put down to the process that took the cores. Only the refresh part of isp-host.sh.
# FILTERD=path/to/dist/tools/filterd.js runs another build; PERF=OUT.data NODE_FLAGS=--perf-basic-prof
# records a perf profile of the primary for 5 s from the first NOTIFY.
# Run: npm run build && DATA=DIR flock /tmp/bench.lock bash bench/dns/isp-host-refresh.sh [REFRESHES=3] [ADDRESSES=100000]
set -euo pipefail
cd "$(dirname "$0")/../.."
REFRESHES=${1:-3} USERS=${2:-100000}
: "${DATA:?DATA=DIR, a data set made by bench/dns/isp-host.sh}"
DIR=$DATA FILTERD=${FILTERD:-dist/tools/filterd.js}
UP=5590 KNOTF=5591 DNS=5592 NOTIFY=5593 METRICS=5595
. bench/dns/common.sh
. bench/dns/knot.sh
bench_processes
[ -x "$DIR/multisrc" ] || gcc -O2 -o "$DIR/multisrc" bench/dns/multisrc.c
start_knot "$DIR" $UP
knotd -c "$DIR/knot-feed/knot.conf" 2>"$DIR/knot-feed-refresh.log" & KNOTF_PID=$!; PIDS+=($KNOTF_PID)
until grep -q 'loaded, serial' "$DIR/knot-feed-refresh.log"; do sleep 0.2; done
soa() { dig +short +tries=1 +time=2 @127.0.0.1 -p $KNOTF feed.rpz SOA | awk '{print $3}'; }
SERIAL=$(soa)
enforced() { local n; n=$(grep -c "serial $1 enforced" "$DIR/dns.log" 2>/dev/null) || true; echo "${n:-0}"; }
BEFORE=$(enforced "$SERIAL")
node ${NODE_FLAGS:-} "$FILTERD" dns --config "$DIR/filterd.yaml" >>"$DIR/dns-refresh.out" 2>&1 & DNS_PID=$!; PIDS+=($DNS_PID)
answers() { [ "$(dig +short +tries=1 +time=1 -b 127.16.0.0 @127.0.0.1 -p $DNS c0.cat0.example A 2>/dev/null)" = 192.0.2.1 ]; }
until answers; do kill -0 "$DNS_PID" || { tail -3 "$DIR/dns-refresh.out" >&2; exit 1; }; sleep 0.1; done
# The primary transfers the feed again in the background after a start: the rounds come after it.
until [ "$(enforced "$SERIAL")" -gt "$BEFORE" ]; do sleep 0.5; done
PROCS=$(grep -o '"processes": [0-9]*' "$DIR/filterd.yaml" | grep -o '[0-9]*$')
[ "$PROCS" -le 1 ] || until [ "$(pgrep -c -P "$DNS_PID")" -ge "$PROCS" ]; do sleep 0.2; done
FRONTS=$(pgrep -P "$DNS_PID" | tr '\n' ' ')
[ -n "$FRONTS" ] || FRONTS=$DNS_PID
ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo $t; }
machine() { awk '/^cpu / {print $2 + $3, $4 + $7 + $8, $6}' /proc/stat; } # user, system (irq, softirq), iowait
round() { # -> "q/s"
  local out sent received elapsed
  out=$("$DIR/multisrc" $DNS 127.16.0.0 "$USERS" "$DIR/queries.txt" "$1" 100)
  read -r sent received elapsed <<<"$out"
  awk -v r="$received" -v e="$elapsed" 'BEGIN { printf "%.0f", r / e }'
}
for pass in 1 2 3 4; do echo "warm-up pass $pass: $(round 4) q/s" >&2; done
echo "fronts: $FRONTS; primary $DNS_PID; Knot (feed) $KNOTF_PID" >&2
echo "round q/s | CPU %: fronts primary knot-feed | machine %: user system iowait | primary anonymous MB"
for n in $(seq 1 "$REFRESHES"); do
  NEXT=$((SERIAL + 1))
  # Serial NEXT: the 25,000 owners the last serial added replaced by 25,000 of its own.
  sed -e "1,5s/ 2 86400 / $NEXT 86400 /" -e "s/^new\([0-9]*\)\.changed/new${NEXT}x\1.changed/" \
    "$DIR/feed-2.zone" >"$DIR/knot-feed/feed.rpz.zone.tmp"
  mv "$DIR/knot-feed/feed.rpz.zone.tmp" "$DIR/knot-feed/feed.rpz.zone"
  knotc -s "$DIR/knot-feed/knot.sock" zone-reload feed.rpz >/dev/null
  until [ "$(soa)" = "$NEXT" ]; do sleep 0.5; done
  # Knot goes on working for several seconds after it answers with the new serial (its journal): the
  # feed's primary is another host in production, so the rounds start once it is idle here.
  k=$(ticks "$KNOTF_PID"); sleep 1
  until [ $(( $(ticks "$KNOTF_PID") - k )) -le 2 ]; do k=$(ticks "$KNOTF_PID"); sleep 1; done
  BEFORE=$(enforced "$NEXT")
  echo "refresh $n: serial $SERIAL -> $NEXT"
  for r in $(seq 1 12); do
    if [ "$r" = 4 ]; then
      (sleep 0.1; node --input-type=module -e "
        import dnsPacket from 'dns-packet'; import { createSocket } from 'node:dgram'
        const s = createSocket('udp4'); const m = dnsPacket.encode({ type: 'query', id: 7, flags: (4 << 11) | dnsPacket.AUTHORITATIVE_ANSWER, questions: [{ type: 'SOA', name: 'feed.rpz' }] })
        s.send(m, $NOTIFY, '127.0.0.1', () => setTimeout(() => s.close(), 200))") &
    fi
    # PERF=OUT.data NODE_FLAGS=--perf-basic-prof: a profile of the primary from the NOTIFY on, first refresh.
    [ -z "${PERF:-}" ] || [ "$n$r" != 14 ] || (perf record -F 499 -g -p "$DNS_PID" -o "$PERF" -- sleep 5 >/dev/null 2>&1 &)
    f0=() ; for p in $FRONTS; do f0+=("$(ticks "$p")"); done
    p0=$(ticks "$DNS_PID") k0=$(ticks "$KNOTF_PID"); read -r u0 s0 w0 <<<"$(machine)"
    q=$(round 1)
    f=""; i=0; for p in $FRONTS; do f+="$(( $(ticks "$p") - f0[i] )) "; i=$((i + 1)); done
    read -r u1 s1 w1 <<<"$(machine)"
    anon=$(awk '/^Anonymous:/ {printf "%d", $2 / 1024}' "/proc/$DNS_PID/smaps_rollup")
    echo "$r $q | ${f}$(( $(ticks "$DNS_PID") - p0 )) $(( $(ticks "$KNOTF_PID") - k0 )) | $(( (u1 - u0) / 2 )) $(( (s1 - s0) / 2 )) $(( (w1 - w0) / 2 )) | $anon"
  done
  until [ "$(enforced "$NEXT")" -gt "$BEFORE" ]; do sleep 0.2; done
  SERIAL=$NEXT
done
