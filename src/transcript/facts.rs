//! Facts about a session for the automatic handoff: what was asked, what the agent was
//! doing, which files it changed, what is still running, what last failed. Read from a
//! bounded head and a bounded tail of the transcript, never the whole file; every fact is
//! optional, and every text copied out is capped so a hostile transcript cannot blow up
//! a handoff.

use std::collections::{HashMap, HashSet};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::forward::complete_lines;
use super::line::{self, Compaction, Entry, SHORT_TEXT_MAX, block_type, clean_line, clip, parse_line, text};
use super::open_transcript;
use super::tail::TailReader;
use super::todos::{self, TaskBoard, TodoItem, TodoList};

/// How much of the start of the file is read for the first request and time.
pub const HEAD_BUDGET: u64 = 256 * 1024;
/// How much of the end of the file is read for everything else.
pub const TAIL_BUDGET: u64 = 8 * 1024 * 1024;

/// Caps on what is copied out of the transcript.
pub const REQUEST_TEXT_MAX: usize = 4000;
pub const ASSISTANT_TEXT_MAX: usize = 4000;
pub const ERROR_LINE_MAX: usize = 500;
pub const COMMAND_MAX: usize = 1000;
pub const PATH_MAX: usize = 4096;
pub const FILES_MAX: usize = 1000;
pub const BACKGROUND_MAX: usize = 100;
pub const COMPACTIONS_MAX: usize = 1000;
/// How many of the latest shell commands are kept.
pub const COMMANDS_MAX: usize = 20;

/// Whose transcript format a file is in: each host writes its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Claude Code's JSONL transcript.
    #[default]
    ClaudeCode,
    /// Codex's rollout (`rollout-*.jsonl`).
    CodexRollout,
    /// Gemini CLI's chat recording.
    GeminiChat,
    /// Qwen Code's chat recording (`~/.qwen/projects/<slug>/chats/<session>.jsonl`).
    QwenChat,
    /// Factory Droid's session transcript (`~/.factory/sessions/<slug>/<session>.jsonl`).
    DroidSession,
    /// GitHub Copilot CLI's session event log (`session-state/<session>/events.jsonl`).
    CopilotEvents,
    /// OpenCode's (and Kilo CLI's) session messages, sent by baton's plugin
    /// (`super::opencode`): never a file.
    #[serde(rename = "opencode_messages")]
    OpenCodeMessages,
}

impl Format {
    /// The format of a file read from its first line, for callers that do not know the
    /// host (`baton pause` given a path): Codex opens with `session_meta`, Gemini CLI
    /// with the recording's `projectHash`, Factory Droid with `session_start`, Copilot
    /// CLI with `session.start`, Qwen Code with a line whose message has `parts`;
    /// anything else is read as Claude Code's.
    pub fn sniff(first_line: &[u8]) -> Format {
        let Some(value) = line::parse_line(first_line) else { return Format::ClaudeCode };
        let kind = value.get("type").and_then(Value::as_str);
        if kind == Some("session_meta") {
            Format::CodexRollout
        } else if kind == Some("session_start") {
            Format::DroidSession
        } else if kind == Some("session.start") {
            Format::CopilotEvents
        } else if value.pointer("/message/parts").is_some_and(Value::is_array) {
            Format::QwenChat
        } else if value.get("projectHash").is_some()
            || value.get("kind").is_some() && value.get("sessionId").is_some()
        {
            Format::GeminiChat
        } else {
            Format::ClaudeCode
        }
    }

    /// The host's name for the transcript, as the handoff names its source.
    pub fn describe(self) -> &'static str {
        match self {
            Format::ClaudeCode => "Claude Code's transcript",
            Format::CodexRollout => "Codex's rollout",
            Format::GeminiChat => "Gemini CLI's chat recording",
            Format::QwenChat => "Qwen Code's chat recording",
            Format::DroidSession => "Factory Droid's session transcript",
            Format::CopilotEvents => "GitHub Copilot CLI's session events",
            Format::OpenCodeMessages => "the session's messages, sent by baton's plugin",
        }
    }
}

/// A shell command the agent ran, with how it ended when the part read shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandRun {
    pub command: String,
    /// The exit code, when the host recorded one.
    pub exit_code: Option<i64>,
    /// It ended in an error (a non-zero exit, or the host marked the call failed).
    pub failed: bool,
}

/// Keeps the latest [`COMMANDS_MAX`] commands; true when the oldest was dropped.
pub(crate) fn push_command(commands: &mut Vec<CommandRun>, run: CommandRun) -> bool {
    commands.push(run);
    if commands.len() > COMMANDS_MAX {
        commands.remove(0);
        return true;
    }
    false
}

/// How much of the transcript [`gather_facts`] may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FactsBudget {
    pub head: u64,
    pub tail: u64,
}

impl Default for FactsBudget {
    fn default() -> Self {
        FactsBudget { head: HEAD_BUDGET, tail: TAIL_BUDGET }
    }
}

/// A process the agent started in the background (Bash with `run_in_background`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BackgroundProcess {
    pub command: String,
    pub description: Option<String>,
    /// The shell id Claude Code gave it (`bash_1`), from the tool's result.
    pub id: Option<String>,
    /// The agent stopped it later (KillShell and its older names).
    pub stopped: bool,
    pub started_at: Option<String>,
}

