#!/usr/bin/env bash
# Side-by-side load run of the composite-type commands: redis-benchmark against
# NeoKV (--appendfsync always) and redis-server (no persistence, and appendfsync
# always) on the same machine in the same run; a table of figures and ratios is
# appended to perf/RESULTS.md. Loopback only; bounded by request counts.
#
#   perf/compare-types.sh             QUICK=1 for fewer requests
#   NEOKV_ARGS="--cores 1" perf/compare-types.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v redis-benchmark >/dev/null || { echo "redis-benchmark missing: make deps" >&2; exit 1; }
BIN="${NEOKV_BIN:-}"
if [ -z "$BIN" ]; then
  cargo build --release --bin neokv-server >/dev/null
  BIN="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/neokv-server"
fi
TMP=$(mktemp -d)
cleanup() { for f in "$TMP"/*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done; rm -rf "$TMP"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 300); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "port $1 never came up" >&2; exit 1; }

CLIENTS=50
N1=${N1:-$([ -n "${QUICK:-}" ] && echo 20000 || echo 100000)}
N16=${N16:-$([ -n "${QUICK:-}" ] && echo 100000 || echo 500000)}
# label|redis-benchmark arguments (a -t test, or a command with __rand_int__).
# Order matters: HSET fills myhash for HGET, SADD fills myset for SPOP.
WORKLOADS=(
  "HSET|-t hset"
  "HGET|HGET myhash element:__rand_int__"
  "SADD|-t sadd"
  "SPOP|-t spop"
)

bench() { # port pipeline args...
  local port=$1 p=$2; shift 2
  local n=$N1; [ "$p" -gt 1 ] && n=$N16
  # shellcheck disable=SC2068
  redis-benchmark -h 127.0.0.1 -p "$port" -c $CLIENTS -n "$n" -P "$p" -r 100000 --csv $@ 2>/dev/null \
    | tail -n +2 | head -1 | tr -d '"' | awk -F, '{print $2}'
}

start_neokv() {
  local port; port=$(free_port)
  # shellcheck disable=SC2086
  "$BIN" --port "$port" --dir "$TMP/neokv" --appendfsync always ${NEOKV_ARGS:-} >"$TMP/neokv.log" 2>&1 &
  echo $! > "$TMP/neokv.pid"; wait_port "$port"; echo "$port"
}
start_redis() {
  local name=$1; shift; local port; port=$(free_port)
  mkdir -p "$TMP/$name"
  redis-server --port "$port" --bind 127.0.0.1 --dir "$TMP/$name" --save "" "$@" >"$TMP/$name.log" 2>&1 &
  echo $! > "$TMP/$name.pid"; wait_port "$port"; echo "$port"
}

NEO=$(start_neokv)
RED=$(start_redis redis-nopersist --appendonly no)
REDA=$(start_redis redis-always --appendonly yes --appendfsync always)

declare -A R
for p in 1 16; do
  for w in "${WORKLOADS[@]}"; do
    label=${w%%|*}; args=${w#*|}
    # shellcheck disable=SC2086
    R["neo,$label,$p"]=$(bench "$NEO" "$p" $args)
    # shellcheck disable=SC2086
    R["red,$label,$p"]=$(bench "$RED" "$p" $args)
    # shellcheck disable=SC2086
    R["reda,$label,$p"]=$(bench "$REDA" "$p" $args)
  done
  for port in "$NEO" "$RED" "$REDA"; do redis-cli -p "$port" flushall >/dev/null; done
done

ratio() { python3 -c "import sys; a,b=float(sys.argv[1] or 0),float(sys.argv[2] or 0); print(f'{a/b:.2f}x' if b else 'n/a')" "$1" "$2"; }
{
  echo
  echo "## $(date -u +%Y-%m-%d) — composite types — $(git rev-parse --short HEAD 2>/dev/null || echo worktree)"
  echo
  echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(redis-server --version | awk '{print $1, $2, $3}')."
  echo "NeoKV: \`neokv-server --appendfsync always ${NEOKV_ARGS:-}\`. Redis: \`--save '' --appendonly no\` and \`--appendonly yes --appendfsync always\`."
  echo "Command: \`perf/compare-types.sh\`: \`redis-benchmark -c $CLIENTS -n $N1 (P1) / $N16 (P16) -P <P> -r 100000 --csv <workload>\`, requests/s; workloads run in order on one dataset per pipeline depth."
  echo
  echo "| workload | pipeline | NeoKV | Redis (no persist) | ratio | Redis (fsync always) | ratio |"
  echo "|---|---|---|---|---|---|---|"
  for p in 1 16; do for w in "${WORKLOADS[@]}"; do
    label=${w%%|*}; args=${w#*|}
    n=${R["neo,$label,$p"]:-}; r=${R["red,$label,$p"]:-}; ra=${R["reda,$label,$p"]:-}
    echo "| $label (\`$args\`) | $p | $n | $r | $(ratio "$n" "$r") | $ra | $(ratio "$n" "$ra") |"
  done; done
} | tee -a perf/RESULTS.md
