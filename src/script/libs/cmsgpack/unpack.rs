//! `cmsgpack.unpack(s)`, `cmsgpack.unpack_one(s [, offset])` and
//! `cmsgpack.unpack_limit(s, limit [, offset])`: MessagePack to Lua values,
//! accepting what lua-cmsgpack accepts (no bin/ext types), with its errors
//! and stack limits.  Nested tables are filled with an explicit stack, not
//! Rust recursion.

use mlua::{Lua, MultiValue, Table, Value};

use super::super::cfunc::{
    check_integer, check_lstring, opt_integer, stack_overflow, Outcome, ValueStack, LUAI_MAXCSTACK,
};

/// Why decoding stopped early.
enum DecodeError {
    /// `MP_CUR_ERROR_EOF`: "Missing bytes in input."
    Eof,
    /// `MP_CUR_ERROR_BADFMT`: "Bad data format in input."
    BadFormat,
    /// An error raised on the spot (stack overflow, bad table index).
    Raise(Outcome),
}

/// A table being filled, innermost last.  The innermost table and its pending
/// map key are `Decoder::top` and `Decoder::key`; the enclosing ones are kept
/// on value stacks.
enum Frame {
    Array { left: u64, next: i64, slots: i64 },
    Map { left: u64, want_value: bool, slots: i64 },
}

struct Decoder<'a> {
    lua: &'a Lua,
    data: &'a [u8],
    pos: usize,
    frames: Vec<Frame>,
    tables: ValueStack,
    keys: ValueStack,
    top: Option<Table>,
    key: Value,
}

