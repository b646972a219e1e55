//! The `cmsgpack` Lua library as Redis 7.0 ships it (lua-cmsgpack 0.4.0,
//! vendored in `deps/lua/src/lua_cmsgpack.c`).
//!
//! `cmsgpack.pack(...)` encodes each argument and concatenates the results;
//! `cmsgpack.unpack(s)`, `cmsgpack.unpack_one(s [, offset])` and
//! `cmsgpack.unpack_limit(s, limit [, offset])` decode.  The encoding choices
//! are the C library's: a number that converts to int64 and back unchanged is
//! an integer in the smallest MessagePack integer format, any other number is
//! a float32 when that is exact and a float64 otherwise; strings use
//! fixstr/str8/str16/str32; a table whose keys are exactly 1..n is an array,
//! any other table a map (key order of Lua `next()`); tables nested 16 deep
//! and values of other types are encoded as nil.  Decoding accepts what the C
//! library accepts (no bin/ext types) and reports the same errors.
//!
//! As in `cjson.rs`, every library function is a C closure (`trampoline`) in
//! front of the Rust implementation, so errors reach scripts as the same
//! strings, with the same `chunk:line:` prefix and `bad argument` wording, as
//! with the C library.  The Lua stack limits the C code runs into
//! (`LUAI_MAXCSTACK`, 8000 slots per C call: number of arguments, values
//! returned, nesting of decoded tables) are reproduced by counting the slots
//! the C code would use, and nested data is walked without Rust recursion
//! where its depth is not bounded.

use std::ffi::c_int;

use mlua::{ffi, Function, Lua, MultiValue, Table, Value};

/// Lua 5.1's `LUAI_MAXCSTACK`: the most stack slots one C function may use.
const LUAI_MAXCSTACK: i64 = 8000;

const LUACMSGPACK_NAME: &str = "cmsgpack";
const LUACMSGPACK_VERSION: &str = "lua-cmsgpack 0.4.0";
const LUACMSGPACK_COPYRIGHT: &str = "Copyright (C) 2012, Salvatore Sanfilippo";
const LUACMSGPACK_DESCRIPTION: &str = "MessagePack C implementation for Lua";

/// Tables nested this deep are encoded as nil.
const LUACMSGPACK_MAX_NESTING: u32 = 16;

// ---------------------------------------------------------------------------
// Calling convention between the Rust implementations and the C trampoline.
// ---------------------------------------------------------------------------

/// Result codes passed from a Rust implementation to [`trampoline`].
const R_ONE: i64 = 0;
const R_MANY: i64 = 1;
const R_ERROR: i64 = 2;
const R_RAW_ERROR: i64 = 3;
const R_ARG_ERROR: i64 = 4;
const R_TWO: i64 = 5;

/// What a library function does, computed by its Rust implementation.
enum Outcome {
    /// Return one value.
    One(Value),
    /// Return two values.
    Two(Value, Value),
    /// Return the values `t[1..=n]`.
    Many(Table, i64),
    /// `luaL_error(L, "%s", msg)`: the message gets the caller's position.
    Error(Vec<u8>),
    /// `luaL_argerror(L, narg, msg)`.
    ArgError(c_int, Vec<u8>),
    /// `lua_error` with the message as is (errors raised by the Lua core).
    RawError(Vec<u8>),
}

/// In a function returning `mlua::Result<Outcome>`: unwrap the `Ok` side of
/// a helper's result, or return its `Err` outcome.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(outcome) => return Ok(outcome),
        }
    };
}

/// Like `tri!`, in a helper returning `mlua::Result<Result<T, E>>`.
macro_rules! bail {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Ok(Err(e)),
        }
    };
}

fn finish(lua: &Lua, out: Outcome) -> mlua::Result<MultiValue> {
    let (code, a, b) = match out {
        Outcome::One(v) => (R_ONE, v, Value::Nil),
        Outcome::Two(a, b) => (R_TWO, a, b),
        Outcome::Many(t, n) => (R_MANY, Value::Table(t), Value::Integer(n)),
        Outcome::Error(m) => (R_ERROR, Value::String(lua.create_string(m)?), Value::Nil),
        Outcome::RawError(m) => (R_RAW_ERROR, Value::String(lua.create_string(m)?), Value::Nil),
        Outcome::ArgError(n, m) => (R_ARG_ERROR, Value::Integer(n as i64), Value::String(lua.create_string(m)?)),
    };
    Ok(MultiValue::from_vec(vec![Value::Integer(code), a, b]))
}

