#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of tests/bench/guest-overload.py: ten readings in a row of the
# overloaded 16 x 4 card at 01:00.0 (-t 1), each between markers the host
# times, then one long reading during which the host sends SIGTERM.
# (readings=N on the kernel command line: N instead of ten)
n=$(sed -n 's/.*readings=\([0-9]*\).*/\1/p' /proc/cmdline)
i=1
while [ $i -le "${n:-10}" ]; do
    echo "=== READ $i"
    pcie-telemetry -d 01:00.0 -t 1 -j > /tmp/out 2>&1
    echo "=== DONE $i $? $(grep -c lost_deltas /tmp/out)"
    i=$((i + 1))
done
echo "=== LONG"
pcie-telemetry -d 01:00.0 -t 30 -j > /dev/null 2>&1
echo "=== LONG-DONE"
exit 0
