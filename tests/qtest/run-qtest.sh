#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run the QTest programs built inside the QEMU tree (programs.txt, in the
# directory build/qemu-qtest-dir links to) against the project's QEMU, as
# one TAP stream (tap-programs.sh); arguments go to every program.
REPO=$(cd "$(dirname "$0")/../.." && pwd)
dir="$REPO/build/qemu-qtest-dir"
qemu="$REPO/build/qemu-system-x86_64"
if [ ! -d "$dir" ] || [ ! -x "$qemu" ]; then
    echo "Bail out! $dir or $qemu is missing: run scripts/setup.sh"
    exit 1
fi
export QTEST_QEMU_BINARY="$qemu"
# The sample traffic plugin of the project's build, for the plugin test
# (which fails, not skips, without it); a caller may name another build's.
: "${PTM_SAMPLE_PLUGIN:=$REPO/build/traffic-gen/plugins/ptm-sample-plugin.so}"
export PTM_SAMPLE_PLUGIN
exec "$REPO/tests/qtest/tap-programs.sh" "$dir" "$@"
