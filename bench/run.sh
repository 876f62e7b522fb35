#!/usr/bin/env bash
# The full benchmark behind the README's table: the default build, the shipped build
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
# The linker's ordering of the hot paths' functions goes stale as the code changes
# (bench/counts.sh --symbols regenerates it): say how much of it the build still has.
if command -v nm >/dev/null 2>&1; then
  listed=$(sort -u install/hot-symbols.txt | wc -l)
  found=$(sort -u install/hot-symbols.txt | comm -12 - <(nm "$static" | awk '{ print $NF }' | sort -u) | wc -l)
  echo "install/hot-symbols.txt: $found of $listed functions are in the shipped build" >&2
fi
# The same for the default build's list (build.rs), once the bench has built it.
report_default_order() {
  local default=target/release/baton listed found
  if command -v nm >/dev/null 2>&1 && [ -f "$default" ] && [ -f install/hot-symbols-gnu.txt ]; then
    listed=$(sort -u install/hot-symbols-gnu.txt | wc -l)
    found=$(sort -u install/hot-symbols-gnu.txt | comm -12 - <(nm "$default" | awk '{ print $NF }' | sort -u) | wc -l)
    echo "install/hot-symbols-gnu.txt: $found of $listed functions are in the default build" >&2
  fi
}
trap report_default_order EXIT

gsd=""
if [ "${1:-}" != "--no-gsd" ] && command -v npm >/dev/null 2>&1; then
  gsd=$(bench/fetch-gsd.sh)
fi

BATON_BENCH_BIG_REPO=1 BATON_BENCH_STATIC="$static" BATON_BENCH_GSD="$gsd" cargo bench --locked --bench latency
