#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of tests/e2e/guest-dwc.py, in the 6.12 kernel of
# scripts/guest-kernel-612.sh, with a dwc-pcie-root-port and the card
# below it (pattern traffic): load the DesignWare PCIe PMU driver, show
# the PMU's sysfs files, count the port's payload events with perf stat,
# then run pcie-telemetry --port, also while perf stat counts on the same
# counter. Each run between markers:
#   === STEP <name>
#   <stdout and stderr>
#   === RC <name> <exit status>
T=pcie-telemetry
step() {    # name, command...
    name=$1
    shift
    echo "=== STEP $name"
    "$@" 2>&1
    echo "=== RC $name $?"
}
echo "=== KERNEL $(uname -r)"
echo "=== PARANOID $(cat /proc/sys/kernel/perf_event_paranoid)"
# PCI functions: address vendor device class
for d in /sys/bus/pci/devices/*; do
    echo "=== PCI ${d##*/} $(cat "$d/vendor") $(cat "$d/device") $(cat "$d/class")"
done
step insmod insmod /lib/modules/dwc_pcie_pmu.ko
pmus=
for d in /sys/bus/event_source/devices/*; do pmus="$pmus ${d##*/}"; done
echo "=== EVENT-SOURCES$pmus"
# the PMU above the card, as the driver names it (one port, one PMU)
pmu=
for d in /sys/bus/event_source/devices/dwc_rootport_*; do
    [ -e "$d" ] && pmu=${d##*/}
done
echo "=== PMU $pmu"
if [ -n "$pmu" ]; then
    p=/sys/bus/event_source/devices/$pmu
    pmu_files() {   # in the PMU's directory
        for f in type cpumask format/* events/Rx_PCIe_TLP_Data_Payload \
                 events/Tx_PCIe_TLP_Data_Payload; do
            echo "$f: $(cat "$f")"
        done
    }
    (cd "$p" && step pmu-files pmu_files)
    # what the brief's users type, then the same machine-readably (-x,:
    # count, unit, event, time counted in ns, percentage of it running)
    step perf-rx perf stat -a -e "$pmu/Rx_PCIe_TLP_Data_Payload/" sleep 1
    step perf-tx perf stat -a -e "$pmu/Tx_PCIe_TLP_Data_Payload/" sleep 1
    step perf-rx-x perf stat -a -x, -e "$pmu/Rx_PCIe_TLP_Data_Payload/" sleep 1
    step perf-tx-x perf stat -a -x, -e "$pmu/Tx_PCIe_TLP_Data_Payload/" sleep 1
fi
step list $T --list
step tool-both-json $T -d 01:00.0 --port both -t 1 -j
step tool-both-text $T -d 01:00.0 --port both -t 1
step tool-rx-json $T --port rx -t 1 -j
step tool-tx-json $T --port tx -t 1 -j
step tool-watch timeout -s INT 5 $T --port both -w -t 1 -j
# perf stat on the same counter meanwhile: the kernel rotates the two
if [ -n "$pmu" ]; then
    perf stat -a -x, -e "$pmu/Rx_PCIe_TLP_Data_Payload/" sleep 3 \
        > /tmp/shared-perf 2>&1 &
    sleep 0.5
    step shared-tool $T --port rx -t 1 -j
    wait
    step shared-perf cat /tmp/shared-perf
fi
# a port without the driver's PMU: the driver gone
rmmod dwc_pcie_pmu
step no-pmu $T --port rx -t 0.2
exit 0
