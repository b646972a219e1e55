//! The replicated write vocabulary (`pb::WriteCmd`, one typed message per
//! operation) and its deterministic apply.
//!
//! A handler turns a client command into a `WriteCmd` with every relative time
//! already made absolute and every random choice drawn; apply executes it against
//! an [`ApplyCtx`] and returns the operation's natural result (how it is shown to
//! the client is decided by the handler). Apply never reads the local clock or a
//! random source.

use crate::pb::write_cmd::Op;
use crate::pb::WriteCmd;
use crate::protocol::Reply;
use crate::storage::StorageError;

use super::apply::Programs;
use super::{bitmap, dump, geo_search, hash, hll, keyspace, list, set, sort, string, zset, ApplyCtx};

/// True for an operation that may run long: a script, a library to compile, or a
/// transaction holding a script. Apply runs a batch holding one off the reactor;
/// a transaction of keyspace commands is no longer than the same commands
/// pipelined, and runs inline as they do.
pub fn runs_long(programs: Option<&dyn Programs>, cmd: &WriteCmd) -> bool {
    match &cmd.op {
        Some(Op::Eval(_) | Op::Functions(_)) => true,
        Some(Op::Exec(o)) => programs.is_some_and(|p| p.queues_script(o)),
        Some(Op::Cross(c)) => c.cmds.iter().any(|c| runs_long(programs, c)),
        _ => false,
    }
}

