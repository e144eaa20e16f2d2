#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The sanitized half of CI, after scripts/run-tests.sh: builds (once, then
# incrementally) QEMU with ASan and UBSan and the project with clang, ASan,
# UBSan and libFuzzer (scripts/setup.sh --sanitize), then runs
#   1. every fuzz target for FUZZ_SECONDS (default 20) on its corpus,
#   2. the unit tests and the corpora's replay under ASan and UBSan
#      (leaks are errors),
#   3. the QTest against the sanitized QEMU (suite `sanitize`).
# Extra arguments go to tests/fuzz/run.sh (e.g. a list of targets).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
"$REPO/scripts/setup.sh" --sanitize || exit 1
rc=0

printf '\n==> Fuzzing each target for %s s\n' "${FUZZ_SECONDS:-20}"
"$REPO/tests/fuzz/run.sh" --time "${FUZZ_SECONDS:-20}" --runs 0 "$@" || rc=1

printf '\n==> Unit tests and fuzz corpora under ASan and UBSan (build-san/)\n'
# sanitized code runs several times slower: the timeouts grow with it
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C "$REPO/build-san" --suite unit --suite fuzz \
    --timeout-multiplier 8 --print-errorlogs || rc=1

printf '\n==> The QTest against the sanitized QEMU\n'
meson test -C "$REPO/build" --suite sanitize --print-errorlogs || rc=1

[ $rc = 0 ] && printf '\nsanitized runs: all passed\n' ||
    printf '\nsanitized runs: FAILED (see above)\n'
exit $rc
