//! `cmsgpack.pack(...)`: Lua values to MessagePack, with lua-cmsgpack's
//! encoding choices (smallest integer format, float32 when exact, array or
//! map by the keys, nil past 16 levels of nesting) and its stack limits.

use mlua::{Lua, MultiValue, Table, Value};

use super::super::cfunc::{as_number, number_to_int, number_to_integer, stack_overflow, Outcome, LUAI_MAXCSTACK};

/// Tables nested this deep are encoded as nil.
const LUACMSGPACK_MAX_NESTING: u32 = 16;

fn encode_bytes(buf: &mut Vec<u8>, s: &[u8]) {
    let len = s.len();
    if len < 32 {
        buf.push(0xa0 | len as u8);
    } else if len <= 0xff {
        buf.push(0xd9);
        buf.push(len as u8);
    } else if len <= 0xffff {
        buf.push(0xda);
        buf.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        buf.push(0xdb);
        buf.extend_from_slice(&(len as u32).to_be_bytes());
    }
    buf.extend_from_slice(s);
}

fn encode_double(buf: &mut Vec<u8>, d: f64) {
    let f = d as f32;
    if d == f as f64 {
        buf.push(0xca);
        buf.extend_from_slice(&f.to_bits().to_be_bytes());
    } else {
        buf.push(0xcb);
        buf.extend_from_slice(&d.to_bits().to_be_bytes());
    }
}

fn encode_int(buf: &mut Vec<u8>, n: i64) {
    if n >= 0 {
        if n <= 127 {
            buf.push(n as u8);
        } else if n <= 0xff {
            buf.extend_from_slice(&[0xcc, n as u8]);
        } else if n <= 0xffff {
            buf.push(0xcd);
            buf.extend_from_slice(&(n as u16).to_be_bytes());
        } else if n <= 0xffff_ffff {
            buf.push(0xce);
            buf.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            buf.push(0xcf);
            buf.extend_from_slice(&(n as u64).to_be_bytes());
        }
    } else if n >= -32 {
        buf.push(n as i8 as u8);
    } else if n >= -128 {
        buf.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        buf.push(0xd1);
        buf.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        buf.push(0xd2);
        buf.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        buf.push(0xd3);
        buf.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_container_header(buf: &mut Vec<u8>, n: u64, fix: u8, tag16: u8, tag32: u8) {
    if n <= 15 {
        buf.push(fix | n as u8);
    } else if n <= 65535 {
        buf.push(tag16);
        buf.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        buf.push(tag32);
        buf.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

/// `mp_encode_lua_number` for Lua 5.1: integral values that survive a round
/// trip through int64 are integers.
fn encode_number(buf: &mut Vec<u8>, n: f64) {
    let i = number_to_integer(n);
    if !n.is_infinite() && i as f64 == n {
        encode_int(buf, i);
    } else {
        encode_double(buf, n);
    }
}

/// `table_is_an_array`: the keys are exactly the integers 1..n.
fn table_is_an_array(table: &Table) -> mlua::Result<bool> {
    let mut count: i32 = 0;
    let mut max: i32 = 0;
    let mut array = true;
    let res = table.for_each::<Value, Value>(|k, _| {
        let int_key = match k {
            Value::Integer(_) | Value::Number(_) => {
                let n = as_number(&k).unwrap_or(0.0);
                if n > 0.0 && !n.is_infinite() && number_to_int(n) as f64 == n {
                    Some(n)
                } else {
                    None
                }
            }
            _ => None,
        };
        match int_key {
            Some(n) => {
                if n > max as f64 {
                    max = number_to_int(n);
                }
                count = count.wrapping_add(1);
                Ok(())
            }
            None => {
                array = false;
                Err(mlua::Error::runtime("stop"))
            }
        }
    });
    if !array {
        return Ok(false);
    }
    res?;
    Ok(max == count)
}

/// `mp_encode_lua_type`.  `slots` is the height of the C function's Lua
/// stack with the value on top; `level` the table nesting (at most 16).
fn encode_value(
    buf: &mut Vec<u8>,
    v: &Value,
    level: u32,
    slots: i64,
) -> mlua::Result<std::result::Result<(), Outcome>> {
    match v {
        Value::Table(_) if level == LUACMSGPACK_MAX_NESTING => buf.push(0xc0),
        Value::String(s) => encode_bytes(buf, &s.as_bytes()),
        Value::Boolean(b) => buf.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(i) => encode_number(buf, *i as f64),
        Value::Number(n) => encode_number(buf, *n),
        Value::Table(t) => {
            if slots + 2 > LUAI_MAXCSTACK {
                return Ok(Err(stack_overflow("in function table_is_an_array")));
            }
            if table_is_an_array(t)? {
                let len = t.raw_len() as u64;
                encode_container_header(buf, len, 0x90, 0xdc, 0xdd);
                if slots + 1 > LUAI_MAXCSTACK {
                    return Ok(Err(stack_overflow("in function mp_encode_lua_table_as_array")));
                }
                for j in 1..=len {
                    let item: Value = t.raw_get(j)?;
                    bail!(encode_value(buf, &item, level + 1, slots + 1)?);
                }
            } else {
                if slots + 3 > LUAI_MAXCSTACK {
                    return Ok(Err(stack_overflow("in function mp_encode_lua_table_as_map")));
                }
                let mut len: u64 = 0;
                t.for_each::<Value, Value>(|_, _| {
                    len += 1;
                    Ok(())
                })?;
                encode_container_header(buf, len, 0x80, 0xde, 0xdf);
                for pair in t.pairs::<Value, Value>() {
                    let (k, item) = pair?;
                    bail!(encode_value(buf, &k, level + 1, slots + 3)?);
                    bail!(encode_value(buf, &item, level + 1, slots + 2)?);
                }
            }
        }
        _ => buf.push(0xc0),
    }
    Ok(Ok(()))
}

pub(super) fn mp_pack(lua: &Lua, args: MultiValue) -> mlua::Result<Outcome> {
    let nargs = args.len() as i64;
    if nargs == 0 {
        return Ok(Outcome::ArgError(0, b"MessagePack pack needs input.".to_vec()));
    }
    // lua_checkstack(L, nargs) with the nargs arguments on the stack.
    if nargs > LUAI_MAXCSTACK || nargs + nargs > LUAI_MAXCSTACK {
        return Ok(Outcome::ArgError(0, b"Too many arguments for MessagePack pack.".to_vec()));
    }
    let mut buf = Vec::new();
    let mut slots = nargs;
    for arg in args.iter() {
        if slots + 1 > LUAI_MAXCSTACK {
            return Ok(stack_overflow("in function mp_check"));
        }
        // The argument is copied on top, encoded and popped; the partial
        // result string then takes its slot.
        slots += 1;
        tri!(encode_value(&mut buf, arg, 0, slots)?);
    }
    Ok(Outcome::One(Value::String(lua.create_string(&buf)?)))
}

#[cfg(test)]
#[path = "pack_tests.rs"]
mod tests;
