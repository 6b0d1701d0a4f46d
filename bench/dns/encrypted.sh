#!/usr/bin/env bash
# Encrypted DNS benchmark: filterd's DoT and DoH listeners against dnsdist 1.7's
# (addTLSLocal, addDOHLocal), the same 1M-name block rule and data set as bench/dns/run.sh
# (bench/dns/setup.ts) and the same upstream (Knot DNS, wildcard root zone), on loopback, everything
# sharing the 2 cores. Every load run is time-bounded. Per round, dnsdist then filterd (the order
# swaps every round), each:
#   DoT max:   dnsperf -m dot, 16 connections, 200 queries in flight, the 100k-name query file;
#   DoT @RATE: the same at a fixed RATE q/s, p50/p99/p99.9 from dnsperf's per-query lines;
#   DoH max:   h2load sending RFC 8484 POSTs (one forwarded query), 16 connections x 10 streams;
#   DoH @RATE: h2load --rps (RATE in all), p50/p99/p99.9 from its per-request log;
#   handshakes/s, TLS 1.3, full and resumed (bench/dns/tls-handshakes.ts, 8 client loops);
# the server's CPU ticks are sampled around the max runs (µs of server CPU per query).
# Then IDLE (10,000) idle DoT connections (bench/dns/dot-idle.ts): the RSS each server takes per
# connection, and filterd's UDP throughput (dnsperf on its plain port) without / with them,
# alternating: without, with, without, with, without.
# Usage: bench/dns/encrypted.sh [SECONDS=8] [ROUNDS=3] [RATE=5000] [IDLE=10000]   (from the repository root, after `npm run build`)
# ROUNDS=0 runs the idle-connection part only.
# SWEEP (e.g. "10 50 100"): before the DoH max run, h2load at max with each -m (streams per
# connection), requests/s, server CPU ticks and the server threads' run-queue wait on stderr. KEEP_LOG=FILE keeps filterd's stdout/stderr
# (e.g. with FILTERD_NODE_OPTIONS=--trace-gc).
# CERT=ec: both servers get an ECDSA P-256 certificate instead of RSA 2048 (cheaper handshakes).
# DNSDIST_TCP_THREADS=N: dnsdist's pool of TCP worker threads, which serve its DoT (and TCP)
# connections (setMaxTCPClientThreads; unset: dnsdist's default pool); the DoT max run prints how
# many threads of each server it kept busy.
# Environment: PARTS (default "dot doh handshakes idle") picks the parts run, e.g. PARTS=doh;
# the part "tcp" runs DoT's two dnsperf runs in plain DNS over TCP (dnsperf -m tcp) against
# filterd's `proxy.listen` TCP port and a dnsdist plain port (addLocal): RFC 7766 framing without TLS;
# the part "udp" the same over plain UDP (dnsperf -m udp), in the round's JSON lines only (udpMax, udpRate);
# NAMES picks the names of the dnsperf runs (dot and tcp parts): "mix" (default, the 100k-name file:
# blocked and forwarded), "one" (DoH's one forwarded name, A www.bench-forwarded.example),
# "blocked" (only the file's blocked names), "forwarded" (only its forwarded names);
# BEFORE=DIR (a checkout built with `npm run build`, e.g. main's in a worktree) runs a second filterd
# from DIR's dist/ on its own ports, measured as "before" in every round beside the two others (the
# order rotates each round), for A/B ratios of a change against main taken in the same run;
# TERMINATOR=1 (dot part): bench/dns/dot-terminator.js preloaded into filterd, a worker_thread of its
# process that terminates DoT on its own port and pipes the plaintext to filterd's TCP port, measured
# as "worker" in every round beside the others (a prototype of TLS off the query thread);
# FIRST_SECOND_BUCKETS=N prints each fixed-rate run's first second in N slices (bench/dns/stats.ts);
# After each fixed-rate run (dot, tcp and udp parts) the server's main thread's and all its threads' time
# on a core (/proc schedstat) is printed per query sent; RATE_PROBE (a shell command) runs in the
# background from 2 s into each of those runs with PID, WHO, PART and DUR (SECONDS-3) set, e.g.
# RATE_PROBE='timeout -s INT $DUR perf stat -e task-clock,context-switches -p $PID' (output on stderr);
# THREADS (default 1): filterd's `proxy.processes` and as many dnsdist DoH/DoT binds of the same
# address (reusePort: dnsdist serves each addDOHLocal/addTLSLocal on one thread), so both servers
# get the same number of cores for their encrypted listeners.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-8}
ROUNDS=${2:-3}
RATE=${3:-5000}
IDLE=${4:-10000}
PARTS=${PARTS:-dot doh handshakes idle}
THREADS=${THREADS:-1}
NAMES=${NAMES:-mix}
BEFORE=${BEFORE:-}
TERMINATOR=${TERMINATOR:-}
has() { [[ " $PARTS " == *" $1 "* ]]; }
for tool in dnsperf knotd dnsdist h2load openssl kdig; do
  command -v "$tool" >/dev/null || {
    apt-get install -y dnsperf knot dnsdist nghttp2-client openssl knot-dnsutils >/dev/null
    break
  }
