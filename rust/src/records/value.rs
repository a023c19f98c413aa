//! A record's values, borrowed from its line: an object's fields as raw JSON, each read
//! by the rule its field follows (no tree of owned values per line).

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// A JSON string, borrowed unless it holds an escape.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Str<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// A JSON object's members in order, each value raw.
pub(super) struct Object<'a>(pub Vec<(Str<'a>, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Object<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Object<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object<'de>, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(32));
                while let Some(entry) = map.next_entry::<Str<'de>, &'de RawValue>()? {
                    out.push(entry);
                }
                Ok(Object(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A record that carries an episode, as cuemem writes one: `{"episode": {...}, "op": ...}`;
/// the episode's members are read in the same pass.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Carrier<'a> {
    #[serde(borrow)]
    pub episode: Object<'a>,
    #[serde(borrow)]
    pub op: Str<'a>,
}

/// A list of strings (anything else in it fails the parse).
struct Strs<'a>(Vec<Str<'a>>);

impl<'de> Deserialize<'de> for Strs<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Strs<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of strings")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strs<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = seq.next_element::<Str<'de>>()? {
                    out.push(s);
                }
                Ok(Strs(out))
            }
        }
        d.deserialize_seq(V)
    }
}

/// One value, read as far as a rule needs: scalars, strings and lists of strings; an
/// object is kept raw (the salience and metadata rules read their own).
#[derive(Debug, Clone)]
pub(super) enum Val<'a> {
    Null,
    Bool(bool),
    Num(f64),
    Str(Cow<'a, str>),
    Strs(Vec<Cow<'a, str>>),
    Object(&'a RawValue),
    /// Anything else (a list holding a non-string, a number JSON cannot hold in a double).
    Other,
}

impl<'a> Val<'a> {
    /// Reads a raw value.
    pub fn of(raw: &'a RawValue) -> Val<'a> {
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'n') => Val::Null,
            Some(b't') => Val::Bool(true),
            Some(b'f') => Val::Bool(false),
            Some(b'"') => {
                serde_json::from_str::<Str<'a>>(text).map_or(Val::Other, |s| Val::Str(s.0))
            }
            Some(b'[') => serde_json::from_str::<Strs<'a>>(text).map_or(Val::Other, |s| {
                Val::Strs(s.0.into_iter().map(|s| s.0).collect())
            }),
            Some(b'{') => Val::Object(raw),
            Some(_) => serde_json::from_str::<f64>(text).map_or(Val::Other, Val::Num),
            None => Val::Other,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Members of a raw object, or `None` if it is not one.
pub(super) fn object(raw: &RawValue) -> Option<Object<'_>> {
    serde_json::from_str::<Object<'_>>(raw.get()).ok()
}
