//! OpenCode (and Kilo CLI, built on it) has no settings baton can merge into: install writes
//! baton's own plugin file (`plugins/baton.js` in the host's config folder,
//! [`crate::host::plugin_text`])
//! and uninstall removes exactly that file, and the `plugins/` folder when install made
//! it and nothing else is in it. A file of that name baton did not write (it lacks
//! baton's mark) is never replaced or removed.

use std::fs;
use std::io;
use std::path::Path;

use super::hosts::{Host, Places, Scope, show_path};
use super::merge::Record;
use super::{Done, Mode, Run, diff, state};
use crate::fsx;
use crate::host::{self, Install};

const PLUGIN_LIMIT: u64 = 1024 * 1024;

impl Run<'_> {
    /// Install or uninstall baton's plugin file for `host` at `path`.
    pub(super) fn plugin_file(&mut self, host: Host, path: &Path) -> Done {
        let shown = show_path(path, self.places.home.as_deref());
        let _ = writeln!(self.out, "{host}, {} plugin: {shown}", self.options.scope);
        if fsx::is_symlink(path) {
            return self.fail(
                &shown,
                "is a symlink; left untouched (baton writes its plugin as a plain file)".into(),
            );
        }
        let existing = match fsx::read_limited(path, PLUGIN_LIMIT) {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return self.fail(&shown, format!("cannot be read ({e}); nothing changed")),
        };
        let foreign = existing.as_deref().is_some_and(|text| !host::is_baton_plugin(text));
        let key = state::key(path);
        let entry = self.installs.as_ref().and_then(|i| i.installs.get(&key)).cloned();
        match self.mode {
            Mode::Install => {
                if foreign {
                    return self.fail(
                        &shown,
                        format!(
                            "is not baton's plugin; left untouched. Move it away and run `baton install --host {}` again.",
                            host.id()
                        ),
                    );
                }
                let text = host::plugin_text(&self.binary, host.id());
                if existing.as_deref() == Some(text.as_str()) {
                    let _ = writeln!(self.out, "  already installed; nothing to change");
                    return Done::Unchanged;
                }
                if self.options.dry_run {
                    let old = existing.as_deref().unwrap_or("");
                    let old_label =
                        if existing.is_some() { format!("{shown} (now)") } else { "/dev/null".to_string() };
                    let _ = write!(
                        self.out,
                        "{}",
                        diff::unified(old, &text, &old_label, &format!("{shown} (after)"))
                    );
                    return Done::Changed;
                }
                let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
                let created_folder = entry.as_ref().is_some_and(|e| e.created_folder)
                    || folder.is_some_and(|dir| !dir.exists());
                let user = self.options.scope == Scope::User;
                let options = if user { fsx::WriteOptions::HOME } else { fsx::WriteOptions::USER };
                let written = folder
                    .map(|dir| fsx::ensure_dir(dir, user))
                    .unwrap_or(Ok(()))
                    .and_then(|_| fsx::write_atomic(path, text.as_bytes(), options));
                if let Err(e) = written {
                    return self.fail(&shown, format!("cannot be written ({e}); nothing changed"));
                }
                let what = if existing.is_some() { "replaced" } else { "wrote" };
                let _ = writeln!(self.out, "  {what} baton's plugin (it runs {} hook)", self.binary);
                if let Some(installs) = self.installs.as_mut() {
                    installs.installs.insert(
                        key,
                        state::Entry {
                            host: host.id().to_string(),
                            binary: self.binary.clone(),
                            installed_at: chrono::Utc::now()
                                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                            backup: None,
                            written_sha256: Some(state::digest(text.as_bytes())),
                            created_folder,
                            record: Record { created_file: true, ..Record::default() },
                        },
                    );
                    self.installs_changed = true;
                }
                Done::Changed
            }
            Mode::Uninstall => {
                let Some(old) = existing else {
                    let _ = writeln!(self.out, "  no such file; nothing to remove");
                    return Done::Unchanged;
                };
                if foreign {
                    let _ = writeln!(self.out, "  not baton's plugin; nothing to change");
                    return Done::Unchanged;
                }
                if self.options.dry_run {
                    let _ = write!(
                        self.out,
                        "{}",
                        diff::unified(&old, "", &format!("{shown} (now)"), "/dev/null")
                    );
                    return Done::Changed;
                }
                if let Err(e) = fs::remove_file(path) {
                    return self.fail(&shown, format!("cannot be removed ({e})"));
                }
                let _ = writeln!(self.out, "  removed baton's plugin");
                let folder = path.parent().filter(|dir| {
                    entry.as_ref().is_some_and(|e| e.created_folder) && fs::remove_dir(dir).is_ok()
                });
                if let Some(dir) = folder {
                    let _ = writeln!(
                        self.out,
                        "  removed {} (install had created it; it was empty)",
                        show_path(dir, self.places.home.as_deref())
                    );
                }
                if let Some(installs) = self.installs.as_mut() {
                    installs.installs.remove(&key);
                    self.installs_changed = true;
                }
                Done::Changed
            }
        }
    }
}

/// What one scope's plugin file holds, for doctor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginState {
    Missing,
    /// A file of that name baton did not write.
    Foreign,
    Unreadable(String),
    /// baton's plugin: the binary it runs, and whether it is this build's text for it.
    Baton {
        binary: Option<String>,
        current: bool,
    },
}

/// One scope's plugin file as found.
#[derive(Debug, Clone)]
pub struct PluginFile {
    pub scope: Scope,
    pub shown: String,
    pub state: PluginState,
}

/// The plugin state of a file's text for `host` (pure).
pub fn plugin_state(text: &str, host: Host) -> PluginState {
    if !host::is_baton_plugin(text) {
        return PluginState::Foreign;
    }
    let binary = host::plugin_binary(text);
    let current = binary.as_deref().is_some_and(|b| host::plugin_text(b, host.id()) == text);
    PluginState::Baton { binary, current }
}

/// Whether `host` takes baton's plugin file in place of settings.
pub fn takes_plugin(host: Host) -> bool {
    host.install() == Install::Plugin
}

/// baton's plugin file of `host` in each scope.
pub fn plugin_files(places: &Places, host: Host) -> Vec<PluginFile> {
    let mut found = Vec::new();
    for scope in host.scopes() {
        let Ok(path) = places.settings_path(host, *scope) else { continue };
        let state = match fsx::read_limited(&path, PLUGIN_LIMIT) {
            Ok(bytes) => plugin_state(&String::from_utf8_lossy(&bytes), host),
            Err(e) if e.kind() == io::ErrorKind::NotFound => PluginState::Missing,
            Err(e) => PluginState::Unreadable(e.to_string()),
        };
        found.push(PluginFile { scope: *scope, shown: show_path(&path, places.home.as_deref()), state });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_files_are_told_apart() {
        let text = host::plugin_text("/b/baton", "opencode");
        let state = |text: &str| plugin_state(text, Host::OpenCode);
        assert_eq!(state(&text), PluginState::Baton { binary: Some("/b/baton".into()), current: true });
        let older = text.replace("TIMEOUT_MS", "TIMEOUT");
        assert_eq!(state(&older), PluginState::Baton { binary: Some("/b/baton".into()), current: false });
        assert_eq!(state("export const Mine = async () => ({});\n"), PluginState::Foreign);
        // Kilo CLI's file names its host: OpenCode's text is not current there.
        assert!(matches!(plugin_state(&text, Host::Kilo), PluginState::Baton { current: false, .. }));
    }
}
