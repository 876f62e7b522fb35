//! The host's own signal that a leg ended on a usage limit or an API error, read after the
//! leg from what the host left (docs/HOSTS.md, "Faults"):
//!
//! - Claude Code: its transcript's synthetic assistant message (`isApiErrorMessage`), with
//!   `error: "rate_limit"` and the exact reset in `apiErrorParams.rate_limit_info.resetsAt`
//!   for a usage limit, `"server_error"` (and others) for an API error.
//! - Codex: its rollout's `codex_error_info` (`usage_limit_exceeded`, with the reset in the
//!   newest `rate_limits` at 100 %), else its `ERROR:` line on stderr.
//! - Gemini CLI: its stderr (`TerminalQuotaError` and "Please retry in N s"; an API
//!   error's `cause: { code: N`).
//!
//! The readers of text are pure ([`from_claude_lines`], [`from_codex_lines`],
//! [`from_stderr`]); [`read`] gathers their input. Everything read is the host's (or the
//! server's) words: bounded, one line, shown only through `Outside`.

use std::path::PathBuf;

use serde_json::Value;

use super::faults::HostFault;
use crate::host::HostKind;

/// The most bytes read from the end of a transcript, and the lines looked at.
const TAIL_BUDGET: u64 = 512 * 1024;
const TAIL_LINES: usize = 400;
/// The longest message kept.
const MESSAGE_MAX: usize = 300;

/// A message as one bounded line.
fn one_line(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= MESSAGE_MAX {
        return line;
    }
    let cut: String = line.chars().take(MESSAGE_MAX).collect();
    format!("{cut}…")
}

/// An epoch the hosts give in seconds (or milliseconds), as unix ms.
fn epoch_ms(value: &Value) -> Option<u64> {
    let n = value.as_f64().filter(|n| n.is_finite() && *n > 0.0)?;
    // Seconds until the year 5138; anything larger is milliseconds.
    Some(if n < 1e11 { (n * 1000.0) as u64 } else { n as u64 })
}

/// What Claude Code writes as a user message when its turn is interrupted (Ctrl-C, a
/// SIGINT to `claude -p`; "… for tool use]" during a call).
const CLAUDE_INTERRUPTED: &str = "[Request interrupted by user";

