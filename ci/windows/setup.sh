#!/usr/bin/env bash
# Sets this Linux machine up to build baton for Windows and to run the result under wine:
# the rustup target x86_64-pc-windows-gnu, Debian's mingw-w64 cross compiler, wine (8.0 on
# Debian 12), and a wine prefix made ready for Rust programs (ci/windows/README.md says
# why each piece is there). Idempotent: a second run checks and returns in about a second.
#
#   ci/windows/setup.sh        install what is missing, build the helpers, make the prefix
#
# The prefix lives outside the repository (its z: drive maps `/`, and cargo's scan of the
# package's files would walk the whole disk through it): $BATON_WINEPREFIX, else
# ${XDG_CACHE_HOME:-~/.cache}/baton/wine. The helpers are built into $BATON_WINE_TOOLS
# (default: target/windows-tools). Prints the seconds each part took.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=ci/windows/env.sh
. "$here/env.sh"

started=$SECONDS
part_started=$SECONDS
part() { printf 'windows setup: %-50s %3d s\n' "$1" $((SECONDS - part_started)); part_started=$SECONDS; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# 1. The Rust target (the standard library for Windows; rustc links through mingw's gcc).
command -v rustup >/dev/null 2>&1 || { echo "rustup is needed to add the x86_64-pc-windows-gnu target" >&2; exit 1; }
if ! rustup target list --installed | grep -qx x86_64-pc-windows-gnu; then
  rustup target add x86_64-pc-windows-gnu
fi
part "rustup target x86_64-pc-windows-gnu"

# 2. mingw-w64 (the linker and the C compiler for libgit2's bundled C and the helpers) and
# wine (64-bit only: no i386 architecture, no recommended fonts, sound or gstreamer).
missing=()
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=(gcc-mingw-w64-x86-64)
command -v wine >/dev/null 2>&1 || missing+=(wine wine64)
if [ ${#missing[@]} -gt 0 ]; then
  apt_install() { as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
  apt_install || { as_root apt-get update -qq && apt_install; }
fi
part "apt: mingw-w64, wine"
x86_64-w64-mingw32-gcc --version | head -n 1
wine --version

# 3. The helpers, rebuilt when their source changes: the ProcessPrng shim and the launcher.
# The shim is built in a folder of its own: a DLL beside an .exe is loaded before system32's,
# and would hide a prefix without the shim from the proof below.
mkdir -p "$BATON_WINE_TOOLS/shim"
build_c() { # output source extra-flags...
  local out=$1 src=$2
  shift 2
  if [ ! -f "$out" ] || [ "$src" -nt "$out" ]; then
    x86_64-w64-mingw32-gcc -O2 -s -Wall -Wextra -Werror -o "$out.tmp" "$src" "$@"
    mv "$out.tmp" "$out"
  fi
}
build_c "$BATON_WINE_TOOLS/shim/bcryptprimitives.dll" "$here/processprng.c" -shared -ladvapi32
build_c "$BATON_WINE_TOOLS/launch.exe" "$here/launch.c" -municode
part "helpers: bcryptprimitives.dll, launch.exe"

# 4. The prefix, created once, with the user name of the USERPROFILE the runs use (wine
# names C:\users\<name> after $USER when it creates the prefix).
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  mkdir -p "$(dirname "$WINEPREFIX")"
  boot_log=$BATON_WINE_TOOLS/wineboot.log
  if ! USER=$BATON_WINE_USER wineboot --init >"$boot_log" 2>&1; then
    cat "$boot_log" >&2
    echo "wineboot could not make the prefix $WINEPREFIX" >&2
    exit 1
  fi
  wineserver --wait
fi
if [ ! -d "$WINEPREFIX/drive_c/users/$BATON_WINE_USER" ]; then
  echo "the wine prefix $WINEPREFIX has no user $BATON_WINE_USER: remove it and run again" >&2
  exit 1
fi
# The shim, where the loader looks first (cmp: copy only when it changed).
system32=$WINEPREFIX/drive_c/windows/system32
if ! cmp -s "$BATON_WINE_TOOLS/shim/bcryptprimitives.dll" "$system32/bcryptprimitives.dll"; then
  cp "$BATON_WINE_TOOLS/shim/bcryptprimitives.dll" "$system32/bcryptprimitives.dll"
fi
part "wine prefix $WINEPREFIX"

# 5. The proof: a Rust hello-world built for Windows runs under wine and exits 0; with the
# shim disabled it exits 53 (wine 8.0 has no ProcessPrng): what the shim is there for.
hello=$BATON_WINE_TOOLS/hello.exe
if [ ! -f "$hello" ] || [ "$here/hello.rs" -nt "$hello" ]; then
  rustc --edition 2024 -O --target x86_64-pc-windows-gnu -o "$hello" "$here/hello.rs"
fi
"$here/run.sh" -- "$hello"
"$here/runner.sh" "$hello" >/dev/null # cargo's runner for the Windows target
status=0
WINEDLLOVERRIDES="$WINEDLLOVERRIDES;bcryptprimitives=d" wine "$hello" >/dev/null 2>&1 || status=$?
case $status in
  53) echo "without the shim: exit 53 (bcryptprimitives.dll!ProcessPrng missing), as expected" ;;
  0) echo "note: hello.exe runs without the shim: this wine has ProcessPrng, the shim can go" ;;
  *) echo "without the shim hello.exe exited $status, not 53: the prefix is not what setup.sh expects" >&2; exit 1 ;;
esac
part "hello.exe under wine, with and without the shim"
printf 'windows setup: %-50s %3d s\n' "total" $((SECONDS - started))
