//! The pure core of `baton install` and `baton uninstall`: a host's settings (a JSON
//! value) and a [`Plan`] in; the new settings, the list of changes and the [`Record`]
//! out. No files: the edge (`install::mod`) reads, locks, backs up and writes.
//!
//! The rules: every key and every hook that is not baton's stays where it was (the map
//! keeps its order; removals use `shift_remove`); baton's hooks are recognised by their
//! command and updated in place, never added twice; a statusline that is not baton's is
//! wrapped (`baton statusline --wrap '<old>'`), so the old command lives on inside the
//! new one and uninstall puts it back byte for byte. What the settings themselves cannot
//! tell uninstall (containers install created, other monitors it removed, a statusline
//! it replaced) goes in the [`Record`].

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::commands::{self, BatonCommand};
use super::hosts::{EventSpec, Host};

/// What install or uninstall is asked to do for one settings file.
#[derive(Debug, Clone)]
pub struct Plan {
    pub host: Host,
    /// The absolute path of the baton binary to register.
    pub binary: String,
    /// Register (or remove) `baton hook`.
    pub hooks: bool,
    /// Register (or remove) the statusline (Claude Code only).
    pub statusline: bool,
    /// Replace another tool's statusline rather than wrap it.
    pub replace_statusline: bool,
    /// Remove other tools' context monitors (uninstall puts them back).
    pub replace_other_monitors: bool,
    /// Register Claude Code's `subagentStatusLine` too (opt-in: Claude Code 2.1.332 calls
    /// the setting deprecated and says so at every start while it is set).
    pub subagent_rows: bool,
}

/// What install did that uninstall cannot read back from the settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The file did not exist before install.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub created_file: bool,
    /// JSON pointers of the containers install created (`/hooks`, `/hooks/PostToolUse`,
    /// `/statusLine`): uninstall removes them once they are empty again, and only them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<String>,
    /// Other monitors install removed, in the order it removed them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_monitors: Vec<RemovedMonitor>,
    /// The statusLine that `--replace-statusline` replaced, as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced_statusline: Option<Value>,
}

impl Record {
    pub fn is_empty(&self) -> bool {
        *self == Record::default()
    }

    fn mark_created(&mut self, pointer: String) {
        if !self.created.contains(&pointer) {
            self.created.push(pointer);
        }
    }
}

/// One removed monitor: a whole group (`hook: None`) or one hook of a group, with the
/// indices it had when it was removed, so putting them back in reverse order restores
/// the exact layout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemovedMonitor {
    pub event: String,
    pub group: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<usize>,
    pub value: Value,
}

/// One change made to a settings file, for the report.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    HookAdded { event: String, command: String },
    HookUpdated { event: String, from: String, to: String },
    DuplicateRemoved { event: String },
    HookRemoved { event: String },
    StatuslineAdded { command: String },
    StatuslineUpdated { from: String, to: String },
    StatuslineWrapped { old: String },
    StatuslineReplaced { old: String },
    StatuslineUnwrapped { restored: String },
    StatuslineRestored { restored: String },
    StatuslineRemoved,
    SubagentStatuslineAdded { command: String },
    SubagentStatuslineUpdated { from: String, to: String },
    SubagentStatuslineRemoved,
    MonitorRemoved { event: String, name: &'static str, command: String },
    MonitorRestored { event: String, command: String },
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::HookAdded { event, command } => write!(f, "+ {event}: {command}"),
            Change::HookUpdated { event, from, to } => write!(f, "~ {event}: {from} -> {to}"),
            Change::DuplicateRemoved { event } => write!(f, "- {event}: a second baton hook (duplicate)"),
            Change::HookRemoved { event } => write!(f, "- {event}: baton hook"),
            Change::StatuslineAdded { command } => write!(f, "+ statusLine: {command}"),
            Change::StatuslineUpdated { from, to } => write!(f, "~ statusLine: {from} -> {to}"),
            Change::StatuslineWrapped { old } => {
                write!(
                    f,
                    "~ statusLine: wraps `{old}` (its output is shown as before; uninstall restores it)"
                )
            }
            Change::StatuslineReplaced { old } => {
                write!(f, "~ statusLine: replaces {old} (uninstall restores it)")
            }
            Change::StatuslineUnwrapped { restored } => write!(f, "~ statusLine: back to `{restored}`"),
            Change::StatuslineRestored { restored } => write!(f, "~ statusLine: restored {restored}"),
            Change::StatuslineRemoved => write!(f, "- statusLine: baton statusline"),
            Change::SubagentStatuslineAdded { command } => write!(f, "+ subagentStatusLine: {command}"),
            Change::SubagentStatuslineUpdated { from, to } => {
                write!(f, "~ subagentStatusLine: {from} -> {to}")
            }
            Change::SubagentStatuslineRemoved => {
                write!(f, "- subagentStatusLine: baton statusline --subagents")
            }
            Change::MonitorRemoved { event, name, command } => {
                write!(f, "- {event}: {name} `{command}` (uninstall restores it)")
            }
            Change::MonitorRestored { event, command } => write!(f, "+ {event}: restored `{command}`"),
        }
    }
}

/// Something worth saying that is not a change.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// Another tool's monitor stays registered: the agent is warned twice.
    OtherMonitor { event: String, name: &'static str, command: String },
    /// `statusLine` is there but has no command to wrap.
    StatuslineNotACommand,
    /// Uninstall removed baton's statusline and no record said what it replaced.
    StatuslineRemovedWithoutRecord,
    /// Uninstall found no record of a monitor it may have removed.
    RestoreSkipped { event: String, command: String },
    /// `subagentStatusLine` is another tool's: left as it is.
    SubagentStatuslineTaken { current: String },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::OtherMonitor { event, name, command } => write!(
                f,
                "{event}: {name} `{command}` is registered too, so the agent gets two sets of warnings. \
                 `baton install --replace-other-monitors` removes it (uninstall restores it)"
            ),
            Note::StatuslineNotACommand => write!(
                f,
                "statusLine is not a command baton can wrap; left as it is. \
                 `baton install --replace-statusline` replaces it (uninstall restores it)"
            ),
            Note::StatuslineRemovedWithoutRecord => write!(
                f,
                "baton's statusLine was removed; baton has no record of a statusLine it replaced \
                 (a `*.baton-backup-*` file beside the settings holds the settings from before the first install)"
            ),
            Note::RestoreSkipped { event, command } => {
                write!(f, "{event}: `{command}` is registered again already; not restored twice")
            }
            Note::SubagentStatuslineTaken { current } => write!(
                f,
                "subagentStatusLine is {current}, not baton's; left as it is (the agent panel shows no \
                 context meter per subagent)"
            ),
        }
    }
}

