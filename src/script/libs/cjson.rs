//! The `cjson` Lua library as Redis 7.0 ships it (lua-cjson 2.1.0, vendored in
//! `deps/lua/src/lua_cjson.c` together with `strbuf.c` and `fpconv.c`).
//!
//! Everything observable from a script is reproduced: the output bytes of
//! `cjson.encode` (`%.14g` numbers, `\/` and `\u00XX` escapes, array/object
//! detection with the sparse-array rules, Lua `next()` key order), the values
//! built by `cjson.decode` (strtod number syntax, `cjson.null` for `null`), the
//! configuration functions with their defaults and argument checks, and the
//! exact error texts.
//!
//! Errors are raised the way the C library raises them.  Each library function
//! is a small C closure (`trampoline`) around a Rust implementation: the Rust
//! side only computes an [`Outcome`], and the trampoline turns it into
//! `luaL_error` (message prefixed with the caller's `chunk:line:`),
//! `luaL_argerror` (`bad argument #n to 'name' (...)`, with the name Lua
//! derives from the call site) or plain results.  Errors therefore reach Lua as
//! ordinary strings, exactly as with the C library.
//!
//! The C code checks `lua_checkstack` while it recurses; Lua 5.1 refuses more
//! than `LUAI_MAXCSTACK` (8000) slots for one C call.  The Rust side keeps a
//! count of the slots the C code would be using at each point, so that the
//! nesting errors appear at the same depth, and it walks nested data with an
//! explicit stack instead of Rust recursion.

use std::ffi::c_int;
use std::sync::{Arc, Mutex, MutexGuard};

use mlua::{ffi, Function, LightUserData, Lua, MultiValue, Table, Value};

/// Lua 5.1's `LUAI_MAXCSTACK`: the most stack slots one C function may use.
const LUAI_MAXCSTACK: i64 = 8000;

const CJSON_MODNAME: &str = "cjson";
const CJSON_VERSION: &str = "2.1.0";

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
    /// Return the values `t[1..=n]`.
    Many(Table, i64),
    /// `luaL_error(L, "%s", msg)`: the message gets the caller's position.
    Error(Vec<u8>),
    /// `luaL_argerror(L, narg, msg)`.
    ArgError(c_int, Vec<u8>),
    /// `lua_error` with the message as is (errors raised by the Lua core).
    #[allow(dead_code)]
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

/// `next` without metamethods, callable from Rust to walk a table lazily.
unsafe extern "C-unwind" fn raw_next(state: *mut ffi::lua_State) -> c_int {
    unsafe {
        ffi::lua_settop(state, 2);
        if ffi::lua_type(state, 1) != ffi::LUA_TTABLE {
            return 0;
        }
        if ffi::lua_next(state, 1) != 0 {
            2
        } else {
            0
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

/// `luaL_checkoption` without a default.
fn check_option(
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

// ---------------------------------------------------------------------------
// Configuration.
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct Config {
    encode_sparse_convert: i32,
    encode_sparse_ratio: i32,
    encode_sparse_safe: i32,
    encode_max_depth: i32,
    encode_invalid_numbers: i32,
    encode_number_precision: i32,
    encode_keep_buffer: i32,
    decode_invalid_numbers: i32,
    decode_max_depth: i32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            encode_sparse_convert: 0,
            encode_sparse_ratio: 2,
            encode_sparse_safe: 10,
            encode_max_depth: 1000,
            encode_invalid_numbers: 0,
            encode_number_precision: 14,
            encode_keep_buffer: 1,
            decode_invalid_numbers: 1,
            decode_max_depth: 1000,
        }
    }
}

type SharedConfig = Arc<Mutex<Config>>;

fn lock(cfg: &SharedConfig) -> MutexGuard<'_, Config> {
    cfg.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `json_arg_init`: at most `n` arguments.
fn arg_init(args: &MultiValue, n: usize) -> std::result::Result<(), Outcome> {
    if args.len() > n {
        return Err(Outcome::ArgError((n + 1) as c_int, b"found too many arguments".to_vec()));
    }
    Ok(())
}

/// `json_integer_option`.
fn integer_option(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    setting: &mut i32,
    min: i32,
    max: i32,
) -> mlua::Result<std::result::Result<Value, Outcome>> {
    if !arg_is_none_or_nil(args, i) {
        // C stores the lua_Integer into an int.
        let value = bail!(check_integer(lua, args, i)?) as i32;
        if !(min <= value && value <= max) {
            return Ok(Err(Outcome::ArgError(1, format!("expected integer between {min} and {max}").into_bytes())));
        }
        *setting = value;
    }
    Ok(Ok(Value::Integer(*setting as i64)))
}

/// `json_enum_option`; `options == None` means the boolean options off/on.
fn enum_option(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    setting: &mut i32,
    options: Option<&[&str]>,
    bool_true: i32,
) -> mlua::Result<std::result::Result<Value, Outcome>> {
    const BOOL_OPTIONS: &[&str] = &["off", "on"];
    let (options, bool_true) = match options {
        Some(o) => (o, bool_true),
        None => (BOOL_OPTIONS, 1),
    };
    if !arg_is_none_or_nil(args, i) {
        match args.get(i - 1) {
            Some(Value::Boolean(b)) if bool_true != 0 => *setting = (*b as i32) * bool_true,
            _ => match check_option(lua, args, i, options)? {
                Ok(v) => *setting = v,
                Err(o) => return Ok(Err(o)),
            },
        }
    }
    if bool_true != 0 && (*setting == 0 || *setting == bool_true) {
        Ok(Ok(Value::Boolean(*setting != 0)))
    } else {
        let name = options.get(*setting as usize).copied().unwrap_or("");
        Ok(Ok(Value::String(lua.create_string(name)?)))
    }
}

// ---------------------------------------------------------------------------
// Number formatting and parsing (C library semantics).
// ---------------------------------------------------------------------------

/// Append `num` formatted like C's `printf("%.<prec>g", num)` (glibc).
fn format_g(out: &mut Vec<u8>, num: f64, prec: usize) {
    let prec = prec.max(1);
    if num.is_nan() {
        out.extend_from_slice(if num.is_sign_negative() { b"-nan" } else { b"nan" });
        return;
    }
    if num.is_sign_negative() {
        out.push(b'-');
    }
    let a = num.abs();
    if a.is_infinite() {
        out.extend_from_slice(b"inf");
        return;
    }
    if a == 0.0 {
        out.push(b'0');
        return;
    }
    // Correctly rounded scientific form with `prec` significant digits.
    let sci = format!("{:.*e}", prec - 1, a);
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (sci.as_str(), 0),
    };
    let digits: Vec<u8> = mantissa.bytes().filter(|b| b.is_ascii_digit()).collect();
    if exp < -4 || exp >= prec as i32 {
        out.push(digits.first().copied().unwrap_or(b'0'));
        let frac = strip_zeros(&digits[1..]);
        if !frac.is_empty() {
            out.push(b'.');
            out.extend_from_slice(frac);
        }
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push(b'0');
        }
        out.extend_from_slice(e.to_string().as_bytes());
    } else if exp >= 0 {
        let int_len = exp as usize + 1;
        out.extend_from_slice(&digits[..int_len]);
        let frac = strip_zeros(&digits[int_len..]);
        if !frac.is_empty() {
            out.push(b'.');
            out.extend_from_slice(frac);
        }
    } else {
        out.extend_from_slice(b"0.");
        for _ in 0..(-exp - 1) {
            out.push(b'0');
        }
        out.extend_from_slice(strip_zeros(&digits));
    }
}

