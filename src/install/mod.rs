//! `baton install` and `baton uninstall`: register baton with Claude Code, Gemini CLI
//! and Codex, and take it out again.
//!
//! The merge itself is pure ([`merge`]); this module is the edge around it: find the
//! settings files, take the install lock, read, refuse what is not JSON, merge, show a
//! diff (`--dry-run`) or back the file up (once) and replace it atomically, and keep the
//! record uninstall needs in baton's state dir ([`state`]).

pub mod commands;
pub mod diff;
pub mod hosts;
pub mod merge;
pub mod opencode_plugin;
pub mod state;

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::fsx::{self, FileLock};
use crate::host::{HostChoice, InstallFacts};
use commands::BatonCommand;
use hosts::{Host, Places, Scope, show_path};
use merge::{Outcome, Plan};

/// Install or uninstall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Install,
    Uninstall,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Done, or nothing to do.
    Done,
    /// A settings file could not be read, merged or written.
    Failed,
    /// The options cannot be carried out (a host without that scope).
    Usage,
}

/// What to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub hosts: Vec<HostChoice>,
    pub scope: Scope,
    pub dry_run: bool,
    pub hooks: bool,
    pub statusline: bool,
    pub replace_statusline: bool,
    pub replace_other_monitors: bool,
    /// Also register Claude Code's `subagentStatusLine` ([`merge::Plan::subagent_rows`]).
    pub subagent_rows: bool,
}

/// The settings files to work on, and why any host was passed over.
struct Targets {
    files: Vec<(Host, PathBuf)>,
    skipped: Vec<String>,
}

/// The settings files to work on, and the hosts passed over with the reason.
fn targets(options: &Options, places: &Places) -> Result<Targets, (Ended, String)> {
    let mut chosen: Vec<(Host, bool)> = Vec::new();
    for choice in &options.hosts {
        // `all`: the default host as if named, the others where they are set up.
        let picks: Vec<(Host, bool)> = match choice {
            HostChoice::One(host) => vec![(*host, true)],
            HostChoice::All => Host::ALL.iter().map(|host| (*host, *host == Host::DEFAULT)).collect(),
        };
        for (host, explicit) in &picks {
            match chosen.iter_mut().find(|(h, _)| h == host) {
                Some(entry) => entry.1 |= explicit,
                None => chosen.push((*host, *explicit)),
            }
        }
    }
    chosen.sort();
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for (host, explicit) in chosen {
        if !host.scopes().contains(&options.scope) {
            if explicit {
                let why = format!(
                    "{host} has no {} scope (only Claude Code has settings.local.json); use --scope project",
                    options.scope
                );
                return Err((Ended::Usage, why));
            }
            skipped.push(format!("{host}: no {} scope; skipped", options.scope));
            continue;
        }
        if !options.hooks && !host.has_statusline() {
            if explicit {
                skipped.push(format!("{host} has no command status line; nothing to do"));
            }
            continue;
        }
        let dir = places.presence_dir(host, options.scope).map_err(|e| (Ended::Failed, e.to_string()))?;
        if !explicit && !dir.is_dir() {
            skipped.push(format!(
                "{host}: {} does not exist (not set up here); skipped",
                show_path(&dir, places.home.as_deref())
            ));
            continue;
        }
        // A host may keep its statusline in another file than baton's hooks (GitHub Copilot
        // CLI: the user's settings.json; a repository's settings may not set one).
        let separate = host.spec().statusline.is_some_and(|s| s.file.is_some());
        let statusline_file = places.statusline_file(host, options.scope);
        if options.hooks || !separate {
            files.push((
                host,
                places.settings_path(host, options.scope).map_err(|e| (Ended::Failed, e.to_string()))?,
            ));
        }
        match statusline_file {
            Some(path) if options.statusline => files.push((host, path)),
            None if separate && options.statusline && !options.hooks => skipped
                .push(format!("{host}: a repository's settings may not set a statusline; use --scope user")),
            _ => {}
        }
    }
    Ok(Targets { files, skipped })
}

