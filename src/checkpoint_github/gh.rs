//! The only place baton talks to GitHub: the `gh` CLI the user already has and is logged
//! into, found on PATH (tests put a fake `gh` first on PATH). Bodies go through stdin
//! (`--body-file -`), never the command line; JSON answers are read leniently.
//!
//! Every call has a deadline, so a hung network never leaves the automatic push waiting
//! forever. gh runs with prompts and colour off: baton is never interactive here.

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::record::{Author, Comment};
use crate::util::proc;

/// The label that marks the issues baton checkpoints into.
pub const LABEL: &str = "baton-checkpoint";

const DEADLINE: Duration = Duration::from_secs(120);
/// The most of gh's output read (a thread's comments are capped at 64 KiB each by GitHub).
const OUTPUT_LIMIT: u64 = 64 * 1024 * 1024;

/// Why a gh call failed.
#[derive(Debug, Clone, PartialEq)]
pub enum GhError {
    /// gh is not installed (not on PATH).
    Missing,
    /// gh ran and failed: its exit code and what it said on stderr.
    Failed { code: Option<i32>, stderr: String },
    /// gh did not finish in time.
    Timeout,
    /// gh answered something baton could not read.
    BadOutput(String),
    /// gh could not be started for another reason.
    Spawn(String),
}

impl GhError {
    /// gh's own words, for messages.
    pub fn detail(&self) -> String {
        match self {
            GhError::Missing => "gh is not installed".into(),
            GhError::Failed { code, stderr } => {
                let text = stderr.trim();
                let text: String = text.chars().take(2000).collect();
                match (code, text.is_empty()) {
                    (Some(c), true) => format!("gh exited with status {c}"),
                    (None, true) => "gh was killed".into(),
                    (_, false) => text,
                }
            }
            GhError::Timeout => format!("gh did not answer within {} s", DEADLINE.as_secs()),
            GhError::BadOutput(why) => format!("unexpected answer from gh: {why}"),
            GhError::Spawn(why) => format!("cannot run gh: {why}"),
        }
    }

    fn stderr_contains(&self, needle: &str) -> bool {
        matches!(self, GhError::Failed { stderr, .. } if stderr.to_ascii_lowercase().contains(&needle.to_ascii_lowercase()))
    }

    /// gh said the issue does not exist.
    pub fn is_not_found(&self) -> bool {
        self.stderr_contains("could not resolve to an issue")
            || self.stderr_contains("could not resolve to a issue")
            || self.stderr_contains("not found")
    }

    /// gh said the repository does not exist (or is not visible).
    pub fn is_repo_missing(&self) -> bool {
        self.stderr_contains("could not resolve to a repository")
    }
}

/// An open issue carrying the label.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub number: u64,
    pub title: String,
    pub updated_at: String,
    pub url: String,
}

/// What `gh issue view` tells.
#[derive(Debug, Clone, PartialEq)]
pub struct IssueView {
    pub body: String,
    pub comments: Vec<Comment>,
    pub url: String,
    /// `OPEN` or `CLOSED`.
    pub state: String,
    pub title: String,
}

impl IssueView {
    pub fn is_open(&self) -> bool {
        !self.state.eq_ignore_ascii_case("closed")
    }
}

/// The gh runner.
#[derive(Debug, Clone)]
pub struct Gh {
    program: String,
    deadline: Duration,
}

impl Default for Gh {
    fn default() -> Self {
        Gh { program: "gh".into(), deadline: DEADLINE }
    }
}

