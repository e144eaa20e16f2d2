#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build and run a directory of your own QTests against the virtual card,
# outside the project's tree and without editing it (docs/qtest.md).
#
# usage: scripts/qtest-user.sh [--build-dir DIR] [--no-run] [--timeout SECONDS]
#                              TESTDIR [-- ARGS]
#
# Every TESTDIR/*.c is one test program with its own main(): a plain
# libqtest/GTest program that may include "qemu/osdep.h", libqtest and
# libqos headers ("tests/qtest/libqtest.h", "tests/qtest/libqos/pci.h"),
# the card's libqos driver "ndk-telemetry.h", the register map
# "pcie-telemetry-regs.h" and libpcie-telemetry's "pcie-telemetry.h"
# (its measuring half, ptl_block_* and ptl_data_*, is linked in). Other
# TESTDIR/*.h are found too. The programs are compiled with the flags QEMU's
# build uses for the card's libqos driver and linked like its QTest, so they
# follow the QEMU build of this clone (scripts/setup.sh). Each runs with
# QTEST_QEMU_BINARY set (see below), --tap, and TESTDIR as its working
# directory: a relative path in a test, such as a generator's
# file=trace.vcd, names a file in TESTDIR, wherever the script was called
# from. The TAP of all of them is merged into one stream. ARGS go to every
# program (e.g. -p PATH).
#
# Each program has SECONDS (default 120; 0: no limit) of real time; one
# that takes longer is stopped (with its QEMU) and reported as "not ok ...
# timed out". Under qtest virtual time stands still between commands, so
# the usual cause is a loop that polls STATUS or a counter without stepping
# the clock (qndk_step()); step it in the loop and bound the loop.
#
# Environment:
#   QTEST_QEMU_BINARY   the QEMU the programs run (libqtest reads it):
#                       honoured when set and not empty, a relative path
#                       taken from the directory the script is called in;
#                       it must exist and have the ndk-pcie-telemetry
#                       device, or the script stops naming it. Unset: this
#                       clone's build/qemu-system-x86_64. The programs are
#                       built from this clone's QEMU build tree either way.
#   QTEST_USER_TIMEOUT  the per-program limit in seconds when --timeout is
#                       not given (default 120; 0: none)
#   QTEST_USER_CFLAGS   more compiler flags (e.g. -I of your own headers)
#   QTEST_USER_LIBS     more libraries to link (e.g. -lm)
# Exit status: 0 when every case passed, 1 otherwise, 2 on bad usage.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
usage() {
    echo "usage: scripts/qtest-user.sh [--build-dir DIR] [--no-run]" \
         "[--timeout SECONDS] TESTDIR [-- ARGS]" >&2
    echo "  runs TESTDIR/*.c with TESTDIR as working directory, each within" \
         "SECONDS (default \$QTEST_USER_TIMEOUT or 120, 0: no limit)," >&2
    echo "  against \$QTEST_QEMU_BINARY if set, else this clone's" \
         "build/qemu-system-x86_64 (scripts/qtest-user.sh, docs/qtest.md)" >&2
    exit 2
}
die() { echo "qtest-user: error: $*" >&2; exit 1; }

out="" run=1 tests="" timeout_s=${QTEST_USER_TIMEOUT:-120}
while [ $# -gt 0 ]; do
    case "$1" in
        --build-dir) [ $# -ge 2 ] || usage; out=$2; shift 2;;
        --timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2;;
        --timeout=*) timeout_s=${1#--timeout=}; shift;;
        --no-run) run=0; shift;;
        --) shift; break;;
        -h|--help) usage;;
        -*) echo "qtest-user: unknown option $1" >&2; usage;;
        *) [ -z "$tests" ] || usage; tests=$1; shift;;
    esac
done
[ -n "$tests" ] || usage
case "$timeout_s" in
    ""|*[!0-9]*)
        echo "qtest-user: the timeout must be whole seconds (0: none)," \
             "not '$timeout_s' (--timeout, QTEST_USER_TIMEOUT)" >&2
        usage;;
