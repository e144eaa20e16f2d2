#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# An arm64 (aarch64) Linux guest, for qemu-system-aarch64 -M virt, from
# Debian 12's packages: Debian's arm64 6.12 kernel, the DesignWare PCIe PMU
# driver (drivers/perf/dwc_pcie_pmu.c) and the HiSilicon PCIe Tune and
# Trace driver (drivers/hwtracing/ptt/hisi_ptt.c), which Debian does not
# build, cross-built as modules for it, Debian's arm64 busybox and perf, and
# the pcie-telemetry tool of this repository cross-built for arm64.
#
# The arm64 packages come from an apt configuration of its own (sources,
# lists and cache under the cache directory below; arm64 only; the
# machine's apt sources and architectures are left alone, nothing arm64 is
# installed on the host), which checks them against Debian's signed index:
# the newest linux-image-6.12.*+deb12-arm64 of bookworm-security whose
# headers (-arm64, -common) are there at the same version, busybox-static,
# linux-perf and the libraries (and, for the tool, the -dev packages) its
# programs need. Those are found by following the programs' NEEDED entries
# recursively through the unpacked packages (a soname missing from them is
# looked for among the Depends of what is fetched); the packages are
# unpacked, never installed, into one arm64 sysroot. The host's own apt
# gives linux-kbuild-6.12 (amd64: kbuild's host programs) and
# linux-source-6.12 at the kernel's version, as guest-kernel-612.sh does.
# The drivers are taken out of the source unmodified and built with
# make -C <headers> M=<dir> and Debian's cross compiler
# (gcc-12-aarch64-linux-gnu, the compiler the kernel was built with). The
# kernel's /boot/vmlinuz is a raw arm64 Image (one compressed with gzip or
# an EFI zboot one would be unpacked), which QEMU's -kernel boots as it is.
#
# The kernel, the modules, busybox, perf and the sysroot live in
# $NDK_TELEMETRY_CACHE/arm64-6.12 (default
# ~/.cache/ndk-pcie-telemetry/arm64-6.12); a rerun prints the cached paths at
# once. Remove that folder to move to a newer kernel. The first run takes
# about 2 minutes and downloads about 295 MB: linux-source 154 MB, the
# kernel package 93 MB, the headers and kbuild 17 MB, perf, busybox and the
# sysroot's packages 22 MB, the arm64 index 9 MB (and 40 MB more when it
# installs the cross compiler). The cache keeps about 120 MB.
#
# The tool is not cached: it changes with the repository. --tool-files
# configures (meson, with -Dguest_tool_only=true and the cache's cross file,
# cross.ini, which points at the sysroot) and rebuilds (ninja) it in
# BUILD_DIR, default <repository>/build-arm64, on each call; a BUILD_DIR
# configured on an earlier cache is configured anew (meson setup --wipe).
#
#   guest-arm64.sh [--image]     the raw arm64 Image (QEMU -kernel)
#   guest-arm64.sh --ptt-module  hisi_ptt.ko
#   guest-arm64.sh --dwc-module  dwc_pcie_pmu.ko
#   guest-arm64.sh --busybox     the arm64 busybox binary (static), e.g.
#                                BUSYBOX=... for guest-initramfs.sh
#   guest-arm64.sh --perf-files  FILE:PATH pairs for guest-initramfs.sh, one a
#                                line: perf as /usr/bin/perf, the loader as
#                                /lib/ld-linux-aarch64.so.1 and the libraries
#                                in /lib/aarch64-linux-gnu
#   guest-arm64.sh --tool-files [BUILD_DIR]
#                                FILE:PATH pairs: pcie-telemetry as
#                                /usr/bin/pcie-telemetry, its library and the
#                                arm64 libraries they load
#   guest-arm64.sh --release     the kernel release (uname -r)
#
# Needs an amd64 host with apt, and root on first use when host packages are
# missing (it installs them with apt-get). Exit status: 0 ready; 77 it
# cannot be made here (not amd64, no apt, not root, no archive reachable,
# no 6.12 kernel with headers and source in it: the reason on stderr); 1 any
# other error; 2 wrong usage.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
. "$REPO/scripts/lib/private-apt.sh"
. "$REPO/scripts/lib/kmod.sh"
CACHE=${NDK_TELEMETRY_CACHE:-$HOME/.cache/ndk-pcie-telemetry}
dir="$CACHE/arm64-6.12"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
MIRROR=http://deb.debian.org/debian
SECURITY=http://deb.debian.org/debian-security
TRIPLET=aarch64-linux-gnu
CROSS=$TRIPLET-
CROSS_CC=${CROSS}gcc-12
# where the packages put libraries, in the order the loader looks
LIBDIRS="lib/$TRIPLET usr/lib/$TRIPLET lib usr/lib"
say() { echo "guest-arm64: $*" >&2; }
usage() {
    echo "usage: guest-arm64.sh [--image|--ptt-module|--dwc-module|--busybox|--perf-files|--tool-files [BUILD_DIR]|--release]" >&2
    exit 2
}
mode=image
build=
case "${1:-}" in
    ""|--image) ;;
    --ptt-module) mode=ptt ;;
    --dwc-module) mode=dwc ;;
    --busybox) mode=busybox ;;
    --perf-files) mode=perf ;;
    --tool-files) mode=tool; build=${2:-} ;;
    --release) mode=release ;;
    *) usage ;;
