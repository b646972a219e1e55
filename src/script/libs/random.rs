//! `math.random` and `math.randomseed` as Redis replaces them: Redis's
//! `lrand48` (the same numbers on every platform for a seed), and arguments
//! read by `luaL_checkint`, with its errors (through `cfunc`'s C frame, so a
//! message names the function and the caller's position as Lua's do).

use std::cell::RefCell;
use std::rc::Rc;

use mlua::{Lua, MultiValue, Table, Value};

use super::cfunc::{check_integer, lib_fn, Outcome};

/// Redis's `lrand48`: the generator behind `math.random`.
#[derive(Default)]
pub struct Rand48(u64);

impl Rand48 {
    pub fn seed(&mut self, s: i64) {
        self.0 = (((s as u32 as u64) << 16) | 0x330e) & ((1 << 48) - 1);
    }
    fn next(&mut self) -> u32 {
        self.0 = (self.0.wrapping_mul(0x5_deec_e66d).wrapping_add(0xb)) & ((1 << 48) - 1);
        (self.0 >> 17) as u32
    }
}

/// `luaL_checkint`: `luaL_checkinteger` cast to a C `int`.
fn check_int(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<Result<i64, Outcome>> {
    Ok(check_integer(lua, args, i)?.map(|n| n as i32 as i64))
}

/// Install Redis's `math.random` and `math.randomseed` in the `math` table of
/// `g`, drawing from `rng`.
pub fn install(lua: &Lua, g: &Table, rng: Rc<RefCell<Rand48>>) -> mlua::Result<()> {
    let math: Table = g.raw_get("math")?;
    let r = rng.clone();
    math.raw_set(
        "random",
        lib_fn(lua, move |lua, args| {
            let x = (r.borrow_mut().next() % i32::MAX as u32) as f64 / i32::MAX as f64;
            Ok(match args.len() {
                0 => Outcome::One(Value::Number(x)),
                1 => {
                    let u = tri!(check_int(lua, &args, 1)?);
                    if u < 1 {
                        return Ok(Outcome::ArgError(1, b"interval is empty".to_vec()));
                    }
                    Outcome::One(Value::Number((x * u as f64).floor() + 1.0))
                }
                2 => {
                    let l = tri!(check_int(lua, &args, 1)?);
                    let u = tri!(check_int(lua, &args, 2)?);
                    if l > u {
                        return Ok(Outcome::ArgError(2, b"interval is empty".to_vec()));
                    }
                    Outcome::One(Value::Number((x * (u - l + 1) as f64).floor() + l as f64))
                }
                _ => Outcome::Error(b"wrong number of arguments".to_vec()),
            })
        })?,
    )?;
    math.raw_set(
        "randomseed",
        lib_fn(lua, move |lua, args| {
            let s = tri!(check_int(lua, &args, 1)?);
            rng.borrow_mut().seed(s);
            // No results, as Redis's returns none.
            Ok(Outcome::Many(lua.create_table()?, 0))
        })?,
    )?;
    Ok(())
}