fn strip_zeros(d: &[u8]) -> &[u8] {
    let mut end = d.len();
    while end > 0 && d[end - 1] == b'0' {
        end -= 1;
    }
    &d[..end]
}

/// Byte `i` of a NUL-terminated view of `d` (0 past the end).
#[inline]
fn byte_at(d: &[u8], i: usize) -> u8 {
    d.get(i).copied().unwrap_or(0)
}

/// glibc `strtod` in the C locale, reading `d` from `start` as a
/// NUL-terminated string.  Returns the value and the end position; the end
/// equals `start` when no number could be read.
fn strtod(d: &[u8], start: usize) -> (f64, usize) {
    let at = |i: usize| byte_at(d, i);
    let lower = |i: usize| byte_at(d, i).to_ascii_lowercase();
    let mut p = start;
    while matches!(at(p), b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        p += 1;
    }
    let mut neg = false;
    if at(p) == b'+' || at(p) == b'-' {
        neg = at(p) == b'-';
        p += 1;
    }
    let sign = |v: f64| if neg { -v } else { v };
    let matches_ci = |pos: usize, word: &[u8]| word.iter().enumerate().all(|(k, &c)| lower(pos + k) == c);
    if matches_ci(p, b"inf") {
        p += 3;
        if matches_ci(p, b"inity") {
            p += 5;
        }
        return (sign(f64::INFINITY), p);
    }
    if matches_ci(p, b"nan") {
        p += 3;
        if at(p) == b'(' {
            let mut q = p + 1;
            while at(q).is_ascii_alphanumeric() || at(q) == b'_' {
                q += 1;
            }
            if at(q) == b')' {
                p = q + 1;
            }
        }
        return (sign(f64::NAN), p);
    }
    if at(p) == b'0' && lower(p + 1) == b'x' {
        return match parse_hex_float(d, p + 2) {
            Some((v, end)) => (sign(v), end),
            None => (sign(0.0), p + 1),
        };
    }
    // Decimal: digits [. digits] [e [sign] digits]
    let int_start = p;
    while at(p).is_ascii_digit() {
        p += 1;
    }
    let int_digits = &d[int_start.min(d.len())..p.min(d.len())];
    let mut frac_digits: &[u8] = &[];
    if at(p) == b'.' {
        let q = p + 1;
        let mut r = q;
        while at(r).is_ascii_digit() {
            r += 1;
        }
        if !int_digits.is_empty() || r > q {
            frac_digits = &d[q.min(d.len())..r.min(d.len())];
            p = r;
        }
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return (0.0, start);
    }
    let mut exp: i64 = 0;
    if lower(p) == b'e' {
        let mut q = p + 1;
        let mut eneg = false;
        if at(q) == b'+' || at(q) == b'-' {
            eneg = at(q) == b'-';
            q += 1;
        }
        let es = q;
        while at(q).is_ascii_digit() {
            exp = (exp * 10 + (at(q) - b'0') as i64).min(1_000_000_000);
            q += 1;
        }
        if q > es {
            if eneg {
                exp = -exp;
            }
            p = q;
        } else {
            exp = 0;
        }
    }
    let mut text = String::with_capacity(int_digits.len() + frac_digits.len() + 16);
    if int_digits.is_empty() {
        text.push('0');
    } else {
        text.push_str(std::str::from_utf8(int_digits).unwrap_or("0"));
    }
    if !frac_digits.is_empty() {
        text.push('.');
        text.push_str(std::str::from_utf8(frac_digits).unwrap_or("0"));
    }
    text.push('e');
    text.push_str(&exp.to_string());
    let v = text.parse::<f64>().unwrap_or(0.0);
    (sign(v), p)
}