/// The last tool call that returned an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedCommand {
    /// The tool's name, when its call is in the part read.
    pub tool: Option<String>,
    /// The command, for Bash.
    pub command: Option<String>,
    /// The line of the output that looks most like the error.
    pub error_line: Option<String>,
    pub at: Option<String>,
    /// The same Bash command succeeded afterwards.
    pub succeeded_later: bool,
}

/// What the handoff needs to know about a session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionFacts {
    pub session_id: Option<String>,
    /// The working folder on the latest line that has one.
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    /// The model of the latest main-chain reply.
    pub model: Option<String>,
    /// The time of the session's first line.
    pub started_at: Option<String>,
    /// The time of the latest line.
    pub last_activity_at: Option<String>,
    pub first_request: Option<String>,
    /// The latest request in the tail.
    pub last_request: Option<String>,
    /// The user's corrections and constraints in the tail ([`is_user_constraint`]), as
    /// written (clipped), oldest first, at most [`USER_WORDS_MAX`].
    pub user_words: Vec<String>,
    pub last_assistant_text: Option<String>,
    pub todos: Option<TodoList>,
    /// Files written or edited by the main chain, in first-touch order, as written in the
    /// transcript (usually absolute; see [`SessionFacts::files_relative_to`]).
    pub files_touched: Vec<String>,
    pub background_processes: Vec<BackgroundProcess>,
    pub last_failure: Option<FailedCommand>,
    /// The latest shell commands the agent ran (at most [`COMMANDS_MAX`]), oldest first.
    pub commands_run: Vec<CommandRun>,
    /// Whose format the transcript was read as.
    pub format: Format,
    /// Compactions in the tail, oldest first.
    pub compactions: Vec<Compaction>,
    /// The tail covers the whole file: nothing is missing from the facts.
    pub reached_start: bool,
    pub bytes_read: u64,
}

impl SessionFacts {
    /// [`SessionFacts::files_touched`] relative to `root` where they are inside it.
    pub fn files_relative_to(&self, root: &Path) -> Vec<String> {
        self.files_touched.iter().map(|file| relative_path(file, root)).collect()
    }
}

/// `file` relative to `root` when it is inside it, else unchanged.
pub fn relative_path(file: &str, root: &Path) -> String {
    match Path::new(file).strip_prefix(root) {
        Ok(relative) if !relative.as_os_str().is_empty() => relative.to_string_lossy().into_owned(),
        _ => file.to_string(),
    }
}

/// Reads the facts of the transcript at `path`: the tail backwards within
/// `budget.tail`, then, unless the tail reached the start, the first `budget.head` bytes.
#[cfg(test)]
pub fn gather_facts(path: &Path, budget: FactsBudget) -> io::Result<SessionFacts> {
    let read = BoundedRead::of(path, budget)?;
    let mut facts = facts_from_lines(read.head_lines(), read.tail_lines(), read.reached_start());
    facts.bytes_read = read.bytes_read();
    Ok(facts)
}

/// The facts of the transcript at `path`, read as `format` (the host that wrote it).
/// Every reader reads the same bounded head and tail.
pub fn gather_facts_as(format: Format, path: &Path, budget: FactsBudget) -> io::Result<SessionFacts> {
    let read = BoundedRead::of(path, budget)?;
    let format = match format {
        // A Claude Code session may be handed a path by hand: trust the file's own shape.
        Format::ClaudeCode => Format::sniff(read.first_line()),
        known => known,
    };
    let mut facts = match format {
        // The plugin's digest is sent on stdin, never named by a path: a file is read as
        // Claude Code's.
        Format::ClaudeCode | Format::OpenCodeMessages => {
            facts_from_lines(read.head_lines(), read.tail_lines(), read.reached_start())
        }
        Format::CodexRollout => {
            super::codex::facts_from_lines(read.head_lines(), read.tail_lines(), read.reached_start())
        }
        Format::GeminiChat => {
            super::gemini::facts_from_lines(read.head_lines(), read.tail_lines(), read.reached_start())
        }
        Format::QwenChat => {
            super::qwen::facts_from_lines(read.head_lines(), read.tail_lines(), read.reached_start())
        }
        Format::DroidSession => claude_shaped_facts(&read, super::droid::claude_shaped),
        Format::CopilotEvents => claude_shaped_facts(&read, super::copilot::claude_shaped),
    };
    facts.format = format;
    facts.bytes_read = read.bytes_read();
    Ok(facts)
}

/// The facts of a host's transcript whose lines `shape` puts in Claude Code's shape
/// (a line it returns `None` for is skipped).
fn claude_shaped_facts(read: &BoundedRead, shape: fn(&Value) -> Option<Value>) -> SessionFacts {
    let as_claude = |line: &[u8]| parse_line(line).and_then(|value| shape(&value));
    facts_from_values(
        read.head_lines().filter_map(as_claude),
        read.tail_lines().filter_map(as_claude),
        read.reached_start(),
    )
}

/// The facts a reader gets from `bytes` written to a file, read as `format`; and, with
/// `gib_before`, from the same bytes after a sparse gibibyte (the tail budget must keep
/// the read bounded whatever the size). For the host readers' fixture tests.
#[cfg(test)]
fn facts_of_file(format: Format, bytes: &[u8], gib_before: bool) -> SessionFacts {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("transcript.jsonl");
    let mut file = std::fs::File::create(&path).unwrap();
    if gib_before {
        file.set_len(1 << 30).unwrap();
        file.seek(SeekFrom::End(0)).unwrap();
        file.write_all(b"\n").unwrap();
    }
    file.write_all(bytes).unwrap();
    drop(file);
    let budget = FactsBudget::default();
    let facts = gather_facts_as(format, &path, budget).unwrap();
    assert!(facts.bytes_read <= budget.head + budget.tail, "read {} bytes", facts.bytes_read);
    facts
}

