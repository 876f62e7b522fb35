//! Hostile repository config files, fed to every command that reads them: a seeded
//! generator (no extra crate; `BATON_FUZZ_SEED` and `BATON_FUZZ_CASES` change the run)
//! writes `.claude/baton.json` and `.planning/config.json` with wrong types, absurd
//! numbers, escaping paths, loosening keys, deep nesting, huge files, invalid bytes,
//! FIFOs, folders and symlinks; then the hook, the statusline, `baton config` and
//! `baton doctor` run against them. None may panic, hang, break the hook's contract,
//! honour a safety-loosening key, or write outside baton's places.

use crate::common;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{SESSION, Sandbox, told};
use serde_json::{Map, Value, json};

const HANG: Duration = Duration::from_secs(8);

/// xorshift64*: small, seeded, reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// The keys to draw from: every key baton declares (read from `baton config --json`, so a
/// new key is fuzzed without touching this file), their parent objects, and names that are
/// not keys at all.
fn keys() -> &'static [String] {
    static KEYS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let output = Sandbox::new().run(&["config", "--json"], b"");
        let config: Value = serde_json::from_slice(&output.stdout).expect("config --json");
        let declared: Vec<String> = config["values"].as_object().expect("values").keys().cloned().collect();
        let mut keys = declared.clone();
        for key in &declared {
            if let Some((parent, _)) = key.split_once('.') {
                if !keys.iter().any(|k| k == parent) {
                    keys.push(parent.to_string());
                }
            }
        }
        keys.extend(["hooks", "version", "__proto__", ""].map(String::from));
        keys
    })
}

const STRINGS: &[&str] = &[
    "",
    "branch",
    "ref",
    "off",
    ".git",
    ".git/hooks",
    "../../outside",
    "/tmp/evil",
    ".planning/../../x",
    ".baton",
    ".planning/sub",
    "meter,model",
    "true",
    "35",
    "\u{0}\u{7}\u{1b}[31m",
    "ℂ𝕠𝕟𝕥𝕖𝕩𝕥",
];

fn value(rng: &mut Rng, depth: u32) -> Value {
    match rng.below(if depth > 5 { 6 } else { 9 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.below(2) == 0),
        2 => json!(*rng.pick(&[0i64, -1, 1, 25, 35, 99, 100, 1000, i64::MAX, i64::MIN])),
        3 => json!(*rng.pick(&[0.5f64, 35.5, -0.0, 1e308, 99.999, 1e-300])),
        4 => json!(rng.pick(STRINGS)),
        5 => json!("x".repeat(rng.below(5000) as usize)),
        6 => Value::Array((0..rng.below(5)).map(|_| value(rng, depth + 1)).collect()),
        _ => object(rng, depth + 1),
    }
}

fn object(rng: &mut Rng, depth: u32) -> Value {
    let mut map = Map::new();
    for _ in 0..rng.below(8) {
        let key = rng.pick(keys()).to_string();
        // Dotted keys as nested objects half the time.
        let parts: Vec<&str> = key.split('.').collect();
        if parts.len() == 2 && rng.below(2) == 0 {
            let inner = map.entry(parts[0].to_string()).or_insert_with(|| json!({}));
            if let Some(inner) = inner.as_object_mut() {
                inner.insert(parts[1].to_string(), value(rng, depth + 1));
            }
        } else {
            map.insert(key, value(rng, depth + 1));
        }
    }
    // Now and then the keys that loosen safety, with their loosening values.
    if rng.below(3) == 0 {
        map.insert("resume".into(), json!({"trust_foreign": true}));
        map.insert("checkpoint".into(), json!({"github": {"auto": true}}));
        map.insert(
            "handoff".into(),
            json!({"auto_checkpoint": "branch", "dir": rng.pick(&[".git/hooks", "src", "../out", ".planning"])}),
        );
    }
    Value::Object(map)
}

/// One hostile file at `path` (regular or not).
fn plant(rng: &mut Rng, path: &Path, outside: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    match rng.below(12) {
        0 => {
            let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
        }
        1 => std::fs::create_dir_all(path).unwrap(),
        2 => std::os::unix::fs::symlink(rng.pick(&[Path::new("/dev/zero"), outside]), path).unwrap(),
        3 => std::fs::write(path, vec![b' '; 2 * 1024 * 1024]).unwrap(),
        4 => std::fs::write(path, format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000))).unwrap(),
        5 => {
            std::fs::write(path, (0..rng.below(4000)).map(|_| rng.next() as u8).collect::<Vec<u8>>()).unwrap()
        }
        6 => {
            let text = object(rng, 0).to_string();
            std::fs::write(path, &text.as_bytes()[..rng.below(text.len() as u64) as usize]).unwrap()
        }
        7 => std::fs::write(path, value(rng, 0).to_string()).unwrap(),
        _ => std::fs::write(path, object(rng, 0).to_string()).unwrap(),
    }
}

