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
//! As in `cjson`, every library function is a C closure (`cfunc`'s trampoline) in
//! front of the Rust implementation, so errors reach scripts as the same
//! strings, with the same `chunk:line:` prefix and `bad argument` wording, as
//! with the C library.  The Lua stack limits the C code runs into
//! (`LUAI_MAXCSTACK`, 8000 slots per C call: number of arguments, values
//! returned, nesting of decoded tables) are reproduced by counting the slots
//! the C code would use, and nested data is walked without Rust recursion
//! where its depth is not bounded.
//!
//! The code is split by operation: `pack` (`cmsgpack.pack`) and `unpack`
//! (`cmsgpack.unpack`, `unpack_one`, `unpack_limit`); the calling convention
//! and the lauxlib helpers are `libs::cfunc`, shared with `cjson`.  This file
//! builds the module table.

use super::cfunc::lib_fn;

const LUACMSGPACK_NAME: &str = "cmsgpack";
const LUACMSGPACK_VERSION: &str = "lua-cmsgpack 0.4.0";
const LUACMSGPACK_COPYRIGHT: &str = "Copyright (C) 2012, Salvatore Sanfilippo";
const LUACMSGPACK_DESCRIPTION: &str = "MessagePack C implementation for Lua";

mod pack;
mod unpack;

use self::pack::mp_pack;
use self::unpack::{mp_unpack, mp_unpack_limit, mp_unpack_one};

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
