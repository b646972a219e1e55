//! What the `cjson` tests share: an interpreter with the library installed,
//! `eval`, and the runner of the rows recorded from redis-server 7.0.

use mlua::Lua;

use super::install;

/// Line 1 of every test chunk: `S` renders a value as text (strings with
/// `\xx` escapes, numbers with `%.17g`, tables with sorted entries,
/// `NULL` for a NULL light userdata), `P` renders all results of a call,
/// `H` hex-encodes a string.
const SER: &str = r####"local function S(v, d) local t = type(v) if t == 'string' then return 's"' .. (string.gsub(v, '[%z\1-\31\92\127-\255]', function(c) return string.format('\\%02x', string.byte(c)) end)) .. '"' elseif t == 'number' then return 'n' .. string.format('%.17g', v) elseif t == 'table' then if d > 6 then return 'T' end local ks = {} for k, x in pairs(v) do ks[#ks + 1] = S(k, d + 1) .. '=' .. S(x, d + 1) end table.sort(ks) return '{' .. table.concat(ks, ',') .. '}' elseif t == 'userdata' then if tostring(v) == 'userdata: (nil)' then return 'NULL' end return 'U' elseif t == 'boolean' or t == 'nil' then return tostring(v) else return t end end local function P(...) local o = {} for i = 1, select('#', ...) do o[i] = S((select(i, ...)), 0) end return table.concat(o, ' | ') end local function H(s) local t = {} for i = 1, #s do t[i] = string.format('%02x', s:byte(i)) end return table.concat(t) end"####;

pub(super) fn new_lua() -> Lua {
    let lua = Lua::new();
    install(&lua).expect("install cjson");
    lua
}

/// Run `body` the way the recorded rows were produced: as
/// `EVAL "<SER>\nreturn P(pcall(function()\n<body>\nend))" 0`, in a fresh
/// interpreter, chunk name `@user_script` as in Redis 7.0.
fn run(body: &str) -> String {
    let lua = new_lua();
    let src = format!("{SER}\nreturn P(pcall(function()\n{body}\nend))");
    match lua.load(&src).set_name("@user_script").eval::<String>() {
        Ok(s) => s,
        Err(e) => format!("RUST ERROR: {e}"),
    }
}

pub(super) fn eval<T: mlua::FromLuaMulti>(lua: &Lua, src: &str) -> T {
    lua.load(src).set_name("@user_script").eval::<T>().expect(src)
}

/// Check `(body, reply)` rows recorded from redis-server 7.0.15 (Debian
/// 7.0.15-1~deb12u10): `EVAL "<SER>\nreturn P(pcall(function()\n<body>\nend))" 0`,
/// followed by `SCRIPT FLUSH` so that every body starts with the default
/// configuration.  Every row is run; a failure lists all rows that differ.
pub(super) fn check_rows(rows: &[(&str, &str)]) {
    let mut failures = Vec::new();
    for (body, expected) in rows {
        let got = run(body);
        if got != *expected {
            failures.push(format!("body: {body}\n want: {expected}\n  got: {got}"));
        }
    }
    assert!(failures.is_empty(), "{} of {} rows differ:\n{}", failures.len(), rows.len(), failures.join("\n"));
}
