#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /guest-main.sh of scripts/ndk-sw-guest.sh: load ndk-sw's nfb driver (after
# the kernel modules it needs, in the order of /lib/modules/order), then
# for every /dev/nfbN print nfb-info, nfb-bus -l and pcie-telemetry's
# report, and when the image has them, a register read through pynfb and
# the reference reader's report. Fails when a module does not load, no
# /dev/nfb0 appears or a command fails. With "shell" on the kernel command line a shell follows.
run() {
    echo
    echo "\$ $*"
    "$@"
}
# pip puts the reference reader into /usr/local/bin
PATH=$PATH:/usr/local/bin
# pynfb's view of the block: its node in the device tree and the first
# register (the block's identifier)
cat > /tmp/pynfb-read.py <<'EOF'
import sys
import nfb
dev = nfb.open(sys.argv[1])
node = dev.fdt_get_compatible('cesnet,ofm,pcie_telemetry_mi')[0]
print('pynfb: %s/%s register 0x0 = 0x%08x'
      % (node.path, node.name, dev.comp_open(node).read32(0)))
EOF
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
        # pynfb and the reference reader, when the image has them
        if [ -e /usr/bin/python3 ]; then
            run python3 /tmp/pynfb-read.py "$dev" || rc=1
        fi
        if command -v nfb-pcie-telemetry > /dev/null; then
            run nfb-pcie-telemetry -d "$dev" || rc=1
        fi
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
