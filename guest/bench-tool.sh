#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Guest side of tests/bench/tool-bench.sh: runs pcie-telemetry in four
# ways against the card at 00:03.0 and marks the boundaries with a read of
# BAR0 offset 0, which lies outside the block (block-offset=0x10000), so
# that the host can attribute the device's traced accesses to each run.
# The tool's CPU time comes from `time` (TCG: far slower than a real CPU).
dev=/sys/bus/pci/devices/0000:00:03.0
bar=$(head -n 1 $dev/resource | cut -d' ' -f1)
mark() { devmem "$bar" 32 > /dev/null; echo "MARK $1"; }
mark start
time -p pcie-telemetry -d 00:03.0 -t 0 -j > /dev/null
mark totals
time -p pcie-telemetry -d 00:03.0 -t 0.2 > /dev/null
mark interval
time -p timeout -s INT 3 pcie-telemetry -d 00:03.0 -w -t 0.2 > /tmp/watch
mark watch
# many readings at a short interval: the CPU time of one reading
time -p timeout -s INT 5 pcie-telemetry -d 00:03.0 -w -t 0.02 > /dev/null
mark fast
echo "WATCH-REPORTS $(grep -c '^PCIe telemetry' /tmp/watch)"
exit 0
