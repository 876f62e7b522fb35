//! OpenCode's (and Kilo CLI's) session messages, as baton's plugin sends them: the
//! hosts keep their sessions in a database baton does not read, so when baton has just
//! written a CRITICAL handoff the plugin sends, once, a digest of the messages it already
//! holds (`HandoffFacts`, `messages`): the first user message and the latest ones, each
//! with its role, id, time, model and folder, its text parts and its tool parts (the
//! tool, its call id, status, input, output and the shell's exit code), every text
//! clipped by the plugin.
//!
//! The digest is untrusted input: [`Digest`] reads it leniently (a field of the wrong
//! type is absent, an entry of the wrong shape is skipped) and within bounds of its own
//! ([`MESSAGES_MAX`], [`PARTS_MAX`], [`TEXT_MAX`]) whatever the plugin did;
//! [`claude_shaped`] puts each message in Claude Code's line shape for the one facts
//! reader, as Factory Droid's and Copilot CLI's readers do. OpenCode's tools: `bash`,
//! `write`, `edit`, `todowrite`. Parts the host marks `synthetic` (baton's own brief) are
//! not the user's words and are left out.

use std::collections::VecDeque;

use serde::Deserialize;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde_json::{Map, Value, json};

use super::claude::facts::facts_from_values;
use super::facts::{CommandRun, SessionFacts};
use super::format::Format;
use super::line::clip;

/// At most this many messages are kept: the first, and the latest ones.
pub const MESSAGES_MAX: usize = 64;
/// At most this many parts of one message are kept (the latest).
pub const PARTS_MAX: usize = 64;
/// Every text (a part's text, a tool's output, an input's string) is clipped to this.
pub const TEXT_MAX: usize = 4000;
/// At most this many fields of a tool's input are kept.
const INPUT_FIELDS_MAX: usize = 16;

/// The messages of a digest, oldest first: the first one sent and the latest
/// [`MESSAGES_MAX`] − 1.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Digest {
    pub messages: Vec<DigestMessage>,
    /// Messages sent but not kept.
    pub dropped: usize,
}

/// One message of the digest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DigestMessage {
    /// `user` or `assistant`.
    pub role: String,
    pub id: Option<String>,
    /// When the message was created, in Unix milliseconds.
    pub time_ms: Option<i64>,
    /// `providerID/modelID` of an assistant message.
    pub model: Option<String>,
    /// The folder the assistant worked in (`path.cwd`).
    pub cwd: Option<String>,
    pub parts: Vec<DigestPart>,
}

/// One part of a message.
#[derive(Debug, Clone, PartialEq)]
pub enum DigestPart {
    Text(String),
    Tool(ToolPart),
}

/// A tool call and, once it finished, its outcome.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolPart {
    pub tool: String,
    pub call_id: Option<String>,
    /// `pending`, `running`, `completed` or `error`.
    pub status: Option<String>,
    /// The input's fields (strings clipped; nested values dropped).
    pub input: Map<String, Value>,
    pub output: Option<String>,
    /// The shell's exit code (`bash`'s `metadata.exit`).
    pub exit: Option<i64>,
}

fn text_of(value: Option<&Value>, max: usize) -> Option<String> {
    let text = value?.as_str()?.trim();
    (!text.is_empty()).then(|| clip(text, max))
}

fn integer(value: Option<&Value>) -> Option<i64> {
    let n = value?.as_f64().filter(|n| n.is_finite() && n.abs() < 1e15)?;
    Some(n as i64)
}

impl ToolPart {
    fn read(value: &Value) -> Option<ToolPart> {
        let tool = text_of(value.get("tool"), 100)?;
        let mut input = Map::new();
        if let Some(fields) = value.get("input").and_then(Value::as_object) {
            for (key, field) in fields.iter().take(INPUT_FIELDS_MAX) {
                let kept = match field {
                    Value::String(s) => Value::String(clip(s, TEXT_MAX)),
                    Value::Number(_) | Value::Bool(_) => field.clone(),
                    // A todo list is the one nested input the facts read.
                    Value::Array(items) if key == "todos" => {
                        Value::Array(items.iter().take(100).filter_map(todo_item).collect())
                    }
                    _ => continue,
                };
                input.insert(clip(key, 100), kept);
            }
        }
        Some(ToolPart {
            tool,
            call_id: text_of(value.get("callID"), 200),
            status: text_of(value.get("status"), 20),
            input,
            output: text_of(value.get("output"), TEXT_MAX),
            exit: integer(value.get("exit")),
        })
    }
}

