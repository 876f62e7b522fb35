//! The hosts' wire formats: what Claude Code, Gemini CLI and Codex send on stdin, and
//! the one envelope they accept back.
//!
//! Input is read leniently: every field may be missing, `null` or of the wrong type in
//! some host version, and each of those means "not given" rather than a failed parse.
//! Fields baton never looks at (a tool's whole output, say) are skipped, not kept.

mod envelope;
mod input;
mod lenient;

pub use envelope::Envelope;
pub use input::{ContextWindow, CurrentUsage, Dialect, Event, HookInput, StatuslineInput};
