#!/usr/bin/env bash
# Follows docs/install.md in a throwaway root: every ```sh block of the page, in order, except the
# blocks preceded by `<!-- install-test: skip (reason) -->`, which it names with their reason.
#
# The throwaway root: a private mount namespace where /etc, /opt, /var, /usr/local and /run are
# overlays whose changes land in a temp folder (the host is not touched), a private network
# namespace (ports 53 and 80 are free there) linked to another one where 10.0.0.53, the example
# config's resolver, is a stand-in resolver, and a private pid namespace (every process started dies with the script).
# There is no systemd there: a `systemctl` stand-in enables units with the real systemctl (it
# works on files) and starts them as the installed unit file says (User=, Group=, the
# Runtime/State/LogsDirectory=, Environment=, UMask=, AmbientCapabilities=, ExecStart= with %i),
# so the unit's own command line, user and capability are what is tested.
#
#   scripts/install-test.sh         needs root, unshare, overlayfs, ip, dig, curl, setpriv; a build (dist/)
# Exit 0 and "install test passed" when every step ran. FILTERD_TEST_NODE: the node to run (PATH's otherwise).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" != --inside ]; then
  [ "$(id -u)" = 0 ] || { echo "install-test: needs root (namespaces and overlay mounts)" >&2; exit 2; }
  [ -f "$repo/dist/tools/filterd.js" ] || { echo "install-test: no build; run npm run build" >&2; exit 2; }
  work=$(mktemp -d /tmp/filterd-install-XXXXXX)
  trap 'rm -rf "$work"' EXIT
  status=0
  unshare --mount --net --pid --fork --mount-proc --propagation private "$0" --inside "$work" || status=$?
  exit $status
fi

work=$2
node_bin=${FILTERD_TEST_NODE:-$(command -v node)}
node_dir=$(dirname "$node_bin")
export PATH="$node_dir:$PATH"
step () { printf '\n=== %s\n' "$*"; }

