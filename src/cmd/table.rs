//! The command table: one static row per command (and per subcommand, named
//! `parent|sub`), the single source for dispatch, arity checks, key specs,
//! slot routing and the COMMAND family. Each family declares its rows; the
//! table of them all is built once by `cmd::registry` and reaches handlers
//! through [`super::Ctx::table`], so this file names no family.

use bytes::Bytes;

use super::ctx::HandlerFn;
use super::key_specs::{Begin, Find, KeyProc, KeySpec};
use crate::protocol::Reply;

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
    /// Not a Redis flag: a script (EVAL, FCALL): queued in a transaction, it runs
    /// inside apply with the keyspace commands.
    pub const PROGRAM: u32 = 1 << 29;
    /// Not a Redis flag: looks its keys up without touching them (Redis's
    /// LOOKUP_NOTOUCH: TTL, TYPE, EXISTS, OBJECT, ...): their idle time and
    /// access frequency stay as they were (see `shard::access`).
    pub const NO_TOUCH: u32 = 1 << 28;
    /// Not a Redis flag: deletes its keys without looking them up (DEL,
    /// UNLINK): their access records are dropped.
    pub const FORGETS: u32 = 1 << 27;
    /// Not a Redis flag: reads data without naming keys (DBSIZE, KEYS, SCAN,
    /// RANDOMKEY, FUNCTION LIST / DUMP). In cluster mode it answers for the
    /// regions this node leads, and dispatch first makes reads of each of them
    /// linearizable (`cluster::read_scope`); so are scripts (`PROGRAM`).
    pub const KEYLESS_READ: u32 = 1 << 26;
    /// Not a Redis flag: reads the slot its third argument names (CLUSTER
    /// COUNTKEYSINSLOT, GETKEYSINSLOT), linearizably, on any node.
    pub const READS_SLOT: u32 = 1 << 25;
    /// Not a Redis flag: a write to every region (FLUSHALL, FLUSHDB, FUNCTION
    /// LOAD / DELETE / FLUSH / RESTORE): see `cmd::fanout` for which regions
    /// and the reply.
    pub const FANOUT: u32 = 1 << 24;
    /// Not a Redis flag: runs at once inside MULTI instead of being queued
    /// (EXEC, DISCARD, MULTI, WATCH, QUIT, RESET: Redis checks these by name).
    pub const NOT_QUEUED: u32 = 1 << 17;
    /// Not a Redis flag: a RESP2 client may run it while subscribed (PING,
    /// (P|S)(UN)SUBSCRIBE, QUIT, RESET: Redis checks these by name).
    pub const WHILE_SUBSCRIBED: u32 = 1 << 18;
    /// Redis's hidden CMD_MAY_REPLICATE (COMMAND INFO does not list it): may
    /// propagate though not a write (PUBLISH, scripts, PFCOUNT storing its
    /// cache); CLIENT PAUSE WRITE holds it as a write.
    pub const MAY_REPLICATE: u32 = 1 << 19;
    /// Not a Redis flag: runs the transaction's queue (EXEC). CLIENT PAUSE
    /// WRITE holds it when the queue holds a write; refused before it runs,
    /// it discards the transaction and answers EXECABORT.
    pub const RUNS_QUEUE: u32 = 1 << 20;
    /// Not a Redis flag: changes the connection's database (SELECT). Queued,
    /// it runs inside apply (the commands after it use its database) and
    /// stays selected after EXEC.
    pub const SETS_DB: u32 = 1 << 21;
    /// Not a Redis flag: changes which stored database a number names
    /// (SWAPDB): alone in its apply batch, in a transaction too.
    pub const SWAPS_DBS: u32 = 1 << 22;
    /// Not a Redis flag: touches its keys even for a client in CLIENT
    /// NO-TOUCH mode (TOUCH: Redis checks it by name).
    pub const TOUCHES: u32 = 1 << 23;
    pub const PUBSUB: u32 = 1 << 14;
    pub const NO_ASYNC_LOADING: u32 = 1 << 15;
    pub const NO_MANDATORY_KEYS: u32 = 1 << 16;

    /// In the order COMMAND INFO lists them (Redis's `addReplyCommandFlags`).
    pub const NAMES: &[(u32, &str)] = &[
        (WRITE, "write"),
        (READONLY, "readonly"),
        (DENYOOM, "denyoom"),
        (ADMIN, "admin"),
        (PUBSUB, "pubsub"),
        (NOSCRIPT, "noscript"),
        (BLOCKING, "blocking"),
        (LOADING, "loading"),
        (STALE, "stale"),
        (SKIP_MONITOR, "skip_monitor"),
        (SKIP_SLOWLOG, "skip_slowlog"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        (NO_MANDATORY_KEYS, "no_mandatory_keys"),
        (NO_ASYNC_LOADING, "no_async_loading"),
        (NO_MULTI, "no_multi"),
        (ALLOW_BUSY, "allow_busy"),
    ];
}

