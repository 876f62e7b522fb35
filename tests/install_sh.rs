//! `install/install.sh`, run for real with a stand-in `cargo` first on PATH: it
//! "builds" by copying the already built test binary into `--root`, so the script's own
//! logic (where the binary goes, the PATH link, passing flags to `baton install`,
//! `--uninstall`, idempotence, `--dry-run`) is tested without a release build taking
//! minutes. The real `cargo install --path .` is not run here. The prebuilt archive is
//! offered from a file:// folder in the sandbox (BATON_RELEASE_URL): empty unless a test
//! puts an archive there, so the other tests fall back to building, offline.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use serde_json::Value;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/install/install.sh");
const VERSION: &str = env!("CARGO_PKG_VERSION");
const TARGET: &str = "x86_64-unknown-linux-musl";

const FAKE_CARGO: &str = r#"#!/bin/sh
# Stand-in for cargo: logs its arguments, installs or removes the test binary, and
# lists it (`install --list`) when it installed it.
echo "cargo $*" >> "$FAKE_CARGO_LOG"
root="${CARGO_HOME:-$HOME/.cargo}"
list=""
while [ $# -gt 0 ]; do
    case "$1" in
        --root) shift; root="$1" ;;
        --list) list=1 ;;
        install) action=install ;;
        uninstall) action=uninstall ;;
    esac
    shift
done
if [ -n "$list" ]; then
    [ -f "$root/.fake-cargo-installed" ] && printf 'baton-context v0.1.0 (%s):\n    baton\n' "$PWD"
    exit 0
fi
case "$action" in
    install) mkdir -p "$root/bin" && cp "$BATON_TEST_BINARY" "$root/bin/baton" && touch "$root/.fake-cargo-installed" ;;
    uninstall) rm -f "$root/bin/baton" "$root/.fake-cargo-installed" ;;
esac
"#;