step "throwaway root in $work"
for d in etc opt var usr/local run; do
  name=${d//\//-}
  mkdir -p "$work/overlay/$name/upper" "$work/overlay/$name/work"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$work/overlay/$name/upper,workdir=$work/overlay/$name/work" "/$d"
done
# The example's filterd pid/state folders must start empty, whatever the host has.
rm -rf /var/lib/filterd /var/log/filterd /run/filterd /opt/filterd /etc/filterd /etc/systemd/system/filterd*
ip link set lo up
# npm has no network here: production dependencies come from npm's cache (filled by the build's npm ci).
export npm_config_offline=true

step "stand-in resolver at 10.0.0.53:53 (the example's first dnscache.forward), in its own network namespace"
# Its own namespace, as on another machine: the DNS role binds 0.0.0.0:53, which would clash with a
# resolver on port 53 of an address of this namespace.
unshare --net bash -c '
  for _ in $(seq 100); do ip link show resolver0 > /dev/null 2>&1 && break; sleep 0.05; done
  ip link set lo up && ip addr add 10.0.0.53/24 dev resolver0 && ip addr add 10.0.1.53/24 dev resolver0 && ip link set resolver0 up
  exec "$0" --input-type=module -e "
    const { startStubResolver } = await import(\"$1/dist/engine/upstream-stub/index.js\")
    await startStubResolver({ host: \"10.0.0.53\", port: 53, tcp: true, a: \"198.51.100.10\" })
    console.log(\"stand-in resolver ready\")
    setInterval(() => {}, 1 << 30)
  "' "$node_bin" "$repo" > "$work/resolver.log" 2>&1 &
resolver_pid=$!
# Its end of the link goes into its namespace once unshare has made it.
for _ in $(seq 100); do [ "$(readlink "/proc/$resolver_pid/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break; sleep 0.05; done
ip link add host0 type veth peer name resolver0 netns "$resolver_pid"
ip addr add 10.0.0.1/24 dev host0
ip link set host0 up
# The example's second resolver, 10.0.1.53, is routed there too but answers nothing (port closed).
ip route add 10.0.1.0/24 via 10.0.0.53
for _ in $(seq 100); do grep -q ready "$work/resolver.log" && break; sleep 0.1; done
grep -q ready "$work/resolver.log" || { cat "$work/resolver.log"; exit 1; }

step "the server's working folder: the release archive (scripts/release) and the vendor's data file"
home=$work/home
mkdir -p "$home"
"$repo/scripts/release" "$home" > /dev/null
cp "$repo/conf/demo-data/demo.txt" "$home/vendor.txt"

step "systemctl stand-in"
mkdir -p "$work/bin" "$work/units"
cat > "$work/bin/systemctl" <<EOF
#!/usr/bin/env bash
# systemctl without systemd (scripts/install-test.sh): enable with the real one, start from the unit file.
set -euo pipefail
units=$work/units
node_dir=$node_dir
EOF
cat >> "$work/bin/systemctl" <<'EOF'
key () { sed -n "s/^$1=//p" "$2"; }
start_instance () {
  local inst=$1 unit=/etc/systemd/system/filterd@.service
  [ -f "$unit" ] || { echo "systemctl: $unit not installed" >&2; exit 5; }
  local user group umask exec caps=() envs=()
  user=$(key User "$unit"); group=$(key Group "$unit"); umask=$(key UMask "$unit")
  for d in $(key RuntimeDirectory "$unit"); do install -d -o "$user" -g "$group" "/run/$d"; done
  for d in $(key StateDirectory "$unit"); do install -d -o "$user" -g "$group" "/var/lib/$d"; done
  for d in $(key LogsDirectory "$unit"); do install -d -o "$user" -g "$group" "/var/log/$d"; done
  for c in $(key AmbientCapabilities "$unit"); do
    c=$(echo "${c#CAP_}" | tr 'A-Z' 'a-z')
    caps+=(--inh-caps "+$c" --ambient-caps "+$c")
  done
  while IFS= read -r e; do [ -n "$e" ] && envs+=("$e"); done < <(key Environment "$unit")
  # ExecStartPre as systemd runs it: as the unit's user, after its folders exist; a failure stops the start.
  local pre
  while IFS= read -r pre; do
    [ -n "$pre" ] || continue
    echo "systemctl: ExecStartPre of filterd@$inst.service: $pre"
    # shellcheck disable=SC2086 # split into words, as systemd does
    (cd / && setpriv --reuid="$user" --regid="$group" --init-groups \
      env -i PATH="$node_dir:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" "${envs[@]}" ${pre//%i/$inst}) \
      || { echo "systemctl: filterd@$inst.service: ExecStartPre failed" >&2; exit 1; }
  done < <(key ExecStartPre "$unit")
  exec=$(key ExecStart "$unit")
  exec=${exec//%i/$inst}
  echo "systemctl: starting filterd@$inst.service: $exec (as $user:$group, ${caps[*]:-no capabilities})"
  # shellcheck disable=SC2086 # ExecStart is split into words, as systemd does
  (cd / && umask "${umask:-0022}" && exec setpriv --reuid="$user" --regid="$group" --init-groups "${caps[@]}" \
    env -i PATH="$node_dir:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" "${envs[@]}" $exec) \
    > "$units/$inst.out" 2>&1 &
  echo $! > "$units/$inst.pid"
}
wait_started () {
  local inst=$1
  for _ in $(seq 300); do
    if ! kill -0 "$(cat "$units/$inst.pid")" 2>/dev/null; then
      echo "systemctl: filterd@$inst.service failed:" >&2; cat "$units/$inst.out" >&2; tail -n 5 /var/log/filterd/*.log >&2 || true; exit 1
    fi
    grep -qs "\"msg\":\"$inst started\"" /var/log/filterd/*.log "$units/$inst.out" && return 0
    sleep 0.1
  done
  echo "systemctl: filterd@$inst.service did not report ready in 30 s" >&2; cat "$units/$inst.out" >&2; exit 1
}
case "${1:-}" in
  daemon-reload) echo "systemctl: daemon-reload (no systemd here; nothing to reload)" ;;
  enable) shift; exec /usr/bin/systemctl enable "$@" ;;
  start)
    [ "${2:-}" = filterd.target ] || { echo "systemctl stand-in: only 'start filterd.target'" >&2; exit 2; }
    wants=/etc/systemd/system/filterd.target.wants
    [ -d "$wants" ] || { echo "systemctl: filterd.target has no enabled roles" >&2; exit 1; }
    started=()
    for link in "$wants"/filterd@*.service; do
      inst=${link##*/filterd@}; inst=${inst%.service}
      start_instance "$inst"; started+=("$inst")
    done
    for inst in "${started[@]}"; do wait_started "$inst"; done ;;
  status)
    rc=0
    for f in "$units"/*.pid; do
      inst=$(basename "$f" .pid)
      if kill -0 "$(cat "$f")" 2>/dev/null; then echo "● filterd@$inst.service - active (running), pid $(cat "$f")"
      else echo "× filterd@$inst.service - failed"; rc=3; fi
    done
    exit $rc ;;
  *) echo "systemctl stand-in: $* is not emulated" >&2; exit 2 ;;
esac
EOF
chmod +x "$work/bin/systemctl"
export PATH="$work/bin:$PATH"

step "the steps of docs/install.md"
# Blocks: ```sh … ```; a `<!-- install-test: skip (reason) -->` line right before a block skips it.
# "Upgrading" and later need a newer archive than the one installed: the steps end there.
awk '
  /^## Upgrading/ { exit }
  /^<!-- install-test: skip/ { reason = $0; sub(/^<!-- install-test: skip ?/, "", reason); sub(/ ?-->$/, "", reason); gsub(/\047/, "’", reason); pending = 1; next }
  /^```sh$/ { inblock = 1; n++; skipping = pending; pending = 0
              if (skipping) printf "echo %c--- block %d skipped: %s%c\n", 39, n, reason, 39; else printf "echo %c--- block %d%c\n", 39, n, 39
              next }
  /^```$/ && inblock { inblock = 0; next }
  inblock && !skipping { print }
  END { if (n < 7) { print "install-test: docs/install.md has only " n " sh blocks" > "/dev/stderr"; exit 1 } }
' "$repo/docs/install.md" > "$work/steps.sh"
cd "$home"
bash -euo pipefail -x "$work/steps.sh"

step "the roles run as filterd, with only CAP_NET_BIND_SERVICE"
for f in "$work"/units/*.pid; do
  pid=$(cat "$f")
  [ "$(stat -c %U "/proc/$pid")" = filterd ] || { echo "$(basename "$f" .pid) does not run as filterd" >&2; exit 1; }
  # Bit 10: CAP_NET_BIND_SERVICE, and nothing else.
  grep -q '^CapEff:[[:space:]]*0000000000000400$' "/proc/$pid/status" || { echo "$(basename "$f" .pid): unexpected capabilities: $(grep CapEff "/proc/$pid/status")" >&2; exit 1; }
done
ls -l /run/filterd
echo "install test passed"
