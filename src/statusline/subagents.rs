//! `baton statusline --subagents`: one row per running subagent in Claude Code's agent
//! panel (its `subagentStatusLine` setting), `Explore  Find the limiter │ ██░░░░░░░░ 23%
//! · 46k/200k`: what Claude Code's own row says (the agent type and the task's label,
//! which an answered row replaces), then the subagent's
//! own context (Claude Code's `tokenCount`, its latest prompt and output) of its model's
//! window (`contextWindowSize`, else baton's table), coloured by the level baton judges a
//! subagent's context on, the same thresholds and the same [`assess`](metrics::assess) as
//! its warnings. Read from stdin only; nothing is written.
//!
//! Claude Code 2.1.332 runs the command while the panel lists subagents (300 ms after one
//! appears, then every 5 s, 5 s timeout) and reads one JSON object per line,
//! `{"id": <task id>, "content": <text>}`; a row it gets no line for keeps its own text,
//! an answered one shows the content alone.

use serde_json::json;

use super::{Style, meter, style};
use crate::config::Config;
use crate::host::{SubagentRowsInput, SubagentTask};
use crate::metrics::{self, Basis, Level, Limits, Want, WindowSource};

/// The rows to print: one JSON line per subagent, in the order Claude Code listed them.
pub fn rows(input: &SubagentRowsInput, config: &Config, now: i64, colour: bool) -> String {
    let limits = Limits::from_settings(config.settings());
    let columns = input.columns.filter(|c| *c >= 1.0).map(|c| c as usize);
    input
        .tasks
        .iter()
        .filter_map(|task| {
            let id = task.id.as_deref()?;
            let content = content(task, limits, columns, now, colour);
            Some(format!("{}\n", json!({"id": id, "content": content})))
        })
        .collect()
}

/// One row's text: the task's own words, then its meter; on a narrow row the words give
/// way first, then the bar. The words are the model's (a subagent's description): their
/// control characters are shown, never sent on to the panel.
fn content(task: &SubagentTask, limits: Limits, columns: Option<usize>, now: i64, colour: bool) -> String {
    let words: Vec<String> =
        [task.agent_type.as_deref(), task.label.as_deref().or(task.description.as_deref())]
            .into_iter()
            .flatten()
            .map(super::model::shown)
            .collect();
    let words = words.join("  ");
    let (meter, short, style) = meter_of(task, limits, now);
    let fits = |text: &str| columns.is_none_or(|c| super::width(text) <= c);
    let with_words = format!("{words}{}{meter}", if words.is_empty() { "" } else { super::SEPARATOR });
    let text = [with_words, meter, short.clone()].into_iter().find(|t| fits(t)).unwrap_or(short);
    style::paint(&text, style, colour)
}

/// The subagent's meter, its short form and its style.
fn meter_of(task: &SubagentTask, limits: Limits, now: i64) -> (String, String, Style) {
    let tokens = task.token_count.filter(|t| *t >= 1.0).map(|t| t.round() as u64);
    let Some(tokens) = tokens else {
        return (format!("{} --", meter::bar(0)), "--".to_string(), Style::Dim);
    };
    let model = task.model.as_deref();
    let window = match task.context_window_size.filter(|w| *w >= 1.0) {
        Some(w) => (w.round() as u64, WindowSource::Statusline),
        None => {
            let facts = metrics::WindowFacts { model, default: limits.default_window, ..Default::default() };
            metrics::choose_window(&facts, Some(tokens))
        }
    };
    let figure = metrics::figure_from_tokens(tokens, window, now);
    let basis = Basis { limits, host: SubagentRowsInput::HOST, model, project: None };
    let level = metrics::assess(&figure, &basis, Want::Level).level;
    let used = figure.used_pct();
    let assumed = if figure.window_source.is_assumed() { "?" } else { "" };
    let full = format!(
        "{} {used}% · {}/{}{assumed}",
        meter::bar(used),
        metrics::short_tokens(tokens),
        metrics::short_tokens(window.0)
    );
    let style = match level {
        Level::Normal => Style::Normal,
        Level::Warning => Style::Warning,
        Level::Critical => Style::Critical,
    };
    (full, format!("{used}%"), style)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows_of(json: &str, colour: bool) -> Vec<serde_json::Value> {
        let input: SubagentRowsInput = serde_json::from_str(json).unwrap();
        rows(&input, &Config::defaults(), 0, colour)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn one_line_per_subagent() {
        let out = rows_of(
            r#"{"columns": 100, "tasks": [
                {"id": "a1", "agentType": "Explore", "label": "Find the limiter", "description": "x", "model": "claude-sonnet-4-5", "contextWindowSize": 200000, "tokenCount": 46000},
                {"id": "a2", "tokenCount": 0},
                {"id": "a3", "model": "claude-nova-9-9", "tokenCount": 140000}
            ]}"#,
            false,
        );
        assert_eq!(out.len(), 3);
        assert_eq!(
            out[0],
            json!({"id": "a1", "content": "Explore  Find the limiter │ ██░░░░░░░░ 23% · 46k/200k"})
        );
        assert_eq!(out[1], json!({"id": "a2", "content": "░░░░░░░░░░ --"}));
        assert_eq!(out[2]["content"], "███████░░░ 70% · 140k/200k?", "an assumed window is marked");
    }

    #[test]
    fn coloured_by_level_and_narrowed_to_the_columns() {
        let out = rows_of(
            r#"{"columns": 8, "tasks": [{"id": "a", "contextWindowSize": 200000, "tokenCount": 160000}]}"#,
            true,
        );
        assert_eq!(out[0]["content"], "\u{1b}[1;31m80%\u{1b}[0m");
        let out = rows_of(
            r#"{"columns": 30, "tasks": [{"id": "a", "agentType": "Explore", "label": "Find it", "contextWindowSize": 200000, "tokenCount": 20000}]}"#,
            false,
        );
        assert_eq!(out[0]["content"], "█░░░░░░░░░ 10% · 20k/200k", "the words give way first");
        let out =
            rows_of(r#"{"tasks": [{"id": "a", "contextWindowSize": 200000, "tokenCount": 135000}]}"#, true);
        assert!(out[0]["content"].as_str().unwrap().starts_with("\u{1b}[33m"), "{out:?}");
    }
}
