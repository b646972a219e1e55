//! The Lua libraries Redis loads into its scripting sandbox, with Redis's
//! behaviour: `cjson` (lua-cjson), `cmsgpack` (lua-cmsgpack), `bit` (LuaBitOp)
//! and `struct` (Roberto Ierusalimschy's struct). Each installs itself as a
//! global table; the sandbox then makes it read-only. `random` is Redis's
//! `math.random` / `math.randomseed`, installed into `math` by the VM.

// First: its `tri!`/`bail!` macros are used by the libraries after it.
#[macro_use]
mod cfunc;

pub mod bit;
pub mod cjson;
pub mod cmsgpack;
pub mod random;
pub mod structlib;

/// Install every library as a global of `lua`.
pub fn install(lua: &mlua::Lua) -> mlua::Result<()> {
    cjson::install(lua)?;
    cmsgpack::install(lua)?;
    bit::install(lua)?;
    structlib::install(lua)?;
    Ok(())
}
