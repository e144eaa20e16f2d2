#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Boot the project's QEMU with a Debian kernel and an initramfs under TCG,
# print the guest console, and succeed only if the guest script ran to its
# end with status 0.
# usage: guest-run.sh INITRAMFS.gz [QEMU ARGS ...]
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
initrd=$1
shift
kernel=$("$REPO/scripts/guest-kernel.sh")
log=$(mktemp)
trap 'rm -f "$log"' EXIT
timeout "${GUEST_TIMEOUT:-120}" "$REPO/build/qemu-system-x86_64" \
    -machine q35 -accel tcg -cpu max -smp 1 -m 256M -nodefaults \
    -display none -no-reboot -chardev stdio,id=ser0,signal=off \
    -serial chardev:ser0 -kernel "$kernel" -initrd "$initrd" \
    -append "console=ttyS0 quiet panic=-1 mitigations=off" \
    "$@" < /dev/null | tee "$log" || true
grep -q '^GUEST-EXIT 0' "$log"
