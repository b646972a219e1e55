//! The replicated write vocabulary (`pb::WriteCmd`) and its deterministic apply.
//!
//! A handler turns a client command into a `WriteCmd` with every relative time
//! already made absolute; apply executes it against an [`ApplyCtx`] and produces
//! the client's reply. Apply never reads the local clock or a random source.

use crate::pb::{Op, WriteCmd};
use crate::protocol::Reply;
use crate::storage::StorageError;

use super::{hash, keyspace, list, set, string, zset, ApplyCtx};

/// `WriteCmd.flags` bits, per op.
pub mod flags {
    pub const SET_NX: u32 = 1;
    pub const SET_XX: u32 = 2;
    pub const SET_GET: u32 = 4;
    pub const SET_KEEPTTL: u32 = 8;

    pub const EXPIRE_NX: u32 = 1;
    pub const EXPIRE_XX: u32 = 2;
    pub const EXPIRE_GT: u32 = 4;
    pub const EXPIRE_LT: u32 = 8;

    pub const RENAME_NX: u32 = 1;
    pub const COPY_REPLACE: u32 = 1;

    pub const GETEX_PERSIST: u32 = 1;
    pub const GETEX_SET: u32 = 2;

    pub const HSET_NX: u32 = 1;

    pub const SET_INTER: u32 = 0;
    pub const SET_UNION: u32 = 1;
    pub const SET_DIFF: u32 = 2;

    /// LPUSH/LPOP/LMOVE's source: the head end (else the tail).
    pub const LIST_LEFT: u32 = 1;
    /// LPUSHX/RPUSHX: push only onto an existing list.
    pub const LIST_X: u32 = 2;
    /// LMOVE's destination: push at the head.
    pub const LIST_TO_LEFT: u32 = 4;
    /// A blocked client's retry: a source that is not a list counts as empty
    /// (Redis serves a blocked client only from a key that is a list).
    pub const LIST_SKIP_WRONGTYPE: u32 = 8;

    pub const Z_NX: u32 = 1;
    pub const Z_XX: u32 = 2;
    pub const Z_GT: u32 = 4;
    pub const Z_LT: u32 = 16;
    pub const Z_CH: u32 = 32;
    pub const Z_INCR: u32 = 64;
    /// ZPOP*: the high end (ZPOPMAX, MAX). Shares no bit with LIST_SKIP_WRONGTYPE.
    pub const Z_MAX: u32 = 1;
    /// The kind of a ZREMRANGE / ZRANGESTORE range (values, not bits), and REV.
    pub const Z_BY_RANK: u32 = 0;
    pub const Z_BY_SCORE: u32 = 1;
    pub const Z_BY_LEX: u32 = 2;
    pub const Z_REV: u32 = 16;
}

/// `WriteCmd.reply` values: which command's reply shape an op produces.
pub mod reply_kind {
    /// The op's natural reply.
    pub const DEFAULT: u32 = 0;
    /// SETNX: `:1` if set, `:0` if not.
    pub const SETNX: u32 = 1;
    /// HMSET: `+OK` instead of HSET's count.
    pub const HMSET: u32 = 2;
    /// LMPOP: `[key, [elements]]`, or a null array.
    pub const LMPOP: u32 = 3;
    /// BLPOP/BRPOP: `[key, element]`, or a null array.
    pub const BLPOP: u32 = 4;
    /// ZMPOP: `[key, [[member, score], ...]]`, or a null array.
    pub const ZMPOP: u32 = 5;
    /// BZPOPMIN/BZPOPMAX: `[key, member, score]`, or a null array.
    pub const BZPOP: u32 = 6;
}