done
ulimit -n "$(ulimit -Hn)" # the idle connections (each end is its own process, each needs IDLE descriptors)
DIR=$(mktemp -d /tmp/filterd-encbench.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "${KEEP_LOG:-}" ] && cp "$DIR/filterd.out" "$KEEP_LOG" 2>/dev/null
  rm -rf "$DIR"
}
trap cleanup EXIT
KNOT=5490 D_DOT=5491 D_DOH=5492 F_DNS=5493 F_DOT=5494 F_DOH=5495 D_DNS=5496 B_DNS=5497 B_DOT=5498 B_DOH=5499 W_DOT=5500
node dist/bench/dns/setup.js "$DIR" $KNOT >&2
# The names of the dnsperf runs (NAMES). The blocked names are those of the block list (its first
# entries are the file's blocked names; the rest are synthetic fillers no query asks for).
case "$NAMES" in
  mix) QFILE="$DIR/queries.txt" ;;
  one) QFILE="$DIR/names-one.txt" && echo 'www.bench-forwarded.example A' >"$QFILE" ;;
  blocked) QFILE="$DIR/names-blocked.txt" && awk 'NR == FNR {b[$1]; next} ($1 in b)' "$DIR/blocklist.txt" "$DIR/queries.txt" >"$QFILE" ;;
  forwarded) QFILE="$DIR/names-forwarded.txt" && awk 'NR == FNR {b[$1]; next} !($1 in b)' "$DIR/blocklist.txt" "$DIR/queries.txt" >"$QFILE" ;;
  *) echo "NAMES must be mix, one, blocked or forwarded" >&2 && exit 2 ;;
esac
echo "NAMES=$NAMES: $(wc -l <"$QFILE") query lines" >&2
# CERT=ec: an ECDSA P-256 key instead of RSA 2048 (a handshake's signature costs far less).
KEYALG=rsa:2048
if [ "${CERT:-rsa}" = ec ]; then
  openssl ecparam -name prime256v1 -out "$DIR/ec.param"
  KEYALG=ec:$DIR/ec.param
fi
openssl req -x509 -newkey "$KEYALG" -nodes -days 2 -subj /CN=dns.bench \
  -addext subjectAltName=DNS:dns.bench,DNS:*.dns.bench -keyout "$DIR/key.pem" -out "$DIR/cert.pem" 2>/dev/null

mkdir -p "$DIR/knot/run" "$DIR/knot/db"
printf '$ORIGIN .\n$TTL 300\n@ IN SOA ns.invalid. hostmaster.invalid. 1 3600 600 86400 300\n@ IN NS ns.invalid.\n* IN A 192.0.2.53\n' >"$DIR/knot/root.zone"
cat >"$DIR/knot/knot.conf" <<CONF
server:
    rundir: "$DIR/knot/run"
    listen: 127.0.0.1@$KNOT
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
database:
    storage: "$DIR/knot/db"
