//! Whose context, which window, which cadence (issues 17 and 18) on the real Claude Code
//! (`claude -p`) against the stand-in model server: a 1M model at 15 % is not warned and
//! an unknown model takes no CRITICAL action; a turn that starts past 65 % is warned in
//! its first request; a parallel batch is warned once; a subagent is judged on its own
//! context and never on its parent's; the compaction audit gives back only what the
//! summary dropped; a resumed session is told about itself.
//!
//! The conversation-shaped scenarios use [`Scripted`], whose replies are decided per
//! request (a subagent's requests are told apart from its parent's by their first user
//! message, the prompt the parent gave the `Agent` tool).

use std::time::Duration;

use serde_json::{Value, json};

use super::{CRITICAL, Checks, SERVER_LIFETIME, WARNING, first_per_turn, turns_with};
use crate::real_hosts_support::scripted::{self, Reply, Scripted};
use crate::real_hosts_support::server::{Server, Step};
use crate::real_hosts_support::{API_KEY, CLAUDE_200K_MODEL, Run, World, with_hosts};

const PROMPT: &str = "Run the scripted steps, one shell command at a time.";

/// `claude -p` against the scripted server, with `args` before `-p <prompt>`.
fn claude_p(world: &World, server: &Scripted, args: &[&str], prompt: &str) -> Run {
    let mut all = vec!["--allowedTools", "Bash,Read,Agent", "--output-format", "json"];
    all.extend_from_slice(args);
    all.extend(["-p", prompt]);
    world.run(&world.hosts.claude, &all, &claude_env(server), Duration::from_secs(120))
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

fn logs(world: &World) -> std::path::PathBuf {
    world.root().join("logs")
}

/// The session id `claude -p --output-format json` printed.
fn session_id(run: &Run) -> Option<String> {
    let value: Value = serde_json::from_str(run.stdout.trim()).ok()?;
    value["session_id"].as_str().map(str::to_string)
}

fn at(window: u64, pct: f64) -> u64 {
    (window as f64 * pct / 100.0) as u64
}

/// Issue 18: the window comes from facts, and a table row is trusted only as far as it can be.
#[test]
fn claude_code_windows_of_new_and_unknown_models() {
    with_hosts("claude -p windows", |hosts| {
        let mut checks = Checks::new("claude -p windows");
        let world = World::new(hosts);
        world.claude_setup();

        // 1. claude-opus-4-7 has a native 1M window: 140-152k is 14-15 %, nothing to say.
        let server = Server::start(
            vec![
                Step::tool(40_000, "echo step 0"),
                Step::tool(140_000, "echo step 1"),
                Step::tool(150_000, "echo step 2"),
                Step::tool(152_000, "echo step 3"),
                Step::text(153_000),
            ],
            SERVER_LIFETIME,
        );
        let run = world.claude_print(&server, Some("claude-opus-4-7"), PROMPT);
        world.save_requests(&server, "01-opus-4-7");
        let requests = server.main_requests();
        checks.check("opus 4.7: session ran all turns", first_per_turn(requests.clone()).len() >= 5, || {
            format!("{}\n{}", run.describe(), server.summary())
        });
        let models: Vec<String> =
            requests.iter().filter_map(|r| r.body["model"].as_str().map(str::to_string)).collect();
        checks.check("opus 4.7: the host asked for claude-opus-4-7", models.iter().all(|m| m == "claude-opus-4-7"), || {
            format!("{models:?}")
        });
        let warned = turns_with(&requests, "CONTEXT ");
        checks.check("opus 4.7: not warned at 150k (15 % of 1M)", warned.is_empty(), || {
            format!("warned in turns {warned:?}\n{}", server.summary())
        });
        checks.check("opus 4.7: no handoff", !world.handoff_path().exists(), || "HANDOFF.json written".into());
        checks.check("opus 4.7: no checkpoint ref", world.baton_refs().is_empty(), || {
            format!("{:?}", world.baton_refs())
        });
        drop(server);

        // 2. An id the table does not know: its window is assumed (200k), so 160-170k may be
        //    80-85 % or 16 %; the words may say so, but no CRITICAL action rests on it.
        let unknown = "claude-nova-9-9";
        let server = Server::start(
            vec![
                Step::tool(40_000, "echo step 0"),
                Step::tool(140_000, "echo step 1"),
                Step::tool(160_000, "echo step 2"),
                Step::tool(170_000, "echo step 3"),
                Step::text(171_000),
            ],
            SERVER_LIFETIME,
        );
        let run = world.claude_print(&server, Some(unknown), PROMPT);
        world.save_requests(&server, "02-unknown-model");
        let requests = first_per_turn(server.main_requests());
        checks.check("unknown id: session ran all turns", requests.len() >= 5, || {
            format!("{}\n{}", run.describe(), server.summary())
        });
        let models: Vec<String> =
            requests.iter().filter_map(|r| r.body["model"].as_str().map(str::to_string)).collect();
        checks.check("unknown id: the host asked for it", models.iter().all(|m| m == unknown), || {
            format!("{models:?}")
        });
        checks.check("unknown id: no handoff at 170k of an assumed window", !world.handoff_path().exists(), || {
            std::fs::read_to_string(world.handoff_path()).unwrap_or_default()
        });
        checks.check("unknown id: no checkpoint ref", world.baton_refs().is_empty(), || {
            format!("{:?}", world.baton_refs())
        });
        let said: Vec<String> = requests
            .iter()
            .filter_map(|r| {
                let text = r.text();
                text.find("CONTEXT ").map(|at| text[at..].chars().take(600).collect())
            })
            .collect();
        checks.check(
            "unknown id: whatever is said names the window as not known",
            said.iter().all(|s| s.contains("does not know this model")),
            || format!("{said:#?}"),
        );
        eprintln!("real hosts: unknown id: said {said:#?}");
        checks.finish();
    });
}

const SUBAGENT_TASK: &str = "SUBAGENT-TASK: run two shell commands and report back.";
/// The subagent's second command: what baton has written by then (after the subagent's
/// first tool call went through the hooks).
const PROBE: &str = "test -e .planning/HANDOFF.json && echo HANDOFF-PRESENT || echo HANDOFF-ABSENT; \
                     echo REFS-$(git for-each-ref refs/baton | wc -l)";

/// A parent that hands one task to a subagent (the `Agent` tool, in the foreground) at
/// `parent` tokens, then calls a shell command of its own; the subagent reports `sub`
/// tokens, runs a shell command and the probe, and reports back.
fn subagent_server(parent: u64, sub: u64) -> Scripted {
    Scripted::start(SERVER_LIFETIME, move |body| {
        if is_subagent(body) {
            match scripted::tool_results(body) {
                0 => Reply::bash(sub, "echo subagent step 0"),
                1 => Reply::bash(sub + 500, PROBE),
                _ => Reply::text(sub + 1000, "Subagent done: both commands ran."),
            }
        } else {
            match scripted::tool_results(body) {
                0 => Reply::tools(
                    parent,
                    &[(
                        "Agent",
                        json!({"description": "Run two commands", "prompt": SUBAGENT_TASK,
                               "subagent_type": "general-purpose", "run_in_background": false}),
                    )],
                ),
                1 => Reply::bash(parent + 500, "echo parent step 1"),
                _ => Reply::text(parent + 1000, crate::real_hosts_support::server::FINAL_TEXT),
            }
        }
    })
}

fn is_subagent(body: &Value) -> bool {
    scripted::first_user_text(body).contains(SUBAGENT_TASK)
}

/// The warnings (`CONTEXT …` up to the end of their sentence run) a request adds to what
/// the previous request of the same context already held.
fn new_warnings(previous: Option<&str>, text: &str) -> Vec<String> {
    let all = |t: &str| -> Vec<String> {
        t.match_indices("CONTEXT ").map(|(at, _)| t[at..].chars().take(400).collect()).collect()
    };
    let before = previous.map(all).unwrap_or_default();
    let mut now = all(text);
    for old in before {
        if let Some(i) = now.iter().position(|n| *n == old) {
            now.remove(i);
        }
    }
    now
}

/// What a subagent session showed: the requests of each context, in order.
struct Split {
    parent: Vec<String>,
    subagent: Vec<String>,
}

fn split(server: &Scripted) -> Split {
    let mut out = Split { parent: vec![], subagent: vec![] };
    for request in server.main_requests() {
        // Claude Code's own side turns with tools (a deferred-tools notice) are neither.
        if is_subagent(&request.body) {
            out.subagent.push(request.text());
        } else if scripted::first_user_text(&request.body).contains(PROMPT) {
            out.parent.push(request.text());
        }
    }
    out
}

/// Every warning a context was given: the ones each request added to its previous one.
fn warnings_of(requests: &[String]) -> Vec<(usize, String)> {
    let mut out = vec![];
    for (i, text) in requests.iter().enumerate() {
        let previous = i.checked_sub(1).map(|p| requests[p].as_str());
        out.extend(new_warnings(previous, text).into_iter().map(|w| (i, w)));
    }
    out
}

const SUBAGENT_WORDS: &str = "your own context as a subagent";

/// Issue 17: a subagent's context is its own.
#[test]
fn claude_code_subagent_contexts() {
    with_hosts("claude -p subagents", |hosts| {
        let mut checks = Checks::new("claude -p subagents");
        let window = 200_000;

        // 1. The parent at 80 %, its subagent at 10 %.
        let world = World::new(hosts);
        world.claude_setup();
        let server = subagent_server(at(window, 80.0), at(window, 10.0));
        let run = claude_p(&world, &server, &["--model", CLAUDE_200K_MODEL], PROMPT);
        server.save(&logs(&world), "01-subagent-low");
        let seen = split(&server);
        let summary = || format!("{}\n{}", run.describe(), server.summary());
        checks.check(
            "low subagent: the subagent ran its two commands, the parent its own after",
            seen.subagent.len() >= 3 && seen.parent.len() >= 3,
            summary,
        );
        let sub_warnings = warnings_of(&seen.subagent);
        checks.check("low subagent: the subagent at 10 % is never warned", sub_warnings.is_empty(), || {
            format!("{sub_warnings:#?}")
        });
        let probe = seen.subagent.iter().find(|t| t.contains("REFS-")).cloned().unwrap_or_default();
        checks.check(
            "low subagent: its calls wrote no handoff and no checkpoint (probed by its own second command)",
            probe.contains("HANDOFF-ABSENT") && probe.contains("REFS-0"),
            || format!("probe output not as expected:\n{}", summary()),
        );
        let parent_warnings = warnings_of(&seen.parent);
        checks.check(
            "low subagent: the parent at 80 % is warned CRITICAL on its own next call (after the Agent call)",
            parent_warnings.first().is_some_and(|(i, w)| *i == 1 && w.starts_with(CRITICAL)),
            || format!("{parent_warnings:#?}"),
        );
        checks.check(
            "low subagent: the parent's words are not a subagent's",
            parent_warnings.iter().all(|(_, w)| !w.contains("subagent")),
            || format!("{parent_warnings:#?}"),
        );
        let handoff: Value = std::fs::read(world.handoff_path())
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        checks.check(
            "low subagent: the parent's CRITICAL wrote its handoff",
            handoff["baton"]["trigger"] == "critical-context" && handoff["baton"]["figures"]["used_pct"] == 80,
            || format!("{handoff:#}"),
        );
        drop(server);
        drop(world);

        // 2. The parent at 20 %, its subagent at 80 %.
        let world = World::new(hosts);
        world.claude_setup();
        let server = subagent_server(at(window, 20.0), at(window, 80.0));
        let run = claude_p(&world, &server, &["--model", CLAUDE_200K_MODEL], PROMPT);
        server.save(&logs(&world), "02-subagent-high");
        let seen = split(&server);
        let summary = || format!("{}\n{}", run.describe(), server.summary());
        checks.check(
            "high subagent: the subagent ran its two commands, the parent its own after",
            seen.subagent.len() >= 3 && seen.parent.len() >= 3,
            summary,
        );
        let sub_warnings = warnings_of(&seen.subagent);
        checks.check(
            "high subagent: the subagent at 80 % is warned on its first call, in a subagent's words",
            sub_warnings.first().is_some_and(|(i, w)| *i == 1 && w.starts_with(CRITICAL))
                && sub_warnings.iter().all(|(_, w)| w.contains(SUBAGENT_WORDS) && w.contains("Usage at 80%")),
            || format!("{sub_warnings:#?}\n{}", summary()),
        );
        let probe = seen.subagent.iter().find(|t| t.contains("REFS-")).cloned().unwrap_or_default();
        checks.check(
            "high subagent: its CRITICAL wrote no handoff and no checkpoint",
            probe.contains("HANDOFF-ABSENT") && probe.contains("REFS-0"),
            || format!("probe output not as expected:\n{}", summary()),
        );
        let parent_warnings = warnings_of(&seen.parent);
        checks.check("high subagent: the parent at 20 % is not warned", parent_warnings.is_empty(), || {
            format!("{parent_warnings:#?}")
        });
        checks.check(
            "high subagent: no handoff after the session",
            !world.handoff_path().exists() && world.baton_refs().is_empty(),
            || std::fs::read_to_string(world.handoff_path()).unwrap_or_default(),
        );
        checks.finish();
    });
}

/// The requests of `server` whose newest user message is `needle`'s turn: its first
/// request (the prompt itself is the newest user message).
fn first_of_turn<'a>(requests: &'a [crate::real_hosts_support::server::Recorded], needle: &str) -> Option<&'a crate::real_hosts_support::server::Recorded> {
    requests.iter().find(|r| scripted::last_user_text(&r.body).contains(needle))
}