/// Every file outside baton's places, with its size and modification time.
fn snapshot(root: &Path, allowed: &[PathBuf]) -> BTreeMap<PathBuf, (u64, i64, i64)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if allowed.iter().any(|a| path.starts_with(a)) {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if meta.is_dir() {
                // A folder's own times change when baton adds its folder inside it.
                stack.push(path.clone());
                out.insert(path, (0, 0, 0));
            } else {
                out.insert(path, (meta.len(), meta.mtime(), meta.mtime_nsec()));
            }
        }
    }
    out
}

fn no_panic(what: &str, output: &std::process::Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{what} panicked: {stderr}");
    assert_ne!(output.status.code(), Some(101), "{what} panicked");
}

#[test]
fn hostile_repository_configs_never_panic_hang_loosen_or_write_outside() {
    let seed = std::env::var("BATON_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_ba70_u64);
    let cases = std::env::var("BATON_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(32u64);
    let mut rng = Rng(seed | 1);
    let started = Instant::now();
    for case in 0..cases {
        let sandbox = Sandbox::new();
        let project = sandbox.project();
        let outside = sandbox.root().join("outside.txt");
        std::fs::write(&outside, "precious").unwrap();
        let files = [project.join(".claude/baton.json"), project.join(".planning/config.json")];
        for file in &files {
            if rng.below(4) != 0 {
                plant(&mut rng, file, &outside);
            }
        }
        let context = format!("seed {seed:#x}, case {case}");
        let allowed =
            [sandbox.tmp(), sandbox.root().join("state"), project.join(".planning"), project.join(".baton")];
        let before = snapshot(sandbox.root(), &allowed);

        let remaining = *rng.pick(&[5.0, 20.0, 30.0, 50.0]);
        sandbox.write_bridge(SESSION, remaining, 0);
        let event = sandbox.post_tool_use(SESSION);
        let hook = sandbox
            .run_bounded(&["hook"], event.to_string().as_bytes(), &[], HANG)
            .unwrap_or_else(|| panic!("hook hung ({context})"));
        no_panic(&context, &hook);
        assert!(hook.status.success(), "hook exit ({context})");
        let _ = told(&hook); // asserts stdout is empty or exactly one envelope

        let mut payload = common::fixture_json("statusline.json");
        payload["cwd"] = json!(project);
        payload["workspace"]["current_dir"] = json!(project);
        payload["workspace"]["project_dir"] = json!(project);
        let statusline = sandbox
            .run_bounded(&["statusline"], payload.to_string().as_bytes(), &[], HANG)
            .unwrap_or_else(|| panic!("statusline hung ({context})"));
        no_panic(&context, &statusline);
        assert!(statusline.status.success() && !statusline.stdout.is_empty(), "statusline ({context})");

        let config = sandbox
            .run_bounded(&["config", "--json", "--cwd", project.to_str().unwrap()], b"", &[], HANG)
            .unwrap_or_else(|| panic!("config hung ({context})"));
        no_panic(&context, &config);
        let values: Value = serde_json::from_slice(&config.stdout)
            .unwrap_or_else(|e| panic!("config --json ({context}): {e}"));
        for (key, safe) in [
            ("resume.trust_foreign", json!(false)),
            ("checkpoint.github.auto", json!(false)),
            ("handoff.auto_checkpoint", json!("ref")),
        ] {
            let setting = &values["values"][key];
            assert!(
                setting["source"] != "project" || setting["value"] == safe,
                "{key} loosened ({context}): {setting}"
            );
        }
        let dir = values["values"]["handoff.dir"]["value"].as_str().unwrap_or_default().to_string();
        assert!(dir.starts_with(".planning") || dir == ".baton", "handoff.dir {dir} ({context})");

        if case % 8 == 0 {
            let doctor = sandbox
                .run_bounded(&["doctor", "--json"], b"", &[], HANG)
                .unwrap_or_else(|| panic!("doctor hung ({context})"));
            no_panic(&context, &doctor);
            assert!(serde_json::from_slice::<Value>(&doctor.stdout).is_ok(), "doctor --json ({context})");
        }

        let after = snapshot(sandbox.root(), &allowed);
        let changed: Vec<_> =
            after.iter().filter(|(p, m)| before.get(*p) != Some(m)).map(|(p, _)| p).collect();
        let removed: Vec<_> = before.keys().filter(|p| !after.contains_key(*p)).collect();
        assert!(
            changed.is_empty() && removed.is_empty(),
            "written outside ({context}): {changed:?} {removed:?}"
        );
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
    }
    assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
}
