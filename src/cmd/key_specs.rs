//! Redis 7.0's key specs (`src/commands/*.json`, as COMMAND INFO reports
//! them): where a command's keys are among its arguments and how it uses them.
//! Each row of the table names its own (`CommandSpec::key_specs`, written
//! `ks::key(ks::RO | ks::ACCESS, 1)` and so on in the family files), with the
//! key function Redis falls back on where the specs do not say everything
//! ([`KeyProc`]). This file knows nothing of the table: it reads specs and
//! command lines.

use bytes::Bytes;
use smallvec::SmallVec;

use crate::protocol::cursor::parse_i64;
use crate::protocol::Reply;

pub const RO: u16 = 1 << 0;
pub const RW: u16 = 1 << 1;
pub const OW: u16 = 1 << 2;
pub const RM: u16 = 1 << 3;
pub const ACCESS: u16 = 1 << 4;
pub const UPDATE: u16 = 1 << 5;
pub const INSERT: u16 = 1 << 6;
pub const DELETE: u16 = 1 << 7;
/// A spec of something that is not a key (shard channels: SSUBSCRIBE, ...).
pub const NOT_KEY: u16 = 1 << 8;
/// The spec may not find every key: the command's key function decides.
pub const INCOMPLETE: u16 = 1 << 9;
/// The flags depend on the arguments (SET ... GET): the key function decides.
pub const VARIABLE_FLAGS: u16 = 1 << 10;

/// In the order COMMAND INFO and COMMAND GETKEYSANDFLAGS print them.
pub const FLAG_NAMES: [(u16, &str); 11] = [
    (RO, "RO"),
    (RW, "RW"),
    (OW, "OW"),
    (RM, "RM"),
    (ACCESS, "access"),
    (UPDATE, "update"),
    (INSERT, "insert"),
    (DELETE, "delete"),
    (NOT_KEY, "not_key"),
    (INCOMPLETE, "incomplete"),
    (VARIABLE_FLAGS, "variable_flags"),
];

/// Key positions of one request; few enough to live on the stack.
pub type KeyPositions = SmallVec<[usize; 8]>;

/// Where the search for a spec's first key starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Begin {
    /// At this argument (the command name is 0).
    Index(i32),
    /// Right after `keyword`, searched from `startfrom` (from the end if negative).
    Keyword {
        keyword: &'static str,
        startfrom: i32,
    },
    Unknown,
}

/// How the keys are found from the first one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Find {
    /// Up to `lastkey` (relative to the first; negative: from the end, or with
    /// `limit`, `1/limit` of what remains), every `keystep`.
    Range {
        lastkey: i32,
        keystep: i32,
        limit: i32,
    },
    /// A count at `keynumidx` (from the first), the keys from `firstkey`.
    Keynum {
        keynumidx: i32,
        firstkey: i32,
        keystep: i32,
    },
    Unknown,
}

/// One of Redis's key specs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySpec {
    pub notes: Option<&'static str>,
    pub flags: u16,
    pub begin: Begin,
    pub find: Find,
}

impl KeySpec {
    /// With Redis's note (COMMAND INFO shows it).
    pub const fn notes(mut self, notes: &'static str) -> KeySpec {
        self.notes = Some(notes);
        self
    }

    /// A single key at a fixed index, the most common spec.
    pub fn single_index(&self) -> Option<i32> {
        match (self.begin, self.find) {
            (Begin::Index(i), Find::Range { lastkey: 0, .. }) => Some(i),
            _ => None,
        }
    }
}

/// A spec.
pub const fn spec(flags: u16, begin: Begin, find: Find) -> KeySpec {
    KeySpec { notes: None, flags, begin, find }
}

/// The one key at argument `at`.
pub const fn key(flags: u16, at: i32) -> KeySpec {
    spec(flags, Begin::Index(at), Find::Range { lastkey: 0, keystep: 1, limit: 0 })
}

pub const fn index(at: i32) -> Begin {
    Begin::Index(at)
}

