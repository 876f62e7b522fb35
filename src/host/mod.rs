//! The hosts: what Claude Code, Gemini CLI and Codex send on stdin, the one envelope they
//! accept back, and one adapter per host ([`claude`], [`codex`], [`gemini`]) that knows
//! where that host keeps its context figure, its models' windows and where it compacts.
//!
//! Input is read leniently: every field may be missing, `null` or of the wrong type in
//! some host version, and each of those means "not given" rather than a failed parse.
//! Fields baton never looks at (a tool's whole output, say) are skipped, not kept.

pub mod claude;
pub mod codex;
mod envelope;
pub mod gemini;
mod input;
mod lenient;

pub use envelope::Envelope;
pub use input::{
    ContextWindow, CurrentUsage, Dialect, Event, HookInput, PromptCache, RateLimits, RateWindow,
    StatuslineInput,
};

impl Dialect {
    /// The windows this host's models use, smallest first: what tokens beyond an assumed
    /// window prove.
    pub fn windows(self) -> &'static [u64] {
        match self {
            Dialect::Claude => claude::WINDOWS,
            Dialect::Codex => codex::WINDOWS,
            Dialect::Gemini => gemini::WINDOWS,
        }
    }

    /// The host's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Claude => "Claude Code",
            Dialect::Codex => "Codex",
            Dialect::Gemini => "Gemini CLI",
        }
    }
}
