//! The sandboxed Lua VM: one per thread that runs scripts (a thread-local
//! [`Engine`]), holding the compiled EVAL scripts and the loaded function
//! libraries.
//!
//! The sandbox is Redis's: base, table, string and math, plus cjson, cmsgpack,
//! bit and struct; no `print`, `dofile`, `loadfile`, `os`, `io` or `require`.
//! Globals are read-only: a script's environment is an empty proxy whose reads go
//! to the real globals (a missing one is "Script attempted to access nonexistent
//! global variable") and whose writes fail ("Attempt to modify a readonly
//! table"); every library table is such a proxy too. Stock Lua 5.1 has no
//! read-only tables, so `setmetatable`, `getmetatable`, `rawset`, `loadstring`
//! and `load` are wrapped to keep the proxies whole.
//!
//! A run installs, for its duration only, the function `redis.call` reaches (a
//! scoped closure over the caller's [`Host`]), KEYS and ARGV, the `math.random`
//! seed, and an instruction hook that marks the run busy past its threshold and
//! stops it when killed (switching to a per-line hook so `pcall` cannot swallow
//! the kill). Errors raised in a script come back as Redis does it:
//! `<error> script: <name>, on @user_script:<line>.`

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use mlua::{Function, HookTriggers, Lua, LuaOptions, MultiValue, RegistryKey, StdLib, Table, Value, VmState};

use super::convert::{args_from_lua, error_table, lua_to_reply, normalize_error, reply_to_lua};
use super::functions::FunctionMeta;
use super::{parse_shebang, Flags, Host, RunArgs, KILLED};
use crate::protocol::Reply;

/// The Redis version scripts see (`redis.REDIS_VERSION`).
pub use crate::protocol::REDIS_VERSION;
const REDIS_VERSION_NUM: u32 = 0x0007_000f;
/// Instructions between two hook calls while a library loads (Redis's 100000).
const HOOK_EVERY: u32 = 100_000;
/// How long a library's top-level code may run at FUNCTION LOAD.
const LOAD_TIMEOUT: Duration = Duration::from_millis(500);

/// Globals scripts may see (Redis's allow-list), besides the libraries.
const ALLOWED: &[&str] = &[
    "xpcall",
    "tostring",
    "setmetatable",
    "next",
    "assert",
    "tonumber",
    "rawequal",
    "collectgarbage",
    "getmetatable",
    "rawset",
    "pcall",
    "coroutine",
    "type",
    "_G",
    "select",
    "unpack",
    "gcinfo",
    "pairs",
    "rawget",
    "loadstring",
    "ipairs",
    "_VERSION",
    "load",
    "error",
    "string",
    "table",
    "math",
];

/// Kept while the sandbox is built (its wrappers need them), then removed:
/// scripts reaching a function's environment or a userdata could undo the
/// read-only globals (redis-server removes them too).
const BUILD_ONLY: &[&str] = &["getfenv", "setfenv", "newproxy"];

/// The functions `redis.register_function` collects while a library loads.
type Registering = Rc<RefCell<Option<Vec<(FunctionMeta, RegistryKey)>>>>;

/// A library loaded in this VM: its code and its callbacks by lowercase name.
struct Loaded {
    code: Bytes,
    callbacks: HashMap<String, RegistryKey>,
}

/// The run in progress, for `redis.call`: pointers to what [`Engine::run`]
/// holds for exactly as long as `current` is set (creating a scoped callback
/// per run cost more than the script).
#[derive(Clone, Copy)]
struct Current {
    host: std::ptr::NonNull<dyn Host>,
    control: std::ptr::NonNull<super::Control>,
}

/// One thread's VM. See the module doc.
pub struct Engine {
    lua: Lua,
    generation: u64,
    memory_limit: usize,
    scripts: HashMap<String, RegistryKey>,
    libraries: HashMap<String, Loaded>,
    /// The real globals behind the scripts' read-only `_G`.
    real_g: RegistryKey,
    /// The metatable of the functions' `_G` proxy (its `__index` switches
    /// between the library API, while loading, and the globals, while running).
    fn_meta: RegistryKey,
    lib_api: RegistryKey,
    fn_g: RegistryKey,
    fn_env: RegistryKey,
    /// Filled by `redis.register_function` while a library loads.
    registering: Registering,
    /// `runner(f, handler, ...)`: `f(...)` under the error handler.
    runner: RegistryKey,
    /// The error handler of every run (see [`Engine::handler`]).
    handler: RegistryKey,
    /// The run `redis.call` reaches (its function, `raw` in the registry's
    /// `neokv.ctl`, lives as long as the VM), and the run's protocol
    /// (`redis.setresp`).
    current: Rc<Cell<Option<Current>>>,
    resp: Rc<Cell<u8>>,
    /// Set when this run was stopped (SCRIPT KILL, a trial's end).
    killed: Rc<Cell<bool>>,
    /// Lua's own `loadstring`: a compile error's message as bytes.
    loadstring: RegistryKey,
    rng: Rc<RefCell<super::libs::random::Rand48>>,
}

thread_local! {
    static ENGINE: RefCell<Option<Engine>> = const { RefCell::new(None) };
}

/// Run `f` with this thread's engine, (re)creating it when SCRIPT FLUSH bumped
/// `generation` or the memory limit changed.
pub fn with_engine<T>(generation: u64, memory_limit: usize, f: impl FnOnce(&mut Engine) -> T) -> T {
    ENGINE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let stale = slot.as_ref().is_none_or(|e| e.generation != generation || e.memory_limit != memory_limit);
        if stale {
            *slot = None;
            match Engine::new(generation, memory_limit) {
                Ok(e) => *slot = Some(e),
                Err(e) => panic!("the Lua sandbox could not be built: {e}"),
            }
        }
        let engine = slot.as_mut().expect("created above");
        let out = f(engine);
        // A VM near its memory limit is rebuilt rather than left to fail scripts.
        if engine.memory_limit > 0 && engine.lua.used_memory() > engine.memory_limit / 10 * 9 {
            *slot = None;
        }
        out
    })
}