fn str_of(value: &Value, key: &str) -> String {
    value.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// The issue number at the end of an issue URL (`…/issues/12`).
pub fn number_from_url(url: &str) -> Option<u64> {
    let path = url.trim().split(['#', '?']).next()?;
    let (_, number) = path.trim_end_matches('/').rsplit_once("/issues/")?;
    number.parse().ok()
}

/// A GitHub login: letters, digits and `-` (and `[bot]` for apps), at most 39 + 5 characters.
fn valid_login(login: &str) -> bool {
    let name = login.strip_suffix("[bot]").unwrap_or(login);
    !name.is_empty() && name.len() <= 39 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// The active account's login in what `gh auth status` printed for `host`: "Logged in to
/// HOST account LOGIN (…)" (gh 2.40 on, followed by "Active account: true" when several
/// accounts are listed) or "Logged in to HOST as LOGIN (…)" (older gh). `None` when gh
/// did not say, or said it ambiguously.
pub fn logged_in_login(text: &str, host: &str) -> Option<String> {
    let mut accounts: Vec<(String, bool)> = vec![];
    for line in text.lines() {
        let line = line.trim();
        if line.contains("Active account: true") {
            if let Some(last) = accounts.last_mut() {
                last.1 = true;
            }
            continue;
        }
        let Some(at) = line.find("Logged in to ") else { continue };
        let rest = &line[at + "Logged in to ".len()..];
        let Some(rest) = rest.strip_prefix(host).map(str::trim_start) else { continue };
        let rest = rest.strip_prefix("account ").or_else(|| rest.strip_prefix("as "));
        let Some(login) = rest.and_then(|r| r.split_whitespace().next()) else { continue };
        if valid_login(login) {
            accounts.push((login.to_string(), false));
        }
    }
    match accounts.as_slice() {
        [(only, _)] => Some(only.clone()),
        many => {
            let active: Vec<&(String, bool)> = many.iter().filter(|(_, active)| *active).collect();
            (active.len() == 1).then(|| active[0].0.clone())
        }
    }
}

/// The first line of gh's output that looks like a URL.
fn url_in(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with("https://") || l.starts_with("http://"))
        .map(str::to_string)
}

impl Gh {
    /// Runs gh with `args`, feeding `stdin` when given. Returns stdout.
    fn run(&self, args: &[&str], stdin: Option<&str>) -> Result<String, GhError> {
        self.run_both(args, stdin).map(|(stdout, _)| stdout)
    }

    /// Runs gh with `args`, feeding `stdin` when given. Returns stdout and stderr, each
    /// read up to [`OUTPUT_LIMIT`] bytes.
    fn run_both(&self, args: &[&str], stdin: Option<&str>) -> Result<(String, String), GhError> {
        let mut command = Command::new(&self.program);
        command
            .args(args)
            .env("GH_PROMPT_DISABLED", "1")
            .env("GH_NO_UPDATE_NOTIFIER", "1")
            .env("NO_COLOR", "1")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("GH_FORCE_TTY");
        let options = proc::Options {
            input: stdin.map_or(proc::Input::Null, |text| proc::Input::Bytes(text.as_bytes().to_vec())),
            stderr: true,
            output_limit: OUTPUT_LIMIT,
            timeout: self.deadline,
            kill: proc::Kill::Child,
        };
        let done = proc::run(command, &options).map_err(|e| match e {
            proc::RunError::Spawn(e) if e.kind() == std::io::ErrorKind::NotFound => GhError::Missing,
            proc::RunError::Spawn(e) | proc::RunError::Wait(e) => GhError::Spawn(e.to_string()),
            proc::RunError::TimedOut => GhError::Timeout,
        })?;
        let status = done.status;
        let stdout = String::from_utf8_lossy(&done.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&done.stderr).into_owned();
        if status.success() {
            Ok((stdout, stderr))
        } else {
            Err(GhError::Failed { code: status.code(), stderr })
        }
    }

    /// `gh auth status --hostname HOST`: fails when the user is not logged in; else the
    /// active account's login, when gh named it.
    pub fn auth_status(&self, host: &str) -> Result<Option<String>, GhError> {
        let (stdout, stderr) = self.run_both(&["auth", "status", "--hostname", host], None)?;
        Ok(logged_in_login(&format!("{stdout}\n{stderr}"), host))
    }

    /// `gh api user`: the logged-in user's login (asked only when nothing else told it).
    pub fn viewer_login(&self, host: &str) -> Result<Option<String>, GhError> {
        let out = self.run(&["api", "user", "--hostname", host, "--jq", ".login"], None)?;
        let login = out.trim();
        Ok(valid_login(login).then(|| login.to_string()))
    }

    /// The open issues labelled [`LABEL`], newest first.
    pub fn candidates(&self, repo: &str) -> Result<Vec<Candidate>, GhError> {
        let out = self.run(
            &[
                "issue",
                "list",
                "--repo",
                repo,
                "--state",
                "open",
                "--label",
                LABEL,
                "--json",
                "number,title,updatedAt,url",
            ],
            None,
        )?;
        let value: Value =
            serde_json::from_str(out.trim()).map_err(|e| GhError::BadOutput(format!("issue list: {e}")))?;
        let mut list: Vec<Candidate> = value
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| {
                        Some(Candidate {
                            number: item.get("number")?.as_u64()?,
                            title: str_of(item, "title"),
                            updated_at: str_of(item, "updatedAt"),
                            url: str_of(item, "url"),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let time = |c: &Candidate| chrono::DateTime::parse_from_rfc3339(&c.updated_at).ok();
        list.sort_by(|a, b| time(b).cmp(&time(a)).then(b.number.cmp(&a.number)));
        Ok(list)
    }

    /// Creates the label; one that already exists is fine.
    pub fn create_label(&self, repo: &str) -> Result<(), GhError> {
        let args = [
            "label",
            "create",
            LABEL,
            "--repo",
            repo,
            "--color",
            "5319e7",
            "--description",
            "Task checkpoints written by baton",
        ];
        match self.run(&args, None) {
            Err(e) if e.stderr_contains("already exists") => Ok(()),
            other => other.map(|_| ()),
        }
    }

    /// Creates an issue; returns its number and URL.
    pub fn create_issue(&self, repo: &str, title: &str, body: &str) -> Result<(u64, String), GhError> {
        let out = self.run(
            &["issue", "create", "--repo", repo, "--title", title, "--label", LABEL, "--body-file", "-"],
            Some(body),
        )?;
        let url = url_in(&out).ok_or_else(|| GhError::BadOutput(format!("issue create printed {out:?}")))?;
        let number =
            number_from_url(&url).ok_or_else(|| GhError::BadOutput(format!("no issue number in {url}")))?;
        Ok((number, url))
    }

    /// The issue's body, comments, URL, state and title.
    pub fn view(&self, repo: &str, number: u64) -> Result<IssueView, GhError> {
        let n = number.to_string();
        let out = self
            .run(&["issue", "view", &n, "--repo", repo, "--json", "body,comments,url,state,title"], None)?;
        let value: Value =
            serde_json::from_str(out.trim()).map_err(|e| GhError::BadOutput(format!("issue view: {e}")))?;
        if !value.is_object() {
            return Err(GhError::BadOutput("issue view did not answer a JSON object".into()));
        }
        let comments = value
            .get("comments")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .map(|c| Comment {
                        body: str_of(c, "body"),
                        created_at: c.get("createdAt").and_then(Value::as_str).map(str::to_string),
                        url: c.get("url").and_then(Value::as_str).map(str::to_string),
                        author: Author {
                            login: c.pointer("/author/login").and_then(Value::as_str).map(str::to_string),
                            association: c
                                .get("authorAssociation")
                                .and_then(Value::as_str)
                                .map(str::to_ascii_uppercase),
                            viewer: c.get("viewerDidAuthor").and_then(Value::as_bool),
                        },
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(IssueView {
            body: str_of(&value, "body"),
            comments,
            url: str_of(&value, "url"),
            state: str_of(&value, "state"),
            title: str_of(&value, "title"),
        })
    }

    /// Replaces the issue's body.
    pub fn edit_body(&self, repo: &str, number: u64, body: &str) -> Result<(), GhError> {
        let n = number.to_string();
        self.run(&["issue", "edit", &n, "--repo", repo, "--body-file", "-"], Some(body)).map(|_| ())
    }

    /// Adds a comment; returns its URL when gh printed one.
    pub fn comment(&self, repo: &str, number: u64, body: &str) -> Result<Option<String>, GhError> {
        let n = number.to_string();
        let out = self.run(&["issue", "comment", &n, "--repo", repo, "--body-file", "-"], Some(body))?;
        Ok(url_in(&out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_numbers_come_from_urls() {
        assert_eq!(number_from_url("https://github.com/acme/shop/issues/12\n"), Some(12));
        assert_eq!(number_from_url("https://github.com/acme/shop/issues/12#issuecomment-9"), Some(12));
        assert_eq!(number_from_url("https://github.com/acme/shop/pull/12"), None);
    }

    #[test]
    fn the_logged_in_login_is_read_from_auth_status() {
        let now = "github.com\n  ✓ Logged in to github.com account octo-cat (keyring)\n  - Active account: true\n  - Git operations protocol: https\n  - Token: gho_****\n";
        assert_eq!(logged_in_login(now, "github.com").as_deref(), Some("octo-cat"));
        let old = "github.com\n  ✓ Logged in to github.com as octocat (/home/u/.config/gh/hosts.yml)\n";
        assert_eq!(logged_in_login(old, "github.com").as_deref(), Some("octocat"));
        let two = "github.com\n  ✓ Logged in to github.com account work (keyring)\n  - Active account: false\n  ✓ Logged in to github.com account me (keyring)\n  - Active account: true\n";
        assert_eq!(logged_in_login(two, "github.com").as_deref(), Some("me"));
        let unclear = "  ✓ Logged in to github.com account a (keyring)\n  ✓ Logged in to github.com account b (keyring)\n";
        assert_eq!(logged_in_login(unclear, "github.com"), None);
        assert_eq!(logged_in_login(now, "ghe.corp"), None);
        assert_eq!(logged_in_login("Logged in to github.com account <script> (x)", "github.com"), None);
    }

    #[test]
    fn a_missing_program_is_reported_as_missing() {
        let gh = Gh { program: "/nonexistent/baton-test/gh".into(), deadline: DEADLINE };
        assert_eq!(gh.auth_status("github.com"), Err(GhError::Missing));
    }

    #[cfg(unix)]
    #[test]
    fn a_hung_gh_is_stopped_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("gh");
        std::fs::write(&script, "#!/bin/sh\nexec sleep 30\n").unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let gh = Gh { program: script.to_string_lossy().into_owned(), deadline: Duration::from_millis(200) };
        let start = std::time::Instant::now();
        assert_eq!(gh.auth_status("github.com"), Err(GhError::Timeout));
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}
