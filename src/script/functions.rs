//! Function libraries (FUNCTION LOAD / FCALL): the metadata line, what
//! `redis.register_function` accepts, and a set of libraries with Redis's rules
//! for loading, replacing, deleting and restoring them.
//!
//! A library set is replicated data: every region's state machine keeps one,
//! built from its own log, so FCALL inside apply sees the same libraries on
//! every replica.

use std::collections::BTreeMap;

use bytes::Bytes;
use mlua::{Table, Value};

use super::{split_args, Flags};

/// One registered function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionMeta {
    pub name: String,
    pub flags: Flags,
    pub description: Option<String>,
}

/// One library: its name, the whole code as loaded (shebang included), its functions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryMeta {
    pub name: String,
    pub code: Bytes,
    pub functions: Vec<FunctionMeta>,
}

/// Library and function names: `[A-Za-z0-9_]+`.
pub fn valid_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// The library name of the metadata line (`#!lua name=mylib`); Redis's errors.
pub fn library_name(code: &[u8]) -> Result<String, String> {
    if !code.starts_with(b"#!") {
        return Err("Missing library metadata".into());
    }
    let Some(nl) = memchr::memchr(b'\n', code) else { return Err("Invalid library metadata".into()) };
    let parts = split_args(&code[..nl]).ok_or("Invalid library metadata")?;
    let Some(first) = parts.first() else { return Err("Invalid library metadata".into()) };
    let engine = &first[2..];
    if !engine.eq_ignore_ascii_case("lua") {
        return Err(format!("Engine '{engine}' not found"));
    }
    let mut name = None;
    for p in &parts[1..] {
        if p.len() >= 5 && p[..5].eq_ignore_ascii_case("name=") {
            if name.is_some() {
                return Err("Invalid metadata value, name argument was given multiple times".into());
            }
            name = Some(p[5..].to_string());
        } else {
            return Err(format!("Invalid metadata value given: {p}"));
        }
    }
    let Some(name) = name else { return Err("Library name was not given".into()) };
    if !valid_name(&name) {
        return Err("Library names can only contain letters, numbers, or underscores(_) and must be at least one character long".into());
    }
    Ok(name)
}

/// The code a library compiles: from the metadata line's newline on (line
/// numbers stay right).
pub fn code_of(code: &[u8]) -> Result<&[u8], String> {
    let nl = memchr::memchr(b'\n', code).ok_or("Invalid library metadata")?;
    Ok(&code[nl..])
}

/// `redis.register_function{function_name=..., callback=..., flags={...},
/// description=...}`: name, callback, flags, description.
pub fn named_args(t: &Table) -> mlua::Result<(String, mlua::Function, Flags, Option<String>)> {
    let err = |m: &str| mlua::Error::RuntimeError(m.to_string());
    let (mut name, mut cb, mut flags, mut desc) = (None, None, Flags::default(), None);
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair?;
        let Value::String(k) = k else {
            return Err(err("named argument key given to redis.register_function is not a string"));
        };
        let key = String::from_utf8_lossy(&k.as_bytes()).to_ascii_lowercase();
        match key.as_str() {
            "function_name" => match v {
                Value::String(s) => name = Some(String::from_utf8_lossy(&s.as_bytes()).into_owned()),
                _ => return Err(err("function_name argument given to redis.register_function must be a string")),
            },
            "description" => match v {
                Value::String(s) => desc = Some(String::from_utf8_lossy(&s.as_bytes()).into_owned()),
                _ => return Err(err("description argument given to redis.register_function must be a string")),
            },
            "callback" => match v {
                Value::Function(f) => cb = Some(f),
                _ => return Err(err("callback argument given to redis.register_function must be a function")),
            },
            "flags" => {
                let Value::Table(list) = v else {
                    return Err(err(
                        "flags argument to redis.register_function must be a table representing function flags",
                    ));
                };
                for i in 1.. {
                    match list.raw_get::<Value>(i)? {
                        Value::Nil => break,
                        Value::String(s) => {
                            let f = String::from_utf8_lossy(&s.as_bytes()).to_ascii_lowercase();
                            if !flags.set(&f) {
                                return Err(err("unknown flag given"));
                            }
                        }
                        _ => return Err(err("unknown flag given")),
                    }
                }
            }
            _ => return Err(err("unknown argument given to redis.register_function")),
        }
    }
    let name = name.ok_or_else(|| err("redis.register_function must get a function name argument"))?;
    let cb = cb.ok_or_else(|| err("redis.register_function must get a callback argument"))?;
    Ok((name, cb, flags, desc))
}

/// A set of libraries (one region's, or a node's view for FUNCTION LIST).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Libraries {
    libs: BTreeMap<String, LibraryMeta>,
}

/// How FUNCTION RESTORE merges a payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestorePolicy {
    Flush,
    Append,
    Replace,
}

impl Libraries {
    pub fn iter(&self) -> impl Iterator<Item = &LibraryMeta> {
        self.libs.values()
    }

    pub fn get(&self, name: &str) -> Option<&LibraryMeta> {
        self.libs.get(name)
    }

