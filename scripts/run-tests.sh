#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Set everything up (idempotent) and run every test: unit tests of the
# QEMU-free core, the QTest, and the end-to-end guest tests.
# Extra arguments go to `meson test` (e.g. --suite unit).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
# with the arm64 emulator for the arm64 guest's test (e2e-guest-arm64)
"$REPO/scripts/setup.sh" --arm64 || exit 1
"$REPO/scripts/guest-kernel.sh" > /dev/null || exit 1
# pciutils 3.15 for the guests (cached; e2e-guest-flit fails without it,
# the other tests do not need it)
"$REPO/scripts/pciutils.sh" > /dev/null ||
    echo "run-tests: scripts/pciutils.sh failed (above): e2e-guest-flit will fail" >&2
printf '\n==> Running the tests\n'
# the sanitized QTest (suite sanitize) belongs to scripts/run-sanitized.sh
meson test -C "$REPO/build" --no-suite sanitize --print-errorlogs "$@"
rc=$?
# One closing line over all TAP subtests: skipped ones are not passes.
/usr/bin/python3 - "$REPO/build/meson-logs/testlog.json" <<'PY'
import json, re, sys
passed = failed = skipped = 0
for line in open(sys.argv[1]):
    t = json.loads(line)
    subs = [l for l in (t.get('stdout') or '').splitlines()
            if re.match(r'(not )?ok\b', l)]
    if not subs:
        if t['result'] == 'OK':
            passed += 1
        elif t['result'] == 'SKIP':
            skipped += 1
        else:
            failed += 1
        continue
    for l in subs:
        if re.search(r'#\s*(SKIP|TODO)', l, re.I):
            skipped += 1
        elif l.startswith('ok'):
            passed += 1
        else:
            failed += 1
    if t['result'] not in ('OK', 'SKIP') and not any(
            l.startswith('not ok') for l in subs):
        failed += 1     # crashed or timed out after its last subtest
print('%d passed, %d failed, %d skipped' % (passed, failed, skipped))
PY
exit $rc
