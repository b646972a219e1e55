//! Redis ↔ Lua conversion, exactly as Redis's `script_lua.c` does it.
//!
//! - A reply becomes a Lua value for `redis.call` (RESP2 or RESP3 rules, chosen
//!   by `redis.setresp`): integers are numbers, bulks strings, nulls `false` (nil
//!   under RESP3), status and error replies `{ok=..}` / `{err=..}` tables, arrays
//!   tables; RESP3 maps, sets, doubles, booleans become `{map=}`, `{set=}`,
//!   `{double=}`, booleans.
//! - A script's return value becomes a reply: numbers are truncated to integers,
//!   `true` is 1 (or a boolean under RESP3), `false` and `nil` are null, a table
//!   is an error, status, double, big number, verbatim string, map or set when it
//!   has that field, else an array cut at its first nil.
//! - `redis.call` arguments must be strings or numbers; numbers print as `%.17g`.

use bytes::Bytes;
use mlua::{Lua, Table, Value};

use crate::protocol::number::fmt_g17;
use crate::protocol::Reply;

/// How deep a returned table may nest before its element is an error
/// (redis-server's Lua stack runs out one level further down).
const MAX_DEPTH: usize = 7995;
const STACK_LIMIT: &str = "ERR reached lua stack limit";

/// A reply as a Lua value, for a script whose protocol is `resp`.
pub fn reply_to_lua(lua: &Lua, r: Reply, resp: u8) -> mlua::Result<Value> {
    let resp3 = resp >= 3;
    let s = |b: &[u8]| lua.create_string(b).map(Value::String);
    Ok(match r {
        Reply::Ok => status(lua, b"OK")?,
        Reply::Simple(t) => status(lua, t.as_bytes())?,
        Reply::Error(e) => Value::Table(error_table(lua, e.as_bytes())?),
        Reply::StatusBytes(t) => status(lua, &t)?,
        Reply::ErrorBytes(e) => Value::Table(error_table(lua, &e)?),
        Reply::Int(i) => Value::Number(i as f64),
        Reply::Bulk(b) => s(&b)?,
        Reply::Nil | Reply::NilArray => {
            if resp3 {
                Value::Nil
            } else {
                Value::Boolean(false)
            }
        }
        Reply::Array(items) | Reply::Set(items) if !resp3 => array(lua, items, resp)?,
        Reply::Array(items) => array(lua, items, resp)?,
        Reply::Set(items) => {
            let set = lua.create_table()?;
            for i in items {
                set.raw_set(reply_to_lua(lua, i, resp)?, true)?;
            }
            wrap(lua, "set", Value::Table(set))?
        }
        Reply::Map(pairs) if resp3 => {
            let m = lua.create_table()?;
            for (k, v) in pairs {
                m.raw_set(reply_to_lua(lua, k, resp)?, reply_to_lua(lua, v, resp)?)?;
            }
            wrap(lua, "map", Value::Table(m))?
        }
        Reply::Map(pairs) => array(lua, pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(), resp)?,
        Reply::Pairs(pairs) if resp3 => {
            array(lua, pairs.into_iter().map(|(k, v)| Reply::Array(vec![k, v])).collect(), resp)?
        }
        Reply::Pairs(pairs) => array(lua, pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(), resp)?,
        Reply::Double(d) if resp3 => wrap(lua, "double", Value::Number(d))?,
        Reply::Double(d) => s(crate::protocol::number::fmt_double(d).as_bytes())?,
        Reply::DoubleText(t) if resp3 => wrap(lua, "double", Value::Number(t.parse().unwrap_or(0.0)))?,
        Reply::DoubleText(t) => s(t.as_bytes())?,
        Reply::Verbatim(b) | Reply::VerbatimAs(_, b) if !resp3 => s(&b)?,
        Reply::Verbatim(b) => verbatim(lua, b"txt", &b)?,
        Reply::VerbatimAs(f, b) => verbatim(lua, &f, &b)?,
        Reply::BigNumber(n) if resp3 => wrap(lua, "big_number", s(n.as_bytes())?)?,
        Reply::BigNumber(n) => s(n.as_bytes())?,
        Reply::Bool(b) if resp3 => Value::Boolean(b),
        Reply::Bool(b) => Value::Number(b as i64 as f64),
        Reply::Push(items) => array(lua, items, resp)?,
        // One command answering several frames (SUBSCRIBE) is not callable from scripts.
        Reply::Frames(items) => array(lua, items, resp)?,
    })
}

