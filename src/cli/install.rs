//! `baton install` and `baton uninstall`: their flags, turned into the install
//! service's options.

use clap::{Args, ValueEnum};

use super::ExitStatus;
use crate::host::{HostChoice, HostKind};
use crate::install::hosts::Scope;
use crate::install::{self, Ended, Mode, Options};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ScopeFlag {
    /// Yours, for every project: ~/.claude/settings.json ($CLAUDE_CONFIG_DIR),
    /// ~/.gemini/settings.json, ~/.codex/hooks.json ($CODEX_HOME), ~/.qwen/settings.json, ~/.factory/settings.json,
    /// ~/.copilot/hooks/baton.json ($COPILOT_HOME), ~/.config/opencode/plugins/baton.js,
    /// ~/.config/kilo/plugins/baton.js.
    User,
    /// The current folder's, shared with the project: .claude/settings.json,
    /// .gemini/settings.json, .codex/hooks.json, .qwen/settings.json, .factory/settings.json, .github/hooks/baton.json,
    /// .opencode/plugins/baton.js, .kilo/plugins/baton.js.
    Project,
    /// The current folder's, private: .claude/settings.local.json (Claude Code only).
    Local,
}

// The flags `install` and `uninstall` share.
#[derive(Debug, Clone, Args)]
struct TargetArgs {
    /// Which host's settings (comma-separate or repeat for several).
    #[arg(
        long,
        value_parser = super::hosts::install_choice(),
        value_delimiter = ',',
        default_value = HostKind::DEFAULT.id(),
        value_name = "HOST"
    )]
    host: Vec<HostChoice>,
    /// Which of the host's settings files.
    #[arg(long, value_enum, default_value = "user", value_name = "SCOPE")]
    scope: ScopeFlag,
    /// Print the change as a diff and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Only the statusLine (for those who get the hooks from the baton plugin).
    #[arg(long, conflicts_with = "hooks_only")]
    statusline_only: bool,
    /// Only the hooks; leave the statusLine alone.
    #[arg(long)]
    hooks_only: bool,
}

#[derive(Debug, Clone, Args)]
#[command(after_help = "\
Examples:
  baton install                           Claude Code, your user settings
  baton install --dry-run                 show the change, write nothing
  baton install --host all                Claude Code, and the other hosts set up here
  baton install --scope project           this project's .claude/settings.json
  baton install --statusline-only         with the baton plugin (it brings the hooks)
  baton install --replace-other-monitors  also take out GSD's context monitor

Another statusLine is wrapped: `baton statusline --wrap '<its command>'` shows its output as before \
and keeps baton's context figure fresh. Every change can be undone with `baton uninstall`.")]
pub(super) struct InstallArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Replace a statusLine that is not baton's instead of wrapping it (uninstall puts it back).
    #[arg(long)]
    replace_statusline: bool,
    /// Remove other tools' context monitors (GSD's gsd-context-monitor.js), so the agent
    /// is warned once (uninstall puts them back).
    #[arg(long)]
    replace_other_monitors: bool,
    /// Also show a row per running subagent in Claude Code's agent panel (its
    /// `subagentStatusLine`, which Claude Code 2.1.332 calls deprecated and mentions at
    /// every start while it is set).
    #[arg(long)]
    subagent_rows: bool,
}

#[derive(Debug, Clone, Args)]
#[command(after_help = "\
Removes baton's hooks and statusLine, puts back a statusLine baton wrapped or replaced and the \
monitors it removed, and leaves everything else as it was. Running it twice is harmless.")]
pub(super) struct UninstallArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Accepted so install's flags can be repeated; uninstall always restores.
    #[arg(long, hide = true)]
    #[allow(dead_code)]
    replace_statusline: bool,
    /// Accepted so install's flags can be repeated; uninstall always restores.
    #[arg(long, hide = true)]
    #[allow(dead_code)]
    replace_other_monitors: bool,
    /// Accepted so install's flags can be repeated; uninstall removes baton's rows anyway.
    #[arg(long, hide = true)]
    #[allow(dead_code)]
    subagent_rows: bool,
}

fn options(target: &TargetArgs) -> Options {
    Options {
        hosts: target.host.clone(),
        scope: match target.scope {
            ScopeFlag::User => Scope::User,
            ScopeFlag::Project => Scope::Project,
            ScopeFlag::Local => Scope::Local,
        },
        dry_run: target.dry_run,
        hooks: !target.statusline_only,
        statusline: !target.hooks_only,
        replace_statusline: false,
        replace_other_monitors: false,
        subagent_rows: false,
    }
}

fn run(mode: Mode, options: &Options) -> ExitStatus {
    match install::run(
        mode,
        options,
        &mut super::screen::Screen::stdout(),
        &mut super::screen::Screen::stderr(),
    ) {
        Ended::Done => ExitStatus::Success,
        Ended::Failed => ExitStatus::Failure,
        Ended::Usage => ExitStatus::Usage,
    }
}

pub(super) fn install(args: &InstallArgs) -> ExitStatus {
    let options = Options {
        replace_statusline: args.replace_statusline,
        replace_other_monitors: args.replace_other_monitors,
        subagent_rows: args.subagent_rows,
        ..options(&args.target)
    };
    run(Mode::Install, &options)
}

pub(super) fn uninstall(args: &UninstallArgs) -> ExitStatus {
    run(Mode::Uninstall, &options(&args.target))
}
