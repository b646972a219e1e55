//! Argument grammars several families share: `numkeys key...`, COUNT / LIMIT,
//! blocking timeouts, SCAN options and cursors, the MPOP grammar, random counts.
//! Each returns Redis's exact error for a bad argument.

use std::time::Duration;

use bytes::Bytes;

use super::ctx::{err, CmdError};
use crate::protocol::cursor::{parse_i64, parse_timeout_ms, ArgError};
use crate::protocol::ArgCursor;
use crate::storage::keys::KeyType;
use crate::types::keyspace::parse_type_name;

/// An integer argument.
pub fn int(arg: &[u8]) -> Result<i64, CmdError> {
    Ok(parse_i64(arg).ok_or(ArgError::NotInteger)?)
}

/// `ERR invalid expire time in '<name>' command`.
pub fn invalid_expire(name: &str) -> CmdError {
    err(format!("ERR invalid expire time in '{name}' command"))
}

/// `numkeys key [key ...]` at `args[at..]` (SINTERCARD): the keys, and the
/// arguments after them.
pub fn numkeys(args: &[Bytes], at: usize) -> Result<(&[Bytes], &[Bytes]), CmdError> {
    // Not a number is "not greater than 0" too, as Redis words it.
    let n = parse_i64(&args[at]).filter(|n| *n > 0).ok_or_else(|| err("ERR numkeys should be greater than 0"))?;
    let rest = &args[at + 1..];
    if n as u64 > rest.len() as u64 {
        return Err(err("ERR Number of keys can't be greater than number of args"));
    }
    Ok(rest.split_at(n as usize))
}

/// SINTERCARD / ZINTERCARD's options: `[LIMIT n]` (0 = none).
pub fn card_limit(opts: &[Bytes]) -> Result<usize, CmdError> {
    let mut limit = 0usize;
    let mut cur = ArgCursor::new(opts);
    while !cur.is_empty() {
        if cur.remaining() >= 2 && cur.eat("LIMIT") {
            let l = parse_i64(cur.next()?).filter(|l| *l >= 0).ok_or_else(|| err("ERR LIMIT can't be negative"))?;
            limit = l as usize;
        } else {
            return Err(ArgError::Syntax.into());
        }
    }
    Ok(limit)
}

/// A blocking command's timeout in seconds, as Redis reads it: `None` is 0
/// (wait forever).
pub fn timeout(arg: &[u8]) -> Result<Option<Duration>, CmdError> {
    // Redis reads a long double and truncates to whole milliseconds in a long
    // long; one that does not fit turns negative.
    let ms = parse_timeout_ms(arg).ok_or_else(|| err("ERR timeout is not a float or out of range"))?;
    if ms < 0 {
        return Err(err("ERR timeout is negative"));
    }
    Ok((ms >= 1).then(|| Duration::from_millis(ms as u64)))
}

/// One of two words (any case): true for `yes`, false for `no`, else a syntax error.
pub fn either(arg: &[u8], yes: &[u8], no: &[u8]) -> Result<bool, CmdError> {
    if arg.eq_ignore_ascii_case(yes) {
        Ok(true)
    } else if arg.eq_ignore_ascii_case(no) {
        Ok(false)
    } else {
        Err(ArgError::Syntax.into())
    }
}

/// LEFT / RIGHT: true for LEFT.
pub fn side(arg: &[u8]) -> Result<bool, CmdError> {
    either(arg, b"LEFT", b"RIGHT")
}

/// The grammar LMPOP, BLMPOP, ZMPOP and BZMPOP share: `numkeys key... <where>
/// [COUNT n]` from `args[at..]`. The keys, what `which` makes of `<where>` (read
/// before the options, as Redis does), the count (1 without COUNT).
pub fn mpop<T>(
    args: &[Bytes],
    at: usize,
    which: impl Fn(&[u8]) -> Result<T, CmdError>,
) -> Result<(&[Bytes], T, u64), CmdError> {
    let n = parse_i64(&args[at]).filter(|n| *n > 0).ok_or_else(|| err("ERR numkeys should be greater than 0"))?;
    let rest = &args[at + 1..];
    if n as u64 >= rest.len() as u64 {
        return Err(ArgError::Syntax.into());
    }
    let (keys, opts) = rest.split_at(n as usize);
    let w = which(&opts[0])?;
    let mut count = None;
    let mut cur = ArgCursor::new(&opts[1..]);
    while !cur.is_empty() {
        if count.is_none() && cur.remaining() >= 2 && cur.eat("COUNT") {
            let c = parse_i64(cur.next()?).filter(|n| *n > 0);
            count = Some(c.ok_or_else(|| err("ERR count should be greater than 0"))?);
        } else {
            return Err(ArgError::Syntax.into());
        }
    }
    Ok((keys, w, count.unwrap_or(1) as u64))
}

