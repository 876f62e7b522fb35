#!/usr/bin/env bash
# The full benchmark behind the README's table: the default build, the statically
# linked build that install/install.sh makes on Linux (glibc), and GSD's Node hooks
# fetched from npm, all measured in one run on this machine; with BATON_BENCH_BIG_REPO=1
# also the 100,000-file statusline and the 50,000-untracked-files CRITICAL hook and brief.
#
#   bench/run.sh            # BATON_BENCH_RUNS=300 by default
#   bench/run.sh --no-gsd   # without fetching GSD
set -euo pipefail
cd "$(dirname "$0")/.."

host=$(rustc -vV | sed -n 's/^host: //p')
static=""
case "$host" in
  *-linux-gnu)
    echo "building the static binary ($host, crt-static) into target/static" >&2
    RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
      cargo build --release --locked --quiet --target "$host" --target-dir target/static
    static="$PWD/target/static/$host/release/baton"
    ;;
esac

gsd=""
if [ "${1:-}" != "--no-gsd" ] && command -v npm >/dev/null 2>&1; then
  gsd=$(bench/fetch-gsd.sh)
fi

BATON_BENCH_BIG_REPO=1 BATON_BENCH_STATIC="$static" BATON_BENCH_GSD="$gsd" cargo bench --locked --bench latency
