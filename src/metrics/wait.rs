//! The wait for a tool call's own reply: a host that records a reply after its
//! PostToolUse may run (Claude Code writes its transcript through a queue flushed every
//! 100 ms, so in `claude -p` the assistant line that issued the tool call is often not in
//! the file yet at PostToolUse time) is given a bounded wait ([`super::ReplyWait`], the
//! host's) when the newest figure can change what is said: [`plan_wait`] decides,
//! [`wait_for_tool_use`] waits, and [`project_tokens`] is the estimate when it runs out.

use std::path::Path;
use std::time::Instant;

use crate::host::ReplyWait;
use crate::transcript::claude::figure::{TranscriptTail, read_since, read_subagent, transcript_len};

/// Only a figure this close (in points of used %) below a threshold is worth a wait.
pub const WAIT_NEAR_POINTS: f64 = 10.0;

/// What to do when the tool call's own reply may not be in the transcript yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPlan {
    /// The figure is current, or nothing hangs on it: use it as it is.
    UseAsIs,
    /// Wait (at most the host's [`ReplyWait::max`]) for the reply to be written.
    Wait,
}

/// Decides whether to wait for the transcript (pure). Only when the tool call's
/// `tool_use_id` is known and missing from the transcript, and the reply can change what
/// is said (`worth`: the caller's stakes, see `metrics::wait_can_change_answer`; a
/// CRITICAL figure one call old can be 5-10 % low). What else the transcript holds does
/// not matter: with replies faster than the 100 ms flush, neither the reply nor the
/// previous tool result may be written yet.
pub fn plan_wait(tool_use_id_known: bool, tool_use_seen: bool, worth: bool) -> WaitPlan {
    if tool_use_id_known && !tool_use_seen && worth { WaitPlan::Wait } else { WaitPlan::UseAsIs }
}

/// A figure within [`WAIT_NEAR_POINTS`] below one of the thresholds (pure): one more
/// reply could cross it.
pub fn near_threshold(used_pct: f64, thresholds_used: &[f64]) -> bool {
    thresholds_used.iter().any(|t| *t > used_pct && *t - used_pct <= WAIT_NEAR_POINTS)
}

/// Near a threshold, or past the last one (pure): where the tool call's own reply is
/// worth a wait.
pub fn worth_waiting(used_pct: f64, thresholds_used: &[f64]) -> bool {
    near_threshold(used_pct, thresholds_used)
        || thresholds_used.iter().copied().reduce(f64::max).is_some_and(|last| used_pct >= last)
}

/// A first call with no figure yet (pure): the transcript alone, at about four bytes a
/// token, could already be near a threshold of the host's smallest window (`windows`), so
/// the reply that issued the call is worth a wait.
pub fn large_enough_to_wait(transcript_len: u64, thresholds_used: &[f64], windows: &[u64]) -> bool {
    let smallest = windows.iter().copied().min().unwrap_or(200_000) as f64;
    let tokens = (transcript_len / 4) as f64;
    thresholds_used.iter().any(|t| tokens * 100.0 / smallest >= t - WAIT_NEAR_POINTS)
}

/// The tokens a missing reply will hold, projected (pure): the last figure plus what was
/// written after it (the tool results it will read), at about four bytes a token.
pub fn project_tokens(last_tokens: u64, bytes_after_figure: u64) -> u64 {
    last_tokens.saturating_add(bytes_after_figure / 4)
}

/// Waits (at most `wait.max`) for `tool_use_id` to be written after `from`, looking
/// again only when the file grew. Returns the tail that holds it, if it came in time.
pub fn wait_for_tool_use(
    path: &Path,
    from: u64,
    tool_use_id: &str,
    len: u64,
    wait: ReplyWait,
) -> Option<TranscriptTail> {
    wait_reading(path, tool_use_id, len, wait, || read_since(path, from, Some(tool_use_id)).ok())
}

/// [`wait_for_tool_use`] on a subagent's own transcript (its sidechain replies).
pub fn wait_for_subagent_tool_use(
    path: &Path,
    tool_use_id: &str,
    len: u64,
    wait: ReplyWait,
) -> Option<TranscriptTail> {
    wait_reading(path, tool_use_id, len, wait, || read_subagent(path, Some(tool_use_id)).ok())
}

fn wait_reading(
    path: &Path,
    tool_use_id: &str,
    mut len: u64,
    wait: ReplyWait,
    read: impl Fn() -> Option<TranscriptTail>,
) -> Option<TranscriptTail> {
    if tool_use_id.is_empty() || wait.max.is_zero() {
        return None;
    }
    let start = Instant::now();
    while start.elapsed() + wait.step <= wait.max {
        std::thread::sleep(wait.step);
        let now_len = transcript_len(path)?;
        if now_len == len {
            continue;
        }
        len = now_len;
        let tail = read()?;
        if tail.tool_use_seen {
            return Some(tail);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_only_when_missing_and_worth_it() {
        assert_eq!(plan_wait(true, false, true), WaitPlan::Wait);
        assert_eq!(plan_wait(true, true, true), WaitPlan::UseAsIs, "the reply is written");
        assert_eq!(plan_wait(false, false, true), WaitPlan::UseAsIs, "no id to look for");
        assert_eq!(plan_wait(true, false, false), WaitPlan::UseAsIs, "nothing hangs on it");
    }

    #[test]
    fn worth_waiting_near_or_past_a_threshold() {
        let thresholds = [65.0, 75.0];
        assert!(worth_waiting(60.0, &thresholds));
        assert!(worth_waiting(70.0, &thresholds), "10 points below CRITICAL");
        assert!(!worth_waiting(40.0, &thresholds), "far from any threshold");
        assert!(worth_waiting(80.0, &thresholds), "past the last threshold");
        assert!(worth_waiting(55.0, &thresholds), "exactly 10 points");
    }

    #[test]
    fn a_first_call_waits_only_on_a_large_transcript() {
        let thresholds = [65.0, 75.0];
        assert!(!large_enough_to_wait(100_000, &thresholds, &[200_000, 1_000_000]));
        assert!(
            large_enough_to_wait(440_000, &thresholds, &[200_000, 1_000_000]),
            "110k tokens: 55 % of 200k"
        );
    }

    #[test]
    fn projection_adds_what_was_written_since() {
        assert_eq!(project_tokens(120_000, 40_000), 130_000);
        assert_eq!(project_tokens(u64::MAX, 8), u64::MAX);
    }
}
