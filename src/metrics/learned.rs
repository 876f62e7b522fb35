//! Compaction points learned from transcripts: each automatic `compact_boundary` seen
//! records its `preTokens` per model in baton's state dir (`compactions.json`), and
//! later sessions use the median of the latest observations as the point where the host
//! compacts, instead of the fixed buffer. The file is versioned ([`crate::state`]).

use serde_json::{Value, json};

use crate::places;
use crate::state::{Edit, Guard, Loaded, VersionedFile};
use crate::transcript::Compaction;

/// Observations kept per model.
const KEEP: usize = 9;
const LIMIT: u64 = 256 * 1024;

/// The file's format version (1: `models` → `{points: [{pre_tokens, at}]}`).
pub const VERSION: u64 = 1;

/// `compactions.json` as a versioned state file (doctor checks it).
pub fn file() -> Option<VersionedFile> {
    places::state_dir().map(|d| VersionedFile::new(d.join("compactions.json"), VERSION, LIMIT))
}

/// The store as read (an empty one when absent, broken, or a newer baton's).
fn read() -> Value {
    file().and_then(|f| f.load().object()).map(Value::Object).unwrap_or_else(|| json!({"models": {}}))
}

/// The median of a model's recorded compaction points.
pub fn learned_point(model: &str) -> Option<u64> {
    median(&points(&read(), model))
}

fn points(store: &Value, model: &str) -> Vec<u64> {
    store
        .pointer("/models")
        .and_then(|m| m.get(model))
        .and_then(|m| m.get("points"))
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(|p| p.get("pre_tokens").and_then(Value::as_u64)).collect())
        .unwrap_or_default()
}

/// The median of a list (the lower middle for an even count). Pure.
pub fn median(values: &[u64]) -> Option<u64> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len().checked_sub(1)? / 2).copied()
}

/// Records an automatic compaction of `model`, once per boundary (its time is the key).
/// Returns whether something new was written.
pub fn record(model: &str, compaction: &Compaction) -> bool {
    let (Some(pre), Some("auto")) = (compaction.pre_tokens, compaction.trigger.as_deref()) else {
        return false;
    };
    let at = compaction.at.clone().unwrap_or_default();
    let seen = |store: &Value| {
        store
            .pointer("/models")
            .and_then(|m| m.get(model))
            .and_then(|m| m.get("points"))
            .and_then(Value::as_array)
            .is_some_and(|list| list.iter().any(|p| p.get("at").and_then(Value::as_str) == Some(at.as_str())))
    };
    // The hook reads the same boundary again and again: only a new one costs a lock.
    if seen(&read()) {
        return false;
    }
    let Some(file) = file() else { return false };
    let Some(dir) = file.path.parent() else { return false };
    // On the hook path: a short wait, then the boundary is recorded another time.
    let guard = Guard::new(dir.join("compactions.lock"));
    let edit = |loaded: Loaded| {
        let mut store = loaded.object().map(Value::Object).unwrap_or_else(|| json!({"models": {}}));
        if seen(&store) {
            return Edit::Keep(false);
        }
        if !store.get("models").is_some_and(Value::is_object) {
            store["models"] = json!({});
        }
        let Some(models) = store.get_mut("models").and_then(Value::as_object_mut) else {
            return Edit::Keep(false);
        };
        let entry = models.entry(model.to_string()).or_insert_with(|| json!({"points": []}));
        let Some(list) = entry.get_mut("points").and_then(Value::as_array_mut) else {
            return Edit::Keep(false);
        };
        list.push(json!({"pre_tokens": pre, "at": at}));
        let excess = list.len().saturating_sub(KEEP);
        list.drain(..excess);
        match store {
            Value::Object(object) => Edit::Store(object, true),
            _ => Edit::Keep(false),
        }
    };
    file.update(&guard, true, edit).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[5]), Some(5));
        assert_eq!(median(&[9, 1, 5]), Some(5));
        assert_eq!(median(&[4, 1, 3, 2]), Some(2));
    }
}