esac
if [ $mode = tool ]; then [ $# -le 2 ] || usage; else [ $# -le 1 ] || usage; fi
build=$(realpath -m "${build:-$REPO/build-arm64}")

# --- ELF helpers ----------------------------------------------------------
is_elf() { [ "$(head -c4 "$1" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; }
# machine FILE: the ELF header's Machine (AArch64 for arm64)
machine() { LC_ALL=C readelf -h "$1" 2>/dev/null | sed -n 's/^ *Machine: *//p'; }
# needed FILE: its NEEDED sonames
needed() { LC_ALL=C readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }
# interp FILE: its program interpreter (the dynamic loader)
interp() { LC_ALL=C readelf -l "$1" 2>/dev/null | sed -n 's/.*program interpreter: \(.*\)\]$/\1/p'; }
# find_lib ROOT SONAME: the file the loader would take in ROOT, or nothing
find_lib() {
    local d
    for d in $LIBDIRS; do
        [ -e "$1/$d/$2" ] && { echo "$1/$d/$2"; return 0; }
    done
    return 0
}
# closure ROOT SKIP FILE...: the libraries in ROOT that the FILEs load,
# followed recursively, as an array CLOSURE (paths in ROOT, by soname, may
# be links), and the sonames not in ROOT as MISSING. Sonames matching the
# pattern SKIP (the FILEs' own) and the loader are left out.
closure() {
    local root=$1 skip=$2 f so lib seen=" " todo loader
    shift 2
    todo=("$@")
    loader=$(basename "$(interp "$1")")
    CLOSURE=() MISSING=()
    while [ ${#todo[@]} -gt 0 ]; do
        f=${todo[0]}; todo=("${todo[@]:1}")
        for so in $(needed "$f"); do
            # shellcheck disable=SC2254
            case $so in $skip|"$loader") continue ;; esac
            case $seen in *" $so "*) continue ;; esac
            seen="$seen$so "
            lib=$(find_lib "$root" "$so")
            if [ -n "$lib" ] && is_elf "$lib"; then
                CLOSURE+=("$lib"); todo+=("$lib")
            else
                MISSING+=("$so")
            fi
        done
    done
}

# --- the tool (rebuilt on each call) ---------------------------------------
# tool_files: configures BUILD_DIR if need be, runs ninja in it and prints
# the FILE:PATH pairs
tool_files() {
    local sysroot="$dir/sysroot" tool lib f m log so l
    command -v meson > /dev/null && command -v ninja > /dev/null ||
        { say "meson and ninja are needed: apt-get install meson ninja-build"; exit 77; }
    # one build at a time in the build directories
    exec 8> "$dir/.tool-lock"
    flock 8
    log="$dir/tool-build.log"
    # host_family: what BUILD_DIR is configured for (aarch64 when by this)
    host_family() {
        python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["host"]["cpu_family"])' \
            "$build/meson-info/intro-machines.json" 2>/dev/null || true
    }
    if [ -f "$build/build.ninja" ]; then
        m=$(host_family)
        [ "$m" = aarch64 ] || { say "$build is not a build for aarch64 (it is for ${m:-?}): give another BUILD_DIR"; exit 1; }
        m=
    fi
    # a build directory configured on another sysroot (the cache made anew)
    # is wiped: meson keeps what it found of the libraries
    if [ ! -f "$build/build.ninja" ]; then
        say "configuring $build (meson, cross file $dir/cross.ini)"
        meson setup --cross-file "$dir/cross.ini" -Dguest_tool_only=true \
            "$build" "$REPO" > "$log" 2>&1 || m=failed
    elif ! cmp -s "$dir/stamp" "$build/.guest-arm64-stamp"; then
        say "configuring $build anew for the sysroot of $dir"
        meson setup --wipe --cross-file "$dir/cross.ini" -Dguest_tool_only=true \
            "$build" "$REPO" > "$log" 2>&1 || m=failed
    fi
    [ "${m:-}" != failed ] || { cat "$log" >&2; say "meson setup of $build failed"; exit 1; }
    [ "$(host_family)" = aarch64 ] || { say "meson did not configure $build for aarch64"; exit 1; }
    cp "$dir/stamp" "$build/.guest-arm64-stamp"
    if ! ninja -C "$build" > "$log" 2>&1; then
        cat "$log" >&2; say "ninja -C $build failed"; exit 1
    fi
    tool=$build/guest-tool/pcie-telemetry
    lib=$build/guest-tool/libpcie-telemetry.so.0
    for f in "$tool" "$lib"; do
        [ -e "$f" ] || { say "$f is missing after the build"; exit 1; }
        [ "$(machine "$f")" = AArch64 ] || { say "$f is not an AArch64 ELF ($(machine "$f"))"; exit 1; }
    done
    closure "$sysroot" 'libpcie-telemetry.so*' "$tool" "$lib"
    [ ${#MISSING[@]} = 0 ] || { say "the tool needs libraries the sysroot has not: ${MISSING[*]}"; exit 1; }
    l=$(interp "$tool")
    echo "$tool:/usr/bin/pcie-telemetry"
    echo "$lib:/usr/lib/$TRIPLET/libpcie-telemetry.so.0"
    echo "$sysroot$l:$l"
    for so in "${CLOSURE[@]}"; do
        echo "$so:/lib/$TRIPLET/$(basename "$so")"
    done
}

answer() {
    case $mode in
        image) echo "$dir/Image" ;;
        ptt) echo "$dir/hisi_ptt.ko" ;;
        dwc) echo "$dir/dwc_pcie_pmu.ko" ;;
        busybox) echo "$dir/busybox" ;;
        perf) cat "$dir/perf-files" ;;
        tool) tool_files ;;
        release) cat "$dir/release" ;;
    esac
    exit 0
}
# the stamp is written last: with it, everything is there
ready() { [ -s "$dir/stamp" ]; }
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
# the arm64 packages of the sysroot fetched at once: the libraries perf
# loads, the C library and the tool's -dev packages with theirs; a library
# missing from them is looked for further (resolve_sysroot)
SYSROOT_PKGS="linux-perf libc6 libgcc-s1 libstdc++6 libopencsd1 libelf1 libdw1
  libunwind8 libslang2 libperl5.36 libcrypt1 libpython3.11 libexpat1 zlib1g
  liblzma5 libzstd1 libbz2-1.0 libcap2 libnuma1 libbabeltrace1 libglib2.0-0
  libpcre2-8-0 libffi8 libuuid1
  libc6-dev linux-libc-dev libpci-dev libpci3 libudev-dev libudev1 zlib1g-dev
  liblzma-dev libfdt-dev libfdt1"

