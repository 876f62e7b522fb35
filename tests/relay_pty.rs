//! `baton run` with an interactive host (issue 19), black-box: the test is the user's
//! terminal (a pty it opens), baton runs a stand-in interactive `claude` (a shell prompt
//! that reads lines and, on a turn, sends the hook events Claude Code sends) on its own
//! pty. Proves the countdown line, `/clear` and the continue prompt typed by baton, the
//! brief of each later leg, a key during the countdown cancelling, `--max-legs`, and the
//! host's exit status and the summary at the end.

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{self, Sandbox, TestRepo};

/// A stand-in interactive Claude Code. Session `n` starts with SessionStart (`startup`,
/// then `clear` after each `/clear`, its brief kept in brief-n.json); a line is a turn of
/// tool calls at 19 % remaining for the first FAKE_PAUSE_SESSIONS sessions (else 60 %),
/// which ends when a hook answers with the host's stop, as Claude Code 2.1.332 does (no
/// Stop hook then), or after 6 calls with the Stop hook (with FAKE_OBEYS, at the call told
/// CONTEXT CRITICAL: its agent ends the turn as asked). A turn "thinks" 2.5 s first: a
/// key in the last 2 s before the host is idle (the Enter of the prompt) would cancel.
const FAKE_INTERACTIVE: &str = r#"#!/bin/sh
n=1
sid() { printf 'aaaaaaaa-0000-4000-8000-0000000000%02d' "$n"; }
start() {
  printf '{"session_id":"%s","cwd":"%s","hook_event_name":"SessionStart","source":"%s"}' "$(sid)" "$PWD" "$1" | "$BATON_BIN" hook > "$FAKE_OUT/brief-$n.json"
}
turn() {
  if [ "$n" -le "${FAKE_PAUSE_SESSIONS:-2}" ]; then remaining=19; else remaining=60; fi
  sleep 2.5
  i=0
  while [ $i -lt 6 ]; do
    i=$((i+1))
    printf '{"session_id":"%s","remaining_percentage":%s,"used_pct":%s,"timestamp":%s}' "$(sid)" $remaining $((100-remaining)) "$(date +%s)" > "$TMPDIR/claude-ctx-$(sid).json"
    out=$(printf '{"session_id":"%s","cwd":"%s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{},"tool_response":{},"tool_use_id":"t%s-%s"}' "$(sid)" "$PWD" $n $i | "$BATON_BIN" hook)
    echo "session $n call $i"
    case "$out" in *'"continue":false'*) echo "session $n stopped"; return;; esac
    case "$out" in *'CONTEXT CRITICAL'*) if [ -n "$FAKE_OBEYS" ]; then echo "session $n ends its turn"; break; fi;; esac
  done
  printf '{"session_id":"%s","cwd":"%s","hook_event_name":"Stop","stop_hook_active":false}' "$(sid)" "$PWD" | "$BATON_BIN" hook > /dev/null
  echo "session $n done"
}
start startup
while :; do
  printf 'fake> '
  IFS= read -r line || exit 0
  case "$line" in
    /clear) n=$((n+1)); start clear; echo "cleared: session $n";;
    /exit) exit "${FAKE_EXIT:-0}";;
    size) echo "size: $(stty size)";;
    stop) kill -STOP $$; echo "host continued";;
    *) echo "session $n turn: $line"; turn;;
  esac
done
"#;

/// The user's terminal: the master side the test holds, what arrived on it so far.
struct Terminal {
    master: std::fs::File,
    seen: Arc<Mutex<Vec<u8>>>,
    child: Child,
    stderr: std::path::PathBuf,
}

