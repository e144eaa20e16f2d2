#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of tests/e2e/guest-ptt-load.sh, in the 6.12 kernel of
# scripts/guest-kernel-612.sh: load the HiSilicon PCIe Tune and Trace
# driver (hisi_ptt.ko, built out of tree) and show what it did. Prints one
# "=== KEY value" line per fact for the host to check, and what the
# commands printed between === BEGIN/END lines.
echo "=== KERNEL $(uname -r)"
# PCI functions: address vendor device class
for d in /sys/bus/pci/devices/*; do
    echo "=== PCI ${d##*/} $(cat "$d/vendor") $(cat "$d/device") $(cat "$d/class")"
done
echo "=== BEGIN insmod"
insmod /lib/modules/hisi_ptt.ko
echo "rc=$?"
lsmod
dmesg | tail
echo "=== END insmod"
grep -q '^hisi_ptt ' /proc/modules && echo "=== MODULE loaded"
[ -d /sys/bus/pci/drivers/hisi_ptt ] && echo "=== DRIVER registered"
bound=
for l in /sys/bus/pci/drivers/hisi_ptt/????:??:??.?; do
    [ -e "$l" ] && bound="$bound ${l##*/}"
done
echo "=== BOUND${bound:- none}"
pmus=
for d in /sys/bus/event_source/devices/*; do pmus="$pmus ${d##*/}"; done
echo "=== EVENT-SOURCES$pmus"
echo "=== TAINTED $(cat /proc/sys/kernel/tainted)"
rmmod hisi_ptt
echo "=== RMMOD $?"
grep -q '^hisi_ptt ' /proc/modules || echo "=== MODULE gone"
echo "=== BEGIN dmesg"
dmesg | grep 'hisi_ptt\|taint\|BUG\|WARNING'
echo "=== END dmesg"
