#!/usr/bin/env bash
# DNS latency while the statistics import runs at full rate beside it (the goal: p99 at 20k q/s
# at most 2 ms). One filterd DNS server (native UDP, inline, 1 process; the 1M-name table and 10,000
# users of bench/dns/setup.ts) forwarding to Knot, and the api role importing its statistics folder.
# Alternating phases of SECONDS each, ROUNDS times:
#   quiet:  the api process is stopped (SIGSTOP): nothing imports; dnsperf sends 20k q/s;
#   import: the api process runs and a feeder keeps two pre-written files of ROWS rows waiting in the
#           statistics folder (the importer never idles); dnsperf sends 20k q/s.
# The table gives p50/p99/p99.9 per phase (medians over the rounds) and the import rate reached: the
# pre-written files finished inside the phase, and the rows the api role logged as imported in it (runs
# that ended inside the phase, the DNS server's own files included), and the DNS server's main thread's
# run-queue wait in the phase (/proc schedstat: ms waited for a CPU per second, and per timeslice in us).
# Usage: bench/stats/dns-beside-import.sh [SECONDS=20] [ROUNDS=2] [ROWS=200000] [MAX_RATE=400000]   (after `npm run build`)
# Environment: THREADS sets stats.duckdb-threads of the api role (default: the config's default); NICE
# starts the api role under `nice -n NICE` (the import as background work); PRIORITY sets
# stats.import-priority (idle, background, normal; default: the config's default, idle); DNS_NICE starts
# the DNS server under `nice -n DNS_NICE` (a negative value raises it above everything else).
# MAX_RATE: the import rate (rows/s) the pre-written files are sized for; past it the feeder runs dry.
# DNSDIST=1 adds a phase per round: dnsdist 1.7 (configured as bench/dns/run.sh does: the same 1M-name
# rule and upstream) alone at 20k q/s, the api role stopped: this machine's ceiling in the same run.
# PIN=CPUS adds a phase per round: the import as in the import phase, with every thread of the api role
# on CPUS (`taskset -a -p -c CPUS`, set before the phase and undone after it); DNS_PIN=CPUS puts the DNS
# server's threads on CPUS in that phase as well. Phases alternate within each round: [dnsdist], quiet,
# import, [import pinned]; PIN_FIRST=1 runs the pinned import phase before the other (the first import
# phase after a quiet one also takes the DNS server's files written while the importer was stopped).
# The measurement's set-up (bench/results/2026-11-history.md, "The measurement's floor"):
#   GEN=ratesrc sends the 20k q/s with bench/dns/ratesrc.c (one thread, open loop, answers stamped by the
#     kernel) instead of dnsperf (GEN=dnsperf, the default; DNSPERF_ARGS replaces its "-c 16 -q 100");
#   NAMES=local sends only names of the 1M-name block list, which both servers answer themselves (dnsdist's
#     SpoofAction, filterd's block): the upstream is out of the path; NAMES=mixed (default) sends the
#     popular names, seven in eight forwarded to Knot;
#   SERVER_CPU=N puts the DNS server under test (dnsdist, filterd's dns role) on CPU N and GEN_CPU=M the
#     generator and Knot on CPU M, for every phase.
#   GEN_RT=1 runs the generator and Knot at real-time priority (SCHED_FIFO 20): they stand for clients and
#     an upstream on other machines, which the machine's other work does not delay;
#   DNS_RT=1 runs the DNS server under test (filterd's dns role, dnsdist) at SCHED_FIFO 20 (`chrt -f`), as
#     a systemd unit's CPUSchedulingPolicy=fifo would.
#   API_CPU=N puts the api role on CPU N for every phase; IONICE=1 starts it under `ionice -c3`;
#   API_CGROUP_IDLE=1 starts it in a cgroup of its own with cpu.idle=1 (cgroup v1 or v2 cpu controller).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-20}
ROUNDS=${2:-2}
ROWS=${3:-200000}
MAX_RATE=${4:-400000}
for tool in dnsperf knotd dnsdist; do
  command -v "$tool" >/dev/null || { echo "installing dnsperf knot dnsdist"; apt-get install -y dnsperf knot dnsdist >/dev/null; break; }
