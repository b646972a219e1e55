#!/usr/bin/env bash
# The write path, measured the way issue 11 asks, as a before/after table for
# its work: NeoKV (`--appendfsync always`) next to redis-server without
# persistence and with `appendfsync always`, in one run, for `--cores 1` and
# for the default cores; and NeoKV with its Raft log in RocksDB
# (`--raft-log rocksdb`, the log before issue 11) beside it, as the "before":
# - redis-benchmark SET GET INCR LPUSH LPOP SADD HSET SPOP ZADD, then ZRANK and
#   ZRANGEBYSCORE on the sorted set ZADD just wrote, at P1 and P16 (50 clients,
#   256 B values, 100k keys), requests/s;
# - the server's CPU time (utime + stime from /proc) per operation over each
#   run, a ratio that does not depend on what else the machine runs;
# - memtier_benchmark 1:10 SET:GET at P1 and P16 on a prefilled keyspace, with
#   p50 / p99 / p99.9.
# Loopback only; bounded by request counts. Appends to perf/RESULTS.md.
#   perf/write-path.sh            N1=50000 N16=200000 MEMTIER_N=2000 perf/write-path.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh
need_memtier

CLIENTS=50
N1=${N1:-50000}
N16=${N16:-200000}
MEMTIER_N=${MEMTIER_N:-2000}
TESTS=(set get incr lpush lpop sadd hset spop zadd zrank zrangebyscore)

cpu() { cpu_ticks "$@"; }
us_per_op() { cpu_per "$1" "$2" "$3" 1e6 1; }

bench() { # port pipeline test -> requests/s
  local port=$1 p=$2 t=$3 n=$N1 extra=()
  [ "$p" -gt 1 ] && n=$N16
  case $t in
    zrank) extra=(ZRANK myzset "element:__rand_int__") ;;
    zrangebyscore) extra=(ZRANGEBYSCORE myzset "__rand_int__" +inf LIMIT 0 10) ;;
    *) extra=(-t "$t") ;;
  esac
  redis-benchmark -h 127.0.0.1 -p "$port" -c $CLIENTS -n "$n" -P "$p" -d 256 -r 100000 --csv "${extra[@]}" 2>/dev/null \
    | tail -n 1 | tr -d '"' | awk -F, '{print $2}'
}
memtier() { # port pipeline -> "ops/s p50 p99 p99.9"
  memtier_benchmark -s 127.0.0.1 -p "$1" -t 2 -c 25 -n "$MEMTIER_N" --pipeline "$2" --ratio 1:10 -d 256 \
    --key-maximum 100000 --key-pattern R:R --print-percentiles 50,99,99.9 --hide-histogram 2>/dev/null \
    | awk '/^Totals/ {print $2, $(NF-3), $(NF-2), $(NF-1)}'
}
prefill() { # port: every key of memtier's keyspace
  memtier_benchmark -s 127.0.0.1 -p "$1" -t 1 -c 10 --ratio 1:0 -d 256 --key-minimum 1 --key-maximum 100000 \
    --key-pattern P:P -n allkeys --hide-histogram >/dev/null 2>&1
}

{
  echo
  echo "## $(date -u +%Y-%m-%d) — write path: redis-benchmark, memtier, CPU per operation ($REV)"
  echo
  echo "Machine: $(nproc) cores, shared by the servers and the load generators; $(redis-server --version | awk '{print $1, $2, $3}')."
  echo "NeoKV \`--appendfsync always\` (every acknowledged write fsynced). Redis \`--save '' --appendonly no\` and \`--appendonly yes --appendfsync always\`."
  echo "Command: \`perf/write-path.sh\`: \`redis-benchmark -c $CLIENTS -n $N1 (P1) / $N16 (P16) -P <P> -d 256 -r 100000 --csv -t <test>\` (ZRANK and ZRANGEBYSCORE as commands on the set ZADD wrote); \`memtier_benchmark -t 2 -c 25 -n $MEMTIER_N --pipeline <P> --ratio 1:10 -d 256 --key-maximum 100000 --key-pattern R:R\` after a prefill of every key. CPU: the server's utime+stime over the run, µs per request."
} | tee -a perf/RESULTS.md >/dev/null

