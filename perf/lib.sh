# Shared by the perf/ scripts (sourced, not run): the NeoKV binary, a temp dir whose
# servers are killed on exit, free loopback ports, and starting the servers.
command -v redis-benchmark >/dev/null || { echo "redis-benchmark missing: make deps" >&2; exit 1; }
BIN="${NEOKV_BIN:-}"
if [ -z "$BIN" ]; then
  cargo build --release --bin neokv-server >/dev/null
  BIN="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/neokv-server"
fi
# The build measured, taken before any script appends to RESULTS.md (which
# would make every run look like one of uncommitted changes).
REV="$(git rev-parse --short HEAD 2>/dev/null || echo worktree)$(git diff --quiet 2>/dev/null || echo '+changes')"
TMP=$(mktemp -d)
# Servers start inside command substitutions (not jobs of the shell): track their pids.
cleanup() { for f in "$TMP"/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done; rm -rf "$TMP"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 300); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "port $1 never came up" >&2; exit 1; }

start_neokv() { # fsync-policy [name, default the policy] -> port; files $TMP/neokv-<name>{,.log,.pid}
  local port name=${2:-$1}; port=$(free_port)
  # shellcheck disable=SC2086
  "$BIN" --port "$port" --dir "$TMP/neokv-$name" --appendfsync "$1" ${NEOKV_ARGS:-} >"$TMP/neokv-$name.log" 2>&1 &
  echo $! > "$TMP/neokv-$name.pid"
  wait_port "$port"; echo "$port"
}
start_redis() { # name extra-args... -> port
  local name=$1; shift; local port; port=$(free_port)
  mkdir -p "$TMP/$name"
  redis-server --port "$port" --bind 127.0.0.1 --dir "$TMP/$name" --save "" "$@" >"$TMP/$name.log" 2>&1 &
  echo $! > "$TMP/$name.pid"
  wait_port "$port"; echo "$port"
}
# memtier_benchmark, built by ../shared/tools/build-memtier.sh when missing (never skipped).
need_memtier() {
  command -v memtier_benchmark >/dev/null || ../shared/tools/build-memtier.sh
  command -v memtier_benchmark >/dev/null || { echo "memtier_benchmark missing and could not be built" >&2; exit 1; }
}
# CPU ticks (utime + stime, from /proc) of processes, summed.
cpu_ticks() { local t=0 pid; for pid in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo "$t"; }
cpu_per() { # ticks-before ticks-after requests scale digits -> CPU seconds × scale per request
  python3 -c "import os,sys; a=sys.argv; print(f'{(int(a[2]) - int(a[1])) / os.sysconf(\"SC_CLK_TCK\") * float(a[4]) / int(a[3]):.{a[5]}f}')" "$@"
}
ratio() { python3 -c "import sys; a,b=float(sys.argv[1] or 0),float(sys.argv[2] or 0); print(f'{a/b:.2f}x' if b else 'n/a')" "$1" "$2"; }

# A cluster of NODES nodes (default 3) on free loopback ports: NPORTS[n] are
# the client ports, node n's pid is in $TMP/noden.pid, its log in
# $TMP/noden.log and its data in $TMP/noden (CLUSTER_DIR overrides $TMP).
# Every node gets the flags in CLUSTER_ARGS. Returns once every node lists
# every node as a master (leaders spread).
start_cluster_node() { # n
  # shellcheck disable=SC2086
  "$BIN" --port "${NPORTS[$1]}" --dir "${CLUSTER_DIR:-$TMP}/node$1" --node-id "$1" --cluster-port "${CPORTS[$1]}" \
    --peers "$PEERS" --no-pin ${CLUSTER_ARGS:-} >>"$TMP/node$1.log" 2>&1 &
  echo $! > "$TMP/node$1.pid"
}
start_cluster() {
  declare -ga CPORTS NPORTS
  local n count=${NODES:-3} peers=()
  NPORTS=(); CPORTS=()
  for n in $(seq 1 "$count"); do NPORTS[$n]=$(free_port); CPORTS[$n]=$(free_port); peers+=("$n=127.0.0.1:${CPORTS[$n]}"); done
  PEERS=$(IFS=,; echo "${peers[*]}")
  for n in $(seq 1 "$count"); do start_cluster_node "$n"; done
  for n in $(seq 1 "$count"); do
    wait_port "${NPORTS[$n]}"
    for _ in $(seq 1 300); do
      [ "$(redis-cli -p "${NPORTS[$n]}" cluster nodes | awk 'NF > 8' | wc -l)" -ge "$count" ] && break
      sleep 0.1
    done
  done
}

# ONLY="A B" keeps the rows of WORKLOADS ("label|arguments") whose label is listed.
only_workloads() {
  [ -n "${ONLY:-}" ] || return 0
  local kept=() w
  for w in "${WORKLOADS[@]}"; do
    [[ " $ONLY " == *" ${w%%|*} "* ]] && kept+=("$w")
  done
  WORKLOADS=("${kept[@]}")
}