template:
  - id: default
    storage: "$DIR/knot"
    semantic-checks: off
zone:
  - domain: .
    file: "root.zone"
log:
  - target: stderr
    any: warning
CONF
knotd -c "$DIR/knot/knot.conf" &
PIDS+=($!)

# dnsdist: DoT and DoH only (with addTLSLocal/addDOHLocal and no setLocal it takes no plain port);
# idle connections may stay 600 s, as filterd's (tcp-idle-timeout below).
cat >"$DIR/dnsdist.lua" <<LUA
setSecurityPollSuffix("")
for _ = 1, $THREADS do
  addTLSLocal("127.0.0.1:$D_DOT", "$DIR/cert.pem", "$DIR/key.pem", { reusePort = true })
  addDOHLocal("127.0.0.1:$D_DOH", "$DIR/cert.pem", "$DIR/key.pem", "/dns-query", { reusePort = true })
end
addLocal("127.0.0.1:$D_DNS") -- plain DNS (UDP and TCP), for the tcp part
setTCPRecvTimeout(600)
${DNSDIST_TCP_THREADS:+setMaxTCPClientThreads($DNSDIST_TCP_THREADS)}
newServer({address="127.0.0.1:$KNOT", name="knot", checkInterval=5})
local smn = newSuffixMatchNode()
for line in io.lines("$DIR/blocklist.txt") do if line ~= "" then smn:add(line) end end
addAction(SuffixMatchNodeRule(smn, true), SpoofAction("192.0.2.1"))
LUA
dnsdist --supervised --disable-syslog -C "$DIR/dnsdist.lua" >"$DIR/dnsdist.log" 2>&1 &
PIDS+=($!)
DNSDIST_PID=$!

# filterd: run.sh's "native inline, 1 process" server with a DoT and a DoH listener added, and a
# connection table large enough for the idle connections (all from 127.0.0.1).
node -e '
const fs = require("fs"); const [dir, dns, dot, doh, idle, threads] = process.argv.slice(1)
const c = JSON.parse(fs.readFileSync(dir + "/native-inline-p1.yaml", "utf8"))
Object.assign(c.proxy, { listen: ["127.0.0.1:" + dns], "dot-listen": ["127.0.0.1:" + dot], "doh-listen": ["127.0.0.1:" + doh],
  "tls-cert": dir + "/cert.pem", "tls-key": dir + "/key.pem", "server-name": "dns.bench",
  "tcp-max-connections": 3 * Number(idle), "tcp-max-per-source": 3 * Number(idle), "tcp-idle-timeout": 600000,
  pid: dir + "/enc.pid", log: dir + "/enc.log", processes: Number(threads) })
fs.writeFileSync(dir + "/enc.yaml", JSON.stringify(c))' "$DIR" $F_DNS $F_DOT $F_DOH "$IDLE" "$THREADS"
TERM_OPTIONS=
[ -z "$TERMINATOR" ] || TERM_OPTIONS="--import ./dist/bench/dns/dot-terminator.js"
DOT_TERMINATOR=${TERMINATOR:+$W_DOT:$F_DNS:$DIR/cert.pem:$DIR/key.pem} \
  node ${FILTERD_NODE_OPTIONS:-} $TERM_OPTIONS dist/tools/filterd.js dns --config "$DIR/enc.yaml" >"$DIR/filterd.out" 2>&1 &
PIDS+=($!)
FILTERD_PID=$!
BEFORE_PID=
if [ -n "$BEFORE" ]; then # the same configuration on its own ports, files and statistics
  node -e '
const fs = require("fs"); const [dir, dns, dot, doh] = process.argv.slice(1)
const c = JSON.parse(fs.readFileSync(dir + "/enc.yaml", "utf8"))
Object.assign(c.proxy, { listen: ["127.0.0.1:" + dns], "dot-listen": ["127.0.0.1:" + dot], "doh-listen": ["127.0.0.1:" + doh],
  pid: dir + "/before.pid", log: dir + "/before.log" })
