//! The command table: one static row per command (and per subcommand, named
//! `parent|sub`), the single source for dispatch, arity checks, key positions,
//! slot routing and the COMMAND family.

use std::sync::OnceLock;

use super::{Handler, HandlerFn};

/// Command flags, as COMMAND INFO names them.
pub mod flag {
    pub const WRITE: u32 = 1 << 0;
    pub const READONLY: u32 = 1 << 1;
    pub const DENYOOM: u32 = 1 << 2;
    pub const ADMIN: u32 = 1 << 3;
    pub const NOSCRIPT: u32 = 1 << 4;
    pub const LOADING: u32 = 1 << 5;
    pub const STALE: u32 = 1 << 6;
    pub const FAST: u32 = 1 << 7;
    pub const NO_AUTH: u32 = 1 << 8;
    pub const SKIP_SLOWLOG: u32 = 1 << 9;
    pub const ALLOW_BUSY: u32 = 1 << 10;
    pub const NO_MULTI: u32 = 1 << 11;
    pub const SKIP_MONITOR: u32 = 1 << 12;
    pub const BLOCKING: u32 = 1 << 13;
    /// Not a Redis flag: a write-flagged command whose handler may read the
    /// keyspace inline (GETEX without options), so earlier pipelined writes must
    /// be applied before it runs.
    pub const READS_INLINE: u32 = 1 << 30;

    pub const NAMES: &[(u32, &str)] = &[
        (WRITE, "write"),
        (READONLY, "readonly"),
        (DENYOOM, "denyoom"),
        (ADMIN, "admin"),
        (NOSCRIPT, "noscript"),
        (LOADING, "loading"),
        (STALE, "stale"),
        (SKIP_MONITOR, "skip_monitor"),
        (SKIP_SLOWLOG, "skip_slowlog"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        (ALLOW_BUSY, "allow_busy"),
        (NO_MULTI, "no_multi"),
        (BLOCKING, "blocking"),
    ];
}

/// The Redis command group (COMMAND DOCS `group`, ACL category).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    String,
    Generic,
    Connection,
    Server,
    Hash,
    List,
    Set,
    SortedSet,
}

impl Group {
    pub fn name(self) -> &'static str {
        match self {
            Group::String => "string",
            Group::Generic => "generic",
            Group::Hash => "hash",
            Group::List => "list",
            Group::Set => "set",
            Group::SortedSet => "sorted-set",
            Group::Connection => "connection",
            Group::Server => "server",
        }
    }
    pub fn acl_category(self) -> &'static str {
        match self {
            Group::String => "@string",
            Group::Generic => "@keyspace",
            Group::Hash => "@hash",
            Group::List => "@list",
            Group::Set => "@set",
            Group::SortedSet => "@sortedset",
            Group::Connection => "@connection",
            Group::Server => "@admin",
        }
    }
}

/// One row of the table.
pub struct CommandSpec {
    /// Lowercase; subcommands are `parent|sub`.
    pub name: &'static str,
    /// Redis convention: N = exactly N arguments (name included), -N = at least N.
    pub arity: i32,
    pub flags: u32,
    /// 1-based argument index of the first key, 0 = no keys.
    pub first_key: i32,
    /// Last key index; -1 = the last argument, -2 = the one before, ...
    pub last_key: i32,
    pub step: i32,
    pub group: Group,
    pub since: &'static str,
    pub summary: &'static str,
    pub handler: Handler,
}

impl CommandSpec {
    pub fn is_write(&self) -> bool {
        self.flags & flag::WRITE != 0
    }

    pub fn arity_ok(&self, argc: usize) -> bool {
        let argc = argc as i32;
        if self.arity >= 0 {
            argc == self.arity
        } else {
            argc >= -self.arity
        }
    }

    /// True for a container (CLIENT, CONFIG, ...) whose rows are `name|sub`.
    pub fn is_container(&self) -> bool {
        matches!(self.handler, Handler::Container(_))
    }

    pub fn parent_and_sub(&self) -> Option<(&'static str, &'static str)> {
        self.name.split_once('|')
    }

    /// Indices of the key arguments in `argc` arguments, from the key positions.
    pub fn key_indices(&self, argc: usize) -> Vec<usize> {
        if self.first_key <= 0 {
            return Vec::new();
        }
        self.fixed_key_indices(argc)
    }

    /// For commands whose keys follow a `numkeys` argument (LMPOP, ZUNION,
    /// ZUNIONSTORE, ...): where `numkeys` is and whether a destination key comes
    /// first. `None` for the others.
    pub fn numkeys_at(&self) -> Option<(usize, bool)> {
        Some(match self.name {
            "lmpop" | "zmpop" | "sintercard" | "zintercard" | "zunion" | "zinter" | "zdiff" => (1, false),
            "blmpop" | "bzmpop" => (2, false),
            "zunionstore" | "zinterstore" | "zdiffstore" => (2, true),
            _ => return None,
        })
    }

    /// The key positions of a request `args` (with the command name), movable
    /// `numkeys` keys included; `None` if `numkeys` is not a valid count.
    pub fn keys_of(&self, args: &[bytes::Bytes]) -> Option<Vec<usize>> {
        let Some((at, dst)) = self.numkeys_at() else { return Some(self.key_indices(args.len())) };
        let n = crate::protocol::cursor::parse_i64(args.get(at)?)?;
        if n < 1 || n as usize > args.len() - at - 1 {
            return None;
        }
        let mut out: Vec<usize> = if dst { vec![1] } else { Vec::new() };
        out.extend(at + 1..=at + n as usize);
        Some(out)
    }

