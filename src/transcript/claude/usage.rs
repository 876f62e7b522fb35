//! Exact token use of a whole session, for `baton report`: tokens per model and kind,
//! the compactions, the context size turn by turn, and the tool results that took the
//! most room. A person asks for it, so the whole file is read, front to back, one line
//! at a time: memory grows with the number of replies, not with the file.

use std::collections::HashMap;
use std::io::{self, BufReader};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::transcript::file::open_transcript;
use crate::transcript::forward::ForwardLines;
#[cfg(test)]
use crate::transcript::forward::complete_lines;
use crate::transcript::line::{
    Compaction, Entry, SHORT_TEXT_MAX, Usage, block_type, clean_line, clip, parse_line, text,
};

/// Lines longer than this are passed over (counted in `oversized_lines`).
pub const LINE_MAX: usize = 64 * 1024 * 1024;
/// How many of the largest tool results are kept.
pub const LARGEST_RESULTS: usize = 10;
/// Cap on the short description of a tool call's input.
pub const TOOL_INPUT_MAX: usize = 120;
/// Tool calls waiting for their result; beyond this, the oldest are forgotten.
const PENDING_TOOLS_MAX: usize = 10_000;
const MODELS_MAX: usize = 100;

/// Tokens of one model, main conversation and subagents apart.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ModelUsage {
    pub model: String,
    pub main: Usage,
    /// Subagents' replies (`isSidechain`).
    pub sidechain: Usage,
    pub main_replies: u64,
    pub sidechain_replies: u64,
}

/// The main conversation's context size after one reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextPoint {
    pub at: Option<String>,
    pub tokens: u64,
}

/// One tool result and what it cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolResultSize {
    /// Bytes of the result's content (text, and image data as sent).
    pub bytes: u64,
    /// `bytes / 4`, the usual rough token count.
    pub estimated_tokens: u64,
    pub tool: Option<String>,
    /// A short form of the call's input: the file, the command, the pattern …
    pub input: Option<String>,
    pub at: Option<String>,
    pub sidechain: bool,
}

/// Everything `baton report` shows about a session's token use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionUsage {
    /// Per model, the biggest spender first.
    pub models: Vec<ModelUsage>,
    /// Sums over all models.
    pub main: Usage,
    pub sidechain: Usage,
    pub compactions: Vec<Compaction>,
    /// For each compaction, how many points of `context_timeline` come before it.
    pub compaction_positions: Vec<usize>,
    /// One point per main-chain reply, in order.
    pub context_timeline: Vec<ContextPoint>,
    /// The model of the latest main-chain reply.
    pub model: Option<String>,
    /// The `sessionId` of the first line that has one.
    pub session_id: Option<String>,
    /// The largest tool results, largest first.
    pub largest_tool_results: Vec<ToolResultSize>,
    /// Lines read (not counting empty ones).
    pub lines: u64,
    /// Lines that are not a JSON object (cut off, invalid UTF-8 …).
    pub unreadable_lines: u64,
    /// Lines over [`LINE_MAX`], not parsed.
    pub oversized_lines: u64,
    /// Synthetic API-error replies, left out of every count.
    pub api_error_lines: u64,
    pub bytes_read: u64,
}

#[derive(Debug, Clone, Copy)]
struct Reply {
    model: usize,
    sidechain: bool,
    usage: Usage,
}

/// The pure part of [`session_usage`]: fed lines oldest first.
#[derive(Debug, Default)]
pub struct UsageAccumulator {
    models: Vec<String>,
    /// The last line seen of each reply: streamed lines share an id and the last is final.
    replies: HashMap<String, Reply>,
    /// Replies without an id, each counted once as it comes.
    loose: Vec<ModelUsage>,
    timeline: Vec<ContextPoint>,
    timeline_by_id: HashMap<String, usize>,
    pending_tools: HashMap<String, (String, Option<String>)>,
    largest: Vec<ToolResultSize>,
    compactions: Vec<Compaction>,
    compaction_positions: Vec<usize>,
    latest_model: Option<usize>,
    session_id: Option<String>,
    lines: u64,
    unreadable_lines: u64,
    api_error_lines: u64,
}

