#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Print FILE:PATH pairs that put Debian's lspci (pciutils), the libpci it
# links and every further shared library it loads, and the PCI ID database
# /usr/share/misc/pci.ids when the host has it, into a guest root, for
# guest-initramfs.sh (like guest-tool-files.sh for the tool).
# usage: guest-lspci-files.sh
set -euo pipefail
lspci=$(command -v lspci || echo /usr/bin/lspci)
[ -x "$lspci" ] || { echo "guest-lspci-files.sh: lspci is missing; install pciutils (scripts/setup.sh does)" >&2; exit 1; }
lspci=$(realpath "$lspci")
echo "$lspci:/usr/bin/lspci"
ldd "$lspci" | awk '/=> \// {print $3} /^\t\/lib/ {print $1}' | sort -u |
while read -r so; do
    case $so in
    /lib64/*) echo "$so:$so" ;;
    *) echo "$so:/lib/x86_64-linux-gnu/$(basename "$so")" ;;
    esac
done
# the names of vendors and devices; without it lspci prints numbers
if [ -s /usr/share/misc/pci.ids ]; then
    echo "/usr/share/misc/pci.ids:/usr/share/misc/pci.ids"
fi
