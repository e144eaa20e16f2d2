#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Boot the project's QEMU with a Debian kernel and an initramfs under TCG,
# print the guest console, and succeed only if the guest script ran to its
# end with status 0.
# With --shell the console is interactive instead (stdin, Ctrl-A X leaves,
# "shell" on the kernel command line for the guest script to see), with no
# time limit and no check of the end.
# GUEST_APPEND, if set, is appended to the kernel command line (e.g.
# iomem=relaxed). GUEST_KERNEL, if set, is the kernel to boot instead of
# scripts/guest-kernel.sh's (e.g. scripts/guest-kernel-612.sh's).
# GUEST_ARCH=arm64 boots build/qemu-system-aarch64 (scripts/setup.sh
# --arm64) as `-M virt` with scripts/guest-arm64.sh's kernel instead: the
# console is virt's PL011 (ttyAMA0), PCIe devices go on pcie.0 or below
# root ports on it, as on q35 (docs/arm64.md).
# usage: guest-run.sh [--shell] INITRAMFS.gz [QEMU ARGS ...]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
shell=0
if [ "${1:-}" = --shell ]; then
    shell=1
    shift
fi
initrd=$1
shift
case "${GUEST_ARCH:-x86_64}" in
x86_64)
    kernel=${GUEST_KERNEL:-$("$REPO/scripts/guest-kernel.sh")}
    append="console=ttyS0 quiet panic=-1 mitigations=off"
    qemu=("${QEMU:-$REPO/build/qemu-system-x86_64}" ${FIRMWARE_DIR:+-L "$FIRMWARE_DIR"}
          -machine q35 -accel tcg -cpu max -smp 1 -m 256M);;
arm64)
    kernel=${GUEST_KERNEL:-$("$REPO/scripts/guest-arm64.sh" --image)}
    append="console=ttyAMA0 quiet panic=-1"
    # pauth-impdef: the cheap pointer authentication under TCG; GICv3
    # with its ITS gives the root ports' devices MSI
    qemu=("${QEMU:-$REPO/build/qemu-system-aarch64}"
          -machine virt,gic-version=3 -accel tcg -cpu max,pauth-impdef=on
          -smp 1 -m 1G);;
*)
    echo "guest-run.sh: GUEST_ARCH=$GUEST_ARCH: x86_64 or arm64" >&2
    exit 2;;
esac
append="$append${GUEST_APPEND:+ $GUEST_APPEND}"
qemu+=(-nodefaults -display none -no-reboot -kernel "$kernel" -initrd "$initrd")
if [ $shell = 1 ]; then
    exec "${qemu[@]}" -serial mon:stdio -append "$append shell" "$@"
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
timeout "${GUEST_TIMEOUT:-120}" "${qemu[@]}" \
    -chardev stdio,id=ser0,signal=off -serial chardev:ser0 \
    -append "$append" "$@" < /dev/null | tee "$log" || true
grep -q '^GUEST-EXIT 0' "$log"
