//! How typed values are stored: strings as themselves, numbers and booleans in
//! their plain text form (so `INCR` works on what `set(key, &5)` stored, and
//! `get::<i64>` reads what `INCR` left), anything else as JSON.

use serde::de::{self, DeserializeOwned, Visitor};
use serde::Serialize;

/// The stored form of `v`.
pub fn encode<T: Serialize + ?Sized>(v: &T) -> Result<String, String> {
    match serde_json::to_value(v).map_err(|e| e.to_string())? {
        serde_json::Value::String(s) => Ok(s),
        serde_json::Value::Number(n) => Ok(n.to_string()),
        serde_json::Value::Bool(b) => Ok(b.to_string()),
        other => Ok(other.to_string()),
    }
}

/// `raw` as a `T`: a string type takes it as it is, a number or a boolean
/// parses its text (`true`/`false`, or `1`/`0`), anything else reads it as JSON.
pub fn decode<T: DeserializeOwned>(raw: &str) -> Result<T, String> {
    T::deserialize(Raw(raw)).map_err(|e| e.0)
}

#[derive(Debug)]
struct DeError(String);

impl std::fmt::Display for DeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<M: std::fmt::Display>(msg: M) -> Self {
        DeError(msg.to_string())
    }
}

impl From<serde_json::Error> for DeError {
    fn from(e: serde_json::Error) -> Self {
        DeError(format!("not JSON of that shape: {e}"))
    }
}

/// A stored value being decoded.
struct Raw<'de>(&'de str);

impl<'de> Raw<'de> {
    fn number<N: std::str::FromStr>(&self, what: &str) -> Result<N, DeError> {
        self.0.trim().parse().map_err(|_| DeError(format!("{:?} is not {what}", self.0)))
    }

    /// Hand the text to serde_json, which must consume all of it.
    fn json<V: Visitor<'de>>(
        &self,
        f: impl FnOnce(&mut serde_json::Deserializer<serde_json::de::StrRead<'de>>) -> Result<V::Value, serde_json::Error>,
    ) -> Result<V::Value, DeError> {
        let mut d = serde_json::Deserializer::from_str(self.0);
        let v = f(&mut d)?;
        d.end()?;
        Ok(v)
    }
}

macro_rules! numbers {
    ($($method:ident $visit:ident $ty:ty, $what:literal;)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            visitor.$visit(self.number::<$ty>($what)?)
        }
    )*};
}

macro_rules! json {
    ($($method:ident;)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            self.json::<V>(|d| serde::Deserializer::$method(d, visitor))
        }
    )*};
}

