#!/usr/bin/env bash
# A 1,000,000-member sorted set, side by side: load it into NeoKV and redis-server
# (no persistence) with the same pipelined ZADDs, then time DEL-free reads on it
# with redis-benchmark: ZRANK of random members (rank counters; the seeds' O(rank)
# walk would visit ~500k entries per call) and ZRANGEBYSCORE ... LIMIT 0 10 from a
# random score; finally DEL of a 1M-field hash. Appends a table to perf/RESULTS.md.
# Loopback only; bounded by request counts.
#
#   perf/zset-1m.sh            N=20000 requests per read test (default)
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh

MEMBERS=1000000
N=${N:-20000}

NEO=$(start_neokv always)
RED=$(start_redis redis-nopersist --appendonly no)
# A second NeoKV without per-write fsync: DEL's own cost, without the disk's flush latency.
NEO_NOSYNC=$(start_neokv no)

# ZADD big <i*7919 % 1M> m:<i> in commands of 1000 pairs; HSET bighash the same way.
python3 - "$TMP" "$MEMBERS" <<'PY'
import sys
tmp, n = sys.argv[1], int(sys.argv[2])
def cmd(args):
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)
with open(tmp + "/load.resp", "wb") as f, open(tmp + "/hash.resp", "wb") as hf:
    for base in range(0, n, 1000):
        z = [b"ZADD", b"big"]
        h = [b"HSET", b"bighash"]
        for i in range(base, base + 1000):
            z += [str(i * 7919 % n).encode(), b"m:%012d" % i]  # redis-benchmark pads __rand_int__ to 12 digits
            h += [b"f:%d" % i, b"%d" % i]
        f.write(cmd(z))
        f.write(cmd(h))
        hf.write(cmd(h))
PY

# Round trip of one DEL, in ms (best of the one call: a fresh connection each time).
del_ms() { python3 - "$1" "$2" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"PING\r\n"); s.recv(64)
k = sys.argv[2].encode()
t = time.perf_counter()
s.sendall(b"*2\r\n$3\r\nDEL\r\n$%d\r\n%s\r\n" % (len(k), k))
r = s.recv(64)
assert r == b":1\r\n", r
print(f"{(time.perf_counter() - t) * 1e3:.2f}")
PY
}

declare -A R
for side in neo red; do
  port=$NEO; [ "$side" = red ] && port=$RED
  start=$(date +%s.%N)
  redis-cli -p "$port" --pipe < "$TMP/load.resp" >/dev/null
  R["$side,load"]=$(python3 -c "import sys; print(f'{float(sys.argv[2])-float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
  R["$side,card"]=$(redis-cli -p "$port" zcard big)
  for t in "ZRANK|ZRANK big m:__rand_int__" "ZRANGEBYSCORE|ZRANGEBYSCORE big __rand_int__ +inf LIMIT 0 10" "ZREVRANK|ZREVRANK big m:__rand_int__"; do
    label=${t%%|*}; args=${t#*|}
    # shellcheck disable=SC2086
    line=$(redis-benchmark -h 127.0.0.1 -p "$port" -c 1 -n "$N" -r "$MEMBERS" --csv $args 2>/dev/null | tail -n 1 | tr -d '"')
    R["$side,$label,rps"]=$(echo "$line" | awk -F, '{print $2}')
    R["$side,$label,p50"]=$(echo "$line" | awk -F, '{print $5}')
    R["$side,$label,p99"]=$(echo "$line" | awk -F, '{print $7}')
  done
  R["$side,del"]=$(del_ms "$port" bighash)
  redis-cli -p "$port" hset small f v >/dev/null
  R["$side,del1"]=$(del_ms "$port" small)
done
redis-cli -p "$NEO_NOSYNC" --pipe < "$TMP/hash.resp" >/dev/null
R["nosync,del"]=$(del_ms "$NEO_NOSYNC" bighash)
redis-cli -p "$NEO_NOSYNC" hset small f v >/dev/null
R["nosync,del1"]=$(del_ms "$NEO_NOSYNC" small)

{
  echo
  echo "## $(date -u +%Y-%m-%d) — 1M-member sorted set — $REV"
  echo
  echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(redis-server --version | awk '{print $1, $2, $3}')."
  echo "NeoKV: \`neokv-server --appendfsync always ${NEOKV_ARGS:-}\`. Redis: \`--save '' --appendonly no\`."
  echo "Command: \`perf/zset-1m.sh\`: load \`big\` (${R[neo,card]} / ${R[red,card]} members, scores i·7919 mod 10^6) and a 10^6-field hash with \`redis-cli --pipe\`; then \`redis-benchmark -c 1 -n $N -r $MEMBERS --csv <command>\` (one client: the latency of one request); DEL timed on one open connection."
  echo
  echo "| test | NeoKV rps | p50 ms | p99 ms | Redis rps | p50 ms | p99 ms | ratio (rps) |"
  echo "|---|---|---|---|---|---|---|---|"
  for label in ZRANK ZREVRANK ZRANGEBYSCORE; do
    echo "| $label | ${R[neo,$label,rps]} | ${R[neo,$label,p50]} | ${R[neo,$label,p99]} | ${R[red,$label,rps]} | ${R[red,$label,p50]} | ${R[red,$label,p99]} | $(ratio "${R[neo,$label,rps]}" "${R[red,$label,rps]}") |"
  done
  echo
  echo "Load (2×1000 pipelined commands of 1000 pairs each): NeoKV ${R[neo,load]} s, Redis ${R[red,load]} s."
  echo
  echo "DEL round trip (one client, ms): 10^6-field hash / 1-field hash — NeoKV \`always\` ${R[neo,del]} / ${R[neo,del1]}, NeoKV \`--appendfsync no\` ${R[nosync,del]} / ${R[nosync,del1]}, Redis ${R[red,del]} / ${R[red,del1]}."
} | tee -a perf/RESULTS.md
