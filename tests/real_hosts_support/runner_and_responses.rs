//! Support for the `real_hosts::contexts_edge_cases` scenarios: a host run in any folder of the world
//! under a log name of its own (so two can run at once), and the OpenAI Responses
//! rendering of a [`Reply`] (Codex against [`super::scripted::Scripted`]: a `Bash` call
//! becomes the shell tool the request lists).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::scripted::Reply;
use super::{Run, World};

/// Runs `program args` in `cwd` with the world's environment plus `extra`, bounded by
/// `limit`; its output goes to `logs/<name>-stdout|stderr`.
pub fn run_in(
    world: &World,
    cwd: &Path,
    name: &str,
    program: &Path,
    args: &[&str],
    extra: &[(&str, String)],
    limit: Duration,
) -> Run {
    Runner::of(world).run(cwd, name, program, args, extra, limit)
}

/// What a run needs of the world, apart from it (a [`World`] cannot be shared with a
/// thread: two hosts at once each get a runner).
#[derive(Clone)]
pub struct Runner {
    env: Vec<(String, String)>,
    logs: PathBuf,
}

impl Runner {
    pub fn of(world: &World) -> Runner {
        Runner { env: world.env(), logs: world.root().join("logs") }
    }

    pub fn run(
        &self,
        cwd: &Path,
        name: &str,
        program: &Path,
        args: &[&str],
        extra: &[(&str, String)],
        limit: Duration,
    ) -> Run {
        std::fs::create_dir_all(&self.logs).expect("logs");
        let out_path = self.logs.join(format!("{name}-stdout"));
        let err_path = self.logs.join(format!("{name}-stderr"));
        let mut command = Command::new(program);
        command.args(args).env_clear().current_dir(cwd);
        command.envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        command.envs(extra.iter().map(|(k, v)| (*k, v.as_str())));
        command
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_path).expect("stdout file"))
            .stderr(std::fs::File::create(&err_path).expect("stderr file"));
        let started = Instant::now();
        let mut child = super::own_group(&mut command)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", program.display()));
        let status = super::wait_bounded(&mut child, limit);
        let read = |path: &Path| {
            let mut text = String::new();
            let _ = std::fs::File::open(path).and_then(|mut f| f.read_to_string(&mut text));
            text
        };
        Run {
            status,
            stdout: read(&out_path),
            stderr: read(&err_path),
            seconds: started.elapsed().as_secs_f64(),
        }
    }
}

/// How many tool outputs a Responses request's input holds.
pub fn function_outputs(body: &Value) -> usize {
    body["input"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|i| {
                    matches!(i["type"].as_str(), Some("function_call_output" | "custom_tool_call_output"))
                })
                .count()
        })
        .unwrap_or(0)
}

/// The texts of a Responses request's input messages of `role` (`user`, `developer`), in order.
pub fn input_texts(body: &Value, role: &str) -> Vec<String> {
    body["input"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter(|i| i["type"] == "message" && i["role"] == role)
                .map(|i| {
                    i["content"]
                        .as_array()
                        .map(|c| c.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"))
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The shell tool a Responses request lists, and its arguments for `command`.
fn shell_call(request: &Value, command: &str) -> (String, String) {
    let named =
        |name: &str| request["tools"].as_array().is_some_and(|tools| tools.iter().any(|t| t["name"] == name));
    if named("exec_command") {
        return ("exec_command".into(), json!({"cmd": command}).to_string());
    }
    if named("shell_command") {
        return ("shell_command".into(), json!({"command": command}).to_string());
    }
    ("shell".into(), json!({"command": ["bash", "-lc", command]}).to_string())
}

/// `reply` as a Responses API event stream: its text blocks as messages, its `Bash`
/// calls as calls of the request's shell tool, its tokens as the usage.
pub fn responses_sse(request: &Value, reply: &Reply) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let sse = |event: &str, data: Value| format!("event: {event}\ndata: {data}\n\n");
    let id = format!("resp_scripted_{n}");
    let items: Vec<Value> = reply
        .blocks
        .iter()
        .enumerate()
        .map(|(i, block)| {
            if block["type"] == "tool_use" {
                let command = block["input"]["command"].as_str().unwrap_or("true");
                let (name, arguments) = shell_call(request, command);
                json!({"type": "function_call", "id": format!("fc_{n}_{i}"), "call_id": format!("call_scripted_{n}_{i}"),
                       "name": name, "arguments": arguments, "status": "completed"})
            } else {
                json!({"type": "message", "id": format!("msg_{n}_{i}"), "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": block["text"], "annotations": []}]})
            }
        })
        .collect();
    let mut out = sse(
        "response.created",
        json!({"type": "response.created", "response": {"id": id, "object": "response", "status": "in_progress"}}),
    );
    for (index, item) in items.iter().enumerate() {
        out += &sse(
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": index, "item": item}),
        );
        out += &sse(
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
    }
    let tokens = reply.input_tokens;
    out += &sse(
        "response.completed",
        json!({"type": "response.completed", "response": {
            "id": id, "object": "response", "status": "completed", "output": items,
            "usage": {"input_tokens": tokens, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": tokens + 20}}}),
    );
    out
}
