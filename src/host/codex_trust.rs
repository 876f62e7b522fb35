//! Codex's hook trust. Codex runs a hook from `hooks.json` only once the user has trusted
//! it (interactive `codex` shows "Hooks need review"; `/hooks` lists them), and keeps
//! that trust in `$CODEX_HOME/config.toml`:
//!
//! ```toml
//! [hooks.state."/abs/path/hooks.json:post_tool_use:0:0"]
//! trusted_hash = "sha256:…"
//! ```
//!
//! The key is the resolved path of the hooks file, the event in snake_case, the group's
//! index in the event's list and the hook's index in the group. The hash is the SHA-256 of
//! the hook's identity as Codex 0.171.0 normalises it: `{"event_name", "matcher"?,
//! "hooks": [{"type": "command", "command", "timeout", "async", "statusMessage"?}]}` as
//! compact JSON with sorted keys. A changed command (baton moved) changes the hash, and
//! Codex skips the hook until it is trusted again.
//!
//! The hashing is pure ([`identity_hash`], [`baton_hooks`], [`trust`]); [`load_states`]
//! is the one reader of `config.toml`, and takes from it only `hooks.state`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::fsx;

/// Hook events Codex 0.171.0 reads from `hooks.json`, with the label its trust keys use.
/// Other names in the file are ignored by Codex, so they have no trust to check.
const EVENTS: &[(&str, &str)] = &[
    ("PreToolUse", "pre_tool_use"),
    ("PermissionRequest", "permission_request"),
    ("PostToolUse", "post_tool_use"),
    ("PreCompact", "pre_compact"),
    ("PostCompact", "post_compact"),
    ("SessionStart", "session_start"),
    ("SessionEnd", "session_end"),
    ("UserPromptSubmit", "user_prompt_submit"),
    ("SubagentStart", "subagent_start"),
    ("SubagentStop", "subagent_stop"),
    ("Stop", "stop"),
    ("Interrupt", "interrupt"),
    ("PreModelRequest", "pre_model_request"),
    ("PostModelRequest", "post_model_request"),
];

/// A config.toml larger than this is not read (Codex's own are a few KiB).
const CONFIG_LIMIT: u64 = 4 * 1024 * 1024;

/// The label Codex uses for `event` in trust keys, if Codex knows the event.
pub fn event_label(event: &str) -> Option<&'static str> {
    EVENTS.iter().find(|(name, _)| *name == event).map(|(_, label)| *label)
}

/// The timeout Codex hashes (and runs with): SessionEnd and Interrupt hooks are clamped
/// to 1-3 s (1 when absent), the others default to 600 s and are at least 1.
fn normalised_timeout(label: &str, timeout: Option<u64>) -> u64 {
    match label {
        "session_end" | "interrupt" => timeout.unwrap_or(1).clamp(1, 3),
        _ => timeout.unwrap_or(600).max(1),
    }
}

/// Codex ignores a group's matcher on these events, and leaves it out of the hash.
fn keeps_matcher(label: &str) -> bool {
    !matches!(label, "user_prompt_submit" | "stop" | "interrupt")
}

/// `value` with every object's keys in sorted order (serde_json here keeps insertion
/// order, Codex hashes sorted keys).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&map[k]))).collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The `trusted_hash` Codex stores for a command hook (`hook`, an entry of a group's
/// `hooks` list) registered on the event labelled `label` in a group with `matcher`.
/// `None` when the entry is not a command hook Codex would run.
pub fn identity_hash(label: &str, matcher: Option<&str>, hook: &Value) -> Option<String> {
    if hook.get("type").and_then(Value::as_str) != Some("command") {
        return None;
    }
    let command = hook.get("command").and_then(Value::as_str).filter(|c| !c.trim().is_empty())?;
    let mut handler = json!({
        "type": "command",
        "command": command,
        "timeout": normalised_timeout(label, hook.get("timeout").and_then(Value::as_u64)),
        "async": hook.get("async").and_then(Value::as_bool).unwrap_or(false),
    });
    if let Some(message) = hook.get("statusMessage").and_then(Value::as_str) {
        handler["statusMessage"] = Value::from(message);
    }
    let mut identity = json!({"event_name": label, "hooks": [handler]});
    if let Some(matcher) = matcher.filter(|_| keeps_matcher(label)) {
        identity["matcher"] = Value::from(matcher);
    }
    let bytes = serde_json::to_vec(&sorted(&identity)).ok()?;
    let mut hex = String::with_capacity(64);
    for byte in Sha256::digest(&bytes) {
        let _ = write!(hex, "{byte:02x}");
    }
    Some(format!("sha256:{hex}"))
}