case $(dpkg --print-architecture 2>/dev/null || uname -m) in
    amd64|x86_64) ;;
    *) say "only an amd64 host is supported (kbuild's host programs are Debian's amd64 ones)"; exit 77 ;;
esac
command -v apt-get > /dev/null || { say "apt-get is missing: this needs a Debian host"; exit 77; }

# --- host packages --------------------------------------------------------
# gcc-12-aarch64-linux-gnu is the compiler the kernel was built with
# (checked below against the headers' CONFIG_CC_VERSION_TEXT); dwarves is
# pahole (module BTF), libelf1/libssl3/zlib1g are what linux-kbuild's host
# programs link; meson, ninja-build and pkgconf build the tool.
NEED="gcc-12-aarch64-linux-gnu binutils-aarch64-linux-gnu binutils make zstd xz-utils
  gzip dwarves libelf1 libssl3 zlib1g dpkg debian-archive-keyring meson ninja-build pkgconf"
missing=()
for p in $NEED; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] ||
        missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
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

tmp="$dir/tmp"
rm -rf "$tmp"; mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
# the packages stay in dl/ until everything is built: a rerun after a
# failure does not fetch them again
dl="$dir/dl"
mkdir -p "$dl"

# --- apt of our own, for arm64 --------------------------------------------
# Debian 12's arm64 index in $dir/apt (scripts/lib/private-apt.sh)
A="$dir/apt"
APTCONF="$A/apt.conf"
mkdir -p "$A"
cat > "$A/sources.list" <<EOF
deb [signed-by=$KEYRING] $MIRROR bookworm main
deb [signed-by=$KEYRING] $MIRROR bookworm-updates main
deb [signed-by=$KEYRING] $SECURITY bookworm-security main
EOF
private_apt_conf "$A" arm64 "$A/sources.list" scripts/guest-arm64.sh
a64_get() { apt-get -c "$APTCONF" -q "$@"; }
a64_cache() { apt-cache -c "$APTCONF" "$@"; }