    fn fixed_key_indices(&self, argc: usize) -> Vec<usize> {
        if self.first_key <= 0 {
            return Vec::new();
        }
        let last = if self.last_key < 0 { argc as i32 + self.last_key } else { self.last_key };
        let mut out = Vec::new();
        let mut i = self.first_key;
        while i <= last && (i as usize) < argc {
            out.push(i as usize);
            i += self.step.max(1);
        }
        out
    }
}

/// Build a row (keeps the family files' tables compact).
#[allow(clippy::too_many_arguments)]
pub const fn row(
    name: &'static str,
    arity: i32,
    flags: u32,
    keys: (i32, i32, i32),
    group: Group,
    since: &'static str,
    summary: &'static str,
    f: HandlerFn,
) -> CommandSpec {
    CommandSpec {
        name,
        arity,
        flags,
        first_key: keys.0,
        last_key: keys.1,
        step: keys.2,
        group,
        since,
        summary,
        handler: Handler::Fn(f),
    }
}

/// A container row: dispatch goes to `name|<sub>`; `bare` (if any) serves the
/// command with no subcommand (COMMAND), and then the arity is -1.
pub const fn container(
    name: &'static str,
    flags: u32,
    group: Group,
    since: &'static str,
    summary: &'static str,
    bare: Option<HandlerFn>,
) -> CommandSpec {
    CommandSpec {
        name,
        arity: if bare.is_some() { -1 } else { -2 },
        flags,
        first_key: 0,
        last_key: 0,
        step: 0,
        group,
        since,
        summary,
        handler: Handler::Container(bare),
    }
}

pub struct Table {
    pub rows: Vec<&'static CommandSpec>,
    by_name: ahash::AHashMap<&'static str, &'static CommandSpec>,
}

impl Table {
    pub fn get(&self, lower_name: &str) -> Option<&'static CommandSpec> {
        self.by_name.get(lower_name).copied()
    }

    /// Look a command up by its (any-case) name bytes.
    pub fn lookup(&self, name: &[u8]) -> Option<&'static CommandSpec> {
        if name.len() > 64 {
            return None;
        }
        let mut buf = [0u8; 64];
        let lower = &mut buf[..name.len()];
        lower.copy_from_slice(name);
        lower.make_ascii_lowercase();
        std::str::from_utf8(lower).ok().and_then(|s| self.get(s))
    }

    /// Top-level commands (no subcommand rows).
    pub fn top_level(&self) -> impl Iterator<Item = &'static CommandSpec> + '_ {
        self.rows.iter().copied().filter(|r| !r.name.contains('|'))
    }

    pub fn subcommands<'a>(&'a self, parent: &'a str) -> impl Iterator<Item = &'static CommandSpec> + 'a {
        self.rows.iter().copied().filter(move |r| r.parent_and_sub().map(|(p, _)| p) == Some(parent))
    }
}

/// An id of a row for per-client "last command": its address (rows are 'static).
pub fn spec_id(spec: &'static CommandSpec) -> usize {
    spec as *const CommandSpec as usize
}

/// The row `spec_id` named, if any (CLIENT LIST; not on the request path).
pub fn spec_by_id(id: usize) -> Option<&'static CommandSpec> {
    table().rows.iter().copied().find(|r| spec_id(r) == id)
}

/// The process-wide table, built from every family's rows on first use.
pub fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut rows: Vec<&'static CommandSpec> = Vec::new();
        for family in [
            super::string::COMMANDS,
            super::keyspace::COMMANDS,
            super::server::COMMANDS,
            super::hash::COMMANDS,
            super::list::COMMANDS,
            super::set::COMMANDS,
            super::zset::COMMANDS,
        ] {
            rows.extend(family.iter());
        }
        let by_name = rows.iter().map(|r| (r.name, *r)).collect();
        Table { rows, by_name }
    })
}

#[cfg(test)]
mod tests {
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
            if r.first_key > 0 {
                assert!(r.step >= 1, "{}: keys need a step", r.name);
                assert!(r.last_key < 0 || r.last_key >= r.first_key, "{}: last key before first", r.name);
                let min_argc = r.arity.unsigned_abs() as i32;
                assert!(r.first_key < min_argc || r.arity < 0, "{}: first key beyond arity", r.name);
            } else {
                assert_eq!((r.last_key, r.step), (0, 0), "{}: keyless rows have no key range", r.name);
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

    #[test]
    fn key_positions() {
        let t = table();
        let mset = t.get("mset").unwrap();
        assert_eq!(mset.key_indices(5), vec![1, 3]);
        let del = t.get("del").unwrap();
        assert_eq!(del.key_indices(4), vec![1, 2, 3]);
        assert!(t.get("ping").unwrap().key_indices(1).is_empty());
        assert!(t.lookup(b"GeT").is_some());
    }

    #[test]
    fn numkeys_key_positions() {
        let t = table();
        let args = |s: &str| s.split(' ').map(|a| bytes::Bytes::copy_from_slice(a.as_bytes())).collect::<Vec<_>>();
        assert_eq!(t.get("lmpop").unwrap().keys_of(&args("LMPOP 2 a b LEFT")), Some(vec![2, 3]));
        assert_eq!(t.get("blmpop").unwrap().keys_of(&args("BLMPOP 0 1 a LEFT")), Some(vec![3]));
        assert_eq!(t.get("zunionstore").unwrap().keys_of(&args("ZUNIONSTORE d 2 a b")), Some(vec![1, 3, 4]));
        assert_eq!(t.get("zinter").unwrap().keys_of(&args("ZINTER 3 a b")), None, "more keys than arguments");
        assert_eq!(t.get("sintercard").unwrap().keys_of(&args("SINTERCARD 0 a")), None);
        assert_eq!(t.get("blpop").unwrap().keys_of(&args("BLPOP a b 0")), Some(vec![1, 2]));
    }
}
