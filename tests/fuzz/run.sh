#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Run the fuzz targets of tests/fuzz with libFuzzer (the sanitized build,
# build-san/, made by `scripts/setup.sh --sanitize`).
#
#   tests/fuzz/run.sh [--time SECONDS] [--runs N] [--jobs J] [TARGET...]
#
# Each target runs until N executions (default 10^7) or SECONDS (default
# 1800), whichever comes first, on its committed corpus plus a work corpus
# kept in the cache ($NDK_TELEMETRY_CACHE/fuzz/<target>, default
# ~/.cache/ndk-pcie-telemetry), J targets at once (default: the cores).
# New inputs go to the work corpus, never into the repository; a crash is
# written to the log directory and fails the run. At the end a table gives
# per target the executions, the coverage (edges) and the result.
# `--time 20 --runs 0` is what CI runs (no execution limit).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${NDK_TELEMETRY_CACHE:-$HOME/.cache/ndk-pcie-telemetry}
BUILD=${FUZZ_BUILD:-$REPO/build-san}
TIME=1800 RUNS=10000000 JOBS=$(nproc)
ALL=(fuzz-core-diff fuzz-state fuzz-dma fuzz-dma-log fuzz-dwc fuzz-vcd fuzz-trace fuzz-scenario fuzz-devtree
     fuzz-json fuzz-options fuzz-http)
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --time) TIME=$2; shift 2;;
        --runs) RUNS=$2; shift 2;;
        --jobs) JOBS=$2; shift 2;;
        -h|--help) sed -n '4,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
        -*) echo "run.sh: unknown option $1" >&2; exit 2;;
        *) targets+=("$1"); shift;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${ALL[@]}")
LOGS=${FUZZ_LOGS:-$CACHE/fuzz/logs}
mkdir -p "$LOGS"

for t in "${targets[@]}"; do
    [ -x "$BUILD/tests/fuzz/$t" ] || {
        echo "run.sh: $BUILD/tests/fuzz/$t is missing: run scripts/setup.sh --sanitize" >&2
        exit 2; }
done

run_one() {
    local t=$1 work="$CACHE/fuzz/$t" dict=() runs=()
    mkdir -p "$work"
    [ -f "$REPO/tests/fuzz/$t.dict" ] && dict=(-dict="$REPO/tests/fuzz/$t.dict")
    [ "$RUNS" != 0 ] && runs=(-runs="$RUNS")
    # leaks are errors; QEMU-free code has no excuse for one
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$BUILD/tests/fuzz/$t" "${runs[@]}" -max_total_time="$TIME" \
        -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$LOGS/$t-" "${dict[@]}" \
        "$work" "$REPO/tests/fuzz/corpus/$t" > "$LOGS/$t.log" 2>&1
    echo $? > "$LOGS/$t.rc"
}

running=0
for t in "${targets[@]}"; do
    rm -f "$LOGS/$t.rc" "$LOGS/$t-"crash-* "$LOGS/$t-"timeout-* "$LOGS/$t-"leak-* "$LOGS/$t-"oom-*
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait

fail=0
printf '%-16s %12s %8s %8s  %s\n' target executions edges exec/s result
for t in "${targets[@]}"; do
    log="$LOGS/$t.log" rc=$(cat "$LOGS/$t.rc" 2>/dev/null || echo 1)
    execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
    speed=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
    res=ok
    if [ "$rc" != 0 ]; then
        res="FAILED (rc $rc, see $log)"
        fail=1
    fi
    printf '%-16s %12s %8s %8s  %s\n' "$t" "${execs:-?}" "${cov:-?}" "${speed:-?}" "$res"
done
exit $fail
