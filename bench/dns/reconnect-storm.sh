#!/usr/bin/env bash
# Reconnect storm: what an ISP sees when a network blip makes every phone reconnect. CLIENTS DoT
# clients and CLIENTS DoH clients connect within SPREAD seconds (evenly spread), each from one of
# ADDRS loopback addresses (127.0.0.2 ...: the per-source caps see many sources, as in the field),
# each sends QUERIES queries (one, then the rest once its answer is in) and keeps its connection
# open; filterd against dnsdist 1.7 in the same run, each twice or more (ROUNDS, the order swapped
# every round), with full TLS 1.3 handshakes and with every client offering a session ticket
# (resumption). Figures per server and protocol: clients served and failed, the time until all
# were served (from the storm's first connect), the p50/p99 of each client's first answer (from its
# own connect), handshakes per second over the storm, and the server's CPU over the storm. The
# client is bench/dns/reconnect-storm.ts, PROCS processes per protocol (a client process is
# single-threaded; four share the machine with the servers).
# Both servers: the data set, rule and upstream of bench/dns/encrypted.sh (1M-name block rule, Knot),
# an RSA-2048 certificate (CERT=ec: ECDSA P-256), THREADS filterd processes and as many dnsdist
# DoT and DoH binds; filterd's connection table sized for the storm (tcp-max-connections 3 × CLIENTS,
# tcp-max-per-source left at its default of 64: 2 × CLIENTS / ADDRS connections per address here).
# Usage: bench/dns/reconnect-storm.sh [CLIENTS=5000] [SPREAD=5] [QUERIES=3] [ROUNDS=2] [ADDRS=250]
#   (from the repository root, after `npm run build`; DATA=DIR reuses a data set from an earlier run)
set -euo pipefail
cd "$(dirname "$0")/../.."
CLIENTS=${1:-5000}
SPREAD=${2:-5}
QUERIES=${3:-3}
ROUNDS=${4:-2}
ADDRS=${5:-250}
THREADS=${THREADS:-1}
PROCS=${PROCS:-2}
MODES=${MODES:-full resume}
ulimit -n "$(ulimit -Hn)"
DIR=${DATA:-$(mktemp -d /tmp/filterd-storm.XXXXXX)}
KNOT=5520 D_DOT=5521 D_DOH=5522 F_DNS=5523 F_DOT=5524 F_DOH=5525
. bench/dns/common.sh
. bench/dns/knot.sh
bench_processes
bench_data "$DIR" $KNOT
if [ "${CERT:-rsa}" = ec ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=dns.bench \
    -addext subjectAltName=DNS:dns.bench -keyout "$DIR/key-ec.pem" -out "$DIR/cert-ec.pem" 2>/dev/null
  CERTFILE=$DIR/cert-ec.pem KEYFILE=$DIR/key-ec.pem
else
  CERTFILE=$DIR/cert.pem KEYFILE=$DIR/key.pem
fi
start_knot "$DIR" $KNOT
cat >"$DIR/storm-dnsdist.lua" <<LUA
setSecurityPollSuffix("")
for _ = 1, $THREADS do
  addTLSLocal("127.0.0.1:$D_DOT", "$CERTFILE", "$KEYFILE", { reusePort = true })
  addDOHLocal("127.0.0.1:$D_DOH", "$CERTFILE", "$KEYFILE", "/dns-query", { reusePort = true })
end
setTCPRecvTimeout(600)
newServer({address="127.0.0.1:$KNOT", name="knot", checkInterval=5})
-- Up for good: under the storm its health check times out and dnsdist stopped forwarding anything
-- while Knot was marked down (filterd keeps sending to its resolver when every one is down).
getServer(0):setUp()
local smn = newSuffixMatchNode()
for line in io.lines("$DIR/blocklist.txt") do if line ~= "" then smn:add(line) end end
addAction(SuffixMatchNodeRule(smn, true), SpoofAction("192.0.2.1"))
LUA
dnsdist --supervised --disable-syslog -C "$DIR/storm-dnsdist.lua" >"$DIR/storm-dnsdist.log" 2>&1 &
PIDS+=($!)
DNSDIST_PID=$!
node -e '
const fs = require("fs"); const [dir, dns, dot, doh, clients, threads, cert, key] = process.argv.slice(1)
const c = JSON.parse(fs.readFileSync(dir + "/native-inline-p1.yaml", "utf8"))
Object.assign(c.proxy, { listen: ["127.0.0.1:" + dns], "dot-listen": ["127.0.0.1:" + dot], "doh-listen": ["127.0.0.1:" + doh],
  "tls-cert": cert, "tls-key": key, "server-name": "dns.bench",
  "tcp-max-connections": 3 * Number(clients), "tcp-idle-timeout": 600000,
  pid: dir + "/storm.pid", log: dir + "/storm.log", processes: Number(threads) })
fs.writeFileSync(dir + "/storm.yaml", JSON.stringify(c))' "$DIR" $F_DNS $F_DOT $F_DOH "$CLIENTS" "$THREADS" "$CERTFILE" "$KEYFILE"
node dist/tools/filterd.js dns --config "$DIR/storm.yaml" >"$DIR/storm-filterd.out" 2>&1 &
PIDS+=($!)
FILTERD_PID=$!
ready() {
  for _ in $(seq 1 360); do # dnsdist takes a while to load 1M names on a busy machine
    kdig +tls +retry=0 +time=5 @127.0.0.1 -p "$1" probe.example A >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "port $1 never answered" >&2
  return 1
}
ready $D_DOT
ready $F_DOT
echo "forwarded over DoH: dnsdist $(kdig +short +https @127.0.0.1 -p $D_DOH c1.bench-storm.example A | tail -1)" \
  "filterd $(kdig +short +https @127.0.0.1 -p $F_DOH c1.bench-storm.example A | tail -1)" >&2
ticks() { # CPU ticks (1/100 s) of a process and its children
  local total=0 p
  for p in $1 $(pgrep -P "$1" 2>/dev/null); do
    [ -r "/proc/$p/stat" ] && total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo $total
}
storm() { # who dot-port doh-port pid mode: one storm, one JSON line
  local start t0 t1 k files=() clients=()
  rm -f "$DIR"/storm-*.json
  # Clients start after their processes are up (and, resuming, have fetched their tickets).
  start=$(($(date +%s%3N) + 3000))
  t0=$(ticks "$4")
  for k in $(seq 0 $((PROCS - 1))); do
    node dist/bench/dns/reconnect-storm.js dot "$2" "$CLIENTS" $((SPREAD * 1000)) "$QUERIES" $start "$k" "$PROCS" "$ADDRS" "$5" >"$DIR/storm-dot-$k.json" &
    clients+=($!)
    node dist/bench/dns/reconnect-storm.js doh "$3" "$CLIENTS" $((SPREAD * 1000)) "$QUERIES" $start "$k" "$PROCS" "$ADDRS" "$5" >"$DIR/storm-doh-$k.json" &
    clients+=($!)
    files+=("$DIR/storm-dot-$k.json" "$DIR/storm-doh-$k.json")
  done
  wait "${clients[@]}"
  t1=$(ticks "$4")
  echo "{\"who\":\"$1\",\"mode\":\"$5\",\"cpuSeconds\":$(awk -v t=$((t1 - t0)) 'BEGIN{printf "%.2f", t / 100}'),\"load\":\"$(cut -d' ' -f1 /proc/loadavg)\",\"storm\":$(node dist/bench/dns/reconnect-storm.js merge "${files[@]}")}"
  sleep "${SETTLE:-10}" # the servers close and collect 2 × CLIENTS connections before the next storm
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for round in $(seq 1 "$ROUNDS"); do
  for mode in $MODES; do
    order=(dnsdist filterd)
    [ $((round % 2)) = 0 ] && order=(filterd dnsdist)
    for who in "${order[@]}"; do
      if [ "$who" = dnsdist ]; then line=$(storm dnsdist $D_DOT $D_DOH $DNSDIST_PID "$mode"); else line=$(storm filterd $F_DOT $F_DOH $FILTERD_PID "$mode"); fi
      echo "round $round: $line"
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) x $(nproc); node $(node -v); dnsdist $(dnsdist --version 2>/dev/null | head -1 | awk '{print $2}'); CLIENTS=$CLIENTS SPREAD=$SPREAD QUERIES=$QUERIES ADDRS=$ADDRS THREADS=$THREADS PROCS=$PROCS CERT=${CERT:-rsa}"