Object.assign(c.stats, { dir: dir + "/stats-before", db: dir + "/statsdb-before" })
fs.writeFileSync(dir + "/before.yaml", JSON.stringify(c))' "$DIR" $B_DNS $B_DOT $B_DOH
  node ${FILTERD_NODE_OPTIONS:-} "$BEFORE/dist/tools/filterd.js" dns --config "$DIR/before.yaml" >"$DIR/before.out" 2>&1 &
  PIDS+=($!)
  BEFORE_PID=$!
fi

# One forwarded query (A www.bench-forwarded.example) as an RFC 8484 body.
node --input-type=module -e "
import dnsPacket from 'dns-packet'; import { writeFileSync } from 'node:fs'
writeFileSync('$DIR/q.bin', dnsPacket.encode({ type: 'query', id: 0, flags: dnsPacket.RECURSION_DESIRED,
  questions: [{ type: 'A', name: 'www.bench-forwarded.example' }] }))"

ready() {
  for _ in $(seq 1 360); do # dnsdist takes a while to load 1M names on a busy machine
    kdig +tls +retry=0 +time=5 @127.0.0.1 -p "$1" probe.example A >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "port $1 never answered; dnsdist's log:" >&2
  cat "$DIR/dnsdist.log" >&2
  return 1
}
ready $D_DOT
ready $F_DOT
[ -z "$BEFORE" ] || ready $B_DOT
[ -z "$TERMINATOR" ] || ready $W_DOT
BLOCKED=$(head -1 "$DIR/blocklist.txt")
sanity() { kdig "$@" +short "$BLOCKED" A | tail -1; }
echo "sanity ($BLOCKED): DoT dnsdist $(sanity @127.0.0.1 -p $D_DOT +tls) filterd $(sanity @127.0.0.1 -p $F_DOT +tls);" \
  "DoH dnsdist $(sanity @127.0.0.1 -p $D_DOH +https) filterd $(sanity @127.0.0.1 -p $F_DOH +https);" \
  "forwarded over DoH: dnsdist $(kdig +short +https @127.0.0.1 -p $D_DOH www.bench-forwarded.example A | tail -1)" \
  "filterd $(kdig +short +https @127.0.0.1 -p $F_DOH www.bench-forwarded.example A | tail -1)" >&2