/// Issue 18: the turn's start and a parallel batch are context points, under one debounce.
#[test]
fn claude_code_turn_start_and_parallel_batch() {
    with_hosts("claude -p turn start, batch", |hosts| {
        let mut checks = Checks::new("claude -p turn start, batch");
        let window = 200_000;

        // 1. A session that reached 70 % while its hooks were off (`disableAllHooks`, or
        //    baton installed mid-session) goes on with `--continue`: its next turn starts
        //    past 65 %, and that turn's first request, before any tool call, is warned.
        let world = World::new(hosts);
        world.claude_setup();
        let server = Scripted::start(SERVER_LIFETIME, move |body| {
            let last = scripted::last_user_text(body);
            if last.contains("FIRST-PROMPT") {
                Reply::text(at(window, 70.0), "Here is the long answer.")
            } else if last.contains("SECOND-PROMPT") {
                Reply::bash(at(window, 70.5), "echo turn 2")
            } else {
                Reply::text(at(window, 71.0), "Turn done.")
            }
        });
        let hooks_off = json!({"disableAllHooks": true}).to_string();
        let first = claude_p(
            &world,
            &server,
            &["--model", CLAUDE_200K_MODEL, "--settings", &hooks_off],
            "FIRST-PROMPT: explain at length.",
        );
        let before = server.main_requests().len();
        let second =
            claude_p(&world, &server, &["--model", CLAUDE_200K_MODEL, "--continue"], "SECOND-PROMPT: run one command.");
        server.save(&logs(&world), "01-turn-start");
        let requests = server.main_requests();
        let summary = || format!("{}\n{}\n{}", first.describe(), second.describe(), server.summary());
        checks.check("turn start: the first leg ran unwarned (hooks off)", before >= 1 && warnings_of(&requests[..before].iter().map(|r| r.text()).collect::<Vec<_>>()).is_empty(), summary);
        let opening = first_of_turn(&requests, "SECOND-PROMPT");
        let said = opening.map(|r| new_warnings(requests.get(before.wrapping_sub(1)).map(|p| p.text()).as_deref(), &r.text())).unwrap_or_default();
        checks.check(
            "turn start: the turn's first request (no tool call yet) carries the warning at 70 %",
            opening.is_some_and(|r| r.turn == 0)
                && said.len() == 1
                && said[0].starts_with(WARNING)
                && said[0].contains("Usage at 70%"),
            || format!("new warnings {said:#?}\n{}", summary()),
        );
        let prompt_context = opening.map(|r| scripted::last_user_text(&r.body)).unwrap_or_default();
        checks.check(
            "turn start: it rides UserPromptSubmit's context, next to the prompt",
            prompt_context.contains("UserPromptSubmit") && prompt_context.contains(WARNING),
            || prompt_context.chars().take(800).collect(),
        );
        let all = warnings_of(&requests.iter().map(|r| r.text()).collect::<Vec<_>>());
        checks.check("turn start: warned once in the whole turn (no repeat at the tool call or Stop)", all.len() == 1, || {
            format!("{all:#?}")
        });
        drop(server);
        drop(world);

        // 2. One reply with three parallel tool calls crosses 65 %: one warning, not three.
        let world = World::new(hosts);
        world.claude_setup();
        let server = Scripted::start(SERVER_LIFETIME, move |body| match scripted::tool_results(body) {
            0 => Reply::bash(at(window, 60.0), "echo step 0"),
            1 => Reply::tools(
                at(window, 67.5),
                &[
                    ("Bash", json!({"command": "echo batch a", "description": "batch a"})),
                    ("Bash", json!({"command": "echo batch b", "description": "batch b"})),
                    ("Bash", json!({"command": "echo batch c", "description": "batch c"})),
                ],
            ),
            4 => Reply::bash(at(window, 68.0), "echo after the batch"),
            _ => Reply::text(at(window, 68.5), crate::real_hosts_support::server::FINAL_TEXT),
        });
        let run = claude_p(&world, &server, &["--model", CLAUDE_200K_MODEL], PROMPT);
        server.save(&logs(&world), "02-batch");
        let requests: Vec<String> = first_per_turn(server.main_requests()).iter().map(|r| r.text()).collect();
        let turns: Vec<usize> = first_per_turn(server.main_requests()).iter().map(|r| r.turn).collect();
        let summary = || format!("{}\n{}", run.describe(), server.summary());
        checks.check("batch: the three calls ran in one reply", turns.contains(&4) && turns.contains(&5), summary);
        let said = warnings_of(&requests);
        checks.check(
            "batch: exactly one warning, in the request right after the batch",
            said.len() == 1 && said[0].0 == turns.iter().position(|t| *t == 4).unwrap_or(usize::MAX) && said[0].1.starts_with(WARNING),
            || format!("turns {turns:?}, warnings {said:#?}\n{}", summary()),
        );
        checks.finish();
    });
}