    pub fn len(&self) -> usize {
        self.libs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.libs.is_empty()
    }

    pub fn function_count(&self) -> usize {
        self.libs.values().map(|l| l.functions.len()).sum()
    }

    /// The library holding function `name` (any case), with the function.
    pub fn function(&self, name: &str) -> Option<(&LibraryMeta, &FunctionMeta)> {
        self.libs.values().find_map(|l| l.functions.iter().find(|f| f.name.eq_ignore_ascii_case(name)).map(|f| (l, f)))
    }

    /// The function of another library than `except` that has a name of `lib`'s.
    fn clash(&self, lib: &LibraryMeta, except: Option<&str>) -> Option<String> {
        lib.functions.iter().find_map(|f| {
            self.function(&f.name).filter(|(l, _)| Some(l.name.as_str()) != except).map(|_| f.name.clone())
        })
    }

    /// FUNCTION LOAD [REPLACE] of an already compiled library.
    pub fn load(&mut self, lib: LibraryMeta, replace: bool) -> Result<(), String> {
        if self.libs.contains_key(&lib.name) && !replace {
            return Err(format!("Library '{}' already exists", lib.name));
        }
        if let Some(f) = self.clash(&lib, Some(&lib.name)) {
            return Err(format!("Function {f} already exists"));
        }
        self.libs.insert(lib.name.clone(), lib);
        Ok(())
    }

    pub fn delete(&mut self, name: &str) -> Result<(), String> {
        self.libs.remove(name).map(|_| ()).ok_or_else(|| "Library not found".into())
    }

    pub fn flush(&mut self) {
        self.libs.clear();
    }

    /// FUNCTION RESTORE of `restored` (already compiled) under `policy`; on error
    /// nothing changes.
    pub fn restore(&mut self, restored: Vec<LibraryMeta>, policy: RestorePolicy) -> Result<(), String> {
        let mut next = match policy {
            RestorePolicy::Flush => Libraries::default(),
            _ => self.clone(),
        };
        for lib in restored {
            match policy {
                RestorePolicy::Append if next.libs.contains_key(&lib.name) => {
                    return Err(format!("Library {} already exists", lib.name));
                }
                _ => {}
            }
            if let Some(f) = next.clash(&lib, Some(&lib.name)) {
                return Err(format!("Function {f} already exists"));
            }
            next.libs.insert(lib.name.clone(), lib);
        }
        *self = next;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_lines() {
        assert_eq!(library_name(b"#!lua name=mylib\nreturn 1").unwrap(), "mylib");
        assert_eq!(library_name(b"#!LUA name=\"foo\"\n").unwrap(), "foo");
        assert_eq!(library_name(b"return 1").unwrap_err(), "Missing library metadata");
        assert_eq!(library_name(b"#!lua name=x").unwrap_err(), "Invalid library metadata");
        assert_eq!(library_name(b"#! name=test\n").unwrap_err(), "Engine '' not found");
        assert_eq!(library_name(b"#!bad_engine name=x\n").unwrap_err(), "Engine 'bad_engine' not found");
        assert_eq!(library_name(b"#!lua foo=bar\n").unwrap_err(), "Invalid metadata value given: foo=bar");
        assert_eq!(
            library_name(b"#!lua name=a name=b\n").unwrap_err(),
            "Invalid metadata value, name argument was given multiple times"
        );
        assert_eq!(library_name(b"#!lua\n").unwrap_err(), "Library name was not given");
        assert!(library_name(b"#!lua name=a-b\n").is_err());
    }

    fn lib(name: &str, fns: &[&str]) -> LibraryMeta {
        LibraryMeta {
            name: name.into(),
            code: Bytes::from(format!("#!lua name={name}\n")),
            functions: fns
                .iter()
                .map(|f| FunctionMeta { name: f.to_string(), flags: Flags::default(), description: None })
                .collect(),
        }
    }

    #[test]
    fn load_replace_restore_rules() {
        let mut l = Libraries::default();
        l.load(lib("a", &["f1", "f2"]), false).unwrap();
        assert_eq!(l.load(lib("a", &["f9"]), false).unwrap_err(), "Library 'a' already exists");
        assert_eq!(l.load(lib("b", &["F1"]), false).unwrap_err(), "Function F1 already exists");
        l.load(lib("a", &["f3"]), true).unwrap();
        assert!(l.function("f1").is_none() && l.function("F3").is_some());
        let before = l.clone();
        assert_eq!(l.restore(vec![lib("a", &["x"])], RestorePolicy::Append).unwrap_err(), "Library a already exists");
        assert_eq!(l, before, "a failed restore changes nothing");
        l.restore(vec![lib("c", &["g"])], RestorePolicy::Append).unwrap();
        assert_eq!(l.len(), 2);
        l.restore(vec![lib("d", &["h"])], RestorePolicy::Flush).unwrap();
        assert_eq!(l.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(), ["d"]);
        assert_eq!(l.delete("zz").unwrap_err(), "Library not found");
    }
}