# CPU ticks (utime+stime, 1/100 s) of a process and its children; its resident set in kB.
ticks() {
  local total=0 p
  for p in $1 $(pgrep -P "$1" 2>/dev/null); do
    [ -r "/proc/$p/stat" ] && total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo $total
}
# Run-queue wait (ms) of a process's threads and its children's: time runnable but not on a core.
waits() {
  local p
  for p in $1 $(pgrep -P "$1" 2>/dev/null); do cat /proc/"$p"/task/*/schedstat 2>/dev/null; done |
    awk '{w += $2} END {printf "%d", w / 1e6}'
}
# Per-thread CPU ticks of a process ("tid ticks" lines), to count the threads a run kept busy.
thread_ticks() { for t in /proc/"$1"/task/*/stat; do awk '{print $1, $14 + $15}' "$t" 2>/dev/null; done; }
busy_threads() { # before-snapshot after-snapshot: threads with at least 2 ticks (20 ms) between them
  awk 'NR == FNR {b[$1] = $2; next} $2 - b[$1] >= 2 {n++; s = s " " $2 - b[$1]} END {printf "%d (ticks:%s)", n, s}' <(echo "$1") <(echo "$2")
}
# Nanoseconds on a core of a process's main thread (tid = pid) and of all its threads: "main all".
oncore() { echo "$(awk '{print $1}' /proc/"$1"/task/"$1"/schedstat) $(cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END {printf "%.0f", s}')"; }
# RATE_PROBE (a shell command): run in the background from 2 s into each fixed-rate run, for DUR =
# SECONDS-3 s, with PID (the server's), WHO and PART (dot or tcp) set; its output goes to stderr
# (e.g. RATE_PROBE='[ $WHO = filterd ] && timeout $DUR strace -c -f -p $PID'). After each fixed-rate
# run, the server's main thread's and all its threads' time on a core per answer is printed.
probe() { # who part pid
  [ -n "${RATE_PROBE:-}" ] || return 0
  (sleep 2 && WHO=$1 PART=$2 PID=$3 DUR=$((SECS - 3)) bash -c "$RATE_PROBE" >&2 || true) &
  PROBE_PID=$!
}
wait_probe() {
  [ -z "${PROBE_PID:-}" ] || wait "$PROBE_PID" || true
  PROBE_PID=
}
oncore_report() { # who part before after
  read -r m0 a0 <<<"$3"
  read -r m1 a1 <<<"$4"
  echo "  $1 $2 @$RATE: main thread on a core $(((m1 - m0) / 1000000)) ms, all threads $(((a1 - a0) / 1000000)) ms," \
    "$(((m1 - m0) / 1000 / (RATE * SECS))) / $(((a1 - a0) / 1000 / (RATE * SECS))) µs per query sent" >&2
}
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
# The filterd daemon is a child of the node started above when it forks a front; take the biggest.
server_pid() {
  case "$1" in dnsdist) echo $DNSDIST_PID ;; before) echo $BEFORE_PID ;; *) echo $FILTERD_PID ;; esac # worker: filterd's
}

# dnsperf over DoT (-m dot) or plain TCP (MODE=tcp), at max or at the fixed RATE, on QFILE's names.
perf() { dnsperf -m "${MODE:-dot}" -s 127.0.0.1 -p "$1" -d "$QFILE" -c 16 -q 200 -t 2 "${@:2}"; }
dot_max() { perf "$1" -l "$SECS" -v 2>/dev/null | node dist/bench/dns/stats.js; }
dot_rate() { perf "$1" -l "$SECS" -Q "$RATE" -v 2>/dev/null | node dist/bench/dns/stats.js "$RATE"; }
h2() { h2load -c 16 -m "${M:-10}" -d "$DIR/q.bin" -H 'content-type: application/dns-message' "$@"; }
# h2load's summary: requests per second and how many failed.
doh_max() {
  h2 -D "$SECS" --warm-up-time=1 "https://127.0.0.1:$1/dns-query" 2>/dev/null |
    awk '/^finished in/ {gsub(",", ""); rps=$4} /^requests:/ {ok=$8; bad=$10} END {printf "{\"rps\":%d,\"ok\":%d,\"failed\":%d}", rps, ok, bad}'
}
doh_rate() {
  rm -f "$DIR/h2.log"
  h2 -D "$SECS" --rps=$((RATE / 16)) --log-file="$DIR/h2.log" "https://127.0.0.1:$1/dns-query" >/dev/null 2>&1 || true
  node dist/bench/dns/latency-log.js <"$DIR/h2.log"
}
handshakes() { node dist/bench/dns/tls-handshakes.js "$1" 4 "$2" 8; }

