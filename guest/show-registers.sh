#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs inside the guest: find every ndk-pcie-telemetry function through
# sysfs, read its configuration registers from BAR0 with devmem, take a
# SNAPSHOT and print the counters of endpoint 0.
found=0
for d in /sys/bus/pci/devices/*; do
    id="$(cat "$d/vendor"):$(cat "$d/device")"
    case "$id" in
        0x1234:0x0d7b|0x18ec:*) ;;
        *) continue ;;
    esac
    base=$(head -n 1 "$d/resource" | awk '{print $1}')
    found=1
    rd() { devmem $(printf '0x%x' $((base + $1))) 32; }
    wr() { devmem $(printf '0x%x' $((base + $1))) 32 "$2"; }
    echo "card $(basename "$d") ($id), BAR0 at $base"
    for r in MAGIC:0x00 VERSION:0x04 CFG_TOPOLOGY:0x08 CFG_LAYOUT:0x0C \
             CFG_PCIE:0x10 CFG_DMA:0x14 CFG_DRAIN:0x18 CNT_BASE:0x1C \
             STATUS:0x24 READ_SEL:0x28 CFG_REGIONS:0x2C CFG_WIDTH:0x30 \
             CFG_HIST:0x34 CFG_CAPACITY:0x38 CFG_WIDTH_DMA:0x3C \
             PCIE_STATUS:0x40 PCIE_TAGS:0x80 PCIE_STFIFO:0xC0; do
        printf '  %-14s 0x%02x  %s\n' "${r%%:*}" "${r##*:}" "$(rd "${r##*:}")"
    done
    [ "$(rd 0x00)" = "0x50544C4D" ] || { echo "  wrong MAGIC"; exit 1; }
    layout=$(rd 0x0C)
    per_ep=$(( (layout >> 24) & 0xff ))
    wr 0x28 0                       # read the snapshot copy
    wr 0x20 1                       # SNAPSHOT
    n=0
    while [ $(( $(rd 0x24) & 1 )) = 1 ] && [ $n -lt 1000 ]; do n=$((n + 1)); done
    echo "  counters of endpoint 0 after SNAPSHOT ($per_ep):"
    e=0
    while [ $e -lt "$per_ep" ]; do
        lo=$(rd $((0x8000 + 8 * e)))
        hi=$(rd $((0x8000 + 8 * e + 4)))
        printf '    [%2d] %d\n' $e $(( (hi << 32) | lo ))
        e=$((e + 1))
    done
done
[ $found = 1 ] || { echo "no ndk-pcie-telemetry card found"; exit 1; }