done
DIR=$(mktemp -d /tmp/filterd-dns-import.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$DIR"
  [ -z "${CG:-}" ] || { sleep 0.5; rmdir "$CG" 2>/dev/null || true; }
}
trap cleanup EXIT
KNOT=5390 DNS=5396 API=5489 DNSDIST_PORT=5391
node dist/bench/dns/setup.js "$DIR" $KNOT >&2
. bench/dns/knot.sh
start_knot "$DIR" $KNOT
KNOT_PID=${PIDS[-1]}
if [ -n "${DNSDIST:-}" ]; then
  . bench/dns/common.sh
  start_dnsdist_udp "$DIR" $DNSDIST_PORT $KNOT
  DNSDIST_PID=${PIDS[-1]}
fi
. bench/stats/dns-api.sh
export API_LOG_LEVEL=info # the import runs' "statistics imported" lines, counted per phase
start_dns_api "$DIR" $DNS $API
DNS_PID=${PIDS[-2]}
if [ -n "${DNSDIST:-}" ]; then
  for _ in $(seq 1 360); do dig +tries=1 +time=1 @127.0.0.1 -p $DNSDIST_PORT probe.example A >/dev/null 2>&1 && break; sleep 0.5; done
fi
STATS=$DIR/stats
GEN=${GEN:-dnsperf}
QUERIES=$DIR/queries.txt
if [ "${NAMES:-mixed}" = local ]; then
  # Names both servers answer from their block rule; spread over the list like the popular names are.
  awk 'NR % 10 == 1 { print $1 " A" }' "$DIR/blocklist.txt" | head -n 100000 > "$DIR/queries-local.txt"
  QUERIES=$DIR/queries-local.txt
fi
if [ "$GEN" = ratesrc ]; then gcc -O2 -o "$DIR/ratesrc" bench/dns/ratesrc.c; fi
GEN_TASKSET=()
[ -n "${GEN_CPU:-}" ] && GEN_TASKSET=(taskset -c "$GEN_CPU")
[ -n "${GEN_RT:-}" ] && { GEN_TASKSET=(chrt -f 20 "${GEN_TASKSET[@]}"); chrt -f -a -p 20 "$KNOT_PID"; }
if [ -n "${DNS_RT:-}" ]; then
  for p in $DNS_PID $(pgrep -P "$DNS_PID" 2>/dev/null) ${DNSDIST_PID:-}; do chrt -f -a -p 20 "$p"; done
fi
pin_pid() { local p; for p in $2 $(pgrep -P "$2" 2>/dev/null); do taskset -a -p -c "$1" "$p" >/dev/null; done; } # cpus pid
if [ -n "${SERVER_CPU:-}" ]; then
  pin_pid "$SERVER_CPU" "$DNS_PID"
  [ -n "${DNSDIST:-}" ] && pin_pid "$SERVER_CPU" "$DNSDIST_PID"
fi
[ -n "${GEN_CPU:-}" ] && pin_pid "$GEN_CPU" "$KNOT_PID"
[ -n "${API_CPU:-}" ] && pin_pid "$API_CPU" "$API_PID"
if [ -n "${API_CGROUP_IDLE:-}" ]; then
  CG=/sys/fs/cgroup/cpu/filterd-bench-api.$$
  [ -d /sys/fs/cgroup/cpu ] || CG=/sys/fs/cgroup/filterd-bench-api.$$
  mkdir "$CG" && echo 1 > "$CG/cpu.idle" && echo "$API_PID" > "$CG/cgroup.procs"
fi

# Enough pre-written files for every import phase at up to MAX_RATE rows/s.
FILES=$(( (SECS * MAX_RATE / ROWS + 2) * ROUNDS ))
mkdir -p "$DIR/pregen"
node dist/bench/stats/csv-fill.js "$DIR/pregen" "$FILES" "$ROWS" >&2
QUEUE=($(ls "$DIR/pregen"/queries-*.csv))
NEXT=0

