#!/usr/bin/env bash
# Management API writes while the dns role's feed process loads a large RPZ feed again and again, on a
# machine whose cores are all taken (HOGS CPU-bound processes at normal priority, stress-ng): does the
# feed process, which holds the store's single LMDB writer in batches while it loads, make the API's
# writes wait? Each round starts an api and a dns role on one store; the feed is a zone file of OWNERS
# owners whose serial (and every owner) changes every 2 s, each change a whole load (file-refresh: 1).
# WRITES writes to the global blacklist (POST /blacklist/, 100 ms apart) are timed from the request to
# the answer. Three cases, in turns, ROUNDS times: `nofeed` (no rpz-feeds: the API's own floor on the
# loaded machine), `normal` (the feed process moved back to SCHED_OTHER, nice 0: needs root) and `idle`
# (as shipped: SCHED_IDLE). Prints p50, p90, p99 and max per round.
# Usage: npm run build && flock /tmp/bench.lock bash bench/rpz/feed-api-writes.sh [OWNERS=300000] [WRITES=100] [ROUNDS=2] [HOGS=4]
set -euo pipefail
cd "$(dirname "$0")/../.."
OWNERS=${1:-300000} WRITES=${2:-100} ROUNDS=${3:-2} HOGS=${4:-4}
FILTERD=${FILTERD:-dist/tools/filterd.js}
API=5681 DNS=5682 UP=5683
command -v stress-ng >/dev/null || { echo "needs stress-ng (apt-get install stress-ng)" >&2; exit 1; }
zone() { # serial file: OWNERS owners whose names change with the serial's parity
  node -e '
    const [s, n] = process.argv.slice(1).map(Number)
    const lines = [`$ORIGIN f.rpz.`, `@ 300 SOA ns. admin. ${s} 60 60 600 60`, `  NS localhost.`]
    for (let i = 0; i < n; i++) lines.push(`n${i}-${s % 2}.example CNAME .`)
    process.stdout.write(lines.join("\n") + "\n")' "$1" "$OWNERS" > "$2.tmp"
  mv "$2.tmp" "$2"
}
writes() { # -> "p50 p90 p99 max" in ms
  node -e '
    const [port, n] = process.argv.slice(1).map(Number)
    const ms = []
    for (let i = 0; i < n; i++) {
      const t0 = performance.now()
      const res = await fetch(`http://127.0.0.1:${port}/blacklist/`, {
        method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify([`w${i}.example`])
      })
      await res.arrayBuffer()
      if (!res.ok) throw new Error(`status ${res.status}`)
      ms.push(performance.now() - t0)
      await new Promise((r) => setTimeout(r, 100))
    }
    ms.sort((a, b) => a - b)
    const p = (q) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(0)
    console.log(`${p(0.5)} ${p(0.9)} ${p(0.99)} ${ms[ms.length - 1].toFixed(0)}`)' "$API" "$WRITES"
}
round() { # mode -> "p50 p90 p99 max"
  local mode=$1 d feeds="" pids=()
  d=$(mktemp -d /tmp/filterd-feed-api.XXXXXX)
  zone 1 "$d/f.rpz.zone"
  [ "$mode" = nofeed ] ||
    feeds="rpz-feeds: { file-refresh: 1, max-records: 2000000, feeds: [ { zone: f.rpz, file: $d/f.rpz.zone } ] }"
  cat > "$d/filterd.yaml" <<YAML
common: { db: $d/db, log-level: warn }
dnscache: { forward: [127.0.0.1:$UP] }
proxy: { listen: [127.0.0.1:$DNS], log: $d/dns.log, pid: $d/dns.pid, blockpage-ip: [192.0.2.1] }
api: { listen: 127.0.0.1:$API, log: $d/api.log, pid: $d/api.pid }
stats: { dir: $d/stats, db: $d/statsdb }
datafiles: { path: $PWD/conf/demo-data, file: [demo.txt], cats: $PWD/conf }
$feeds
YAML
  node "$FILTERD" api --config "$d/filterd.yaml" > "$d/api.out" 2>&1 & pids+=($!)
  node "$FILTERD" dns --config "$d/filterd.yaml" > "$d/dns.out" 2>&1 & local dns=$!; pids+=($dns)
  until curl -sf -o /dev/null "http://127.0.0.1:$API/blacklist/"; do kill -0 "${pids[0]}"; sleep 0.2; done
  # No upstream listens: a name outside the feed is SERVFAIL, one in it NXDOMAIN (the first load is in).
  local want=NXDOMAIN; [ "$mode" = nofeed ] && want=SERVFAIL
  until dig +tries=1 +time=3 @127.0.0.1 -p $DNS n0-1.example 2>/dev/null | grep -q "status: $want"; do
    kill -0 "$dns"; sleep 0.2
  done
  if [ "$mode" = normal ]; then
    local f; f=$(pgrep -P "$dns" -f feed-process.js)
    chrt --other --all-tasks --pid 0 "$f"
    renice -n 0 -p $(ls "/proc/$f/task") > /dev/null
  fi
  stress-ng --cpu "$HOGS" --timeout 900s > /dev/null 2>&1 & pids+=($!)
  (s=2; while true; do zone $s "$d/f.rpz.zone"; s=$((s + 1)); sleep 2; done) & pids+=($!)
  sleep 3
  writes
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$d"
}
echo "feed of $OWNERS owners reloaded every 2 s; $HOGS CPU hogs on $(nproc) cores; $WRITES API writes a round; node $(node -v)"
echo "case    p50  p90  p99  max (ms)"
for r in $(seq 1 "$ROUNDS"); do
  for mode in nofeed normal idle; do printf '%-7s %s\n' "$mode" "$(round $mode)"; done
done
