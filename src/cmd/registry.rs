//! The registry: every family's rows, gathered once into the command table.
//! Adding a family is one line here; adding a command is one row in its
//! family's `COMMANDS` (and its handler). Nothing but dispatch and start-up
//! reads this: handlers reach the table through [`super::Ctx::table`].

use std::sync::OnceLock;

use super::table::Table;

/// The process-wide table, built on first use.
pub fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        Table::new(&[
            super::string::COMMANDS,
            super::keyspace::COMMANDS,
            super::server::COMMANDS,
            super::hash::COMMANDS,
            super::list::COMMANDS,
            super::set::COMMANDS,
            super::stream::COMMANDS,
            super::stream_group::COMMANDS,
            super::dump::COMMANDS,
            super::zset::COMMANDS,
            super::hll::COMMANDS,
            super::sort::COMMANDS,
            super::bitmap::COMMANDS,
            super::geo::COMMANDS,
            super::txn::COMMANDS,
            super::script::COMMANDS,
            super::pubsub::COMMANDS,
            super::admin::COMMANDS,
            super::introspect::COMMANDS,
            super::cluster::COMMANDS,
            super::admin::FAILPOINT_COMMANDS,
        ])
    })
}

#[cfg(test)]
mod tests {
    use super::super::key_specs as ks;
    use super::super::table::{flag, Table};
    use super::*;

    #[test]
    fn table_invariants() {
        let t = table();
        let mut seen = std::collections::HashSet::new();
        for r in &t.rows {
            assert!(seen.insert(r.name), "duplicate row {}", r.name);
            assert_eq!(r.name, r.name.to_ascii_lowercase(), "{} must be lowercase", r.name);
            assert!(r.arity != 0, "{}: arity 0 is meaningless", r.name);
            assert!(
                (r.flags & flag::WRITE != 0) as u8 + (r.flags & flag::READONLY != 0) as u8 <= 1,
                "{} is both write and readonly",
                r.name
            );
            for k in r.key_specs {
                if let (ks::Begin::Index(i), ks::Find::Range { lastkey, keystep, .. }) = (k.begin, k.find) {
                    assert!(i >= 1 && keystep >= 1, "{}: a key after the name, a step", r.name);
                    let min_argc = r.arity.unsigned_abs() as i32;
                    assert!(i < min_argc || r.arity < 0, "{}: first key beyond arity", r.name);
                    assert!(lastkey >= -1 || r.arity < 0, "{}: last key", r.name);
                }
            }
            if let Some((parent, _)) = r.parent_and_sub() {
                let p = t.get(parent).unwrap_or_else(|| panic!("{}: no parent row", r.name));
                assert!(p.is_container(), "{parent} must be a container");
                assert!(r.arity.abs() >= 2, "{}: a subcommand has at least 2 args", r.name);
            }
            if r.is_container() {
                assert!(t.subcommands(r.name).count() > 0, "{} has no subcommands", r.name);
            }
            assert!(!r.summary.is_empty() && !r.since.is_empty(), "{}: docs", r.name);
        }
    }

    fn positions(t: &Table, line: &str) -> Option<Vec<usize>> {
        let args: Vec<_> = line.split(' ').map(|a| bytes::Bytes::copy_from_slice(a.as_bytes())).collect();
        t.named(&args).unwrap().keys_of(&args).map(|k| k.to_vec())
    }

    #[test]
    fn key_positions() {
        let t = table();
        assert_eq!(positions(t, "MSET a 1 b 2"), Some(vec![1, 3]));
        assert_eq!(positions(t, "DEL a b c"), Some(vec![1, 2, 3]));
        assert_eq!(positions(t, "PING"), Some(vec![]));
        assert_eq!(positions(t, "GeT k"), Some(vec![1]));
        // XREAD and XREADGROUP: half of what follows STREAMS, past the options
        // (a group or consumer named STREAMS is not the keyword).
        assert_eq!(positions(t, "XREAD COUNT 2 BLOCK 0 STREAMS a b 0 $"), Some(vec![6, 7]));
        assert_eq!(positions(t, "XREADGROUP GROUP streams STREAMS NOACK STREAMS k >"), Some(vec![6]));
        // An unbalanced list: the spec (half of what follows, rounded down)
        // names the first stream, as Redis's does; XREAD then answers the error.
        assert_eq!(positions(t, "XREAD STREAMS a b 0"), Some(vec![2]));
    }

