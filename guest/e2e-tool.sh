#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of tests/e2e/guest-tool.py: runs pcie-telemetry against the
# cards that test starts and prints each run between markers, so that the
# host can check the output against what the traffic sources predict:
#   === STEP <name>
#   <stdout and stderr of the tool>
#   === RC <name> <exit status>
# The cards (PCI slots are fixed by the host; the first three behind PCIe
# root ports):
#   01:00.0  2 endpoints, 2 DMA ports, 4 RQ regions, block at 0x20000
#   02:00.0  default geometry, pattern traffic with a closed form
#   03:00.0  CNT_WIDTH 33, PCIe clock 4 GHz: the counters wrap every 2.1 s
#   00:06.0  on the root bus, no device tree (devtree=off)
#   04:01.0  behind a PCIe-to-PCI bridge: conventional PCI, no extended
#            configuration space, so no device tree either
T=pcie-telemetry
step() {    # name, command...
    name=$1
    shift
    echo "=== STEP $name"
    "$@" 2>&1
    echo "=== RC $name $?"
}
step list $T --list
step version $T --version
step default-card $T -t 0.2 -j
step pattern-json $T -d 0000:02:00.0 -t 1 -j
step big-text $T -d 01:00.0 -t 0.5
step big-json $T -d /sys/bus/pci/devices/0000:01:00.0 -t 0.5 -j
step index-1 $T -d 02:00.0 -i 1
step totals-before $T -d 02:00.0 -t 0 -j
step clear $T -d 02:00.0 -c
step totals-after $T -d 02:00.0 -t 0 -j
step totals-text $T -d 02:00.0 -t 0
step wrap-watch timeout -s INT 4 $T -d 03:00.0 -w -t 0.4 -j
step wrap-totals $T -d 03:00.0 -t 0 -j
step csv $T -d 02:00.0 -t 0.2 --csv
step prometheus $T -d 02:00.0 --prometheus
step no-tree $T -d 00:06.0 -t 0
step no-tree-explicit $T -d 00:06.0 --bar 0 --offset 0 -t 0 -j
step conventional $T -d 04:01.0 -t 0
step conventional-explicit $T -d 04:01.0 --bar 0 --offset 0 -t 0 -j
step no-card $T -D 8086:1234
step bad-interval $T -t -1
step non-root su -s /bin/sh nobody -c "$T -d 02:00.0 -t 0"
exit 0
