#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A Debian 6.12 guest kernel with the DesignWare PCIe PMU driver
# (drivers/perf/dwc_pcie_pmu.c), the HiSilicon PCIe Tune and Trace driver
# (drivers/hwtracing/ptt/hisi_ptt.c) and the DesignWare xData traffic
# generator's driver (drivers/misc/dw-xdata-pcie.c), which Debian does not
# build, as modules, and Debian's perf for the guest.
#
# Fetches, with apt-get download into the cache, the newest
# linux-image-6.12.*+deb12-amd64 and, at the same Debian version, its
# headers (-amd64, -common, linux-kbuild) and linux-source-6.12. Unpacks the
# headers into the cache (installing them would pull the image onto the
# host), takes the drivers' files out of the source tarball, unmodified,
# and builds each with make -C <headers> M=<dir> and the kernel's own
# compiler (gcc-12). Unpacks the bzImage's zstd payload to an uncompressed
# vmlinux, which QEMU boots through PVH. Copies perf and every shared
# library it loads into the cache too.
#
# Everything lives in $NDK_TELEMETRY_CACHE/kernel-6.12 (default
# ~/.cache/ndk-pcie-telemetry/kernel-6.12); a rerun prints the cached paths
# at once. Remove that folder to move to a newer kernel.
#
#   guest-kernel-612.sh [--vmlinux]  the vmlinux (PVH boot)
#   guest-kernel-612.sh --bzimage    Debian's vmlinuz, for a bzImage boot
#   guest-kernel-612.sh --module     dwc_pcie_pmu.ko
#   guest-kernel-612.sh --ptt-module hisi_ptt.ko (on a cache made before
#                                    it, fetches linux-source-6.12 again
#                                    and builds just that)
#   guest-kernel-612.sh --xdata-module dw-xdata-pcie.ko (the same way)
#   guest-kernel-612.sh --perf-files FILE:PATH pairs for guest-initramfs.sh,
#                                    one a line: perf as /usr/bin/perf and
#                                    its libraries
#   guest-kernel-612.sh --headers    the headers' build directory, for
#                                    make -C DIR M=... of further modules
#   guest-kernel-612.sh --release    the kernel release (uname -r)
#
# Needs root on first use when packages are missing (it installs them with
# apt-get). Exit status: 0 ready; 77 it cannot be made here (no apt, not
# root, no 6.12 kernel in the archive: the reason on stderr); 1 any other
# error.
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/lib/kmod.sh"
CACHE=${NDK_TELEMETRY_CACHE:-$HOME/.cache/ndk-pcie-telemetry}
dir="$CACHE/kernel-6.12"
say() { echo "guest-kernel-612: $*" >&2; }
usage() {
    echo "usage: guest-kernel-612.sh [--vmlinux|--bzimage|--module|--ptt-module|--xdata-module|--perf-files|--headers|--release]" >&2
    exit 2
}
mode=vmlinux
case "${1:-}" in
    ""|--vmlinux) ;;
    --bzimage) mode=bzimage ;;
    --module) mode=module ;;
    --ptt-module) mode=ptt ;;
    --xdata-module) mode=xdata ;;
    --perf-files) mode=perf ;;
    --headers) mode=headers ;;
    --release) mode=release ;;
    *) usage ;;
esac
[ $# -le 1 ] || usage

answer() {
    case $mode in
        vmlinux) echo "$dir/vmlinux" ;;
        bzimage) echo "$dir/vmlinuz" ;;
        module) echo "$dir/dwc_pcie_pmu.ko" ;;
        ptt) echo "$dir/hisi_ptt.ko" ;;
        xdata) echo "$dir/dw-xdata-pcie.ko" ;;
        perf) cat "$dir/perf-files" ;;
        headers) cat "$dir/headers-dir" ;;
        release) cat "$dir/release" ;;
    esac
    exit 0
}
# the stamp is written last: with it, everything else is there but
# hisi_ptt.ko and dw-xdata-pcie.ko, which a cache made before them lacks (or
# whose build failed)
ready() {
    [ -s "$dir/stamp" ] && { [ $mode != ptt ] || [ -s "$dir/hisi_ptt.ko" ]; } &&
        { [ $mode != xdata ] || [ -s "$dir/dw-xdata-pcie.ko" ]; }
}
ready && answer
mkdir -p "$dir"
# one build at a time (guests of a test may start side by side)
exec 9> "$dir/.lock"
flock 9
ready && answer

t0=$(date +%s)
# the drivers' files, in linux-source-6.12's tree
DWC_SRC=(drivers/perf/dwc_pcie_pmu.c)
PTT_SRC=(drivers/hwtracing/ptt/hisi_ptt.c drivers/hwtracing/ptt/hisi_ptt.h)
XDATA_SRC=(drivers/misc/dw-xdata-pcie.c)