/// A todo of `todowrite`'s input: its short fields only.
fn todo_item(value: &Value) -> Option<Value> {
    let mut item = Map::new();
    for key in ["id", "content", "status", "priority"] {
        if let Some(text) = text_of(value.get(key), TEXT_MAX) {
            item.insert(key.to_string(), Value::String(text));
        }
    }
    (!item.is_empty()).then_some(Value::Object(item))
}

impl DigestMessage {
    /// One message of the digest, or `None` for an entry that is not one.
    pub fn read(value: &Value) -> Option<DigestMessage> {
        let role = text_of(value.get("role"), 20).filter(|r| r == "user" || r == "assistant")?;
        let parts = value.get("parts").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let skip = parts.len().saturating_sub(PARTS_MAX);
        let parts = parts
            .iter()
            .skip(skip)
            .filter_map(|part| match part.get("type").and_then(Value::as_str)? {
                "text" if part.get("synthetic").and_then(Value::as_bool) != Some(true) => {
                    text_of(part.get("text"), TEXT_MAX).map(DigestPart::Text)
                }
                "tool" => ToolPart::read(part).map(DigestPart::Tool),
                _ => None,
            })
            .collect();
        Some(DigestMessage {
            role,
            id: text_of(value.get("id"), 200),
            time_ms: integer(value.get("time")),
            model: text_of(value.get("model"), 200),
            cwd: text_of(value.get("cwd"), super::facts::PATH_MAX),
            parts,
        })
    }
}

/// Keeps the first message and the latest [`MESSAGES_MAX`] − 1 while they stream in.
#[derive(Default)]
struct Keeper {
    first: Option<DigestMessage>,
    latest: VecDeque<DigestMessage>,
    dropped: usize,
}

impl Keeper {
    fn push(&mut self, value: &Value) {
        let Some(message) = DigestMessage::read(value) else {
            self.dropped += 1;
            return;
        };
        if self.first.is_none() {
            self.first = Some(message);
            return;
        }
        self.latest.push_back(message);
        if self.latest.len() > MESSAGES_MAX - 1 {
            self.latest.pop_front();
            self.dropped += 1;
        }
    }

    fn finish(self) -> Digest {
        let messages = self.first.into_iter().chain(self.latest).collect();
        Digest { messages, dropped: self.dropped }
    }
}