pub const fn keyword(keyword: &'static str, startfrom: i32) -> Begin {
    Begin::Keyword { keyword, startfrom }
}

pub const fn range(lastkey: i32, keystep: i32, limit: i32) -> Find {
    Find::Range { lastkey, keystep, limit }
}

pub const fn keynum(keynumidx: i32, firstkey: i32, keystep: i32) -> Find {
    Find::Keynum { keynumidx, firstkey, keystep }
}

pub const UNKNOWN_BEGIN: Begin = Begin::Unknown;
pub const UNKNOWN_FIND: Find = Find::Unknown;

/// The command's own key function (Redis's `getkeys_proc`), used where its
/// specs are incomplete, variable or unknown, or do not resolve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyProc {
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
    /// BITFIELD: `RO access` with GETs only, else `RW access update`.
    Bitfield,
    /// GEORADIUS and GEORADIUSBYMEMBER (Redis's georadiusGetKeys): the key,
    /// and the key after the last STORE or STOREDIST from argument 5 on (the
    /// destination the command writes; its keyword specs name the first).
    Georadius,
    /// SORT and SORT_RO: the key `RO access`, and with `store` (SORT) the
    /// key after the last STORE `OW update` (Redis's sortGetKeys).
    Sort {
        store: bool,
    },
}