/// The checks every host's facts session at CRITICAL shares (tests/real_hosts/handoff_facts.rs
/// captured them, tests/fixtures/real/README.md says what they hold): the request, the
/// model, the folder, the agent's stated progress, the file written, the failing command
/// and the one that succeeded, read as `format` from the file alone and after a sparse
/// gibibyte. Returns both readings for the host's own checks (its todo list).
#[cfg(test)]
pub(super) fn check_facts_session_at_critical(
    format: Format,
    bytes: &[u8],
    model: &str,
) -> [SessionFacts; 2] {
    let first_line = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    assert_eq!(Format::sniff(first_line), format);
    [false, true].map(|gib_before| {
        let facts = facts_of_file(format, bytes, gib_before);
        assert_eq!(facts.format, format);
        let request = "Add the client limits file, then run the limit tests.";
        assert_eq!(facts.last_request.as_deref(), Some(request));
        // Past a gibibyte of other lines the first request is out of reach of the head read.
        let first = if gib_before { None } else { Some(request) };
        assert_eq!(facts.first_request.as_deref(), first);
        assert_eq!(facts.model.as_deref(), Some(model));
        assert_eq!(facts.cwd.as_deref(), Some("/home/dev/shop-api"));
        assert!(facts.session_id.is_some());
        let said = facts.last_assistant_text.as_deref().unwrap_or_default();
        assert!(said.starts_with("Progress: notes/limits.md is written"), "{said}");
        assert_eq!(facts.files_relative_to(Path::new("/home/dev/shop-api")), vec!["notes/limits.md"]);
        let failing = "ls /baton-e2e-missing-folder";
        assert!(facts.commands_run.iter().any(|c| c.command == failing && c.failed));
        assert!(facts.commands_run.iter().any(|c| c.command == "echo step 4" && !c.failed));
        let failure = facts.last_failure.as_ref().expect("a last failure");
        assert_eq!(failure.command.as_deref(), Some(failing));
        assert!(!failure.succeeded_later);
        facts
    })
}

/// A bounded read of a transcript: its last `budget.tail` bytes as complete lines and,
/// unless those reach the start, its first `budget.head` bytes.
pub(crate) struct BoundedRead {
    head: Vec<u8>,
    head_is_whole_file: bool,
    tail: Vec<Vec<u8>>,
    stats: super::tail::TailStats,
}

impl BoundedRead {
    pub(crate) fn of(path: &Path, budget: FactsBudget) -> io::Result<BoundedRead> {
        let mut file = open_transcript(path)?;
        let mut tail = TailReader::new(&file, budget.tail)?;
        let mut tail_lines = Vec::new();
        while let Some(line) = tail.next_line()? {
            tail_lines.push(line);
        }
        tail_lines.reverse();
        let stats = tail.stats();
        let mut head = Vec::new();
        if !stats.reached_start {
            file.seek(SeekFrom::Start(0))?;
            (&mut file).take(budget.head).read_to_end(&mut head)?;
        }
        let head_is_whole_file = head.len() as u64 >= stats.source_len;
        Ok(BoundedRead { head, head_is_whole_file, tail: tail_lines, stats })
    }

    pub(crate) fn head_lines(&self) -> impl Iterator<Item = &[u8]> {
        complete_lines(&self.head, self.head_is_whole_file)
    }

    pub(crate) fn tail_lines(&self) -> impl Iterator<Item = &[u8]> {
        self.tail.iter().map(Vec::as_slice)
    }

    pub(crate) fn reached_start(&self) -> bool {
        self.stats.reached_start
    }

    /// The file's first line, when it was read (from the head, or the tail reaching it).
    pub(crate) fn first_line(&self) -> &[u8] {
        if self.stats.reached_start {
            self.tail.first().map(Vec::as_slice).unwrap_or_default()
        } else {
            self.head_lines().next().unwrap_or_default()
        }
    }

    pub(crate) fn bytes_read(&self) -> u64 {
        self.stats.bytes_read + self.head.len() as u64
    }
}

/// The facts from lines (no I/O): `head` is the start of the file, oldest first (empty
/// when the tail reached the start), `tail` its end, oldest first.
pub fn facts_from_lines<'a, 'b>(
    head: impl IntoIterator<Item = &'a [u8]>,
    tail: impl IntoIterator<Item = &'b [u8]>,
    tail_reached_start: bool,
) -> SessionFacts {
    facts_from_values(
        head.into_iter().filter_map(parse_line),
        tail.into_iter().filter_map(parse_line),
        tail_reached_start,
    )
}

/// The facts from parsed lines in Claude Code's shape: its own transcript's, or another
/// host's lines put in that shape (Factory Droid, Copilot CLI).
pub(super) fn facts_from_values(
    head: impl IntoIterator<Item = Value>,
    tail: impl IntoIterator<Item = Value>,
    tail_reached_start: bool,
) -> SessionFacts {
    let mut builder = FactsBuilder::default();
    for value in head {
        builder.opening_line(Entry(&value));
    }
    for value in tail {
        if tail_reached_start {
            builder.opening_line(Entry(&value));
        }
        builder.tail_line(Entry(&value));
    }
    builder.finish(tail_reached_start)
}

