# Sourced by the DNS benchmarks: what several of them set up the same way.
#
# bench_processes: the caller's PIDS array, every process in it killed when the script exits.
# bench_data DIR KNOT_PORT: bench/dns/setup.ts's data set in DIR (kept when it is already there) and
#   a self-signed RSA-2048 certificate for the encrypted listeners (DIR/cert.pem, DIR/key.pem).
# start_dnsdist_udp DIR PORT KNOT_PORT: dnsdist 1.7 on 127.0.0.1:PORT (plain DNS) with the data set's
#   1M-name block list as one SuffixMatchNode rule (SpoofAction 192.0.2.1) and Knot as its backend;
#   appends its pid to PIDS. DNSDIST_LISTENERS=N (1 by default) gives it N listener threads on
#   SO_REUSEPORT sockets and N sockets to the backend.
bench_processes() {
  PIDS=()
  trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true' EXIT
}
bench_data() {
  local dir=$1 knot=$2
  [ -f "$dir/native-inline-p1.yaml" ] || node dist/bench/dns/setup.js "$dir" "$knot" >&2
  [ -f "$dir/cert.pem" ] || openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=dns.bench \
    -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null
}
start_dnsdist_udp() {
  local dir=$1 port=$2 knot=$3 listeners=${DNSDIST_LISTENERS:-1}
  # More listeners: one thread each on its own SO_REUSEPORT socket (dnsdist's way to use more cores),
  # and as many sockets (and responder threads) to the backend.
  local extra=""
  for _ in $(seq 2 "$listeners"); do extra+="addLocal(\"127.0.0.1:$port\", {reusePort=true})"$'\n'; done
  cat > "$dir/dnsdist.lua" <<LUA
setSecurityPollSuffix("")
setLocal("127.0.0.1:$port", {reusePort=true})
${extra}newServer({address="127.0.0.1:$knot", name="knot", checkInterval=5, sockets=$listeners})
local smn = newSuffixMatchNode()
for line in io.lines("$dir/blocklist.txt") do if line ~= "" then smn:add(line) end end
addAction(SuffixMatchNodeRule(smn, true), SpoofAction("192.0.2.1"))
LUA
  dnsdist --supervised --disable-syslog -C "$dir/dnsdist.lua" >/dev/null 2>&1 & PIDS+=($!)
}