/// One of baton's hooks in a Codex hooks file, with its trust key and current hash.
#[derive(Debug, Clone, PartialEq)]
pub struct CodexHook {
    pub event: String,
    pub key: String,
    pub hash: String,
}

/// Baton's hooks in a Codex hooks file (`settings`, read from `hooks_path`, the file's
/// resolved path as Codex names it in trust keys), in file order; `is_baton_hook` tells
/// baton's commands from others'.
pub fn baton_hooks(
    settings: &Value,
    hooks_path: &str,
    is_baton_hook: &dyn Fn(&str) -> bool,
) -> Vec<CodexHook> {
    let mut found = Vec::new();
    let Some(events) = settings.get("hooks").and_then(Value::as_object) else { return found };
    for (event, groups) in events {
        let Some(label) = event_label(event) else { continue };
        for (group_index, group) in groups.as_array().into_iter().flatten().enumerate() {
            let matcher = group.get("matcher").and_then(Value::as_str);
            let hooks = group.get("hooks").and_then(Value::as_array).into_iter().flatten();
            for (hook_index, hook) in hooks.enumerate() {
                let command = hook.get("command").and_then(Value::as_str).unwrap_or_default();
                if !is_baton_hook(command) {
                    continue;
                }
                if let Some(hash) = identity_hash(label, matcher, hook) {
                    found.push(CodexHook {
                        event: event.clone(),
                        key: format!("{hooks_path}:{label}:{group_index}:{hook_index}"),
                        hash,
                    });
                }
            }
        }
    }
    found
}

/// What `config.toml` says about one hook.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookState {
    pub enabled: Option<bool>,
    pub trusted_hash: Option<String>,
}

/// Whether Codex runs a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Trusted for its current command: Codex runs it.
    Trusted,
    /// Trusted once, for another command (baton moved or was reinstalled): skipped
    /// until trusted again.
    Outdated,
    /// Never trusted: skipped.
    Untrusted,
    /// Turned off in Codex (`/hooks`).
    Disabled,
}

/// The trust of `hook` per the states read from `config.toml`.
pub fn trust(hook: &CodexHook, states: &BTreeMap<String, HookState>) -> Trust {
    let state = states.get(&hook.key);
    if state.and_then(|s| s.enabled) == Some(false) {
        return Trust::Disabled;
    }
    match state.and_then(|s| s.trusted_hash.as_deref()) {
        Some(hash) if hash == hook.hash => Trust::Trusted,
        Some(_) => Trust::Outdated,
        None => Trust::Untrusted,
    }
}

/// Why Codex's `config.toml` gives no hook states (the words follow the file's name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("is not valid TOML ({0})")]
    Toml(String),
    #[error("is not UTF-8 text")]
    NotUtf8,
    #[error("cannot be read ({0})")]
    Unreadable(String),
}

/// `hooks.state` of a `config.toml`'s text. An entry with a field of the wrong type is
/// left out whole, as Codex leaves it out; a file that is not TOML is an error.
pub fn parse_states(text: &str) -> Result<BTreeMap<String, HookState>, ConfigError> {
    let table: toml::Table =
        text.parse().map_err(|e: toml::de::Error| ConfigError::Toml(e.message().to_string()))?;
    let mut states = BTreeMap::new();
    let entries = table.get("hooks").and_then(|h| h.get("state")).and_then(toml::Value::as_table);
    for (key, entry) in entries.into_iter().flatten() {
        let Some(entry) = entry.as_table() else { continue };
        let enabled = entry.get("enabled").map(toml::Value::as_bool);
        let trusted_hash = entry.get("trusted_hash").map(|v| v.as_str().map(str::to_string));
        if matches!(enabled, Some(None)) || matches!(trusted_hash, Some(None)) {
            continue;
        }
        states.insert(
            key.clone(),
            HookState { enabled: enabled.flatten(), trusted_hash: trusted_hash.flatten() },
        );
    }
    Ok(states)
}