/// The facts of a whole transcript held in memory.
#[cfg(test)]
pub fn facts_from_bytes(bytes: &[u8]) -> SessionFacts {
    facts_from_lines(std::iter::empty(), complete_lines(bytes, true), true)
}

#[derive(Debug)]
struct ToolCall {
    name: String,
    command: Option<String>,
}

#[derive(Default)]
struct FactsBuilder {
    facts: SessionFacts,
    line_number: u64,
    tool_calls: HashMap<String, ToolCall>,
    files_seen: HashSet<String>,
    background: Vec<Option<BackgroundProcess>>,
    background_by_tool_use: HashMap<String, usize>,
    latest_todo_write: Option<(u64, Vec<TodoItem>)>,
    tasks: TaskBoard,
    last_task_call: u64,
    last_text_message_id: Option<String>,
}

impl FactsBuilder {
    /// What only the start of the file can tell.
    fn opening_line(&mut self, entry: Entry) {
        if self.facts.started_at.is_none() {
            self.facts.started_at = entry.timestamp().map(|t| clip(t, SHORT_TEXT_MAX));
        }
        if self.facts.first_request.is_none() {
            self.facts.first_request = request_text(entry);
        }
    }

    fn tail_line(&mut self, entry: Entry) {
        self.line_number += 1;
        let short = |key: &str| entry.str_field(key).map(|v| clip(v, SHORT_TEXT_MAX));
        if let Some(at) = short("timestamp") {
            self.facts.last_activity_at = Some(at);
        }
        for (key, slot) in [
            ("sessionId", &mut self.facts.session_id),
            ("cwd", &mut self.facts.cwd),
            ("gitBranch", &mut self.facts.git_branch),
        ] {
            if let Some(value) = entry.str_field(key) {
                *slot = Some(clip(value, if key == "cwd" { PATH_MAX } else { SHORT_TEXT_MAX }));
            }
        }
        if let Some(compaction) = entry.compaction() {
            if self.facts.compactions.len() < COMPACTIONS_MAX {
                self.facts.compactions.push(compaction);
            }
            return;
        }
        if entry.is_sidechain() {
            return;
        }
        match entry.kind() {
            Some("assistant") if entry.is_main_assistant() => self.assistant_line(entry),
            Some("user") => self.user_line(entry),
            _ => {}
        }
    }

    fn assistant_line(&mut self, entry: Entry) {
        if let Some(model) = entry.model() {
            self.facts.model = Some(clip(model, SHORT_TEXT_MAX));
        }
        let reply: Vec<&str> = entry
            .blocks()
            .filter(|b| block_type(b) == Some("text"))
            .filter_map(|b| text(b.get("text")))
            .collect();
        if !reply.is_empty() {
            let reply = reply.join("\n");
            let message_id = entry.message_id().map(str::to_string);
            // A reply streamed as several lines: its text blocks are one answer.
            let text = match (&self.facts.last_assistant_text, &message_id) {
                (Some(earlier), Some(id)) if self.last_text_message_id.as_ref() == Some(id) => {
                    if earlier.contains(reply.trim()) {
                        earlier.clone()
                    } else {
                        format!("{earlier}\n{reply}")
                    }
                }
                _ => reply,
            };
            self.facts.last_assistant_text = Some(clip(text.trim(), ASSISTANT_TEXT_MAX));
            self.last_text_message_id = message_id;
        }
        for block in entry.blocks().filter(|b| block_type(b) == Some("tool_use")) {
            self.tool_use(block, entry.timestamp());
        }
    }

