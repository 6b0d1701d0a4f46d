#!/usr/bin/env bash
# Lone queries in the live log, build against build (bench/stats/live-lone.ts): each checkout given runs the
# demo (`filterd all`, conf/demo.yaml) with `stats.rotate` at 1 s, so a file opened at a lone query is often
# closed within the follower's 250 ms poll, and sends TRIALS lone queries 1.1-1.9 s apart. One line per
# checkout, in the order given (name them twice, reversed, to see the load's share).
# Usage: bench/stats/live-lone.sh TRIALS CHECKOUT...   (each built: npm ci && npm run build)
set -uo pipefail
PROBE="$(cd "$(dirname "$0")/../.." && pwd)/dist/bench/stats/live-lone.js"
TRIALS=$1
shift
for tree in "$@"; do
  cd "$tree" || exit 1
  rm -rf var
  sed 's|^stats:|stats:\n  rotate: 1|' conf/demo.yaml > conf/demo-lone.yaml
  node dist/tools/filterd.js build-db --config conf/demo.yaml >/dev/null 2>&1
  node dist/tools/filterd.js all --config conf/demo-lone.yaml > "$tree/var/live-lone.log" 2>&1 &
  pid=$!
  for _ in $(seq 60); do curl -sf http://127.0.0.1:8081/categorygroups/ >/dev/null && break; sleep 1; done
  sleep 2
  echo "$(git log --oneline -1 | cut -c1-7) $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg): $(node "$PROBE" http://127.0.0.1:8081 5300 "$TRIALS" 1100 1900)"
  kill -TERM $pid
  wait $pid 2>/dev/null
  rm -f conf/demo-lone.yaml
  sleep 2
done
