#!/usr/bin/env bash
# Scale-out on one machine (issue 35, item 6): a 3-node cluster and a 5-node
# cluster, both `--replicas 3`, loaded alike in one run, one after the other:
# memtier_benchmark --cluster-mode SETs (random keys over every slot, 256-byte
# values, pipelined 16 deep), then per
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
need_memtier

N=${N:-300000}
CLIENTS=50

stored_keys() { # port -> the keys the node stores over every region
  redis-cli -3 --json -p "$1" neokv.regions 2>/dev/null | python3 -c "import json, sys; print(sum(r['keys'] for r in json.load(sys.stdin)))"
}

run() { # nodes -> rows appended to ROWS, a summary line to SUMMARY
  local count=$1 n pids=() port
  NODES=$count CLUSTER_DIR="$TMP/c$count" CLUSTER_ARGS="--appendfsync always --replicas 3" start_cluster
  for n in $(seq 1 "$count"); do pids+=("$(cat "$TMP/node$n.pid")"); done
  port=${NPORTS[1]}
  sleep 3
  local before=() after=()
  for n in $(seq 1 "$count"); do before+=("$(cpu_ticks "${pids[$((n - 1))]}")"); done
  local rps p50
  # memtier spreads its keys over every slot (redis-benchmark --cluster puts
  # each master's keys under one hash tag, so into a few regions).
  read -r rps p50 < <(memtier_benchmark -s 127.0.0.1 -p "$port" --cluster-mode -t 2 -c $((CLIENTS / 2)) \
    -n $((N / CLIENTS)) --pipeline 16 --ratio 1:0 -d 256 --key-pattern R:R --key-maximum 1000000 \
    --distinct-client-seed --randomize -R --hide-histogram 2>/dev/null | awk '/^Totals/ {print $2, $(NF-3)}')
  # Followers apply behind the leaders' acknowledgements: wait until every
  # node's stored keys stop changing (then its CPU for the load is all spent).
  local last="" now
  for _ in $(seq 1 60); do
    sleep 1
    now=$(for n in $(seq 1 "$count"); do stored_keys "${NPORTS[$n]}"; done | tr '\n' ' ')
    [ "$now" = "$last" ] && break
    last=$now
  done
  for n in $(seq 1 "$count"); do after+=("$(cpu_ticks "${pids[$((n - 1))]}")"); done
  # SAVE flushes the memtables: the data is then in SST files, not only in the log.
  for n in $(seq 1 "$count"); do redis-cli -p "${NPORTS[$n]}" save >/dev/null; done
  local total_bytes=0 total_cpu=0 total_sst=0
  for n in $(seq 1 "$count"); do
    local p=${NPORTS[$n]} bytes keys held led sst cpu
    bytes=$(du -sb "$TMP/c$count/node$n" | cut -f1)
    # NEOKV.REGIONS (RESP3 maps as JSON): the node's stored keys and SST bytes
    # over every region, its replicas and leaderships.
    read -r keys held led sst < <(redis-cli -3 --json -p "$p" neokv.regions 2>/dev/null | python3 -c "
import json, sys
rs = json.load(sys.stdin)
me = $n
keys = sum(r['keys'] for r in rs)
held = sum(1 for r in rs if me in r['voters'])
led = sum(1 for r in rs if r['leader'] == me)
sst = sum(r['bytes'] for r in rs)
print(keys, held, led, sst)")
    cpu=$(cpu_per "${before[$((n - 1))]}" "${after[$((n - 1))]}" "$N" 1e5 2)
    total_bytes=$((total_bytes + bytes)); total_cpu=$(python3 -c "print(round($total_cpu + $cpu, 2))")
    ROWS+=("| $count | $n | $held | $led | $keys | $((sst / 1048576)) | $((bytes / 1048576)) | $cpu |")
    total_sst=$((total_sst + sst))
  done
  SUMMARY+=("| $count | $rps ($p50 ms) | $((total_sst / count / 1048576)) | $((total_bytes / count / 1048576)) | $(python3 -c "print(round($total_cpu / $count, 2))") | $total_cpu |")
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
  echo "Machine: $(nproc) cores shared by every node and the load generator (\`--no-pin\`, \`--appendfsync always\`, 4 regions per node: 12 and 20). Each cluster fresh, loaded alike: \`memtier_benchmark --cluster-mode -t 2 -c $((CLIENTS / 2)) -n $((N / CLIENTS)) --pipeline 16 --ratio 1:0 -d 256 --key-pattern R:R --key-maximum 1000000 --distinct-client-seed --randomize -R\` ($N SETs of random data); then per node, after SAVE (which flushes the memtables), its data in SST files (NEOKV.REGIONS \`bytes\`) and its whole data directory (\`du -sb\`: the 64 MB disk reserve and two 32 MB preallocated log segments included), the keys it stores (NEOKV.REGIONS), the regions it holds and leads, and its CPU seconds (utime + stime) per 100k SETs, from the load's start until every node's stored keys stop changing (followers apply behind the acknowledgements)."
  echo
  echo "| nodes | SET/s (p50) | data MB per node (mean) | directory MB per node (mean) | CPU s per 100k SETs per node (mean) | CPU s per 100k SETs, all nodes |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${SUMMARY[@]}"
  echo
  echo "| nodes | node | regions held | regions led | keys stored | data MB | directory MB | CPU s per 100k SETs |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${ROWS[@]}"
} | tee -a perf/RESULTS.md