    fn tool_use(&mut self, block: &Value, at: Option<&str>) {
        let Some(name) = text(block.get("name")) else { return };
        let tool_use_id = text(block.get("id"));
        if let Some(id) = tool_use_id {
            // A streamed reply may repeat a block on a later line.
            if self.tool_calls.contains_key(id) {
                return;
            }
        }
        let empty = Value::Null;
        let input = block.get("input").unwrap_or(&empty);
        let command = is_shell_tool(name)
            .then(|| text(input.get("command")).map(|c| clip(c.trim(), COMMAND_MAX)))
            .flatten();
        match name {
            "TodoWrite" => {
                if let Some(items) = todos::todo_write_items(input) {
                    self.latest_todo_write = Some((self.line_number, items));
                }
            }
            "TaskCreate" => {
                self.tasks.create(tool_use_id, input);
                self.last_task_call = self.line_number;
            }
            "TaskUpdate" => {
                self.tasks.update(tool_use_id, input);
                self.last_task_call = self.line_number;
            }
            "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "Create" | "create" | "edit" => {
                let path = text(input.get("file_path"))
                    .or_else(|| text(input.get("notebook_path")))
                    .or_else(|| text(input.get("path")));
                if let Some(path) = path {
                    self.touch_file(path);
                }
            }
            "Bash" if input.get("run_in_background").and_then(Value::as_bool) == Some(true) => {
                if let Some(command) = &command {
                    self.start_background(tool_use_id, command.clone(), input, at);
                }
            }
            "KillShell" | "KillBash" | "TaskStop" => {
                let shell = line::id(input.get("shell_id")).or_else(|| line::id(input.get("task_id")));
                if let Some(shell) = shell {
                    for process in self.background.iter_mut().flatten() {
                        if process.id.as_deref() == Some(shell.as_str()) {
                            process.stopped = true;
                        }
                    }
                }
            }
            _ => {}
        }
        // A shell command counts as run once it is issued: at PostToolUse time in print
        // mode its result is often not yet written (a failed result marks it later).
        if let Some(command) = command.clone() {
            push_command(
                &mut self.facts.commands_run,
                CommandRun { command, exit_code: None, failed: false },
            );
        }
        if let Some(id) = tool_use_id {
            self.tool_calls.insert(id.to_string(), ToolCall { name: clip(name, SHORT_TEXT_MAX), command });
        }
    }

    fn touch_file(&mut self, path: &str) {
        let path = clip(path.trim(), PATH_MAX);
        if self.files_seen.len() < FILES_MAX && self.files_seen.insert(path.clone()) {
            self.facts.files_touched.push(path);
        }
    }

    fn start_background(
        &mut self,
        tool_use_id: Option<&str>,
        command: String,
        input: &Value,
        at: Option<&str>,
    ) {
        if self.background.len() >= BACKGROUND_MAX {
            return;
        }
        self.background.push(Some(BackgroundProcess {
            command,
            description: text(input.get("description")).map(|d| clip(d.trim(), COMMAND_MAX)),
            id: None,
            stopped: false,
            started_at: at.map(|t| clip(t, SHORT_TEXT_MAX)),
        }));
        if let Some(id) = tool_use_id {
            self.background_by_tool_use.insert(id.to_string(), self.background.len() - 1);
        }
    }

    fn user_line(&mut self, entry: Entry) {
        if let Some(request) = request_text(entry) {
            push_user_words(&mut self.facts.user_words, &request);
            self.facts.last_request = Some(request);
            return;
        }
        let structured = entry.0.get("toolUseResult");
        for block in entry.blocks().filter(|b| block_type(b) == Some("tool_result")) {
            let Some(tool_use_id) = text(block.get("tool_use_id")) else { continue };
            let is_error = block.get("is_error").and_then(Value::as_bool) == Some(true);
            let content = line::tool_result_text(block.get("content"));
            self.tool_result(tool_use_id, is_error, &content, structured, entry.timestamp());
        }
    }

    fn tool_result(
        &mut self,
        tool_use_id: &str,
        is_error: bool,
        content: &str,
        structured: Option<&Value>,
        at: Option<&str>,
    ) {
        let call = self.tool_calls.get(tool_use_id);
        if let Some(command) =
            call.filter(|c| is_error && is_shell_tool(&c.name)).and_then(|c| c.command.as_deref())
        {
            if let Some(run) = self.facts.commands_run.iter_mut().rev().find(|r| r.command == command) {
                run.failed = true;
            }
        }
        match call.map(|c| c.name.as_str()) {
            Some("TaskCreate" | "TaskUpdate") => {
                self.tasks.result(tool_use_id, is_error, content, structured)
            }
            Some("TaskList") if !is_error => {
                if let Some(structured) = structured {
                    self.tasks.snapshot(structured);
                    if self.tasks.is_used() {
                        self.last_task_call = self.line_number;
                    }
                }
            }
            _ => {}
        }
        if let Some(&index) = self.background_by_tool_use.get(tool_use_id) {
            if is_error {
                self.background[index] = None;
            } else if let Some(process) = self.background[index].as_mut() {
                process.id = structured
                    .and_then(|r| line::id(r.get("backgroundTaskId")))
                    .or_else(|| background_id(content))
                    .map(|id| clip(&id, SHORT_TEXT_MAX));
            }
        }
        if is_error {
            if is_user_refusal(content) {
                return;
            }
            self.facts.last_failure = Some(FailedCommand {
                tool: call.map(|c| c.name.clone()),
                command: call.and_then(|c| c.command.clone()),
                error_line: first_error_line(content),
                at: at.map(|t| clip(t, SHORT_TEXT_MAX)),
                succeeded_later: false,
            });
        } else if let (Some(failure), Some(command)) =
            (self.facts.last_failure.as_mut(), call.and_then(|c| c.command.as_ref()))
        {
            if failure.command.as_ref() == Some(command) {
                failure.succeeded_later = true;
            }
        }
    }

    fn finish(mut self, reached_start: bool) -> SessionFacts {
        let from_tasks = self.tasks.is_used()
            && self.latest_todo_write.as_ref().is_none_or(|(n, _)| self.last_task_call >= *n);
        self.facts.todos = if from_tasks {
            Some(self.tasks.into_list())
        } else {
            self.latest_todo_write.map(|(_, items)| todos::todo_write_list(items))
        };
        self.facts.background_processes = self.background.into_iter().flatten().collect();
        self.facts.reached_start = reached_start;
        self.facts
    }
}

/// The shell tool by each Claude-shaped host's name: Claude Code's `Bash`, Factory
/// Droid's `Execute`, Copilot CLI's `bash`.
fn is_shell_tool(name: &str) -> bool {
    matches!(name, "Bash" | "Execute" | "bash")
}

/// Wrappers Claude Code puts in user lines that are not something the person asked.
const NOT_A_REQUEST: &[&str] = &[
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
    "<system-reminder>",
    "[Request interrupted by user",
    "Caveat: The messages below were generated by the user",
];

/// How many of the user's corrections and constraints are kept, and how long each.
pub const USER_WORDS_MAX: usize = 8;
pub const USER_WORDS_CHARS: usize = 500;

