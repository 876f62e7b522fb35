//! What the user sees on Claude Code's own screen (issues 18 and 20), read from the
//! captured tmux pane of the interactive Claude Code against the stand-in server: baton's
//! meter beside Claude Code's own "N% context used", baton's notices at the WARNING and at
//! the CRITICAL handoff, the rate limits when the payload carries them, and the window the
//! statusline payload gave winning over the table's for the next tool call.

use std::time::Duration;

use super::{CRITICAL, Checks, SERVER_LIFETIME, WARNING, first_per_turn, turns_with};
use crate::real_hosts_support::server::{FINAL_TEXT, Server, Step};
use crate::real_hosts_support::{self, CLAUDE_200K_MODEL, Tmux, World, rate_limits, with_hosts};

const PROMPT: &str = "Run the scripted steps, one shell command at a time.";

/// The statusline row of the pane: the one with baton's meter (a bar and `│` separators).
pub(super) fn statusline_row(pane: &str) -> Option<String> {
    pane.lines()
        .find(|l| l.contains('\u{2502}') && (l.contains('\u{2591}') || l.contains('\u{2588}')))
        .map(|l| l.trim().to_string())
}

/// The `N` of Claude Code's own "N% context used" in the pane.
fn claude_code_used(pane: &str) -> Option<u32> {
    let at = pane.find("% context used")?;
    let digits: String = pane[..at]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().ok()
}

/// The `N` of baton's meter (`███████░░░ N%`) in the statusline row.
pub(super) fn meter_used(row: &str) -> Option<u32> {
    let bar_end = row.rfind(['\u{2591}', '\u{2588}'])?;
    let rest = row[bar_end..].chars().skip(1).collect::<String>();
    rest.trim_start().split('%').next()?.trim().parse().ok()
}

/// Starts the interactive Claude Code in tmux with `env` and waits for its prompt.
fn start_claude(checks: &mut Checks, world: &World, env: &[(String, String)], model: &str) -> Option<Tmux> {
    if !real_hosts_support::tmux_available()
        && real_hosts_support::mode() != real_hosts_support::Mode::Required
    {
        real_hosts_support::skipped("claude interactive: screen", "tmux is not on PATH");
        return None;
    }
    let tmux = match Tmux::start(
        world,
        env,
        &world.hosts.claude,
        &["--model", model, "--allowedTools", "Bash,Read"],
    ) {
        Ok(tmux) => tmux,
        Err(reason) => panic!("claude interactive: {reason}"),
    };
    let ready = tmux.wait_for(Duration::from_secs(30), |pane| {
        pane.contains("for shortcuts") || pane.contains("\u{276f}")
    });
    checks.check("claude started (prompt shown)", ready, || tmux.pane());
    std::thread::sleep(Duration::from_secs(2));
    Some(tmux)
}

/// The pane's text, saved into the world's logs for a look.
pub(super) fn save_pane(world: &World, tmux: &Tmux, name: &str) -> String {
    let pane = tmux.pane();
    let logs = world.root().join("logs");
    let _ = std::fs::create_dir_all(&logs);
    let _ = std::fs::write(logs.join(format!("{name}-pane.txt")), &pane);
    pane
}

/// The environment of a gateway login (see [`rate_limits`]) against `server`: Claude Code
/// then fills `rate_limits` in the statusline payload from the server's headers.
fn gateway_env(world: &World, server: &Server) -> Vec<(String, String)> {
    let mut env = world.env();
    env.extend(world.claude_env(server).into_iter().map(|(k, v)| (k.to_string(), v)));
    env.retain(|(k, _)| k != "ANTHROPIC_API_KEY");
    env.push(("ANTHROPIC_AUTH_TOKEN".to_string(), rate_limits::gateway_token()));
    env
}

