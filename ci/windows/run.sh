#!/usr/bin/env bash
# Runs a Windows program under wine with a Windows user's environment, as a host on
# Windows would start it: USERPROFILE=C:\Users\<user> (with HOMEDRIVE, HOMEPATH, USERNAME,
# APPDATA, LOCALAPPDATA), TEMP and TMP in its AppData\Local\Temp, SystemRoot, Windows' own
# variables, no HOME, no TMPDIR, nothing else from this machine. stdin, stdout, stderr and
# the exit code pass through. Needs ci/windows/setup.sh first.
#
#   ci/windows/run.sh [--env NAME=VALUE]... [--unset NAME]... [--cd DIR] [--stdin-pipe]
#                     [--stdin-hold-ms N] -- program.exe [arguments...]
#
# program.exe is a Linux path (made a Windows one here); DIR and the arguments are given
# to the program as they are (Windows paths: C:\Users\me\proj, or Z:\tmp\... for a Linux
# folder). --env overrides the defaults (e.g. USERPROFILE=Z:\tmp\t1\home); TEMP and TMP
# and the other profile folders follow USERPROFILE unless given. See launch.c for --stdin-pipe and --stdin-hold-ms.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=ci/windows/env.sh
. "$here/env.sh"

# A Linux path as wine names it: under the prefix's drive_c it is C:\, anything else Z:\.
windows_path() {
  local path
  path=$(realpath -m -- "$1")
  local drive_c
  drive_c=$(realpath -m -- "$WINEPREFIX/drive_c")
  case "$path" in
    "$drive_c") printf '%s' "C:\\" ;;
    "$drive_c"/*) path=${path#"$drive_c"/}; printf 'C:\\%s' "${path//\//\\}" ;;
    *) printf 'Z:%s' "${path//\//\\}" ;;
  esac
}

launcher=(--clean-env --unset HOME --unset TMPDIR)
declare -A given=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    --env) given[${2%%=*}]=1; launcher+=(--set "$2"); shift 2 ;;
    --unset) launcher+=(--unset "$2"); shift 2 ;;
    --cd) launcher+=(--cd "$2"); shift 2 ;;
    --stdin-pipe) launcher+=(--stdin-pipe); shift ;;
    --stdin-hold-ms) launcher+=(--stdin-hold-ms "$2"); shift 2 ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -ge 2 ] || { echo "run.sh: no program after --" >&2; exit 2; }
shift
program=$(windows_path "$1")
shift

# The defaults, each unless given (launch.exe applies its --set in order: given ones win).
profile="C:\\Users\\$BATON_WINE_USER"
for ((i = 0; i < ${#launcher[@]}; i++)); do
  case "${launcher[i]}" in USERPROFILE=*) profile=${launcher[i]#USERPROFILE=} ;; esac
done
defaults=()
default() { [ -n "${given[$1]:-}" ] || defaults+=(--set "$1=$2"); }
default USERPROFILE "$profile"
default HOMEDRIVE "${profile:0:2}"
default HOMEPATH "${profile:2}"
default USERNAME "$BATON_WINE_USER"
default APPDATA "$profile"'\AppData\Roaming'
default LOCALAPPDATA "$profile"'\AppData\Local'
default TEMP "$profile"'\AppData\Local\Temp'
default TMP "$profile"'\AppData\Local\Temp'
default SystemRoot 'C:\windows'

# USER: wine names its own profile after it (C:\users\<USER>), and the prefix was made for
# BATON_WINE_USER.
USER=$BATON_WINE_USER exec wine "$BATON_WINE_TOOLS/launch.exe" "${defaults[@]}" "${launcher[@]}" -- "$program" "$@"
