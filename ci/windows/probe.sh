#!/usr/bin/env bash
# Shows, on this machine, what a Windows program meets under wine (ci/windows/README.md's
# list, each fact with the run that shows it) and what a wine process start costs. Not
# part of CI: run it by hand after ci/windows/setup.sh, when wine or the set-up changes.
#
#   ci/windows/probe.sh            the facts, then the timings (median of 30 runs each)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=ci/windows/env.sh
. "$here/env.sh"
run=$here/run.sh
probe=$BATON_WINE_TOOLS/probe.exe
if [ ! -f "$probe" ] || [ "$here/probe.rs" -nt "$probe" ]; then
  rustc --edition 2024 -O --target x86_64-pc-windows-gnu -o "$probe" "$here/probe.rs"
fi
profile=$WINEPREFIX/drive_c/users/$BATON_WINE_USER
mkdir -p "$profile/AppData/Local/Temp" "$profile/proj"
scratch="C:\\Users\\$BATON_WINE_USER\\AppData\\Local\\Temp"
rm -f "$profile/AppData/Local/Temp/unixlink"
ln -s real "$profile/AppData/Local/Temp/unixlink"
fact() { printf '\n$ %s\n' "$*"; }

fact "the environment run.sh gives (wine would otherwise set USERPROFILE, TEMP, TMP of its own)"
"$run" -- "$probe" env
fact "the same from the plain wine command, HOME and TMPDIR set on Linux"
env -u USERPROFILE USER="$BATON_WINE_USER" wine "$probe" env
fact "TEMP and TMP differ: std's temp_dir takes TMP (Node's os.tmpdir takes TEMP)"
"$run" --env 'TEMP=C:\from-TEMP' --env 'TMP=C:\from-TMP' -- "$probe" env | sed -n 2p
fact "neither set: std's temp_dir falls back to USERPROFILE"
"$run" --unset TEMP --unset TMP -- "$probe" env | sed -n 2p
fact "a Linux working folder under drive_c is C:\\, anywhere else Z:\\"
(cd "$profile/proj" && "$run" -- "$probe" env | sed -n 3p)
"$run" -- "$probe" env | sed -n 3p
fact "canonicalize: a verbatim \\\\?\\ path, in the case on disk"
"$run" -- "$probe" canonicalize 'C:\USERS\ME\PROJ'
fact "arguments with spaces, quotes and trailing backslashes pass through launch.exe unchanged"
"$run" -- "$probe" args 'a b' 'c"d' "e\\" '' 'C:\Program Files\x'
fact "stdin: a Linux pipe (PeekNamedPipe fails), a file, /dev/null, then a Windows pipe from launch.exe"
echo '{"a":1}' | "$run" -- "$probe" stdin read
"$run" -- "$probe" stdin read <"$here/hello.rs"
"$run" -- "$probe" stdin read </dev/null
echo '{"a":1}' | "$run" --stdin-pipe -- "$probe" stdin read
fact "stdin held open: a Linux pipe for 1.5 s, then a Windows pipe held 1.5 s after its last byte"
(echo '{"a":1}'; sleep 1.5) | "$run" -- "$probe" stdin read
echo '{"a":1}' | "$run" --stdin-pipe --stdin-hold-ms 1500 -- "$probe" stdin read
fact "a read-only file (libgit2 writes its objects so) stops remove_dir_all"
"$run" -- "$probe" rmdir-readonly "$scratch"
fact "rename over a file: fine; over one another handle holds open: refused"
"$run" -- "$probe" replace "$scratch"
fact "remove_file of a file another handle holds open (std opens with FILE_SHARE_DELETE)"
"$run" -- "$probe" write-locked "$scratch"
fact "std's File::lock; its unlock meets wine's ERROR_LOCK_VIOLATION (closing the handle releases)"
"$run" -- "$probe" lock "$scratch"
fact "symlinks: wine 8 makes none (and says it did); a Unix symlink is followed, a plain file"
"$run" -- "$probe" symlink "$scratch"
fact "powershell runs nothing (exit 0, no output, whatever the script); cmd works; no sh, no git"
"$run" -- "$probe" spawn powershell -NoProfile -Command 'Write-Output hi; exit 7'
"$run" -- "$probe" spawn cmd /c 'echo hi & exit /b 7'
"$run" -- "$probe" spawn sh -c 'echo hi'
"$run" -- "$probe" spawn git --version
fact "a Job object ends a child tree at once"
"$run" -- "$probe" job
fact "a child started with null stdio and not waited for keeps the parent's stdout open, unless the handle is made uninheritable first"
for mode in "" uninheritable; do
  started=$(date +%s%N)
  "$run" -- "$probe" detach $mode | cat
  echo "stdout closed after $((($(date +%s%N) - started) / 1000000)) ms ($mode)"
done
fact "a write to a closed stdout pipe: no SIGPIPE, an error (wine: 233; Windows: 232, BrokenPipe)"
"$run" -- "$probe" closed-stdout | true
fact "exit codes reach Linux as code & 0xff (a non-zero code whose low byte is 0 becomes 1)"
for code in 0 1 53 101 256 -1073741510; do
  status=0
  "$run" -- "$probe" exit "$code" || status=$?
  echo "exit($code) -> $status"
done

# Timings: the median of 30 runs, the wineserver kept running between them.
median() { # runs command...
  local runs=$1 i started
  shift
  local times=()
  for ((i = 0; i < runs; i++)); do
    started=$(date +%s%N)
    "$@" >/dev/null 2>&1 </dev/null || true
    times+=($((($(date +%s%N) - started) / 1000000)))
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$((runs / 2 + 1))p"
}
hello=$BATON_WINE_TOOLS/hello.exe
printf '\nTimings on %s (%s cores, load %s), median of 30 runs, ms:\n' "$(uname -n)" "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)"
# A cold start first: no wineserver (the run starts one, which stays 3 s after its last
# client); then one kept running (`wineserver -p`), as a test run would keep it.
wineserver -k 2>/dev/null || true
wineserver --wait 2>/dev/null || true
started=$(date +%s%N)
wine "$hello" >/dev/null
printf '  %5d  wine hello.exe, no wineserver running (it starts one)\n' $((($(date +%s%N) - started) / 1000000))
wineserver --wait
wineserver -p
printf '  %5d  /bin/true\n' "$(median 30 /bin/true)"
printf '  %5d  wine hello.exe (one Windows process)\n' "$(median 30 wine "$hello")"
printf '  %5d  wine cmd /c exit\n' "$(median 30 wine cmd /c exit)"
printf '  %5d  run.sh -- hello.exe (launch.exe, then hello.exe)\n' "$(median 30 "$run" -- "$hello")"
wineserver -k
