//! What a Windows program meets under this machine's wine: the facts
//! /work/helpers/windows-survey.md and ci/windows/README.md record, shown again by
//! `ci/windows/probe.sh`. Plain std and a few kernel32 calls (no crates: rustc alone builds it).
//!
//! probe <check>: env | args ARG... | stdin [read] | rmdir-readonly DIR | replace DIR | lock DIR |
//! symlink DIR | write-locked DIR | spawn PROGRAM ARG... | closed-stdout | detach [uninheritable] | job |
//! canonicalize PATH | exit CODE
use std::ffi::c_void;
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

type Handle = *mut c_void;
#[link(name = "kernel32")]
unsafe extern "system" {
    fn GetStdHandle(which: u32) -> Handle;
    fn GetFileType(file: Handle) -> u32;
    fn PeekNamedPipe(
        pipe: Handle,
        buf: *mut c_void,
        size: u32,
        read: *mut u32,
        avail: *mut u32,
        left: *mut u32,
    ) -> i32;
    fn GetLastError() -> u32;
    fn CreateJobObjectW(attributes: *mut c_void, name: *const u16) -> Handle;
    fn AssignProcessToJobObject(job: Handle, process: Handle) -> i32;
    fn TerminateJobObject(job: Handle, code: u32) -> i32;
}
const STD_INPUT_HANDLE: u32 = -10i32 as u32;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    match arg(0).as_str() {
        "env" => {
            println!("home_dir = {:?}", std::env::home_dir());
            println!("temp_dir = {:?}", std::env::temp_dir());
            println!("current_dir = {:?}", std::env::current_dir());
            for name in [
                "USERPROFILE",
                "HOME",
                "TEMP",
                "TMP",
                "TMPDIR",
                "SystemRoot",
                "USERNAME",
                "APPDATA",
                "LOCALAPPDATA",
            ] {
                println!("{name} = {:?}", std::env::var_os(name));
            }
        }
        "args" => println!("{:?}", &args[1..]),
        "canonicalize" => println!("{:?}", std::fs::canonicalize(arg(1))),
        "exit" => std::process::exit(arg(1).parse::<i64>().unwrap() as i32),
        "stdin" => {
            // What the stdin deadline would see: the handle's type, then a peek.
            let stdin = unsafe { GetStdHandle(STD_INPUT_HANDLE) };
            let kind = unsafe { GetFileType(stdin) }; // 1 disk, 2 char, 3 pipe
            let mut available = 0u32;
            let started = Instant::now();
            let peeked = loop {
                let ok = unsafe {
                    PeekNamedPipe(
                        stdin,
                        std::ptr::null_mut(),
                        0,
                        std::ptr::null_mut(),
                        &mut available,
                        std::ptr::null_mut(),
                    )
                };
                if ok == 0 || available > 0 || started.elapsed() > Duration::from_millis(500) {
                    break ok;
                }
                std::thread::sleep(Duration::from_millis(20));
            };
            let error = if peeked == 0 { unsafe { GetLastError() } } else { 0 };
            println!(
                "GetFileType = {kind}; PeekNamedPipe ok = {peeked}, error = {error}, available = {available} after {} ms",
                started.elapsed().as_millis()
            );
            if arg(1) == "read" {
                let mut text = String::new();
                let started = Instant::now();
                let _ = std::io::stdin().read_to_string(&mut text);
                println!("read {} bytes to EOF in {} ms", text.len(), started.elapsed().as_millis());
            }
        }
        "rmdir-readonly" => {
            // libgit2 writes its objects read-only; Windows' DeleteFile refuses them.
            let dir = Path::new(&args[1]).join("rmdir-readonly");
            std::fs::create_dir_all(dir.join("sub")).unwrap();
            let file = dir.join("sub").join("object");
            std::fs::write(&file, "x").unwrap();
            let mut permissions = std::fs::metadata(&file).unwrap().permissions();
            permissions.set_readonly(true);
            std::fs::set_permissions(&file, permissions).unwrap();
            println!("remove_dir_all with a read-only file: {:?}", std::fs::remove_dir_all(&dir));
            println!("remove_file of the read-only file: {:?}", std::fs::remove_file(&file));
            let mut permissions = std::fs::metadata(&file).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            permissions.set_readonly(false);
            std::fs::set_permissions(&file, permissions).unwrap();
            println!("remove_dir_all after clearing it: {:?}", std::fs::remove_dir_all(&dir));
        }
        "replace" => {
            // The atomic replace std::fs::rename gives, onto an existing file and onto one
            // another handle holds open.
            let dir = Path::new(&args[1]);
            let (target, new) = (dir.join("target.json"), dir.join("target.json.tmp"));
            std::fs::write(&target, "old").unwrap();
            std::fs::write(&new, "new").unwrap();
            println!(
                "rename onto an existing file: {:?} -> {:?}",
                std::fs::rename(&new, &target),
                std::fs::read_to_string(&target)
            );
            let held = std::fs::File::open(&target).unwrap();
            std::fs::write(&new, "newer").unwrap();
            println!(
                "rename onto a file open elsewhere: {:?} -> {:?}",
                std::fs::rename(&new, &target),
                std::fs::read_to_string(&target)
            );
            drop(held);
            let _ = std::fs::remove_file(&new);
        }
        "lock" => {
            // std's File::lock (LockFileEx): a second handle is refused.
            let path = Path::new(&args[1]).join("probe.lock");
            let first = std::fs::File::create(&path).unwrap();
            println!("lock: {:?}", first.lock());
            let second = std::fs::File::open(&path).unwrap();
            println!("try_lock from a second handle while held: {:?}", second.try_lock());
            // std unlocks twice (a shared and an exclusive lock may both be held) and takes
            // ERROR_NOT_LOCKED from the second as done; wine 8 answers ERROR_LOCK_VIOLATION.
            println!("unlock: {:?}", first.unlock());
            drop(first);
            println!("try_lock after the holder closed its handle: {:?}", second.try_lock());
        }
        "symlink" => {
            let dir = Path::new(&args[1]);
            std::fs::write(dir.join("real"), "x").unwrap();
            let link = dir.join("link");
            let _ = std::fs::remove_file(&link);
            // Wine 8 reports success and creates nothing; a Unix symlink made beside it from
            // Linux (`unixlink`) is followed and shows as a plain file.
            println!("symlink_file: {:?}", std::os::windows::fs::symlink_file(dir.join("real"), &link));
            println!(
                "symlink_metadata(link): {:?}",
                std::fs::symlink_metadata(&link).map(|m| m.file_type().is_symlink())
            );
            println!(
                "symlink_metadata(unixlink) is_symlink: {:?}",
                std::fs::symlink_metadata(dir.join("unixlink")).map(|m| m.file_type().is_symlink())
            );
        }
        "write-locked" => {
            // Can a file another process has open be written over or deleted?
            let path = Path::new(&args[1]).join("held.txt");
            std::fs::write(&path, "x").unwrap();
            let _held = std::fs::File::open(&path).unwrap();
            println!("remove_file while open: {:?}", std::fs::remove_file(&path));
        }
        "spawn" => {
            let started = Instant::now();
            let output = std::process::Command::new(arg(1)).args(&args[2..]).output();
            match output {
                Ok(output) => println!(
                    "{} -> {:?} in {} ms; stdout {:?}; stderr {:?}",
                    arg(1),
                    output.status,
                    started.elapsed().as_millis(),
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                ),
                Err(error) => println!("{} -> {error}", arg(1)),
            }
        }
        "closed-stdout" => {
            // Run with stdout piped into a reader that has gone (`| true`): no SIGPIPE on
            // Windows, the write fails; which error, and what std calls it.
            std::thread::sleep(Duration::from_millis(300));
            let result = std::io::stdout().write_all(b"x\n").and_then(|()| std::io::stdout().flush());
            let error = result.err();
            eprintln!("write to a closed pipe: {:?}, kind {:?}", error, error.as_ref().map(|e| e.kind()));
            return;
        }
        "detach" => {
            // A child started with null stdio and not waited for: does it hold this
            // program's stdout open (std's CreateProcess inherits every inheritable handle)?
            use std::os::windows::io::AsRawHandle;
            #[link(name = "kernel32")]
            unsafe extern "system" {
                fn SetHandleInformation(handle: Handle, mask: u32, flags: u32) -> i32;
            }
            if arg(1) == "uninheritable" {
                let stdout = std::io::stdout().as_raw_handle();
                unsafe { SetHandleInformation(stdout, 1, 0) }; // HANDLE_FLAG_INHERIT off
            }
            let null = std::process::Stdio::null;
            #[expect(clippy::zombie_processes, reason = "the point: a child left running")]
            std::process::Command::new("cmd")
                .args(["/c", "ping -n 4 127.0.0.1 >NUL"])
                .stdin(null())
                .stdout(null())
                .stderr(null())
                .spawn()
                .unwrap();
            println!("detach: started a 3 s child, exiting");
        }
        "job" => {
            // A child tree in a Job object, ended at once (what a relay's Ctrl-C would do).
            use std::os::windows::io::AsRawHandle;
            let job = unsafe { CreateJobObjectW(std::ptr::null_mut(), std::ptr::null()) };
            let mut child =
                std::process::Command::new("cmd").args(["/c", "ping -n 30 127.0.0.1 >NUL"]).spawn().unwrap();
            let assigned = unsafe { AssignProcessToJobObject(job, child.as_raw_handle()) };
            std::thread::sleep(Duration::from_millis(300));
            let started = Instant::now();
            let terminated = unsafe { TerminateJobObject(job, 9) };
            let status = child.wait();
            println!(
                "job: created {}, assigned {assigned}, terminated {terminated}; child {status:?} after {} ms",
                !job.is_null(),
                started.elapsed().as_millis()
            );
        }
        _ => {
            eprintln!(
                "probe: env | args .. | stdin [read] | rmdir-readonly DIR | replace DIR | lock DIR | symlink DIR | write-locked DIR | spawn PROGRAM .. | job | canonicalize PATH | exit CODE"
            );
            std::process::exit(2);
        }
    }
    std::io::stdout().flush().unwrap();
}
