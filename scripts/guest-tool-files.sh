#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Print FILE:PATH pairs that put the pcie-telemetry tool, its library and
# every shared library they load into a guest root, for guest-initramfs.sh.
# This is also how to put the tool into one's own minimal image; a Debian
# image only needs the tool, libpcie-telemetry.so.0 and `apt install
# libpci3 liblzma5 libfdt1`.
# usage: guest-tool-files.sh [BUILD_DIR]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$REPO/build}
tool=$build/guest-tool/pcie-telemetry
lib=$build/guest-tool/libpcie-telemetry.so.0
for f in "$tool" "$lib"; do
    [ -e "$f" ] || { echo "guest-tool-files.sh: $f is missing; build with ninja -C $build" >&2; exit 1; }
done
echo "$tool:/usr/bin/pcie-telemetry"
echo "$lib:/usr/lib/x86_64-linux-gnu/libpcie-telemetry.so.0"
# ldd lists the whole closure; the tool's own library comes from the build
ldd "$tool" | awk '/=> \// {print $3} /^\t\/lib/ {print $1}' | sort -u |
while read -r so; do
    case $so in
    */libpcie-telemetry.so*) ;;
    /lib64/*) echo "$so:$so" ;;
    *) echo "$so:/lib/x86_64-linux-gnu/$(basename "$so")" ;;
    esac
done
