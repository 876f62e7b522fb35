//! The stand-in model server: plain HTTP/1.1 on 127.0.0.1 (an ephemeral port), speaking
//! just enough of the Anthropic Messages API, the OpenAI Responses API, the Gemini API and
//! OpenAI chat-completions for Claude Code, Codex, Gemini CLI and the chat-completions
//! hosts (Qwen Code …) to run a scripted session against it.
//!
//! The script is indexed by how many tool results the request already carries, so the
//! reply to a request does not depend on retries or side requests: turn N answers with
//! step N (a shell command, or the final text), reporting step N's prompt tokens as usage.
//! Every request is recorded (path and body) so tests assert on what the model received.
//!
//! Bounded: the accept loop polls a stop flag, every connection has read/write timeouts,
//! the number of requests is capped, and the server stops by itself after its lifetime.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Which wire protocol a request used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    Anthropic,
    OpenAi,
    Gemini,
    /// OpenAI chat-completions (Qwen Code, Copilot CLI, Factory Droid, OpenCode).
    Chat,
}

/// One step of the script: what the model answers on turn N.
#[derive(Clone, Debug)]
pub struct Step {
    /// The prompt size the reply reports (the context figure the host records).
    pub prompt_tokens: u64,
    /// A shell command to call, or `None` for the final text.
    pub command: Option<String>,
    /// A tool other than the shell, by the host's own name, with its arguments: called
    /// instead of `command` (Gemini CLI's `write_todos`, `write_file`, Codex's `update_plan`).
    pub call: Option<(String, Value)>,
    /// Text the model says before its tool call (its statement of progress).
    pub say: Option<String>,
}

impl Step {
    pub fn tool(prompt_tokens: u64, command: &str) -> Step {
        Step { prompt_tokens, command: Some(command.to_string()), call: None, say: None }
    }

    pub fn text(prompt_tokens: u64) -> Step {
        Step { prompt_tokens, command: None, call: None, say: None }
    }

    /// A call of the tool `name` with `args` (a turn that is not the final text).
    pub fn call(prompt_tokens: u64, name: &str, args: Value) -> Step {
        Step { prompt_tokens, command: None, call: Some((name.to_string(), args)), say: None }
    }

    /// The same step, with `text` said before the call (or as the final text).
    pub fn saying(mut self, text: &str) -> Step {
        self.say = Some(text.to_string());
        self
    }

    fn is_final(&self) -> bool {
        self.command.is_none() && self.call.is_none()
    }
}

/// A request as the server received it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub api: Option<Api>,
    pub path: String,
    pub body: Value,
    /// Whether it is a turn of the agent's conversation (it lists tools), as opposed to
    /// a side request (titles, next-speaker checks, token counts).
    pub main: bool,
    /// The turn it answered (tool results already in the request), for main requests.
    pub turn: usize,
    /// When it arrived, in milliseconds since the server started.
    pub millis: u128,
    /// It was refused with a planned fault ([`Server::plan_fault`]).
    pub refused: bool,
}

/// A refusal the server plays, in each API's own shape (docs/HOSTS.md, "Faults").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The subscription's usage limit, with its reset at the end of the fault: Anthropic's
    /// 429 with the unified `rejected` headers and the five-hour claim; OpenAI's 429
    /// `usage_limit_reached` with `resets_at` and the `x-codex-primary-*` headers; Gemini's
    /// 429 daily quota (QuotaFailure per day, "Please retry in N s").
    UsageLimit,
    /// The server overloaded: Anthropic's 529, OpenAI's 500, Gemini's 503 UNAVAILABLE.
    Overloaded,
}

/// A planned fault: from the `at_main`-th main request (1 the first) on, every main
/// request is refused for `lasting` (for ever: `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultPlan {
    pub fault: Fault,
    pub at_main: usize,
    pub lasting: Option<Duration>,
}

/// A fault as it was played: from `start_ms` (since the server started) to `end_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultPlayed {
    pub fault: Fault,
    pub start_ms: u128,
    pub end_ms: Option<u128>,
    /// The reset stated to the host (Unix seconds, rounded up), for a usage limit.
    pub resets_at: i64,
}

impl Recorded {
    /// The whole body as text, for searching what the model was shown.
    pub fn text(&self) -> String {
        self.body.to_string()
    }
}

/// The final text every script ends with.
pub const FINAL_TEXT: &str = "All steps done.";