for cores in 1 default; do
  args="--no-pin"; [ "$cores" = 1 ] && args="--cores 1 --no-pin"
  NEO=$(NEOKV_ARGS="$args" start_neokv always); NEO_PID=$(cat "$TMP/neokv-always.pid")
  OLD=$(NEOKV_ARGS="$args --raft-log rocksdb" start_neokv always rocksdb-log); OLD_PID=$(cat "$TMP/neokv-rocksdb-log.pid")
  RED=$(start_redis redis-nopersist --appendonly no); RED_PID=$(cat "$TMP/redis-nopersist.pid")
  REDA=$(start_redis redis-always --appendonly yes --appendfsync always); REDA_PID=$(cat "$TMP/redis-always.pid")
  echo "cores $cores: NeoKV $NEO, NeoKV RocksDB log $OLD, Redis $RED, Redis always $REDA" >&2
  rows=()
  for p in 1 16; do
    n=$N1; [ "$p" -gt 1 ] && n=$N16
    for t in "${TESTS[@]}"; do
      c0=$(cpu "$NEO_PID"); nv=$(bench "$NEO" "$p" "$t"); c1=$(cpu "$NEO_PID")
      o0=$(cpu "$OLD_PID"); ov=$(bench "$OLD" "$p" "$t"); o1=$(cpu "$OLD_PID")
      r0=$(cpu "$RED_PID"); rv=$(bench "$RED" "$p" "$t"); r1=$(cpu "$RED_PID")
      av=$(bench "$REDA" "$p" "$t")
      ncpu=$(us_per_op "$c0" "$c1" "$n"); rcpu=$(us_per_op "$r0" "$r1" "$n"); ocpu=$(us_per_op "$o0" "$o1" "$n")
      rows+=("| ${t^^} | $p | $nv | $rv | $(ratio "$nv" "$rv") | $av | $(ratio "$nv" "$av") | $ncpu | $rcpu | $(ratio "$ncpu" "$rcpu") | $ov ($(ratio "$ov" "$rv")) | $ocpu |")
      echo "  $t P$p: $nv / $rv / $av (RocksDB log $ov)" >&2
    done
  done
  for port in "$NEO" "$OLD" "$RED" "$REDA"; do redis-cli -p "$port" flushall >/dev/null; prefill "$port"; done
  mrows=()
  for p in 1 16; do
    read -r no n50 n99 n999 <<<"$(memtier "$NEO" "$p")"
    read -r oo o50 o99 o999 <<<"$(memtier "$OLD" "$p")"
    read -r ro r50 r99 r999 <<<"$(memtier "$RED" "$p")"
    read -r ao a50 a99 a999 <<<"$(memtier "$REDA" "$p")"
    mrows+=("| 1:10 | $p | $no ($n50 / $n99 / $n999) | $ro ($r50 / $r99 / $r999) | $(ratio "$no" "$ro") | $ao ($a50 / $a99 / $a999) | $(ratio "$no" "$ao") | $oo ($o50 / $o99 / $o999), $(ratio "$oo" "$ro") |")
  done
  {
    echo
    echo "**\`--cores ${cores}\`** (NeoKV \`$args\`):"
    echo
    echo "| test | P | NeoKV | Redis | ratio | Redis fsync always | ratio | NeoKV CPU µs/op | Redis CPU µs/op | CPU ratio | before: NeoKV, RocksDB log (ratio) | before: CPU µs/op |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "| memtier | P | NeoKV ops/s (p50 / p99 / p99.9 ms) | Redis | ratio | Redis fsync always | ratio | before: NeoKV, RocksDB log, ratio |"
    echo "|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${mrows[@]}"
  } | tee -a perf/RESULTS.md
  for f in neokv-always neokv-rocksdb-log redis-nopersist redis-always; do kill "$(cat "$TMP/$f.pid")"; rm -f "$TMP/$f.pid"; done
  sleep 1; rm -rf "$TMP/neokv-always" "$TMP/neokv-rocksdb-log" "$TMP/redis-nopersist" "$TMP/redis-always"
done