fn hex_value(c: u8) -> Option<u64> {
    (c as char).to_digit(16).map(|v| v as u64)
}

/// The part of a hexadecimal float after `0x`; `None` when no hex digit
/// follows (strtod then reads just the `0`).
fn parse_hex_float(d: &[u8], start: usize) -> Option<(f64, usize)> {
    let at = |i: usize| byte_at(d, i);
    let mut q = start;
    let mut mant: u64 = 0;
    let mut exp2: i64 = 0;
    let mut sticky = false;
    let mut any = false;
    let mut add = |digit: u64, frac: bool, mant: &mut u64, exp2: &mut i64| {
        if *mant < (1u64 << 60) {
            *mant = *mant * 16 + digit;
            if frac {
                *exp2 -= 4;
            }
        } else {
            if digit != 0 {
                sticky = true;
            }
            if !frac {
                *exp2 += 4;
            }
        }
    };
    while let Some(v) = hex_value(at(q)) {
        any = true;
        add(v, false, &mut mant, &mut exp2);
        q += 1;
    }
    if at(q) == b'.' {
        let mut r = q + 1;
        let mut frac_any = false;
        while let Some(v) = hex_value(at(r)) {
            frac_any = true;
            add(v, true, &mut mant, &mut exp2);
            r += 1;
        }
        if any || frac_any {
            any = true;
            q = r;
        }
    }
    if !any {
        return None;
    }
    if at(q) == b'p' || at(q) == b'P' {
        let mut r = q + 1;
        let mut neg = false;
        if at(r) == b'+' || at(r) == b'-' {
            neg = at(r) == b'-';
            r += 1;
        }
        let es = r;
        let mut e: i64 = 0;
        while at(r).is_ascii_digit() {
            e = (e * 10 + (at(r) - b'0') as i64).min(1_000_000_000);
            r += 1;
        }
        if r > es {
            exp2 += if neg { -e } else { e };
            q = r;
        }
    }
    Some((compose_f64(mant, sticky, exp2), q))
}

/// The double nearest to `(mant + tiny) * 2^exp` (ties to even), where
/// `sticky` says whether non-zero bits were dropped below `mant`.
fn compose_f64(mant: u64, sticky: bool, exp: i64) -> f64 {
    if mant == 0 {
        return 0.0;
    }
    let top = 63 - mant.leading_zeros() as i64;
    let mut msb_exp = top + exp;
    if msb_exp > 1023 {
        return f64::INFINITY;
    }
    let lsb_exp = if msb_exp >= -1022 { msb_exp - 52 } else { -1074 };
    let shift = lsb_exp - exp;
    let m = mant as u128;
    let mut kept: u128 = if shift <= 0 {
        m << ((-shift) as u32)
    } else if shift >= 127 {
        0
    } else {
        let kept = m >> shift;
        let rem = m & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if rem > half || (rem == half && (sticky || kept & 1 == 1)) {
            kept + 1
        } else {
            kept
        }
    };
    if msb_exp >= -1022 {
        if kept == 1u128 << 53 {
            kept >>= 1;
            msb_exp += 1;
            if msb_exp > 1023 {
                return f64::INFINITY;
            }
        }
        let bits = (((msb_exp + 1023) as u64) << 52) | ((kept as u64) & ((1u64 << 52) - 1));
        f64::from_bits(bits)
    } else {
        // Subnormal (a carry into bit 52 yields the smallest normal).
        f64::from_bits(kept as u64)
    }
}

// ---------------------------------------------------------------------------
// Encoding.
// ---------------------------------------------------------------------------

/// `char2escape`: the JSON text for each byte, `None` for "as is".
fn escape_of(b: u8) -> Option<&'static [u8]> {
    const CTRL: [&[u8]; 32] = [
        b"\\u0000", b"\\u0001", b"\\u0002", b"\\u0003", b"\\u0004", b"\\u0005", b"\\u0006", b"\\u0007", b"\\b", b"\\t",
        b"\\n", b"\\u000b", b"\\f", b"\\r", b"\\u000e", b"\\u000f", b"\\u0010", b"\\u0011", b"\\u0012", b"\\u0013",
        b"\\u0014", b"\\u0015", b"\\u0016", b"\\u0017", b"\\u0018", b"\\u0019", b"\\u001a", b"\\u001b", b"\\u001c",
        b"\\u001d", b"\\u001e", b"\\u001f",
    ];
    match b {
        0..=31 => Some(CTRL[b as usize]),
        b'"' => Some(b"\\\""),
        b'/' => Some(b"\\/"),
        b'\\' => Some(b"\\\\"),
        127 => Some(b"\\u007f"),
        _ => None,
    }
}

fn append_string(out: &mut Vec<u8>, s: &[u8]) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    for &b in s {
        match escape_of(b) {
            Some(e) => out.extend_from_slice(e),
            None => out.push(b),
        }
    }
    out.push(b'"');
}

