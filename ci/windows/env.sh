# shellcheck shell=bash
# The wine set-up's shared settings, sourced by setup.sh and run.sh (and by .ci/run).
_baton_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Outside the repository: the prefix's z: drive maps `/` (see setup.sh).
# (With HOME unset, bash's ~ is the account's home from the password database.)
export WINEPREFIX=${BATON_WINEPREFIX:-${XDG_CACHE_HOME:-$(cd ~ && pwd)/.cache}/baton/wine}
# 64-bit only (no i386 packages).
export WINEARCH=win64
# Quiet: wine's fixme/err lines would land in every program's stderr.
export WINEDEBUG=${WINEDEBUG:--all}
# No Mono or Gecko download prompt when the prefix is made (no network, no display), no
# menu entries (wine 8.0 has no bcryptprimitives.dll of its own: the shim needs no override).
export WINEDLLOVERRIDES="mscoree,mshtml=;winemenubuilder.exe=d"
# The Windows user the prefix is made for: C:\Users\<name> is the USERPROFILE runs use.
export BATON_WINE_USER=${BATON_WINE_USER:-me}
# Where the helpers (shim, launcher, hello.exe) are built.
export BATON_WINE_TOOLS=${BATON_WINE_TOOLS:-${CARGO_TARGET_DIR:-$_baton_repo/target}/windows-tools}
unset _baton_repo
