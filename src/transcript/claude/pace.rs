//! How fast the context grows per tool call, from the end of a transcript: the basis of
//! "about 9 tool calls before auto-compaction". Read only when a warning is about to be
//! given, within a small budget.

use std::collections::HashSet;
use std::io;
use std::path::Path;

use serde::Serialize;

use crate::transcript::file::open_transcript;
use crate::transcript::line::{Entry, block_type, parse_line};
use crate::transcript::tail::TailReader;

/// Bytes read from the end to measure the pace.
pub const PACE_BUDGET: u64 = 4 * 1024 * 1024;
/// Tool calls measured, at most.
const CALLS_WANTED: usize = 30;
/// Fewer calls than this give no estimate.
const CALLS_NEEDED: usize = 3;

/// The context's recent growth per tool call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pace {
    pub tokens_per_call: f64,
    /// Tool calls the average is over.
    pub calls: u32,
}

struct Reply {
    id: Option<String>,
    tokens: u64,
    tool_calls: HashSet<String>,
}

/// The pure part: main-chain replies (newest first) back to the last compaction.
pub fn pace_from_lines<'a>(lines_newest_first: impl IntoIterator<Item = &'a [u8]>) -> Option<Pace> {
    let mut replies: Vec<Reply> = vec![];
    let mut calls = 0usize;
    for line in lines_newest_first {
        let Some(value) = parse_line(line) else { continue };
        let entry = Entry(&value);
        if entry.is_compact_boundary() {
            break;
        }
        if !entry.is_main_assistant() {
            continue;
        }
        let id = entry.message_id().map(str::to_string);
        let tool_ids: Vec<String> = entry
            .blocks()
            .filter(|b| block_type(b) == Some("tool_use"))
            .map(|b| b.get("id").and_then(|i| i.as_str()).unwrap_or("").to_string())
            .collect();
        // Streamed lines of one reply share an id: merge them (the newest has the usage).
        if let Some(reply) = replies.iter_mut().find(|r| r.id.is_some() && r.id == id) {
            for tool in tool_ids {
                if reply.tool_calls.insert(tool) {
                    calls += 1;
                }
            }
            continue;
        }
        let Some(tokens) = entry.usage().map(|u| u.context_tokens()).filter(|t| *t > 0) else { continue };
        let mut tool_calls = HashSet::new();
        for tool in tool_ids {
            if tool_calls.insert(tool) {
                calls += 1;
            }
        }
        replies.push(Reply { id, tokens, tool_calls });
        if calls >= CALLS_WANTED {
            break;
        }
    }
    // Oldest first: the growth from the oldest reply to the newest came from the tool
    // calls made by all replies but the newest.
    replies.reverse();
    let (first, last) = (replies.first()?, replies.last()?);
    let made: usize = replies[..replies.len() - 1].iter().map(|r| r.tool_calls.len()).sum();
    let growth = last.tokens.checked_sub(first.tokens)?;
    (made >= CALLS_NEEDED && growth > 0)
        .then(|| Pace { tokens_per_call: growth as f64 / made as f64, calls: made as u32 })
}

/// The pace of the transcript at `path`.
pub fn tokens_per_tool_call(path: &Path) -> io::Result<Option<Pace>> {
    let file = open_transcript(path)?;
    let mut tail = TailReader::new(&file, PACE_BUDGET)?;
    let mut lines = vec![];
    while let Some(line) = tail.next_line()? {
        lines.push(line);
    }
    Ok(pace_from_lines(lines.iter().map(|l| l.as_slice())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(id: &str, tokens: u64, tools: &[&str]) -> String {
        let blocks: Vec<String> = tools
            .iter()
            .map(|t| format!(r#"{{"type":"tool_use","id":"{t}","name":"Read","input":{{}}}}"#))
            .collect();
        format!(
            r#"{{"type":"assistant","message":{{"id":"{id}","model":"m","content":[{}],"usage":{{"input_tokens":{tokens},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}}}}"#,
            blocks.join(",")
        )
    }

    #[test]
    fn growth_per_call_since_the_last_compaction() {
        let lines = [
            reply("old", 10, &["t0"]),
            r#"{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":100,"postTokens":5}}"#.to_string(),
            reply("a", 1000, &["t1", "t2"]),
            reply("b", 3000, &["t3"]),
            reply("c", 5000, &["t4"]),
            reply("d", 9000, &[]),
        ];
        let newest_first: Vec<&[u8]> = lines.iter().rev().map(|l| l.as_bytes()).collect();
        let pace = pace_from_lines(newest_first).unwrap();
        assert_eq!(pace.calls, 4);
        assert_eq!(pace.tokens_per_call, 2000.0);
    }

    #[test]
    fn too_few_calls_give_no_estimate() {
        let lines = [reply("a", 1000, &["t1"]), reply("b", 3000, &[])];
        let newest_first: Vec<&[u8]> = lines.iter().rev().map(|l| l.as_bytes()).collect();
        assert_eq!(pace_from_lines(newest_first), None);
    }

    #[test]
    fn the_sample_transcript_has_too_little_after_its_compaction() {
        let bytes = include_bytes!("../../../tests/fixtures/transcript.jsonl");
        let mut lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
        lines.reverse();
        assert_eq!(pace_from_lines(lines), None);
    }
}
