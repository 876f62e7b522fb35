//! The files inside untracked folders, under a budget.
//!
//! A status scan that recursed into untracked folders would look at every file in them:
//! two `stat`s each in libgit2 (its walk, then its ignore lookup), so a folder of 50,000
//! generated files cost most of a second, and the files listed first crowded the agent's
//! edits out of the handoff. The scan therefore lists an untracked folder as one entry,
//! as `git status` does, and this module opens those folders one file at a time, in path
//! order, through libgit2's diff callbacks: it stops at a number of files or at a
//! deadline, whichever comes first, and says which folders it finished.

use super::GitError;
use super::deadline::{Deadline, diff_options};
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::ptr;
use std::time::Instant;

use git2::{Binding, Repository};
use libgit2_sys as raw;

/// Where the walk inside the untracked folders got to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Opened {
    /// The untracked files found, in path order (as git stores them, `/`-separated).
    pub files: Vec<Vec<u8>>,
    /// The walk stopped at the budget: folders it had not finished are not complete.
    pub stopped: bool,
}

impl Opened {
    /// Every file of `folder` (ending in `/`) is in [`Opened::files`]. Files come in path
    /// order, so once the walk has gone past a folder it has finished it.
    pub fn has_all_of(&self, folder: &[u8]) -> bool {
        if !self.stopped {
            return true;
        }
        match self.files.last() {
            Some(last) => !last.starts_with(folder) && last.as_slice() > folder,
            None => false,
        }
    }
}

/// What the callbacks share: the files so far and the limits.
struct Walk {
    opened: Opened,
    max_files: usize,
    deadline: Deadline,
}

extern "C" fn on_delta(
    _diff: *const raw::git_diff,
    delta: *const raw::git_diff_delta,
    _matched: *const c_char,
    payload: *mut c_void,
) -> c_int {
    // SAFETY: `payload` is the `Walk` that `open_folders` passes in the options; it
    // outlives the libgit2 call that invokes this callback, and nothing else touches it
    // meanwhile. `delta` is the delta libgit2 is about to add, valid for this call.
    // Nothing here can panic, so no unwinding crosses the C frames.
    let walk = unsafe { &mut *payload.cast::<Walk>() };
    let Some(delta) = (unsafe { delta.as_ref() }) else { return 1 };
    if delta.status == raw::GIT_DELTA_UNTRACKED && !delta.new_file.path.is_null() {
        if walk.opened.files.len() >= walk.max_files {
            walk.opened.stopped = true;
            return raw::GIT_EUSER;
        }
        // SAFETY: libgit2 gives a NUL-terminated path, valid for this call.
        let path = unsafe { CStr::from_ptr(delta.new_file.path) };
        walk.opened.files.push(path.to_bytes().to_vec());
    }
    // Positive: libgit2 leaves the delta out of the diff (nothing here needs it kept).
    1
}

extern "C" fn on_progress(
    _diff: *const raw::git_diff,
    _old_path: *const c_char,
    _new_path: *const c_char,
    payload: *mut c_void,
) -> c_int {
    // SAFETY: as in `on_delta`: the `Walk` outlives the call, and nothing else holds it.
    let walk = unsafe { &mut *payload.cast::<Walk>() };
    if walk.deadline.passed() {
        walk.opened.stopped = true;
        return raw::GIT_EUSER;
    }
    0
}

