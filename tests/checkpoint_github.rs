//! `baton checkpoint push` and `pull` against a fake `gh`: a shell script first on PATH
//! that logs each call's arguments and stdin and answers from canned files. The issue's
//! state between runs (body, comments) is carried by the test, which reads what baton
//! sent and answers it back on the next `gh issue view`, in the shape the real gh gives
//! (`gh issue view --json comments`: author.login, authorAssociation, createdAt, url,
//! viewerDidAuthor …; `gh auth status`: "Logged in to github.com account dev").

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{SESSION, Sandbox, TestRepo, gsd_planning, read_json, stderr, stdout, told, transcript_for};
use serde_json::{Value, json};

const SCRIPT: &str = r#"#!/bin/sh
# A fake gh: logs argv (one per line) and stdin, answers from $FAKE_GH_DIR/<cmd>-<sub>.out,
# or fails with <cmd>-<sub>.fail on stderr.
d="$FAKE_GH_DIR"
n=$(cat "$d/count" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$d/count"
for a in "$@"; do printf '%s\n' "$a"; done > "$d/$n.args"
cat > "$d/$n.stdin"
key="$1-$2"
if [ -f "$d/$key.fail" ]; then cat "$d/$key.fail" >&2; exit 1; fi
if [ -f "$d/$key.out" ]; then cat "$d/$key.out"; fi
exit 0
"#;

const ISSUE_URL: &str = "https://github.com/acme/shop/issues/12";
/// The account the fake gh is logged in as.
const VIEWER: &str = "dev";
const AUTH_STATUS: &str = "github.com\n  ✓ Logged in to github.com account dev (keyring)\n  - Active account: true\n  - Git operations protocol: https\n  - Token: gho_************************************\n  - Token scopes: 'gist', 'read:org', 'repo'\n";
const ORIGIN: &str = "git@github.com:acme/shop.git";

/// One call baton made to gh.
#[derive(Debug, Clone)]
struct Call {
    args: Vec<String>,
    stdin: String,
}

impl Call {
    fn key(&self) -> String {
        format!(
            "{}-{}",
            self.args.first().cloned().unwrap_or_default(),
            self.args.get(1).cloned().unwrap_or_default()
        )
    }

    /// The value after a flag.
    fn flag(&self, name: &str) -> Option<&str> {
        let at = self.args.iter().position(|a| a == name)?;
        self.args.get(at + 1).map(String::as_str)
    }
}

struct FakeGh {
    dir: PathBuf,
    bin: PathBuf,
}

impl FakeGh {
    fn new(sandbox: &Sandbox) -> FakeGh {
        let dir = sandbox.dir.path().join("fakegh");
        let bin = sandbox.dir.path().join("fakebin");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        let script = bin.join("gh");
        std::fs::write(&script, SCRIPT).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let gh = FakeGh { dir, bin };
        gh.answer("auth-status", AUTH_STATUS);
        gh
    }

    fn env(&self) -> Vec<(String, String)> {
        vec![
            ("PATH".into(), format!("{}:/usr/bin:/bin", self.bin.display())),
            ("FAKE_GH_DIR".into(), self.dir.display().to_string()),
        ]
    }

    fn answer(&self, key: &str, text: &str) {
        std::fs::write(self.dir.join(format!("{key}.out")), text).unwrap();
    }

    fn fail(&self, key: &str, stderr: &str) {
        std::fs::write(self.dir.join(format!("{key}.fail")), stderr).unwrap();
    }

    fn heal(&self, key: &str) {
        let _ = std::fs::remove_file(self.dir.join(format!("{key}.fail")));
    }

    fn calls(&self) -> Vec<Call> {
        let count: usize =
            std::fs::read_to_string(self.dir.join("count")).map(|t| t.trim().parse().unwrap()).unwrap_or(0);
        (1..=count)
            .map(|n| Call {
                args: std::fs::read_to_string(self.dir.join(format!("{n}.args")))
                    .unwrap()
                    .lines()
                    .map(str::to_string)
                    .collect(),
                stdin: std::fs::read_to_string(self.dir.join(format!("{n}.stdin"))).unwrap(),
            })
            .collect()
    }

    fn keys(&self) -> Vec<String> {
        self.calls().iter().map(Call::key).collect()
    }

    fn clear_calls(&self) {
        let count = self.calls().len();
        for n in 1..=count {
            let _ = std::fs::remove_file(self.dir.join(format!("{n}.args")));
            let _ = std::fs::remove_file(self.dir.join(format!("{n}.stdin")));
        }
        let _ = std::fs::remove_file(self.dir.join("count"));
    }

    fn run(&self, sandbox: &Sandbox, args: &[&str]) -> Output {
        let env = self.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        sandbox.run_with(args, b"", &env)
    }
}

/// A comment on the issue: who wrote it, with what standing, when.
#[derive(Debug, Clone)]
struct Posted {
    body: String,
    login: String,
    association: &'static str,
    created_at: String,
}

/// The issue the fake gh serves, kept by the test.
#[derive(Debug, Clone)]
struct Issue {
    title: String,
    body: String,
    state: &'static str,
    comments: Vec<Posted>,
    /// Answer as a gh that predates `viewerDidAuthor` in comments.
    old_gh: bool,
}

fn time_text(time: chrono::DateTime<chrono::Utc>) -> String {
    time.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl Issue {
    fn new(body: &str) -> Issue {
        Issue {
            title: "Add rate limiting".into(),
            body: body.into(),
            state: "OPEN",
            comments: vec![],
            old_gh: false,
        }
    }

    /// A creation time `minutes` after the newest comment (or now).
    fn later(&self, minutes: i64) -> String {
        let last = self
            .comments
            .iter()
            .filter_map(|c| chrono::DateTime::parse_from_rfc3339(&c.created_at).ok())
            .map(|t| t.with_timezone(&chrono::Utc))
            .max()
            .unwrap_or_else(chrono::Utc::now);
        time_text(last + chrono::Duration::minutes(minutes))
    }

    /// Adds a comment by `login`, posted now (never before the newest comment).
    fn post(&mut self, login: &str, association: &'static str, body: &str) {
        let created_at = time_text(chrono::Utc::now()).max(self.later(0));
        self.comments.push(Posted { body: body.into(), login: login.into(), association, created_at });
    }

    /// Adds a comment by the logged-in user (the repository's owner).
    fn say(&mut self, body: &str) {
        self.post(VIEWER, "OWNER", body);
    }

    fn url_of(i: usize) -> String {
        format!("{ISSUE_URL}#issuecomment-{}", 100 + i)
    }

    /// Makes the fake gh answer with this issue (as the only labelled one).
    fn publish(&self, gh: &FakeGh) {
        let comments: Vec<Value> = self
            .comments
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut comment = json!({
                    "id": format!("IC_kwDOfake{i:04}"),
                    "author": {"login": c.login},
                    "authorAssociation": c.association,
                    "body": c.body,
                    "createdAt": c.created_at,
                    "includesCreatedEdit": false,
                    "isMinimized": false,
                    "minimizedReason": "",
                    "reactionGroups": [],
                    "url": Issue::url_of(i),
                });
                if !self.old_gh {
                    comment["viewerDidAuthor"] = json!(c.login == VIEWER);
                }
                comment
            })
            .collect();
        let view = json!({"body": self.body, "comments": comments, "url": ISSUE_URL, "state": self.state, "title": self.title});
        gh.answer("issue-view", &view.to_string());
        gh.answer(
            "issue-list",
            &json!([{"number": 12, "title": self.title, "updatedAt": "2026-11-30T06:00:00Z", "url": ISSUE_URL}])
                .to_string(),
        );
        gh.answer("issue-comment", &format!("{ISSUE_URL}#issuecomment-{}\n", 100 + self.comments.len()));
    }

    /// Takes in what baton wrote (created, edited, commented), forgets the calls, and
    /// serves the new state.
    fn absorb(&mut self, gh: &FakeGh) {
        for call in gh.calls() {
            match call.key().as_str() {
                "issue-create" => {
                    self.title = call.flag("--title").unwrap_or_default().to_string();
                    self.body = call.stdin.clone();
                }
                "issue-edit" => self.body = call.stdin.clone(),
                "issue-comment" => {
                    let created_at = time_text(chrono::Utc::now()).max(self.later(0));
                    self.comments.push(Posted {
                        body: call.stdin.clone(),
                        login: VIEWER.into(),
                        association: "OWNER",
                        created_at,
                    });
                }
                _ => {}
            }
        }
        gh.clear_calls();
        self.publish(gh);
    }
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
}

