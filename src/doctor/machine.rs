//! What doctor looks at on the machine: the newest bridge, baton's config files and the
//! windows they set, the state and temp dirs (and what another user could have planted
//! in them).

use std::fs;
use std::path::Path;

use super::report::{Check, Status};
use crate::config::Config;
use crate::util::text::outside_path;
use crate::{fsx, metrics, places};

/// The newest bridge in the temp dir, and whether it is fresh.
pub(super) fn bridge_check(stale_seconds: u64) -> Check {
    let tmp = places::temp_dir();
    let newest = fs::read_dir(&tmp)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("claude-ctx-") && name.ends_with(".json") && !name.ends_with("-warned.json")
        })
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            (meta.is_file() && fsx::is_mine(&meta)).then(|| (meta.modified().ok(), e.path()))
        })
        .max();
    let Some((_, path)) = newest else {
        return Check::new(
            Status::Ok,
            "bridge",
            format!(
                "no session has run yet (no claude-ctx-*.json in {}); the statusline writes one at the first render",
                tmp.display()
            ),
            None,
        );
    };
    let bridge = fsx::read_owned(&path, 64 * 1024).ok().and_then(|b| metrics::Bridge::parse(&b));
    let Some(bridge) = bridge else {
        return Check::new(
            Status::Warn,
            "bridge",
            format!("{} is not a valid bridge file", path.display()),
            Some(format!("rm {} (the statusline writes a new one)", path.display())),
        );
    };
    let age = metrics::now_unix() - bridge.timestamp;
    let session = &bridge.session_id;
    if age.unsigned_abs() <= stale_seconds {
        Check::new(
            Status::Ok,
            "bridge",
            format!("session {session}: {}% used, written {age} s ago", bridge.used_pct),
            None,
        )
    } else {
        Check::new(
            Status::Warn,
            "bridge",
            format!(
                "the newest bridge (session {session}) is {} old: fine if no session is open now; \
                 if one is, its statusline is not running baton",
                human_age(age)
            ),
            Some("open a session and check that the status line shows baton's meter; else run `baton install --statusline-only`".into()),
        )
    }
}

fn human_age(seconds: i64) -> String {
    match seconds.unsigned_abs() {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s if s < 172_800 => format!("{} h", s / 3600),
        s => format!("{} days", s / 86_400),
    }
}

pub(super) fn config_check(project: Option<&Path>) -> Check {
    let config = Config::load(project);
    let read: Vec<String> =
        config.files.iter().filter(|(_, e)| *e).map(|(p, _)| outside_path(p).to_string()).collect();
    if !config.errors.is_empty() {
        Check::new(
            Status::Fail,
            "config",
            config.errors.join("; "),
            Some("edit the file named (`baton config` shows every value and where it comes from)".into()),
        )
    } else if !config.ignored.is_empty() {
        Check::new(
            Status::Warn,
            "config",
            config.ignored.join("; "),
            Some("a repository file may make baton quieter or stricter, never looser: set such keys in ~/.config/baton/config.json or the environment, or remove them from the repository file".into()),
        )
    } else if let Some(unread) = crate::config::unread_files(project).first() {
        Check::new(
            Status::Warn,
            "config",
            format!("{} is not read: baton reads JSON only", outside_path(unread)),
            Some(format!(
                "move its settings into {} (`baton config` lists the keys)",
                outside_path(&unread.with_extension("json"))
            )),
        )
    } else {
        let message = if read.is_empty() {
            "no config files; defaults apply".to_string()
        } else {
            format!("{} parse", read.join(", "))
        };
        Check::new(Status::Ok, "config", message, None)
    }
}

/// Why files named `prefix…` in `dir` would not be read, for those that are not plain
/// files (a FIFO, a symlink, a device: planted, not written by baton). At most three
/// are named.
fn planted(dir: Option<&Path>, prefix: &str) -> Vec<String> {
    let Some(dir) = dir else { return vec![] };
    let mut reasons: Vec<String> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_file()))
        .filter_map(|e| fsx::refusal(&e.path(), 1024 * 1024, false))
        .collect();
    reasons.sort();
    let more = reasons.len().saturating_sub(3);
    reasons.truncate(3);
    if more > 0 {
        reasons.push(format!("and {more} more"));
    }
    reasons
}

/// Files in the shared temp dir under baton's (GSD's) names that are not plain files:
/// baton ignores them (they cannot hang or redirect it), but someone put them there.
pub(super) fn temp_dir_planted_check() -> Option<Check> {
    let reasons = planted(Some(&places::temp_dir()), "claude-ctx-");
    (!reasons.is_empty()).then(|| {
        Check::new(
            Status::Warn,
            "temp dir files",
            format!("ignored: {}", reasons.join("; ")),
            Some(
                "remove them if they are yours; if another user planted them, baton already ignores them"
                    .into(),
            ),
        )
    })
}

