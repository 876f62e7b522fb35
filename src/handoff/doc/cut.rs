//! The size cut: HANDOFF.json as baton writes it, pretty JSON of at most [`SIZE_LIMIT`]
//! bytes.

use serde_json::{Map, Value};

use super::HandoffError;
use super::schema::{field, is_known_field};

/// The largest HANDOFF.json baton writes.
pub const SIZE_LIMIT: usize = 64 * 1024;

/// Lists baton cuts when the file would exceed [`SIZE_LIMIT`], longest first.
const CUTTABLE: &[&str] = &[
    field::UNCOMMITTED_FILES,
    field::COMPLETED_TASKS,
    field::REMAINING_TASKS,
    field::DECISIONS,
    field::BLOCKERS,
    field::HUMAN_ACTIONS_PENDING,
];
const CUTTABLE_BATON: &[&str] = &[
    "files_touched",
    "commands_run",
    "session_commits",
    "background_processes",
    "placeholder_summaries",
    "resumptions",
];

fn pretty(value: &Value) -> Result<Vec<u8>, HandoffError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(HandoffError::Encode)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Cuts a list to `keep` entries and appends an "and N more" entry (a string for a list
/// of strings, an object with `name`/`description` for a list of objects). Returns N.
fn cut_list(list: &mut Vec<Value>, keep: usize) -> usize {
    // A previous cut's marker is not an entry.
    let marker = |v: &Value| {
        v.get("cut") == Some(&Value::Bool(true))
            || v.as_str().is_some_and(|s| s.starts_with("… and ") && s.ends_with(" more"))
    };
    list.retain(|v| !marker(v));
    if list.len() <= keep {
        return 0;
    }
    let more = list.len() - keep;
    let strings = list.iter().all(Value::is_string);
    list.truncate(keep);
    let text = format!("… and {more} more");
    list.push(if strings {
        Value::from(text)
    } else {
        serde_json::json!({"name": text, "description": text, "cut": true})
    });
    more
}

/// Adds `more` entries left out of `key` to the record of cuts.
fn add_cut(cuts: &mut Map<String, Value>, key: &str, more: usize) {
    if more > 0 {
        let before = cuts.get(key).and_then(Value::as_u64).unwrap_or(0);
        cuts.insert(key.into(), Value::from(before + more as u64));
    }
}

/// Cuts a string to at most `max` characters.
fn cut_text(value: &mut Value, max: usize) -> bool {
    if let Value::String(s) = value {
        if s.chars().count() > max {
            let mut cut: String = s.chars().take(max).collect();
            cut.push_str("… (cut)");
            *s = cut;
            return true;
        }
    }
    false
}

/// The bytes of a HANDOFF.json baton writes: at most [`SIZE_LIMIT`]. Long lists are cut
/// (halved until it fits, each cut recorded in `baton.cut` as field → entries left out),
/// then long texts; fields of unknown purpose go last, named in `baton.cut`.
pub fn encode(value: &Value) -> Result<Vec<u8>, HandoffError> {
    let bytes = pretty(value)?;
    if bytes.len() <= SIZE_LIMIT {
        return Ok(bytes);
    }
    let mut value = value.clone();
    let Some(object) = value.as_object_mut() else { return Ok(bytes) };
    let mut cuts = Map::new();
    let mut keep = 200usize;
    loop {
        for key in CUTTABLE {
            if let Some(Value::Array(list)) = object.get_mut(*key) {
                add_cut(&mut cuts, key, cut_list(list, keep));
            }
        }
        if let Some(Value::Object(baton)) = object.get_mut("baton") {
            for key in CUTTABLE_BATON {
                if let Some(Value::Array(list)) = baton.get_mut(*key) {
                    add_cut(&mut cuts, &format!("baton.{key}"), cut_list(list, keep));
                }
            }
        }
        let size = pretty(&Value::Object(object.clone()))?.len();
        if size <= SIZE_LIMIT - 1024 || keep <= 5 {
            break;
        }
        keep /= 2;
    }
    // Long texts anywhere (including inside list entries).
    if pretty(&Value::Object(object.clone()))?.len() > SIZE_LIMIT - 1024 {
        for (key, field) in object.iter_mut() {
            let mut cut = false;
            walk_strings(field, &mut |s| cut |= cut_text(s, 2000));
            if cut {
                cuts.insert(format!("{key} (texts)"), Value::from("cut to 2000 characters"));
            }
        }
    }
    // Still too big: drop fields nobody reads, biggest first.
    let known = is_known_field;
    loop {
        if pretty(&Value::Object(object.clone()))?.len() <= SIZE_LIMIT - 1024 {
            break;
        }
        let biggest = object
            .iter()
            .filter(|(k, _)| !known(k.as_str()))
            .map(|(k, v)| (k.clone(), v.to_string().len()))
            .max_by_key(|(_, n)| *n);
        let Some((key, _)) = biggest else { break };
        object.remove(&key);
        cuts.insert(key, Value::from("dropped: too large"));
    }
    if !cuts.is_empty() {
        if let Some(Value::Object(baton)) = object.get_mut("baton") {
            baton.insert("cut".into(), Value::Object(cuts));
        } else {
            object.insert("baton".into(), serde_json::json!({"cut": cuts}));
        }
    }
    let bytes = pretty(&value)?;
    if bytes.len() > SIZE_LIMIT {
        return Err(HandoffError::TooBig(bytes.len()));
    }
    Ok(bytes)
}

fn walk_strings(value: &mut Value, f: &mut impl FnMut(&mut Value)) {
    match value {
        Value::String(_) => f(value),
        Value::Array(list) => list.iter_mut().for_each(|v| walk_strings(v, f)),
        Value::Object(map) => map.values_mut().for_each(|v| walk_strings(v, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn encode_stays_under_the_limit_and_says_what_was_cut() {
        let files: Vec<String> = (0..50_000).map(|i| format!("src/generated/file-{i:05}.rs")).collect();
        let value = json!({"version": "1.0", "uncommitted_files": files, "next_action": "x".repeat(100_000),
            "agent_notes": "y".repeat(200_000), "baton": {"id": "a"}});
        let bytes = encode(&value).unwrap();
        assert!(bytes.len() <= SIZE_LIMIT, "{}", bytes.len());
        let back: Value = serde_json::from_slice(&bytes).unwrap();
        let list = back["uncommitted_files"].as_array().unwrap();
        assert!(list.last().unwrap().as_str().unwrap().starts_with("… and "), "{:?}", list.last());
        assert!(back["baton"]["cut"]["uncommitted_files"].as_u64().unwrap() > 49_000);
        assert_eq!(back["baton"]["id"], "a");
        // Small ones are untouched.
        let small = json!({"version": "1.0", "x": 1});
        assert_eq!(encode(&small).unwrap(), pretty(&small).unwrap());
    }
}