/// The untracked files inside `folders` (paths relative to the work tree, each ending in
/// `/`, as a status scan lists them), in path order: at most `max_files`, and none found
/// after `deadline`. Ignored files are left out, as `git status` leaves them.
pub fn open_folders(
    git: &Repository,
    folders: &[Vec<u8>],
    max_files: usize,
    deadline: Instant,
) -> Result<Opened, GitError> {
    if folders.is_empty() {
        return Ok(Opened::default());
    }
    let index = git.index().map_err(|e| format!("cannot read the index: {}", e.message()))?;
    // A folder name with a NUL cannot come from a file system; such an entry is skipped.
    let names: Vec<CString> = folders.iter().filter_map(|f| CString::new(f.clone()).ok()).collect();
    let mut pointers: Vec<*mut c_char> = names.iter().map(|n| n.as_ptr().cast_mut()).collect();
    let flags = raw::GIT_DIFF_INCLUDE_UNTRACKED
        | raw::GIT_DIFF_RECURSE_UNTRACKED_DIRS
        // The folders are paths, not patterns: a `[` or `*` in a name means itself.
        | raw::GIT_DIFF_DISABLE_PATHSPEC_MATCH
        | raw::GIT_DIFF_IGNORE_SUBMODULES
        | raw::GIT_DIFF_SKIP_BINARY_CHECK;
    let mut options = diff_options(flags, "preparing the untracked walk")?;
    options.pathspec = raw::git_strarray { strings: pointers.as_mut_ptr(), count: pointers.len() };
    options.notify_cb = Some(on_delta);
    options.progress_cb = Some(on_progress);
    let mut walk = Walk { opened: Opened::default(), max_files, deadline: Deadline::new(deadline) };
    options.payload = ptr::from_mut(&mut walk).cast::<c_void>();
    let mut out: *mut raw::git_diff = ptr::null_mut();
    // SAFETY: the repository and index handles come from live git2 objects borrowed for
    // the whole call; `options`, the strings its pathspec points to and the `Walk` live
    // until it returns.
    let rc = unsafe { raw::git_diff_index_to_workdir(&mut out, git.raw(), index.raw(), &options) };
    if !out.is_null() {
        // SAFETY: a diff libgit2 handed out, freed once; the files were copied out.
        unsafe { raw::git_diff_free(out) };
    }
    if rc < 0 && !(rc == raw::GIT_EUSER && walk.opened.stopped) {
        return Err(GitError::Git {
            doing: "walking the untracked folders",
            source: git2::Error::last_error(rc),
        });
    }
    Ok(walk.opened)
}

/// One untracked folder, opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    /// As the status scan lists it, ending in `/`.
    pub path: Vec<u8>,
    /// Its files found, in path order.
    pub files: Vec<Vec<u8>>,
    /// They are all of its files.
    pub whole: bool,
}

/// A folder with at most this many files is opened on its own, before the big ones.
pub const SMALL_FOLDER: usize = 100;

/// At most this many folders are tried on their own (each is one walk).
pub const FOLDERS_TRIED_ALONE: usize = 64;