/// A git repository at `root` with `origin` on GitHub, GSD's planning tree and a paused
/// handoff (phase 03, plan 2, task 3 of 4).
fn clone_with_handoff(sandbox: &Sandbox, root: &Path) -> TestRepo {
    let repo = TestRepo::init(root, &[("src/app.ts", "app\n"), ("src/limiter.ts", "limiter\n")]);
    repo.repo.remote("origin", ORIGIN).unwrap();
    gsd_planning(root);
    repo.commit_all("plan phase 3");
    repo.write("src/app.ts", "app changed\n");
    let transcript = transcript_for(root, &sandbox.home().join("t.jsonl"));
    let output = sandbox.run(
        &[
            "pause",
            "--checkpoint",
            "off",
            "--cwd",
            root.to_str().unwrap(),
            "--session",
            SESSION,
            "--transcript",
            transcript.to_str().unwrap(),
        ],
        b"",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    repo
}

/// A project with a handoff, pushed once to issue #12 (recorded in HANDOFF.json), and the
/// issue as the fake gh now shows it.
fn pushed_once() -> (Sandbox, PathBuf, FakeGh, Issue) {
    let sandbox = Sandbox::new();
    let root = sandbox.project();
    clone_with_handoff(&sandbox, &root);
    let gh = FakeGh::new(&sandbox);
    let mut issue = Issue::new("");
    issue.publish(&gh);
    assert!(push(&sandbox, &gh, &root, &[]).status.success());
    issue.absorb(&gh);
    (sandbox, root, gh, issue)
}

fn handoff_path(root: &Path) -> PathBuf {
    root.join(".planning/HANDOFF.json")
}

fn push(sandbox: &Sandbox, gh: &FakeGh, root: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["checkpoint", "push", "--cwd", root.to_str().unwrap()];
    args.extend_from_slice(extra);
    gh.run(sandbox, &args)
}

fn pull(sandbox: &Sandbox, gh: &FakeGh, root: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["checkpoint", "pull", "--cwd", root.to_str().unwrap()];
    args.extend_from_slice(extra);
    gh.run(sandbox, &args)
}

#[test]
fn push_creates_a_labelled_issue_when_there_is_none() {
    let sandbox = Sandbox::new();
    let root = sandbox.project();
    clone_with_handoff(&sandbox, &root);
    let gh = FakeGh::new(&sandbox);
    gh.answer("issue-list", "[]");
    gh.fail("label-create", "label with name \"baton-checkpoint\" already exists; use `--force` to update its color and description\n");
    gh.answer("issue-create", &format!("Creating issue in acme/shop\n\n{ISSUE_URL}\n"));
    gh.answer("issue-comment", &format!("{ISSUE_URL}#issuecomment-100\n"));

    let output = push(&sandbox, &gh, &root, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let calls = gh.calls();
    assert_eq!(
        gh.keys(),
        vec!["auth-status", "issue-list", "label-create", "issue-create", "issue-edit", "issue-comment"]
    );
    assert_eq!(calls[0].flag("--hostname"), Some("github.com"));
    assert_eq!(
        calls[1].args,
        "issue list --repo acme/shop --state open --label baton-checkpoint --json number,title,updatedAt,url"
            .split(' ')
            .collect::<Vec<_>>()
    );
    let create = &calls[3];
    assert!(
        create.flag("--title").unwrap().starts_with("Add per-client rate limiting to the orders API"),
        "{create:?}"
    );
    assert_eq!(create.flag("--label"), Some("baton-checkpoint"));
    assert_eq!(create.flag("--body-file"), Some("-"));
    assert_eq!(create.flag("--repo"), Some("acme/shop"));

    let body = &calls[4].stdin;
    assert_eq!(calls[4].args[..3], ["issue", "edit", "12"]);
    assert!(body.starts_with("Checkpoints of a task, kept by baton"), "{body}");
    assert_eq!(body.matches("<!-- baton:summary:start -->").count(), 1, "{body}");
    for needle in [
        "## Task Summary",
        "- **Goal:** Add per-client rate limiting to the orders API",
        "- **Status:** paused",
        "- **Stage:** phase 03 (rate-limiting), plan 2, task 3/4",
        "- **Next:** Continue: Wire the limiter into the orders routes",
        "- **Issue #:** #12",
        "- **Key Paths:**\n  - `src/app.ts`",
        "- **Updated At:** ",
    ] {
        assert!(body.contains(needle), "body lacks {needle:?}:\n{body}");
    }
    let comment = &calls[5].stdin;
    assert!(comment.starts_with("<!-- baton:record v1 digest="), "{comment}");
    for needle in [
        "- **Kind:** checkpoint",
        "- **Timestamp:** ",
        "- **Stage:** phase 03 (rate-limiting), plan 2, task 3/4",
        "- **Status:** paused",
        "- **Next:** Continue: Wire the limiter into the orders routes",
        "- **Completed:**\n  - Read the orders router and middleware",
        "- **Handoff:** .planning/HANDOFF.json (id ",
        "- **Plan Path:** `.planning/phases/03-rate-limiting/03-02-PLAN.md`",
        "- **Reply Summary:** Last request:",
    ] {
        assert!(comment.contains(needle), "record lacks {needle:?}:\n{comment}");
    }

    let receipt = stdout(&output);
    assert!(receipt.starts_with("created issue #12, labelled baton-checkpoint\n"), "{receipt}");
    assert_eq!(
        receipt.lines().last().unwrap(),
        format!(
            "persisted #12 | kind: checkpoint | status: paused | next: Continue: Wire the limiter into the orders routes | {ISSUE_URL}#issuecomment-100"
        )
    );
    let baton = &read_json(&handoff_path(&root))["baton"];
    assert_eq!(baton["github_issue"], 12);
    assert_eq!(baton["github_repo"], "acme/shop");
    assert_eq!(baton["github_url"], ISSUE_URL);
    assert_eq!(baton["github_last_record"]["kind"], "checkpoint");
    assert_eq!(baton["github_last_record"]["comments"], 1);
    assert_eq!(baton["github_last_record"]["digest"].as_str().unwrap().len(), 16);
    assert!(baton.get("github_error").is_none());
}

#[test]
fn push_uses_the_only_labelled_issue_and_says_which() {
    let sandbox = Sandbox::new();
    let root = sandbox.project();
    clone_with_handoff(&sandbox, &root);
    let gh = FakeGh::new(&sandbox);
    Issue::new("Notes a person wrote.\n").publish(&gh);

    let output = push(&sandbox, &gh, &root, &["--kind", "milestone"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(gh.keys(), vec!["auth-status", "issue-list", "issue-view", "issue-edit", "issue-comment"]);
    let text = stdout(&output);
    assert!(
        text.starts_with("using #12 \"Add rate limiting\", the only open issue labelled baton-checkpoint\n"),
        "{text}"
    );
    assert!(text.contains("persisted #12 | kind: milestone |"), "{text}");
    // No markers yet: the block is appended after the person's text.
    let body = &gh.calls()[3].stdin;
    assert!(body.starts_with("Notes a person wrote.\n\n<!-- baton:summary:start -->\n"), "{body}");
    assert!(body.ends_with("<!-- baton:summary:end -->\n"), "{body}");
    assert!(gh.calls()[4].stdin.contains("- **Kind:** milestone"));
}

#[test]
fn several_labelled_issues_write_nothing_and_are_listed_newest_first() {
    let sandbox = Sandbox::new();
    let root = sandbox.project();
    clone_with_handoff(&sandbox, &root);
    let before = std::fs::read(handoff_path(&root)).unwrap();
    let gh = FakeGh::new(&sandbox);
    gh.answer(
        "issue-list",
        &json!([
            {"number": 12, "title": "Older task", "updatedAt": "2026-11-01T00:00:00Z", "url": "https://github.com/acme/shop/issues/12"},
            {"number": 14, "title": "Newest task", "updatedAt": "2026-11-29T00:00:00Z", "url": "https://github.com/acme/shop/issues/14"},
            {"number": 13, "title": "Middle task", "updatedAt": "2026-11-15T00:00:00Z", "url": "https://github.com/acme/shop/issues/13"}
        ])
        .to_string(),
    );
    let output = push(&sandbox, &gh, &root, &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(gh.keys(), vec!["auth-status", "issue-list"]);
    let text = stderr(&output);
    assert!(text.contains("3 open issues in acme/shop are labelled baton-checkpoint; nothing was written. Choose one with --issue N"), "{text}");
    let (a, b, c) = (text.find("#14").unwrap(), text.find("#13").unwrap(), text.find("#12").unwrap());
    assert!(a < b && b < c, "newest first:\n{text}");
    assert_eq!(std::fs::read(handoff_path(&root)).unwrap(), before, "HANDOFF.json untouched");

    // Pull says the same.
    let output = pull(&sandbox, &gh, &root, &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("Choose one with --issue N"));
}

#[test]
fn the_body_keeps_the_text_around_the_summary() {
    let sandbox = Sandbox::new();
    let root = sandbox.project();
    clone_with_handoff(&sandbox, &root);
    let gh = FakeGh::new(&sandbox);
    let body = "Intro by a person.\r\n\r\n<!-- baton:summary:start -->\n## Task Summary\n- **Next:** old\n<!-- baton:summary:end -->\r\n\r\n## Log\r\nhand notes\r\n";
    Issue::new(body).publish(&gh);

    let output = push(&sandbox, &gh, &root, &["--issue", "12"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        gh.keys(),
        vec!["auth-status", "issue-view", "issue-edit", "issue-comment"],
        "--issue skips the search"
    );
    let new = &gh.calls()[2].stdin;
    assert!(
        new.starts_with("Intro by a person.\r\n\r\n<!-- baton:summary:start -->\n## Task Summary\n"),
        "{new}"
    );
    assert!(new.ends_with("<!-- baton:summary:end -->\r\n\r\n## Log\r\nhand notes\r\n"), "{new}");
    assert!(!new.contains("- **Next:** old"), "{new}");
    assert!(new.contains("- **Next:** Continue: Wire the limiter"), "{new}");
}

#[test]
fn broken_markers_stop_the_push_and_nothing_is_written() {
    let sandbox = Sandbox::new();
    let root = sandbox.project();
    clone_with_handoff(&sandbox, &root);
    let before = std::fs::read(handoff_path(&root)).unwrap();
    let gh = FakeGh::new(&sandbox);
    let block = "<!-- baton:summary:start -->\n- **Next:** a\n<!-- baton:summary:end -->";
    for (body, why) in [
        (format!("{block}\n\ncopied:\n{block}\n"), "2 start marker(s)"),
        ("text\n<!-- baton:summary:start -->\nno end\n".to_string(), "1 start marker(s)"),
    ] {
        gh.clear_calls();
        Issue::new(&body).publish(&gh);
        let output = push(&sandbox, &gh, &root, &["--issue", "12"]);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        let text = stderr(&output);
        assert!(text.contains(why), "{text}");
        assert!(text.contains("gh issue edit 12 --repo acme/shop"), "{text}");
        assert_eq!(gh.keys(), vec!["auth-status", "issue-view"]);
        assert_eq!(std::fs::read(handoff_path(&root)).unwrap(), before);
    }
}

#[test]
fn a_big_record_is_split_into_at_most_three_bounded_comments() {
    let sandbox = Sandbox::new();
    let root = sandbox.project();
    clone_with_handoff(&sandbox, &root);
    let mut handoff = read_json(&handoff_path(&root));
    handoff["uncommitted_files"] = json!(
        (0..3000).map(|n| format!("src/generated/module_{n:04}/{}.rs", "x".repeat(150))).collect::<Vec<_>>()
    );
    handoff["completed_tasks"] = json!(
        (0..150)
            .map(|n| json!({"id": n, "name": format!("Task {n}: {}", "y".repeat(280)), "status": "done"}))
            .collect::<Vec<_>>()
    );
    write_json(&handoff_path(&root), &handoff);
    let gh = FakeGh::new(&sandbox);
    let mut issue = Issue::new("");
    issue.publish(&gh);

    let output = push(&sandbox, &gh, &root, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let comments: Vec<Call> = gh.calls().into_iter().filter(|c| c.key() == "issue-comment").collect();
    assert!((2..=3).contains(&comments.len()), "{} comments", comments.len());
    for comment in &comments {
        assert!(comment.stdin.chars().count() < 60_000, "{}", comment.stdin.chars().count());
    }
    assert!(comments[1].stdin.starts_with("<!-- baton:record v1 digest="), "{}", &comments[1].stdin[..200]);
    assert!(comments[1].stdin.contains(" part=2/"));
    assert!(stdout(&output).contains(&format!("the record was split into {} comments", comments.len())));
    let body = gh.calls().into_iter().find(|c| c.key() == "issue-edit").unwrap().stdin;
    assert!(body.chars().count() < 60_000);
    assert!(body.contains("more not shown)"), "the body shows 30 paths");

    // The parts read back as one record.
    issue.absorb(&gh);
    let output = pull(&sandbox, &gh, &root, &["--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let pulled: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(pulled["restored"]["records"], 1);
    assert_eq!(pulled["restored"]["state"]["completed"].as_array().unwrap().len(), 150);
    assert_eq!(pulled["restored"]["state"]["key_paths"].as_array().unwrap().len(), 200);
}

#[test]
fn pull_lets_the_newest_record_win_and_lists_the_differences() {
    let (sandbox, root, gh, mut issue) = pushed_once();
    // Someone edits the summary by hand afterwards; a stranger comments.
    issue.body = issue
        .body
        .replace("- **Status:** paused", "- **Status:** in review")
        .replace("- **Next:** Continue: Wire the limiter into the orders routes", "- **Next:** Ship it");
    issue.post("passer-by", "NONE", "Looks good to me!");
    issue.publish(&gh);

    let output = pull(&sandbox, &gh, &root, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let receipt = text.lines().find(|l| l.starts_with("restored")).unwrap();
    assert!(receipt.starts_with("restored #12 | status: paused | next: Continue: Wire the limiter into the orders routes | last record: checkpoint@20"), "{receipt}");
    assert!(receipt.ends_with(&format!("| {ISSUE_URL}#issuecomment-100")), "{receipt}");
    assert!(
        text.contains("differs from the newest record in: status, next (the newest record wins)"),
        "{text}"
    );
    assert!(text.contains("  stage: phase 03 (rate-limiting), plan 2, task 3/4"), "{text}");
    assert!(text.contains("  plan: .planning/phases/03-rate-limiting/03-02-PLAN.md"), "{text}");
    assert!(text.contains("(nothing written; --write makes a HANDOFF.json of it)"), "{text}");
    assert_eq!(gh.keys(), vec!["auth-status", "issue-view"], "the recorded issue, read only");
}

#[test]
fn nothing_new_since_the_last_record_writes_nothing_unless_forced() {
    let (sandbox, root, gh, mut issue) = pushed_once();
    let after_first = std::fs::read(handoff_path(&root)).unwrap();

    let output = push(&sandbox, &gh, &root, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(gh.keys(), vec!["auth-status", "issue-view"]);
    let text = stdout(&output);
    assert!(text.contains("nothing new since the last record on #12 (checkpoint@"), "{text}");
    assert!(text.contains("nothing written (--force writes anyway)"), "{text}");
    assert_eq!(std::fs::read(handoff_path(&root)).unwrap(), after_first);

    gh.clear_calls();
    let output = push(&sandbox, &gh, &root, &["--force", "--kind", "decision"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(gh.keys(), vec!["auth-status", "issue-view", "issue-edit", "issue-comment"]);
    issue.absorb(&gh);

    // A new decision is news.
    let mut handoff = read_json(&handoff_path(&root));
    handoff["decisions"] =
        json!([{"decision": "Tiers live in config", "rationale": "ops edits them", "phase": "03"}]);
    write_json(&handoff_path(&root), &handoff);
    let output = push(&sandbox, &gh, &root, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let calls = gh.calls();
    let comment = &calls.iter().find(|c| c.key() == "issue-comment").expect("a new record").stdin;
    assert!(comment.contains("- **Decision:** Tiers live in config — ops edits them"), "{comment}");
}

#[test]
fn gh_missing_or_logged_out_is_a_precondition_error() {
    let sandbox = Sandbox::new();
    let root = sandbox.project();
    clone_with_handoff(&sandbox, &root);
    let before = std::fs::read(handoff_path(&root)).unwrap();

    let empty = sandbox.dir.path().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let output = sandbox.run_with(
        &["checkpoint", "push", "--cwd", root.to_str().unwrap()],
        b"",
        &[("PATH", empty.to_str().unwrap())],
    );
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(text.contains("gh, the GitHub CLI, is not installed"), "{text}");
    assert!(text.contains("https://cli.github.com") && text.contains("gh auth login"), "{text}");
    assert_eq!(std::fs::read(handoff_path(&root)).unwrap(), before);

    let gh = FakeGh::new(&sandbox);
    gh.fail("auth-status", "You are not logged into any GitHub hosts. To log in, run: gh auth login\n");
    for command in ["push", "pull"] {
        gh.clear_calls();
        let output = gh.run(&sandbox, &["checkpoint", command, "--cwd", root.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(2), "{command}");
        let text = stderr(&output);
        assert!(
            text.contains("gh is not logged in to github.com: run `gh auth login --hostname github.com`"),
            "{text}"
        );
        assert!(text.contains("You are not logged into any GitHub hosts"), "{text}");
        assert_eq!(gh.keys(), vec!["auth-status"]);
    }
    assert_eq!(std::fs::read(handoff_path(&root)).unwrap(), before);
}

#[test]
fn gh_failing_midway_is_recorded_as_an_error_not_a_success() {
    let sandbox = Sandbox::new();
    let root = sandbox.project();
    clone_with_handoff(&sandbox, &root);
    let gh = FakeGh::new(&sandbox);
    Issue::new("").publish(&gh);
    gh.fail("issue-comment", "HTTP 502: Bad Gateway (https://api.github.com/graphql)\n");

    let output = push(&sandbox, &gh, &root, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(text.contains("posting the record on issue #12 failed: HTTP 502: Bad Gateway"), "{text}");
    assert!(text.contains("The handoff stays local."), "{text}");
    assert!(stdout(&output).is_empty());
    let baton = &read_json(&handoff_path(&root))["baton"];
    assert_eq!(baton["github_error"]["step"], "comment");
    assert_eq!(baton["github_error"]["issue"], 12);
    assert_eq!(baton["github_error"]["exit_code"], 1);
    assert!(baton.get("github_issue").is_none(), "{baton}");
    assert!(baton.get("github_last_record").is_none(), "{baton}");

    // No network at the first call: same, nothing recorded as success; a later push
    // that works clears the error.
    gh.heal("issue-comment");
    gh.fail(
        "issue-view",
        "error connecting to api.github.com\ncheck your internet connection or https://githubstatus.com\n",
    );
    gh.clear_calls();
    let output = push(&sandbox, &gh, &root, &["--issue", "12"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("error connecting to api.github.com"), "{}", stderr(&output));
    assert_eq!(gh.keys(), vec!["auth-status", "issue-view"]);
    gh.heal("issue-view");
    let output = push(&sandbox, &gh, &root, &["--issue", "12"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let baton = &read_json(&handoff_path(&root))["baton"];
    assert!(baton.get("github_error").is_none(), "{baton}");
    assert_eq!(baton["github_issue"], 12);
}

#[test]
fn closed_missing_and_non_github_repositories_are_refused() {
    let sandbox = Sandbox::new();
    let root = sandbox.project();
    let repo = clone_with_handoff(&sandbox, &root);
    let gh = FakeGh::new(&sandbox);
    let mut issue = Issue::new("");
    issue.state = "CLOSED";
    issue.publish(&gh);
    let output = push(&sandbox, &gh, &root, &["--issue", "12"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output)
            .contains("issue #12 in acme/shop is closed. Reopen it (`gh issue reopen 12 --repo acme/shop`)"),
        "{}",
        stderr(&output)
    );
    assert_eq!(gh.keys(), vec!["auth-status", "issue-view"]);

    gh.clear_calls();
    gh.fail(
        "issue-view",
        "GraphQL: Could not resolve to an issue or pull request with the number of 99. (repository.issue)\n",
    );
    let output = push(&sandbox, &gh, &root, &["--issue", "99"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("issue #99 was not found in acme/shop"), "{}", stderr(&output));
    let output = pull(&sandbox, &gh, &root, &["--issue", "99"]);
    assert_eq!(output.status.code(), Some(2));

    gh.clear_calls();
    repo.repo.remote_set_url("origin", "git@gitlab.com:acme/shop.git").unwrap();
    let output = push(&sandbox, &gh, &root, &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("is not a repository on GitHub: pass --repo OWNER/NAME"),
        "{}",
        stderr(&output)
    );
    assert!(gh.keys().is_empty(), "gh is not even asked");

    // --repo names it instead.
    gh.heal("issue-view");
    Issue::new("").publish(&gh);
    let output = push(&sandbox, &gh, &root, &["--repo", "acme/shop"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(gh.calls()[1].flag("--repo"), Some("acme/shop"));
    let output = push(&sandbox, &gh, &root, &["--repo", "not a repo"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn a_handoff_crosses_clones_through_an_issue_and_back() {
    let sandbox = Sandbox::new();
    let a = sandbox.project();
    clone_with_handoff(&sandbox, &a);
    let mut handoff_a = read_json(&handoff_path(&a));
    handoff_a["decisions"] =
        json!([{"decision": "Tiers live in config", "rationale": "ops edits them", "phase": "03"}]);
    handoff_a["blockers"] =
        json!([{"description": "Staging API key missing", "type": "human_action", "workaround": ""}]);
    write_json(&handoff_path(&a), &handoff_a);

    let gh = FakeGh::new(&sandbox);
    gh.answer("issue-list", "[]");
    gh.answer("issue-create", &format!("{ISSUE_URL}\n"));
    gh.answer("issue-comment", &format!("{ISSUE_URL}#issuecomment-100\n"));
    let output = push(&sandbox, &gh, &a, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let mut issue = Issue::new("");
    issue.absorb(&gh);

    // Clone B, elsewhere, with an old handoff of its own.
    let b = sandbox.dir.path().join("clone-b");
    let repo_b = TestRepo::init(&b, &[("README.md", "shop\n")]);
    repo_b.repo.remote("origin", "https://github.com/acme/shop.git").unwrap();
    std::fs::create_dir_all(b.join(".planning")).unwrap();
    std::fs::write(handoff_path(&b), r#"{"version": "1.0", "status": "paused", "next_action": "old work"}"#)
        .unwrap();

    let output = pull(&sandbox, &gh, &b, &["--write"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.starts_with("using #12"), "{text}");
    assert!(text.contains("restored #12 | status: paused | next: Continue: Wire the limiter into the orders routes | last record: checkpoint@"), "{text}");
    assert!(text.contains("wrote .planning/HANDOFF.json (source: github); it is not trusted until you accept it with `baton resume --accept`"), "{text}");
    assert!(text.contains("the previous handoff was archived to .planning/handoffs/"), "{text}");
    let archived: Vec<_> = std::fs::read_dir(b.join(".planning/handoffs")).unwrap().flatten().collect();
    assert_eq!(archived.len(), 1);
    assert!(std::fs::read_to_string(archived[0].path()).unwrap().contains("old work"));

    let handoff_b = read_json(&handoff_path(&b));
    for key in ["status", "phase", "phase_name", "phase_dir", "plan", "task", "total_tasks", "next_action"] {
        assert_eq!(handoff_b[key], handoff_a[key], "{key}");
    }
    assert_eq!(handoff_b["version"], "1.0");
    assert_eq!(handoff_b["decisions"][0]["decision"], "Tiers live in config");
    assert_eq!(handoff_b["decisions"][0]["rationale"], "ops edits them");
    assert_eq!(
        handoff_b["blockers"][0],
        json!({"description": "Staging API key missing", "type": "human_action", "workaround": ""})
    );
    assert_eq!(handoff_b["completed_tasks"][0]["name"], "Read the orders router and middleware");
    let baton = &handoff_b["baton"];
    assert_eq!(baton["source"], "github");
    assert_eq!(baton["github_issue"], 12);
    assert_eq!(baton["github_repo"], "acme/shop");
    assert_eq!(baton["github_record"]["kind"], "checkpoint");
    assert_eq!(baton["plan_path"], ".planning/phases/03-rate-limiting/03-02-PLAN.md");
    assert!(baton["goal"].as_str().unwrap().starts_with("Add per-client rate limiting"));
    // Foreign: its id is not in this machine's registry of handoffs it wrote.
    let id = baton["id"].as_str().unwrap();
    assert_ne!(id, handoff_a["baton"]["id"].as_str().unwrap());
    let registry = std::fs::read_to_string(sandbox.state_dir().join("handoffs.json")).unwrap();
    assert!(!registry.contains(id), "{registry}");
    assert!(baton.get("session_id").is_none());
    // So a session starting in B gets one line, not the handoff's text, until accepted.
    let start = json!({"session_id": "b0b00000-0000-4000-8000-000000000001", "cwd": b, "hook_event_name": "SessionStart", "source": "startup"});
    let line = told(&sandbox.hook(&start)).unwrap();
    assert!(line.contains("written elsewhere") && !line.contains("Wire the limiter"), "{line}");
    let accepted = sandbox.run(&["resume", "--accept", "--cwd", b.to_str().unwrap()], b"");
    assert!(accepted.status.success(), "{}", stderr(&accepted));
    let brief = told(&sandbox.hook(&start)).unwrap();
    assert!(brief.starts_with("baton resume brief"), "{brief}");
    assert!(
        brief.contains("Next action noted: “Continue: Wire the limiter into the orders routes”"),
        "{brief}"
    );

    // Pushing it back from B is not news; a change made in B is, and comes back to A.
    gh.clear_calls();
    let output = push(&sandbox, &gh, &b, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("nothing new since the last record on #12"), "{}", stdout(&output));
    let mut changed = read_json(&handoff_path(&b));
    changed["next_action"] = json!("Run the tier tests against redis");
    changed["status"] = json!("in_progress");
    write_json(&handoff_path(&b), &changed);
    let output = push(&sandbox, &gh, &b, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output).contains(
            "persisted #12 | kind: checkpoint | status: in_progress | next: Run the tier tests against redis"
        ),
        "{}",
        stdout(&output)
    );
    issue.absorb(&gh);

    let output = pull(&sandbox, &gh, &a, &["--write"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let back = read_json(&handoff_path(&a));
    assert_eq!(back["next_action"], "Run the tier tests against redis");
    assert_eq!(back["status"], "paused");
    assert_eq!(back["baton"]["task_status"], "in_progress");
    assert_eq!(back["task"], 3);
    assert_eq!(back["baton"]["source"], "github");
    assert!(stdout(&output).contains("the previous handoff was archived to"), "nothing lost in A either");
}

#[test]
fn the_automatic_push_is_silent_and_records_its_failures() {
    let sandbox = Sandbox::new();
    let root = sandbox.project();
    clone_with_handoff(&sandbox, &root);
    let gh = FakeGh::new(&sandbox);
    gh.fail("auth-status", "not logged in\n");
    let output = push(&sandbox, &gh, &root, &["--auto"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty() && output.stderr.is_empty(), "{}", stderr(&output));
    let error = &read_json(&handoff_path(&root))["baton"]["github_error"];
    assert!(error["message"].as_str().unwrap().contains("gh auth login"), "{error}");

    gh.heal("auth-status");
    Issue::new("").publish(&gh);
    let output = push(&sandbox, &gh, &root, &["--auto"]);
    assert!(output.status.success());
    assert!(output.stdout.is_empty() && output.stderr.is_empty());
    let comment = gh.calls().into_iter().find(|c| c.key() == "issue-comment").unwrap();
    assert!(comment.stdin.contains("- **Kind:** auto"), "{}", comment.stdin);
    let baton = &read_json(&handoff_path(&root))["baton"];
    assert!(baton.get("github_error").is_none());
    assert_eq!(baton["github_last_record"]["kind"], "auto");

    // The switch, off by default.
    let output = sandbox.run(&["config", "--json", "--cwd", root.to_str().unwrap()], b"");
    let config: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(config["values"]["checkpoint.github.auto"]["value"], false);
    assert_eq!(config["values"]["checkpoint.github.auto"]["env_var"], "BATON_CHECKPOINT_GITHUB_AUTO");
}

#[test]
fn push_without_a_handoff_says_how_to_make_one() {
    let sandbox = Sandbox::new();
    let repo = TestRepo::init(&sandbox.project(), &[("a.txt", "a\n")]);
    repo.repo.remote("origin", ORIGIN).unwrap();
    let gh = FakeGh::new(&sandbox);
    let output = push(&sandbox, &gh, &sandbox.project(), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("no handoff to push: .planning/HANDOFF.json is missing"),
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("baton pause"));
    assert!(gh.keys().is_empty());
}

#[test]
fn the_next_handoff_keeps_the_issue_so_the_next_push_goes_there() {
    let (sandbox, root, gh, _) = pushed_once();

    // The same session refreshes its handoff, then another session replaces it.
    for session in [SESSION, "0a1b2c3d-0000-4000-8000-000000000001"] {
        let output = sandbox.run(
            &["pause", "--checkpoint", "off", "--cwd", root.to_str().unwrap(), "--session", session],
            b"",
        );
        assert!(output.status.success(), "{}", stderr(&output));
        let baton = &read_json(&handoff_path(&root))["baton"];
        assert_eq!(baton["session_id"], session);
        assert_eq!(baton["github_issue"], 12, "{session}");
        assert_eq!(baton["github_repo"], "acme/shop");
    }
    // Several labelled issues now exist, but the recorded one is used without asking.
    gh.answer("issue-list", "[{\"number\": 1}, {\"number\": 2}]");
    let output = push(&sandbox, &gh, &root, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(gh.keys(), vec!["auth-status", "issue-view", "issue-edit", "issue-comment"]);
}

/// A Persistence Record as the checkpoint-persistence skill's template has people write it.
fn skill_record(timestamp: &str, status: &str, next: &str) -> String {
    format!(
        "## Persistence Record\n- Kind: handoff\n- Timestamp: {timestamp}\n- Stage: 03\n- Status: {status}\n- Next: {next}\n"
    )
}

/// The record of the issue's report: newer than baton's, written by hand.
const THE_ISSUE_S_RECORD: &str = "## Persistence Record\n- Kind: handoff\n- Timestamp: 2099-01-01T00:00:00Z\n- Stage: 03\n- Status: blocked\n- Next: Ask for the staging key\n";

fn restored_line(output: &Output) -> String {
    stdout(output).lines().find(|l| l.starts_with("restored ")).unwrap_or_default().to_string()
}

#[test]
fn each_record_form_written_by_hand_is_restored() {
    let (sandbox, root, gh, issue) = pushed_once();
    let forms = [
        THE_ISSUE_S_RECORD.to_string(),
        "### Persistence Record\n- **Kind**: handoff\n- **Timestamp**: 2099-01-01T00:00:00Z\n- **Stage**: 03\n- **Status**: blocked\n- **Next**: Ask for the staging key\n".into(),
        "Checkpoint before lunch.\n\n**Persistence Record**\n\n**Kind:** handoff\n**Timestamp:** 2099-01-01T00:00:00Z\n**Stage:** 03\n**Status:** blocked\n**Next:** Ask for the staging key\n".into(),
        "# persistence record\nKIND: handoff\ntimestamp: 2099-01-01T00:00:00Z\nStage: 03\nSTATUS: blocked\nnext: Ask for the staging key\n".into(),
        "#### Persistence Record\n\n| Field | Value |\n|---|---|\n| Kind | handoff |\n| Timestamp | 2099-01-01T00:00:00Z |\n| Stage | 03 |\n| Status | blocked |\n| Next | Ask for the staging key |\n".into(),
    ];
    for body in forms {
        let mut thread = issue.clone();
        thread.say(&body);
        thread.publish(&gh);
        let output = pull(&sandbox, &gh, &root, &[]);
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(
            restored_line(&output),
            format!(
                "restored #12 | status: blocked | next: Ask for the staging key | last record: handoff@2099-01-01T00:00:00Z | {}",
                Issue::url_of(1)
            ),
            "{body}"
        );
        let text = stdout(&output);
        assert!(text.contains("  record by: @dev (OWNER), written by hand (no baton header)\n"), "{text}");
        assert!(
            text.contains(
                "differs from the newest record in: status, stage, next, updated at (the newest record wins)"
            ),
            "{text}"
        );
    }
    let output = pull(&sandbox, &gh, &root, &["--json"]);
    let pulled: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(pulled["restored"]["form"], "skill");
    assert_eq!(pulled["restored"]["author"]["login"], "dev");
    assert_eq!(pulled["restored"]["records"], 2);
}

#[test]
fn a_thread_written_by_the_skill_alone_is_restored_and_its_summary_left_as_written() {
    let sandbox = Sandbox::new();
    let root = sandbox.project();
    let repo = TestRepo::init(&root, &[("src/limiter.ts", "limiter\n")]);
    repo.repo.remote("origin", ORIGIN).unwrap();
    let gh = FakeGh::new(&sandbox);
    let body = "Working notes.\n\n## Task Summary\n- Goal: Add per-client rate limiting\n- Status: in progress\n- Stage: 03\n- Next: Wire the limiter\n- Updated At: 2026-11-30T08:00:00Z\n- Issue #: 12\n- Key Paths: `src/limiter.ts`, `src/app.ts`\n\n## Log\n- 08:00 started\n";
    let mut issue = Issue::new(body);
    issue.say(&format!(
        "{}- Completed:\n  - Read the router\n",
        skill_record("2026-11-30T08:00:00Z", "in progress", "Wire the limiter")
    ));
    issue.post("passer-by", "NONE", "Any news?");
    issue.say(&format!(
        "{}- Completed:\n  - Read the router\n  - Wired the limiter\n- Decision: Tiers live in config\n- Blocker: Staging key missing\n- Plan Path: `.planning/phases/03-rate-limiting/03-02-PLAN.md`\n",
        skill_record("2026-11-30T09:30:00Z", "blocked", "Ask for the staging key")
    ));
    issue.publish(&gh);

    let output = pull(&sandbox, &gh, &root, &["--issue", "12", "--write"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        restored_line(&output),
        format!(
            "restored #12 | status: blocked | next: Ask for the staging key | last record: handoff@2026-11-30T09:30:00Z | {}",
            Issue::url_of(2)
        )
    );
    let text = stdout(&output);
    assert!(text.contains("  goal: Add per-client rate limiting\n"), "{text}");
    assert!(text.contains("  key paths: src/limiter.ts, src/app.ts\n"), "{text}");
    assert!(text.contains("read the body's own Task Summary (written without baton's markers"), "{text}");
    assert!(text.contains("differs from the newest record in: status, next, updated at"), "{text}");
    let handoff = read_json(&handoff_path(&root));
    assert_eq!(handoff["status"], "paused");
    assert_eq!(handoff["baton"]["task_status"], "blocked");
    assert_eq!(handoff["next_action"], "Ask for the staging key");
    assert_eq!(handoff["phase"], "03");
    assert_eq!(handoff["phase_dir"], ".planning/phases/03-rate-limiting");
    assert_eq!(handoff["blockers"][0]["description"], "Staging key missing");
    assert_eq!(handoff["decisions"][0]["decision"], "Tiers live in config");
    assert_eq!(handoff["completed_tasks"][1]["name"], "Wired the limiter");
    let baton = &handoff["baton"];
    assert_eq!(baton["goal"], "Add per-client rate limiting");
    assert_eq!(baton["key_paths"], json!(["src/limiter.ts", "src/app.ts"]));
    assert_eq!(baton["github_record"]["form"], "skill");
    assert_eq!(baton["github_record"]["author"], "dev");
    assert_eq!(baton["github_record"]["edited_after_posting"], false);

    // A push from here adds baton's block and leaves the person's summary as written.
    issue.publish(&gh);
    gh.clear_calls();
    let output = push(&sandbox, &gh, &root, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let edit = gh.calls().into_iter().find(|c| c.key() == "issue-edit").unwrap();
    assert!(
        edit.stdin.starts_with(&format!("{}\n\n<!-- baton:summary:start -->", body.trim_end())),
        "{}",
        edit.stdin
    );
    assert!(edit.stdin.contains("- **Goal:** Add per-client rate limiting"), "{}", edit.stdin);
    assert_eq!(edit.stdin.matches("## Task Summary").count(), 2);
}

#[test]
fn a_mixed_thread_is_read_by_time_not_by_thread_order() {
    let (sandbox, root, gh, mut issue) = pushed_once();
    let baton_record = issue.comments[0].clone();
    let t0 =
        chrono::DateTime::parse_from_rfc3339(&baton_record.created_at).unwrap().with_timezone(&chrono::Utc);
    let at = |minutes: i64| time_text(t0 + chrono::Duration::minutes(minutes));
    let mut post_at = |minutes: i64, body: String| {
        issue.comments.push(Posted {
            body,
            login: VIEWER.into(),
            association: "OWNER",
            created_at: at(minutes),
        })
    };
    // [1] the newest checkpoint; [2] one written about an earlier moment, posted late;
    // [3] baton's first record posted again: last in the thread, oldest in time.
    post_at(3, skill_record(&at(2), "in review", "Merge after review"));
    post_at(10, skill_record(&at(1), "in progress", "Write the tests"));
    post_at(11, baton_record.body.clone());
    issue.publish(&gh);

    let output = pull(&sandbox, &gh, &root, &["--write"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        restored_line(&output),
        format!(
            "restored #12 | status: in review | next: Merge after review | last record: handoff@{} | {}",
            at(2),
            Issue::url_of(1)
        )
    );
    let handoff = read_json(&handoff_path(&root));
    assert_eq!(handoff["next_action"], "Merge after review");
    assert_eq!(handoff["baton"]["github_record"]["timestamp"], at(2));
    // Completed tasks and the plan are the newest record's; it names none.
    assert_eq!(handoff["completed_tasks"], json!([]));
}

#[test]
fn an_outsiders_newer_record_is_listed_as_ignored_not_restored() {
    let (sandbox, root, gh, mut issue) = pushed_once();
    issue.post("mallory", "NONE", THE_ISSUE_S_RECORD);
    issue.post("drive-by", "CONTRIBUTOR", &skill_record("2099-02-01T00:00:00Z", "done", "Close the issue"));
    issue.publish(&gh);

    let output = pull(&sandbox, &gh, &root, &["--write"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let receipt = restored_line(&output);
    assert!(
        receipt.starts_with(
            "restored #12 | status: paused | next: Continue: Wire the limiter into the orders routes | last record: checkpoint@"
        ),
        "{receipt}"
    );
    assert!(receipt.ends_with(&Issue::url_of(0)), "{receipt}");
    let text = stdout(&output);
    assert!(
        text.contains("ignored 2 records by authors without write access (only the logged-in user's and OWNER, MEMBER or COLLABORATOR records are restored): @drive-by (CONTRIBUTOR) handoff@2099-02-01T00:00:00Z, @mallory (NONE) handoff@2099-01-01T00:00:00Z\n"),
        "{text}"
    );
    let ignored = &read_json(&handoff_path(&root))["baton"]["github_ignored"];
    assert_eq!(ignored[1]["author"], "mallory");
    assert_eq!(ignored[1]["association"], "NONE");
    assert_eq!(ignored[1]["url"], Issue::url_of(1));

    // A collaborator may speak.
    issue.post("alice", "COLLABORATOR", &skill_record("2099-03-01T00:00:00Z", "blocked", "Rotate the key"));
    issue.publish(&gh);
    let output = pull(&sandbox, &gh, &root, &[]);
    assert!(restored_line(&output).contains("| next: Rotate the key |"), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("  record by: @alice (COLLABORATOR), written by hand"),
        "{}",
        stdout(&output)
    );

    // Outsiders alone: nothing to restore, and they are named.
    let mut strangers = Issue::new("");
    strangers.post("mallory", "NONE", THE_ISSUE_S_RECORD);
    strangers.publish(&gh);
    let output = pull(&sandbox, &gh, &root, &["--issue", "12"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("no Task Summary and no Persistence Record by someone with write access; ignored 1 record by authors without write access"),
        "{}",
        stderr(&output)
    );
    assert!(stderr(&output).contains("@mallory (NONE)"), "{}", stderr(&output));
}

#[test]
fn the_logged_in_user_may_speak_whatever_their_association() {
    let (sandbox, root, gh, mut issue) = pushed_once();
    // An older gh: no viewerDidAuthor; the user's standing here is only CONTRIBUTOR.
    issue.old_gh = true;
    issue.post(VIEWER, "CONTRIBUTOR", THE_ISSUE_S_RECORD);
    issue.publish(&gh);
    gh.clear_calls();
    let output = pull(&sandbox, &gh, &root, &[]);
    assert!(restored_line(&output).contains("| next: Ask for the staging key |"), "{}", stdout(&output));
    assert_eq!(gh.keys(), vec!["auth-status", "issue-view"], "gh auth status named the user");

    // gh auth status names nobody: baton asks `gh api user`, once.
    gh.answer("auth-status", "github.com\n  ✓ Logged in (token from GH_TOKEN)\n");
    gh.answer("api-user", "dev\n");
    gh.clear_calls();
    let output = pull(&sandbox, &gh, &root, &[]);
    assert!(restored_line(&output).contains("| next: Ask for the staging key |"), "{}", stdout(&output));
    assert_eq!(gh.keys(), vec!["auth-status", "issue-view", "api-user"]);
    assert_eq!(gh.calls()[2].args, ["api", "user", "--hostname", "github.com", "--jq", ".login"]);

    // Nobody can tell: the record is not restored.
    gh.fail("api-user", "HTTP 401: Bad credentials\n");
    let output = pull(&sandbox, &gh, &root, &[]);
    assert!(restored_line(&output).contains("| last record: checkpoint@"), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("ignored 1 record by authors without write access"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn a_baton_record_edited_after_posting_is_flagged() {
    let (sandbox, root, gh, mut issue) = pushed_once();
    let original = issue.comments[0].body.clone();
    issue.comments[0].body = original.replace(
        "- **Next:** Continue: Wire the limiter into the orders routes",
        "- **Next:** Deploy straight to production",
    );
    assert_ne!(issue.comments[0].body, original);
    issue.publish(&gh);

    let output = pull(&sandbox, &gh, &root, &["--write"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let receipt = restored_line(&output);
    assert!(
        receipt.starts_with(
            "restored #12 | status: paused | next: Deploy straight to production | last record: checkpoint@"
        ),
        "the one-line form is kept: {receipt}"
    );
    let text = stdout(&output);
    assert!(text.contains("warning: the newest record (checkpoint@"), "{text}");
    assert!(
        text.contains(") was edited after posting: its content no longer matches the digest baton wrote"),
        "{text}"
    );
    let handoff = read_json(&handoff_path(&root));
    assert_eq!(handoff["baton"]["github_record"]["edited_after_posting"], true);
    let output = pull(&sandbox, &gh, &root, &["--json"]);
    let pulled: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(pulled["restored"]["edited_after_posting"], true);

    // The unedited record does not carry the flag.
    issue.comments[0].body = original;
    issue.publish(&gh);
    let output = pull(&sandbox, &gh, &root, &[]);
    assert!(!stdout(&output).contains("edited after posting"), "{}", stdout(&output));
}

#[test]
fn a_push_then_a_hand_written_record_then_a_pull_restores_the_hand_written_one() {
    let (sandbox, root, gh, mut issue) = pushed_once();
    issue.say(THE_ISSUE_S_RECORD);
    issue.publish(&gh);

    let output = pull(&sandbox, &gh, &root, &["--write"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        restored_line(&output),
        format!(
            "restored #12 | status: blocked | next: Ask for the staging key | last record: handoff@2099-01-01T00:00:00Z | {}",
            Issue::url_of(1)
        )
    );
    let handoff = read_json(&handoff_path(&root));
    assert_eq!(handoff["status"], "paused");
    assert_eq!(handoff["baton"]["task_status"], "blocked");
    assert_eq!(handoff["next_action"], "Ask for the staging key");
    assert_eq!(handoff["phase"], "03");
    assert_eq!(handoff["baton"]["github_record"]["kind"], "handoff");
    assert_eq!(handoff["baton"]["github_record"]["form"], "skill");
    assert_eq!(handoff["baton"]["github_issue"], 12);

    // Pushed back, it is baton's newest record; the hand-written record's date in 2099
    // counts as the moment it was posted, so it does not win forever.
    let output = push(&sandbox, &gh, &root, &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stdout(&output)
            .contains("persisted #12 | kind: checkpoint | status: blocked | next: Ask for the staging key |"),
        "{}",
        stdout(&output)
    );
    issue.absorb(&gh);
    let output = pull(&sandbox, &gh, &root, &[]);
    assert!(restored_line(&output).contains("| last record: checkpoint@"), "{}", stdout(&output));
    assert!(restored_line(&output).ends_with(&Issue::url_of(2)), "{}", stdout(&output));
}

// `baton checkpoint list` and `prune`: baton's refs only, with ages, and the pending
// handoff's checkpoint kept.

fn refs_json(sandbox: &Sandbox, dir: &Path) -> Value {
    let output = sandbox.run(&["checkpoint", "list", "--json", "--cwd", dir.to_str().unwrap()], b"");
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}

fn names(list: &Value) -> Vec<String> {
    list["refs"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn checkpoint_list_and_prune_touch_only_batons_refs() {
    let sandbox = Sandbox::new();
    let dir = sandbox.project();
    let repo = TestRepo::init(&dir, &[("README.md", "shop\n")]);
    let head = repo.commit_all("first");
    let git = git2::Repository::open(&dir).unwrap();
    let sig_at =
        |secs: i64| git2::Signature::new("t", "t@example.invalid", &git2::Time::new(secs, 0)).unwrap();
    let tree = git.find_commit(head).unwrap().tree().unwrap();
    let parent = git.find_commit(head).unwrap();
    let old =
        git.commit(None, &sig_at(1_000_000), &sig_at(1_000_000), "wip: old", &tree, &[&parent]).unwrap();
    let now = common::now();
    let new = git.commit(None, &sig_at(now - 60), &sig_at(now - 60), "wip: new", &tree, &[&parent]).unwrap();
    git.reference("refs/baton/wip/old-session", old, true, "t").unwrap();
    git.reference("refs/baton/wip/new-session", new, true, "t").unwrap();
    git.reference("refs/heads/feature", old, true, "t").unwrap();
    git.reference("refs/other/wip/x", old, true, "t").unwrap();

    let list = refs_json(&sandbox, &dir);
    assert_eq!(list["version"], 1);
    assert_eq!(names(&list), ["refs/baton/wip/new-session", "refs/baton/wip/old-session"], "newest first");
    assert_eq!(list["refs"][0]["summary"], "wip: new");
    assert!(list["refs"][1]["age_seconds"].as_i64().unwrap() > 86_400 * 365);
    let text = stdout(&sandbox.run(&["checkpoint", "list", "--cwd", dir.to_str().unwrap()], b""));
    assert!(text.contains("refs/baton/wip/old-session"), "{text}");

    let out =
        sandbox.run(&["checkpoint", "prune", "--older-than", "7d", "--cwd", dir.to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("deleted refs/baton/wip/old-session"), "{}", stdout(&out));
    assert_eq!(names(&refs_json(&sandbox, &dir)), ["refs/baton/wip/new-session"]);

    // The pending handoff's checkpoint is kept by a prune of everything.
    let planning = dir.join(".planning");
    std::fs::create_dir_all(&planning).unwrap();
    std::fs::write(
        planning.join("HANDOFF.json"),
        json!({"version": "1.0", "status": "paused",
            "baton": {"checkpoint": {"reference": "refs/baton/wip/new-session"}}})
        .to_string(),
    )
    .unwrap();
    let out = sandbox.run(&["checkpoint", "prune", "--cwd", dir.to_str().unwrap()], b"");
    assert!(stdout(&out).contains("kept refs/baton/wip/new-session"), "{}", stdout(&out));
    std::fs::remove_file(planning.join("HANDOFF.json")).unwrap();
    let out = sandbox.run(&["checkpoint", "prune", "--cwd", dir.to_str().unwrap()], b"");
    assert!(out.status.success());
    assert!(names(&refs_json(&sandbox, &dir)).is_empty());
    // Every other ref is untouched.
    assert!(git.find_reference("refs/heads/feature").is_ok());
    assert!(git.find_reference("refs/other/wip/x").is_ok());
    // A bad age is a usage error.
    let out = sandbox.run(&["checkpoint", "prune", "--older-than", "soon"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_pulled_handoff_of_every_record_status_resumes_once_accepted() {
    let (sandbox, root, gh, issue) = pushed_once();
    let statuses = ["paused", "in_progress", "blocked", "done", "in review", ""];
    for (i, status) in statuses.iter().enumerate() {
        let mut thread = issue.clone();
        thread.say(&skill_record(
            &format!("2099-01-0{}T00:00:00Z", i + 1),
            status,
            "Ask for the staging key",
        ));
        thread.publish(&gh);
        let output = pull(&sandbox, &gh, &root, &["--write"]);
        assert!(output.status.success(), "{status}: {}", stderr(&output));
        let written = read_json(&handoff_path(&root));
        assert_eq!(written["status"], "paused", "{status}: GSD's status, so it can be resumed");
        let kept = if status.is_empty() { "paused" } else { status };
        assert_eq!(written["baton"]["task_status"], kept, "{status}: the record's own status kept");

        let session = format!("0a1b2c3d-0000-4000-8000-00000000010{i}");
        let start = json!({"session_id": session, "cwd": root, "hook_event_name": "SessionStart", "source": "startup"});
        // Not trusted before it is accepted: one line, no brief.
        let before = told(&sandbox.hook(&start)).unwrap_or_default();
        assert!(!before.contains("baton resume brief"), "{status}: {before}");
        let accept = sandbox.run(&["resume", "--accept", "--cwd", root.to_str().unwrap()], b"");
        assert!(accept.status.success(), "{status}: {}", stderr(&accept));
        let brief = told(&sandbox.hook(&start)).unwrap_or_default();
        assert!(brief.starts_with("baton resume brief"), "{status}: {brief}");
        assert!(brief.contains("Ask for the staging key"), "{status}: {brief}");
        if kept != "paused" {
            assert!(brief.contains(&format!("Task status recorded: “{kept}”")), "{status}: {brief}");
        }
    }
}

/// With `checkpoint.github.auto` the CRITICAL hook pushes the handoff it wrote, in the
/// background. Where another user can reach the project's folder, the handoff goes to
/// baton's private folder and nothing is pushed: the push reads the project's HANDOFF.json,
/// and there it may be anyone's (here: one written before the folder was opened to all).
#[test]
fn the_critical_hook_pushes_by_itself_only_from_a_project_no_other_user_can_reach() {
    for world_writable in [false, true] {
        let sandbox = Sandbox::new();
        let root = sandbox.project();
        clone_with_handoff(&sandbox, &root);
        if world_writable {
            std::fs::set_permissions(&root, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        }
        let gh = FakeGh::new(&sandbox);
        Issue::new("").publish(&gh);
        sandbox.write_bridge(SESSION, 20.0, 0);
        let event = json!({
            "session_id": SESSION, "transcript_path": Value::Null, "cwd": root,
            "hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_input": {}, "tool_response": {},
        });
        let mut env = gh.env();
        env.push(("BATON_CHECKPOINT_GITHUB_AUTO".into(), "1".into()));
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let output = sandbox.run_with(&["hook"], event.to_string().as_bytes(), &env);
        assert!(told(&output).is_some_and(|t| t.contains("CRITICAL")), "{}", stdout(&output));

        // The push runs detached: wait for its comment, or long enough to be sure of none.
        let commented = || gh.keys().iter().any(|k| k == "issue-comment");
        let deadline =
            std::time::Instant::now() + std::time::Duration::from_secs(if world_writable { 5 } else { 30 });
        while !commented() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        assert_eq!(
            commented(),
            !world_writable,
            "world-writable: {world_writable}; gh calls: {:?}",
            gh.keys()
        );
    }
}