/// Lua code run once per VM: the wrappers that keep the sandbox whole, the
/// parts of `redis.*` written in Lua, and the `pcall` Redis replaces.
const PRELUDE: &str = r#"
local ctl, real_g, protected, api = ...
local error, type, select, rawset, setmetatable, getmetatable, loadstring, load, setfenv, getfenv, tostring =
      error, type, select, rawset, setmetatable, getmetatable, loadstring, load, setfenv, getfenv, tostring
local pcall, unpack, string, next = pcall, unpack, string, next
local function raise(msg) error({err = "ERR " .. msg}) end
local readonly = function() error("Attempt to modify a readonly table", 2) end

-- A read-only view of `t`.
local function proxy(t)
  local p = {}
  local mt = {__index = t, __newindex = readonly}
  mt.__metatable = setmetatable({}, {__index = mt, __newindex = readonly, __metatable = false})
  setmetatable(p, mt)
  protected[p] = t
  return p
end
api.proxy = proxy
-- The unguarded compiler, for the bytes of a compile error.
api.loadstring = loadstring

local function error_reply(...)
  if select('#', ...) ~= 1 or type((...)) ~= 'string' then return {err = "ERR wrong number or type of arguments"} end
  return {err = api.normalize((...))}
end
local function status_reply(...)
  if select('#', ...) ~= 1 or type((...)) ~= 'string' then return {err = "ERR wrong number or type of arguments"} end
  return {ok = (...)}
end

-- The `redis` table of EVAL and of running functions (without the EVAL-only
-- entries), filled by the host with its native functions.
for _, r in ipairs({api.eval_redis, api.fn_redis}) do
  r.error_reply = error_reply
  r.status_reply = status_reply
  r.LOG_DEBUG, r.LOG_VERBOSE, r.LOG_NOTICE, r.LOG_WARNING = 0, 1, 2, 3
  r.REPL_NONE, r.REPL_AOF, r.REPL_SLAVE, r.REPL_REPLICA, r.REPL_ALL = 0, 1, 2, 2, 3
end
api.eval_redis.replicate_commands = function() return true end
api.eval_redis.breakpoint = function() return false end
api.eval_redis.debug = function() end

