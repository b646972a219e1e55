#!/usr/bin/env bash
# Side-by-side load run: redis-benchmark against NeoKV and against redis-server on
# the same machine, in the same run, then a table of both figures and their ratio
# appended to perf/RESULTS.md. Loopback only; bounded by request counts.
#
#   perf/compare.sh            # full matrix
#   QUICK=1 perf/compare.sh    # fewer requests
#   NEOKV_ARGS="--cores 1" perf/compare.sh   # extra server flags (recorded in the table)
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh
OUT=perf/out; mkdir -p "$OUT"

CLIENTS=50
N1=${N1:-$([ -n "${QUICK:-}" ] && echo 20000 || echo 100000)}
N16=${N16:-$([ -n "${QUICK:-}" ] && echo 100000 || echo 500000)}
TESTS=${TESTS:-set,get,incr,mset}

# bench PORT PIPELINE DATASIZE -> lines "TEST rps"
bench() {
  local n=$N1; [ "$2" -gt 1 ] && n=$N16
  redis-benchmark -h 127.0.0.1 -p "$1" -c $CLIENTS -n "$n" -P "$2" -d "$3" -r 100000 -t "$TESTS" --csv 2>/dev/null \
    | tail -n +2 | tr -d '"' | awk -F, '{print $1 "|" $2}'
}

NEO=$(start_neokv always)
RED=$(start_redis redis-nopersist --appendonly no)
REDA=$(start_redis redis-always --appendonly yes --appendfsync always)

declare -A R
for p in 1 16; do
  for d in 3 256; do
    while IFS='|' read -r t v; do R["neo,$t,$p,$d"]=$v; done < <(bench "$NEO" $p $d)
    while IFS='|' read -r t v; do R["red,$t,$p,$d"]=$v; done < <(bench "$RED" $p $d)
    while IFS='|' read -r t v; do R["reda,$t,$p,$d"]=$v; done < <(TESTS=set,incr,mset bench "$REDA" $p $d)
    redis-cli -p "$NEO" flushall >/dev/null; redis-cli -p "$RED" flushall >/dev/null; redis-cli -p "$REDA" flushall >/dev/null
  done
done

{
  echo
  echo "## $(date -u +%Y-%m-%d) — $REV"
  echo
  echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(redis-server --version | awk '{print $1, $2, $3}')."
  echo "NeoKV: \`neokv-server --appendfsync always ${NEOKV_ARGS:-}\` (every acknowledged write fsynced; default: all cores). Redis: \`--save '' --appendonly no\` (no persistence) and \`--appendonly yes --appendfsync always\`."
  echo "Command: \`redis-benchmark -c $CLIENTS -n $N1 (P1) / $N16 (P16) -P <P> -d <D> -r 100000 -t $TESTS --csv\`, requests/s."
  echo
  echo "| test | pipeline | value | NeoKV | Redis (no persist) | ratio | Redis (fsync always) | ratio |"
  echo "|---|---|---|---|---|---|---|---|"
  for p in 1 16; do for d in 3 256; do for t in SET GET INCR "MSET (10 keys)"; do
    n=${R["neo,$t,$p,$d"]:-}; r=${R["red,$t,$p,$d"]:-}; ra=${R["reda,$t,$p,$d"]:-}
    [ -z "$n$r" ] && continue
    echo "| $t | $p | ${d}B | $n | $r | $(ratio "$n" "$r") | ${ra:--} | $([ -n "$ra" ] && ratio "$n" "$ra" || echo -) |"
  done; done; done
} | tee -a perf/RESULTS.md
