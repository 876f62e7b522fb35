//! How the built binary is linked (`build.rs`): on glibc Linux GCC's unwinder is in the
//! binary rather than `libgcc_s.so.1`, loaded at every start of the hook, and a panic
//! still unwinds to `main`.

use crate::common;

use common::Sandbox;

/// Whether build.rs could link the static unwinder here: the C compiler names a
/// `libgcc_eh.a`, and the build was not told to keep the shared library.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn static_unwinder_available() -> bool {
    let Ok(output) = std::process::Command::new("cc").arg("-print-file-name=libgcc_eh.a").output() else {
        return false;
    };
    let printed = String::from_utf8_lossy(&output.stdout).trim().to_string();
    std::path::Path::new(&printed).is_absolute()
        && std::env::var_os("BATON_SHARED_LIBGCC").is_none_or(|v| v != "1")
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_glibc_build_does_not_load_libgcc_s() {
    if !static_unwinder_available() {
        return;
    }
    // The library's name is in the binary only as what the loader must load (DT_NEEDED).
    let binary = std::fs::read(common::BATON).expect("the built binary");
    let needle = b"libgcc_s.so.1";
    assert!(!binary.windows(needle.len()).any(|w| w == needle), "the binary still loads libgcc_s.so.1");
}

/// A panic in a command that is not host-facing is a bug: reported as std reports it, and
/// unwound to `main`, which exits 101. With no working unwinder the process would abort.
#[test]
fn a_panic_elsewhere_is_reported_and_exits_101() {
    let sandbox = Sandbox::new();
    let output = sandbox.run_with(&["status"], b"", &[("BATON_DEBUG_PANIC", "1")]);
    assert_eq!(output.status.code(), Some(101), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("panicked") && stderr.contains("BATON_DEBUG_PANIC is set"), "{stderr}");
}