-- Call f(...) under the error handler h (Lua 5.1's xpcall passes no arguments).
api.runner = function(f, h, ...)
  local a = {n = select('#', ...), ...}
  return xpcall(function() return f(unpack(a, 1, a.n)) end, h)
end

-- Redis replaces pcall: an error table's text comes back as a string (and so
-- does the error of a native function, a string in Redis's C).
real_g.pcall = function(f, ...)
  local r = {pcall(f, ...)}
  if not r[1] and type(r[2]) == 'table' and type(r[2].err) == 'string' then return false, r[2].err end
  if not r[1] and type(r[2]) == 'userdata' then return false, api.error_text(r[2]) end
  return unpack(r, 1, table.maxn(r))
end
-- Refused in the API call itself, with no position (as Redis's C API refuses).
real_g.setmetatable = function(t, mt)
  if protected[t] then error("Attempt to modify a readonly table", 0) end
  return setmetatable(t, mt)
end
real_g.rawset = function(t, k, v)
  if protected[t] then error("Attempt to modify a readonly table", 0) end
  return rawset(t, k, v)
end
-- The table library writes with raw sets, past a view's __newindex. (The
-- locals keep the library's names for its argument errors.)
local insert, remove, sort = table.insert, table.remove, table.sort
table.insert = function(t, ...)
  if protected[t] then error("Attempt to modify a readonly table", 0) end
  return insert(t, ...)
end
table.remove = function(t, ...)
  if protected[t] then error("Attempt to modify a readonly table", 0) end
  return remove(t, ...)
end
table.sort = function(t, ...)
  if protected[t] then error("Attempt to modify a readonly table", 0) end
  return sort(t, ...)
end
-- Reads see through a read-only view to the table behind it, as Redis's
-- read-only tables are the tables themselves.
local rawget = rawget
real_g.rawget = function(t, k)
  local real = protected[t]
  if real ~= nil then return rawget(real, k) end
  return rawget(t, k)
end
local function next_(t, k)
  local real = protected[t]
  if real ~= nil then return next(real, k) end
  return next(t, k)
end
real_g.next = next_
real_g.pairs = function(t) return next_, t, nil end
local string_mt = getmetatable("")
local string_mt_view = proxy(string_mt)
real_g.getmetatable = function(v)
  local mt = getmetatable(v)
  if mt == string_mt then return string_mt_view end
  return mt
end
-- Code loaded by a script runs in the script's environment (the thread's,
-- when a tail call hides the caller), never as bytecode.
local function guard(loader)
  return function(chunk, ...)
    if type(chunk) == 'string' and chunk:byte(1) == 27 then return nil, "binary chunks are not allowed" end
    local f, e = loader(chunk, ...)
    if f then
      -- Levels: getfenv, pcall, this function, its caller.
      local ok, env = pcall(getfenv, 3)
      setfenv(f, ok and env or getfenv(0))
    end
    return f, e
  end
end
real_g.loadstring = guard(loadstring)
real_g.load = guard(load)
"#;

/// The `__index` of the globals: reading a global that does not exist is
/// Redis's error, placed where it was read (as `luaL_error` places it).
fn missing_global(lua: &Lua) -> mlua::Result<Function> {
    lua.create_function(|lua, (_t, k): (Value, Value)| -> mlua::Result<()> {
        let name = match &k {
            Value::String(s) => String::from_utf8_lossy(&s.as_bytes()).into_owned(),
            other => other.to_string()?,
        };
        let at = lua
            .inspect_stack(1, |d| match (d.source().short_src, d.current_line()) {
                (Some(src), Some(line)) => format!("{src}:{line}: "),
                _ => String::new(),
            })
            .unwrap_or_default();
        Err(mlua::Error::RuntimeError(format!("{at}Script attempted to access nonexistent global variable '{name}'")))
    })
}

/// What a library's top-level code sees while it loads: only `redis`, with
/// `register_function`, `log` and its levels, and the version (anything else
/// is a missing global).
fn library_api(lua: &Lua, proxy: &Function, missing: &Function, registering: Registering) -> mlua::Result<Table> {
    let lib_redis = lua.create_table()?;
    install_register(lua, &lib_redis, registering)?;
    install_log(lua, &lib_redis)?;
    for (k, v) in [("LOG_DEBUG", 0), ("LOG_VERBOSE", 1), ("LOG_NOTICE", 2), ("LOG_WARNING", 3)] {
        lib_redis.raw_set(k, v)?;
    }
    lib_redis.raw_set("REDIS_VERSION", REDIS_VERSION)?;
    lib_redis.raw_set("REDIS_VERSION_NUM", REDIS_VERSION_NUM)?;
    let strict = lua.create_table()?;
    strict.raw_set("__index", missing.clone())?;
    lib_redis.set_metatable(Some(strict.clone()))?;
    let lib_api = lua.create_table()?;
    lib_api.raw_set("redis", proxy.call::<Table>(lib_redis)?)?;
    lib_api.set_metatable(Some(strict))?;
    Ok(lib_api)
}

impl Engine {
    fn new(generation: u64, memory_limit: usize) -> mlua::Result<Engine> {
        let lua = Lua::new_with(StdLib::TABLE | StdLib::STRING | StdLib::MATH, LuaOptions::default())?;
        let g = lua.globals();
        // Only Redis's allowed globals stay.
        let names: Vec<String> = g.pairs::<String, Value>().filter_map(|p| p.ok().map(|(k, _)| k)).collect();
        for n in names {
            if !ALLOWED.contains(&n.as_str()) && !BUILD_ONLY.contains(&n.as_str()) {
                g.raw_set(n, Value::Nil)?;
            }
        }
        super::libs::install(&lua)?;
        let rng = Rc::new(RefCell::new(super::libs::random::Rand48::default()));
        super::libs::random::install(&lua, &g, rng.clone())?;

        let ctl = lua.create_table()?;
        let protected = lua.create_table()?;
        let weak = lua.create_table()?;
        weak.raw_set("__mode", "k")?;
        protected.set_metatable(Some(weak))?;
        let api = lua.create_table()?;
        let eval_redis = lua.create_table()?;
        let fn_redis = lua.create_table()?;
        lua.set_named_registry_value(CTL, ctl.clone())?;
        let current: Rc<Cell<Option<Current>>> = Rc::new(Cell::new(None));
        let resp = Rc::new(Cell::new(2u8));
        for r in [&eval_redis, &fn_redis] {
            install_natives(&lua, r, &current, &resp)?;
        }
        api.raw_set("eval_redis", eval_redis.clone())?;
        api.raw_set("fn_redis", fn_redis.clone())?;
        api.raw_set(
            "normalize",
            lua.create_function(|lua, s: mlua::LuaString| lua.create_string(normalize_error(&s.as_bytes())))?,
        )?;
        // The text of an error a native function raised (a userdata in Lua),
        // which Redis's C functions raise as a string.
        api.raw_set(
            "error_text",
            lua.create_function(|lua, v: Value| match v {
                Value::Error(e) => lua.create_string(lua_message(&e)).map(Value::String),
                other => Ok(other),
            })?,
        )?;
        lua.load(PRELUDE).set_name("=neokv").call::<()>((ctl.clone(), g.clone(), protected, api.clone()))?;
        let proxy: Function = api.get("proxy")?;
        let runner: Function = api.get("runner")?;
        let loadstring: Function = api.get("loadstring")?;

        // The libraries, read-only.
        for name in ["string", "table", "math", "cjson", "cmsgpack", "bit", "struct", "coroutine"] {
            if let Value::Table(t) = g.raw_get::<Value>(name)? {
                g.raw_set(name, proxy.call::<Table>(t)?)?;
            }
        }
        g.raw_set("redis", proxy.call::<Table>(eval_redis)?)?;
        // A missing global is an error.
        let missing = missing_global(&lua)?;
        let real_meta = lua.create_table()?;
        real_meta.raw_set("__index", missing.clone())?;
        g.set_metatable(Some(real_meta))?;
        let eval_env = proxy.call::<Table>(g.clone())?;
        g.raw_set("_G", eval_env.clone())?;

        // Functions: while loading, only the library API; while running, the
        // globals with their own `redis` table.
        let registering: Registering = Rc::new(RefCell::new(None));
        let lib_api = library_api(&lua, &proxy, &missing, registering.clone())?;
        let fn_g = lua.create_table()?;
        let fn_g_meta = lua.create_table()?;
        fn_g_meta.raw_set("__index", g.clone())?;
        fn_g.set_metatable(Some(fn_g_meta))?;
        fn_g.raw_set("redis", proxy.call::<Table>(fn_redis)?)?;
        let fn_env = proxy.call::<Table>(fn_g.clone())?;
        fn_g.raw_set("_G", fn_env.clone())?;
        let fn_meta = fn_env.metatable().ok_or_else(|| mlua::Error::RuntimeError("proxy without metatable".into()))?;

        // Everything loaded from now on sees the read-only globals.
        lua.load("setfenv(0, ...)").set_name("=neokv").call::<()>(eval_env)?;
        for n in BUILD_ONLY {
            g.raw_set(*n, Value::Nil)?;
        }
        let killed = Rc::new(Cell::new(false));
        let raw = redis_call_host(&lua, current.clone(), resp.clone(), killed.clone())?;
        ctl.raw_set("raw", raw)?;
        let handler = error_handler(&lua)?;
        if memory_limit > 0 {
            lua.set_memory_limit(memory_limit)?;
        }
        Ok(Engine {
            handler: lua.create_registry_value(handler)?,
            current,
            resp,
            killed,
            real_g: lua.create_registry_value(g)?,
            fn_meta: lua.create_registry_value(fn_meta)?,
            lib_api: lua.create_registry_value(lib_api)?,
            fn_g: lua.create_registry_value(fn_g)?,
            fn_env: lua.create_registry_value(fn_env)?,
            runner: lua.create_registry_value(runner)?,
            loadstring: lua.create_registry_value(loadstring)?,
            lua,
            generation,
            memory_limit,
            scripts: HashMap::new(),
            libraries: HashMap::new(),
            registering,
            rng,
        })
    }

    /// Check that a script compiles (SCRIPT LOAD, EVAL); Redis's error text.
    pub fn check(&mut self, sha: &str, body: &[u8]) -> Result<Flags, Vec<u8>> {
        let (flags, at) = parse_shebang(body)?;
        self.compiled(sha, &body[at..])?;
        Ok(flags)
    }

    /// Lua's message for code that does not compile, byte for byte (mlua's
    /// error text is lossy UTF-8).
    fn compile_error(&self, code: &[u8], name: &str, fallback: &mlua::Error) -> Vec<u8> {
        let raw = || -> mlua::Result<Option<Vec<u8>>> {
            let f: Function = self.lua.registry_value(&self.loadstring)?;
            let (_, msg): (Value, Option<mlua::LuaString>) = f.call((self.lua.create_string(code)?, name))?;
            Ok(msg.map(|m| m.as_bytes().to_vec()))
        };
        raw().ok().flatten().unwrap_or_else(|| lua_message(fallback).into_bytes())
    }

    fn compiled(&mut self, sha: &str, code: &[u8]) -> Result<Function, Vec<u8>> {
        if let Some(k) = self.scripts.get(sha) {
            if let Ok(f) = self.lua.registry_value::<Function>(k) {
                return Ok(f);
            }
        }
        let f = self.lua.load(code).set_name("@user_script").into_function().map_err(|e| {
            [&b"Error compiling script (new function): "[..], &self.compile_error(code, "@user_script", &e)].concat()
        })?;
        let key = self.lua.create_registry_value(f.clone()).map_err(|e| e.to_string().into_bytes())?;
        self.scripts.insert(sha.to_string(), key);
        Ok(f)
    }

    /// Run an EVAL script (`sha` names it, `body` is its text).
    pub fn eval(&mut self, sha: &str, body: &[u8], run: &RunArgs<'_>, host: &mut dyn Host) -> Reply {
        let code = match parse_shebang(body) {
            Ok((_, at)) => &body[at..],
            Err(e) => return Reply::error_bytes(&[&b"ERR "[..], &e].concat()),
        };
        let f = match self.compiled(sha, code) {
            Ok(f) => f,
            Err(e) => return Reply::error_bytes(&[&b"ERR "[..], &e].concat()),
        };
        let set = || -> mlua::Result<()> {
            let g: Table = self.lua.registry_value(&self.real_g)?;
            // One protected call for both tables (through mlua each string
            // would be a protected call of its own).
            // SAFETY: the closure only pushes and stores strings and tables on
            // its own stack (at most four slots), and holds nothing to drop.
            unsafe {
                self.lua.exec_raw::<()>(g, |l| {
                    use mlua::ffi;
                    for (name, items) in [(c"KEYS", run.keys), (c"ARGV", run.args)] {
                        ffi::lua_pushstring(l, name.as_ptr());
                        ffi::lua_createtable(l, items.len().min(i32::MAX as usize) as std::os::raw::c_int, 0);
                        for (i, b) in items.iter().enumerate() {
                            ffi::lua_pushlstring(l, b.as_ptr().cast(), b.len());
                            ffi::lua_rawseti(l, -2, (i + 1) as ffi::lua_Integer);
                        }
                        ffi::lua_rawset(l, 1);
                    }
                })
            }
        };
        if let Err(e) = set() {
            return Reply::error(format!("ERR {}", lua_message(&e)));
        }
        self.run(sha, "@user_script", f, Vec::new(), run, host)
    }

    /// Load (or reload) a function library into this VM: its functions, or
    /// Redis's error text.
    pub fn load_library(&mut self, meta_name: &str, code: &Bytes) -> Result<Vec<FunctionMeta>, String> {
        let body = super::functions::code_of(code)?;
        let f = self
            .lua
            .load(body)
            .set_name("@user_function")
            .set_environment(self.lua.registry_value::<Table>(&self.fn_env).map_err(|e| e.to_string())?)
            .into_function()
            .map_err(|e| format!("Error compiling function: {}", lua_message(&e)))?;
        let meta: Table = self.lua.registry_value(&self.fn_meta).map_err(|e| e.to_string())?;
        let lib_api: Table = self.lua.registry_value(&self.lib_api).map_err(|e| e.to_string())?;
        let fn_g: Table = self.lua.registry_value(&self.fn_g).map_err(|e| e.to_string())?;
        let _ = meta.raw_set("__index", lib_api);
        *self.registering.borrow_mut() = Some(Vec::new());
        let deadline = Instant::now() + LOAD_TIMEOUT;
        let _ = self.lua.set_hook(HookTriggers::new().every_nth_instruction(HOOK_EVERY), move |_, _| {
            if Instant::now() >= deadline {
                return Err(mlua::Error::RuntimeError("FUNCTION LOAD timeout".into()));
            }
            Ok(VmState::Continue)
        });
        let handler = self.handler();
        let result = handler.and_then(|h| {
            let xpcall: Function = self.lua.globals().get("xpcall")?;
            xpcall.call::<MultiValue>((f, h))
        });
        self.lua.remove_hook();
        let _ = meta.raw_set("__index", fn_g);
        let registered = self.registering.borrow_mut().take().unwrap_or_default();
        let values = result.map_err(|e| format!("Error registering functions: ERR {}", lua_message(&e)))?;
        let mut it = values.into_iter();
        if !matches!(it.next(), Some(Value::Boolean(true))) {
            let msg = match it.next() {
                Some(Value::Table(t)) => t.raw_get::<String>("err").unwrap_or_else(|_| "ERR unknown error".into()),
                Some(v) => format!("ERR {}", v.to_string().unwrap_or_default()),
                None => "ERR unknown error".into(),
            };
            return Err(format!("Error registering functions: {msg}"));
        }
        if registered.is_empty() {
            return Err("No functions registered".into());
        }
        let mut callbacks = HashMap::new();
        let mut metas = Vec::new();
        for (m, key) in registered {
            callbacks.insert(m.name.to_ascii_lowercase(), key);
            metas.push(m);
        }
        self.libraries.insert(meta_name.to_string(), Loaded { code: code.clone(), callbacks });
        Ok(metas)
    }

    /// Run function `name` of library `lib` (whose code is `code`).
    pub fn fcall(&mut self, lib: &str, code: &Bytes, name: &str, run: &RunArgs<'_>, host: &mut dyn Host) -> Reply {
        let stale = self.libraries.get(lib).is_none_or(|l| l.code != *code);
        if stale {
            if let Err(e) = self.load_library(lib, code) {
                return Reply::error(format!("ERR {e}"));
            }
        }
        let cb = self
            .libraries
            .get(lib)
            .and_then(|l| l.callbacks.get(&name.to_ascii_lowercase()))
            .and_then(|k| self.lua.registry_value::<Function>(k).ok());
        let Some(cb) = cb else { return Reply::error("ERR Function not found") };
        let make = || -> mlua::Result<Vec<Value>> {
            let keys = strings(&self.lua, run.keys)?;
            let args = strings(&self.lua, run.args)?;
            Ok(vec![Value::Table(keys), Value::Table(args)])
        };
        let args = match make() {
            Ok(a) => a,
            Err(e) => return Reply::error(format!("ERR {}", lua_message(&e))),
        };
        self.run(name, "@user_function", cb, args, run, host)
    }

    /// The error handler every run is wrapped in.
    fn handler(&self) -> mlua::Result<Function> {
        self.lua.registry_value(&self.handler)
    }
}

/// The error handler every run is wrapped in (Redis's `__redis__err__handler`):
/// an error becomes a table `{err=...}` with the script's source and line.
fn error_handler(lua: &Lua) -> mlua::Result<Function> {
    lua.create_function(|lua, err: Value| {
        let t = match err {
            Value::Table(t) => t,
            other => {
                let t = lua.create_table()?;
                let msg = match &other {
                    Value::String(s) => [&b"ERR "[..], &s.as_bytes()[..]].concat(),
                    // A `redis.*` function's error has its code already.
                    Value::Error(e) if api_error_text(e).is_some() => {
                        api_error_text(e).unwrap_or_default().into_bytes()
                    }
                    Value::Error(e) => format!("ERR {}", lua_message(e)).into_bytes(),
                    v => format!("ERR {}", v.to_string().unwrap_or_default()).into_bytes(),
                };
                t.raw_set("err", lua.create_string(msg)?)?;
                t
            }
        };
        // Redis's rule: the function that raised the error, or its caller if
        // that was a C function; NeoKV's own Lua helpers are looked through.
        let frame = |level: usize| {
            lua.inspect_stack(level, |d| {
                let s = d.source();
                (s.source.map(|x| x.to_string()), s.what, d.current_line())
            })
        };
        let mut level = 1;
        if matches!(frame(level), Some((_, "C", _))) {
            level += 1;
        }
        while let Some((Some(src), _, _)) = frame(level) {
            if src != "=neokv" {
                break;
            }
            level += 1;
            if matches!(frame(level), Some((_, "C", _))) {
                level += 1;
            }
        }
        if let Some((Some(src), _, Some(line))) = frame(level) {
            t.raw_set("source", src)?;
            t.raw_set("line", line)?;
        }
        Ok(t)
    })
}

impl Engine {
    /// Run `f(args)` as one script run: `name` in errors, the run's seed, hook and
    /// `redis.call` host; the reply.
    fn run(
        &mut self,
        name: &str,
        source: &str,
        f: Function,
        args: Vec<Value>,
        run: &RunArgs<'_>,
        host: &mut dyn Host,
    ) -> Reply {
        let Ok(runner) = self.lua.registry_value::<Function>(&self.runner) else {
            return Reply::error("ERR the Lua sandbox is broken");
        };
        self.rng.borrow_mut().seed(run.seed as i64);
        self.resp.set(2);
        let killed = self.killed.clone();
        killed.set(false);
        install_hook(&self.lua, run.control.clone(), killed.clone());
        let Ok(handler) = self.handler() else { return Reply::error("ERR the Lua sandbox is broken") };
        // SAFETY: `current` points at `host` and the run's control only while
        // `runner` runs (it is cleared below before either goes away), and
        // only `redis_call_host`'s function, called from inside that run,
        // reads it. The lifetime is erased to store the pointer.
        let ptr: *mut (dyn Host + '_) = &mut *host;
        let ptr: *mut (dyn Host + 'static) = unsafe { std::mem::transmute(ptr) };
        let current = Current {
            host: std::ptr::NonNull::new(ptr).expect("a reference is not null"),
            control: std::ptr::NonNull::from(&**run.control),
        };
        /// Clears `current` however the call ends (a panic included).
        struct Clear<'a>(&'a Cell<Option<Current>>);
        impl Drop for Clear<'_> {
            fn drop(&mut self) {
                self.0.set(None);
            }
        }
        self.current.set(Some(current));
        let clear = Clear(&self.current);
        let mut call = vec![Value::Function(f), Value::Function(handler)];
        call.extend(args);
        let outcome = runner.call::<MultiValue>(MultiValue::from_vec(call));
        drop(clear);
        self.lua.remove_hook();
        let resp = self.resp.get();
        let values = match outcome {
            Ok(v) => v,
            Err(e) => return Reply::error(format!("ERR Error running script {name}: {}", lua_message(&e))),
        };
        let mut it = values.into_iter();
        let ok = matches!(it.next(), Some(Value::Boolean(true)));
        let v = it.next().unwrap_or(Value::Nil);
        if let Value::Table(t) = &v {
            if !killed.get() && t.raw_get::<bool>("ignore_error_stats_update").unwrap_or(false) {
                host.passed_on_error();
            }
        }
        if ok {
            return lua_to_reply(&v, resp);
        }
        if killed.get() {
            let line = match &v {
                Value::Table(t) => t.raw_get::<Option<i64>>("line").ok().flatten(),
                _ => None,
            };
            return Reply::error(match line {
                Some(l) => format!("{KILLED} script: {name}, on {source}:{l}."),
                None => KILLED.to_string(),
            });
        }
        script_error(name, &v)
    }
}

/// A Lua array of `items` as strings (KEYS, ARGV).
fn strings(lua: &Lua, items: &[Bytes]) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, b) in items.iter().enumerate() {
        t.raw_set(i + 1, lua.create_string(b)?)?;
    }
    Ok(t)
}