/// Apply one command; a command-level failure is an error *reply*, a storage
/// failure is an `Err` (fatal for the state machine).
pub fn apply_cmd(ctx: &mut ApplyCtx<'_>, cmd: &WriteCmd) -> Result<Reply, StorageError> {
    // The fewest keys and values each op reads by position: a malformed entry is
    // an error reply, never a panic of the state machine.
    let (keys, vals) = match cmd.op() {
        Op::Flush | Op::None => (0, 0),
        Op::Rename | Op::Copy | Op::Lmove | Op::Sstore | Op::Zstore => (2, 0),
        Op::Smove => (2, 1),
        Op::Zrangestore => (2, 2),
        Op::Hincrby | Op::Lrem => (1, 1),
        Op::Hincrbyfloat | Op::Lset | Op::Linsert | Op::Zremrange => (1, 2),
        _ => (1, 0),
    };
    if cmd.keys.len() < keys || cmd.vals.len() < vals {
        return Ok(Reply::error("ERR malformed replicated operation"));
    }
    let r = match cmd.op() {
        Op::Set => string::apply_set(ctx, cmd),
        Op::Mset => string::apply_mset(ctx, cmd),
        Op::Incrby => string::apply_incrby(ctx, cmd),
        Op::Incrbyfloat => string::apply_incrbyfloat(ctx, cmd),
        Op::Append => string::apply_append(ctx, cmd),
        Op::Setrange => string::apply_setrange(ctx, cmd),
        Op::Getdel => string::apply_getdel(ctx, cmd),
        Op::Getex => string::apply_getex(ctx, cmd),
        Op::Del => keyspace::apply_del(ctx, cmd),
        Op::Expire => keyspace::apply_expire(ctx, cmd),
        Op::Persist => keyspace::apply_persist(ctx, cmd),
        Op::Rename => keyspace::apply_rename(ctx, cmd),
        Op::Copy => keyspace::apply_copy(ctx, cmd),
        Op::Flush => {
            ctx.flush_region();
            Ok(Ok(Reply::Ok))
        }
        Op::ExpireKeys => keyspace::apply_expire_keys(ctx, cmd),
        Op::Hset => hash::apply_hset(ctx, cmd),
        Op::Hdel => hash::apply_hdel(ctx, cmd),
        Op::Hincrby => hash::apply_hincrby(ctx, cmd),
        Op::Hincrbyfloat => hash::apply_hincrbyfloat(ctx, cmd),
        Op::Sadd => set::apply_sadd(ctx, cmd),
        Op::Srem => set::apply_srem(ctx, cmd),
        Op::Spop => set::apply_spop(ctx, cmd),
        Op::Smove => set::apply_smove(ctx, cmd),
        Op::Sstore => set::apply_sstore(ctx, cmd),
        Op::Lpush => list::apply_push(ctx, cmd),
        Op::Lpop => list::apply_pop(ctx, cmd),
        Op::Lset => list::apply_lset(ctx, cmd),
        Op::Linsert => list::apply_linsert(ctx, cmd),
        Op::Lrem => list::apply_lrem(ctx, cmd),
        Op::Ltrim => list::apply_ltrim(ctx, cmd),
        Op::Lmove => list::apply_lmove(ctx, cmd),
        Op::Zadd => zset::apply_zadd(ctx, cmd),
        Op::Zrem => zset::apply_zrem(ctx, cmd),
        Op::Zpop => zset::apply_zpop(ctx, cmd),
        Op::Zremrange => zset::apply_zremrange(ctx, cmd),
        Op::Zrangestore => zset::apply_zrangestore(ctx, cmd),
        Op::Zstore => zset::apply_zstore(ctx, cmd),
        Op::None => Ok(Ok(Reply::error("ERR unknown replicated operation"))),
    }?;
    Ok(r.unwrap_or_else(|e| Reply::Error(e.to_string().into())))
}