# One round for one server: every figure as a JSON object on one line.
measure() { # who dot-port doh-port plain-port
  local pid t0 t1 t2 t3 r0 line
  pid=$(server_pid "$1")
  line="{\"who\":\"$1\",\"load\":\"$(cut -d' ' -f1 /proc/loadavg)\""
  if has dot; then
    perf "$2" -l 2 >/dev/null 2>&1 || true # warm-up
    t0=$(ticks "$pid")
    local th0
    th0=$(thread_ticks "$pid")
    line+=",\"dotMax\":$(dot_max "$2")"
    t1=$(ticks "$pid")
    echo "  $1 DoT max: threads busy $(busy_threads "$th0" "$(thread_ticks "$pid")")" >&2
    sleep "${RATE_SETTLE:-2}" # as before the DoH fixed-rate run, below: the max run's garbage collected first
    r0=$(date +%s%3N)
    c0=$(oncore "$pid")
    probe "$1" dot "$pid"
    line+=",\"dotCpu\":$((t1 - t0)),\"dotRate\":$(dot_rate "$2")"
    oncore_report "$1" DoT "$c0" "$(oncore "$pid")"
    wait_probe
    echo "  $1 DoT @$RATE from $r0 to $(date +%s%3N)" >&2
  fi
  local m
  for m in tcp udp; do # the same two runs over plain TCP, and plain UDP (the "udp" part; not in the table)
    has $m || continue
    MODE=$m perf "$4" -l 2 >/dev/null 2>&1 || true
    t0=$(ticks "$pid")
    line+=",\"${m}Max\":$(MODE=$m dot_max "$4")"
    t1=$(ticks "$pid")
    sleep "${RATE_SETTLE:-2}"
    r0=$(date +%s%3N)
    c0=$(oncore "$pid")
    probe "$1" $m "$pid"
    line+=",\"${m}Cpu\":$((t1 - t0)),\"${m}Rate\":$(MODE=$m dot_rate "$4")"
    oncore_report "$1" "${m^^}" "$c0" "$(oncore "$pid")"
    wait_probe
    echo "  $1 ${m^^} @$RATE from $r0 to $(date +%s%3N)" >&2
  done
  if has doh; then
    for m in ${SWEEP:-}; do # h2load at max with m streams per connection: does latency or CPU limit?
      t2=$(ticks "$pid")
      w0=$(waits "$pid")
      r=$(M=$m doh_max "$3")
      t3=$(ticks "$pid")
      w1=$(waits "$pid")
      echo "  sweep $1 -m $m: $r cpuTicks $((t3 - t2)) runqueueWaitMs $((w1 - w0)) load $(cut -d' ' -f1 /proc/loadavg)" >&2
    done
    t2=$(ticks "$pid")
    line+=",\"dohMax\":$(doh_max "$3")"
    t3=$(ticks "$pid")
    # The max run's garbage is collected before the fixed-rate run, not in its first second (a
    # 20-55 ms major collection was seen there): RATE_SETTLE seconds idle, 2 by default.
    sleep "${RATE_SETTLE:-2}"
    r0=$(date +%s%3N)
    line+=",\"dohCpu\":$((t3 - t2)),\"dohRate\":$(doh_rate "$3")"
    echo "  $1 DoH @$RATE from $r0 to $(date +%s%3N) (ms since the epoch, for a server log's lines)" >&2
  fi
  has handshakes && line+=",\"full\":$(handshakes "$2" full),\"resume\":$(handshakes "$2" resume)"
  echo "$line}"
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
RESULTS=()
for round in $(seq 1 "$ROUNDS"); do
  order=(dnsdist filterd)
  [ $((round % 2)) = 0 ] && order=(filterd dnsdist)
  servers=(dnsdist filterd ${BEFORE:+before} ${TERMINATOR:+worker})
  n=${#servers[@]}
  if [ "$n" -gt 2 ]; then # each server takes each place in turn (rotated right by one a round), then reversed
    order=()
    for i in $(seq 0 $((n - 1))); do order+=("${servers[$(((i - (round - 1) % n + n) % n))]}"); done
    if [ $(((round - 1) / n % 2)) = 1 ]; then
      rev=()
      for ((i = n - 1; i >= 0; i--)); do rev+=("${order[$i]}"); done
      order=("${rev[@]}")
    fi
  fi
  for who in "${order[@]}"; do
    case "$who" in
      dnsdist) line=$(measure dnsdist $D_DOT $D_DOH $D_DNS) ;;
      before) line=$(measure before $B_DOT $B_DOH $B_DNS) ;;
      worker) line=$(measure worker $W_DOT $F_DOH $F_DNS) ;;
      *) line=$(measure filterd $F_DOT $F_DOH $F_DNS) ;;
    esac
    echo "round $round: $line" >&2
    RESULTS+=("$line")
  done
