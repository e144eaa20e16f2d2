#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Smoke test of the 6.12 guest of scripts/guest-kernel-612.sh: boots it on
# q35 with a PCIe root port (QEMU's own, which has no RAS DES capability),
# loads the DesignWare PCIe PMU driver built out of tree (guest side:
# guest/e2e-dwc-smoke.sh), checks that it loads and binds nothing, and that
# perf runs a system-wide software event. Prints PASS/FAIL lines and a
# closing count; exit 0 if all passed, 1 if not, 77 (skipped) if the kernel
# or QEMU cannot be had here.
# QEMU: $QEMU, else the project's build/qemu-system-x86_64, else one on PATH.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
skip() { echo "SKIP: $*"; exit 77; }

k612=$REPO/scripts/guest-kernel-612.sh
kernel=$("$k612"); rc=$?
[ $rc = 77 ] && skip "the 6.12 guest kernel cannot be made here (see above)"
[ $rc = 0 ] || { echo "FAIL: guest-kernel-612.sh exited $rc"; echo "0 passed, 1 failed"; exit 1; }
if ! module=$("$k612" --module) || ! release=$("$k612" --release) ||
   ! mapfile -t perf_files < <("$k612" --perf-files) || [ ${#perf_files[@]} = 0 ]; then
    echo "FAIL: guest-kernel-612.sh gave no module or perf"; echo "0 passed, 1 failed"; exit 1
fi

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
"$REPO/scripts/guest-initramfs.sh" "$initrd" "$REPO/guest/e2e-dwc-smoke.sh" \
    "$module:/lib/modules/dwc_pcie_pmu.ko" "${perf_files[@]}" ||
    { echo "FAIL: cannot build the initramfs"; echo "0 passed, 1 failed"; exit 1; }

t0=$(date +%s.%N)
GUEST_KERNEL=$kernel QEMU=$qemu GUEST_TIMEOUT=${GUEST_TIMEOUT:-120} \
    "$REPO/scripts/guest-run.sh" "$initrd" \
    -device pcie-root-port,id=rp0,chassis=1,slot=1 > "$out" 2>&1
t1=$(date +%s.%N)
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

echo "# kernel $release ($kernel), QEMU $qemu"
echo "# guest ran $(awk "BEGIN {printf \"%.1f\", $t1 - $t0}") s from launch to power-off; userspace at $(val UPTIME) s of guest uptime"
echo "# lockdown: $(val LOCKDOWN); taint after insmod: $(val TAINTED)"
sed -n 's/^=== DMESG /# dmesg: /p' "$out"
echo "# perf list | head:"
block 'perf list' | sed 's/^/#   /'
echo "# perf stat -a -e cpu-clock sleep 0.1:"
block 'perf stat' | sed 's/^/#   /'
echo "# /sys/bus/event_source/devices: $(val EVENT-SOURCES)"

check "guest ran to its end" has '^GUEST-EXIT 0'
check "guest kernel is $release" test "$(val KERNEL)" = "$release"
# QEMU's pcie-root-port is 1b36:000c, class 0x060400
check "the pcie-root-port is on the bus" has '^=== PCI [0-9a-f:.]+ 0x1b36 0x000c 0x0604'
check "insmod dwc_pcie_pmu.ko succeeded" test "$(val INSMOD)" = 0
check "dwc_pcie_pmu is in /proc/modules" has '^=== MODULE loaded'
check "perf list lists software events" has '^ +cpu-clock +\[Software event\]'
stat_ok() {
    [ "$(val PERF-STAT)" = 0 ] && block 'perf stat' | grep -q "Performance counter stats for 'system wide'" &&
        block 'perf stat' | grep -Eq '^ +[0-9.,]+ +msec +cpu-clock'
}
check "perf stat -a counted cpu-clock system wide" stat_ok
check "the software PMU is in /sys/bus/event_source/devices" has '^=== EVENT-SOURCES .*\bsoftware\b'
# QEMU's root port has no RAS DES capability: nothing to bind
no_dwc() { ! has '^=== EVENT-SOURCES .*dwc_rootport'; }
check "no dwc_rootport PMU without a RAS DES root port" no_dwc
if [ $failed != 0 ]; then
    echo "# guest console:"
    sed 's/^/# /' "$out"
fi
echo "$passed passed, $failed failed"
[ $failed = 0 ]
