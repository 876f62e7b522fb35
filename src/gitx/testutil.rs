//! Test repositories built with git2 in temporary folders, and snapshots of everything a
//! checkpoint must leave alone.

use std::fs;
use std::path::{Path, PathBuf};

use git2::{Oid, Repository, RepositoryInitOptions, Signature, Time};

pub struct TestRepo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    pub git: Repository,
}

impl TestRepo {
    /// A fresh repository on an unborn `main` with a committer identity in its config.
    pub fn new() -> TestRepo {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("work");
        let mut options = RepositoryInitOptions::new();
        options.initial_head("main");
        let git = Repository::init_opts(&root, &options).unwrap();
        let mut config = git.config().unwrap();
        config.set_str("user.name", "Test User").unwrap();
        config.set_str("user.email", "test@example.com").unwrap();
        TestRepo { _dir: dir, root, git }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn write(&self, rel: &str, content: &str) {
        self.write_bytes(rel, content.as_bytes());
    }

    pub fn write_bytes(&self, rel: &str, content: &[u8]) {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }

    /// `git add` (or `git rm --cached` when the file is gone) for one path.
    pub fn stage(&self, rel: &str) {
        let mut index = self.git.index().unwrap();
        if self.root.join(rel).exists() {
            index.add_path(Path::new(rel)).unwrap();
        } else {
            index.remove_path(Path::new(rel)).unwrap();
        }
        index.write().unwrap();
    }

    pub fn unstage(&self, rel: &str) {
        self.stage(rel);
    }

    /// `git add -A && git commit` on HEAD.
    pub fn commit_all(&self, message: &str) -> Oid {
        self.commit_all_with(message, None)
    }

    pub fn commit_all_at(&self, message: &str, seconds: i64) -> Oid {
        self.commit_all_with(message, Some(seconds))
    }

    fn commit_all_with(&self, message: &str, seconds: Option<i64>) -> Oid {
        let mut index = self.git.index().unwrap();
        index.add_all(["*"], git2::IndexAddOption::DEFAULT, None).unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = self.git.find_tree(index.write_tree().unwrap()).unwrap();
        let signature = match seconds {
            Some(s) => Signature::new("Test User", "test@example.com", &Time::new(s, 0)).unwrap(),
            None => self.git.signature().unwrap(),
        };
        let parent = self.git.head().ok().and_then(|h| h.peel_to_commit().ok());
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        self.git.commit(Some("HEAD"), &signature, &signature, message, &tree, &parents).unwrap()
    }

    /// Every file under the work tree except `.git`, with its bytes (symlinks as their
    /// target), sorted.
    pub fn worktree(&self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        walk(&self.root, &self.root, &mut out);
        out.sort();
        out
    }

    /// HEAD (raw file) and every reference with its target.
    pub fn refs(&self) -> Vec<(String, String)> {
        let mut out = vec![("HEAD".to_string(), fs::read_to_string(self.git.path().join("HEAD")).unwrap())];
        for reference in self.git.references().unwrap() {
            let reference = reference.unwrap();
            let target = match reference.target() {
                Some(id) => id.to_string(),
                None => reference.symbolic_target().unwrap().unwrap_or_default().to_string(),
            };
            out.push((reference.name().unwrap().to_string(), target));
        }
        out.sort();
        out
    }

    pub fn index_bytes(&self) -> Vec<u8> {
        fs::read(self.git.path().join("index")).unwrap_or_default()
    }

    /// The blob at `path` in a commit's tree, if any.
    pub fn blob_at(&self, commit: &str, path: &str) -> Option<Vec<u8>> {
        let commit = self.git.find_commit(Oid::from_str(commit).unwrap()).unwrap();
        let entry = commit.tree().unwrap().get_path(Path::new(path)).ok()?;
        let blob = self.git.find_blob(entry.id()).ok()?;
        Some(blob.content().to_vec())
    }

    /// All file paths in a commit's tree.
    pub fn tree_paths(&self, commit: &str) -> Vec<String> {
        let commit = self.git.find_commit(Oid::from_str(commit).unwrap()).unwrap();
        let mut out = Vec::new();
        commit
            .tree()
            .unwrap()
            .walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
                if entry.kind() == Some(git2::ObjectType::Blob) {
                    out.push(format!("{dir}{}", entry.name().unwrap()));
                }
                git2::TreeWalkResult::Ok
            })
            .unwrap();
        out.sort();
        out
    }

    /// `git status --porcelain` from the real git, when it is installed (a cross-check
    /// that the index baton wrote reads back the way git sees it).
    pub fn porcelain(&self) -> Option<String> {
        let output = std::process::Command::new("git")
            .args(["status", "--porcelain", "--untracked-files=all"])
            .current_dir(&self.root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", self.root.parent().unwrap())
            .output()
            .ok()?;
        output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if rel == ".git" {
            continue;
        }
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            walk(root, &path, out);
        } else if kind.is_symlink() {
            out.push((rel, fs::read_link(&path).unwrap().into_os_string().into_encoded_bytes()));
        } else {
            out.push((rel, fs::read(&path).unwrap()));
        }
    }
}
