//! A second stand-in for the Anthropic Messages API, for scenarios a turn-indexed script
//! cannot express: the reply to each request comes from a closure over the request body
//! (so a scenario can answer a subagent's requests apart from its parent's, call several
//! tools in one reply, or write the summary when Claude Code asks for one). Same
//! recording and the same bounds as [`super::server`] (whose HTTP reading it uses): an
//! ephemeral port on 127.0.0.1, socket timeouts, a request cap and a lifetime.

use std::io::{BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::server::{Api, REPLY_DELAY, Recorded, read_request};

const MAX_REQUESTS: usize = 300;
const IO_TIMEOUT: Duration = Duration::from_secs(15);

/// What the model answers: the prompt size it reports, and its content blocks.
#[derive(Clone, Debug)]
pub struct Reply {
    pub input_tokens: u64,
    pub blocks: Vec<Value>,
}

impl Reply {
    pub fn text(input_tokens: u64, text: &str) -> Reply {
        Reply { input_tokens, blocks: vec![json!({"type": "text", "text": text})] }
    }

    /// Tool calls, in one reply (a parallel batch when there are several).
    pub fn tools(input_tokens: u64, calls: &[(&str, Value)]) -> Reply {
        let stamp = std::process::id();
        let blocks = calls
            .iter()
            .enumerate()
            .map(|(i, (name, input))| {
                let id = format!("toolu_scripted_{stamp}_{}_{i}", unique());
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            })
            .collect();
        Reply { input_tokens, blocks }
    }

    /// One Bash call.
    pub fn bash(input_tokens: u64, command: &str) -> Reply {
        Reply::tools(input_tokens, &[("Bash", json!({"command": command, "description": "scripted step"}))])
    }
}

fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::SeqCst)
}

type Responder = dyn Fn(&Value) -> Reply + Send + Sync;

pub struct Scripted {
    pub port: u16,
    stop: Arc<AtomicBool>,
    recorded: Arc<Mutex<(Instant, Vec<Recorded>)>>,
    thread: Option<JoinHandle<()>>,
}

impl Scripted {
    /// Starts a server answering every conversation request (one that lists tools) with
    /// `respond(body)`; side requests get a short text. Stops by itself after `lifetime`.
    pub fn start(lifetime: Duration, respond: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Scripted {
        Scripted::start_paced(lifetime, REPLY_DELAY, respond)
    }

    /// The same, answering conversation requests after `delay` (`Duration::ZERO`: at once,
    /// for the one scenario where a reply as fast as the host's transcript flush is the point).
    pub fn start_paced(
        lifetime: Duration,
        delay: Duration,
        respond: impl Fn(&Value) -> Reply + Send + Sync + 'static,
    ) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).expect("nonblocking listener");
        let port = listener.local_addr().expect("local addr").port();
        let stop = Arc::new(AtomicBool::new(false));
        let recorded = Arc::new(Mutex::new((Instant::now(), vec![])));
        let respond: Arc<Responder> = Arc::new(respond);
        let thread = {
            let stop = Arc::clone(&stop);
            let recorded = Arc::clone(&recorded);
            std::thread::spawn(move || accept_loop(listener, stop, recorded, respond, lifetime, delay))
        };
        Scripted { port, stop, recorded, thread: Some(thread) }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn recorded(&self) -> Vec<Recorded> {
        self.recorded.lock().map(|r| r.1.clone()).unwrap_or_default()
    }

    /// The conversation requests (they list tools), in arrival order.
    pub fn main_requests(&self) -> Vec<Recorded> {
        self.recorded().into_iter().filter(|r| r.main).collect()
    }

