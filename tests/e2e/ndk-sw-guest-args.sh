#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# scripts/ndk-sw-guest.sh refuses what it cannot build, before it builds or
# boots anything: no argument, a missing directory, a file, a directory that
# is not an ndk-sw checkout (exit status 2), an ndk-sw checkout that is not
# prepared (exit status 1, naming the missing third-party files and
# ./build.sh --prepare). Each run gets an empty cache and a QEMU that would
# leave a mark: afterwards the cache must still be empty, QEMU never run,
# set-up never started. The checkouts are skeletons this test writes: the
# files the script looks at, with the build lines that name third-party
# code.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
script=$REPO/scripts/ndk-sw-guest.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$REPO/tests/tap.sh"
# a failed check of the last run, with what it printed
not_ok() { fail "$1" "$(cat "$tmp/out")"; }

# a fake QEMU: a mark if anything boots
printf '#!/bin/sh\ntouch %q/qemu-ran\nexit 1\n' "$tmp" > "$tmp/qemu"
chmod +x "$tmp/qemu"

# run NAME STATUS PATTERN... -- ARGS: the exit status, each pattern in the
# output (stdout and stderr), and nothing built or booted
run() {
    local name=$1 want=$2 pats=() rc
    shift 2
    while [ "$1" != -- ]; do pats+=("$1"); shift; done
    shift
    rm -rf "$tmp/cache"; mkdir "$tmp/cache"
    NDK_TELEMETRY_CACHE=$tmp/cache QEMU=$tmp/qemu NDK_TELEMETRY_NO_APT=1 \
        timeout 60 "$script" "$@" > "$tmp/out" 2>&1 < /dev/null
    rc=$?
    if [ $rc != "$want" ]; then
        not_ok "$name: exit status $rc, not $want"
        return
    fi
    for p in "${pats[@]}"; do
        grep -qE -- "$p" "$tmp/out" || { not_ok "$name: no '$p' in the output"; return; }
    done
    # one message, all on stderr: nothing on stdout
    if NDK_TELEMETRY_CACHE=$tmp/cache QEMU=$tmp/qemu NDK_TELEMETRY_NO_APT=1 \
           timeout 60 "$script" "$@" 2> /dev/null < /dev/null | grep -q .; then
        not_ok "$name: something on stdout"; return
    fi
    if [ -n "$(ls -A "$tmp/cache")" ] || [ -e "$tmp/qemu-ran" ] ||
       grep -q '^==>' "$tmp/out"; then
        not_ok "$name: something was set up, built or booted"
        return
    fi
    ok "$name (exit $rc)"
}

# the skeleton of an ndk-sw checkout, not prepared
mk_checkout() {
    local d=$1
    mkdir -p "$d/drivers/kernel/drivers/nfb" "$d/libnfb/src/boot" \
             "$d/tools/info" "$d/tools/bus" "$d/tools-debug"
    touch "$d/CMakeLists.txt" "$d/drivers/configure.ac" "$d/drivers/Makefile.in" \
          "$d/drivers/kernel/drivers/nfb/pci.c" "$d/libnfb/CMakeLists.txt" \
          "$d/tools/info/info.c" "$d/tools/bus/bus.c"
    cat > "$d/drivers/kernel/drivers/nfb/Makefile" <<'EOF'
nfb-y += ../fdt/fdt.o ../fdt/fdt_ro.o
nfb-y += ../spi/spi-xilinx.o
nfb-y += core.o pci.o
obj-m += nfb.o
EOF
    echo '#include <uapi/linux/nfb-fpga-image-load.h>' > "$d/libnfb/src/boot/boot.c"
    printf 'add_executable(nfb-xvc nfb-xvc/xvc_pcie.c nfb-xvc/xvcserver.c)\n' \
        > "$d/tools-debug/CMakeLists.txt"
}

run "no argument" 2 'no ndk-sw checkout given' 'usage: ndk-sw-guest.sh' -- 
run "empty argument" 2 'no ndk-sw checkout given' -- ""
run "--shell without a directory" 2 'no ndk-sw checkout given' -- --shell
run "a missing directory" 2 "$tmp/none does not exist" -- "$tmp/none"
touch "$tmp/file"
run "a file" 2 "$tmp/file is not a directory" -- "$tmp/file"
mkdir "$tmp/empty"
run "an empty directory" 2 'is not an ndk-sw checkout \(it has no CMakeLists.txt\)' \
    'top directory of a CESNET ndk-sw checkout' -- "$tmp/empty"
mk_checkout "$tmp/ndk"
rm "$tmp/ndk/tools/bus/bus.c"
run "a checkout without tools/bus" 2 'is not an ndk-sw checkout \(it has no tools/bus/bus.c\)' \
    -- "$tmp/ndk"
rm -rf "$tmp/ndk"; mk_checkout "$tmp/ndk"
run "an unprepared checkout" 1 "$tmp/ndk is not prepared" 'missing \(7 files\)' \
    'drivers/kernel/drivers/fdt/fdt.h' 'drivers/kernel/drivers/fdt/fdt_ro.c' \
    'drivers/kernel/drivers/spi/spi-xilinx.c' \
    "cd $tmp/ndk && ./build.sh --prepare" -- "$tmp/ndk" -device foo
# an NDK_FPGA_DIR without ndk-fpga's Python package, before the rest
NDK_FPGA_DIR=$tmp/empty run "NDK_FPGA_DIR without python/ofm" 2 \
    "NDK_FPGA_DIR=$tmp/empty has no python/ofm/setup.py or pyproject.toml" -- "$tmp/ndk"
# with --shell and QEMU arguments the same
run "an unprepared checkout, --shell" 1 "is not prepared" -- --shell "$tmp/ndk"
# all but one file of the archive: that one is named
mkdir -p "$tmp/ndk/drivers/kernel/drivers/fdt" "$tmp/ndk/drivers/kernel/drivers/spi" \
         "$tmp/ndk/drivers/kernel/include/uapi/linux" "$tmp/ndk/tools-debug/nfb-xvc"
touch "$tmp/ndk/drivers/kernel/drivers/fdt/"{fdt.h,fdt.c,fdt_ro.c} \
      "$tmp/ndk/drivers/kernel/include/uapi/linux/nfb-fpga-image-load.h" \
      "$tmp/ndk/tools-debug/nfb-xvc/"{xvc_pcie.c,xvcserver.c}
run "a checkout without one third-party file" 1 'missing \(1 file\)' \
    '^    drivers/kernel/drivers/spi/spi-xilinx.c$' -- "$tmp/ndk"

tap_done
