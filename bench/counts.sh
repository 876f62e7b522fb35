#!/usr/bin/env bash
# Start-up and work of the hot paths in counts that do not depend on how loaded the
# machine is, next to /bin/true measured the same way: instructions executed (valgrind's
# callgrind, the loader included), system calls (strace -c -f), minor page faults and
# peak RSS (GNU time). Wall time is bench/run.sh's job, on a quiet machine.
#
#   bench/counts.sh BINARY [BINARY ...]
#   bench/counts.sh --symbols SHIPPED_BINARY > install/hot-symbols.txt
#   bench/counts.sh --symbols target/release/baton > install/hot-symbols-gnu.txt
#
# --symbols prints, instead of the table, the functions of BINARY that the hook (below
# threshold and at warning) and the statusline execute, in the order callgrind first lists
# them: the linker's ordering for the shipped build (install/build-shipped.sh) and for the
# ordinary one on glibc Linux (build.rs), which puts them side by side so a start maps a
# few hundred KiB of code instead of megabytes. Symbol names differ between the two
# builds (and between toolchains), hence two lists. Run it after changing what those
# paths run.
# Needs valgrind, strace and /usr/bin/time. Each path runs in a scratch HOME/TMPDIR with
# the bench's payloads: the hook below threshold (a fresh bridge; again with 100 more
# variables in its environment, as a host gives it), the statusline, `baton status` for
# that session, and the headless hook (no bridge) on a 1 MiB transcript (and a 1 GiB one
# with BATON_COUNTS_BIG=1): the first call of a session, a warm one with the transcript
# unchanged beside the same call with the statusline's bridge, and a call after one new
# reply. The last column is the bytes read from the transcript (strace -y).
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/baton-counts.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/tmp" "$scratch/home" "$scratch/project/.git"
echo 'ref: refs/heads/main' > "$scratch/project/.git/HEAD"
session=bench-session-0001

bridge() {
    echo "{\"session_id\":\"$session\",\"remaining_percentage\":60,\"used_pct\":40,\"timestamp\":$(date +%s)}" \
        > "$scratch/tmp/claude-ctx-$session.json"
}
hook_payload() { # session transcript
    echo "{\"session_id\":\"$1\",\"transcript_path\":\"$2\",\"cwd\":\"$scratch/project\",\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":\"src/app.ts\",\"old_string\":\"a\",\"new_string\":\"b\"},\"tool_response\":{\"success\":true},\"tool_use_id\":\"toolu_1\"}"
}
hook_payload "$session" "$scratch/none.jsonl" > "$scratch/hook.json"
echo "{\"session_id\":\"counts-statusline\",\"cwd\":\"$scratch/project\",\"model\":{\"id\":\"claude-opus-4-5-20251101\",\"display_name\":\"Opus 4.5\"},\"workspace\":{\"current_dir\":\"$scratch/project\",\"project_dir\":\"$scratch/project\"},\"cost\":{\"total_cost_usd\":1.83},\"context_window\":{\"context_window_size\":200000,\"used_percentage\":72,\"remaining_percentage\":28}}" > "$scratch/statusline.json"

# Transcripts of 1 MiB (and, with BATON_COUNTS_BIG=1, 1 GiB): filler lines, then one
# reply below the thresholds. Written a minute "ago": a transcript unchanged since the
# last call (a read just after a write cannot tell a rewrite of the same size, and reads).
sizes=(1048576)
[ "${BATON_COUNTS_BIG:-0}" = 1 ] && sizes+=(1073741824)
transcripts=()
for size in "${sizes[@]}"; do
    file="$scratch/transcript-$size.jsonl"
    python3 - "$file" "$size" <<'EOF'
