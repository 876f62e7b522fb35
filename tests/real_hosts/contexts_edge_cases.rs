//! Issues 17 and 18 on the real hosts, the lines `contexts.rs` does not cover: a GSD
//! project in a package of a monorepo, two `claude -p` sessions at CRITICAL at once in
//! one project, `claude -p` with replies as fast as its transcript flush, Codex's compact
//! brief inside the turn that compacted, and a Gemini CLI project install in a folder
//! Gemini does not trust.
//!
//! All run against [`Scripted`] (replies decided per request; Codex through its
//! Responses rendering in [`crate::real_hosts_support::runner_and_responses`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::{BRIEF, CRITICAL, Checks, SERVER_LIFETIME, WARNING};
use crate::common;
use crate::real_hosts_support::runner_and_responses::{Runner, input_texts, run_in};
use crate::real_hosts_support::scripted::{self, Reply, Scripted};
use crate::real_hosts_support::server::{Recorded, Server, Step};
use crate::real_hosts_support::{
    API_KEY, CLAUDE_200K_MODEL, CODEX_MODEL, GEMINI_MODEL, Run, World, with_hosts,
};

const WINDOW: u64 = 200_000;

fn at(pct: f64) -> u64 {
    (WINDOW as f64 * pct / 100.0) as u64
}

fn claude_env(server: &Scripted) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", server.base_url()),
        ("ANTHROPIC_API_KEY", API_KEY.to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
        ("DISABLE_AUTOUPDATER", "1".to_string()),
        ("DISABLE_TELEMETRY", "1".to_string()),
        ("DISABLE_ERROR_REPORTING", "1".to_string()),
        ("CLAUDE_CODE_ENABLE_TELEMETRY", "0".to_string()),
    ]
}

/// `claude -p` in `cwd` against the scripted server (the 200k model), `args` before `-p`.
fn claude_in(world: &World, cwd: &Path, name: &str, server: &Scripted, args: &[&str], prompt: &str) -> Run {
    claude_with(&Runner::of(world), &world.hosts.claude, cwd, name, server, args, prompt)
}

fn claude_with(
    runner: &Runner,
    claude: &Path,
    cwd: &Path,
    name: &str,
    server: &Scripted,
    args: &[&str],
    prompt: &str,
) -> Run {
    let mut all =
        vec!["--allowedTools", "Bash,Read", "--output-format", "json", "--model", CLAUDE_200K_MODEL];
    all.extend_from_slice(args);
    all.extend(["-p", prompt]);
    runner.run(cwd, name, claude, &all, &claude_env(server), Duration::from_secs(120))
}

fn logs(world: &World) -> PathBuf {
    world.root().join("logs")
}

fn session_id(run: &Run) -> String {
    serde_json::from_str::<Value>(run.stdout.trim())
        .ok()
        .and_then(|v| v["session_id"].as_str().map(str::to_string))
        .unwrap_or_default()
}

fn read_json(path: &Path) -> Value {
    std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default()
}