/// Read from the event as it streams: one message held at a time, and only the kept
/// ones stay. Anything but a list is an empty digest.
impl<'de> Deserialize<'de> for Digest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Digest, D::Error> {
        struct Messages;
        impl<'de> Visitor<'de> for Messages {
            type Value = Digest;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of messages")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Digest, A::Error> {
                let mut keep = Keeper::default();
                while let Some(value) = seq.next_element::<Value>()? {
                    keep.push(&value);
                }
                Ok(keep.finish())
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Digest, A::Error> {
                while map.next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?.is_some() {}
                Ok(Digest::default())
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Digest, E> {
                Ok(Digest::default())
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Digest, E> {
                Ok(Digest::default())
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Digest, E> {
                Ok(Digest::default())
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Digest, E> {
                Ok(Digest::default())
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Digest, E> {
                Ok(Digest::default())
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Digest, E> {
                Ok(Digest::default())
            }
        }
        deserializer.deserialize_any(Messages)
    }
}

fn timestamp(ms: Option<i64>) -> Value {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map(|t| Value::String(t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)))
        .unwrap_or(Value::Null)
}

/// The tool's name and input as Claude Code's facts reader knows them: `bash` is a shell
/// (as Copilot CLI's), `write`/`edit`/`multiedit`/`patch` touch `filePath`, `todowrite`
/// is `TodoWrite`.
fn claude_tool(tool: &ToolPart) -> (String, Value) {
    let mut input = tool.input.clone();
    let name = match tool.tool.as_str() {
        "write" => "Write",
        "edit" | "multiedit" | "patch" => "Edit",
        "todowrite" => "TodoWrite",
        other => other,
    };
    if let Some(path) = input.get("filePath").cloned() {
        input.insert("file_path".into(), path);
    }
    (name.to_string(), Value::Object(input))
}

/// A message in Claude Code's line shape (pure): a user message is one `user` line; an
/// assistant message one `assistant` line (its text and tool calls), then one `user`
/// line with the results of its finished calls.
pub fn claude_shaped(message: &DigestMessage, session: Option<&str>) -> Vec<Value> {
    let at = timestamp(message.time_ms);
    let texts = message.parts.iter().filter_map(|p| match p {
        DigestPart::Text(text) => Some(json!({"type": "text", "text": text})),
        DigestPart::Tool(_) => None,
    });
    if message.role == "user" {
        let content: Vec<Value> = texts.collect();
        if content.is_empty() {
            return vec![];
        }
        return vec![json!({
            "type": "user",
            "timestamp": at,
            "sessionId": session,
            "message": {"role": "user", "content": content},
        })];
    }
    let tools: Vec<&ToolPart> = message
        .parts
        .iter()
        .filter_map(|p| match p {
            DigestPart::Tool(tool) => Some(tool),
            DigestPart::Text(_) => None,
        })
        .collect();
    let mut content: Vec<Value> = texts.collect();
    for (k, tool) in tools.iter().enumerate() {
        let (name, input) = claude_tool(tool);
        let id =
            tool.call_id.clone().unwrap_or_else(|| format!("{}-{k}", message.id.as_deref().unwrap_or("m")));
        content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
    }
    let mut lines = vec![json!({
        "type": "assistant",
        "timestamp": at,
        "sessionId": session,
        "cwd": message.cwd,
        "message": {"id": message.id, "role": "assistant", "model": message.model, "content": content},
    })];
    let results: Vec<Value> = tools
        .iter()
        .enumerate()
        .filter(|(_, t)| matches!(t.status.as_deref(), Some("completed" | "error")))
        .map(|(k, tool)| {
            let id = tool
                .call_id
                .clone()
                .unwrap_or_else(|| format!("{}-{k}", message.id.as_deref().unwrap_or("m")));
            let failed = tool.status.as_deref() == Some("error") || tool.exit.is_some_and(|c| c != 0);
            json!({"type": "tool_result", "tool_use_id": id, "is_error": failed,
                   "content": tool.output.clone().unwrap_or_default()})
        })
        .collect();
    if !results.is_empty() {
        lines.push(json!({
            "type": "user",
            "timestamp": at,
            "message": {"role": "user", "content": results},
        }));
    }
    lines
}

/// The handoff's facts from a digest (pure): the messages in Claude Code's shape through
/// the one facts reader, the shell's exit codes added to the commands run. The digest
/// starts with the session's first message when it kept it, so the first request is
/// there; the whole session was not read when messages were dropped.
pub fn facts_from_digest(digest: &Digest, session: Option<&str>) -> SessionFacts {
    let lines: Vec<Value> = digest.messages.iter().flat_map(|m| claude_shaped(m, session)).collect();
    let mut facts = facts_from_values(std::iter::empty(), lines, true);
    facts.reached_start = digest.dropped == 0;
    facts.format = Format::OpenCodeMessages;
    // The shell's calls in order, with their exit codes: the latest match the commands
    // the reader kept, from the end.
    let shells: Vec<(String, Option<i64>)> = digest
        .messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| match p {
            DigestPart::Tool(t) if t.tool == "bash" => {
                let command = t.input.get("command")?.as_str()?.trim();
                Some((clip(command, super::facts::COMMAND_MAX), t.exit))
            }
            _ => None,
        })
        .collect();
    for (run, (command, exit)) in facts.commands_run.iter_mut().rev().zip(shells.iter().rev()) {
        if &run.command == command {
            set_exit(run, *exit);
        }
    }
    facts
}

fn set_exit(run: &mut CommandRun, exit: Option<i64>) {
    if let Some(code) = exit {
        run.exit_code = Some(code);
        run.failed |= code != 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(call: &str, command: &str, output: &str, exit: i64) -> Value {
        json!({"type": "tool", "tool": "bash", "callID": call, "status": "completed",
               "input": {"command": command, "description": "d"}, "output": output, "exit": exit})
    }

    fn session() -> Value {
        json!([
            {"role": "user", "id": "msg_1", "time": 1_796_144_500_000_i64,
             "parts": [{"type": "text", "text": "Add the client limits file, then run the limit tests."},
                       {"type": "text", "synthetic": true, "text": "baton's brief"}]},
            {"role": "assistant", "id": "msg_2", "time": 1_796_144_501_000_i64, "model": "standin/standin-model",
             "cwd": "/home/dev/shop-api",
             "parts": [{"type": "text", "text": "Writing the notes."},
                       {"type": "tool", "tool": "write", "callID": "c1", "status": "completed",
                        "input": {"filePath": "/home/dev/shop-api/notes/limits.md", "content": "x"}, "output": "ok"}]},
            {"role": "assistant", "id": "msg_3", "time": 1_796_144_502_000_i64, "model": "standin/standin-model",
             "parts": [tool("c2", "ls /baton-e2e-missing-folder", "ls: cannot access: No such file or directory", 2)]},
            {"role": "assistant", "id": "msg_4", "time": 1_796_144_503_000_i64, "model": "standin/standin-model",
             "parts": [{"type": "text", "text": "Progress: notes/limits.md is written; step 4 next."},
                       tool("c3", "echo step 4", "step 4", 0),
                       {"type": "tool", "tool": "bash", "callID": "c4", "status": "running", "input": {"command": "sleep 1"}}]}
        ])
    }

    #[test]
    fn a_digest_gives_the_facts_of_the_session() {
        let digest: Digest = serde_json::from_value(session()).unwrap();
        assert_eq!(digest.messages.len(), 4);
        let facts = facts_from_digest(&digest, Some("ses_1"));
        let request = "Add the client limits file, then run the limit tests.";
        assert_eq!(facts.first_request.as_deref(), Some(request));
        assert_eq!(facts.last_request.as_deref(), Some(request), "the synthetic brief is not the user's");
        assert_eq!(facts.model.as_deref(), Some("standin/standin-model"));
        assert_eq!(facts.cwd.as_deref(), Some("/home/dev/shop-api"));
        assert_eq!(facts.session_id.as_deref(), Some("ses_1"));
        assert_eq!(facts.format, Format::OpenCodeMessages);
        assert!(facts.reached_start);
        assert_eq!(facts.started_at.as_deref(), Some("2026-12-01T17:01:40.000Z"));
        let said = facts.last_assistant_text.as_deref().unwrap_or_default();
        assert!(said.starts_with("Progress: notes/limits.md is written"), "{said}");
        assert_eq!(
            facts.files_relative_to(std::path::Path::new("/home/dev/shop-api")),
            vec!["notes/limits.md"]
        );
        let commands: Vec<(&str, Option<i64>, bool)> =
            facts.commands_run.iter().map(|c| (c.command.as_str(), c.exit_code, c.failed)).collect();
        assert_eq!(
            commands,
            vec![
                ("ls /baton-e2e-missing-folder", Some(2), true),
                ("echo step 4", Some(0), false),
                ("sleep 1", None, false)
            ]
        );
        let failure = facts.last_failure.as_ref().expect("a last failure");
        assert_eq!(failure.command.as_deref(), Some("ls /baton-e2e-missing-folder"));
    }

    #[test]
    fn a_digest_is_bounded_and_lenient() {
        let mut messages = vec![json!({"role": "user", "parts": [{"type": "text", "text": "first"}]})];
        for n in 0..500 {
            messages.push(json!({"role": "assistant", "id": n, "parts": [tool(&format!("c{n}"), &format!("echo {n}"), &"x".repeat(10_000), 0)]}));
        }
        messages.push(json!("not a message"));
        messages.push(json!({"role": "system", "parts": []}));
        messages.push(
            json!({"role": "user", "parts": [{"type": "text", "text": "last words"}, 7, {"type": "file"}]}),
        );
        let digest: Digest = serde_json::from_value(Value::Array(messages)).unwrap();
        assert_eq!(digest.messages.len(), MESSAGES_MAX);
        assert!(digest.dropped > 400);
        let tool_output = digest.messages[1].parts.iter().find_map(|p| match p {
            DigestPart::Tool(t) => t.output.clone(),
            DigestPart::Text(_) => None,
        });
        assert!(tool_output.is_some_and(|o| o.len() <= TEXT_MAX + 4));
        let facts = facts_from_digest(&digest, None);
        assert_eq!(facts.first_request.as_deref(), Some("first"));
        assert_eq!(facts.last_request.as_deref(), Some("last words"));
        assert!(!facts.reached_start);
        assert_eq!(facts.commands_run.last().map(|c| c.command.as_str()), Some("echo 499"));
        for wrong in [json!({"a": 1}), json!("x"), json!(3), json!(null), json!([null, [], {"role": 5}])] {
            let digest: Digest = serde_json::from_value(wrong).unwrap();
            assert!(digest.messages.is_empty());
        }
    }
}
