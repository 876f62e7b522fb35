//! `cargo bench --bench latency`: wall time and peak memory of the release binary on its
//! paths, next to a do-nothing process (`/bin/true`) as the floor.
//!
//! Each path runs as the host runs it: a fresh process of an installed copy of the
//! binary, the payload on stdin, stdout read to the end. Each of its runs is followed by
//! a run of the floor, and its ratio is to the median of those (a paired measurement: the
//! machine's drift moves both). Peak memory is measured in one more run under GNU time
//! (`/usr/bin/time -f %M`, "—" without it): a child spawned from the bench itself reports
//! the bench's own peak (Linux carries it across the exec of a spawned child). Paths:
//!
//! - the hook below threshold and at warning (bridge present), the statusline (of the
//!   figure its bridge holds, and of a new one, whose bridge it replaces), and the
//!   statusline with git markers in a repository of 10,000 tracked files (from the
//!   cache, as most renders get them): the hot paths, run after every tool call or
//!   message; and the hook given a tool's 64 MiB output (its stdin deadline is 2 s);
//!   each for the default build and the shipped one;
//! - the hook with no bridge, reading the figure from a 1 MiB and a 1 GiB transcript at
//!   the session's first call: the cost must not grow with the file;
//! - below threshold in a warm session, on a 1 MiB and a 1 GiB transcript, in pairs: the
//!   figure from a fresh bridge (the transcript unchanged since the render: a `stat`),
//!   and with no bridge from the transcript, unchanged since the session's last call (its
//!   read mark: a `stat`, nothing read); and a call after one new reply (that reply is
//!   read); with a bridge one reply behind the 1 GiB transcript (that reply is read);
//! - the headless hook (`claude -p`: no bridge) near a threshold, the call's own reply
//!   not written yet, on a call that cannot be told anything (WARNING told the call
//!   before, CRITICAL out of one call's reach): it answers at once, without the bounded
//!   wait for that reply (at most 250 ms) that only a warning due would take;
//! - the hook at CRITICAL writing the handoff and its checkpoint in a repository of
//!   10,000 files (target: 150 ms);
//! - with `BATON_BENCH_BIG_REPO=1` (as `bench/run.sh` sets it), the statusline in a
//!   repository of 100,000 files, with a cold git-marker cache and a warm one; and, in a
//!   repository with 50,000 untracked files, the hook at CRITICAL (target: p95 ≤ 1 s,
//!   `.git` growth bounded by the snapshot budget) and the SessionStart brief (target:
//!   ≤ 200 ms).
//!
//! Environment: `BATON_BENCH_RUNS` (runs per hot path, default 300; slow paths run a
//! tenth as often), `BATON_BENCH_STATIC` (the shipped baton, as
//! `install/build-shipped.sh` builds it for the release archives and `install.sh`,
//! measured beside the default build; see `bench/run.sh`), `BATON_BENCH_GSD` (a folder holding GSD's `gsd-context-monitor.js`
//! and `gsd-statusline.js`, see `bench/fetch-gsd.sh`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SESSION: &str = "bench-session-0001";
const SAMPLE: &[u8] = include_bytes!("../tests/fixtures/transcript.jsonl");

struct Run {
    name: String,
    program: PathBuf,
    args: Vec<String>,
    payload: Vec<u8>,
}

struct Summary {
    name: String,
    median: Duration,
    p95: Duration,
    max_rss_kib: Option<i64>,
    runs: usize,
    /// The median of the `/bin/true` runs made between this path's runs.
    floor_median: Duration,
}

struct Bench {
    scratch: PathBuf,
    env: Vec<(String, PathBuf)>,
}

impl Bench {
    fn tmp(&self) -> PathBuf {
        self.scratch.join("tmp")
    }

    fn once(&self, run: &Run) -> Duration {
        self.spawn_once(Command::new(&run.program).args(&run.args), run)
    }

    /// The run's peak RSS, from GNU time's report of it (a small parent of its own).
    fn peak_rss(&self, run: &Run) -> Option<i64> {
        let time = Path::new("/usr/bin/time");
        if !time.exists() {
            return None;
        }
        let report = self.scratch.join("peak-rss");
        let mut command = Command::new(time);
        command.args(["-f", "%M", "-o"]).arg(&report).arg(&run.program).args(&run.args);
        self.spawn_once(&mut command, run);
        std::fs::read_to_string(&report).ok()?.trim().lines().last()?.trim().parse().ok()
    }