# Rows of the pre-written files the importer has taken (moved in and since deleted).
MOVED=()
# Rows the api role logged as imported so far (every file, the DNS server's own included).
imported() {
  [ -f "$DIR/native-inline-p1.yaml.api.log" ] || { echo 0; return; }
  awk '/"msg":"statistics imported"/ && match($0, /"rows":[0-9]+/) { s += substr($0, RSTART + 7, RLENGTH - 7) } END { print s + 0 }' "$DIR/native-inline-p1.yaml.api.log"
}
# The DNS server's main thread (the one that answers): its run-queue wait and wake-ups so far, from
# /proc/PID/task/PID/schedstat (ns on the CPU, ns waiting for a CPU, timeslices).
rq() { awk '{ print $2, $3 }' "/proc/$DNS_PID/task/$DNS_PID/schedstat"; }
# "wait ms per s / mean wait us per timeslice" between two rq samples over NS nanoseconds.
rq_delta() { echo "$1 $2 $3" | awk '{ w = $3 - $1; n = $4 - $2; printf "%.1f/%.1f", w / ($5 / 1000), (n > 0 ? w / n / 1000 : 0) }'; }
taken() { local n=0 f; for f in "${MOVED[@]}"; do [ -e "$STATS/$(basename "$f")" ] || n=$((n + 1)); done; echo $((n * ROWS)); }
feed() { # keeps two pre-written files waiting until killed
  local waiting
  while :; do
    waiting=$(ls "$STATS" | grep -c -F -f <(printf '%s\n' "${QUEUE[@]##*/}") || true)
    if [ "$waiting" -lt 2 ] && [ "$NEXT" -lt "${#QUEUE[@]}" ]; then
      mv "${QUEUE[$NEXT]}" "$STATS/"; echo "${QUEUE[$NEXT]}"; NEXT=$((NEXT + 1))
    else sleep 0.1; fi
  done
}
load() { # [port]: 20k q/s for SECS seconds; one JSON line (qps, lost, p50, p99, p999)
  if [ "$GEN" = ratesrc ]; then "${GEN_TASKSET[@]}" "$DIR/ratesrc" "${1:-$DNS}" "$QUERIES" 20000 "$SECS"; return; fi
  # shellcheck disable=SC2086 # DNSPERF_ARGS is a list of options
  "${GEN_TASKSET[@]}" dnsperf -s 127.0.0.1 -p "${1:-$DNS}" -d "$QUERIES" ${DNSPERF_ARGS:--c 16 -q 100} -t 1 -l "$SECS" -Q 20000 -v 2>/dev/null | node dist/bench/dns/stats.js
}