/// The result of a merge.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub settings: Value,
    pub changes: Vec<Change>,
    pub notes: Vec<Note>,
    pub record: Record,
}

/// Why a file cannot be merged: its shape is not a host's settings shape. Nothing is
/// written in that case.
#[derive(Debug, Clone, PartialEq)]
pub enum MergeError {
    NotAnObject,
    HooksNotAnObject,
    EventNotAList(String),
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MergeError::NotAnObject => write!(f, "the file is JSON but not an object (`{{ … }}`)"),
            MergeError::HooksNotAnObject => {
                write!(f, "`hooks` is not an object (`{{\"EventName\": [ … ]}}`)")
            }
            MergeError::EventNotAList(event) => write!(f, "`hooks.{event}` is not a list (`[ … ]`)"),
        }
    }
}

fn event_pointer(event: &str) -> String {
    format!("/hooks/{}", event.replace('~', "~0").replace('/', "~1"))
}

/// Sets `command` on an object (a no-op on anything else, which callers have ruled out).
fn set_command(value: &mut Value, command: &str) {
    if let Some(object) = value.as_object_mut() {
        object.insert("command".into(), Value::from(command));
    }
}

fn command_of(hook: &Value) -> Option<&str> {
    hook.get("command")?.as_str()
}

fn is_baton_hook(command: &str) -> bool {
    matches!(commands::recognise(command), Some(BatonCommand::Hook { .. }))
}

/// One removal made by [`remove_hooks`].
struct Removed {
    group: usize,
    hook: Option<usize>,
    value: Value,
    commands: Vec<String>,
}

/// Removes the hooks `select` picks (by command) from an event's groups, in order. A
/// group whose every hook is picked goes as a whole. Each removal keeps the indices it
/// had at that moment, so re-inserting in reverse order restores the layout exactly.
fn remove_hooks(groups: &mut Vec<Value>, mut select: impl FnMut(&str) -> bool) -> Vec<Removed> {
    let mut removed = Vec::new();
    let mut gi = 0;
    while gi < groups.len() {
        let picked: Vec<bool> = match groups[gi].get("hooks").and_then(Value::as_array) {
            Some(hooks) => hooks.iter().map(|h| command_of(h).is_some_and(&mut select)).collect(),
            None => Vec::new(),
        };
        if !picked.is_empty() && picked.iter().all(|p| *p) {
            let group = groups.remove(gi);
            let commands = group
                .get("hooks")
                .and_then(Value::as_array)
                .map(|hooks| hooks.iter().filter_map(command_of).map(str::to_string).collect())
                .unwrap_or_default();
            removed.push(Removed { group: gi, hook: None, value: group, commands });
            continue;
        }
        if let Some(hooks) = groups[gi].get_mut("hooks").and_then(Value::as_array_mut) {
            let mut hi = 0;
            for pick in picked {
                if pick {
                    let hook = hooks.remove(hi);
                    let commands = command_of(&hook).map(str::to_string).into_iter().collect();
                    removed.push(Removed { group: gi, hook: Some(hi), value: hook, commands });
                } else {
                    hi += 1;
                }
            }
        }
        gi += 1;
    }
    removed
}

fn new_group(spec: &EventSpec, command: &str, timeout: u64) -> Value {
    let hook = json!({"type": "command", "command": command, "timeout": timeout});
    match spec.matcher {
        Some(matcher) => json!({"matcher": matcher, "hooks": [hook]}),
        None => json!({"hooks": [hook]}),
    }
}

fn describe_statusline(value: &Value) -> String {
    match value.get("command").and_then(Value::as_str) {
        Some(command) => format!("`{command}`"),
        None => format!("`{value}`"),
    }
}

/// Registers baton in `settings` per `plan`. `previous` is the record of an earlier
/// install into the same file (empty when none); the outcome's record extends it.
pub fn install(settings: &Value, plan: &Plan, previous: &Record) -> Result<Outcome, MergeError> {
    let mut settings = settings.clone();
    let root = settings.as_object_mut().ok_or(MergeError::NotAnObject)?;
    let mut record = previous.clone();
    let mut changes = Vec::new();
    let mut notes = Vec::new();

    if plan.hooks {
        install_hooks(root, plan, &mut record, &mut changes, &mut notes)?;
    }
    if plan.statusline && plan.host.has_statusline() {
        install_statusline(root, plan, &mut record, &mut changes, &mut notes);
    }
    if plan.statusline && plan.subagent_rows && plan.host.has_subagent_statusline() {
        install_subagent_statusline(root, plan, &mut record, &mut changes, &mut notes);
    }
    Ok(Outcome { settings, changes, notes, record })
}

