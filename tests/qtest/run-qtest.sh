#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run the QTest built inside the QEMU tree against the project's QEMU.
REPO=$(cd "$(dirname "$0")/../.." && pwd)
bin="$REPO/build/ndk-pcie-telemetry-qtest"
qemu="$REPO/build/qemu-system-x86_64"
if [ ! -x "$bin" ] || [ ! -x "$qemu" ]; then
    echo "Bail out! $bin or $qemu is missing: run scripts/setup.sh"
    exit 1
fi
export QTEST_QEMU_BINARY="$qemu"
# The sample traffic plugin of the project's build, for the plugin test
# (which fails, not skips, without it); a caller may name another build's.
: "${PTM_SAMPLE_PLUGIN:=$REPO/build/traffic-gen/plugins/ptm-sample-plugin.so}"
export PTM_SAMPLE_PLUGIN
exec "$bin" --tap "$@"
