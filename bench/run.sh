#!/usr/bin/env bash
# The full benchmark behind bench/README.md's tables: the default build, the shipped build
# (install/build-shipped.sh: what the release archives, npm, cargo-binstall and
# `install/install.sh --build` install; on Linux static and non-PIE), and GSD's Node hooks
# fetched from npm, all measured in one run on this machine; with BATON_BENCH_BIG_REPO=1
# also the 100,000-file statusline and the 50,000-untracked-files CRITICAL hook and brief.
#
#   bench/run.sh            # BATON_BENCH_RUNS=300 by default
#   bench/run.sh --no-gsd   # without fetching GSD
set -euo pipefail
cd "$(dirname "$0")/.."

target=$(install/build-shipped.sh --print-target)
echo "building the shipped binary ($target, install/build-shipped.sh) into target/static" >&2
install/build-shipped.sh build --release --locked --quiet --target-dir target/static
static="$PWD/target/static/$target/release/baton"
# The linker's orderings of the hot paths' functions go stale as the code changes
# (bench/counts.sh --symbols regenerates them): say how much of each list its build has.
report_order() { # list binary build
  local listed found
  if command -v nm >/dev/null 2>&1 && [ -f "$2" ] && [ -f "$1" ]; then
    listed=$(sort -u "$1" | wc -l)
    found=$(sort -u "$1" | comm -12 - <(nm "$2" | awk '{ print $NF }' | sort -u) | wc -l)
    echo "$1: $found of $listed functions are in the $3 build" >&2
  fi
}
report_order install/hot-symbols.txt "$static" shipped
# The default build's (build.rs) once the bench has built it.
trap 'report_order install/hot-symbols-gnu.txt target/release/baton default' EXIT

gsd=""
if [ "${1:-}" != "--no-gsd" ] && command -v npm >/dev/null 2>&1; then
  gsd=$(bench/fetch-gsd.sh)
fi

BATON_BENCH_BIG_REPO=1 BATON_BENCH_STATIC="$static" BATON_BENCH_GSD="$gsd" cargo bench --locked --bench latency
