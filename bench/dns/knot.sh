# Sourced by the DNS benchmarks: Knot DNS as the upstream stand-in, authoritative for "." with
# "* A 192.0.2.53", one worker of each kind. start_knot DIR PORT starts it in the background and
# appends its pid to the caller's PIDS array.
start_knot() {
  local dir=$1/knot port=$2
  mkdir -p "$dir/run" "$dir/db"
  cat > "$dir/root.zone" <<ZONE
\$ORIGIN .
\$TTL 300
@   IN SOA ns.invalid. hostmaster.invalid. 1 3600 600 86400 300
@   IN NS  ns.invalid.
*   IN A   192.0.2.53
ZONE
  cat > "$dir/knot.conf" <<CONF
server:
    rundir: "$dir/run"
    listen: 127.0.0.1@$port
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
database:
    storage: "$dir/db"
template:
  - id: default
    storage: "$dir"
    semantic-checks: off
zone:
  - domain: .
    file: "root.zone"
log:
  - target: stderr
    any: warning
CONF
  knotd -c "$dir/knot.conf" &
  PIDS+=($!)
}
