//! Test helpers shared by the format readers' fixture tests.

use std::io::{Seek, SeekFrom};
use std::path::Path;

use super::facts::{FactsBudget, SessionFacts};
use super::format::Format;
use super::gather_facts_as;

/// The facts a reader gets from `bytes` written to a file, read as `format`; and, with
/// `gib_before`, from the same bytes after a sparse gibibyte (the tail budget must keep
/// the read bounded whatever the size). For the host readers' fixture tests.
fn facts_of_file(format: Format, bytes: &[u8], gib_before: bool) -> SessionFacts {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("transcript.jsonl");
    let mut file = std::fs::File::create(&path).unwrap();
    if gib_before {
        file.set_len(1 << 30).unwrap();
        file.seek(SeekFrom::End(0)).unwrap();
        file.write_all(b"\n").unwrap();
    }
    file.write_all(bytes).unwrap();
    drop(file);
    let budget = FactsBudget::default();
    let facts = gather_facts_as(format, &path, budget).unwrap();
    assert!(facts.bytes_read <= budget.head + budget.tail, "read {} bytes", facts.bytes_read);
    facts
}

/// The checks every host's facts session at CRITICAL shares (tests/real_hosts/handoff_facts.rs
/// captured them, tests/fixtures/real/README.md says what they hold): the request, the
/// model, the folder, the agent's stated progress, the file written, the failing command
/// and the one that succeeded, read as `format` from the file alone and after a sparse
/// gibibyte. Returns both readings for the host's own checks (its todo list).
pub(crate) fn check_facts_session_at_critical(
    format: Format,
    bytes: &[u8],
    model: &str,
) -> [SessionFacts; 2] {
    let first_line = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    assert_eq!(Format::sniff(first_line), format);
    [false, true].map(|gib_before| {
        let facts = facts_of_file(format, bytes, gib_before);
        assert_eq!(facts.format, format);
        let request = "Add the client limits file, then run the limit tests.";
        assert_eq!(facts.last_request.as_deref(), Some(request));
        // Past a gibibyte of other lines the first request is out of reach of the head read.
        let first = if gib_before { None } else { Some(request) };
        assert_eq!(facts.first_request.as_deref(), first);
        assert_eq!(facts.model.as_deref(), Some(model));
        assert_eq!(facts.cwd.as_deref(), Some("/home/dev/shop-api"));
        assert!(facts.session_id.is_some());
        let said = facts.last_assistant_text.as_deref().unwrap_or_default();
        assert!(said.starts_with("Progress: notes/limits.md is written"), "{said}");
        assert_eq!(facts.files_relative_to(Path::new("/home/dev/shop-api")), vec!["notes/limits.md"]);
        let failing = "ls /baton-e2e-missing-folder";
        assert!(facts.commands_run.iter().any(|c| c.command == failing && c.failed));
        assert!(facts.commands_run.iter().any(|c| c.command == "echo step 4" && !c.failed));
        let failure = facts.last_failure.as_ref().expect("a last failure");
        assert_eq!(failure.command.as_deref(), Some(failing));
        assert!(!failure.succeeded_later);
        facts
    })
}

/// Sets a file's modification time a minute back: written long before it is read, as
/// a transcript is between two calls when nothing happened (a read just after a write
/// is racy, `resume::Mark::racy`).
pub fn written_a_minute_ago(path: &Path) {
    let file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(60)).unwrap();
}
