#!/bin/sh
# The long versions of the reliability tests (docs/reliability.md). Run from the repository root
# after `npm run build`; each prints its figures as test diagnostics (lines starting with `#`).
#   FUZZ_PACKETS        fuzz packets (default here 10,000,000)
#   DURABILITY_CYCLES   kill -9 cycles of the api role (default here 100)
#   FUZZ_SEED           replays one fuzz run
set -e
cd "$(dirname "$0")/.."
run () { node --test --enable-source-maps --test-force-exit --test-timeout=0 "$@"; }
FUZZ_PACKETS="${FUZZ_PACKETS:-10000000}" run dist/dns/fuzz.test.js
DURABILITY_CYCLES="${DURABILITY_CYCLES:-100}" run dist/api/durability.test.js
run --test-name-pattern='dead' dist/dns/dns.3.test.js
run dist/dns/abuse.test.js
