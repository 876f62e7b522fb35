//! The published crate builds from what it ships: every file the sources embed
//! (`include_str!`, `include_bytes!`, in `src/`, `build.rs` and `bench/`) is in the package
//! `cargo package --list` describes. A file left out of Cargo.toml's `include` builds here,
//! from the repository, and fails for everyone who runs `cargo install` once it is
//! published (issue 31: `src/host/opencode_plugin.js`).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The Rust files the package's build compiles or runs.
fn sources() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![root.join("build.rs")];
    let mut stack = vec![root.join("src"), root.join("bench")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read a source folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The string each `include_str!(…)` / `include_bytes!(…)` of `tokens` names (comments are
/// not tokens, so a macro named in a comment does not count).
fn embedded(tokens: TokenStream, out: &mut Vec<String>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        if let TokenTree::Group(group) = tree {
            embedded(group.stream(), out);
        }
        let TokenTree::Ident(name) = tree else { continue };
        if name != "include_str" && name != "include_bytes" {
            continue;
        }
        let (Some(TokenTree::Punct(bang)), Some(TokenTree::Group(args))) =
            (trees.get(i + 1), trees.get(i + 2))
        else {
            continue;
        };
        if bang.as_char() != '!' {
            continue;
        }
        if let Some(TokenTree::Literal(literal)) = args.stream().into_iter().next() {
            let text = literal.to_string();
            if let Some(path) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                out.push(path.to_string());
            }
        }
    }
}

/// `path` without `.` and `..`, relative to the crate's root (`/` separated, as cargo lists).
fn normalised(path: &Path) -> String {
    let mut parts: Vec<String> = vec![];
    for component in path.components() {
        match component {
            Component::ParentDir => {
                parts.pop();
            }
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    parts.join("/")
}

#[test]
fn the_package_holds_every_file_the_sources_embed() {
    let root = root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = std::process::Command::new(cargo)
        .args(["package", "--list", "--locked", "--allow-dirty", "--offline"])
        .current_dir(&root)
        .output()
        .expect("run cargo package --list");
    assert!(output.status.success(), "cargo package --list: {}", String::from_utf8_lossy(&output.stderr));
    let listed: BTreeSet<String> =
        String::from_utf8_lossy(&output.stdout).lines().map(str::to_string).collect();
    assert!(listed.contains("src/main.rs"), "an unexpected listing: {listed:?}");

    let mut checked = 0;
    let mut missing = vec![];
    for file in sources() {
        let text = std::fs::read_to_string(&file).expect("read a source");
        let tokens: TokenStream = text.parse().unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut names = vec![];
        embedded(tokens, &mut names);
        let dir = file.parent().unwrap_or(&root).strip_prefix(&root).unwrap_or(Path::new(""));
        for name in names {
            let target = normalised(&dir.join(&name));
            checked += 1;
            if !listed.contains(&target) {
                missing
                    .push(format!("{} embeds {target}", file.strip_prefix(&root).unwrap_or(&file).display()));
            }
        }
    }
    assert!(checked >= 10, "the scan found only {checked} embedded files: is it reading the sources?");
    assert!(
        missing.is_empty(),
        "files the sources embed are not in the published crate (add them to Cargo.toml's `include`):\n{}",
        missing.join("\n")
    );
}