/// baton's versioned state files: one written by a newer baton is left alone (and
/// said here), as is one that cannot be read (a FIFO, a symlink, too large, broken).
pub(super) fn state_files_check() -> Check {
    let files = [crate::handoff::store::registry_file(), metrics::learned::file(), metrics::windows::file()];
    let mut problems: Vec<String> = files.iter().flatten().filter_map(|file| file.problem()).collect();
    problems.extend(planted(places::session_dir().as_deref(), "claude-ctx-"));
    if problems.is_empty() {
        Check::new(Status::Ok, "state files", "baton's state files are readable and of a known version", None)
    } else {
        Check::new(
            Status::Warn,
            "state files",
            problems.join("; "),
            Some("upgrade baton, or remove the file named (baton starts it afresh)".into()),
        )
    }
}

/// The context windows baton knows (remembered, configured, its table): informational.
pub(super) fn windows_check(project: Option<&Path>) -> Check {
    let config = crate::config::Config::load(project);
    let known = crate::metrics::windows::known_windows(
        &crate::metrics::windows::remembered_windows(),
        &config.configured_windows(),
    );
    let limits = crate::metrics::Limits::from_settings(config.settings());
    let known = crate::metrics::with_compaction_points(known, &limits, project);
    Check::new(
        Status::Ok,
        "windows",
        crate::metrics::windows::doctor_line(&known, config.settings().default_window_tokens),
        None,
    )
}

pub(super) fn state_dir_check() -> Check {
    let Some(dir) = places::state_dir() else {
        return Check::new(
            Status::Fail,
            "state dir",
            format!("no state dir: {} is not set", places::HOME_VARIABLE),
            Some("set HOME (or XDG_STATE_HOME to an absolute path)".into()),
        );
    };
    // Doctor changes nothing: a state dir that does not exist yet is not created, its
    // nearest existing parent is checked instead.
    let written = if fs::symlink_metadata(&dir).is_ok_and(|m| !m.is_dir()) {
        Err(std::io::Error::other("something else than a folder is in its place"))
    } else if dir.is_dir() {
        let probe = dir.join(format!(".doctor-probe-{}", fsx::random_hex(6)));
        let written = fsx::write_atomic(&probe, b"ok", fsx::WriteOptions::STATE);
        let _ = fs::remove_file(&probe);
        written.map(|_| format!("{} is writable", dir.display()))
    } else {
        let parent = dir.ancestors().skip(1).find(|a| a.is_dir()).unwrap_or(Path::new("/"));
        if fsx::writable(parent) {
            Ok(format!(
                "{} does not exist yet; install creates it (in {}, writable)",
                dir.display(),
                parent.display()
            ))
        } else {
            Err(std::io::Error::other(format!("{} is not writable", parent.display())))
        }
    };
    match written {
        Ok(message) => Check::new(Status::Ok, "state dir", message, None),
        Err(e) => Check::new(
            Status::Fail,
            "state dir",
            format!("{} is not writable ({e})", dir.display()),
            Some(format!(
                "make {} yours and writable, or set XDG_STATE_HOME to another folder",
                dir.display()
            )),
        ),
    }
}

pub(super) fn temp_dir_check() -> Check {
    let tmp = places::temp_dir();
    match fs::metadata(&tmp) {
        Err(e) => Check::new(
            Status::Fail,
            "temp dir",
            format!("{} cannot be read ({e})", tmp.display()),
            Some(format!("set {} to a folder that exists", places::TEMP_VARIABLE)),
        ),
        Ok(meta) => {
            // (No mode on Windows: the per-user temp folder is private by its ACL.)
            let (sticky, others_write) = crate::platform::owner_and_mode(&meta)
                .map_or((false, false), |(_, mode)| (mode & 0o1000 != 0, mode & 0o022 != 0));
            let probe = tmp.join(format!(".baton-doctor-{}", fsx::random_hex(6)));
            let writable = fsx::write_atomic(&probe, b"", fsx::WriteOptions::STATE).is_ok();
            let _ = fs::remove_file(&probe);
            if !writable {
                Check::new(
                    Status::Fail,
                    "temp dir",
                    format!("{} is not writable: the statusline cannot write the bridge", tmp.display()),
                    Some(private_temp_hint()),
                )
            } else if !others_write {
                Check::new(Status::Ok, "temp dir", format!("{} is private", tmp.display()), None)
            } else if sticky {
                Check::new(
                    Status::Ok,
                    "temp dir",
                    format!("{} is sticky (others cannot replace your files)", tmp.display()),
                    None,
                )
            } else {
                Check::new(
                    Status::Fail,
                    "temp dir",
                    format!(
                        "{} is writable by others without the sticky bit: they could replace baton's files",
                        tmp.display()
                    ),
                    Some(private_temp_hint()),
                )
            }
        }
    }
}

/// How to give baton a temp folder of the user's own.
fn private_temp_hint() -> String {
    if cfg!(windows) {
        "set TEMP and TMP to a folder of yours (the default, %USERPROFILE%\\AppData\\Local\\Temp, is)".into()
    } else {
        "set TMPDIR to a folder of yours (mkdir -m 700 ~/.cache/tmp; export TMPDIR=~/.cache/tmp)".into()
    }
}
