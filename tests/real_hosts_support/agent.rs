//! A stand-in agent for the model server (issue 19): it works through a task list of
//! `steps` steps, one shell command and one plan update per step, and decides its next
//! move **only from the request it was sent** (the brief, the conversation), never from
//! the file system. The highest step it can see done is the one it last saw run: in its
//! own conversation, a shell result saying `DONE step-NN`; in a brief, a quoted command
//! `echo step-NN >> steps.log`. A brief that loses the record therefore shows up as a
//! repeated (or skipped) step in `steps.log`, which each step's command appends to.
//!
//! Usage climbs with the shell results in the context (`base + per_step × results`), so
//! each fresh context reaches CRITICAL after about the same number of steps.
//!
//! Claude Code (Anthropic Messages API): the task tools are deferred, so a context starts
//! with `ToolSearch select:TaskCreate,TaskUpdate`, then one reply creating a task per step
//! still to do, then per step a `Bash` call and a `TaskUpdate` marking it completed.
//! Codex (OpenAI Responses API): `codex exec` offers no plan tool, so a step is one call
//! of the shell tool the request lists, with the agent's statement of progress (its plan
//! update) said in the same reply.

use std::sync::Mutex;

use serde_json::{Value, json};

use super::server::{Api, stream_anthropic, stream_responses};

/// The marker a step's shell output carries.
pub fn done_marker(step: u32) -> String {
    format!("DONE step-{step:02}")
}

/// The shell command of step `step`: appends to `steps.log` in the project, says it is done.
pub fn step_command(step: u32) -> String {
    format!("echo step-{step:02} >> steps.log && echo {}", done_marker(step))
}

/// The agent's settings.
#[derive(Clone, Debug)]
pub struct TaskAgent {
    pub steps: u32,
    /// Prompt tokens of a context with no shell result yet.
    pub base_tokens: u64,
    /// Prompt tokens each shell result in the context adds.
    pub per_step_tokens: u64,
    /// Whether it does as baton asks or goes on until the host stops it.
    pub obeys: Obeys,
}

/// The two kinds of agent the pause and the relay must serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Obeys {
    /// Goes on making tool calls until the host stops it (the worst case the pause is for).
    Never,
    /// Does as baton asks: told CONTEXT CRITICAL (or to end its turn), it ends its turn
    /// (the step it was on ran) and never reaches baton's stop.
    Always,
    /// Both in one relay: goes on in legs 1, 3, 5, obeys in legs 2 and 4 (its leg read
    /// from the brief, "This is leg N of a relay").
    EvenLegs,
}

/// What the agent did on one main request (for the test's assertions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Move {
    ToolSearch,
    CreateTasks(Vec<u32>),
    Bash(u32),
    Update(u32),
    /// The final text (all done, or ending the turn as baton asked).
    Finish(String),
}

/// One decision, with what the agent read.
#[derive(Clone, Debug)]
pub struct Decision {
    pub done: u32,
    /// The request had no tool result yet: the first of a context.
    pub first_of_context: bool,
    pub prompt_tokens: u64,
    pub made: Move,
}

/// The agent with its log of decisions.
pub struct Agent {
    pub settings: TaskAgent,
    log: Mutex<Vec<Decision>>,
}

/// A tool call in the conversation.
struct Call {
    id: String,
    name: String,
    input: Value,
}

/// What the agent reads from an Anthropic request.
struct Seen {
    calls: Vec<Call>,
    /// tool_use_id → the result's text.
    results: Vec<(String, String)>,
    /// Text the user and system messages carry outside tool results (prompt, brief,
    /// reminders, hook context).
    user_text: String,
    tools: Vec<String>,
}

fn block_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

