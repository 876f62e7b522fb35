#!/usr/bin/env bash
# Fetches GSD (get-shit-done-cc) from the npm registry into target/gsd so the latency
# benchmark can time its hooks next to baton's, on the same machine, in the same run:
#
#   BATON_BENCH_GSD="$(bench/fetch-gsd.sh)" cargo bench --bench latency
#
# Prints the folder holding gsd-context-monitor.js and gsd-statusline.js. Nothing of GSD
# is committed; it is downloaded at each use. Needs node and npm.
set -euo pipefail
version="${GSD_VERSION:-1.42.3}"
root="$(cd "$(dirname "$0")/.." && pwd)/target/gsd/$version"
if [ ! -f "$root/package/hooks/gsd-context-monitor.js" ]; then
  mkdir -p "$root"
  (cd "$root" && npm pack --silent "get-shit-done-cc@$version" >/dev/null && tar xzf "get-shit-done-cc-$version.tgz")
fi
echo "$root/package/hooks"