/// The error reply of a failed run (`luaCallFunction`'s format), byte for byte.
fn script_error(name: &str, v: &Value) -> Reply {
    let Value::Table(t) = v else {
        return Reply::error(format!("ERR Error running script {name}, {}", v.to_string().unwrap_or_default()));
    };
    let Ok(Some(err)) = t.raw_get::<Option<mlua::LuaString>>("err") else {
        return Reply::error(format!("ERR Error running script {name}, execution failure"));
    };
    let mut text = err.as_bytes().to_vec();
    let source: Option<String> = t.raw_get("source").ok().flatten();
    let line: Option<i64> = t.raw_get("line").ok().flatten();
    if let (Some(s), Some(l)) = (source, line) {
        text.extend_from_slice(format!(" script: {name}, on {s}:{l}.").as_bytes());
    }
    Reply::error_bytes(&text)
}

/// An error a `redis.*` function raises as Redis's `luaPushError` does: an
/// error whose text carries the generic `ERR` code (a string caught by
/// `pcall` shows it), where a library function's (`luaL_error`) does not.
#[derive(Debug)]
struct ApiError(String);

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ERR {}", self.0)
    }
}

impl std::error::Error for ApiError {}

fn api_error(msg: impl Into<String>) -> mlua::Error {
    mlua::Error::external(ApiError(msg.into()))
}