impl<'de> serde::Deserializer<'de> for Raw<'de> {
    type Error = DeError;

    numbers! {
        deserialize_i8 visit_i8 i8, "an 8-bit integer";
        deserialize_i16 visit_i16 i16, "a 16-bit integer";
        deserialize_i32 visit_i32 i32, "a 32-bit integer";
        deserialize_i64 visit_i64 i64, "a 64-bit integer";
        deserialize_i128 visit_i128 i128, "an integer";
        deserialize_u8 visit_u8 u8, "an unsigned 8-bit integer";
        deserialize_u16 visit_u16 u16, "an unsigned 16-bit integer";
        deserialize_u32 visit_u32 u32, "an unsigned 32-bit integer";
        deserialize_u64 visit_u64 u64, "an unsigned 64-bit integer";
        deserialize_u128 visit_u128 u128, "an unsigned integer";
        deserialize_f32 visit_f32 f32, "a number";
        deserialize_f64 visit_f64 f64, "a number";
    }

    json! {
        deserialize_any;
        deserialize_unit;
        deserialize_seq;
        deserialize_map;
        deserialize_ignored_any;
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.0.trim() {
            "true" | "1" => visitor.visit_bool(true),
            "false" | "0" => visitor.visit_bool(false),
            _ => Err(DeError(format!("{:?} is not a boolean (true/false/1/0)", self.0))),
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let mut cs = self.0.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) => visitor.visit_char(c),
            _ => Err(DeError(format!("{:?} is not one character", self.0))),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_str(self.0)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_string(self.0.to_string())
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_bytes(self.0.as_bytes())
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_byte_buf(self.0.as_bytes().to_vec())
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        // A stored value is there: Some of it (a missing key is `None` one level up).
        visitor.visit_some(self)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, DeError> {
        self.json::<V>(|d| serde::Deserializer::deserialize_unit_struct(d, name, visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value, DeError> {
        // A newtype is stored as what it wraps.
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, DeError> {
        self.json::<V>(|d| serde::Deserializer::deserialize_tuple(d, len, visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.json::<V>(|d| serde::Deserializer::deserialize_tuple_struct(d, name, len, visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.json::<V>(|d| serde::Deserializer::deserialize_struct(d, name, fields, visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        // A unit variant stored bare (`Red`) or as JSON (`"Red"`, `{"Rgb":[1,2,3]}`).
        if self.0.starts_with(['"', '{']) {
            self.json::<V>(|d| serde::Deserializer::deserialize_enum(d, name, variants, visitor))
        } else {
            visitor.visit_enum(de::value::StrDeserializer::<DeError>::new(self.0))
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_str(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct User {
        id: u64,
        name: String,
        tags: Vec<String>,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    enum Color {
        Red,
        Rgb(u8, u8, u8),
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Meters(f64);

    #[test]
    fn plain_values_are_stored_as_text_and_read_back() {
        assert_eq!(encode("hello").unwrap(), "hello");
        assert_eq!(encode(&"\"quoted\"").unwrap(), "\"quoted\"");
        assert_eq!(encode(&42i64).unwrap(), "42");
        assert_eq!(encode(&-7i32).unwrap(), "-7");
        assert_eq!(encode(&2.5f64).unwrap(), "2.5");
        assert_eq!(encode(&true).unwrap(), "true");
        assert_eq!(decode::<String>("\"quoted\"").unwrap(), "\"quoted\"");
        assert_eq!(decode::<String>("42").unwrap(), "42");
        assert_eq!(decode::<i64>("42").unwrap(), 42);
        assert_eq!(decode::<u8>("255").unwrap(), 255);
        assert_eq!(decode::<f64>("2.5").unwrap(), 2.5);
        assert_eq!(decode::<f64>("1e300").unwrap(), 1e300);
        assert!(decode::<bool>("true").unwrap() && decode::<bool>("1").unwrap() && !decode::<bool>("0").unwrap());
        assert_eq!(decode::<char>("x").unwrap(), 'x');
        assert_eq!(decode::<Meters>("3.25").unwrap(), Meters(3.25));
        assert_eq!(decode::<Option<i64>>("5").unwrap(), Some(5));
    }

    #[test]
    fn structured_values_round_trip_as_json() {
        let u = User { id: 7, name: "ann".into(), tags: vec!["a".into(), "b".into()] };
        let s = encode(&u).unwrap();
        assert_eq!(s, r#"{"id":7,"name":"ann","tags":["a","b"]}"#);
        assert_eq!(decode::<User>(&s).unwrap(), u);
        assert_eq!(decode::<Vec<i64>>("[1,2,3]").unwrap(), vec![1, 2, 3]);
        assert_eq!(decode::<(i64, String)>("[1,\"x\"]").unwrap(), (1, "x".into()));
        assert_eq!(encode(&Color::Red).unwrap(), "Red");
        assert_eq!(decode::<Color>("Red").unwrap(), Color::Red);
        assert_eq!(decode::<Color>(&encode(&Color::Rgb(1, 2, 3)).unwrap()).unwrap(), Color::Rgb(1, 2, 3));
        let v: serde_json::Value = decode(r#"{"a":1}"#).unwrap();
        assert_eq!(v["a"], 1);
    }

    #[test]
    fn values_that_do_not_fit_are_errors_not_panics() {
        assert!(decode::<i64>("abc").unwrap_err().contains("not a 64-bit integer"));
        assert!(decode::<u8>("256").is_err());
        assert!(decode::<bool>("yes").is_err());
        assert!(decode::<User>("{\"id\":1}").is_err());
        assert!(decode::<User>("not json").is_err());
        assert!(decode::<User>(r#"{"id":1,"name":"a","tags":[]} trailing"#).is_err());
        assert!(decode::<Color>("Blue").is_err());
        assert!(decode::<char>("xy").is_err());
    }
}