done

# Idle DoT connections: RSS per connection (both servers), then filterd's UDP throughput without
# and with them, alternating (without, with, without, ...).
udp_max() { dnsperf -s 127.0.0.1 -p $F_DNS -d "$DIR/queries.txt" -c 16 -q 100 -t 1 -l "$SECS" 2>/dev/null | awk -F: '/Queries per second/ {printf "%d", $2}'; }
hold() { # port: starts the holder, waits until its connections are open; sets HOLDER and OPENED
  rm -f "$DIR/idle.out" "$DIR/idle.fifo"
  mkfifo "$DIR/idle.fifo"
  node dist/bench/dns/dot-idle.js "$1" "$IDLE" 50 <"$DIR/idle.fifo" >"$DIR/idle.out" 2>&1 &
  HOLDER=$!
  exec 7>"$DIR/idle.fifo"
  for _ in $(seq 1 1200); do [ -s "$DIR/idle.out" ] && break; sleep 0.5; done
  OPENED=$(head -1 "$DIR/idle.out")
  [ -n "$OPENED" ] || OPENED='{"open":0,"failed":-1,"ms":0}'
}
release() { # closes the holder's stdin; sets ENDED to what it saw at the end (not in a subshell: fd 7 is ours)
  exec 7>&-
  wait "$HOLDER" 2>/dev/null || true
  ENDED=$(sed -n 2p "$DIR/idle.out")
  [ -n "$ENDED" ] || ENDED='{"stillOpen":-1}'
  sleep "${SETTLE:-5}" # the server closing 10,000 connections (and collecting them) is not the next run's load
}
IDLE_LINES=()
UDP=()
idle_rss() { # who pid port: RSS before and with the connections (the holder is left running)
  sleep 2
  local r0 r1
  r0=$(rss "$2")
  hold "$3"
  sleep 3
  r1=$(rss "$2")
  IDLE_LINES+=("{\"who\":\"$1\",\"rssBefore\":$r0,\"rssWith\":$r1,\"opened\":$OPENED")
}
if has idle; then
  idle_rss dnsdist $DNSDIST_PID $D_DOT
  release
  IDLE_LINES[-1]+=",\"end\":$ENDED}"
  echo "idle dnsdist: ${IDLE_LINES[-1]}" >&2
  # filterd: UDP without, with (the connections of the RSS figure), without, with, without.
  for round in 1 2; do
    UDP+=("{\"with\":false,\"qps\":$(udp_max)}")
    if [ $round = 1 ]; then idle_rss filterd $FILTERD_PID $F_DOT; else hold $F_DOT; fi
    q=$(udp_max)
    release
    if [ $round = 1 ]; then
      IDLE_LINES[-1]+=",\"end\":$ENDED}"
      echo "idle filterd: ${IDLE_LINES[-1]}" >&2
    fi
    UDP+=("{\"with\":true,\"qps\":$q,\"opened\":$OPENED,\"end\":$ENDED}")
    echo "udp round $round: ${UDP[-2]} ${UDP[-1]}" >&2
  done
  UDP+=("{\"with\":false,\"qps\":$(udp_max)}")
  echo "udp last: ${UDP[-1]}" >&2
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

echo
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) x $(nproc); node $(node -v); dnsperf $(dpkg-query -W -f='${Version}' dnsperf 2>/dev/null); h2load $(dpkg-query -W -f='${Version}' nghttp2-client 2>/dev/null); dnsdist $(dnsdist --version 2>/dev/null | head -1 | awk '{print $2}'); knot $(dpkg-query -W -f='${Version}' knot 2>/dev/null)"
{
  printf 'R %s\n' "${RESULTS[@]}"
  printf 'I %s\n' "${IDLE_LINES[@]}"
  printf 'U %s\n' "${UDP[@]}"
} | node dist/bench/dns/encrypted-report.js "$RATE" "$IDLE" "$SECS"