/// How long the model "thinks" before a turn's reply. Real models take seconds; an instant
/// reply would let a whole turn pass inside one of a host's write intervals (Claude Code
/// flushes its transcript every 100 ms), a timing no real session has.
pub const REPLY_DELAY: Duration = Duration::from_millis(300);

const MAX_REQUESTS: usize = 400;
const IO_TIMEOUT: Duration = Duration::from_secs(15);
const MAX_BODY: usize = 32 * 1024 * 1024;

pub struct Server {
    pub port: u16,
    stop: Arc<AtomicBool>,
    shared: Arc<Mutex<Shared>>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    started: Instant,
    steps: Vec<Step>,
    recorded: Vec<Recorded>,
    /// Answers the main requests in place of the script ([`Server::with_agent`]).
    agent: Option<Arc<super::agent::Agent>>,
    /// Extra response headers on every reply ([`Server::set_headers`]).
    headers: Vec<(String, String)>,
    /// Faults still to play, and those played ([`Server::plan_fault`]).
    plans: Vec<FaultPlan>,
    played: Vec<FaultPlayed>,
    main_seen: usize,
}

impl Server {
    /// Starts a server answering with `steps`; it stops by itself after `lifetime`.
    pub fn start(steps: Vec<Step>, lifetime: Duration) -> Server {
        Server::start_with(steps, None, lifetime)
    }

    /// Starts a server whose main requests `agent` answers (side requests as the script's).
    pub fn with_agent(agent: Arc<super::agent::Agent>, lifetime: Duration) -> Server {
        Server::start_with(vec![Step::text(1000)], Some(agent), lifetime)
    }

