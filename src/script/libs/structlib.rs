//! The `struct` library Redis loads into its Lua sandbox: Roberto
//! Ierusalimschy's struct.c (v1.4) as vendored in redis
//! `deps/lua/src/lua_struct.c`, with Redis's hardening (integral-size overflow
//! check, `offset must be 1 or greater`, overflow-safe bounds checks, stack
//! check per result, `c0` needing a previous result), rewritten in Rust.
//!
//! `struct.pack(fmt, ...)`, `struct.unpack(fmt, data [, pos])` (the values,
//! then the position after the last byte read) and `struct.size(fmt)`.
//! Format options:
//!
//! * `>` big endian, `<` little endian, `![n]` maximum alignment `n` (default
//!   8, must be a power of 2), ` ` ignored;
//! * `x` one padding byte;
//! * `b`/`B` signed/unsigned char, `h`/`H` short, `l`/`L` long, `T` size_t,
//!   `i[n]`/`I[n]` integers of `n` bytes (default 4, at most 32);
//! * `f` float, `d` double;
//! * `s` zero-terminated string;
//! * `c[n]` `n` chars (default 1); `c0` is the whole string when packing and,
//!   when unpacking, a length taken from the previous value read.
//!
//! Sizes and layout are those of Redis on x86-64 Linux (LP64: long and size_t
//! are 8 bytes, little endian by default). The number conversions reproduce
//! what gcc generates there for the C casts, including out-of-range doubles
//! (`(long)` of a double beyond ±2^63 gives -2^63; `(unsigned long)` of NaN gives
//! 2^63 and of a double ≥ 2^64 gives 0).
//!
//! The functions are Lua C functions over the raw Lua 5.1 API, so their errors
//! are raised by the real `luaL_argerror`/`luaL_typerror`/`luaL_error`: same text,
//! same function name taken from the call site, and a plain Lua string as the
//! error value. Errors are computed as values first and raised once no Rust
//! value that owns memory is alive.

use std::ffi::CStr;
use std::os::raw::c_int;

use mlua::ffi::{self, lua_State};

/// Largest size of an `i`/`I` integer.
const MAXINTSIZE: c_int = 32;
/// Default for `!` without a number: the alignment of a double (x86-64).
const MAXALIGN: c_int = 8;
/// sizeof(long) and sizeof(size_t) on LP64.
const SIZEOF_LONG: u64 = 8;
/// Byte order of the host, the default of every format.
const NATIVE_LITTLE: bool = cfg!(target_endian = "little");

