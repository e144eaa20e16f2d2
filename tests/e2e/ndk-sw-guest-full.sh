#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# scripts/ndk-sw-guest.sh end to end on the prepared ndk-sw checkout that
# NDK_SW_DIR names, with two cards: the nfb driver binds both behind their
# root ports, nfb-info names the card and its slot, nfb-bus -l lists the
# telemetry block, pcie-telemetry -d /dev/nfbN reads each, and so does
# pynfb when /usr/bin/python3 can import fdt (else a note says it is left
# out). The checkout is left as it was (git status, or its files' hashes),
# a second run reuses the build, and a copy of the checkout without
# fdt/fdt.h is refused as unprepared. Skipped (exit 77) when NDK_SW_DIR is
# not set.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${NDK_SW_DIR:-}" ]; then
    echo "SKIP: NDK_SW_DIR is not set (the directory of a prepared ndk-sw checkout)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
state() {
    if git -C "$NDK_SW_DIR" rev-parse --git-dir > /dev/null 2>&1; then
        git -C "$NDK_SW_DIR" status --porcelain --ignored
        git -C "$NDK_SW_DIR" rev-parse HEAD
    fi
    (cd "$NDK_SW_DIR" && find . -path ./.git -prune -o -type f -print0 |
        LC_ALL=C sort -z | xargs -0 sha256sum)
}
state > "$tmp/before"

second=(-device pcie-root-port,id=rp1,chassis=2,slot=2
        -device ndk-pcie-telemetry,bus=rp1,vendor-id=0x18ec,device-id=0xc000)
"$REPO/scripts/ndk-sw-guest.sh" "$NDK_SW_DIR" "${second[@]}" < /dev/null 2>&1 |
    tee "$tmp/run1"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || fail "ndk-sw-guest.sh exited with $rc"
out=$tmp/run1
for p in '^GUEST-EXIT 0' \
         'nfb 0000:01:00.0: .*successfully initialized' \
         'nfb 0000:02:00.0: .*successfully initialized' \
         '^\$ nfb-info -d /dev/nfb0' '^\$ nfb-info -d /dev/nfb1' \
         'Card name +: COMBO-GENERIC' \
         'PCI slot +: 0000:01:00.0' 'PCI slot +: 0000:02:00.0' \
         '^0x00000000: cesnet,ofm,pcie_telemetry_mi +/firmware/mi_bus0/pcie_telemetry@0' \
         '^\$ pcie-telemetry -d /dev/nfb1' \
         '^PCIe telemetry - 1 endpoint\(s\)' '^PTC -> PCIe \(RQ\)'; do
    grep -qE -- "$p" "$out" || fail "no '$p' in the output"
done
[ "$(grep -cE '^PCIe telemetry - 1 endpoint' "$out")" = 2 ] ||
    fail "pcie-telemetry did not report both cards"
# pynfb when Python has what it needs (the module fdt), a note when not
if /usr/bin/python3 -c 'import fdt' 2> /dev/null; then
    [ "$(grep -cE '^pynfb: /firmware/mi_bus0/pcie_telemetry@0 register 0x0 = 0x50544c4d' "$out")" = 2 ] ||
        fail "pynfb did not read both cards' telemetry block"
else
    grep -q '^(pynfb left out: ' "$out" || fail "no note that pynfb is left out"
fi
if grep -qE 'ndk-sw-guest: |mapping BAR0 .* refused|Traceback' "$out"; then
    fail "an error in the guest"
fi
state > "$tmp/after"
diff -u "$tmp/before" "$tmp/after" > "$tmp/diff" ||
    { cat "$tmp/diff"; fail "the checkout changed"; }

# the second run builds nothing
start=$(date +%s)
"$REPO/scripts/ndk-sw-guest.sh" "$NDK_SW_DIR" < /dev/null > "$tmp/run2" 2>&1 ||
    { tail -30 "$tmp/run2"; fail "the second run failed"; }
grep -q 'built before for' "$tmp/run2" || fail "the second run did not reuse the build"
grep -q '^GUEST-EXIT 0' "$tmp/run2" || fail "no GUEST-EXIT 0 in the second run"
echo "second run: $(( $(date +%s) - start )) s"

# without the archive's fdt.h the same checkout is not prepared
mkdir "$tmp/copy"
(cd "$NDK_SW_DIR" && tar --exclude=./.git -cf - .) | tar -C "$tmp/copy" -xf -
rm -f "$tmp/copy/drivers/kernel/drivers/fdt/fdt.h"
"$REPO/scripts/ndk-sw-guest.sh" "$tmp/copy" > "$tmp/run3" 2>&1
rc=$?
[ $rc = 1 ] || fail "an unprepared copy: exit status $rc, not 1"
grep -q 'is not prepared' "$tmp/run3" || fail "an unprepared copy: no 'is not prepared'"
grep -q '^    drivers/kernel/drivers/fdt/fdt.h$' "$tmp/run3" ||
    fail "an unprepared copy: fdt.h not named"
echo "PASS"