say "reading Debian 12's arm64 package index (about 9 MB)"
if ! a64_get --error-on=any update > "$A/update.log" 2>&1; then
    sed 's/^/    /' "$A/update.log" >&2
    if grep -q -e NO_PUBKEY -e EXPKEYSIG -e 'not signed' "$A/update.log"; then
        say "apt cannot check the signature of Debian's arm64 index with $KEYRING"; exit 1
    fi
    say "cannot read Debian's arm64 package index from $MIRROR and $SECURITY"
    exit 77
fi

# get APT PKG[=VERSION]...: each into $dl (a whole one of an earlier run
# is used again: apt gives its SHA256) and DEB[PKG] is its file; APT is
# a64_get (arm64) or apt-get (the host's)
declare -A DEB=()
get() {
    local apt=$1 file size sum name todo=() a
    declare -A arg=()
    shift
    for a; do arg[${a%%=*}]=$a; done
    if ! "$apt" download --print-uris "$@" > "$tmp/uris" 2> "$tmp/uris.err"; then
        cat "$tmp/uris.err" >&2; say "apt cannot find $*"; exit 77
    fi
    while read -r _ file size sum; do
        name=${file%%_*}
        DEB[$name]=$dl/$file
        if [ -f "$dl/$file" ] && [ "$(stat -c %s "$dl/$file")" = "$size" ] &&
           [ "$(sha256sum < "$dl/$file" | cut -d' ' -f1)" = "${sum#SHA256:}" ]; then
            continue
        fi
        rm -f "$dl/$file"
        todo+=("${arg[$name]}")
    done < "$tmp/uris"
    [ ${#todo[@]} -gt 0 ] || return 0
    say "downloading ${todo[*]}"
    (cd "$dl" && "$apt" download "${todo[@]}" > "$tmp/download.log" 2>&1) ||
        { cat "$tmp/download.log" >&2; say "apt-get download failed"; exit 77; }
    for name in "${!arg[@]}"; do
        [ -s "${DEB[$name]:-}" ] || { say "no ${DEB[$name]:-package of $name} after apt-get download"; exit 1; }
    done
}

# --- which kernel ---------------------------------------------------------
IMAGE_RE='^linux-image-6\.12\.[0-9]+\+deb12(\.[0-9]+)?-arm64$'
list=$(a64_cache search --names-only "$IMAGE_RE" | awk '{print $1}' | sort -rV)
[ -n "$list" ] || { say "no linux-image-6.12.*+deb12-arm64 in Debian's arm64 index (bookworm-security)"; exit 77; }
# kbuild and the source from the host's apt
host_has() { apt-cache show "$1" 2>/dev/null | grep -x "Version: $2" > /dev/null; }
if ! apt-cache show linux-source-6.12 > /dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    say "no linux-source-6.12 in apt's lists; running apt-get update"
    apt-get update -q >&2 || true
fi
# the newest image whose headers, kbuild and source exist at its version
pkg='' ver='' rel=''
for p in $list; do
    r=${p#linux-image-}
    v=$(a64_cache show --no-all-versions "$p" 2>/dev/null | sed -n 's/^Version: //p' | head -1)
    [ -n "$v" ] || continue
    ok=1
    for q in "linux-headers-$r" "linux-headers-${r%-arm64}-common"; do
        a64_cache show "$q" 2>/dev/null | grep -x "Version: $v" > /dev/null || { ok=0; break; }
    done
    [ $ok = 0 ] || { host_has "linux-kbuild-${r%-arm64}" "$v" && host_has linux-source-6.12 "$v"; } || ok=0
    if [ $ok = 1 ]; then pkg=$p ver=$v rel=$r; break; fi
    say "skipping $p $v: its headers, kbuild or source are not in the archive"
done
[ -n "$pkg" ] || { say "no linux-image-6.12 arm64 with headers, kbuild and source at the same version"; exit 77; }
say "kernel $rel (Debian $ver)"

get a64_get "$pkg=$ver" "linux-headers-$rel=$ver" "linux-headers-${rel%-arm64}-common=$ver"
get apt-get "linux-kbuild-${rel%-arm64}=$ver" "linux-source-6.12=$ver"

# --- the kernel -----------------------------------------------------------
# only /boot of the image (its modules are not wanted); tar stops once it
# has read the archive's /boot, dpkg-deb then sees a broken pipe
mkdir -p "$tmp/image"
{ dpkg-deb --fsys-tarfile "${DEB[$pkg]}" 2>/dev/null |
      tar -x -C "$tmp/image" ./boot 2>/dev/null; } || true
vmlinuz="$tmp/image/boot/vmlinuz-$rel"
[ -s "$vmlinuz" ] || { say "$pkg has no /boot/vmlinuz-$rel"; exit 1; }
[ -s "$tmp/image/boot/config-$rel" ] || { say "$pkg has no /boot/config-$rel"; exit 1; }
hex() { od -An -tx1 -j "$2" -N "$3" "$1" | tr -d ' \n'; }
u32() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '; }
case $(hex "$vmlinuz" 0 2) in
    1f8b)   # the Image compressed with gzip
        gzip -dc < "$vmlinuz" > "$tmp/Image" ;;
    *)
        if [ "$(hex "$vmlinuz" 4 4)" = "$(printf zimg | od -An -tx1 | tr -d ' ')" ]; then
            # EFI zboot: a PE file with the compressed Image at the offset
            # and size of 0x08 and 0x0c, the compression named at 0x18
            ztype=$(dd if="$vmlinuz" bs=1 skip=24 count=32 status=none | tr -d '\0')
            case $ztype in
                gzip) dc="gzip -dc" ;;
                zstd) dc="zstd -qdc" ;;
                xz|lzma) dc="xz -dc" ;;
                *) say "$vmlinuz is an EFI zboot image compressed with \"$ztype\""; exit 1 ;;
            esac
            dd if="$vmlinuz" iflag=skip_bytes,count_bytes skip="$(u32 "$vmlinuz" 8)" \
               count="$(u32 "$vmlinuz" 12)" status=none | $dc > "$tmp/Image"
        else
            cp "$vmlinuz" "$tmp/Image"
        fi ;;
