//! baton's record of its installs: `<state dir>/installs.json`, one entry per settings
//! file (by its absolute, resolved path), holding the [`Record`] uninstall needs, plus
//! when and with which binary the install ran. A wrapped statusline needs no entry: its
//! old command lives inside the `--wrap` argument in the settings file itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::merge::Record;
use crate::fsx;

const STATE_LIMIT: u64 = 4 * 1024 * 1024;

/// The whole file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Installs {
    #[serde(default)]
    pub installs: BTreeMap<String, Entry>,
}

/// One settings file's entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub host: String,
    pub binary: String,
    pub installed_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup: Option<String>,
    /// The SHA-256 of the bytes install last wrote, kept only while the backup holds the
    /// file exactly as it was before baton: when the file still has these bytes at
    /// uninstall, the backup is put back byte for byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_sha256: Option<String>,
    /// Install made the file's folder (Copilot CLI's `hooks/`): uninstall removes it
    /// again when it leaves it empty.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub created_folder: bool,
    #[serde(flatten)]
    pub record: Record,
}

/// The hex SHA-256 of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// `installs.json` in the state dir.
pub fn path(state_dir: &Path) -> PathBuf {
    state_dir.join("installs.json")
}

/// The lock every install and uninstall holds around read-merge-write.
pub fn lock_path(state_dir: &Path) -> PathBuf {
    state_dir.join("install.lock")
}

/// Why the install records cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{} is not valid JSON ({source})", path.display())]
    Invalid { path: PathBuf, source: serde_json::Error },
    #[error("{} cannot be read ({source})", path.display())]
    Unreadable { path: PathBuf, source: std::io::Error },
}

/// Reads the records; a missing file is an empty one.
pub fn load(path: &Path) -> Result<Installs, LoadError> {
    match fsx::read_limited(path, STATE_LIMIT) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|source| LoadError::Invalid { path: path.to_path_buf(), source }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Installs::default()),
        Err(source) => Err(LoadError::Unreadable { path: path.to_path_buf(), source }),
    }
}

/// Writes the records atomically, private to the user.
pub fn save(path: &Path, installs: &Installs) -> std::io::Result<()> {
    let mut json = serde_json::to_vec_pretty(installs).map_err(std::io::Error::other)?;
    json.push(b'\n');
    fsx::write_atomic(path, &json, fsx::WriteOptions::PRIVATE_DURABLE)
}

/// The key for a settings file: its absolute path with every folder that exists
/// resolved, so the same file has the same key before and after install creates it.
pub fn key(path: &Path) -> String {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map(|d| d.join(path)).unwrap_or_else(|_| path.to_path_buf())
    };
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(mut resolved) = crate::platform::canonicalize(existing) {
            for name in rest.iter().rev() {
                resolved.push(name);
            }
            return resolved.display().to_string();
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return absolute.display().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn keys_do_not_change_when_the_file_appears() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("a/.claude/settings.json");
        let before = key(&settings);
        fs::create_dir_all(settings.parent().unwrap()).unwrap();
        fs::write(&settings, "{}").unwrap();
        assert_eq!(key(&settings), before);
    }

    #[test]
    fn round_trips_and_tolerates_a_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(dir.path());
        assert!(load(&file).unwrap().installs.is_empty());
        let mut installs = Installs::default();
        let record = Record { created: vec!["/hooks".into()], ..Record::default() };
        installs.installs.insert(
            "/h/.claude/settings.json".into(),
            Entry {
                host: "claude".into(),
                binary: "/b/baton".into(),
                installed_at: "t".into(),
                backup: None,
                written_sha256: None,
                created_folder: false,
                record,
            },
        );
        save(&file, &installs).unwrap();
        let back = load(&file).unwrap();
        assert_eq!(back.installs["/h/.claude/settings.json"].record.created, vec!["/hooks"]);
        fs::write(&file, "{oops").unwrap();
        assert!(load(&file).unwrap_err().to_string().contains("not valid JSON"));
    }
}
