#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /guest-main.sh of scripts/ndk-sw-guest.sh: load ndk-sw's nfb driver (after
# the kernel modules it needs, in the order of /lib/modules/order), then
# for every /dev/nfbN print nfb-info, nfb-bus -l and pcie-telemetry's
# report. Fails when a module does not load, no /dev/nfb0 appears or a
# command fails. With "shell" on the kernel command line a shell follows.
run() {
    echo
    echo "\$ $*"
    "$@"
}
rc=0
for m in $(cat /lib/modules/order); do
    insmod "/lib/modules/$m" || { echo "ndk-sw-guest: insmod $m failed"; rc=1; }
done
# devtmpfs creates the node when the driver registers the card
i=0
while [ ! -e /dev/nfb0 ] && [ $i -lt 50 ]; do
    sleep 0.1
    i=$((i + 1))
done
echo
echo '$ dmesg | grep nfb'
dmesg | grep -i nfb
if [ -e /dev/nfb0 ]; then
    for dev in /dev/nfb[0-9]*; do
        run nfb-info -d "$dev" || rc=1
        run nfb-bus -d "$dev" -l || rc=1
        run pcie-telemetry -d "$dev" || rc=1
    done
else
    echo "ndk-sw-guest: no /dev/nfb0: the nfb driver bound no card"
    rc=1
fi
if grep -qw shell /proc/cmdline; then
    echo
    echo 'A shell in the guest with ndk-sw: nfb-info, nfb-bus, pcie-telemetry -d /dev/nfb0;'
    echo 'the driver is /lib/modules/nfb.ko (rmmod nfb, insmod /lib/modules/nfb.ko).'
    echo 'Leave with exit (or Ctrl-A X).'
    setsid cttyhack sh -l
    exit 0
fi
exit $rc