esac
# the arm64 Image header's magic "ARM\x64" at 0x38
[ "$(hex "$tmp/Image" 56 4)" = 41524d64 ] || { say "the kernel of $pkg is no arm64 Image"; exit 1; }
banner=$(LC_ALL=C grep -a -o -m1 "Linux version $rel " "$tmp/Image" | head -1 || true)
[ -n "$banner" ] || say "note: no \"Linux version $rel\" in the Image (compressed parts?)"

# --- the headers ----------------------------------------------------------
# (only while the modules are built: no answer needs them)
H=$tmp/headers
mkdir -p "$H"
for p in "linux-headers-$rel" "linux-headers-${rel%-arm64}-common" "linux-kbuild-${rel%-arm64}"; do
    dpkg-deb -x "${DEB[$p]}" "$H"
done
hdir="$H/usr/src/linux-headers-$rel"
# The -arm64 Makefile includes the -common one by its installed path; the
# rest of the tree is found relative to it (the scripts and tools links too,
# to the amd64 kbuild's host programs).
sed -i "s|^include /usr/src/|include $H/usr/src/|" "$hdir/Makefile"
grep -q "^include $H/usr/src/linux-headers-${rel%-arm64}-common/Makefile$" "$hdir/Makefile" ||
    { say "unexpected $hdir/Makefile"; exit 1; }