fn install_hooks(
    root: &mut Map<String, Value>,
    plan: &Plan,
    record: &mut Record,
    changes: &mut Vec<Change>,
    notes: &mut Vec<Note>,
) -> Result<(), MergeError> {
    if !root.contains_key("hooks") {
        root.insert("hooks".into(), Value::Object(Map::new()));
        record.mark_created("/hooks".into());
    }
    let hooks = root.get_mut("hooks").and_then(Value::as_object_mut).ok_or(MergeError::HooksNotAnObject)?;
    // Check every list baton adds to before changing anything. Other keys may hold
    // anything (Gemini CLI once kept `"enabled": true` in here).
    for (event, groups) in hooks.iter() {
        if !groups.is_array() && plan.host.events().iter().any(|s| s.name == event) {
            return Err(MergeError::EventNotAList(event.clone()));
        }
    }

    let events: Vec<String> = hooks.keys().cloned().collect();
    for event in events {
        let Some(groups) = hooks.get_mut(&event).and_then(Value::as_array_mut) else { continue };
        if plan.replace_other_monitors {
            for removed in remove_hooks(groups, |c| commands::other_monitor(c).is_some()) {
                for command in &removed.commands {
                    let name = commands::other_monitor(command).unwrap_or("another context monitor");
                    changes.push(Change::MonitorRemoved {
                        event: event.clone(),
                        name,
                        command: command.clone(),
                    });
                }
                record.removed_monitors.push(RemovedMonitor {
                    event: event.clone(),
                    group: removed.group,
                    hook: removed.hook,
                    value: removed.value,
                });
            }
        } else {
            for group in groups.iter() {
                for hook in group.get("hooks").and_then(Value::as_array).into_iter().flatten() {
                    if let Some(command) = command_of(hook) {
                        if let Some(name) = commands::other_monitor(command) {
                            let command = command.to_string();
                            notes.push(Note::OtherMonitor { event: event.clone(), name, command });
                        }
                    }
                }
            }
        }
    }

    let command = commands::hook_command(&plan.binary);
    for spec in plan.host.events() {
        if !hooks.contains_key(spec.name) {
            hooks.insert(spec.name.into(), Value::Array(Vec::new()));
            record.mark_created(event_pointer(spec.name));
        }
        let groups = hooks
            .get_mut(spec.name)
            .and_then(Value::as_array_mut)
            .ok_or_else(|| MergeError::EventNotAList(spec.name.into()))?;
        let mut seen = false;
        let duplicates = remove_hooks(groups, |c| {
            let pick = seen && is_baton_hook(c);
            seen |= is_baton_hook(c);
            pick
        });
        for _ in duplicates {
            changes.push(Change::DuplicateRemoved { event: spec.name.into() });
        }
        let existing = groups
            .iter_mut()
            .filter_map(|g| g.get_mut("hooks").and_then(Value::as_array_mut))
            .flatten()
            .find(|h| command_of(h).is_some_and(is_baton_hook));
        match existing {
            Some(hook) => {
                let from = command_of(hook).unwrap_or_default().to_string();
                if from != command {
                    set_command(hook, &command);
                    changes.push(Change::HookUpdated { event: spec.name.into(), from, to: command.clone() });
                }
            }
            None => {
                groups.push(new_group(spec, &command, plan.host.timeout_for(spec)));
                changes.push(Change::HookAdded { event: spec.name.into(), command: command.clone() });
            }
        }
    }
    Ok(())
}

/// The statusline object's key in its parent.
const STATUSLINE: &str = "statusLine";

/// The object holding the host's statusline: the settings' top, or the container its
/// pointer names (Qwen Code's `ui`), created and recorded when missing if `record` is
/// given. `None` when that container is there but not an object.
fn statusline_parent<'a>(
    root: &'a mut Map<String, Value>,
    host: Host,
    record: Option<&mut Record>,
) -> Option<&'a mut Map<String, Value>> {
    let pointer = host.statusline_pointer();
    let parent = pointer.rsplit_once('/').map(|(parent, _)| parent).unwrap_or_default();
    let Some(name) = parent.strip_prefix('/') else { return Some(root) };
    if !root.contains_key(name) {
        let record = record?;
        root.insert(name.into(), Value::Object(Map::new()));
        record.mark_created(parent.into());
    }
    root.get_mut(name)?.as_object_mut()
}

/// A new statusline object of the host's kind (Claude Code's with `padding: 0`).
fn new_statusline(host: Host, command: String) -> Value {
    match host {
        Host::Claude => json!({"type": "command", "command": command, "padding": 0}),
        _ => json!({"type": "command", "command": command}),
    }
}

fn install_statusline(
    root: &mut Map<String, Value>,
    plan: &Plan,
    record: &mut Record,
    changes: &mut Vec<Change>,
    notes: &mut Vec<Note>,
) {
    let plain = commands::statusline_command(&plan.binary, plan.host, None);
    let Some(parent) = statusline_parent(root, plan.host, Some(&mut *record)) else {
        notes.push(Note::StatuslineNotACommand);
        return;
    };
    let Some(current) = parent.get_mut(STATUSLINE) else {
        parent.insert(STATUSLINE.into(), new_statusline(plan.host, plain.clone()));
        record.mark_created(plan.host.statusline_pointer().into());
        changes.push(Change::StatuslineAdded { command: plain });
        return;
    };
    let old_command = current.get("command").and_then(Value::as_str).map(str::to_string);
    let recognised = old_command.as_deref().and_then(commands::recognise);
    match (old_command, recognised) {
        (Some(from), Some(BatonCommand::Statusline { wrap, .. })) => {
            if plan.replace_statusline && wrap.is_some() {
                let mut original = current.clone();
                set_command(&mut original, wrap.as_deref().unwrap_or_default());
                if record.replaced_statusline.is_none() {
                    record.replaced_statusline = Some(original.clone());
                }
                set_command(current, &plain);
                changes.push(Change::StatuslineReplaced { old: describe_statusline(&original) });
                return;
            }
            let to = commands::statusline_command(&plan.binary, plan.host, wrap.as_deref());
            if from != to {
                set_command(current, &to);
                changes.push(Change::StatuslineUpdated { from, to });
            }
        }
        (Some(old), _) if !plan.replace_statusline && current.is_object() => {
            set_command(current, &commands::statusline_command(&plan.binary, plan.host, Some(&old)));
            changes.push(Change::StatuslineWrapped { old });
        }
        (_, _) if plan.replace_statusline => {
            if record.replaced_statusline.is_none() {
                record.replaced_statusline = Some(current.clone());
            }
            let old = describe_statusline(current);
            match current.as_object_mut() {
                Some(object) => {
                    object.insert("type".into(), Value::from("command"));
                    object.insert("command".into(), Value::from(plain));
                }
                None => *current = new_statusline(plan.host, plain),
            }
            changes.push(Change::StatuslineReplaced { old });
        }
        _ => notes.push(Note::StatuslineNotACommand),
    }
}

