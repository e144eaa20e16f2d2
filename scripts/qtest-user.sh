#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build and run a directory of your own QTests against the virtual card,
# outside the project's tree and without editing it (docs/qtest.md).
#
# usage: scripts/qtest-user.sh [--build-dir DIR] [--no-run] TESTDIR [-- ARGS]
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
# QTEST_QEMU_BINARY set to this clone's QEMU and --tap; the TAP of all of
# them is merged into one stream. ARGS go to every program (e.g. -p PATH).
#
# Environment:
#   QTEST_USER_CFLAGS   more compiler flags (e.g. -I of your own headers)
#   QTEST_USER_LIBS     more libraries to link (e.g. -lm)
# Exit status: 0 when every case passed, 1 otherwise, 2 on bad usage.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
usage() {
    echo "usage: scripts/qtest-user.sh [--build-dir DIR] [--no-run] TESTDIR [-- ARGS]" >&2
    exit 2
}
die() { echo "qtest-user: error: $*" >&2; exit 1; }

out="" run=1 tests=""
while [ $# -gt 0 ]; do
    case "$1" in
        --build-dir) [ $# -ge 2 ] || usage; out=$2; shift 2;;
        --no-run) run=0; shift;;
        --) shift; break;;
        -h|--help) usage;;
        -*) echo "qtest-user: unknown option $1" >&2; usage;;
        *) [ -z "$tests" ] || usage; tests=$1; shift;;
    esac
done
[ -n "$tests" ] || usage
[ -d "$tests" ] || die "$tests is not a directory"
tests=$(cd "$tests" && pwd)
shopt -s nullglob
sources=("$tests"/*.c)
[ ${#sources[@]} -gt 0 ] || die "no *.c in $tests"

qemu="$REPO/build/qemu-system-x86_64"
[ -x "$qemu" ] || die "$qemu is missing: run scripts/setup.sh first"
qbuild=$(dirname "$(readlink -f "$qemu")")
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

# Run them one after the other; one TAP stream, renumbered, one plan.
export QTEST_QEMU_BINARY="$qemu"
n=0 failed=0
for exe in "${programs[@]}"; do
    echo "# $(basename "$exe")"
    status=0
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
            "# exit status 0") ;;
            "# exit status "*) echo "$line"; status=1;;
            *) echo "$line";;
        esac
    done < <("$exe" --tap "$@" 2>&1; echo "# exit status $?")
    if [ $status != 0 ]; then
        n=$((n + 1)); failed=1
        echo "not ok $n $(basename "$exe") stopped early"
    fi
done
echo "1..$n"
exit $failed