/// Redis 7.0's ACL categories (`@keyspace`, `@read`, ...).
pub mod cat {
    pub const KEYSPACE: u32 = 1 << 0;
    pub const READ: u32 = 1 << 1;
    pub const WRITE: u32 = 1 << 2;
    pub const SET: u32 = 1 << 3;
    pub const SORTEDSET: u32 = 1 << 4;
    pub const LIST: u32 = 1 << 5;
    pub const HASH: u32 = 1 << 6;
    pub const STRING: u32 = 1 << 7;
    pub const BITMAP: u32 = 1 << 8;
    pub const HYPERLOGLOG: u32 = 1 << 9;
    pub const GEO: u32 = 1 << 10;
    pub const STREAM: u32 = 1 << 11;
    pub const PUBSUB: u32 = 1 << 12;
    pub const ADMIN: u32 = 1 << 13;
    pub const FAST: u32 = 1 << 14;
    pub const SLOW: u32 = 1 << 15;
    pub const BLOCKING: u32 = 1 << 16;
    pub const DANGEROUS: u32 = 1 << 17;
    pub const CONNECTION: u32 = 1 << 18;
    pub const TRANSACTION: u32 = 1 << 19;
    pub const SCRIPTING: u32 = 1 << 20;

    /// In Redis's order (COMMAND INFO, ACL CAT).
    pub const NAMES: &[(u32, &str)] = &[
        (KEYSPACE, "keyspace"),
        (READ, "read"),
        (WRITE, "write"),
        (SET, "set"),
        (SORTEDSET, "sortedset"),
        (LIST, "list"),
        (HASH, "hash"),
        (STRING, "string"),
        (BITMAP, "bitmap"),
        (HYPERLOGLOG, "hyperloglog"),
        (GEO, "geo"),
        (STREAM, "stream"),
        (PUBSUB, "pubsub"),
        (ADMIN, "admin"),
        (FAST, "fast"),
        (SLOW, "slow"),
        (BLOCKING, "blocking"),
        (DANGEROUS, "dangerous"),
        (CONNECTION, "connection"),
        (TRANSACTION, "transaction"),
        (SCRIPTING, "scripting"),
    ];

    /// A category by name (any case, without the `@`).
    pub fn by_name(name: &[u8]) -> Option<u32> {
        NAMES.iter().find(|(_, n)| n.as_bytes().eq_ignore_ascii_case(name)).map(|(b, _)| *b)
    }
}

/// `CommandSpec::cats` when the row names none: its group's category.
const CATS_OF_GROUP: u32 = u32::MAX;

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
    Hyperloglog,
    Bitmap,
    Geo,
    Stream,
    Transactions,
    Scripting,
    PubSub,
    Cluster,
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
            Group::Hyperloglog => "hyperloglog",
            Group::Bitmap => "bitmap",
            Group::Geo => "geo",
            Group::Stream => "stream",
            Group::Connection => "connection",
            Group::Server => "server",
            Group::Transactions => "transactions",
            Group::Scripting => "scripting",
            Group::PubSub => "pubsub",
            Group::Cluster => "cluster",
        }
    }
    /// The category a command of this group has besides those its flags
    /// imply, unless its row names others (Redis's `acl_categories`).
    pub const fn category(self) -> u32 {
        match self {
            Group::String => cat::STRING,
            Group::Generic => cat::KEYSPACE,
            Group::Hash => cat::HASH,
            Group::List => cat::LIST,
            Group::Set => cat::SET,
            Group::SortedSet => cat::SORTEDSET,
            Group::Hyperloglog => cat::HYPERLOGLOG,
            Group::Bitmap => cat::BITMAP,
            Group::Geo => cat::GEO,
            Group::Stream => cat::STREAM,
            Group::Connection => cat::CONNECTION,
            Group::Transactions => cat::TRANSACTION,
            Group::Scripting => cat::SCRIPTING,
            Group::Server | Group::Cluster | Group::PubSub => 0,
        }
    }
}

pub use super::key_specs::KeyPositions;

/// How a handler is reached.
pub enum Handler {
    Fn(HandlerFn),
    /// Dispatches to the `name|sub` row; the handler (if any) serves the bare command.
    Container(Option<HandlerFn>),
}

