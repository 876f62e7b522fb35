#!/usr/bin/env bash
# cargo's runner for the x86_64-pc-windows-gnu target: runs a Windows test binary (or any
# program cargo runs) under wine, in the prefix ci/windows/setup.sh made, as the user the
# prefix was made for. The environment cargo gives passes through (wine sets USERPROFILE,
# TEMP, TMP and PATH of its own); a test sets its children's environment itself.
#
#   CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=$PWD/ci/windows/runner.sh \
#     cargo test --target x86_64-pc-windows-gnu ...
set -euo pipefail
# shellcheck source=ci/windows/env.sh
. "$(dirname "$0")/env.sh"
USER=$BATON_WINE_USER exec wine "$@"