# fetch_debs PACKAGE...: each at $ver into $dl, unless a whole one is there
fetch_debs() {
    local p f get=()
    mkdir -p "$dl"
    for p; do
        f=$(ls "$dl/${p}_${ver}_"*.deb 2>/dev/null || true)
        # a download cut short is fetched again
        if [ -z "$f" ] || ! dpkg-deb -I "$f" > /dev/null 2>&1; then
            rm -f "$f"; get+=("$p=$ver")
        fi
    done
    if [ ${#get[@]} -gt 0 ]; then
        say "downloading ${get[*]}"
        (cd "$dl" && apt-get download "${get[@]}" >&2) || { say "apt-get download failed"; exit 77; }
    fi
}
deb() { ls "$dl/${1}_${ver}_"*.deb; }

# extract FILE...: these files of linux-source-6.12 into $tmp/src, in one
# pass over the tarball, which has to be decompressed (about 15 s)
extract() {
    local f names=()
    for f; do names+=("linux-source-6.12/$f"); done
    say "extracting ${*##*/} from linux-source-6.12 (about 15 s)"
    mkdir -p "$tmp/src"
    # tar stops reading once it has each file (--occurrence): dpkg-deb then
    # sees a broken pipe
    { dpkg-deb --fsys-tarfile "$(deb linux-source-6.12)" 2>/dev/null |
          tar -xO ./usr/src/linux-source-6.12.tar.xz 2>/dev/null | xz -dc 2>/dev/null |
          tar -x --occurrence=1 -C "$tmp/src" "${names[@]}" 2>/dev/null; } || true
    for f; do
        [ -s "$tmp/src/linux-source-6.12/$f" ] || { say "no $f in linux-source-6.12 $ver"; exit 1; }
    done
}

# build_module DIR NAME FILE...: NAME.ko in $dir/DIR from the extracted
# FILEs, unmodified, with the headers' kbuild (scripts/lib/kmod.sh). On
# failure says why and returns 1.
build_module() {
    local d=$1 name=$2
    shift 2
    kmod_build "$tmp/src/linux-source-6.12" "$dir/$d" "$name" "$hdir" "$rel" \
        nm -- "$@"
}

# build_ptt: hisi_ptt.ko, from the files extract has taken out, into place
build_ptt() {
    build_module ptt hisi_ptt "${PTT_SRC[@]}" || return 1
    # the device it binds: Huawei (0x19e5) a12e
    kmod_alias "$dir/ptt/hisi_ptt.ko" pci:v000019E5d0000A12E || return 1
    cp "$dir/ptt/hisi_ptt.ko" "$dir/.hisi_ptt.ko.new"
    mv "$dir/.hisi_ptt.ko.new" "$dir/hisi_ptt.ko"
}

# build_xdata: dw-xdata-pcie.ko the same way (its source stays beside it)
build_xdata() {
    build_module xdata dw-xdata-pcie "${XDATA_SRC[@]}" || return 1
    # the device it binds: Synopsys (0x16c3) edda
    kmod_alias "$dir/xdata/dw-xdata-pcie.ko" pci:v000016C3d0000EDDA || return 1
    cp "$dir/xdata/dw-xdata-pcie.ko" "$dir/.dw-xdata-pcie.ko.new"
    mv "$dir/.dw-xdata-pcie.ko.new" "$dir/dw-xdata-pcie.ko"
}

# --- host packages --------------------------------------------------------
# gcc-12 is the compiler the kernel was built with (checked below against
# the headers' CONFIG_CC_VERSION_TEXT); dwarves is pahole (module BTF),
# libelf1/libssl3/zlib1g are what linux-kbuild's tools link.
NEED="gcc-12 make binutils zstd xz-utils dwarves libelf1 libssl3 zlib1g linux-perf dpkg"
missing=()
for p in $NEED; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] ||
        missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ] || ! command -v apt-get > /dev/null; then
        say "packages missing: ${missing[*]}; install them as root: apt-get install ${missing[*]}"
        exit 77
    fi
    say "installing ${missing[*]}"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            "${missing[@]}" >&2; then
        apt-get update -q >&2 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            "${missing[@]}" >&2 || { say "cannot install ${missing[*]}"; exit 77; }
    fi
fi

