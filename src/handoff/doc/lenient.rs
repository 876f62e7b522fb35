//! The lenient field type of HANDOFF.json: [`Field`] holds a field as found (absent,
//! `null`, of the schema's type, or of another type, kept to be written back as it was),
//! and [`Scalar`] the text-or-number GSD writes for `phase` and `plan`.

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

impl Field<Vec<Value>> {
    pub(super) fn items(&self) -> &[Value] {
        self.get().map(Vec::as_slice).unwrap_or_default()
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

    pub(super) fn text(&self) -> Option<String> {
        match self {
            Scalar::Text(s) if !s.trim().is_empty() => Some(s.clone()),
            Scalar::Text(_) => None,
            Scalar::Number(n) => Some(n.to_string()),
        }
    }
}
