#!/usr/bin/env bash
# UDP beside idle DoT connections (the goal: 10,000 idle DoT connections held open leave UDP
# throughput within 5%), measured A/B so that the shared machine's noise hits both sides alike.
# Two identical filterd DNS servers, A and B (bench/dns/run.sh's "native inline, 1 process" server
# with a DoT listener; the data set of bench/dns/setup.ts; Knot as upstream). Phase 1: IDLE idle DoT
# connections are held on A (bench/dns/dot-idle.ts: handshake, one query, silence); phase 2: they are
# released and held on B instead, so a difference between the two processes themselves cancels out.
# In each phase, ROUNDS rounds; each round runs on both servers in turn (the order swaps every round):
#   max:   dnsperf on the plain UDP port for SECONDS, as fast as it goes (q/s);
#   @RATE: the same at a fixed RATE q/s (answered q/s, p99);
#   idle:  no queries for IDLE_SECS (environment, default 10): what the held connections cost by themselves;
# and reads the server's CPU time (utime+stime from /proc/PID/stat) around each run: µs of server CPU
# per query, which the machine's other load moves much less than throughput.
# Prints one line per run, then the medians of with / without (paired per round) and the RSS per
# connection.
# Usage: bench/dns/dot-idle-udp.sh [SECONDS=4] [ROUNDS=3] [RATE=20000] [IDLE=10000] [SETUP_DIR]
#   (from the repository root, after `npm run build`; SETUP_DIR keeps bench/dns/setup.ts's files
#   between runs, so they can be made outside the benchmark lock)
# Environment: FILTERD_NODE_OPTIONS, node options for both servers (e.g. --trace-gc).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-4}
ROUNDS=${2:-3}
RATE=${3:-20000}
IDLE=${4:-10000}
DIR=${5:-$(mktemp -d /tmp/filterd-idleudp.XXXXXX)}
mkdir -p "$DIR"
ulimit -n "$(ulimit -Hn)"
KNOT=47690 DNS_A=47691 DNS_B=47692 DOT_A=47693 DOT_B=47694
. bench/dns/common.sh
bench_processes
bench_data "$DIR" $KNOT
. bench/dns/knot.sh
start_knot "$DIR" $KNOT
start() { # name dns-port dot-port
  node -e '
const fs = require("fs"); const [dir, name, dns, dot, idle] = process.argv.slice(1)
const c = JSON.parse(fs.readFileSync(dir + "/native-inline-p1.yaml", "utf8"))
Object.assign(c.proxy, { listen: ["127.0.0.1:" + dns], "dot-listen": ["127.0.0.1:" + dot],
  "tls-cert": dir + "/cert.pem", "tls-key": dir + "/key.pem",
  "tcp-max-connections": 3 * Number(idle), "tcp-max-per-source": 3 * Number(idle), "tcp-idle-timeout": 600000,
  pid: dir + "/" + name + ".pid", log: dir + "/" + name + ".log" })
c.stats.dir = dir + "/stats-" + name
fs.writeFileSync(dir + "/" + name + ".yaml", JSON.stringify(c))' "$DIR" "$1" "$2" "$3" "$IDLE"
  node ${FILTERD_NODE_OPTIONS:-} dist/tools/filterd.js dns --config "$DIR/$1.yaml" >"$DIR/$1.out" 2>&1 &
  PIDS+=($!)
  eval "PID_$1=$!"
}
start A $DNS_A $DOT_A
start B $DNS_B $DOT_B
for port in $DNS_A $DNS_B; do
  for _ in $(seq 1 240); do dig +tries=1 +time=1 @127.0.0.1 -p $port probe.example A >/dev/null 2>&1 && break; sleep 0.5; done
done