/// `json_append_number` (the value is always of type number).
fn append_number(cfg: &Config, out: &mut Vec<u8>, num: f64) -> std::result::Result<(), Vec<u8>> {
    match cfg.encode_invalid_numbers {
        0 => {
            if !num.is_finite() {
                return Err(b"Cannot serialise number: must not be NaN or Inf".to_vec());
            }
        }
        1 => {
            if num.is_nan() {
                out.extend_from_slice(b"nan");
                return Ok(());
            }
        }
        _ => {
            if !num.is_finite() {
                out.extend_from_slice(b"null");
                return Ok(());
            }
        }
    }
    format_g(out, num, cfg.encode_number_precision.clamp(1, 14) as usize);
    Ok(())
}

/// Where the encoder stands in a table being written.
enum EncodeFrame {
    Array { len: i64, next: i64, depth: i32, slots: i64 },
    Object { first: bool, depth: i32, slots: i64 },
}

/// The open tables of the encoder: the innermost table and its current key,
/// and the enclosing ones on value stacks.
struct EncodeStack {
    frames: Vec<EncodeFrame>,
    tables: ValueStack,
    keys: ValueStack,
    top: Option<Table>,
    key: Value,
}

impl EncodeStack {
    fn push(&mut self, lua: &Lua, table: Table, frame: EncodeFrame) -> mlua::Result<()> {
        if let Some(outer) = self.top.take() {
            self.tables.push(lua, Value::Table(outer))?;
            self.keys.push(lua, std::mem::take(&mut self.key))?;
        }
        self.frames.push(frame);
        self.top = Some(table);
        Ok(())
    }

    fn pop(&mut self) -> mlua::Result<()> {
        self.frames.pop();
        self.top = None;
        self.key = Value::Nil;
        if !self.frames.is_empty() {
            self.top = self.tables.pop_table()?;
            self.key = self.keys.pop()?;
        }
        Ok(())
    }
}

struct Encoder<'a> {
    lua: &'a Lua,
    cfg: Config,
    next: &'a Function,
    out: Vec<u8>,
}

type EncodeResult = mlua::Result<std::result::Result<(), Vec<u8>>>;

impl Encoder<'_> {
    /// `lua_array_length`: `Ok(n > 0)` array of n items, `Ok(<= 0)` object.
    fn array_length(&self, table: &Table) -> mlua::Result<std::result::Result<i32, Vec<u8>>> {
        let mut max: i32 = 0;
        let mut items: i32 = 0;
        let mut object = false;
        let res = table.for_each::<Value, Value>(|k, _| {
            if let Some(k) = as_number(&k) {
                if k != 0.0 && k.floor() == k && k >= 1.0 {
                    if k > max as f64 {
                        max = number_to_int(k);
                    }
                    items = items.wrapping_add(1);
                    return Ok(());
                }
            }
            object = true;
            Err(mlua::Error::runtime("stop"))
        });
        if object {
            return Ok(Ok(-1));
        }
        res?;
        let cfg = &self.cfg;
        if cfg.encode_sparse_ratio > 0
            && max > items.wrapping_mul(cfg.encode_sparse_ratio)
            && max > cfg.encode_sparse_safe
        {
            if cfg.encode_sparse_convert == 0 {
                return Ok(Err(b"Cannot serialise table: excessively sparse array".to_vec()));
            }
            return Ok(Ok(-1));
        }
        Ok(Ok(max))
    }

    /// `json_append_data` for a value whose container is at `depth`; `slots`
    /// is the Lua stack height the C encoder has with the value on top.
    /// Tables are opened and pushed on `stack` for the main loop to fill.
    fn value(&mut self, v: Value, depth: i32, slots: i64, stack: &mut EncodeStack) -> EncodeResult {
        match v {
            Value::String(s) => append_string(&mut self.out, &s.as_bytes()),
            Value::Integer(i) => bail!(append_number(&self.cfg, &mut self.out, i as f64)),
            Value::Number(n) => bail!(append_number(&self.cfg, &mut self.out, n)),
            Value::Boolean(true) => self.out.extend_from_slice(b"true"),
            Value::Boolean(false) => self.out.extend_from_slice(b"false"),
            Value::Nil => self.out.extend_from_slice(b"null"),
            Value::LightUserData(p) if p.0.is_null() => self.out.extend_from_slice(b"null"),
            Value::Table(table) => {
                let depth = depth.saturating_add(1);
                // json_check_encode_depth: lua_checkstack(l, 3) included.
                if depth > self.cfg.encode_max_depth || slots + 3 > LUAI_MAXCSTACK {
                    return Ok(Err(format!("Cannot serialise, excessive nesting ({depth})").into_bytes()));
                }
                let len = bail!(self.array_length(&table)?);
                if len > 0 {
                    self.out.push(b'[');
                    let frame = EncodeFrame::Array { len: len as i64, next: 1, depth, slots };
                    stack.push(self.lua, table, frame)?;
                } else {
                    self.out.push(b'{');
                    stack.push(self.lua, table, EncodeFrame::Object { first: true, depth, slots })?;
                }
            }
            other => {
                return Ok(Err(format!("Cannot serialise {}: type not supported", type_name(&other)).into_bytes()))
            }
        }
        Ok(Ok(()))
    }

    fn encode(&mut self, root: Value) -> EncodeResult {
        let mut stack = EncodeStack {
            frames: Vec::new(),
            tables: ValueStack::new(),
            keys: ValueStack::new(),
            top: None,
            key: Value::Nil,
        };
        // json_encode: the argument is the only stack slot.
        bail!(self.value(root, 0, 1, &mut stack)?);
        loop {
            let Some(table) = stack.top.clone() else {
                break;
            };
            match stack.frames.last_mut() {
                None => break,
                Some(EncodeFrame::Array { len, next, depth, slots }) => {
                    if *next > *len {
                        self.out.push(b']');
                        stack.pop()?;
                        continue;
                    }
                    if *next > 1 {
                        self.out.push(b',');
                    }
                    let v: Value = table.raw_get(*next)?;
                    *next += 1;
                    // lua_rawgeti pushed the element.
                    let (depth, slots) = (*depth, *slots + 1);
                    bail!(self.value(v, depth, slots, &mut stack)?);
                }
                Some(EncodeFrame::Object { first, depth, slots }) => {
                    let prev = std::mem::take(&mut stack.key);
                    let mut kv = self.next.call::<MultiValue>((table, prev))?.into_iter();
                    let (k, v) = match (kv.next(), kv.next()) {
                        (Some(k), Some(v)) if !k.is_nil() => (k, v),
                        _ => {
                            self.out.push(b'}');
                            stack.pop()?;
                            continue;
                        }
                    };
                    if !*first {
                        self.out.push(b',');
                    }
                    *first = false;
                    // lua_next pushed the key and the value.
                    let (depth, slots) = (*depth, *slots + 2);
                    match &k {
                        Value::Integer(_) | Value::Number(_) => {
                            self.out.push(b'"');
                            let n = as_number(&k).unwrap_or(0.0);
                            bail!(append_number(&self.cfg, &mut self.out, n));
                            self.out.extend_from_slice(b"\":");
                        }
                        Value::String(s) => {
                            append_string(&mut self.out, &s.as_bytes());
                            self.out.push(b':');
                        }
                        other => {
                            return Ok(Err(format!(
                                "Cannot serialise {}: table key must be a number or string",
                                type_name(other)
                            )
                            .into_bytes()))
                        }
                    }
                    stack.key = k;
                    bail!(self.value(v, depth, slots, &mut stack)?);
                }
            }
        }
        Ok(Ok(()))
    }
}

