//! The hosts baton registers with, as install and doctor name them: the one host model
//! lives in [`crate::host`] ([`HostKind`](crate::host::HostKind), its events, scopes and
//! settings paths); this file keeps install's names for it and the path display.

use std::path::Path;

pub use crate::host::{EventSpec, HostKind as Host, Places, Scope};

/// `path` with `$HOME` shown as `~`, for messages.
pub fn show_path(path: &Path, home: Option<&Path>) -> String {
    use crate::util::text::outside_path;
    match home.and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) if !rest.as_os_str().is_empty() => format!("~/{}", outside_path(rest)),
        _ => outside_path(path).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_home_are_shortened() {
        assert_eq!(
            show_path(Path::new("/h/.claude/settings.json"), Some(Path::new("/h"))),
            "~/.claude/settings.json"
        );
        assert_eq!(show_path(Path::new("/p/x"), Some(Path::new("/h"))), "/p/x");
    }
}
