//! The output envelope: exactly one JSON object, nothing else on stdout.
//!
//! Its text goes to the model and to the user's pane: the host shows `systemMessage`,
//! a stop's reason and (in its transcript view) the context. So every text an envelope
//! carries has its control characters but newlines in their visible form
//! ([`escape_controls_but_newlines`]), whatever paths, branch names or quoted notes the
//! sentences hold.

use serde::Serialize;

use crate::util::text::escape_controls_but_newlines;

/// `text` as an envelope carries it.
fn shown(text: &str) -> String {
    escape_controls_but_newlines(text).into_owned()
}

/// The only shapes baton prints from a hook: `{"hookSpecificOutput": {"hookEventName": …,
/// "additionalContext": …}}`, with at most a `systemMessage` (one line shown to the user;
/// every host baton supports accepts it, Codex's schema included) and a `terminalSequence`
/// (Claude Code only); Claude Code's PreCompact hold `{"decision":"block","reason":…}`;
/// the host's own stop `{"continue": false, "stopReason": …}` (the pause); Codex's refusal
/// of a call at PreToolUse (the pause, where no hook ends a turn). None carries any other
/// field (but `baton`, to baton's own OpenCode plugin only), because Codex's output schema
/// rejects unknown ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Envelope {
    Context {
        #[serde(rename = "hookSpecificOutput")]
        output: HookSpecificOutput,
        #[serde(rename = "systemMessage", skip_serializing_if = "Option::is_none")]
        system_message: Option<String>,
        #[serde(rename = "terminalSequence", skip_serializing_if = "Option::is_none")]
        terminal_sequence: Option<String>,
        /// The same context at the top level: GitHub Copilot CLI reads it only there.
        #[serde(rename = "additionalContext", skip_serializing_if = "Option::is_none")]
        top_level_context: Option<String>,
        /// baton's word to its own OpenCode plugin ([`BatonOnly`]).
        #[serde(skip_serializing_if = "Option::is_none")]
        baton: Option<BatonOnly>,
    },
    /// `{"decision": "block", "reason": …}`: Claude Code's PreCompact holds the compaction.
    Block { decision: &'static str, reason: String },
    /// `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision":
    /// "deny", "permissionDecisionReason": …}, "systemMessage": …}`: the call does not run
    /// and the agent reads the reason (Codex's PreToolUse; the pause).
    Refuse {
        #[serde(rename = "hookSpecificOutput")]
        output: RefuseOutput,
        #[serde(rename = "systemMessage", skip_serializing_if = "Option::is_none")]
        system_message: Option<String>,
    },
    /// `{"continue": false, "stopReason": …}`: the agent's turn ends (the pause).
    Stop {
        #[serde(rename = "continue")]
        continue_: bool,
        #[serde(rename = "stopReason")]
        stop_reason: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        baton: Option<BatonOnly>,
    },
}