/// Claude Code's transcript lines, newest first: the newest message, when it says the
/// turn was interrupted; else the newest assistant message, when it is the synthetic one
/// of an API error.
pub fn from_claude_lines(newest_first: &[Value]) -> Option<HostFault> {
    let newest = newest_first.iter().find(|line| line["type"] == "user" || line["type"] == "assistant");
    let interrupted = newest.filter(|line| line["type"] == "user").is_some_and(|line| {
        let content = &line["message"]["content"];
        let texts = content.as_array().into_iter().flatten().filter_map(|block| block["text"].as_str());
        content.as_str().into_iter().chain(texts).any(|text| text.starts_with(CLAUDE_INTERRUPTED))
    });
    if interrupted {
        return Some(HostFault::Interrupted);
    }
    let last = newest_first.iter().find(|line| line["type"] == "assistant")?;
    let field =
        |name: &str| last.get(name).or_else(|| last["message"].get(name)).cloned().unwrap_or_default();
    if field("isApiErrorMessage") != Value::Bool(true) {
        return None;
    }
    let text = last["message"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let message = one_line(if text.is_empty() { "API error" } else { &text });
    let status = field("apiErrorStatus").as_u64().and_then(|s| u16::try_from(s).ok());
    let info = &field("apiErrorParams")["rate_limit_info"];
    let limit = field("error") == "rate_limit"
        || field("apiError") == "usage_limit_reached"
        || info["status"] == "rejected";
    if limit {
        return Some(HostFault::UsageLimit { resets_at_ms: epoch_ms(&info["resetsAt"]), message });
    }
    Some(HostFault::ApiError { message, status })
}

/// Codex's rollout lines, newest first: a turn that ended on an error
/// (`codex_error_info`), with the usage limit's reset from the newest `rate_limits`.
pub fn from_codex_lines(newest_first: &[Value]) -> Option<HostFault> {
    let payloads = || newest_first.iter().map(|line| &line["payload"]);
    // The newest turn's end: `turn_aborted` with `reason: "interrupted"` on Ctrl-C.
    let turn_end = payloads().find(|p| p["type"] == "task_complete" || p["type"] == "turn_aborted");
    if turn_end.is_some_and(|p| p["type"] == "turn_aborted" && p["reason"] == "interrupted") {
        return Some(HostFault::Interrupted);
    }
    let error = payloads().find_map(|p| {
        let error = if p["error"].is_object() { &p["error"] } else { p };
        error.get("codex_error_info").map(|info| (info.clone(), error["message"].as_str().unwrap_or("")))
    });
    let (info, message) = error?;
    let kind =
        info.as_str().map(str::to_string).or_else(|| info.as_object().and_then(|o| o.keys().next().cloned()));
    let message = one_line(if message.is_empty() { "Codex error" } else { message });
    if kind.as_deref() == Some("usage_limit_exceeded") {
        let resets = payloads().filter_map(|p| p.get("rate_limits")).find_map(|limits| {
            ["primary", "secondary"]
                .iter()
                .map(|w| &limits[*w])
                .filter(|w| w["used_percent"].as_f64().is_some_and(|u| u >= 100.0))
                .filter_map(|w| epoch_ms(&w["resets_at"]))
                .max()
        });
        return Some(HostFault::UsageLimit { resets_at_ms: resets, message });
    }
    Some(HostFault::ApiError { message, status: None })
}

/// What the host printed on stderr (its tail), for a leg that exited non-zero at
/// `ended_ms`: Gemini CLI's quota and API errors, Codex's `ERROR:` line.
pub fn from_stderr(host: HostKind, text: &str, ended_ms: u64) -> Option<HostFault> {
    match host {
        HostKind::Gemini | HostKind::Qwen => {
            if let Some(at) = text.find("TerminalQuotaError") {
                let line = text[at..].lines().next().unwrap_or_default();
                let retry = text
                    .find("Please retry in ")
                    .and_then(|i| {
                        let rest = &text[i + "Please retry in ".len()..];
                        let number: String =
                            rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
                        number.parse::<f64>().ok().filter(|n| n.is_finite() && *n >= 0.0)
                    })
                    .map(|seconds| ended_ms + (seconds * 1000.0) as u64);
                return Some(HostFault::UsageLimit { resets_at_ms: retry, message: one_line(line) });
            }
            if text.contains("An unexpected critical error occurred")
                || text.contains("Error when talking to")
            {
                let status = text.find("code: ").and_then(|i| {
                    text[i + 6..]
                        .chars()
                        .take_while(char::is_ascii_digit)
                        .collect::<String>()
                        .parse::<u16>()
                        .ok()
                });
                let cause = text
                    .find("message: '")
                    .map(|i| text[i + 10..].split('\'').next().unwrap_or_default().to_string());
                let message = match (status, cause) {
                    (Some(code), Some(cause)) => format!("API error {code}: {cause}"),
                    (Some(code), None) => format!("API error {code}"),
                    (None, _) => "API error (see the host's output above)".to_string(),
                };
                return Some(HostFault::ApiError { message: one_line(&message), status });
            }
            None
        }
        HostKind::Codex => {
            let line = text
                .lines()
                .rev()
                .map(str::trim)
                .find(|l| l.starts_with("ERROR:") && !l.contains("Reconnecting"))?;
            let message = one_line(line.trim_start_matches("ERROR:").trim());
            if message.contains("usage limit") {
                return Some(HostFault::UsageLimit { resets_at_ms: None, message });
            }
            Some(HostFault::ApiError { message, status: None })
        }
        _ => None,
    }
}

/// The host's signal for a leg: its transcripts or rollouts first (the exact reset), then
/// its stderr when it exited non-zero.
pub fn read(
    host: HostKind,
    transcripts: &[PathBuf],
    stderr: &str,
    code: i32,
    ended_ms: u64,
) -> Option<HostFault> {
    let from_record = transcripts.iter().rev().find_map(|path| {
        let lines = crate::transcript::last_json_lines(path, TAIL_BUDGET, TAIL_LINES).ok()?;
        match host {
            HostKind::Claude => from_claude_lines(&lines),
            HostKind::Codex => from_codex_lines(&lines),
            _ => None,
        }
    });
    from_record.or_else(|| (code != 0).then(|| from_stderr(host, stderr, ended_ms)).flatten())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn claude_codes_usage_limit_carries_the_exact_reset() {
        let lines = vec![
            json!({"type": "system", "subtype": "turn_duration"}),
            json!({"type": "assistant", "isApiErrorMessage": true, "error": "rate_limit",
                   "apiError": "usage_limit_reached", "apiErrorStatus": 429,
                   "apiErrorParams": {"rate_limit_info": {"status": "rejected", "resetsAt": 1_764_655_485,
                                                          "rateLimitType": "five_hour"}},
                   "message": {"model": "<synthetic>", "content": [{"type": "text",
                       "text": "You've hit your 5-hour limit · resets 6:04am (UTC)"}]}}),
            json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "earlier"}]}}),
        ];
        assert_eq!(
            from_claude_lines(&lines),
            Some(HostFault::UsageLimit {
                resets_at_ms: Some(1_764_655_485_000),
                message: "You've hit your 5-hour limit · resets 6:04am (UTC)".into()
            })
        );
    }

    #[test]
    fn claude_codes_server_error_and_a_normal_end() {
        let error = json!({"type": "assistant", "isApiErrorMessage": true, "error": "server_error",
            "apiErrorStatus": 529, "message": {"content": [{"type": "text", "text": "API Error: 529 Overloaded."}]}});
        assert_eq!(
            from_claude_lines(&[error]),
            Some(HostFault::ApiError { message: "API Error: 529 Overloaded.".into(), status: Some(529) })
        );
        let fine = json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "done"}]}});
        let old_error = json!({"type": "assistant", "isApiErrorMessage": true});
        assert_eq!(from_claude_lines(&[fine, old_error]), None, "an error the host rode out");
    }

    #[test]
    fn an_interrupted_turn_in_claude_codes_transcript_and_codexs_rollout() {
        let interrupted = json!({"type": "user", "message": {"role": "user",
            "content": [{"type": "text", "text": "[Request interrupted by user]"}]}});
        let after = json!({"type": "last-prompt", "lastPrompt": "Work through the task"});
        let earlier = json!({"type": "assistant", "message": {"content": [{"type": "tool_use"}]}});
        assert_eq!(
            from_claude_lines(&[after.clone(), interrupted.clone(), earlier.clone()]),
            Some(HostFault::Interrupted)
        );
        // A turn that went on after an earlier interruption is not interrupted.
        let fine = json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "done"}]}});
        assert_eq!(from_claude_lines(&[fine, interrupted, earlier]), None);
        let tool_result = json!({"type": "user", "message": {"content": [{"type": "tool_result", "content": "[Request interrupted by user] in the output"}]}});
        assert_eq!(from_claude_lines(&[tool_result]), None, "only the host's own message");

        let aborted =
            json!({"type": "event_msg", "payload": {"type": "turn_aborted", "reason": "interrupted"}});
        assert_eq!(from_codex_lines(std::slice::from_ref(&aborted)), Some(HostFault::Interrupted));
        let complete = json!({"type": "event_msg", "payload": {"type": "task_complete"}});
        assert_eq!(from_codex_lines(&[complete, aborted]), None, "a later turn completed");
    }

    #[test]
    fn codexs_usage_limit_reset_is_the_full_windows() {
        let lines = vec![
            json!({"type": "event_msg", "payload": {"type": "task_complete", "last_agent_message": null,
                   "error": {"message": "You’ve hit your usage limit. Try again at 6:13 AM.",
                             "codex_error_info": "usage_limit_exceeded"}}}),
            json!({"type": "event_msg", "payload": {"type": "token_count", "rate_limits": {
                   "primary": {"used_percent": 100.0, "window_minutes": 300, "resets_at": 1_764_656_000},
                   "secondary": {"used_percent": 40.0, "window_minutes": 10080, "resets_at": 1_765_000_000}}}}),
        ];
        assert_eq!(
            from_codex_lines(&lines),
            Some(HostFault::UsageLimit {
                resets_at_ms: Some(1_764_656_000_000),
                message: "You’ve hit your usage limit. Try again at 6:13 AM.".into()
            })
        );
        let other = json!({"type": "event_msg", "payload": {"type": "error", "message": "high demand",
                           "codex_error_info": {"response_stream_disconnected": {"http_status_code": 500}}}});
        assert_eq!(
            from_codex_lines(&[other]),
            Some(HostFault::ApiError { message: "high demand".into(), status: None })
        );
        assert_eq!(
            from_codex_lines(&[json!({"type": "event_msg", "payload": {"type": "task_complete"}})]),
            None
        );
    }

    #[test]
    fn stderr_of_gemini_cli_and_codex() {
        let quota = "Error when talking to Gemini API Full report available at: /tmp/x.json TerminalQuotaError: You have exhausted your daily quota on this model.\n    at stack\n  cause: { code: 429, message: 'Quota exceeded. Please retry in 30.0s.' }";
        assert_eq!(
            from_stderr(HostKind::Gemini, quota, 1_000),
            Some(HostFault::UsageLimit {
                resets_at_ms: Some(31_000),
                message: "TerminalQuotaError: You have exhausted your daily quota on this model.".into()
            })
        );
        let unavailable = "Error when talking to Gemini API\n  cause: { code: 503, message: 'The model is overloaded.' }\nAn unexpected critical error occurred:[object Object]";
        assert_eq!(
            from_stderr(HostKind::Gemini, unavailable, 0),
            Some(HostFault::ApiError {
                message: "API error 503: The model is overloaded.".into(),
                status: Some(503)
            })
        );
        let codex = "ERROR: Reconnecting... 5/5\nERROR: We’re currently experiencing high demand, which may cause temporary errors.\n";
        assert_eq!(
            from_stderr(HostKind::Codex, codex, 0),
            Some(HostFault::ApiError {
                message: "We’re currently experiencing high demand, which may cause temporary errors.".into(),
                status: None
            })
        );
        assert_eq!(from_stderr(HostKind::Gemini, "all fine", 0), None);
    }
}
