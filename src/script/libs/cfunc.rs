//! The calling convention the Lua libraries written in Rust share (`cjson`,
//! `cmsgpack`): each library function is a small C closure (`trampoline`)
//! around a Rust implementation that only computes an [`Outcome`]; the
//! trampoline turns it into results, `luaL_error` (message prefixed with the
//! caller's `chunk:line:`) or `luaL_argerror` (`bad argument #n to 'name'`),
//! in a C frame standing where the original C function stood, so errors reach
//! scripts as the same strings as with the C libraries. Also here: lauxlib's
//! argument checks, C's number conversions, and [`ValueStack`] for walking
//! nested data without Rust recursion. Declared first in `libs`, so the
//! `tri!`/`bail!` macros are in scope in every library after it.

use std::ffi::c_int;

use mlua::{ffi, Function, Lua, MultiValue, Table, Value};

/// Lua 5.1's `LUAI_MAXCSTACK`: the most stack slots one C function may use.
pub(super) const LUAI_MAXCSTACK: i64 = 8000;

/// Result codes passed from a Rust implementation to [`trampoline`].
const R_ONE: i64 = 0;
const R_MANY: i64 = 1;
const R_ERROR: i64 = 2;
const R_RAW_ERROR: i64 = 3;
const R_ARG_ERROR: i64 = 4;
const R_TWO: i64 = 5;

/// What a library function does, computed by its Rust implementation.
pub(super) enum Outcome {
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
pub(super) fn lib_fn<F>(lua: &Lua, f: F) -> mlua::Result<Function>
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
pub(super) fn stack_overflow(what: &str) -> Outcome {
    Outcome::Error(format!("stack overflow ({what})").into_bytes())
}

/// Bottom entries of a [`ValueStack`] held from Rust.
const HELD: usize = 64;

/// A stack of Lua values, used to walk nested data without Rust recursion.
/// The bottom `HELD` entries are held from Rust; deeper ones are parked in a
/// Lua table: every value held from Rust occupies a slot of mlua's reference
/// stack, which (like a C function's Lua stack) has room for only a few
/// thousand entries, and nesting may be thousands of levels deep.
pub(super) struct ValueStack {
    held: Vec<Value>,
    parked: Option<Table>,
    len: usize,
}

impl ValueStack {
    pub(super) fn new() -> Self {
        ValueStack { held: Vec::new(), parked: None, len: 0 }
    }

    pub(super) fn push(&mut self, lua: &Lua, v: Value) -> mlua::Result<()> {
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

    pub(super) fn pop(&mut self) -> mlua::Result<Value> {
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

    pub(super) fn pop_table(&mut self) -> mlua::Result<Option<Table>> {
        Ok(match self.pop()? {
            Value::Table(t) => Some(t),
            _ => None,
        })
    }
}

pub(super) fn type_name(v: &Value) -> &'static str {
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

pub(super) fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        _ => None,
    }
}

/// `lua_number2integer` on x86-64: a truncating conversion that yields
/// `i64::MIN` for NaN and out-of-range values (`cvttsd2si`).
pub(super) fn number_to_integer(n: f64) -> i64 {
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

/// A C `(int)` conversion of a double on x86-64 (`INT_MIN` when out of range).
pub(super) fn number_to_int(n: f64) -> i32 {
    if n.is_nan() || n >= 2_147_483_648.0 || n <= -2_147_483_649.0 {
        i32::MIN
    } else {
        n as i32
    }
}

pub(super) fn arg_is_none_or_nil(args: &MultiValue, i: usize) -> bool {
    matches!(args.get(i - 1), None | Some(Value::Nil))
}

/// `luaL_checkinteger`.
pub(super) fn check_integer(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<std::result::Result<i64, Outcome>> {
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
pub(super) fn check_lstring(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
) -> mlua::Result<std::result::Result<Vec<u8>, Outcome>> {
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
pub(super) fn opt_integer(
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

/// `luaL_checkoption` without a default.
pub(super) fn check_option(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    options: &[&str],
) -> mlua::Result<std::result::Result<i32, Outcome>> {
    let mut name = bail!(check_lstring(lua, args, i)?);
    // C compares NUL-terminated strings.
    if let Some(p) = name.iter().position(|&b| b == 0) {
        name.truncate(p);
    }
    for (idx, opt) in options.iter().enumerate() {
        if opt.as_bytes() == name.as_slice() {
            return Ok(Ok(idx as i32));
        }
    }
    let mut msg = b"invalid option '".to_vec();
    msg.extend_from_slice(&name);
    msg.push(b'\'');
    Ok(Err(Outcome::ArgError(i as c_int, msg)))
}