// ---------------------------------------------------------------------------
// Decoding.
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tok {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    Str,
    Num,
    Bool,
    Null,
    Colon,
    Comma,
    End,
    Error,
}

impl Tok {
    fn name(self) -> &'static str {
        match self {
            Tok::ObjBegin => "T_OBJ_BEGIN",
            Tok::ObjEnd => "T_OBJ_END",
            Tok::ArrBegin => "T_ARR_BEGIN",
            Tok::ArrEnd => "T_ARR_END",
            Tok::Str => "T_STRING",
            Tok::Num => "T_NUMBER",
            Tok::Bool => "T_BOOLEAN",
            Tok::Null => "T_NULL",
            Tok::Colon => "T_COLON",
            Tok::Comma => "T_COMMA",
            Tok::End => "T_END",
            Tok::Error => "T_ERROR",
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Token {
    kind: Tok,
    index: usize,
    number: f64,
    boolean: bool,
    error: &'static str,
}

struct Parser<'a> {
    data: &'a [u8],
    pos: usize,
    cfg: Config,
    /// Decoded text of the last string token.
    tmp: Vec<u8>,
    depth: i32,
}

/// A container being filled while decoding (the tables themselves are kept
/// by `Parser::decode`).
enum DecodeFrame {
    Array { next: i64, slots: i64 },
    Object { key: Vec<u8>, slots: i64 },
}

impl DecodeFrame {
    /// Stack height (C decoder) while parsing a child value.
    fn child_slots(&self) -> i64 {
        match self {
            DecodeFrame::Array { slots, .. } => *slots + 1,
            DecodeFrame::Object { slots, .. } => *slots + 2,
        }
    }
}

fn escape_to_char(c: u8) -> u8 {
    match c {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 8,
        b't' => b'\t',
        b'n' => b'\n',
        b'f' => 12,
        b'r' => b'\r',
        b'u' => b'u',
        _ => 0,
    }
}

impl Parser<'_> {
    fn at(&self, i: usize) -> u8 {
        byte_at(self.data, i)
    }

    fn token(&self, kind: Tok, index: usize) -> Token {
        Token { kind, index, number: 0.0, boolean: false, error: "" }
    }

    fn error_token(&self, error: &'static str) -> Token {
        Token { kind: Tok::Error, index: self.pos, number: 0.0, boolean: false, error }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let mut v = 0u32;
        for k in 0..4 {
            let c = self.at(at + k);
            let d = if c.is_ascii_digit() {
                (c - b'0') as u32
            } else {
                let l = c | 0x20;
                if (b'a'..=b'f').contains(&l) {
                    (l - b'a' + 10) as u32
                } else {
                    return None;
                }
            };
            v = (v << 4) + d;
        }
        Some(v)
    }

