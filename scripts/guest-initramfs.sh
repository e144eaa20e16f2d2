#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build a gzip'ed initramfs: busybox, guest/init and MAIN as /guest-main.sh,
# plus any further FILE:PATH pairs (e.g. a tool and its libraries). A FILE
# that is a directory is copied whole as the directory PATH (e.g.
# scripts/pciutils.sh's as /opt/pciutils).
# The environment variable BUSYBOX names the busybox binary to put in as
# /bin/busybox (default /bin/busybox, the host's; e.g. the arm64 one of
# scripts/guest-arm64.sh --busybox for an arm64 guest).
# usage: guest-initramfs.sh OUT.gz MAIN [FILE:PATH ...]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
out=$1 main=$2
shift 2
root=$(mktemp -d)
chmod 755 "$root"   # mktemp makes it 0700: nobody could not reach /bin
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,etc,root}
cp "${BUSYBOX:-/bin/busybox}" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
install -m 755 "$REPO/guest/init" "$root/init"
install -m 755 "$main" "$root/guest-main.sh"
echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >> "$root/etc/passwd"
for pair in "$@"; do
    mkdir -p "$root/$(dirname "${pair#*:}")"
    if [ -d "${pair%%:*}" ]; then
        mkdir -p "$root/${pair#*:}"
        cp -a "${pair%%:*}/." "$root/${pair#*:}/"
    else
        cp -L "${pair%%:*}" "$root/${pair#*:}"
    fi
done
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out"
