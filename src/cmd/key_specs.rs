//! COMMAND GETKEYS and GETKEYSANDFLAGS: Redis 7.0's key specs of every
//! command that has keys (`src/commands/*.json`), and finding a command
//! line's keys by them. (The command table's own key positions, used for
//! routing, are `table::Keys`.)

use bytes::Bytes;

use super::table::Table;
use super::{err, reply, CmdError, CmdResult, Ctx};
use crate::protocol::cursor::parse_i64;
use crate::protocol::Reply;

/// Redis's key-spec flags, in the order COMMAND GETKEYSANDFLAGS prints them.
mod kf {
    pub const RO: u16 = 1 << 0;
    pub const RW: u16 = 1 << 1;
    pub const OW: u16 = 1 << 2;
    pub const RM: u16 = 1 << 3;
    pub const ACCESS: u16 = 1 << 4;
    pub const UPDATE: u16 = 1 << 5;
    pub const INSERT: u16 = 1 << 6;
    pub const DELETE: u16 = 1 << 7;
    pub const VARIABLE: u16 = 1 << 10;
    pub const FLAG_NAMES: [(u16, &str); 11] = [
        (RO, "RO"),
        (RW, "RW"),
        (OW, "OW"),
        (RM, "RM"),
        (ACCESS, "access"),
        (UPDATE, "update"),
        (INSERT, "insert"),
        (DELETE, "delete"),
        (1 << 8, "not_key"),
        (1 << 9, "incomplete"),
        (VARIABLE, "variable_flags"),
    ];
}

/// Where one key spec finds its keys, after its first key position `begin`.
#[derive(Debug, Clone, Copy)]
enum Find {
    /// Up to `last` (relative to `begin`, or from the end if negative), every `step`.
    Range { last: i32, step: i32 },
    /// A key count at `begin + idx`, the keys from `begin + first`, every `step`.
    Keynum { idx: i32, first: i32, step: i32 },
}

/// One of Redis's key specs (`src/commands/*.json`): flags and positions.
#[derive(Debug, Clone, Copy)]
struct KeySpec {
    flags: u16,
    begin: i32,
    find: Find,
}

const fn range(flags: u16, begin: i32, last: i32, step: i32) -> KeySpec {
    KeySpec { flags, begin, find: Find::Range { last, step } }
}

const fn keynum(flags: u16, begin: i32, idx: i32, first: i32, step: i32) -> KeySpec {
    KeySpec { flags, begin, find: Find::Keynum { idx, first, step } }
}

/// The command's own key function, which Redis falls back on when the specs do
/// not resolve (or, for SET, always: its flags depend on GET).
#[derive(Debug, Clone, Copy)]
enum Proc {
    None,
    /// Redis's genericGetKeys: the count at `count` read as atoi reads it, the
    /// keys from `first`, and a destination at `store` (0: none) listed last;
    /// these keys carry no flags.
    Generic {
        store: usize,
        count: usize,
        first: usize,
    },
    /// SET: `OW update`, or `RW access update` with a GET argument.
    Set,
    /// BITFIELD: `RO access` with GETs only, else `RW access update`
    /// (Redis's bitfieldGetKeys; its spec has variable flags).
    Bitfield,
    /// GEORADIUS and GEORADIUSBYMEMBER (their STORE/STOREDIST specs are
    /// keyword searches Redis answers with georadiusGetKeys): the key `RO
    /// access`, the destination `OW update`.
    Georadius,
    /// XREAD and XREADGROUP: a keyword search for STREAMS from `from`, then
    /// half the arguments after it, with `flags`.
    Xread {
        from: usize,
        flags: u16,
    },
    /// SORT and SORT_RO (their BY/GET and STORE specs are Redis's `unknown`):
    /// the key `RO access`, and SORT's STORE destination `OW update`, found
    /// as Redis's sortGetKeys finds it (the table's `Keys::Sort`).
    Sort,
}

const SPECS: Proc = Proc::None;
const fn generic(store: usize, count: usize, first: usize) -> Proc {
    Proc::Generic { store, count, first }
}

/// A command's key specs; `optional` keys (Redis's `no_mandatory_keys`: EVAL,
/// FCALL) answer an empty list where others answer an error.
pub(super) struct KeyInfo {
    pub(super) name: &'static str,
    specs: &'static [KeySpec],
    proc: Proc,
    optional: bool,
}

