#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs inside the demo guest: list the cards pcie-telemetry finds, then
# print its report of one second of traffic. With "shell" on the kernel
# command line, leave the user at a shell instead of powering off.
# A kernel booted without firmware (the arm64 guest: -M virt -kernel)
# leaves memory decoding off on functions no driver took: turn it on for
# those, as a driver would.
if [ "$(uname -m)" = aarch64 ]; then
    for d in /sys/bus/pci/devices/*; do
        [ -e "$d/driver" ] || echo 1 > "$d/enable"
    done
fi
echo
echo '$ pcie-telemetry --list'
pcie-telemetry --list
echo
echo '$ pcie-telemetry'
pcie-telemetry
rc=$?
if grep -qw shell /proc/cmdline; then
    echo
    echo 'A shell in the guest: try pcie-telemetry -w, -j, --csv, --prometheus, -c,'
    echo 'and lspci -vv -d 1234:0d7b for the card behind its root port.'
    echo 'Leave with exit (or Ctrl-A X).'
    setsid cttyhack sh -l
    exit 0
fi
exit $rc