/// What of baton goes into `path` of `host`: (hooks, statusline). A host that keeps its
/// statusline in a file of its own (Copilot CLI's settings.json) has no statusline in
/// its hook file, and no hooks in that one.
fn parts_of(host: Host, path: &Path, options: &Options) -> (bool, bool) {
    match host.spec().statusline.and_then(|s| s.file) {
        Some(file) => {
            let statusline = path.file_name().is_some_and(|n| n == file);
            (options.hooks && !statusline, options.statusline && statusline)
        }
        None => (options.hooks, options.statusline),
    }
}

/// Why the running binary's path cannot go into a settings file.
#[derive(Debug, thiserror::Error)]
pub enum BinaryError {
    #[error("cannot find the running binary ({0})")]
    NotFound(std::io::Error),
    #[error("the binary's path {} is not UTF-8; move it to a plain path", .0.display())]
    NotUtf8(PathBuf),
}

/// The absolute, resolved path of the running binary, as text for a settings file (on
/// Windows `C:/…/baton.exe`: no verbatim prefix, `/` separators, which every shell a host
/// may run it with takes).
pub fn current_binary() -> Result<String, BinaryError> {
    let exe = std::env::current_exe().map_err(BinaryError::NotFound)?;
    let exe = crate::platform::canonicalize(&exe).unwrap_or(exe);
    crate::platform::command_path(&exe).ok_or(BinaryError::NotUtf8(exe))
}

/// The first indentation found in `text` (a pretty-printed file's unit), if any.
fn detect_indent(text: &str) -> Option<String> {
    text.lines().skip(1).find_map(|line| {
        let indent: String = line.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
        (!indent.is_empty() && indent.len() <= 8 && !line.trim().is_empty()).then_some(indent)
    })
}

/// Settings as text, indented like the file they replace (two spaces for a new file),
/// ending with a newline unless the old file had none.
pub fn render(value: &Value, like: Option<&str>) -> String {
    let indent = like.and_then(detect_indent).unwrap_or_else(|| "  ".to_string());
    let mut bytes = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
    if value.serialize(&mut serializer).is_err() {
        return value.to_string();
    }
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if like.is_none_or(|old| old.ends_with('\n') || old.trim().is_empty()) {
        text.push('\n');
    }
    text
}

/// True when the file cannot be written: no write bit at all (caught even for root), or
/// the kernel says so.
fn read_only(path: &Path) -> bool {
    let Ok(meta) = fs::metadata(path) else { return false };
    crate::platform::mode_of(&meta) & 0o222 == 0 || !fsx::writable(path)
}

/// An existing backup beside `path` (`<name>.baton-backup-*`), if any.
fn existing_backup(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let prefix = format!("{name}.baton-backup-");
    let dir = path.parent()?;
    fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&prefix)))
}

/// Backs `bytes` (the file as it was) up beside `path`, private, never over another file.
fn write_backup(path: &Path, bytes: &[u8]) -> io::Result<PathBuf> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut backup = dir.join(format!("{name}.baton-backup-{stamp}"));
    let mut n = 1;
    while fs::symlink_metadata(&backup).is_ok() {
        backup = dir.join(format!("{name}.baton-backup-{stamp}-{n}"));
        n += 1;
    }
    fsx::write_atomic(&backup, bytes, fsx::WriteOptions::PRIVATE_DURABLE)?;
    Ok(backup)
}

/// What one file's run came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Done {
    Unchanged,
    Changed,
    Failed,
}

/// The shared state of one run.
struct Run<'a> {
    mode: Mode,
    options: &'a Options,
    binary: String,
    places: Places,
    installs: Option<state::Installs>,
    installs_changed: bool,
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
}

/// A settings file larger than this is not one baton will edit.
const SETTINGS_LIMIT: u64 = 16 * 1024 * 1024;

