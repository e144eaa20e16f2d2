#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of tests/e2e/guest-prometheus.py: bring up the user network,
# run the exporter on every address, port 9441, and keep it running until
# the host writes "done" to the second serial port (/dev/ttyS1), 150 s at
# most. Prints
#   === NET up <seconds>          (from /net-up.sh)
#   pcie-telemetry: serving ...   (the exporter's own line)
#   === EXPORTER <pid>
#   === CPU <utime> <stime> <ticks per second>   the exporter's CPU time
#   === HOST <line>
sh /net-up.sh || exit 1
pcie-telemetry --list
pcie-telemetry --listen 0.0.0.0:9441 &
pid=$!
echo "=== EXPORTER $pid"
stty -F /dev/ttyS1 -echo 2>/dev/null
cmd=
read -t 150 cmd < /dev/ttyS1
# fields 14 and 15 of /proc/PID/stat; comm is "(pcie-telemetry)"
echo "=== CPU $(cut -d' ' -f14,15 /proc/$pid/stat) 100"
kill $pid
wait $pid
echo "=== EXPORTER-EXIT $?"
echo "=== HOST $cmd"
[ "$cmd" = done ]
