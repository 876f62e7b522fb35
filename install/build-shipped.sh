#!/bin/sh
# The one recipe for the baton binary that is shipped: the release archives (and so the
# npm packages and cargo-binstall, which unpack them), `install/install.sh --build` and
# the benchmark's "shipped" rows all build through here.
#
#   install/build-shipped.sh build --release --locked [cargo args ...]
#   install/build-shipped.sh install --path . --locked [cargo args ...]
#   install/build-shipped.sh test --locked [cargo args ...]
#   install/build-shipped.sh --print-target     # the target it builds for
#
# It runs the cargo subcommand given with `--target`, one codegen unit, fat LTO and
# `panic = "abort"`, and, in RUSTFLAGS, what makes the binary start fastest on that target:
# - Linux: statically linked (`+crt-static`) and not position-independent
#   (`relocation-model=static`): the kernel maps it and jumps to it, with no dynamic
#   loader, no shared library and no relocation to apply at every start;
# - on Linux, musl rather than glibc: glibc's start-up, static or not, probes the CPU's
#   features and caches with dozens of CPUID instructions, each a trap to the hypervisor
#   on a virtual machine (on a 2-core EPYC VM a static glibc do-nothing program takes
#   0.70 ms, a static musl one 0.26 ms; baton's hook 0.1-0.3 ms more with glibc than with
#   musl). The musl binary runs on glibc systems as well.
#   On a glibc machine without musl's Rust standard library (`rustup target add
#   <arch>-unknown-linux-musl`) or a musl C compiler (libgit2 and zlib are C:
#   `musl-gcc` from musl-tools, or `<arch>-linux-musl-gcc`), it says so and builds the
#   static glibc binary instead;
# - macOS: the ordinary build (the system's libraries cannot be linked statically).
# The explicit --target keeps these flags off build scripts and proc-macros, which are
# built for the host and must stay dynamic.
#
# BATON_TARGET: the target (default: the host's, with musl for glibc as above). RUSTFLAGS
# already set are kept.
set -eu

# A C compiler for musl target $1 on PATH, or nothing.
musl_cc() {
    arch=${1%%-*}
    for cc in "$arch-linux-musl-gcc" musl-gcc; do
        if command -v "$cc" >/dev/null 2>&1; then
            echo "$cc"
            return 0
        fi
    done
    return 1
}

target=${BATON_TARGET:-}
if [ -z "$target" ]; then
    target=$(rustc -vV | sed -n 's/^host: //p')
    [ -n "$target" ] || {
        echo "build-shipped.sh: cannot tell the host target (rustc -vV)" >&2
        exit 1
    }
    case $target in
        *-unknown-linux-gnu*)
            musl=${target%%-*}-unknown-linux-musl
            if [ -d "$(rustc --print sysroot)/lib/rustlib/$musl/lib" ] && musl_cc "$musl" >/dev/null; then
                target=$musl
            elif [ "${1:-}" != "--print-target" ]; then
                echo "build-shipped.sh: building for $target (static glibc): for the faster-starting musl build, run \`rustup target add $musl\` and install musl-tools (musl-gcc)" >&2
            fi
            ;;
    esac
fi
case $target in
    *-linux-musl*)
        # libgit2-sys and libz-sys build C with the cc crate, which looks for the
        # target's compiler by these names.
        cc_var=CC_$(echo "$target" | tr - _)
        if [ -z "$(eval echo "\${$cc_var:-}")" ] && cc=$(musl_cc "$target"); then
            eval "$cc_var=\$cc"
            export "${cc_var?}"
        fi
        ;;
esac

case $target in
    *-linux-gnu* | *-linux-musl*) flags="-C target-feature=+crt-static -C relocation-model=static" ;;
    *) flags="" ;;
esac
# Linux: linked by Rust's own LLD (through its gcc-ld wrapper, as rustc links x86_64
# glibc targets by default), which lays out first the functions the hook and the
# statusline run (install/hot-symbols.txt, from `bench/counts.sh --symbols`): a start then
# maps a few hundred KiB of code instead of megabytes (the hook: 2.7 MiB -> 0.75 MiB of
# text mapped; 10 % less wall time). Skipped, with the same binary otherwise, when the
# wrapper is missing or a path has a space (RUSTFLAGS splits on spaces).
case $target in
    *-linux-gnu* | *-linux-musl*)
        host=$(rustc -vV | sed -n 's/^host: //p')
        gcc_ld="$(rustc --print sysroot)/lib/rustlib/$host/bin/gcc-ld"
        order="$(cd "$(dirname "$0")" && pwd)/hot-symbols.txt"
        case "$gcc_ld$order" in
            *" "*) ;;
            *)
                if [ -x "$gcc_ld/ld.lld" ] && [ -f "$order" ]; then
                    flags="$flags -C link-arg=-fuse-ld=lld -C link-arg=-B$gcc_ld"
                    flags="$flags -C link-arg=-Wl,--symbol-ordering-file=$order -C link-arg=-Wl,--no-warn-symbol-ordering"
                fi
                ;;
        esac
        ;;
esac

if [ "${1:-}" = "--print-target" ]; then
    echo "$target"
    exit 0
fi
[ $# -ge 1 ] || {
    sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

sub=$1
shift
if [ -n "$flags" ]; then
    # Only when there is something to add: a set RUSTFLAGS, even empty, makes cargo
    # ignore the rustflags of the user's cargo config.
    RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }$flags"
    export RUSTFLAGS
fi
# One codegen unit and fat LTO for what is shipped (Cargo.toml keeps the everyday release
# build quicker to make), and no unwinding: a panic aborts. The hook and the status line
# still exit 0 on one (their panic hook exits before any unwinding would start); the binary
# loses its unwinding tables and landing pads (7.2 -> 6.4 MB; the hook's peak RSS
# 3,136 -> 2,764 KiB, 97 -> 88 page faults, bench/counts.sh).
export CARGO_PROFILE_RELEASE_LTO="${CARGO_PROFILE_RELEASE_LTO:-fat}"
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS="${CARGO_PROFILE_RELEASE_CODEGEN_UNITS:-1}"
export CARGO_PROFILE_RELEASE_PANIC="${CARGO_PROFILE_RELEASE_PANIC:-abort}"
exec cargo "$sub" --target "$target" "$@"
