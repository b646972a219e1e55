#!/usr/bin/env bash
# Scale-out on one machine (issue 35, item 6): a 3-node cluster and a 5-node
# cluster, both `--replicas 3`, loaded alike in one run, one after the other:
# redis-benchmark --cluster SET (random keys, 256-byte values) at P16, then per
# node the bytes its data directory holds, the keys it stores (NEOKV.REGIONS),
# the regions it holds and leads, and its CPU seconds per 100k writes. The
# machine's cores are shared by every node and the load generator, so the
# throughput here cannot grow with nodes; what must shrink is each node's
# share of the bytes and of the CPU (3/N of the replicas). Loopback only,
# bounded by request counts. A section is appended to perf/RESULTS.md.
#   perf/scale.sh              N=300000 perf/scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh

N=${N:-300000}
CLIENTS=50

run() { # nodes -> rows appended to ROWS, a summary line to SUMMARY
  local count=$1 n pids=() port
  NODES=$count CLUSTER_DIR="$TMP/c$count" CLUSTER_ARGS="--appendfsync always --replicas 3" start_cluster
  for n in $(seq 1 "$count"); do pids+=("$(cat "$TMP/node$n.pid")"); done
  port=${NPORTS[1]}
  sleep 3
  local before=() after=()
  for n in $(seq 1 "$count"); do before+=("$(cpu_ticks "${pids[$((n - 1))]}")"); done
  local out rps p50
  out=$(redis-benchmark -h 127.0.0.1 -p "$port" --cluster -c $CLIENTS -n "$N" -P 16 -d 256 -r 1000000 -t set --csv 2>/dev/null | tail -n 1 | tr -d '"')
  rps=$(echo "$out" | awk -F, '{print $2}'); p50=$(echo "$out" | awk -F, '{print $5}')
  for n in $(seq 1 "$count"); do after+=("$(cpu_ticks "${pids[$((n - 1))]}")"); done
  sleep 2
  local total_bytes=0 total_cpu=0
  for n in $(seq 1 "$count"); do
    local p=${NPORTS[$n]} bytes keys held led cpu
    bytes=$(du -sb "$TMP/c$count/node$n" | cut -f1)
    # NEOKV.REGIONS as RESP2: the node's stored keys over every region, its replicas and leaderships.
    read -r keys held led < <(redis-cli -3 --json -p "$p" neokv.regions 2>/dev/null | python3 -c "
import json, sys
rs = json.load(sys.stdin)
me = $n
keys = sum(r['keys'] for r in rs)
held = sum(1 for r in rs if me in r['voters'])
led = sum(1 for r in rs if r['leader'] == me)
print(keys, held, led)")
    cpu=$(cpu_per "${before[$((n - 1))]}" "${after[$((n - 1))]}" "$N" 1e5 2)
    total_bytes=$((total_bytes + bytes)); total_cpu=$(python3 -c "print(round($total_cpu + $cpu, 2))")
    ROWS+=("| $count | $n | $held | $led | $keys | $((bytes / 1048576)) | $cpu |")
  done
  SUMMARY+=("| $count | $rps (p50 $p50 ms) | $((total_bytes / count / 1048576)) | $(python3 -c "print(round($total_cpu / $count, 2))") | $total_cpu |")
  for n in $(seq 1 "$count"); do kill "$(cat "$TMP/node$n.pid")" 2>/dev/null || true; done
  sleep 1
}

ROWS=(); SUMMARY=()
run 3
run 5

{
  echo
  echo "## $(date -u +%Y-%m-%d) — scale-out: 3 nodes vs 5 nodes, both \`--replicas 3\` ($REV)"
  echo
  echo "Machine: $(nproc) cores shared by every node and the load generator (\`--no-pin\`, \`--appendfsync always\`, 4 regions per node: 12 and 20). Each cluster fresh, loaded alike: \`redis-benchmark --cluster -c $CLIENTS -n $N -P 16 -d 256 -r 1000000 -t set\`; then per node its data directory (\`du -sb\`), the keys it stores (NEOKV.REGIONS), the regions it holds and leads, and its CPU seconds (utime + stime) per 100k SETs of the whole load."
  echo
  echo "| nodes | SET/s | MB per node (mean) | CPU s per 100k SETs per node (mean) | CPU s per 100k SETs, all nodes |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${SUMMARY[@]}"
  echo
  echo "| nodes | node | regions held | regions led | keys stored | MB | CPU s per 100k SETs |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s\n' "${ROWS[@]}"
} | tee -a perf/RESULTS.md