# --- only hisi_ptt.ko or dw-xdata-pcie.ko --------------------------------
# The rest is cached: fetch the source at the cached kernel's version again
# (bookworm-security keeps the older ones) and build the one driver alone.
if [ -s "$dir/stamp" ]; then
    rel=$(cat "$dir/release")
    hdir=$(cat "$dir/headers-dir")
    ver=$(head -1 "$dir/package" | cut -d' ' -f2)
    if [ -z "$ver" ] || [ ! -f "$hdir/Makefile" ]; then
        say "the cache in $dir is incomplete: remove it"; exit 1
    fi
    tmp="$dir/tmp" dl="$dir/dl"
    rm -rf "$tmp"; mkdir -p "$tmp"
    trap 'rm -rf "$tmp"' EXIT
    fetch_debs linux-source-6.12
    if [ $mode = xdata ]; then
        say "adding dw-xdata-pcie.ko to the cached kernel $rel (Debian $ver)"
        extract "${XDATA_SRC[@]}"
        build_xdata || exit 1
    else
        say "adding hisi_ptt.ko to the cached kernel $rel (Debian $ver)"
        extract "${PTT_SRC[@]}"
        build_ptt || exit 1
    fi
    rm -rf "$dl"
    say "ready in $(( $(date +%s) - t0 )) s: $(answer)"
    answer
fi

# --- which kernel ---------------------------------------------------------
IMAGE_RE='^linux-image-6\.12\.[0-9]+\+deb12(\.[0-9]+)?-amd64$'
images() {
    apt-cache search --names-only "$IMAGE_RE" | awk '{print $1}' | sort -rV
}
list=$(images)
if [ -z "$list" ] && [ "$(id -u)" = 0 ]; then
    say "no linux-image-6.12 in apt's lists; running apt-get update"
    apt-get update -q >&2 || true
    list=$(images)