/// Claude Code's `subagentStatusLine` (the agent panel's rows): baton's own when there is
/// none, updated in place when it is baton's, left alone (with a note) when it is another
/// tool's.
fn install_subagent_statusline(
    root: &mut Map<String, Value>,
    plan: &Plan,
    record: &mut Record,
    changes: &mut Vec<Change>,
    notes: &mut Vec<Note>,
) {
    let command = commands::subagent_statusline_command(&plan.binary);
    let Some(current) = root.get_mut(SUBAGENT_STATUSLINE) else {
        root.insert(SUBAGENT_STATUSLINE.into(), json!({"type": "command", "command": command}));
        record.mark_created(format!("/{SUBAGENT_STATUSLINE}"));
        changes.push(Change::SubagentStatuslineAdded { command });
        return;
    };
    let from = current.get("command").and_then(Value::as_str).map(str::to_string);
    match from.as_deref().map(commands::recognise) {
        Some(Some(BatonCommand::SubagentStatusline { .. })) => {
            let from = from.unwrap_or_default();
            if from != command {
                set_command(current, &command);
                changes.push(Change::SubagentStatuslineUpdated { from, to: command });
            }
        }
        _ => notes.push(Note::SubagentStatuslineTaken { current: describe_statusline(current) }),
    }
}

/// Removes baton's `subagentStatusLine` (another tool's stays).
fn uninstall_subagent_statusline(
    root: &mut Map<String, Value>,
    rest: &mut Record,
    changes: &mut Vec<Change>,
) {
    let pointer = format!("/{SUBAGENT_STATUSLINE}");
    rest.created.retain(|p| *p != pointer);
    let command = root.get(SUBAGENT_STATUSLINE).and_then(|v| v.get("command")).and_then(Value::as_str);
    if matches!(command.map(commands::recognise), Some(Some(BatonCommand::SubagentStatusline { .. }))) {
        root.shift_remove(SUBAGENT_STATUSLINE);
        changes.push(Change::SubagentStatuslineRemoved);
    }
}

/// Claude Code's setting for the agent panel's rows (deprecated in 2.1.332, still run).
const SUBAGENT_STATUSLINE: &str = "subagentStatusLine";

/// Removes what install added to `settings`: baton's hooks (every one, wherever it is),
/// baton's statusline (a wrapped one goes back to the command it wrapped), and puts
/// back what install removed, per `record`. Without a record, a container is removed
/// only when this uninstall emptied it. The outcome's record holds what is left to undo
/// (nothing after a full uninstall).
pub fn uninstall(settings: &Value, plan: &Plan, record: Option<&Record>) -> Result<Outcome, MergeError> {
    let mut settings = settings.clone();
    let root = settings.as_object_mut().ok_or(MergeError::NotAnObject)?;
    let mut rest = record.cloned().unwrap_or_default();
    let mut changes = Vec::new();
    let mut notes = Vec::new();

    if plan.hooks {
        uninstall_hooks(root, record, &mut rest, &mut changes, &mut notes)?;
    }
    if plan.statusline && plan.host.has_statusline() {
        uninstall_statusline(root, plan.host, record, &mut rest, &mut changes, &mut notes);
    }
    if plan.statusline && plan.host.has_subagent_statusline() {
        uninstall_subagent_statusline(root, &mut rest, &mut changes);
    }
    if rest.created.is_empty() && rest.removed_monitors.is_empty() && rest.replaced_statusline.is_none() {
        rest = Record::default();
    }
    Ok(Outcome { settings, changes, notes, record: rest })
}

fn uninstall_hooks(
    root: &mut Map<String, Value>,
    record: Option<&Record>,
    rest: &mut Record,
    changes: &mut Vec<Change>,
    notes: &mut Vec<Note>,
) -> Result<(), MergeError> {
    rest.created.retain(|p| !p.starts_with("/hooks"));
    let monitors = std::mem::take(&mut rest.removed_monitors);
    let Some(hooks) = root.get_mut("hooks") else { return Ok(()) };
    let hooks = hooks.as_object_mut().ok_or(MergeError::HooksNotAnObject)?;
    let hooks_had_entries = !hooks.is_empty();
    let mut emptied = Vec::new();

    let events: Vec<String> = hooks.keys().cloned().collect();
    for event in &events {
        let Some(groups) = hooks.get_mut(event).and_then(Value::as_array_mut) else { continue };
        let had_entries = !groups.is_empty();
        for removed in remove_hooks(groups, is_baton_hook) {
            for _ in removed.commands {
                changes.push(Change::HookRemoved { event: event.clone() });
            }
        }
        if had_entries {
            emptied.push(event.clone());
        }
    }

    for monitor in monitors.iter().rev() {
        let entry = hooks.entry(monitor.event.clone()).or_insert_with(|| Value::Array(Vec::new()));
        let Some(groups) = entry.as_array_mut() else {
            return Err(MergeError::EventNotAList(monitor.event.clone()));
        };
        let commands: Vec<String> = match monitor.hook {
            None => monitor
                .value
                .get("hooks")
                .and_then(Value::as_array)
                .map(|hooks| hooks.iter().filter_map(command_of).map(str::to_string).collect())
                .unwrap_or_default(),
            Some(_) => command_of(&monitor.value).map(str::to_string).into_iter().collect(),
        };
        let present = groups
            .iter()
            .filter_map(|g| g.get("hooks").and_then(Value::as_array))
            .flatten()
            .filter_map(command_of)
            .any(|c| commands.iter().any(|m| m == c));
        if present {
            for command in commands {
                notes.push(Note::RestoreSkipped { event: monitor.event.clone(), command });
            }
            continue;
        }
        match monitor.hook {
            None => {
                let at = monitor.group.min(groups.len());
                groups.insert(at, monitor.value.clone());
            }
            Some(hi) => match groups
                .get_mut(monitor.group)
                .and_then(|g| g.get_mut("hooks"))
                .and_then(Value::as_array_mut)
            {
                Some(hooks) => {
                    let at = hi.min(hooks.len());
                    hooks.insert(at, monitor.value.clone());
                }
                None => groups.push(json!({"hooks": [monitor.value.clone()]})),
            },
        }
        for command in commands {
            changes.push(Change::MonitorRestored { event: monitor.event.clone(), command });
        }
    }

    // Remove the lists and the `hooks` object baton created, once empty again. Without a
    // record: those this uninstall emptied.
    let created = |pointer: &str| record.map(|r| r.created.iter().any(|p| p == pointer));
    for event in &events {
        let empty = hooks.get(event).and_then(Value::as_array).is_some_and(Vec::is_empty);
        let prune = created(&event_pointer(event)).unwrap_or(emptied.contains(event));
        if empty && prune {
            hooks.shift_remove(event);
        }
    }
    if hooks.is_empty() && created("/hooks").unwrap_or(hooks_had_entries) {
        root.shift_remove("hooks");
    }
    Ok(())
}