/// The optional count of LPOP / RPOP / SPOP / ZPOPMIN / ZPOPMAX (`args[2]`).
pub fn pop_count(args: &[Bytes]) -> Result<Option<u64>, CmdError> {
    match args.get(2) {
        None => Ok(None),
        Some(a) => parse_i64(a)
            .filter(|n| *n >= 0)
            .map(|n| Some(n as u64))
            .ok_or_else(|| err("ERR value is out of range, must be positive")),
    }
}

/// The random count of SRANDMEMBER: `(count, distinct)` (negative: repeats).
pub fn rand_count(arg: &[u8]) -> Result<(u64, bool), CmdError> {
    let n = int(arg)?;
    if n == i64::MIN {
        return Err(err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"));
    }
    Ok((n.unsigned_abs(), n >= 0))
}

/// The `count [WITH...]` tail (`args[2..]`, not empty) of HRANDFIELD and
/// ZRANDMEMBER, `word` naming the flag, checked in Redis's order: the count,
/// then the syntax, then the room doubling a flagged count needs.
/// `(count, distinct, flagged)`.
pub fn rand_count_with(tail: &[Bytes], word: &str) -> Result<(u64, bool, bool), CmdError> {
    let (count, distinct) = rand_count(&tail[0])?;
    let flagged = match tail {
        [_] => false,
        [_, w] if w.eq_ignore_ascii_case(word.as_bytes()) => true,
        _ => return Err(ArgError::Syntax.into()),
    };
    if flagged && count > (i64::MAX / 2) as u64 {
        return Err(err("ERR value is out of range"));
    }
    Ok((count, distinct, flagged))
}

/// Parse a SCAN cursor as Redis does (C `strtoul`): an optional sign (a
/// negative one wraps), decimal digits, nothing else; the empty string is 0; a
/// leading space, trailing bytes or more than 64 bits are an invalid cursor.
pub fn cursor(b: &[u8]) -> Result<u64, CmdError> {
    let invalid = || err("ERR invalid cursor");
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() {
        // strtoul reads nothing: fine for "", not for a lone sign.
        return if b.is_empty() { Ok(0) } else { Err(invalid()) };
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return Err(invalid());
        }
        v = v.checked_mul(10).and_then(|v| v.checked_add((c - b'0') as u64)).ok_or_else(invalid)?;
    }
    Ok(if neg { v.wrapping_neg() } else { v })
}

/// The options of SCAN and the element scans: `[MATCH pattern] [COUNT count]`,
/// and `[TYPE type]` for SCAN only (elsewhere a syntax error, as in Redis).
pub struct ScanOpts {
    pub count: usize,
    /// `None` for no pattern (or `*`).
    pub pattern: Option<Bytes>,
    /// `Some(None)`: a type name no key can have.
    pub type_filter: Option<Option<KeyType>>,
}

impl ScanOpts {
    pub fn parse(args: &[Bytes], allow_type: bool) -> Result<ScanOpts, CmdError> {
        let mut o = ScanOpts { count: 10, pattern: None, type_filter: None };
        let mut cur = ArgCursor::new(args);
        while !cur.is_empty() {
            if cur.remaining() >= 2 && cur.eat("COUNT") {
                let n = cur.next_i64()?;
                if n < 1 {
                    return Err(ArgError::Syntax.into());
                }
                o.count = n.min(1 << 20) as usize;
            } else if cur.remaining() >= 2 && cur.eat("MATCH") {
                let p = cur.next()?.clone();
                o.pattern = if &p[..] == b"*" { None } else { Some(p) };
            } else if allow_type && cur.remaining() >= 2 && cur.eat("TYPE") {
                o.type_filter = Some(parse_type_name(cur.next()?));
            } else {
                return Err(ArgError::Syntax.into());
            }
        }
        Ok(o)
    }
}