pub const fn generic(store: usize, count: usize, first: usize) -> KeyProc {
    KeyProc::Generic { store, count, first }
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

/// The keys the specs find, with their flags (Redis's getKeysUsingKeySpecs):
/// `None` if a spec does not resolve (a bad count, keys past the arguments)
/// or is incomplete or unknown. For `routing`, shard channels (NOT_KEY) count
/// too, and a range past the arguments finds what is there (PFMERGE with no
/// source still writes its destination).
pub fn by_specs(specs: &[KeySpec], args: &[Bytes], routing: bool) -> Option<Vec<(usize, u16)>> {
    let argc = args.len() as i64;
    let mut out = Vec::new();
    for spec in specs.iter().filter(|s| routing || s.flags & NOT_KEY == 0) {
        let mut first = match spec.begin {
            Begin::Index(i) => i as i64,
            Begin::Keyword { keyword, startfrom } => {
                let (start, end) =
                    if startfrom > 0 { (startfrom as i64, argc - 1) } else { (argc + startfrom as i64, 1) };
                let mut found = 0;
                let mut i = start;
                while i != end && (1..argc).contains(&i) {
                    if args[i as usize].eq_ignore_ascii_case(keyword.as_bytes()) {
                        found = i + 1;
                        break;
                    }
                    i += if start <= end { 1 } else { -1 };
                }
                if found == 0 {
                    continue;
                }
                found
            }
            Begin::Unknown => return None,
        };
        let (last, step) = match spec.find {
            Find::Range { lastkey, keystep, limit } => {
                let last = if lastkey >= 0 {
                    first + lastkey as i64
                } else if limit == 0 {
                    argc + lastkey as i64
                } else {
                    first + ((argc - first) / limit as i64 + lastkey as i64)
                };
                (last, keystep)
            }
            Find::Keynum { keynumidx, firstkey, keystep } => {
                let at = usize::try_from(first + keynumidx as i64).ok().filter(|&at| at < args.len())?;
                let n = parse_i64(&args[at]).filter(|n| *n >= 0)?;
                if n == 0 && routing {
                    // No keys (EVAL s 0): nothing to route by, not an error.
                    continue;
                }
                first += firstkey as i64;
                // Redis narrows the count to an int.
                (first + n as i32 as i64 - 1, keystep)
            }
            Find::Unknown => return None,
        };
        let last = if routing && matches!(spec.find, Find::Range { .. }) { last.min(argc - 1) } else { last };
        if routing && matches!(spec.find, Find::Range { .. }) && first > last {
            continue;
        }
        if last >= argc || last < first || first >= argc {
            return None;
        }
        let mut i = first;
        while i <= last {
            out.push((i as usize, spec.flags));
            i += step.max(1) as i64;
        }
        if spec.flags & INCOMPLETE != 0 {
            return None;
        }
    }
    Some(out)
}

/// The position of the key after SORT's last STORE, if any (Redis's
/// sortGetKeys, which skips LIMIT's, GET's and BY's arguments).
pub fn sort_store(args: &[Bytes]) -> Option<usize> {
    let mut dst = None;
    let mut i = 2;
    while i < args.len() {
        let a = &args[i];
        if a.eq_ignore_ascii_case(b"limit") {
            i += 2;
        } else if a.eq_ignore_ascii_case(b"get") || a.eq_ignore_ascii_case(b"by") {
            i += 1;
        } else if a.eq_ignore_ascii_case(b"store") && i + 1 < args.len() {
            dst = Some(i + 1);
        }
        i += 1;
    }
    dst
}

/// The position of the key after GEORADIUS's last STORE or STOREDIST from
/// argument 5 on (the last one given is the one written).
pub fn georadius_store(args: &[Bytes]) -> Option<usize> {
    let mut dst = None;
    let mut i = 5;
    while i < args.len() {
        let a = &args[i];
        if (a.eq_ignore_ascii_case(b"store") || a.eq_ignore_ascii_case(b"storedist")) && i + 1 < args.len() {
            dst = Some(i + 1);
            i += 1;
        }
        i += 1;
    }
    dst
}

/// True if a command with these specs and key function has keys at all
/// (Redis's doesCommandHaveKeys).
pub fn has_keys(specs: &[KeySpec], proc: KeyProc) -> bool {
    proc != KeyProc::None || specs.iter().any(|s| s.flags & NOT_KEY == 0)
}

/// A command line's keys with their flags, as Redis 7.0 finds them
/// (getKeysFromCommandWithSpecs): by the specs when they say everything, else
/// by the key function.
pub fn find(specs: &[KeySpec], proc: KeyProc, args: &[Bytes]) -> Vec<(usize, u16)> {
    let usable = specs.iter().any(|s| s.flags & NOT_KEY == 0) && specs.iter().all(|s| s.flags & VARIABLE_FLAGS == 0);
    if usable {
        if let Some(k) = by_specs(specs, args, false) {
            return k;
        }
    }
    by_proc(proc, args)
}

/// The positions of the keys (and shard channels) a command line names, for
/// routing, CROSSSLOT, WATCH and access records: those the specs find, or
/// where they do not resolve (SORT's unknown specs, a bad count) the key
/// function's; GEORADIUS adds the destination it writes (the last STORE or
/// STOREDIST), which its keyword specs (the first) may miss. `None` when
/// neither resolves: the handler answers the error.
pub fn positions(specs: &[KeySpec], proc: KeyProc, args: &[Bytes]) -> Option<KeyPositions> {
    let mut out: KeyPositions = match by_specs(specs, args, true) {
        Some(k) => k.into_iter().map(|(i, _)| i).collect(),
        None if proc == KeyProc::None => return None,
        None => {
            let k = by_proc(proc, args);
            if k.is_empty() {
                return None;
            }
            k.into_iter().map(|(i, _)| i).collect()
        }
    };
    if proc == KeyProc::Georadius {
        if let Some(d) = georadius_store(args).filter(|d| !out.contains(d)) {
            out.push(d);
        }
    }
    Some(out)
}

/// The keys the key function finds, with its flags.
fn by_proc(proc: KeyProc, args: &[Bytes]) -> Vec<(usize, u16)> {
    let argc = args.len() as i64;
    match proc {
        KeyProc::None => Vec::new(),
        KeyProc::Set => {
            let get = args.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"get"));
            vec![(1, if get { RW | ACCESS | UPDATE } else { OW | UPDATE })]
        }
        KeyProc::Generic { store, count, first } => {
            let n = atoi(&args[count]) as i64;
            if n < 1 || n > argc - first as i64 {
                return Vec::new();
            }
            let mut k: Vec<(usize, u16)> = (first..first + n as usize).map(|i| (i, 0)).collect();
            if store > 0 {
                k.push((store, 0));
            }
            k
        }
        KeyProc::Bitfield => {
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
        KeyProc::Georadius => {
            let mut keys = vec![(1, 0)];
            keys.extend(georadius_store(args).map(|i| (i, 0)));
            keys
        }
        KeyProc::Sort { store } => {
            let mut keys = vec![(1, RO | ACCESS)];
            if store {
                keys.extend(sort_store(args).map(|i| (i, OW | UPDATE)));
            }
            keys
        }
    }
}

