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
# - Linux (glibc or musl): statically linked (`+crt-static`) and not position-independent
#   (`relocation-model=static`): the kernel maps it and jumps to it, with no dynamic
#   loader, no shared library and no relocation to apply at every start;
# - macOS: the ordinary build (the system's libraries cannot be linked statically).
# The explicit --target keeps these flags off build scripts and proc-macros, which are
# built for the host and must stay dynamic.
#
# BATON_TARGET: the target (default: the host rustc's). RUSTFLAGS already set are kept.
set -eu

target=${BATON_TARGET:-}
if [ -z "$target" ]; then
    target=$(rustc -vV | sed -n 's/^host: //p')
    [ -n "$target" ] || {
        echo "build-shipped.sh: cannot tell the host target (rustc -vV)" >&2
        exit 1
    }
fi

case $target in
    *-linux-gnu* | *-linux-musl*) flags="-C target-feature=+crt-static -C relocation-model=static" ;;
    *) flags="" ;;
esac

if [ "${1:-}" = "--print-target" ]; then
    echo "$target"
    exit 0
fi
[ $# -ge 1 ] || {
    sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2
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
