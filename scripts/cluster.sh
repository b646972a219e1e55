#!/usr/bin/env bash
# Start a local three-node NeoKV cluster: node N serves clients on 127.0.0.1:700N
# and talks to the other nodes on 127.0.0.1:1700N, with its data in ./data/nodeN.
# Ctrl-C stops all three. Connect with any Redis Cluster client, e.g.
#   redis-cli -c -p 7001
#   redis-benchmark --cluster -p 7001 -t set,get
# Usage: scripts/cluster.sh [path/to/neokv-server] [extra server flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-}
[ $# -gt 0 ] && shift
if [ -z "$BIN" ]; then
  BIN="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/neokv-server"
fi
[ -x "$BIN" ] || { echo "no server binary at $BIN (run: cargo build --release)" >&2; exit 1; }
PEERS="1=127.0.0.1:17001,2=127.0.0.1:17002,3=127.0.0.1:17003"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null' EXIT INT TERM
for n in 1 2 3; do
  mkdir -p "data/node$n"
  "$BIN" --port "700$n" --dir "data/node$n" --node-id "$n" --cluster-port "1700$n" --peers "$PEERS" --no-pin "$@" \
    > "data/node$n/server.log" 2>&1 &
  pids+=($!)
done
for n in 1 2 3; do
  for _ in $(seq 1 600); do
    redis-cli -p "700$n" cluster info 2>/dev/null | grep -q 'cluster_state:ok' && break
    sleep 0.1
  done
done
echo "NeoKV cluster up: clients on 127.0.0.1:7001-7003, logs in data/node{1,2,3}/server.log (Ctrl-C stops it)"
redis-cli -p 7001 cluster nodes
wait