esac
timeout_s=$((10#$timeout_s))
[ -d "$tests" ] || die "$tests is not a directory"
tests=$(cd "$tests" && pwd)
shopt -s nullglob
sources=("$tests"/*.c)
[ ${#sources[@]} -gt 0 ] || die "no *.c in $tests"

own_qemu="$REPO/build/qemu-system-x86_64"
[ -x "$own_qemu" ] || die "$own_qemu is missing: run scripts/setup.sh first"
qbuild=$(dirname "$(readlink -f "$own_qemu")")

# The QEMU to run: QTEST_QEMU_BINARY if the caller set it (libqtest runs
# it with sh -c, so it may carry arguments after the binary), else ours.
# Checked before the build, so that a wrong one is named at once.
if [ -n "${QTEST_QEMU_BINARY:-}" ]; then
    read -r qemu_exe qemu_rest <<< "$QTEST_QEMU_BINARY"
    case "$qemu_exe" in
        */*)
            case "$qemu_exe" in /*) ;; *) qemu_exe="$PWD/$qemu_exe";; esac
            if [ ! -f "$qemu_exe" ] || [ ! -x "$qemu_exe" ]; then
                die "QTEST_QEMU_BINARY=$QTEST_QEMU_BINARY: $qemu_exe is not" \
                    "an executable file (unset QTEST_QEMU_BINARY to use" \
                    "this clone's $own_qemu)"
            fi;;
        *)
            qemu_exe=$(command -v "$qemu_exe") ||
                die "QTEST_QEMU_BINARY=$QTEST_QEMU_BINARY: no such command" \
                    "(unset QTEST_QEMU_BINARY to use this clone's $own_qemu)";;
    esac
    qemu="$qemu_exe${qemu_rest:+ $qemu_rest}"
    qemu_from="QTEST_QEMU_BINARY=$QTEST_QEMU_BINARY"
else
    qemu="$own_qemu"
    qemu_from="this clone's QEMU"
fi
if [ "$run" = 1 ]; then
    devices=$(sh -c 'exec '"$qemu"' -device help' 2>&1) ||
        die "$qemu_from: '$qemu -device help' failed: $devices"
    case "$devices" in
        *'name "ndk-pcie-telemetry"'*) ;;
        *) die "$qemu_from: $qemu has no ndk-pcie-telemetry device" \
               "(use this clone's $own_qemu, built by scripts/setup.sh)";;
    esac
fi
[ -f "$qbuild/compile_commands.json" ] || die "$qbuild is not a QEMU build tree"
ref_exe=tests/qtest/ndk-pcie-telemetry/ndk-pcie-telemetry-qos-test
ninja -C "$qbuild" "$ref_exe" > /dev/null ||
    die "cannot build the card's libqos driver in $qbuild (run scripts/setup.sh)"
[ -n "$out" ] || out="$tests/.qtest-build"
mkdir -p "$out" && out=$(cd "$out" && pwd)

# The compile command of the driver and the link command of its QTest,
# with this directory's files put in place of theirs.
/usr/bin/python3 - "$qbuild" "$ref_exe" "$out" > "$out/commands.sh" <<'PY' ||
import json, shlex, subprocess, sys
qbuild, ref_exe, out = sys.argv[1:4]
cc = None
for e in json.load(open(qbuild + '/compile_commands.json')):
    if e['file'].endswith('qos/ndk-telemetry.c'):
        cc = shlex.split(e['command'])
        break
if cc is None:
    sys.exit('no compile command for the libqos driver in ' + qbuild)
keep, skip = [], 0
for a in cc:
    if skip:
        skip -= 1
    elif a in ('-o', '-MQ', '-MF', '-c'):
        skip = 1
    elif a == '-MD' or a.endswith('ndk-telemetry.c'):
        pass
    else:
        keep.append(a)
link = subprocess.run(['ninja', '-C', qbuild, '-t', 'commands', ref_exe],
                      capture_output=True, text=True, check=True).stdout
link = shlex.split(link.strip().split('\n')[-1])
lk, skip = [], 0
for a in link:
    if skip:
        skip -= 1
    elif a == '-o':
        skip = 1
    elif a.endswith(('qos-node-test.c.o', 'qos-test.c.o')):
        pass
    else:
        lk.append(a)
print('CC_ARGS=(%s)' % ' '.join(shlex.quote(a) for a in keep))
print('LINK_ARGS=(%s)' % ' '.join(shlex.quote(a) for a in lk))
PY
    die "cannot read the build commands of $qbuild"
# shellcheck disable=SC1091
. "$out/commands.sh"
drv_dir=$(readlink -f "$qbuild/../src/tests/qtest/ndk-pcie-telemetry/qos")

programs=()
for src in "${sources[@]}"; do
    name=$(basename "$src" .c)
    obj="$out/$name.o" exe="$out/$name"
    # shellcheck disable=SC2086
    (cd "$qbuild" && "${CC_ARGS[@]}" -I"$tests" -I"$drv_dir" \
        ${QTEST_USER_CFLAGS:-} -c "$src" -o "$obj") ||
        die "compiling $src failed"
    # shellcheck disable=SC2086
    (cd "$qbuild" && "${LINK_ARGS[@]}" "$obj" -o "$exe" ${QTEST_USER_LIBS:-}) ||
        die "linking $name failed"
    programs+=("$exe")
done
echo "# built ${#programs[@]} program(s) in $out" >&2
[ "$run" = 1 ] || exit 0

# Run them one after the other, each in TESTDIR and within the limit;
# one TAP stream, renumbered, one plan. timeout(1) signals the program
# only (--foreground keeps it in the terminal's process group, so Ctrl-C
# still reaches it); libqtest's QEMU dies with it (PR_SET_PDEATHSIG).
export QTEST_QEMU_BINARY="$qemu"
runner=()
if [ "$timeout_s" -gt 0 ]; then
    runner=(timeout --foreground --kill-after=10 "$timeout_s")
fi
echo "# QEMU: $qemu ($qemu_from)"
echo "# working directory: $tests (relative paths such as file= are" \
     "taken from there)"
n=0 failed=0
for exe in "${programs[@]}"; do
    prog=$(basename "$exe")
    echo "# $prog"
    status=0 code=0 started=$SECONDS
    while IFS= read -r line; do
        case "$line" in
            "ok "*|"not ok "*)
                n=$((n + 1))
                case "$line" in "not ok "*) failed=1;; esac
                rest=${line#ok }; rest=${rest#not ok }; rest=${rest#* }
                case "$line" in
                    "ok "*) echo "ok $n $rest";;
                    *) echo "not ok $n $rest";;
                esac;;
            1..*) ;;
            "Bail out!"*) echo "# $line"; status=1;;
            "# qtest-user exit status "*)
                code=${line#\# qtest-user exit status }
                [ "$code" = 0 ] || status=1;;
            *) echo "$line";;
        esac
    done < <(cd "$tests" && "${runner[@]}" "$exe" --tap "$@" 2>&1
             echo "# qtest-user exit status $?")
    took=$((SECONDS - started))
    if [ "$timeout_s" -gt 0 ] &&
       { [ "$code" = 124 ] || { [ "$code" = 137 ] &&
                                [ "$took" -ge "$timeout_s" ]; }; }; then
        n=$((n + 1)); failed=1
        echo "# $prog did not finish within $timeout_s s and was stopped." \
             "Under qtest virtual time stands still between commands: a loop" \
             "that polls STATUS (BUSY) or a counter without stepping the" \
             "clock never ends. Step the clock in the loop (qndk_step(t," \
             "t->mi_ns), or qndk_wait_busy(t, max_cycles)) and bound it; if" \
             "the test is merely slow, raise the limit with --timeout" \
             "SECONDS or QTEST_USER_TIMEOUT (0: none)."
        echo "not ok $n $prog timed out after $timeout_s s (step the clock" \
             "in polling loops; --timeout SECONDS raises the limit)"
        echo "qtest-user: $prog timed out after $timeout_s s: step the clock" \
             "in polling loops (qndk_step), or raise --timeout" >&2
    elif [ $status != 0 ]; then
        [ "$code" = 0 ] || echo "# exit status $code"
        n=$((n + 1)); failed=1
        echo "not ok $n $prog stopped early"
    fi
done
echo "1..$n"
exit $failed
