//! `cargo bench --bench latency`: wall time and peak memory of the release binary on its
//! hot paths, next to a do-nothing process (`/bin/true`) as the floor.
//!
//! Each path runs as the host runs it: a fresh process, the payload on stdin, stdout
//! read to the end. Peak memory is the child's `ru_maxrss` from `wait4`. Set
//! `BATON_BENCH_RUNS` to change the number of runs per path (default 300), and
//! `BATON_BENCH_GSD` to a folder holding GSD's `gsd-context-monitor.js` and
//! `gsd-statusline.js` (see `bench/fetch-gsd.sh`) to measure GSD's hooks in the same run.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SESSION: &str = "bench-session-0001";

struct Sample {
    wall: Duration,
    max_rss_kib: i64,
}

struct Path_ {
    name: String,
    program: PathBuf,
    args: Vec<String>,
    payload: Vec<u8>,
}

fn run_once(path: &Path_, env: &[(String, PathBuf)]) -> Sample {
    let mut command = Command::new(&path.program);
    command
        .args(&path.args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let start = Instant::now();
    // Reaped below with wait4, which std does not know about; that is how the child's
    // peak memory is read.
    #[allow(clippy::zombie_processes)]
    let mut child = command.spawn().expect("spawn");
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(&path.payload);
    }
    let mut stdout = child.stdout.take().expect("stdout");
    let mut sink = Vec::new();
    let _ = std::io::Read::read_to_end(&mut stdout, &mut sink);
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: pid is our child, not yet reaped (std never waited on it).
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = start.elapsed();
    assert_eq!(reaped, pid, "wait4 failed");
    let exit = std::process::ExitStatus::from_raw(status);
    assert!(exit.success() || path.program.ends_with("node"), "{} exited {exit:?}", path.name);
    Sample { wall, max_rss_kib: usage.ru_maxrss }
}

struct Summary {
    name: String,
    median: Duration,
    p95: Duration,
    max_rss_kib: i64,
}

fn measure(path: &Path_, env: &[(String, PathBuf)], runs: usize, before_each: &dyn Fn()) -> Summary {
    for _ in 0..5 {
        before_each();
        run_once(path, env);
    }
    let mut walls = Vec::with_capacity(runs);
    let mut peak = 0;
    for _ in 0..runs {
        before_each();
        let sample = run_once(path, env);
        walls.push(sample.wall);
        peak = peak.max(sample.max_rss_kib);
    }
    walls.sort();
    let at = |q: f64| walls[((walls.len() as f64 - 1.0) * q).round() as usize];
    Summary { name: path.name.clone(), median: at(0.5), p95: at(0.95), max_rss_kib: peak }
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

fn write_bridge(tmp: &Path, remaining: u32) {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let json = format!(
        "{{\"session_id\":\"{SESSION}\",\"remaining_percentage\":{remaining},\"used_pct\":{},\"timestamp\":{now}}}",
        100 - remaining
    );
    std::fs::write(tmp.join(format!("claude-ctx-{SESSION}.json")), json).unwrap();
}

fn hook_payload(cwd: &Path) -> Vec<u8> {
    format!(
        r#"{{"session_id":"{SESSION}","transcript_path":"/nonexistent/t.jsonl","cwd":"{}","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{{"file_path":"src/app.ts","old_string":"a","new_string":"b"}},"tool_response":{{"success":true}},"tool_use_id":"toolu_1"}}"#,
        cwd.display()
    )
    .into_bytes()
}

fn statusline_payload(cwd: &Path) -> Vec<u8> {
    format!(
        r#"{{"session_id":"{SESSION}","cwd":"{0}","model":{{"id":"claude-opus-4-5-20251101","display_name":"Opus 4.5"}},"workspace":{{"current_dir":"{0}","project_dir":"{0}"}},"cost":{{"total_cost_usd":1.83}},"context_window":{{"context_window_size":200000,"used_percentage":72,"remaining_percentage":28,"current_usage":{{"input_tokens":12,"output_tokens":512,"cache_creation_input_tokens":3000,"cache_read_input_tokens":141000}}}}}}"#,
        cwd.display()
    )
    .into_bytes()
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is expected.
    let runs: usize = std::env::var("BATON_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let baton = PathBuf::from(env!("CARGO_BIN_EXE_baton"));
    let scratch = std::env::temp_dir().join(format!("baton-bench-{}", std::process::id()));
    let tmp = scratch.join("tmp");
    let home = scratch.join("home");
    let project = scratch.join("project");
    for dir in [&tmp, &home, &project] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::write(project.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let env = vec![
        ("HOME".to_string(), home.clone()),
        ("TMPDIR".to_string(), tmp.clone()),
        ("XDG_CONFIG_HOME".to_string(), home.join(".config")),
        ("XDG_STATE_HOME".to_string(), home.join(".local/state")),
    ];

    let floor =
        Path_ { name: "floor: /bin/true".into(), program: "/bin/true".into(), args: vec![], payload: vec![] };
    let hook = |name: &str| Path_ {
        name: name.into(),
        program: baton.clone(),
        args: vec!["hook".into()],
        payload: hook_payload(&project),
    };
    let statusline = Path_ {
        name: "baton statusline".into(),
        program: baton.clone(),
        args: vec!["statusline".into()],
        payload: statusline_payload(&project),
    };

    let mut results = vec![measure(&floor, &env, runs, &|| {})];
    results.push(measure(&hook("baton hook, below threshold"), &env, runs, &|| write_bridge(&tmp, 60)));
    results.push(measure(&hook("baton hook, at warning"), &env, runs, &|| write_bridge(&tmp, 30)));
    results.push(measure(&statusline, &env, runs, &|| {}));

    if let Some(gsd) = std::env::var_os("BATON_BENCH_GSD").map(PathBuf::from) {
        let node = PathBuf::from("/usr/bin/node");
        let monitor = gsd.join("gsd-context-monitor.js");
        let gsd_statusline = gsd.join("gsd-statusline.js");
        if node.exists() && monitor.exists() {
            let gsd_hook = |name: &str| Path_ {
                name: name.into(),
                program: node.clone(),
                args: vec![monitor.display().to_string()],
                payload: hook_payload(&project),
            };
            results.push(measure(&gsd_hook("GSD hook, below threshold"), &env, runs, &|| {
                write_bridge(&tmp, 60)
            }));
            results.push(measure(&gsd_hook("GSD hook, at warning"), &env, runs, &|| write_bridge(&tmp, 30)));
        }
        if node.exists() && gsd_statusline.exists() {
            let path = Path_ {
                name: "GSD statusline".into(),
                program: node.clone(),
                args: vec![gsd_statusline.display().to_string()],
                payload: statusline_payload(&project),
            };
            results.push(measure(&path, &env, runs, &|| {}));
        }
    }

    let floor_median = results[0].median.as_secs_f64();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    println!("baton latency benchmark: {runs} runs per path, {cores} cores, {cpu}\n");
    println!("| path | median ms | p95 ms | × floor (median) | peak RSS MiB |");
    println!("|---|---:|---:|---:|---:|");
    for r in &results {
        println!(
            "| {} | {} | {} | {:.2} | {:.1} |",
            r.name,
            ms(r.median),
            ms(r.p95),
            r.median.as_secs_f64() / floor_median,
            r.max_rss_kib as f64 / 1024.0
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}
