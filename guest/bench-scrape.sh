#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of tests/bench/scrape-cost.py: bring up the user network, then
# follow the host's commands on the second serial port (/dev/ttyS1):
#   start ARGS   (re)start pcie-telemetry --listen 0.0.0.0:9441 ARGS
#   cpu          print "=== CPU <utime> <stime>" of the exporter (1/100 s)
#   done         stop the exporter and end
sh /net-up.sh || exit 1
# open once: a serial port nobody holds open drops what arrives
exec 3< /dev/ttyS1
stty -F /dev/ttyS1 -echo 2>/dev/null
echo "=== READY"
pid=
while read -r cmd args <&3; do
    case $cmd in
    start)
        [ -n "$pid" ] && kill $pid && wait $pid
        # shellcheck disable=SC2086
        pcie-telemetry --listen 0.0.0.0:9441 $args 3<&- &
        pid=$!
        ;;
    cpu)
        echo "=== CPU $(cut -d' ' -f14,15 /proc/$pid/stat)"
        ;;
    done)
        [ -n "$pid" ] && kill $pid && wait $pid
        exit 0
        ;;
    esac
done
exit 1