/// Codex's `config.toml` in `codex_home`.
pub fn config_path(codex_home: &Path) -> PathBuf {
    codex_home.join("config.toml")
}

/// Reads the hook states from `config.toml` (a missing file has none). A symlinked
/// file (dotfiles) is read where it points.
pub fn load_states(config: &Path) -> Result<BTreeMap<String, HookState>, ConfigError> {
    let real = crate::platform::canonicalize(config).unwrap_or_else(|_| config.to_path_buf());
    match fsx::read_limited(&real, CONFIG_LIMIT) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes).map_err(|_| ConfigError::NotUtf8)?;
            parse_states(&text)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(ConfigError::Unreadable(e.to_string())),
    }
}

/// The path of a hooks file as Codex names it in trust keys: resolved (Codex resolves
/// `$CODEX_HOME`), or as given when it cannot be.
pub fn key_path(hooks_file: &Path) -> String {
    crate::platform::canonicalize(hooks_file)
        .unwrap_or_else(|_| hooks_file.to_path_buf())
        .display()
        .to_string()
}

/// The one-time step that makes Codex run baton's hooks, for messages.
pub const TRUST_STEP: &str = "run `codex` and, when it shows \"Hooks need review\", trust baton's \
     hooks (or trust them later in a session with `/hooks`)";