impl Decoder<'_> {
    fn left(&self) -> usize {
        self.data.len() - self.pos
    }

    fn need(&self, n: usize) -> std::result::Result<(), DecodeError> {
        if self.left() < n {
            Err(DecodeError::Eof)
        } else {
            Ok(())
        }
    }

    fn byte(&self, i: usize) -> u8 {
        self.data.get(self.pos + i).copied().unwrap_or(0)
    }

    fn be(&self, from: usize, n: usize) -> u64 {
        (0..n).fold(0u64, |acc, k| (acc << 8) | self.byte(from + k) as u64)
    }

    fn string(&mut self, header: usize, len: usize) -> mlua::Result<std::result::Result<Value, DecodeError>> {
        let end = header.saturating_add(len);
        bail!(self.need(end));
        let s = self.lua.create_string(&self.data[self.pos + header..self.pos + end])?;
        self.pos += end;
        Ok(Ok(Value::String(s)))
    }

    /// Start a table of `len` entries (`mp_decode_to_lua_array` /
    /// `mp_decode_to_lua_hash`).  Returns the table itself when it is empty;
    /// otherwise it becomes the innermost frame.
    fn open(
        &mut self,
        len: u64,
        array: bool,
        slots: i64,
    ) -> mlua::Result<std::result::Result<Option<Value>, DecodeError>> {
        let table = self.lua.create_table()?;
        // lua_newtable, then (arrays only) luaL_checkstack(L, 1).
        if array && slots + 2 > LUAI_MAXCSTACK {
            return Ok(Err(DecodeError::Raise(stack_overflow("in function mp_decode_to_lua_array"))));
        }
        if len == 0 {
            return Ok(Ok(Some(Value::Table(table))));
        }
        self.frames.push(if array {
            Frame::Array { left: len, next: 1, slots }
        } else {
            Frame::Map { left: len, want_value: false, slots }
        });
        if let Some(outer) = self.top.replace(table) {
            self.tables.push(self.lua, Value::Table(outer))?;
            self.keys.push(self.lua, std::mem::take(&mut self.key))?;
        }
        Ok(Ok(None))
    }

    /// Decode the item at the cursor (`mp_decode_to_lua_type`) with the C
    /// function's stack at height `slots`.  Scalars and empty tables are
    /// returned; a non-empty table is opened instead (`None`).
    fn item(&mut self, slots: i64) -> mlua::Result<std::result::Result<Option<Value>, DecodeError>> {
        bail!(self.need(1));
        if slots + 1 > LUAI_MAXCSTACK {
            return Ok(Err(DecodeError::Raise(stack_overflow(
                "too many return values at once; use unpack_one or unpack_limit instead.",
            ))));
        }
        let tag = self.byte(0);
        let num = |n: f64| Ok(Ok(Some(Value::Number(n))));
        macro_rules! fixed {
            ($len:expr, $v:expr) => {{
                bail!(self.need($len));
                let v = $v;
                self.pos += $len;
                return num(v);
            }};
        }
        match tag {
            0xcc => fixed!(2, self.byte(1) as f64),
            0xd0 => fixed!(2, self.byte(1) as i8 as f64),
            0xcd => fixed!(3, self.be(1, 2) as f64),
            0xd1 => fixed!(3, self.be(1, 2) as u16 as i16 as f64),
            0xce => fixed!(5, self.be(1, 4) as f64),
            0xd2 => fixed!(5, self.be(1, 4) as u32 as i32 as f64),
            // lua_pushunsigned is lua_pushinteger on 64-bit builds.
            0xcf => fixed!(9, self.be(1, 8) as i64 as f64),
            0xd3 => fixed!(9, self.be(1, 8) as i64 as f64),
            0xca => fixed!(5, f32::from_bits(self.be(1, 4) as u32) as f64),
            0xcb => fixed!(9, f64::from_bits(self.be(1, 8))),
            0xc0 => {
                self.pos += 1;
                Ok(Ok(Some(Value::Nil)))
            }
            0xc2 | 0xc3 => {
                self.pos += 1;
                Ok(Ok(Some(Value::Boolean(tag == 0xc3))))
            }
            0xd9 => {
                bail!(self.need(2));
                let len = self.byte(1) as usize;
                Ok(self.string(2, len)?.map(Some))
            }
            0xda => {
                bail!(self.need(3));
                let len = self.be(1, 2) as usize;
                Ok(self.string(3, len)?.map(Some))
            }
            0xdb => {
                bail!(self.need(5));
                let len = self.be(1, 4) as usize;
                Ok(self.string(5, len)?.map(Some))
            }
            0xdc..=0xdf => {
                let header = if tag == 0xdc || tag == 0xde { 3 } else { 5 };
                bail!(self.need(header));
                let len = self.be(1, header - 1);
                self.pos += header;
                self.open(len, tag <= 0xdd, slots)
            }
            _ if tag & 0x80 == 0 => {
                self.pos += 1;
                num(tag as f64)
            }
            _ if tag & 0xe0 == 0xe0 => {
                self.pos += 1;
                num(tag as i8 as f64)
            }
            _ if tag & 0xe0 == 0xa0 => Ok(self.string(1, (tag & 0x1f) as usize)?.map(Some)),
            _ if tag & 0xf0 == 0x90 || tag & 0xf0 == 0x80 => {
                self.pos += 1;
                self.open((tag & 0x0f) as u64, tag & 0xf0 == 0x90, slots)
            }
            _ => Ok(Err(DecodeError::BadFormat)),
        }
    }

    /// Decode one top-level value with the stack at height `slots`.
    fn value(&mut self, slots: i64) -> mlua::Result<std::result::Result<Value, DecodeError>> {
        let mut slots = slots;
        loop {
            let Some(mut value) = bail!(self.item(slots)?) else {
                // A table was opened: decode its first entry.
                slots = self.child_slots();
                continue;
            };
            // Store the value in the enclosing tables, closing full ones.
            loop {
                let (Some(frame), Some(table)) = (self.frames.last_mut(), self.top.as_ref()) else {
                    return Ok(Ok(value));
                };
                let full = match frame {
                    Frame::Array { left, next, .. } => {
                        table.raw_set(*next, value)?;
                        *next += 1;
                        *left -= 1;
                        *left == 0
                    }
                    Frame::Map { want_value: want_value @ false, .. } => {
                        self.key = value;
                        *want_value = true;
                        false
                    }
                    Frame::Map { left, want_value, .. } => {
                        let key = std::mem::take(&mut self.key);
                        // lua_settable's checks on the key.
                        match &key {
                            Value::Nil => {
                                return Ok(Err(DecodeError::Raise(Outcome::RawError(b"table index is nil".to_vec()))))
                            }
                            Value::Number(n) if n.is_nan() => {
                                return Ok(Err(DecodeError::Raise(Outcome::RawError(b"table index is NaN".to_vec()))))
                            }
                            _ => {}
                        }
                        table.raw_set(key, value)?;
                        *want_value = false;
                        *left -= 1;
                        *left == 0
                    }
                };
                if !full {
                    slots = self.child_slots();
                    break;
                }
                self.frames.pop();
                value = match self.top.take() {
                    Some(t) => Value::Table(t),
                    None => Value::Nil,
                };
                if !self.frames.is_empty() {
                    self.top = self.tables.pop_table()?;
                    self.key = self.keys.pop()?;
                }
            }
        }
    }

    /// Stack height at which the innermost table's next item is decoded.
    fn child_slots(&self) -> i64 {
        match self.frames.last() {
            // table, index
            Some(Frame::Array { slots, .. }) => slots + 2,
            // table (+ key when decoding the value)
            Some(Frame::Map { slots, want_value, .. }) => slots + 1 + *want_value as i64,
            None => 0,
        }
    }
}