fn git(world: &World, args: &[&str]) -> String {
    std::process::Command::new("git")
        .args(args)
        .current_dir(world.project())
        .envs(world.env())
        .output()
        .map(|o| format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
        .unwrap_or_default()
}

/// The files directly in a folder (baton's archive is the files of `.planning/handoffs/`;
/// `pending/` is a folder).
fn files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// A warning's words, from its start to the end of its text in the request's JSON (a
/// quote, an escaped line break or the end of its reminder).
fn words_at(text: &str) -> String {
    let end =
        ["\"", "\\n", "</system-reminder>"].iter().filter_map(|m| text.find(m)).min().unwrap_or(text.len());
    text[..end].chars().take(3000).collect()
}

/// The warnings (`CONTEXT …`) a request adds to the previous one's.
fn new_warnings(previous: Option<&str>, text: &str) -> Vec<String> {
    let all =
        |t: &str| -> Vec<String> { t.match_indices("CONTEXT ").map(|(at, _)| words_at(&t[at..])).collect() };
    let mut now = all(text);
    for old in previous.map(all).unwrap_or_default() {
        if let Some(i) = now.iter().position(|n| *n == old) {
            now.remove(i);
        }
    }
    now
}

/// Every warning of a sequence of requests: (request index, words).
fn warnings_of(requests: &[String]) -> Vec<(usize, String)> {
    let mut out = vec![];
    for (i, text) in requests.iter().enumerate() {
        let previous = i.checked_sub(1).map(|p| requests[p].as_str());
        out.extend(new_warnings(previous, text).into_iter().map(|w| (i, w)));
    }
    out
}

/// The `N` of "Usage at N%".
fn usage_percent(text: &str) -> Option<u64> {
    let rest = &text[text.find("Usage at ")? + "Usage at ".len()..];
    rest[..rest.find('%')?].trim().parse().ok()
}

/// The newest resume brief in a request's text, up to its reminder's end.
fn newest_brief(text: &str) -> String {
    text.rfind(BRIEF)
        .map(|at| {
            text[at..].split("</system-reminder>").next().unwrap_or_default().chars().take(1500).collect()
        })
        .unwrap_or_default()
}

// ---- 1. GSD in a package of a monorepo (issue 17) ----

const STATE_MD: &str = "---\nstatus: executing\n---\nPhase: 2 of 4 (Checkout)\nPlan: 1 of 2 in current phase\nStatus: In progress\n";

fn critical_reply(body: &Value) -> Reply {
    let last = scripted::last_user_text(body);
    if last.contains("NEXT-PROMPT") {
        return Reply::text(at(10.0), "Picked up.");
    }
    if last.contains("past critical") {
        return Reply::text(at(80.0) + 200, "Stopping here.");
    }
    match scripted::tool_results(body) {
        0 => Reply::bash(at(70.0), "echo nearly there"),
        1 => Reply::bash(at(80.0), "echo past critical"),
        _ => Reply::text(at(80.0) + 300, "Stopping here."),
    }
}

/// Issue 17: the project is the nearest GSD project, here `packages/web` of a monorepo.
#[test]
fn claude_code_gsd_in_a_package_of_a_monorepo() {
    with_hosts("claude -p monorepo", |hosts| {
        let mut checks = Checks::new("claude -p monorepo");
        let world = World::new(hosts);
        world.claude_setup();
        let root = world.project();
        let web = root.join("packages").join("web");
        git(&world, &["rm", "-r", "-q", ".planning"]);
        common::write(&web.join("package.json"), "{\"name\": \"web\"}\n");
        common::write(&web.join(".planning").join("STATE.md"), STATE_MD);
        git(&world, &["add", "-A"]);
        git(&world, &["commit", "-q", "-m", "GSD in packages/web"]);
        checks.check(
            "the repository root has no .planning/ to begin with",
            !root.join(".planning").exists(),
            || git(&world, &["status", "--short"]),
        );

        let server = Scripted::start(SERVER_LIFETIME, critical_reply);
        let run = claude_in(&world, &web, "01-critical", &server, &[], "CRITICAL-PROMPT: run two commands.");
        let said = warnings_of(&server.main_requests().iter().map(|r| r.text()).collect::<Vec<_>>());
        let summary = || format!("{}\n{}", run.describe(), server.summary());
        checks.check(
            "the session in packages/web was driven past CRITICAL",
            said.iter().any(|(_, w)| w.starts_with(CRITICAL)),
            || format!("{said:#?}\n{}", summary()),
        );
        let planning = web.join(".planning");
        let handoff = read_json(&planning.join("HANDOFF.json"));
        checks.check(
            "the handoff is in packages/web/.planning/HANDOFF.json (critical-context)",
            handoff["baton"]["trigger"] == "critical-context",
            || format!("{handoff:#}\n{}", summary()),
        );
        checks.check("with the phase from packages/web/.planning/STATE.md", handoff["phase"] == "2", || {
            format!("phase {:?}", handoff["phase"])
        });
        checks.check(
            "it says which folder it belongs to",
            handoff["baton"]["project_dir"] == "packages/web",
            || format!("project_dir {:?}", handoff["baton"]["project_dir"]),
        );
        let md = std::fs::read_to_string(planning.join(".continue-here.md")).unwrap_or_default();
        checks.check(
            "packages/web/.planning/.continue-here.md is beside it",
            md.contains("packages/web"),
            || md.clone(),
        );
        checks.check(
            "no .planning/ was created at the repository root",
            !root.join(".planning").exists(),
            || {
                let found: Vec<String> = std::fs::read_dir(root.join(".planning"))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                format!("root .planning/ holds {found:?}")
            },
        );
        let critical_words =
            said.iter().find(|(_, w)| w.starts_with(CRITICAL)).map(|(_, w)| w.clone()).unwrap_or_default();
        checks.check(
            "the CRITICAL words name the package's handoff",
            critical_words.contains(".planning/HANDOFF.json"),
            || critical_words.clone(),
        );

        // The next session, started in the package, is briefed from it.
        let before = server.main_requests().len();
        let next = claude_in(&world, &web, "02-next", &server, &[], "NEXT-PROMPT: carry on.");
        server.save(&logs(&world), "01-monorepo");
        let first = server.main_requests().get(before).map(|r| r.text()).unwrap_or_default();
        let brief = newest_brief(&first);
        checks.check(
            "the next session in packages/web is briefed from it (phase 2, its files)",
            brief.contains("phase 2 (Checkout)") && brief.contains(".planning/HANDOFF.json"),
            || format!("brief: {brief:?}\n{}\n{}", next.describe(), server.summary()),
        );
        checks.finish();
    });
}

// ---- 2. Two sessions at CRITICAL at once (issue 17) ----

/// Each session's script, by its prompt: 40 %, 70 %, 80 % (CRITICAL), 81 %, 82 %, then its
/// final text (the pause may stop it before).
fn two_sessions_reply(body: &Value) -> Reply {
    let first = scripted::first_user_text(body);
    let last = scripted::last_user_text(body);
    let tag = if first.contains("SESSION-A") { "a" } else { "b" };
    if last.contains("RESUMED-PROMPT") {
        return Reply::text(at(82.5), "Resumed.");
    }
    let pcts = [40.0, 70.0, 80.0, 81.0, 82.0];
    let step = scripted::tool_results(body);
    match pcts.get(step) {
        Some(pct) => Reply::bash(at(*pct), &format!("echo session {tag} step {step}")),
        None => Reply::text(at(82.4), "Stopping here."),
    }
}

/// Issue 17: two `claude -p` sessions cross CRITICAL at the same time in one project:
/// two handoffs are kept (one per session), nothing is archived, and each session is
/// told about its own.
#[test]
fn claude_code_two_sessions_at_critical_at_once() {
    with_hosts("claude -p two at once", |hosts| {
        let mut checks = Checks::new("claude -p two at once");
        let world = World::new(hosts);
        world.claude_setup();
        let project = world.project();
        let server = Scripted::start(SERVER_LIFETIME, two_sessions_reply);
        let runner = Runner::of(&world);
        let claude = world.hosts.claude.clone();
        let (a_run, b_run) = std::thread::scope(|scope| {
            let session = |name: &'static str, prompt: &'static str| {
                let (runner, claude, project, server) = (&runner, &claude, &project, &server);
                move || claude_with(runner, claude, project, name, server, &[], prompt)
            };
            let a = scope.spawn(session("01-a", "SESSION-A: run the steps."));
            // A moment apart, so their calls interleave rather than coincide.
            std::thread::sleep(Duration::from_millis(150));
            let b = scope.spawn(session("01-b", "SESSION-B: run the steps."));
            (a.join().expect("session A"), b.join().expect("session B"))
        });
        server.save(&logs(&world), "01-two-at-once");
        let (a, b) = (session_id(&a_run), session_id(&b_run));
        let summary = || format!("A:\n{}\nB:\n{}\n{}", a_run.describe(), b_run.describe(), server.summary());
        checks.check("two sessions ran", !a.is_empty() && !b.is_empty() && a != b, summary);
        let requests = server.main_requests();
        let of = |tag: &str| -> Vec<String> {
            requests
                .iter()
                .filter(|r| scripted::first_user_text(&r.body).contains(tag))
                .map(|r| r.text())
                .collect()
        };
        let (a_texts, b_texts) = (of("SESSION-A"), of("SESSION-B"));
        let spans = |tag: &str| -> (u128, u128) {
            let times: Vec<u128> = requests
                .iter()
                .filter(|r| scripted::first_user_text(&r.body).contains(tag))
                .map(|r| r.millis)
                .collect();
            (times.first().copied().unwrap_or(0), times.last().copied().unwrap_or(0))
        };
        let (sa, sb) = (spans("SESSION-A"), spans("SESSION-B"));
        checks.check(
            "they ran at the same time (their requests overlap)",
            sa.0 < sb.1 && sb.0 < sa.1,
            || format!("A {sa:?} ms, B {sb:?} ms"),
        );
        let a_said = warnings_of(&a_texts);
        let b_said = warnings_of(&b_texts);
        checks.check(
            "both crossed CRITICAL",
            a_said.iter().any(|(_, w)| w.starts_with(CRITICAL))
                && b_said.iter().any(|(_, w)| w.starts_with(CRITICAL)),
            || format!("A: {a_said:#?}\nB: {b_said:#?}\n{}", summary()),
        );
        let planning = project.join(".planning");
        let main = read_json(&planning.join("HANDOFF.json"));
        let owner = main["baton"]["session_id"].as_str().unwrap_or_default().to_string();
        let other = if owner == a { b.clone() } else { a.clone() };
        let beside_path = planning.join("handoffs").join("pending").join(&other).join("HANDOFF.json");
        let beside = read_json(&beside_path);
        checks.check(
            "two handoffs kept: GSD's .planning/HANDOFF.json for one session, handoffs/pending/<other>/ for the other",
            (owner == a || owner == b)
                && main["baton"]["trigger"] == "critical-context"
                && beside["baton"]["session_id"] == other.as_str()
                && beside["baton"]["trigger"] == "critical-context",
            || format!("main: {main:#}\nbeside ({}): {beside:#}", beside_path.display()),
        );
        let archive = planning.join("handoffs");
        let archived = files_in(&archive);
        checks.check(
            "no archive churn: nothing archived in .planning/handoffs/",
            archived.is_empty(),
            || format!("{archived:?}"),
        );
        // Each session's CRITICAL words name where its own handoff was saved at that
        // moment: GSD's file or its own pending folder, never the other session's.
        for (name, id, said) in [("A", &a, &a_said), ("B", &b, &b_said)] {
            let theirs = if id == &a { &b } else { &a };
            let words: Vec<&String> =
                said.iter().filter(|(_, w)| w.starts_with(CRITICAL)).map(|(_, w)| w).collect();
            let own_main = ".planning/HANDOFF.json".to_string();
            let own_pending = format!(".planning/handoffs/pending/{id}/HANDOFF.json");
            checks.check(
                &format!("{name}'s CRITICAL words name its own handoff (GSD's file or its pending folder), never the other's"),
                !words.is_empty()
                    && words.iter().all(|w| {
                        (w.contains(&format!("to {own_main}")) || w.contains(&format!("to {own_pending}")))
                            && !w.contains(&format!("pending/{theirs}"))
                    }),
                || format!("{words:#?}"),
            );
            let places: Vec<&str> = words
                .iter()
                .map(|w| {
                    if w.contains("handoffs/pending/") {
                        "its pending folder"
                    } else {
                        ".planning/HANDOFF.json"
                    }
                })
                .collect();
            eprintln!("real hosts: two at once: {name}'s CRITICAL words named {places:?}");
        }

        // Each session, resumed, is told about its own handoff (and the other's as another).
        for (label, id, own_rel) in [
            ("main", owner.clone(), ".planning/HANDOFF.json".to_string()),
            ("beside", other.clone(), format!(".planning/handoffs/pending/{other}/HANDOFF.json")),
        ] {
            let before = server.main_requests().len();
            let run = claude_in(
                &world,
                &project,
                &format!("02-resume-{label}"),
                &server,
                &["--resume", &id],
                "RESUMED-PROMPT: where were we?",
            );
            let first = server.main_requests().get(before).map(|r| r.text()).unwrap_or_default();
            let brief = newest_brief(&first);
            let theirs = if id == owner { &other } else { &owner };
            checks.check(
                &format!("resumed ({label}'s session): its brief names its own handoff, and the other's as another session's"),
                brief.contains("this session paused itself")
                    && brief.contains(&format!("Its handoff: {own_rel}"))
                    && brief.contains(&format!("session {}", &theirs[..8.min(theirs.len())])),
                || format!("brief: {brief:?}\n{}", run.describe()),
            );
        }
        server.save(&logs(&world), "02-two-at-once-resumed");
        let archived = files_in(&archive);
        checks.check("still nothing archived after both resumed", archived.is_empty(), || {
            format!("{archived:?}")
        });
        checks.finish();
    });
}

// ---- 3. Replies as fast as the transcript flush (issue 17) ----

/// The figures (used %) the fast script's replies report: 65 % is crossed by reply 5,
/// 75 % by reply 10.
const FAST_PCTS: &[u64] = &[20, 40, 55, 60, 63, 66, 68, 70, 72, 74, 76, 78, 80, 82, 84];
/// A session whose first reply is already past 65 % (no earlier figure), 75 % by reply 3.
const FAST_FIRST_PCTS: &[u64] = &[70, 71, 73, 76, 78, 80];
/// The rounds: the figures, and the replies that cross 65 % and 75 %.
const FAST_ROUNDS: [(&[u64], usize, usize); 5] =
    [(FAST_PCTS, 5, 10), (FAST_PCTS, 5, 10), (FAST_PCTS, 5, 10), (FAST_PCTS, 5, 10), (FAST_FIRST_PCTS, 0, 3)];
const FAST_PROMPT: &str = "FAST: run the scripted steps, one shell command at a time.";

/// Issue 17: `claude -p` against a stand-in that answers at once: each crossing is warned
/// on its call or the next, and a figure not read from the call's own reply says so.
#[test]
fn claude_code_fast_replies_are_warned_in_time_or_estimated() {
    with_hosts("claude -p fast replies", |hosts| {
        let mut checks = Checks::new("claude -p fast replies");
        let mut estimated = 0;
        let mut exact = 0;
        for (round, (pcts, warn, crit)) in FAST_ROUNDS.iter().copied().enumerate() {
            let round = round + 1;
            let world = World::new(hosts);
            world.claude_setup();
            // No pause: every call after CRITICAL is one more figure to check.
            common::write(
                &world.sandbox.user_config(),
                &json!({"handoff": {"on_critical": "advise"}}).to_string(),
            );
            let server = Scripted::start_paced(SERVER_LIFETIME, Duration::ZERO, move |body| {
                let step = scripted::tool_results(body);
                match pcts.get(step) {
                    Some(pct) => Reply::bash(at(*pct as f64), &format!("echo fast step {step}")),
                    None => Reply::text(at(85.0), crate::real_hosts_support::server::FINAL_TEXT),
                }
            });
            let project = world.project();
            let run = claude_in(&world, &project, "01-fast", &server, &[], FAST_PROMPT);
            server.save(&logs(&world), "01-fast");
            // The first request of each step of the session (a retry is not a new step).
            let mut steps: Vec<Recorded> = vec![];
            for r in server.main_requests() {
                if scripted::first_user_text(&r.body).contains("FAST:")
                    && !steps.iter().any(|s| s.turn == r.turn)
                {
                    steps.push(r);
                }
            }
            let texts: Vec<String> = steps.iter().map(|r| r.text()).collect();
            let summary = || format!("{}\n{}", run.describe(), server.summary());
            checks.check(
                &format!("round {round}: the session ran every step"),
                steps.len() > pcts.len(),
                summary,
            );
            let said = warnings_of(&texts);
            let first_at = |level: &str| said.iter().find(|(_, w)| w.starts_with(level)).map(|(i, _)| *i);
            let any_at = said.first().map(|(i, _)| *i);
            // Request i carries what the hook said after the call reply i-1 issued.
            checks.check(
                &format!(
                    "round {round}: 65 % (crossed by reply {warn}) is warned in request {} or {}",
                    warn + 1,
                    warn + 2
                ),
                any_at.is_some_and(|i| i == warn + 1 || i == warn + 2),
                || format!("{said:#?}"),
            );
            checks.check(
                &format!(
                    "round {round}: 75 % (crossed by reply {crit}) is CRITICAL in request {} or {}",
                    crit + 1,
                    crit + 2
                ),
                first_at(CRITICAL).is_some_and(|i| i == crit + 1 || i == crit + 2),
                || format!("{said:#?}"),
            );
            checks.check(
                &format!("round {round}: nothing is warned before its crossing"),
                said.iter().all(|(i, w)| {
                    (w.starts_with(WARNING) && *i > warn) || (w.starts_with(CRITICAL) && *i > crit)
                }),
                || format!("{said:#?}"),
            );
            for (i, words) in &said {
                let own = i.checked_sub(1).and_then(|r| pcts.get(r)).copied();
                let stated = usage_percent(words);
                let from_own = matches!((stated, own), (Some(s), Some(o)) if s.abs_diff(o) <= 1);
                let marked = words.contains("(estimated)");
                if marked {
                    estimated += 1;
                } else {
                    exact += 1;
                }
                checks.check(
                    &format!("round {round}: request {i}: the figure is the call's own reply's, or says (estimated)"),
                    from_own || marked,
                    || format!("stated {stated:?}, own reply {own:?}: {words}"),
                );
            }
        }
        eprintln!(
            "real hosts: fast replies: {exact} warnings with the call's own figure, {estimated} marked (estimated)"
        );
        checks.finish();
    });
}

// ---- 4. Codex: the compact brief inside the compacting turn (issue 18) ----

const CODEX_COMPACT_ASK: &str = "CONTEXT CHECKPOINT COMPACTION";
const COMPACT_BRIEF: &str = "baton: details from the snapshot taken just before the compaction";

/// Codex's side: two calls, the second reply past `model_auto_compact_token_limit` (100k),
/// so Codex compacts inside the turn; then two more calls and the final text.
fn codex_reply(body: &Value) -> Reply {
    let text = body.to_string();
    if text.contains("after-compact-2") {
        Reply::text(40_000, crate::real_hosts_support::server::FINAL_TEXT)
    } else if text.contains("after-compact-1") {
        Reply::bash(35_000, "echo after-compact-2")
    } else if text.contains("Stand-in summary.") {
        Reply::bash(30_000, "echo after-compact-1")
    } else if text.contains("before-compact-1") {
        Reply::bash(110_000, "echo should-not-run")
    } else if text.contains("before-compact-0") {
        Reply::bash(110_000, "echo before-compact-1")
    } else {
        Reply::bash(20_000, "echo before-compact-0")
    }
}

/// Issue 18: Codex compacts automatically inside a turn; the request after the compaction,
/// in that same turn, carries baton's compact brief, and only once.
#[test]
fn codex_compact_brief_reaches_the_model_in_the_same_turn() {
    with_hosts("codex exec compaction", |hosts| {
        let mut checks = Checks::new("codex exec compaction");
        let world = World::new(hosts);
        world.baton_install("codex");
        let server = Scripted::start(SERVER_LIFETIME, codex_reply);
        // 100k: far below CRITICAL of the 190k Codex works with, so the brief is all baton adds.
        let config = format!(
            "model = \"{CODEX_MODEL}\"\nmodel_provider = \"standin\"\nmodel_context_window = 200000\n\
             model_auto_compact_token_limit = 100000\n\
             [model_providers.standin]\nname = \"stand-in\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\n\
             env_key = \"STANDIN_API_KEY\"\nrequest_max_retries = 0\nstream_max_retries = 0\n",
            server.base_url()
        );
        common::write(&world.codex_home().join("config.toml"), &config);
        let node = world.hosts.node_dir.join("node");
        let codex = world.hosts.codex.display().to_string();
        let args = [
            codex.as_str(),
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-hook-trust",
            "-s",
            "danger-full-access",
            "Run the scripted steps.",
        ];
        let project = world.project();
        let run = run_in(
            &world,
            &project,
            "01-codex",
            &node,
            &args,
            &[("STANDIN_API_KEY", "stand-in".into())],
            Duration::from_secs(120),
        );
        server.save(&logs(&world), "01-codex-compaction");
        let recorded: Vec<Recorded> =
            server.recorded().into_iter().filter(|r| r.path.ends_with("/responses")).collect();
        let summary = || format!("{}\n{}", run.describe(), server.summary());
        checks.check("codex exec succeeded", run.status.is_some_and(|s| s.success()), summary);
        let compaction = recorded
            .iter()
            .position(|r| input_texts(&r.body, "user").last().is_some_and(|t| t.contains(CODEX_COMPACT_ASK)));
        checks.check(
            "Codex compacted inside the turn (it asked the stand-in for the summary)",
            compaction.is_some(),
            summary,
        );
        let Some(compaction) = compaction else { return checks.finish() };
        let after: Vec<&Recorded> = recorded[compaction + 1..].iter().filter(|r| r.main).collect();
        let prompts = |r: &Recorded| {
            input_texts(&r.body, "user").iter().filter(|t| t.contains("Run the scripted steps.")).count()
        };
        checks.check(
            "the requests after it belong to the same turn (the one prompt, no new user turn)",
            !after.is_empty()
                && after.iter().all(|r| {
                    prompts(r) == 1 && input_texts(&r.body, "user").iter().all(|t| !t.contains("Carry on"))
                }),
            summary,
        );
        let briefs = |r: &Recorded| {
            input_texts(&r.body, "developer").iter().filter(|t| t.contains(COMPACT_BRIEF)).count()
        };
        let first_after = after.first().map(|r| briefs(r)).unwrap_or(0);
        checks.check(
            "the first request after the compaction, in the same turn, carries baton's compact brief",
            first_after == 1,
            || {
                format!(
                    "briefs per request after the compaction: {:?}\n{}",
                    after.iter().map(|r| briefs(r)).collect::<Vec<_>>(),
                    summary()
                )
            },
        );
        checks.check(
            "and it is given once: no request of the turn holds it twice",
            after.iter().all(|r| briefs(r) == 1),
            || {
                format!(
                    "briefs per request after the compaction: {:?}",
                    after.iter().map(|r| briefs(r)).collect::<Vec<_>>()
                )
            },
        );
        let before: Vec<&Recorded> = recorded[..compaction].iter().filter(|r| r.main).collect();
        checks.check(
            "no warning before the compaction (100k of 190k)",
            before.iter().all(|r| !r.text().contains("CONTEXT ")),
            summary,
        );
        checks.finish();
    });
}

// ---- 5. Gemini CLI: a project install in an untrusted folder (issue 18) ----

fn gemini_run(world: &World, server: &Server, name: &str, extra: &[&str]) -> Run {
    let node = world.hosts.node_dir.join("node");
    let gemini = world.hosts.gemini.display().to_string();
    // No GEMINI_CLI_TRUST_WORKSPACE: the folder's trust is Gemini's own.
    let mut args = vec![gemini.as_str(), "-m", GEMINI_MODEL, "--yolo"];
    args.extend_from_slice(extra);
    args.extend(["-p", "Carry on."]);
    let env = vec![("GOOGLE_GEMINI_BASE_URL", server.base_url()), ("GEMINI_API_KEY", "stand-in".to_string())];
    run_in(world, &world.project(), name, &node, &args, &env, Duration::from_secs(120))
}

/// Every file under baton's state folder, by path: what a hook run leaves behind.
fn state_files(world: &World) -> Vec<String> {
    let mut out = vec![];
    let mut stack = vec![world.root().join("state")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let modified = entry.metadata().ok().and_then(|m| m.modified().ok());
                out.push(format!("{} {modified:?}", path.display()));
            }
        }
    }
    out.sort();
    out
}