/// The text of `e` if a `redis.*` function raised it (`ERR ...`).
fn api_error_text(e: &mlua::Error) -> Option<String> {
    match e {
        mlua::Error::ExternalError(x) => x.downcast_ref::<ApiError>().map(|a| a.to_string()),
        mlua::Error::CallbackError { cause, .. } | mlua::Error::WithContext { cause, .. } => api_error_text(cause),
        _ => None,
    }
}

/// The text of an mlua error as Lua produced it (no Rust decorations).
pub fn lua_message(e: &mlua::Error) -> String {
    if let Some(t) = api_error_text(e) {
        return t;
    }
    match e {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(m) => m.clone(),
        mlua::Error::MemoryError(m) => m.clone(),
        mlua::Error::CallbackError { cause, .. } => lua_message(cause),
        mlua::Error::WithContext { cause, .. } => lua_message(cause),
        other => other.to_string(),
    }
}

/// The function `redis.call` / `redis.pcall` hand their arguments to: it runs
/// them on the current run's host and answers `(ok, value)`.
/// The third value tells `redis.pcall` to raise the error all the same.
fn redis_call_host(
    lua: &Lua,
    current: Rc<Cell<Option<Current>>>,
    resp: Rc<Cell<u8>>,
    killed: Rc<Cell<bool>>,
) -> mlua::Result<Function> {
    lua.create_function(move |lua, vals: MultiValue| {
        let Some(cur) = current.get() else {
            let e = error_table(lua, b"redis.call/pcall can only be called inside a script invocation")?;
            return Ok((false, Value::Table(e), true));
        };
        // SAFETY: see `Engine::run`: set only while the run that owns both is
        // inside Lua, which is where this function is called from.
        let (host, control) = unsafe { (&mut *cur.host.as_ptr(), cur.control.as_ref()) };
        let vals: Vec<Value> = vals.into_iter().collect();
        let resp = resp.get();
        let failed = |msg: &[u8]| Ok((false, Value::Table(error_table(lua, msg)?), false));
        let argv = match args_from_lua(&vals) {
            Ok(a) => a,
            Err(msg) => return failed(format!("-ERR {msg}").as_bytes()),
        };
        if control.kill.load(Ordering::Relaxed) {
            return failed(KILLED.as_bytes());
        }
        let r = host.call(&argv, resp);
        // The host stopped the run (a trial that reached a write).
        if control.kill.load(Ordering::Relaxed) {
            stop(lua, &killed);
            return failed(KILLED.as_bytes());
        }
        match r {
            Reply::Error(e) => failed(e.as_bytes()),
            Reply::ErrorBytes(e) => failed(&e),
            r => Ok((true, reply_to_lua(lua, r, resp)?, false)),
        }
    })
}

