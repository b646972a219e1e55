#!/usr/bin/env python3
"""Split a server's CPU profile into the stages of a request.

Input: folded stacks (`inferno-collapse-perf` output: `frame;frame;...;leaf count`,
the thread name first). Each stack goes to the stage of the innermost frame
that names one (scanning from the leaf towards the root), so memcpy or malloc
under an encoder count for the encoder. Prints one line per stage:
`stage<TAB>samples<TAB>share`, largest first, then `total<TAB>samples`.

  perf/stages.py stacks.folded            # the table
  perf/stages.py --unmatched stacks.folded  # the heaviest stacks no rule names

The rules are ordered: the first rule whose pattern matches a frame wins for
that frame. Kernel TCP frames are split into sending (which on loopback also
delivers to the receiver) and receiving.
"""
import re
import sys
from collections import Counter

# (stage, pattern). Patterns are searched in each frame's name.
RULES = [
    # Background threads of RocksDB (flush, compaction) are named by RocksDB.
    ("rocksdb background (flush, compaction)", r"^rocksdb:"),
    # The durable log: fdatasync and the block layer / journal under it.
    ("fsync", r"fdatasync|ext4_sync_file|file_write_and_wait|jbd2|blk_mq|submit_bio|SegLog::sync|sync_files"),
    ("log append", r"storage::seglog|raft::log_store|crc32c|LogStore"),
    # Apply: the state machine, the write batch and RocksDB's write into its memtables.
    ("apply", r"raft::state_machine|types::apply|types::write::|DBImpl::Write|WriteBatch|MemTable::Add|"
              r"InlineSkipList<.*>::Insert|write_applied|apply_cmd|apply_entries"),
    # Propose: the region's proposer and openraft's core (replication, commit).
    ("propose (proposer, openraft)", r"raft::region|openraft::|submit_write|Proposal"),
    # Reads: the read cache, RocksDB point reads and iterators, the view over them.
    ("read (cache, RocksDB get)", r"types::cache|DBImpl::Get|MemTable::Get|Version::Get|BlockBasedTable|"
                                  r"DBIter|types::view|rocksdb_get|rocksdb::db|get_pinned|LRUCache"),
    ("decode (RESP)", r"protocol::decode|Decoder"),
    ("reply encode", r"protocol::reply|Reply::encode|Reply as"),
    ("send (kernel TCP, incl. loopback delivery)", r"tcp_sendmsg|__sys_sendto|__sys_sendmsg|tcp_write_xmit|"
                                                    r"__tcp_transmit|ip_finish_output|net_rx_action|__netif_receive"),
    ("recv (kernel TCP)", r"tcp_recvmsg|__sys_recvfrom|sock_recvmsg|tcp_rcv|inet_recvmsg"),
    ("dispatch (table, routing, stats, session)", r"neokv::cmd::|neokv::shard::observe|neokv::shard::access|"
                                                   r"neokv::server::conn|neokv::cluster::"),
    ("reactor (glommio, io_uring, timers)", r"glommio::|io_uring|__x64_sys_io_uring|futures_lite|"
                                            r"schedule|finish_task_switch|__schedule"),
]
COMPILED = [(s, re.compile(p)) for s, p in RULES]
OTHER = "other"


def stage_of(frames):
    # The thread name (first frame) decides for RocksDB's own threads.
    if frames and frames[0].startswith("rocksdb:"):
        return RULES[0][0]
    for f in reversed(frames[1:]):
        for stage, pat in COMPILED[1:]:
            if pat.search(f):
                return stage
    return OTHER


def main():
    args = sys.argv[1:]
    unmatched = "--unmatched" in args
    args = [a for a in args if a != "--unmatched"]
    counts = Counter()
    misses = Counter()
    with open(args[0]) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if not stack:
                continue
            frames = stack.split(";")
            s = stage_of(frames)
            counts[s] += int(n)
            if s == OTHER:
                misses[";".join(frames[-4:])] += int(n)
    total = sum(counts.values())
    if unmatched:
        for st, n in misses.most_common(25):
            print(f"{n}\t{st}")
        return
    for s, n in counts.most_common():
        print(f"{s}\t{n}\t{n / total:.3f}")
    print(f"total\t{total}")


if __name__ == "__main__":
    main()