    fn start_with(steps: Vec<Step>, agent: Option<Arc<super::agent::Agent>>, lifetime: Duration) -> Server {
        assert!(!steps.is_empty(), "a script needs at least the final step");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).expect("nonblocking listener");
        let port = listener.local_addr().expect("local addr").port();
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Mutex::new(Shared {
            started: Instant::now(),
            steps,
            recorded: vec![],
            agent,
            headers: vec![],
            plans: vec![],
            played: vec![],
            main_seen: 0,
        }));
        let thread = {
            let stop = Arc::clone(&stop);
            let shared = Arc::clone(&shared);
            std::thread::spawn(move || accept_loop(listener, stop, shared, lifetime))
        };
        Server { port, stop, shared, thread: Some(thread) }
    }

    /// When the server started: a request's `millis` count from here.
    pub fn started(&self) -> Instant {
        self.shared.lock().map(|s| s.started).unwrap_or_else(|_| Instant::now())
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Sends `headers` with every reply from now on (the rate-limit headers of
    /// `rate_limits.rs`, for one).
    pub fn set_headers(&self, headers: Vec<(String, String)>) {
        if let Ok(mut shared) = self.shared.lock() {
            shared.headers = headers;
        }
    }

    /// Plays `plan` when its main request comes.
    pub fn plan_fault(&self, plan: FaultPlan) {
        if let Ok(mut shared) = self.shared.lock() {
            shared.plans.push(plan);
        }
    }

    /// The faults played so far.
    pub fn faults_played(&self) -> Vec<FaultPlayed> {
        self.shared.lock().map(|s| s.played.clone()).unwrap_or_default()
    }

    /// How many main requests have come so far, to watch from another thread.
    pub fn main_counter(&self) -> impl Fn() -> usize + Send + 'static {
        let shared = Arc::clone(&self.shared);
        move || shared.lock().map(|s| s.main_seen).unwrap_or(0)
    }

    /// Every request so far.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.shared.lock().map(|s| s.recorded.clone()).unwrap_or_default()
    }

    /// The agent's conversation turns, in the order they arrived.
    pub fn main_requests(&self) -> Vec<Recorded> {
        self.recorded().into_iter().filter(|r| r.main).collect()
    }

    /// A summary of the requests, for failure messages.
    pub fn summary(&self) -> String {
        self.recorded()
            .iter()
            .map(|r| {
                format!(
                    "{:>6} ms {} main={} turn={} bytes={}",
                    r.millis,
                    r.path,
                    r.main,
                    r.turn,
                    r.text().len()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: TcpListener, stop: Arc<AtomicBool>, shared: Arc<Mutex<Shared>>, lifetime: Duration) {
    let started = Instant::now();
    let mut served = 0usize;
    let mut workers: Vec<JoinHandle<()>> = vec![];
    while !stop.load(Ordering::SeqCst) && started.elapsed() < lifetime && served < MAX_REQUESTS {
        match listener.accept() {
            Ok((stream, _)) => {
                served += 1;
                let shared = Arc::clone(&shared);
                workers.push(std::thread::spawn(move || {
                    let _ = serve_connection(stream, &shared);
                }));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
        workers.retain(|w| !w.is_finished());
    }
    // Workers are bounded by their socket timeouts.
    for worker in workers {
        let _ = worker.join();
    }
}

/// Serves requests on one connection until the client closes it (keep-alive is honoured,
/// a bounded number of times).
fn serve_connection(stream: TcpStream, shared: &Mutex<Shared>) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    for _ in 0..64 {
        let Some((method, target, headers, body)) = read_request(&mut reader)? else {
            return Ok(());
        };
        let (status, content_type, payload, fault_headers) = match refuse(&method, &target, &body, shared) {
            Some((status, headers, payload)) => (status, "application/json", payload, headers),
            None => {
                let (status, content_type, payload) = respond(&method, &target, &headers, &body, shared);
                (status, content_type, payload, vec![])
            }
        };
        let extra: String = shared
            .lock()
            .map(|s| s.headers.iter().chain(&fault_headers).map(|(k, v)| format!("{k}: {v}\r\n")).collect())
            .unwrap_or_default();
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\ncache-control: no-cache\r\nconnection: keep-alive\r\n{extra}\r\n",
            payload.len()
        );
        writer.write_all(head.as_bytes())?;
        writer.write_all(&payload)?;
        writer.flush()?;
    }
    Ok(())
}

pub type Request = (String, String, Vec<(String, String)>, Vec<u8>);

pub fn read_request(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<Request>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let target = parts.next().unwrap_or_default().to_string();
    let mut headers = vec![];
    for _ in 0..200 {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 {
            return Ok(None);
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let mut body = vec![];
    if let Some(length) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        if length > MAX_BODY {
            return Ok(None);
        }
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    } else if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        for _ in 0..100_000 {
            let mut size_line = String::new();
            reader.read_line(&mut size_line)?;
            let size =
                usize::from_str_radix(size_line.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
            if size == 0 {
                let mut end = String::new();
                reader.read_line(&mut end)?;
                break;
            }
            if body.len() + size > MAX_BODY {
                return Ok(None);
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..])?;
            let mut crlf = [0u8; 2];
            reader.read_exact(&mut crlf)?;
        }
    }
    Ok(Some((method, target, headers, body)))
}

/// The API of a request path.
fn api_of(path: &str) -> Option<Api> {
    if path.ends_with("/messages") || path.ends_with("/messages/count_tokens") {
        Some(Api::Anthropic)
    } else if path.ends_with("/responses") {
        Some(Api::OpenAi)
    } else if path.ends_with("/chat/completions") {
        Some(Api::Chat)
    } else if path.contains("/models/") && path.contains(':') {
        Some(Api::Gemini)
    } else {
        None
    }
}

/// A refusal: its status line, headers and body.
type Refusal = (&'static str, Vec<(String, String)>, Vec<u8>);

/// The refusal of a main request while a planned fault plays (recorded as refused), or
/// `None`: the request is answered.
fn refuse(method: &str, target: &str, body: &[u8], shared: &Mutex<Shared>) -> Option<Refusal> {
    let path = target.split('?').next().unwrap_or_default().to_string();
    let api = api_of(&path)?;
    let parsed: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    if !(method == "POST" && is_main(Some(api), &path, &parsed)) {
        return None;
    }
    let mut shared = shared.lock().ok()?;
    let millis = shared.started.elapsed().as_millis();
    let coming = shared.main_seen + 1;
    // The fault playing now, else one planned for this request.
    let playing = shared.played.iter().rposition(|p| p.end_ms.is_none_or(|end| millis < end));
    let index = match playing {
        Some(index) => index,
        None => {
            let at = shared.plans.iter().position(|p| p.at_main <= coming)?;
            let plan = shared.plans.remove(at);
            let lasting = plan.lasting.map(|d| d.as_millis());
            let now_s = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            let resets_at = (now_s + lasting.unwrap_or(3_600_000) as f64 / 1000.0).ceil() as i64;
            shared.played.push(FaultPlayed {
                fault: plan.fault,
                start_ms: millis,
                end_ms: lasting.map(|l| millis + l),
                resets_at,
            });
            shared.played.len() - 1
        }
    };
    let played = shared.played[index];
    shared.main_seen += 1;
    let turn = tool_results(api, &parsed);
    shared.recorded.push(Recorded {
        api: Some(api),
        path,
        body: parsed,
        main: true,
        turn,
        millis,
        refused: true,
    });
    drop(shared);
    Some(fault_response(api, played))
}

/// A fault in `api`'s shape.
fn fault_response(api: Api, played: FaultPlayed) -> Refusal {
    let reset = played.resets_at;
    let now_s =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let left = (reset - now_s).max(1);
    let header = |k: &str, v: String| (k.to_string(), v);
    match (played.fault, api) {
        (Fault::UsageLimit, Api::Anthropic) => (
            "429 Too Many Requests",
            vec![
                header("anthropic-ratelimit-unified-status", "rejected".into()),
                header("anthropic-ratelimit-unified-reset", reset.to_string()),
                header("anthropic-ratelimit-unified-representative-claim", "five_hour".into()),
                header("anthropic-ratelimit-unified-5h-status", "rejected".into()),
                header("anthropic-ratelimit-unified-5h-utilization", "1.0".into()),
                header("anthropic-ratelimit-unified-5h-reset", reset.to_string()),
                header("anthropic-ratelimit-unified-7d-status", "allowed".into()),
                header("anthropic-ratelimit-unified-7d-utilization", "0.3".into()),
                header("anthropic-ratelimit-unified-7d-reset", (reset + 4 * 86_400).to_string()),
            ],
            json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limit reached"}})
                .to_string()
                .into_bytes(),
        ),
        (Fault::Overloaded, Api::Anthropic) => (
            "529 Overloaded",
            vec![],
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
                .to_string()
                .into_bytes(),
        ),
        (Fault::UsageLimit, Api::OpenAi | Api::Chat) => (
            "429 Too Many Requests",
            vec![
                header("x-codex-primary-used-percent", "100".into()),
                header("x-codex-primary-window-minutes", "300".into()),
                header("x-codex-primary-reset-at", reset.to_string()),
                header("x-codex-primary-reset-after-seconds", left.to_string()),
                header("x-codex-secondary-used-percent", "30".into()),
                header("x-codex-secondary-window-minutes", "10080".into()),
                header("x-codex-secondary-reset-at", (reset + 4 * 86_400).to_string()),
                header("x-codex-secondary-reset-after-seconds", (left + 4 * 86_400).to_string()),
            ],
            json!({"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached",
                             "plan_type": "plus", "resets_at": reset, "resets_in_seconds": left}})
            .to_string()
            .into_bytes(),
        ),
        (Fault::Overloaded, Api::OpenAi | Api::Chat) => (
            "500 Internal Server Error",
            vec![],
            json!({"error": {"type": "server_error", "message": "The server had an error while processing your request."}})
                .to_string()
                .into_bytes(),
        ),
        (Fault::UsageLimit, Api::Gemini) => (
            "429 Too Many Requests",
            vec![],
            json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                "message": format!("You exceeded your current quota, please check your plan and billing details. Please retry in {left}.0s."),
                "details": [
                    {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                        "quotaDimensions": {"location": "global", "model": "gemini-2.5-flash"}, "quotaValue": "250"}]},
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": format!("{left}s")}
                ]}})
            .to_string()
            .into_bytes(),
        ),
        (Fault::Overloaded, Api::Gemini) => (
            "503 Service Unavailable",
            vec![],
            json!({"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}})
                .to_string()
                .into_bytes(),
        ),
    }
}

