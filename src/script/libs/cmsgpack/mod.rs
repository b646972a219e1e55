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
//! As in `cjson`, every library function is a C closure (`trampoline`) in
//! front of the Rust implementation, so errors reach scripts as the same
//! strings, with the same `chunk:line:` prefix and `bad argument` wording, as
//! with the C library.  The Lua stack limits the C code runs into
//! (`LUAI_MAXCSTACK`, 8000 slots per C call: number of arguments, values
//! returned, nesting of decoded tables) are reproduced by counting the slots
//! the C code would use, and nested data is walked without Rust recursion
//! where its depth is not bounded.
//!
//! The code is split by operation: `pack` (`cmsgpack.pack`) and `unpack`
//! (`cmsgpack.unpack`, `unpack_one`, `unpack_limit`).  This file holds what
//! they share, the calling convention and the lauxlib argument helpers, and
//! builds the module table.

use std::ffi::c_int;

use mlua::{ffi, Function, Lua, MultiValue, Table, Value};

/// Lua 5.1's `LUAI_MAXCSTACK`: the most stack slots one C function may use.
const LUAI_MAXCSTACK: i64 = 8000;

const LUACMSGPACK_NAME: &str = "cmsgpack";
const LUACMSGPACK_VERSION: &str = "lua-cmsgpack 0.4.0";
const LUACMSGPACK_COPYRIGHT: &str = "Copyright (C) 2012, Salvatore Sanfilippo";
const LUACMSGPACK_DESCRIPTION: &str = "MessagePack C implementation for Lua";

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

// The operations; declared after `tri!` and `bail!`, which they use.
mod pack;
mod unpack;

use self::pack::mp_pack;
use self::unpack::{mp_unpack, mp_unpack_limit, mp_unpack_one};

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

/// The message of `luaL_checkstack` failing.
fn stack_overflow(what: &str) -> Outcome {
    Outcome::Error(format!("stack overflow ({what})").into_bytes())
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
// The module table.
// ---------------------------------------------------------------------------

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
mod test_util;

#[cfg(test)]
mod tests;