    fn spawn_once(&self, command: &mut Command, run: &Run) -> Duration {
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let start = Instant::now();
        let mut child = command.spawn().expect("spawn");
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(&run.payload);
        }
        let mut stdout = child.stdout.take().expect("stdout");
        let mut sink = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut sink);
        let exit = child.wait().expect("wait");
        let wall = start.elapsed();
        assert!(exit.success(), "{} exited {exit:?}", run.name);
        wall
    }

    fn measure(&self, run: &Run, runs: usize, before_each: &dyn Fn()) -> Summary {
        self.measure_cycle(&[run], runs, before_each)
    }

    /// Like [`Bench::measure`], the runs taking turns through `cycle` (the path with
    /// payloads that change from one run to the next); named after the first.
    fn measure_cycle(&self, cycle: &[&Run], runs: usize, before_each: &dyn Fn()) -> Summary {
        let run = cycle[0];
        for turn in cycle.iter().cycle().take(3) {
            before_each();
            self.once(turn);
        }
        // Paired: each run of the path is followed by one of the floor, so a machine that
        // grows busier or quieter during the bench moves both alike.
        let floor = Run { name: "floor".into(), program: "/bin/true".into(), args: vec![], payload: vec![] };
        let mut walls = Vec::with_capacity(runs);
        let mut floor_walls = Vec::with_capacity(runs);
        for turn in cycle.iter().cycle().take(runs) {
            before_each();
            walls.push(self.once(turn));
            floor_walls.push(self.once(&floor));
        }
        before_each();
        let peak = self.peak_rss(run);
        floor_walls.sort();
        let floor_median = floor_walls[floor_walls.len() / 2];
        walls.sort();
        let at = |q: f64| walls[((walls.len() as f64 - 1.0) * q).round() as usize];
        Summary {
            name: run.name.clone(),
            median: at(0.5),
            p95: at(0.95),
            max_rss_kib: peak,
            runs,
            floor_median,
        }
    }

    fn write_bridge(&self, remaining: u32) {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        let json = format!(
            "{{\"session_id\":\"{SESSION}\",\"remaining_percentage\":{remaining},\"used_pct\":{},\"timestamp\":{now}}}",
            100 - remaining
        );
        std::fs::write(self.tmp().join(format!("claude-ctx-{SESSION}.json")), json).unwrap();
    }

    /// A fresh bridge at `remaining` that recorded the transcript's size as `offset` (what
    /// `baton statusline` writes).
    fn write_bridge_at(&self, remaining: u32, offset: u64) {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        let json = format!(
            "{{\"session_id\":\"{SESSION}\",\"remaining_percentage\":{remaining},\"used_pct\":{},\"timestamp\":{now},\"context_window_size\":200000,\"transcript_offset\":{offset}}}",
            100 - remaining
        );
        std::fs::write(self.tmp().join(format!("claude-ctx-{SESSION}.json")), json).unwrap();
    }

    /// The session's own debounce state: told WARNING `calls` calls ago, its measured
    /// pace `tokens_per_call`.
    fn write_state(&self, calls: u32, tokens_per_call: u32) {
        let sessions = self.scratch.join("home/.local/state/baton/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        let json = format!(
            "{{\"version\":1,\"callsSinceWarn\":{calls},\"lastLevel\":\"warning\",\"tokensPerCall\":{tokens_per_call}}}"
        );
        std::fs::write(sessions.join(format!("claude-ctx-{SESSION}-warned.json")), json).unwrap();
    }

    fn clear_session(&self) {
        for name in [format!("claude-ctx-{SESSION}.json"), format!("claude-ctx-{SESSION}-warned.json")] {
            let _ = std::fs::remove_file(self.tmp().join(name));
        }
        // baton's own debounce state and read mark are private (GSD's stay in the temp dir).
        let sessions = self.scratch.join("home/.local/state/baton/sessions");
        for name in [format!("claude-ctx-{SESSION}-warned.json"), format!("claude-ctx-{SESSION}-read.json")] {
            let _ = std::fs::remove_file(sessions.join(name));
        }
    }

    /// No bridge: the figure comes from the transcript (the session's state is kept).
    fn remove_bridge(&self) {
        let _ = std::fs::remove_file(self.tmp().join(format!("claude-ctx-{SESSION}.json")));
    }
}