    /// `json_append_unicode_escape`, at a `\u`.
    fn unicode_escape(&mut self) -> bool {
        let Some(mut cp) = self.hex4(self.pos + 2) else {
            return false;
        };
        let mut escape_len = 6;
        if cp & 0xF800 == 0xD800 {
            if cp & 0x400 != 0 {
                return false;
            }
            if self.at(self.pos + 6) != b'\\' || self.at(self.pos + 7) != b'u' {
                return false;
            }
            let Some(low) = self.hex4(self.pos + 8) else {
                return false;
            };
            if low & 0xFC00 != 0xDC00 {
                return false;
            }
            cp = (((cp & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
            escape_len = 12;
        }
        if cp <= 0x7F {
            self.tmp.push(cp as u8);
        } else if cp <= 0x7FF {
            self.tmp.push(((cp >> 6) | 0xC0) as u8);
            self.tmp.push(((cp & 0x3F) | 0x80) as u8);
        } else if cp <= 0xFFFF {
            self.tmp.push(((cp >> 12) | 0xE0) as u8);
            self.tmp.push((((cp >> 6) & 0x3F) | 0x80) as u8);
            self.tmp.push(((cp & 0x3F) | 0x80) as u8);
        } else {
            self.tmp.push(((cp >> 18) | 0xF0) as u8);
            self.tmp.push((((cp >> 12) & 0x3F) | 0x80) as u8);
            self.tmp.push((((cp >> 6) & 0x3F) | 0x80) as u8);
            self.tmp.push(((cp & 0x3F) | 0x80) as u8);
        }
        self.pos += escape_len;
        true
    }

    fn string_token(&mut self) -> Token {
        let index = self.pos;
        self.pos += 1; // opening quote
        self.tmp.clear();
        loop {
            let mut ch = self.at(self.pos);
            if ch == b'"' {
                break;
            }
            if ch == 0 {
                return self.error_token("unexpected end of string");
            }
            if ch == b'\\' {
                let esc = escape_to_char(self.at(self.pos + 1));
                if esc == b'u' {
                    if self.unicode_escape() {
                        continue;
                    }
                    return self.error_token("invalid unicode escape code");
                }
                if esc == 0 {
                    return self.error_token("invalid escape code");
                }
                self.pos += 1;
                ch = esc;
            }
            self.tmp.push(ch);
            self.pos += 1;
        }
        self.pos += 1; // closing quote
        self.token(Tok::Str, index)
    }

    /// `json_is_invalid_number`: syntax strtod accepts but JSON does not.
    fn is_invalid_number(&self) -> bool {
        let mut p = self.pos;
        if self.at(p) == b'+' {
            return true;
        }
        if self.at(p) == b'-' {
            p += 1;
        }
        let c = self.at(p);
        if c == b'0' {
            let c2 = self.at(p + 1);
            return (c2 | 0x20) == b'x' || c2.is_ascii_digit();
        } else if (c as i8) <= b'9' as i8 {
            // `char` is signed in the C code: bytes >= 0x80 land here too.
            return false;
        }
        let ci = |k: usize, w: &[u8]| w.iter().enumerate().all(|(j, &x)| self.at(k + j).to_ascii_lowercase() == x);
        ci(p, b"inf") || ci(p, b"nan")
    }

    fn number_token(&mut self) -> Token {
        let index = self.pos;
        let (v, end) = strtod(self.data, self.pos);
        if end == self.pos {
            return self.error_token("invalid number");
        }
        self.pos = end;
        let mut t = self.token(Tok::Num, index);
        t.number = v;
        t
    }

    fn starts_with(&self, w: &[u8]) -> bool {
        w.iter().enumerate().all(|(k, &c)| self.at(self.pos + k) == c)
    }

    fn next_token(&mut self) -> Token {
        while matches!(self.at(self.pos), b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let index = self.pos;
        let ch = self.at(self.pos);
        let single = match ch {
            b'{' => Some(Tok::ObjBegin),
            b'}' => Some(Tok::ObjEnd),
            b'[' => Some(Tok::ArrBegin),
            b']' => Some(Tok::ArrEnd),
            b',' => Some(Tok::Comma),
            b':' => Some(Tok::Colon),
            _ => None,
        };
        if let Some(kind) = single {
            self.pos += 1;
            return self.token(kind, index);
        }
        match ch {
            0 => self.token(Tok::End, index),
            b'"' => self.string_token(),
            b'-' | b'0'..=b'9' => {
                if self.cfg.decode_invalid_numbers == 0 && self.is_invalid_number() {
                    return self.error_token("invalid number");
                }
                self.number_token()
            }
            b'f' | b'i' | b'I' | b'n' | b'N' | b't' | b'+' => {
                if self.starts_with(b"true") {
                    self.pos += 4;
                    let mut t = self.token(Tok::Bool, index);
                    t.boolean = true;
                    t
                } else if self.starts_with(b"false") {
                    self.pos += 5;
                    self.token(Tok::Bool, index)
                } else if self.starts_with(b"null") {
                    self.pos += 4;
                    self.token(Tok::Null, index)
                } else if self.cfg.decode_invalid_numbers != 0 && self.is_invalid_number() {
                    self.number_token()
                } else {
                    self.error_token("invalid token")
                }
            }
            _ => self.error_token("invalid token"),
        }
    }

    fn parse_error(&self, expected: &str, token: &Token) -> Vec<u8> {
        let found = if token.kind == Tok::Error { token.error } else { token.kind.name() };
        format!("Expected {expected} but found {found} at character {}", token.index + 1).into_bytes()
    }

    /// `json_decode_descend`.
    fn descend(&mut self, slots_before: i64, needed: i64) -> std::result::Result<(), Vec<u8>> {
        self.depth = self.depth.saturating_add(1);
        if self.depth <= self.cfg.decode_max_depth && slots_before + needed <= LUAI_MAXCSTACK {
            return Ok(());
        }
        Err(format!("Found too many nested data structures ({}) at character {}", self.depth, self.pos).into_bytes())
    }

    fn decode(&mut self, lua: &Lua) -> mlua::Result<std::result::Result<Value, Vec<u8>>> {
        let mut stack: Vec<DecodeFrame> = Vec::new();
        // The innermost open table, and the enclosing ones.
        let mut top: Option<Table> = None;
        let mut tables = ValueStack::new();
        let mut token = self.next_token();
        'value: loop {
            // json_decode: the JSON text is the only stack slot at the top.
            let slots = stack.last().map_or(1, DecodeFrame::child_slots);
            // json_process_value
            let mut value = match token.kind {
                Tok::Str => Value::String(lua.create_string(&self.tmp)?),
                Tok::Num => Value::Number(token.number),
                Tok::Bool => Value::Boolean(token.boolean),
                Tok::Null => Value::LightUserData(LightUserData(std::ptr::null_mut())),
                Tok::ObjBegin | Tok::ArrBegin => {
                    let object = token.kind == Tok::ObjBegin;
                    bail!(self.descend(slots, if object { 3 } else { 2 }));
                    let table = lua.create_table()?;
                    token = self.next_token();
                    let end = if object { Tok::ObjEnd } else { Tok::ArrEnd };
                    if token.kind == end {
                        self.depth -= 1;
                        Value::Table(table)
                    } else {
                        let frame = if object {
                            if token.kind != Tok::Str {
                                return Ok(Err(self.parse_error("object key string", &token)));
                            }
                            let key = self.tmp.clone();
                            token = self.next_token();
                            if token.kind != Tok::Colon {
                                return Ok(Err(self.parse_error("colon", &token)));
                            }
                            token = self.next_token();
                            DecodeFrame::Object { key, slots }
                        } else {
                            DecodeFrame::Array { next: 1, slots }
                        };
                        stack.push(frame);
                        if let Some(outer) = top.replace(table) {
                            tables.push(lua, Value::Table(outer))?;
                        }
                        continue 'value;
                    }
                }
                _ => return Ok(Err(self.parse_error("value", &token))),
            };
            // Store the finished value in its container; a container whose
            // end token follows is itself a finished value for its parent.
            loop {
                let (Some(frame), Some(table)) = (stack.last_mut(), top.as_ref()) else {
                    token = self.next_token();
                    if token.kind != Tok::End {
                        return Ok(Err(self.parse_error("the end", &token)));
                    }
                    return Ok(Ok(value));
                };
                match frame {
                    DecodeFrame::Array { next, .. } => {
                        table.raw_set(*next, value)?;
                        *next += 1;
                        token = self.next_token();
                        if token.kind != Tok::ArrEnd {
                            if token.kind != Tok::Comma {
                                return Ok(Err(self.parse_error("comma or array end", &token)));
                            }
                            token = self.next_token();
                            continue 'value;
                        }
                    }
                    DecodeFrame::Object { key, .. } => {
                        table.raw_set(lua.create_string(&*key)?, value)?;
                        token = self.next_token();
                        if token.kind != Tok::ObjEnd {
                            if token.kind != Tok::Comma {
                                return Ok(Err(self.parse_error("comma or object end", &token)));
                            }
                            token = self.next_token();
                            if token.kind != Tok::Str {
                                return Ok(Err(self.parse_error("object key string", &token)));
                            }
                            key.clear();
                            key.extend_from_slice(&self.tmp);
                            token = self.next_token();
                            if token.kind != Tok::Colon {
                                return Ok(Err(self.parse_error("colon", &token)));
                            }
                            token = self.next_token();
                            continue 'value;
                        }
                    }
                }
                // The container is complete.
                self.depth -= 1;
                stack.pop();
                value = match top.take() {
                    Some(t) => Value::Table(t),
                    None => Value::Nil,
                };
                if !stack.is_empty() {
                    top = tables.pop_table()?;
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The library functions.
// ---------------------------------------------------------------------------

fn json_encode(lua: &Lua, cfg: &SharedConfig, next: &Function, args: MultiValue) -> mlua::Result<Outcome> {
    if args.len() != 1 {
        return Ok(Outcome::ArgError(1, b"expected 1 argument".to_vec()));
    }
    let cfg = *lock(cfg);
    let mut enc = Encoder { lua, cfg, next, out: Vec::new() };
    let root = args.into_iter().next().unwrap_or(Value::Nil);
    match enc.encode(root)? {
        Ok(()) => Ok(Outcome::One(Value::String(lua.create_string(&enc.out)?))),
        Err(msg) => Ok(Outcome::Error(msg)),
    }
}

fn json_decode(lua: &Lua, cfg: &SharedConfig, args: MultiValue) -> mlua::Result<Outcome> {
    if args.len() != 1 {
        return Ok(Outcome::ArgError(1, b"expected 1 argument".to_vec()));
    }
    let cfg = *lock(cfg);
    let data = tri!(check_lstring(lua, &args, 1)?);
    if data.len() >= 2 && (data[0] == 0 || data[1] == 0) {
        return Ok(Outcome::Error(b"JSON parser does not support UTF-16 or UTF-32".to_vec()));
    }
    let mut parser = Parser { data: &data, pos: 0, cfg, tmp: Vec::new(), depth: 0 };
    match parser.decode(lua)? {
        Ok(v) => Ok(Outcome::One(v)),
        Err(msg) => Ok(Outcome::Error(msg)),
    }
}

fn many(lua: &Lua, values: Vec<Value>) -> mlua::Result<Outcome> {
    let n = values.len() as i64;
    let t = lua.create_table()?;
    for (i, v) in values.into_iter().enumerate() {
        t.raw_set(i as i64 + 1, v)?;
    }
    Ok(Outcome::Many(t, n))
}

fn cfg_encode_sparse_array(lua: &Lua, cfg: &SharedConfig, args: MultiValue) -> mlua::Result<Outcome> {
    tri!(arg_init(&args, 3));
    let mut c = lock(cfg);
    let convert = tri!(enum_option(lua, &args, 1, &mut c.encode_sparse_convert, None, 1)?);
    let ratio = tri!(integer_option(lua, &args, 2, &mut c.encode_sparse_ratio, 0, i32::MAX)?);
    let safe = tri!(integer_option(lua, &args, 3, &mut c.encode_sparse_safe, 0, i32::MAX)?);
    drop(c);
    many(lua, vec![convert, ratio, safe])
}

fn cfg_integer(
    lua: &Lua,
    cfg: &SharedConfig,
    args: MultiValue,
    field: fn(&mut Config) -> &mut i32,
    min: i32,
    max: i32,
) -> mlua::Result<Outcome> {
    tri!(arg_init(&args, 1));
    let mut c = lock(cfg);
    let v = tri!(integer_option(lua, &args, 1, field(&mut c), min, max)?);
    Ok(Outcome::One(v))
}

fn cfg_enum(
    lua: &Lua,
    cfg: &SharedConfig,
    args: MultiValue,
    field: fn(&mut Config) -> &mut i32,
    options: Option<&[&str]>,
) -> mlua::Result<Outcome> {
    tri!(arg_init(&args, 1));
    let mut c = lock(cfg);
    let v = tri!(enum_option(lua, &args, 1, field(&mut c), options, 1)?);
    Ok(Outcome::One(v))
}

/// `lua_cjson_new`: a module table with its own configuration.
fn new_module(lua: &Lua, next: &Function) -> mlua::Result<Table> {
    let cfg: SharedConfig = Arc::new(Mutex::new(Config::default()));
    let module = lua.create_table()?;

    let (c, n) = (cfg.clone(), next.clone());
    module.raw_set("encode", lib_fn(lua, move |lua, args| json_encode(lua, &c, &n, args))?)?;
    let c = cfg.clone();
    module.raw_set("decode", lib_fn(lua, move |lua, args| json_decode(lua, &c, args))?)?;
    let c = cfg.clone();
    module.raw_set("encode_sparse_array", lib_fn(lua, move |lua, args| cfg_encode_sparse_array(lua, &c, args))?)?;
    let c = cfg.clone();
    module.raw_set(
        "encode_max_depth",
        lib_fn(lua, move |lua, args| cfg_integer(lua, &c, args, |c| &mut c.encode_max_depth, 1, i32::MAX))?,
    )?;
    let c = cfg.clone();
    module.raw_set(
        "decode_max_depth",
        lib_fn(lua, move |lua, args| cfg_integer(lua, &c, args, |c| &mut c.decode_max_depth, 1, i32::MAX))?,
    )?;
    let c = cfg.clone();
    module.raw_set(
        "encode_number_precision",
        lib_fn(lua, move |lua, args| cfg_integer(lua, &c, args, |c| &mut c.encode_number_precision, 1, 14))?,
    )?;
    let c = cfg.clone();
    module.raw_set(
        "encode_keep_buffer",
        lib_fn(lua, move |lua, args| cfg_enum(lua, &c, args, |c| &mut c.encode_keep_buffer, None))?,
    )?;
    let c = cfg.clone();
    module.raw_set(
        "encode_invalid_numbers",
        lib_fn(lua, move |lua, args| {
            cfg_enum(lua, &c, args, |c| &mut c.encode_invalid_numbers, Some(&["off", "on", "null"]))
        })?,
    )?;
    let c = cfg.clone();
    module.raw_set(
        "decode_invalid_numbers",
        lib_fn(lua, move |lua, args| cfg_enum(lua, &c, args, |c| &mut c.decode_invalid_numbers, None))?,
    )?;
    let n = next.clone();
    module.raw_set("new", lib_fn(lua, move |lua, _args| Ok(Outcome::One(Value::Table(new_module(lua, &n)?))))?)?;
    module.raw_set("null", Value::LightUserData(LightUserData(std::ptr::null_mut())))?;
    module.raw_set("_NAME", CJSON_MODNAME)?;
    module.raw_set("_VERSION", CJSON_VERSION)?;
    Ok(module)
}

/// Install the library as the global table `cjson`.
pub fn install(lua: &mlua::Lua) -> mlua::Result<()> {
    // SAFETY: `raw_next` follows the Lua C API protocol and checks its
    // argument before calling `lua_next`.
    let next = unsafe { lua.create_c_function(raw_next)? };
    let module = new_module(lua, &next)?;
    lua.globals().raw_set(CJSON_MODNAME, module)
}

#[cfg(test)]
#[path = "cjson_tests.rs"]
mod tests;