impl Terminal {
    /// `baton <args>` with the slave side as its stdin and stdout (a 24×80 terminal).
    fn start(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Terminal {
        // SAFETY: POSIX pty calls on fds owned at once; the name is copied before use.
        let (master, slave) = unsafe {
            let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
            assert!(m >= 0, "posix_openpt");
            assert!(libc::grantpt(m) == 0 && libc::unlockpt(m) == 0, "grantpt");
            let name = std::ffi::CStr::from_ptr(libc::ptsname(m)).to_owned();
            let s = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
            assert!(s >= 0, "open slave");
            let size = libc::winsize { ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0 };
            libc::ioctl(m, libc::TIOCSWINSZ, &size);
            (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s))
        };
        let stderr = sandbox.root().join("baton-run.stderr");
        let mut command = sandbox.command(args);
        command.env("BATON_BIN", common::BATON).env("FAKE_OUT", sandbox.root());
        for (k, v) in env {
            command.env(k, v);
        }
        command
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave))
            .stderr(std::fs::File::create(&stderr).unwrap());
        // SAFETY: setsid and ioctl are async-signal-safe; the slave becomes baton's
        // controlling terminal, as a shell's would be.
        unsafe {
            command.pre_exec(|| {
                libc::setsid();
                libc::ioctl(0, libc::TIOCSCTTY, 0);
                Ok(())
            });
        }
        let child = command.spawn().expect("baton run");
        drop(command);
        let master = std::fs::File::from(master);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let sink = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Terminal { master, seen, child, stderr }
    }

    /// Whether the user's terminal is in canonical (cooked) mode.
    fn cooked(&self) -> bool {
        use std::os::fd::AsRawFd;
        // SAFETY: termios is plain data; on Linux a pty master's termios is its slave's.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::tcgetattr(self.master.as_raw_fd(), &mut t) }, 0);
        t.c_lflag & libc::ICANON != 0
    }

    /// The user resizes the terminal (the kernel sends baton SIGWINCH).
    fn resize(&self, rows: u16, cols: u16) {
        use std::os::fd::AsRawFd;
        let size = libc::winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: sets the size of our own pty.
        unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ, &size) };
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }

    /// Waits until the output holds `text` (panics with the output after `limit`).
    fn wait_for(&self, text: &str, limit: Duration) {
        let started = Instant::now();
        while started.elapsed() < limit {
            if self.screen().contains(text) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("no {text:?} in {} s; the terminal showed:\n{}", limit.as_secs(), self.screen());
    }

    fn type_keys(&mut self, keys: &str) {
        self.master.write_all(keys.as_bytes()).unwrap();
    }

    /// Types `line` and Enter, and waits for baton to exit: its status and stderr.
    fn exit_with(mut self, line: &str) -> (Option<i32>, String, String) {
        self.type_keys(line);
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status.code();
            }
            if started.elapsed() > Duration::from_secs(30) {
                let _ = self.child.kill();
                panic!("baton run did not exit; the terminal showed:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        std::thread::sleep(Duration::from_millis(200));
        (status, self.screen(), std::fs::read_to_string(&self.stderr).unwrap_or_default())
    }
}

fn fake_host(sandbox: &Sandbox) -> String {
    use std::os::unix::fs::PermissionsExt;
    TestRepo::init(&sandbox.project(), &[("src/app.ts", "app\n"), ("README.md", "readme\n")]);
    let path = sandbox.root().join("bin").join("claude");
    common::write(&path, FAKE_INTERACTIVE);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn interactive_host_is_handed_over_to_a_fresh_context_with_clear_and_continue() {
    let sandbox = Sandbox::new();
    let fake = fake_host(&sandbox);
    let mut term =
        Terminal::start(&sandbox, &["run", "--", &fake, "--allowedTools", "Bash"], &[("FAKE_EXIT", "3")]);
    term.wait_for("fake> ", LIMIT);
    // Raw mode while the host runs; the host starts with the terminal's size and follows
    // its changes.
    assert!(!term.cooked(), "the user's terminal is in raw mode");
    term.type_keys("size\r");
    term.wait_for("size: 24 80", LIMIT);
    term.resize(30, 100);
    std::thread::sleep(Duration::from_millis(500));
    term.type_keys("size\r");
    term.wait_for("size: 30 100", LIMIT);
    term.type_keys("do the steps\r");
    term.wait_for("session 1 stopped", LIMIT);
    // Idle after the stop: the countdown, then `/clear` and the continue prompt typed.
    term.wait_for("handoff saved, continuing in a fresh context in 5 s; any key cancels", LIMIT);
    term.wait_for("cleared: session 2", LIMIT);
    term.wait_for("session 2 turn: continue", LIMIT);
    term.wait_for("session 2 stopped", LIMIT);
    term.wait_for("session 3 turn: continue", LIMIT);
    term.wait_for("session 3 done", LIMIT);
    let screen = term.screen();
    assert!(
        screen.contains("baton: context 81 % — handoff saved, continuing in a fresh context in 1 s"),
        "{screen}"
    );
    // The calm session ended its turn unpaused: no countdown after it.
    std::thread::sleep(Duration::from_secs(2));
    let after = term.screen();
    let tail = &after[after.rfind("session 3 done").unwrap()..];
    assert!(!tail.contains("continuing in a fresh context"), "{tail}");
    let master = term.master.try_clone().unwrap();
    let (status, screen, stderr) = term.exit_with("/exit\r");
    assert_eq!(status, Some(3), "the host's exit status\n{screen}\n{stderr}");
    // SAFETY: as in `cooked`.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::tcgetattr(std::os::fd::AsRawFd::as_raw_fd(&master), &mut t) }, 0);
    assert!(t.c_lflag & libc::ICANON != 0, "the terminal's mode is restored");
    let brief = |n: u32| std::fs::read_to_string(sandbox.root().join(format!("brief-{n}.json"))).unwrap();
    assert!(!brief(1).contains("of a relay"), "{}", brief(1));
    assert!(
        brief(2).contains("This is leg 2 of a relay") && brief(2).contains("baton resume brief"),
        "{}",
        brief(2)
    );
    assert!(brief(3).contains("This is leg 3 of a relay"), "{}", brief(3));
    let summary = stderr.lines().last().unwrap_or_default();
    assert!(summary.starts_with("baton run: 3 legs; leg 1: peak 81 %, stopped by the pause"), "{stderr}");
    assert!(summary.ends_with("the last leg ended without a pause."), "{summary}");
}

/// An agent that ends its turn as the CRITICAL warning asks (no pause armed: `advise`)
/// leaves its context paused all the same: handed over once the host is idle.
#[test]
fn an_agent_that_stopped_by_itself_is_handed_over() {
    let sandbox = Sandbox::new();
    let fake = fake_host(&sandbox);
    let env = [("FAKE_OBEYS", "1"), ("FAKE_PAUSE_SESSIONS", "1"), ("BATON_HANDOFF_ON_CRITICAL", "advise")];
    let mut term = Terminal::start(&sandbox, &["run", "--", &fake], &env);
    term.wait_for("fake> ", LIMIT);
    term.type_keys("do the steps\r");
    term.wait_for("session 1 ends its turn", LIMIT);
    term.wait_for("handoff saved, continuing in a fresh context in 5 s; any key cancels", LIMIT);
    term.wait_for("session 2 turn: continue", LIMIT);
    term.wait_for("session 2 done", LIMIT);
    let (status, screen, stderr) = term.exit_with("/exit\r");
    assert_eq!(status, Some(0), "{screen}\n{stderr}");
    let brief = std::fs::read_to_string(sandbox.root().join("brief-2.json")).unwrap();
    assert!(brief.contains("This is leg 2 of a relay"), "{brief}");
    let summary = stderr.lines().last().unwrap_or_default();
    assert!(summary.starts_with("baton run: 2 legs; leg 1: peak 81 %"), "{stderr}");
    assert!(summary.ends_with("the last leg ended without a pause."), "{summary}");
}

/// `--countdown 0`: no countdown line, the hand-over as soon as the host is idle; a
/// countdown over a minute is refused before anything runs.
#[test]
fn the_countdown_is_the_users_to_set() {
    let sandbox = Sandbox::new();
    let fake = fake_host(&sandbox);
    let env = [("FAKE_PAUSE_SESSIONS", "1")];
    let mut term = Terminal::start(&sandbox, &["run", "--countdown", "0", "--", &fake], &env);
    term.wait_for("fake> ", LIMIT);
    term.type_keys("do the steps\r");
    term.wait_for("session 1 stopped", LIMIT);
    term.wait_for("cleared: session 2", LIMIT);
    term.wait_for("session 2 turn: continue", LIMIT);
    term.wait_for("session 2 done", LIMIT);
    let (status, screen, stderr) = term.exit_with("/exit\r");
    assert_eq!(status, Some(0), "{screen}\n{stderr}");
    assert!(!screen.contains("continuing in a fresh context in"), "a countdown was shown: {screen}");
    assert!(screen.contains("baton: continuing in a fresh context (leg 2): typing `/clear`"), "{screen}");
    let out = sandbox.run_with(&["run", "--countdown", "2m", "--", &fake], b"", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(common::stderr(&out).contains("the countdown is at most 60s"), "{}", common::stderr(&out));
    // A headless command has no countdown: said, and the run goes on.
    let out = sandbox.run_with(&["run", "--countdown", "2", "--", &fake, "-p", "do the steps"], b"", &[]);
    assert!(
        common::stderr(&out).contains("--countdown is for interactive `claude` on a terminal"),
        "{}",
        common::stderr(&out)
    );
}

#[test]
fn a_key_during_the_countdown_cancels_the_hand_over() {
    let sandbox = Sandbox::new();
    let fake = fake_host(&sandbox);
    let mut term = Terminal::start(&sandbox, &["run", "--", &fake], &[]);
    term.wait_for("fake> ", LIMIT);
    term.type_keys("do the steps\r");
    term.wait_for("continuing in a fresh context in 5 s; any key cancels", LIMIT);
    term.type_keys("x");
    term.wait_for("baton: hand-over cancelled (a key was pressed); the context stays paused", LIMIT);
    // Past the countdown's end: nothing typed, the cancelling key kept from the host.
    std::thread::sleep(Duration::from_secs(7));
    let screen = term.screen();
    assert!(!screen.contains("cleared:") && !screen.contains("turn: continue"), "{screen}");
    let (status, screen, stderr) = term.exit_with("/exit\r");
    // The host exited 0 with its context paused: the task is not done.
    assert_eq!(status, Some(3), "{screen}\n{stderr}");
    assert!(!screen.contains("turn: x/exit"), "the key went to the host: {screen}");
    assert!(
        stderr.lines().last().unwrap_or_default().contains("To go on, run `baton run` again"),
        "{stderr}"
    );
    let summary = stderr.lines().find(|l| l.starts_with("baton run: 1 leg;")).unwrap_or_default();
    assert!(
        summary.starts_with("baton run: 1 leg;")
            && summary.ends_with(
                "the host exited with its context paused (the handoff waits for the next session)."
            ),
        "{stderr}"
    );
}

#[test]
fn interactive_max_legs_stops_handing_over() {
    let sandbox = Sandbox::new();
    let fake = fake_host(&sandbox);
    let mut term = Terminal::start(&sandbox, &["run", "--max-legs", "1", "--", &fake], &[]);
    term.wait_for("fake> ", LIMIT);
    term.type_keys("do the steps\r");
    term.wait_for("--max-legs 1 reached, not continuing", LIMIT);
    // A stopped host stops baton (its terminal restored); continued, both go on.
    term.type_keys("stop\r");
    let state = |pid: u32| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.rsplit(") ").next().and_then(|rest| rest.chars().next())
    };
    let started = Instant::now();
    while state(term.child.id()) != Some('T') && started.elapsed() < LIMIT {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(state(term.child.id()), Some('T'), "baton stopped with its host");
    assert!(term.cooked(), "the terminal is the user's again while baton is stopped");
    // SAFETY: continues the baton this test started.
    unsafe { libc::kill(term.child.id() as libc::pid_t, libc::SIGCONT) };
    term.wait_for("host continued", LIMIT);
    assert!(!term.cooked(), "raw again");
    std::thread::sleep(Duration::from_secs(2));
    let (status, screen, stderr) = term.exit_with("/exit\r");
    assert_eq!(status, Some(3), "the last leg paused\n{screen}\n{stderr}");
    assert!(!screen.contains("cleared:") && !screen.contains("any key cancels"), "{screen}");
    assert!(stderr.contains("stopped after --max-legs legs"), "{stderr}");
    // Without a terminal, the interactive command is refused (nothing run).
    let out = sandbox.run_with(&["run", "--", &fake], b"", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(common::stderr(&out).contains("run `claude` from a terminal"), "{}", common::stderr(&out));
}
