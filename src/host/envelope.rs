//! The output envelope: exactly one JSON object, nothing else on stdout.

use serde::Serialize;

/// The only shapes baton prints from a hook: `{"hookSpecificOutput": {"hookEventName": …,
/// "additionalContext": …}}`; Claude Code's PreCompact hold `{"decision":"block","reason":…}`;
/// the host's own stop `{"continue": false, "stopReason": …}` (the pause). None carries any
/// other field, because Codex's output schema rejects unknown ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Envelope {
    Context {
        #[serde(rename = "hookSpecificOutput")]
        output: HookSpecificOutput,
    },
    /// `{"decision": "block", "reason": …}`: Claude Code's PreCompact holds the compaction.
    Block { decision: &'static str, reason: String },
    /// `{"continue": false, "stopReason": …}`: the agent's turn ends (the pause).
    Stop {
        #[serde(rename = "continue")]
        continue_: bool,
        #[serde(rename = "stopReason")]
        stop_reason: String,
    },
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

    /// The host's own stop (Claude Code, Codex and Gemini CLI all honour `continue:
    /// false`): the agent's turn ends; interactive hosts show `reason` to the user.
    pub fn stop(reason: &str) -> Envelope {
        Envelope::Stop { continue_: false, stop_reason: reason.to_string() }
    }

    /// Whether this envelope stops the agent.
    pub fn is_stop(&self) -> bool {
        matches!(self, Envelope::Stop { .. })
    }

    /// The event name inside the envelope (empty for a block or a stop).
    pub fn event(&self) -> &str {
        match self {
            Envelope::Context { output } => &output.hook_event_name,
            Envelope::Block { .. } | Envelope::Stop { .. } => "",
        }
    }

    /// The text the agent is given (a block's reason; empty for a stop).
    pub fn context(&self) -> &str {
        match self {
            Envelope::Context { output } => &output.additional_context,
            Envelope::Block { reason, .. } => reason,
            Envelope::Stop { .. } => "",
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