fn status(lua: &Lua, t: &[u8]) -> mlua::Result<Value> {
    wrap(lua, "ok", Value::String(lua.create_string(t)?))
}

fn wrap(lua: &Lua, field: &str, v: Value) -> mlua::Result<Value> {
    let t = lua.create_table()?;
    t.raw_set(field, v)?;
    Ok(Value::Table(t))
}

fn verbatim(lua: &Lua, format: &[u8], text: &[u8]) -> mlua::Result<Value> {
    let t = lua.create_table()?;
    t.raw_set("format", lua.create_string(format)?)?;
    t.raw_set("string", lua.create_string(text)?)?;
    wrap(lua, "verbatim_string", Value::Table(t))
}

fn array(lua: &Lua, items: Vec<Reply>, resp: u8) -> mlua::Result<Value> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, r) in items.into_iter().enumerate() {
        t.raw_set(i + 1, reply_to_lua(lua, r, resp)?)?;
    }
    Ok(Value::Table(t))
}

/// The `{err=...}` table of an error reply: `"CODE message"` (a message without a
/// code gets `ERR`), flagged so error statistics count it once.
pub fn error_table(lua: &Lua, e: &[u8]) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("err", lua.create_string(normalize_error(e))?)?;
    t.raw_set("ignore_error_stats_update", true)?;
    Ok(t)
}

/// Redis's `luaPushErrorBuff`: strip a leading `-`; a text without a space is
/// an `ERR` message; trailing CR/LF removed.
pub fn normalize_error(e: &[u8]) -> Vec<u8> {
    let mut e = e.strip_prefix(b"-").unwrap_or(e);
    while let [rest @ .., b'\r' | b'\n'] = e {
        e = rest;
    }
    if e.contains(&b' ') {
        e.to_vec()
    } else {
        [b"ERR ", e].concat()
    }
}

/// A script's return value as a reply, for a script whose protocol is `resp`.
pub fn lua_to_reply(v: &Value, resp: u8) -> Reply {
    to_reply(v, resp, 0)
}

fn to_reply(v: &Value, resp: u8, depth: usize) -> Reply {
    let resp3 = resp >= 3;
    match v {
        Value::String(s) => Reply::Bulk(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Integer(i) => Reply::Int(*i),
        Value::Number(n) => Reply::Int(truncate(*n)),
        Value::Boolean(true) if resp3 => Reply::Bool(true),
        Value::Boolean(true) => Reply::Int(1),
        Value::Boolean(false) if resp3 => Reply::Bool(false),
        Value::Boolean(false) => Reply::Nil,
        Value::Table(t) => {
            if depth >= MAX_DEPTH {
                return Reply::error(STACK_LIMIT);
            }
            table_to_reply(t, resp, depth)
        }
        _ => Reply::Nil,
    }
}

/// C's `(long long)` cast of a double as x86-64 does it: truncation, and the
/// "integer indefinite" `i64::MIN` for NaN and anything out of range.
fn truncate(n: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    if n.is_nan() || !(-LIMIT..LIMIT).contains(&n) {
        return i64::MIN;
    }
    n as i64
}

fn field(t: &Table, name: &str) -> Value {
    t.raw_get(name).unwrap_or(Value::Nil)
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(String::from_utf8_lossy(&s.as_bytes()).into_owned()),
        _ => None,
    }
}

