//! The handoff marker: `⏸ handoff` while the project has a paused handoff waiting
//! (`HANDOFF.json` with `status: "paused"` in the handoff folder, `.planning` by default).

use std::path::Path;

use serde::Deserialize;

use super::{Context, Segment, Style};
use crate::fsx;

pub const MARKER: &str = "⏸ handoff";

/// HANDOFF.json is read whole to find its status; a bigger file is not one baton wrote.
const HANDOFF_LIMIT: u64 = 4 * 1024 * 1024;

pub fn segment(ctx: &Context) -> Option<Segment> {
    ctx.handoff_paused().then(|| Segment::new(MARKER.to_string(), Style::Warning))
}

#[derive(Deserialize)]
struct Status {
    status: Option<String>,
}

/// True when the handoff file at `path` says it is paused.
pub fn is_paused(path: &Path) -> bool {
    let Ok(bytes) = fsx::read_limited(path, HANDOFF_LIMIT) else { return false };
    serde_json::from_slice::<Status>(&bytes).ok().and_then(|s| s.status).as_deref() == Some("paused")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_paused_handoff_counts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("HANDOFF.json");
        assert!(!is_paused(&path));
        std::fs::write(&path, r#"{"version": "1.0", "status": "paused", "remaining_tasks": []}"#).unwrap();
        assert!(is_paused(&path));
        std::fs::write(&path, r#"{"status": "resumed"}"#).unwrap();
        assert!(!is_paused(&path));
        std::fs::write(&path, r#"{"status": 3}"#).unwrap();
        assert!(!is_paused(&path));
        std::fs::write(&path, "not json").unwrap();
        assert!(!is_paused(&path));
    }
}
