#!/usr/bin/env bash
# DoH server CPU per request, A/B: two builds of filterd (e.g. a copy of dist/ from before a change,
# and dist/) each serve DoH on its own port with the same data set (bench/dns/setup.ts) and upstream
# (Knot DNS); h2load sends N RFC 8484 POSTs (one forwarded name) to each in turn, ROUNDS times,
# alternating, and the server's CPU time (utime+stime from /proc/PID/stat) is read around each run.
# CPU per request rather than throughput: the shared 2-core machine is too noisy for the latter.
# Usage: bench/dns/doh-cpu.sh DIST_A DIST_B [N=20000] [ROUNDS=3] [SETUP_DIR]
#   (from the repository root; DIST_x is a directory holding a built dist/ and node_modules)
set -euo pipefail
cd "$(dirname "$0")/../.."
A=$(realpath "$1") B=$(realpath "$2") N=${3:-20000} ROUNDS=${4:-3}
DIR=${5:-$(mktemp -d /tmp/filterd-dohcpu.XXXXXX)}
KNOT=47590 PORT_A=47595 PORT_B=47596
. bench/dns/common.sh
bench_processes
bench_data "$DIR" $KNOT
mkdir -p "$DIR/knot/run" "$DIR/knot/db"
printf '$ORIGIN .\n$TTL 300\n@ IN SOA ns.invalid. hostmaster.invalid. 1 3600 600 86400 300\n@ IN NS ns.invalid.\n* IN A 192.0.2.53\n' >"$DIR/knot/root.zone"
printf 'server:\n  rundir: "%s/knot/run"\n  listen: 127.0.0.1@%s\n  udp-workers: 1\n  tcp-workers: 1\n  background-workers: 1\ndatabase:\n  storage: "%s/knot/db"\ntemplate:\n  - id: default\n    storage: "%s/knot"\n    semantic-checks: off\nzone:\n  - domain: .\n    file: "root.zone"\nlog:\n  - target: stderr\n    any: warning\n' \
  "$DIR" $KNOT "$DIR" "$DIR" >"$DIR/knot/knot.conf"
knotd -c "$DIR/knot/knot.conf" &
PIDS+=($!)
start() { # name dist dns-port doh-port
  node -e '
const fs = require("fs"); const [dir, name, dns, doh] = process.argv.slice(1)
const c = JSON.parse(fs.readFileSync(dir + "/native-inline-p1.yaml", "utf8"))
Object.assign(c.proxy, { listen: ["127.0.0.1:" + dns], "doh-listen": ["127.0.0.1:" + doh],
  "tls-cert": dir + "/cert.pem", "tls-key": dir + "/key.pem", pid: dir + "/" + name + ".pid", log: dir + "/" + name + ".log" })
c.stats.dir = dir + "/stats-" + name
fs.writeFileSync(dir + "/" + name + ".yaml", JSON.stringify(c))' "$DIR" "$1" "$3" "$4"
  node "$2/dist/tools/filterd.js" dns --config "$DIR/$1.yaml" >"$DIR/$1.out" 2>&1 &
  PIDS+=($!)
  eval "PID_$1=$!"
}
start A "$A" 47593 $PORT_A
start B "$B" 47594 $PORT_B
node --input-type=module -e "
import dnsPacket from 'dns-packet'; import { writeFileSync } from 'node:fs'
writeFileSync('$DIR/q.bin', dnsPacket.encode({ type: 'query', id: 0, flags: dnsPacket.RECURSION_DESIRED,
  questions: [{ type: 'A', name: 'www.bench-forwarded.example' }] }))"
for port in $PORT_A $PORT_B; do
  for _ in $(seq 1 240); do kdig +https +retry=0 +time=5 @127.0.0.1 -p $port probe.example A >/dev/null 2>&1 && break; sleep 0.5; done
done
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
run() { # name port: one h2load run, prints µs of server CPU per request and req/s
  local pid t0 t1 out
  pid=$(eval echo "\$PID_$1")
  t0=$(ticks "$pid")
  out=$(h2load -n "$N" -c 10 -m 10 -d "$DIR/q.bin" -H 'content-type: application/dns-message' "https://127.0.0.1:$2/dns-query" 2>/dev/null)
  t1=$(ticks "$pid")
  echo "$1 $(echo "$out" | awk -v t=$((t1 - t0)) -v n="$N" '/^finished in/ {gsub(",", ""); rps=$4} /^requests:/ {ok=$8; bad=$10} END {printf "cpu_us_per_req=%.1f rps=%d ok=%d failed=%d", t * 10000 / n, rps, ok, bad}') load=$(cut -d' ' -f1 /proc/loadavg)"
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
run A $PORT_A >/dev/null # warm-up
run B $PORT_B >/dev/null
for round in $(seq 1 "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then run A $PORT_A; run B $PORT_B; else run B $PORT_B; run A $PORT_A; fi
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
