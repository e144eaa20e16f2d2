#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fetch a Debian 6.1 kernel and unpack it to an uncompressed vmlinux, which
# QEMU boots through PVH in about 3 s under TCG (a bzImage takes 6-9 s).
# Prints the path of the vmlinux. Cached; a rerun prints the cached path.
#
# Beside it the cache keeps, from the same package, the modules a guest
# needs for a virtio-net card (Debian builds virtio-net and its bus as
# modules), uncompressed for busybox insmod, in modules/ with modules/order
# naming them in load order (dependencies first).
#   guest-kernel.sh                print the vmlinux path
#   guest-kernel.sh --net-modules  print the paths of those modules, one a
#                                  line, in load order
# A cache made before the modules were kept gets them on the first
# --net-modules run, from the package its vmlinux came from (the newest one,
# and a new vmlinux with it, if the archive no longer has that one).
set -euo pipefail
CACHE=${NDK_TELEMETRY_CACHE:-$HOME/.cache/ndk-pcie-telemetry}
dir="$CACHE/kernel"
# what the guest loads for virtio-net-pci; their dependencies come along
NET_MODULES="virtio_pci virtio_net"
mode=vmlinux
case "${1:-}" in
    "") ;;
    --net-modules) mode=net ;;
    *) echo "usage: guest-kernel.sh [--net-modules]" >&2; exit 2 ;;
esac
mkdir -p "$dir"

ready() {
    [ -s "$dir/vmlinux" ] && { [ $mode = vmlinux ] || [ -s "$dir/modules/order" ]; }
}
answer() {
    if [ $mode = net ]; then
        sed "s|^|$dir/modules/|" "$dir/modules/order"
    else
        echo "$dir/vmlinux"
    fi
    exit 0
}
ready && answer
# one download at a time (guests of a test may start side by side)
exec 9> "$dir/.lock"
flock 9
ready && answer

# The release of a vmlinux: its banner "Linux version 6.1.0-N-amd64 ...".
release_of() {
    LC_ALL=C grep -a -o -m1 'Linux version 6\.1\.0-[0-9]*-amd64' "$1" |
        head -1 | sed 's/^Linux version //' || true
}
# A field of a module's .modinfo (NUL-separated key=value strings).
modinfo_field() {
    tr '\0' '\n' < "$1" | LC_ALL=C grep -a -m1 "^$2=" | cut -d= -f2- || true
}

newest() {
    # Debian keeps only the newest ABI of a kernel series: take what is there.
    apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' |
        awk '{print $1}' | sort -V | tail -1
}
download() {
    rm -rf "$dir/tmp"; mkdir -p "$dir/tmp"
    echo "==> Downloading $1 (about 70 MB)" >&2
    (cd "$dir/tmp" && apt-get download "$1" >&2) || return 1
    dpkg-deb -x "$dir"/tmp/*.deb "$dir/tmp/x" || return 1
}

pkg=
if [ -s "$dir/vmlinux" ]; then
    # only the modules are missing: they must come from the vmlinux's package
    rel=$(release_of "$dir/vmlinux")
    [ -n "$rel" ] && pkg=linux-image-$rel
    if [ -z "$pkg" ] || ! download "$pkg"; then
        echo "guest-kernel: ${pkg:-the package of $dir/vmlinux} is not to be had; taking the newest kernel" >&2
        pkg=
    fi
fi
if [ -z "$pkg" ]; then
    pkg=$(newest)
    [ -n "$pkg" ] || { echo "guest-kernel: no linux-image-6.1.0-*-amd64 package found; run apt-get update" >&2; exit 1; }
    download "$pkg" || { echo "guest-kernel: cannot download $pkg" >&2; exit 1; }
    rm -f "$dir/vmlinux"
fi
x="$dir/tmp/x"
rel=${pkg#linux-image-}

if [ ! -s "$dir/vmlinux" ]; then
    vmlinuz=$(ls "$x"/boot/vmlinuz-*)
    # The bzImage carries an XZ stream; the payload from its magic on is vmlinux.
    off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -1 | cut -d: -f1 || true)
    [ -n "$off" ] || { echo "guest-kernel: no XZ payload in $vmlinuz" >&2; exit 1; }
    tail -c +$((off + 1)) "$vmlinuz" | xz -dc 2>/dev/null > "$dir/vmlinux.tmp" || true
    [ -s "$dir/vmlinux.tmp" ] || { echo "guest-kernel: cannot decompress $vmlinuz" >&2; exit 1; }
    [ "$(release_of "$dir/vmlinux.tmp")" = "$rel" ] ||
        { echo "guest-kernel: $vmlinuz is not release $rel" >&2; exit 1; }
fi

# The modules: each of NET_MODULES after what it depends on (modinfo's
# "depends"; the package has no modules.dep, depmod makes it on install).
mods="$x/lib/modules/$rel"
out="$dir/modules.tmp"
rm -rf "$out"; mkdir -p "$out"
declare -A file=() seen=()
while IFS= read -r f; do
    b=$(basename "$f"); b=${b%%.ko*}
    file[${b//-/_}]=$f
done < <(find "$mods/kernel" -name '*.ko' -o -name '*.ko.xz' -o -name '*.ko.zst' -o -name '*.ko.gz')
modules_ok=1
keep() {
    local name=${1//-/_} f dep
    [ -z "${seen[$name]:-}" ] || return 0
    seen[$name]=1
    f=${file[$name]:-}
    if [ -z "$f" ]; then
        # built into the kernel: nothing to load
        if grep -q "/${name//_/[-_]}\.ko" "$mods/modules.builtin" 2>/dev/null; then
            return 0
        fi
        echo "guest-kernel: module $name is neither in $pkg nor built in" >&2
        modules_ok=0
        return 0
    fi
    case $f in
        *.ko.xz) xz -dc "$f" > "$out/$name.ko" ;;
        *.ko.zst) zstd -qdc "$f" > "$out/$name.ko" ;;
        *.ko.gz) gzip -dc "$f" > "$out/$name.ko" ;;
        *) cp "$f" "$out/$name.ko" ;;
    esac
    if [ "$(modinfo_field "$out/$name.ko" vermagic | cut -d' ' -f1)" != "$rel" ]; then
        echo "guest-kernel: $f is not for release $rel" >&2
        modules_ok=0
    fi
    for dep in $(modinfo_field "$out/$name.ko" depends | tr ',' ' '); do
        keep "$dep"
    done
    echo "$name.ko" >> "$out/order"
}
for m in $NET_MODULES; do
    keep "$m"
done

if [ -s "$dir/vmlinux.tmp" ]; then
    mv "$dir/vmlinux.tmp" "$dir/vmlinux"
fi
echo "$pkg" > "$dir/package"
rm -rf "$dir/modules"
if [ $modules_ok = 1 ]; then
    mv "$out" "$dir/modules"
else
    rm -rf "$out"
fi
rm -rf "$dir/tmp"
if [ $mode = net ] && [ $modules_ok = 0 ]; then
    exit 1
fi
answer