/// One interactive session to 158k of a 200k window, crossing WARNING (135k) and CRITICAL
/// (158k) on tool calls, with the rate-limit headers on every reply: the pane shows both
/// notices, Claude Code's "88% context used" (of 180k) beside baton's meter, which names
/// its base (79 % of 200k), and the rate limits.
#[test]
fn claude_code_screen_shows_notices_footer_and_rate_limits() {
    with_hosts("claude interactive: screen", |hosts| {
        let mut checks = Checks::new("claude interactive: screen");
        let world = World::new(hosts);
        world.claude_setup();
        let at = |pct: f64| (200_000.0 * pct / 100.0) as u64;
        let script = vec![
            Step::tool(at(20.0), "echo step 0"),
            Step::tool(at(60.0), "echo step 1"),
            Step::tool(at(67.5), "echo step 2"), // crosses 65 %: WARNING and its notice
            Step::tool(158_000, "echo step 3"),  // crosses 75 %: CRITICAL, the handoff and its notice
            Step::text(158_000),                 // Claude Code: 88 % context used (of 180k)
        ];
        let server = Server::start(script, SERVER_LIFETIME);
        let now = crate::common::now();
        server.set_headers(rate_limits::headers(0.42, now + 4800, 0.18, now + 3 * 86_400 + 4 * 3600));
        let env = gateway_env(&world, &server);
        let Some(tmux) = start_claude(&mut checks, &world, &env, CLAUDE_200K_MODEL) else { return };
        let sent = tmux.type_line(PROMPT, || !server.main_requests().is_empty());
        checks.check("prompt submitted", sent, || tmux.pane());
        let finished = tmux.wait_for(Duration::from_secs(60), |pane| pane.contains(FINAL_TEXT));
        checks.check("session ran all turns", finished, || format!("{}\n{}", tmux.pane(), server.summary()));
        // Claude Code's footer takes its turn in the notification corner (a tmux hint may
        // hold it first); the statusline renders after the last reply.
        let waited = std::time::Instant::now();
        let mut corner = String::new();
        let settled = tmux.wait_for(Duration::from_secs(40), |pane| {
            // What holds the corner meanwhile (the row above the prompt's rule).
            for line in pane.lines().filter(|l| l.starts_with("                                        ")) {
                if !line.trim().is_empty() && !corner.contains(line.trim()) {
                    corner.push_str(&format!("{:.1}s {}\n", waited.elapsed().as_secs_f64(), line.trim()));
                }
            }
            claude_code_used(pane).is_some()
                && statusline_row(pane).is_some_and(|row| meter_used(&row) == Some(79) && row.contains("5h "))
        });
        eprintln!(
            "real hosts: screen: settled after {:.1} s; the corner held:\n{corner}",
            waited.elapsed().as_secs_f64()
        );
        let pane = save_pane(&world, &tmux, "01-screen");
        world.save_requests(&server, "01-screen");
        drop(tmux);
        checks.check("the pane settled (footer, meter at 79 %, rate limits)", settled, || pane.clone());

        let requests = first_per_turn(server.main_requests());
        let warned = turns_with(&requests, WARNING);
        let critical = turns_with(&requests, CRITICAL);
        checks.check(
            "the agent was warned after the crossing call, then told CRITICAL",
            warned.first() == Some(&3) && critical.first() == Some(&4),
            || format!("warning in turns {warned:?}, critical in {critical:?}\n{}", server.summary()),
        );
        let says =
            |needle: &str| pane.lines().any(|l| l.contains("says: baton: context") && l.contains(needle));
        checks.check(
            "the pane shows baton's WARNING notice",
            says("68 % — the agent was told to wrap up"),
            || pane.clone(),
        );
        checks.check(
            "the pane shows baton's CRITICAL notice (where the handoff and the checkpoint are)",
            says("79 % — handoff saved to .planning/HANDOFF.json, checkpoint refs/baton/wip/"),
            || pane.clone(),
        );

        let row = statusline_row(&pane).unwrap_or_default();
        let ours = meter_used(&row);
        let theirs = claude_code_used(&pane);
        // 158,000 tokens: 79 % of the 200k window (the payload's, baton's); 88 % of 180k
        // (the window less Claude Code's 20k output reserve: its footer).
        checks.check("Claude Code's footer reads 88% context used (of 180k)", theirs == Some(88), || {
            format!("footer {theirs:?}\n{pane}")
        });
        checks.check("baton's meter reads 79 % (of 200k)", ours == Some(79), || {
            format!("meter {ours:?}: {row}")
        });
        checks.check(
            "where the two differ, the line says the meter's base",
            ours == theirs || row.contains(&format!("{}% of 200k", ours.unwrap_or_default())),
            || format!("meter {ours:?}, footer {theirs:?}: {row}"),
        );
        checks.check(
            "the statusline shows the rate limits the payload carries (5h 42 %, 7d 18 %)",
            row.contains("5h 42%") && row.contains("7d 18%"),
            || row.clone(),
        );
        checks.finish();
    });
}

/// The window `windows.json` (baton's state dir) remembers for `model`.
fn remembered_window(world: &World, model: &str) -> Option<u64> {
    let path = world.sandbox.state_dir().join("windows.json");
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    value["models"][model].as_u64()
}

