//! The lenient field type of HANDOFF.json: [`Field`] holds a field as found (absent,
//! `null`, of the schema's type, or of another type, kept to be written back as it was),
//! [`Written`] a nested object or list entry as written, read through its schema, and
//! [`Scalar`] the text-or-number GSD writes for `phase`, `plan` and some entries.

use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One field of HANDOFF.json as found: absent, `null`, a value of the type the schema
/// gives it, or a value of another type (read as absent, and written back as it was, so
/// a rewrite never loses what someone wrote).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Field<T> {
    #[default]
    Missing,
    Null,
    Set(T),
    Other(Value),
}

impl<T> Field<T> {
    /// The value, when it has the schema's type.
    pub fn get(&self) -> Option<&T> {
        match self {
            Field::Set(value) => Some(value),
            _ => None,
        }
    }

    pub fn is_missing(&self) -> bool {
        matches!(self, Field::Missing)
    }

    /// Present with a value (of any type), not absent and not `null`.
    pub(super) fn is_present(&self) -> bool {
        matches!(self, Field::Set(_) | Field::Other(_))
    }
}

impl<T> From<Option<T>> for Field<T> {
    /// `None` is written as `null`.
    fn from(value: Option<T>) -> Self {
        value.map_or(Field::Null, Field::Set)
    }
}

impl<T> Field<T> {
    /// `None` is left out (not written at all).
    pub fn or_missing(value: Option<T>) -> Field<T> {
        value.map_or(Field::Missing, Field::Set)
    }
}

impl<T> Field<Vec<T>> {
    /// The list's entries, when it is a list (none otherwise).
    pub fn entries(&self) -> &[T] {
        self.get().map(Vec::as_slice).unwrap_or_default()
    }
}

impl Field<Vec<Field<String>>> {
    /// A list of text: the entries that are text (blank or not), as written.
    pub fn strings(&self) -> Vec<String> {
        self.entries().iter().filter_map(Field::get).cloned().collect()
    }
}

impl<T> Field<Written<T>> {
    /// The value read through its schema, when it is an object.
    pub fn read(&self) -> Option<T>
    where
        T: DeserializeOwned,
    {
        self.get()?.read()
    }
}

impl Field<String> {
    /// The text, unless it is blank.
    pub fn text(&self) -> Option<&str> {
        self.get().map(String::as_str).filter(|s| !s.trim().is_empty())
    }
}

impl Field<Value> {
    /// Any serialisable value (`null` for `None`).
    pub fn json(value: impl Serialize) -> Field<Value> {
        match serde_json::to_value(value) {
            Ok(Value::Null) | Err(_) => Field::Null,
            Ok(value) => Field::Set(value),
        }
    }
}

impl<T: Serialize> Serialize for Field<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Missing | Field::Null => serializer.serialize_unit(),
            Field::Set(value) => value.serialize(serializer),
            Field::Other(value) => value.serialize(serializer),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Field<T> {
    /// Never fails: a value of another type is kept as [`Field::Other`].
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.is_null() {
            return Ok(Field::Null);
        }
        Ok(match T::deserialize(&value) {
            Ok(typed) => Field::Set(typed),
            Err(_) => Field::Other(value),
        })
    }
}

/// `phase` and `plan`: GSD writes numbers or text (`"03"`); both read as text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Number(serde_json::Number),
    Text(String),
}

impl Scalar {
    /// A number when the text is one written plainly (`2`, not `"02"`), else the text.
    pub fn number_or_text(text: &str) -> Scalar {
        match text.parse::<u64>() {
            Ok(n) if n.to_string() == text => Scalar::Number(n.into()),
            _ => Scalar::Text(text.to_string()),
        }
    }

    /// The text, or the number written out; blank text is none.
    pub fn text(&self) -> Option<String> {
        match self {
            Scalar::Text(s) if !s.trim().is_empty() => Some(s.clone()),
            Scalar::Text(_) => None,
            Scalar::Number(n) => Some(n.to_string()),
        }
    }

    /// The text, unless it is blank or a number.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Scalar::Text(s) if !s.trim().is_empty() => Some(s),
            _ => None,
        }
    }
}

/// A nested value of HANDOFF.json (an object of baton's section, an entry of a list) as
/// written, read through its schema `T`, one of the item types of `schema.rs`.
///
/// The value is kept as it was found, its keys in their order, so a rewrite gives back the
/// bytes someone else wrote; [`Written::read`] reads it leniently (an object only, each
/// field a [`Field`]); [`Written::new`] is how baton writes one.
pub struct Written<T> {
    value: Value,
    schema: PhantomData<fn() -> T>,
}

impl<T: Serialize> Written<T> {
    pub fn new(item: &T) -> Written<T> {
        Written { value: serde_json::to_value(item).unwrap_or(Value::Null), schema: PhantomData }
    }
}

impl<T> Written<T> {
    /// The value as written.
    pub fn value(&self) -> &Value {
        &self.value
    }
}

impl<T: DeserializeOwned> Written<T> {
    /// The value read through its schema, when it is an object (an item's fields are
    /// each a [`Field`], so any object reads).
    pub fn read(&self) -> Option<T> {
        if self.value.is_object() { T::deserialize(&self.value).ok() } else { None }
    }
}

// By hand, not derived: a derive would ask `T` for the same traits.
impl<T> Clone for Written<T> {
    fn clone(&self) -> Self {
        Written { value: self.value.clone(), schema: PhantomData }
    }
}

impl<T> PartialEq for Written<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T> std::fmt::Debug for Written<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value.fmt(f)
    }
}

impl<T> Serialize for Written<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

impl<'de, T> Deserialize<'de> for Written<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Written { value: Value::deserialize(deserializer)?, schema: PhantomData })
    }
}
