//! Facts from Codex's rollout (`$CODEX_HOME/sessions/…/rollout-*.jsonl`), the same
//! [`SessionFacts`] Claude Code's transcript gives: the user's requests, the agent's
//! messages, the shell commands it ran (`exec_command`, `shell`, `shell_command`) with
//! their exit codes, the files `apply_patch` changed, and the plan `update_plan` keeps
//! where the host offers that tool. `codex exec` offers none: there the agent's latest
//! message is its statement of progress.
//!
//! Every line is `{"timestamp", "type", "payload"}`; what matters is `session_meta`,
//! `turn_context`, `response_item` (messages, function and custom tool calls and their
//! outputs) and `event_msg` (`user_message`, `agent_message`, `exec_command_end`,
//! `patch_apply_end`). Fields are read leniently: a line of another shape is skipped.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

#[cfg(test)]
use std::io;
#[cfg(test)]
use std::path::Path;

use super::facts::{
    ASSISTANT_TEXT_MAX, COMMAND_MAX, CommandRun, FILES_MAX, FailedCommand, PATH_MAX, REQUEST_TEXT_MAX,
    SessionFacts, first_error_line, push_command,
};
#[cfg(test)]
use super::file::open_transcript;
use super::format::Format;
use super::line::{SHORT_TEXT_MAX, clip, parse_line, text, unix_seconds};
#[cfg(test)]
use super::tail::TailReader;
use super::todos::{self, TodoItem, TodoSource, TodoStatus};

/// The facts from a rollout's lines (no I/O): `head` is the start of the file, oldest
/// first (empty when the tail reached the start), `tail` its end, oldest first.
pub fn facts_from_lines<'a, 'b>(
    head: impl IntoIterator<Item = &'a [u8]>,
    tail: impl IntoIterator<Item = &'b [u8]>,
    tail_reached_start: bool,
) -> SessionFacts {
    let mut reader = Rollout::default();
    for line in head {
        if let Some(value) = parse_line(line) {
            reader.opening_line(&value);
        }
    }
    for line in tail {
        if let Some(value) = parse_line(line) {
            if tail_reached_start {
                reader.opening_line(&value);
            }
            reader.line(&value);
        }
    }
    reader.finish(tail_reached_start)
}

/// The facts of a whole rollout held in memory.
#[cfg(test)]
pub fn facts_from_bytes(bytes: &[u8]) -> SessionFacts {
    facts_from_lines(std::iter::empty(), super::forward::complete_lines(bytes, true), true)
}

/// A shell call waiting for its output.
struct Call {
    command: String,
    /// Index into `commands_run`, while it is still there.
    index: Option<usize>,
}

#[derive(Default)]
struct Rollout {
    facts: SessionFacts,
    calls: HashMap<String, Call>,
    /// Call ids whose exit code came from `exec_command_end` (authoritative).
    ended: HashSet<String>,
    files_seen: HashSet<String>,
    plan: Option<Vec<TodoItem>>,
}

/// How Codex 0.171.0 words the output of a call a PreToolUse hook refused (the call did
/// not run; baton's pause refuses calls so).
const BLOCKED_BY_HOOK: &str = "Command blocked by PreToolUse hook";

/// Texts Codex puts in `user` messages that are not something the person asked.
const NOT_A_REQUEST: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "# AGENTS.md",
    "<turn_aborted>",
    "<user_shell_command>",
];

fn request(text: &str) -> Option<String> {
    let text = text.trim();
    if text.is_empty() || text.starts_with('<') || NOT_A_REQUEST.iter().any(|p| text.starts_with(p)) {
        return None;
    }
    Some(clip(text, REQUEST_TEXT_MAX))
}

