#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of tests/e2e/guest-prometheus.py: bring up the user network,
# run the exporter on every address, port 9441, and keep it running until
# the host writes "done" to the second serial port (/dev/ttyS1), 150 s at
# most. Prints
#   === NET up <seconds>          (from /net-up.sh)
#   pcie-telemetry: serving ...   (the exporter's own line)
#   === NOCAP <status> <message>  the exporter without CAP_SYS_ADMIN
#   === EXPORTER <pid>
#   === CAPS <CapEff>              of the exporter (CAP_SYS_ADMIN only)
#   === CPU <utime> <stime> <ticks per second>   the exporter's CPU time
#   === HOST <line>
sh /net-up.sh || exit 1
pcie-telemetry --list
# As its systemd unit runs it: root with CAP_SYS_ADMIN as the only
# capability (setpriv narrows the bounding set, which is what a root exec
# gets); with no capability at all it must refuse.
# (util-linux's setpriv: busybox's has no --bounding-set)
setpriv=/usr/local/sbin/setpriv
run=
if [ -x $setpriv ]; then
    out=$($setpriv --bounding-set=-all --inh-caps=-all \
          pcie-telemetry --listen 127.0.0.1:9442 2>&1)
    echo "=== NOCAP $? $(echo "$out" | head -1)"
    run="$setpriv --bounding-set=-all,+sys_admin --inh-caps=-all"
fi
$run pcie-telemetry --listen 0.0.0.0:9441 &
pid=$!
echo "=== EXPORTER $pid"
i=0
while [ "$(cat /proc/$pid/comm 2>/dev/null)" != pcie-telemetry ] &&
      [ $i -lt 50 ]; do
    sleep 0.1
    i=$((i + 1))
done
echo "=== CAPS $(awk '/^CapEff/ { print $2 }' /proc/$pid/status)"
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
