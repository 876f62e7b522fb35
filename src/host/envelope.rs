//! The output envelope: exactly one JSON object, nothing else on stdout.

use serde::Serialize;

/// `{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}`, the shape baton
/// prints from a hook, or Claude Code's PreCompact hold `{"decision":"block","reason":…}`.
/// Neither carries any other field, because Codex's output schema rejects unknown ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Envelope {
    Context {
        #[serde(rename = "hookSpecificOutput")]
        output: HookSpecificOutput,
    },
    /// `{"decision": "block", "reason": …}`: Claude Code's PreCompact holds the compaction.
    Block { decision: &'static str, reason: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookSpecificOutput {
    #[serde(rename = "hookEventName")]
    hook_event_name: String,
    #[serde(rename = "additionalContext")]
    additional_context: String,
}

/// Hosts cut strings longer than this; baton keeps its own text under it.
pub const MAX_CONTEXT_CHARS: usize = 9_500;

impl Envelope {
    /// An envelope for `event` (the name the host sent) carrying `context`.
    pub fn new(event: &str, context: &str) -> Envelope {
        let additional_context = if context.chars().count() > MAX_CONTEXT_CHARS {
            let mut cut: String = context.chars().take(MAX_CONTEXT_CHARS - 1).collect();
            cut.push('…');
            cut
        } else {
            context.to_string()
        };
        Envelope::Context {
            output: HookSpecificOutput { hook_event_name: event.to_string(), additional_context },
        }
    }

    /// Holds what the event is about (Claude Code's PreCompact: the compaction), saying why.
    pub fn block(reason: &str) -> Envelope {
        Envelope::Block { decision: "block", reason: reason.to_string() }
    }

    /// The event name inside the envelope (none in a block).
    pub fn event(&self) -> &str {
        match self {
            Envelope::Context { output } => &output.hook_event_name,
            Envelope::Block { .. } => "",
        }
    }

    /// The text the agent is given (a block's reason).
    pub fn context(&self) -> &str {
        match self {
            Envelope::Context { output } => &output.additional_context,
            Envelope::Block { reason, .. } => reason,
        }
    }

    /// The envelope as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_has_exactly_the_host_shape() {
        let json = Envelope::new("AfterTool", "CONTEXT WARNING: x").to_json();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "CONTEXT WARNING: x"}})
        );
    }

    #[test]
    fn long_context_is_cut_below_the_host_limit() {
        let env = Envelope::new("PostToolUse", &"é".repeat(20_000));
        assert_eq!(env.context().chars().count(), MAX_CONTEXT_CHARS);
    }
}