impl UsageAccumulator {
    pub fn feed(&mut self, line: &[u8]) {
        self.lines += 1;
        let Some(value) = parse_line(line) else {
            self.unreadable_lines += 1;
            return;
        };
        let entry = Entry(&value);
        if self.session_id.is_none() {
            self.session_id = entry.str_field("sessionId").map(|id| clip(id, SHORT_TEXT_MAX));
        }
        if let Some(compaction) = entry.compaction() {
            self.compactions.push(compaction);
            self.compaction_positions.push(self.timeline.len());
            return;
        }
        match entry.kind() {
            Some("assistant") if entry.is_api_error() => self.api_error_lines += 1,
            Some("assistant") if !entry.is_synthetic() => self.assistant_line(entry),
            Some("user") => self.user_line(entry),
            _ => {}
        }
    }

    fn model_index(&mut self, model: &str) -> usize {
        if let Some(index) = self.models.iter().position(|m| m == model) {
            return index;
        }
        if self.models.len() >= MODELS_MAX {
            return self.model_index("other");
        }
        self.models.push(clip(model, SHORT_TEXT_MAX));
        self.models.len() - 1
    }

    fn assistant_line(&mut self, entry: Entry) {
        let sidechain = entry.is_sidechain();
        for block in entry.blocks().filter(|b| block_type(b) == Some("tool_use")) {
            if let (Some(id), Some(name)) = (text(block.get("id")), text(block.get("name"))) {
                if self.pending_tools.len() >= PENDING_TOOLS_MAX {
                    self.pending_tools.clear();
                }
                let input = block.get("input").and_then(short_input);
                self.pending_tools.insert(id.to_string(), (clip(name, SHORT_TEXT_MAX), input));
            }
        }
        let Some(usage) = entry.usage() else { return };
        let model = self.model_index(entry.model().unwrap_or("unknown"));
        if !sidechain && entry.model().is_some() {
            self.latest_model = Some(model);
        }
        let reply = Reply { model, sidechain, usage };
        let at = entry.timestamp().map(|t| clip(t, SHORT_TEXT_MAX));
        match entry.message_id() {
            Some(id) => {
                if !sidechain {
                    let point = ContextPoint { at, tokens: usage.context_tokens() };
                    match self.timeline_by_id.get(id) {
                        Some(&index) => self.timeline[index] = point,
                        None => {
                            self.timeline_by_id.insert(id.to_string(), self.timeline.len());
                            self.timeline.push(point);
                        }
                    }
                }
                self.replies.insert(id.to_string(), reply);
            }
            None => {
                if !sidechain {
                    self.timeline.push(ContextPoint { at, tokens: usage.context_tokens() });
                }
                let mut loose = ModelUsage::default();
                add_reply(&mut loose, &reply);
                loose.model = self.models[model].clone();
                self.loose.push(loose);
            }
        }
    }

    fn user_line(&mut self, entry: Entry) {
        for block in entry.blocks().filter(|b| block_type(b) == Some("tool_result")) {
            let bytes = content_bytes(block.get("content"));
            let call = text(block.get("tool_use_id")).and_then(|id| self.pending_tools.remove(id));
            let smallest_kept = self.largest.last().map(|r| r.bytes).unwrap_or(0);
            if self.largest.len() >= LARGEST_RESULTS && bytes <= smallest_kept {
                continue;
            }
            let (tool, input) = match call {
                Some((tool, input)) => (Some(tool), input),
                None => (None, None),
            };
            self.largest.push(ToolResultSize {
                bytes,
                estimated_tokens: bytes / 4,
                tool,
                input,
                at: entry.timestamp().map(|t| clip(t, SHORT_TEXT_MAX)),
                sidechain: entry.is_sidechain(),
            });
            self.largest.sort_by_key(|result| std::cmp::Reverse(result.bytes));
            self.largest.truncate(LARGEST_RESULTS);
        }
    }

