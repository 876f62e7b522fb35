#!/usr/bin/env bash
# The hook below its thresholds, Windows build under wine, beside `cmd /c exit` (the
# floor: a wine process started the same way that does nothing). For the record only:
# wine is not Windows, and most of each figure is wine's process start.
#
#   bench/windows-wine.sh [path/to/baton.exe]    (default: the release build for
#                                                 x86_64-pc-windows-gnu; needs
#                                                 ci/windows/setup.sh first)
#
# Each command runs BATON_BENCH_RUNS times (default 30) through ci/windows/run.sh, as a
# Windows host starts a hook (USERPROFILE, TEMP, TMP, SystemRoot; no HOME, no TMPDIR),
# in a throwaway C:\Users\<name> inside the prefix; the payload is a PostToolUse whose
# bridge says 80 % remaining (the path every tool call takes). Prints the median and
# the 90th percentile, in milliseconds, wall clock from Linux.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=ci/windows/env.sh
. "$here/ci/windows/env.sh"
exe=${1:-$here/target/x86_64-pc-windows-gnu/release/baton.exe}
runs=${BATON_BENCH_RUNS:-30}
[ -f "$exe" ] || { echo "no $exe: cargo build --release --target x86_64-pc-windows-gnu" >&2; exit 1; }

name=bench$$
profile=$WINEPREFIX/drive_c/users/$name
trap 'rm -rf "$profile"' EXIT
mkdir -p "$profile/bin" "$profile/proj" "$profile/AppData/Local/Temp"
cp "$exe" "$profile/bin/baton.exe"
session=0b7e2c4d-1a2b-4c3d-8e9f-bench0000001
printf '{"session_id":"%s","remaining_percentage":80,"used_pct":20,"timestamp":%s}' \
  "$session" "$(date +%s)" >"$profile/AppData/Local/Temp/claude-ctx-$session.json"
payload=$(printf '{"session_id":"%s","cwd":"C:\\\\Users\\\\%s\\\\proj","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"a.ts"},"tool_response":{"success":true},"tool_use_id":"t"}' "$session" "$name")

run() { "$here/ci/windows/run.sh" --env "USERPROFILE=C:\\Users\\$name" --cd "C:\\Users\\$name\\proj" -- "$@"; }

# Milliseconds of each of $runs runs of a command, sorted; the first (cold) run is not kept.
measure() {
  local times=() i start end
  printf '%s' "$payload" | run "$@" >/dev/null
  for ((i = 0; i < runs; i++)); do
    start=$(date +%s%N)
    printf '%s' "$payload" | run "$@" >/dev/null
    end=$(date +%s%N)
    times+=("$(((end - start) / 1000000))")
  done
  printf '%s\n' "${times[@]}" | sort -n
}

report() { # label, sorted times
  local label=$1 sorted=$2 median p90
  median=$(printf '%s\n' "$sorted" | sed -n "$(((runs + 1) / 2))p")
  p90=$(printf '%s\n' "$sorted" | sed -n "$(((runs * 9 + 9) / 10))p")
  printf '%-36s median %5d ms   p90 %5d ms   (%d runs)\n' "$label" "$median" "$p90" "$runs"
}

hook=$(measure "$profile/bin/baton.exe" hook)
floor=$(measure "$WINEPREFIX/drive_c/windows/system32/cmd.exe" /d /c exit)
[ -z "$(printf '%s' "$payload" | run "$profile/bin/baton.exe" hook)" ] || { echo "the hook said something below its thresholds" >&2; exit 1; }
report "baton.exe hook (below thresholds)" "$hook"
report "cmd /c exit" "$floor"
