#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of tests/e2e/guest-dwc-smoke.sh, in the 6.12 kernel of
# scripts/guest-kernel-612.sh: load the DesignWare PCIe PMU driver and run
# perf. Prints one "=== KEY value" line per fact for the host to check, and
# what perf printed between === BEGIN/END lines.
echo "=== UPTIME $(cut -d' ' -f1 /proc/uptime)"
echo "=== KERNEL $(uname -r)"
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
echo "=== LOCKDOWN $(cat /sys/kernel/security/lockdown 2>/dev/null || echo unknown)"
echo "=== PARANOID $(cat /proc/sys/kernel/perf_event_paranoid)"
# PCI functions: address vendor device class (a root port is class 0x060400)
for d in /sys/bus/pci/devices/*; do
    echo "=== PCI ${d##*/} $(cat "$d/vendor") $(cat "$d/device") $(cat "$d/class")"
done
insmod /lib/modules/dwc_pcie_pmu.ko
echo "=== INSMOD $?"
grep -q '^dwc_pcie_pmu ' /proc/modules && echo "=== MODULE loaded"
echo "=== TAINTED $(cat /proc/sys/kernel/tainted)"
dmesg | grep -i 'dwc_pcie\|taint' | sed 's/^/=== DMESG /'
echo "=== BEGIN perf list"
perf list 2>&1 | head
echo "=== END perf list"
echo "=== BEGIN perf stat"
perf stat -a -e cpu-clock sleep 0.1 > /tmp/stat 2>&1
rc=$?
cat /tmp/stat
echo "=== END perf stat"
echo "=== PERF-STAT $rc"
pmus=
for d in /sys/bus/event_source/devices/*; do pmus="$pmus ${d##*/}"; done
echo "=== EVENT-SOURCES$pmus"
echo "=== UPTIME-END $(cut -d' ' -f1 /proc/uptime)"
