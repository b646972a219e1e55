#!/usr/bin/env bash
# Regression check of a change: two NeoKV builds (BASE, e.g. the commit before a
# refactor, and the working tree) and redis-server (no persistence) side by side
# on the same machine in the same run, interleaved per workload so drift in the
# machine hits both builds alike. A table of figures and ratios is appended to
# perf/RESULTS.md. Loopback only; bounded by request counts.
#
#   BASE=07673f1 perf/compare-builds.sh          # builds BASE in a temporary worktree
#   BASE=07673f1 NEW=0fee4e0 perf/compare-builds.sh   # two commits, the working tree untouched
#   NEOKV_BASE_BIN=/path/to/old perf/compare-builds.sh
#   ROUNDS=3 QUICK=1 NEOKV_ARGS="--cores 1" perf/compare-builds.sh
#   ONLY="HSET HGET SADD SISMEMBER" perf/compare-builds.sh   # some rows only
set -euo pipefail
cd "$(dirname "$0")/.."
# With NEW set, perf/lib.sh must not build the working tree.
if [ -n "${NEW:-}" ]; then NEOKV_BIN=unset-yet; fi
. perf/lib.sh

CLIENTS=50
ROUNDS=${ROUNDS:-2}
SETTLE=${SETTLE:-3}
N1=${N1:-$([ -n "${QUICK:-}" ] && echo 20000 || echo 100000)}
N16=${N16:-$([ -n "${QUICK:-}" ] && echo 100000 || echo 500000)}
WORKLOADS=(
  "SET|-t set"
  "GET|-t get"
  "INCR|-t incr"
  "HSET|-t hset"
  "HGET|HGET myhash element:__rand_int__"
  "LPUSH|-t lpush"
  "ZADD|-t zadd"
  "ZSCORE|ZSCORE myzset element:__rand_int__"
  "ZRANGEBYSCORE|ZRANGEBYSCORE myzset __rand_int__ +inf LIMIT 0 10"
  "ZRANK|ZRANK myzset element:__rand_int__"
  "SADD|-t sadd"
  "SISMEMBER|SISMEMBER myset element:__rand_int__"
  "SPOP|-t spop"
)
# ONLY="HSET HGET" runs just those rows (a read row reads what its writer row wrote).
only_workloads

# Build a commit in a temporary worktree with a target dir of its own (a copy of
# the main one the first time, so only the neokv crate is compiled): builds of
# different sources must not share the build script's output dir.
build_at() { # commit role -> path of its binary
  local target wt
  target="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
  # (Without CARGO_TARGET_DIR that is ./target-<role>, which .gitignore keeps out.)
  if [ ! -d "$target-$2" ] && [ -d "$target" ]; then cp -a "$target" "$target-$2"; fi
  wt="$TMP/src-$2"
  git worktree add -q --detach "$wt" "$1"
  (cd "$wt" && CARGO_TARGET_DIR="$target-$2" cargo build --release --bin neokv-server >/dev/null)
  cp "$target-$2/release/neokv-server" "$TMP/neokv-$2"
  git worktree remove --force "$wt"
  echo "$TMP/neokv-$2"
}
if [ -z "${NEOKV_BASE_BIN:-}" ]; then
  : "${BASE:?set BASE (a commit) or NEOKV_BASE_BIN (a binary)}"
  NEOKV_BASE_BIN=$(build_at "$BASE" base)
fi
# NEW: a commit to compare (default: the working tree, built by perf/lib.sh).
if [ -n "${NEW:-}" ]; then BIN=$(build_at "$NEW" new); fi

start_bin() { # binary name -> port
  local port; port=$(free_port)
  # shellcheck disable=SC2086
  "$1" --port "$port" --dir "$TMP/$2" --appendfsync always ${NEOKV_ARGS:-} >"$TMP/$2.log" 2>&1 &
  echo $! > "$TMP/$2.pid"
  wait_port "$port"; echo "$port"
}

bench() { # port pipeline args...
  local port=$1 p=$2; shift 2
  local n=$N1; [ "$p" -gt 1 ] && n=$N16
  # shellcheck disable=SC2068
  redis-benchmark -h 127.0.0.1 -p "$port" -c $CLIENTS -n "$n" -P "$p" -d 256 -r 100000 --csv $@ 2>/dev/null \
    | tail -n 1 | tr -d '"' | awk -F, '{print $2}'
}

PORT_OLD=$(start_bin "$NEOKV_BASE_BIN" base)
PORT_NEW=$(start_bin "$BIN" new)
PORT_RED=$(start_redis redis-nopersist --appendonly no)

declare -A R
for round in $(seq 1 "$ROUNDS"); do
  for p in 1 16; do
    for w in "${WORKLOADS[@]}"; do
      label=${w%%|*}; args=${w#*|}
      # shellcheck disable=SC2086
      # Who goes first alternates by round, and each run waits SETTLE seconds: a
      # write run leaves RocksDB flushing and compacting for seconds, which takes
      # CPU from whoever runs next (measured: 10-20% at P16 on two cores).
      order="old new red"; [ $((round % 2)) = 0 ] && order="new old red"
      for who in $order; do
        port=$PORT_OLD; [ $who = new ] && port=$PORT_NEW; [ $who = red ] && port=$PORT_RED
        sleep "$SETTLE"
        v=$(bench "$port" "$p" $args)
        R["$who,$label,$p"]="${R["$who,$label,$p"]:-} $v"
      done
    done
  done
done

best() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | tail -1; }
{
  echo
  echo "## $(date -u +%Y-%m-%d) — builds compared: ${BASE:-$NEOKV_BASE_BIN} → ${NEW:-$REV}"
  echo
  echo "Machine: $(nproc) cores; $(redis-server --version | awk '{print $1, $2, $3}') without persistence. Both NeoKV builds: \`--appendfsync always ${NEOKV_ARGS:-}\`."
  echo "Command: \`redis-benchmark -c $CLIENTS -n $N1 (P1) / $N16 (P16) -P <P> -d 256 -r 100000 --csv <workload>\`; each figure is the best of $ROUNDS rounds (old, new and Redis interleaved, old and new taking turns first, ${SETTLE} s between runs), requests/s."
  echo
  echo "| workload | pipeline | NeoKV base | NeoKV new | new / base | Redis | new / Redis |"
  echo "|---|---|---|---|---|---|---|"
  for p in 1 16; do for w in "${WORKLOADS[@]}"; do
    label=${w%%|*}
    o=$(best "${R["old,$label,$p"]}"); n=$(best "${R["new,$label,$p"]}"); r=$(best "${R["red,$label,$p"]}")
    echo "| $label | $p | $o | $n | $(ratio "$n" "$o") | $r | $(ratio "$n" "$r") |"
  done; done
} | tee -a perf/RESULTS.md
