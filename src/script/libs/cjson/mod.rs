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
//!
//! The code is split by operation: `encode` (`cjson.encode`), `decode`
//! (`cjson.decode`), `number` (the C number formatting and parsing both
//! use) and `config` (the settings and the functions that read and change
//! them); the calling convention and the lauxlib helpers are `libs::cfunc`,
//! shared with `cmsgpack`.  This file builds the module table.

use std::ffi::c_int;
use std::sync::{Arc, Mutex};

use mlua::{ffi, Function, LightUserData, Lua, Table, Value};

use super::cfunc::{lib_fn, Outcome};

const CJSON_MODNAME: &str = "cjson";
const CJSON_VERSION: &str = "2.1.0";

mod config;
mod decode;
mod encode;
mod number;

use self::config::{cfg_encode_sparse_array, cfg_enum, cfg_integer, Config, SharedConfig};
use self::decode::json_decode;
use self::encode::json_encode;

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

// ---------------------------------------------------------------------------
// The module table.
// ---------------------------------------------------------------------------

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
mod test_util;

#[cfg(test)]
mod tests;