ticks() { # CPU ticks (1/100 s) of a process and its children
  local total=0 p
  for p in $1 $(pgrep -P "$1" 2>/dev/null); do
    [ -r "/proc/$p/stat" ] && total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo $total
}
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
udp() { # name port [rate]: one dnsperf run; prints a JSON object
  local pid t0 t1 q
  pid=$(eval echo "\$PID_$1")
  t0=$(ticks "$pid")
  q=$(dnsperf -s 127.0.0.1 -p "$2" -d "$DIR/queries.txt" -c 16 -q 100 -t 1 -l "$SECS" ${3:+-Q $3} -v 2>/dev/null | node dist/bench/dns/stats.js)
  t1=$(ticks "$pid")
  echo "$q" | node -e '
const q = JSON.parse(require("fs").readFileSync(0, "utf8")); const [ticks, secs] = process.argv.slice(1).map(Number)
const answered = q.samples
console.log(JSON.stringify({ qps: q.qps, p99: q.p99, lost: q.lost, cpuUs: +(ticks * 10000 / answered).toFixed(2) }))' $((t1 - t0)) "$SECS"
}
IDLE_SECS=${IDLE_SECS:-10}
quiet() { # name: the server's CPU while no query comes, in ms per second, over IDLE_SECS
  local pid t0 t1
  pid=$(eval echo "\$PID_$1")
  t0=$(ticks "$pid")
  sleep "$IDLE_SECS"
  t1=$(ticks "$pid")
  echo "{\"cpuMsPerS\":$(( (t1 - t0) * 10 / IDLE_SECS )).$(( (t1 - t0) * 100 / IDLE_SECS % 10 ))}" # a tick is 10 ms
}
hold() { # port: starts the holder and waits until its connections are open
  rm -f "$DIR/idle.out" "$DIR/idle.fifo"
  mkfifo "$DIR/idle.fifo"
  node dist/bench/dns/dot-idle.js "$1" "$IDLE" 50 <"$DIR/idle.fifo" >"$DIR/idle.out" 2>&1 &
  HOLDER=$!
  exec 7>"$DIR/idle.fifo"
  for _ in $(seq 1 1200); do [ -s "$DIR/idle.out" ] && break; sleep 0.5; done
  echo "held: $(head -1 "$DIR/idle.out")" >&2
}
release() {
  exec 7>&-
  wait "$HOLDER" 2>/dev/null || true
  echo "at release: $(sed -n 2p "$DIR/idle.out")" >&2
  sleep 5 # the server closing the connections (and collecting them) is not the next run's load
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
dnsperf -s 127.0.0.1 -p $DNS_A -d "$DIR/queries.txt" -c 16 -q 100 -t 1 -l 2 >/dev/null 2>&1 || true # warm-up
dnsperf -s 127.0.0.1 -p $DNS_B -d "$DIR/queries.txt" -c 16 -q 100 -t 1 -l 2 >/dev/null 2>&1 || true
LINES=()
for phase in 1 2; do
  if [ $phase = 1 ]; then held=A; else held=B; fi
  hpid=$(eval echo "\$PID_$held")
  sleep 2
  r0=$(rss "$hpid")
  hold "$(eval echo "\$DOT_$held")"
  sleep 3
  r1=$(rss "$hpid")
  LINES+=("M {\"server\":\"$held\",\"rssBefore\":$r0,\"rssWith\":$r1,\"opened\":$(head -1 "$DIR/idle.out")}")
  for round in $(seq 1 "$ROUNDS"); do
    order=(A B)
    [ $((round % 2)) = 0 ] && order=(B A)
    for who in "${order[@]}"; do
      port=$(eval echo "\$DNS_$who")
      with=false
      [ "$who" = "$held" ] && with=true
      for mode in idle max rate; do
        case $mode in
          idle) r=$(quiet "$who") ;;
          max) r=$(udp "$who" "$port") ;;
          rate) r=$(udp "$who" "$port" "$RATE") ;;
        esac
        line="{\"phase\":$phase,\"round\":$round,\"server\":\"$who\",\"with\":$with,\"mode\":\"$mode\",\"load\":$(cut -d' ' -f1 /proc/loadavg),\"r\":$r}"
        echo "$line" >&2
        LINES+=("R $line")
      done
    done
  done
  release
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "node $(node -v); dnsperf $(dpkg-query -W -f='${Version}' dnsperf 2>/dev/null); $(nproc) cores; ${SECS} s runs; fixed rate $RATE q/s; $IDLE idle connections"
printf '%s\n' "${LINES[@]}" | node -e '
const lines = require("fs").readFileSync(0, "utf8").trim().split("\n")
const runs = lines.filter((l) => l.startsWith("R ")).map((l) => JSON.parse(l.slice(2)))
const mem = lines.filter((l) => l.startsWith("M ")).map((l) => JSON.parse(l.slice(2)))
const idle = Number(process.argv[1])
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2 }
for (const m of mem) console.log(`RSS of ${m.server}: ${(m.rssBefore / 1024).toFixed(1)} -> ${(m.rssWith / 1024).toFixed(1)} MB with ${m.opened.open} open: ${((m.rssWith - m.rssBefore) / m.opened.open).toFixed(1)} KiB per connection`)
console.log("| mode | figure | without (each run) | with (each run) | median without | median with | with / without, paired per round (each) | median ratio |")
console.log("|---|---|---|---|---:|---:|---|---:|")
const FIGURES = {
  idle: [["server CPU ms/s, no queries", (r) => r.cpuMsPerS]],
  max: [["q/s", (r) => r.qps], ["server CPU µs/query", (r) => r.cpuUs]],
  rate: [["q/s", (r) => r.qps], ["server CPU µs/query", (r) => r.cpuUs], ["p99 ms", (r) => r.p99]]
}
for (const mode of ["idle", "max", "rate"]) {
  for (const [fig, get] of FIGURES[mode]) {
    const rs = runs.filter((r) => r.mode === mode)
    const wo = rs.filter((r) => !r.with).map((r) => get(r.r)), wi = rs.filter((r) => r.with).map((r) => get(r.r))
    const ratios = []
    for (const r of rs.filter((r) => r.with)) {
      const o = rs.find((x) => !x.with && x.phase === r.phase && x.round === r.round)
      if (o) ratios.push(get(r.r) / get(o.r))
    }
    console.log(`| ${mode === "rate" ? "@" + process.argv[2] + " q/s" : mode} | ${fig} | ${wo.join(" / ")} | ${wi.join(" / ")} | ${+med(wo).toFixed(2)} | ${+med(wi).toFixed(2)} | ${ratios.map((x) => x.toFixed(3)).join(" / ")} | ${med(ratios).toFixed(3)} |`)
  }
}
' "$IDLE" "$RATE"
