#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A development VM for CESNET's NDK software: build a prepared ndk-sw
# checkout's nfb driver for the guest kernel, its libnfb and the tools
# nfb-info, nfb-bus, nfb-dma and ndp-tool, put them with pcie-telemetry into
# an initramfs, and boot a guest with a virtual card behind a PCIe root port
# under CESNET's generic NDK PCI ID (18ec:c000) and iomem=relaxed. The guest
# loads the driver and prints nfb-info, nfb-bus -l and pcie-telemetry -d
# /dev/nfbN for each card, runs the caller's commands (NDK_SW_GUEST_RUN),
# then powers off (exit status 0 only if all of it worked), or leaves a
# shell (--shell).
#
# usage: ndk-sw-guest.sh [--shell] NDK_SW_DIR [QEMU ARGS ...]
#   QEMU ARGS go to QEMU, e.g. a second card:
#     -device pcie-root-port,id=rp1,chassis=2,slot=2
#     -device ndk-pcie-telemetry,bus=rp1,vendor-id=0x18ec,device-id=0xc000
#
# "Prepared" means what ndk-sw's README asks before a build: ./build.sh
# --prepare has unpacked the third-party archive into the checkout. The
# script checks for the files of it that the checkout's own build names
# (drivers/kernel/drivers/fdt/fdt.h, the ../ sources of the nfb driver's
# Makefile, the uapi headers libnfb includes, the sources of
# tools-debug/CMakeLists.txt) and refuses, with nothing built or booted,
# when one is missing. There is no option to leave parts out: a checkout
# whose Makefile leaves the boot/flash parts out needs no archive files for
# them.
#
# pynfb (ndk-sw's Python binding) is built and put into the guest with
# Debian's Python when /usr/bin/python3 can import the module fdt it needs
# (PyPI's fdt; Debian has no package of it: pip install fdt); else it is
# left out with a note. NDK_FPGA_DIR naming an ndk-fpga checkout adds its
# Python package ofm (python/ofm, installed with pip, no dependencies) and
# Debian's tabulate, and the guest runs the reference reader
# nfb-pcie-telemetry -d /dev/nfbN when the package installs it.
#
# The build runs on a copy of the checkout (the user's tree is not
# written), cached in $NDK_TELEMETRY_CACHE/ndk-sw/<key>, the key a hash of
# the checkout's files (what git would see, build products left out), its
# version and the guest kernel's release: a second run with nothing
# changed only builds the initramfs and boots. The three most recently
# used builds are kept.
#
# The default card is a plain telemetry card driven by a PTC traffic
# object. NDK_SW_CARD_PROPS adds properties to it; with dma-queues=N (N > 0)
# the card carries the DMA engine (docs/dma.md), takes no traffic object
# (the telemetry block counts the engine's transfers) and the guest gets
# 1 GiB of memory, as the nfb driver takes 8 MiB of rings per queue:
#     NDK_SW_CARD_PROPS=dma-queues=2 NDK_SW_GUEST_RUN="nfb-dma; \
#         nfb-bus -p /firmware/mi_bus0/dbg_gls0 0 1; \
#         ndp-tool loopback-hw -i 0 -p 1000 -s 64" ndk-sw-guest.sh ndk-sw
#
# Environment:
#   NDK_SW_GUEST_RUN      commands for the guest, separated by ';' or
#                         newlines (a ';' always ends a command): each is
#                         shown as "$ command" and run with the guest's sh
#                         after the driver has loaded and the cards have been
#                         printed; one that fails fails the run (its status
#                         is shown). With --shell they run when the shell
#                         starts. The default time limit of the guest
#                         (GUEST_TIMEOUT, 120 s) becomes 900 s with them.
#   NDK_SW_CARD_PROPS     properties for the default card, comma-separated
#                         (e.g. dma-queues=2)
#   NDK_SW_GUEST_MEM      the guest's memory when the card has dma-queues
#                         (default 1G)
#   QEMU                  a QEMU with the card to boot instead of the
#                         project's build (scripts/setup.sh is then not run
#                         when the build has the guest tool pcie-telemetry)
#   NDK_TELEMETRY_CACHE   cache directory (default ~/.cache/ndk-pcie-telemetry)
#   NDK_SW_GUEST_MODULES  further modules of the guest kernel's package to
#                         load before nfb.ko (with what they depend on)
#   NDK_FPGA_DIR          an ndk-fpga checkout whose python/ofm holds the
#                         reference reader nfb-pcie-telemetry (needs pynfb)
#   JOBS                  parallel build jobs (default: the number of CPUs)
#
# Exit status: 0 the guest did it all; 1 a build or the guest failed, or
# the checkout is not prepared; 2 usage (no such directory, not ndk-sw).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${NDK_TELEMETRY_CACHE:-$HOME/.cache/ndk-pcie-telemetry}
JOBS=${JOBS:-$(nproc)}
# the build's recipe: change it when the build below changes
RECIPE=3
# the tools built and put into the guest
TOOLS="nfb-info nfb-bus nfb-dma ndp-tool"
PACKAGES=(autoconf automake libtool make gcc cmake pkg-config libfdt-dev
    libnuma-dev libncurses-dev libarchive-dev libconfig-dev libpci-dev
    zlib1g-dev binutils cpio)