fn hook_payload(cwd: &Path, transcript: &Path) -> Vec<u8> {
    serde_json::json!({
        "session_id": SESSION, "transcript_path": transcript, "cwd": cwd, "hook_event_name": "PostToolUse",
        "tool_name": "Edit", "tool_input": {"file_path": "src/app.ts", "old_string": "a", "new_string": "b"},
        "tool_response": {"success": true}, "tool_use_id": "toolu_1"
    })
    .to_string()
    .into_bytes()
}

/// A PostToolUse payload carrying a tool's whole output of `bytes` bytes (streamed
/// through the parser, never held).
fn big_hook_payload(cwd: &Path, transcript: &Path, bytes: usize) -> Vec<u8> {
    serde_json::json!({
        "session_id": SESSION, "transcript_path": transcript, "cwd": cwd, "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_input": {"command": "cat big.log"},
        "tool_response": {"stdout": "x".repeat(bytes)}, "tool_use_id": "toolu_1"
    })
    .to_string()
    .into_bytes()
}

fn statusline_payload(cwd: &Path) -> Vec<u8> {
    serde_json::json!({
        "session_id": SESSION, "cwd": cwd, "model": {"id": "claude-opus-4-5-20251101", "display_name": "Opus 4.5"},
        "workspace": {"current_dir": cwd, "project_dir": cwd}, "cost": {"total_cost_usd": 1.83},
        "context_window": {"context_window_size": 200000, "used_percentage": 72, "remaining_percentage": 28,
            "current_usage": {"input_tokens": 12, "output_tokens": 512, "cache_creation_input_tokens": 3000, "cache_read_input_tokens": 141000}}
    })
    .to_string()
    .into_bytes()
}

/// A transcript of about `bytes` bytes: realistic filler lines, then a reply at 40%
/// used (below the thresholds, so the hook's cost is the read alone).
fn write_transcript(path: &Path, bytes: u64) {
    let mut file = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let filler = format!(
        "{{\"type\":\"user\",\"isSidechain\":false,\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":\"{}\"}}]}}}}\n",
        "output line of a tool ".repeat(40)
    );
    let block: Vec<u8> = filler.as_bytes().repeat((64 * 1024 / filler.len()).max(1));
    let mut written = 0u64;
    while written + (block.len() as u64) < bytes {
        file.write_all(&block).unwrap();
        written += block.len() as u64;
    }
    let reply = r#"{"type":"assistant","isSidechain":false,"timestamp":"2026-11-30T10:00:00.000Z","message":{"id":"msg_last","model":"claude-opus-4-5-20251101","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":10,"cache_creation_input_tokens":1000,"cache_read_input_tokens":79000,"output_tokens":50}}}"#;
    writeln!(file, "{reply}").unwrap();
}

/// A repository of `files` small files, committed (for the statusline's git markers).
fn write_plain_repository(root: &Path, files: usize) {
    std::fs::create_dir_all(root).unwrap();
    let repo = git2::Repository::init(root).unwrap();
    for i in 0..files {
        let path = root.join(format!("d{:03}/f{:05}.txt", i / 1000, i));
        if i % 1000 == 0 {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        }
        std::fs::write(path, b"x\n").unwrap();
    }
    std::thread::sleep(Duration::from_millis(1100));
    let mut index = repo.index().unwrap();
    index.add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None).unwrap();
    index.write().unwrap();
    std::fs::write(root.join("d000/f00000.txt"), b"changed\n").unwrap();
}