/// The C function scripts actually call.  Upvalue 1 is the Rust
/// implementation; it is called with all arguments and returns
/// `(code, a, b)`, which is turned into results or a Lua error here, in a C
/// frame standing exactly where the original C function stood.  No Rust value
/// with a destructor lives in this frame, so the `longjmp` of a Lua error
/// leaves nothing behind.
unsafe extern "C-unwind" fn trampoline(state: *mut ffi::lua_State) -> c_int {
    unsafe {
        let nargs = ffi::lua_gettop(state);
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(1));
        ffi::lua_insert(state, 1);
        ffi::lua_call(state, nargs, 3);
        match ffi::lua_tointeger(state, 1) {
            R_ONE => {
                ffi::lua_settop(state, 2);
                1
            }
            R_TWO => {
                ffi::lua_remove(state, 1);
                2
            }
            R_MANY => {
                let n = ffi::lua_tointeger(state, 3).clamp(0, LUAI_MAXCSTACK) as c_int;
                ffi::lua_settop(state, 2);
                ffi::lua_replace(state, 1);
                if ffi::lua_checkstack(state, n) == 0 {
                    return ffi::luaL_error(state, c"stack overflow (too many results)".as_ptr());
                }
                for i in 1..=n {
                    ffi::lua_rawgeti(state, 1, i as _);
                }
                n
            }
            R_ERROR => ffi::luaL_error(state, c"%s".as_ptr(), ffi::lua_tostring(state, 2)),
            R_RAW_ERROR => {
                ffi::lua_settop(state, 2);
                ffi::lua_error(state)
            }
            _ => {
                let narg = ffi::lua_tointeger(state, 2) as c_int;
                ffi::luaL_argerror(state, narg, ffi::lua_tostring(state, 3))
            }
        }
    }
}

/// Create a library function: the Rust implementation `f` behind a
/// [`trampoline`] closure.
fn lib_fn<F>(lua: &Lua, f: F) -> mlua::Result<Function>
where
    F: Fn(&Lua, MultiValue) -> mlua::Result<Outcome> + mlua::MaybeSend + 'static,
{
    let inner = lua.create_function(move |lua, args: MultiValue| {
        let out = f(lua, args)?;
        finish(lua, out)
    })?;
    // SAFETY: the closure only pushes a C closure over the one argument
    // (`inner`) that `exec_raw` placed on the stack.
    unsafe {
        lua.exec_raw::<Function>(inner, |state| {
            ffi::lua_pushcclosure(state, trampoline, 1);
        })
    }
}

/// Bottom entries of a [`ValueStack`] held from Rust.
const HELD: usize = 64;

/// A stack of Lua values, used to walk nested data without Rust recursion.
/// The bottom `HELD` entries are held from Rust; deeper ones are parked in a
/// Lua table: every value held from Rust occupies a slot of mlua's reference
/// stack, which (like a C function's Lua stack) has room for only a few
/// thousand entries, and nesting may be thousands of levels deep.
struct ValueStack {
    held: Vec<Value>,
    parked: Option<Table>,
    len: usize,
}

impl ValueStack {
    fn new() -> Self {
        ValueStack { held: Vec::new(), parked: None, len: 0 }
    }

    fn push(&mut self, lua: &Lua, v: Value) -> mlua::Result<()> {
        if self.len < HELD {
            self.held.push(v);
        } else {
            let parked = match &self.parked {
                Some(t) => t,
                None => self.parked.insert(lua.create_table()?),
            };
            parked.raw_set((self.len - HELD + 1) as i64, v)?;
        }
        self.len += 1;
        Ok(())
    }

    fn pop(&mut self) -> mlua::Result<Value> {
        if self.len == 0 {
            return Ok(Value::Nil);
        }
        self.len -= 1;
        if self.len < HELD {
            return Ok(self.held.pop().unwrap_or(Value::Nil));
        }
        match &self.parked {
            Some(t) => {
                let idx = (self.len - HELD + 1) as i64;
                let v = t.raw_get(idx)?;
                t.raw_set(idx, Value::Nil)?;
                Ok(v)
            }
            None => Ok(Value::Nil),
        }
    }

    fn pop_table(&mut self) -> mlua::Result<Option<Table>> {
        Ok(match self.pop()? {
            Value::Table(t) => Some(t),
            _ => None,
        })
    }
}

// ---------------------------------------------------------------------------
// Argument helpers (lauxlib semantics).
// ---------------------------------------------------------------------------

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::Thread(_) => "thread",
        _ => "userdata",
    }
}

/// `luaL_typename` of argument `i` (1-based): "no value" when absent.
fn arg_type_name(args: &MultiValue, i: usize) -> &'static str {
    match args.get(i - 1) {
        Some(v) => type_name(v),
        None => "no value",
    }
}

fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        _ => None,
    }
}

/// `lua_number2integer` on x86-64: a truncating conversion that yields
/// `i64::MIN` for NaN and out-of-range values (`cvttsd2si`).
fn number_to_integer(n: f64) -> i64 {
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

/// A C `(int)` conversion of a double on x86-64 (`INT_MIN` when out of range).
fn number_to_int(n: f64) -> i32 {
    if n.is_nan() || n >= 2_147_483_648.0 || n <= -2_147_483_649.0 {
        i32::MIN
    } else {
        n as i32
    }
}

fn arg_is_none_or_nil(args: &MultiValue, i: usize) -> bool {
    matches!(args.get(i - 1), None | Some(Value::Nil))
}

/// `luaL_checkinteger`.
fn check_integer(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<std::result::Result<i64, Outcome>> {
    let n = match args.get(i - 1) {
        Some(v) => lua.coerce_number(v.clone())?,
        None => None,
    };
    Ok(match n {
        Some(n) => Ok(number_to_integer(n)),
        None => {
            Err(Outcome::ArgError(i as c_int, format!("number expected, got {}", arg_type_name(args, i)).into_bytes()))
        }
    })
}

/// `luaL_checklstring`: strings, and numbers converted the way Lua does.
fn check_lstring(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<std::result::Result<Vec<u8>, Outcome>> {
    let s = match args.get(i - 1) {
        Some(Value::String(s)) => Some(s.as_bytes().to_vec()),
        Some(v @ (Value::Integer(_) | Value::Number(_))) => {
            lua.coerce_string(v.clone())?.map(|s| s.as_bytes().to_vec())
        }
        _ => None,
    };
    Ok(match s {
        Some(s) => Ok(s),
        None => {
            Err(Outcome::ArgError(i as c_int, format!("string expected, got {}", arg_type_name(args, i)).into_bytes()))
        }
    })
}

/// `luaL_optinteger`.
fn opt_integer(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    default: i64,
) -> mlua::Result<std::result::Result<i64, Outcome>> {
    if arg_is_none_or_nil(args, i) {
        return Ok(Ok(default));
    }
    check_integer(lua, args, i)
}

// ---------------------------------------------------------------------------
// Encoding.
// ---------------------------------------------------------------------------

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

/// The message of `luaL_checkstack` failing.
fn stack_overflow(what: &str) -> Outcome {
    Outcome::Error(format!("stack overflow ({what})").into_bytes())
}

fn mp_pack(lua: &Lua, args: MultiValue) -> mlua::Result<Outcome> {
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

// ---------------------------------------------------------------------------
// Decoding.
// ---------------------------------------------------------------------------

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

fn mp_unpack(lua: &Lua, args: MultiValue) -> mlua::Result<Outcome> {
    let slots = args.len() as i64;
    unpack_full(lua, &args, 0, 0, slots)
}

fn mp_unpack_one(lua: &Lua, args: MultiValue) -> mlua::Result<Outcome> {
    let offset = tri!(opt_integer(lua, &args, 2, 0)?);
    unpack_full(lua, &args, 1, offset, args.len().min(1) as i64)
}

fn mp_unpack_limit(lua: &Lua, args: MultiValue) -> mlua::Result<Outcome> {
    let limit = tri!(check_integer(lua, &args, 2)?);
    let offset = tri!(opt_integer(lua, &args, 3, 0)?);
    unpack_full(lua, &args, limit, offset, args.len().min(1) as i64)
}

/// Install the library as the global table `cmsgpack`.
pub fn install(lua: &mlua::Lua) -> mlua::Result<()> {
    let module = lua.create_table()?;
    module.raw_set("pack", lib_fn(lua, mp_pack)?)?;
    module.raw_set("unpack", lib_fn(lua, mp_unpack)?)?;
    module.raw_set("unpack_one", lib_fn(lua, mp_unpack_one)?)?;
    module.raw_set("unpack_limit", lib_fn(lua, mp_unpack_limit)?)?;
    module.raw_set("_NAME", LUACMSGPACK_NAME)?;
    module.raw_set("_VERSION", LUACMSGPACK_VERSION)?;
    module.raw_set("_COPYRIGHT", LUACMSGPACK_COPYRIGHT)?;
    module.raw_set("_DESCRIPTION", LUACMSGPACK_DESCRIPTION)?;
    lua.globals().raw_set(LUACMSGPACK_NAME, module)
}

#[cfg(test)]
#[path = "cmsgpack_tests.rs"]
mod tests;
