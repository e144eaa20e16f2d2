#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of tests/e2e/guest-big-cards.py: the big and the overloaded
# cards, read with pcie-telemetry. Each run between markers, as
# guest/e2e-tool.sh prints them. The cards, each behind a PCIe root port:
#   01:00.0  2 endpoints, 2 DMA ports, 4 RQ regions, pattern traffic
#   02:00.0  16 endpoints, 4 DMA ports, ptc traffic (loses deltas)
#   03:00.0  default card, DRAIN_PERIOD 64, pattern traffic (loses deltas)
#   04:00.0  default card, DRAIN_PERIOD 256, ptc traffic (loses deltas)
#   05:00.0  default card, DRAIN_PERIOD 64, random traffic (loses deltas)
#   06:00.0  default card, DRAIN_PERIOD 256, random traffic (loses deltas)
#   07:00.0  default card, DRAIN_PERIOD 64, looped scenario (loses deltas)
#   08:00.0  default card, DRAIN_PERIOD 256, looped scenario (loses deltas)
T=pcie-telemetry
step() {    # name, command...
    name=$1
    shift
    echo "=== STEP $name"
    "$@" 2>&1
    echo "=== RC $name $?"
}
step list $T --list
step two-by-two $T -d 01:00.0 -t 0.5 -j
step sixteen-by-four $T -d 02:00.0 -t 0.2 -j
step drain-64 $T -d 03:00.0 -t 0.2 -j
step drain-256 $T -d 04:00.0 -t 0.2 -j
step random-64 $T -d 05:00.0 -t 0.2 -j
step random-256 $T -d 06:00.0 -t 0.2 -j
step scenario-64 $T -d 07:00.0 -t 0.2 -j
step scenario-256 $T -d 08:00.0 -t 0.2 -j
exit 0