[ -x "$hdir/scripts/mod/modpost" ] || { say "no kbuild host programs in $hdir/scripts"; exit 1; }
cc_text=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"$/\1/p' "$hdir/.config")
have=$("$CROSS_CC" --version | head -1)
[ "$have" = "$cc_text" ] || say "note: the kernel was built with \"$cc_text\", building with \"$have\""

# --- the drivers ----------------------------------------------------------
say "extracting the drivers from linux-source-6.12 (about 15 s)"
names=()
for f in "${DWC_SRC[@]}" "${PTT_SRC[@]}"; do names+=("linux-source-6.12/$f"); done
mkdir -p "$tmp/src"
# tar stops reading once it has each file (--occurrence): dpkg-deb then
# sees a broken pipe
{ dpkg-deb --fsys-tarfile "${DEB[linux-source-6.12]}" 2>/dev/null |
      tar -xO ./usr/src/linux-source-6.12.tar.xz 2>/dev/null | xz -dc 2>/dev/null |
      tar -x --occurrence=1 -C "$tmp/src" "${names[@]}" 2>/dev/null; } || true
for f in "${DWC_SRC[@]}" "${PTT_SRC[@]}"; do
    [ -s "$tmp/src/linux-source-6.12/$f" ] || { say "no $f in linux-source-6.12 $ver"; exit 1; }
done

# the modules, unmodified, cross-built (scripts/lib/kmod.sh), AArch64
build_module() {
    local name=$1
    shift
    kmod_build "$tmp/src/linux-source-6.12" "$tmp/$name" "$name" "$hdir" \
        "$rel" "${CROSS}nm" ARCH=arm64 CROSS_COMPILE="$CROSS" CC="$CROSS_CC" \
        -- "$@" || exit 1
    [ "$(machine "$tmp/$name/$name.ko")" = AArch64 ] ||
        { say "$name.ko is not an AArch64 ELF"; exit 1; }
}
build_module dwc_pcie_pmu "${DWC_SRC[@]}"
build_module hisi_ptt "${PTT_SRC[@]}"
# the device it binds: Huawei (0x19e5) a12e
kmod_alias "$tmp/hisi_ptt/hisi_ptt.ko" pci:v000019E5d0000A12E || exit 1

# --- busybox --------------------------------------------------------------
get a64_get busybox-static
mkdir -p "$tmp/busybox"
dpkg-deb -x "${DEB[busybox-static]}" "$tmp/busybox"
[ "$(machine "$tmp/busybox/bin/busybox")" = AArch64 ] || { say "busybox-static has no AArch64 /bin/busybox"; exit 1; }
[ -z "$(interp "$tmp/busybox/bin/busybox")" ] || { say "the arm64 busybox is not static"; exit 1; }

# --- the sysroot: perf, its libraries, the tool's -dev packages -----------
avail=$(a64_cache pkgnames)
seed=()
for p in $SYSROOT_PKGS; do
    if printf '%s\n' "$avail" | grep -Fx -- "$p" > /dev/null; then seed+=("$p")
    else say "note: no $p in Debian's arm64 index"; fi