/// Opens `folders` (as [`open_folders`]), small ones first: each is tried alone up to
/// [`SMALL_FOLDER`] files, and the ones that hold more share what is left of
/// `max_files`, in path order. A new module the agent wrote is then found whole even
/// when a folder of generated files sorts before it. Folders come back in the order
/// given.
pub fn open_small_first(
    git: &Repository,
    folders: Vec<Vec<u8>>,
    max_files: usize,
    deadline: Instant,
) -> Result<Vec<Folder>, GitError> {
    let mut left = max_files;
    let mut opened: Vec<Folder> = Vec::with_capacity(folders.len());
    let mut big = Vec::new();
    for (n, path) in folders.into_iter().enumerate() {
        if n < FOLDERS_TRIED_ALONE && left > 0 && Instant::now() < deadline {
            let alone = open_folders(git, std::slice::from_ref(&path), SMALL_FOLDER.min(left), deadline)?;
            if !alone.stopped {
                left -= alone.files.len();
                opened.push(Folder { path, files: alone.files, whole: true });
                continue;
            }
        }
        big.push(opened.len());
        opened.push(Folder { path, files: Vec::new(), whole: false });
    }
    if big.is_empty() || left == 0 {
        return Ok(opened);
    }
    let paths: Vec<Vec<u8>> = big.iter().map(|&i| opened[i].path.clone()).collect();
    let shared = open_folders(git, &paths, left, deadline)?;
    for &i in &big {
        let folder = &mut opened[i];
        // The files come in path order: a folder's are side by side.
        let first = shared.files.partition_point(|f| f.as_slice() < folder.path.as_slice());
        folder.files =
            shared.files[first..].iter().take_while(|f| f.starts_with(&folder.path)).cloned().collect();
        folder.whole = shared.has_all_of(&folder.path);
    }
    Ok(opened)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gitx::testutil::TestRepo;
    use std::time::Duration;

    fn later() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    fn strings(files: &[Vec<u8>]) -> Vec<String> {
        files.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect()
    }

    #[test]
    fn opens_the_folders_given_in_path_order_without_ignored_files() {
        let t = TestRepo::new();
        t.write(".gitignore", "*.log\n");
        t.write("src/main.rs", "fn main() {}\n");
        t.commit_all("init");
        t.write("src/main.rs", "changed\n");
        t.write("new/b/two.txt", "2\n");
        t.write("new/a.txt", "1\n");
        t.write("new/debug.log", "ignored\n");
        t.write("other/three.txt", "3\n");
        t.write("lone.txt", "not in a folder given\n");
        let opened = open_folders(&t.git, &[b"new/".to_vec(), b"other/".to_vec()], 100, later()).unwrap();
        assert_eq!(strings(&opened.files), ["new/a.txt", "new/b/two.txt", "other/three.txt"]);
        assert!(!opened.stopped);
        assert!(opened.has_all_of(b"new/") && opened.has_all_of(b"other/"));
    }

    #[test]
    fn stops_at_the_file_budget_and_knows_which_folders_it_finished() {
        let t = TestRepo::new();
        t.write("keep.txt", "k\n");
        t.commit_all("init");
        for i in 0..5 {
            t.write(&format!("big/f{i}.txt"), "x\n");
        }
        t.write("a/one.txt", "1\n");
        t.write("z/last.txt", "z\n");
        let folders = [b"a/".to_vec(), b"big/".to_vec(), b"z/".to_vec()];
        let opened = open_folders(&t.git, &folders, 3, later()).unwrap();
        assert_eq!(strings(&opened.files), ["a/one.txt", "big/f0.txt", "big/f1.txt"]);
        assert!(opened.stopped);
        assert!(opened.has_all_of(b"a/"));
        assert!(!opened.has_all_of(b"big/") && !opened.has_all_of(b"z/"));
    }

    #[test]
    fn small_folders_are_found_whole_before_the_big_ones_share_the_rest() {
        let t = TestRepo::new();
        t.write("keep.txt", "k\n");
        t.commit_all("init");
        for i in 0..SMALL_FOLDER + 50 {
            t.write(&format!("gen/f{i:04}.txt"), "x\n");
        }
        t.write("src/limiter/bucket.ts", "1\n");
        t.write("src/limiter/mod.ts", "2\n");
        let folders = vec![b"gen/".to_vec(), b"src/limiter/".to_vec()];
        let opened = open_small_first(&t.git, folders, SMALL_FOLDER + 10, later()).unwrap();
        assert_eq!(opened[0].path, b"gen/");
        assert!(!opened[0].whole);
        // What the small folder left of the budget.
        assert_eq!(opened[0].files.len(), SMALL_FOLDER + 8);
        assert_eq!(opened[1].path, b"src/limiter/");
        assert!(opened[1].whole);
        assert_eq!(strings(&opened[1].files), ["src/limiter/bucket.ts", "src/limiter/mod.ts"]);
        // With the budget for all, the big one is whole too.
        let folders = vec![b"gen/".to_vec(), b"src/limiter/".to_vec()];
        let opened = open_small_first(&t.git, folders, 1_000, later()).unwrap();
        assert!(opened[0].whole && opened[0].files.len() == SMALL_FOLDER + 50);
    }

    #[test]
    fn a_passed_deadline_stops_the_walk() {
        let t = TestRepo::new();
        t.write("keep.txt", "k\n");
        t.commit_all("init");
        t.write("new/a.txt", "1\n");
        let opened = open_folders(&t.git, &[b"new/".to_vec()], 100, Instant::now()).unwrap();
        assert!(opened.stopped && opened.files.is_empty());
        assert!(!opened.has_all_of(b"new/"));
    }

    #[test]
    fn a_folder_name_is_a_path_not_a_pattern() {
        let t = TestRepo::new();
        t.write("keep.txt", "k\n");
        t.commit_all("init");
        t.write("[ab]/x.txt", "1\n");
        t.write("a/y.txt", "2\n");
        let opened = open_folders(&t.git, &[b"[ab]/".to_vec()], 100, later()).unwrap();
        assert_eq!(strings(&opened.files), ["[ab]/x.txt"]);
    }
}