/// An interactive leg of the untrusted-folder scenario: `gemini` in tmux, then a prompt.
/// Untrusted: "Don't trust" at its folder-trust question; the model is asked, no hook
/// runs, and baton's install still warns (the folder is now explicitly distrusted).
/// Trusted: no question, and the first request carries the brief.
fn gemini_interactive(checks: &mut Checks, world: &World, pairs: &[(&str, &str)], trusted: bool) {
    use crate::real_hosts_support::{Mode, Tmux, mode, skipped, tmux_available};
    if !tmux_available() && mode() != Mode::Required {
        skipped("gemini untrusted folder, interactive", "tmux is not on PATH");
        return;
    }
    let label = if trusted { "interactive, trusted" } else { "interactive, untrusted" };
    let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
    let mut env = world.env();
    env.push(("GOOGLE_GEMINI_BASE_URL".into(), server.base_url()));
    env.push(("GEMINI_API_KEY".into(), "stand-in".into()));
    let node = world.hosts.node_dir.join("node");
    let gemini = world.hosts.gemini.display().to_string();
    let state_before = state_files(world);
    let tmux = match Tmux::start(world, &env, &node, &[gemini.as_str(), "-m", GEMINI_MODEL]) {
        Ok(tmux) => tmux,
        Err(reason) => panic!("gemini interactive: {reason}"),
    };
    let question = "Do you trust the files in this folder?";
    if trusted {
        let ready = tmux.wait_for(Duration::from_secs(60), |pane| pane.contains("Type your message"));
        checks.check(
            &format!("{label}: the prompt is shown, with no trust question"),
            ready && !tmux.pane().contains(question),
            || tmux.pane(),
        );
    } else {
        let asked = tmux.wait_for(Duration::from_secs(60), |pane| pane.contains(question));
        checks.check(&format!("{label}: Gemini asks whether to trust the folder"), asked, || tmux.pane());
        // "3. Don't trust" (the digit picks it; the Enter after it lands on the empty prompt).
        let declined = tmux.type_line("3", || tmux.pane().contains("Type your message"));
        checks.check(
            &format!("{label}: the user answers Don't trust, the prompt is shown"),
            declined,
            || tmux.pane(),
        );
    }
    let sent = tmux.type_line("Carry on.", || !server.main_requests().is_empty());
    checks.check(&format!("{label}: the prompt reached the model"), sent, || {
        format!("{}\n{}", tmux.pane(), server.summary())
    });
    let answered = tmux.wait_for(Duration::from_secs(60), |pane| {
        pane.contains(crate::real_hosts_support::server::FINAL_TEXT)
    });
    checks.check(&format!("{label}: the session ran its turn"), answered, || tmux.pane());
    world
        .save_requests(&server, if trusted { "03-trusted-interactive" } else { "01b-untrusted-interactive" });
    drop(tmux);
    let briefed = server.main_requests().first().is_some_and(|r| r.text().contains(BRIEF));
    let state_after = state_files(world);
    if trusted {
        checks.check(
            &format!("{label}: the first request carries the brief (the project's hooks ran)"),
            briefed,
            || server.summary(),
        );
        return;
    }
    checks.check(
        &format!("{label}: no brief reached the model (no project hook ran)"),
        server.main_requests().iter().all(|r| !r.text().contains(BRIEF)),
        || server.summary(),
    );
    checks.check(&format!("{label}: baton's state folder is untouched"), state_before == state_after, || {
        format!("before: {state_before:#?}\nafter: {state_after:#?}")
    });
    let rules =
        std::fs::read_to_string(world.sandbox.home().join(".gemini/trustedFolders.json")).unwrap_or_default();
    let again = world.sandbox.run_with(&["install", "--host", "gemini", "--scope", "project"], b"", pairs);
    let said = format!("{}{}", common::stdout(&again), common::stderr(&again));
    checks.check(
        "a folder distrusted at Gemini's question (DO_NOT_TRUST) is still warned about",
        rules.contains("DO_NOT_TRUST") && said.contains("is not trusted"),
        || format!("trustedFolders.json: {rules}\n{said}"),
    );
}

