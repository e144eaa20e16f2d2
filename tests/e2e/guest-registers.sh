#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# End to end: a Linux guest finds the card through sysfs, reads its BAR0
# with devmem and takes a SNAPSHOT. Expected register values are worked out
# by hand from the layout rules of FACTS.md. TAP output.
REPO=$(cd "$(dirname "$0")/../.." && pwd)
n=0 fail=0
check() {   # description, command...
    local d=$1; shift
    n=$((n + 1))
    if "$@"; then echo "ok $n - $d"; else echo "not ok $n - $d"; fail=1; fi
}
has() { grep -Eq "$1" "$out"; }

echo "1..8"
initrd=$(mktemp --suffix=.gz) out=$(mktemp)
trap 'rm -f "$initrd" "$out"' EXIT
"$REPO/scripts/guest-initramfs.sh" "$initrd" "$REPO/guest/show-registers.sh"

# 2 endpoints, 2 DMA ports, RQ with 4 regions: PCIe probe
# 1 + 2 x (6 + 4) + 14 = 35 channels, DMA probe 1 + 2 x 2 x (6 + 2) = 33,
# 68 per endpoint, 136 counters in 256 entries.
"$REPO/scripts/guest-run.sh" "$initrd" \
    -object telemetry-traffic-pattern,id=t0,rq-frame-bytes=256,tags-free=100 \
    -device ndk-pcie-telemetry,traffic=t0,pcie-endpoints=2,dma-ports=2,pcie-rq-mfb-regions=4 \
    > "$out" 2>&1
check "guest ran to its end" has '^GUEST-EXIT 0'
check "MAGIC" has 'MAGIC +0x00 +0x50544C4D'
check "CFG_TOPOLOGY 2 endpoints, 2 ports, 4 probes" has 'CFG_TOPOLOGY +0x08 +0x00040202'
check "CFG_LAYOUT 256 entries, 48 bit, 68 per endpoint" has 'CFG_LAYOUT +0x0c +0x44300100'
check "CFG_PCIE 35 channels, 2 buses, 4 regions, 14 brakes" has 'CFG_PCIE +0x10 +0x0E040223'
check "CFG_DMA 33 channels, 4 buses, 2 regions" has 'CFG_DMA +0x14 +0x00020421'
check "PCIE_TAGS free 100, lowest 100" has 'PCIE_TAGS +0x80 +0x00640064'
# RQ runs at full rate: a word every cycle. The PCIe probe of this card has
# 35 channels in 5 groups of 8, read out slot by slot, 6 cycles apart: the
# words (counter 1, slot 1) cover 6 cycles more than the cycle counter
# (counter 0, slot 0) in every window, less cycle 0 (the reset's last, in
# which no word counts): words = cycles + 5. The accumulator applies a
# window's deltas one by one (3 MI cycles each), so a SNAPSHOT may fall
# after the cycles delta of the newest window and before its words delta:
# then cycles lead by one DRAIN_PERIOD (4096) less those 5, never otherwise.
c0=$(awk '$1 == "[" && $2 == "0]" {print $3}' "$out" | tr -d "\r")
c1=$(awk '$1 == "[" && $2 == "1]" {print $3}' "$out" | tr -d "\r")
check "RQ words are PCIe cycles + 5 in the snapshot, but for a window in flight ($c0, $c1)" \
    test -n "$c0" -a "$c0" != 0 -a -n "$c1" -a \
    \( "$((${c1:-0} - c0))" = 5 -o "$((c0 - ${c1:-0}))" = 4091 \)
[ $fail = 0 ] || { echo "# guest console:"; sed 's/^/# /' "$out"; }
exit $fail