fn respond(
    method: &str,
    target: &str,
    headers: &[(String, String)],
    body: &[u8],
    shared: &Mutex<Shared>,
) -> (&'static str, &'static str, Vec<u8>) {
    let path = target.split('?').next().unwrap_or_default().to_string();
    let encoding = headers.iter().find(|(n, _)| n == "content-encoding").map(|(_, v)| v.as_str());
    let parsed: Value = if encoding.is_some_and(|e| e != "identity") {
        json!({"unreadable_encoding": encoding})
    } else {
        serde_json::from_slice(body).unwrap_or(Value::Null)
    };
    let api = api_of(&path);
    let main = method == "POST" && is_main(api, &path, &parsed);
    let turn = api.map(|a| tool_results(a, &parsed)).unwrap_or(0);
    let (step, agent) = {
        let Ok(mut shared) = shared.lock() else {
            return ("500 Internal Server Error", "text/plain", b"poisoned".to_vec());
        };
        let millis = shared.started.elapsed().as_millis();
        if main {
            shared.main_seen += 1;
        }
        shared.recorded.push(Recorded {
            api,
            path: path.clone(),
            body: parsed.clone(),
            main,
            turn,
            millis,
            refused: false,
        });
        let index = turn.min(shared.steps.len() - 1);
        (shared.steps[index].clone(), shared.agent.clone())
    };
    if let (true, Some(agent), Some(api)) = (main, agent, api) {
        std::thread::sleep(REPLY_DELAY);
        if let Some(reply) = agent.reply(api, &parsed) {
            return reply;
        }
    }
    let step = if main {
        std::thread::sleep(REPLY_DELAY);
        step
    } else {
        Step::text(1000)
    };
    match api {
        Some(Api::Anthropic) if path.ends_with("/count_tokens") => (
            "200 OK",
            "application/json",
            json!({"input_tokens": step.prompt_tokens}).to_string().into_bytes(),
        ),
        Some(Api::Anthropic) => {
            let stream = parsed["stream"].as_bool().unwrap_or(false);
            let model = parsed["model"].as_str().unwrap_or("claude").to_string();
            if stream {
                ("200 OK", "text/event-stream", anthropic_sse(&model, &step, turn).into_bytes())
            } else {
                ("200 OK", "application/json", anthropic_json(&model, &step, turn).to_string().into_bytes())
            }
        }
        Some(Api::OpenAi) => ("200 OK", "text/event-stream", openai_sse(&parsed, &step, turn).into_bytes()),
        Some(Api::Chat) if parsed["stream"].as_bool() == Some(true) => {
            ("200 OK", "text/event-stream", chat_sse(&parsed, &step, turn, main).into_bytes())
        }
        // Side requests that want one JSON answer (a next-speaker check and the like).
        Some(Api::Chat) => (
            "200 OK",
            "application/json",
            json!({"id": "chatcmpl-stand-in", "object": "chat.completion", "created": 1_764_576_000,
                   "model": parsed["model"],
                   "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
                       "content": "{\"reasoning\": \"The model finished.\", \"next_speaker\": \"user\"}"}}],
                   "usage": {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020}})
            .to_string()
            .into_bytes(),
        ),
        Some(Api::Gemini) if path.ends_with(":countTokens") => {
            ("200 OK", "application/json", json!({"totalTokens": 1000}).to_string().into_bytes())
        }
        Some(Api::Gemini) if path.ends_with(":streamGenerateContent") => {
            let chunk = gemini_response(&step, turn, main);
            ("200 OK", "text/event-stream", format!("data: {chunk}\r\n\r\n").into_bytes())
        }
        Some(Api::Gemini) => {
            ("200 OK", "application/json", gemini_response(&step, turn, main).to_string().into_bytes())
        }
        None if method == "GET" && path.ends_with("/models") => {
            ("200 OK", "application/json", json!({"data": [], "models": []}).to_string().into_bytes())
        }
        None => (
            "404 Not Found",
            "application/json",
            json!({"error": {"message": "not scripted"}}).to_string().into_bytes(),
        ),
    }
}