struct Setup {
    sb: Sandbox,
    fake_bin: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let sb = Sandbox::plain();
        let fake_bin = sb.root().join("fake-bin");
        fs::create_dir_all(&fake_bin).unwrap();
        let cargo = fake_bin.join("cargo");
        fs::write(&cargo, FAKE_CARGO).unwrap();
        fs::set_permissions(&cargo, fs::Permissions::from_mode(0o755)).unwrap();
        Setup { sb, fake_bin }
    }

    /// The folder the script downloads release archives from.
    fn release_dir(&self) -> PathBuf {
        self.sb.root().join("release")
    }

    /// Puts a release archive (as release.yml lays it out) and its .sha256 file into the
    /// release folder; `tamper` makes the checksum wrong. With `real`, the archive holds
    /// the test binary; else a small stand-in that only answers --version (packing the
    /// 70 MB debug binary costs seconds, and a test that must not use it needs no more).
    fn publish_archive(&self, real: bool, tamper: bool) {
        let name = format!("baton-{VERSION}-{TARGET}");
        let staging = self.sb.root().join("staging");
        fs::create_dir_all(staging.join(&name)).unwrap();
        let binary = staging.join(&name).join("baton");
        if real {
            fs::copy(BATON, &binary).unwrap();
        } else {
            fs::write(&binary, format!("#!/bin/sh\necho 'baton {VERSION}'\n")).unwrap();
            fs::set_permissions(&binary, fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::create_dir_all(self.release_dir()).unwrap();
        let archive = self.release_dir().join(format!("{name}.tar.gz"));
        let packed = Command::new("tar")
            .arg("-czf")
            .arg(&archive)
            .arg("-C")
            .arg(&staging)
            .arg(&name)
            .output()
            .unwrap();
        assert!(packed.status.success(), "{}", stderr(&packed));
        let sum = Command::new("sh")
            .args(["-c", r#"sha256sum "$1" 2>/dev/null || shasum -a 256 "$1""#, "sh"])
            .arg(&archive)
            .output()
            .unwrap();
        let mut digest = stdout(&sum).split_whitespace().next().unwrap().to_string();
        if tamper {
            digest = digest.chars().rev().collect();
        }
        fs::write(
            self.release_dir().join(format!("{name}.tar.gz.sha256")),
            format!("{digest}  {name}.tar.gz\n"),
        )
        .unwrap();
    }

    fn log(&self) -> String {
        fs::read_to_string(self.sb.root().join("cargo.log")).unwrap_or_default()
    }

    fn run(&self, args: &[&str], path_extra: Option<&Path>) -> Output {
        let mut path = format!("{}:/usr/bin:/bin", self.fake_bin.display());
        if let Some(extra) = path_extra {
            path = format!("{}:{path}", extra.display());
        }
        Command::new("sh")
            .arg(SCRIPT)
            .args(args)
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.sb.home())
            .env("TMPDIR", self.sb.tmp())
            .env("XDG_CONFIG_HOME", self.sb.root().join("config"))
            .env("XDG_STATE_HOME", self.sb.root().join("state"))
            .env("CLAUDE_CONFIG_DIR", self.sb.root().join("claude-config"))
            .env("FAKE_CARGO_LOG", self.sb.root().join("cargo.log"))
            .env("BATON_TEST_BINARY", BATON)
            .env("BATON_RELEASE_URL", format!("file://{}", self.release_dir().display()))
            .env("BATON_TARGET", TARGET)
            .current_dir(self.sb.project())
            .output()
            .unwrap()
    }
}

#[test]
fn installs_registers_and_uninstalls_idempotently() {
    let s = Setup::new();
    write(&s.sb.claude_settings(), GSD_SETTINGS);
    let prefix = s.sb.root().join("prefix");
    let prefix_arg = format!("--prefix={}", prefix.display());
    let out = ok(&s.run(&[&prefix_arg, "--replace-other-monitors"], None));
    let installed = fs::canonicalize(prefix.join("bin/baton")).unwrap();
    assert!(out.contains("building baton"), "{out}");
    assert!(out.contains("not on PATH"), "tells how to add it: {out}");
    assert!(
        s.log().contains(&format!(
            "cargo install --path {} --locked --root {}",
            env!("CARGO_MANIFEST_DIR"),
            prefix.display()
        )),
        "{}",
        s.log()
    );
    let settings: Value = read_json(&s.sb.claude_settings());
    let text = settings.to_string();
    assert!(text.contains(&format!("{} hook", installed.display())), "{text}");
    assert!(!text.contains("gsd-context-monitor"), "flags are passed on: {text}");

    // Again: the same settings.
    let before = fs::read(s.sb.claude_settings()).unwrap();
    let out = ok(&s.run(&[&prefix_arg, "--replace-other-monitors"], None));
    assert!(out.contains("already installed"), "{out}");
    assert_eq!(fs::read(s.sb.claude_settings()).unwrap(), before);

    let out = ok(&s.run(&["--uninstall", &prefix_arg], None));
    assert!(out.contains("baton is uninstalled"), "{out}");
    assert!(
        s.log().contains(&format!("cargo uninstall baton-context --root {}", prefix.display())),
        "{}",
        s.log()
    );
    assert!(!prefix.join("bin/baton").exists());
    assert_eq!(fs::read_to_string(s.sb.claude_settings()).unwrap(), GSD_SETTINGS);
    // And again: nothing left to do, no error.
    let out = ok(&s.run(&["--uninstall", &prefix_arg], None));
    assert!(out.contains("no baton binary found") && out.contains("nothing to remove"), "{out}");
}

#[test]
fn links_into_local_bin_when_that_is_on_path() {
    let s = Setup::new();
    let local_bin = s.sb.home().join(".local/bin");
    fs::create_dir_all(&local_bin).unwrap();
    let out = ok(&s.run(&["--statusline-only"], Some(&local_bin)));
    let cargo_bin = s.sb.home().join(".cargo/bin/baton");
    assert!(cargo_bin.exists(), "{out}");
    assert_eq!(fs::read_link(local_bin.join("baton")).unwrap(), cargo_bin);
    let settings = read_json(&s.sb.claude_settings());
    assert!(settings.get("hooks").is_none(), "--statusline-only passed on");
    ok(&s.run(&["--uninstall"], Some(&local_bin)));
    assert!(!local_bin.join("baton").exists());
    assert!(!cargo_bin.exists());
    assert!(!s.sb.claude_settings().exists());
}

#[test]
fn dry_run_changes_nothing() {
    let s = Setup::new();
    let out = ok(&s.run(&["--dry-run", "--host", "claude"], None));
    assert!(out.contains("would run: cargo install --path"), "{out}");
    assert!(out.contains("would run:") && out.contains("baton install --host claude"), "{out}");
    assert_eq!(s.log(), "", "cargo was not run");
    assert!(!s.sb.home().join(".cargo").exists());
    assert!(!s.sb.claude_settings().exists());
}

#[test]
fn linux_machines_get_the_musl_archive() {
    // Not told a target, the script picks this machine's: the static musl build on Linux,
    // whichever C library the system has.
    let s = Setup::new();
    let output = Command::new("sh")
        .arg(SCRIPT)
        .args(["--dry-run", "--host", "claude"])
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", s.fake_bin.display()))
        .env("HOME", s.sb.home())
        .env("BATON_RELEASE_URL", "file:///nowhere")
        .current_dir(s.sb.project())
        .output()
        .unwrap();
    let out = ok(&output);
    let arch = std::env::consts::ARCH;
    assert!(out.contains(&format!("baton-{VERSION}-{arch}-unknown-linux-musl.tar.gz")), "{out}");
}

#[test]
fn bad_arguments_and_a_missing_cargo() {
    let s = Setup::new();
    let output = s.run(&["--prefix"], None);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("--prefix needs a folder"));
    // Without cargo (skipped where the system has one in /usr/bin or /bin: the script
    // would find it and build for real).
    if !Path::new("/usr/bin/cargo").exists() && !Path::new("/bin/cargo").exists() {
        fs::remove_file(s.fake_bin.join("cargo")).unwrap();
        let output = s.run(&[], None);
        assert_eq!(output.status.code(), Some(1));
        assert!(stderr(&output).contains("https://rustup.rs"), "{}", stderr(&output));
    }
    let help = ok(&s.run(&["--help"], None));
    assert!(help.contains("--uninstall"), "{help}");
}

#[test]
fn the_prebuilt_archive_comes_first_when_its_checksum_matches() {
    let s = Setup::new();
    s.publish_archive(true, false);
    let prefix = s.sb.root().join("prefix");
    let prefix_arg = format!("--prefix={}", prefix.display());
    let out = ok(&s.run(&[&prefix_arg], None));
    assert!(out.contains("installed the prebuilt baton") && out.contains("sha256 verified"), "{out}");
    assert_eq!(s.log(), "", "nothing was built: {out}");
    let installed = fs::canonicalize(prefix.join("bin/baton")).unwrap();
    assert_eq!(fs::read(&installed).unwrap(), fs::read(BATON).unwrap());
    let settings = read_json(&s.sb.claude_settings()).to_string();
    assert!(settings.contains(&format!("{} hook", installed.display())), "{settings}");
    // Uninstall removes the prebuilt binary itself (cargo has no record of it).
    let out = ok(&s.run(&["--uninstall", &prefix_arg], None));
    assert!(out.contains("baton is uninstalled") && !prefix.join("bin/baton").exists(), "{out}");
    assert!(!s.log().contains("cargo uninstall"), "{}", s.log());
}

#[test]
fn a_checksum_mismatch_falls_back_to_building() {
    let s = Setup::new();
    s.publish_archive(false, true);
    let prefix = s.sb.root().join("prefix");
    let out = ok(&s.run(&[&format!("--prefix={}", prefix.display())], None));
    assert!(out.contains("checksum mismatch") && out.contains("not using it"), "{out}");
    assert!(!out.contains("installed the prebuilt"), "{out}");
    assert!(out.contains("building baton"), "{out}");
    assert!(s.log().contains("cargo install --path"), "built instead: {}", s.log());
    assert!(prefix.join("bin/baton").exists());
}

#[test]
fn no_archive_or_build_flag_builds_from_source() {
    let s = Setup::new();
    let out = ok(&s.run(&["--prefix=p1"], None));
    assert!(out.contains("no prebuilt archive could be downloaded"), "{out}");
    assert!(s.log().contains("cargo install --path"), "{}", s.log());
    // --build skips the download even when an archive is there.
    s.publish_archive(false, false);
    let out = ok(&s.run(&["--build", "--prefix=p2"], None));
    assert!(!out.contains("downloading"), "{out}");
    assert_eq!(s.log().matches("cargo install --path").count(), 2, "{}", s.log());
}
