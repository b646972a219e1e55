//! The `bit` library Redis loads into its Lua sandbox: LuaBitOp 1.0.2 (Mike
//! Pall), as vendored in redis `deps/lua/src/lua_bit.c`, rewritten in Rust.
//!
//! Every operation works on 32-bit integers and returns a signed 32-bit result
//! as a Lua number. A number argument is reduced to 32 bits the way LuaBitOp
//! does it on a double `lua_Number`: add 2^52+2^51 and keep the low 32 bits of
//! the sum's IEEE-754 representation. For integral inputs that is "modulo 2^32";
//! fractions round half to even; values past ±2^51 keep whatever lands in the
//! low mantissa bits (exactly what the C code gives).
//!
//! The functions are plain Lua C functions (`lua_CFunction`) over the raw
//! Lua 5.1 API, so their argument errors are raised by the real
//! `luaL_typerror`/`luaL_argerror`: the message text (`bad argument #1 to
//! 'band' (number expected, got nil)`), the function name taken from the call
//! site, and the error value (a plain Lua string) are the same as in Redis.
//! No Rust value that owns memory is alive when an error is raised.
//!
//! `bit.tohex` carries Redis's fix for CVE-2024-31449: a width of -2^31 is
//! treated as -(2^31-1) (eight uppercase digits) instead of overflowing.

use std::os::raw::c_int;

use mlua::ffi::{self, lua_State};

/// 2^52 + 2^51: adding it to a double leaves the integer part, rounded half to
/// even, in the low bits of the mantissa.
const MAGIC: f64 = 6_755_399_441_055_744.0;

/// The 32 bits LuaBitOp takes from the number `n`.
fn tobits(n: f64) -> u32 {
    // Truncation to the low 32 bits is the point of the trick.
    (n + MAGIC).to_bits() as u32
}

/// The Lua number for a 32-bit result (`BRET`): the bits read as signed.
fn bret(b: u32) -> f64 {
    f64::from(b as i32)
}

/// `tohex`: the low `n` hex digits of `b` (`n` < 0: uppercase, |n| capped at 8).
/// Returns the digit buffer and how many of its bytes to use.
fn hex_digits(mut b: u32, n: i32) -> ([u8; 8], usize) {
    const LOWER: &[u8; 16] = b"0123456789abcdef";
    const UPPER: &[u8; 16] = b"0123456789ABCDEF";
    // Redis's fix: -2^31 cannot be negated, use -(2^31-1).
    let mut n = if n == i32::MIN { i32::MIN + 1 } else { n };
    let mut digits = LOWER;
    if n < 0 {
        n = -n;
        digits = UPPER;
    }
    let len = usize::try_from(n.min(8)).unwrap_or(0);
    let mut buf = [0u8; 8];
    for slot in buf.iter_mut().take(len).rev() {
        *slot = digits[(b & 15) as usize];
        b >>= 4;
    }
    (buf, len)
}

/// `barg`: argument `idx` as 32 bits. `Err(idx)` when it is neither a number
/// nor a string convertible to one (LuaBitOp checks this only when the bits are
/// zero, which is always the case for a non-number, since `lua_tonumber` gives 0).
unsafe fn barg(l: *mut lua_State, idx: c_int) -> Result<u32, c_int> {
    let b = tobits(ffi::lua_tonumber(l, idx));
    if b == 0 && ffi::lua_isnumber(l, idx) == 0 {
        return Err(idx);
    }
    Ok(b)
}

/// Finish a bit function: push the result, or raise LuaBitOp's type error for
/// the bad argument (`number expected, got <type>`).
unsafe fn finish(l: *mut lua_State, r: Result<u32, c_int>) -> c_int {
    match r {
        Ok(b) => {
            ffi::lua_pushnumber(l, bret(b));
            1
        }
        Err(idx) => ffi::luaL_typerror(l, idx, c"number".as_ptr()),
    }
}

unsafe extern "C-unwind" fn bit_tobit(l: *mut lua_State) -> c_int {
    let r = barg(l, 1);
    finish(l, r)
}

