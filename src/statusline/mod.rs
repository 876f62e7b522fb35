//! `baton statusline`: the line under the prompt, and the bridge file for the monitor.
//!
//! One file per segment, each a function from the shared [`Context`] to an optional
//! [`Segment`]; [`render`] joins them in the order `statusline.segments` gives and, when
//! `COLUMNS` is set, fits the line into it (`layout`). The context meter and its colour
//! come from the same [`Figure`] and the same [`assess`](crate::metrics::assess) the
//! monitor uses.
//!
//! This runs after every assistant message, so a segment pays only for what it shows:
//! facts are computed on first use and shared (`Context`), the git markers come from a
//! per-repository cache and a time-bounded scan, the current task from a small read of
//! the end of the transcript.

mod branch;
mod cache;
mod compactions;
mod cost;
mod git;
mod git_cache;
mod handoff;
mod headroom;
mod layout;
mod meter;
mod model;
mod project;
mod rate_limits;
mod style;
mod subagents;
mod task;
pub mod wrap;

use std::cell::OnceCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::Config;
use crate::host::{FigureSource, HostKind, StatuslineInput};
use crate::metrics::{self, Basis, Figure, Level, Limits, Want};

pub use branch::{GitPlace, find_git};
pub use git::GitSettings;
pub use git_cache::Record as GitRecord;
pub use layout::{cut, width};
pub use style::Style;
pub use subagents::rows as subagent_rows;

// The segment names and the default order are declared with the configuration key
// (`config::keys`); a test below keeps `SEGMENTS` and that list in sync.
pub use crate::config::keys::DEFAULT_SEGMENTS;

type SegmentFn = fn(&Context) -> Option<Segment>;

/// A segment's name, renderer and how it gives way on a narrow terminal.
struct SegmentSpec {
    name: &'static str,
    render: SegmentFn,
    /// Lower gives way first.
    priority: u8,
    /// It may be cut down to this many columns before it is dropped.
    min_width: Option<usize>,
}

const SEGMENTS: &[SegmentSpec] = &[
    SegmentSpec { name: "model", render: model::segment, priority: 70, min_width: None },
    SegmentSpec { name: "project", render: project::segment, priority: 50, min_width: Some(8) },
    SegmentSpec { name: "branch", render: branch::segment, priority: 60, min_width: Some(10) },
    SegmentSpec { name: "git", render: git::segment, priority: 40, min_width: None },
    SegmentSpec { name: "task", render: task::segment, priority: 20, min_width: Some(12) },
    SegmentSpec { name: "handoff", render: handoff::segment, priority: 90, min_width: None },
    SegmentSpec { name: "meter", render: meter::segment, priority: 100, min_width: None },
    SegmentSpec { name: "cost", render: cost::segment, priority: 30, min_width: None },
    SegmentSpec { name: "headroom", render: headroom::segment, priority: 35, min_width: None },
    SegmentSpec { name: "rate_limits", render: rate_limits::segment, priority: 45, min_width: None },
    SegmentSpec { name: "cache", render: cache::segment, priority: 25, min_width: None },
    SegmentSpec { name: "compactions", render: compactions::segment, priority: 15, min_width: None },
];

/// What the configuration says about the line.
#[derive(Debug, Clone)]
pub struct Settings {
    pub segments: Vec<String>,
    /// The segments of a second row (`statusline.second_line`); none: one row.
    pub second_line: Vec<String>,
    pub git: GitSettings,
    /// The handoff folder, relative to the project root.
    pub handoff_dir: PathBuf,
}

impl Settings {
    pub fn from_config(config: &Config) -> Settings {
        Settings {
            segments: config.statusline_segments(),
            second_line: config.statusline_second_line(),
            git: GitSettings {
                cache_dir: crate::places::state_dir().map(|dir| git_cache::cache_dir(&dir)),
                max_age: Duration::from_secs(config.git_cache_seconds()),
                budget: Duration::from_millis(config.git_budget_ms()),
            },
            handoff_dir: config.handoff_dir(),
        }
    }
}

/// `baton statusline --refresh-git <root>`: the git markers of the work tree at `root`
/// scanned again and cached, for the next render (started by a render that showed an old
/// record; see `git`).
pub fn refresh_git(root: &Path, config: &Config, now: i64) {
    let now_ms = u64::try_from(now).unwrap_or(0).saturating_mul(1000);
    git::refresh(root, &Settings::from_config(config).git, now_ms);
}