/// The instruction hook of a run: busy marking and SCRIPT KILL.
fn install_hook(lua: &Lua, control: Arc<super::Control>, killed: Rc<Cell<bool>>) {
    let every = control.hook_every();
    let _ = lua.set_hook(HookTriggers::new().every_nth_instruction(every), move |lua, _| {
        if control.tick() {
            return Err(stop(lua, &killed));
        }
        Ok(VmState::Continue)
    });
}

/// Stop the run: every line from now on raises the kill, so a pcall cannot
/// swallow it.
fn stop(lua: &Lua, killed: &Rc<Cell<bool>>) -> mlua::Error {
    killed.set(true);
    let k = killed.clone();
    let _ = lua.set_hook(HookTriggers::new().every_line(), move |_, _| {
        k.set(true);
        Err(mlua::Error::RuntimeError(KILLED.into()))
    });
    mlua::Error::RuntimeError(KILLED.into())
}

/// The registry name of the table holding `raw`, the function `redis.call`
/// hands its arguments to ([`redis_call_host`]), read by the C functions.
const CTL: &str = "neokv.ctl";

/// Push the error table `{err = "ERR <msg>"}` and raise it (a C function's
/// error, as Redis's API functions raise them).
unsafe fn raise(l: *mut mlua::ffi::lua_State, msg: &std::ffi::CStr) -> std::os::raw::c_int {
    use mlua::ffi;
    ffi::lua_createtable(l, 0, 1);
    ffi::lua_pushstring(l, c"ERR ".as_ptr());
    ffi::lua_pushstring(l, msg.as_ptr());
    ffi::lua_concat(l, 2);
    ffi::lua_setfield(l, -2, c"err".as_ptr());
    ffi::lua_error(l)
}

