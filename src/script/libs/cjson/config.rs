//! `cjson`'s configuration: the settings each module table carries (shared
//! by `cjson.encode` and `cjson.decode`), and the functions scripts call to
//! read and change them (`encode_sparse_array`, `encode_max_depth`, ...),
//! with lua-cjson's defaults, argument checks and return values.

use std::ffi::c_int;
use std::sync::{Arc, Mutex, MutexGuard};

use mlua::{Lua, MultiValue, Value};

use super::super::cfunc::{arg_is_none_or_nil, check_integer, check_option, Outcome};

// ---------------------------------------------------------------------------
// Configuration.
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
pub(super) struct Config {
    pub(super) encode_sparse_convert: i32,
    pub(super) encode_sparse_ratio: i32,
    pub(super) encode_sparse_safe: i32,
    pub(super) encode_max_depth: i32,
    pub(super) encode_invalid_numbers: i32,
    pub(super) encode_number_precision: i32,
    pub(super) encode_keep_buffer: i32,
    pub(super) decode_invalid_numbers: i32,
    pub(super) decode_max_depth: i32,
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

pub(super) type SharedConfig = Arc<Mutex<Config>>;

pub(super) fn lock(cfg: &SharedConfig) -> MutexGuard<'_, Config> {
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
// The configuration functions.
// ---------------------------------------------------------------------------

fn many(lua: &Lua, values: Vec<Value>) -> mlua::Result<Outcome> {
    let n = values.len() as i64;
    let t = lua.create_table()?;
    for (i, v) in values.into_iter().enumerate() {
        t.raw_set(i as i64 + 1, v)?;
    }
    Ok(Outcome::Many(t, n))
}

pub(super) fn cfg_encode_sparse_array(lua: &Lua, cfg: &SharedConfig, args: MultiValue) -> mlua::Result<Outcome> {
    tri!(arg_init(&args, 3));
    let mut c = lock(cfg);
    let convert = tri!(enum_option(lua, &args, 1, &mut c.encode_sparse_convert, None, 1)?);
    let ratio = tri!(integer_option(lua, &args, 2, &mut c.encode_sparse_ratio, 0, i32::MAX)?);
    let safe = tri!(integer_option(lua, &args, 3, &mut c.encode_sparse_safe, 0, i32::MAX)?);
    drop(c);
    many(lua, vec![convert, ratio, safe])
}

pub(super) fn cfg_integer(
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

pub(super) fn cfg_enum(
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

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
