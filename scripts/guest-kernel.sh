#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fetch a Debian 6.1 kernel and unpack it to an uncompressed vmlinux, which
# QEMU boots through PVH in about 3 s under TCG (a bzImage takes 6-9 s).
# Prints the path of the vmlinux. Cached; a rerun prints the cached path.
set -euo pipefail
CACHE=${NDK_TELEMETRY_CACHE:-$HOME/.cache/ndk-pcie-telemetry}
dir="$CACHE/kernel"
mkdir -p "$dir"
if [ -s "$dir/vmlinux" ]; then
    echo "$dir/vmlinux"
    exit 0
fi
# Debian keeps only the newest ABI of a kernel series: take what is there.
pkg=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' |
      awk '{print $1}' | sort -V | tail -1)
[ -n "$pkg" ] || { echo "guest-kernel: no linux-image-6.1.0-*-amd64 package found; run apt-get update" >&2; exit 1; }
echo "==> Downloading $pkg (about 70 MB)" >&2
rm -rf "$dir/tmp"; mkdir -p "$dir/tmp"
(cd "$dir/tmp" && apt-get download "$pkg" >&2)
dpkg-deb -x "$dir"/tmp/*.deb "$dir/tmp/x"
vmlinuz=$(ls "$dir"/tmp/x/boot/vmlinuz-*)
# The bzImage carries an XZ stream; the payload from its magic on is vmlinux.
off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -1 | cut -d: -f1 || true)
[ -n "$off" ] || { echo "guest-kernel: no XZ payload in $vmlinuz" >&2; exit 1; }
tail -c +$((off + 1)) "$vmlinuz" | xz -dc 2>/dev/null > "$dir/vmlinux.tmp" || true
[ -s "$dir/vmlinux.tmp" ] || { echo "guest-kernel: cannot decompress $vmlinuz" >&2; exit 1; }
mv "$dir/vmlinux.tmp" "$dir/vmlinux"
echo "$pkg" > "$dir/package"
rm -rf "$dir/tmp"
echo "$dir/vmlinux"
