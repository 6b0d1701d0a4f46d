# Sourced by the ISP-host benchmarks (isp-host.sh, isp-host-cpu.sh, isp-host-refresh.sh): the feed's
# Knot of a data set bench/dns/isp-host-setup.ts made, and the NOTIFY sent to filterd by hand.
#
# proc_ticks PID...: the CPU the processes took so far (user + system), in clock ticks.
# start_feed_knot DIR LOG: Knot on DIR/knot-feed/knot.conf, its log in LOG; appends its pid to PIDS,
#   sets KNOTF_PID, and returns once the zone is loaded (Knot answers the SOA before a large zone is).
# feed_knot_idle: returns once Knot took at most 2 ticks in a second. After `knotc zone-reload` it
#   answers with the new serial at once but works on its journal for 10-20 s more; the feed's primary
#   is another host in production, so rounds start once it is idle here.
# send_notify PORT: a NOTIFY for feed.rpz to 127.0.0.1:PORT.
# enforced_count LOG [SERIAL]: filterd's "serial N enforced" lines in LOG so far (any serial by default).
# enforced_at LOG SERIAL: the time of the last one for SERIAL, in ms since the epoch.
proc_ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo $t; }
start_feed_knot() {
  knotd -c "$1/knot-feed/knot.conf" 2>"$2" & KNOTF_PID=$!; PIDS+=($KNOTF_PID)
  until grep -q 'loaded, serial' "$2"; do sleep 0.2; done
}
feed_knot_idle() {
  local k
  k=$(proc_ticks "$KNOTF_PID"); sleep 1
  until [ $(( $(proc_ticks "$KNOTF_PID") - k )) -le 2 ]; do k=$(proc_ticks "$KNOTF_PID"); sleep 1; done
}
send_notify() {
  node --input-type=module -e "
    import dnsPacket from 'dns-packet'; import { createSocket } from 'node:dgram'
    const s = createSocket('udp4'); const m = dnsPacket.encode({ type: 'query', id: 7, flags: (4 << 11) | dnsPacket.AUTHORITATIVE_ANSWER, questions: [{ type: 'SOA', name: 'feed.rpz' }] })
    s.send(m, $1, '127.0.0.1', () => setTimeout(() => s.close(), 200))"
}
enforced_count() { local n; n=$(grep -c "serial ${2:-[0-9]*} enforced" "$1" 2>/dev/null) || true; echo "${n:-0}"; }
enforced_at() { date -d "$(grep "serial $2 enforced" "$1" | tail -1 | grep -o '"time":"[^"]*"' | cut -d'"' -f4)" +%s%3N; }