/// `redis.call` / `redis.pcall` (`raising`): C functions, as in Redis, so that
/// `return redis.call(...)` keeps the script's frame for the error position
/// (a tail call to a Lua function would replace it). They hand the arguments
/// to `raw` ([`redis_call_host`]), which answers `(ok, value, raise anyway)`.
unsafe fn redis_call(l: *mut mlua::ffi::lua_State, raising: bool) -> std::os::raw::c_int {
    use mlua::ffi;
    let n = ffi::lua_gettop(l);
    ffi::lua_getfield(l, ffi::LUA_REGISTRYINDEX, c"neokv.ctl".as_ptr());
    ffi::lua_getfield(l, -1, c"raw".as_ptr());
    ffi::lua_remove(l, -2);
    if ffi::lua_isnil(l, -1) != 0 {
        return raise(l, c"the Lua sandbox is broken");
    }
    ffi::lua_insert(l, 1);
    ffi::lua_call(l, n, 3);
    let anyway = ffi::lua_toboolean(l, -1) != 0;
    ffi::lua_settop(l, -2);
    if (raising || anyway) && ffi::lua_toboolean(l, -2) == 0 {
        ffi::lua_error(l);
    }
    1
}

unsafe extern "C-unwind" fn call_c(l: *mut mlua::ffi::lua_State) -> std::os::raw::c_int {
    redis_call(l, true)
}

unsafe extern "C-unwind" fn pcall_c(l: *mut mlua::ffi::lua_State) -> std::os::raw::c_int {
    redis_call(l, false)
}

/// `redis.call`, `redis.pcall`, `redis.setresp`, `redis.set_repl`, `redis.log`,
/// `redis.sha1hex` and the version fields.
fn install_natives(lua: &Lua, r: &Table, current: &Rc<Cell<Option<Current>>>, resp: &Rc<Cell<u8>>) -> mlua::Result<()> {
    // SAFETY: the functions only use the Lua API on their own stack, and raise
    // errors with no Rust value alive.
    unsafe {
        r.raw_set("call", lua.create_c_function(call_c)?)?;
        r.raw_set("pcall", lua.create_c_function(pcall_c)?)?;
    }
    let cur = current.clone();
    let in_run = move |what: &str| -> mlua::Result<()> {
        if cur.get().is_none() {
            return Err(api_error(format!("{what} can only be called inside a script invocation")));
        }
        Ok(())
    };
    let in_run2 = in_run.clone();
    let resp = resp.clone();
    r.raw_set(
        "setresp",
        lua.create_function(move |_, vals: MultiValue| {
            in_run("redis.setresp")?;
            if vals.len() != 1 {
                return Err(api_error("redis.setresp() requires one argument."));
            }
            let n = match vals.into_iter().next() {
                Some(Value::Integer(n)) => n as f64,
                Some(Value::Number(n)) => n,
                _ => 0.0,
            };
            if n != 2.0 && n != 3.0 {
                return Err(api_error("RESP version must be 2 or 3."));
            }
            resp.set(n as u8);
            Ok(())
        })?,
    )?;
    r.raw_set(
        "set_repl",
        lua.create_function(move |_, vals: MultiValue| {
            in_run2("redis.set_repl")?;
            if vals.len() != 1 {
                return Err(api_error("redis.set_repl() requires two arguments."));
            }
            let ok = match vals.into_iter().next() {
                Some(Value::Integer(n)) => (0..=3).contains(&n),
                Some(Value::Number(n)) => n.fract() == 0.0 && (0.0..=3.0).contains(&n),
                _ => false,
            };
            if !ok {
                return Err(api_error("Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."));
            }
            Ok(())
        })?,
    )?;
    install_log(lua, r)?;
    r.raw_set(
        "sha1hex",
        lua.create_function(|lua, vals: MultiValue| {
            if vals.len() != 1 {
                return Err(api_error("wrong number of arguments"));
            }
            let s = match vals.into_iter().next() {
                Some(Value::String(s)) => s.as_bytes().to_vec(),
                Some(Value::Integer(i)) => i.to_string().into_bytes(),
                Some(Value::Number(n)) => crate::protocol::number::fmt_g17(n).into_bytes(),
                _ => Vec::new(),
            };
            lua.create_string(super::sha1hex(&s))
        })?,
    )?;
    r.raw_set("REDIS_VERSION", REDIS_VERSION)?;
    r.raw_set("REDIS_VERSION_NUM", REDIS_VERSION_NUM)?;
    Ok(())
}

