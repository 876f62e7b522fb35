#!/bin/sh
# Builds baton, puts it on PATH and registers it with the hosts; --uninstall undoes it.
#
#   install/install.sh [--prefix DIR] [--dry-run] [baton install flags ...]
#   install/install.sh --uninstall [--prefix DIR] [baton uninstall flags ...]
#
# Install: `cargo install --path <this checkout> --locked` builds the release binary
# into ~/.cargo/bin (or DIR/bin with --prefix); when that folder is not on PATH but
# ~/.local/bin is, baton is linked there; then `baton install` runs with the flags given
# (--host, --scope, --statusline-only, --replace-other-monitors ...; see
# `baton install --help`). Running it again updates the binary and leaves settings that
# are already right as they are.
#
# Uninstall: `baton uninstall` with the flags given, then the link and the binary go.
#
# --dry-run builds and changes nothing: it prints the commands it would run, and the
# settings diff when a baton binary is already there to compute it.

set -eu

say() { printf '%s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }
usage() {
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    exit "${1:-2}"
}

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

uninstall=0
dry_run=0
prefix=""
want_prefix=0
# What is not ours is passed on to baton, in order and with its spaces intact.
for arg do
    shift
    if [ "$want_prefix" = 1 ]; then
        prefix=$arg
        want_prefix=0
        continue
    fi
    case $arg in
        --uninstall) uninstall=1 ;;
        --dry-run) dry_run=1 ;;
        --prefix) want_prefix=1 ;;
        --prefix=*) prefix=${arg#--prefix=} ;;
        -h | --help) usage 0 ;;
        *) set -- "$@" "$arg" ;;
    esac
done
[ "$want_prefix" = 0 ] || die "--prefix needs a folder"

if [ -n "$prefix" ]; then
    case $prefix in
        /*) ;;
        *) prefix=$(pwd)/$prefix ;;
    esac
    bindir=$prefix/bin
    root_flag="--root"
else
    bindir=${CARGO_HOME:-${HOME:?HOME is not set}/.cargo}/bin
    root_flag=""
fi
baton=$bindir/baton
local_bin=${HOME:?HOME is not set}/.local/bin

on_path() {
    case ":$PATH:" in
        *":$1:"*) return 0 ;;
        *) return 1 ;;
    esac
}

# Runs a command, or only shows it with --dry-run.
run() {
    if [ "$dry_run" = 1 ]; then
        say "would run: $*"
    else
        say "running: $*"
        "$@"
    fi
}

if [ "$uninstall" = 1 ]; then
    found=""
    if [ -x "$baton" ]; then
        found=$baton
    elif command -v baton >/dev/null 2>&1; then
        found=$(command -v baton)
    fi
    if [ -n "$found" ]; then
        if [ "$dry_run" = 1 ]; then
            "$found" uninstall --dry-run "$@"
        else
            "$found" uninstall "$@"
        fi
    else
        say "no baton binary found: settings left as they are"
    fi
    link=$local_bin/baton
    if [ -L "$link" ] && [ "$(readlink "$link")" = "$baton" ]; then
        run rm -f "$link"
    fi
    if [ -e "$baton" ]; then
        command -v cargo >/dev/null 2>&1 || die "cargo not found: remove $baton by hand"
        if [ -n "$root_flag" ]; then
            run cargo uninstall baton --root "$prefix"
        else
            run cargo uninstall baton
        fi
    else
        say "no baton in $bindir: nothing to remove"
    fi
    [ "$dry_run" = 1 ] && say "dry run: nothing was changed" || say "baton is uninstalled"
    exit 0
fi

command -v cargo >/dev/null 2>&1 || die "cargo not found: install Rust from https://rustup.rs, then run this again"

# On Linux with glibc, a statically linked binary starts about 0.4 ms sooner (no shared
# libraries to load), which matters for a hook that runs after every tool call.
# BATON_DYNAMIC=1 keeps the ordinary build; a failed static build falls back to it.
target_flag=""
if [ "${BATON_DYNAMIC:-0}" != 1 ] && command -v rustc >/dev/null 2>&1; then
    host=$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')
    case $host in
        *-linux-gnu) target_flag="--target $host" ;;
    esac
fi

say "building baton (release) from $repo into $bindir"
build() {
    if [ -n "$root_flag" ]; then
        run cargo install --path "$repo" --locked --root "$prefix" "$@"
    else
        run cargo install --path "$repo" --locked "$@"
    fi
}
if [ -n "$target_flag" ]; then
    # shellcheck disable=SC2086 # two words on purpose
    if ! (export RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static"; build $target_flag); then
        say "static build failed; building the ordinary (dynamically linked) binary"
        build
    fi
else
    build
fi

if on_path "$bindir"; then
    say "$bindir is on PATH"
elif on_path "$local_bin"; then
    if [ "$dry_run" = 1 ] || [ ! -L "$local_bin/baton" ] || [ "$(readlink "$local_bin/baton")" != "$baton" ]; then
        run mkdir -p "$local_bin"
        run ln -sf "$baton" "$local_bin/baton"
    fi
    say "baton is on PATH through $local_bin/baton"
else
    say "note: $bindir is not on PATH; add it, e.g.:"
    say "  echo 'export PATH=\"$bindir:\$PATH\"' >> ~/.profile"
fi

if [ "$dry_run" = 1 ]; then
    if [ -x "$baton" ]; then
        "$baton" install --dry-run "$@"
    else
        say "would run: $baton install $*"
        say "dry run: nothing was changed"
    fi
    exit 0
fi
"$baton" install "$@"