/// `"baton": {…}`: what baton asks of its own OpenCode plugin, which consumes the answer
/// (the host never sees it; no other host is ever sent it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BatonOnly {
    /// baton has just written this context's CRITICAL handoff: send the session's
    /// messages once (`HandoffFacts`), for the facts it holds.
    pub send_messages: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookSpecificOutput {
    #[serde(rename = "hookEventName")]
    hook_event_name: String,
    #[serde(rename = "additionalContext")]
    additional_context: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RefuseOutput {
    #[serde(rename = "hookEventName")]
    hook_event_name: &'static str,
    #[serde(rename = "permissionDecision")]
    permission_decision: &'static str,
    #[serde(rename = "permissionDecisionReason")]
    permission_decision_reason: String,
}

/// Hosts cut strings longer than this; baton keeps its own text under it.
pub const MAX_CONTEXT_CHARS: usize = 9_500;

impl Envelope {
    /// An envelope for `event` (the name the host sent) carrying `context`.
    pub fn new(event: &str, context: &str) -> Envelope {
        let context = shown(context);
        let additional_context = if context.chars().count() > MAX_CONTEXT_CHARS {
            let mut cut: String = context.chars().take(MAX_CONTEXT_CHARS - 1).collect();
            cut.push('…');
            cut
        } else {
            context
        };
        Envelope::Context {
            output: HookSpecificOutput { hook_event_name: event.to_string(), additional_context },
            system_message: None,
            terminal_sequence: None,
            top_level_context: None,
            baton: None,
        }
    }

    /// The envelope with its context also at the top level (GitHub Copilot CLI only:
    /// Codex's schema rejects the field).
    pub fn with_top_level_context(mut self) -> Envelope {
        if let Envelope::Context { output, top_level_context, .. } = &mut self {
            *top_level_context = Some(output.additional_context.clone());
        }
        self
    }

    /// The envelope with a line for the user (`systemMessage`; a block or a stop already
    /// shows its reason).
    pub fn with_system_message(mut self, text: String) -> Envelope {
        if let Envelope::Context { system_message, .. } = &mut self {
            *system_message = Some(shown(&text));
        }
        self
    }

    /// The envelope with a terminal escape sequence for the host to emit
    /// (`terminalSequence`: Claude Code only; callers check [`super::HostKind`]).
    pub fn with_terminal_sequence(mut self, sequence: String) -> Envelope {
        if let Envelope::Context { terminal_sequence, .. } = &mut self {
            *terminal_sequence = Some(sequence);
        }
        self
    }

    /// Holds what the event is about (Claude Code's PreCompact: the compaction), saying why.
    pub fn block(reason: &str) -> Envelope {
        Envelope::Block { decision: "block", reason: shown(reason) }
    }

    /// The host's own stop (Claude Code, Codex and Gemini CLI all honour `continue:
    /// false`): the agent's turn ends; interactive hosts show `reason` to the user.
    pub fn stop(reason: &str) -> Envelope {
        Envelope::Stop { continue_: false, stop_reason: shown(reason), baton: None }
    }

    /// The envelope asking baton's OpenCode plugin for the session's messages
    /// ([`BatonOnly::send_messages`]; a context or a stop only).
    pub fn asking_for_messages(mut self) -> Envelope {
        if let Envelope::Context { baton, .. } | Envelope::Stop { baton, .. } = &mut self {
            *baton = Some(BatonOnly { send_messages: true });
        }
        self
    }

    /// Refuses the call about to run (Codex's PreToolUse): the agent reads `reason`, the
    /// user is shown `notice` when given.
    pub fn refuse(reason: &str, notice: Option<String>) -> Envelope {
        Envelope::Refuse {
            output: RefuseOutput {
                hook_event_name: "PreToolUse",
                permission_decision: "deny",
                permission_decision_reason: shown(reason),
            },
            system_message: notice.as_deref().map(shown),
        }
    }

    /// The text the agent is given (a block's reason; empty for a stop).
    #[cfg(test)]
    pub fn context(&self) -> &str {
        match self {
            Envelope::Context { output, .. } => &output.additional_context,
            Envelope::Block { reason, .. } => reason,
            Envelope::Refuse { output, .. } => &output.permission_decision_reason,
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
    fn every_text_shows_control_characters_but_newlines() {
        let planted = "a\u{1b}]52;c;eA==\u{7}\nb\u{9b}2J";
        let shown = "a\\u001b]52;c;eA==\\u0007\nb\\u009b2J";
        let context = Envelope::new("PostToolUse", planted).with_system_message(planted.to_string());
        let value: serde_json::Value = serde_json::from_str(&context.to_json()).unwrap();
        assert_eq!(value["hookSpecificOutput"]["additionalContext"], shown);
        assert_eq!(value["systemMessage"], shown);
        assert_eq!(
            Envelope::stop(planted),
            Envelope::Stop { continue_: false, stop_reason: shown.into(), baton: None }
        );
        assert_eq!(Envelope::block(planted).context(), shown);
        assert_eq!(Envelope::refuse(planted, None).context(), shown);
    }

    #[test]
    fn a_stop_is_the_hosts_own_shape() {
        let value: serde_json::Value = serde_json::from_str(&Envelope::stop("why").to_json()).unwrap();
        assert_eq!(value, serde_json::json!({"continue": false, "stopReason": "why"}));
    }

    #[test]
    fn a_refusal_is_codexs_pre_tool_use_deny() {
        let value: serde_json::Value =
            serde_json::from_str(&Envelope::refuse("why", Some("baton: paused".into())).to_json()).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "why"}, "systemMessage": "baton: paused"})
        );
        let bare: serde_json::Value = serde_json::from_str(&Envelope::refuse("why", None).to_json()).unwrap();
        assert_eq!(bare.as_object().unwrap().len(), 1);
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
