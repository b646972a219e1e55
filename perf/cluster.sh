#!/usr/bin/env bash
# A three-node NeoKV cluster on this machine next to a standalone NeoKV and a
# redis-server (no persistence) in the same run: redis-benchmark SET/GET at P1
# and P16 (`--cluster` against the cluster), and memtier_benchmark 1:1 SET:GET
# (`--cluster-mode`). Every NeoKV fsyncs its log per batch (`--appendfsync
# always`); the three cluster nodes share the machine's CPUs with each other and
# with the load generators (`--no-pin`). Loopback only, bounded by request
# counts. A table is appended to perf/RESULTS.md.
#   perf/cluster.sh            N1=50000 N16=300000 perf/cluster.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh
need_memtier

CLIENTS=50
N1=${N1:-50000}
N16=${N16:-300000}
MEMTIER_N=${MEMTIER_N:-2000}

# The cluster (perf/lib.sh), every node fsyncing each batch.
CLUSTER_ARGS="--appendfsync always" start_cluster
PORT_CL=${NPORTS[1]}
PORT_SA=$(NEOKV_ARGS="--no-pin" start_neokv always)
PORT_RED=$(start_redis redis-nopersist --appendonly no)

bench() { # port pipeline test [--cluster] -> "rps p50"
  local port=$1 p=$2 t=$3; shift 3
  local n=$N1; [ "$p" -gt 1 ] && n=$N16
  redis-benchmark -h 127.0.0.1 -p "$port" -c $CLIENTS -n "$n" -P "$p" -d 256 -r 100000 -t "$t" --csv "$@" 2>/dev/null \
    | tail -n 1 | tr -d '"' | awk -F, '{print $2, $5}'
}
memtier() { # port [--cluster-mode] -> "ops/s p50 p99"
  local port=$1; shift
  memtier_benchmark -s 127.0.0.1 -p "$port" "$@" -t 2 -c 25 -n "$MEMTIER_N" --ratio 1:1 -d 256 \
    --key-maximum 100000 --hide-histogram 2>/dev/null | awk '/^Totals/ {print $2, $(NF-3), $(NF-2)}'
}

cpu() { cpu_ticks "$@"; }
per100k() { cpu_per "$1" "$2" "$3" 1e5 2; }
NODE_PIDS=("$(cat "$TMP/node1.pid")" "$(cat "$TMP/node2.pid")" "$(cat "$TMP/node3.pid")")
SA_PID=$(cat "$TMP/neokv-always.pid")

rows=(); cpus=()
for p in 1 16; do
  for t in set get; do
    sleep 3; c0=$(cpu "${NODE_PIDS[@]}"); c=$(bench "$PORT_CL" "$p" "$t" --cluster); c1=$(cpu "${NODE_PIDS[@]}")
    sleep 3; s0=$(cpu "$SA_PID"); s=$(bench "$PORT_SA" "$p" "$t"); s1=$(cpu "$SA_PID")
    n=$N1; [ "$p" -gt 1 ] && n=$N16
    cpus+=("| ${t^^} | $p | $(per100k "$c0" "$c1" "$n") | $(per100k "$s0" "$s1" "$n") | $(ratio "$(per100k "$c0" "$c1" "$n")" "$(per100k "$s0" "$s1" "$n")") |")
    sleep 1; r=$(bench "$PORT_RED" "$p" "$t")
    rows+=("| ${t^^} | $p | ${c% *} (p50 ${c#* } ms) | ${s% *} (p50 ${s#* } ms) | $(ratio "${c% *}" "${s% *}") | ${r% *} | $(ratio "${c% *}" "${r% *}") |")
  done
done
sleep 3; mc=$(memtier "$PORT_CL" --cluster-mode)
sleep 3; ms=$(memtier "$PORT_SA")
sleep 1; mr=$(memtier "$PORT_RED")
read -r mco mcp50 mcp99 <<<"$mc"; read -r mso msp50 msp99 <<<"$ms"; read -r mro mrp50 mrp99 <<<"$mr"

{
  echo
  echo "## $(date -u +%Y-%m-%d) — three-node cluster vs standalone vs redis-server ($REV)"
  echo
  echo "Machine: $(nproc) cores, shared by three NeoKV nodes, one standalone NeoKV, $(redis-server --version | awk '{print $1, $2, $3}') without persistence and the load generators (everything \`--no-pin\`, NeoKV \`--appendfsync always\`). A cluster write is acknowledged once two of three nodes have fsynced it."
  echo "Command: \`redis-benchmark [--cluster] -c $CLIENTS -n $N1 (P1) / $N16 (P16) -P <P> -d 256 -r 100000 -t <set|get> --csv\`, requests/s and p50."
  echo
  echo "| workload | pipeline | cluster (3 nodes) | standalone | cluster / standalone | Redis | cluster / Redis |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo
  echo "Server CPU seconds (utime + stime from /proc) per 100k requests over the same runs: the three nodes together against the standalone server."
  echo
  echo "| workload | pipeline | cluster, 3 nodes | standalone | cluster / standalone |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${cpus[@]}"
  echo
  echo "\`memtier_benchmark [--cluster-mode] -t 2 -c 25 -n $MEMTIER_N --ratio 1:1 -d 256 --key-maximum 100000\`: cluster $mco ops/s (p50 $mcp50 ms, p99 $mcp99 ms), standalone $mso ops/s (p50 $msp50, p99 $msp99), Redis $mro ops/s (p50 $mrp50, p99 $mrp99); cluster / standalone $(ratio "$mco" "$mso")."
} | tee -a perf/RESULTS.md