/// A Lua error to raise, described without owning memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fail {
    /// `luaL_typerror`: "bad argument #n to 'f' (T expected, got U)".
    Type(c_int, &'static CStr),
    /// `luaL_argerror` with a fixed message.
    Arg(c_int, &'static CStr),
    /// "invalid format option 'c'" on argument 1.
    BadOption(u8),
    /// "integral size %d is larger than limit of 32".
    SizeLimit(c_int),
    /// "integral size overflow" (a number in the format above INT_MAX).
    SizeOverflow,
    /// "alignment %d is not a power of 2".
    Align(c_int),
    /// "format 'c0' needs a previous size".
    NoPreviousSize,
    /// "unfinished string in data".
    Unfinished,
    /// luaL_checkstack's "stack overflow (too many results)".
    TooManyResults,
}

/// Raise `fail` as a Lua error. Never returns.
unsafe fn raise(l: *mut lua_State, fail: Fail) -> c_int {
    match fail {
        Fail::Type(narg, tname) => ffi::luaL_typerror(l, narg, tname.as_ptr()),
        Fail::Arg(narg, msg) => ffi::luaL_argerror(l, narg, msg.as_ptr()),
        Fail::BadOption(opt) => {
            let msg = ffi::lua_pushfstring(l, c"invalid format option '%c'".as_ptr(), c_int::from(opt));
            ffi::luaL_argerror(l, 1, msg)
        }
        Fail::SizeLimit(size) => {
            ffi::luaL_error(l, c"integral size %d is larger than limit of %d".as_ptr(), size, MAXINTSIZE)
        }
        Fail::SizeOverflow => ffi::luaL_error(l, c"integral size overflow".as_ptr()),
        Fail::Align(a) => ffi::luaL_error(l, c"alignment %d is not a power of 2".as_ptr(), a),
        Fail::NoPreviousSize => ffi::luaL_error(l, c"format 'c0' needs a previous size".as_ptr()),
        Fail::Unfinished => ffi::luaL_error(l, c"unfinished string in data".as_ptr()),
        Fail::TooManyResults => ffi::luaL_error(l, c"stack overflow (%s)".as_ptr(), c"too many results".as_ptr()),
    }
}

// ---------------------------------------------------------------------------
// Arguments, with lauxlib's semantics but returning the error instead of
// raising it.

/// `luaL_checknumber`.
unsafe fn check_number(l: *mut lua_State, narg: c_int) -> Result<f64, Fail> {
    let d = ffi::lua_tonumber(l, narg);
    if d == 0.0 && ffi::lua_isnumber(l, narg) == 0 {
        return Err(Fail::Type(narg, c"number"));
    }
    Ok(d)
}

/// `luaL_checklstring`. The bytes belong to a Lua string anchored in the
/// argument's stack slot, so they stay valid for the whole call (`'a` must not
/// outlive it).
unsafe fn check_bytes<'a>(l: *mut lua_State, narg: c_int) -> Result<&'a [u8], Fail> {
    let mut len = 0usize;
    let p = ffi::lua_tolstring(l, narg, &mut len);
    if p.is_null() {
        return Err(Fail::Type(narg, c"string"));
    }
    Ok(std::slice::from_raw_parts(p.cast::<u8>(), len))
}

/// `luaL_optinteger`.
unsafe fn opt_integer(l: *mut lua_State, narg: c_int, def: i64) -> Result<i64, Fail> {
    if ffi::lua_type(l, narg) <= ffi::LUA_TNIL {
        return Ok(def);
    }
    // The C lua_tointeger (truncating), not mlua's compat version.
    let d = ffi::lua_tointeger_(l, narg);
    if d == 0 && ffi::lua_isnumber(l, narg) == 0 {
        return Err(Fail::Type(narg, c"number"));
    }
    Ok(d)
}

// ---------------------------------------------------------------------------
// C number conversions as compiled by gcc for x86-64.

const TWO_63: f64 = 9_223_372_036_854_775_808.0;

/// `(long)d`: cvttsd2si, which gives i64::MIN for NaN and out-of-range values.
fn c_f64_to_i64(d: f64) -> i64 {
    if (-TWO_63..TWO_63).contains(&d) {
        d as i64
    } else {
        i64::MIN
    }
}

/// `(unsigned long)d`: below 2^63 (or NaN) a plain cvttsd2si, otherwise
/// cvttsd2si of d - 2^63 with the top bit flipped.
fn c_f64_to_u64(d: f64) -> u64 {
    if d.is_nan() || d < TWO_63 {
        c_f64_to_i64(d) as u64
    } else {
        (c_f64_to_i64(d - TWO_63) as u64) ^ (1 << 63)
    }
}

// ---------------------------------------------------------------------------
// Format parsing.

/// Byte order and maximum alignment in effect.
struct Header {
    little: bool,
    align: u64,
}

impl Header {
    fn new() -> Header {
        Header { little: NATIVE_LITTLE, align: 1 }
    }
}

/// A format string being read (C string semantics: it ends at the first NUL).
struct Fmt<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Fmt<'a> {
    fn new(bytes: &'a [u8]) -> Fmt<'a> {
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        Fmt { bytes: bytes.get(..end).unwrap_or(&[]), at: 0 }
    }

    fn next_opt(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn digit(&self) -> Option<i32> {
        self.bytes.get(self.at).filter(|b| b.is_ascii_digit()).map(|b| i32::from(b - b'0'))
    }

    /// `getnum`: the decimal number at the cursor, or `df` if none.
    fn num(&mut self, df: c_int) -> Result<c_int, Fail> {
        if self.digit().is_none() {
            return Ok(df);
        }
        let mut a: i32 = 0;
        while let Some(d) = self.digit() {
            if a > i32::MAX / 10 || a * 10 > i32::MAX - d {
                return Err(Fail::SizeOverflow);
            }
            a = a * 10 + d;
            self.at += 1;
        }
        Ok(a)
    }
}

/// `optsize`: the size of option `opt` (reading its number, if it takes one);
/// 0 for options that are not data.
fn optsize(opt: u8, fmt: &mut Fmt<'_>) -> Result<u64, Fail> {
    Ok(match opt {
        b'B' | b'b' => 1,
        b'H' | b'h' => 2,
        b'L' | b'l' | b'T' => SIZEOF_LONG,
        b'f' => 4,
        b'd' => 8,
        b'x' => 1,
        // getnum never returns a negative number.
        b'c' => u64::try_from(fmt.num(1)?).unwrap_or(0),
        b'i' | b'I' => {
            let size = fmt.num(4)?;
            if size > MAXINTSIZE {
                return Err(Fail::SizeLimit(size));
            }
            u64::try_from(size).unwrap_or(0)
        }
        _ => 0,
    })
}

/// `gettoalign`: padding needed at offset `len` before an item of `size`.
fn gettoalign(len: u64, h: &Header, opt: u8, size: u64) -> u64 {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    let mask = size.wrapping_sub(1);
    size.wrapping_sub(len & mask) & mask
}

/// `controloptions`: endianness, alignment, spaces; anything else is invalid.
fn controloptions(opt: u8, fmt: &mut Fmt<'_>, h: &mut Header) -> Result<(), Fail> {
    match opt {
        b' ' => {}
        b'>' => h.little = false,
        b'<' => h.little = true,
        b'!' => {
            let a = fmt.num(MAXALIGN)?;
            if a <= 0 || (a & (a - 1)) != 0 {
                return Err(Fail::Align(a));
            }
            h.align = u64::try_from(a).unwrap_or(1);
        }
        _ => return Err(Fail::BadOption(opt)),
    }
    Ok(())
}

fn is_integer_opt(opt: u8) -> bool {
    matches!(opt, b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I')
}

// ---------------------------------------------------------------------------
// Integers.

/// `putinteger`: the low `size` bytes of the integer conversion of `n` (bytes
/// past the 8th are zero), in the given order.
fn put_integer(out: &mut Vec<u8>, n: f64, little: bool, size: u64) {
    let mut value = if n < 0.0 { c_f64_to_i64(n) as u64 } else { c_f64_to_u64(n) };
    let mut buf = [0u8; MAXINTSIZE as usize];
    let size = usize::try_from(size).unwrap_or(0).min(buf.len());
    let bytes = &mut buf[..size];
    if little {
        for b in bytes.iter_mut() {
            *b = (value & 0xff) as u8;
            value >>= 8;
        }
    } else {
        for b in bytes.iter_mut().rev() {
            *b = (value & 0xff) as u8;
            value >>= 8;
        }
    }
    out.extend_from_slice(bytes);
}

/// `getinteger`: read `bytes` as an integer (only the last 8 significant bytes
/// survive), sign-extended if `signed`, as a Lua number.
fn get_integer(bytes: &[u8], little: bool, signed: bool) -> f64 {
    let mut l: u64 = 0;
    if little {
        for &b in bytes.iter().rev() {
            l = (l << 8) | u64::from(b);
        }
    } else {
        for &b in bytes {
            l = (l << 8) | u64::from(b);
        }
    }
    if !signed {
        return l as f64;
    }
    // C shifts by size*8-1, which the hardware takes modulo 64 (wrapping_shl
    // does the same), also for sizes above 8 and for size 0.
    let bits = u32::try_from(bytes.len()).unwrap_or(0).wrapping_mul(8).wrapping_sub(1);
    let mask = u64::MAX.wrapping_shl(bits);
    if l & mask != 0 {
        l |= mask;
    }
    (l as i64) as f64
}

// ---------------------------------------------------------------------------
// struct.pack

unsafe fn pack(l: *mut lua_State) -> Result<Vec<u8>, Fail> {
    let mut fmt = Fmt::new(check_bytes(l, 1)?);
    // As struct.c, leave a nil above the arguments: a value the format asks
    // for beyond the last argument is then reported as "got nil".
    ffi::lua_pushnil(l);
    let mut h = Header::new();
    let mut arg: c_int = 2;
    let mut total: u64 = 0;
    let mut out = Vec::new();
    while let Some(opt) = fmt.next_opt() {
        let mut size = optsize(opt, &mut fmt)?;
        let pad = gettoalign(total, &h, opt, size);
        total = total.wrapping_add(pad);
        out.resize(out.len() + usize::try_from(pad).unwrap_or(0), 0);
        match opt {
            _ if is_integer_opt(opt) => {
                let n = check_number(l, arg)?;
                arg = arg.saturating_add(1);
                put_integer(&mut out, n, h.little, size);
            }
            b'x' => out.push(0),
            b'f' => {
                let f = check_number(l, arg)? as f32;
                arg = arg.saturating_add(1);
                out.extend_from_slice(&if h.little { f.to_le_bytes() } else { f.to_be_bytes() });
            }
            b'd' => {
                let d = check_number(l, arg)?;
                arg = arg.saturating_add(1);
                out.extend_from_slice(&if h.little { d.to_le_bytes() } else { d.to_be_bytes() });
            }
            b'c' | b's' => {
                let s = check_bytes(l, arg)?;
                arg = arg.saturating_add(1);
                let len = s.len() as u64;
                if size == 0 {
                    size = len;
                }
                if len < size {
                    // struct.c names the argument after the string (its
                    // counter is already advanced).
                    return Err(Fail::Arg(arg, c"string too short"));
                }
                out.extend_from_slice(s.get(..usize::try_from(size).unwrap_or(0)).unwrap_or(s));
                if opt == b's' {
                    out.push(0);
                    size += 1;
                }
            }
            _ => controloptions(opt, &mut fmt, &mut h)?,
        }
        total = total.wrapping_add(size);
    }
    Ok(out)
}

unsafe extern "C-unwind" fn struct_pack(l: *mut lua_State) -> c_int {
    let fail = match pack(l) {
        Ok(out) => {
            ffi::lua_pushlstring(l, out.as_ptr().cast(), out.len());
            return 1;
        }
        Err(fail) => fail,
    };
    raise(l, fail)
}

// ---------------------------------------------------------------------------
// struct.unpack

/// Is there room in `data` (of length `ld`) for `size` bytes at `pos`?
fn fits(pos: u64, size: u64, ld: u64) -> bool {
    size <= ld && pos <= ld - size
}

/// The `size` bytes of `data` at `pos` (callers check `fits` first).
fn slice(data: &[u8], pos: u64, size: u64) -> &[u8] {
    let start = usize::try_from(pos).unwrap_or(usize::MAX);
    let end = usize::try_from(pos.wrapping_add(size)).unwrap_or(usize::MAX);
    data.get(start..end).unwrap_or(&[])
}

/// Pushes the values read on the Lua stack, above the arguments; returns how
/// many values the function returns.
unsafe fn unpack(l: *mut lua_State) -> Result<c_int, Fail> {
    let mut fmt = Fmt::new(check_bytes(l, 1)?);
    let data = check_bytes(l, 2)?;
    let ld = data.len() as u64;
    // As in C, the offset is taken as a size_t: negative ones pass this check
    // (and then fail the bounds checks).
    let pos1 = opt_integer(l, 3, 1)? as u64;
    if pos1 == 0 {
        return Err(Fail::Arg(3, c"offset must be 1 or greater"));
    }
    let mut pos = pos1 - 1;
    let mut n: c_int = 0;
    let mut h = Header::new();
    while let Some(opt) = fmt.next_opt() {
        let mut size = optsize(opt, &mut fmt)?;
        pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
        if !fits(pos, size, ld) {
            return Err(Fail::Arg(2, c"data string too short"));
        }
        // Room for this value and the final position.
        if ffi::lua_checkstack(l, 2) == 0 {
            return Err(Fail::TooManyResults);
        }
        match opt {
            _ if is_integer_opt(opt) => {
                let signed = opt.is_ascii_lowercase();
                ffi::lua_pushnumber(l, get_integer(slice(data, pos, size), h.little, signed));
                n += 1;
            }
            b'x' => {}
            b'f' => {
                let mut raw = [0u8; 4];
                raw.copy_from_slice(slice(data, pos, 4).get(..4).unwrap_or(&[0; 4]));
                let f = if h.little { f32::from_le_bytes(raw) } else { f32::from_be_bytes(raw) };
                ffi::lua_pushnumber(l, f64::from(f));
                n += 1;
            }
            b'd' => {
                let mut raw = [0u8; 8];
                raw.copy_from_slice(slice(data, pos, 8).get(..8).unwrap_or(&[0; 8]));
                let d = if h.little { f64::from_le_bytes(raw) } else { f64::from_be_bytes(raw) };
                ffi::lua_pushnumber(l, d);
                n += 1;
            }
            b'c' => {
                if size == 0 {
                    // The length is the previous value read (a number, or a
                    // string convertible to one); it is replaced by the chars.
                    if n == 0 || ffi::lua_isnumber(l, -1) == 0 {
                        return Err(Fail::NoPreviousSize);
                    }
                    size = c_f64_to_u64(ffi::lua_tonumber(l, -1));
                    ffi::lua_settop(l, -2);
                    n -= 1;
                    if !fits(pos, size, ld) {
                        return Err(Fail::Arg(2, c"data string too short"));
                    }
                }
                let chars = slice(data, pos, size);
                ffi::lua_pushlstring(l, chars.as_ptr().cast(), chars.len());
                n += 1;
            }
            b's' => {
                let rest = slice(data, pos, ld - pos);
                let Some(zero) = rest.iter().position(|&b| b == 0) else {
                    return Err(Fail::Unfinished);
                };
                ffi::lua_pushlstring(l, rest.as_ptr().cast(), zero);
                size = zero as u64 + 1;
                n += 1;
            }
            _ => controloptions(opt, &mut fmt, &mut h)?,
        }
        pos = pos.wrapping_add(size);
    }
    // size_t position, returned as a lua_Integer.
    ffi::lua_pushinteger(l, pos.wrapping_add(1) as i64);
    Ok(n + 1)
}

unsafe extern "C-unwind" fn struct_unpack(l: *mut lua_State) -> c_int {
    match unpack(l) {
        Ok(results) => results,
        Err(fail) => raise(l, fail),
    }
}

// ---------------------------------------------------------------------------
// struct.size

unsafe fn size(l: *mut lua_State) -> Result<u64, Fail> {
    let mut fmt = Fmt::new(check_bytes(l, 1)?);
    let mut h = Header::new();
    let mut pos: u64 = 0;
    while let Some(opt) = fmt.next_opt() {
        let size = optsize(opt, &mut fmt)?;
        pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
        if opt == b's' {
            return Err(Fail::Arg(1, c"option 's' has no fixed size"));
        } else if opt == b'c' && size == 0 {
            return Err(Fail::Arg(1, c"option 'c0' has no fixed size"));
        }
        // Letters and digits that are not options are skipped here (C's
        // isalnum, "C" locale); other bytes go through controloptions.
        if !opt.is_ascii_alphanumeric() {
            controloptions(opt, &mut fmt, &mut h)?;
        }
        pos = pos.wrapping_add(size);
    }
    Ok(pos)
}

unsafe extern "C-unwind" fn struct_size(l: *mut lua_State) -> c_int {
    match size(l) {
        Ok(pos) => {
            ffi::lua_pushinteger(l, pos as i64);
            1
        }
        Err(fail) => raise(l, fail),
    }
}

/// The library's functions, in struct.c's registration order.
const FUNCS: [(&str, ffi::lua_CFunction); 3] =
    [("pack", struct_pack), ("unpack", struct_unpack), ("size", struct_size)];

/// Install the library as the global table `struct`.
pub fn install(lua: &mlua::Lua) -> mlua::Result<()> {
    let table = lua.create_table_with_capacity(0, FUNCS.len())?;
    for (name, func) in FUNCS {
        // SAFETY: each function only uses the Lua C API on the state it is
        // called with, and raises errors with no Rust-owned memory alive.
        let func = unsafe { lua.create_c_function(func)? };
        table.raw_set(name, func)?;
    }
    lua.globals().set("struct", table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mlua::{Lua, Value};

    fn lua() -> Lua {
        let lua = Lua::new();
        install(&lua).expect("install struct");
        lua
    }

    /// Evaluate `expr` and render every returned value: strings as lowercase
    /// hex in `<>`, numbers with Lua's tostring.
    fn eval(lua: &Lua, expr: &str) -> String {
        let code = format!(
            "local t = {{ {expr} }}
             local n = select('#', {expr})
             local out = {{}}
             for i = 1, n do
               local v = t[i]
               if type(v) == 'string' then
                 out[#out + 1] = '<' .. v:gsub('.', function(c)
                   return string.format('%02x', c:byte()) end) .. '>'
               else
                 out[#out + 1] = tostring(v)
               end
             end
             return table.concat(out, ' ')"
        );
        lua.load(code).eval::<String>().expect(expr)
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
    fn pack_integers() {
        let lua = lua();
        for (expr, want) in [
            ("struct.pack('HH', 1, 2)", "<01000200>"),
            ("struct.pack('>HH', 1, 2)", "<00010002>"),
            ("struct.pack('b', -1)", "<ff>"),
            ("struct.pack('B', 255)", "<ff>"),
            ("struct.pack('B', 256)", "<00>"),
            ("struct.pack('h', -2)", "<feff>"),
            ("struct.pack('>i', 0x01020304)", "<01020304>"),
            ("struct.pack('<i', 0x01020304)", "<04030201>"),
            ("struct.pack('i', -1)", "<ffffffff>"),
            ("struct.pack('I', 2^32)", "<00000000>"),
            ("struct.pack('I', 2^32 - 1)", "<ffffffff>"),
            ("struct.pack('i', 2^31)", "<00000080>"),
            ("struct.pack('>l', -2)", "<fffffffffffffffe>"),
            ("struct.pack('L', 2^63)", "<0000000000000080>"),
            ("struct.pack('L', 2^64)", "<0000000000000000>"),
            ("struct.pack('l', -2^63)", "<0000000000000080>"),
            ("struct.pack('l', -2^64)", "<0000000000000080>"),
            ("struct.pack('L', 0/0)", "<0000000000000080>"),
            ("struct.pack('L', 1/0)", "<0000000000000000>"),
            ("struct.pack('l', -1/0)", "<0000000000000080>"),
            ("struct.pack('T', 1)", "<0100000000000000>"),
            ("struct.pack('i3', 0x010203)", "<030201>"),
            ("struct.pack('>i3', -1)", "<ffffff>"),
            ("struct.pack('i1', 1.9)", "<01>"),
            ("struct.pack('i1', -1.9)", "<ff>"),
            ("struct.pack('i0', 5)", "<>"),
            ("struct.pack('>i10', -1)", "<0000ffffffffffffffff>"),
            ("struct.pack('<I12', 1)", "<010000000000000000000000>"),
            ("struct.pack('i', '12')", "<0c000000>"),
        ] {
            assert_eq!(eval(&lua, expr), want, "{expr}");
        }
    }

    #[test]
    fn pack_floats_strings_padding() {
        let lua = lua();
        for (expr, want) in [
            ("struct.pack('f', 1.5)", "<0000c03f>"),
            ("struct.pack('>f', 1.5)", "<3fc00000>"),
            ("struct.pack('d', 0.1)", "<9a9999999999b93f>"),
            ("struct.pack('>d', -2)", "<c000000000000000>"),
            ("struct.pack('f', 1e300)", "<0000807f>"),
            ("struct.pack('s', 'ab')", "<616200>"),
            ("struct.pack('s', '')", "<00>"),
            ("struct.pack('c', 'xyz')", "<78>"),
            ("struct.pack('c2', 'xyz')", "<7879>"),
            ("struct.pack('c0', 'xyz')", "<78797a>"),
            ("struct.pack('c0', '')", "<>"),
            ("struct.pack('c3', 123)", "<313233>"),
            ("struct.pack('xbx', 7)", "<000700>"),
            ("struct.pack(' < b   > h ', 1, 2)", "<010002>"),
            ("struct.pack('')", "<>"),
            ("struct.pack('b\\0h', 1, 2)", "<01>"),
        ] {
            assert_eq!(eval(&lua, expr), want, "{expr}");
        }
    }

    #[test]
    fn alignment() {
        let lua = lua();
        for (expr, want) in [
            // Default alignment is 1: no padding.
            ("struct.pack('bi', 1, 2)", "<0102000000>"),
            ("struct.pack('!bi', 1, 2)", "<0100000002000000>"),
            ("struct.pack('!4bd', 1, 0)", "<010000000000000000000000>"),
            ("struct.pack('!2bi', 1, 2)", "<010002000000>"),
            ("struct.pack('!bh', 1, 2)", "<01000200>"),
            ("struct.pack('!bc3', 1, 'abc')", "<01616263>"),
            ("struct.pack('!bs', 1, 'a')", "<016100>"),
            ("struct.pack('!8bx', 1)", "<0100>"),
            // Non power-of-2 integer sizes align the way C computes it.
            ("struct.pack('!8bi3', 1, 2)", "<010000020000>"),
            ("struct.unpack('!bi', struct.pack('!bi', -5, -6))", "-5 -6 9"),
            ("struct.size('!bi')", "8"),
            ("struct.size('!bd')", "16"),
            ("struct.size('!4bd')", "12"),
            ("struct.size('!2bd')", "10"),
            ("struct.size('!bhbib')", "13"),
            ("struct.size('!8bi3')", "6"),
        ] {
            let want = want.replace(' ', "");
            let got = eval(&lua, expr).replace(' ', "");
            assert_eq!(got, want, "{expr}");
        }
    }

    #[test]
    fn unpack_values_and_position() {
        let lua = lua();
        for (expr, want) in [
            ("struct.unpack('HH', '\\1\\0\\2\\0')", "1 2 5"),
            ("struct.unpack('>HH', '\\1\\0\\2\\0')", "256 512 5"),
            ("struct.unpack('b', '\\255')", "-1 2"),
            ("struct.unpack('B', '\\255')", "255 2"),
            ("struct.unpack('h', '\\254\\255')", "-2 3"),
            ("struct.unpack('<i', '\\255\\255\\255\\127')", "2147483647 5"),
            ("struct.unpack('<i', '\\0\\0\\0\\128')", "-2147483648 5"),
            ("struct.unpack('<I', '\\0\\0\\0\\128')", "2147483648 5"),
            ("struct.unpack('>i3', '\\255\\255\\254')", "-2 4"),
            ("struct.unpack('>I3', '\\255\\255\\254')", "16777214 4"),
            ("struct.unpack('l', string.rep('\\255', 8))", "-1 9"),
            ("struct.unpack('L', string.rep('\\255', 8))", "1.844674407371e+19 9"),
            ("struct.unpack('T', '\\1\\0\\0\\0\\0\\0\\0\\0')", "1 9"),
            ("struct.unpack('i0', '')", "0 1"),
            ("struct.unpack('I0', 'abc')", "0 1"),
            // Bytes past the 8th: only the last 8 significant ones survive.
            ("struct.unpack('<i10', '\\1\\0\\0\\0\\0\\0\\0\\0\\9\\9')", "1 11"),
            ("struct.unpack('>i10', '\\9\\9\\0\\0\\0\\0\\0\\0\\0\\1')", "1 11"),
            ("struct.unpack('<i9', string.rep('\\255', 9))", "-1 10"),
            ("struct.unpack('<i9', '\\128' .. string.rep('\\0', 8))", "-128 10"),
            ("struct.unpack('<I16', string.rep('\\255', 16))", "1.844674407371e+19 17"),
            ("struct.unpack('f', '\\0\\0\\192\\63')", "1.5 5"),
            ("struct.unpack('>f', '\\63\\192\\0\\0')", "1.5 5"),
            ("struct.unpack('d', struct.pack('d', 0.1))", "0.1 9"),
            ("struct.unpack('>d', struct.pack('>d', -1/0))", "-inf 9"),
            ("struct.unpack('s', 'ab\\0cd')", "<6162> 4"),
            ("struct.unpack('ss', 'ab\\0\\0')", "<6162> <> 5"),
            ("struct.unpack('c2', 'abc')", "<6162> 3"),
            ("struct.unpack('c', 'abc')", "<61> 2"),
            ("struct.unpack('bc0', '\\3abcd')", "<616263> 5"),
            ("struct.unpack('c1c0', '2abcd')", "<6162> 4"),
            ("struct.unpack('xb', '\\1\\2')", "2 3"),
            ("struct.unpack('b', '\\1\\2', 2)", "2 3"),
            ("struct.unpack('', 'abc')", "1"),
            ("struct.unpack('', 'abc', 10)", "10"),
            ("struct.unpack('', 'abc', -5)", "-5"),
            ("struct.unpack(' <>', 'abc', 4)", "4"),
            ("struct.unpack('b', '\\1\\2', 2.9)", "2 3"),
            ("struct.unpack('b', '\\1\\2', '2')", "2 3"),
            ("struct.unpack('b', 5)", "53 2"),
            ("struct.unpack('i\\0garbage', '\\1\\0\\0\\0')", "1 5"),
        ] {
            assert_eq!(eval(&lua, expr), want, "{expr}");
        }
    }

    #[test]
    fn round_trips() {
        let lua = lua();
        lua.load(
            r#"
            local cases = {
              {'b', -128}, {'b', 127}, {'B', 0}, {'B', 255},
              {'h', -32768}, {'H', 65535}, {'>h', -300}, {'<H', 300},
              {'i', -2147483648}, {'I', 4294967295}, {'>i', 123456789},
              {'l', -9007199254740992}, {'L', 9007199254740992}, {'>l', -1},
              {'T', 4096}, {'i1', -1}, {'I2', 513}, {'i3', -8388608}, {'I5', 2^39},
              {'>i7', -2^55}, {'i8', 2^53}, {'I8', 2^63},
              {'f', 0.5}, {'>f', -1234.5}, {'d', math.pi}, {'>d', -1e300}, {'d', 1/0},
              {'s', 'hello'}, {'c5', 'world'}, {'c0', ''},
            }
            for _, c in ipairs(cases) do
              local fmt, v = c[1], c[2]
              local packed = struct.pack(fmt, v)
              if fmt:sub(-1) ~= '0' and fmt ~= 's' then
                assert(#packed == struct.size(fmt), fmt)
              end
              if fmt ~= 'c0' then -- c0 needs a previous value when unpacking
                local got, nextpos = struct.unpack(fmt, packed)
                assert(got == v, fmt .. ': ' .. tostring(got) .. ' ~= ' .. tostring(v))
                assert(nextpos == #packed + 1, fmt)
              end
            end
            -- A mixed record, aligned, read from an offset.
            local fmt = '!<bhc3ids'
            local rec = struct.pack(fmt, -1, 1000, 'abc', -7, 2.25, 'tail')
            local blob = 'XY' .. rec
            local a, b, c, d, e, f, p = struct.unpack(fmt, rec)
            assert(a == -1 and b == 1000 and c == 'abc' and d == -7 and e == 2.25 and f == 'tail')
            assert(p == #rec + 1)
            -- Length-prefixed strings with c0.
            local lp = struct.pack('>Ic0', 5, 'hello')
            local s, q = struct.unpack('>Ic0', lp)
            assert(s == 'hello' and q == 10)
            -- Many values.
            local t = {}
            for i = 1, 200 do t[i] = i end
            local many = struct.pack(string.rep('H', 200), unpack(t))
            local back = {struct.unpack(string.rep('H', 200), many)}
            assert(#back == 201 and back[200] == 200 and back[201] == 401)
            "#,
        )
        .exec()
        .expect("round trips");
    }

    #[test]
    fn size() {
        let lua = lua();
        for (expr, want) in [
            ("struct.size('')", "0"),
            ("struct.size('bBhHlLTfdx')", "43"),
            ("struct.size('i')", "4"),
            ("struct.size('i7I32')", "39"),
            ("struct.size('c10')", "10"),
            ("struct.size('c')", "1"),
            ("struct.size('>< ')", "0"),
            // Letters and digits that are not options are ignored by size.
            ("struct.size('zq9b')", "1"),
        ] {
            assert_eq!(eval(&lua, expr), want, "{expr}");
        }
    }

    #[test]
    fn format_errors() {
        let lua = lua();
        for (expr, want) in [
            ("struct.pack('i33', 1)", "integral size 33 is larger than limit of 32"),
            ("struct.unpack('I64', 'x')", "integral size 64 is larger than limit of 32"),
            ("struct.size('i100')", "integral size 100 is larger than limit of 32"),
            ("struct.pack('i99999999999', 1)", "integral size overflow"),
            ("struct.size('c2147483648')", "integral size overflow"),
            ("struct.pack('!3i', 1)", "alignment 3 is not a power of 2"),
            ("struct.unpack('!0i', 'aaaa')", "alignment 0 is not a power of 2"),
            ("struct.size('!12')", "alignment 12 is not a power of 2"),
            ("struct.pack('z', 1)", "bad argument #1 to 'pack' (invalid format option 'z')"),
            ("struct.pack('y')", "bad argument #1 to 'pack' (invalid format option 'y')"),
            ("struct.unpack('q', 'abc')", "bad argument #1 to 'unpack' (invalid format option 'q')"),
            ("struct.size('#')", "bad argument #1 to 'size' (invalid format option '#')"),
            ("struct.size('s')", "bad argument #1 to 'size' (option 's' has no fixed size)"),
            ("struct.size('c0')", "bad argument #1 to 'size' (option 'c0' has no fixed size)"),
        ] {
            assert_eq!(err(&lua, expr), want, "{expr}");
        }
    }

    #[test]
    fn argument_errors() {
        let lua = lua();
        for (expr, want) in [
            ("struct.pack()", "bad argument #1 to 'pack' (string expected, got no value)"),
            ("struct.pack({})", "bad argument #1 to 'pack' (string expected, got table)"),
            // A missing value reads struct.c's nil marker above the arguments.
            ("struct.pack('i')", "bad argument #2 to 'pack' (number expected, got nil)"),
            ("struct.pack('bs', 1)", "bad argument #3 to 'pack' (string expected, got nil)"),
            ("struct.pack('ii', 1, 'x')", "bad argument #3 to 'pack' (number expected, got string)"),
            ("struct.pack('d', nil)", "bad argument #2 to 'pack' (number expected, got nil)"),
            ("struct.pack('s', {})", "bad argument #2 to 'pack' (string expected, got table)"),
            // The argument after the short string is named (as in struct.c).
            ("struct.pack('c5', 'abc')", "bad argument #3 to 'pack' (string too short)"),
            ("struct.pack('bc5', 1, 'abc')", "bad argument #4 to 'pack' (string too short)"),
            ("struct.unpack('b')", "bad argument #2 to 'unpack' (string expected, got no value)"),
            ("struct.unpack(nil, 'a')", "bad argument #1 to 'unpack' (string expected, got nil)"),
            ("struct.unpack('b', 'a', 'x')", "bad argument #3 to 'unpack' (number expected, got string)"),
            ("struct.unpack('b', 'a', 0)", "bad argument #3 to 'unpack' (offset must be 1 or greater)"),
            ("struct.unpack('b', 'a', 0.5)", "bad argument #3 to 'unpack' (offset must be 1 or greater)"),
            ("struct.unpack('b', 'a', -1)", "bad argument #2 to 'unpack' (data string too short)"),
            ("struct.unpack('i', 'abc')", "bad argument #2 to 'unpack' (data string too short)"),
            ("struct.unpack('b', 'a', 2)", "bad argument #2 to 'unpack' (data string too short)"),
            ("struct.unpack('<', 'a', 3)", "bad argument #2 to 'unpack' (data string too short)"),
            ("struct.unpack('!4bi', 'abcdef')", "bad argument #2 to 'unpack' (data string too short)"),
            ("struct.unpack('c4', 'abc')", "bad argument #2 to 'unpack' (data string too short)"),
            ("struct.unpack('bc0', '\\9abc')", "bad argument #2 to 'unpack' (data string too short)"),
            ("struct.unpack('bc0', '\\255abc')", "bad argument #2 to 'unpack' (data string too short)"),
            ("struct.unpack('c0', 'abc')", "format 'c0' needs a previous size"),
            ("struct.unpack('c0', 'abc', 1)", "format 'c0' needs a previous size"),
            ("struct.unpack('c1c0', 'abc')", "format 'c0' needs a previous size"),
            ("struct.unpack('s', 'abc')", "unfinished string in data"),
            ("struct.unpack('bs', 'a')", "unfinished string in data"),
            ("struct.size()", "bad argument #1 to 'size' (string expected, got no value)"),
        ] {
            assert_eq!(err(&lua, expr), want, "{expr}");
        }
        let e: String = lua.load("local ok, e = pcall(struct.unpack, 'i', 'x') return e").eval().expect("pcall");
        assert_eq!(e, "bad argument #2 to '?' (data string too short)");
    }

    #[test]
    fn padding_pushes_nothing() {
        // `x` reads no value, so any number of them fits the stack.
        let lua = lua();
        assert_eq!(eval(&lua, "struct.unpack(string.rep('x', 10000), string.rep('a', 10000))"), "10001");
    }

    #[test]
    fn stack_limit() {
        let lua = lua();
        // 7990 values fit in Lua 5.1's C stack limit (8000 slots)...
        let n: i64 = lua
            .load("return select('#', struct.unpack(string.rep('b', 7990), string.rep('a', 7990)))")
            .eval()
            .expect("7990 values");
        assert_eq!(n, 7991);
        // ...8000 do not.
        assert_eq!(
            err(&lua, "struct.unpack(string.rep('b', 8000), string.rep('a', 8000))"),
            "stack overflow (too many results)"
        );
    }

    #[test]
    fn table_shape() {
        let lua = lua();
        let t: mlua::Table = lua.globals().get("struct").expect("struct");
        let mut names = Vec::new();
        for pair in t.pairs::<String, Value>() {
            let (k, v) = pair.expect("pair");
            assert!(matches!(v, Value::Function(_)), "{k}");
            names.push(k);
        }
        names.sort();
        assert_eq!(names, ["pack", "size", "unpack"]);
    }

    #[test]
    fn conversions() {
        assert_eq!(c_f64_to_i64(-1.9), -1);
        assert_eq!(c_f64_to_i64(-TWO_63), i64::MIN);
        assert_eq!(c_f64_to_i64(-TWO_63 * 2.0), i64::MIN);
        assert_eq!(c_f64_to_i64(f64::NAN), i64::MIN);
        assert_eq!(c_f64_to_u64(TWO_63), 1 << 63);
        assert_eq!(c_f64_to_u64(TWO_63 * 1.5), 3 << 62);
        assert_eq!(c_f64_to_u64(TWO_63 * 2.0), 0);
        assert_eq!(c_f64_to_u64(f64::INFINITY), 0);
        assert_eq!(c_f64_to_u64(f64::NAN), 1 << 63);
        assert_eq!(c_f64_to_u64(-1.0), u64::MAX);
        assert_eq!(c_f64_to_u64(3.99), 3);
    }
}
