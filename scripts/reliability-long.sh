#!/bin/sh
# The long versions of the reliability tests (docs/reliability.md). Run from the repository root
# after `npm run build`; each prints its figures as test diagnostics (lines starting with `#`).
#   FUZZ_PACKETS        fuzz packets (default here 10,000,000)
#   DURABILITY_CYCLES   kill -9 cycles of the api role (default here 100)
#   FUZZ_SEED           replays one fuzz run
#   FUZZ_RATE           fuzz packets/s of the stall run (default 15,000); STALL_PACKETS its length
#   FUZZ_SERVER_CPU     pins the stall run's server to that CPU (unset: not pinned, which measured better)
set -e
cd "$(dirname "$0")/.."
run () { node --test --enable-source-maps --test-force-exit --test-timeout=0 "$@"; }
FUZZ_PACKETS="${FUZZ_PACKETS:-10000000}" run dist/dns/fuzz.test.js
# The stall measurement: fuzz at a rate the server keeps up with, in small batches, so the probe's
# worst latency is the server's own pauses rather than its queue; it must stay within 20 ms. The
# fuzzer stands for other hosts: its main thread runs at a lower priority (FUZZ_NICE).
FUZZ_NICE="${FUZZ_NICE:-10}" FUZZ_RATE="${FUZZ_RATE:-15000}" FUZZ_BATCH=16 FUZZ_PACKETS="${STALL_PACKETS:-1000000}" FUZZ_WORST_MS="${STALL_WORST_MS:-20}" run dist/dns/fuzz.test.js
DURABILITY_CYCLES="${DURABILITY_CYCLES:-100}" run dist/api/durability.test.js
run --test-name-pattern='dead' dist/dns/dns.3.native.test.js dist/dns/dns.3.dgram.test.js
run dist/dns/abuse.test.js