/// A git repository of `files` files with a GSD phase, the sample transcript and a few
/// uncommitted changes: the setting of the automatic handoff.
fn write_repository(root: &Path, files: usize) -> PathBuf {
    std::fs::create_dir_all(root).unwrap();
    let repo = git2::Repository::init(root).unwrap();
    let mut config = repo.config().unwrap();
    config.set_str("user.name", "Bench").unwrap();
    config.set_str("user.email", "bench@example.invalid").unwrap();
    for i in 0..files {
        let path = root.join(format!("src/m{:03}/f{:04}.rs", i / 100, i));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, format!("// file {i}\npub fn f() {{}}\n")).unwrap();
    }
    let plan = "<tasks>\n<task type=\"auto\"><name>Task 1: Read</name></task>\n<task type=\"auto\"><name>Task 2: Wire</name></task>\n</tasks>\n";
    std::fs::create_dir_all(root.join(".planning/phases/03-rate-limiting")).unwrap();
    std::fs::write(root.join(".planning/phases/03-rate-limiting/03-01-PLAN.md"), plan).unwrap();
    std::fs::write(root.join(".planning/STATE.md"), "Phase: 3 of 5 (Rate limiting)\nStatus: In progress\n")
        .unwrap();
    // Files written in the same second as the index are "racily clean" and would be
    // read whole at every status; a real repository's index is older than its files'
    // last change, so wait that second out.
    std::thread::sleep(Duration::from_millis(1100));
    let mut index = repo.index().unwrap();
    index.add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = repo.signature().unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "init", &tree, &[]).unwrap();
    for i in 0..3 {
        std::fs::write(root.join(format!("src/m000/f000{i}.rs")), "// changed\n").unwrap();
    }
    std::fs::write(root.join("src/new.rs"), "// new\n").unwrap();
    let transcript = root.parent().unwrap().join("session.jsonl");
    let text = String::from_utf8_lossy(SAMPLE).replace("/home/dev/shop-api", &root.to_string_lossy());
    std::fs::write(&transcript, text).unwrap();
    transcript
}

/// The length of a file's last line, its newline included.
fn last_line_len(path: &Path) -> u64 {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).unwrap();
    let len = file.metadata().unwrap().len();
    let take = len.min(64 * 1024);
    file.seek(SeekFrom::Start(len - take)).unwrap();
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).unwrap();
    let body = &tail[..tail.len() - 1];
    let start = body.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    (tail.len() - start) as u64
}

/// Cuts a file's last line off, returning it.
fn cut_last_line(path: &Path) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let cut = last_line_len(path);
    let mut file = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
    let len = file.metadata().unwrap().len();
    file.seek(SeekFrom::Start(len - cut)).unwrap();
    let mut line = Vec::new();
    file.read_to_end(&mut line).unwrap();
    file.set_len(len - cut).unwrap();
    line
}

fn append_bytes(path: &Path, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(bytes).unwrap();
}

/// Loose objects and their bytes under `.git/objects`.
fn loose_objects(root: &Path) -> (usize, u64) {
    let mut count = 0;
    let mut bytes = 0;
    for dir in std::fs::read_dir(root.join(".git/objects")).unwrap().flatten() {
        if dir.file_name().len() != 2 {
            continue;
        }
        for file in std::fs::read_dir(dir.path()).unwrap().flatten() {
            count += 1;
            bytes += file.metadata().map(|m| m.len()).unwrap_or(0);
        }
    }
    (count, bytes)
}