/// Words that make a request a correction or a constraint the agent must keep to.
const CONSTRAINT_MARKS: &[&str] = &[
    "don't",
    "do not",
    "dont",
    "never",
    "always",
    "must",
    "instead",
    "no,",
    "not ",
    "stop",
    "only",
    "keep",
    "avoid",
    "without",
    "make sure",
    "remember",
    "wrong",
    "rather",
];

/// A request that corrects the agent or sets a rule (pure): it has one of
/// [`CONSTRAINT_MARKS`] as a word start, and is short enough to be a rule, not a task text.
pub fn is_user_constraint(request: &str) -> bool {
    let lower = request.to_lowercase();
    lower.chars().count() <= 2 * USER_WORDS_CHARS
        && CONSTRAINT_MARKS.iter().any(|mark| {
            lower.match_indices(mark).any(|(i, _)| i == 0 || !lower[..i].ends_with(char::is_alphanumeric))
        })
}

/// Adds a request to the user's words when it is a correction or constraint.
pub(crate) fn push_user_words(words: &mut Vec<String>, request: &str) {
    if is_user_constraint(request) {
        words.retain(|w| w != request);
        words.push(clip(request, USER_WORDS_CHARS));
        let excess = words.len().saturating_sub(USER_WORDS_MAX);
        words.drain(..excess);
    }
}

