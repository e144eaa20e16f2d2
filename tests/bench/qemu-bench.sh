#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Host CPU seconds QEMU spends on one second of virtual time with the card
# and its busiest pattern, measured through the qtest protocol (no guest
# code runs, so what is measured is the device and QEMU's timer loop).
# Not a test: it prints figures.
# usage: qemu-bench.sh [extra -device properties, e.g. pcie-endpoints=16]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
QEMU="$REPO/build/qemu-system-x86_64"
traffic="pattern,brake=63,tags-free=7,stfifo-free=100"
traffic+=",rq-frame-bytes=256,rc-frame-bytes=96,rc-stall=1"
traffic+=",up-frame-bytes=100,up-gap=1,down-frame-bytes=64,down-stall=2,down-gap=1"

PYTHONPATH="$REPO/python" exec /usr/bin/python3 - "$QEMU" "$traffic" "${1:-}" <<'PY'
import os
import sys

from ndk_telemetry import Card, Machine, Traffic

qemu, traffic, props = sys.argv[1:]
opts = dict(kv.split('=', 1) for kv in props.split(',')) if props else {}
tck = os.sysconf('SC_CLK_TCK')


def cpu(pid):
    """utime + stime of the process, in seconds."""
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tck


m = Machine([Card(opts, traffic=Traffic.parse(traffic))], qemu=qemu,
            timeout=None)
try:
    m.clock_step(1000)                  # QEMU is up and answering
    before = cpu(m.pid)
    now = m.clock_step(1000000000)
    after = cpu(m.pid)
finally:
    m.kill()
print('ndk-pcie-telemetry%s with the busiest pattern: %.2f s host CPU per '
      'virtual second (OK %d)' % (',' + props if props else '',
                                  after - before, now))
PY