fi
[ -n "$list" ] || { say "no linux-image-6.12.*+deb12-amd64 in the archive (bookworm-security)"; exit 77; }
# the newest image whose headers, kbuild and source exist at its version
pkg='' ver='' rel=''
for p in $list; do
    r=${p#linux-image-}
    v=$(apt-cache show --no-all-versions "$p" 2>/dev/null | sed -n 's/^Version: //p' | head -1)
    [ -n "$v" ] || continue
    ok=1
    for q in "linux-headers-$r" "linux-headers-${r%-amd64}-common" \
             "linux-kbuild-${r%-amd64}" linux-source-6.12; do
        apt-cache show "$q" 2>/dev/null | grep -x "Version: $v" > /dev/null || { ok=0; break; }
    done
    if [ $ok = 1 ]; then pkg=$p ver=$v rel=$r; break; fi
    say "skipping $p $v: its headers or source are not in the archive"
done
[ -n "$pkg" ] || { say "no linux-image-6.12 with headers and source at the same version"; exit 77; }
say "kernel $rel (Debian $ver)"

tmp="$dir/tmp"
rm -rf "$tmp"; mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
# the packages stay in dl/ until the build has succeeded: a rerun after a
# failure does not fetch them again
dl="$dir/dl"
# about 280 MB in all
fetch_debs "$pkg" "linux-headers-$rel" "linux-headers-${rel%-amd64}-common" \
    "linux-kbuild-${rel%-amd64}" linux-source-6.12

# --- the kernel -----------------------------------------------------------
dpkg-deb -x "$(deb "$pkg")" "$tmp/image"
vmlinuz="$tmp/image/boot/vmlinuz-$rel"
[ -s "$vmlinuz" ] || { say "$pkg has no /boot/vmlinuz-$rel"; exit 1; }
# The x86 boot protocol: setup_sects at 0x1f1, payload_offset (from the end
# of the setup) at 0x248 and payload_length at 0x24c. Debian compresses the
# payload with zstd, with the decompressed size appended (4 bytes).
u8() { od -An -tu1 -j "$2" -N1 "$1" | tr -d ' '; }
u32() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '; }
setup_sects=$(u8 "$vmlinuz" $((0x1f1)))
[ "$setup_sects" != 0 ] || setup_sects=4
off=$(( (setup_sects + 1) * 512 + $(u32 "$vmlinuz" $((0x248))) ))
len=$(u32 "$vmlinuz" $((0x24c)))
if [ "$(od -An -tx1 -j "$off" -N4 "$vmlinuz" | tr -d ' ')" != 28b52ffd ]; then
    say "the payload of $vmlinuz is not zstd"
    exit 1
fi
dd if="$vmlinuz" iflag=skip_bytes,count_bytes skip="$off" count=$((len - 4)) status=none |
    zstd -qdc > "$tmp/vmlinux"
banner=$(LC_ALL=C grep -a -o -m1 'Linux version [^ ]*' "$tmp/vmlinux" | head -1 || true)
[ "$banner" = "Linux version $rel" ] || { say "the vmlinux of $pkg is not release $rel ($banner)"; exit 1; }
# the PVH entry point QEMU looks for (XEN_ELFNOTE_PHYS32_ENTRY, type 18)
if command -v readelf > /dev/null && ! readelf -n "$tmp/vmlinux" | grep 'Xen.*0x00000012' > /dev/null; then
    say "the vmlinux has no PVH entry note: boot $vmlinuz instead"
fi

# --- the headers ----------------------------------------------------------
rm -rf "$dir/headers"; mkdir -p "$dir/headers"
for p in "linux-headers-$rel" "linux-headers-${rel%-amd64}-common" "linux-kbuild-${rel%-amd64}"; do
    dpkg-deb -x "$(deb "$p")" "$dir/headers"
done
hdir="$dir/headers/usr/src/linux-headers-$rel"
# The -amd64 Makefile includes the -common one by its installed path; the
# rest of the tree is found relative to it (the scripts and tools links too).
sed -i "s|^include /usr/src/|include $dir/headers/usr/src/|" "$hdir/Makefile"
grep -q "^include $dir/headers/usr/src/linux-headers-${rel%-amd64}-common/Makefile$" "$hdir/Makefile" ||
    { say "unexpected $hdir/Makefile"; exit 1; }
cc_text=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"$/\1/p' "$hdir/.config")
cc=${cc_text%% *}   # e.g. x86_64-linux-gnu-gcc-12, as the headers' Makefile has it
if [ -n "$cc" ] && command -v "$cc" > /dev/null; then
    have=$("$cc" --version | head -1)
    [ "$have" = "$cc_text" ] || say "note: the kernel was built with \"$cc_text\", building with \"$have\""
fi

# --- the drivers ----------------------------------------------------------
extract "${DWC_SRC[@]}" "${PTT_SRC[@]}" "${XDATA_SRC[@]}"
build_module dwc dwc_pcie_pmu "${DWC_SRC[@]}" || exit 1
ko="$dir/dwc/dwc_pcie_pmu.ko"
# hisi_ptt.ko and dw-xdata-pcie.ko are placed by build_ptt and build_xdata.
# Their failure does not stop the rest: --ptt-module and --xdata-module try
# again and fail with the reason.
rm -f "$dir/hisi_ptt.ko" "$dir/dw-xdata-pcie.ko"
build_ptt || say "carrying on without hisi_ptt.ko"
build_xdata || say "carrying on without dw-xdata-pcie.ko"

# --- perf -----------------------------------------------------------------
# Debian 12's perf is 6.1: /usr/bin/perf (the binary; older packages named it
# perf_6.1 behind a wrapper script). A sysfs PMU needs no matching version.
perf=
for f in /usr/bin/perf /usr/bin/perf_6.1 /usr/bin/perf_*; do
    if [ -f "$f" ] && [ "$(head -c4 "$f" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
        perf=$f; break
    fi
done
[ -n "$perf" ] || { say "no perf binary (package linux-perf)"; exit 1; }
rm -rf "$dir/perf"; mkdir -p "$dir/perf/usr/bin"
cp -L "$perf" "$dir/perf/usr/bin/perf"
echo "$dir/perf/usr/bin/perf:/usr/bin/perf" > "$tmp/perf-files"
# ldd lists the whole closure, each library at the path the loader finds it
ldd "$perf" | awk '/=> \// {print $3} /^\t\/lib/ {print $1}' | sort -u |
while read -r so; do
    case $so in
        /lib64/*) g=$so ;;
        *) g=/lib/x86_64-linux-gnu/$(basename "$so") ;;
    esac
    mkdir -p "$dir/perf$(dirname "$g")"
    cp -L "$so" "$dir/perf$g"
    echo "$dir/perf$g:$g"
done >> "$tmp/perf-files"
grep -q ':/lib64/ld-linux-x86-64.so.2$' "$tmp/perf-files" || { say "ldd $perf named no loader"; exit 1; }

# --- into place -----------------------------------------------------------
mv "$tmp/vmlinux" "$dir/vmlinux"
cp "$vmlinuz" "$dir/vmlinuz"
cp "$tmp/image/boot/config-$rel" "$dir/config"
cp "$ko" "$dir/dwc_pcie_pmu.ko"
mv "$tmp/perf-files" "$dir/perf-files"
echo "$hdir" > "$dir/headers-dir"
echo "$rel" > "$dir/release"
printf '%s\n' "$pkg $ver" "perf $($perf --version 2>/dev/null || true) ($perf)" > "$dir/package"
echo "$rel" > "$dir/stamp"
rm -rf "$dl"
say "ready in $(( $(date +%s) - t0 )) s: $dir"
answer
