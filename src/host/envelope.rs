//! The output envelope: exactly one JSON object, nothing else on stdout.

use serde::Serialize;

/// `{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}`, the only shape
/// baton prints from a hook, with at most a `systemMessage` (one line shown to the user;
/// every host baton supports accepts it, Codex's schema included) and a
/// `terminalSequence` (Claude Code only). Nothing else: Codex's output schema rejects
/// unknown fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Envelope {
    #[serde(rename = "hookSpecificOutput")]
    output: HookSpecificOutput,
    #[serde(rename = "systemMessage", skip_serializing_if = "Option::is_none")]
    system_message: Option<String>,
    #[serde(rename = "terminalSequence", skip_serializing_if = "Option::is_none")]
    terminal_sequence: Option<String>,
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
        Envelope {
            output: HookSpecificOutput { hook_event_name: event.to_string(), additional_context },
            system_message: None,
            terminal_sequence: None,
        }
    }

    /// The envelope with a line for the user (`systemMessage`).
    pub fn with_system_message(mut self, text: String) -> Envelope {
        self.system_message = Some(text);
        self
    }

    /// The envelope with a terminal escape sequence for the host to emit
    /// (`terminalSequence`: Claude Code only; callers check [`super::HostKind`]).
    pub fn with_terminal_sequence(mut self, sequence: String) -> Envelope {
        self.terminal_sequence = Some(sequence);
        self
    }

    /// The line shown to the user, if any.
    pub fn system_message(&self) -> Option<&str> {
        self.system_message.as_deref()
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
    fn a_notice_rides_beside_the_context() {
        let json = Envelope::new("PostToolUse", "x")
            .with_system_message("baton: y".into())
            .with_terminal_sequence("\u{1b}]9;baton: y\u{7}".into())
            .to_json();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["systemMessage"], "baton: y");
        assert_eq!(value["terminalSequence"], "\u{1b}]9;baton: y\u{7}");
        assert_eq!(value.as_object().unwrap().len(), 3);
    }

    #[test]
    fn long_context_is_cut_below_the_host_limit() {
        let env = Envelope::new("PostToolUse", &"é".repeat(20_000));
        assert_eq!(env.context().chars().count(), MAX_CONTEXT_CHARS);
    }
}