unsafe extern "C-unwind" fn bit_bnot(l: *mut lua_State) -> c_int {
    let r = barg(l, 1).map(|b| !b);
    finish(l, r)
}

/// The variadic operations: argument 1 first, then from the last argument down
/// to the second (LuaBitOp's order, which decides which bad argument is named).
unsafe fn fold(l: *mut lua_State, op: fn(u32, u32) -> u32) -> Result<u32, c_int> {
    let mut b = barg(l, 1)?;
    let mut i = ffi::lua_gettop(l);
    while i > 1 {
        b = op(b, barg(l, i)?);
        i -= 1;
    }
    Ok(b)
}

unsafe extern "C-unwind" fn bit_band(l: *mut lua_State) -> c_int {
    let r = fold(l, |a, b| a & b);
    finish(l, r)
}

unsafe extern "C-unwind" fn bit_bor(l: *mut lua_State) -> c_int {
    let r = fold(l, |a, b| a | b);
    finish(l, r)
}

unsafe extern "C-unwind" fn bit_bxor(l: *mut lua_State) -> c_int {
    let r = fold(l, |a, b| a ^ b);
    finish(l, r)
}

/// The shifts and rotations: value from argument 1, count from argument 2
/// reduced to its low 5 bits.
unsafe fn shift(l: *mut lua_State, op: fn(u32, u32) -> u32) -> Result<u32, c_int> {
    let b = barg(l, 1)?;
    let n = barg(l, 2)? & 31;
    Ok(op(b, n))
}

unsafe extern "C-unwind" fn bit_lshift(l: *mut lua_State) -> c_int {
    let r = shift(l, |b, n| b << n);
    finish(l, r)
}

unsafe extern "C-unwind" fn bit_rshift(l: *mut lua_State) -> c_int {
    let r = shift(l, |b, n| b >> n);
    finish(l, r)
}

unsafe extern "C-unwind" fn bit_arshift(l: *mut lua_State) -> c_int {
    let r = shift(l, |b, n| ((b as i32) >> n) as u32);
    finish(l, r)
}

unsafe extern "C-unwind" fn bit_rol(l: *mut lua_State) -> c_int {
    let r = shift(l, u32::rotate_left);
    finish(l, r)
}

unsafe extern "C-unwind" fn bit_ror(l: *mut lua_State) -> c_int {
    let r = shift(l, u32::rotate_right);
    finish(l, r)
}

unsafe extern "C-unwind" fn bit_bswap(l: *mut lua_State) -> c_int {
    let r = barg(l, 1).map(u32::swap_bytes);
    finish(l, r)
}

unsafe extern "C-unwind" fn bit_tohex(l: *mut lua_State) -> c_int {
    let b = match barg(l, 1) {
        Ok(b) => b,
        Err(idx) => return ffi::luaL_typerror(l, idx, c"number".as_ptr()),
    };
    let n = if ffi::lua_type(l, 2) == ffi::LUA_TNONE {
        8
    } else {
        match barg(l, 2) {
            Ok(n) => n as i32,
            Err(idx) => return ffi::luaL_typerror(l, idx, c"number".as_ptr()),
        }
    };
    let (buf, len) = hex_digits(b, n);
    ffi::lua_pushlstring(l, buf.as_ptr().cast(), len);
    1
}

/// The library's functions, in LuaBitOp's registration order (which, with the
/// same table size, gives `pairs(bit)` the same order as in Redis).
const FUNCS: [(&str, ffi::lua_CFunction); 12] = [
    ("tobit", bit_tobit),
    ("bnot", bit_bnot),
    ("band", bit_band),
    ("bor", bit_bor),
    ("bxor", bit_bxor),
    ("lshift", bit_lshift),
    ("rshift", bit_rshift),
    ("arshift", bit_arshift),
    ("rol", bit_rol),
    ("ror", bit_ror),
    ("bswap", bit_bswap),
    ("tohex", bit_tohex),
];

