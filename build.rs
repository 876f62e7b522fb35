//! Build script: on glibc Linux, two things that make the ordinary build (`cargo build
//! --release`, `cargo install`) start faster, which matters because the hook runs after
//! every tool call and most of its time there is start-up. Neither changes what the
//! binary does. The shipped builds (static, `install/build-shipped.sh`) do not need them.
//!
//! **GCC's unwinder linked in** instead of `libgcc_s.so.1` loaded at every start. Rust's
//! standard library asks for `-lgcc_s` on `*-linux-gnu`; the dynamic loader then maps that
//! library at each run and runs its constructor, which probes the CPU with CPUID (on a
//! virtual machine each one traps to the hypervisor). Here `-lgcc_s` is looked up in this
//! package's link-search folder first, where a linker script of that name stands for the
//! `libgcc_eh.a` the C compiler names (what `gcc -static-libgcc` links). Only this
//! package's binaries and tests see the folder: dependencies, build scripts and
//! proc-macros link as before. Panics are still caught and backtraces still print. On a
//! 2-core EPYC VM (2026-12-02) the hook took 1.21 ms of CPU with `libgcc_s` and 0.91 ms
//! without; its wall time went from 1.48 to 1.27 ms (`/bin/true`: 0.95 ms).
//!
//! **The hot functions side by side**: the functions the hook and the status line run
//! (`install/hot-symbols-gnu.txt`, from `bench/counts.sh --symbols` on this build) are laid
//! out first, so a start maps fewer pages of code. Only when the linker rustc uses takes
//! LLD's `--symbol-ordering-file` (rustc's own LLD, the default on x86_64 since Rust 1.90):
//! a small program is linked with it first, with the same flags, to find out. Symbols the
//! list names that a build lacks (another toolchain, another version) are ignored. Hook
//! below thresholds, same VM, paired with `/bin/true`: 1.32 ms without, 1.24 ms with.
//!
//! Nothing changes for a static (`crt-static`) or non-glibc target; the unwinder stays
//! shared when the C compiler names no `libgcc_eh.a` or with `BATON_SHARED_LIBGCC=1`, and
//! the layout stays the linker's own with `BATON_NO_SYMBOL_ORDER=1`.

use std::path::{Path, PathBuf};
use std::process::Command;

const HOT_SYMBOLS: &str = "install/hot-symbols-gnu.txt";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={HOT_SYMBOLS}");
    for name in ["BATON_SHARED_LIBGCC", "BATON_NO_SYMBOL_ORDER", "RUSTC_LINKER"] {
        println!("cargo:rerun-if-env-changed={name}");
    }
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let glibc_linux = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    let static_crt = var("CARGO_CFG_TARGET_FEATURE").split(',').any(|f| f == "crt-static");
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else { return };
    if !glibc_linux || static_crt {
        return;
    }
    if var("BATON_SHARED_LIBGCC") != "1" {
        link_static_unwinder(&out_dir);
    }
    if var("BATON_NO_SYMBOL_ORDER") != "1" {
        order_hot_symbols(&out_dir);
    }
}

/// Puts the `libgcc_s` linker script in the link-search folder, when there is a
/// `libgcc_eh.a` to stand for.
fn link_static_unwinder(out_dir: &Path) {
    let Some(unwinder) = static_unwinder() else { return };
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
    // A driver that does not know the file prints its bare name back; a quote could not
    // be written in the script.
    (output.status.success() && path.is_absolute() && path.is_file() && !printed.contains('"'))
        .then(|| path.to_path_buf())
}

/// Passes the hot functions' order to the linker of the binaries, if it takes one.
fn order_hot_symbols(out_dir: &Path) {
    let Some(manifest) = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from) else { return };
    let list = manifest.join(HOT_SYMBOLS);
    // Link arguments are not quoted on their way to the linker.
    if !list.is_file() || list.to_string_lossy().contains(char::is_whitespace) {
        return;
    }
    let args = [
        format!("-Wl,--symbol-ordering-file={}", list.display()),
        "-Wl,--no-warn-symbol-ordering".to_string(),
    ];
    if links_with(out_dir, &args) {
        for arg in args {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
    }
}

/// Whether a small program links for the target, with the flags cargo gives rustc and
/// `link_args` added.
fn links_with(out_dir: &Path, link_args: &[String]) -> bool {
    let (Some(rustc), Ok(target)) = (std::env::var_os("RUSTC"), std::env::var("TARGET")) else {
        return false;
    };
    let source = out_dir.join("link-probe.rs");
    if std::fs::write(&source, "fn main() {}\n").is_err() {
        return false;
    }
    let mut command = Command::new(rustc);
    command.arg("--target").arg(&target).arg("--crate-type=bin").arg("--edition=2021");
    command.arg("-o").arg(out_dir.join("link-probe")).arg(&source);
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    command.args(flags.split('\u{1f}').filter(|f| !f.is_empty()));
    if let Some(linker) = std::env::var_os("RUSTC_LINKER").filter(|l| !l.is_empty()) {
        command.arg("-C").arg({
            let mut arg = std::ffi::OsString::from("linker=");
            arg.push(linker);
            arg
        });
    }
    for arg in link_args {
        command.arg("-C").arg(format!("link-arg={arg}"));
    }
    command.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    command.status().is_ok_and(|status| status.success())
}
