#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build the stand-in for the nfb driver (nfb_standin.c) for the guest
# kernel, against Debian's linux-headers package of that very kernel
# (scripts/guest-kernel-headers.sh, which installs it if need be), in OUTDIR
# (never in the source tree: the sources are copied there). Prints the path
# of the module. Rebuilds only when a source or the headers changed.
# Exit status: 0 built; 77 the headers cannot be had (the reason on stderr);
# 1 the build failed.
# usage: build.sh OUTDIR
set -euo pipefail
SRC=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$SRC/../../.." && pwd)
out=${1:?usage: build.sh OUTDIR}
rc=0
headers=$("$REPO/scripts/guest-kernel-headers.sh") || rc=$?
[ $rc = 0 ] || exit $rc
mkdir -p "$out"
out=$(cd "$out" && pwd)
stamp="$headers $(cat "$SRC/Kbuild" "$SRC/nfb_standin.c" | md5sum)"
if [ -s "$out/nfb_standin.ko" ] && [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "$out/nfb_standin.ko"
    exit 0
fi
rm -f "$out/nfb_standin.ko" "$out/.stamp"
cp "$SRC/Kbuild" "$SRC/nfb_standin.c" "$out/"
log=$out/build.log
if ! make -C "$headers" M="$out" modules > "$log" 2>&1; then
    echo "nfb-standin: the build failed:" >&2
    cat "$log" >&2
    exit 1
fi
# the stand-in must not warn either
if grep -E 'warning:|WARNING:' "$log" >&2; then
    echo "nfb-standin: the build warned (log: $log)" >&2
    exit 1
fi
echo "$stamp" > "$out/.stamp"
echo "$out/nfb_standin.ko"