fn read_anthropic(body: &Value) -> Seen {
    let mut seen = Seen { calls: vec![], results: vec![], user_text: String::new(), tools: vec![] };
    seen.tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    for message in body["messages"].as_array().into_iter().flatten() {
        let blocks = match &message["content"] {
            Value::String(s) => {
                if message["role"] != "assistant" {
                    seen.user_text.push_str(s);
                    seen.user_text.push('\n');
                }
                continue;
            }
            Value::Array(blocks) => blocks,
            _ => continue,
        };
        for block in blocks {
            match block["type"].as_str() {
                Some("tool_use") => seen.calls.push(Call {
                    id: block["id"].as_str().unwrap_or_default().to_string(),
                    name: block["name"].as_str().unwrap_or_default().to_string(),
                    input: block["input"].clone(),
                }),
                Some("tool_result") => seen.results.push((
                    block["tool_use_id"].as_str().unwrap_or_default().to_string(),
                    block_text(&block["content"]),
                )),
                // Claude Code 2.1.332 sends hook context as `system` messages in the list.
                Some("text") if message["role"] != "assistant" => {
                    seen.user_text.push_str(block["text"].as_str().unwrap_or_default());
                    seen.user_text.push('\n');
                }
                _ => {}
            }
        }
    }
    seen
}

fn read_openai(body: &Value) -> Seen {
    let mut seen = Seen { calls: vec![], results: vec![], user_text: String::new(), tools: vec![] };
    seen.tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    for item in body["input"].as_array().into_iter().flatten() {
        match item["type"].as_str() {
            Some("function_call") | Some("custom_tool_call") => seen.calls.push(Call {
                id: item["call_id"].as_str().unwrap_or_default().to_string(),
                name: "Bash".to_string(),
                input: item["arguments"].clone(),
            }),
            Some("function_call_output") | Some("custom_tool_call_output") => seen.results.push((
                item["call_id"].as_str().unwrap_or_default().to_string(),
                match &item["output"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                },
            )),
            _ if item["role"].as_str().is_some_and(|r| r != "assistant") => {
                seen.user_text.push_str(&block_text(&item["content"]));
                seen.user_text.push('\n');
            }
            _ => {}
        }
    }
    seen
}