/// `claude -p` with `model` against a server running `steps`: the first request of each
/// turn and the run.
fn claude_print(
    world: &World,
    model: &str,
    steps: Vec<Step>,
    name: &str,
) -> (Vec<String>, crate::real_hosts_support::Run) {
    let server = Server::start(steps, SERVER_LIFETIME);
    let run = world.claude_print(&server, Some(model), PROMPT);
    world.save_requests(&server, name);
    (first_per_turn(server.main_requests()).iter().map(|r| r.text()).collect(), run)
}

/// The crossing script of `contexts.rs`'s unknown id: 80-85 % of an assumed 200k, 16-17 %
/// of 1M.
fn unknown_id_script() -> Vec<Step> {
    vec![
        Step::tool(40_000, "echo step 0"),
        Step::tool(140_000, "echo step 1"),
        Step::tool(160_000, "echo step 2"),
        Step::tool(170_000, "echo step 3"),
        Step::text(171_000),
    ]
}

/// Issue 18: after a statusline render the remembered window wins. Claude Code 2.1.332
/// gives a `claude-*` id it does not know a 1,000,000-token window (its result's
/// `modelUsage.contextWindow`, and the payload's `context_window_size`); baton's table
/// does not know it either, so before any render baton assumes 200k: in `claude -p` the
/// session is told CRITICAL (with no handoff) at 160k. Once the interactive Claude Code has
/// rendered its statusline, `windows.json` remembers the payload's 1M for the id, and the
/// hook measures the tool calls against it: nothing to say at 140-170k, in the interactive
/// session and in a later `claude -p`, which has no statusline at all.
#[test]
fn claude_code_remembered_window_wins_after_a_render() {
    with_hosts("claude interactive: remembered window", |hosts| {
        let mut checks = Checks::new("claude interactive: remembered window");
        let world = World::new(hosts);
        world.claude_setup();
        let unknown = "claude-nova-9-9";

        // Before any render: the window is assumed (200k).
        let (words, run) = claude_print(&world, unknown, unknown_id_script(), "01-before-render");
        checks.check(
            "before a render: claude -p is told CRITICAL of an assumed window",
            words.iter().any(|w| w.contains(CRITICAL) && w.contains("does not know this model")),
            || run.describe(),
        );
        checks.check(
            "before a render: nothing remembered",
            remembered_window(&world, unknown).is_none(),
            || format!("{:?}", remembered_window(&world, unknown)),
        );

        // The interactive session renders its statusline after the first reply.
        let server = Server::start(unknown_id_script(), SERVER_LIFETIME);
        let mut env = world.env();
        env.extend(world.claude_env(&server).into_iter().map(|(k, v)| (k.to_string(), v)));
        let Some(tmux) = start_claude(&mut checks, &world, &env, unknown) else { return };
        let sent = tmux.type_line(PROMPT, || !server.main_requests().is_empty());
        checks.check("prompt submitted", sent, || tmux.pane());
        let finished = tmux.wait_for(Duration::from_secs(60), |pane| pane.contains(FINAL_TEXT));
        checks.check("session ran all turns", finished, || format!("{}\n{}", tmux.pane(), server.summary()));
        let shown = tmux.wait_for(Duration::from_secs(10), |pane| {
            statusline_row(pane).is_some_and(|row| meter_used(&row) == Some(17))
        });
        let pane = save_pane(&world, &tmux, "02-remembered");
        world.save_requests(&server, "02-remembered");
        drop(tmux);
        checks.check("the statusline shows 17 % (171k of the payload's 1M)", shown, || pane.clone());
        let remembered = remembered_window(&world, unknown);
        checks.check(
            "the render remembered the payload's window for the id: 1,000,000",
            remembered == Some(1_000_000),
            || format!("windows.json: {remembered:?}"),
        );
        let requests = first_per_turn(server.main_requests());
        let warned = turns_with(&requests, "CONTEXT ");
        checks.check(
            "interactive: measured against the remembered 1M, 140-170k is not warned",
            requests.len() >= 5 && warned.is_empty(),
            || format!("warned in turns {warned:?}\n{}", server.summary()),
        );
        drop(server);

        // A later `claude -p` (no statusline in it): the remembered window still wins.
        let (words, run) = claude_print(&world, unknown, unknown_id_script(), "03-after-render");
        checks.check("after a render: claude -p ran all turns", words.len() >= 5, || run.describe());
        checks.check(
            "after a render: claude -p is measured against the remembered 1M (no warning at 170k)",
            !words.iter().any(|w| w.contains("CONTEXT ")),
            || words.iter().filter(|w| w.contains("CONTEXT ")).cloned().collect::<Vec<_>>().join("\n\n"),
        );
        checks.finish();
    });
}