/// Everything a segment may look at. Expensive facts are computed once, on first use.
pub struct Context<'a> {
    pub input: &'a StatuslineInput,
    pub figure: Option<Figure>,
    pub level: Level,
    /// The thresholds and compaction rule from the configuration.
    pub limits: Limits,
    pub colour: bool,
    /// The terminal's width, when the host says (`COLUMNS`).
    pub columns: Option<usize>,
    pub settings: Settings,
    /// Unix milliseconds, for the git cache.
    pub now_ms: u64,
    git: OnceCell<Option<GitPlace>>,
    head: OnceCell<Option<String>>,
    branch: OnceCell<Option<String>>,
    git_status: OnceCell<Option<GitRecord>>,
    task: OnceCell<Option<String>>,
    handoff: OnceCell<bool>,
}

impl<'a> Context<'a> {
    pub fn new(input: &'a StatuslineInput, config: &Config, now: i64, colour: bool) -> Context<'a> {
        // A host whose statusline is its figure source sends its own figure; another
        // host's payload is read on the window baton knows for it.
        let figure = match input.host().figure_source() {
            FigureSource::Statusline => metrics::figure_from_statusline(input, now),
            FigureSource::Record => host_figure(input.host(), input, config, now),
        };
        let limits = crate::metrics::Limits::from_settings(config.settings());
        let level = figure
            .as_ref()
            .map(|f| metrics::assess(f, &Context::basis_of(input, limits), Want::Level).level)
            .unwrap_or(Level::Normal);
        Context {
            input,
            figure,
            level,
            limits,
            colour,
            columns: None,
            settings: Settings::from_config(config),
            now_ms: u64::try_from(now).unwrap_or(0).saturating_mul(1000),
            git: OnceCell::new(),
            head: OnceCell::new(),
            branch: OnceCell::new(),
            git_status: OnceCell::new(),
            task: OnceCell::new(),
            handoff: OnceCell::new(),
        }
    }

    /// What the figure's level and headroom rest on: a session of the host that ran the
    /// statusline, of the payload's model.
    fn basis_of(input: &'a StatuslineInput, limits: Limits) -> Basis<'a> {
        let project = input.project_dir().map(Path::new).filter(|p| p.is_absolute());
        // The project's settings say where a host compacts by its own record (Gemini CLI's,
        // Qwen Code's threshold); the statusline host's line is assessed without them.
        let project = project.filter(|_| input.host().figure_source() == FigureSource::Record);
        Basis { limits, host: input.host(), model: input.model_id(), project }
    }

    /// The host's compaction formula for this session's model, its settings files read.
    pub fn formula_rule(&self) -> metrics::CompactionRule {
        let project = self.input.project_dir().map(std::path::Path::new);
        metrics::formula_rule(self.input.host(), self.limits.rule, self.input.model_id(), project)
    }

    /// What this line's figure is assessed on ([`metrics::assess`]).
    pub fn basis(&self) -> Basis<'a> {
        Context::basis_of(self.input, self.limits)
    }

    /// The folder the session works in.
    pub fn current_dir(&self) -> Option<PathBuf> {
        self.input.current_dir().map(PathBuf::from).filter(|p| p.is_absolute())
    }

    /// The work tree containing the current folder.
    pub fn git(&self) -> Option<&GitPlace> {
        self.git.get_or_init(|| self.current_dir().and_then(|dir| branch::find_git(&dir))).as_ref()
    }

    fn head(&self) -> Option<&str> {
        self.head.get_or_init(|| branch::read_head(&self.git()?.git_dir)).as_deref()
    }

    /// The git branch (read from `HEAD`, no status scan).
    pub fn branch(&self) -> Option<&str> {
        self.branch.get_or_init(|| branch::branch_name(self.head()?)).as_deref()
    }

    /// The git markers' record, cached or freshly scanned.
    pub fn git_status(&self) -> Option<&GitRecord> {
        self.git_status
            .get_or_init(|| Some(git::status(self.git()?, self.head()?, &self.settings.git, self.now_ms)))
            .as_ref()
    }

    /// Where project files (`.planning/`) may be: the session's project folder, then
    /// the top of its work tree.
    pub fn project_roots(&self) -> Vec<PathBuf> {
        let mut roots = Vec::new();
        let project = self.input.project_dir().map(PathBuf::from).filter(|p| p.is_absolute());
        for root in project.into_iter().chain(self.git().map(|g| g.root.clone())) {
            if !roots.contains(&root) {
                roots.push(root);
            }
        }
        roots
    }

    /// The todo in progress, else the GSD phase.
    pub fn task(&self) -> Option<&str> {
        self.task
            .get_or_init(|| {
                let transcript =
                    self.input.transcript_path.as_deref().map(Path::new).filter(|p| p.is_absolute());
                task::current_task(transcript, &self.project_roots())
            })
            .as_deref()
    }

    /// A paused handoff waits for the project: in it, or in baton's private folder for it
    /// (where the hook writes when another user could reach the project's folder).
    pub fn handoff_paused(&self) -> bool {
        *self.handoff.get_or_init(|| {
            let paused_in =
                |base: &Path| handoff::is_paused(&base.join(&self.settings.handoff_dir).join("HANDOFF.json"));
            self.project_roots().iter().any(|root| {
                paused_in(root)
                    || crate::handoff::store::private_roots(root).iter().any(|private| paused_in(private))
            })
        })
    }
}

/// One piece of the line.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub text: String,
    pub style: Style,
    /// A shorter form for a narrow terminal.
    pub short: Option<String>,
}