/// The text blocks of a `message` item (`input_text`, `output_text`, `text`).
fn message_text(payload: &Value) -> Option<String> {
    let parts: Vec<&str> = payload
        .get("content")?
        .as_array()?
        .iter()
        .filter(|b| matches!(text(b.get("type")), Some("input_text" | "output_text" | "text")))
        .filter_map(|b| text(b.get("text")))
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// A function call's `arguments`: a JSON object written as a string (or, leniently, the
/// object itself).
fn arguments(payload: &Value) -> Option<Value> {
    match payload.get("arguments")? {
        Value::String(s) => serde_json::from_str(s).ok().filter(Value::is_object),
        object @ Value::Object(_) => Some(object.clone()),
        _ => None,
    }
}

/// The command of a shell tool call: `exec_command {cmd}`, `shell_command {command}`,
/// `shell {command: [argv]}` (`bash -lc <script>` read as the script).
fn shell_command(name: &str, args: &Value) -> Option<String> {
    let command = match name {
        "exec_command" => text(args.get("cmd")).map(str::to_string),
        "shell_command" => text(args.get("command")).map(str::to_string),
        "shell" | "container.exec" | "local_shell" => match args.get("command")? {
            Value::String(s) => Some(s.clone()),
            Value::Array(argv) => {
                let argv: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
                match argv.as_slice() {
                    [shell, flag, script]
                        if flag.starts_with('-') && flag.contains('c') && shell.contains("sh") =>
                    {
                        Some(script.to_string())
                    }
                    _ => Some(argv.join(" ")),
                }
            }
            _ => None,
        },
        _ => None,
    }?;
    let command = command.trim();
    (!command.is_empty()).then(|| clip(command, COMMAND_MAX))
}

/// The text of a call's output: a string, `{content}` / `{output}`, or content items.
fn output_text(output: Option<&Value>) -> String {
    match output {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) => output_text(o.get("content").or_else(|| o.get("output"))),
        Some(Value::Array(items)) => {
            items.iter().filter_map(|i| text(i.get("text"))).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// The exit code a shell tool's output states: `Process exited with code N` (exec_command),
/// `Exit code: N` (shell), or a JSON `{"metadata": {"exit_code": N}}` (older versions).
fn stated_exit_code(output: &str) -> Option<i64> {
    for marker in ["Process exited with code ", "Exit code: ", "exit code "] {
        if let Some(at) = output.find(marker) {
            let digits: String =
                output[at + marker.len()..].chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
            if let Ok(code) = digits.parse() {
                return Some(code);
            }
        }
    }
    let value: Value = serde_json::from_str(output.trim()).ok()?;
    value.get("metadata")?.get("exit_code")?.as_i64()
}

/// What the command printed, without the wrapper exec_command puts around it.
fn printed(output: &str) -> &str {
    match output.find("\nOutput:\n") {
        Some(at) => &output[at + "\nOutput:\n".len()..],
        None => output,
    }
}

/// The files an `apply_patch` input names (`*** Add File: p`, `*** Update File: p`,
/// `*** Delete File: p`, `*** Move to: p`).
fn patch_files(patch: &str) -> impl Iterator<Item = &str> {
    patch.lines().take(100_000).filter_map(|line| {
        ["*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "]
            .iter()
            .find_map(|marker| line.strip_prefix(marker))
            .map(str::trim)
            .filter(|p| !p.is_empty())
    })
}

/// The files a shell command writes by redirection (`> f`, `>> f`, `tee [-a] f`), read
/// from the words of the script: what a shell without a file tool writes with. Devices,
/// descriptors (`2>&1`) and words with expansions (`$x`, globs) are not files.
fn written_by(command: &str) -> Vec<String> {
    let words = shell_words(command);
    let mut out = vec![];
    let mut iter = words.iter();
    let mut after_tee = false;
    while let Some((word, quoted)) = iter.next() {
        let target = if *quoted && !after_tee {
            None
        } else if let Some(rest) = word.strip_prefix(">>").or_else(|| word.strip_prefix('>')) {
            if rest.is_empty() { iter.next().map(|(w, _)| w.as_str()) } else { Some(rest) }
        } else if let Some(at) =
            word.find('>').filter(|at| word[..*at].chars().all(|c| c.is_ascii_digit()) && *at > 0)
        {
            let rest = word[at..].trim_start_matches('>');
            if rest.is_empty() { iter.next().map(|(w, _)| w.as_str()) } else { Some(rest) }
        } else if after_tee && !word.starts_with('-') && !matches!(word.as_str(), "|" | "&&" | ";" | "||") {
            Some(word.as_str())
        } else {
            None
        };
        after_tee = (after_tee || word == "tee") && !matches!(word.as_str(), "|" | "&&" | ";" | "||");
        let Some(target) = target else { continue };
        let is_file = !target.is_empty()
            && !target.starts_with('&')
            && !target.starts_with("/dev/")
            && !target.contains(['$', '*', '?', '`', '(', ')']);
        if is_file && out.len() < 100 {
            out.push(target.to_string());
        }
    }
    out
}

/// The words of a shell script, quotes removed, each with whether it had quotes (a
/// quoted `>` is text, not a redirection); `;`, `|`, `&&` and `||` are words.
fn shell_words(script: &str) -> Vec<(String, bool)> {
    let mut words = vec![];
    let mut word = String::new();
    let mut had_quotes = false;
    let mut quote: Option<char> = None;
    let mut chars = script.chars().take(COMMAND_MAX).peekable();
    let end_word = |word: &mut String, had_quotes: &mut bool, words: &mut Vec<(String, bool)>| {
        if !word.is_empty() {
            words.push((std::mem::take(word), *had_quotes));
        }
        *had_quotes = false;
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                had_quotes = true;
            }
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            (None, c) if c.is_whitespace() => end_word(&mut word, &mut had_quotes, &mut words),
            (None, ';' | '|' | '&') => {
                // `2>&1` and `&>` stay in their word; `;`, `|`, `&&`, `||` split.
                if c == '&' && word.ends_with('>') {
                    word.push(c);
                    continue;
                }
                end_word(&mut word, &mut had_quotes, &mut words);
                let mut op = c.to_string();
                if chars.peek() == Some(&c) {
                    op.push(c);
                    chars.next();
                }
                words.push((op, false));
            }
            (None, c) => word.push(c),
        }
    }
    end_word(&mut word, &mut had_quotes, &mut words);
    words
}

/// `update_plan`'s `plan[]` of `{step, status}`.
fn plan_items(args: &Value) -> Option<Vec<TodoItem>> {
    let plan = args.get("plan")?.as_array()?;
    Some(
        plan.iter()
            .filter_map(|step| {
                let content = text(step.get("step"))?;
                let status = match text(step.get("status")).map(str::trim) {
                    Some("completed") => TodoStatus::Completed,
                    Some("in_progress") => TodoStatus::InProgress,
                    _ => TodoStatus::Pending,
                };
                Some(TodoItem {
                    id: None,
                    content: clip(content.trim(), todos::TODO_TEXT_MAX),
                    status,
                    active_form: None,
                })
            })
            .take(todos::TODO_ITEMS_MAX)
            .collect(),
    )
}

impl Rollout {
    fn opening_line(&mut self, value: &Value) {
        if self.facts.started_at.is_none() {
            let at = value
                .get("payload")
                .and_then(|p| text(p.get("timestamp")))
                .or_else(|| text(value.get("timestamp")));
            self.facts.started_at = at.map(|t| clip(t, SHORT_TEXT_MAX));
        }
        if self.facts.first_request.is_none() {
            self.facts.first_request = user_request(value);
        }
    }

    fn line(&mut self, value: &Value) {
        if let Some(at) = text(value.get("timestamp")) {
            self.facts.last_activity_at = Some(clip(at, SHORT_TEXT_MAX));
        }
        let Some(payload) = value.get("payload").filter(|p| p.is_object()) else { return };
        let kind = text(payload.get("type"));
        match text(value.get("type")) {
            Some("session_meta") => {
                if let Some(id) = text(payload.get("id")).or_else(|| text(payload.get("session_id"))) {
                    self.facts.session_id = Some(clip(id, SHORT_TEXT_MAX));
                }
                self.cwd(payload);
                if let Some(branch) = payload.get("git").and_then(|g| text(g.get("branch"))) {
                    self.facts.git_branch = Some(clip(branch, SHORT_TEXT_MAX));
                }
            }
            Some("turn_context") => {
                self.cwd(payload);
                if let Some(model) = text(payload.get("model")) {
                    self.facts.model = Some(clip(model, SHORT_TEXT_MAX));
                }
            }
            Some("response_item") => match kind {
                Some("message") => match text(payload.get("role")) {
                    Some("user") => {
                        if let Some(request) = message_text(payload).as_deref().and_then(request) {
                            super::facts::push_user_words(&mut self.facts.user_words, &request);
                            self.facts.last_request = Some(request);
                        }
                    }
                    Some("assistant") => {
                        if let Some(said) = message_text(payload) {
                            self.facts.last_assistant_text = Some(clip(said.trim(), ASSISTANT_TEXT_MAX));
                        }
                    }
                    _ => {}
                },
                Some("function_call") => self.function_call(payload),
                Some("custom_tool_call") => self.custom_tool_call(payload),
                Some("local_shell_call") => {
                    let args = payload.get("action").cloned().unwrap_or(Value::Null);
                    let id = text(payload.get("call_id")).or_else(|| text(payload.get("id")));
                    if let Some(command) = shell_command("local_shell", &args) {
                        self.start_command(id, command);
                    }
                }
                Some("function_call_output" | "custom_tool_call_output") => self.call_output(payload),
                _ => {}
            },
            Some("event_msg") => match kind {
                Some("user_message") => {
                    if let Some(request) = text(payload.get("message")).and_then(request) {
                        super::facts::push_user_words(&mut self.facts.user_words, &request);
                        self.facts.last_request = Some(request);
                    }
                }
                Some("agent_message") => {
                    if let Some(said) = text(payload.get("message")) {
                        self.facts.last_assistant_text = Some(clip(said.trim(), ASSISTANT_TEXT_MAX));
                    }
                }
                Some("exec_command_end") => self.command_end(payload),
                Some("patch_apply_end") => {
                    if let Some(changes) = payload.get("changes").and_then(Value::as_object) {
                        let paths: Vec<String> = changes.keys().cloned().collect();
                        for path in paths {
                            self.touch_file(&path);
                        }
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }

    fn cwd(&mut self, payload: &Value) {
        if let Some(cwd) = text(payload.get("cwd")) {
            self.facts.cwd = Some(clip(cwd, PATH_MAX));
        }
    }

    fn function_call(&mut self, payload: &Value) {
        let Some(name) = text(payload.get("name")) else { return };
        let id = text(payload.get("call_id")).or_else(|| text(payload.get("id")));
        let args = arguments(payload).unwrap_or(Value::Null);
        if name == "update_plan" {
            if let Some(items) = plan_items(&args) {
                self.plan = Some(items);
            }
            return;
        }
        if name == "apply_patch" {
            let patch =
                text(args.get("input")).or_else(|| text(args.get("patch"))).unwrap_or_default().to_string();
            self.apply_patch(&patch);
            return;
        }
        if let Some(command) = shell_command(name, &args) {
            // A patch run through the shell still changes files.
            if command.contains("apply_patch") {
                self.apply_patch(&command);
            }
            // `codex exec` offers no file tool: files are written by shell commands.
            let dir = text(args.get("workdir")).map(str::to_string).or_else(|| self.facts.cwd.clone());
            for target in written_by(&command) {
                let path = match &dir {
                    Some(dir) if !target.starts_with('/') => {
                        format!("{}/{target}", dir.trim_end_matches('/'))
                    }
                    _ => target,
                };
                self.touch_file(&path);
            }
            self.start_command(id, command);
        }
    }

    fn custom_tool_call(&mut self, payload: &Value) {
        if text(payload.get("name")) == Some("apply_patch") {
            let patch = text(payload.get("input")).unwrap_or_default().to_string();
            self.apply_patch(&patch);
        }
    }

    fn apply_patch(&mut self, patch: &str) {
        let files: Vec<String> = patch_files(patch).map(str::to_string).collect();
        for file in files {
            self.touch_file(&file);
        }
    }

    fn touch_file(&mut self, path: &str) {
        let path = clip(path, PATH_MAX);
        if self.facts.files_touched.len() < FILES_MAX && self.files_seen.insert(path.clone()) {
            self.facts.files_touched.push(path);
        }
    }

    fn start_command(&mut self, id: Option<&str>, command: String) {
        let dropped = push_command(
            &mut self.facts.commands_run,
            CommandRun { command: command.clone(), exit_code: None, failed: false },
        );
        if dropped {
            for call in self.calls.values_mut() {
                call.index = call.index.and_then(|i| i.checked_sub(1));
            }
        }
        if let Some(id) = id {
            let index = Some(self.facts.commands_run.len() - 1);
            self.calls.insert(clip(id, SHORT_TEXT_MAX), Call { command, index });
        }
    }

    /// A shell call's outcome: sets its exit code, and the last failure.
    fn outcome(&mut self, id: &str, exit_code: Option<i64>, output: &str, at: Option<&str>) {
        let Some(call) = self.calls.get(id) else { return };
        let failed = exit_code.is_some_and(|c| c != 0);
        let command = call.command.clone();
        if let Some(run) = call.index.and_then(|i| self.facts.commands_run.get_mut(i)) {
            run.exit_code = exit_code;
            run.failed = failed;
        }
        if failed {
            let error_line =
                first_error_line(printed(output)).or_else(|| exit_code.map(|c| format!("exit code {c}")));
            self.facts.last_failure = Some(FailedCommand {
                tool: Some("exec_command".into()),
                command: Some(command),
                error_line,
                at: at.map(|t| clip(t, SHORT_TEXT_MAX)),
                succeeded_later: false,
            });
        } else if exit_code == Some(0) {
            if let Some(failure) = self.facts.last_failure.as_mut() {
                if failure.command.as_deref() == Some(command.as_str()) {
                    failure.succeeded_later = true;
                }
            }
        }
    }

    fn call_output(&mut self, payload: &Value) {
        let Some(id) = text(payload.get("call_id")) else { return };
        if self.ended.contains(id) {
            return;
        }
        let output = output_text(payload.get("output"));
        let id = id.to_string();
        if output.starts_with(BLOCKED_BY_HOOK) {
            self.not_run(&id);
            return;
        }
        let code = stated_exit_code(&output);
        self.outcome(&id, code, &output, None);
    }

    /// A shell call that never ran (a PreToolUse hook refused it): not a command run.
    fn not_run(&mut self, id: &str) {
        let Some(index) = self.calls.remove(id).and_then(|call| call.index) else { return };
        if index < self.facts.commands_run.len() {
            self.facts.commands_run.remove(index);
            for call in self.calls.values_mut() {
                call.index = call.index.map(|i| if i > index { i - 1 } else { i });
            }
        }
    }

    fn command_end(&mut self, payload: &Value) {
        let Some(id) = text(payload.get("call_id")) else { return };
        let code = payload.get("exit_code").and_then(Value::as_i64);
        let output = text(payload.get("aggregated_output"))
            .or_else(|| text(payload.get("stderr")))
            .or_else(|| text(payload.get("stdout")))
            .unwrap_or_default()
            .to_string();
        let id = id.to_string();
        if code.is_some() {
            self.ended.insert(id.clone());
        }
        self.outcome(&id, code, &output, None);
    }

    fn finish(mut self, reached_start: bool) -> SessionFacts {
        self.facts.todos = self.plan.map(|items| todos::list_from(TodoSource::UpdatePlan, items));
        self.facts.format = Format::CodexRollout;
        self.facts.reached_start = reached_start;
        self.facts
    }
}

/// The person's request on a line, for the first request.
fn user_request(value: &Value) -> Option<String> {
    let payload = value.get("payload")?;
    match (text(value.get("type")), text(payload.get("type"))) {
        (Some("event_msg"), Some("user_message")) => text(payload.get("message")).and_then(request),
        (Some("response_item"), Some("message")) if text(payload.get("role")) == Some("user") => {
            message_text(payload).as_deref().and_then(request)
        }
        _ => None,
    }
}

// The figure: the newest usage record and window, read from the rollout's end.

/// Most bytes read from the end of a rollout.
pub const ROLLOUT_BUDGET: u64 = 8 * 1024 * 1024;
/// Once the figure is found, how much further back the window may be looked for.
pub const WINDOW_LOOKBACK: u64 = 1024 * 1024;

/// What the rollout says about the context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutReading {
    /// The newest response's prompt tokens.
    pub tokens: u64,
    /// The newest `model_context_window` seen.
    pub window: Option<u64>,
    /// When the figure was written (Unix seconds).
    pub written_at: Option<i64>,
}

/// The pure part of [`read`]: fed rollout lines newest first, it keeps the newest usage
/// record and the newest window.
#[derive(Debug, Default)]
pub struct RolloutScan {
    found: Option<RolloutReading>,
    window: Option<u64>,
    since_found: u64,
}

impl RolloutScan {
    /// Takes the next line towards the start. Returns false once nothing earlier matters.
    pub fn feed(&mut self, line: &[u8]) -> bool {
        if self.found.is_some() {
            self.since_found += line.len() as u64 + 1;
            if self.window.is_some() || self.since_found > WINDOW_LOOKBACK {
                return false;
            }
        }
        // Most lines are messages and tool output: skip the parse where no figure can be.
        let usage_line = self.found.is_none() && memchr::memmem::find(line, b"token_usage_record").is_some();
        let count_line =
            self.window.is_none() && memchr::memmem::find(line, b"model_context_window").is_some();
        if !usage_line && !count_line {
            return true;
        }
        let Ok(value) = serde_json::from_slice::<Value>(line.trim_ascii()) else { return true };
        match value.get("type").and_then(Value::as_str) {
            Some("token_usage_record") if self.found.is_none() => {
                let tokens = value.pointer("/payload/usage/input_tokens").and_then(Value::as_u64);
                if let Some(tokens) = tokens.filter(|t| *t > 0) {
                    let written_at = value.get("timestamp").and_then(Value::as_str).and_then(unix_seconds);
                    self.found = Some(RolloutReading { tokens, window: None, written_at });
                }
            }
            Some("event_msg")
                if self.window.is_none()
                    && value.pointer("/payload/type").and_then(Value::as_str) == Some("token_count") =>
            {
                self.window = value
                    .pointer("/payload/info/model_context_window")
                    .and_then(Value::as_u64)
                    .filter(|w| *w > 0);
            }
            _ => {}
        }
        !(self.found.is_some() && self.window.is_some())
    }

    /// The newest usage record and the newest window seen, apart.
    pub fn parts(self) -> (Option<RolloutReading>, Option<u64>) {
        (self.found, self.window)
    }

    #[cfg(test)]
    pub fn finish(self) -> Option<RolloutReading> {
        let window = self.window;
        self.found.map(|reading| RolloutReading { window, ..reading })
    }
}

/// Reads the newest figure from rollout lines given newest first (pure).
#[cfg(test)]
pub fn reading_from_lines<'a>(
    lines_newest_first: impl IntoIterator<Item = &'a [u8]>,
) -> Option<RolloutReading> {
    let mut scan = RolloutScan::default();
    for line in lines_newest_first {
        if !scan.feed(line) {
            break;
        }
    }
    scan.finish()
}

/// Reads the rollout at `path` from its end, within [`ROLLOUT_BUDGET`].
#[cfg(test)]
pub fn read(path: &Path) -> io::Result<Option<RolloutReading>> {
    let file = open_transcript(path)?;
    let mut tail = TailReader::new(&file, ROLLOUT_BUDGET)?;
    let mut scan = RolloutScan::default();
    while let Some(line) = tail.next_line()? {
        if !scan.feed(&line) {
            break;
        }
    }
    Ok(scan.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLOUT: &[u8] = include_bytes!("../../tests/fixtures/real/codex/rollout-at-PostToolUse-3.jsonl");

    #[test]
    fn the_newest_usage_record_and_window() {
        let lines: Vec<&[u8]> = ROLLOUT.split(|b| *b == b'\n').filter(|l| !l.is_empty()).rev().collect();
        let reading = reading_from_lines(lines).unwrap();
        assert_eq!(reading.tokens, 135_000);
        assert_eq!(reading.window, Some(190_000));
        assert!(reading.written_at.is_some());
    }

    #[test]
    fn from_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        std::fs::write(&path, ROLLOUT).unwrap();
        let reading = read(&path).unwrap().unwrap();
        assert_eq!((reading.tokens, reading.window), (135_000, Some(190_000)));
        std::fs::write(&path, b"{\"type\":\"session_meta\"}\n").unwrap();
        assert_eq!(read(&path).unwrap(), None);
    }
    use crate::transcript::{FactsBudget, TodoSource, gather_facts_as};
    use serde_json::json;
    use std::path::Path;

    /// Captured from `codex exec` 0.171.0 against the stand-in server (see
    /// tests/fixtures/real/README.md): cut where the CRITICAL hook ran.
    const FIXTURE: &[u8] = include_bytes!("../../tests/fixtures/real/codex/rollout-at-critical.jsonl");

    fn jsonl(lines: &[Value]) -> Vec<u8> {
        lines.iter().map(|l| format!("{l}\n")).collect::<String>().into_bytes()
    }

    #[test]
    fn real_rollout_facts() {
        let facts = facts_from_bytes(FIXTURE);
        assert_eq!(facts.format, Format::CodexRollout);
        assert_eq!(facts.session_id.as_deref(), Some("01a230d2-bed3-7613-8c9d-c3b5e41b495e"));
        assert_eq!(facts.cwd.as_deref(), Some("/home/dev/shop-api"));
        assert_eq!(facts.git_branch.as_deref(), Some("master"));
        assert_eq!(facts.model.as_deref(), Some("gpt-5-codex"));
        assert_eq!(facts.started_at.as_deref(), Some("2026-12-01T08:57:27.599Z"));
        let request = "Add the client limits file, then run the limit tests.";
        assert_eq!(facts.first_request.as_deref(), Some(request));
        assert_eq!(facts.last_request.as_deref(), Some(request));
        // No plan tool in `codex exec`: the agent's last message is its stated progress.
        assert!(facts.todos.is_none());
        assert!(
            facts
                .last_assistant_text
                .as_deref()
                .unwrap()
                .starts_with("Progress: notes/limits.md is written; the limit test run failed")
        );
        assert_eq!(facts.files_relative_to(Path::new("/home/dev/shop-api")), vec!["notes/limits.md"]);
        let commands: Vec<(&str, Option<i64>, bool)> =
            facts.commands_run.iter().map(|c| (c.command.as_str(), c.exit_code, c.failed)).collect();
        assert_eq!(
            commands,
            vec![
                ("mkdir -p notes && printf 'free=100\\n' > notes/limits.md", Some(0), false),
                ("ls /baton-e2e-missing-folder", Some(2), true),
                ("echo step 2", None, false),
            ]
        );
        let failure = facts.last_failure.unwrap();
        assert_eq!(failure.command.as_deref(), Some("ls /baton-e2e-missing-folder"));
        assert_eq!(
            failure.error_line.as_deref(),
            Some("ls: cannot access '/baton-e2e-missing-folder': No such file or directory")
        );
        assert!(!failure.succeeded_later);
        assert!(facts.reached_start);
    }

    #[test]
    fn the_format_is_sniffed_from_the_first_line() {
        assert_eq!(Format::sniff(FIXTURE.split(|b| *b == b'\n').next().unwrap()), Format::CodexRollout);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        std::fs::write(&path, FIXTURE).unwrap();
        // Handed over as Claude Code's (a path given by hand): read as what it is.
        let facts = gather_facts_as(Format::ClaudeCode, &path, FactsBudget::default()).unwrap();
        assert_eq!(facts.format, Format::CodexRollout);
        assert_eq!(facts.files_touched.len(), 1);
    }

    #[test]
    fn a_call_a_pre_tool_use_hook_refused_is_not_a_command_run() {
        let call = |cmd: &str, id: &str| json!({"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "arguments": json!({"cmd": cmd}).to_string(), "call_id": id}});
        let output = |id: &str, text: &str| json!({"type": "response_item", "payload": {"type": "function_call_output", "call_id": id, "output": text}});
        let bytes = jsonl(&[
            call("echo a", "c1"),
            call("echo b", "c2"),
            output("c2", "Command blocked by PreToolUse hook: baton refused this call. Command: echo b"),
            output("c1", "Exit code: 0\nOutput:\na"),
            call("echo c", "c3"),
        ]);
        let facts = facts_from_bytes(&bytes);
        let commands: Vec<_> = facts.commands_run.iter().map(|c| (c.command.as_str(), c.exit_code)).collect();
        assert_eq!(commands, [("echo a", Some(0)), ("echo c", None)]);
    }

    #[test]
    fn plans_patches_and_older_shell_calls() {
        let call = |name: &str, args: Value, id: &str| json!({"type": "response_item", "payload": {"type": "function_call", "name": name, "arguments": args.to_string(), "call_id": id}});
        let bytes = jsonl(&[
            call(
                "update_plan",
                json!({"plan": [{"step": "Parse", "status": "completed"}, {"step": "Wire", "status": "in_progress"}, {"step": "Ship", "status": "pending"}]}),
                "p1",
            ),
            json!({"type": "response_item", "payload": {"type": "custom_tool_call", "name": "apply_patch", "call_id": "a1",
                "input": "*** Begin Patch\n*** Add File: src/a.rs\n+x\n*** Update File: src/b.rs\n*** End Patch"}}),
            call("shell", json!({"command": ["bash", "-lc", "cargo test"], "workdir": "/w"}), "s1"),
            json!({"type": "response_item", "payload": {"type": "function_call_output", "call_id": "s1",
                "output": "{\"output\":\"error: test failed\",\"metadata\":{\"exit_code\":101}}"}}),
            json!({"type": "event_msg", "payload": {"type": "patch_apply_end", "call_id": "a1", "changes": {"/w/src/c.rs": {}}}}),
            call("shell_command", json!({"command": "echo hi | tee -a log.txt 2>&1 >/dev/null"}), "s2"),
            json!({"type": "event_msg", "payload": {"type": "exec_command_end", "call_id": "s2", "exit_code": 0}}),
            call("shell", json!({"command": ["bash", "-lc", "cargo test"]}), "s3"),
            json!({"type": "response_item", "payload": {"type": "function_call_output", "call_id": "s3", "output": "Exit code: 0\nok"}}),
        ]);
        let facts = facts_from_bytes(&bytes);
        let todos = facts.todos.unwrap();
        assert_eq!(todos.source, TodoSource::UpdatePlan);
        assert_eq!((todos.completed.len(), todos.in_progress.len(), todos.pending.len()), (1, 1, 1));
        assert_eq!(todos.in_progress[0].content, "Wire");
        assert_eq!(facts.files_touched, vec!["src/a.rs", "src/b.rs", "/w/src/c.rs", "log.txt"]);
        let failure = facts.last_failure.unwrap();
        assert_eq!(failure.command.as_deref(), Some("cargo test"));
        assert!(failure.succeeded_later);
        assert_eq!(facts.commands_run[0].exit_code, Some(101));
        assert_eq!(facts.commands_run[1].exit_code, Some(0));
    }

    #[test]
    fn redirection_targets() {
        assert_eq!(
            written_by("printf 'a\\n' > notes/x.md && cat a >> 'b c.txt'"),
            vec!["notes/x.md", "b c.txt"]
        );
        assert_eq!(written_by("make 2>&1 >/dev/null; ls > $OUT; echo >*.log"), Vec::<String>::new());
        assert_eq!(written_by("cmd 2>err.log | tee out.txt"), vec!["err.log", "out.txt"]);
        assert_eq!(written_by("echo '>' not-a-file"), Vec::<String>::new());
        assert_eq!(written_by("echo '>' x; ls > y"), vec!["y"]);
    }

    #[test]
    fn context_lines_are_not_requests_and_nothing_panics() {
        let bytes = jsonl(&[
            json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>x</environment_context>"}]}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "# AGENTS.md instructions for /w"}]}}),
            json!({"type": "response_item", "payload": {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "CONTEXT CRITICAL"}]}}),
            json!({"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "arguments": "not json"}}),
            json!({"type": "response_item", "payload": {"type": "function_call_output", "call_id": 7, "output": null}}),
            json!({"type": "event_msg", "payload": "text"}),
            json!([1, 2]),
        ]);
        let facts = facts_from_bytes(&bytes);
        assert_eq!(facts.first_request, None);
        assert_eq!(facts.last_request, None);
        assert_eq!(facts.last_assistant_text, None);
        assert!(facts.commands_run.is_empty());
    }

    /// A 1 GiB rollout (sparse: its first 1 GiB reads as zeros) with the real rollout at
    /// its end: the facts come from the end, and what is read stays within the budget.
    #[test]
    fn a_1_gib_rollout_is_read_within_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout-big.jsonl");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(1 << 30).unwrap();
        drop(file);
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut file, b"\n").unwrap();
        std::io::Write::write_all(&mut file, FIXTURE).unwrap();
        drop(file);
        let budget = FactsBudget::default();
        let facts = gather_facts_as(Format::CodexRollout, &path, budget).unwrap();
        assert!(facts.bytes_read <= budget.head + budget.tail, "read {} bytes", facts.bytes_read);
        assert!(!facts.reached_start);
        assert_eq!(facts.last_failure.unwrap().command.as_deref(), Some("ls /baton-e2e-missing-folder"));
        assert!(facts.last_assistant_text.unwrap().starts_with("Progress:"));
    }
}
