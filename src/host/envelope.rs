//! The output envelope: exactly one JSON object, nothing else on stdout.

use serde::Serialize;

/// `{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}`, the only shape
/// baton prints from a hook. It carries no other field, because Codex's output schema
/// rejects unknown ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Envelope {
    #[serde(rename = "hookSpecificOutput")]
    output: HookSpecificOutput,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct HookSpecificOutput {
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
        Envelope { output: HookSpecificOutput { hook_event_name: event.to_string(), additional_context } }
    }

    /// The event name inside the envelope.
    pub fn event(&self) -> &str {
        &self.output.hook_event_name
    }

    /// The text the agent is given.
    pub fn context(&self) -> &str {
        &self.output.additional_context
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