const SUBAGENT_TASK: &str = "SUBAGENT-ROW-TASK: run two shell commands and report back.";

/// Issue 20: a running subagent gets baton's row in Claude Code's agent panel (the
/// `subagentStatusLine` that `baton install --subagent-rows` registered): the agent type and the task's
/// words, then its own context, 46k of its 200k (23 %). The subagent's second command
/// sleeps, so the row is read while it runs (Claude Code refreshes rows every 5 s).
#[test]
fn claude_code_agent_panel_shows_baton_s_subagent_row() {
    use crate::real_hosts_support::scripted::{self, Reply, Scripted};
    use serde_json::json;
    with_hosts("claude interactive: subagent row", |hosts| {
        let mut checks = Checks::new("claude interactive: subagent row");
        let world = World::new(hosts);
        world.claude_setup();
        // The rows are opt-in: the user asks for them.
        let env: Vec<(String, String)> = world.env();
        let pairs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let added = world.sandbox.run_with(&["install", "--statusline-only", "--subagent-rows"], b"", &pairs);
        assert!(
            added.status.success(),
            "install --subagent-rows: {}",
            String::from_utf8_lossy(&added.stderr)
        );
        let server = Scripted::start(SERVER_LIFETIME, move |body| {
            if scripted::first_user_text(body).contains(SUBAGENT_TASK) {
                match scripted::tool_results(body) {
                    0 => Reply::bash(46_000, "echo subagent step 0"),
                    1 => Reply::bash(46_000, "sleep 12"),
                    _ => Reply::text(46_500, "Subagent done."),
                }
            } else {
                match scripted::tool_results(body) {
                    0 => Reply::tools(
                        20_000,
                        &[(
                            "Agent",
                            json!({"description": "Run two commands", "prompt": SUBAGENT_TASK,
                                   "subagent_type": "general-purpose", "run_in_background": false}),
                        )],
                    ),
                    _ => Reply::text(21_000, FINAL_TEXT),
                }
            }
        });
        let mut env = world.env();
        env.extend([
            ("ANTHROPIC_BASE_URL".to_string(), server.base_url()),
            ("ANTHROPIC_API_KEY".to_string(), crate::real_hosts_support::API_KEY.to_string()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_string(), "1".to_string()),
            ("DISABLE_AUTOUPDATER".to_string(), "1".to_string()),
            ("DISABLE_TELEMETRY".to_string(), "1".to_string()),
        ]);
        if !real_hosts_support::tmux_available()
            && real_hosts_support::mode() != real_hosts_support::Mode::Required
        {
            real_hosts_support::skipped("claude interactive: subagent row", "tmux is not on PATH");
            return;
        }
        let args = ["--model", CLAUDE_200K_MODEL, "--allowedTools", "Bash,Read,Agent"];
        let tmux = match Tmux::start(&world, &env, &world.hosts.claude, &args) {
            Ok(tmux) => tmux,
            Err(reason) => panic!("claude interactive: {reason}"),
        };
        let ready = tmux.wait_for(Duration::from_secs(30), |pane| {
            pane.contains("for shortcuts") || pane.contains("\u{276f}")
        });
        checks.check("claude started (prompt shown)", ready, || tmux.pane());
        std::thread::sleep(Duration::from_secs(2));
        let sent = tmux.type_line(PROMPT, || !server.main_requests().is_empty());
        checks.check("prompt submitted", sent, || tmux.pane());
        let row_of =
            |pane: &str| pane.lines().find(|l| l.contains("23% · 46k/200k")).map(|l| l.trim().to_string());
        let shown = tmux.wait_for(Duration::from_secs(30), |pane| row_of(pane).is_some());
        let pane = save_pane(&world, &tmux, "01-subagent-row");
        server.save(&world.root().join("logs"), "01-subagent-row");
        drop(tmux);
        checks.check(
            "the agent panel shows baton's row for the running subagent (23 % · 46k/200k)",
            shown,
            || format!("{pane}\n{}", server.summary()),
        );
        let row = row_of(&pane).unwrap_or_default();
        checks.check(
            "the row keeps what Claude Code's own row said (agent type, task)",
            row.contains("general-purpose") && row.contains("Run two commands"),
            || row.clone(),
        );
        if pane.contains("subagentStatusLine is deprecated") {
            eprintln!("real hosts: Claude Code says: subagentStatusLine is deprecated in favor of mods");
        }
        checks.finish();
    });
}