    pub fn finish(self) -> SessionUsage {
        let mut models: Vec<ModelUsage> =
            self.models.iter().map(|m| ModelUsage { model: m.clone(), ..ModelUsage::default() }).collect();
        for reply in self.replies.values() {
            add_reply(&mut models[reply.model], reply);
        }
        for loose in &self.loose {
            if let Some(model) = models.iter_mut().find(|m| m.model == loose.model) {
                model.main.add(&loose.main);
                model.sidechain.add(&loose.sidechain);
                model.main_replies += loose.main_replies;
                model.sidechain_replies += loose.sidechain_replies;
            }
        }
        models.retain(|m| m.main_replies + m.sidechain_replies > 0);
        models.sort_by(|a, b| {
            let spent = |m: &ModelUsage| m.main.total().saturating_add(m.sidechain.total());
            spent(b).cmp(&spent(a)).then_with(|| a.model.cmp(&b.model))
        });
        let mut main = Usage::default();
        let mut sidechain = Usage::default();
        for model in &models {
            main.add(&model.main);
            sidechain.add(&model.sidechain);
        }
        SessionUsage {
            models,
            main,
            sidechain,
            model: self.latest_model.and_then(|i| self.models.get(i).cloned()),
            session_id: self.session_id,
            compactions: self.compactions,
            compaction_positions: self.compaction_positions,
            context_timeline: self.timeline,
            largest_tool_results: self.largest,
            lines: self.lines,
            unreadable_lines: self.unreadable_lines,
            oversized_lines: 0,
            api_error_lines: self.api_error_lines,
            bytes_read: 0,
        }
    }
}

fn add_reply(model: &mut ModelUsage, reply: &Reply) {
    if reply.sidechain {
        model.sidechain.add(&reply.usage);
        model.sidechain_replies += 1;
    } else {
        model.main.add(&reply.usage);
        model.main_replies += 1;
    }
}

/// The size of a tool result's content: its text, and image data as it was sent.
fn content_bytes(content: Option<&Value>) -> u64 {
    match content {
        Some(Value::String(s)) => s.len() as u64,
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|b| {
                let text = b.get("text").and_then(Value::as_str).map_or(0, str::len);
                let data =
                    b.get("source").and_then(|s| s.get("data")).and_then(Value::as_str).map_or(0, str::len);
                (text + data) as u64
            })
            .sum(),
        _ => 0,
    }
}

/// A short, one-line form of a tool call's input.
fn short_input(input: &Value) -> Option<String> {
    ["file_path", "notebook_path", "command", "pattern", "url", "query", "path", "description", "prompt"]
        .iter()
        .find_map(|key| text(input.get(*key)))
        .map(|value| clean_line(value.lines().next().unwrap_or(value), TOOL_INPUT_MAX))
        .filter(|value| !value.is_empty())
}

/// Reads the whole transcript at `path` and counts its token use.
pub fn session_usage(path: &Path) -> io::Result<SessionUsage> {
    let file = open_transcript(path)?;
    let mut lines = ForwardLines::new(BufReader::with_capacity(256 * 1024, file), LINE_MAX);
    let mut accumulator = UsageAccumulator::default();
    while let Some(line) = lines.next_line()? {
        accumulator.feed(line);
    }
    let mut usage = accumulator.finish();
    usage.oversized_lines = lines.oversized_lines();
    usage.bytes_read = lines.bytes_read();
    Ok(usage)
}