fn table_to_reply(t: &Table, resp: u8, depth: usize) -> Reply {
    // Status and error texts are bytes, as bulk ones are.
    if let Value::String(e) = field(t, "err") {
        return Reply::error_bytes(&e.as_bytes());
    }
    if let Value::String(s) = field(t, "ok") {
        return Reply::status_bytes(&s.as_bytes());
    }
    if let Value::Number(_) | Value::Integer(_) = field(t, "double") {
        let d = match field(t, "double") {
            Value::Number(n) => n,
            Value::Integer(i) => i as f64,
            _ => 0.0,
        };
        return Reply::Double(d);
    }
    if let Some(n) = text(&field(t, "big_number")) {
        return Reply::BigNumber(n.replace(['\r', '\n'], " "));
    }
    if let Value::Table(v) = field(t, "verbatim_string") {
        if let (Some(f), Value::String(s)) = (text(&field(&v, "format")), field(&v, "string")) {
            let mut fmt = [b' '; 3];
            for (i, b) in f.bytes().take(3).enumerate() {
                fmt[i] = b;
            }
            return Reply::VerbatimAs(fmt, Bytes::copy_from_slice(&s.as_bytes()));
        }
    }
    if let Value::Table(m) = field(t, "map") {
        let mut pairs = Vec::new();
        for (k, v) in m.pairs::<Value, Value>().flatten() {
            pairs.push((to_reply(&k, resp, depth + 1), to_reply(&v, resp, depth + 1)));
        }
        return Reply::Map(pairs);
    }
    if let Value::Table(s) = field(t, "set") {
        let mut items = Vec::new();
        for (k, _) in s.pairs::<Value, Value>().flatten() {
            items.push(to_reply(&k, resp, depth + 1));
        }
        return Reply::Set(items);
    }
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) => break,
            Ok(v) => items.push(to_reply(&v, resp, depth + 1)),
            // Each level holds a reference slot: about 7,990 levels down they
            // run out, a few levels before redis-server's Lua stack does.
            Err(_) => {
                items.push(Reply::error(STACK_LIMIT));
                break;
            }
        }
    }
    Reply::Array(items)
}

/// `redis.call`'s arguments: strings as they are, numbers as `%.17g`; anything
/// else is Redis's error.
pub fn args_from_lua(vals: &[Value]) -> Result<Vec<Bytes>, &'static str> {
    if vals.is_empty() {
        return Err("Please specify at least one argument for this redis lib call");
    }
    let mut out = Vec::with_capacity(vals.len());
    for v in vals {
        out.push(match v {
            Value::String(s) => Bytes::copy_from_slice(&s.as_bytes()),
            Value::Integer(i) => Bytes::from(i.to_string()),
            Value::Number(n) => Bytes::from(fmt_g17(*n)),
            _ => return Err("Lua redis lib command arguments must be strings or integers"),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_get_a_code() {
        assert_eq!(normalize_error(b"oops"), b"ERR oops");
        assert_eq!(normalize_error(b"-X y\r\n"), b"X y");
        assert_eq!(normalize_error(b"MY_ERR_CODE custom msg"), b"MY_ERR_CODE custom msg");
        assert_eq!(normalize_error(b""), b"ERR ");
        assert_eq!(normalize_error(b"E a\x80b"), b"E a\x80b");
    }

    #[test]
    fn replies_round_trip_through_lua() {
        let lua = Lua::new();
        let r = Reply::Array(vec![Reply::Int(1), Reply::bulk_str("a"), Reply::Nil, Reply::Int(3)]);
        let v = reply_to_lua(&lua, r, 2).unwrap();
        // The null becomes false, which the array keeps (nil would cut it).
        assert_eq!(
            lua_to_reply(&v, 2),
            Reply::Array(vec![Reply::Int(1), Reply::bulk_str("a"), Reply::Nil, Reply::Int(3)])
        );
        let d = reply_to_lua(&lua, Reply::Double(1.5), 3).unwrap();
        assert_eq!(lua_to_reply(&d, 3), Reply::Double(1.5));
        assert_eq!(lua_to_reply(&Value::Number(100.5), 2), Reply::Int(100));
        assert_eq!(lua_to_reply(&Value::Number(-3.9), 2), Reply::Int(-3));
        for n in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 2f64.powi(63)] {
            assert_eq!(lua_to_reply(&Value::Number(n), 2), Reply::Int(i64::MIN), "{n}");
        }
        assert_eq!(lua_to_reply(&Value::Number(-(2f64.powi(63))), 2), Reply::Int(i64::MIN));
        assert_eq!(lua_to_reply(&Value::Number(2f64.powi(62)), 2), Reply::Int(1 << 62));
    }

    #[test]
    fn arguments_print_numbers_as_redis_does() {
        let a = args_from_lua(&[Value::Number(0.1), Value::Number(9007199254740991.0), Value::Number(1e20)]).unwrap();
        assert_eq!(a, vec![Bytes::from("0.10000000000000001"), Bytes::from("9007199254740991"), Bytes::from("1e+20")]);
        assert!(args_from_lua(&[Value::Boolean(true)]).is_err());
        assert!(args_from_lua(&[]).is_err());
    }
}