impl Run<'_> {
    /// User settings live under the home: created 0600 whatever the umask (anyone who
    /// can write them can add hooks); project settings get the user's usual mode. A
    /// replaced file keeps its own mode either way.
    fn write_options(&self) -> fsx::WriteOptions {
        if self.options.scope == Scope::User { fsx::WriteOptions::HOME } else { fsx::WriteOptions::USER }
    }

    fn fail(&mut self, path: &str, what: String) -> Done {
        let _ = writeln!(self.err, "error: {path} {what}");
        Done::Failed
    }

    fn file(&mut self, host: Host, path: &Path) -> Done {
        if opencode_plugin::takes_plugin(host) {
            return self.plugin_file(host, path);
        }
        let shown = show_path(path, self.places.home.as_deref());
        let _ = writeln!(self.out, "{host}, {} settings: {shown}", self.options.scope);
        // A settings file that is a symlink (dotfiles) is updated where it points.
        let target = if fsx::is_symlink(path) {
            match fs::canonicalize(path) {
                Ok(real) => real,
                Err(e) => {
                    return self.fail(
                        &shown,
                        format!("is a symlink whose target cannot be found ({e}); nothing changed"),
                    );
                }
            }
        } else {
            path.to_path_buf()
        };
        let existing = match fsx::read_through_symlink(&target, SETTINGS_LIMIT) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return self.fail(&shown, format!("cannot be read ({e}); nothing changed")),
        };
        if existing.is_none() && self.mode == Mode::Uninstall {
            let _ = writeln!(self.out, "  no such file; nothing to remove");
            return Done::Unchanged;
        }
        let old_text = match existing.as_deref().map(std::str::from_utf8).transpose() {
            Ok(text) => text,
            Err(_) => return self.fail(&shown, "is not UTF-8 text; left untouched".into()),
        };
        let before: Value = match old_text {
            Some(text) if !text.trim().is_empty() => match serde_json::from_str(text) {
                Ok(value) => value,
                Err(e) => {
                    return self.fail(
                        &shown,
                        format!(
                            "is not valid JSON ({e}); left untouched. Fix the file (or move it away) and run \
                             `baton {}` again.",
                            if self.mode == Mode::Install { "install" } else { "uninstall" }
                        ),
                    );
                }
            },
            _ => Value::Object(Default::default()),
        };

        let key = state::key(path);
        let entry = self.installs.as_ref().and_then(|i| i.installs.get(&key)).cloned();
        let (hooks, statusline) = parts_of(host, path, self.options);
        let plan = Plan {
            host,
            binary: self.binary.clone(),
            hooks,
            statusline,
            replace_statusline: self.options.replace_statusline,
            replace_other_monitors: self.options.replace_other_monitors,
            subagent_rows: self.options.subagent_rows,
        };
        if self.mode == Mode::Uninstall {
            if let (Some(entry), Some(bytes)) = (entry.as_ref(), existing.as_deref()) {
                if let Some(done) = self.restore_exact(&key, entry, &target, &shown, bytes) {
                    return done;
                }
            }
        }
        let merged = match self.mode {
            Mode::Install => {
                merge::install(&before, &plan, &entry.as_ref().map(|e| e.record.clone()).unwrap_or_default())
            }
            Mode::Uninstall => merge::uninstall(&before, &plan, entry.as_ref().map(|e| &e.record)),
        };
        let mut outcome: Outcome = match merged {
            Ok(outcome) => outcome,
            Err(e) => {
                let why = format!(
                    "is not a settings file baton can edit: {e}; left untouched. Fix it by hand and run again."
                );
                return self.fail(&shown, why);
            }
        };
        if self.mode == Mode::Install && existing.is_none() && entry.is_none() {
            outcome.record.created_file = true;
        }
        let changed = existing.is_none()
            || serde_json::to_string(&before).ok() != serde_json::to_string(&outcome.settings).ok();
        // Changes are listed once they are made (or in a dry run); notes at once.
        let report = |out: &mut dyn Write| {
            for change in &outcome.changes {
                let _ = writeln!(out, "  {change}");
            }
        };
        for note in &outcome.notes {
            let _ = writeln!(self.out, "  ! {note}");
        }
        if !changed {
            let what = match self.mode {
                Mode::Install => "already installed; nothing to change",
                Mode::Uninstall => "nothing of baton's here; nothing to change",
            };
            let _ = writeln!(self.out, "  {what}");
            return Done::Unchanged;
        }
        // A file install created goes again when uninstall leaves it empty.
        let delete = self.mode == Mode::Uninstall
            && entry.as_ref().is_some_and(|e| e.record.created_file)
            && outcome.record.is_empty()
            && outcome.settings.as_object().is_some_and(|o| o.is_empty());
        let new_text = if delete { String::new() } else { render(&outcome.settings, old_text) };

        if self.options.dry_run {
            report(self.out);
            let old_label =
                if existing.is_some() { format!("{shown} (now)") } else { "/dev/null".to_string() };
            let new_label = if delete { "/dev/null".to_string() } else { format!("{shown} (after)") };
            let diff = diff::unified(old_text.unwrap_or(""), &new_text, &old_label, &new_label);
            let _ = write!(self.out, "{diff}");
            if existing.is_some() && read_only(&target) {
                let _ = writeln!(self.out, "  ! the file is read-only: a real run would stop here");
            }
            return Done::Changed;
        }

        if existing.is_some() && read_only(&target) {
            return self.fail(
                &shown,
                format!(
                    "is read-only; nothing changed. Make it writable (chmod u+w {}) and run again.",
                    target.display()
                ),
            );
        }
        let mut backup = entry.as_ref().and_then(|e| e.backup.clone());
        // The backup is the file as it was before baton only while nothing but baton
        // wrote it since: then uninstall may put it back byte for byte.
        let mut exact = entry
            .as_ref()
            .and_then(|e| e.written_sha256.as_deref())
            .is_some_and(|sha| existing.as_deref().is_some_and(|b| state::digest(b) == sha));
        // A file install created and uninstall empties holds nothing of the user's: it goes
        // without a backup (which would keep its folder from going too).
        if let Some(bytes) = existing.as_ref().filter(|_| !delete) {
            if existing_backup(path).is_none() {
                match write_backup(path, bytes) {
                    Ok(written) => {
                        let _ = writeln!(
                            self.out,
                            "  backed up the file as it was to {}",
                            show_path(&written, self.places.home.as_deref())
                        );
                        backup = Some(written.display().to_string());
                        exact = entry.is_none();
                    }
                    Err(e) => {
                        return self.fail(&shown, format!("cannot be backed up ({e}); nothing changed"));
                    }
                }
            }
        }
        let folder = target.parent().filter(|p| !p.as_os_str().is_empty());
        let created_folder = entry.as_ref().is_some_and(|e| e.created_folder)
            || (self.mode == Mode::Install && folder.is_some_and(|dir| !dir.exists()));
        let written = if delete {
            fs::remove_file(&target)
        } else {
            let folder = target.parent().filter(|p| !p.as_os_str().is_empty());
            folder
                .map(|dir| fsx::ensure_dir(dir, self.options.scope == Scope::User))
                .unwrap_or(Ok(()))
                .and_then(|_| fsx::write_atomic(&target, new_text.as_bytes(), self.write_options()))
        };
        if let Err(e) = written {
            return self.fail(&shown, format!("cannot be written ({e}); the file is as it was"));
        }
        report(self.out);
        if delete {
            let _ = writeln!(self.out, "  removed the file (install had created it)");
            // `remove_dir` removes only an empty folder: anything put there stays.
            if let Some(dir) = folder.filter(|dir| created_folder && fs::remove_dir(dir).is_ok()) {
                let _ = writeln!(
                    self.out,
                    "  removed {} (install had created it; it was empty)",
                    show_path(dir, self.places.home.as_deref())
                );
            }
        }
        if let Some(installs) = self.installs.as_mut() {
            if outcome.record.is_empty() {
                installs.installs.remove(&key);
            } else {
                installs.installs.insert(
                    key,
                    state::Entry {
                        host: host.id().to_string(),
                        binary: self.binary.clone(),
                        installed_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                        written_sha256: (exact && backup.is_some() && self.mode == Mode::Install)
                            .then(|| state::digest(new_text.as_bytes())),
                        backup,
                        created_folder,
                        record: outcome.record,
                    },
                );
            }
            self.installs_changed = true;
        }
        Done::Changed
    }
}

