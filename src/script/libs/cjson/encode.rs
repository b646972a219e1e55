//! `cjson.encode`: a Lua value to JSON text, as lua-cjson writes it: `\/`
//! and `\u00XX` escapes, `%.14g` numbers, array/object detection with the
//! sparse-array rules, keys in Lua `next()` order, and the nesting limits.
//! Nested tables are walked with an explicit stack, not Rust recursion.

use mlua::{Function, Lua, MultiValue, Table, Value};

use super::super::cfunc::{as_number, number_to_int, type_name, Outcome, ValueStack, LUAI_MAXCSTACK};
use super::config::{lock, Config, SharedConfig};
use super::number::format_g;

/// `char2escape`: the JSON text for each byte, `None` for "as is".
fn escape_of(b: u8) -> Option<&'static [u8]> {
    const CTRL: [&[u8]; 32] = [
        b"\\u0000", b"\\u0001", b"\\u0002", b"\\u0003", b"\\u0004", b"\\u0005", b"\\u0006", b"\\u0007", b"\\b", b"\\t",
        b"\\n", b"\\u000b", b"\\f", b"\\r", b"\\u000e", b"\\u000f", b"\\u0010", b"\\u0011", b"\\u0012", b"\\u0013",
        b"\\u0014", b"\\u0015", b"\\u0016", b"\\u0017", b"\\u0018", b"\\u0019", b"\\u001a", b"\\u001b", b"\\u001c",
        b"\\u001d", b"\\u001e", b"\\u001f",
    ];
    match b {
        0..=31 => Some(CTRL[b as usize]),
        b'"' => Some(b"\\\""),
        b'/' => Some(b"\\/"),
        b'\\' => Some(b"\\\\"),
        127 => Some(b"\\u007f"),
        _ => None,
    }
}

fn append_string(out: &mut Vec<u8>, s: &[u8]) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    for &b in s {
        match escape_of(b) {
            Some(e) => out.extend_from_slice(e),
            None => out.push(b),
        }
    }
    out.push(b'"');
}

/// `json_append_number` (the value is always of type number).
fn append_number(cfg: &Config, out: &mut Vec<u8>, num: f64) -> std::result::Result<(), Vec<u8>> {
    match cfg.encode_invalid_numbers {
        0 => {
            if !num.is_finite() {
                return Err(b"Cannot serialise number: must not be NaN or Inf".to_vec());
            }
        }
        1 => {
            if num.is_nan() {
                out.extend_from_slice(b"nan");
                return Ok(());
            }
        }
        _ => {
            if !num.is_finite() {
                out.extend_from_slice(b"null");
                return Ok(());
            }
        }
    }
    format_g(out, num, cfg.encode_number_precision.clamp(1, 14) as usize);
    Ok(())
}

/// Where the encoder stands in a table being written.
enum EncodeFrame {
    Array { len: i64, next: i64, depth: i32, slots: i64 },
    Object { first: bool, depth: i32, slots: i64 },
}

/// The open tables of the encoder: the innermost table and its current key,
/// and the enclosing ones on value stacks.
struct EncodeStack {
    frames: Vec<EncodeFrame>,
    tables: ValueStack,
    keys: ValueStack,
    top: Option<Table>,
    key: Value,
}

impl EncodeStack {
    fn push(&mut self, lua: &Lua, table: Table, frame: EncodeFrame) -> mlua::Result<()> {
        if let Some(outer) = self.top.take() {
            self.tables.push(lua, Value::Table(outer))?;
            self.keys.push(lua, std::mem::take(&mut self.key))?;
        }
        self.frames.push(frame);
        self.top = Some(table);
        Ok(())
    }

    fn pop(&mut self) -> mlua::Result<()> {
        self.frames.pop();
        self.top = None;
        self.key = Value::Nil;
        if !self.frames.is_empty() {
            self.top = self.tables.pop_table()?;
            self.key = self.keys.pop()?;
        }
        Ok(())
    }
}

struct Encoder<'a> {
    lua: &'a Lua,
    cfg: Config,
    next: &'a Function,
    out: Vec<u8>,
}

type EncodeResult = mlua::Result<std::result::Result<(), Vec<u8>>>;