fn uninstall_statusline(
    root: &mut Map<String, Value>,
    host: Host,
    record: Option<&Record>,
    rest: &mut Record,
    changes: &mut Vec<Change>,
    notes: &mut Vec<Note>,
) {
    let pointer = host.statusline_pointer();
    let container = pointer.rsplit_once('/').map(|(parent, _)| parent).unwrap_or_default();
    // The statusline and the container install made for it (Qwen Code's `ui`) are no
    // longer install's to remove once this runs: either they go now, or they hold the
    // user's own statusline again.
    rest.created.retain(|p| p != pointer && p != container);
    let replaced = rest.replaced_statusline.take();
    let created = |p: &str| record.is_some_and(|r| r.created.iter().any(|c| c == p));
    let Some(parent) = statusline_parent(root, host, None) else { return };
    let Some(current) = parent.get_mut(STATUSLINE) else { return };
    let recognised = current.get("command").and_then(Value::as_str).and_then(commands::recognise);
    let Some(BatonCommand::Statusline { wrap, .. }) = recognised else { return };
    if let Some(old) = wrap {
        set_command(current, &old);
        changes.push(Change::StatuslineUnwrapped { restored: old });
    } else if let Some(original) = replaced {
        changes.push(Change::StatuslineRestored { restored: describe_statusline(&original) });
        *current = original;
    } else {
        parent.shift_remove(STATUSLINE);
        changes.push(Change::StatuslineRemoved);
        if !created(pointer) {
            notes.push(Note::StatuslineRemovedWithoutRecord);
        }
        // The container install made for it (Qwen Code's `ui`) goes once empty again;
        // without a record, when this removal emptied it.
        let made = record.is_none_or(|r| r.created.iter().any(|c| c == container));
        if let Some(name) = container.strip_prefix('/').filter(|_| made) {
            if root.get(name).and_then(Value::as_object).is_some_and(Map::is_empty) {
                root.shift_remove(name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIN: &str = "/opt/baton/bin/baton";

    fn plan(host: Host) -> Plan {
        Plan {
            host,
            binary: BIN.into(),
            hooks: true,
            statusline: true,
            replace_statusline: false,
            replace_other_monitors: false,
            subagent_rows: true,
        }
    }

    fn text(value: &Value) -> String {
        serde_json::to_string_pretty(value).unwrap()
    }

    /// Install then uninstall gives back the same JSON, in the same order, with or
    /// without the record.
    fn round_trip(before: &Value, plan: &Plan) -> Outcome {
        let installed = install(before, plan, &Record::default()).unwrap();
        for record in [Some(&installed.record), None] {
            let removed = uninstall(&installed.settings, plan, record).unwrap();
            // Without a record, removed monitors and a replaced statusline cannot come back.
            if record.is_none() && (plan.replace_other_monitors || plan.replace_statusline) {
                continue;
            }
            assert_eq!(&removed.settings, before, "record: {}", record.is_some());
            assert_eq!(text(&removed.settings), text(before), "order, record: {}", record.is_some());
            assert!(removed.record.is_empty(), "{:?}", removed.record);
        }
        installed
    }

    fn gsd_claude() -> Value {
        json!({
            "model": "opus",
            "hooks": {
                "SessionStart": [{"hooks": [{"type": "command", "command": "node \"/h/.claude/hooks/gsd-check-update.js\""}]}],
                "PostToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "/h/bin/lint.sh", "timeout": 30}]},
                    {"hooks": [{"type": "command", "command": "node \"/h/.claude/hooks/gsd-context-monitor.js\"", "timeout": 10}]}
                ]
            },
            "statusLine": {"type": "command", "command": "node \"/h/.claude/hooks/gsd-statusline.js\"", "padding": 2},
            "permissions": {"allow": ["Bash(ls:*)"]}
        })
    }

    #[test]
    fn empty_settings_get_every_event_and_the_statusline() {
        let out = round_trip(&json!({}), &plan(Host::Claude));
        assert_eq!(
            out.settings,
            json!({
                "hooks": {
                    "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/opt/baton/bin/baton hook", "timeout": 10}]}],
                    "PostToolUseFailure": [{"matcher": "*", "hooks": [{"type": "command", "command": "/opt/baton/bin/baton hook", "timeout": 10}]}],
                    "PostToolBatch": [{"hooks": [{"type": "command", "command": "/opt/baton/bin/baton hook", "timeout": 10}]}],
                    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "/opt/baton/bin/baton hook", "timeout": 10}]}],
                    "Stop": [{"hooks": [{"type": "command", "command": "/opt/baton/bin/baton hook", "timeout": 10}]}],
                    "SubagentStop": [{"hooks": [{"type": "command", "command": "/opt/baton/bin/baton hook", "timeout": 10}]}],
                    "SessionStart": [{"hooks": [{"type": "command", "command": "/opt/baton/bin/baton hook", "timeout": 10}]}],
                    "PreCompact": [{"hooks": [{"type": "command", "command": "/opt/baton/bin/baton hook", "timeout": 10}]}],
                    "SessionEnd": [{"hooks": [{"type": "command", "command": "/opt/baton/bin/baton hook", "timeout": 10}]}],
                    "PostCompact": [{"hooks": [{"type": "command", "command": "/opt/baton/bin/baton hook", "timeout": 10}]}]
                },
                "statusLine": {"type": "command", "command": "/opt/baton/bin/baton statusline", "padding": 0},
                "subagentStatusLine": {"type": "command", "command": "/opt/baton/bin/baton statusline --subagents"}
            })
        );
        assert_eq!(out.changes.len(), 12);
        assert_eq!(
            out.record.created,
            vec![
                "/hooks",
                "/hooks/PostToolUse",
                "/hooks/PostToolUseFailure",
                "/hooks/PostToolBatch",
                "/hooks/UserPromptSubmit",
                "/hooks/Stop",
                "/hooks/SubagentStop",
                "/hooks/SessionStart",
                "/hooks/PreCompact",
                "/hooks/SessionEnd",
                "/hooks/PostCompact",
                "/statusLine",
                "/subagentStatusLine"
            ]
        );
    }

    #[test]
    fn other_hosts_use_their_events_and_units() {
        let gemini = round_trip(&json!({"theme": "dark"}), &plan(Host::Gemini)).settings;
        assert_eq!(
            gemini["hooks"]["AfterTool"][0],
            json!({"hooks": [{"type": "command", "command": "/opt/baton/bin/baton hook", "timeout": 10000}]})
        );
        let events: Vec<&String> = gemini["hooks"].as_object().unwrap().keys().collect();
        assert_eq!(
            events,
            [
                "AfterTool",
                "BeforeTool",
                "BeforeAgent",
                "AfterAgent",
                "SessionStart",
                "PreCompress",
                "SessionEnd"
            ]
        );
        assert!(gemini.get("statusLine").is_none(), "Gemini CLI has no statusline");
        let codex = round_trip(&json!({}), &plan(Host::Codex)).settings;
        let events: Vec<&String> = codex["hooks"].as_object().unwrap().keys().collect();
        assert_eq!(
            events,
            [
                "PostToolUse",
                "PreToolUse",
                "UserPromptSubmit",
                "Stop",
                "SessionStart",
                "PreCompact",
                "SessionEnd",
                "PostCompact"
            ]
        );
        assert_eq!(codex["hooks"]["PostToolUse"][0]["hooks"][0]["timeout"], json!(10));
        // Codex clamps SessionEnd hooks to 3 s (and warns about more).
        assert_eq!(codex["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"], json!(3));
        assert!(codex["hooks"]["PostToolUse"][0].get("matcher").is_none());
    }

    #[test]
    fn an_older_install_gains_the_new_events_once() {
        // What `baton install` wrote for Claude Code before PostToolUseFailure and SessionEnd.
        let old_hook = json!({"type": "command", "command": "/opt/baton/bin/baton hook", "timeout": 10});
        let before = json!({
            "hooks": {
                "PostToolUse": [{"matcher": "*", "hooks": [old_hook.clone()]}],
                "SessionStart": [{"hooks": [old_hook.clone()]}],
                "PreCompact": [{"hooks": [old_hook]}]
            },
            "statusLine": {"type": "command", "command": "/opt/baton/bin/baton statusline", "padding": 0}
        });
        let previous = Record {
            created: vec![
                "/hooks".into(),
                "/hooks/PostToolUse".into(),
                "/hooks/SessionStart".into(),
                "/hooks/PreCompact".into(),
                "/statusLine".into(),
            ],
            ..Record::default()
        };
        let out = install(&before, &plan(Host::Claude), &previous).unwrap();
        let added: Vec<String> = out.changes.iter().map(ToString::to_string).collect();
        assert_eq!(
            added,
            [
                "+ PostToolUseFailure: /opt/baton/bin/baton hook",
                "+ PostToolBatch: /opt/baton/bin/baton hook",
                "+ UserPromptSubmit: /opt/baton/bin/baton hook",
                "+ Stop: /opt/baton/bin/baton hook",
                "+ SubagentStop: /opt/baton/bin/baton hook",
                "+ SessionEnd: /opt/baton/bin/baton hook",
                "+ PostCompact: /opt/baton/bin/baton hook",
                "+ subagentStatusLine: /opt/baton/bin/baton statusline --subagents"
            ]
        );
        for event in [
            "PostToolUse",
            "PostToolUseFailure",
            "UserPromptSubmit",
            "Stop",
            "SessionStart",
            "PreCompact",
            "SessionEnd",
            "PostCompact",
        ] {
            assert_eq!(out.settings["hooks"][event].as_array().unwrap().len(), 1, "{event}");
        }
        assert!(out.record.created.contains(&"/hooks/SessionEnd".to_string()));
        // Once more: nothing to add; uninstall takes every event away again.
        assert!(install(&out.settings, &plan(Host::Claude), &out.record).unwrap().changes.is_empty());
        let back = uninstall(&out.settings, &plan(Host::Claude), Some(&out.record)).unwrap();
        assert_eq!(back.settings, json!({}));
    }

    #[test]
    fn other_hooks_and_keys_keep_their_place() {
        let before = gsd_claude();
        let out = round_trip(&before, &plan(Host::Claude));
        let keys: Vec<&String> = out.settings.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["model", "hooks", "statusLine", "permissions", "subagentStatusLine"]);
        let post = out.settings["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(post.len(), 3);
        assert_eq!(post[0], before["hooks"]["PostToolUse"][0]);
        assert_eq!(post[1], before["hooks"]["PostToolUse"][1]);
        // The GSD monitor stays, and is reported.
        assert!(
            out.notes.iter().any(|n| matches!(n, Note::OtherMonitor { event, .. } if event == "PostToolUse"))
        );
    }

    #[test]
    fn a_foreign_statusline_is_wrapped_and_restored_byte_for_byte() {
        let before = gsd_claude();
        let out = round_trip(&before, &plan(Host::Claude));
        let line = &out.settings["statusLine"];
        assert_eq!(line["padding"], json!(2));
        let command = line["command"].as_str().unwrap();
        assert_eq!(
            commands::recognise(command),
            Some(BatonCommand::Statusline {
                program: BIN.into(),
                wrap: Some("node \"/h/.claude/hooks/gsd-statusline.js\"".into()),
                host: None
            })
        );
        assert!(out.changes.iter().any(|c| matches!(c, Change::StatuslineWrapped { .. })));
    }

    #[test]
    fn other_hosts_statuslines_go_where_each_host_reads_them() {
        // Qwen Code: `ui.statusLine`, `ui` created for it and removed with it.
        let before = json!({"model": {"name": "qwen3-coder-plus"}});
        let out = round_trip(&before, &plan(Host::Qwen));
        assert_eq!(
            out.settings["ui"]["statusLine"],
            json!({"type": "command", "command": format!("{BIN} statusline --host qwen")})
        );
        assert!(out.settings.get("statusLine").is_none());
        // A `ui` of the user's stays, and so does the statusline they had (wrapped).
        let before =
            json!({"ui": {"theme": "dark", "statusLine": {"type": "command", "command": "my-line"}}});
        let out = round_trip(&before, &plan(Host::Qwen));
        let command = out.settings["ui"]["statusLine"]["command"].as_str().unwrap();
        assert_eq!(
            commands::recognise(command),
            Some(BatonCommand::Statusline {
                program: BIN.into(),
                wrap: Some("my-line".into()),
                host: Some("qwen".into())
            })
        );
        // Factory Droid: at the top, with `--host droid`, no padding.
        let out = round_trip(&json!({}), &plan(Host::Droid));
        assert_eq!(
            out.settings["statusLine"],
            json!({"type": "command", "command": format!("{BIN} statusline --host droid")})
        );
        // Copilot CLI's settings.json takes only the statusline.
        let p = Plan { hooks: false, ..plan(Host::Copilot) };
        let out = round_trip(&json!({"model": "x"}), &p);
        assert_eq!(out.settings["statusLine"]["command"], json!(format!("{BIN} statusline --host copilot")));
        assert!(out.settings.get("hooks").is_none());
        // Installing a user's statusline wrapped, then uninstalling, leaves no record behind.
        let before = json!({"ui": {"statusLine": {"type": "command", "command": "cat > /dev/null"}}});
        let first = install(&json!({}), &plan(Host::Qwen), &Record::default()).unwrap();
        let mut edited = first.settings.clone();
        edited["ui"] = before["ui"].clone();
        let second = install(&edited, &plan(Host::Qwen), &first.record).unwrap();
        let back = uninstall(&second.settings, &plan(Host::Qwen), Some(&second.record)).unwrap();
        assert_eq!(back.settings, before);
        assert!(back.record.is_empty(), "{:?}", back.record);
    }

    #[test]
    fn replace_statusline_records_the_old_one() {
        let before = gsd_claude();
        let p = Plan { replace_statusline: true, ..plan(Host::Claude) };
        let out = round_trip(&before, &p);
        assert_eq!(out.settings["statusLine"]["command"], json!("/opt/baton/bin/baton statusline"));
        assert_eq!(out.record.replaced_statusline.as_ref(), Some(&before["statusLine"]));
        // A wrapped statusline replaced later still restores the original.
        let wrapped = install(&before, &plan(Host::Claude), &Record::default()).unwrap();
        let replaced = install(&wrapped.settings, &p, &wrapped.record).unwrap();
        assert_eq!(replaced.record.replaced_statusline.as_ref(), Some(&before["statusLine"]));
        let back = uninstall(&replaced.settings, &p, Some(&replaced.record)).unwrap();
        assert_eq!(text(&back.settings), text(&before));
    }

    #[test]
    fn replace_other_monitors_removes_and_uninstall_restores() {
        let mut before = gsd_claude();
        // A monitor sharing a group with another hook: only the monitor goes.
        before["hooks"]["PostToolUse"][0]["hooks"]
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "command", "command": "node /h/.claude/hooks/gsd-context-monitor.js"}));
        let p = Plan { replace_other_monitors: true, ..plan(Host::Claude) };
        let out = round_trip(&before, &p);
        let all = out.settings.to_string();
        assert!(!all.contains("gsd-context-monitor"), "{all}");
        assert_eq!(out.record.removed_monitors.len(), 2);
        assert_eq!(out.changes.iter().filter(|c| matches!(c, Change::MonitorRemoved { .. })).count(), 2);
        // The statusline and the update check are not monitors.
        assert!(all.contains("gsd-statusline") && all.contains("gsd-check-update"));
    }

    #[test]
    fn install_twice_changes_nothing_the_second_time() {
        let first = install(&gsd_claude(), &plan(Host::Claude), &Record::default()).unwrap();
        let second = install(&first.settings, &plan(Host::Claude), &first.record).unwrap();
        assert!(second.changes.is_empty(), "{:?}", second.changes);
        assert_eq!(text(&second.settings), text(&first.settings));
        assert_eq!(second.record, first.record);
    }

    #[test]
    fn a_moved_binary_is_updated_in_place_and_duplicates_go() {
        let first = install(&json!({}), &plan(Host::Claude), &Record::default()).unwrap();
        let mut settings = first.settings.clone();
        // A hand-made duplicate in its own group.
        settings["hooks"]["PostToolUse"]
            .as_array_mut()
            .unwrap()
            .push(json!({"hooks": [{"type": "command", "command": "baton hook"}]}));
        let moved = Plan { binary: "/new place/baton".into(), ..plan(Host::Claude) };
        let out = install(&settings, &moved, &first.record).unwrap();
        let post = out.settings["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(post.len(), 1);
        assert_eq!(post[0]["hooks"][0]["command"], json!("'/new place/baton' hook"));
        assert_eq!(out.settings["statusLine"]["command"], json!("'/new place/baton' statusline"));
        assert!(out.changes.contains(&Change::DuplicateRemoved { event: "PostToolUse".into() }));
        let updates = out.changes.iter().filter(|c| matches!(c, Change::HookUpdated { .. })).count();
        assert_eq!(updates, Host::Claude.events().len());
    }

    #[test]
    fn a_wrapped_statusline_keeps_its_wrap_when_the_binary_moves() {
        let first = install(&gsd_claude(), &plan(Host::Claude), &Record::default()).unwrap();
        let moved = Plan { binary: "/usr/bin/baton".into(), ..plan(Host::Claude) };
        let out = install(&first.settings, &moved, &first.record).unwrap();
        let command = out.settings["statusLine"]["command"].as_str().unwrap();
        assert!(command.starts_with("/usr/bin/baton statusline --wrap "), "{command}");
        let back = uninstall(&out.settings, &moved, Some(&out.record)).unwrap();
        assert_eq!(text(&back.settings), text(&gsd_claude()));
    }

    #[test]
    fn uninstall_without_install_changes_nothing() {
        for before in [json!({}), gsd_claude(), json!({"hooks": {}}), json!({"hooks": {"Stop": []}})] {
            for record in [None, Some(&Record::default())] {
                let out = uninstall(&before, &plan(Host::Claude), record).unwrap();
                assert!(out.changes.is_empty());
                assert_eq!(text(&out.settings), text(&before));
            }
        }
    }

    #[test]
    fn empty_containers_the_user_had_survive_with_a_record() {
        let before = json!({"hooks": {"PostToolUse": []}});
        let installed = install(&before, &plan(Host::Claude), &Record::default()).unwrap();
        assert_eq!(
            installed.record.created,
            vec![
                "/hooks/PostToolUseFailure",
                "/hooks/PostToolBatch",
                "/hooks/UserPromptSubmit",
                "/hooks/Stop",
                "/hooks/SubagentStop",
                "/hooks/SessionStart",
                "/hooks/PreCompact",
                "/hooks/SessionEnd",
                "/hooks/PostCompact",
                "/statusLine",
                "/subagentStatusLine"
            ]
        );
        let back = uninstall(&installed.settings, &plan(Host::Claude), Some(&installed.record)).unwrap();
        assert_eq!(text(&back.settings), text(&before));
    }

    #[test]
    fn partial_installs_and_uninstalls() {
        let hooks_only = Plan { statusline: false, ..plan(Host::Claude) };
        let line_only = Plan { hooks: false, ..plan(Host::Claude) };
        let out = install(&gsd_claude(), &line_only, &Record::default()).unwrap();
        assert_eq!(out.settings["hooks"], gsd_claude()["hooks"]);
        assert!(out.settings["statusLine"]["command"].as_str().unwrap().contains("--wrap"));
        let out = install(&out.settings, &hooks_only, &out.record).unwrap();
        // Uninstalling the hooks leaves the statusline, and its record.
        let half = uninstall(&out.settings, &hooks_only, Some(&out.record)).unwrap();
        assert_eq!(half.settings["hooks"], gsd_claude()["hooks"]);
        assert!(half.settings["statusLine"]["command"].as_str().unwrap().contains("--wrap"));
        let back = uninstall(&half.settings, &line_only, Some(&half.record)).unwrap();
        assert_eq!(text(&back.settings), text(&gsd_claude()));
    }

    #[test]
    fn bad_shapes_are_refused() {
        let p = plan(Host::Claude);
        assert_eq!(install(&json!([]), &p, &Record::default()).unwrap_err(), MergeError::NotAnObject);
        assert_eq!(
            install(&json!({"hooks": []}), &p, &Record::default()).unwrap_err(),
            MergeError::HooksNotAnObject
        );
        assert_eq!(
            install(&json!({"hooks": {"PostToolUse": {}}}), &p, &Record::default()).unwrap_err(),
            MergeError::EventNotAList("PostToolUse".into())
        );
        // A key baton never adds to may hold anything, even when monitors are removed.
        assert!(install(&json!({"hooks": {"Notification": "x"}}), &p, &Record::default()).is_ok());
        let gemini = Plan { host: Host::Gemini, replace_other_monitors: true, ..plan(Host::Gemini) };
        let before = json!({"hooks": {"enabled": true, "disabled": ["x"]}});
        let out = install(&before, &gemini, &Record::default()).unwrap();
        assert_eq!(out.settings["hooks"]["enabled"], json!(true));
        let back = uninstall(&out.settings, &gemini, Some(&out.record)).unwrap();
        assert_eq!(text(&back.settings), text(&before));
        assert_eq!(uninstall(&json!({"hooks": 3}), &p, None).unwrap_err(), MergeError::HooksNotAnObject);
    }

    #[test]
    fn a_statusline_without_a_command_is_left_alone() {
        let before = json!({"statusLine": {"type": "static"}, "subagentStatusLine": {"type": "command", "command": "rows.sh"}});
        let out = install(&before, &Plan { hooks: false, ..plan(Host::Claude) }, &Record::default()).unwrap();
        assert_eq!(out.settings, before);
        assert_eq!(
            out.notes,
            vec![Note::StatuslineNotACommand, Note::SubagentStatuslineTaken { current: "`rows.sh`".into() }]
        );
        let back = uninstall(&out.settings, &Plan { hooks: false, ..plan(Host::Claude) }, Some(&out.record))
            .unwrap();
        assert_eq!(back.settings, before, "another tool's subagentStatusLine stays");
    }

    #[test]
    fn baton_s_subagent_rows_are_updated_in_place_and_removed_exactly() {
        let before = json!({"subagentStatusLine": {"type": "command", "command": "/old/baton statusline --subagents", "padding": 1}, "x": 1});
        let out = install(&before, &plan(Host::Claude), &Record::default()).unwrap();
        assert_eq!(
            out.settings["subagentStatusLine"],
            json!({"type": "command", "command": "/opt/baton/bin/baton statusline --subagents", "padding": 1})
        );
        assert!(out.changes.contains(&Change::SubagentStatuslineUpdated {
            from: "/old/baton statusline --subagents".into(),
            to: "/opt/baton/bin/baton statusline --subagents".into()
        }));
        assert!(!out.record.created.contains(&"/subagentStatusLine".to_string()));
        let back = uninstall(&out.settings, &plan(Host::Claude), Some(&out.record)).unwrap();
        assert_eq!(back.settings.get("subagentStatusLine"), None);
        assert!(back.changes.contains(&Change::SubagentStatuslineRemoved));
        assert!(back.record.is_empty(), "{:?}", back.record);
        // Other hosts have none.
        let codex = install(&json!({}), &plan(Host::Codex), &Record::default()).unwrap();
        assert_eq!(codex.settings.get("subagentStatusLine"), None);
    }

    #[test]
    fn records_survive_serialisation() {
        let p = Plan { replace_other_monitors: true, replace_statusline: true, ..plan(Host::Claude) };
        let out = install(&gsd_claude(), &p, &Record::default()).unwrap();
        let json = serde_json::to_string(&out.record).unwrap();
        let back: Record = serde_json::from_str(&json).unwrap();
        assert_eq!(back, out.record);
        assert!(serde_json::to_string(&Record::default()).unwrap() == "{}");
    }
}