/// One row of the table.
pub struct CommandSpec {
    /// Lowercase; subcommands are `parent|sub`.
    pub name: &'static str,
    /// Redis convention: N = exactly N arguments (name included), -N = at least N.
    pub arity: i32,
    pub flags: u32,
    pub group: Group,
    pub since: &'static str,
    pub summary: &'static str,
    pub handler: Handler,
    /// The ACL categories the row names (`CATS_OF_GROUP`: its group's).
    cats: u32,
    /// Redis 7.0's key specs (COMMAND INFO, COMMAND GETKEYS[ANDFLAGS]).
    pub key_specs: &'static [KeySpec],
    /// The key function Redis falls back on where the specs do not say all.
    pub key_proc: KeyProc,
}

impl CommandSpec {
    /// This row with exactly `cats` as the categories it names (those its
    /// flags imply are added to them: see [`CommandSpec::categories`]).
    pub const fn cats(mut self, cats: u32) -> CommandSpec {
        self.cats = cats;
        self
    }

    /// This row with Redis's key specs.
    pub const fn key_specs(mut self, specs: &'static [KeySpec]) -> CommandSpec {
        self.key_specs = specs;
        self
    }

    /// This row with Redis's key function (`getkeys_proc`).
    pub const fn key_proc(mut self, proc: KeyProc) -> CommandSpec {
        self.key_proc = proc;
        self
    }

    /// Redis 7.0's ACL categories of the command: those its row names (or
    /// its group's), and those its flags imply (Redis's
    /// `setImplicitACLCategories`); a container names none.
    pub fn categories(&self) -> u32 {
        let mut c = match self.cats {
            CATS_OF_GROUP if self.is_container() => 0,
            CATS_OF_GROUP => self.group.category(),
            named => named,
        };
        if self.flags & flag::WRITE != 0 {
            c |= cat::WRITE;
        }
        if self.flags & flag::READONLY != 0 && c & cat::SCRIPTING == 0 {
            c |= cat::READ;
        }
        if self.flags & flag::ADMIN != 0 {
            c |= cat::ADMIN | cat::DANGEROUS;
        }
        if self.flags & flag::PUBSUB != 0 {
            c |= cat::PUBSUB;
        }
        if self.flags & flag::FAST != 0 {
            c |= cat::FAST;
        }
        if self.flags & flag::BLOCKING != 0 {
            c |= cat::BLOCKING;
        }
        if c & cat::FAST == 0 {
            c |= cat::SLOW;
        }
        c
    }

    /// The categories' names, `@` included, in Redis's order.
    pub fn category_names(&self) -> impl Iterator<Item = String> {
        let c = self.categories();
        cat::NAMES.iter().filter(move |(b, _)| c & b != 0).map(|(_, n)| format!("@{n}"))
    }

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

    /// True if its keys are not at fixed positions (COMMAND INFO's
    /// `movablekeys`): a key spec that is not an index and a range.
    pub fn movable_keys(&self) -> bool {
        self.key_specs.iter().any(|s| !matches!((s.begin, s.find), (Begin::Index(_), Find::Range { .. })))
    }

    /// COMMAND INFO's first key, last key and step: Redis's legacy range
    /// (`populateCommandLegacyRangeSpec`), the index-and-range specs of step
    /// 1 that follow one another.
    pub fn legacy_keys(&self) -> (i32, i32, i32) {
        if let [s] = self.key_specs {
            if let (Begin::Index(first), Find::Range { lastkey, keystep, .. }) = (s.begin, s.find) {
                return (first, if lastkey >= 0 { first + lastkey } else { lastkey }, keystep);
            }
        }
        let (mut first, mut last, mut prev) = (i32::MAX, 0i32, 0i32);
        for s in self.key_specs {
            let (Begin::Index(pos), Find::Range { lastkey, keystep, .. }) = (s.begin, s.find) else { continue };
            if keystep != 1 || (prev != 0 && prev != pos - 1) {
                continue;
            }
            first = first.min(pos);
            let abs = if lastkey >= 0 { lastkey + pos } else { lastkey };
            // Redis compares as unsigned: a last key counted from the end wins.
            last = (last as u32).max(abs as u32) as i32;
            prev = last;
        }
        if first == i32::MAX {
            (0, 0, 0)
        } else {
            (first, last, 1)
        }
    }

    /// The positions of a request's keys (with the command name at 0; shard
    /// channels too), from the row's key specs (see `key_specs::positions`):
    /// what routing to a region or slot, CROSSSLOT, WATCH, blocking and the
    /// access records use. `None` if a key count does not resolve (the
    /// handler then answers the error).
    pub fn keys_of(&self, args: &[Bytes]) -> Option<KeyPositions> {
        // The common row: one key at a fixed index, found by its spec alone.
        if let [s] = self.key_specs {
            if let (Some(i), KeyProc::None | KeyProc::Set | KeyProc::Bitfield) = (s.single_index(), self.key_proc) {
                let mut out = KeyPositions::new();
                if (i as usize) < args.len() {
                    out.push(i as usize);
                }
                return Some(out);
            }
        }
        super::key_specs::positions(self.key_specs, self.key_proc, args)
    }
}