usage() {
    cat <<'EOF'
usage: ndk-sw-guest.sh [--shell] NDK_SW_DIR [QEMU ARGS ...]
Builds a prepared CESNET ndk-sw checkout (nfb driver, libnfb, nfb-info,
nfb-bus, nfb-dma, ndp-tool) for the guest kernel and boots a guest with a
virtual NDK card behind a PCIe root port; prints nfb-info, nfb-bus -l and
pcie-telemetry -d /dev/nfb0, runs the commands of NDK_SW_GUEST_RUN, or
leaves a shell with --shell. NDK_SW_CARD_PROPS adds properties to the card
(e.g. dma-queues=2).
EOF
}
say() { printf '\n==> %s\n' "$*"; }
die() {     # status, message, [what to do]
    printf 'ndk-sw-guest: error: %s\n' "$2" >&2
    [ $# -lt 3 ] || printf 'ndk-sw-guest: what to do: %s\n' "$3" >&2
    exit "$1"
}

# ------------------------------------------------------------ arguments
shell=0
case "${1:-}" in
    --shell) shell=1; shift ;;
    -h|--help) usage; exit 0 ;;
esac
if [ $# -lt 1 ] || [ -z "$1" ]; then
    die 2 "no ndk-sw checkout given (usage: ndk-sw-guest.sh [--shell] NDK_SW_DIR [QEMU ARGS ...])" \
        "give the directory of a prepared ndk-sw checkout (git clone https://github.com/CESNET/ndk-sw; cd ndk-sw; ./build.sh --prepare)"
fi
arg=$1
shift
[ -e "$arg" ] || die 2 "$arg does not exist" "give the directory of a prepared ndk-sw checkout"
[ -d "$arg" ] || die 2 "$arg is not a directory" "give the directory of a prepared ndk-sw checkout"
NDK=$(cd "$arg" && pwd)

# an ndk-sw checkout: the driver, libnfb and the tools
for f in CMakeLists.txt drivers/configure.ac drivers/Makefile.in \
         drivers/kernel/drivers/nfb/Makefile drivers/kernel/drivers/nfb/pci.c \
         libnfb/CMakeLists.txt tools/info/info.c tools/bus/bus.c; do
    [ -f "$NDK/$f" ] ||
        die 2 "$arg is not an ndk-sw checkout (it has no $f)" \
            "give the top directory of a CESNET ndk-sw checkout"
done

if [ -n "${NDK_FPGA_DIR:-}" ] && [ ! -f "$NDK_FPGA_DIR/python/ofm/setup.py" ] &&
   [ ! -f "$NDK_FPGA_DIR/python/ofm/pyproject.toml" ]; then
    die 2 "NDK_FPGA_DIR=$NDK_FPGA_DIR has no python/ofm/setup.py or pyproject.toml" \
        "set NDK_FPGA_DIR to the top directory of an ndk-fpga checkout, or unset it"
fi

# prepared: every third-party file its own build names is there
missing=()
need() { [ -e "$NDK/$1" ] || missing+=("$1"); }
need drivers/kernel/drivers/fdt/fdt.h
for o in $(grep -oE '\.\./[A-Za-z0-9_./-]+\.o' "$NDK/drivers/kernel/drivers/nfb/Makefile" | sort -u); do
    o=${o#../}
    need "drivers/kernel/drivers/${o%.o}.c"
done
for h in $(grep -rhoE '#include <uapi/[^>]+>' "$NDK/libnfb/src" 2>/dev/null |
           sed -E 's/#include <(.*)>/\1/' | sort -u); do
    need "drivers/kernel/include/$h"
done
if [ -f "$NDK/tools-debug/CMakeLists.txt" ]; then
    for s in $(grep -E '^\s*add_executable' "$NDK/tools-debug/CMakeLists.txt" |
               grep -oE '[A-Za-z0-9_./-]+\.c' | sort -u); do
        need "tools-debug/$s"
    done
fi
if [ ${#missing[@]} -gt 0 ]; then
    printf 'ndk-sw-guest: error: %s is not prepared: the third-party code that ndk-sw'"'"'s\n' "$arg" >&2
    nf="${#missing[@]} files"; [ ${#missing[@]} != 1 ] || nf="1 file"
    printf 'build.sh --prepare unpacks into it is missing (%s), e.g.\n' "$nf" >&2
    printf '    %s\n' "${missing[@]:0:6}" >&2
    printf 'ndk-sw-guest: what to do: cd %q && ./build.sh --prepare   (see its README: Build instructions)\n' "$NDK" >&2
    exit 1
fi

# pynfb, and the reference reader with it, when Python can have them
PY=/usr/bin/python3
pynfb=0 fpga=""
fdt_dir=$("$PY" -c 'import fdt, os; print(os.path.dirname(fdt.__file__))' 2>/dev/null) &&
    [ -f "$NDK/pynfb/setup.py.in" ] && pynfb=1
if [ -n "${NDK_FPGA_DIR:-}" ]; then
    [ $pynfb = 1 ] ||
        die 1 "the reference reader needs pynfb, and pynfb needs the Python module fdt for $PY" \
            "pip install fdt (for $PY), or unset NDK_FPGA_DIR"
    fpga=$(cd "$NDK_FPGA_DIR" && pwd)
fi
if [ $pynfb = 1 ]; then
    PACKAGES+=(cython3 python3-setuptools python3-dev)
    [ -z "$fpga" ] || PACKAGES+=(python3-pip python3-tabulate)
fi

# ------------------------------------------------------------- packages
install_packages() {
    [ "${NDK_TELEMETRY_NO_APT:-0}" = 1 ] && return 0
    local missing_p=() p
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
            missing_p+=("$p")
    done
    [ ${#missing_p[@]} -eq 0 ] && return 0
    [ "$(id -u)" = 0 ] || die 1 "packages to build ndk-sw are missing: ${missing_p[*]}" \
        "install them (apt-get install ${missing_p[*]}) or run as root"
    say "Installing the packages ndk-sw builds with: ${missing_p[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-upgrade \
        --no-install-recommends "${missing_p[@]}" ||
        die 1 "apt-get install failed" "install by hand: ${missing_p[*]}"
}
install_packages

if [ -n "${QEMU:-}" ] && [ -x "$REPO/build/guest-tool/pcie-telemetry" ]; then
    say "QEMU: $QEMU (scripts/setup.sh left out)"
else
    say "Setting up QEMU with the card and pcie-telemetry (scripts/setup.sh)"
    "$REPO/scripts/setup.sh"
fi

say "The guest kernel and its headers"
kernel=$("$REPO/scripts/guest-kernel.sh")
kdir=$("$REPO/scripts/guest-kernel-headers.sh") ||
    die 1 "the guest kernel's headers are not to be had (see above)" \
        "install the linux-headers package the message names, then rerun"
rel=$(basename "$kdir"); rel=${rel#linux-headers-}
echo "kernel $rel, headers $kdir"

# ------------------------------------------------ the checkout's files
# Build products (in-tree builds by hand, configure's output, CMake's
# build directory, the downloaded archive) are left out of the key and
# the copy.
tree_files() {
    (cd "$NDK" && find . \( -name .git -o -name autom4te.cache -o -name 'cmake-build*' \
        -o -path ./build -o -path ./drivers/src -o -path ./drivers/tmp \
        -o -path './drivers/.test*' -o -path ./pynfb/build -o -name __pycache__ \) -prune -o \
        \( -type f -o -type l \) ! \( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
        -o -name '.*.cmd' -o -name '*.o.d' -o -name Module.symvers -o -name modules.order \
        -o -name .gitversion -o -name '*.pyc' -o -name 3rdparty.tar.gz \
        -o -path ./drivers/configure -o -path './drivers/config.*' -o -path ./drivers/Makefile \
        -o -path ./drivers/dkms.conf -o -path ./drivers/flock_lockfile \
        -o -path ./pynfb/nfb/libnfb.c -o -path ./pynfb/nfb/libnetcope.c \) -print0 |
        LC_ALL=C sort -z)
}
# the version CMake wants (git describe, else the checkout's .gitversion,
# else VERSION)
version=$(git -C "$NDK" describe --tags --dirty 2>/dev/null ||
          cat "$NDK/.gitversion" 2>/dev/null || echo "v$(cut -f1 "$NDK/VERSION" 2>/dev/null || echo 0.0.0)")
# (a dangling link: the error message, the same each time, stands for it)
content=$(cd "$NDK" && tree_files | { xargs -0 sha256sum 2>&1 || true; } | sha256sum | cut -c1-64)
key=$(printf '%s\n' "$content" "$version" "$rel" "$RECIPE" | sha256sum | cut -c1-16)
work="$CACHE/ndk-sw/$key"
mkdir -p "$work"
exec 9> "$work/.lock"
flock 9
touch "$work/.used"

log() { echo "$work/$1.log"; }
failed() {  # step, log
    tail -25 "$2" >&2
    die 1 "$1 failed (log: $2)" "fix the error above in $NDK and rerun"
}

if [ -f "$work/.built" ]; then
    say "ndk-sw $version: built before for $rel ($work)"
else
    say "Building ndk-sw $version for $rel in $work (not in $NDK; about 2 minutes)"
    rm -rf "$work/src" "$work/build" "$work/out"
    mkdir -p "$work/src" "$work/out"
    (cd "$NDK" && tree_files | tar --null -T - -cf -) | tar -C "$work/src" -xf -
    # CMake reads the version of each directory that asks for it from git
    # or from .gitversion there; the copy has no .git
    grep -rl --include=CMakeLists.txt 'get_git_version()' "$work/src" |
    while read -r f; do
        printf '%s' "$version" > "$(dirname "$f")/.gitversion"
    done

    echo "    libnfb, nfb-info, nfb-bus, nfb-dma, ndp-tool (CMake)"
    cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DKDIR="$kdir" \
        -DPython_EXECUTABLE="$PY" \
        > "$(log cmake)" 2>&1 || failed "CMake's configuration" "$(log cmake)"
    make -C "$work/build" -j "$JOBS" $TOOLS > "$(log tools)" 2>&1 ||
        failed "building libnfb and the tools" "$(log tools)"

    echo "    the nfb driver (autoreconf, configure --with-kernel=$kdir, make)"
    (cd "$work/src/drivers" && autoreconf -fi &&
        ./configure --with-kernel="$kdir") > "$(log driver-configure)" 2>&1 ||
        failed "configuring the driver" "$(log driver-configure)"
    make -C "$work/src/drivers" -j "$JOBS" > "$(log driver)" 2>&1 ||
        failed "building the driver" "$(log driver)"

    ko="$work/src/drivers/kernel/drivers/nfb/nfb.ko"
    [ -f "$ko" ] || die 1 "the driver's build made no $ko" "see $(log driver)"
    strip --strip-debug -o "$work/out/nfb.ko" "$ko"
    for t in $TOOLS; do
        cp -a "$work/build/tools/$t" "$work/out/"
    done
    touch "$work/.built"
fi
if [ $pynfb = 1 ] && [ ! -f "$work/.pynfb-built" ]; then
    say "Building pynfb (Cython, for $PY)"
    make -C "$work/build" -j "$JOBS" python_nfb > "$(log pynfb)" 2>&1 ||
        failed "building pynfb" "$(log pynfb)"
    touch "$work/.pynfb-built"
elif [ $pynfb = 0 ]; then
    echo "(pynfb left out: $PY cannot import the module fdt it needs; pip install fdt to have it)"
fi

# keep the three most recently used builds
ls -1dt "$CACHE"/ndk-sw/*/.used 2>/dev/null | tail -n +4 | while read -r u; do
    d=$(dirname "$u")
    [ "$d" = "$work" ] || rm -rf "$d"
done

# ------------------------------------------------ modules for the guest
modinfo_field() {   # module, field
    tr '\0' '\n' < "$1" | LC_ALL=C grep -a "^$2=" | head -1 | cut -d= -f2- || true
}
[ "$(modinfo_field "$work/out/nfb.ko" vermagic | cut -d' ' -f1)" = "$rel" ] ||
    die 1 "$work/out/nfb.ko is not built for $rel" "remove $work and rerun"
mods="$work/modules"
rm -rf "$mods"; mkdir -p "$mods"
deps=$(modinfo_field "$work/out/nfb.ko" depends | tr ',' ' ')
extra=${NDK_SW_GUEST_MODULES:-}
# Modules of the guest kernel's package, as guest-kernel.sh takes the
# kernel: unpacked once (70 MB download) when one is not in the cache yet;
# only the modules taken are kept (uncompressed, for busybox insmod).
pkg=linux-image-$rel
kx="$CACHE/ndk-sw/kernel-$rel"
unpacked=""
unpack_package() {
    [ -z "$unpacked" ] || return 0
    say "Fetching $pkg for modules of the guest kernel: $(echo $extra $deps)"
    rm -rf "$kx/tmp"; mkdir -p "$kx/tmp/dl" "$kx/ko"
    (cd "$kx/tmp/dl" && apt-get download "$pkg") > /dev/null ||
        die 1 "cannot download $pkg" "apt-get update, then rerun"
    dpkg-deb -x "$kx"/tmp/dl/*.deb "$kx/tmp/x"
    cp "$kx/tmp/x/lib/modules/$rel/modules.builtin" "$kx/builtin"
    unpacked=$kx/tmp/x/lib/modules/$rel
}
declare -A seen=()
add_module() {
    local name=${1//-/_} f dep
    [ -z "${seen[$name]:-}" ] || return 0
    seen[$name]=1
    if [ ! -s "$kx/ko/$name.ko" ]; then
        if [ -f "$kx/builtin" ] && grep -q "/${name//_/[-_]}\.ko\$" "$kx/builtin"; then
            return 0    # built into the kernel
        fi
        unpack_package
        grep -q "/${name//_/[-_]}\.ko\$" "$kx/builtin" && return 0
        f=$(find "$unpacked/kernel" -regextype egrep \
                -regex ".*/${name//_/[-_]}\.ko(\.xz|\.zst)?" | head -1)
        [ -n "$f" ] || die 1 "module $1 is neither in $pkg nor built into $rel" \
            "check the name (NDK_SW_GUEST_MODULES, or what nfb.ko depends on)"
        case $f in
            *.ko.xz) xz -dc "$f" > "$kx/ko/$name.ko.tmp" ;;
            *.ko.zst) zstd -qdc "$f" > "$kx/ko/$name.ko.tmp" ;;
            *) cp "$f" "$kx/ko/$name.ko.tmp" ;;
        esac
        mv "$kx/ko/$name.ko.tmp" "$kx/ko/$name.ko"
    fi
    cp "$kx/ko/$name.ko" "$mods/$name.ko"
    for dep in $(modinfo_field "$mods/$name.ko" depends | tr ',' ' '); do
        add_module "$dep"
    done
    echo "$name.ko" >> "$mods/order"
}
for m in $extra $deps; do
    add_module "$m"
done
rm -rf "$kx/tmp"
cp "$work/out/nfb.ko" "$mods/nfb.ko"
echo nfb.ko >> "$mods/order"

# ----------------------------------------------------------- initramfs
say "The initramfs: nfb.ko, $(echo $TOOLS | sed 's/ /, /g'), libnfb, pcie-telemetry"
files=()
for m in $(cat "$mods/order"); do
    files+=("$mods/$m:/lib/modules/$m")
done
files+=("$mods/order:/lib/modules/order")
for t in $TOOLS; do
    files+=("$work/out/$t:/usr/bin/$t")
done
# the libraries the tools load (libnfb from the build, by its soname)
while read -r so; do
    case $so in
        /lib64/*) files+=("$so:$so") ;;
        *) files+=("$so:/lib/x86_64-linux-gnu/$(basename "$so")") ;;
    esac
done < <(cd "$work/out" && ldd $TOOLS |
         awk '/=> \// {print $3} /^\t\/lib/ {print $1}' | sort -u)
mapfile -t -O ${#files[@]} files < <("$REPO/scripts/guest-tool-files.sh" "$REPO/build")
# the console's terminal (TERM=linux) for ndp-tool's live view of several
# queues (ncurses; -I 0 leaves it out)
[ ! -f /lib/terminfo/l/linux ] || files+=("/lib/terminfo/l/linux:/lib/terminfo/l/linux")
# The caller's commands: the guest's usual script prints the cards (and
# with --shell starts the shell, a login shell that reads /etc/profile);
# then the commands run, one a line of run.list
main=$REPO/guest/ndk-sw.sh
if [ -n "${NDK_SW_GUEST_RUN:-}" ]; then
    g="$work/guest"
    rm -rf "$g"; mkdir -p "$g"
    printf '%s\n' "$NDK_SW_GUEST_RUN" | tr ';' '\n' |
        sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' | grep -v '^$' > "$g/run.list" || true
    cat > "$g/run.sh" <<'EOF'
#!/bin/sh
# The commands of NDK_SW_GUEST_RUN, one a line of run.list: each is shown,
# then run; the status is 1 if one failed (its status is shown).
rc=0
while IFS= read -r c; do
    echo
    echo "\$ $c"
    eval "$c" < /dev/null
    s=$?
    [ $s = 0 ] || { echo "(exit status $s)"; rc=1; }
done < /etc/ndk-sw-guest/run.list
exit $rc
EOF
    cat > "$g/main.sh" <<'EOF'
#!/bin/sh
# The guest's usual script, then the commands of NDK_SW_GUEST_RUN (with
# "shell" on the kernel command line the shell's /etc/profile runs them)
sh /etc/ndk-sw-guest/report.sh
rc=$?
if ! grep -qw shell /proc/cmdline; then
    sh /etc/ndk-sw-guest/run.sh || rc=1
fi
exit $rc
EOF
    cat > "$g/profile" <<'EOF'
# the commands of NDK_SW_GUEST_RUN, once, as the shell starts
if [ ! -e /tmp/.ndk-sw-guest-ran ]; then
    touch /tmp/.ndk-sw-guest-ran
    sh /etc/ndk-sw-guest/run.sh
fi
EOF
    files+=("$REPO/guest/ndk-sw.sh:/etc/ndk-sw-guest/report.sh"
            "$g/run.sh:/etc/ndk-sw-guest/run.sh" "$g/run.list:/etc/ndk-sw-guest/run.list"
            "$g/profile:/etc/profile")
    main=$g/main.sh
    export GUEST_TIMEOUT=${GUEST_TIMEOUT:-900}
fi
initrd="$work/initramfs.gz"
"$REPO/scripts/guest-initramfs.sh" "$initrd" "$main" "${files[@]}"

# Python, pynfb and the reader: further gzip'ed cpio archives appended to
# the initramfs (the kernel unpacks each in turn)
cpio_of() {     # out.gz, root directory
    (cd "$2" && find . | cpio -o -H newc --quiet | gzip -1) > "$1.tmp"
    mv "$1.tmp" "$1"
}
add_libs() {    # root, binaries...: the libraries they load, into root
    local root=$1 so
    shift
    ldd "$@" 2>/dev/null | awk '/=> \// {print $3} /^\t\/lib/ {print $1}' | sort -u |
    while read -r so; do
        case $so in
            /lib64/*) mkdir -p "$root/lib64"; cp -L "$so" "$root$so" ;;
            *) mkdir -p "$root/lib/x86_64-linux-gnu"
               cp -L "$so" "$root/lib/x86_64-linux-gnu/$(basename "$so")" ;;
        esac
    done
}
if [ $pynfb = 1 ]; then
    say "Python for the guest: Debian's $("$PY" -V 2>&1 | cut -d' ' -f2), pynfb${fpga:+ and the ofm package of ndk-fpga}"
    pyver=$("$PY" -c 'import sys; print("python%d.%d" % sys.version_info[:2])')
    pyc="$CACHE/ndk-sw/$pyver.cpio.gz"
    if [ ! -s "$pyc" ]; then
        # the interpreter and its standard library (less tests and GUI),
        # once for all checkouts
        r=$(mktemp -d)
        mkdir -p "$r/usr/bin" "$r/usr/lib"
        cp -L "/usr/bin/$pyver" "$r/usr/bin/$pyver"
        ln -s "$pyver" "$r/usr/bin/python3"
        tar -C /usr/lib --exclude="$pyver/test" --exclude="$pyver/idlelib" \
            --exclude="$pyver/tkinter" --exclude="$pyver/turtledemo" \
            --exclude="$pyver/ensurepip" --exclude="$pyver/lib2to3" \
            --exclude="$pyver/site-packages" --exclude="$pyver/dist-packages" \
            -cf - "$pyver" | tar -C "$r/usr/lib" -xf -
        add_libs "$r" "/usr/bin/$pyver" /usr/lib/"$pyver"/lib-dynload/*.so
        cpio_of "$pyc" "$r"
        rm -rf "$r"
    fi
    r=$(mktemp -d)
    site="$r/usr/local/lib/$pyver/dist-packages"
    mkdir -p "$site"
    nfbpkg=$(find "$work/build/pynfb/build-python" -type d -name nfb -path '*-packages/nfb' | head -1)
    [ -n "$nfbpkg" ] || die 1 "pynfb's build has no nfb package (see $(log pynfb))" "remove $work and rerun"
    cp -rL "$nfbpkg" "$site/nfb"
    cp -rL "$fdt_dir" "$site/fdt"
    add_libs "$r" "$site"/nfb/*.so
    if [ -n "$fpga" ]; then
        ofm_key=$( (cd "$fpga/python/ofm" && find . -type f ! -path '*/__pycache__/*' -print0 |
                    LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16)
        ofm="$CACHE/ndk-sw/ofm-$ofm_key"
        if [ ! -f "$ofm/.built" ]; then
            # pip builds in a copy: the ndk-fpga checkout is not written
            rm -rf "$ofm"; mkdir -p "$ofm/src"
            cp -a "$fpga/python/ofm/." "$ofm/src/"
            "$PY" -m pip install --no-deps --no-build-isolation --no-index \
                --root "$ofm/root" "$ofm/src" > "$ofm/pip.log" 2>&1 ||
                failed "installing ndk-fpga's ofm" "$ofm/pip.log"
            touch "$ofm/.built"
        fi
        cp -a "$ofm/root/." "$r/"
        tab=$("$PY" -c 'import tabulate; print(tabulate.__file__)')
        cp -L "$tab" "$site/"
        if ! find "$r/usr/local/bin" -name nfb-pcie-telemetry 2>/dev/null | grep -q .; then
            echo "(ndk-fpga's ofm installs no nfb-pcie-telemetry: the reference reader is left out)"
        fi
    fi
    cpio_of "$work/pynfb.cpio.gz" "$r"
    rm -rf "$r"
    cat "$pyc" "$work/pynfb.cpio.gz" >> "$initrd"
fi

# ---------------------------------------------------------------- boot
# the default card: its traffic from a PTC object, or with dma-queues from
# its DMA engine (which refuses a traffic object), with memory for the
# driver's rings
props=${NDK_SW_CARD_PROPS:-}
props=${props#,}
card_dev=ndk-pcie-telemetry,bus=rp0,vendor-id=0x18ec,device-id=0xc000
if printf ',%s' "$props" | grep -qE ',dma-queues=(0[xX])?0*[1-9a-fA-F]'; then
    card=(-m "${NDK_SW_GUEST_MEM:-1G}"
          -device pcie-root-port,id=rp0,chassis=1,slot=1
          -device "$card_dev${props:+,$props}")
else
    card=(-object telemetry-traffic-ptc,id=ndk_traffic0
          -device pcie-root-port,id=rp0,chassis=1,slot=1
          -device "$card_dev,traffic=ndk_traffic0${props:+,$props}")
fi
export GUEST_APPEND="iomem=relaxed${GUEST_APPEND:+ $GUEST_APPEND}"
if [ $shell = 1 ]; then
    say "Booting the guest with the card behind a root port; a shell follows"
    exec "$REPO/scripts/guest-run.sh" --shell "$initrd" "${card[@]}" "$@"
fi
say "Booting the guest with the card behind a root port (about 5 s)"
"$REPO/scripts/guest-run.sh" "$initrd" "${card[@]}" "$@" ||
    die 1 "the guest did not load the driver and read the card${NDK_SW_GUEST_RUN:+, or a command of NDK_SW_GUEST_RUN failed} (see the console above)"
