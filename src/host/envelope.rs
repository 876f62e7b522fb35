//! The output envelope: exactly one JSON object, nothing else on stdout.

use serde::Serialize;

/// `{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}`, or the host's
/// own stop, `{"continue": false, "stopReason": …}` (the pause): the only shapes baton
/// prints from a hook. They carry no other field, because Codex's output schema rejects
/// unknown ones (both are in its schema for every event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Envelope {
    #[serde(rename = "hookSpecificOutput", skip_serializing_if = "Option::is_none")]
    output: Option<HookSpecificOutput>,
    #[serde(rename = "continue", skip_serializing_if = "Option::is_none")]
    continue_: Option<bool>,
    #[serde(rename = "stopReason", skip_serializing_if = "Option::is_none")]
    stop_reason: Option<String>,
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
            output: Some(HookSpecificOutput { hook_event_name: event.to_string(), additional_context }),
            continue_: None,
            stop_reason: None,
        }
    }

    /// The host's own stop (Claude Code, Codex and Gemini CLI all honour `continue:
    /// false`): the agent's turn ends; interactive hosts show `reason` to the user.
    pub fn stop(reason: &str) -> Envelope {
        Envelope { output: None, continue_: Some(false), stop_reason: Some(reason.to_string()) }
    }

    /// Whether this envelope stops the agent.
    pub fn is_stop(&self) -> bool {
        self.continue_ == Some(false)
    }

    /// The event name inside the envelope (empty for a stop).
    pub fn event(&self) -> &str {
        self.output.as_ref().map_or("", |o| o.hook_event_name.as_str())
    }

    /// The text the agent is given (empty for a stop).
    pub fn context(&self) -> &str {
        self.output.as_ref().map_or("", |o| o.additional_context.as_str())
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
    fn a_stop_is_the_hosts_own_shape() {
        let value: serde_json::Value = serde_json::from_str(&Envelope::stop("why").to_json()).unwrap();
        assert_eq!(value, serde_json::json!({"continue": false, "stopReason": "why"}));
    }

    #[test]
    fn long_context_is_cut_below_the_host_limit() {
        let env = Envelope::new("PostToolUse", &"é".repeat(20_000));
        assert_eq!(env.context().chars().count(), MAX_CONTEXT_CHARS);
    }
}
