#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The kernel headers for building modules that the guest kernel loads (the
# tests' stand-in for the nfb driver): Debian's linux-headers package of the
# very kernel scripts/guest-kernel.sh boots, i.e. its package name with
# linux-image- turned into linux-headers-, at the Debian version in the
# vmlinux's banner ("... Debian 6.1.192-3 ..."). Installs it with apt-get
# when it is missing (as root). Prints the headers' directory,
# /usr/src/linux-headers-<release>, for make -C DIR M=....
# Exit status: 0 ready; 77 the package cannot be had (not root, no apt,
# the archive no longer has that version: the reason on stderr); 1 any
# other error.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "guest-kernel-headers: $*" >&2; }

kernel=$("$REPO/scripts/guest-kernel.sh")
banner=$(LC_ALL=C grep -a -o -m1 'Linux version 6\.1\.0-[0-9]*-amd64 [^%]*' "$kernel" |
         head -1 || true)
rel=$(sed -n 's/^Linux version \(6\.1\.0-[0-9]*-amd64\) .*/\1/p' <<< "$banner")
ver=$(sed -n 's/.* Debian \([0-9][^ ]*\) .*/\1/p' <<< "$banner")
if [ -z "$rel" ] || [ -z "$ver" ]; then
    say "cannot read the release and Debian version from the banner of $kernel"
    exit 1
fi
pkg=linux-headers-$rel
dir=/usr/src/linux-headers-$rel

installed() {
    [ "$(dpkg-query -W -f='${Status} ${Version}' "$pkg" 2>/dev/null)" = \
      "install ok installed $ver" ]
}
if ! installed; then
    have=$(dpkg-query -W -f='${Status} ${Version}' "$pkg" 2>/dev/null || true)
    if [ "${NDK_TELEMETRY_NO_APT:-0}" = 1 ] || ! command -v apt-get > /dev/null; then
        say "$pkg $ver is not installed (${have:-absent}) and apt is not to be used here"
        exit 77
    fi
    if [ "$(id -u)" != 0 ]; then
        say "$pkg $ver is not installed (${have:-absent}); install it as root: apt-get install $pkg=$ver"
        exit 77
    fi
    say "installing $pkg $ver (about 12 MB with its common part and kbuild)"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-upgrade \
            --no-install-recommends "$pkg=$ver" >&2; then
        say "cannot install $pkg=$ver (is it still in the archive? apt-get update, or rm -r the kernel cache for a newer kernel)"
        exit 77
    fi
    installed || { say "$pkg is not at $ver after the install"; exit 1; }
fi
# the headers' own idea of their release (the vermagic of what they build),
# and the symbol versions that modules are checked against
if ! grep -qx "#define UTS_RELEASE \"$rel\"" \
        "$dir/include/generated/utsrelease.h" 2>/dev/null ||
   [ ! -s "$dir/Module.symvers" ]; then
    say "$dir is not a complete tree for release $rel"
    exit 1
fi
echo "$dir"
