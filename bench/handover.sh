#!/usr/bin/env bash
# The relay's hand-over per host beside the host's own cold start, in one run: each
# host's bench scenario (tests/real_hosts/handover_bench.rs, run only with
# BATON_HANDOVER_BENCH=1: the real CLI under `baton run` against the stand-in model
# server, ~0.3 s a turn, a task whose contexts reach CRITICAL after one step, 6 legs or
# more) measures its hand-overs (a leg's last model request to the next leg's first) and
# then, in the same world, the host's own cold start: the leg's command with a one-line
# prompt, 5 times, from its spawn to its first model request.
#
#   BATON_REAL_HOSTS_CACHE=/path/to/cache bench/handover.sh [FILTER ...]
#
# FILTER: test name filters (default: every host, real_hosts::handover_bench).
# BATON_HANDOVER_COUNTDOWN=N: the interactive pane runs with `--countdown N` (default 5,
# baton's own default; its row then also shows the hand-over less the countdown).
# BATON_HANDOVER_HOOK_TIMES=1: baton's hooks timed too (through a bash wrapper, whose own
# start is then in every hook call), to show how much of each part was theirs.
set -euo pipefail
cd "$(dirname "$0")/.."
filters=("$@")
[ ${#filters[@]} -gt 0 ] || filters=(real_hosts::handover_bench)
log=$(mktemp "${TMPDIR:-/tmp}/baton-handover.XXXXXX")
trap 'rm -f "$log"' EXIT
echo "bench/handover.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
# BATON_HANDOVER_RELEASE=1: baton (its hooks and `baton run`) from the release build, as
# `cargo install` gives it (a release build of the test suite: minutes, once).
profile=()
[ "${BATON_HANDOVER_RELEASE:-}" != 1 ] || profile=(--release)
if [ ${#profile[@]} -gt 0 ]; then echo "baton: the release build"; else echo "baton: the debug build"; fi
cargo build --locked --quiet ${profile[@]+"${profile[@]}"} --tests >/dev/null 2>&1 || cargo build --locked ${profile[@]+"${profile[@]}"} --tests
BATON_REAL_HOSTS=required BATON_HANDOVER_BENCH=1 \
    cargo test --locked ${profile[@]+"${profile[@]}"} --test it -- "${filters[@]}" --nocapture --test-threads=1 >"$log" 2>&1 || {
    echo "bench/handover.sh: some scenarios failed (their checks, not the timing); the lines measured follow" >&2
    grep -E "^(test |real hosts: .*(FAIL|SKIPPED)|---- )" "$log" >&2 || true
}
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "Hand-over: from a leg's last reply (the stand-in answers each request in 0.3 s) to the next leg's first request."
echo
echo "| host | hand-overs (s) | median | cold starts (s) | median | hand-over − cold start (s) |"
echo "|---|---|---:|---|---:|---:|"
sed -n 's/^.*real hosts: hand-over | /| /p' "$log" # (a line may follow the test's own name)
echo
echo "Where each hand-over's time went (medians, s): the host's exit after the leg's last reply (of it, baton's hooks: with BATON_HANDOVER_HOOK_TIMES=1), baton's runner between the exit and the next spawn, the next host's start to its first request (of it, baton's hooks)."
echo
echo "| host | exit | hooks in exit | runner | start | hooks in start |"
echo "|---|---:|---:|---:|---:|---:|"
sed -n 's/^real hosts: hand-over parts | /| /p' "$log"
if [ -n "${BATON_HANDOVER_LOG:-}" ]; then cp "$log" "$BATON_HANDOVER_LOG"; fi