impl Encoder<'_> {
    /// `lua_array_length`: `Ok(n > 0)` array of n items, `Ok(<= 0)` object.
    fn array_length(&self, table: &Table) -> mlua::Result<std::result::Result<i32, Vec<u8>>> {
        let mut max: i32 = 0;
        let mut items: i32 = 0;
        let mut object = false;
        let res = table.for_each::<Value, Value>(|k, _| {
            if let Some(k) = as_number(&k) {
                if k != 0.0 && k.floor() == k && k >= 1.0 {
                    if k > max as f64 {
                        max = number_to_int(k);
                    }
                    items = items.wrapping_add(1);
                    return Ok(());
                }
            }
            object = true;
            Err(mlua::Error::runtime("stop"))
        });
        if object {
            return Ok(Ok(-1));
        }
        res?;
        let cfg = &self.cfg;
        if cfg.encode_sparse_ratio > 0
            && max > items.wrapping_mul(cfg.encode_sparse_ratio)
            && max > cfg.encode_sparse_safe
        {
            if cfg.encode_sparse_convert == 0 {
                return Ok(Err(b"Cannot serialise table: excessively sparse array".to_vec()));
            }
            return Ok(Ok(-1));
        }
        Ok(Ok(max))
    }

    /// `json_append_data` for a value whose container is at `depth`; `slots`
    /// is the Lua stack height the C encoder has with the value on top.
    /// Tables are opened and pushed on `stack` for the main loop to fill.
    fn value(&mut self, v: Value, depth: i32, slots: i64, stack: &mut EncodeStack) -> EncodeResult {
        match v {
            Value::String(s) => append_string(&mut self.out, &s.as_bytes()),
            Value::Integer(i) => bail!(append_number(&self.cfg, &mut self.out, i as f64)),
            Value::Number(n) => bail!(append_number(&self.cfg, &mut self.out, n)),
            Value::Boolean(true) => self.out.extend_from_slice(b"true"),
            Value::Boolean(false) => self.out.extend_from_slice(b"false"),
            Value::Nil => self.out.extend_from_slice(b"null"),
            Value::LightUserData(p) if p.0.is_null() => self.out.extend_from_slice(b"null"),
            Value::Table(table) => {
                let depth = depth.saturating_add(1);
                // json_check_encode_depth: lua_checkstack(l, 3) included.
                if depth > self.cfg.encode_max_depth || slots + 3 > LUAI_MAXCSTACK {
                    return Ok(Err(format!("Cannot serialise, excessive nesting ({depth})").into_bytes()));
                }
                let len = bail!(self.array_length(&table)?);
                if len > 0 {
                    self.out.push(b'[');
                    let frame = EncodeFrame::Array { len: len as i64, next: 1, depth, slots };
                    stack.push(self.lua, table, frame)?;
                } else {
                    self.out.push(b'{');
                    stack.push(self.lua, table, EncodeFrame::Object { first: true, depth, slots })?;
                }
            }
            other => {
                return Ok(Err(format!("Cannot serialise {}: type not supported", type_name(&other)).into_bytes()))
            }
        }
        Ok(Ok(()))
    }

    fn encode(&mut self, root: Value) -> EncodeResult {
        let mut stack = EncodeStack {
            frames: Vec::new(),
            tables: ValueStack::new(),
            keys: ValueStack::new(),
            top: None,
            key: Value::Nil,
        };
        // json_encode: the argument is the only stack slot.
        bail!(self.value(root, 0, 1, &mut stack)?);
        loop {
            let Some(table) = stack.top.clone() else {
                break;
            };
            match stack.frames.last_mut() {
                None => break,
                Some(EncodeFrame::Array { len, next, depth, slots }) => {
                    if *next > *len {
                        self.out.push(b']');
                        stack.pop()?;
                        continue;
                    }
                    if *next > 1 {
                        self.out.push(b',');
                    }
                    let v: Value = table.raw_get(*next)?;
                    *next += 1;
                    // lua_rawgeti pushed the element.
                    let (depth, slots) = (*depth, *slots + 1);
                    bail!(self.value(v, depth, slots, &mut stack)?);
                }
                Some(EncodeFrame::Object { first, depth, slots }) => {
                    let prev = std::mem::take(&mut stack.key);
                    let mut kv = self.next.call::<MultiValue>((table, prev))?.into_iter();
                    let (k, v) = match (kv.next(), kv.next()) {
                        (Some(k), Some(v)) if !k.is_nil() => (k, v),
                        _ => {
                            self.out.push(b'}');
                            stack.pop()?;
                            continue;
                        }
                    };
                    if !*first {
                        self.out.push(b',');
                    }
                    *first = false;
                    // lua_next pushed the key and the value.
                    let (depth, slots) = (*depth, *slots + 2);
                    match &k {
                        Value::Integer(_) | Value::Number(_) => {
                            self.out.push(b'"');
                            let n = as_number(&k).unwrap_or(0.0);
                            bail!(append_number(&self.cfg, &mut self.out, n));
                            self.out.extend_from_slice(b"\":");
                        }
                        Value::String(s) => {
                            append_string(&mut self.out, &s.as_bytes());
                            self.out.push(b':');
                        }
                        other => {
                            return Ok(Err(format!(
                                "Cannot serialise {}: table key must be a number or string",
                                type_name(other)
                            )
                            .into_bytes()))
                        }
                    }
                    stack.key = k;
                    bail!(self.value(v, depth, slots, &mut stack)?);
                }
            }
        }
        Ok(Ok(()))
    }
}

pub(super) fn json_encode(lua: &Lua, cfg: &SharedConfig, next: &Function, args: MultiValue) -> mlua::Result<Outcome> {
    if args.len() != 1 {
        return Ok(Outcome::ArgError(1, b"expected 1 argument".to_vec()));
    }
    let cfg = *lock(cfg);
    let mut enc = Encoder { lua, cfg, next, out: Vec::new() };
    let root = args.into_iter().next().unwrap_or(Value::Nil);
    match enc.encode(root)? {
        Ok(()) => Ok(Outcome::One(Value::String(lua.create_string(&enc.out)?))),
        Err(msg) => Ok(Outcome::Error(msg)),
    }
}

#[cfg(test)]
#[path = "encode_tests.rs"]
mod tests;
