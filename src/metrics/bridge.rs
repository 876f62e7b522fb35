//! The bridge file: `<tmp>/claude-ctx-<session>.json`, GSD's format.
//!
//! The statusline writes it on every render that carries a figure; the monitor reads it
//! after each tool call. GSD's fields come first (`session_id`, `remaining_percentage`,
//! `used_pct`, `timestamp`); baton adds the token counts, the window size, and where the
//! transcript ended when the figure was taken (`transcript_offset`), which GSD ignores.
//! With that offset the monitor reads only what the transcript gained since: a reply
//! written after the render makes the bridge one reply behind, however fresh it is.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Figure, Origin, WindowSource};
use crate::{fsx, places};

/// The bridge file's content.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Bridge {
    pub session_id: String,
    #[serde(serialize_with = "whole_when_integral")]
    pub remaining_percentage: f64,
    pub used_pct: u32,
    pub timestamp: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window_size: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
    /// The transcript's size in bytes when the statusline rendered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript_offset: Option<u64>,
}

/// `28.0` is written `28`, as GSD's JavaScript writes it.
fn whole_when_integral<S: serde::Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        serializer.serialize_i64(*value as i64)
    } else {
        serializer.serialize_f64(*value)
    }
}

const BRIDGE_LIMIT: u64 = 64 * 1024;

impl Bridge {
    pub fn from_figure(session_id: &str, figure: &Figure, model_id: Option<&str>) -> Bridge {
        Bridge {
            session_id: session_id.to_string(),
            remaining_percentage: figure.remaining_pct,
            used_pct: figure.used_pct(),
            timestamp: figure.taken_at,
            used_tokens: figure.used_tokens,
            context_window_size: figure.window_tokens,
            model_id: model_id.map(str::to_string),
            transcript_offset: None,
        }
    }

    /// Reads a bridge leniently (GSD's or baton's). `None` for anything malformed: a
    /// missing or non-numeric `remaining_percentage` or `timestamp`, a figure out of range.
    pub fn parse(bytes: &[u8]) -> Option<Bridge> {
        let value: Value = serde_json::from_slice(bytes).ok()?;
        let remaining = value.get("remaining_percentage")?.as_f64().filter(|r| (0.0..=100.0).contains(r))?;
        let timestamp = value.get("timestamp")?.as_f64().filter(|t| t.is_finite() && *t > 0.0)? as i64;
        Some(Bridge {
            session_id: value.get("session_id").and_then(Value::as_str).unwrap_or_default().to_string(),
            remaining_percentage: remaining,
            used_pct: (100.0 - remaining).round() as u32,
            timestamp,
            used_tokens: value.get("used_tokens").and_then(Value::as_u64),
            context_window_size: value.get("context_window_size").and_then(Value::as_u64),
            model_id: value.get("model_id").and_then(Value::as_str).map(str::to_string),
            transcript_offset: value.get("transcript_offset").and_then(Value::as_u64),
        })
    }

    pub fn figure(&self) -> Figure {
        Figure {
            remaining_pct: self.remaining_percentage,
            used_tokens: self.used_tokens,
            window_tokens: self.context_window_size,
            origin: Origin::Bridge,
            taken_at: self.timestamp,
            // The statusline's figure: the host's own window, whatever the bridge holds.
            window_source: WindowSource::Statusline,
            estimate: false,
        }
    }
}

/// Writes the bridge for `session_id` atomically, unless the file already holds exactly
/// these bytes (another render of the same figure within the same second: a host renders
/// several times a second while a reply streams). Errors are the caller's to ignore: a
/// statusline never fails because the bridge could not be written.
///
/// The read costs four system calls on a file in the page cache; the replace it saves
/// (a private temporary file, its write, the rename over the old one) took 0.2-0.3 ms of
/// a 1.3-1.8 ms render on a 2-core VM, and a write to the disk's journal every time.
pub fn write_bridge(bridge: &Bridge) -> std::io::Result<()> {
    if !fsx::valid_session_id(&bridge.session_id) {
        return Err(std::io::Error::other("invalid session id"));
    }
    let json = serde_json::to_vec(bridge).map_err(std::io::Error::other)?;
    let path = places::bridge_path(&bridge.session_id);
    if fsx::read_owned(&path, BRIDGE_LIMIT).is_ok_and(|on_disk| on_disk == json) {
        return Ok(());
    }
    fsx::write_atomic(&path, &json, fsx::WriteOptions::STATE)
}

/// Reads the session's bridge if it exists, is well formed and belongs to this user,
/// however old it is (its window size stays useful).
pub fn read_any_bridge(session_id: &str) -> Option<Bridge> {
    if !fsx::valid_session_id(session_id) {
        return None;
    }
    let bytes = fsx::read_owned(&places::bridge_path(session_id), BRIDGE_LIMIT).ok()?;
    Bridge::parse(&bytes)
}

/// Whether a bridge is fresh: no older than `stale_seconds`, and not from the future.
pub fn is_fresh(bridge: &Bridge, now: i64, stale_seconds: u64) -> bool {
    (now - bridge.timestamp).unsigned_abs() <= stale_seconds
}

/// Reads the session's bridge if it exists, is well formed, belongs to this user and is
/// fresh.
pub fn read_bridge(session_id: &str, now: i64, stale_seconds: u64) -> Option<Bridge> {
    read_any_bridge(session_id).filter(|b| is_fresh(b, now, stale_seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gsd_bridge_is_read() {
        let b = Bridge::parse(
            br#"{"session_id":"s","remaining_percentage":28,"used_pct":72,"timestamp":1700000000}"#,
        )
        .unwrap();
        assert_eq!(b.remaining_percentage, 28.0);
        assert_eq!(b.used_pct, 72);
        assert_eq!(b.figure().origin, Origin::Bridge);
    }

    #[test]
    fn malformed_bridges_are_refused() {
        for bad in [
            &b"not json"[..],
            br#"{"remaining_percentage":"28","timestamp":1}"#,
            br#"{"remaining_percentage":28}"#,
            br#"{"remaining_percentage":128,"timestamp":1}"#,
            br#"[1,2]"#,
            br#"null"#,
        ] {
            assert!(Bridge::parse(bad).is_none(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn bridge_json_keeps_gsd_fields_first() {
        let figure = Figure {
            remaining_pct: 28.0,
            used_tokens: Some(144_012),
            window_tokens: Some(200_000),
            origin: Origin::Statusline,
            taken_at: 7,
            ..Figure::default()
        };
        let json = serde_json::to_string(&Bridge::from_figure("s", &figure, None)).unwrap();
        assert!(
            json.starts_with(r#"{"session_id":"s","remaining_percentage":28,"used_pct":72,"timestamp":7"#),
            "{json}"
        );
    }
}
