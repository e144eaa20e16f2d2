#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of tests/e2e/guest-net.py: bring up the user network
# (/net-up.sh), serve a file of a fresh token with busybox httpd on port
# 8080 and stay up until the host writes "done" to the second serial port
# (/dev/ttyS1), 60 s at most. Prints
#   === NET up <seconds>       (or === NET failed <why>, from /net-up.sh)
#   === ADDR <address/prefix>  eth0's IPv4 address
#   === ROUTE <default route>
#   === SERVING <token>        /hello.txt holds "guest-net <token>"
#   === HOST <line>            what the host wrote (nothing: timed out)
sh /net-up.sh || exit 1
echo "=== ADDR $(ip -4 -o addr show dev eth0 | awk '{print $4}')"
echo "=== ROUTE $(ip route show default)"
mkdir -p /www
token=$(cat /proc/sys/kernel/random/uuid)
echo "guest-net $token" > /www/hello.txt
# without -f httpd listens before it goes to the background
httpd -p 8080 -h /www || exit 1
stty -F /dev/ttyS1 -echo 2>/dev/null
echo "=== SERVING $token"
cmd=
read -t 60 cmd < /dev/ttyS1
echo "=== HOST $cmd"
[ "$cmd" = done ]