fn session_start_payload(cwd: &Path) -> Vec<u8> {
    format!(
        r#"{{"session_id":"bench-session-next","cwd":"{}","hook_event_name":"SessionStart","source":"startup"}}"#,
        cwd.display()
    )
    .into_bytes()
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

fn main() {
    let runs: usize = std::env::var("BATON_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let slow_runs = (runs / 10).max(10);
    let scratch = std::env::temp_dir().join(format!("baton-bench-{}", std::process::id()));
    let home = scratch.join("home");
    let project = scratch.join("project");
    for dir in [scratch.join("tmp"), home.clone(), project.clone()] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(project.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let bench = Bench {
        scratch: scratch.clone(),
        env: vec![
            ("HOME".to_string(), home.clone()),
            ("TMPDIR".to_string(), scratch.join("tmp")),
            ("XDG_CONFIG_HOME".to_string(), home.join(".config")),
            ("XDG_STATE_HOME".to_string(), home.join(".local/state")),
        ],
    };
    let no_transcript = scratch.join("none.jsonl");

    let mut binaries = vec![("baton".to_string(), PathBuf::from(env!("CARGO_BIN_EXE_baton")))];
    if let Some(path) = std::env::var_os("BATON_BENCH_STATIC").map(PathBuf::from).filter(|p| p.exists()) {
        binaries.push(("baton (shipped)".to_string(), path));
    }
    // Each binary runs from a copy, as every install path leaves it (cargo install, the
    // archives, npm). The linker's own output is a file written through a mapping, which
    // the page cache holds in 4 KiB pages: every start then takes more page faults than
    // from a copy (written, or read back from disk, in larger folios). Measured on the
    // default build's hook: 1.61 ms from target/release, 1.29 ms from a copy of it, and
    // 1.41 ms from target/release once its pages were dropped and read back.
    let installed = scratch.join("bin");
    std::fs::create_dir_all(&installed).unwrap();
    for (index, (_, binary)) in binaries.iter_mut().enumerate() {
        let copy = installed.join(format!("baton-{index}"));
        std::fs::copy(&*binary, &copy).unwrap();
        *binary = copy;
    }

    // The statusline's git markers in a repository of 10,000 tracked files, from the
    // cache as most renders get them.
    let markers_repo = scratch.join("repo10k-tracked/app");
    write_plain_repository(&markers_repo, 10_000);

    let mut results = vec![bench.measure(
        &Run { name: "floor: /bin/true".into(), program: "/bin/true".into(), args: vec![], payload: vec![] },
        runs,
        &|| {},
    )];
    for (label, binary) in &binaries {
        let hook = |name: &str, transcript: &Path| Run {
            name: format!("{label} hook, {name}"),
            program: binary.clone(),
            args: vec!["hook".into()],
            payload: hook_payload(&project, transcript),
        };
        results
            .push(bench.measure(&hook("below threshold", &no_transcript), runs, &|| bench.write_bridge(60)));
        results.push(bench.measure(&hook("at warning", &no_transcript), runs, &|| bench.write_bridge(30)));
        let statusline = Run {
            name: format!("{label} statusline"),
            program: binary.clone(),
            args: vec!["statusline".into()],
            payload: statusline_payload(&project),
        };
        results.push(bench.measure(&statusline, runs, &|| {}));
        // Renders of a new figure each time (72 % and 73 % in turn), each replacing the
        // bridge the render before wrote: the row above renders the figure its bridge
        // already holds, as back-to-back renders within a second do.
        let at_73 = String::from_utf8(statusline.payload.clone())
            .unwrap()
            .replace("\"used_percentage\":72", "\"used_percentage\":73")
            .replace("\"remaining_percentage\":28", "\"remaining_percentage\":27")
            .into_bytes();
        assert_ne!(at_73, statusline.payload, "the second figure differs");
        let figure = |name: String, payload: Vec<u8>| Run {
            name,
            program: statusline.program.clone(),
            args: statusline.args.clone(),
            payload,
        };
        let figures = [
            figure(
                format!("{label} statusline, a new figure each render (bridge replaced)"),
                statusline.payload.clone(),
            ),
            figure(String::new(), at_73),
        ];
        results.push(bench.measure_cycle(&[&figures[0], &figures[1]], runs, &|| {}));
        let markers = Run {
            name: format!("{label} statusline, git markers, 10,000 tracked files, warm cache"),
            program: binary.clone(),
            args: vec!["statusline".into()],
            payload: statusline_payload(&markers_repo),
        };
        results.push(bench.measure(&markers, runs, &|| {}));
        // Optimised builds only: the test build (CI's smoke run) would spend its 2 s deadline.
        if !cfg!(debug_assertions) {
            let big_output = Run {
                name: format!("{label} hook, at warning, 64 MiB tool output on stdin"),
                program: binary.clone(),
                args: vec!["hook".into()],
                payload: big_hook_payload(&project, &no_transcript, 64 << 20),
            };
            results.push(bench.measure(&big_output, slow_runs, &|| bench.write_bridge(30)));
        }
    }

    // The figure from the transcript (no bridge: `claude -p`, every relay leg, and the
    // hosts without a status line). The first call of a session reads the end of the
    // file within a fixed budget; the read must not grow with the file.
    let small = scratch.join("transcript-1mib.jsonl");
    let big = scratch.join("transcript-1gib.jsonl");
    write_transcript(&small, 1 << 20);
    write_transcript(&big, 1 << 30);
    let baton = binaries[0].1.clone();
    for (name, path) in [
        ("no bridge, first call of the session, 1 MiB transcript", &small),
        ("no bridge, first call of the session, 1 GiB transcript", &big),
    ] {
        let run = Run {
            name: format!("baton hook, {name}"),
            program: baton.clone(),
            args: vec!["hook".into()],
            payload: hook_payload(&project, path),
        };
        results.push(bench.measure(&run, runs, &|| bench.clear_session()));
    }
    // Below the thresholds, a warm session, the transcript unchanged since the last call,
    // in pairs: the figure from a fresh bridge (`baton statusline`'s, which recorded the
    // transcript's size: a stat), and with no bridge from where the session's last call
    // stopped reading (its mark: a stat, nothing read). Then a call after one new reply,
    // which reads that reply.
    for (size, path) in [("1 MiB", &small), ("1 GiB", &big)] {
        let len = std::fs::metadata(path).unwrap().len();
        let run = |name: String| Run {
            name: format!("baton hook, below threshold, warm session, {name}"),
            program: baton.clone(),
            args: vec!["hook".into()],
            payload: hook_payload(&project, path),
        };
        bench.clear_session();
        let bridge = run(format!("fresh bridge, transcript unchanged ({size})"));
        results.push(bench.measure(&bridge, runs, &|| bench.write_bridge_at(60, len)));
        bench.clear_session();
        let mark = run(format!("no bridge, transcript unchanged since the last call ({size})"));
        results.push(bench.measure(&mark, runs, &|| bench.remove_bridge()));
        let reply = last_line_len(path);
        let newer =
            run(format!("no bridge, one reply ({reply} bytes) appended since the last call ({size})"));
        results.push(bench.measure(&newer, runs, &|| {
            // The last call read the transcript without its last reply; then it came.
            let bytes = cut_last_line(path);
            bench.once(&newer);
            append_bytes(path, &bytes);
        }));
    }
    // With a fresh bridge on the 1 GiB transcript, one reply newer than the bridge (only
    // that reply is read).
    let big_len = std::fs::metadata(&big).unwrap().len();
    let last_reply = last_line_len(&big);
    let run = Run {
        name: "baton hook, below threshold, transcript one reply newer than the bridge (1 GiB)".into(),
        program: baton.clone(),
        args: vec!["hook".into()],
        payload: hook_payload(&project, &big),
    };
    bench.clear_session();
    results.push(bench.measure(&run, runs, &|| bench.write_bridge_at(60, big_len - last_reply)));
    let _ = std::fs::remove_file(&big);

    // `claude -p` (no bridge) at 72 %, near CRITICAL: the call's own reply is not in the
    // transcript yet (its id is not there), WARNING was told the call before and the pace
    // is 1,500 tokens a call, so neither a refire nor CRITICAL can be said on this call.
    let headless = scratch.join("transcript-headless.jsonl");
    let near = r#"{"type":"assistant","isSidechain":false,"timestamp":"2026-11-30T10:00:00.000Z","message":{"id":"msg_near","model":"claude-sonnet-4-5-20250929","content":[{"type":"tool_use","id":"toolu_0","name":"Bash","input":{}}],"usage":{"input_tokens":10,"cache_creation_input_tokens":1000,"cache_read_input_tokens":142990,"output_tokens":50}}}"#;
    std::fs::write(&headless, format!("{}{near}\n", String::from_utf8_lossy(SAMPLE))).unwrap();
    let run = Run {
        name: "baton hook, no bridge (claude -p), at 72 %, the call's reply not written yet, nothing due"
            .into(),
        program: baton.clone(),
        args: vec!["hook".into()],
        payload: hook_payload(&project, &headless),
    };
    results.push(bench.measure(&run, runs, &|| {
        bench.clear_session();
        bench.write_state(1, 1500);
    }));

    // The automatic handoff at CRITICAL in a 10,000-file repository.
    let repo_root = scratch.join("repo10k/shop-api");
    let transcript = write_repository(&repo_root, 10_000);
    // Each build: the shipped one is what users run (musl's allocator on Linux).
    for (label, binary) in &binaries {
        let critical = Run {
            name: format!("{label} hook, CRITICAL + handoff + checkpoint, 10,000-file repo"),
            program: binary.clone(),
            args: vec!["hook".into()],
            payload: hook_payload(&repo_root, &transcript),
        };
        results.push(bench.measure(&critical, slow_runs, &|| {
            bench.clear_session();
            bench.write_bridge(20);
        }));
    }

    let mut growth = None;
    if std::env::var_os("BATON_BENCH_BIG_REPO").is_some_and(|v| v == "1") {
        let big_repo = scratch.join("repo100k/big");
        write_plain_repository(&big_repo, 100_000);
        let render = |name: &str| Run {
            name: format!("baton statusline, 100,000-file repo, {name}"),
            program: baton.clone(),
            args: vec!["statusline".into()],
            payload: statusline_payload(&big_repo),
        };
        let cache = home.join(".local/state/baton/statusline");
        results.push(bench.measure(&render("cold git cache"), slow_runs, &|| {
            let _ = std::fs::remove_dir_all(&cache);
        }));
        results.push(bench.measure(&render("warm git cache"), runs, &|| {}));
        let _ = std::fs::remove_dir_all(&big_repo);

        // 50,000 untracked files (issue 11): the CRITICAL checkpoint and the brief.
        let untracked_root = scratch.join("untracked50k/app");
        let transcript = write_repository(&untracked_root, 1_000);
        for i in 0..50_000 {
            let path = untracked_root.join(format!("gen/d{:03}/f{:05}.txt", i / 100, i));
            if i % 100 == 0 {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            }
            std::fs::write(path, format!("generated {i}\n")).unwrap();
        }
        for (label, binary) in &binaries {
            let before = loose_objects(&untracked_root);
            let critical = Run {
                name: format!("{label} hook, CRITICAL + handoff + checkpoint, 50,000 untracked files"),
                program: binary.clone(),
                args: vec!["hook".into()],
                payload: hook_payload(&untracked_root, &transcript),
            };
            bench.clear_session();
            bench.write_bridge(20);
            bench.once(&critical);
            let after = loose_objects(&untracked_root);
            // The first checkpoint of the repository writes its objects; later ones reuse them.
            growth.get_or_insert((after.0 - before.0, after.1 - before.1));
            results.push(bench.measure(&critical, slow_runs, &|| {
                bench.clear_session();
                bench.write_bridge(20);
            }));
            let brief = Run {
                name: format!("{label} hook, SessionStart brief, 50,000 untracked files"),
                program: binary.clone(),
                args: vec!["hook".into()],
                payload: session_start_payload(&untracked_root),
            };
            results.push(bench.measure(&brief, slow_runs, &|| {}));
        }
    }

    if let Some(gsd) = std::env::var_os("BATON_BENCH_GSD").map(PathBuf::from) {
        let node = PathBuf::from("/usr/bin/node");
        let monitor = gsd.join("gsd-context-monitor.js");
        let gsd_statusline = gsd.join("gsd-statusline.js");
        if node.exists() && monitor.exists() {
            let gsd_hook = |name: &str| Run {
                name: name.into(),
                program: node.clone(),
                args: vec![monitor.display().to_string()],
                payload: hook_payload(&project, &no_transcript),
            };
            results.push(
                bench.measure(&gsd_hook("GSD hook, below threshold"), runs, &|| bench.write_bridge(60)),
            );
            results.push(bench.measure(&gsd_hook("GSD hook, at warning"), runs, &|| bench.write_bridge(30)));
        }
        if node.exists() && gsd_statusline.exists() {
            let run = Run {
                name: "GSD statusline".into(),
                program: node.clone(),
                args: vec![gsd_statusline.display().to_string()],
                payload: statusline_payload(&project),
            };
            results.push(bench.measure(&run, runs, &|| {}));
        }
    }

    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    println!("baton latency benchmark: {cores} cores, {cpu}\n");
    println!("| path | runs | median ms | p95 ms | × floor (paired medians) | peak RSS MiB |");
    println!("|---|---:|---:|---:|---:|---:|");
    for r in &results {
        println!(
            "| {} | {} | {} | {} | {:.2} | {} |",
            r.name,
            r.runs,
            ms(r.median),
            ms(r.p95),
            r.median.as_secs_f64() / r.floor_median.as_secs_f64(),
            r.max_rss_kib.map_or("—".to_string(), |kib| format!("{:.1}", kib as f64 / 1024.0))
        );
    }
    if let Some((objects, bytes)) = growth {
        println!(
            "\n50,000 untracked files: the first CRITICAL checkpoint wrote {objects} loose objects ({:.1} MiB) to .git",
            bytes as f64 / (1024.0 * 1024.0)
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
