#!/usr/bin/env bash
# The relay's hand-over per host beside the host's own cold start, in one run: each
# host's `baton run` scenario of the real-host suite (tests/real_hosts/relay*.rs: the
# real CLI against the stand-in model server, ~0.3 s a turn) measures its hand-overs
# (a leg's last model request to the next leg's first) and then, in the same world, the
# host's own cold start: the leg's command with a one-line prompt, 5 times, from its
# spawn to its first model request.
#
#   BATON_REAL_HOSTS_CACHE=/path/to/cache bench/handover.sh [FILTER ...]
#
# FILTER: test name filters (default: every host's `baton run` relay scenario).
set -euo pipefail
cd "$(dirname "$0")/.."
filters=("$@")
[ ${#filters[@]} -gt 0 ] || filters=(real_hosts::relay::baton_run real_hosts::relay_chat_hosts::baton_run)
log=$(mktemp "${TMPDIR:-/tmp}/baton-handover.XXXXXX")
trap 'rm -f "$log"' EXIT
BATON_REAL_HOSTS=required BATON_HANDOVER_BENCH=1 \
    cargo test --locked --test it -- "${filters[@]}" --nocapture --test-threads=1 >"$log" 2>&1 || {
    echo "bench/handover.sh: some scenarios failed (their checks, not the timing); the lines measured follow" >&2
    grep -E "^(test |real hosts: .*FAILED|---- )" "$log" >&2 || true
}
echo "| host | hand-overs (s) | median | cold starts (s) | median | hand-over − cold start (s) |"
echo "|---|---|---:|---|---:|---:|"
sed -n 's/^real hosts: hand-over | /| /p' "$log"
