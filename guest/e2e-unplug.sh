#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of tests/e2e/guest-unplug.py: pcie-telemetry watches the card
# behind the root port while the host unplugs it. Prints
#   === UNPLUG                once the first report is out: the host's cue
#   === RC unplug <status>    as the tool ends (HANG if not within 30 s)
#   === STDOUT, === STDERR    what the tool printed
#   === SYSFS <present|gone>  the card's sysfs directory afterwards
T=pcie-telemetry
CARD=0000:01:00.0
$T -d $CARD -w -t 0.2 -j > /tmp/out 2> /tmp/err &
pid=$!
# the first report (or an early end) before the cue, within 20 s
i=0
while [ ! -s /tmp/out ] && kill -0 $pid 2>/dev/null && [ $i -lt 200 ]; do
    sleep 0.1
    i=$((i + 1))
done
echo "=== UNPLUG"
# pciehp waits 5 s for the attention button; ACPI hotplug does not wait
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 300 ]; do
    sleep 0.1
    i=$((i + 1))
done
if kill -0 $pid 2>/dev/null; then
    kill -9 $pid
    wait $pid
    rc=HANG
else
    wait $pid
    rc=$?
fi
echo "=== RC unplug $rc"
# pciehp powers the slot off and a second later turns its power indicator
# off, which is when QEMU unplugs the card; stay up until the slot shows no
# card (presence detect), 5 s at most
i=0
while [ $i -lt 50 ] && grep -qs 1 /sys/bus/pci/slots/*/adapter; do
    sleep 0.1
    i=$((i + 1))
done
echo "=== STDOUT"
cat /tmp/out
echo "=== STDERR"
cat /tmp/err
if [ -e /sys/bus/pci/devices/$CARD ]; then
    echo "=== SYSFS present"
else
    echo "=== SYSFS gone"
fi
exit 0
