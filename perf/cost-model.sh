#!/usr/bin/env bash
# Issue 11's cost model: µs of server CPU per SET and per GET, split by stage
# (decode, dispatch, propose, log append, fsync, apply, read, reply, kernel
# send/recv, reactor, RocksDB background), from CPU profiles taken under load,
# with a flame graph of each run, and from those a projection of throughput on
# a machine with more cores.
#
# For each workload (SET and GET at P1 and P16, 50 clients, 256 B values, 100k
# keys, `--cores 1`): redis-benchmark loads NeoKV (`--appendfsync always`)
# while `perf record -e cpu-clock --call-graph dwarf` samples it; the server's
# CPU time (utime+stime from /proc) over the same run, divided by the requests,
# is its CPU per operation; perf/stages.py splits it by stage. Redis (no
# persistence) runs the same load for its CPU per operation. Loopback only,
# bounded by request counts. Appends to perf/RESULTS.md; flame graphs go to
# perf/flame-<test>-p<P>-cores1.svg.
#   perf/cost-model.sh        N1=40000 N16=200000 perf/cost-model.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v perf >/dev/null || { echo "perf missing: apt-get install linux-perf" >&2; exit 1; }
if ! command -v inferno-flamegraph >/dev/null; then
  cargo install inferno >/dev/null 2>&1 || { echo "inferno missing and could not be installed: cargo install inferno" >&2; exit 1; }
fi
. perf/lib.sh

N1=${N1:-40000}
N16=${N16:-200000}
CLIENTS=50
FREQ=${FREQ:-499}
NEOKV_ARGS="${NEOKV_ARGS:-} --cores 1 --no-pin"

load() { # port pipeline test -> requests/s
  local n=$N1; [ "$2" -gt 1 ] && n=$N16
  redis-benchmark -h 127.0.0.1 -p "$1" -c $CLIENTS -n "$n" -P "$2" -d 256 -r 100000 --csv -t "$3" 2>/dev/null \
    | tail -n 1 | tr -d '"' | awk -F, '{print $2}'
}
requests() { if [ "$1" -gt 1 ]; then echo "$N16"; else echo "$N1"; fi; }

neokv=$(start_neokv always)
npid=$(cat "$TMP/neokv-always.pid")
redis=$(start_redis redis)
rpid=$(cat "$TMP/redis.pid")
# GET reads keys that exist: fill the keyspace first (both servers).
for port in "$neokv" "$redis"; do
  redis-benchmark -h 127.0.0.1 -p "$port" -c $CLIENTS -n 300000 -P 16 -d 256 -r 100000 -t set -q >/dev/null 2>&1
done

