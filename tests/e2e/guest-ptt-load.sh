#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The HiSilicon PCIe Tune and Trace driver (drivers/hwtracing/ptt/hisi_ptt.c,
# built out of tree by scripts/guest-kernel-612.sh --ptt-module) loads in
# the 6.12 guest: boots it on q35 with no special devices, runs insmod
# (guest side: guest/e2e-ptt-load.sh) and checks that the module loads,
# registers its PCI driver, binds nothing (there is no 19e5:a12e device),
# registers no PMU, and unloads. Prints what the guest printed, PASS/FAIL
# lines and a closing count; exit 0 if all passed, 1 if not, 77 (skipped)
# if the kernel or QEMU cannot be had here. Not a meson test (yet).
# QEMU: $QEMU, else the project's build/qemu-system-x86_64, else one on PATH.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; echo "0 passed, 1 failed"; exit 1; }

k612=$REPO/scripts/guest-kernel-612.sh
kernel=$("$k612"); rc=$?
[ $rc = 77 ] && skip "the 6.12 guest kernel cannot be made here (see above)"
[ $rc = 0 ] || fail "guest-kernel-612.sh exited $rc"
module=$("$k612" --ptt-module); rc=$?
[ $rc = 77 ] && skip "hisi_ptt.ko cannot be made here (see above)"
[ $rc = 0 ] || fail "guest-kernel-612.sh --ptt-module exited $rc"
release=$("$k612" --release)

qemu=${QEMU:-}
if [ -z "$qemu" ]; then
    qemu=$REPO/build/qemu-system-x86_64
    [ -x "$qemu" ] || qemu=$(command -v qemu-system-x86_64 || true)
fi
if [ -z "$qemu" ] || [ ! -x "$qemu" ]; then
    skip "no QEMU: set QEMU=/path/to/qemu-system-x86_64 or run scripts/setup.sh"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
initrd=$tmp/initrd.gz out=$tmp/console
"$REPO/scripts/guest-initramfs.sh" "$initrd" "$REPO/guest/e2e-ptt-load.sh" \
    "$module:/lib/modules/hisi_ptt.ko" || fail "cannot build the initramfs"

GUEST_KERNEL=$kernel QEMU=$qemu GUEST_TIMEOUT=${GUEST_TIMEOUT:-120} \
    "$REPO/scripts/guest-run.sh" "$initrd" > "$out" 2>&1
tr -d '\r' < "$out" > "$out.txt"
out=$out.txt

passed=0 failed=0
check() {   # description, command...
    local d=$1; shift
    if "$@"; then
        echo "PASS: $d"; passed=$((passed + 1))
    else
        echo "FAIL: $d"; failed=$((failed + 1))
    fi
}
has() { grep -Eq "$1" "$out"; }
val() { sed -n "s/^=== $1 //p" "$out" | head -1; }
block() { sed -n "/^=== BEGIN $1\$/,/^=== END $1\$/p" "$out" | sed '1d;$d'; }

echo "# kernel $release ($kernel), module $module, QEMU $qemu"
echo "# insmod /lib/modules/hisi_ptt.ko; echo rc=\$?; lsmod; dmesg | tail:"
block insmod | sed 's/^/#   /'
echo "# bound: $(val BOUND); event sources: $(val EVENT-SOURCES); taint: $(val TAINTED)"
echo "# dmesg after rmmod, hisi_ptt|taint|BUG|WARNING:"
block dmesg | sed 's/^/#   /'

no_dev() { ! has '^=== PCI \S+ 0x19e5 0xa12e'; }
insmod_ok() { block insmod | grep -qx 'rc=0'; }
no_pmu() { ! has '^=== EVENT-SOURCES .*hisi_ptt'; }
quiet_dmesg() { ! block dmesg | grep -q 'BUG\|WARNING'; }
check "guest ran to its end" has '^GUEST-EXIT 0'
check "guest kernel is $release" test "$(val KERNEL)" = "$release"
check "no 19e5:a12e device in the guest" no_dev
check "insmod hisi_ptt.ko succeeded (rc=0)" insmod_ok
check "hisi_ptt is in /proc/modules" has '^=== MODULE loaded'
check "the PCI driver hisi_ptt is registered" has '^=== DRIVER registered'
check "it binds no device" test "$(val BOUND)" = none
check "no hisi_ptt PMU in /sys/bus/event_source/devices" no_pmu
check "rmmod hisi_ptt succeeded" test "$(val RMMOD)" = 0
check "hisi_ptt is gone from /proc/modules" has '^=== MODULE gone'
check "no BUG or WARNING in dmesg" quiet_dmesg
if [ $failed != 0 ]; then
    echo "# guest console:"
    sed 's/^/# /' "$out"
fi
echo "$passed passed, $failed failed"
[ $failed = 0 ]
