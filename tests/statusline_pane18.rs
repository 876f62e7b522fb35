//! `baton statusline` beside Claude Code's own figures (issues 18 and 20): the meter names
//! its base while Claude Code's footer shows a figure of another base, and the subagent
//! rows (`baton statusline --subagents`, Claude Code's `subagentStatusLine`).

use crate::common;

use common::{Sandbox, fixture_json};
use serde_json::{Value, json};

fn render(sandbox: &Sandbox, args: &[&str], payload: &Value, env: &[(&str, &str)]) -> String {
    let mut env = env.to_vec();
    env.push(("NO_COLOR", "1"));
    let output = sandbox.run_with(args, payload.to_string().as_bytes(), &env);
    assert!(output.status.success(), "{}", common::stderr(&output));
    String::from_utf8(output.stdout).unwrap()
}

/// The mid-session payload at `tokens` of a 200k window, for `model`.
fn at_tokens(model: &str, tokens: u64) -> Value {
    let mut payload = fixture_json("statusline.json");
    payload["model"]["id"] = json!(model);
    let used = (tokens as f64 * 100.0 / 200_000.0).round();
    payload["context_window"]["used_percentage"] = json!(used);
    payload["context_window"]["remaining_percentage"] = json!(100.0 - used);
    payload["context_window"]["current_usage"] = json!({"input_tokens": tokens, "output_tokens": 20,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    payload
}

#[test]
fn the_meter_names_its_base_while_claude_codes_footer_is_shown() {
    let sandbox = Sandbox::new();
    let statusline = ["statusline"];
    // 158k of 200k: Claude Code's footer says "88% context used" (of 180k); baton 79 % of 200k.
    let line = render(&sandbox, &statusline, &at_tokens("claude-sonnet-4-5-20250929", 158_000), &[]);
    assert!(line.contains("███████░░░ 79% of 200k │"), "{line}");
    // 140k: below 147k Claude Code shows no footer, and the meter needs no base.
    let line = render(&sandbox, &statusline, &at_tokens("claude-sonnet-4-5-20250929", 140_000), &[]);
    assert!(line.contains("███████░░░ 70% │"), "{line}");
    // A compaction window of 100k: Claude Code counts "N% until auto-compact" from 47k on.
    let env = [("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "100000")];
    let line = render(&sandbox, &statusline, &at_tokens("claude-sonnet-4-5-20250929", 60_000), &env);
    assert!(line.contains("███░░░░░░░ 30% of 200k │"), "{line}");
    let line = render(&sandbox, &statusline, &at_tokens("claude-sonnet-4-5-20250929", 40_000), &env);
    assert!(line.contains("██░░░░░░░░ 20% │"), "{line}");
    // So does the same window from Claude Code's own settings.
    common::write(&sandbox.claude_settings(), r#"{"autoCompactWindow": 100000}"#);
    let line = render(&sandbox, &statusline, &at_tokens("claude-sonnet-4-5-20250929", 60_000), &[]);
    assert!(line.contains("30% of 200k"), "{line}");
}

#[test]
fn a_narrow_terminal_drops_the_base_first() {
    let sandbox = Sandbox::new();
    let line = render(
        &sandbox,
        &["statusline"],
        &at_tokens("claude-sonnet-4-5-20250929", 158_000),
        &[("COLUMNS", "10")],
    );
    assert_eq!(line.trim_end(), "79%");
}
