#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The main job: set everything up, boot a Linux guest with a virtual
# ndk-pcie-telemetry card driven by the ptc generator (a model of the PCIe
# transaction controller), and show what the guest reads from its BAR0.
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
    -object telemetry-traffic-ptc,id=traffic0 \
    -device ndk-pcie-telemetry,traffic=traffic0 "$@"