done
get a64_get "${seed[@]}"
sysroot="$tmp/sysroot"
mkdir -p "$sysroot"
# fix_links: the packages' absolute links (e.g. usr/lib/*/liblzma.so ->
# /lib/*/liblzma.so.5.4.1, which the linker follows) made relative, within
# the sysroot
fix_links() {
    local l t
    find "$sysroot" -type l -lname '/*' -print0 |
    while IFS= read -r -d '' l; do
        t=$(readlink "$l")
        ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$sysroot$t")" "$l"
    done
}
declare -A TRIED=()     # packages fetched (or not in the index)
IN=()                   # those unpacked into the sysroot
for p in "${seed[@]}"; do dpkg-deb -x "${DEB[$p]}" "$sysroot"; TRIED[$p]=1; IN+=("$p"); done
fix_links
# depends PKG...: the packages they depend on (every alternative), one a line
depends() {
    local p
    for p; do
        dpkg-deb -f "${DEB[$p]}" Pre-Depends Depends 2>/dev/null
    done | sed 's/^[A-Za-z-]*: //' | tr ',|' '\n' |
        sed -e 's/([^)]*)//g' -e 's/\[[^]]*\]//g' -e 's/:any//' -e 's/[[:space:]]//g' |
        sed '/^$/d' | sort -u
}
# stem SONAME: libfoo-1.2.so.3 -> foo (to try the likeliest package first)
stem() { local s=${1#lib}; s=${s%%.so*}; echo "${s%%-[0-9]*}" | tr 'A-Z_' 'a-z-'; }
# resolve_sysroot FILE...: until the FILEs' closure is whole, fetch what it
# misses from the Depends of the packages in the sysroot
resolve_sysroot() {
    local so c cand found rounds=0
    while :; do
        closure "$sysroot" '' "$@"
        [ ${#MISSING[@]} -gt 0 ] || return 0
        rounds=$((rounds + 1))
        [ $rounds -le 30 ] || { say "the libraries' closure does not end"; exit 1; }
        so=${MISSING[0]} found=
        cand=$(depends "${IN[@]}" | while read -r c; do
            [ -z "${TRIED[$c]:-}" ] || continue
            case $c in *"$(stem "$so")"*) echo "0 $c" ;; *) echo "1 $c" ;; esac
        done | sort | cut -d' ' -f2)
        for c in $cand; do
            TRIED[$c]=1
            printf '%s\n' "$avail" | grep -Fx -- "$c" > /dev/null || continue
            get a64_get "$c"
            rm -rf "$tmp/pkg"; mkdir -p "$tmp/pkg"
            dpkg-deb -x "${DEB[$c]}" "$tmp/pkg"
            if [ -n "$(find_lib "$tmp/pkg" "$so")" ]; then
                dpkg-deb -x "${DEB[$c]}" "$sysroot"
                fix_links
                say "$so: from $c"
                IN+=("$c")
                found=$c; break
            fi
            unset "DEB[$c]"
        done
        [ -n "$found" ] || { say "no arm64 package found for $so (unresolved: ${MISSING[*]})"; exit 1; }
    done
}
perf=$sysroot/usr/bin/perf
is_elf "$perf" || perf=$(ls "$sysroot"/usr/bin/perf_* 2>/dev/null | head -1)
{ [ -n "$perf" ] && is_elf "$perf"; } || { say "linux-perf has no perf binary"; exit 1; }
[ "$(machine "$perf")" = AArch64 ] || { say "$perf is not an AArch64 ELF"; exit 1; }
# what the tool links now, with what it loads
tool_libs=()
for so in libpci.so.3 liblzma.so.5 libfdt.so.1 libc.so.6; do
    f=$(find_lib "$sysroot" "$so")
    [ -n "$f" ] || { say "the sysroot has no $so"; exit 1; }
    tool_libs+=("$f")
done
resolve_sysroot "$perf" "${tool_libs[@]}"
loader=$(interp "$perf")
[ -n "$loader" ] && is_elf "$sysroot$loader" || { say "no loader $loader in libc6"; exit 1; }
for f in libpci.pc liblzma.pc; do
    [ -f "$sysroot/usr/lib/$TRIPLET/pkgconfig/$f" ] || { say "the sysroot has no $f"; exit 1; }
done
[ -f "$sysroot/usr/include/libfdt.h" ] || { say "the sysroot has no libfdt.h"; exit 1; }

# perf and its libraries, each as a plain file under its soname
closure "$sysroot" '' "$perf"
mkdir -p "$tmp/perf/usr/bin" "$tmp/perf/lib/$TRIPLET"
cp "$perf" "$tmp/perf/usr/bin/perf"
cp -L "$sysroot$loader" "$tmp/perf$loader"
{
    echo "$dir/perf/usr/bin/perf:/usr/bin/perf"
    echo "$dir/perf$loader:$loader"
    for f in "${CLOSURE[@]}"; do
        cp -L "$f" "$tmp/perf/lib/$TRIPLET/"
        echo "$dir/perf/lib/$TRIPLET/$(basename "$f"):/lib/$TRIPLET/$(basename "$f")"
    done
} > "$tmp/perf-files"
perf_version=$(dpkg-deb -f "${DEB[linux-perf]}" Version)

# the sysroot is kept for the tool: its headers, libraries and pkg-config
# files; the programs, perl's and perf's modules, gconv and the
# documentation are not needed
rm -rf "${sysroot:?}"/{bin,sbin,usr/bin,usr/sbin,usr/libexec,usr/lib/perf-core} \
    "$sysroot"/usr/lib/"$TRIPLET"/{perl,perl5,perl-base,gconv} \
    "$sysroot"/usr/share/{doc,man,info,locale,lintian,bug,bash-completion,perl,perl5,gdb}

# --- the cross file -------------------------------------------------------
S=$dir/sysroot
cat > "$tmp/cross.ini" <<EOF
# SPDX-License-Identifier: GPL-2.0-or-later
# written by scripts/guest-arm64.sh: Debian's arm64 cross compiler on the
# arm64 sysroot of Debian 12's packages in $S
[binaries]
c = '$CROSS_CC'
ar = '${CROSS}ar'
strip = '${CROSS}strip'
pkg-config = 'pkg-config'

[properties]
sys_root = '$S'
pkg_config_libdir = ['$S/usr/lib/$TRIPLET/pkgconfig', '$S/usr/share/pkgconfig']

[built-in options]
c_args = ['--sysroot=$S']
c_link_args = ['--sysroot=$S', '-L$S/usr/lib/$TRIPLET', '-L$S/lib/$TRIPLET', '-Wl,-rpath-link,$S/usr/lib/$TRIPLET', '-Wl,-rpath-link,$S/lib/$TRIPLET']

[host_machine]
system = 'linux'
cpu_family = 'aarch64'
cpu = 'aarch64'
endian = 'little'
EOF

# --- into place -----------------------------------------------------------
rm -rf "$dir/sysroot" "$dir/perf"
mv "$sysroot" "$dir/sysroot"
mv "$tmp/perf" "$dir/perf"
mv "$tmp/cross.ini" "$dir/cross.ini"
mv "$tmp/perf-files" "$dir/perf-files"
cp "$tmp/busybox/bin/busybox" "$dir/busybox"
mv "$tmp/Image" "$dir/Image"
cp "$tmp/image/boot/config-$rel" "$dir/config"
cp "$tmp/dwc_pcie_pmu/dwc_pcie_pmu.ko" "$dir/dwc_pcie_pmu.ko"
cp "$tmp/hisi_ptt/hisi_ptt.ko" "$dir/hisi_ptt.ko"
echo "$rel" > "$dir/release"
{
    echo "$pkg $ver"
    echo "busybox-static $(dpkg-deb -f "${DEB[busybox-static]}" Version)"
    echo "linux-perf $perf_version"
} > "$dir/package"
# with the time: a build directory of the tool tells a new sysroot by it
echo "$rel $(date -u +%FT%TZ)" > "$dir/stamp"
rm -rf "$dl" "$A"
say "ready in $(( $(date +%s) - t0 )) s: $dir"
answer