/// Install the library as the global table `bit`.
pub fn install(lua: &mlua::Lua) -> mlua::Result<()> {
    let table = lua.create_table_with_capacity(0, FUNCS.len())?;
    for (name, func) in FUNCS {
        // SAFETY: each function only uses the Lua C API on the state it is
        // called with, and raises errors with no Rust-owned memory alive.
        let func = unsafe { lua.create_c_function(func)? };
        table.raw_set(name, func)?;
    }
    lua.globals().set("bit", table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlua::{Lua, Value};

    fn lua() -> Lua {
        let lua = Lua::new();
        install(&lua).expect("install bit");
        lua
    }

    fn num(lua: &Lua, expr: &str) -> f64 {
        lua.load(format!("return {expr}")).eval::<f64>().expect(expr)
    }

    fn string(lua: &Lua, expr: &str) -> String {
        lua.load(format!("return {expr}")).eval::<String>().expect(expr)
    }

    /// The message of the error `expr` raises, caught by `pcall` in Lua (the raw
    /// error value a script sees). The expression runs in a Lua function on line
    /// 1 of chunk "t", so luaL_error's position prefix is "t:1: "; it is checked
    /// and removed.
    fn err(lua: &Lua, expr: &str) -> String {
        let code = format!(
            "local ok, e = pcall(function() return {expr} end)\n\
             assert(not ok, 'no error')\n\
             assert(type(e) == 'string', 'error is not a string')\n\
             return e"
        );
        let e = lua.load(code).set_name("=t").eval::<String>().expect(expr);
        match e.strip_prefix("t:1: ") {
            Some(msg) => msg.to_string(),
            None => panic!("{expr}: no position prefix in {e:?}"),
        }
    }

    #[test]
    fn scripting_tcl_numerical_sanity() {
        let lua = lua();
        lua.load(
            "assert(0x7fffffff == 2147483647, 'broken hex literals');
             assert(0xffffffff == -1 or 0xffffffff == 2^32-1, 'broken hex literals');
             assert(tostring(-1) == '-1', 'broken tostring()');
             assert(tostring(0xffffffff) == '-1' or tostring(0xffffffff) == '4294967295',
                    'broken tostring()')",
        )
        .exec()
        .expect("sanity");
    }

    #[test]
    fn scripting_tcl_minimal_bitop() {
        let lua = lua();
        lua.load(
            "assert(bit.tobit(1) == 1);
             assert(bit.band(1) == 1);
             assert(bit.bxor(1,2) == 3);
             assert(bit.bor(1,2,4,8,16,32,64,128) == 255)",
        )
        .exec()
        .expect("minimal bitop");
    }

    #[test]
    fn scripting_tcl_tohex_bug() {
        let lua = lua();
        assert_eq!(string(&lua, "bit.tohex(65535, -2147483648)"), "0000FFFF");
    }

    #[test]
    fn tobit_conversion() {
        let lua = lua();
        for (expr, want) in [
            ("bit.tobit(0)", 0.0),
            ("bit.tobit(-1)", -1.0),
            ("bit.tobit(2^31)", -2147483648.0),
            ("bit.tobit(2^31 - 1)", 2147483647.0),
            ("bit.tobit(-2^31)", -2147483648.0),
            ("bit.tobit(-2^31 - 1)", 2147483647.0),
            ("bit.tobit(2^32)", 0.0),
            ("bit.tobit(2^32 + 5)", 5.0),
            ("bit.tobit(2^32 - 1)", -1.0),
            ("bit.tobit(-2^32)", 0.0),
            ("bit.tobit(0xffffffff)", -1.0),
            ("bit.tobit(0x123456789)", 0x23456789 as f64),
            // Fractions round half to even.
            ("bit.tobit(0.5)", 0.0),
            ("bit.tobit(1.5)", 2.0),
            ("bit.tobit(2.5)", 2.0),
            ("bit.tobit(2.6)", 3.0),
            ("bit.tobit(-0.5)", 0.0),
            ("bit.tobit(-1.5)", -2.0),
            ("bit.tobit(-2.5)", -2.0),
            ("bit.tobit(0.49999)", 0.0),
            // Past 2^51 the low mantissa bits are what is left.
            ("bit.tobit(2^51)", 0.0),
            ("bit.tobit(2^52)", 0.0),
            ("bit.tobit(2^53)", 0.0),
            ("bit.tobit(2^53 + 2)", 1.0),
            ("bit.tobit(2^52 + 2)", 1.0),
            ("bit.tobit(-2^52)", 0.0),
            ("bit.tobit(1/0)", 0.0),
            ("bit.tobit(-1/0)", 0.0),
            ("bit.tobit(0/0)", 0.0),
            // Strings that convert are numbers.
            ("bit.tobit('10')", 10.0),
            ("bit.tobit('0x10')", 16.0),
            ("bit.tobit(' 7 ')", 7.0),
        ] {
            assert_eq!(num(&lua, expr), want, "{expr}");
        }
    }

    #[test]
    fn logic_ops() {
        let lua = lua();
        for (expr, want) in [
            ("bit.bnot(0)", -1.0),
            ("bit.bnot(-1)", 0.0),
            ("bit.bnot(2^31)", 2147483647.0),
            ("bit.band(0xff00ff, 0x0ff0f0)", 0x0f00f0 as f64),
            ("bit.band(-1, 2^32 + 3, 7)", 3.0),
            ("bit.bor(2^31, 1)", -2147483647.0),
            ("bit.bxor(-1, 0x0f0f0f0f)", -252645136.0),
            ("bit.bxor(5)", 5.0),
            ("bit.bor(1.5, 0.5)", 2.0),
        ] {
            assert_eq!(num(&lua, expr), want, "{expr}");
        }
    }

    #[test]
    fn shifts_and_rotations() {
        let lua = lua();
        for (expr, want) in [
            ("bit.lshift(1, 0)", 1.0),
            ("bit.lshift(1, 31)", -2147483648.0),
            ("bit.lshift(1, 32)", 1.0),
            ("bit.lshift(1, 33)", 2.0),
            ("bit.lshift(1, -1)", -2147483648.0),
            ("bit.lshift(0x12345678, 4)", 0x23456780 as f64),
            ("bit.rshift(-1, 28)", 15.0),
            ("bit.rshift(-2^31, 31)", 1.0),
            ("bit.rshift(256, 36)", 16.0),
            ("bit.arshift(-256, 4)", -16.0),
            ("bit.arshift(-2^31, 31)", -1.0),
            ("bit.arshift(2^31 - 1, 30)", 1.0),
            ("bit.rol(0x12345678, 12)", 0x45678123 as f64),
            ("bit.rol(0x12345678, 0)", 0x12345678 as f64),
            ("bit.rol(0x12345678, 32)", 0x12345678 as f64),
            ("bit.ror(0x12345678, 12)", 0x67812345 as f64),
            ("bit.ror(1, 1)", -2147483648.0),
            ("bit.ror(0x12345678, 0)", 0x12345678 as f64),
            ("bit.bswap(0x12345678)", 0x78563412 as f64),
            ("bit.bswap(0x80)", -2147483648.0),
            ("bit.bswap(-1)", -1.0),
        ] {
            assert_eq!(num(&lua, expr), want, "{expr}");
        }
    }

    #[test]
    fn tohex() {
        let lua = lua();
        for (expr, want) in [
            ("bit.tohex(1)", "00000001"),
            ("bit.tohex(-1)", "ffffffff"),
            ("bit.tohex(0xdeadbeef)", "deadbeef"),
            ("bit.tohex(0xdeadbeef, -8)", "DEADBEEF"),
            ("bit.tohex(0xdeadbeef, 4)", "beef"),
            ("bit.tohex(0xdeadbeef, -4)", "BEEF"),
            ("bit.tohex(0xdeadbeef, 12)", "deadbeef"),
            ("bit.tohex(0xdeadbeef, -12)", "DEADBEEF"),
            ("bit.tohex(0xdeadbeef, 0)", ""),
            ("bit.tohex(255, 1)", "f"),
            ("bit.tohex(2^32 + 255, 2)", "ff"),
            ("bit.tohex(65535, 2^31)", "0000FFFF"),
            ("bit.tohex(65535, 2^31 - 1)", "0000ffff"),
            ("bit.tohex(65535, 2^32 + 2)", "ff"),
            ("bit.tohex(65535, '-3')", "FFF"),
        ] {
            assert_eq!(string(&lua, expr), want, "{expr}");
        }
    }

    #[test]
    fn argument_errors() {
        let lua = lua();
        for (expr, want) in [
            ("bit.tobit()", "bad argument #1 to 'tobit' (number expected, got no value)"),
            ("bit.tobit(nil)", "bad argument #1 to 'tobit' (number expected, got nil)"),
            ("bit.bnot('x')", "bad argument #1 to 'bnot' (number expected, got string)"),
            ("bit.band({})", "bad argument #1 to 'band' (number expected, got table)"),
            // Arguments after the first are checked from the last one down.
            ("bit.bor(1, 'a', true)", "bad argument #3 to 'bor' (number expected, got boolean)"),
            ("bit.bxor(1, 'a', 2)", "bad argument #2 to 'bxor' (number expected, got string)"),
            ("bit.lshift(1)", "bad argument #2 to 'lshift' (number expected, got no value)"),
            ("bit.rshift(nil, 1)", "bad argument #1 to 'rshift' (number expected, got nil)"),
            ("bit.tohex(1, nil)", "bad argument #2 to 'tohex' (number expected, got nil)"),
            ("bit.tohex()", "bad argument #1 to 'tohex' (number expected, got no value)"),
            ("bit.bswap(function() end)", "bad argument #1 to 'bswap' (number expected, got function)"),
        ] {
            assert_eq!(err(&lua, expr), want, "{expr}");
        }
        // The name comes from the call site, as in Lua's luaL_argerror.
        assert_eq!(
            err(&lua, "(function() local f = bit.arshift; return f(1, {}) end)()"),
            "bad argument #2 to 'f' (number expected, got table)"
        );
        let e: String = lua.load("local ok, e = pcall(bit.rol, 'z', 1) return e").eval().expect("pcall");
        assert_eq!(e, "bad argument #1 to '?' (number expected, got string)");
    }

    #[test]
    fn zero_string_is_a_number() {
        // "0" converts to 0: zero bits, but a number, so no error.
        let lua = lua();
        assert_eq!(num(&lua, "bit.tobit('0')"), 0.0);
        assert_eq!(num(&lua, "bit.band(-1, '0')"), 0.0);
    }

    #[test]
    fn table_shape() {
        let lua = lua();
        let bit: mlua::Table = lua.globals().get("bit").expect("bit");
        let mut names = Vec::new();
        for pair in bit.pairs::<String, Value>() {
            let (k, v) = pair.expect("pair");
            assert!(matches!(v, Value::Function(_)), "{k}");
            names.push(k);
        }
        names.sort();
        assert_eq!(
            names,
            ["arshift", "band", "bnot", "bor", "bswap", "bxor", "lshift", "rol", "ror", "rshift", "tobit", "tohex"]
        );
    }

    #[test]
    fn results_are_signed_32_bit() {
        let lua = lua();
        lua.load(
            "for _, x in ipairs({0, 1, -1, 2^31, 2^32 - 1, 12345.678, -98765.4321, 2^40 + 17}) do
               local r = bit.tobit(x)
               assert(r >= -2^31 and r < 2^31 and r == math.floor(r), tostring(x))
               assert(bit.tobit(r) == r)
               assert(bit.bnot(bit.bnot(x)) == r)
               assert(bit.bswap(bit.bswap(x)) == r)
               assert(bit.ror(bit.rol(x, 7), 7) == r)
               assert(tonumber(bit.tohex(x), 16) == r % 2^32)
             end",
        )
        .exec()
        .expect("round trips");
    }
}
