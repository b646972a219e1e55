#!/usr/bin/env bash
# Record a CPU flame graph of NeoKV under redis-benchmark load:
# perf record -e cpu-clock (works where hardware counters do not) with DWARF call
# chains (the release build keeps no frame pointers) + inferno.
# Output: perf/out/flamegraph.svg. Loopback only; the load is bounded by count.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v perf >/dev/null || { echo "perf missing: apt-get install linux-perf" >&2; exit 1; }
if ! command -v inferno-flamegraph >/dev/null; then cargo install inferno >/dev/null; fi
cargo build --release --bin neokv-server >/dev/null
BIN="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/neokv-server"
OUT=perf/out; mkdir -p "$OUT"
TMP=$(mktemp -d); trap 'kill $PID $LOAD 2>/dev/null; rm -rf "$TMP"' EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" --port "$PORT" --dir "$TMP/data" ${NEOKV_ARGS:-} >"$TMP/neokv.log" 2>&1 &
PID=$!
for _ in $(seq 1 300); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
TESTS=${TESTS:-set,get}
redis-benchmark -p "$PORT" -c 50 -n "${N:-300000}" -P "${P:-16}" -r 100000 -t "$TESTS" -q >/dev/null &
LOAD=$!
sleep 1
# System-wide recording (-p PID fails on some kernels), then keep only NeoKV threads.
perf record -e cpu-clock -F 499 -a --call-graph dwarf,16384 -o "$TMP/perf.data" -- sleep "${SECONDS_TO_RECORD:-8}" 2>/dev/null
wait $LOAD || true
perf script -i "$TMP/perf.data" --pid "$PID" 2>/dev/null | inferno-collapse-perf > "$OUT/stacks.folded"
inferno-flamegraph --title "NeoKV under redis-benchmark -t $TESTS -P ${P:-16}" < "$OUT/stacks.folded" > "$OUT/flamegraph.svg"
echo "wrote $OUT/flamegraph.svg ($(wc -l < "$OUT/stacks.folded") stacks)"