/// [`session_usage`] of a transcript held in memory (tests).
#[cfg(test)]
pub fn usage_from_bytes(bytes: &[u8]) -> SessionUsage {
    let mut accumulator = UsageAccumulator::default();
    for line in complete_lines(bytes, true) {
        accumulator.feed(line);
    }
    let mut usage = accumulator.finish();
    usage.bytes_read = bytes.len() as u64;
    usage
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FIXTURE: &[u8] = include_bytes!("../../../tests/fixtures/transcript.jsonl");

    #[test]
    fn fixture_usage() {
        let usage = usage_from_bytes(FIXTURE);
        assert_eq!(usage.models.len(), 1);
        let opus = &usage.models[0];
        assert_eq!(opus.model, "claude-opus-4-5-20251101");
        // a1..a8 and the final reply counted once with its last streamed line.
        assert_eq!(opus.main_replies, 8);
        assert_eq!(
            opus.main,
            Usage {
                input: 3 + 4 + 4 + 4 + 4 + 6 + 5 + 12,
                cache_creation: 5210 + 900 + 700 + 400 + 1200 + 2100 + 3000 + 3000,
                cache_read: 18000 + 23210 + 24110 + 24810 + 25210 + 41800 + 120000 + 141000,
                output: 420 + 610 + 300 + 120 + 200 + 350 + 800 + 512,
            }
        );
        assert_eq!(opus.sidechain_replies, 1);
        assert_eq!(
            opus.sidechain,
            Usage { input: 10, cache_creation: 30000, cache_read: 150000, output: 900 }
        );
        assert_eq!(usage.main, opus.main);
        assert_eq!(usage.api_error_lines, 1);
        assert_eq!(usage.compactions.len(), 1);
        assert_eq!(usage.compactions[0].pre_tokens, Some(167_400));
        assert_eq!(usage.compactions[0].post_tokens, Some(41_800));
        assert_eq!(usage.context_timeline.len(), 8);
        // The compaction comes after the fifth main reply (a6).
        assert_eq!(usage.compaction_positions, vec![5]);
        assert_eq!(usage.model.as_deref(), Some("claude-opus-4-5-20251101"));
        assert_eq!(usage.session_id.as_deref(), Some("7f3c2a10-5b1e-4c2d-9a8f-0d6e4b2c1a99"));
        assert_eq!(usage.context_timeline.last().unwrap().tokens, 144_012);
        assert_eq!(usage.context_timeline.last().unwrap().at.as_deref(), Some("2026-11-28T10:00:22.000Z"));
        let largest = &usage.largest_tool_results[0];
        assert_eq!(largest.tool.as_deref(), Some("Edit"));
        assert_eq!(largest.input.as_deref(), Some("/home/dev/shop-api/src/routes/orders.ts"));
        assert_eq!(
            largest.bytes,
            "The file /home/dev/shop-api/src/routes/orders.ts has been updated.".len() as u64
        );
        assert_eq!(usage.largest_tool_results.len(), 7);
        assert!(usage.largest_tool_results.windows(2).all(|w| w[0].bytes >= w[1].bytes));
    }

    #[test]
    fn fixture_from_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, FIXTURE).unwrap();
        assert_eq!(session_usage(&path).unwrap(), usage_from_bytes(FIXTURE));
        assert!(session_usage(&dir.path().join("missing")).is_err());
        let json = serde_json::to_value(session_usage(&path).unwrap()).unwrap();
        assert_eq!(json["models"][0]["main"]["cache_read"], 418_140);
    }

    #[test]
    fn only_the_top_results_are_kept_and_garbage_is_counted() {
        let mut lines = Vec::new();
        for i in 0..30u64 {
            lines.push(json!({"type": "assistant", "message": {"id": format!("m{i}"), "model": "m", "content": [
                {"type": "tool_use", "id": format!("t{i}"), "name": "Read", "input": {"file_path": format!("/f{i}")}}]}}));
            lines.push(json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": format!("t{i}"), "content": "x".repeat(i as usize * 10)}]}}));
        }
        let mut bytes = lines.iter().map(|l| l.to_string()).collect::<Vec<_>>().join("\n").into_bytes();
        bytes.extend_from_slice(b"\n\xff\xfe\n{\"type\":\"assistant\"");
        let usage = usage_from_bytes(&bytes);
        assert_eq!(usage.largest_tool_results.len(), LARGEST_RESULTS);
        assert_eq!(usage.largest_tool_results[0].bytes, 290);
        assert_eq!(usage.largest_tool_results[0].estimated_tokens, 72);
        assert_eq!(usage.largest_tool_results[0].input.as_deref(), Some("/f29"));
        assert_eq!(usage.unreadable_lines, 2);
        // Replies without usage count for nothing.
        assert!(usage.models.is_empty());
    }

    #[test]
    fn empty_transcript() {
        assert_eq!(usage_from_bytes(b""), SessionUsage::default());
    }
}
