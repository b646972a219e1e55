//! `cjson.decode`: JSON text to Lua values, as lua-cjson reads it: its
//! tokenizer (strtod number syntax, `\u` escapes with surrogate pairs),
//! `cjson.null` for `null`, its error messages and nesting limits.  Nested
//! containers are filled with an explicit stack, not Rust recursion.

use mlua::{LightUserData, Lua, MultiValue, Table, Value};

use super::super::cfunc::{check_lstring, Outcome, ValueStack, LUAI_MAXCSTACK};
use super::config::{lock, Config, SharedConfig};
use super::number::{byte_at, strtod};

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

pub(super) fn json_decode(lua: &Lua, cfg: &SharedConfig, args: MultiValue) -> mlua::Result<Outcome> {
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

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