RESULTS=()
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
dnsperf -s 127.0.0.1 -p $DNS -d "$QUERIES" -c 16 -q 100 -t 1 -l 2 >/dev/null 2>&1 || true   # warm-up
[ -n "${DNSDIST:-}" ] && { dnsperf -s 127.0.0.1 -p $DNSDIST_PORT -d "$QUERIES" -c 16 -q 100 -t 1 -l 2 >/dev/null 2>&1 || true; }
ALL_CPUS=0-$(($(nproc) - 1))
pin() { local p; for p in $2 $(pgrep -P "$2" 2>/dev/null); do taskset -a -p -c "$1" "$p" >/dev/null; done; } # cpus pid: every thread of it and its children
import_phase() { # name round: the importer fed at full rate while dnsperf sends 20k q/s
  local before t0 t1 q rows0 rq0
  kill -CONT $API_PID
  before=$(taken)
  rows0=$(imported)
  feed > "$DIR/fed-$2.txt" & FEEDER=$!
  t0=$(date +%s%N)
  rq0=$(rq)
  q=$(load)
  rq0=$(rq_delta "$rq0" "$(rq)" $(( $(date +%s%N) - t0 )))
  kill $FEEDER; wait $FEEDER 2>/dev/null || true
  t1=$(date +%s%N)
  while read -r f; do MOVED+=("$f"); done < "$DIR/fed-$2.txt"
  NEXT=${#MOVED[@]}
  # Rows taken during the phase (a file still waiting at its end is not counted).
  RESULTS+=("$1|$q|$(( ($(taken) - before) * 1000000000 / (t1 - t0) ))|$(cut -d' ' -f1 /proc/loadavg)|$(( ($(imported) - rows0) * 1000000000 / (t1 - t0) ))|$rq0")
  echo "round $2 ${RESULTS[-1]}" >&2
  # Let the importer finish what is waiting before the next phase.
  for _ in $(seq 1 600); do [ "$(ls "$STATS" | grep -c '^queries-')" -le 1 ] && break; sleep 0.5; done
  kill -STOP $API_PID
}
for r in $(seq 1 "$ROUNDS"); do
  kill -STOP $API_PID
  if [ -n "${DNSDIST:-}" ]; then
    RESULTS+=("dnsdist quiet|$(load $DNSDIST_PORT)|0|$(cut -d' ' -f1 /proc/loadavg)")
    echo "round $r ${RESULTS[-1]}" >&2
  fi
  rq0=$(rq); t0=$(date +%s%N)
  q=$(load)
  RESULTS+=("quiet|$q|0|$(cut -d' ' -f1 /proc/loadavg)|0|$(rq_delta "$rq0" "$(rq)" $(( $(date +%s%N) - t0 )))")
  echo "round $r ${RESULTS[-1]}" >&2
  [ -n "${PIN_FIRST:-}" ] || import_phase import "$r"
  if [ -n "${PIN:-}" ]; then
    pin "$PIN" $API_PID
    [ -n "${DNS_PIN:-}" ] && pin "$DNS_PIN" $DNS_PID
    import_phase "import pinned" "$r-pinned"
    pin "${API_CPU:-$ALL_CPUS}" $API_PID
    [ -n "${DNS_PIN:-}" ] && pin "${SERVER_CPU:-$ALL_CPUS}" $DNS_PID
  fi
  [ -z "${PIN_FIRST:-}" ] || import_phase import "$r"
done
kill -CONT $API_PID
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "api role: nice ${NICE:-0}, duckdb-threads ${THREADS:-default}, import-priority ${PRIORITY:-default}; dns role: nice ${DNS_NICE:-0}; pinned phase: api on CPUs ${PIN:-none}, dns on ${DNS_PIN:-all}"
echo "generator ${GEN}${GEN_CPU:+ on CPU $GEN_CPU}${GEN_RT:+ at SCHED_FIFO} (${DNSPERF_ARGS:-}), names ${NAMES:-mixed}; servers on CPU ${SERVER_CPU:-any}${DNS_RT:+ at SCHED_FIFO}; api role on CPU ${API_CPU:-any}, ionice ${IONICE:+-c3}, cgroup cpu.idle ${API_CGROUP_IDLE:-0}"
echo "node $(node -v); dnsperf $(dpkg-query -W -f='${Version}' dnsperf 2>/dev/null); $(nproc) cores; files of $ROWS rows; ${SECS} s phases"
printf '%s\n' "${RESULTS[@]}" | node -e '
const rows = require("fs").readFileSync(0, "utf8").trim().split("\n").map((l) => { const [phase, q, rate, load, logged, rq] = l.split("|"); return { phase, q: JSON.parse(q), rate: Number(rate), load, logged: Number(logged ?? 0), rq: rq ?? "—" } })
const med = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : +((s[n / 2 - 1] + s[n / 2]) / 2).toFixed(3) }
console.log("| phase | rounds | p50 ms | p99 ms (median) | p99 ms (each round) | p99.9 ms | lost | answered q/s | import rows/s (each round) | rows/s logged imported (each round) | DNS thread run-queue wait ms/s / us per slice (each round) | load average (each round) |")
console.log("|---|---:|---:|---:|---|---:|---:|---:|---|---|---|---|")
for (const phase of ["dnsdist quiet", "quiet", "import", "import pinned"]) {
  const rs = rows.filter((r) => r.phase === phase)
  if (rs.length === 0) continue
  console.log(`| ${phase} | ${rs.length} | ${med(rs.map((r) => r.q.p50))} | ${med(rs.map((r) => r.q.p99))} | ${rs.map((r) => r.q.p99).join(" / ")} | ${med(rs.map((r) => r.q.p999))} | ${med(rs.map((r) => r.q.lost))} | ${med(rs.map((r) => r.q.qps))} | ${phase.startsWith("import") ? rs.map((r) => r.rate).join(" / ") : "—"} | ${phase.startsWith("import") ? rs.map((r) => r.logged).join(" / ") : "—"} | ${rs.map((r) => r.rq).join(" ; ")} | ${rs.map((r) => r.load).join(" / ")} |`)
}
'