/// A turn of the agent's conversation lists tools; side requests do not.
fn is_main(api: Option<Api>, path: &str, body: &Value) -> bool {
    let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    match api {
        Some(Api::Anthropic) => has_tools && !path.ends_with("/count_tokens"),
        Some(Api::OpenAi) | Some(Api::Chat) => has_tools,
        Some(Api::Gemini) => has_tools && path.ends_with(":streamGenerateContent"),
        None => false,
    }
}

/// How many tool results the conversation in `body` already holds.
fn tool_results(api: Api, body: &Value) -> usize {
    let empty = vec![];
    match api {
        Api::Anthropic => body["messages"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .filter(|block| block["type"] == "tool_result")
            .count(),
        Api::OpenAi => body["input"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter(|item| {
                matches!(item["type"].as_str(), Some("function_call_output" | "custom_tool_call_output"))
            })
            .count(),
        Api::Chat => {
            body["messages"].as_array().unwrap_or(&empty).iter().filter(|m| m["role"] == "tool").count()
        }
        Api::Gemini => body["contents"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter_map(|c| c["parts"].as_array())
            .flatten()
            .filter(|part| part.get("functionResponse").is_some())
            .count(),
    }
}

pub fn sse(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

fn anthropic_content(step: &Step, turn: usize) -> Value {
    match &step.command {
        Some(command) => json!([{
            "type": "tool_use",
            "id": format!("toolu_stand_in_{turn:02}"),
            "name": "Bash",
            "input": {"command": command, "description": format!("Run step {turn}")}
        }]),
        None => json!([{"type": "text", "text": FINAL_TEXT}]),
    }
}

fn anthropic_json(model: &str, step: &Step, turn: usize) -> Value {
    let stop = if step.command.is_some() { "tool_use" } else { "end_turn" };
    json!({
        "id": format!("msg_stand_in_{turn:02}"), "type": "message", "role": "assistant", "model": model,
        "content": anthropic_content(step, turn), "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": step.prompt_tokens, "output_tokens": 20,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    })
}

fn anthropic_sse(model: &str, step: &Step, turn: usize) -> String {
    let id = format!("msg_stand_in_{turn:02}_{}", std::process::id());
    let stop = if step.command.is_some() { "tool_use" } else { "end_turn" };
    let content = anthropic_content(step, turn);
    let usage = json!({"input_tokens": step.prompt_tokens, "output_tokens": 20,
                       "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    stream_anthropic(&id, model, content.as_array().map_or(&[][..], Vec::as_slice), stop, &usage)
}

/// A streamed Anthropic reply of `content` blocks (text and tool_use).
pub fn stream_anthropic(id: &str, model: &str, content: &[Value], stop: &str, usage: &Value) -> String {
    let mut start_usage = usage.clone();
    start_usage["output_tokens"] = json!(1);
    let mut out = sse(
        "message_start",
        &json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant",
                "model": model, "content": [], "stop_reason": null, "stop_sequence": null, "usage": start_usage}}),
    );
    for (index, block) in content.iter().enumerate() {
        if block["type"] == "tool_use" {
            out += &sse(
                "content_block_start",
                &json!({"type": "content_block_start", "index": index, "content_block": {
                    "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}),
            );
            out += &sse(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": block["input"].to_string()}}),
            );
        } else {
            out += &sse(
                "content_block_start",
                &json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
            );
            out += &sse(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": block["text"]}}),
            );
        }
        out += &sse("content_block_stop", &json!({"type": "content_block_stop", "index": index}));
    }
    out += &sse(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": usage}),
    );
    out += &sse("message_stop", &json!({"type": "message_stop"}));
    out
}

/// The function call for `command`, shaped for the shell tool the request lists.
fn openai_tool_call(request: &Value, command: &str) -> (String, String) {
    let empty = vec![];
    let tools = request["tools"].as_array().unwrap_or(&empty);
    let named = |name: &str| tools.iter().find(|t| t["name"] == name);
    if named("shell_command").is_some() {
        return ("shell_command".into(), json!({"command": command}).to_string());
    }
    if named("exec_command").is_some() {
        return ("exec_command".into(), json!({"cmd": command}).to_string());
    }
    ("shell".into(), json!({"command": ["bash", "-lc", command]}).to_string())
}

fn openai_sse(request: &Value, step: &Step, turn: usize) -> String {
    let id = format!("resp_stand_in_{turn:02}");
    let message = |text: &str| {
        json!({"type": "message", "id": format!("msg_{turn:02}"), "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": text, "annotations": []}]})
    };
    let call = match (&step.call, &step.command) {
        (Some((name, args)), _) => Some((name.clone(), args.to_string())),
        (None, Some(command)) => Some(openai_tool_call(request, command)),
        (None, None) => None,
    };
    let mut items = vec![];
    match call {
        Some((name, arguments)) => {
            if let Some(say) = &step.say {
                items.push(message(say));
            }
            items.push(json!({"type": "function_call", "id": format!("fc_{turn:02}"), "call_id": format!("call_stand_in_{turn:02}"),
                   "name": name, "arguments": arguments, "status": "completed"}));
        }
        None => items.push(message(step.say.as_deref().unwrap_or(FINAL_TEXT))),
    }
    stream_responses(&id, &items, step.prompt_tokens, 20)
}

/// A streamed Responses API reply of `items` (messages and function calls).
pub fn stream_responses(id: &str, items: &[Value], input_tokens: u64, output_tokens: u64) -> String {
    let mut out = sse(
        "response.created",
        &json!({"type": "response.created", "response": {"id": id, "object": "response", "status": "in_progress"}}),
    );
    for (index, item) in items.iter().enumerate() {
        out += &sse(
            "response.output_item.added",
            &json!({"type": "response.output_item.added", "output_index": index, "item": item}),
        );
        out += &sse(
            "response.output_item.done",
            &json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
    }
    out += &sse(
        "response.completed",
        &json!({"type": "response.completed", "response": {
            "id": id, "object": "response", "status": "completed", "output": items,
            "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": input_tokens + output_tokens}}}),
    );
    out
}

/// The shell tool a chat-completions request lists, and its arguments for `command`.
fn chat_tool_call(request: &Value, command: &str, turn: usize) -> (String, String) {
    let empty = vec![];
    let names: Vec<&str> = request["tools"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    let description = format!("Run step {turn}");
    let shell = ["run_shell_command", "bash", "Execute", "shell"]
        .into_iter()
        .find(|name| names.contains(name))
        .unwrap_or("bash");
    let args = match shell {
        "Execute" => json!({"command": command, "summary": description, "riskLevel": "low",
                            "riskLevelReason": "a scripted echo"}),
        _ => json!({"command": command, "description": description}),
    };
    (shell.to_string(), args.to_string())
}

/// A streamed chat-completions reply: the tool call (or text) in deltas, the finish
/// reason, then a chunk with no choices carrying `usage` (what the hosts record).
fn chat_sse(request: &Value, step: &Step, turn: usize, main: bool) -> String {
    let model = request["model"].as_str().unwrap_or("stand-in").to_string();
    let chunk = |choices: Value, usage: Option<Value>| {
        let mut value = json!({"id": format!("chatcmpl-stand-in-{turn:02}"), "object": "chat.completion.chunk",
                               "created": 1_764_576_000, "model": model, "choices": choices});
        if let Some(usage) = usage {
            value["usage"] = usage;
        }
        format!("data: {value}\n\n")
    };
    let delta = |delta: Value, finish: Value| json!([{"index": 0, "delta": delta, "finish_reason": finish}]);
    let mut out = chunk(delta(json!({"role": "assistant", "content": ""}), Value::Null), None);
    let call = match (&step.call, &step.command, main) {
        (Some((name, args)), _, true) => Some((name.clone(), args.to_string())),
        (None, Some(command), true) => Some(chat_tool_call(request, command, turn)),
        _ => None,
    };
    if let Some(say) = step.say.as_deref().filter(|_| call.is_some()) {
        out += &chunk(delta(json!({"content": say}), Value::Null), None);
    }
    let finish = match call {
        Some((name, arguments)) => {
            let id = format!("call_stand_in_{turn:02}");
            out += &chunk(
                delta(
                    json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                                            "function": {"name": name, "arguments": arguments}}]}),
                    Value::Null,
                ),
                None,
            );
            "tool_calls"
        }
        None => {
            let text = if main { step.say.as_deref().unwrap_or(FINAL_TEXT) } else { "Stand-in." };
            out += &chunk(delta(json!({"content": text}), Value::Null), None);
            "stop"
        }
    };
    out += &chunk(delta(json!({}), json!(finish)), None);
    let usage = json!({"prompt_tokens": step.prompt_tokens, "completion_tokens": 20,
                       "total_tokens": step.prompt_tokens + 20});
    out += &chunk(json!([]), Some(usage));
    out += "data: [DONE]\n\n";
    out
}

fn gemini_response(step: &Step, turn: usize, main: bool) -> Value {
    let mut parts = vec![];
    if main && !step.is_final() {
        if let Some(say) = &step.say {
            parts.push(json!({"text": say}));
        }
    }
    parts.push(match (&step.call, &step.command, main) {
        (Some((name, args)), _, true) => json!({"functionCall": {"name": name, "args": args}}),
        (None, Some(command), true) => {
            json!({"functionCall": {"name": "run_shell_command", "args": {"command": command, "description": format!("Run step {turn}")}}})
        }
        (_, _, true) => json!({"text": step.say.as_deref().unwrap_or(FINAL_TEXT)}),
        // Side requests (next-speaker checks and the like) want JSON.
        (_, _, false) => json!({"text": "{\"reasoning\": \"The model finished.\", \"next_speaker\": \"user\"}"}),
    });
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": step.prompt_tokens, "candidatesTokenCount": 20,
                          "totalTokenCount": step.prompt_tokens + 20},
        "modelVersion": "gemini-2.5-flash"
    })
}