/// Issue 18: `baton install --host gemini --scope project` in a folder Gemini CLI does
/// not trust says so, and it is true: Gemini does not run the project's hooks there
/// until the folder is trusted.
#[test]
fn gemini_project_install_in_an_untrusted_folder_is_warned_about() {
    with_hosts("gemini untrusted folder", |hosts| {
        let mut checks = Checks::new("gemini untrusted folder");
        let world = World::new(hosts);
        let gemini_home = world.sandbox.home().join(".gemini");
        let settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false}
        });
        common::write(&gemini_home.join("settings.json"), &format!("{settings:#}"));
        let env = world.env();
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let install =
            world.sandbox.run_with(&["install", "--host", "gemini", "--scope", "project"], b"", &pairs);
        let said = format!("{}{}", common::stdout(&install), common::stderr(&install));
        checks.check(
            "the project install succeeds and warns that the folder is not trusted",
            install.status.success()
                && said.contains("runs a project's hooks (.gemini/settings.json) only in a folder you trust")
                && said.contains("is not trusted"),
            || said.clone(),
        );
        checks.check(
            "baton's hooks are in the project's .gemini/settings.json",
            {
                let project_settings = std::fs::read_to_string(world.project().join(".gemini/settings.json"))
                    .unwrap_or_default();
                project_settings.contains(" hook")
            },
            || said.clone(),
        );
        // A pending handoff: a session whose SessionStart hook runs is briefed from it.
        let paused = world.sandbox.run_with(&["pause", "--checkpoint", "off"], b"", &pairs);
        checks
            .check("baton pause wrote a handoff", world.handoff_path().is_file(), || common::stderr(&paused));

        // Gemini CLI 0.61.0 does not start `-p` at all in a folder it does not trust.
        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        let state_before = state_files(&world);
        let untrusted = gemini_run(&world, &server, "01-untrusted", &[]);
        world.save_requests(&server, "01-untrusted");
        let state_after = state_files(&world);
        checks.check(
            "untrusted: gemini -p refuses to run (not a trusted directory), asking the model nothing",
            untrusted.status.is_some_and(|s| !s.success())
                && untrusted.stderr.contains("not running in a trusted directory")
                && server.main_requests().is_empty(),
            || format!("{}\n{}", untrusted.describe(), server.summary()),
        );
        checks.check(
            "untrusted: no baton hook ran (baton's state folder is untouched)",
            state_before == state_after,
            || format!("before: {state_before:#?}\nafter: {state_after:#?}"),
        );
        drop(server);

        // Interactive: Gemini asks whether to trust the folder; the user says no, and the
        // session goes on untrusted, without the project's hooks.
        gemini_interactive(&mut checks, &world, &pairs, false);

        // The user trusts the folder (what Gemini's own prompt writes).
        let location = world.project().canonicalize().unwrap_or_else(|_| world.project());
        common::write(
            &gemini_home.join("trustedFolders.json"),
            &json!({location.display().to_string(): "TRUST_FOLDER"}).to_string(),
        );
        let again =
            world.sandbox.run_with(&["install", "--host", "gemini", "--scope", "project"], b"", &pairs);
        let said = format!("{}{}", common::stdout(&again), common::stderr(&again));
        checks.check(
            "once trusted, the install says nothing about trust",
            again.status.success() && !said.contains("is not trusted"),
            || said.clone(),
        );
        let server = Server::start(vec![Step::text(20_000)], SERVER_LIFETIME);
        let state_before = state_files(&world);
        let trusted = gemini_run(&world, &server, "02-trusted", &[]);
        world.save_requests(&server, "02-trusted");
        let requests = server.main_requests();
        checks.check(
            "trusted: gemini -p runs the project's hooks (its first request carries the brief)",
            requests.first().is_some_and(|r| r.text().contains(BRIEF)),
            || format!("{}\n{}", trusted.describe(), server.summary()),
        );
        checks.check(
            "trusted: baton's hooks left their state (the measure above can see a hook run)",
            state_files(&world) != state_before,
            || format!("{:#?}", state_files(&world)),
        );
        drop(server);
        // And interactively, from a new handoff.
        let paused = world.sandbox.run_with(&["pause", "--checkpoint", "off"], b"", &pairs);
        checks
            .check("baton pause wrote a second handoff", paused.status.success(), || common::stderr(&paused));
        gemini_interactive(&mut checks, &world, &pairs, true);
        checks.finish();
    });
}