/// `mp_unpack_full`.  `slots` is the height of the C function's stack (its
/// remaining arguments).
fn unpack_full(lua: &Lua, args: &MultiValue, limit: i64, offset: i64, slots: i64) -> mlua::Result<Outcome> {
    let s = tri!(check_lstring(lua, args, 1)?);
    let len = s.len();
    let decode_all = limit == 0 && offset == 0;
    if offset < 0 || limit < 0 {
        return Ok(Outcome::Error(
            format!("Invalid request to unpack with offset of {} and limit of {}.", offset as i32, len as i32)
                .into_bytes(),
        ));
    } else if offset as u64 > len as u64 {
        return Ok(Outcome::Error(
            format!("Start offset {} greater than input length {}.", offset as i32, len as i32).into_bytes(),
        ));
    }
    let limit = if decode_all { i32::MAX as i64 } else { limit };
    let first = if decode_all { 1 } else { 2 };
    // Results go to a table, created when a second one arrives.
    let mut single: Option<Value> = None;
    let mut results: Option<Table> = None;
    let mut dec = Decoder {
        lua,
        data: &s,
        pos: offset as usize,
        frames: Vec::new(),
        tables: ValueStack::new(),
        keys: ValueStack::new(),
        top: None,
        key: Value::Nil,
    };
    let mut cnt: i64 = 0;
    while dec.left() > 0 && cnt < limit {
        match dec.value(slots + cnt)? {
            Ok(v) => {
                if cnt == 0 {
                    single = Some(v);
                } else {
                    let t = match &results {
                        Some(t) => t,
                        None => results.insert(lua.create_table()?),
                    };
                    if cnt == 1 {
                        t.raw_set(first, single.take().unwrap_or(Value::Nil))?;
                    }
                    t.raw_set(first + cnt, v)?;
                }
            }
            Err(DecodeError::Eof) => return Ok(Outcome::Error(b"Missing bytes in input.".to_vec())),
            Err(DecodeError::BadFormat) => return Ok(Outcome::Error(b"Bad data format in input.".to_vec())),
            Err(DecodeError::Raise(o)) => return Ok(o),
        }
        cnt += 1;
    }
    if !decode_all {
        if slots + cnt + 1 > LUAI_MAXCSTACK {
            return Ok(stack_overflow("in function mp_unpack_full"));
        }
        let next = Value::Integer(if dec.left() == 0 { -1 } else { (len - dec.left()) as i64 });
        return Ok(match (results, single) {
            (None, None) => Outcome::One(next),
            (None, Some(v)) => Outcome::Two(next, v),
            (Some(t), _) => {
                t.raw_set(1, next)?;
                Outcome::Many(t, cnt + 1)
            }
        });
    }
    Ok(match (results, single) {
        (None, None) => Outcome::Many(lua.create_table()?, 0),
        (None, Some(v)) => Outcome::One(v),
        (Some(t), _) => Outcome::Many(t, cnt),
    })
}

pub(super) fn mp_unpack(lua: &Lua, args: MultiValue) -> mlua::Result<Outcome> {
    let slots = args.len() as i64;
    unpack_full(lua, &args, 0, 0, slots)
}

pub(super) fn mp_unpack_one(lua: &Lua, args: MultiValue) -> mlua::Result<Outcome> {
    let offset = tri!(opt_integer(lua, &args, 2, 0)?);
    unpack_full(lua, &args, 1, offset, args.len().min(1) as i64)
}

pub(super) fn mp_unpack_limit(lua: &Lua, args: MultiValue) -> mlua::Result<Outcome> {
    let limit = tri!(check_integer(lua, &args, 2)?);
    let offset = tri!(opt_integer(lua, &args, 3, 0)?);
    unpack_full(lua, &args, limit, offset, args.len().min(1) as i64)
}

#[cfg(test)]
#[path = "unpack_tests.rs"]
mod tests;