fn install_log(lua: &Lua, r: &Table) -> mlua::Result<()> {
    r.raw_set(
        "log",
        lua.create_function(|_, vals: MultiValue| {
            let vals: Vec<Value> = vals.into_iter().collect();
            if vals.len() < 2 {
                return Err(api_error("redis.log() requires two arguments or more."));
            }
            let level = match vals[0] {
                Value::Integer(i) => i,
                Value::Number(n) => n as i64,
                _ => return Err(api_error("First argument must be a number (log level).")),
            };
            if !(0..=3).contains(&level) {
                return Err(api_error("Invalid debug level."));
            }
            let mut msg = String::new();
            for v in &vals[1..] {
                let part = match v {
                    Value::String(s) => String::from_utf8_lossy(&s.as_bytes()).into_owned(),
                    Value::Integer(i) => i.to_string(),
                    Value::Number(n) => crate::protocol::number::fmt_g17(*n),
                    _ => continue,
                };
                if !msg.is_empty() {
                    msg.push(' ');
                }
                msg.push_str(&part);
            }
            if level >= 2 {
                eprintln!("lua: {msg}");
            }
            Ok(())
        })?,
    )
}

/// `redis.register_function` of the library API (FUNCTION LOAD only).
fn install_register(lua: &Lua, r: &Table, registering: Registering) -> mlua::Result<()> {
    let err = |m: &str| mlua::Error::RuntimeError(m.to_string());
    r.raw_set(
        "register_function",
        lua.create_function(move |lua, vals: MultiValue| {
            let vals: Vec<Value> = vals.into_iter().collect();
            let mut slot = registering.borrow_mut();
            let Some(list) = slot.as_mut() else {
                return Err(err("redis.register_function can only be called on FUNCTION LOAD command"));
            };
            let (name, cb, flags, description) = match vals.len() {
                1 => {
                    let Value::Table(t) = &vals[0] else {
                        return Err(err("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."));
                    };
                    super::functions::named_args(t)?
                }
                2 => {
                    let name = match &vals[0] {
                        Value::String(s) => String::from_utf8_lossy(&s.as_bytes()).into_owned(),
                        Value::Integer(i) => i.to_string(),
                        Value::Number(n) => crate::protocol::number::fmt_g17(*n),
                        _ => return Err(err("first argument to redis.register_function must be a string")),
                    };
                    let Value::Function(f) = &vals[1] else {
                        return Err(err("second argument to redis.register_function must be a function"));
                    };
                    (name, f.clone(), Flags::default(), None)
                }
                _ => return Err(err("wrong number of arguments to redis.register_function")),
            };
            if !super::functions::valid_name(&name) {
                // Redis 7.0.15's text for a bad function name names libraries.
                return Err(err(
                    "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long",
                ));
            }
            if list.iter().any(|(m, _)| m.name == name) {
                return Err(err("Function already exists in the library"));
            }
            let key = lua.create_registry_value(cb)?;
            list.push((FunctionMeta { name, flags, description }, key));
            Ok(())
        })?,
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::script::{Control, Registry};

    /// A host that answers every command with a canned reply.
    struct Echo;
    impl Host for Echo {
        fn call(&mut self, args: &[Bytes], _resp: u8) -> Reply {
            match &args[0][..] {
                b"nosuch" => Reply::error("ERR Unknown Redis command called from script"),
                b"wrong" => Reply::error("WRONGTYPE Operation against a key holding the wrong kind of value"),
                _ => Reply::Bulk(args[args.len() - 1].clone()),
            }
        }
        fn known(&self, _args: &[Bytes]) -> bool {
            true
        }
    }

    fn eval(body: &str) -> Reply {
        let reg = Arc::new(Registry::default());
        let control = Arc::new(Control::new(&reg, "s".into(), false, Vec::new(), Duration::ZERO));
        let run = RunArgs { keys: &[], args: &[], seed: 1, control: &control, memory_limit: 0 };
        let mut e = Engine::new(0, 0).unwrap();
        e.eval("s", body.as_bytes(), &run, &mut Echo)
    }

    #[test]
    fn errors_carry_the_script_position() {
        assert_eq!(
            eval("return redis.call('nosuch')"),
            Reply::error("ERR Unknown Redis command called from script script: s, on @user_script:1.")
        );
        assert_eq!(
            eval("local x = 1\nreturn redis.call('wrong')"),
            Reply::error(
                "WRONGTYPE Operation against a key holding the wrong kind of value script: s, on @user_script:2."
            )
        );
        assert_eq!(
            eval("return redis.pcall('wrong')"),
            Reply::error("WRONGTYPE Operation against a key holding the wrong kind of value")
        );
        assert_eq!(eval("return bit.band(5, 3)"), Reply::Int(1));
        assert_eq!(eval("return redis.call('get', 'x')"), Reply::bulk_str("x"));
    }
}
