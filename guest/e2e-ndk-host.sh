#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of tests/e2e/guest-ndk-host.py: the cards as a host with a real
# card has them, behind PCIe root ports and bound by a driver. lspci shows
# their capabilities, pcie-telemetry --list their link and firmware, then
# the stand-in for the nfb driver (/lib/modules/nfb_standin.ko) binds them
# and pcie-telemetry reads them through /dev/nfbN; the host boots this once
# without and once with iomem=relaxed. Each run between markers, as
# guest/e2e-tool.sh prints them:
#   === STEP <name>
#   <stdout and stderr>
#   === RC <name> <exit status>
# The cards (PCI slots are fixed by the host):
#   01:00.0  behind a root port, the default properties
#   02:00.0  behind a root port, CESNET's ID 18ec:c000, another link and
#            firmware identity
#   00:06.0  on the root bus, which the nfb driver refuses
T=pcie-telemetry
step() {    # name, command...
    name=$1
    shift
    echo "=== STEP $name"
    "$@" 2>&1
    echo "=== RC $name $?"
}
# lspci, less its complaint that this guest has no module index (it cannot
# name the modules of a driver; the driver in use comes from sysfs)
lspci_() {
    lspci "$@" 2> /tmp/lspci.err
    rc=$?
    grep -v 'libkmod' /tmp/lspci.err
    return $rc
}
# the nfb class devices: name, PCI function behind it, dev, /dev node
nfb_devices() {
    for d in /sys/class/nfb/*; do
        [ -e "$d" ] || continue
        n=$(basename "$d")
        echo "$n $(basename "$(readlink -f "$d/device")") $(cat "$d/dev")" \
             "$(stat -c '%F %t:%T' "/dev/$n" 2>&1)"
    done
    ls /dev | grep '^nfb' | sed 's/^/node /'
    return 0
}
step cmdline cat /proc/cmdline
step lspci lspci_ -nn
step lspci-default lspci_ -vv -s 01:00.0
step lspci-other lspci_ -vv -s 02:00.0
step lspci-root-bus lspci_ -vv -s 00:06.0
step list $T --list
step insmod insmod /lib/modules/nfb_standin.ko
step dmesg sh -c 'dmesg | grep -E "nfb"'
step nfb nfb_devices
step lspci-bound lspci_ -vv -s 01:00.0
step iomem grep nfb_standin /proc/iomem
step read-nfb0 $T -d /dev/nfb0 -t 0.2 -j
step read-nfb1 $T -d /dev/nfb1 -t 0 -j
step read-class $T -d /sys/class/nfb/nfb1 -t 0 -j
step read-root-bus $T -d 00:06.0 -t 0 -j
step rmmod rmmod nfb_standin
step nfb-after nfb_devices
step read-after $T -d 01:00.0 -t 0 -j
exit 0
