#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Network of a test guest on QEMU's user network (-netdev user with
# -device virtio-net-pci): load the virtio-net modules the initramfs carries
# in /lib/modules/net (numbered in load order; scripts/guest-kernel.sh
# --net-modules gives them), bring up lo and eth0 at QEMU's static address
# 10.0.2.15/24 with the gateway 10.0.2.2, and wait until eth0 has carrier.
# Prints "=== NET up <seconds>" or "=== NET failed <why>"; exit 0 or 1.
# usage: sh /net-up.sh [IFACE]
IF=${1:-eth0}
fail() {
    echo "=== NET failed $*"
    exit 1
}
start=$(cut -d' ' -f1 /proc/uptime)
for ko in /lib/modules/net/*.ko; do
    [ -e "$ko" ] || fail "no modules in /lib/modules/net"
    name=$(basename "$ko" .ko)
    name=${name#[0-9][0-9]-}
    # already there (built in, or loaded before)
    [ -d "/sys/module/$name" ] && continue
    insmod "$ko" || fail "insmod $ko"
done
# the driver binds the card as its module loads; give the kernel 5 s
i=0
while [ ! -e "/sys/class/net/$IF" ]; do
    [ $i -lt 50 ] || fail "no $IF (interfaces: $(ls /sys/class/net | tr '\n' ' '))"
    sleep 0.1
    i=$((i + 1))
done
ip link set lo up || fail "lo up"
ip addr add 10.0.2.15/24 dev "$IF" || fail "address of $IF"
ip link set "$IF" up || fail "$IF up"
ip route add default via 10.0.2.2 || fail "default route"
# Carrier on an open interface is when it moves packets: its queue starts
# then (at the open, or at once on the urgent carrier event); operstate
# follows only with the kernel's link watch, a second later.
i=0
while [ "$(cat "/sys/class/net/$IF/carrier" 2>/dev/null)" != 1 ]; do
    [ $i -lt 100 ] || fail "no carrier on $IF within 5 s"
    sleep 0.05
    i=$((i + 1))
done
end=$(cut -d' ' -f1 /proc/uptime)
echo "=== NET up $(awk "BEGIN { printf \"%.2f\", $end - $start }")"
