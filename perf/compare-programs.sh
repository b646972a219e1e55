#!/usr/bin/env bash
# Side-by-side load run of scripts, transactions and Pub/Sub (issue 8): NeoKV
# (--appendfsync always) and redis-server (no persistence, and appendfsync always)
# on the same machine in the same run; a table of figures and ratios is appended
# to perf/RESULTS.md. Loopback only; bounded by request counts.
#
#   perf/compare-programs.sh          QUICK=1 for fewer requests
#   NEOKV_ARGS="--cores 1" perf/compare-programs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. perf/lib.sh
need_memtier

CLIENTS=50
N1=${N1:-$([ -n "${QUICK:-}" ] && echo 20000 || echo 100000)}
N16=${N16:-$([ -n "${QUICK:-}" ] && echo 100000 || echo 400000)}
# The Neton lock's release (spec §5.6): compare-and-delete.
RELEASE="if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
READ="return redis.call('get', KEYS[1])"

rb() { # port pipeline n args... -> requests/s
  local port=$1 p=$2 n=$3; shift 3
  redis-benchmark -h 127.0.0.1 -p "$port" -c $CLIENTS -n "$n" -P "$p" -r 100000 --csv "$@" 2>/dev/null \
    | tail -n 1 | tr -d '"' | awk -F, '{print $(NF-6)}'
}
# (--csv columns: test, rps, avg, min, p50, p95, p99, max; the test name may hold commas.)

evalsha() { # port pipeline -> requests/s (the lock held by half the keys' tokens)
  local port=$1 p=$2 n=$N1 sha; [ "$p" -gt 1 ] && n=$N16
  sha=$(redis-cli -p "$port" script load "$RELEASE")
  rb "$port" "$p" "$n" evalsha "$sha" 1 "lock:__rand_int__" token
}

eval_ro() { # port -> requests/s
  redis-cli -p "$1" set key:1 v >/dev/null
  rb "$1" 1 "$N1" eval_ro "$READ" 1 "key:__rand_int__"
}

multi_exec() { # port -> transactions/s (MULTI, 5 INCR, EXEC per transaction)
  local port=$1 secs=${QUICK:+5}; secs=${secs:-15}
  memtier_benchmark -s 127.0.0.1 -p "$port" --protocol=redis -t 1 -c $CLIENTS --test-time="$secs" \
    --hide-histogram --command="MULTI" --command="INCR counter:__key__" --command="INCR counter:__key__" \
    --command="INCR counter:__key__" --command="INCR counter:__key__" --command="INCR counter:__key__" \
    --command="EXEC" --key-maximum=100000 2>/dev/null \
    | awk '/^Totals/{print int($2/7)}'
}

publish() { # port subscribers -> "publishes/s delivered/s"
  local port=$1 subs=$2 n=$N1 out pid rate bytes
  out="$TMP/subs-$port-$subs"
  python3 perf/subscribers.py "$port" "$subs" ch >"$out" &
  pid=$!
  for _ in $(seq 1 100); do grep -q ready "$out" 2>/dev/null && break; sleep 0.1; done
  rate=$(rb "$port" 1 "$n" publish ch hello)
  sleep 1
  kill -TERM "$pid"; wait "$pid" || true
  bytes=$(tail -n 1 "$out")
  # Each message frame is 36 bytes: *3 $7 message $2 ch $5 hello.
  python3 -c "import sys; r,b,n,s=float(sys.argv[1]),int(sys.argv[2]),int(sys.argv[3]),int(sys.argv[4]); d=b//36; assert d>=n*s*0.99, f'only {d} of {n*s} messages delivered'; print(f'{r:.0f} {r*s:.0f}')" \
    "$rate" "$bytes" "$n" "$subs"
}

NEO=$(start_neokv always)
RED=$(start_redis redis-nopersist --appendonly no)
REDA=$(start_redis redis-always --appendonly yes --appendfsync always)

# ROUNDS rounds (default 3; QUICK=1: 1), the three servers taking turns within
# each, so that a slow spell of this shared machine falls on all of them; each
# figure is the median of its rounds.
ROUNDS=${ROUNDS:-$([ -n "${QUICK:-}" ] && echo 1 || echo 3)}
declare -A R
for round in $(seq 1 "$ROUNDS"); do
  for who in neo red reda; do
    case $who in neo) port=$NEO ;; red) port=$RED ;; reda) port=$REDA ;; esac
    R["$who,evalsha1,$round"]=$(evalsha "$port" 1)
    R["$who,evalsha16,$round"]=$(evalsha "$port" 16)
    R["$who,multi,$round"]=$(multi_exec "$port")
    R["$who,evalro,$round"]=$(eval_ro "$port")
    R["$who,pub1,$round"]=$(publish "$port" 1)
    R["$who,pub50,$round"]=$(publish "$port" 50)
    redis-cli -p "$port" flushall >/dev/null
  done
done
for who in neo red reda; do
  for k in evalsha1 evalsha16 multi evalro pub1 pub50; do
    R["$who,$k"]=$(for round in $(seq 1 "$ROUNDS"); do echo "${R["$who,$k,$round"]}"; done \
      | sort -g -k1,1 | sed -n "$(( (ROUNDS + 1) / 2 ))p")
  done
done

row() { # label key
  local n=${R["neo,$2"]} r=${R["red,$2"]} ra=${R["reda,$2"]}
  echo "| $1 | $n | $r | $(ratio "$n" "$r") | $ra | $(ratio "$n" "$ra") |"
}
{
  echo
  echo "## $(date -u +%Y-%m-%d) — scripts, transactions, Pub/Sub — $REV"
  echo
  echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(redis-server --version | awk '{print $1, $2, $3}')."
  echo "NeoKV: \`neokv-server --appendfsync always ${NEOKV_ARGS:-}\`. Redis: \`--save '' --appendonly no\` and \`--appendonly yes --appendfsync always\`."
  echo "Command: \`perf/compare-programs.sh\` (median of $ROUNDS rounds, the servers taking turns): redis-benchmark \`-c $CLIENTS -n $N1 (P1) / $N16 (P16) -r 100000\` for EVALSHA (the Neton lock release, \`EVALSHA <sha> 1 lock:__rand_int__ token\`), EVAL_RO (\`return redis.call('get', KEYS[1])\`) and PUBLISH (\`PUBLISH ch hello\`, subscribers held by perf/subscribers.py, every message counted); memtier_benchmark \`-c $CLIENTS --command MULTI, 5× INCR counter:__key__, EXEC\` for transactions."
  echo
  echo "| workload | NeoKV | Redis (no persist) | ratio | Redis (fsync always) | ratio |"
  echo "|---|---|---|---|---|---|"
  row "EVALSHA lock release, P1 (req/s)" evalsha1
  row "EVALSHA lock release, P16 (req/s)" evalsha16
  row "MULTI + 5 INCR + EXEC (transactions/s)" multi
  row "EVAL_RO read (req/s)" evalro
  for s in 1 50; do
    for who in neo red reda; do
      read -r p d <<<"${R["$who,pub$s"]}"; R["$who,pub$s,p"]=$p; R["$who,pub$s,d"]=$d
    done
    row "PUBLISH to $s subscriber(s), publishes/s" "pub$s,p"
    row "PUBLISH to $s subscriber(s), messages delivered/s" "pub$s,d"
  done
} | tee -a perf/RESULTS.md