impl Run<'_> {
    /// Uninstall's first choice: when the file holds exactly the bytes install wrote and
    /// the backup is the file as it was before, the backup goes back byte for byte (one-line
    /// objects stay one line, key order and spacing as they were) and is then removed.
    /// `None` when that does not apply: the structural removal follows.
    fn restore_exact(
        &mut self,
        key: &str,
        entry: &state::Entry,
        target: &Path,
        shown: &str,
        current: &[u8],
    ) -> Option<Done> {
        let sha = entry.written_sha256.as_deref()?;
        let backup = PathBuf::from(entry.backup.as_deref()?);
        if state::digest(current) != sha || fsx::is_symlink(&backup) {
            return None;
        }
        let original = fsx::read_limited(&backup, SETTINGS_LIMIT).ok()?;
        let shown_backup = show_path(&backup, self.places.home.as_deref());
        if self.options.dry_run {
            let _ = writeln!(self.out, "  would restore the file byte for byte from {shown_backup}");
            let old = String::from_utf8_lossy(current);
            let new = String::from_utf8_lossy(&original);
            let diff = diff::unified(&old, &new, &format!("{shown} (now)"), &format!("{shown} (after)"));
            let _ = write!(self.out, "{diff}");
            return Some(Done::Changed);
        }
        if read_only(target) {
            return None;
        }
        if let Err(e) = fsx::write_atomic(target, &original, self.write_options()) {
            return Some(self.fail(shown, format!("cannot be written ({e}); the file is as it was")));
        }
        let _ = writeln!(self.out, "  restored the file byte for byte as it was before install");
        match fs::remove_file(&backup) {
            Ok(()) => {
                let _ = writeln!(self.out, "  removed the backup {shown_backup}");
            }
            Err(e) => {
                let _ = writeln!(self.out, "  ! the backup {shown_backup} could not be removed ({e})");
            }
        }
        if let Some(installs) = self.installs.as_mut() {
            installs.installs.remove(key);
            self.installs_changed = true;
        }
        Some(Done::Changed)
    }
}

