#!/usr/bin/env bash
# Catching up by snapshot: a three-node cluster (a snapshot every SNAP_LOGS
# entries, 20 by default, so the log behind them is purged) loses node 3 (kill -9) while
# redis-benchmark --cluster writes KEYS keys of SIZE bytes through the other
# two; node 3 is then started again and the time until every region on it has
# applied what its leader had is measured, with how many snapshots it
# installed (SST files ingested) and its peak RSS meanwhile. Loopback only,
# bounded by the key count and a 300 s catch-up limit. Appends to perf/RESULTS.md.
#   perf/catchup.sh            KEYS=200000 SIZE=256 perf/catchup.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh

KEYS=${KEYS:-200000}
SNAP_LOGS=${SNAP_LOGS:-20}
SIZE=${SIZE:-256}

CLUSTER_ARGS="--raft-snapshot-logs $SNAP_LOGS"
start_cluster

kill -9 "$(cat "$TMP/node3.pid")"; rm "$TMP/node3.pid"
# Until nodes 1 and 2 lead every region between them.
for _ in $(seq 1 300); do
  led=$(( $(redis-cli -p "${NPORTS[1]}" info replication | grep -c 'role=leader') \
        + $(redis-cli -p "${NPORTS[2]}" info replication | grep -c 'role=leader') ))
  regions=$(redis-cli -p "${NPORTS[1]}" info replication | grep -c '^region')
  [ "$led" -eq "$regions" ] && break
  sleep 0.1
done
echo "node 3 down; $regions regions led by nodes 1 and 2; writing $KEYS keys of $SIZE bytes" >&2
t0=$(date +%s.%N)
rps=$(redis-benchmark -h 127.0.0.1 -p "${NPORTS[1]}" --cluster -c 50 -n "$KEYS" -P 16 -d "$SIZE" -r "$KEYS" -t set --csv 2>/dev/null \
  | tail -n 1 | tr -d '"' | awk -F, '{print $2}')
t1=$(date +%s.%N)

# What every region's leader has applied.
declare -A WANT
for n in 1 2; do
  while IFS= read -r line; do
    r=${line%%:*}; applied=$(sed -n 's/.*applied=\([0-9]*\).*/\1/p' <<<"$line")
    WANT[$r]=$applied
  done < <(redis-cli -p "${NPORTS[$n]}" info replication | tr -d '\r' | grep '^region.*role=leader')
done
keys=$(( $(redis-cli -p "${NPORTS[1]}" dbsize) + $(redis-cli -p "${NPORTS[2]}" dbsize) ))
data=$(du -sm "$TMP/node1" | awk '{print $1}')

start_cluster_node 3
s0=$(date +%s.%N)
wait_port "${NPORTS[3]}"
caught=""
for _ in $(seq 1 6000); do
  info=$(redis-cli -p "${NPORTS[3]}" info replication | tr -d '\r')
  behind=0
  for r in "${!WANT[@]}"; do
    have=$(grep "^$r:" <<<"$info" | sed -n 's/.*applied=\([0-9]*\).*/\1/p')
    [ "${have:-0}" -ge "${WANT[$r]}" ] || { behind=1; break; }
  done
  [ "$behind" -eq 0 ] && { caught=$(date +%s.%N); break; }
  sleep 0.05
done
[ -n "$caught" ] || { echo "node 3 did not catch up in 300 s" >&2; exit 1; }
pid3=$(cat "$TMP/node3.pid")
hwm=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$pid3/status")
snaps=$(redis-cli -p "${NPORTS[3]}" info replication | tr -d '\r' | sed -n 's/.*snapshots_in=\([0-9]*\).*/\1/p' | awk '{s += $1} END {print s}')
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }

{
  echo
  echo "## $(date -u +%Y-%m-%d) — catching up by snapshot ($REV)"
  echo
  echo "Command: \`KEYS=$KEYS SIZE=$SIZE perf/catchup.sh\` ($(nproc) cores shared by three nodes \`--no-pin --raft-snapshot-logs $SNAP_LOGS\`, fsync always). Node 3 was killed (kill -9), then \`redis-benchmark --cluster -c 50 -n $KEYS -P 16 -d $SIZE -r $KEYS -t set\` wrote through nodes 1 and 2 in $(secs "$t0" "$t1") s ($rps requests/s; $keys keys, node 1's data directory ${data} MB); node 3 was started again."
  echo
  echo "| regions | snapshots installed | from start to every region caught up | node 3 peak RSS |"
  echo "|---|---|---|---|"
  echo "| $regions | $snaps | $(secs "$s0" "$caught") s | $hwm MB |"
} | tee -a perf/RESULTS.md