/// The text of a user line that is a person's request, clipped.
fn request_text(entry: Entry) -> Option<String> {
    if entry.kind() != Some("user") || entry.is_sidechain() || entry.is_meta() || entry.is_compact_summary() {
        return None;
    }
    let joined;
    let text = match entry.content()? {
        Value::String(s) => s.as_str(),
        Value::Array(blocks) => {
            if blocks.iter().any(|b| block_type(b) == Some("tool_result")) {
                return None;
            }
            let parts: Vec<&str> = blocks
                .iter()
                .filter(|b| block_type(b) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .map(str::trim)
                .filter(|t| !t.is_empty() && !t.starts_with("<system-reminder>"))
                .collect();
            joined = parts.join("\n");
            joined.as_str()
        }
        _ => return None,
    };
    let text = text.trim();
    if text.is_empty() || NOT_A_REQUEST.iter().any(|prefix| text.starts_with(prefix)) {
        return None;
    }
    Some(clip(text, REQUEST_TEXT_MAX))
}

/// A tool result that only says the person declined the call.
fn is_user_refusal(content: &str) -> bool {
    let content = content.trim_start();
    content.starts_with("The user doesn't want to")
        || content.starts_with("[Request interrupted by user")
        || content.starts_with("User rejected")
}

/// The id in a background Bash result: `Command running in background with ID: bash_1`.
fn background_id(content: &str) -> Option<String> {
    let rest = &content[content.find("with ID: ")? + "with ID: ".len()..];
    let id: String =
        rest.chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')).collect();
    (!id.is_empty()).then_some(id)
}

const ERROR_WORDS: &[&str] = &["error", "expected", "assert", "panic", "exception", "failed"];

/// The line of a failed tool's output worth showing: the first that reads like an error,
/// else the first non-empty one.
pub fn first_error_line(content: &str) -> Option<String> {
    let mut first = None;
    for raw in content.lines().take(10_000) {
        let raw = raw.replace("<tool_use_error>", "").replace("</tool_use_error>", "");
        let cleaned = clean_line(&raw, ERROR_LINE_MAX);
        if cleaned.is_empty() {
            continue;
        }
        let lower = cleaned.to_ascii_lowercase();
        if ERROR_WORDS.iter().any(|word| lower.contains(word)) {
            return Some(cleaned);
        }
        first.get_or_insert(cleaned);
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::todos::{TodoSource, TodoStatus};

    const FIXTURE: &[u8] = include_bytes!("../../tests/fixtures/transcript.jsonl");

    fn jsonl(lines: &[serde_json::Value]) -> Vec<u8> {
        lines.iter().map(|l| l.to_string()).collect::<Vec<_>>().join("\n").into_bytes()
    }

    #[test]
    fn fixture_facts() {
        let facts = facts_from_bytes(FIXTURE);
        let todos = facts.todos.as_ref().unwrap();
        assert_eq!(todos.source, TodoSource::TodoWrite);
        assert_eq!(todos.completed.len(), 2);
        assert_eq!(todos.in_progress.len(), 1);
        assert_eq!(todos.in_progress[0].content, "Wire the limiter into the orders routes");
        assert_eq!(todos.pending.len(), 1);
        assert_eq!(
            facts.files_relative_to(Path::new("/home/dev/shop-api")),
            vec!["src/limiter.ts", "src/routes/orders.ts", "src/app.ts"]
        );
        assert_eq!(facts.background_processes.len(), 1);
        let background = &facts.background_processes[0];
        assert_eq!(background.command, "npm run dev");
        assert_eq!(background.id.as_deref(), Some("bash_1"));
        assert_eq!(background.description.as_deref(), Some("Start the dev server"));
        let failure = facts.last_failure.as_ref().unwrap();
        assert_eq!(failure.tool.as_deref(), Some("Bash"));
        assert_eq!(failure.command.as_deref(), Some("npm test -- limiter"));
        assert_eq!(failure.error_line.as_deref(), Some("expected 429, got 200"));
        assert!(!failure.succeeded_later);
        assert!(
            facts
                .first_request
                .as_deref()
                .unwrap()
                .starts_with("Add per-client rate limiting to the orders API")
        );
        assert!(
            facts
                .last_request
                .as_deref()
                .unwrap()
                .starts_with("Also make the limit configurable per client tier")
        );
        assert!(
            facts
                .last_assistant_text
                .as_deref()
                .unwrap()
                .starts_with("Understood: tiers free=100/min and pro=1000/min.")
        );
        assert_eq!(facts.model.as_deref(), Some("claude-opus-4-5-20251101"));
        assert_eq!(facts.started_at.as_deref(), Some("2026-11-28T10:00:01.000Z"));
        assert_eq!(facts.last_activity_at.as_deref(), Some("2026-11-28T10:00:22.000Z"));
        assert_eq!(facts.session_id.as_deref(), Some("7f3c2a10-5b1e-4c2d-9a8f-0d6e4b2c1a99"));
        assert_eq!(facts.cwd.as_deref(), Some("/home/dev/shop-api"));
        assert_eq!(
            facts.compactions,
            vec![Compaction {
                trigger: Some("auto".into()),
                pre_tokens: Some(167_400),
                post_tokens: Some(41_800),
                at: Some("2026-11-28T10:00:14.000Z".into()),
            }]
        );
        assert!(facts.reached_start);
    }

    #[test]
    fn fixture_from_a_file_with_a_small_tail_uses_the_head() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, FIXTURE).unwrap();
        let whole = gather_facts(&path, FactsBudget::default()).unwrap();
        let mut expected = facts_from_bytes(FIXTURE);
        expected.bytes_read = FIXTURE.len() as u64;
        assert_eq!(whole, expected);

        let small = gather_facts(&path, FactsBudget { head: 4096, tail: 4096 }).unwrap();
        assert!(!small.reached_start);
        assert!(small.bytes_read <= 8192);
        assert!(small.first_request.as_deref().unwrap().starts_with("Add per-client"));
        assert_eq!(small.started_at.as_deref(), Some("2026-11-28T10:00:01.000Z"));
        assert!(small.last_request.as_deref().unwrap().starts_with("Also make the limit"));
        // Only what the tail shows: the MultiEdit and the final Edit, not the early Write.
        assert_eq!(
            small.files_relative_to(Path::new("/home/dev/shop-api")),
            vec!["src/app.ts", "src/limiter.ts"]
        );
        assert_eq!(small.compactions, vec![]);
    }

    #[test]
    fn missing_and_empty_files() {
        let dir = tempfile::tempdir().unwrap();
        let missing = gather_facts(&dir.path().join("none.jsonl"), FactsBudget::default()).unwrap_err();
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
        let path = dir.path().join("empty.jsonl");
        std::fs::write(&path, b"").unwrap();
        let facts = gather_facts(&path, FactsBudget::default()).unwrap();
        assert_eq!(facts, SessionFacts { reached_start: true, ..SessionFacts::default() });
    }

    #[test]
    fn garbage_is_skipped_and_nothing_panics() {
        let mut bytes =
            b"\xff\xfe\n[1]\n{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\"}]}}\n"
                .to_vec();
        bytes.extend_from_slice(br#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Write","input":{"file_path":7}},{"type":"tool_use","name":"TodoWrite","input":{"todos":[null,{"content":"x"}]}}]}}"#);
        bytes.extend_from_slice(b"\n{\"type\":\"user\",\"message\":{\"content\":\"cut off");
        let facts = facts_from_bytes(&bytes);
        assert!(facts.files_touched.is_empty());
        assert_eq!(facts.todos.unwrap().pending[0].content, "x");
        assert_eq!(facts.last_request, None);
    }

    #[test]
    fn requests_exclude_summaries_commands_and_tool_results() {
        use serde_json::json;
        let bytes = jsonl(&[
            json!({"type": "user", "isMeta": true, "message": {"content": "Caveat: meta"}}),
            json!({"type": "user", "message": {"content": "<command-name>/clear</command-name>"}}),
            json!({"type": "user", "message": {"content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"}, {"type": "text", "text": "Real ask"}]}}),
            json!({"type": "user", "isCompactSummary": true, "message": {"content": "Summary"}}),
            json!({"type": "user", "isSidechain": true, "message": {"content": "Subagent prompt"}}),
            json!({"type": "user", "message": {"content": [{"type": "text", "text": "[Request interrupted by user]"}]}}),
            json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}}),
        ]);
        let facts = facts_from_bytes(&bytes);
        assert_eq!(facts.first_request.as_deref(), Some("Real ask"));
        assert_eq!(facts.last_request.as_deref(), Some("Real ask"));
    }

    #[test]
    fn texts_are_capped() {
        use serde_json::json;
        let huge = "é".repeat(100_000);
        let bytes = jsonl(&[
            json!({"type": "user", "message": {"content": huge}}),
            json!({"type": "assistant", "message": {"id": "m", "content": [
                {"type": "text", "text": huge},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": huge}}]}}),
            json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": true, "content": format!("error: {huge}")}]}}),
        ]);
        let facts = facts_from_bytes(&bytes);
        assert!(facts.first_request.unwrap().len() <= REQUEST_TEXT_MAX);
        assert!(facts.last_assistant_text.unwrap().len() <= ASSISTANT_TEXT_MAX);
        let failure = facts.last_failure.unwrap();
        assert!(failure.command.unwrap().len() <= COMMAND_MAX);
        assert!(failure.error_line.unwrap().len() <= ERROR_LINE_MAX);
    }

    #[test]
    fn failures_refusals_and_later_success() {
        use serde_json::json;
        let call = |id: &str, command: &str| json!({"type": "assistant", "message": {"id": id, "content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}}]}});
        let result = |id: &str, is_error: bool, content: &str| json!({"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": id, "is_error": is_error, "content": content}]}});
        let bytes = jsonl(&[
            call("a", "cargo test"),
            result("a", true, "running 3 tests\n\u{1b}[31mthread 'x' panicked at src/lib.rs:3\u{1b}[0m"),
            call("b", "rm -rf /"),
            result("b", true, "The user doesn't want to proceed with this tool use."),
            call("c", "cargo test"),
            result("c", false, "ok"),
        ]);
        let failure = facts_from_bytes(&bytes).last_failure.unwrap();
        assert_eq!(failure.command.as_deref(), Some("cargo test"));
        assert_eq!(failure.error_line.as_deref(), Some("thread 'x' panicked at src/lib.rs:3"));
        assert!(failure.succeeded_later);

        let unmatched = jsonl(&[result("zz", true, "\n\n  Exit code 2\n")]);
        let failure = facts_from_bytes(&unmatched).last_failure.unwrap();
        assert_eq!(failure.tool, None);
        assert_eq!(failure.error_line.as_deref(), Some("Exit code 2"));
    }

    #[test]
    fn background_ids_from_text_and_stopped_shells() {
        use serde_json::json;
        let bytes = jsonl(&[
            json!({"type": "assistant", "message": {"content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "npm run dev", "run_in_background": true}},
                {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "bad", "run_in_background": true}}]}}),
            json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "Command running in background with ID: shell_7"}]},
                {"type": "tool_result", "tool_use_id": "t2", "is_error": true, "content": "no"}]}}),
            json!({"type": "assistant", "message": {"content": [
                {"type": "tool_use", "id": "t3", "name": "KillShell", "input": {"shell_id": "shell_7"}}]}}),
        ]);
        let facts = facts_from_bytes(&bytes);
        assert_eq!(facts.background_processes.len(), 1);
        assert_eq!(facts.background_processes[0].id.as_deref(), Some("shell_7"));
        assert!(facts.background_processes[0].stopped);
    }

    #[test]
    fn task_tools_replace_an_older_todo_write() {
        use serde_json::json;
        let bytes = jsonl(&[
            json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "w", "name": "TodoWrite", "input": {"todos": [{"content": "old", "status": "pending"}]}}]}}),
            json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "c1", "name": "TaskCreate", "input": {"subject": "Parse", "description": "d", "activeForm": "Parsing"}}]}}),
            json!({"type": "user", "toolUseResult": {"task": {"id": "1", "subject": "Parse"}}, "message": {"content": [{"type": "tool_result", "tool_use_id": "c1", "content": "Task #1 created successfully: Parse"}]}}),
            json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "u1", "name": "TaskUpdate", "input": {"taskId": "1", "status": "in_progress"}}]}}),
            json!({"type": "user", "toolUseResult": {"success": true, "taskId": "1", "updatedFields": ["status"]}, "message": {"content": [{"type": "tool_result", "tool_use_id": "u1", "content": "Updated task #1 status"}]}}),
        ]);
        let todos = facts_from_bytes(&bytes).todos.unwrap();
        assert_eq!(todos.source, TodoSource::Tasks);
        assert_eq!(todos.in_progress.len(), 1);
        assert_eq!(todos.in_progress[0].status, TodoStatus::InProgress);
        assert_eq!(todos.in_progress[0].active_form.as_deref(), Some("Parsing"));
        assert!(todos.pending.is_empty());
    }

    #[test]
    fn a_reply_streamed_over_lines_keeps_all_its_text() {
        use serde_json::json;
        let reply = |id: &str, text: &str| json!({"type": "assistant", "message": {"id": id, "content": [{"type": "text", "text": text}]}});
        let bytes =
            jsonl(&[reply("m1", "Old answer."), reply("m2", "First part."), reply("m2", "Second part.")]);
        assert_eq!(
            facts_from_bytes(&bytes).last_assistant_text.as_deref(),
            Some("First part.\nSecond part.")
        );
    }

    #[test]
    fn sidechain_work_is_not_the_sessions() {
        use serde_json::json;
        let bytes =
            jsonl(&[json!({"type": "assistant", "isSidechain": true, "message": {"model": "m", "content": [
            {"type": "text", "text": "sub"},
            {"type": "tool_use", "id": "t", "name": "Write", "input": {"file_path": "/x"}}]}})]);
        let facts = facts_from_bytes(&bytes);
        assert!(facts.files_touched.is_empty());
        assert_eq!(facts.last_assistant_text, None);
        assert_eq!(facts.model, None);
    }

    #[test]
    fn relative_paths() {
        let root = Path::new("/home/dev/shop-api/");
        assert_eq!(relative_path("/home/dev/shop-api/src/a.ts", root), "src/a.ts");
        assert_eq!(relative_path("/home/dev/shop-apix/a.ts", root), "/home/dev/shop-apix/a.ts");
        assert_eq!(relative_path("/home/dev/shop-api", root), "/home/dev/shop-api");
        assert_eq!(relative_path("rel/b.ts", root), "rel/b.ts");
    }
}