const fn ki(name: &'static str, specs: &'static [KeySpec], proc: Proc) -> KeyInfo {
    KeyInfo { name, specs, proc, optional: false }
}

const fn opt(name: &'static str, specs: &'static [KeySpec], proc: Proc) -> KeyInfo {
    KeyInfo { name, specs, proc, optional: true }
}

use kf::*;

/// Redis 7.0's key specs for every command of NeoKV's that has keys (as
/// COMMAND INFO of redis-server 7.0 reports them). Shard channels are not keys.
pub(super) static KEY_SPECS: &[KeyInfo] = &[
    ki("append", &[range(RW | INSERT, 1, 0, 1)], SPECS),
    ki("bitcount", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("bitfield", &[range(RW | ACCESS | UPDATE | VARIABLE, 1, 0, 1)], Proc::Bitfield),
    ki("bitfield_ro", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("bitop", &[range(OW | UPDATE, 2, 0, 1), range(RO | ACCESS, 3, -1, 1)], SPECS),
    ki("bitpos", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("blmove", &[range(RW | ACCESS | DELETE, 1, 0, 1), range(RW | INSERT, 2, 0, 1)], SPECS),
    ki("blmpop", &[keynum(RW | ACCESS | DELETE, 2, 0, 1, 1)], generic(0, 2, 3)),
    ki("blpop", &[range(RW | ACCESS | DELETE, 1, -2, 1)], SPECS),
    ki("brpop", &[range(RW | ACCESS | DELETE, 1, -2, 1)], SPECS),
    ki("brpoplpush", &[range(RW | ACCESS | DELETE, 1, 0, 1), range(RW | INSERT, 2, 0, 1)], SPECS),
    ki("bzmpop", &[keynum(RW | ACCESS | DELETE, 2, 0, 1, 1)], generic(0, 2, 3)),
    ki("bzpopmax", &[range(RW | ACCESS | DELETE, 1, -2, 1)], SPECS),
    ki("bzpopmin", &[range(RW | ACCESS | DELETE, 1, -2, 1)], SPECS),
    ki("copy", &[range(RO | ACCESS, 1, 0, 1), range(OW | UPDATE, 2, 0, 1)], SPECS),
    ki("decr", &[range(RW | ACCESS | UPDATE, 1, 0, 1)], SPECS),
    ki("decrby", &[range(RW | ACCESS | UPDATE, 1, 0, 1)], SPECS),
    ki("del", &[range(RM | DELETE, 1, -1, 1)], SPECS),
    ki("dump", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    opt("eval", &[keynum(RW | ACCESS | UPDATE, 2, 0, 1, 1)], generic(0, 2, 3)),
    opt("eval_ro", &[keynum(RO | ACCESS, 2, 0, 1, 1)], generic(0, 2, 3)),
    opt("evalsha", &[keynum(RW | ACCESS | UPDATE, 2, 0, 1, 1)], generic(0, 2, 3)),
    opt("evalsha_ro", &[keynum(RO | ACCESS, 2, 0, 1, 1)], generic(0, 2, 3)),
    ki("exists", &[range(RO, 1, -1, 1)], SPECS),
    ki("expire", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("expireat", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("expiretime", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    opt("fcall", &[keynum(RW | ACCESS | UPDATE, 2, 0, 1, 1)], generic(0, 2, 3)),
    opt("fcall_ro", &[keynum(RO | ACCESS, 2, 0, 1, 1)], generic(0, 2, 3)),
    ki("geoadd", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("geodist", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("geohash", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("geopos", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("georadius", &[range(RO | ACCESS, 1, 0, 1)], Proc::Georadius),
    ki("georadius_ro", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("georadiusbymember", &[range(RO | ACCESS, 1, 0, 1)], Proc::Georadius),
    ki("georadiusbymember_ro", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("geosearch", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("geosearchstore", &[range(OW | UPDATE, 1, 0, 1), range(RO | ACCESS, 2, 0, 1)], SPECS),
    ki("get", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("getbit", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("getdel", &[range(RW | ACCESS | DELETE, 1, 0, 1)], SPECS),
    ki("getex", &[range(RW | ACCESS | UPDATE, 1, 0, 1)], SPECS),
    ki("getrange", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("getset", &[range(RW | ACCESS | UPDATE, 1, 0, 1)], SPECS),
    ki("hdel", &[range(RW | DELETE, 1, 0, 1)], SPECS),
    ki("hexists", &[range(RO, 1, 0, 1)], SPECS),
    ki("hget", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("hgetall", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("hincrby", &[range(RW | ACCESS | UPDATE, 1, 0, 1)], SPECS),
    ki("hincrbyfloat", &[range(RW | ACCESS | UPDATE, 1, 0, 1)], SPECS),
    ki("hkeys", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("hlen", &[range(RO, 1, 0, 1)], SPECS),
    ki("hmget", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("hmset", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("hrandfield", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("hscan", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("hset", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("hsetnx", &[range(RW | INSERT, 1, 0, 1)], SPECS),
    ki("hstrlen", &[range(RO, 1, 0, 1)], SPECS),
    ki("hvals", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("incr", &[range(RW | ACCESS | UPDATE, 1, 0, 1)], SPECS),
    ki("incrby", &[range(RW | ACCESS | UPDATE, 1, 0, 1)], SPECS),
    ki("incrbyfloat", &[range(RW | ACCESS | UPDATE, 1, 0, 1)], SPECS),
    ki("lcs", &[range(RO | ACCESS, 1, 1, 1)], SPECS),
    ki("lindex", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("linsert", &[range(RW | INSERT, 1, 0, 1)], SPECS),
    ki("llen", &[range(RO, 1, 0, 1)], SPECS),
    ki("lmove", &[range(RW | ACCESS | DELETE, 1, 0, 1), range(RW | INSERT, 2, 0, 1)], SPECS),
    ki("lmpop", &[keynum(RW | ACCESS | DELETE, 1, 0, 1, 1)], generic(0, 1, 2)),
    ki("lpop", &[range(RW | ACCESS | DELETE, 1, 0, 1)], SPECS),
    ki("lpos", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("lpush", &[range(RW | INSERT, 1, 0, 1)], SPECS),
    ki("lpushx", &[range(RW | INSERT, 1, 0, 1)], SPECS),
    ki("lrange", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("lrem", &[range(RW | DELETE, 1, 0, 1)], SPECS),
    ki("lset", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("ltrim", &[range(RW | DELETE, 1, 0, 1)], SPECS),
    ki("memory|usage", &[range(RO, 2, 0, 1)], SPECS),
    ki("mget", &[range(RO | ACCESS, 1, -1, 1)], SPECS),
    ki("move", &[range(RW | ACCESS | DELETE, 1, 0, 1)], SPECS),
    ki("mset", &[range(OW | UPDATE, 1, -1, 2)], SPECS),
    ki("msetnx", &[range(OW | INSERT, 1, -1, 2)], SPECS),
    ki("object|encoding", &[range(RO, 2, 0, 1)], SPECS),
    ki("object|freq", &[range(RO, 2, 0, 1)], SPECS),
    ki("object|idletime", &[range(RO, 2, 0, 1)], SPECS),
    ki("object|refcount", &[range(RO, 2, 0, 1)], SPECS),
    ki("persist", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("pexpire", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("pexpireat", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("pexpiretime", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("psetex", &[range(OW | UPDATE, 1, 0, 1)], SPECS),
    ki("pttl", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("restore", &[range(OW | UPDATE, 1, 0, 1)], SPECS),
    ki("rename", &[range(RW | ACCESS | DELETE, 1, 0, 1), range(OW | UPDATE, 2, 0, 1)], SPECS),
    ki("renamenx", &[range(RW | ACCESS | DELETE, 1, 0, 1), range(OW | INSERT, 2, 0, 1)], SPECS),
    ki("rpop", &[range(RW | ACCESS | DELETE, 1, 0, 1)], SPECS),
    ki("rpoplpush", &[range(RW | ACCESS | DELETE, 1, 0, 1), range(RW | INSERT, 2, 0, 1)], SPECS),
    ki("rpush", &[range(RW | INSERT, 1, 0, 1)], SPECS),
    ki("rpushx", &[range(RW | INSERT, 1, 0, 1)], SPECS),
    ki("sadd", &[range(RW | INSERT, 1, 0, 1)], SPECS),
    ki("scard", &[range(RO, 1, 0, 1)], SPECS),
    ki("sdiff", &[range(RO | ACCESS, 1, -1, 1)], SPECS),
    ki("sdiffstore", &[range(OW | UPDATE, 1, 0, 1), range(RO | ACCESS, 2, -1, 1)], SPECS),
    ki("set", &[range(RW | ACCESS | UPDATE | VARIABLE, 1, 0, 1)], Proc::Set),
    ki("setex", &[range(OW | UPDATE, 1, 0, 1)], SPECS),
    ki("setnx", &[range(OW | INSERT, 1, 0, 1)], SPECS),
    ki("setbit", &[range(RW | ACCESS | UPDATE, 1, 0, 1)], SPECS),
    ki("setrange", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("pfadd", &[range(RW | INSERT, 1, 0, 1)], SPECS),
    // RW: PFCOUNT may store the cached cardinality (Redis's note says the same).
    ki("pfcount", &[range(RW | ACCESS, 1, -1, 1)], SPECS),
    ki("pfmerge", &[range(RW | ACCESS | INSERT, 1, 0, 1), range(RO | ACCESS, 2, -1, 1)], SPECS),
    ki("sinter", &[range(RO | ACCESS, 1, -1, 1)], SPECS),
    ki("sintercard", &[keynum(RO | ACCESS, 1, 0, 1, 1)], generic(0, 1, 2)),
    ki("sinterstore", &[range(RW | UPDATE, 1, 0, 1), range(RO | ACCESS, 2, -1, 1)], SPECS),
    ki("sismember", &[range(RO, 1, 0, 1)], SPECS),
    ki("sort", &[range(RO | ACCESS, 1, 0, 1)], Proc::Sort),
    ki("sort_ro", &[range(RO | ACCESS, 1, 0, 1)], Proc::Sort),
    ki("smembers", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("smismember", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("smove", &[range(RW | ACCESS | DELETE, 1, 0, 1), range(RW | INSERT, 2, 0, 1)], SPECS),
    ki("spop", &[range(RW | ACCESS | DELETE, 1, 0, 1)], SPECS),
    ki("srandmember", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("srem", &[range(RW | DELETE, 1, 0, 1)], SPECS),
    ki("sscan", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("strlen", &[range(RO, 1, 0, 1)], SPECS),
    ki("substr", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("sunion", &[range(RO | ACCESS, 1, -1, 1)], SPECS),
    ki("sunionstore", &[range(OW | UPDATE, 1, 0, 1), range(RO | ACCESS, 2, -1, 1)], SPECS),
    ki("touch", &[range(RO, 1, -1, 1)], SPECS),
    ki("ttl", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("type", &[range(RO, 1, 0, 1)], SPECS),
    ki("unlink", &[range(RM | DELETE, 1, -1, 1)], SPECS),
    ki("watch", &[range(RO, 1, -1, 1)], SPECS),
    ki("xack", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("xadd", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("xautoclaim", &[range(RW | DELETE, 1, 0, 1)], SPECS),
    ki("xclaim", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("xdel", &[range(RW | DELETE, 1, 0, 1)], SPECS),
    ki("xgroup|create", &[range(RW | INSERT, 2, 0, 1)], SPECS),
    ki("xgroup|createconsumer", &[range(RW | INSERT, 2, 0, 1)], SPECS),
    ki("xgroup|delconsumer", &[range(RW | DELETE, 2, 0, 1)], SPECS),
    ki("xgroup|destroy", &[range(RW | DELETE, 2, 0, 1)], SPECS),
    ki("xgroup|setid", &[range(RW | UPDATE, 2, 0, 1)], SPECS),
    ki("xinfo|consumers", &[range(RO | ACCESS, 2, 0, 1)], SPECS),
    ki("xinfo|groups", &[range(RO | ACCESS, 2, 0, 1)], SPECS),
    ki("xinfo|stream", &[range(RO | ACCESS, 2, 0, 1)], SPECS),
    ki("xlen", &[range(RO, 1, 0, 1)], SPECS),
    ki("xpending", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("xrange", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("xread", &[], Proc::Xread { from: 1, flags: RO | ACCESS }),
    ki("xreadgroup", &[], Proc::Xread { from: 4, flags: RO | ACCESS }),
    ki("xrevrange", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("xsetid", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("xtrim", &[range(RW | DELETE, 1, 0, 1)], SPECS),
    ki("zadd", &[range(RW | UPDATE, 1, 0, 1)], SPECS),
    ki("zcard", &[range(RO, 1, 0, 1)], SPECS),
    ki("zcount", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("zdiff", &[keynum(RO | ACCESS, 1, 0, 1, 1)], generic(0, 1, 2)),
    ki("zdiffstore", &[range(OW | UPDATE, 1, 0, 1), keynum(RO | ACCESS, 2, 0, 1, 1)], generic(1, 2, 3)),
    ki("zincrby", &[range(RW | ACCESS | UPDATE, 1, 0, 1)], SPECS),
    ki("zinter", &[keynum(RO | ACCESS, 1, 0, 1, 1)], generic(0, 1, 2)),
    ki("zintercard", &[keynum(RO | ACCESS, 1, 0, 1, 1)], generic(0, 1, 2)),
    ki("zinterstore", &[range(OW | UPDATE, 1, 0, 1), keynum(RO | ACCESS, 2, 0, 1, 1)], generic(1, 2, 3)),
    ki("zlexcount", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("zmpop", &[keynum(RW | ACCESS | DELETE, 1, 0, 1, 1)], generic(0, 1, 2)),
    ki("zmscore", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("zpopmax", &[range(RW | ACCESS | DELETE, 1, 0, 1)], SPECS),
    ki("zpopmin", &[range(RW | ACCESS | DELETE, 1, 0, 1)], SPECS),
    ki("zrandmember", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("zrange", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("zrangebylex", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("zrangebyscore", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("zrangestore", &[range(OW | UPDATE, 1, 0, 1), range(RO | ACCESS, 2, 0, 1)], SPECS),
    ki("zrank", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("zrem", &[range(RW | DELETE, 1, 0, 1)], SPECS),
    ki("zremrangebylex", &[range(RW | DELETE, 1, 0, 1)], SPECS),
    ki("zremrangebyrank", &[range(RW | DELETE, 1, 0, 1)], SPECS),
    ki("zremrangebyscore", &[range(RW | DELETE, 1, 0, 1)], SPECS),
    ki("zrevrange", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("zrevrangebylex", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("zrevrangebyscore", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("zrevrank", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("zscan", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("zscore", &[range(RO | ACCESS, 1, 0, 1)], SPECS),
    ki("zunion", &[keynum(RO | ACCESS, 1, 0, 1, 1)], generic(0, 1, 2)),
    ki("zunionstore", &[range(OW | UPDATE, 1, 0, 1), keynum(RO | ACCESS, 2, 0, 1, 1)], generic(1, 2, 3)),
];

pub(super) fn key_info(name: &str) -> Option<&'static KeyInfo> {
    KEY_SPECS.iter().find(|k| k.name == name)
}

/// C's `atoi` (as strtol, then narrowed to int): leading blanks, a sign, digits.
fn atoi(s: &[u8]) -> i32 {
    let (neg, s) = crate::protocol::cursor::c_blank_sign(s);
    let mut v: i64 = 0;
    for &c in s.iter().take_while(|c| c.is_ascii_digit()) {
        let d = (c - b'0') as i64;
        v = if neg { v.saturating_mul(10).saturating_sub(d) } else { v.saturating_mul(10).saturating_add(d) };
    }
    v as i32
}

/// The keys the specs find, with their flags: `None` if a spec does not
/// resolve (Redis's invalid spec: a bad count, keys past the arguments).
fn keys_by_specs(specs: &[KeySpec], args: &[Bytes]) -> Option<Vec<(usize, u16)>> {
    let argc = args.len() as i64;
    let mut out = Vec::new();
    for spec in specs {
        let mut first = spec.begin as i64;
        let (last, step) = match spec.find {
            Find::Range { last, step } => (if last >= 0 { first + last as i64 } else { argc + last as i64 }, step),
            Find::Keynum { idx, first: from, step } => {
                let at = usize::try_from(first + idx as i64).ok().filter(|&at| at < args.len())?;
                let n = parse_i64(&args[at]).filter(|n| *n >= 0)?;
                first += from as i64;
                // Redis narrows the count to an int.
                (first + n as i32 as i64 - 1, step)
            }
        };
        if last >= argc || last < first || first >= argc {
            return None;
        }
        let mut i = first;
        while i <= last {
            out.push((i as usize, spec.flags));
            i += step.max(1) as i64;
        }
    }
    Some(out)
}

/// The keys of a command line `args` (name first) and their flags, as Redis
/// 7.0's COMMAND GETKEYS[ANDFLAGS] finds them, errors included.
fn command_keys(t: &Table, args: &[Bytes]) -> Result<Vec<(usize, u16)>, CmdError> {
    let base = t.lookup(&args[0]).filter(|s| !s.name.contains('|'));
    let spec = match base {
        Some(b) if b.is_container() && args.len() >= 2 => {
            t.get(&format!("{}|{}", b.name, String::from_utf8_lossy(&args[1]).to_ascii_lowercase()))
        }
        other => other,
    };
    let Some(spec) = spec else { return Err(err("ERR Invalid command specified")) };
    let Some(info) = key_info(spec.name) else { return Err(err("ERR The command has no key arguments")) };
    let argc = args.len() as i64;
    let arity = spec.arity as i64;
    if (arity > 0 && arity != argc) || argc < -arity {
        return Err(err("ERR Invalid number of arguments specified for command"));
    }
    let by_specs = match info.proc {
        Proc::Set | Proc::Sort | Proc::Bitfield | Proc::Georadius | Proc::Xread { .. } => None,
        _ => keys_by_specs(info.specs, args),
    };
    let keys = match (by_specs, info.proc) {
        (Some(k), _) => k,
        (None, Proc::Set) => {
            let get = args.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"get"));
            vec![(1, if get { RW | ACCESS | UPDATE } else { OW | UPDATE })]
        }
        (None, Proc::Generic { store, count, first }) => {
            let n = atoi(&args[count]) as i64;
            if n < 1 || n > argc - first as i64 {
                Vec::new()
            } else {
                let mut k: Vec<(usize, u16)> = (first..first + n as usize).map(|i| (i, 0)).collect();
                if store > 0 {
                    k.push((store, 0));
                }
                k
            }
        }
        (None, Proc::Bitfield) => {
            let mut read_only = true;
            let mut i = 2;
            while i < args.len() {
                let left = args.len() - i - 1;
                let a = &args[i];
                if a.eq_ignore_ascii_case(b"get") && left >= 2 {
                    i += 2;
                } else if a.eq_ignore_ascii_case(b"overflow") && left >= 1 {
                    i += 1;
                } else {
                    // SET, INCRBY, or a syntax error: not read-only.
                    read_only = false;
                    break;
                }
                i += 1;
            }
            vec![(1, if read_only { RO | ACCESS } else { RW | ACCESS | UPDATE })]
        }
        (None, Proc::Xread { from, flags }) => {
            match (from..args.len()).find(|&i| args[i].eq_ignore_ascii_case(b"streams")) {
                Some(at) if args.len() - at - 1 >= 2 => {
                    (at + 1..at + 1 + (args.len() - at - 1) / 2).map(|i| (i, flags)).collect()
                }
                _ => Vec::new(),
            }
        }
        (None, Proc::Georadius) => {
            // Redis's keyword specs: the first STORE, then the first
            // STOREDIST, from the first option on.
            let from = if spec.name == "georadius" { 6 } else { 5 };
            let mut keys = vec![(1, RO | ACCESS)];
            for word in [&b"store"[..], b"storedist"] {
                if let Some(i) = (from..args.len().saturating_sub(1)).find(|&i| args[i].eq_ignore_ascii_case(word)) {
                    keys.push((i + 1, OW | UPDATE));
                }
            }
            keys
        }
        (None, Proc::Sort) => {
            let at = spec.keys_of(args).unwrap_or_default();
            at.iter().enumerate().map(|(n, &i)| (i, if n == 0 { RO | ACCESS } else { OW | UPDATE })).collect()
        }
        (None, Proc::None) => Vec::new(),
    };
    if keys.is_empty() && !info.optional {
        return Err(err("ERR Invalid arguments specified for command"));
    }
    Ok(keys)
}

/// COMMAND GETKEYS command [arg ...]
pub fn command_getkeys(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let inner = &args[2..];
    let keys = command_keys(ctx.table, inner)?;
    reply(Reply::Array(keys.into_iter().map(|(i, _)| Reply::Bulk(inner[i].clone())).collect()))
}

/// COMMAND GETKEYSANDFLAGS command [arg ...]: `[key, {flags}]` per key.
pub fn command_getkeysandflags(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let inner = &args[2..];
    let keys = command_keys(ctx.table, inner)?;
    reply(Reply::Array(
        keys.into_iter()
            .map(|(i, flags)| {
                let names = FLAG_NAMES.iter().filter(|(f, _)| flags & f != 0).map(|(_, n)| Reply::Simple((*n).into()));
                Reply::Array(vec![Reply::Bulk(inner[i].clone()), Reply::Set(names.collect())])
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoi_reads_as_c_does() {
        assert_eq!(atoi(b"12x"), 12);
        assert_eq!(atoi(b" +3"), 3);
        assert_eq!(atoi(b"-7"), -7);
        assert_eq!(atoi(b"x"), 0);
        assert_eq!(atoi(b"4294967297"), 1);
    }
}
