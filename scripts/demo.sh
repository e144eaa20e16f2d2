#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The main job: set everything up, boot a Linux guest with a virtual
# ndk-pcie-telemetry card driven by the ptc generator (a model of the PCIe
# transaction controller), and print what pcie-telemetry reports in it.
# The card sits behind a PCIe root port, as on a real host (0000:01:00.0);
# the guest has lspci too.
#   scripts/demo.sh            report and power off
#   scripts/demo.sh --shell    report, then a shell in the guest (exit or
#                              Ctrl-A X leaves)
#   scripts/demo.sh --arm64    the same in an arm64 guest (-M virt, Debian's
#                              arm64 kernel, the tool cross-built; its
#                              first run builds qemu-system-aarch64 and
#                              fetches the guest: about 10 minutes more)
# Further arguments are passed to QEMU, e.g. to change the card:
#   scripts/demo.sh -global ndk-pcie-telemetry.dma-ports=2
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
shell=0
arm64=0
while [ $# -gt 0 ]; do
    case "$1" in
        --shell) shell=1; shift;;
        --arm64) arm64=1; shift;;
        *) break;;
    esac
done
if [ $arm64 = 1 ]; then
    "$REPO/scripts/setup.sh" --arm64
    printf '\n==> Preparing the arm64 guest (Debian kernel, busybox, pcie-telemetry cross-built)\n'
    export GUEST_ARCH=arm64
    "$REPO/scripts/guest-arm64.sh" --image > /dev/null
    mapfile -t files < <("$REPO/scripts/guest-arm64.sh" --tool-files)
    BUSYBOX=$("$REPO/scripts/guest-arm64.sh" --busybox)
    export BUSYBOX
    initrd="$REPO/build/demo-initramfs-arm64.gz"
else
    "$REPO/scripts/setup.sh"
    printf '\n==> Preparing the guest (Debian kernel, busybox and pcie-telemetry)\n'
    "$REPO/scripts/guest-kernel.sh" > /dev/null
    mapfile -t files < <("$REPO/scripts/guest-tool-files.sh" "$REPO/build"
                         "$REPO/scripts/guest-lspci-files.sh")
    initrd="$REPO/build/demo-initramfs.gz"
fi
"$REPO/scripts/guest-initramfs.sh" "$initrd" "$REPO/guest/demo-report.sh" \
    "${files[@]}"
card=(-object telemetry-traffic-ptc,id=traffic0
      -device pcie-root-port,id=rp0,chassis=1,slot=1
      -device ndk-pcie-telemetry,bus=rp0,traffic=traffic0)
if [ $shell = 0 ]; then
    printf '\n==> Booting the guest with the virtual card (about 5 s)\n'
    exec "$REPO/scripts/guest-run.sh" "$initrd" "${card[@]}" "$@"
fi
printf '\n==> Booting the guest with the virtual card; a shell follows\n'
exec "$REPO/scripts/guest-run.sh" --shell "$initrd" "${card[@]}" "$@"
