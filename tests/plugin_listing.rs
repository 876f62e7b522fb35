//! What a plugin marketplace reads: the manifest's author, icon and declared hosts, the
//! marketplace's description, and one version across the plugin, the crate and npm.
//! (`.ci/run` also runs the real `claude plugin validate .`, which must report nothing.)

use crate::common;

use std::fs;
use std::path::Path;

use common::*;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A PNG's width and height, from its IHDR chunk.
fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if !bytes.starts_with(b"\x89PNG\r\n\x1a\n") || bytes.get(12..16) != Some(b"IHDR") {
        return None;
    }
    let number = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    Some((number(16)?, number(20)?))
}

#[test]
fn the_manifest_has_what_a_listing_needs() {
    let manifest = read_json(&Path::new(ROOT).join(".claude-plugin/plugin.json"));
    assert!(manifest["author"]["name"].as_str().is_some_and(|n| !n.is_empty()), "{manifest}");
    assert_eq!(manifest["license"], "MIT");
    assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"), "one version for plugin and crate");
    // The hook can start `gh` for an automatic checkpoint push (checkpoint.github.auto).
    assert_eq!(manifest["network"]["hosts"], serde_json::json!(["api.github.com"]));

    let icon = manifest["icon"].as_str().expect("icon");
    let bytes = fs::read(Path::new(ROOT).join(icon)).expect("the icon file");
    let (width, height) = png_size(&bytes).expect("a PNG");
    assert_eq!(width, height, "square");
    assert!((512..=2048).contains(&width), "{width} px");
    assert!(bytes.len() < 2 * 1024 * 1024);

    let marketplace = read_json(&Path::new(ROOT).join(".claude-plugin/marketplace.json"));
    assert!(marketplace["description"].as_str().is_some_and(|d| !d.is_empty()), "{marketplace}");
    assert_eq!(marketplace["plugins"][0]["name"], manifest["name"]);
    assert_eq!(marketplace["plugins"][0]["source"], "./");
}

#[test]
fn the_npm_platform_list_matches_the_release_targets() {
    let platforms = read_json(&Path::new(ROOT).join("npm/platforms.json"));
    let workflow = fs::read_to_string(Path::new(ROOT).join(".github/workflows/release.yml")).unwrap();
    let packages = platforms["packages"].as_array().expect("packages");
    assert_eq!(packages.len(), 6);
    for package in packages {
        let target = package["target"].as_str().unwrap();
        assert!(workflow.contains(&format!("- target: {target}\n")), "release.yml builds {target}");
    }
    let template = read_json(&Path::new(ROOT).join("npm/baton-context/package.json"));
    assert_eq!(template["name"], "baton-context");
    assert_eq!(template["bin"]["baton"], "bin/baton.js");
}
