//! Build script: on glibc Linux, links GCC's unwinder into the binary instead of loading
//! `libgcc_s.so.1` at every start.
//!
//! Rust's standard library asks for `-lgcc_s` on `*-linux-gnu` (its unwinder), and the
//! dynamic loader then maps that library at every run of baton and runs its constructor,
//! which probes the CPU with CPUID: on a virtual machine each one is a trap to the
//! hypervisor. The hook runs after every tool call, so that start-up cost is most of what
//! it spends. On a 2-core EPYC VM (2026-12-02) the default build's hook took 1.21 ms of
//! CPU with `libgcc_s` and 0.91 ms without (`/bin/true`: 0.72 ms); its wall time went from
//! 1.48 to 1.27 ms. The static unwinder (`libgcc_eh.a`, what `gcc -static-libgcc` links)
//! unwinds the same frames: panics are still caught, backtraces still print.
//!
//! How: `-lgcc_s` is looked up in this package's link-search folder first, where a linker
//! script of that name stands for `libgcc_eh.a`. Only this package's binaries and tests
//! see the folder: dependencies, build scripts and proc-macros link as before.
//!
//! Nothing changes when the C compiler cannot name a `libgcc_eh.a` (a toolchain without
//! one keeps the shared library), for a static (`crt-static`) or non-glibc target (the
//! shipped builds), or with `BATON_SHARED_LIBGCC=1` set.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=BATON_SHARED_LIBGCC");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");

    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let glibc_linux = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    let static_crt = var("CARGO_CFG_TARGET_FEATURE").split(',').any(|f| f == "crt-static");
    if !glibc_linux || static_crt || var("BATON_SHARED_LIBGCC") == "1" {
        return;
    }
    let Some(unwinder) = static_unwinder() else { return };
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else { return };
    let folder = out_dir.join("static-libgcc");
    let script =
        format!("/* -lgcc_s, for baton: GCC's static unwinder. */\nINPUT(\"{}\")\n", unwinder.display());
    if std::fs::create_dir_all(&folder).is_ok() && std::fs::write(folder.join("libgcc_s.so"), script).is_ok()
    {
        println!("cargo:rustc-link-search=native={}", folder.display());
    }
}

/// The absolute path of `libgcc_eh.a` as the linker driver finds it, if it has one.
fn static_unwinder() -> Option<PathBuf> {
    // Cargo names the linker it was configured with; otherwise rustc links with `cc`.
    let driver = std::env::var("RUSTC_LINKER").ok().filter(|l| !l.is_empty()).unwrap_or_else(|| "cc".into());
    let output = Command::new(driver).arg("-print-file-name=libgcc_eh.a").output().ok()?;
    let printed = String::from_utf8(output.stdout).ok()?;
    let path = Path::new(printed.trim());
    // A driver that does not know the file prints its bare name back; a quote could not be written in the script.
    (output.status.success() && path.is_absolute() && path.is_file() && !printed.contains('"'))
        .then(|| path.to_path_buf())
}
