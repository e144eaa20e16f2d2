#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The main job: set everything up, boot a Linux guest with a virtual
# ndk-pcie-telemetry card driven by the built-in pattern source, and show
# what the guest reads from the card's BAR0.
# Extra arguments are passed to QEMU, e.g. to change the card:
#   scripts/demo.sh -global ndk-pcie-telemetry.dma-ports=2
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
"$REPO/scripts/setup.sh"
printf '\n==> Preparing the guest (Debian kernel, busybox initramfs)\n'
"$REPO/scripts/guest-kernel.sh" > /dev/null
initrd="$REPO/build/demo-initramfs.gz"
"$REPO/scripts/guest-initramfs.sh" "$initrd" "$REPO/guest/show-registers.sh"
printf '\n==> Booting the guest with the virtual card (about 5 s)\n'
exec "$REPO/scripts/guest-run.sh" "$initrd" \
    -object telemetry-traffic-pattern,id=traffic0,rq-frame-bytes=512,rq-gap=2,rc-frame-bytes=256,rc-stall=1,up-frame-bytes=100,up-gap=1,up-stall=1,down-frame-bytes=256,down-gap=3,tags-free=100,stfifo-free=640,brake=1 \
    -device ndk-pcie-telemetry,traffic=traffic0 "$@"
