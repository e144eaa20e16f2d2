#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Run the QTest programs against the QEMU built with AddressSanitizer and
# UndefinedBehaviorSanitizer (scripts/setup.sh --sanitize: build/qemu-san/,
# whose qemu-qtest-dir links to that build's QTest directory). The TAP
# output is the programs' as one stream (tap-programs.sh). Afterwards the
# sanitizers' logs of every program and every QEMU they started are read:
# a report whose stack reaches the device or its traffic generators fails
# the run; any other report (QEMU's own) is printed as a warning.
REPO=$(cd "$(dirname "$0")/../.." && pwd)
san="$REPO/build/qemu-san"
dir="$san/qemu-qtest-dir"
qemu="$san/qemu-system-x86_64"
supp="$REPO/tests/qtest/lsan-qemu.supp"
if [ ! -d "$dir" ] || [ ! -x "$qemu" ]; then
    echo "Bail out! $dir or $qemu is missing: run scripts/setup.sh --sanitize"
    exit 1
fi
logs=$(mktemp -d "${TMPDIR:-/tmp}/ndk-qtest-san-XXXXXX") || exit 1
mkdir "$logs/log"

# One file holds the suppressions of all three tools; each tool refuses
# the others' types, so each gets its own lines: leak: for LeakSanitizer
# (which reads them from LSAN_OPTIONS only), interceptor_* and
# odr_violation: for AddressSanitizer, every other type for UBSan.
asan_types='interceptor_name|interceptor_via_fun|interceptor_via_lib'
asan_types="$asan_types|odr_violation"
grep -E '^leak:' "$supp" > "$logs/lsan.supp"
grep -E "^($asan_types):" "$supp" > "$logs/asan.supp"
grep -vE "^(#|\$|leak:|($asan_types):)" "$supp" > "$logs/ubsan.supp"

export QTEST_QEMU_BINARY="$qemu"
: "${PTM_SAMPLE_PLUGIN:=$REPO/build/traffic-gen/plugins/ptm-sample-plugin.so}"
export PTM_SAMPLE_PLUGIN
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:log_path=$logs/log/asan"
ASAN_OPTIONS="$ASAN_OPTIONS:suppressions=$logs/asan.supp"
# exitcode=0: leaks at exit leave QEMU's exit status alone (libqtest
# fails a case whose QEMU does not exit with 0); the scan below judges them.
# ASan errors still stop the process (halt_on_error), which fails the case.
export LSAN_OPTIONS="suppressions=$logs/lsan.supp:print_suppressions=0"
LSAN_OPTIONS="$LSAN_OPTIONS:exitcode=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$logs/log/ubsan"
UBSAN_OPTIONS="$UBSAN_OPTIONS:suppressions=$logs/ubsan.supp"

# the log paths name each process: all programs' logs land in $logs/log
"$REPO/tests/qtest/tap-programs.sh" "$dir" "$@"
rc=$?

# Cut the logs (QEMU's and the QTest programs' own) into reports: an ASan
# error, each leak of a LeakSanitizer report, each UBSan runtime error with
# its stack; file them by whether any line names the device or a generator.
shopt -s nullglob
logfiles=("$logs"/log/*)
dev='hw/misc/ndk-pcie-telemetry|/qemu-device/|/traffic-gen/'
dev="$dev| in (ptm|ptl|ndk|telemetry)_"
awk -v dev="$dev" -v devout="$logs/device.txt" -v other="$logs/other.txt" '
    function flush() {
        if (buf != "") {
            printf "%s", buf >> (buf ~ dev ? devout : other)
        }
        buf = ""
    }
    FNR == 1 { flush() }
    /ERROR: LeakSanitizer/ { flush(); next }
    /^(Direct|Indirect) leak of|ERROR: AddressSanitizer|runtime error:/ {
        flush()
        buf = "[" FILENAME "]\n" $0 "\n"
        next
    }
    /^SUMMARY:|==ABORTING/ { flush(); next }
    buf != "" { buf = buf $0 "\n" }
    END { flush() }
' /dev/null "${logfiles[@]}"

if [ -s "$logs/other.txt" ]; then
    echo "# warning: sanitizer reports outside the device (QEMU's own, not"
    echo "# counted as failures; suppress them in tests/qtest/lsan-qemu.supp):"
    sed 's/^/#   /' "$logs/other.txt"
fi
if [ -s "$logs/device.txt" ]; then
    echo "# sanitizer reports in the device or its traffic generators:"
    sed 's/^/#   /' "$logs/device.txt"
    echo "Bail out! sanitizer reports in ndk-pcie-telemetry (logs in $logs)"
    exit 1
fi
if [ -s "$logs/other.txt" ]; then
    echo "# (logs kept in $logs)"
else
    rm -rf "$logs"
fi
exit $rc