impl Segment {
    pub fn new(text: impl Into<String>, style: Style) -> Segment {
        Segment { text: text.into(), style, short: None }
    }

    pub fn with_short(mut self, short: impl Into<String>) -> Segment {
        self.short = Some(short.into());
        self
    }
}

/// The figure of another host's payload: its own percentages over its own window when it
/// gives one, else its prompt tokens over the window baton knows for the model (the
/// host's own table, the configuration, else the assumed default, marked as such). `None`
/// before the first reply (no tokens, or 0).
fn host_figure(host: HostKind, input: &StatuslineInput, config: &Config, now: i64) -> Option<Figure> {
    let window = input.context_window.as_ref()?;
    if window.context_window_size.is_some() {
        return metrics::figure_from_statusline(input, now);
    }
    let tokens = window.current_usage.as_ref()?.input_tokens.filter(|t| *t >= 1.0)?.round() as u64;
    let model = input.model_id();
    let facts = metrics::WindowFacts {
        model,
        host: model.and_then(|m| host.host().model_window(m)),
        configured: model.and_then(|m| config.configured_windows().get(m).copied()),
        default: config.settings().default_window_tokens,
        host_windows: host.windows(),
        ..metrics::WindowFacts::default()
    };
    let chosen = metrics::choose_window(&facts, Some(tokens));
    Some(Figure { origin: metrics::Origin::Statusline, ..metrics::figure_from_tokens(tokens, chosen, now) })
}

/// Between segments (and between a wrapped statusline's output and baton's meter).
pub const SEPARATOR: &str = layout::SEPARATOR;

/// The segments to draw, in the configured order (unknown names were dropped when the
/// configuration was read; an empty list means the default).
fn layout_specs(names: &[String]) -> Vec<&'static SegmentSpec> {
    let find = |name: &str| SEGMENTS.iter().find(|s| s.name == name);
    let chosen: Vec<&SegmentSpec> = names.iter().filter_map(|n| find(n)).collect();
    if chosen.is_empty() { DEFAULT_SEGMENTS.iter().filter_map(|n| find(n)).collect() } else { chosen }
}

/// Renders the line, and the second row under it when `statusline.second_line` names
/// segments that have something to show.
pub fn render(ctx: &Context) -> String {
    let first = render_row(ctx, &layout_specs(&ctx.settings.segments));
    let find = |name: &String| SEGMENTS.iter().find(|s| s.name == name);
    let second: Vec<&SegmentSpec> = ctx.settings.second_line.iter().filter_map(find).collect();
    match render_row(ctx, &second) {
        row if row.is_empty() => first,
        row => format!("{first}\n{row}"),
    }
}

/// One row of segments, fitted into `COLUMNS` when it is set.
fn render_row(ctx: &Context, specs: &[&SegmentSpec]) -> String {
    let mut parts: Vec<layout::Part> = specs
        .iter()
        .filter_map(|spec| {
            let segment = (spec.render)(ctx)?;
            Some(layout::Part {
                text: segment.text,
                style: segment.style,
                priority: spec.priority,
                min_width: spec.min_width,
                short: segment.short,
            })
        })
        .collect();
    if let Some(columns) = ctx.columns {
        layout::fit(&mut parts, columns);
    }
    let painted: Vec<String> = parts.iter().map(|p| style::paint(&p.text, p.style, ctx.colour)).collect();
    painted.join(layout::SEPARATOR)
}

/// Colour unless `NO_COLOR` is set to anything non-empty.
pub fn colour_wanted() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The terminal width from `COLUMNS`, when it is a positive number.
pub fn columns_from_env() -> Option<usize> {
    std::env::var("COLUMNS").ok()?.trim().parse().ok().filter(|n| *n > 0)
}