import sys
path, size = sys.argv[1], int(sys.argv[2])
filler = '{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"%s"}]}}\n' % ("output line of a tool " * 40)
block = (filler * (64 * 1024 // len(filler))).encode()
reply = '{"type":"assistant","isSidechain":false,"timestamp":"2026-11-30T10:00:00.000Z","message":{"id":"msg_last","model":"claude-opus-4-5-20251101","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":10,"cache_creation_input_tokens":1000,"cache_read_input_tokens":79000,"output_tokens":50}}}\n'
with open(path, "wb") as f:
    written = 0
    while written + len(block) < size:
        f.write(block)
        written += len(block)
    f.write(reply.encode())
EOF
    touch -d '1 minute ago' "$file"
    hook_payload "no-bridge-$size" "$file" > "$scratch/hook-$size.json"
    transcripts+=("$size")
done
# The transcript's last line (a reply), its length.
last_line_len() { tail -n 1 "$1" | wc -c; }
# Before a measured run (`prepare`): the session's state as each row needs it.
first_call() { no_bridge; rm -f "$scratch/home/.local/state/baton/sessions/claude-ctx-no-bridge-$size-read.json"; }
offset_bridge() { # the statusline's bridge, which recorded the transcript's size
    echo "{\"session_id\":\"no-bridge-$size\",\"remaining_percentage\":60,\"used_pct\":40,\"timestamp\":$(date +%s),\"context_window_size\":200000,\"transcript_offset\":$(stat -c %s "$scratch/transcript-$size.jsonl")}" \
        > "$scratch/tmp/claude-ctx-no-bridge-$size.json"
}
no_bridge() { rm -f "$scratch/tmp/claude-ctx-no-bridge-$size.json"; }
warm() { # the last call read the transcript as it is
    no_bridge
    run_env "$binary" hook < "$scratch/hook-$size.json" >/dev/null
}
one_new_reply() { # the last call read the transcript without its last reply; then it came
    local file="$scratch/transcript-$size.jsonl" cut
    no_bridge
    cut=$(last_line_len "$file")
    tail -c "$cut" "$file" > "$scratch/reply.jsonl"
    truncate -s "-$cut" "$file"
    run_env "$binary" hook < "$scratch/hook-$size.json" >/dev/null
    cat "$scratch/reply.jsonl" >> "$file"
}

# A host's hook environment holds about a hundred variables (the user's, plus the host's
# own); the "host environment" rows add 100 such to the bare one.
host_vars=()
for i in $(seq 1 100); do host_vars+=("HOST_VARIABLE_$i=a value of a usual length, number $i"); done
extra_env=()
run_env() {
    env -i PATH=/usr/bin:/bin HOME="$scratch/home" TMPDIR="$scratch/tmp" \
        XDG_CONFIG_HOME="$scratch/home/.config" XDG_STATE_HOME="$scratch/home/.local/state" NO_COLOR=1 \
        ${extra_env[@]+"${extra_env[@]}"} "$@"
}
instructions() {
    run_env valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
syscalls() {
    run_env strace -f -c -o "$scratch/strace.txt" "$@" >/dev/null
    awk '/total$/ { print $(NF-2) }' "$scratch/strace.txt"
}
faults_rss() {
    run_env /usr/bin/time -f '%R %M' "$@" 2>&1 >/dev/null | tail -n 1
}
# Bytes read from transcripts (files named *.jsonl), from the system calls themselves.
transcript_bytes() {
    run_env strace -f -y -e trace=read,pread64,readv,preadv -o "$scratch/reads.txt" "$@" >/dev/null
    awk '/\.jsonl>/ && / = [0-9]+$/ { sum += $NF } END { print sum + 0 }' "$scratch/reads.txt"
}
prepare=""
row() { # name input command...
    local name=$1 input=$2
    shift 2
    case $name in *"below threshold"*) bridge ;; esac
    local ir sc fr tb
    [ -z "$prepare" ] || $prepare
    ir=$(instructions "$@" < "$input")
    [ -z "$prepare" ] || $prepare
    sc=$(syscalls "$@" < "$input")
    [ -z "$prepare" ] || $prepare
    fr=$(faults_rss "$@" < "$input")
    [ -z "$prepare" ] || $prepare
    tb=$(transcript_bytes "$@" < "$input")
    printf '| %s | %s | %s | %s | %s | %s |\n' "$name" "$ir" "$sc" "${fr% *}" "${fr#* }" "$tb"
}

if [ "$1" = "--symbols" ]; then
    [ $# -eq 2 ] || { echo "bench/counts.sh --symbols BINARY" >&2; exit 2; }
    binary=$2
    functions() { # name input command...: the functions it runs, mangled
        local name=$1 input=$2
        shift 2
        run_env valgrind --tool=callgrind --demangle=no --callgrind-out-file="$scratch/$name.cg" "$@" \
            < "$input" >/dev/null 2>&1
        sed -n 's/^c\{0,1\}fn=([0-9]*) //p' "$scratch/$name.cg"
    }
    {
        bridge
        functions below "$scratch/hook.json" "$binary" hook
        echo "{\"session_id\":\"$session\",\"remaining_percentage\":30,\"used_pct\":70,\"timestamp\":$(date +%s)}" \
            > "$scratch/tmp/claude-ctx-$session.json"
        functions warning "$scratch/hook.json" "$binary" hook
        functions statusline "$scratch/statusline.json" "$binary" statusline
    } | grep -v '^0x' | awk '!seen[$0]++' | {
        # Only the binary's own functions (a dynamic build's libc ones are not linked in).
        if command -v nm >/dev/null 2>&1; then
            awk 'NR == FNR { own[$NF] = 1; next } own[$0]' <(nm "$binary" 2>/dev/null) -
        else
            cat
        fi
    }
    exit 0
fi

echo "| path | instructions | system calls | minor faults | peak RSS KiB | transcript bytes read |"
echo "|---|---:|---:|---:|---:|---:|"
row "/bin/true" /dev/null /bin/true
extra_env=("${host_vars[@]}")
row "/bin/true, host environment" /dev/null /bin/true
extra_env=()
for binary in "$@"; do
    echo "| **$binary** | | | | | |"
    row "hook, below threshold" "$scratch/hook.json" "$binary" hook
    extra_env=("${host_vars[@]}")
    row "hook, below threshold, host environment" "$scratch/hook.json" "$binary" hook
    extra_env=()
    row "statusline" "$scratch/statusline.json" "$binary" statusline
    # What an agent runs from Bash to ask how full its context is (the same fresh bridge).
    absolute=$(realpath "$binary")
    (cd "$scratch/project" && row "status, below threshold" /dev/null "$absolute" status --session "$session")
    # The headless path (no bridge: `claude -p`, relay legs): the figure from the
    # transcript, beside the same call with the statusline's bridge.
    for size in "${transcripts[@]}"; do
        input="$scratch/hook-$size.json"
        prepare=first_call
        row "hook, no bridge, first call of the session, $size-byte transcript" "$input" "$binary" hook
        prepare=offset_bridge
        row "hook, fresh bridge, transcript unchanged, $size-byte transcript" "$input" "$binary" hook
        prepare=warm
        row "hook, no bridge, warm session, transcript unchanged, $size-byte transcript" "$input" "$binary" hook
        reply=$(last_line_len "$scratch/transcript-$size.jsonl")
        prepare=one_new_reply
        row "hook, no bridge, one new reply ($reply bytes) since the last call, $size-byte transcript" "$input" "$binary" hook
        prepare=""
    done
done
