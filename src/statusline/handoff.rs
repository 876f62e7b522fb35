//! The handoff marker: `⏸ handoff` while the project has a paused handoff waiting
//! (`HANDOFF.json` with `status: "paused"` in the handoff folder, `.planning` by default,
//! or in baton's private folder for the project).

use std::path::Path;

use super::{Context, Segment, Style};
use crate::fsx;
use crate::handoff::doc;

pub const MARKER: &str = "⏸ handoff";

pub fn segment(ctx: &Context) -> Option<Segment> {
    ctx.handoff_paused().then(|| Segment::new(MARKER.to_string(), Style::Warning))
}

/// True when the handoff file at `path` says it is paused (bounded; one parse that reads
/// the `status` field alone, by the schema's own reader).
pub fn is_paused(path: &Path) -> bool {
    let Ok(bytes) = fsx::read_limited(path, doc::READ_LIMIT) else { return false };
    doc::is_paused(&bytes)
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