/// What each host installed for says of its own approval step ([`crate::host::Host::install_notes`]),
/// in the hosts' order, each line once (OpenCode and Kilo CLI share one).
fn trust_notes(files: &[(Host, PathBuf)], scope: Scope, places: &Places) -> Vec<String> {
    let is_baton_hook =
        |command: &str| matches!(commands::recognise(command), Some(BatonCommand::Hook { .. }));
    let mut lines: Vec<String> = Vec::new();
    for host in Host::ALL.iter().copied() {
        let paths: Vec<PathBuf> = files.iter().filter(|(h, _)| *h == host).map(|(_, p)| p.clone()).collect();
        if paths.is_empty() {
            continue;
        }
        let facts = InstallFacts { places, scope, files: &paths, is_baton_hook: &is_baton_hook };
        for line in host.host().install_notes(&facts) {
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
    }
    lines
}

/// Runs install or uninstall, telling the person on `out` and `err`.
pub fn run(mode: Mode, options: &Options, out: &mut dyn Write, err: &mut dyn Write) -> Ended {
    let places = Places::from_env();
    let verb = if mode == Mode::Install { "install" } else { "uninstall" };
    let Targets { files, skipped } = match targets(options, &places) {
        Ok(found) => found,
        Err((code, e)) => {
            let _ = writeln!(err, "baton {verb}: {e}");
            return code;
        }
    };
    let binary = match current_binary() {
        Ok(binary) => binary,
        Err(e) => {
            let _ = writeln!(err, "baton {verb}: {e}");
            return Ended::Failed;
        }
    };

    let state_dir = crate::places::state_dir();
    // One lock for every install and uninstall of this user: read-merge-write of the
    // settings and of the record happen under it, so two runs at once serialise.
    let _lock = match (&state_dir, options.dry_run) {
        (Some(dir), false) => {
            match fsx::ensure_dir(dir, true).and_then(|_| FileLock::acquire(&state::lock_path(dir))) {
                Ok(lock) => Some(lock),
                Err(e) => {
                    let _ = writeln!(
                        err,
                        "baton {verb}: cannot lock {} ({e}); check that the folder is yours and writable",
                        state::lock_path(dir).display()
                    );
                    return Ended::Failed;
                }
            }
        }
        _ => None,
    };
    let installs = match &state_dir {
        Some(dir) => match state::load(&state::path(dir)) {
            Ok(installs) => Some(installs),
            Err(e) => {
                let _ = writeln!(
                    err,
                    "warning: {e}; install records are not used or updated this time (move the file away to start afresh)"
                );
                None
            }
        },
        None => {
            let _ = writeln!(
                err,
                "warning: no state dir ({} is not set); install records are not kept",
                crate::places::HOME_VARIABLE
            );
            None
        }
    };

    let mut run = Run { mode, options, binary, places, installs, installs_changed: false, out, err };
    let mut results = Vec::new();
    for (host, path) in &files {
        results.push(run.file(*host, path));
    }
    for line in &skipped {
        let _ = writeln!(run.out, "{line}");
    }
    if run.installs_changed {
        if let (Some(dir), Some(installs)) = (&state_dir, &run.installs) {
            if let Err(e) = state::save(&state::path(dir), installs) {
                let _ = writeln!(
                    run.err,
                    "warning: the settings were changed, but baton's record in {} could not be written ({e}); \
                     uninstall will still remove baton and unwrap the statusline",
                    state::path(dir).display()
                );
            }
        }
    }

    let failed = results.contains(&Done::Failed);
    let changed = results.contains(&Done::Changed);
    if options.dry_run {
        let _ = writeln!(run.out, "dry run: nothing was written");
    } else if mode == Mode::Install && !failed && !files.is_empty() {
        if options.hooks {
            for line in trust_notes(&files, options.scope, &run.places) {
                let _ = writeln!(run.out, "{line}");
            }
        }
        let _ = writeln!(
            run.out,
            "baton is installed. `baton doctor` checks the setup; `baton uninstall` undoes it."
        );
    } else if mode == Mode::Uninstall && !failed && changed {
        let _ = writeln!(run.out, "baton is uninstalled.");
    }
    if failed { Ended::Failed } else { Ended::Done }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn files_keep_their_indentation() {
        let value = json!({"a": {"b": 1}});
        assert_eq!(render(&value, None), "{\n  \"a\": {\n    \"b\": 1\n  }\n}\n");
        assert_eq!(render(&value, Some("{\n    \"x\": 1\n}")), "{\n    \"a\": {\n        \"b\": 1\n    }\n}");
        assert_eq!(render(&value, Some("{\n\t\"x\": 1\n}\n")), "{\n\t\"a\": {\n\t\t\"b\": 1\n\t}\n}\n");
        assert_eq!(render(&value, Some("")), render(&value, None));
    }

    fn places(root: &Path) -> Places {
        Places {
            home: Some(root.join("h")),
            claude_config_dir: None,
            codex_home: None,
            project: Some(root.join("p")),
        }
    }

    fn options(hosts: Vec<HostChoice>, scope: Scope) -> Options {
        Options {
            hosts,
            scope,
            dry_run: false,
            hooks: true,
            statusline: true,
            replace_statusline: false,
            replace_other_monitors: false,
            subagent_rows: false,
        }
    }

    #[test]
    fn all_takes_hosts_that_are_set_up() {
        let dir = tempfile::tempdir().unwrap();
        let p = places(dir.path());
        fs::create_dir_all(dir.path().join("h/.codex")).unwrap();
        let Targets { files, skipped } = targets(&options(vec![HostChoice::All], Scope::User), &p).unwrap();
        let hosts: Vec<Host> = files.iter().map(|(h, _)| *h).collect();
        assert_eq!(hosts, [Host::Claude, Host::Codex]);
        assert_eq!(skipped.len(), Host::ALL.len() - 2, "every other host: {skipped:?}");
        // Qwen Code's folder makes it one of them.
        fs::create_dir_all(dir.path().join("h/.qwen")).unwrap();
        let found = targets(&options(vec![HostChoice::All], Scope::User), &p).unwrap();
        let hosts: Vec<Host> = found.files.iter().map(|(h, _)| *h).collect();
        assert_eq!(hosts, [Host::Claude, Host::Codex, Host::Qwen]);
        // Asked for by name, a host is set up even without its folder.
        let found =
            targets(&options(vec![HostChoice::One(Host::Gemini), HostChoice::All], Scope::User), &p).unwrap();
        assert_eq!(found.files.len(), 4, "Factory Droid, Copilot CLI and OpenCode are not set up here");
        // Copilot CLI's folder makes it one of them.
        fs::create_dir_all(dir.path().join("h/.copilot")).unwrap();
        let found = targets(&options(vec![HostChoice::All], Scope::User), &p).unwrap();
        let hosts: Vec<Host> = found.files.iter().map(|(h, _)| *h).collect();
        assert_eq!(hosts, [Host::Claude, Host::Codex, Host::Qwen, Host::Copilot, Host::Copilot]);
        assert!(found.files[3].1.ends_with(".copilot/hooks/baton.json"));
        // Its statusline is in its user settings.json, apart from the hooks.
        assert!(found.files[4].1.ends_with(".copilot/settings.json"));
        assert_eq!(parts_of(Host::Copilot, &found.files[3].1, &options(vec![], Scope::User)), (true, false));
        assert_eq!(parts_of(Host::Copilot, &found.files[4].1, &options(vec![], Scope::User)), (false, true));
        let found = targets(&options(vec![HostChoice::One(Host::Copilot)], Scope::Project), &p).unwrap();
        assert_eq!(found.files.len(), 1, "a repository's settings may not set a statusline");
        let mut only = options(vec![HostChoice::One(Host::Copilot)], Scope::Project);
        only.hooks = false;
        let found = targets(&only, &p).unwrap();
        assert!(found.files.is_empty(), "no hook file is written for a statusline: {:?}", found.files);
        assert!(found.skipped[0].contains("may not set a statusline"), "{:?}", found.skipped);
        // Local scope: only Claude Code has one.
        let found = targets(&options(vec![HostChoice::All], Scope::Local), &p).unwrap();
        assert_eq!(found.files.len(), 1);
        assert_eq!(found.skipped.len(), Host::ALL.len() - 1);
        assert!(targets(&options(vec![HostChoice::One(Host::Codex)], Scope::Local), &p).is_err());
    }

    #[test]
    fn statusline_only_skips_hosts_without_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = options(vec![HostChoice::One(Host::Claude), HostChoice::One(Host::Gemini)], Scope::User);
        o.hooks = false;
        let found = targets(&o, &places(dir.path())).unwrap();
        assert_eq!(found.files.len(), 1);
        assert!(found.skipped[0].contains("no command status line"));
    }
}