rows=()
for w in set:1 get:1 set:16 get:16; do
  t=${w%%:*} p=${w##*:} n=$(requests "${w##*:}")
  data="$TMP/$t-$p.data"
  # Redis first, for its CPU per operation under the same load.
  r0=$(cpu_ticks "$rpid"); rops=$(load "$redis" "$p" "$t"); r1=$(cpu_ticks "$rpid")
  # Only the server's threads are sampled (-p); its io_uring workers are its threads.
  perf record -e cpu-clock -F "$FREQ" --call-graph dwarf,16384 -p "$npid" -o "$data" >/dev/null 2>&1 &
  prec=$!
  sleep 0.5
  c0=$(cpu_ticks "$npid"); ops=$(load "$neokv" "$p" "$t"); c1=$(cpu_ticks "$npid")
  kill -INT "$prec"; wait "$prec" || true
  folded="$TMP/$t-$p.folded"
  perf script -i "$data" 2>/dev/null | inferno-collapse-perf > "$folded"
  inferno-flamegraph --title "NeoKV --cores 1, redis-benchmark -t $t -P $p (cpu-clock, dwarf)" \
    < "$folded" > "perf/flame-$t-p$p-cores1.svg"
  perf/stages.py "$folded" > "$TMP/$t-$p.stages"
  # The folded stacks stay for a closer look (perf/out is not committed).
  mkdir -p perf/out && cp "$folded" "perf/out/$t-p$p-cores1.folded"
  rows+=("$t $p $ops $(cpu_per "$c0" "$c1" "$n" 1e6 2) $rops $(cpu_per "$r0" "$r1" "$n" 1e6 2) $TMP/$t-$p.stages")
  rm -f "$data"
done

{
  echo
  echo "## $(date -u +%Y-%m-%d) — cost model: CPU per SET and GET by stage ($REV)"
  echo
  echo "Machine: $(nproc) cores, shared by the server and redis-benchmark; $(redis-server --version | awk '{print $1, $2, $3}') without persistence for reference."
  echo "Command: \`perf/cost-model.sh\`: NeoKV \`--appendfsync always --cores 1\`, keyspace filled first; \`redis-benchmark -c $CLIENTS -n $N1 (P1) / $N16 (P16) -P <P> -d 256 -r 100000 -t <test>\` while \`perf record -e cpu-clock -F $FREQ --call-graph dwarf -p <server>\` samples the server; CPU per request from the server's utime+stime over the run; stages by \`perf/stages.py\` (the innermost frame that names a stage). Flame graphs: \`perf/flame-<test>-p<P>-cores1.svg\`."
  echo
  python3 - "${rows[@]}" <<'PY'
import sys
rows = [r.split() for r in sys.argv[1:]]
tables = {}
order = []
for t, p, ops, cpu, rops, rcpu, path in rows:
    stages = {}
    for line in open(path):
        k, *v = line.rstrip("\n").split("\t")
        if k != "total":
            stages[k] = float(v[1])
            if k not in order:
                order.append(k)
    tables[(t, p)] = (float(ops), float(cpu), float(rops), float(rcpu), stages)
cols = [("set", "1"), ("set", "16"), ("get", "1"), ("get", "16")]
print("| | " + " | ".join(f"{t.upper()} P{p}" for t, p in cols) + " |")
print("|---|" + "---|" * len(cols))
print("| NeoKV requests/s | " + " | ".join(f"{tables[c][0]:.0f}" for c in cols) + " |")
print("| NeoKV CPU µs/op | " + " | ".join(f"{tables[c][1]:.2f}" for c in cols) + " |")
print("| Redis requests/s (same load) | " + " | ".join(f"{tables[c][2]:.0f}" for c in cols) + " |")
print("| Redis CPU µs/op | " + " | ".join(f"{tables[c][3]:.2f}" for c in cols) + " |")
for s in order:
    cells = []
    for c in cols:
        share = tables[c][4].get(s, 0.0)
        cells.append(f"{share * tables[c][1]:.2f} ({share:.0%})")
    print(f"| {s} | " + " | ".join(cells) + " |")
print()
# The projection. Stages that run on the core owning the region (the proposer,
# openraft, the log, apply) bound a single region's writes whatever the cores;
# every other stage runs on the connection's core and scales with cores.
owner = ("propose (proposer, openraft)", "log append", "fsync", "apply")
print("Projection (a model, not a measurement): a core spends the CPU per operation above, and adding cores adds")
print("capacity only where the work spreads. Reads run on the connection's core, so GET scales with cores. A single")
print("region's writes are proposed, logged and applied on its one owning core, so SET is capped by that core's share")
print("of the work whatever the core count; with a region per core (issue 11 step 3) it would scale like GET until")
print("the device's fsyncs or the network bind. Load generators, NIC and memory bandwidth are not modelled.")
print()
print("| workload | CPU µs/op | owning core µs/op (propose+log+fsync+apply) | 1 core | 16 cores | 64 cores | 16 cores, region per core | 64 cores, region per core |")
print("|---|---|---|---|---|---|---|---|")
for c in cols:
    ops, cpu, _, _, st = tables[c]
    own = sum(st.get(s, 0.0) for s in owner) * cpu
    per_core = 1e6 / cpu
    def cap(n, spread):
        if c[0] == "get" or spread:
            return n * per_core
        return min(n * per_core, 1e6 / own if own else float("inf"))
    f = lambda x: f"{x / 1e3:,.0f}k/s"
    print(f"| {c[0].upper()} P{c[1]} | {cpu:.2f} | {own:.2f} | {f(per_core)} | {f(cap(16, False))} | {f(cap(64, False))} | "
          f"{f(cap(16, True))} | {f(cap(64, True))} |")
PY
} | tee -a perf/RESULTS.md
