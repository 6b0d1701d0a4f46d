#!/usr/bin/env bash
# Where a DoH server's CPU goes at saturation: one build of filterd serves DoH (bench/dns/doh-cpu.sh's data
# set and Knot upstream), h2load sends N RFC 8484 POSTs (one forwarded name, 10 connections x 10 streams)
# after a 5,000-request warm-up, and, with PERF=1, `perf record -F 1999 -g` samples the server process
# (every thread) during the run into OUT/perf.data. Extra arguments go to node (e.g. --perf-basic-prof,
# so perf names the JavaScript frames; or --cpu-prof --cpu-prof-dir=OUT, whose samples are wall time).
# Prints h2load's summary and the server's CPU µs per request (utime+stime around the run).
# Usage: PERF=1 bench/dns/doh-profile.sh DIST N OUT [node options...]   (from the repository root;
#   DIST holds a built dist/ and node_modules; read OUT/perf.data with `perf report -i` or `perf script -i`)
set -euo pipefail
cd "$(dirname "$0")/../.."
D=$(realpath "$1") N=$2 OUT=$(realpath -m "$3")
shift 3
DIR=${DOH_PROFILE_DIR:-$(mktemp -d /tmp/filterd-dohprof.XXXXXX)}
KNOT=47690 PORT=47695
. bench/dns/common.sh
bench_processes
bench_data "$DIR" $KNOT
mkdir -p "$DIR/knot/run" "$DIR/knot/db" "$OUT"
printf '$ORIGIN .\n$TTL 300\n@ IN SOA ns.invalid. hostmaster.invalid. 1 3600 600 86400 300\n@ IN NS ns.invalid.\n* IN A 192.0.2.53\n' >"$DIR/knot/root.zone"
printf 'server:\n  rundir: "%s/knot/run"\n  listen: 127.0.0.1@%s\n  udp-workers: 1\n  tcp-workers: 1\n  background-workers: 1\ndatabase:\n  storage: "%s/knot/db"\ntemplate:\n  - id: default\n    storage: "%s/knot"\n    semantic-checks: off\nzone:\n  - domain: .\n    file: "root.zone"\nlog:\n  - target: stderr\n    any: warning\n' "$DIR" $KNOT "$DIR" "$DIR" >"$DIR/knot/knot.conf"
knotd -c "$DIR/knot/knot.conf" & PIDS+=($!)
node -e '
const fs = require("fs"); const [dir, dns, doh] = process.argv.slice(1)
const c = JSON.parse(fs.readFileSync(dir + "/native-inline-p1.yaml", "utf8"))
Object.assign(c.proxy, { listen: ["127.0.0.1:" + dns], "doh-listen": ["127.0.0.1:" + doh],
  "tls-cert": dir + "/cert.pem", "tls-key": dir + "/key.pem", pid: dir + "/p.pid", log: dir + "/p.log" })
c.stats.dir = dir + "/stats-p"
fs.writeFileSync(dir + "/p.yaml", JSON.stringify(c))' "$DIR" 47693 $PORT
node "$@" "$D/dist/tools/filterd.js" dns --config "$DIR/p.yaml" >"$OUT/filterd.out" 2>&1 &
SP=$!; PIDS+=($SP)
node --input-type=module -e "
import dnsPacket from 'dns-packet'; import { writeFileSync } from 'node:fs'
writeFileSync('$DIR/q.bin', dnsPacket.encode({ type: 'query', id: 0, flags: dnsPacket.RECURSION_DESIRED,
  questions: [{ type: 'A', name: 'www.bench-forwarded.example' }] }))"
for _ in $(seq 1 240); do kdig +https +retry=0 +time=1 @127.0.0.1 -p $PORT probe.example A >/dev/null 2>&1 && break; sleep 0.5; done
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
h2load -n 5000 -c 10 -m 10 -d "$DIR/q.bin" -H 'content-type: application/dns-message' "https://127.0.0.1:$PORT/dns-query" >/dev/null 2>&1
t0=$(ticks $SP)
if [ -n "${PERF:-}" ]; then perf record -F 1999 -g -p $SP -o "$OUT/perf.data" 2>/dev/null & PP=$!; fi
h2load -n "$N" -c 10 -m 10 -d "$DIR/q.bin" -H 'content-type: application/dns-message' "https://127.0.0.1:$PORT/dns-query" 2>/dev/null | grep -E "finished|requests:" 
t1=$(ticks $SP)
if [ -n "${PERF:-}" ]; then kill -INT $PP; wait $PP || true; fi
echo "cpu_us_per_req=$(( (t1-t0)*10000/N )) load=$(cut -d' ' -f1 /proc/loadavg)"
kill -TERM $SP; for _ in $(seq 1 60); do kill -0 $SP 2>/dev/null || break; sleep 0.5; done

