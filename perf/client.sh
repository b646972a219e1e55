#!/usr/bin/env bash
# The client crate's own load (client/examples/bench.rs): distributed lock
# acquire+release cycles (one lock per task, two scripts each), with_lock
# cycles on one shared key, pipelines of SETs, and single SETs, through
# neokv-client against a NeoKV and a redis-server (no persistence, and
# appendfsync always) side by side in one run. Loopback only; bounded by
# SECS per workload. Appends a table to perf/RESULTS.md.
#   perf/client.sh            SECS=5 TASKS=32 BATCH=100 perf/client.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh

SECS=${SECS:-5}
TASKS=${TASKS:-32}
BATCH=${BATCH:-100}
cargo build --release -p neokv-client --example bench >/dev/null
BENCH="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/examples/bench"

NEO=$(start_neokv always)
RED=$(start_redis redis-nopersist --appendonly no)
REDA=$(start_redis redis-always --appendonly yes --appendfsync always)

declare -A R
for s in neo red reda; do
  case $s in neo) p=$NEO ;; red) p=$RED ;; reda) p=$REDA ;; esac
  echo "bench against $s (port $p)" >&2
  while read -r name ops p50 p99; do
    R["$s,$name"]="$ops $p50 $p99"
  done < <("$BENCH" --redis "127.0.0.1:$p" --secs "$SECS" --tasks "$TASKS" --batch "$BATCH")
done

{
  echo
  echo "## $(date -u +%Y-%m-%d) — neokv-client: locks and pipelines ($REV)"
  echo
  echo "Machine: $(nproc) cores, shared by the servers and the client; $(redis-server --version | awk '{print $1, $2, $3}')."
  echo "NeoKV: \`neokv-server --appendfsync always ${NEOKV_ARGS:-}\` (every acknowledged write fsynced). Redis: \`--save '' --appendonly no\` and \`--appendonly yes --appendfsync always\`."
  echo "Command: \`perf/client.sh\` (SECS=$SECS TASKS=$TASKS BATCH=$BATCH): \`client/examples/bench.rs --secs $SECS --tasks $TASKS --batch $BATCH\`; operations/s (a lock cycle is one operation, a pipeline of $BATCH SETs is $BATCH), p50 / p99 of one call in ms."
  echo
  echo "| workload | NeoKV | p50 / p99 | Redis (no persist) | p50 / p99 | ratio | Redis (fsync always) | p50 / p99 | ratio |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for w in lock contended pipeline set; do
    read -r no n50 n99 <<<"${R["neo,$w"]:-}"; read -r ro r50 r99 <<<"${R["red,$w"]:-}"; read -r ao a50 a99 <<<"${R["reda,$w"]:-}"
    case $w in
      lock) label="lock acquire + release (own key per task)" ;;
      contended) label="with_lock + INCR, one shared key" ;;
      pipeline) label="pipeline of $BATCH SETs, 256 B (SETs/s)" ;;
      set) label="single SET, 256 B" ;;
    esac
    echo "| $label | $no | $n50 / $n99 | $ro | $r50 / $r99 | $(ratio "$no" "$ro") | $ao | $a50 / $a99 | $(ratio "$no" "$ao") |"
  done
} | tee -a perf/RESULTS.md
