#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Benchmark (not a test): CESNET's ndp-tool in a TCG guest against a card
# with dma-queues=1, under `perf record` of the QEMU process. For each run
# it prints ndp-tool's rate (packets/s and Gb/s as it reports them) and
# the share of QEMU's CPU samples in the card's model: the functions the
# device's object files define (the DMA engine, the transfer log, the
# telemetry block and the glue), found with nm; and the same as CPU time
# per packet (samples at 997 Hz over the packets sent), for the model and
# for QEMU as a whole.
#
#   tests/bench/ndp-guest-bench.sh NDK_SW_DIR [RUN ...]
#
# RUN is one of gen64, gen1500, read64, read1500, loop64 (default: all).
# The guest boots once per run; a first run that only boots and reads the
# counters ("boot") is subtracted from each, so "model %" is the share of
# the traffic's own part of the run, "all %" that of the whole run with
# its boot. Runs are sized to 20 to 30 s of traffic, so that the boot's
# own variation moves "model %" little.
# Needs a prepared ndk-sw checkout (see README.md) and perf (Debian's
# linux-perf).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { sed -n '4,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
NDK=$1
shift
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(gen64 gen1500 read64 read1500 loop64)
command -v perf > /dev/null || { echo "ndp-guest-bench: needs perf (apt-get install linux-perf)" >&2; exit 1; }
"$REPO/scripts/setup.sh" > /dev/null
QEMU_BIN=$(readlink -f "$REPO/build/qemu-system-x86_64")
OBJ=$(dirname "$QEMU_BIN")/libcommon.a.p
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the model's functions
nm --defined-only "$OBJ"/hw_misc_ndk-pcie-telemetry_*.o 2>/dev/null |
    awk '$2 ~ /^[tT]$/ {print $3}' | sort -u > "$work/model.syms"
[ -s "$work/model.syms" ] || { echo "ndp-guest-bench: no object files of the device in $OBJ" >&2; exit 1; }

cat > "$work/qemu.sh" <<EOF
#!/bin/sh
exec perf record -q -F 997 -o "$work/perf.data" -- "$QEMU_BIN" "\$@"
EOF
chmod +x "$work/qemu.sh"

gls=/firmware/mi_bus0/dbg_gls0
printf '%-9s %-44s %10s %8s %8s %6s %8s %9s %9s\n' run "ndp-tool" "packets/s" \
    "Gb/s" "model %" "all %" "samples" "model ns" "QEMU ns"
boot_all=0 boot_model=0
for run in boot "${runs[@]}"; do
    case $run in
        boot)     cmd="nfb-dma -i 0" ;;
        gen64)    cmd="ndp-tool generate -i 0 -s 64 -p 60000000" ;;
        gen1500)  cmd="ndp-tool generate -i 0 -s 1500 -p 25000000" ;;
        read64)   cmd="nfb-bus -p $gls 8 1; nfb-bus -p $gls/mfb_gen2dma 4 40; nfb-bus -p $gls/mfb_gen2dma 0 1; ndp-tool read -i 0 -p 60000000" ;;
        read1500) cmd="nfb-bus -p $gls 8 1; nfb-bus -p $gls/mfb_gen2dma 4 5dc; nfb-bus -p $gls/mfb_gen2dma 0 1; ndp-tool read -i 0 -p 30000000" ;;
        loop64)   cmd="nfb-bus -p $gls 0 1; ndp-tool loopback-hw -i 0 -s 64 -p 15000000" ;;
        *) echo "ndp-guest-bench: unknown run $run" >&2; exit 2 ;;
    esac
    rm -f "$work/perf.data"
    if ! QEMU="$work/qemu.sh" NDK_SW_CARD_PROPS=dma-queues=1 \
         NDK_SW_GUEST_MEM=512M NDK_SW_GUEST_RUN="$cmd" \
         "$REPO/scripts/ndk-sw-guest.sh" "$NDK" > "$work/$run.log" 2>&1; then
        echo "ndp-guest-bench: $run failed (log: $work/$run.log)" >&2
        tail -20 "$work/$run.log" >&2
        exit 1
    fi
    pps=$(awk -F: '/Avg speed \[Mpps\]/ {gsub(/ /,"",$2); print $2 * 1e6}' "$work/$run.log" | tail -1)
    gbps=$(awk -F: '/Avg speed L2 \[Mb\/s\]/ {gsub(/ /,"",$2); print $2 / 1000}' "$work/$run.log" | tail -1)
    perf report -i "$work/perf.data" --stdio --sort sym -F overhead,sample,sym \
        2> /dev/null > "$work/$run.report"
    # samples in all, and in the model's functions
    read -r all model < <(awk 'NR == FNR {m[$1] = 1; next}
        /%/ && $3 == "[.]" {a += $2; if ($4 in m) t += $2}
        END {print a + 0, t + 0}' "$work/model.syms" "$work/$run.report")
    if [ "$run" = boot ]; then
        boot_all=$all boot_model=$model
        printf '%-9s %-44s %10s %8s %8s %6s %8s %9s %9s\n' boot "(boot, nfb-dma)" - - - \
            "$(awk -v m="$model" -v a="$all" 'BEGIN {printf "%.2f", (a > 0) ? 100 * m / a : 0}')" "$all" - -
        continue
    fi
    share=$(awk -v m="$model" -v a="$all" -v bm="$boot_model" -v ba="$boot_all" \
        'BEGIN {printf "%.2f", (a > ba) ? 100 * (m - bm) / (a - ba) : 0}')
    whole=$(awk -v m="$model" -v a="$all" 'BEGIN {printf "%.2f", (a > 0) ? 100 * m / a : 0}')
    # CPU ns per packet of the traffic's part (perf samples at 997 Hz)
    pkts=$(echo "$cmd" | sed -n 's/.* -p \([0-9]*\).*/\1/p')
    per=$(awk -v m="$model" -v a="$all" -v bm="$boot_model" -v ba="$boot_all" -v n="$pkts" \
        'BEGIN {printf "%.1f %.1f", (m - bm) / 997 / n * 1e9, (a - ba) / 997 / n * 1e9}')
    printf '%-9s %-44s %10.0f %8.3f %8s %6s %8s %9s %9s\n' "$run" "${cmd##*; }" "${pps:-0}" \
        "${gbps:-0}" "$share" "$whole" "$all" ${per}
    # the model's top functions, for the record
    awk 'NR == FNR {m[$1] = 1; next} /%/ && $3 == "[.]" && ($4 in m) {print "    " $1, $4}' \
        "$work/model.syms" "$work/$run.report" | sort -rn | head -6
done