#[cfg(test)]
pub(super) fn is_baton_hook(command: &str) -> bool {
    use crate::install::commands::{BatonCommand, recognise};
    matches!(recognise(command), Some(BatonCommand::Hook { .. }))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Every expected hash below was written by the real Codex CLI 0.171.0 into
    // config.toml after "Trust all" on a hooks.json holding these hooks (see the commit).

    fn hook(command: &str, timeout: Option<u64>) -> Value {
        let mut hook = json!({"type": "command", "command": command});
        if let Some(t) = timeout {
            hook["timeout"] = json!(t);
        }
        hook
    }

    #[test]
    fn hashes_match_what_codex_writes() {
        let baton = "/opt/x/baton hook";
        let cases = [
            (
                "post_tool_use",
                None,
                hook(baton, Some(10)),
                "7d6a481ac26acb376f55a84d29d2b52f60a58d66d8f9cb0207e1608d402ef5e7",
            ),
            (
                "pre_compact",
                None,
                hook(baton, Some(10)),
                "80b34c2be94c16013f761f9f6565b74512119902e09a18fb3f6bcae2ce5964ee",
            ),
            (
                "session_start",
                None,
                hook(baton, Some(10)),
                "068932a1153f6ce5e8e01055daf58d81d23a51a56e48d5707954c0c97e111bde",
            ),
            // SessionEnd: clamped to 3 s, so 10 and 3 hash alike; 2 stays 2; the matcher counts.
            (
                "session_end",
                None,
                hook(baton, Some(10)),
                "bc7135af1c49c3b23cfb467e100722a4fdb5333cf4afbf87bd6f174b2453bf31",
            ),
            (
                "session_end",
                None,
                hook(baton, Some(3)),
                "bc7135af1c49c3b23cfb467e100722a4fdb5333cf4afbf87bd6f174b2453bf31",
            ),
            (
                "session_end",
                Some("x"),
                hook(baton, Some(2)),
                "d05bf678754c1009b9a990cc283a30162d588b2412ed7a84766f9fff0034194c",
            ),
            // No timeout: 600 s.
            (
                "pre_compact",
                None,
                hook(baton, None),
                "be4496f3e165168ba9c524cbad4cf905cbb4b065a68eb5ac0e141ec2712d9968",
            ),
            (
                "session_start",
                Some("*"),
                hook(baton, Some(10)),
                "25bf3372103a6b899db418f176770057f0d3640302ce9977df2d3a2aa2081c40",
            ),
            (
                "post_tool_use",
                Some("Bash"),
                hook("/usr/bin/true", Some(30)),
                "a65993debd2e0176bf2cd294a52f8e0ed34da8259f0472871bf25d308f8cc07e",
            ),
            (
                "post_tool_use",
                None,
                hook("'/opt/y z/baton' hook", Some(10)),
                "1b3c2c2f9fd12fc06ff09bb258de3be285d431ca5d03340c0875f1be49e00cba",
            ),
        ];
        for (label, matcher, hook, expected) in cases {
            assert_eq!(
                identity_hash(label, matcher, &hook).unwrap(),
                format!("sha256:{expected}"),
                "{label} {hook}"
            );
        }
        // statusMessage and async are part of the identity; Stop ignores its matcher.
        let with_message =
            json!({"type": "command", "command": baton, "timeout": 10, "statusMessage": "baton"});
        assert_eq!(
            identity_hash("post_tool_use", None, &with_message).unwrap(),
            "sha256:1ec1cd2b5222841d667eadf2dd110ea5b7faa55ff4c3f2759aca53ab06e7cb3a"
        );
        let stop = json!({"type": "command", "command": baton, "timeout": 10, "async": true});
        assert_eq!(
            identity_hash("stop", Some("y"), &stop).unwrap(),
            "sha256:e28dae4c3725abcfa2972ad137f984c67897d44c8fd8046f7f6bc9ace6e653a6"
        );
        assert_eq!(identity_hash("stop", None, &json!({"type": "prompt"})), None);
    }

    #[test]
    fn baton_hooks_are_found_with_their_keys() {
        let settings = json!({"hooks": {
            "PostToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/bin/true"}]},
                {"hooks": [{"type": "command", "command": "lint"}, {"type": "command", "command": "/opt/x/baton hook", "timeout": 10}]}
            ],
            "PostToolUseFailure": [{"hooks": [{"type": "command", "command": "/opt/x/baton hook"}]}],
            "SessionEnd": [{"hooks": [{"type": "command", "command": "/opt/x/baton hook", "timeout": 3}]}]
        }});
        let found = baton_hooks(&settings, "/c/hooks.json", &is_baton_hook);
        let keys: Vec<&str> = found.iter().map(|h| h.key.as_str()).collect();
        // PostToolUseFailure is not a Codex event: Codex ignores it, nothing to trust.
        assert_eq!(keys, ["/c/hooks.json:post_tool_use:1:1", "/c/hooks.json:session_end:0:0"]);
        assert_eq!(found[1].hash, "sha256:bc7135af1c49c3b23cfb467e100722a4fdb5333cf4afbf87bd6f174b2453bf31");
    }

    #[test]
    fn trust_is_read_from_config_toml() {
        let hook = CodexHook {
            event: "PostToolUse".into(),
            key: "/c/hooks.json:post_tool_use:0:0".into(),
            hash: "sha256:aa".into(),
        };
        let states = |text: &str| parse_states(text).unwrap();
        let at = |text: &str| trust(&hook, &states(text));
        assert_eq!(at(""), Trust::Untrusted);
        assert_eq!(
            at("[hooks.state.\"/c/hooks.json:post_tool_use:0:0\"]\ntrusted_hash = \"sha256:aa\"\n"),
            Trust::Trusted
        );
        assert_eq!(
            at("[hooks.state.\"/c/hooks.json:post_tool_use:0:0\"]\ntrusted_hash = \"sha256:bb\"\n"),
            Trust::Outdated
        );
        assert_eq!(
            at(
                "[hooks.state.\"/c/hooks.json:post_tool_use:0:0\"]\nenabled = false\ntrusted_hash = \"sha256:aa\"\n"
            ),
            Trust::Disabled
        );
        // Other keys are ignored; a malformed entry counts as none (Codex skips it too).
        let text = "model = \"x\"\n[hooks.state]\n\"k\" = 3\n[hooks.state.\"/c/hooks.json:post_tool_use:0:0\"]\ntrusted_hash = \"sha256:aa\"\n";
        assert_eq!(at(text), Trust::Trusted);
        let text = "[hooks.state.\"/c/hooks.json:post_tool_use:0:0\"]\nenabled = \"no\"\ntrusted_hash = \"sha256:aa\"\n";
        assert_eq!(at(text), Trust::Untrusted);
        assert!(parse_states("[hooks\n").unwrap_err().to_string().contains("not valid TOML"));
    }
}