/// What an apply function returns: storage failure outside, command failure inside.
pub type ApplyResult = Result<Result<Reply, super::TypeError>, StorageError>;

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::storage::keys::KeyType;
    use crate::storage::meta::{composite_payload, encode};
    use crate::storage::{Cf, Storage, StorageOptions};
    use crate::types::{mkey, ApplyCtx};

    fn w(op: Op, keys: &[&str], vals: &[&str]) -> WriteCmd {
        WriteCmd {
            op: op as i32,
            keys: keys.iter().map(|k| Bytes::copy_from_slice(k.as_bytes())).collect(),
            vals: vals.iter().map(|v| Bytes::copy_from_slice(v.as_bytes())).collect(),
            ..Default::default()
        }
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
        let (_d2, b) = open();
        let members: Vec<String> = (0..500).map(|i| format!("m{i}")).collect();
        let refs: Vec<&str> = members.iter().map(|s| s.as_str()).collect();
        let mut entries = vec![vec![w(Op::Sadd, &["s"], &refs)]];
        for e in 0..5u64 {
            entries.push(
                (0..20u64)
                    .map(|i| {
                        let mut c = w(Op::Spop, &["s"], &[]);
                        c.num = if i % 4 == 0 { 3 } else { -1 };
                        c.seed = e * 100 + i;
                        c
                    })
                    .collect(),
            );
        }
        let mut popped = std::collections::BTreeSet::new();
        for (i, cmds) in entries.iter().enumerate() {
            let (ra, rb) = (run_at(&a, i as u64 + 1, 1, cmds), run_at(&b, i as u64 + 1, 1, cmds));
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
        assert_eq!(scan(&a), scan(&b));
        assert!(popped.len() > 50, "the single pops drew distinct members");
    }

    #[test]
    fn malformed_ops_are_refused_not_applied() {
        let (_d, s) = open();
        let bad = Reply::error("ERR malformed replicated operation");
        let cmds = [
            w(Op::Lset, &["l"], &["x"]),
            w(Op::Linsert, &["l"], &["pivot"]),
            w(Op::Smove, &["a"], &["m"]),
            w(Op::Zrangestore, &["d", "s"], &["0"]),
            w(Op::Zremrange, &["z"], &[]),
            w(Op::Hincrbyfloat, &["h"], &["f"]),
            w(Op::Rename, &["a"], &[]),
            w(Op::Set, &[], &["v"]),
        ];
        for (c, r) in cmds.iter().zip(run(&s, 1, &cmds)) {
            assert_eq!(r, bad, "{:?}", c.op());
        }
        // A short score in a ZADD reads as 0 instead of failing apply.
        let r = run(&s, 2, &[w(Op::Zadd, &["z"], &["x", "m"])]);
        assert_eq!(r, vec![Reply::Int(1)]);
    }

    #[test]
    fn a_batch_sees_its_own_writes() {
        let (_d, s) = open();
        let mut incr = w(Op::Incrby, &["n"], &[]);
        incr.num = 5;
        let r = run(&s, 1, &[w(Op::Set, &["n"], &["10"]), incr.clone(), w(Op::Getdel, &["n"], &[]), incr]);
        assert_eq!(r, vec![Reply::Ok, Reply::Int(15), Reply::Bulk(Bytes::from_static(b"15")), Reply::Int(5)]);
    }

    #[test]
    fn flush_then_write_in_one_batch() {
        let (_d, s) = open();
        run(&s, 1, &[w(Op::Set, &["a"], &["1"]), w(Op::Set, &["b"], &["2"])]);
        let r = run(&s, 2, &[w(Op::Flush, &[], &[]), w(Op::Set, &["c"], &["3"]), w(Op::Del, &["a", "c"], &[])]);
        assert_eq!(r[2], Reply::Int(1), "only c exists after the flush");
        let r = run(&s, 3, &[w(Op::Set, &["d"], &["4"])]);
        assert_eq!(r[0], Reply::Ok);
        assert!(s.get(Cf::Metadata, &mkey(b"a")).unwrap().is_none());
        assert!(s.get(Cf::Metadata, &mkey(b"d")).unwrap().is_some());
    }

    #[test]
    fn string_ops_on_a_composite_key_are_wrongtype() {
        let (_d, s) = open();
        let mut b = crate::storage::Batch::new();
        b.put(Cf::Metadata, mkey(b"h"), encode(KeyType::Hash, 0, &composite_payload(1, 3)));
        s.write(b, false).unwrap();
        let wrong = Reply::error("WRONGTYPE Operation against a key holding the wrong kind of value");
        let mut get = w(Op::Set, &["h"], &["v"]);
        get.flags = flags::SET_GET;
        let r =
            run(&s, 1, &[w(Op::Incrby, &["h"], &[]), w(Op::Append, &["h"], &["x"]), get, w(Op::Getdel, &["h"], &[])]);
        assert_eq!(r, vec![wrong.clone(), wrong.clone(), wrong.clone(), wrong]);
        // Plain SET overwrites any type, as in Redis.
        assert_eq!(run(&s, 2, &[w(Op::Set, &["h"], &["v"])]), vec![Reply::Ok]);
    }

    #[test]
    fn apply_uses_the_entry_time_only() {
        let (_d, s) = open();
        let mut set = w(Op::Set, &["k"], &["v"]);
        set.at_ms = 1_000;
        run(&s, 500, &[set]);
        // At entry time 999 the key is alive, at 1000 it is gone: no local clock involved.
        assert_eq!(run(&s, 999, &[w(Op::Del, &["k"], &[])]), vec![Reply::Int(1)]);
        let mut set = w(Op::Set, &["k"], &["v"]);
        set.at_ms = 1_000;
        run(&s, 500, &[set]);
        assert_eq!(run(&s, 1_000, &[w(Op::Del, &["k"], &[])]), vec![Reply::Int(0)]);
    }

    fn index_entries(s: &Storage) -> Vec<(u64, Vec<u8>)> {
        s.iter_all(Cf::ExpireIndex)
            .map(|(k, _)| {
                let (_, at, key) = crate::storage::keys::decode_expire_index_key(&k).unwrap();
                (at, key.to_vec())
            })
            .collect()
    }

    #[test]
    fn expire_index_follows_ttls() {
        let (_d, s) = open();
        let mut set = w(Op::Set, &["k"], &["v"]);
        set.at_ms = 5_000;
        run(&s, 1, &[set]);
        assert_eq!(index_entries(&s), vec![(5_000, b"k".to_vec())]);
        let mut e = w(Op::Expire, &["k"], &[]);
        e.at_ms = 7_000;
        run(&s, 2, &[e]);
        assert_eq!(index_entries(&s), vec![(7_000, b"k".to_vec())], "EXPIRE moves the entry");
        run(&s, 3, &[w(Op::Persist, &["k"], &[])]);
        assert!(index_entries(&s).is_empty(), "PERSIST drops it");
        let mut set = w(Op::Set, &["k"], &["v"]);
        set.at_ms = 9_000;
        run(&s, 4, &[set]);
        run(&s, 5, &[w(Op::Rename, &["k", "k2"], &[])]);
        assert_eq!(index_entries(&s), vec![(9_000, b"k2".to_vec())], "RENAME carries it");
        run(&s, 6, &[w(Op::Del, &["k2"], &[])]);
        assert!(index_entries(&s).is_empty(), "DEL drops it");
    }

    #[test]
    fn active_expiry_deletes_due_keys_and_stale_entries() {
        let (_d, s) = open();
        let mut a = w(Op::Set, &["a"], &["1"]);
        a.at_ms = 1_000;
        let mut b = w(Op::Set, &["b"], &["2"]);
        b.at_ms = 1_000;
        run(&s, 1, &[a, b]);
        // A plain SET overwrites b blind: its old index entry goes stale.
        run(&s, 2, &[w(Op::Set, &["b"], &["3"])]);
        assert_eq!(index_entries(&s).len(), 2);
        let at = Bytes::copy_from_slice(&1_000u64.to_be_bytes());
        let mut ex = w(Op::ExpireKeys, &["a", "b"], &[]);
        ex.vals = vec![at.clone(), at];
        // Not yet due at the entry's time: nothing happens to a.
        assert_eq!(run(&s, 999, &[ex.clone()]), vec![Reply::Int(0)]);
        assert_eq!(index_entries(&s), vec![(1_000, b"a".to_vec())], "the stale entry of b is dropped at once");
        assert_eq!(run(&s, 1_000, &[ex]), vec![Reply::Int(1)], "a is due; b lives on");
        assert!(index_entries(&s).is_empty());
        assert!(s.get(Cf::Metadata, &mkey(b"a")).unwrap().is_none());
        assert!(s.get(Cf::Metadata, &mkey(b"b")).unwrap().is_some());
    }

    #[test]
    fn same_log_gives_same_bytes() {
        let mut cmds =
            vec![w(Op::Set, &["a"], &["1"]), w(Op::Incrbyfloat, &["f"], &["0.1"]), w(Op::Append, &["a"], &["x"])];
        let mut e = w(Op::Expire, &["a"], &[]);
        e.at_ms = 5_000;
        cmds.push(e);
        cmds.push(w(Op::Rename, &["a", "b"], &[]));
        let dump = |s: &Storage| s.iter_all(Cf::Metadata).collect::<Vec<_>>();
        let (_d1, s1) = open();
        let (_d2, s2) = open();
        assert_eq!(run(&s1, 42, &cmds), run(&s2, 42, &cmds));
        assert_eq!(dump(&s1), dump(&s2));
        assert!(!dump(&s1).is_empty());
    }
}
