#!/bin/sh
# Installs baton, puts it on PATH and registers it with the hosts; --uninstall undoes it.
#
#   install/install.sh [--prefix DIR] [--build] [--dry-run] [baton install flags ...]
#   install/install.sh --uninstall [--prefix DIR] [baton uninstall flags ...]
#
# Install: the prebuilt binary of this checkout's version comes first: the release
# archive for this machine is downloaded with its .sha256 file, and used only when the
# checksum matches and the binary runs. Otherwise (offline, no archive for the machine,
# a mismatch, or --build) `cargo install --path <this checkout> --locked` builds it.
# Either way it goes into ~/.cargo/bin (or DIR/bin with --prefix); when that folder is
# not on PATH but ~/.local/bin is, baton is linked there; then `baton install` runs with
# the flags given (--host, --scope, --statusline-only, --replace-other-monitors ...; see
# `baton install --help`). Running it again updates the binary and leaves settings that
# are already right as they are.
#
# Uninstall: `baton uninstall` with the flags given, then the link and the binary go.
#
# --dry-run installs and changes nothing: it prints what it would do, and the settings
# diff when a baton binary is already there to compute it.
#
# BATON_RELEASE_URL: where the archives are (default: the GitHub release of this
# version; a file:// folder works). BATON_TARGET: the archive's target (default: this
# machine's: x86_64- or aarch64-unknown-linux-musl on Linux, with glibc or musl).

set -eu

say() { printf '%s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }
usage() {
    sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'
    exit "${1:-2}"
}

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

uninstall=0
dry_run=0
from_source=0
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
        --build) from_source=1 ;;
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
        # Built by cargo: cargo removes it (and its record); a prebuilt one is removed here.
        if command -v cargo >/dev/null 2>&1 && cargo install --list ${root_flag:+--root "$prefix"} 2>/dev/null | grep -q '^baton-context '; then
            run cargo uninstall baton-context ${root_flag:+--root "$prefix"}
        else
            run rm -f "$baton"
        fi
    else
        say "no baton in $bindir: nothing to remove"
    fi
    [ "$dry_run" = 1 ] && say "dry run: nothing was changed" || say "baton is uninstalled"
    exit 0
fi

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml" | head -n 1)
[ -n "$version" ] || die "no version in $repo/Cargo.toml"

# This machine's release target, as release.yml names the archives.
machine_target() {
    case $(uname -m) in
        x86_64 | amd64) arch=x86_64 ;;
        aarch64 | arm64) arch=aarch64 ;;
        *) return 1 ;;
    esac
    case $(uname -s) in
        # The static musl build, on glibc systems too: it starts faster than a static
        # glibc one (install/build-shipped.sh says why).
        Linux) echo "$arch-unknown-linux-musl" ;;
        Darwin) echo "$arch-apple-darwin" ;;
        *) return 1 ;;
    esac
}

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d ' ' -f 1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d ' ' -f 1
    else
        return 1
    fi
}

# Downloads, verifies and installs the release archive's binary into $bindir; says why
# and returns 1 when it cannot (the caller then builds).
install_prebuilt() {
    target=${BATON_TARGET:-$(machine_target)} || {
        say "no prebuilt baton for $(uname -s) $(uname -m)"
        return 1
    }
    base=${BATON_RELEASE_URL:-https://github.com/baton-context/baton/releases/download/v$version}
    name=baton-$version-$target
    url=${base%/}/$name.tar.gz
    if [ "$dry_run" = 1 ]; then
        say "would download: $url (checked against $url.sha256) into $bindir, else build:"
        return 1
    fi
    command -v curl >/dev/null 2>&1 || {
        say "curl not found: cannot download the prebuilt binary"
        return 1
    }
    work=$(mktemp -d "${TMPDIR:-/tmp}/baton-install.XXXXXX") || return 1
    say "downloading the prebuilt baton $version for $target: $url"
    if ! curl -fsSL --connect-timeout 10 --max-time 300 -o "$work/$name.tar.gz" "$url" ||
        ! curl -fsSL --connect-timeout 10 --max-time 60 -o "$work/$name.tar.gz.sha256" "$url.sha256"; then
        say "no prebuilt archive could be downloaded from $base"
        rm -rf "$work"
        return 1
    fi
    expected=$(cut -d ' ' -f 1 < "$work/$name.tar.gz.sha256")
    actual=$(sha256_of "$work/$name.tar.gz") || {
        say "neither sha256sum nor shasum found: the archive cannot be checked"
        rm -rf "$work"
        return 1
    }
    if [ -z "$expected" ] || [ "$expected" != "$actual" ]; then
        say "checksum mismatch for $name.tar.gz (expected $expected, got $actual): not using it"
        rm -rf "$work"
        return 1
    fi
    if ! tar -xzf "$work/$name.tar.gz" -C "$work" || [ ! -f "$work/$name/baton" ] ||
        [ "$("$work/$name/baton" --version 2>/dev/null)" != "baton $version" ]; then
        say "the archive holds no working baton $version"
        rm -rf "$work"
        return 1
    fi
    # Copied beside the old one, then renamed over it: never a half-written binary.
    if ! { mkdir -p "$bindir" && cp "$work/$name/baton" "$bindir/.baton.new" &&
        chmod 755 "$bindir/.baton.new" && mv -f "$bindir/.baton.new" "$baton"; }; then
        rm -rf "$work"
        die "cannot write $baton"
    fi
    rm -rf "$work"
    say "installed the prebuilt baton $version (sha256 verified) into $bindir"
}

# `cargo install` of this checkout, through the shipped recipe (install/build-shipped.sh)
# when the first argument is "shipped".
build() {
    cargo_cmd="cargo"
    if [ "$1" = shipped ]; then
        cargo_cmd="$here/build-shipped.sh"
    fi
    shift
    if [ -n "$root_flag" ]; then
        run "$cargo_cmd" install --path "$repo" --locked --root "$prefix" "$@"
    else
        run "$cargo_cmd" install --path "$repo" --locked "$@"
    fi
}

build_from_source() {
    command -v cargo >/dev/null 2>&1 || die "cargo not found: install Rust from https://rustup.rs, then run this again (or install the prebuilt binary: npm install -g baton-context)"

    # The binary the release archives hold, built the same way (install/build-shipped.sh:
    # on Linux static and non-PIE, so it starts with no loader and no relocation, which
    # matters for a hook that runs after every tool call). BATON_DYNAMIC=1 keeps the
    # ordinary build; a failed shipped build falls back to it.
    say "building baton (release) from $repo into $bindir"
    if [ "${BATON_DYNAMIC:-0}" != 1 ] && command -v rustc >/dev/null 2>&1; then
        if ! build shipped; then
            say "the shipped (static) build failed; building the ordinary (dynamically linked) binary"
            build plain
        fi
    else
        build plain
    fi
}

if [ "$from_source" = 1 ] || ! install_prebuilt; then
    build_from_source
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