    #[test]
    fn numkeys_key_positions() {
        let t = table();
        assert_eq!(positions(t, "LMPOP 2 a b LEFT"), Some(vec![2, 3]));
        assert_eq!(positions(t, "BLMPOP 0 1 a LEFT"), Some(vec![3]));
        assert_eq!(positions(t, "ZUNIONSTORE d 2 a b"), Some(vec![1, 3, 4]));
        assert_eq!(positions(t, "ZINTER 3 a b"), None, "more keys than arguments");
        assert_eq!(positions(t, "SINTERCARD x a"), None, "numkeys is not a number");
        assert_eq!(positions(t, "BLPOP a b 0"), Some(vec![1, 2]));
        // Every row whose handler reads `numkeys` says so in the table.
        for name in ["lmpop", "blmpop", "zmpop", "bzmpop", "sintercard", "zintercard", "zunion", "zinter", "zdiff"] {
            assert!(t.get(name).unwrap().movable_keys(), "{name}");
        }
        for name in ["zunionstore", "zinterstore", "zdiffstore"] {
            assert_eq!(t.get(name).unwrap().legacy_keys(), (1, 1, 1), "{name}");
        }
    }

    #[test]
    fn sort_key_positions_as_redis_sortgetkeys() {
        let t = table();
        assert_eq!(positions(t, "SORT k"), Some(vec![1]));
        assert_eq!(positions(t, "SORT k STORE d BY w_* STORE e LIMIT 0 1"), Some(vec![1, 7]), "the last STORE");
        assert_eq!(positions(t, "SORT k LIMIT store x"), Some(vec![1]), "LIMIT skips two");
        assert_eq!(positions(t, "SORT k GET store BY store"), Some(vec![1]), "GET and BY skip one");
        assert_eq!(positions(t, "SORT k store"), Some(vec![1]), "STORE without a key");
        assert_eq!(positions(t, "SORT_RO k STORE d"), Some(vec![1]), "SORT_RO stores nothing");
    }

    #[test]
    fn georadius_and_script_key_positions() {
        let t = table();
        assert_eq!(positions(t, "GEORADIUS k 0 0 1 km"), Some(vec![1]));
        // The destination written is the last STORE or STOREDIST.
        assert_eq!(positions(t, "GEORADIUS k 0 0 1 km STORE d"), Some(vec![1, 7]));
        assert!(positions(t, "GEORADIUS k 0 0 1 km STORE d STORE e").unwrap().contains(&9));
        assert!(positions(t, "GEORADIUSBYMEMBER k m 1 km STOREDIST d").unwrap().contains(&6));
        assert_eq!(positions(t, "GEORADIUS_RO k 0 0 1 km"), Some(vec![1]));
        assert_eq!(positions(t, "EVAL s 2 a b c"), Some(vec![3, 4]));
        assert_eq!(positions(t, "EVAL s 0"), Some(vec![]));
        assert_eq!(positions(t, "FCALL f 1 a b"), Some(vec![3]));
        assert_eq!(positions(t, "EVAL s 3 a b"), None, "more keys than arguments");
        assert_eq!(positions(t, "XREADGROUP GROUP g c COUNT 1 STREAMS a b > >"), Some(vec![7, 8]));
        assert_eq!(positions(t, "MSET a 1 b 2 c 3"), Some(vec![1, 3, 5]));
        assert_eq!(positions(t, "PFMERGE d"), Some(vec![1]), "a destination without sources");
        assert_eq!(positions(t, "SSUBSCRIBE a b"), Some(vec![1, 2]), "shard channels route by slot");
        assert_eq!(positions(t, "OBJECT FREQ k"), Some(vec![2]));
    }
}