/// The step numbers `NN` after each `prefix` in `text`.
fn numbers_after(text: &str, prefix: &str) -> Vec<u32> {
    text.match_indices(prefix)
        .filter_map(|(at, _)| {
            let rest = &text[at + prefix.len()..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect()
}

impl Seen {
    fn result_of(&self, id: &str) -> Option<&str> {
        self.results.iter().find(|(i, _)| i == id).map(|(_, t)| t.as_str())
    }

    /// The highest step seen done: a shell result in this conversation, or a command a
    /// brief quotes as run.
    fn done(&self) -> u32 {
        // The output's marker, not the command echoed back (an error quotes the command).
        let in_results = self
            .results
            .iter()
            .flat_map(|(_, text)| numbers_after(&text.replace("echo DONE step-", ""), "DONE step-"));
        // Gemini CLI passes hook context on HTML-escaped (`&gt;&gt;`); a model reads either.
        let user_text = self.user_text.replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&");
        // A command the brief lists as failed (refused by baton, it did not run) and never
        // as run is not done.
        let failed_only = |n: u32| {
            user_text.contains(&format!("DONE step-{n:02}\u{201d} (failed)"))
                && !user_text.contains(&format!("DONE step-{n:02}\u{201d} (exit 0)"))
        };
        let in_brief = numbers_after(&user_text, "echo step-")
            .into_iter()
            .filter(|n| user_text.contains(&format!("echo step-{n:02} >> steps.log")) && !failed_only(*n));
        in_results.chain(in_brief).max().unwrap_or(0)
    }

    fn bash_results(&self) -> u64 {
        self.calls.iter().filter(|c| c.name == "Bash" && self.result_of(&c.id).is_some()).count() as u64
    }

    /// step → task id, from this conversation's TaskCreate results ("Task #N created …").
    fn task_ids(&self) -> Vec<(u32, String)> {
        self.calls
            .iter()
            .filter(|c| c.name == "TaskCreate")
            .filter_map(|c| {
                let step = numbers_after(c.input["subject"].as_str()?, "Step ").first().copied()?;
                let result = self.result_of(&c.id)?;
                let id = numbers_after(result, "Task #").first().copied()?;
                Some((step, id.to_string()))
            })
            .collect()
    }

    fn completed_task_ids(&self) -> Vec<String> {
        self.calls
            .iter()
            .filter(|c| c.name == "TaskUpdate" && c.input["status"] == "completed")
            .filter_map(|c| c.input["taskId"].as_str().map(str::to_string))
            .collect()
    }

    /// The host refused the newest call on baton's word (Codex's PreToolUse deny while the
    /// pause refuses calls): like a model, the agent cannot go on and ends its turn.
    fn refused_by_baton(&self) -> bool {
        self.results.last().is_some_and(|(_, t)| t.contains("baton refused this call"))
    }

    /// baton asked the agent to end its turn, or told it CONTEXT CRITICAL (whose advice is
    /// to finish the step and stop), in the newest tool result or a reminder.
    fn asked_to_end_turn(&self) -> bool {
        let last_result = self.results.last().map(|(_, t)| t.as_str()).unwrap_or_default();
        ["end your turn", "CONTEXT CRITICAL"].iter().any(|words| last_result.contains(words))
            || self.user_text.contains("end your turn now")
            || self.user_text.contains("CONTEXT CRITICAL")
    }

    /// The relay leg this context is, from its brief (1 without one).
    fn leg(&self) -> u32 {
        numbers_after(&self.user_text, "This is leg ").first().copied().unwrap_or(1)
    }

    /// Whether an agent of kind `obeys` does as baton asks in this context.
    fn obeys(&self, obeys: Obeys) -> bool {
        match obeys {
            Obeys::Never => false,
            Obeys::Always => true,
            Obeys::EvenLegs => self.leg() % 2 == 0,
        }
    }
}

impl Agent {
    pub fn new(settings: TaskAgent) -> Agent {
        Agent { settings, log: Mutex::new(vec![]) }
    }

    /// Every decision so far, in order.
    pub fn decisions(&self) -> Vec<Decision> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The steps whose shell command the agent issued, in order.
    pub fn bash_steps(&self) -> Vec<u32> {
        self.decisions()
            .iter()
            .filter_map(|d| match d.made {
                Move::Bash(n) => Some(n),
                _ => None,
            })
            .collect()
    }

    /// A host with no plan tool (Codex): one shell call per step.
    fn decide_plainly(&self, seen: &Seen) -> Decision {
        let s = &self.settings;
        let done = seen.done();
        let prompt_tokens = s.base_tokens + s.per_step_tokens * seen.bash_results();
        let first_of_context = seen.results.is_empty();
        let made = if seen.refused_by_baton() {
            Move::Finish(format!("Ending my turn: the call was refused; steps 1-{done} are done."))
        } else if seen.obeys(s.obeys) && seen.asked_to_end_turn() {
            Move::Finish(format!("Pausing as baton asked: steps 1-{done} are done."))
        } else if done >= s.steps {
            Move::Finish(format!("All {} steps done.", s.steps))
        } else {
            Move::Bash(done + 1)
        };
        Decision { done, first_of_context, prompt_tokens, made }
    }

    fn decide(&self, seen: &Seen) -> Decision {
        let s = &self.settings;
        let done = seen.done();
        let prompt_tokens = s.base_tokens + s.per_step_tokens * seen.bash_results();
        let first_of_context = seen.results.is_empty();
        let tasks = seen.task_ids();
        let completed = seen.completed_task_ids();
        let made = if seen.refused_by_baton() {
            Move::Finish(format!("Ending my turn: the call was refused; steps 1-{done} are done."))
        } else if seen.obeys(s.obeys) && seen.asked_to_end_turn() {
            Move::Finish(format!("Pausing as baton asked: steps 1-{done} are done."))
        } else if !seen.tools.iter().any(|t| t == "TaskCreate")
            && !seen.calls.iter().any(|c| c.name == "ToolSearch")
        {
            Move::ToolSearch
        } else if !seen.calls.iter().any(|c| c.name == "TaskCreate") && done < s.steps {
            Move::CreateTasks((done + 1..=s.steps).collect())
        } else {
            let open = tasks.iter().find(|(step, id)| *step == done && !completed.contains(id));
            match open {
                Some(_) => Move::Update(done),
                None if done >= s.steps => Move::Finish(format!("All {} steps done.", s.steps)),
                None => Move::Bash(done + 1),
            }
        };
        Decision { done, first_of_context, prompt_tokens, made }
    }

    /// The reply to a main request, or `None` for an API the agent does not speak.
    pub fn reply(&self, api: Api, body: &Value) -> Option<(&'static str, &'static str, Vec<u8>)> {
        if api == Api::OpenAi {
            return Some(self.reply_openai(body));
        }
        if api == Api::Gemini {
            return Some(self.reply_gemini(body));
        }
        if api == Api::Chat {
            return Some(self.reply_chat(body));
        }
        if api != Api::Anthropic {
            return None;
        }
        let seen = read_anthropic(body);
        let decision = self.decide(&seen);
        let tasks = seen.task_ids();
        let model = body["model"].as_str().unwrap_or("claude").to_string();
        let stream = body["stream"].as_bool().unwrap_or(false);
        let n = self.log.lock().map(|l| l.len()).unwrap_or(0);
        let id = |k: usize| format!("toolu_agent_{n:03}_{k:02}");
        let say = format!("Steps done so far: {}.", decision.done);
        let mut content = vec![json!({"type": "text", "text": say})];
        let tool = |k: usize, name: &str, input: Value| json!({"type": "tool_use", "id": id(k), "name": name, "input": input});
        match &decision.made {
            Move::ToolSearch => content.push(tool(
                0,
                "ToolSearch",
                json!({"query": "select:TaskCreate,TaskUpdate", "max_results": 5}),
            )),
            Move::CreateTasks(steps) => {
                for (k, step) in steps.iter().enumerate() {
                    content.push(tool(
                        k,
                        "TaskCreate",
                        json!({"subject": format!("Step {step:02} of {}", self.settings.steps),
                               "description": format!("Run step {step:02}: append step-{step:02} to steps.log"),
                               "activeForm": format!("Running step {step:02}")}),
                    ));
                }
            }
            Move::Bash(step) => content.push(tool(
                0,
                "Bash",
                json!({"command": step_command(*step), "description": format!("Run step {step:02}")}),
            )),
            Move::Update(step) => {
                let task =
                    tasks.iter().find(|(s, _)| s == step).map(|(_, id)| id.clone()).unwrap_or_default();
                content.push(tool(0, "TaskUpdate", json!({"taskId": task, "status": "completed"})));
            }
            Move::Finish(text) => content = vec![json!({"type": "text", "text": text})],
        }
        let stop = if matches!(decision.made, Move::Finish(_)) { "end_turn" } else { "tool_use" };
        let tokens = decision.prompt_tokens;
        if let Ok(mut log) = self.log.lock() {
            log.push(decision);
        }
        let msg_id = format!("msg_agent_{n:03}_{}", std::process::id());
        let usage = json!({"input_tokens": tokens, "output_tokens": 40,
                           "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
        if !stream {
            let message = json!({"id": msg_id, "type": "message", "role": "assistant", "model": model,
                                 "content": content, "stop_reason": stop, "stop_sequence": null, "usage": usage});
            return Some(("200 OK", "application/json", message.to_string().into_bytes()));
        }
        Some((
            "200 OK",
            "text/event-stream",
            stream_anthropic(&msg_id, &model, &content, stop, &usage).into_bytes(),
        ))
    }
}

impl Agent {
    fn reply_openai(&self, body: &Value) -> (&'static str, &'static str, Vec<u8>) {
        let seen = read_openai(body);
        let decision = self.decide_plainly(&seen);
        let n = self.log.lock().map(|l| l.len()).unwrap_or(0);
        let tokens = decision.prompt_tokens;
        let mut items = vec![];
        let message = |text: &str| {
            json!({"type": "message", "id": format!("msg_agent_{n:03}"), "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": text, "annotations": []}]})
        };
        match &decision.made {
            Move::Bash(step) => {
                // The plan update: the agent states its progress, then runs the step.
                items.push(message(&format!(
                    "Plan: steps 1-{} of {} done; now step {step:02}.",
                    decision.done, self.settings.steps
                )));
                let (name, arguments) = shell_call(body, &step_command(*step));
                items.push(json!({"type": "function_call", "id": format!("fc_agent_{n:03}"),
                                  "call_id": format!("call_agent_{n:03}"), "name": name,
                                  "arguments": arguments, "status": "completed"}));
            }
            Move::Finish(text) => items.push(message(text)),
            _ => items.push(message("…")),
        }
        if let Ok(mut log) = self.log.lock() {
            log.push(decision);
        }
        let id = format!("resp_agent_{n:03}");
        let out = stream_responses(&id, &items, tokens, 40);
        ("200 OK", "text/event-stream", out.into_bytes())
    }
}

fn read_gemini(body: &Value) -> Seen {
    let mut seen = Seen { calls: vec![], results: vec![], user_text: String::new(), tools: vec![] };
    let mut n = 0;
    for content in body["contents"].as_array().into_iter().flatten() {
        for part in content["parts"].as_array().into_iter().flatten() {
            if let Some(call) = part.get("functionCall") {
                n += 1;
                seen.calls.push(Call {
                    id: format!("g{n}"),
                    name: "Bash".into(),
                    input: call["args"].clone(),
                });
            } else if let Some(response) = part.get("functionResponse") {
                let id = format!("g{}", seen.results.len() + 1);
                seen.results.push((id, response["response"].to_string()));
            } else if let Some(text) = part["text"].as_str().filter(|_| content["role"] != "model") {
                seen.user_text.push_str(text);
                seen.user_text.push('\n');
            }
        }
    }
    seen
}

impl Agent {
    /// Gemini CLI: one `run_shell_command` per step, progress said in the same reply.
    fn reply_gemini(&self, body: &Value) -> (&'static str, &'static str, Vec<u8>) {
        let seen = read_gemini(body);
        let decision = self.decide_plainly(&seen);
        let tokens = decision.prompt_tokens;
        let parts = match &decision.made {
            Move::Bash(step) => vec![
                json!({"text": format!("Plan: steps 1-{} of {} done; now step {step:02}.", decision.done, self.settings.steps)}),
                json!({"functionCall": {"name": "run_shell_command",
                                         "args": {"command": step_command(*step), "description": format!("Run step {step:02}")}}}),
            ],
            Move::Finish(text) => vec![json!({"text": text})],
            _ => vec![json!({"text": "…"})],
        };
        if let Ok(mut log) = self.log.lock() {
            log.push(decision);
        }
        let chunk = json!({
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": tokens, "candidatesTokenCount": 40, "totalTokenCount": tokens + 40},
            "modelVersion": "gemini-2.5-flash"
        });
        ("200 OK", "text/event-stream", format!("data: {chunk}\r\n\r\n").into_bytes())
    }
}

/// The shell tool the request lists, and its arguments for `command`.
fn shell_call(request: &Value, command: &str) -> (String, String) {
    let named = |name: &str| request["tools"].as_array().into_iter().flatten().any(|t| t["name"] == name);
    if named("shell_command") {
        return ("shell_command".into(), json!({"command": command}).to_string());
    }
    if named("exec_command") {
        return ("exec_command".into(), json!({"cmd": command}).to_string());
    }
    ("shell".into(), json!({"command": ["bash", "-lc", command]}).to_string())
}

// ---- OpenAI chat-completions (Qwen Code, OpenCode, Kilo CLI, Factory Droid, Copilot CLI) ----

/// What the agent reads from a chat-completions request: the assistant's `tool_calls`,
/// the `tool` messages answering them, and the text of every system and user message.
fn read_chat(body: &Value) -> Seen {
    let mut seen = Seen { calls: vec![], results: vec![], user_text: String::new(), tools: vec![] };
    seen.tools = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect();
    for message in body["messages"].as_array().into_iter().flatten() {
        match message["role"].as_str() {
            Some("assistant") => {
                for call in message["tool_calls"].as_array().into_iter().flatten() {
                    seen.calls.push(Call {
                        id: call["id"].as_str().unwrap_or_default().to_string(),
                        name: "Bash".to_string(),
                        input: call["function"]["arguments"].clone(),
                    });
                }
            }
            Some("tool") => seen.results.push((
                message["tool_call_id"].as_str().unwrap_or_default().to_string(),
                block_text(&message["content"]),
            )),
            _ => {
                seen.user_text.push_str(&block_text(&message["content"]));
                seen.user_text.push('\n');
            }
        }
    }
    seen
}

/// The shell tool a chat-completions request lists, and its arguments for `command`.
fn chat_shell_call(request: &Value, command: &str, description: &str) -> (String, String) {
    let names: Vec<&str> = request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    let shell = ["run_shell_command", "bash", "Execute", "shell"]
        .into_iter()
        .find(|name| names.contains(name))
        .unwrap_or("bash");
    let args = match shell {
        "Execute" => json!({"command": command, "summary": description, "riskLevel": "low",
                            "riskLevelReason": "appends one line to a log file"}),
        _ => json!({"command": command, "description": description}),
    };
    (shell.to_string(), args.to_string())
}

impl Agent {
    /// A chat-completions host: one call of the shell tool the request lists per step,
    /// progress said in the same reply; streamed as the hosts ask (`stream: true`), with a
    /// last chunk carrying `usage`, or as one JSON answer.
    fn reply_chat(&self, body: &Value) -> (&'static str, &'static str, Vec<u8>) {
        let seen = read_chat(body);
        let decision = self.decide_plainly(&seen);
        let n = self.log.lock().map(|l| l.len()).unwrap_or(0);
        let tokens = decision.prompt_tokens;
        let model = body["model"].as_str().unwrap_or("stand-in").to_string();
        let (text, call) = match &decision.made {
            Move::Bash(step) => (
                format!(
                    "Plan: steps 1-{} of {} done; now step {step:02}.",
                    decision.done, self.settings.steps
                ),
                Some(chat_shell_call(body, &step_command(*step), &format!("Run step {step:02}"))),
            ),
            Move::Finish(text) => (text.clone(), None),
            _ => ("…".to_string(), None),
        };
        if let Ok(mut log) = self.log.lock() {
            log.push(decision);
        }
        let id = format!("chatcmpl-agent-{n:03}");
        let call_id = format!("call_agent_{n:03}");
        let finish = if call.is_some() { "tool_calls" } else { "stop" };
        let usage = json!({"prompt_tokens": tokens, "completion_tokens": 40, "total_tokens": tokens + 40});
        if body["stream"].as_bool() != Some(true) {
            let mut message = json!({"role": "assistant", "content": text});
            if let Some((name, arguments)) = &call {
                message["tool_calls"] = json!([{"id": call_id, "type": "function",
                                                 "function": {"name": name, "arguments": arguments}}]);
            }
            let reply = json!({"id": id, "object": "chat.completion", "created": 1_764_576_000, "model": model,
                               "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                               "usage": usage});
            return ("200 OK", "application/json", reply.to_string().into_bytes());
        }
        let chunk = |choices: Value, usage: Option<&Value>| {
            let mut value = json!({"id": id, "object": "chat.completion.chunk", "created": 1_764_576_000,
                                   "model": model, "choices": choices});
            if let Some(usage) = usage {
                value["usage"] = usage.clone();
            }
            format!("data: {value}\n\n")
        };
        let delta =
            |delta: Value, finish: Value| json!([{"index": 0, "delta": delta, "finish_reason": finish}]);
        let mut out = chunk(delta(json!({"role": "assistant", "content": ""}), Value::Null), None);
        out += &chunk(delta(json!({"content": text}), Value::Null), None);
        if let Some((name, arguments)) = &call {
            out += &chunk(
                delta(
                    json!({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                            "function": {"name": name, "arguments": arguments}}]}),
                    Value::Null,
                ),
                None,
            );
        }
        out += &chunk(delta(json!({}), json!(finish)), None);
        out += &chunk(json!([]), Some(&usage));
        out += "data: [DONE]\n\n";
        ("200 OK", "text/event-stream", out.into_bytes())
    }
}