/// Build a row (keeps the family files' tables compact).
#[allow(clippy::too_many_arguments)]
pub const fn row(
    name: &'static str,
    arity: i32,
    flags: u32,
    group: Group,
    since: &'static str,
    summary: &'static str,
    f: HandlerFn,
) -> CommandSpec {
    CommandSpec {
        name,
        arity,
        flags,
        group,
        since,
        summary,
        handler: Handler::Fn(f),
        cats: CATS_OF_GROUP,
        key_specs: &[],
        key_proc: KeyProc::None,
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
        group,
        since,
        summary,
        handler: Handler::Container(bare),
        cats: CATS_OF_GROUP,
        key_specs: &[],
        key_proc: KeyProc::None,
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

impl Table {
    /// The table of `families`' rows, in that order (COMMAND lists them so).
    pub fn new(families: &[&'static [CommandSpec]]) -> Table {
        let rows: Vec<&'static CommandSpec> = families.iter().flat_map(|f| f.iter()).collect();
        let by_name = rows.iter().map(|r| (r.name, *r)).collect();
        Table { rows, by_name }
    }

    /// The row `spec_id` named, if any (CLIENT LIST; not on the request path).
    pub fn by_id(&self, id: usize) -> Option<&'static CommandSpec> {
        self.rows.iter().copied().find(|r| spec_id(r) == id)
    }

    /// The row a refused request names, if its name (and subcommand) exist: a
    /// wrong-arity request counts against its command (INFO's rejected_calls).
    pub fn named(&self, args: &[Bytes]) -> Option<&'static CommandSpec> {
        let spec = self.lookup(args.first()?).filter(|s| !s.name.contains('|'))?;
        if !spec.is_container() || args.len() < 2 {
            return Some(spec);
        }
        let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
        self.get(&format!("{}|{}", spec.name, sub))
    }

    /// Find the row for a request: the command, or for a container its
    /// subcommand. Errors are Redis's replies for unknown commands and wrong arity.
    pub fn resolve(&self, args: &[Bytes]) -> Result<&'static CommandSpec, Reply> {
        // A subcommand's row name (`config|get`) is not a command a client can send.
        let Some(spec) = self.lookup(&args[0]).filter(|s| !s.name.contains('|')) else {
            let mut rest = Vec::new();
            for a in &args[1..] {
                if rest.len() >= 128 {
                    break;
                }
                let room = 128 - rest.len();
                rest.extend_from_slice(&[&b"'"[..], clip(a, room), b"' "].concat());
            }
            let name = clip(&args[0], 128);
            return Err(Reply::error_bytes(
                &[&b"ERR unknown command '"[..], name, b"', with args beginning with: ", &rest].concat(),
            ));
        };
        if spec.is_container() {
            if args.len() < 2 {
                return match spec.handler {
                    Handler::Container(Some(_)) => Ok(spec),
                    _ => Err(wrong_arity(spec.name)),
                };
            }
            let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
            let Some(subspec) = self.get(&format!("{}|{}", spec.name, sub)) else {
                let help = format!("'. Try {} HELP.", spec.name.to_ascii_uppercase());
                return Err(Reply::error_bytes(
                    &[&b"ERR unknown subcommand '"[..], clip(&args[1], 128), help.as_bytes()].concat(),
                ));
            };
            if !subspec.arity_ok(args.len()) {
                return Err(wrong_arity(subspec.name));
            }
            return Ok(subspec);
        }
        if !spec.arity_ok(args.len()) {
            return Err(wrong_arity(spec.name));
        }
        Ok(spec)
    }
}

/// Redis's `'%.128s'`, with newlines made spaces (rejectCommandFormat).
/// C's `%.<max>s` of an argument: at most `max` bytes, up to its first NUL
/// (the reply's line turns CR/LF into spaces).
fn clip(b: &[u8], max: usize) -> &[u8] {
    let b = &b[..b.len().min(max)];
    memchr::memchr(0, b).map_or(b, |nul| &b[..nul])
}

fn wrong_arity(name: &str) -> Reply {
    Reply::Error(format!("ERR wrong number of arguments for '{name}' command").into())
}

/// An id of a row for per-client "last command": its address (rows are 'static).
pub fn spec_id(spec: &'static CommandSpec) -> usize {
    spec as *const CommandSpec as usize
}