/// A spec as COMMAND INFO shows it (a map: notes, flags, begin_search, find_keys).
pub fn to_reply(spec: &KeySpec) -> Reply {
    let s = Reply::bulk_str;
    let int = |n: i32| Reply::Int(n as i64);
    let map = |kv: Vec<(&str, Reply)>| Reply::Map(kv.into_iter().map(|(k, v)| (s(k), v)).collect());
    let flags = FLAG_NAMES.iter().filter(|(f, _)| spec.flags & f != 0).map(|(_, n)| Reply::Simple((*n).into()));
    let begin = match spec.begin {
        Begin::Index(i) => map(vec![("type", s("index")), ("spec", map(vec![("index", int(i))]))]),
        Begin::Keyword { keyword, startfrom } => map(vec![
            ("type", s("keyword")),
            ("spec", map(vec![("keyword", s(keyword)), ("startfrom", int(startfrom))])),
        ]),
        Begin::Unknown => map(vec![("type", s("unknown")), ("spec", map(Vec::new()))]),
    };
    let find = match spec.find {
        Find::Range { lastkey, keystep, limit } => map(vec![
            ("type", s("range")),
            ("spec", map(vec![("lastkey", int(lastkey)), ("keystep", int(keystep)), ("limit", int(limit))])),
        ]),
        Find::Keynum { keynumidx, firstkey, keystep } => map(vec![
            ("type", s("keynum")),
            ("spec", map(vec![("keynumidx", int(keynumidx)), ("firstkey", int(firstkey)), ("keystep", int(keystep))])),
        ]),
        Find::Unknown => map(vec![("type", s("unknown")), ("spec", map(Vec::new()))]),
    };
    let mut kv = Vec::with_capacity(4);
    if let Some(n) = spec.notes {
        kv.push(("notes", s(n)));
    }
    kv.push(("flags", Reply::Set(flags.collect())));
    kv.push(("begin_search", begin));
    kv.push(("find_keys", find));
    map(kv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(l: &str) -> Vec<Bytes> {
        l.split(' ').map(|a| Bytes::copy_from_slice(a.as_bytes())).collect()
    }

    #[test]
    fn atoi_reads_as_c_does() {
        assert_eq!(atoi(b"12x"), 12);
        assert_eq!(atoi(b" +3"), 3);
        assert_eq!(atoi(b"-7"), -7);
        assert_eq!(atoi(b"x"), 0);
        assert_eq!(atoi(b"4294967297"), 1);
    }

    #[test]
    fn keyword_and_limit_specs_as_redis_finds_them() {
        // XREAD's spec: after STREAMS, half of what remains.
        let xread = [spec(RO | ACCESS, keyword("STREAMS", 1), range(-1, 1, 2))];
        let k = by_specs(&xread, &line("XREAD COUNT 2 STREAMS a b 0 0"), false).unwrap();
        assert_eq!(k.iter().map(|k| k.0).collect::<Vec<_>>(), vec![4, 5]);
        // A keyword that is not there: the spec finds nothing (not an error).
        assert_eq!(by_specs(&xread, &line("XREAD COUNT 2"), false), Some(vec![]));
        // A count past the arguments does not resolve.
        let zunion = [spec(RO | ACCESS, index(1), keynum(0, 1, 1))];
        assert_eq!(by_specs(&zunion, &line("ZUNION 3 a b"), false), None);
        assert_eq!(by_specs(&zunion, &line("ZUNION 2 a b"), false), Some(vec![(2, RO | ACCESS), (3, RO | ACCESS)]));
    }
}