/// The statusline command: render, and write the bridge when the payload has a figure.
pub fn run(input: &StatuslineInput, config: &Config, now: i64) -> String {
    run_parts(input, config, now).0
}

/// Like [`run`], and also returns the context meter alone (painted), which a wrapped
/// statusline may append to the other tool's output.
pub fn run_parts(input: &StatuslineInput, config: &Config, now: i64) -> (String, Option<String>) {
    let mut ctx = Context::new(input, config, now, colour_wanted());
    ctx.columns = columns_from_env();
    ctx.now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis().min(u128::from(u64::MAX)) as u64)
        .unwrap_or(ctx.now_ms);
    // The statusline host's bridge is its figure source; another host's bridge is read as
    // a fact about the window (a pause may rest on it): it is written only when the window
    // is one.
    let source = input.host().figure_source() == FigureSource::Statusline;
    let bridged = ctx.figure.as_ref().filter(|f| source || f.window_source.is_fact());
    if let (Some(figure), Some(session)) = (bridged, input.session_id.as_deref()) {
        let mut bridge = metrics::Bridge::from_figure(session, figure, input.model_id());
        // Where the transcript ends now: the monitor reads only what comes after.
        bridge.transcript_offset = input
            .transcript_path
            .as_deref()
            .map(Path::new)
            .filter(|p| source && p.is_absolute())
            .and_then(crate::transcript::claude::figure::transcript_len);
        // A statusline never fails because the bridge could not be written.
        let _ = metrics::write_bridge(&bridge);
    }
    // The window of this model, for the hook in runs with no statusline (`claude -p`).
    let window = input.context_window.as_ref().and_then(|w| w.context_window_size).filter(|w| *w >= 1.0);
    if let (Some(model), Some(window), true) = (input.model_id(), window, source) {
        metrics::windows::remember(model, window.round() as u64);
    }
    let meter = meter::segment(&ctx).map(|s| style::paint(&s.text, s.style, ctx.colour));
    (render(&ctx), meter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::keys::SEGMENT_NAMES;

    fn context(input: &StatuslineInput) -> Context<'_> {
        let mut ctx = Context::new(input, &Config::defaults(), 0, false);
        ctx.settings.git.cache_dir = None;
        ctx
    }

    fn input(json: &str) -> StatuslineInput {
        serde_json::from_str(json).unwrap()
    }

    const MID_SESSION: &str = r#"{"model": {"display_name": "Opus 4.5"}, "workspace": {"current_dir": "/nonexistent/shop-api"}, "cost": {"total_cost_usd": 1.8342}, "context_window": {"remaining_percentage": 28, "used_percentage": 72}}"#;

    #[test]
    fn renders_every_segment() {
        let input = input(MID_SESSION);
        assert_eq!(render(&context(&input)), "Opus 4.5 │ shop-api │ ███████░░░ 72% │ $1.83");
    }

    #[test]
    fn no_figure_shows_dashes() {
        let input = input(
            r#"{"model": {"display_name": "Opus 4.5"}, "context_window": {"remaining_percentage": null}}"#,
        );
        assert_eq!(render(&context(&input)), "Opus 4.5 │ ░░░░░░░░░░ --");
    }

    #[test]
    fn the_configured_order_is_followed() {
        let input = input(MID_SESSION);
        let mut ctx = context(&input);
        ctx.settings.segments = vec!["meter".into(), "cost".into(), "headroom".into(), "model".into()];
        assert_eq!(render(&ctx), "███████░░░ 72% │ $1.83 │ Opus 4.5");
        ctx.settings.segments = vec![];
        assert_eq!(render(&ctx), "Opus 4.5 │ shop-api │ ███████░░░ 72% │ $1.83");
    }

    #[test]
    fn a_narrow_terminal_keeps_the_meter() {
        let input = input(MID_SESSION);
        let mut ctx = context(&input);
        ctx.columns = Some(20);
        assert_eq!(render(&ctx), "███████░░░ 72%");
        ctx.columns = Some(4);
        assert_eq!(render(&ctx), "72%");
    }

    #[test]
    fn the_name_lists_agree() {
        let names: Vec<&str> = SEGMENTS.iter().map(|s| s.name).collect();
        assert_eq!(names, SEGMENT_NAMES);
        assert!(DEFAULT_SEGMENTS.iter().all(|d| SEGMENT_NAMES.contains(d)));
        assert!(DEFAULT_SEGMENTS.contains(&"headroom"));
    }
}