/// Apply one command; a command-level failure is an error *reply*, a storage
/// failure is an `Err` (fatal for the state machine).
pub fn apply_cmd(ctx: &mut ApplyCtx, cmd: &WriteCmd) -> Result<Reply, StorageError> {
    let Some(op) = &cmd.op else { return Ok(Reply::error("ERR unknown replicated operation")) };
    ctx.select(cmd.db as u16);
    let r = match op {
        Op::Set(o) => string::apply_set(ctx, o),
        Op::Mset(o) => string::apply_mset(ctx, o),
        Op::Incrby(o) => string::apply_incrby(ctx, o),
        Op::Incrbyfloat(o) => string::apply_incrbyfloat(ctx, o),
        Op::Append(o) => string::apply_append(ctx, o),
        Op::Setrange(o) => string::apply_setrange(ctx, o),
        Op::Pfadd(o) => hll::apply_pfadd(ctx, o),
        Op::Pfcount(o) => hll::apply_pfcount(ctx, o),
        Op::Pfmerge(o) => hll::apply_pfmerge(ctx, o),
        Op::Setbit(o) => bitmap::apply_setbit(ctx, o),
        Op::Bitop(o) => bitmap::apply_bitop(ctx, o),
        Op::Bitfield(o) => bitmap::apply_bitfield(ctx, o),
        Op::Getdel(o) => string::apply_getdel(ctx, o),
        Op::Getex(o) => string::apply_getex(ctx, o),
        Op::Del(o) => keyspace::apply_del(ctx, o),
        Op::Expire(o) => keyspace::apply_expire(ctx, o),
        Op::Persist(o) => keyspace::apply_persist(ctx, o),
        Op::Rename(o) => keyspace::apply_rename(ctx, o),
        Op::Copy(o) => keyspace::apply_copy(ctx, o),
        Op::Flush(o) => {
            ctx.flush_region(o.db_only.then_some(cmd.db as u16))?;
            Ok(Ok(Reply::Ok))
        }
        Op::Move(o) => keyspace::apply_move(ctx, o),
        Op::Restore(o) => dump::apply_restore(ctx, o),
        Op::Sort(o) => sort::apply_sort(ctx, o),
        Op::Geosearch(o) => geo_search::apply_geosearch(ctx, o),
        // Recorded by the state machine before a command reaches here.
        Op::Forget(_) | Op::Split(_) => Ok(Ok(Reply::Ok)),
        Op::Swapdb(o) => {
            ctx.swap_dbs(o.a as u16, o.b as u16)?;
            Ok(Ok(Reply::Ok))
        }
        Op::ExpireKeys(o) => keyspace::apply_expire_keys(ctx, o),
        Op::Hset(o) => hash::apply_hset(ctx, o),
        Op::Hdel(o) => hash::apply_hdel(ctx, o),
        Op::Hincrby(o) => hash::apply_hincrby(ctx, o),
        Op::Hincrbyfloat(o) => hash::apply_hincrbyfloat(ctx, o),
        Op::Sadd(o) => set::apply_sadd(ctx, o),
        Op::Srem(o) => set::apply_srem(ctx, o),
        Op::Spop(o) => set::apply_spop(ctx, o),
        Op::Smove(o) => set::apply_smove(ctx, o),
        Op::Sstore(o) => set::apply_sstore(ctx, o),
        Op::Push(o) => list::apply_push(ctx, o),
        Op::Pop(o) => list::apply_pop(ctx, o),
        Op::Lset(o) => list::apply_lset(ctx, o),
        Op::Linsert(o) => list::apply_linsert(ctx, o),
        Op::Lrem(o) => list::apply_lrem(ctx, o),
        Op::Ltrim(o) => list::apply_ltrim(ctx, o),
        Op::Lmove(o) => list::apply_lmove(ctx, o),
        Op::Zadd(o) => zset::apply_zadd(ctx, o),
        Op::Zrem(o) => zset::apply_zrem(ctx, o),
        Op::Zpop(o) => zset::apply_zpop(ctx, o),
        Op::Zremrange(o) => zset::apply_zremrange(ctx, o),
        Op::Zrangestore(o) => zset::apply_zrangestore(ctx, o),
        Op::Zstore(o) => zset::apply_zstore(ctx, o),
        Op::Exec(o) => match ctx.programs() {
            Some(p) => Ok(Ok(p.exec(ctx, o)?)),
            None => Ok(Ok(Reply::error("ERR transactions cannot run here"))),
        },
        Op::Eval(o) => match ctx.programs() {
            Some(p) => Ok(Ok(p.eval(ctx, o)?)),
            None => Ok(Ok(Reply::error("ERR scripts cannot run here"))),
        },
        Op::Stream(o) => match ctx.programs() {
            Some(p) => Ok(Ok(p.stream(ctx, o)?)),
            None => Ok(Ok(Reply::error("ERR stream writes cannot run here"))),
        },
        Op::Functions(o) => match ctx.programs() {
            Some(p) => Ok(Ok(p.functions(ctx, o)?)),
            None => Ok(Ok(Reply::error("ERR functions cannot run here"))),
        },
        // Run by the state machine's rendezvous (raft::cross), never here.
        Op::Cross(_) => Ok(Ok(Reply::error("ERR a cross-region write cannot nest"))),
    }?;
    Ok(r.unwrap_or_else(|e| Reply::Error(e.to_string().into())))
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::pb;
    use crate::storage::keys::KeyType;
    use crate::storage::meta::{composite_payload, encode};
    use crate::storage::{Cf, Storage, StorageOptions};
    use crate::types::{mkey_in, ApplyCtx};

    fn mkey(k: &[u8]) -> Vec<u8> {
        mkey_in(0, k)
    }

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    fn bs(xs: &[&str]) -> Vec<Bytes> {
        xs.iter().map(|s| b(s)).collect()
    }

    fn w(op: Op) -> WriteCmd {
        WriteCmd { op: Some(op), db: 0, epoch: 0 }
    }

    fn set(k: &str, v: &str) -> WriteCmd {
        w(Op::Set(pb::Set { key: b(k), value: b(v), ..Default::default() }))
    }

    fn set_at(k: &str, v: &str, at_ms: u64) -> WriteCmd {
        w(Op::Set(pb::Set { key: b(k), value: b(v), at_ms, ..Default::default() }))
    }

    fn del(keys: &[&str]) -> WriteCmd {
        w(Op::Del(pb::Del { keys: bs(keys) }))
    }

    fn open() -> (tempfile::TempDir, Storage) {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::open(dir.path(), &StorageOptions::default()).unwrap();
        (dir, s)
    }

    /// Apply `cmds` as one log entry (each call is the next index).
    fn run(storage: &Storage, now: u64, cmds: &[WriteCmd]) -> Vec<Reply> {
        static INDEX: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1_000_000);
        run_at(storage, INDEX.fetch_add(1, std::sync::atomic::Ordering::Relaxed), now, cmds)
    }

    /// Apply `cmds` as the log entry at `index`.
    fn run_at(storage: &Storage, index: u64, now: u64, cmds: &[WriteCmd]) -> Vec<Reply> {
        let mut ctx = ApplyCtx::new(storage, 0, 16384);
        ctx.begin_entry(index, now);
        let out = cmds.iter().map(|c| apply_cmd(&mut ctx, c).unwrap()).collect();
        storage.write(ctx.take_batch(), false).unwrap();
        out
    }

    #[test]
    fn spop_is_the_same_on_every_replica() {
        // Two replicas apply the same entries: same members popped, same state.
        let (_d1, a) = open();
        let (_d2, b2) = open();
        let members: Vec<String> = (0..500).map(|i| format!("m{i}")).collect();
        let refs: Vec<&str> = members.iter().map(|s| s.as_str()).collect();
        let mut entries = vec![vec![w(Op::Sadd(pb::Sadd { key: b("s"), members: bs(&refs) }))]];
        for e in 0..5u64 {
            entries.push(
                (0..20u64)
                    .map(|i| {
                        w(Op::Spop(pb::Spop {
                            key: b("s"),
                            count: if i % 4 == 0 { Some(3) } else { None },
                            seed: e * 100 + i,
                        }))
                    })
                    .collect(),
            );
        }
        let mut popped = std::collections::BTreeSet::new();
        for (i, cmds) in entries.iter().enumerate() {
            let (ra, rb) = (run_at(&a, i as u64 + 1, 1, cmds), run_at(&b2, i as u64 + 1, 1, cmds));
            assert_eq!(ra, rb);
            for r in ra {
                match r {
                    Reply::Bulk(m) => assert!(popped.insert(m)),
                    Reply::Set(ms) => ms.into_iter().for_each(|m| assert!(matches!(m, Reply::Bulk(_)))),
                    Reply::Int(500) => {}
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
        let scan = |s: &Storage| s.iter_all(Cf::Subkey).collect::<Vec<_>>();
        assert_eq!(scan(&a), scan(&b2));
        assert!(popped.len() > 50, "the single pops drew distinct members");
    }

    #[test]
    fn spop_from_the_member_index_pops_what_the_walk_pops() {
        // Three replicas apply the same entries: one keeps apply's set index
        // between batches, one never indexes (every pop walks storage), one has
        // an index too small for the sets, which it drops and loads again as
        // they grow and shrink. Same replies, same state, or replicas diverge.
        use crate::types::apply::Kept;
        use crate::types::members::MemberIndex;
        let seed = 0x5eed_u64;
        let mut rng = crate::types::coll::Rng::new(seed);
        let replicas: Vec<(tempfile::TempDir, Storage)> = (0..3).map(|_| open()).collect();
        let mut indexes =
            [MemberIndex::default(), MemberIndex::with_limits(0, 0), MemberIndex::with_limits(3000, 1 << 20)];
        let (mut used_index, mut big) = (0, 0);
        let key = |rng: &mut crate::types::coll::Rng| b(if rng.below(4) == 0 { "t" } else { "s" });
        let member = |rng: &mut crate::types::coll::Rng| Bytes::from(format!("m{}", rng.below(9000)));
        for entry in 1..=400u64 {
            let mut cmds = Vec::new();
            for _ in 0..1 + rng.below(30) {
                let op = match rng.below(1000) {
                    0..=299 => Op::Sadd(pb::Sadd {
                        key: key(&mut rng),
                        members: (0..1 + rng.below(if entry % 100 < 30 { 400 } else { 20 }))
                            .map(|_| member(&mut rng))
                            .collect(),
                    }),
                    300..=399 => {
                        Op::Srem(pb::Srem { key: key(&mut rng), members: vec![member(&mut rng), member(&mut rng)] })
                    }
                    400..=899 => Op::Spop(pb::Spop {
                        key: key(&mut rng),
                        count: match rng.below(100) {
                            0..=9 => Some(rng.below(40)),
                            10 => Some(rng.below(6000)),
                            _ => None,
                        },
                        seed: rng.next_u64(),
                    }),
                    900..=989 => {
                        Op::Smove(pb::Smove { from: key(&mut rng), to: key(&mut rng), member: member(&mut rng) })
                    }
                    990..=991 => Op::Rename(pb::Rename { from: b("s"), to: b("t"), nx: false }),
                    992..=994 => Op::Del(pb::Del { keys: vec![key(&mut rng)] }),
                    995 => Op::Flush(pb::Flush { db_only: false }),
                    _ => Op::Spop(pb::Spop { key: key(&mut rng), count: None, seed: rng.next_u64() }),
                };
                cmds.push(w(op));
            }
            let mut replies = Vec::new();
            for ((_, s), idx) in replicas.iter().zip(indexes.iter_mut()) {
                let kept = Kept { members: std::mem::take(idx), ..Kept::default() };
                let mut ctx = ApplyCtx::new(s, 0, 16384).with_kept(kept);
                ctx.begin_entry(entry, 1);
                replies.push(cmds.iter().map(|c| apply_cmd(&mut ctx, c).unwrap()).collect::<Vec<_>>());
                let batch = ctx.take_batch();
                *idx = ctx.take_kept().members;
                s.write(batch, false).unwrap();
            }
            used_index += (indexes[0].sets() > 0) as usize;
            big += (indexes[0].largest() > 4096) as usize;
            assert_eq!(replies[0], replies[1], "seed {seed}, entry {entry}: indexed and walked pops differ");
            assert_eq!(replies[2], replies[1], "seed {seed}, entry {entry}: the small index differs");
        }
        let contents = |s: &Storage| -> Vec<(Box<[u8]>, Box<[u8]>)> {
            [Cf::Metadata, Cf::Subkey].into_iter().flat_map(|cf| s.iter_all(cf).collect::<Vec<_>>()).collect()
        };
        let (a, b2, c) = (contents(&replicas[0].1), contents(&replicas[1].1), contents(&replicas[2].1));
        assert!(a == b2 && b2 == c, "replicas hold different data");
        assert!(used_index > 100, "the index served pops ({used_index} entries)");
        assert!(big > 50, "sets big enough to pop by seeking ({big} entries)");
        assert_eq!(indexes[1].sets(), 0, "the walking replica never indexed");
    }

    #[test]
    fn a_sorted_set_whose_counters_do_not_add_up_is_walked_then_counted_on_its_first_write() {
        // A sorted set as an earlier build left it: no counter nodes (its
        // counters were single entries at FF FF). Ranks walk it; its first
        // write counts its nodes from the score index and drops the old ones.
        use crate::storage::keys::KeyType;
        use crate::types::coll::find;
        let (_d, s) = open();
        let members: Vec<String> = (0..600).map(|i| format!("m{i}")).collect();
        let scores: Vec<f64> = (0..600).map(|i| ((i * 7919) % 1000) as f64 / 8.0 - 20.0).collect();
        let refs: Vec<&str> = members.iter().map(|m| m.as_str()).collect();
        run(
            &s,
            1,
            &[w(Op::Zadd(pb::Zadd { key: b("z"), scores: scores.clone(), members: bs(&refs), ..Default::default() }))],
        );
        let found = || {
            let ctx = ApplyCtx::new(&s, 0, 16384);
            find(&ctx, b"z", KeyType::ZSet).unwrap().unwrap().unwrap()
        };
        let f = found();
        let nodes = |st: &Storage| {
            let (from, to) = (f.element(&[0xff, 0xfe]), f.element(&[0xff, 0xff]));
            st.iter_all(Cf::ZsetScore).filter(|(k, _)| &k[..] >= &from[..] && &k[..] < &to[..]).count()
        };
        assert!(nodes(&s) > 5, "this build writes counter nodes");
        let mut legacy = crate::storage::Batch::new();
        legacy.delete_range(Cf::ZsetScore, f.element(&[0xff, 0xfe]), f.end());
        legacy.put(Cf::ZsetScore, f.element(&[0xff, 0xff, 1, 0xbf]), 600u64.to_be_bytes().to_vec());
        // And what a build that counted nodes from nothing would have left: a
        // root that does not add up, a node no member leads to.
        legacy.put(Cf::ZsetScore, f.element(&[0xff, 0xfe, 1]), vec![0xc0, 1]);
        let stray = f.element(&[0xff, 0xfe, 2, 0x11]);
        legacy.put(Cf::ZsetScore, stray.clone(), vec![0x22, 1]);
        s.write(legacy, false).unwrap();
        assert_eq!(nodes(&s), 2);
        let ranks = |extra: Option<(&str, f64)>| {
            let mut want: Vec<(f64, String)> = scores.iter().copied().zip(members.iter().cloned()).collect();
            want.extend(extra.map(|(m, sc)| (sc, m.to_string())));
            want.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let ctx = ApplyCtx::new(&s, 0, 16384);
            let f = find(&ctx, b"z", KeyType::ZSet).unwrap().unwrap().unwrap();
            for (i, (_, m)) in want.iter().enumerate().step_by(37) {
                assert_eq!(zset::rank(&ctx, &f, m.as_bytes()).unwrap().map(|r| r.0), Some(i as u64), "rank of {m}");
                let at = zset::select(&ctx, &f, i as u64).unwrap().expect("a member at every rank");
                assert_eq!(&at[8..], m.as_bytes(), "member at rank {i}");
            }
        };
        ranks(None);
        run(
            &s,
            2,
            &[w(Op::Zadd(pb::Zadd { key: b("z"), scores: vec![3.5], members: bs(&["new"]), ..Default::default() }))],
        );
        assert!(nodes(&s) > 5, "the first write counted the nodes");
        let old = s.iter_all(Cf::ZsetScore).filter(|(k, _)| k.starts_with(&f.element(&[0xff, 0xff]))).count();
        assert_eq!(old, 0, "the old counters are gone");
        assert!(s.iter_all(Cf::ZsetScore).all(|(k, _)| k[..] != stray[..]), "the stray node is gone");
        ranks(Some(("new", 3.5)));
    }

    #[test]
    fn an_empty_command_is_refused_not_applied() {
        let (_d, s) = open();
        let r = run(&s, 1, &[WriteCmd { op: None, db: 0, epoch: 0 }]);
        assert_eq!(r, vec![Reply::error("ERR unknown replicated operation")]);
        // Fields a handler never leaves out read as their defaults instead of failing
        // apply: a ZADD whose score list is short adds nothing for the lonely member.
        let z = w(Op::Zadd(pb::Zadd { key: b("z"), members: bs(&["m"]), ..Default::default() }));
        assert_eq!(run(&s, 2, &[z]), vec![Reply::Int(0)]);
    }

    #[test]
    fn a_batch_sees_its_own_writes() {
        let (_d, s) = open();
        let incr = w(Op::Incrby(pb::Incrby { key: b("n"), delta: 5 }));
        let getdel = w(Op::Getdel(pb::Getdel { key: b("n") }));
        let r = run(&s, 1, &[set("n", "10"), incr.clone(), getdel, incr]);
        assert_eq!(r, vec![Reply::Ok, Reply::Int(15), Reply::Bulk(Bytes::from_static(b"15")), Reply::Int(5)]);
    }

    #[test]
    fn flush_then_write_in_one_batch() {
        let (_d, s) = open();
        run(&s, 1, &[set("a", "1"), set("b", "2")]);
        let r = run(&s, 2, &[w(Op::Flush(pb::Flush { db_only: false })), set("c", "3"), del(&["a", "c"])]);
        assert_eq!(r[2], Reply::Int(1), "only c exists after the flush");
        let r = run(&s, 3, &[set("d", "4")]);
        assert_eq!(r[0], Reply::Ok);
        assert!(s.get(Cf::Metadata, &mkey(b"a")).unwrap().is_none());
        assert!(s.get(Cf::Metadata, &mkey(b"d")).unwrap().is_some());
    }

    #[test]
    fn string_ops_on_a_composite_key_are_wrongtype() {
        let (_d, s) = open();
        let mut bt = crate::storage::Batch::new();
        bt.put(Cf::Metadata, mkey(b"h"), encode(KeyType::Hash, 0, &composite_payload(1, 3)));
        s.write(bt, false).unwrap();
        let wrong = Reply::error("WRONGTYPE Operation against a key holding the wrong kind of value");
        let get = w(Op::Set(pb::Set { key: b("h"), value: b("v"), get: true, ..Default::default() }));
        let r = run(
            &s,
            1,
            &[
                w(Op::Incrby(pb::Incrby { key: b("h"), delta: 1 })),
                w(Op::Append(pb::Append { key: b("h"), value: b("x") })),
                get,
                w(Op::Getdel(pb::Getdel { key: b("h") })),
            ],
        );
        assert_eq!(r, vec![wrong.clone(), wrong.clone(), wrong.clone(), wrong]);
        // Plain SET overwrites any type, as in Redis.
        assert_eq!(run(&s, 2, &[set("h", "v")]), vec![Reply::Ok]);
    }

    #[test]
    fn apply_uses_the_entry_time_only() {
        let (_d, s) = open();
        run(&s, 500, &[set_at("k", "v", 1_000)]);
        // At entry time 999 the key is alive, at 1000 it is gone: no local clock involved.
        assert_eq!(run(&s, 999, &[del(&["k"])]), vec![Reply::Int(1)]);
        run(&s, 500, &[set_at("k", "v", 1_000)]);
        assert_eq!(run(&s, 1_000, &[del(&["k"])]), vec![Reply::Int(0)]);
    }

    fn index_entries(s: &Storage) -> Vec<(u64, Vec<u8>)> {
        s.iter_all(Cf::ExpireIndex)
            .map(|(k, _)| {
                let (_, at, mk) = crate::storage::keys::decode_expire_index_key(&k).unwrap();
                (at, crate::storage::keys::decode_meta_key(&mk).unwrap().1.to_vec())
            })
            .collect()
    }

    /// A snapshot's column families are ingested one at a time, and a
    /// compaction may run between two ingests: its garbage collection must
    /// never judge new elements by old referrers. A renamed hash's elements
    /// live only through the key's metadata and its link; ingested in
    /// `INGEST_ORDER` (referrers first) they survive a full compaction after
    /// every ingest, while elements ingested first are dropped.
    /// Without the WAL under apply (segment logs), a crash goes back to the
    /// last flush and the entries after it apply again: garbage is judged by
    /// that flush. A set deleted before it goes; one deleted after it stays (a
    /// replayed entry may read it); one born after it stays too, though the
    /// flush knew nobody referring to it.
    #[test]
    fn without_the_wal_garbage_is_judged_by_the_last_flush() {
        let dir = tempfile::tempdir().unwrap();
        let s = Storage::open(dir.path(), &StorageOptions { apply_wal: false, ..Default::default() }).unwrap();
        let members: Vec<String> = (0..50).map(|i| format!("m{i}")).collect();
        let refs: Vec<&str> = members.iter().map(|m| m.as_str()).collect();
        let sadd = |k: &str| w(Op::Sadd(pb::Sadd { key: b(k), members: bs(&refs) }));
        let elements = |s: &Storage| s.iter_all(Cf::Subkey).count();
        run_at(&s, 10, 1, &[sadd("early"), sadd("late")]);
        run_at(&s, 11, 1, &[del(&["early"])]);
        s.persist_applied().unwrap();
        run_at(&s, 12, 1, &[del(&["late"]), sadd("born")]);
        run_at(&s, 13, 1, &[del(&["born"])]);
        // Everything in SST files for the compaction to see, nothing new durable.
        s.flush_all().unwrap();
        s.compact().unwrap();
        assert_eq!(elements(&s), 100, "only the set dead at the last flush goes");
        s.compact_all().unwrap();
        assert_eq!(elements(&s), 0, "dead at the new flush, the other two go");
    }

    #[test]
    fn snapshot_ingest_order_keeps_a_renamed_keys_elements_through_gc() {
        use crate::raft::snapshot::{ranges, INGEST_ORDER};
        use crate::storage::ingest::{ingest_one, Stager};
        let (_d, src) = open();
        run(
            &src,
            1,
            &[w(Op::Hset(pb::Hset { key: b("h"), fields: bs(&["f1", "f2"]), values: bs(&["1", "2"]), nx: false }))],
        );
        run(&src, 2, &[w(Op::Rename(pb::Rename { from: b("h"), to: b("h2"), nx: false }))]);
        let elements = |s: &Storage| s.iter_all(Cf::Subkey).count();
        assert_eq!(elements(&src), 2);
        let stage = |target: &Storage| {
            let ranges: Vec<_> = ranges(0, 0, 16384).into_iter().map(|(_, cf, a, z)| (cf, a, z)).collect();
            let stager = Stager::start(target, "r0-1", ranges.clone()).unwrap();
            for (cf, from, to) in &ranges {
                let mut entries = Vec::new();
                src.scan(*cf, from, to, false, |k, v| {
                    entries.push((*cf, Bytes::copy_from_slice(k), Bytes::copy_from_slice(v)));
                    true
                })
                .unwrap();
                futures_lite::future::block_on(stager.push(entries)).unwrap();
            }
            futures_lite::future::block_on(stager.finish()).unwrap()
        };
        let install_in = |order: &[Cf]| {
            let (_d, t) = open();
            let staged = stage(&t);
            for cf in order {
                let (_, path) = staged.files.iter().find(|(c, _)| c == cf).unwrap();
                ingest_one(&t, *cf, path).unwrap();
                t.compact_all().unwrap();
            }
            elements(&t)
        };
        assert_eq!(install_in(&INGEST_ORDER), 2, "the renamed hash lost elements");
        let elements_first = [Cf::Subkey, Cf::Metadata, Cf::Links, Cf::ZsetScore, Cf::ExpireIndex, Cf::Functions];
        assert_eq!(install_in(&elements_first), 0, "garbage collection no longer drops unreferenced elements?");
    }

    #[test]
    fn expire_index_follows_ttls() {
        let (_d, s) = open();
        run(&s, 1, &[set_at("k", "v", 5_000)]);
        assert_eq!(index_entries(&s), vec![(5_000, b"k".to_vec())]);
        run(&s, 2, &[w(Op::Expire(pb::Expire { key: b("k"), at_ms: 7_000, ..Default::default() }))]);
        assert_eq!(index_entries(&s), vec![(7_000, b"k".to_vec())], "EXPIRE moves the entry");
        run(&s, 3, &[w(Op::Persist(pb::Persist { key: b("k") }))]);
        assert!(index_entries(&s).is_empty(), "PERSIST drops it");
        run(&s, 4, &[set_at("k", "v", 9_000)]);
        run(&s, 5, &[w(Op::Rename(pb::Rename { from: b("k"), to: b("k2"), nx: false }))]);
        assert_eq!(index_entries(&s), vec![(9_000, b"k2".to_vec())], "RENAME carries it");
        run(&s, 6, &[del(&["k2"])]);
        assert!(index_entries(&s).is_empty(), "DEL drops it");
    }

    #[test]
    fn active_expiry_deletes_due_keys_and_stale_entries() {
        let (_d, s) = open();
        run(&s, 1, &[set_at("a", "1", 1_000), set_at("b", "2", 1_000)]);
        // A plain SET overwrites b blind: its old index entry goes stale.
        run(&s, 2, &[set("b", "3")]);
        assert_eq!(index_entries(&s).len(), 2);
        let ex = w(Op::ExpireKeys(pb::ExpireKeys { keys: bs(&["a", "b"]), at_ms: vec![1_000, 1_000], dbs: vec![] }));
        // Not yet due at the entry's time: nothing happens to a.
        assert_eq!(run(&s, 999, std::slice::from_ref(&ex)), vec![Reply::Int(0)]);
        assert_eq!(index_entries(&s), vec![(1_000, b"a".to_vec())], "the stale entry of b is dropped at once");
        assert_eq!(run(&s, 1_000, &[ex]), vec![Reply::Int(1)], "a is due; b lives on");
        assert!(index_entries(&s).is_empty());
        assert!(s.get(Cf::Metadata, &mkey(b"a")).unwrap().is_none());
        assert!(s.get(Cf::Metadata, &mkey(b"b")).unwrap().is_some());
    }

    #[test]
    fn same_log_gives_same_bytes() {
        let cmds = vec![
            set("a", "1"),
            w(Op::Incrbyfloat(pb::Incrbyfloat { key: b("f"), incr: b("0.1") })),
            w(Op::Append(pb::Append { key: b("a"), value: b("x") })),
            w(Op::Expire(pb::Expire { key: b("a"), at_ms: 5_000, ..Default::default() })),
            w(Op::Rename(pb::Rename { from: b("a"), to: b("b"), nx: false })),
        ];
        let dump = |s: &Storage| s.iter_all(Cf::Metadata).collect::<Vec<_>>();
        let (_d1, s1) = open();
        let (_d2, s2) = open();
        assert_eq!(run(&s1, 42, &cmds), run(&s2, 42, &cmds));
        assert_eq!(dump(&s1), dump(&s2));
        assert!(!dump(&s1).is_empty());
    }

    #[test]
    fn element_only_writes_are_recorded_as_modifications() {
        let (_d, s) = open();
        let hset = |v: &str| w(Op::Hset(pb::Hset { key: b("h"), fields: bs(&["f"]), values: bs(&[v]), nx: false }));
        run(&s, 1, &[hset("1")]);
        let mut ctx = ApplyCtx::new(&s, 0, 16384);
        ctx.begin_entry(2, 1);
        apply_cmd(&mut ctx, &hset("2")).unwrap();
        let applied = ctx.take();
        assert_eq!(applied.written, vec![mkey(b"h")], "an overwritten field touches its hash");
    }
}
