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
props=${1:+,$1}
traffic="telemetry-traffic-pattern,id=t0,brake=63,tags-free=7,stfifo-free=100"
traffic+=",rq-frame-bytes=256,rc-frame-bytes=96,rc-stall=1"
traffic+=",up-frame-bytes=100,up-gap=1,down-frame-bytes=64,down-stall=2,down-gap=1"
tck=$(getconf CLK_TCK)

coproc Q { exec "$QEMU" -machine q35 -nodefaults -display none -accel qtest \
    -qtest stdio -object "$traffic" -device "ndk-pcie-telemetry,traffic=t0$props" \
    2>/dev/null; }
cpu() { awk -v t="$tck" '{print ($14 + $15) / t}' "/proc/$Q_PID/stat"; }
ask() { echo "$1" >&"${Q[1]}"; read -r reply <&"${Q[0]}"; }
ask "clock_step 1000"                   # QEMU is up and answering
before=$(cpu)
ask "clock_step 1000000000"
after=$(cpu)
kill "$Q_PID"
echo "ndk-pcie-telemetry${props} with the busiest pattern:" \
     "$(awk -v a="$after" -v b="$before" 'BEGIN {printf "%.2f", a - b}')" \
     "s host CPU per virtual second ($reply)"
