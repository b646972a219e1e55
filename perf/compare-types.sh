#!/usr/bin/env bash
# Side-by-side load run of the composite-type commands: redis-benchmark against
# NeoKV (--appendfsync always) and redis-server (no persistence, and appendfsync
# always) on the same machine in the same run; a table of figures and ratios is
# appended to perf/RESULTS.md. Loopback only; bounded by request counts.
#
#   perf/compare-types.sh             QUICK=1 for fewer requests
#   NEOKV_ARGS="--cores 1" perf/compare-types.sh
#   ONLY="PFADD PFCOUNT" perf/compare-types.sh   # some rows only
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh

CLIENTS=50
N1=${N1:-$([ -n "${QUICK:-}" ] && echo 20000 || echo 100000)}
N16=${N16:-$([ -n "${QUICK:-}" ] && echo 100000 || echo 500000)}
# label|redis-benchmark arguments (a -t test, or a command with __rand_int__).
# Order matters: HSET fills myhash for HGET, SADD fills myset for SPOP, LPUSH
# fills mylist for LPOP (-t lrange_100 fills its own list first), ZADD fills
# myzset (random scores below 100000) for ZRANGEBYSCORE and ZRANK, PFADD fills
# myhll for PFCOUNT (whose first call stores the cache; the others read it)
# and PFMERGE. SETBIT writes one bit of a 1 KB value, SETBIT_100MB the last
# bit of a 100 MB one (made by its first call: NeoKV stores one chunk of it);
# redis-benchmark's __rand_int__ is zero-padded, which a bit offset refuses,
# so the offsets are fixed. GEOADD puts every member at one point and
# GEOSEARCH (COUNT 10 ANY) stops at the first ten inside the radius.
# (Redis's own offsets: SETBIT allocates the whole 100 MB on its first call.)
# XADD appends to mystream with `*` ids, XRANGE reads ten entries from its
# head, XREADGROUP (group g, made before the row) takes one new entry each
# call: a replicated write of the group's pending entry.
WORKLOADS=(
  "HSET|-t hset"
  "HGET|HGET myhash element:__rand_int__"
  "SADD|-t sadd"
  "SPOP|-t spop"
  "LPUSH|-t lpush"
  "LPOP|-t lpop"
  "LRANGE_100|-t lrange_100"
  "ZADD|-t zadd"
  "ZRANGEBYSCORE|ZRANGEBYSCORE myzset __rand_int__ +inf LIMIT 0 10"
  "ZRANK|ZRANK myzset element:__rand_int__"
  "PFADD|PFADD myhll element:__rand_int__"
  "PFCOUNT|PFCOUNT myhll"
  "PFMERGE|PFMERGE myhll2 myhll"
  "SETBIT|SETBIT mybits 7777 1"
  "SETBIT_100MB|SETBIT bigbits 799999999 1"
  "BITCOUNT|BITCOUNT mybits"
  "GEOADD|GEOADD mygeo 13.361389 38.115556 member:__rand_int__"
  "GEOSEARCH|GEOSEARCH mygeo FROMLONLAT 15 37 BYRADIUS 200 km COUNT 10 ANY"
  "XADD|XADD mystream * field element:__rand_int__"
  "XRANGE|XRANGE mystream - + COUNT 10"
  "XREADGROUP|XREADGROUP GROUP g consumer COUNT 1 STREAMS mystream >"
)
# ONLY="PFADD PFCOUNT" runs just those rows (a read row reads what its writer row wrote).
only_workloads

bench() { # port pipeline args...
  local port=$1 p=$2; shift 2
  local n=$N1; [ "$p" -gt 1 ] && n=$N16
  # shellcheck disable=SC2068
  redis-benchmark -h 127.0.0.1 -p "$port" -c $CLIENTS -n "$n" -P "$p" -r 100000 --csv $@ 2>/dev/null \
    | tail -n 1 | tr -d '"' | awk -F, '{print $2}'
}

NEO=$(start_neokv always)
RED=$(start_redis redis-nopersist --appendonly no)
REDA=$(start_redis redis-always --appendonly yes --appendfsync always)

declare -A R
set -f # the workloads' `*` is an argument, not a file pattern
for p in 1 16; do
  for w in "${WORKLOADS[@]}"; do
    label=${w%%|*}; args=${w#*|}
    if [ "$label" = XREADGROUP ]; then
      for port in "$NEO" "$RED" "$REDA"; do redis-cli -p "$port" XGROUP CREATE mystream g 0 MKSTREAM >/dev/null; done
    fi
    # shellcheck disable=SC2086
    R["neo,$label,$p"]=$(bench "$NEO" "$p" $args)
    # shellcheck disable=SC2086
    R["red,$label,$p"]=$(bench "$RED" "$p" $args)
    # shellcheck disable=SC2086
    R["reda,$label,$p"]=$(bench "$REDA" "$p" $args)
  done
  for port in "$NEO" "$RED" "$REDA"; do redis-cli -p "$port" flushall >/dev/null; done
done
set +f

{
  echo
  echo "## $(date -u +%Y-%m-%d) — data types — $REV"
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