    pub fn summary(&self) -> String {
        self.recorded()
            .iter()
            .map(|r| {
                format!(
                    "{:>6} ms {} main={} results={} bytes={} last user: {}",
                    r.millis,
                    r.path,
                    r.main,
                    r.turn,
                    r.text().len(),
                    last_user_text(&r.body).chars().take(160).collect::<String>().replace('\n', " ")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Writes the requests to `<dir>/<name>-requests.jsonl` (kept with the world).
    pub fn save(&self, dir: &std::path::Path, name: &str) {
        let _ = std::fs::create_dir_all(dir);
        let lines: Vec<String> = self
            .recorded()
            .iter()
            .map(|r| {
                json!({"path": r.path, "main": r.main, "results": r.turn, "millis": r.millis, "body": r.body})
                    .to_string()
            })
            .collect();
        let _ = std::fs::write(dir.join(format!("{name}-requests.jsonl")), lines.join("\n"));
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The system prompt of a request, as text.
pub fn system_text(body: &Value) -> String {
    match &body["system"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// The text of the newest user message (text blocks and tool results' text).
pub fn last_user_text(body: &Value) -> String {
    let Some(message) =
        body["messages"].as_array().and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
    else {
        return String::new();
    };
    content_text(&message["content"])
}

/// The text of the first user message.
pub fn first_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .map(|m| content_text(&m["content"]))
        .unwrap_or_default()
}

fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().unwrap_or_default().to_string(),
                Some("tool_result") => content_text(&b["content"]),
                _ => String::new(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// How many tool results the conversation holds.
pub fn tool_results(body: &Value) -> usize {
    let empty = vec![];
    body["messages"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .count()
}

/// The names of the tools a request lists.
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["name"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

fn accept_loop(
    listener: TcpListener,
    stop: Arc<AtomicBool>,
    recorded: Arc<Mutex<(Instant, Vec<Recorded>)>>,
    respond: Arc<Responder>,
    lifetime: Duration,
    delay: Duration,
) {
    let started = Instant::now();
    let mut served = 0usize;
    let mut workers: Vec<JoinHandle<()>> = vec![];
    while !stop.load(Ordering::SeqCst) && started.elapsed() < lifetime && served < MAX_REQUESTS {
        match listener.accept() {
            Ok((stream, _)) => {
                served += 1;
                let recorded = Arc::clone(&recorded);
                let respond = Arc::clone(&respond);
                workers.push(std::thread::spawn(move || {
                    let _ = serve(stream, &recorded, &*respond, delay);
                }));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
        workers.retain(|w| !w.is_finished());
    }
    for worker in workers {
        let _ = worker.join();
    }
}

fn serve(
    stream: TcpStream,
    recorded: &Mutex<(Instant, Vec<Recorded>)>,
    respond: &Responder,
    delay: Duration,
) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    for _ in 0..64 {
        let Some((method, target, _headers, body)) = read_request(&mut reader)? else {
            return Ok(());
        };
        let path = target.split('?').next().unwrap_or_default().to_string();
        let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let messages = path.ends_with("/messages");
        // Codex's Responses API, answered from the same replies ([`super::runner_and_responses`]).
        let responses = path.ends_with("/responses");
        let main = method == "POST"
            && (messages || responses)
            && parsed["tools"].as_array().is_some_and(|t| !t.is_empty());
        if let Ok(mut r) = recorded.lock() {
            let millis = r.0.elapsed().as_millis();
            let turn = if responses {
                super::runner_and_responses::function_outputs(&parsed)
            } else {
                tool_results(&parsed)
            };
            r.1.push(Recorded {
                api: Some(if responses { Api::OpenAi } else { Api::Anthropic }),
                path: path.clone(),
                body: parsed.clone(),
                main,
                turn,
                millis,
                refused: false,
            });
        }
        let (content_type, payload) = if responses {
            let reply = if main {
                std::thread::sleep(delay);
                respond(&parsed)
            } else {
                Reply::text(1000, "Stand-in summary.")
            };
            ("text/event-stream", super::runner_and_responses::responses_sse(&parsed, &reply))
        } else if path.ends_with("/count_tokens") {
            ("application/json", json!({"input_tokens": 1000}).to_string())
        } else if messages {
            let reply = if main {
                std::thread::sleep(delay);
                respond(&parsed)
            } else {
                Reply::text(1000, "Stand-in.")
            };
            let model = parsed["model"].as_str().unwrap_or("claude").to_string();
            if parsed["stream"].as_bool().unwrap_or(false) {
                ("text/event-stream", sse_message(&model, &reply))
            } else {
                ("application/json", json_message(&model, &reply).to_string())
            }
        } else {
            ("application/json", json!({"data": []}).to_string())
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\ncache-control: no-cache\r\nconnection: keep-alive\r\n\r\n",
            payload.len()
        );
        writer.write_all(head.as_bytes())?;
        writer.write_all(payload.as_bytes())?;
        writer.flush()?;
    }
    Ok(())
}

fn stop_reason(reply: &Reply) -> &'static str {
    if reply.blocks.iter().any(|b| b["type"] == "tool_use") { "tool_use" } else { "end_turn" }
}

fn usage(reply: &Reply) -> Value {
    json!({"input_tokens": reply.input_tokens, "output_tokens": 20,
           "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
}

fn json_message(model: &str, reply: &Reply) -> Value {
    json!({"id": format!("msg_scripted_{}", unique()), "type": "message", "role": "assistant", "model": model,
           "content": reply.blocks, "stop_reason": stop_reason(reply), "stop_sequence": null, "usage": usage(reply)})
}

fn sse_message(model: &str, reply: &Reply) -> String {
    let sse = |event: &str, data: Value| format!("event: {event}\ndata: {data}\n\n");
    let mut out = sse(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": format!("msg_scripted_{}", unique()), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage(reply)}}),
    );
    for (index, block) in reply.blocks.iter().enumerate() {
        if block["type"] == "tool_use" {
            out += &sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": {
                    "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}),
            );
            out += &sse(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": block["input"].to_string()}}),
            );
        } else {
            out += &sse(
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
            );
            out += &sse(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "text_delta", "text": block["text"]}}),
            );
        }
        out += &sse("content_block_stop", json!({"type": "content_block_stop", "index": index}));
    }
    out += &sse(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason(reply), "stop_sequence": null},
               "usage": usage(reply)}),
    );
    out += &sse("message_stop", json!({"type": "message_stop"}));
    out
}
