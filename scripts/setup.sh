#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# One-time (and idempotent) set-up: Debian packages, a QEMU 10.0 tree with the
# ndk-pcie-telemetry device linked in, its build, and the project's own build.
# A rerun resumes where the previous run stopped.
#
# Each clone of the repository has a QEMU tree and build of its own in the
# cache: $CACHE/qemu-<version>-<key>/clones/<id>/{src,build}, <id> a hash of
# the clone's path (recorded in its `repo` file). Its src is a hard-link copy
# of the QEMU source unpacked once per version ($CACHE/qemu-<version>-src-*,
# never written), and the compiler runs through a ccache shared by all
# clones ($CACHE/ccache), so another clone's first build is mostly cache
# hits. Each set-up removes the QEMU builds of clones that no longer exist.
#
# Environment:
#   NDK_TELEMETRY_CACHE  cache directory (default ~/.cache/ndk-pcie-telemetry)
#   QEMU_SRC             use this QEMU 10.0 source tree or tarball instead of
#                        Debian's source package
#   NDK_TELEMETRY_NO_APT set to 1 to skip the package check (non-Debian hosts)
#
# With --sanitize it also builds, in a cache slot of its own, a second QEMU
# with AddressSanitizer and UndefinedBehaviorSanitizer (build/qemu-san/) and
# the project's QEMU-free parts, unit tests and fuzz targets with clang and
# both sanitizers (build-san/). With --qemu-only it builds this clone's
# qemu-system-x86_64 alone (no QTests, no project build) and links it as
# build/qemu-system-x86_64: enough to tell two clones' QEMUs apart
# (tests/clones/run.sh). With --arm64 it also builds this clone's
# qemu-system-aarch64 (a cache slot of its own, its objects shared through
# the same ccache) and links it as build/qemu-system-aarch64: the arm64
# guests' emulator (scripts/guest-arm64.sh, docs/arm64.md). Only what asks
# for it builds it, so the main job's first run does not grow.
set -euo pipefail

SANITIZE=0
QEMU_ONLY=0
ARM64=0
for arg; do
    case "$arg" in
        --sanitize) SANITIZE=1;;
        --qemu-only) QEMU_ONLY=1;;
        --arm64) ARM64=1;;
        *) echo "usage: setup.sh [--sanitize | --qemu-only] [--arm64]" >&2; exit 2;;
    esac
done

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${NDK_TELEMETRY_CACHE:-$HOME/.cache/ndk-pcie-telemetry}
QEMU_SERIES=10.0
# Configuration of the QEMU build. Changing it selects another cache slot.
QEMU_CONFIG=(--python=/usr/bin/python3 --target-list=x86_64-softmmu
    --without-default-features --disable-fdt --disable-install-blobs
    --disable-docs --disable-tools --disable-user --disable-werror)
# The arm64 emulator: virt's device tree needs libfdt (Debian's source
# package has no dtc subproject, so the system's).
QEMU_ARM64_CONFIG=(--python=/usr/bin/python3 --target-list=aarch64-softmmu
    --without-default-features --enable-fdt=system --disable-install-blobs
    --disable-docs --disable-tools --disable-user --disable-werror)
# User networking for the guest tests that reach a guest's exporter from
# the host (not in the sanitized QEMU, whose slot stays as it was).
QEMU_NET_CONFIG=(--enable-slirp)
# What is built in the QEMU tree: the emulator and the QTest programs
# (tests/qtest/programs.txt names them).
QEMU_NINJA_TARGETS=(qemu-system-x86_64)
while read -r prog; do
    case "$prog" in ""|"#"*) continue;; esac
    QEMU_NINJA_TARGETS+=("tests/qtest/ndk-pcie-telemetry/$prog")
done < "$REPO/tests/qtest/programs.txt"
PACKAGES=(build-essential ninja-build python3-venv python3-pip python3-setuptools pkg-config
    libglib2.0-dev zlib1g-dev dpkg-dev seabios libpci-dev pciutils
    busybox-static libfdt-dev liblzma-dev cpio xz-utils qemu-system-data ghdl
    groff-base man-db python3 clang libclang-rt-dev llvm libslirp-dev ccache
    python3-pytest)
# Without their recommends (Prometheus would bring its node exporter):
# prometheus (server and promtool) for the exporter's guest test and the
# rules' tests, systemd for systemd-analyze verify of the exporter's unit.
PACKAGES_NO_RECOMMENDS=(prometheus systemd)
JOBS=${JOBS:-$(nproc)}
# This clone's QEMU builds are in clones/$CLONE_ID of each cache slot.
REPO_REAL=$(cd "$REPO" && pwd -P)
CLONE_ID=$(printf '%s\n' "$REPO_REAL" | sha256sum | cut -c1-12)

step() { printf '\n==> %s\n' "$*"; }
die() {
    printf 'setup: error: %s\n' "$1" >&2
    [ $# -gt 1 ] && printf 'setup: what to do: %s\n' "$2" >&2
    exit 1
}

# ---------------------------------------------------------------- packages
meson_ok() {
    command -v meson >/dev/null 2>&1 || return 1
    local v; v=$(meson --version)
    dpkg --compare-versions "$v" ge 1.5 2>/dev/null
}

# Only a source line for trixie (for QEMU's source package) and a binary line
# for bookworm-backports (for meson >= 1.5; apt ranks backports low): no
# package of the machine gets upgraded to another release.
APT_LIST=/etc/apt/sources.list.d/ndk-telemetry.sources
ensure_apt_sources() {
    [ -f "$APT_LIST" ] && return 0
    [ "$(id -u)" = 0 ] || die "the apt sources for trixie's QEMU source and bookworm-backports are missing" \
        "run this script once as root, or see README.md (Set-up in detail)"
    step "Adding apt sources: deb-src trixie, deb bookworm-backports ($APT_LIST)"
    cat > "$APT_LIST" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    apt-get update -q || die "apt-get update failed" "check the network and $APT_LIST"
}

install_packages() {
    [ "${NDK_TELEMETRY_NO_APT:-0}" = 1 ] && return 0
    local missing=() missing_nr=()
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
            missing+=("$p")
    done
    for p in "${PACKAGES_NO_RECOMMENDS[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
            missing_nr+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ] && [ ${#missing_nr[@]} -eq 0 ] && meson_ok; then
        return 0
    fi
    [ "$(id -u)" = 0 ] || die "packages are missing and this is not root" \
        "run as root, or install: ${missing[*]} and meson >= 1.5 from bookworm-backports"
    ensure_apt_sources
    step "Installing Debian packages: ${missing[*]} ${missing_nr[*]} and meson (>= 1.5)"
    export DEBIAN_FRONTEND=noninteractive
    meson_ok || apt-get install -y -q --no-upgrade -t bookworm-backports meson ||
        die "could not install meson from bookworm-backports" \
            "install meson >= 1.5 by hand and rerun"
    if [ ${#missing[@]} -gt 0 ]; then
        apt-get install -y -q --no-upgrade "${missing[@]}" ||
            die "apt-get install failed" "install by hand: ${missing[*]}"
    fi
    if [ ${#missing_nr[@]} -gt 0 ]; then
        # a policy-rc.d of its own, unless the machine has one: no daemon
        # of these packages starts on install
        local prc=""
        if [ ! -e /usr/sbin/policy-rc.d ]; then
            prc=/usr/sbin/policy-rc.d
            printf '#!/bin/sh\nexit 101\n' > "$prc"
            chmod 755 "$prc"
        fi
        apt-get install -y -q --no-upgrade --no-install-recommends \
            "${missing_nr[@]}" || { [ -z "$prc" ] || rm -f "$prc"
            die "apt-get install failed" "install by hand: ${missing_nr[*]}"; }
        [ -z "$prc" ] || rm -f "$prc"
    fi
}

# ------------------------------------------------------------ QEMU source
# Sets QEMU_VERSION and SRC_ARCHIVE (a .dsc or a tarball or a directory).
fetch_qemu_source() {
    mkdir -p "$CACHE/dl"
    if [ -n "${QEMU_SRC:-}" ]; then
        SRC_ARCHIVE=$(realpath "$QEMU_SRC")
        if [ -d "$SRC_ARCHIVE" ]; then
            QEMU_VERSION=$(cat "$SRC_ARCHIVE/VERSION" 2>/dev/null) ||
                die "$QEMU_SRC has no VERSION file" "give the top directory of a QEMU source tree"
        else
            QEMU_VERSION=$(tar -xOf "$SRC_ARCHIVE" --wildcards '*/VERSION' 2>/dev/null | head -1) ||
                die "cannot read VERSION from $QEMU_SRC" "give a QEMU source tarball or tree"
        fi
    else
        local dsc
        dsc=$(ls "$CACHE"/dl/qemu_*.dsc 2>/dev/null | sort -V | tail -1 || true)
        if [ -z "$dsc" ]; then
            # as root make sure of the deb-src line; a user may have their own
            [ "${NDK_TELEMETRY_NO_APT:-0}" = 1 ] || [ "$(id -u)" != 0 ] ||
                ensure_apt_sources
            step "Downloading Debian's QEMU source package (qemu/trixie, ~40 MB)"
            (cd "$CACHE/dl" && apt-get source --download-only qemu/trixie) ||
                die "apt-get source qemu/trixie failed" \
                    "add a deb-src line for trixie (see README), or set QEMU_SRC to a QEMU $QEMU_SERIES tree or tarball"
            dsc=$(ls "$CACHE"/dl/qemu_*.dsc | sort -V | tail -1)
        fi
        SRC_ARCHIVE=$dsc
        QEMU_VERSION=$(basename "$dsc" | sed -E 's/^qemu_([0-9.]+).*/\1/')
    fi
    case "$QEMU_VERSION" in
        "$QEMU_SERIES".*) ;;
        *) die "QEMU $QEMU_VERSION is not of the $QEMU_SERIES series" \
               "use a QEMU $QEMU_SERIES.x source (the device uses the $QEMU_SERIES API)";;
    esac
}

# The QEMU source, unpacked once per version and source into
# $CACHE/qemu-<version>-src-<hash of the source's path> and never written
# afterwards: the clones' trees are hard-link copies of it. The caller holds
# the source lock. Sets QEMU_PRISTINE.
unpack_qemu_source() {
    local h src
    h=$(printf '%s\n' "$SRC_ARCHIVE" | sha256sum | cut -c1-10)
    src="$CACHE/qemu-$QEMU_VERSION-src-$h"
    QEMU_PRISTINE=$src
    [ -f "$src/.ndk-unpacked" ] && return 0
    step "Unpacking QEMU $QEMU_VERSION into $src"
    rm -rf "$src" "$src.tmp"
    mkdir -p "$src.tmp"
    case "$SRC_ARCHIVE" in
        *.dsc) dpkg-source --no-copy -x "$SRC_ARCHIVE" "$src.tmp/qemu" >/dev/null ||
                   die "dpkg-source -x failed" "remove $CACHE/dl and rerun";;
        *) if [ -d "$SRC_ARCHIVE" ]; then
               cp -a "$SRC_ARCHIVE" "$src.tmp/qemu"
           else
               mkdir -p "$src.tmp/qemu"
               tar -xf "$SRC_ARCHIVE" -C "$src.tmp/qemu" --strip-components=1 ||
                   die "cannot unpack $SRC_ARCHIVE"
           fi;;
    esac
    touch "$src.tmp/qemu/.ndk-unpacked"
    mv "$src.tmp/qemu" "$src"
    rmdir "$src.tmp"
}

# Removes the QEMU builds (clones/<id> of every slot) of clones whose
# repository no longer exists.
gc_clone_builds() {
    local d r gone=()
    for d in "$CACHE"/qemu-*/clones/*/; do
        [ -f "$d/repo" ] || continue
        r=$(cat "$d/repo")
        [ -f "$r/scripts/setup.sh" ] || gone+=("${d%/}")
    done
    [ ${#gone[@]} -eq 0 ] && return 0
    step "Removing the QEMU builds of ${#gone[@]} clone(s) that no longer exist"
    for d in "${gone[@]}"; do
        r=$(cat "$d/repo" 2>/dev/null) || continue
        # renamed first: of two set-ups at the same time one removes it
        mv "$d" "$d.gone.$$" 2>/dev/null || continue
        printf '    %s (%s)\n' "$r" "$d"
        rm -rf "$d.gone.$$"
    done
}

# build_qemu NAME CONFIG...: configure and build QEMU with the device for this
# clone, in the cache slot keyed by its configuration; sets QEMU_BLD. Builds
# QEMU_NINJA_TARGETS.
build_qemu() {
    local name=$1; shift
    local config=("$@") key
    key=$(printf '%s\n' "$QEMU_VERSION" "${config[@]}" "$SRC_ARCHIVE" | sha256sum | cut -c1-10)
    local slot="$CACHE/qemu-$QEMU_VERSION-$key"
    local dir="$slot/clones/$CLONE_ID"
    local src="$dir/src" bld="$dir/build" lock
    mkdir -p "$dir"
    # one set-up of this clone at a time in this directory
    exec {lock}>"$dir/.lock"
    if ! flock -n "$lock"; then
        step "Waiting for another set-up of this clone ($name QEMU)"
        flock "$lock"
    fi
    [ "$(cat "$dir/repo" 2>/dev/null)" = "$REPO_REAL" ] ||
        printf '%s\n' "$REPO_REAL" > "$dir/repo"

    if [ ! -f "$src/.ndk-linked" ]; then
        step "Linking this clone's QEMU tree to the unpacked source ($src)"
        rm -rf "$src" "$src.tmp"
        cp -al "$QEMU_PRISTINE" "$src.tmp" 2>/dev/null ||
            { rm -rf "$src.tmp"; cp -a "$QEMU_PRISTINE" "$src.tmp"; }
        touch "$src.tmp/.ndk-linked"
        mv "$src.tmp" "$src"
    fi

    # QEMU's compiler: gcc through the ccache of all clones, with the paths
    # under this clone's directory made relative and the build directory not
    # hashed (QEMU compiles with -g), so that another clone's objects match
    local cc="$dir/cc" ccw
    ccw="#!/bin/sh
# QEMU's C compiler in this build (written by scripts/setup.sh)
export CCACHE_DIR='$CACHE/ccache' CCACHE_BASEDIR='$dir' CCACHE_NOHASHDIR=1
command -v ccache >/dev/null && exec ccache gcc \"\$@\"
exec gcc \"\$@\""
    if [ "$(cat "$cc" 2>/dev/null)" != "$ccw" ]; then
        printf '%s\n' "$ccw" > "$cc.tmp"
        chmod 755 "$cc.tmp"
        mv "$cc.tmp" "$cc"
    fi

    "$REPO/scripts/qemu-integrate.sh" "$src" "$REPO_REAL"

    if [ ! -f "$bld/.ndk-configured" ]; then
        step "Configuring $name QEMU $QEMU_VERSION (about 30 s)"
        rm -rf "$bld"; mkdir -p "$bld"
        (cd "$bld" && "$src/configure" --cc="$cc" "${config[@]}") > "$dir/configure.log" 2>&1 ||
            { tail -20 "$dir/configure.log" >&2
              die "QEMU configure failed (log: $dir/configure.log)" \
                  "check that the packages above are installed, then rerun"; }
        touch "$bld/.ndk-configured"
    fi

    step "Building $name ${QEMU_NINJA_TARGETS[0]}${QEMU_NINJA_TARGETS[1]:+ and the QTests} (first time ~6 min on 2 cores, sanitized ~12 min; in a further clone ~1 min from ccache; then seconds)"
    if ! ninja -C "$bld" -j "$JOBS" "${QEMU_NINJA_TARGETS[@]}" > "$dir/build.log" 2>&1 &
    then :; fi
    local pid=$! ticks=0
    # progress every 15 s, but a build with nothing to do (well under a
    # second) is not kept waiting for it
    while kill -0 $pid 2>/dev/null; do
        sleep 0.2
        ticks=$((ticks + 1))
        [ $((ticks % 75)) = 0 ] && kill -0 $pid 2>/dev/null || continue
        grep -oE '^\[[0-9]+/[0-9]+\]' "$dir/build.log" | tail -1 | sed 's/^/    progress /' || true
    done
    wait $pid || { grep -B2 -A12 -m3 'error' "$dir/build.log" >&2 || tail -30 "$dir/build.log" >&2
                   die "QEMU build failed (log: $dir/build.log)" \
                       "fix the error above and rerun; the build resumes where it stopped"; }

    # A binary run from the build tree looks for firmware in its qemu-bundle.
    local fw
    for fw in "$bld/qemu-bundle/usr/local/share/qemu" \
              "$bld/qemu-bundle/usr/local/share/qemu-firmware"; do
        mkdir -p "$fw"
        for f in /usr/share/seabios/bios-256k.bin /usr/share/seabios/bios.bin \
                 /usr/share/qemu/kvmvapic.bin /usr/share/qemu/linuxboot_dma.bin \
                 /usr/share/qemu/linuxboot.bin /usr/share/qemu/multiboot_dma.bin /usr/share/qemu/pvh.bin; do
            [ -f "$f" ] && [ ! -e "$fw/$(basename "$f")" ] && ln -sf "$f" "$fw/$(basename "$f")"
        done
    done
    exec {lock}>&-
    QEMU_BLD=$bld
}

# meson_build DIR [OPTIONS...]: set up (once) and build the project in DIR.
meson_build() {
    local dir=$1; shift
    if [ ! -f "$dir/build.ninja" ]; then
        mkdir -p "$dir"
        meson setup "$dir" "$REPO" "$@" > "$dir/ndk-setup.log" 2>&1 ||
            { tail -20 "$dir/ndk-setup.log" >&2
              die "meson setup of $dir failed (log: $dir/ndk-setup.log)" \
                  "fix the error above and rerun"; }
    fi
    ninja -C "$dir" > "$dir/ndk-build.log" 2>&1 ||
        { tail -30 "$dir/ndk-build.log" >&2; die "project build in $dir failed"; }
}

main() {
    install_packages
    # one set-up at a time downloads and unpacks the QEMU source
    local lock
    mkdir -p "$CACHE"
    exec {lock}>"$CACHE/.qemu-source.lock"
    if ! flock -n "$lock"; then
        step "Waiting for another set-up to fetch or unpack the QEMU source"
        flock "$lock"
    fi
    fetch_qemu_source
    unpack_qemu_source
    exec {lock}>&-
    gc_clone_builds

    [ "$QEMU_ONLY" = 1 ] && QEMU_NINJA_TARGETS=(qemu-system-x86_64)
    build_qemu "the" "${QEMU_CONFIG[@]}" "${QEMU_NET_CONFIG[@]}"
    local bld=$QEMU_BLD
    if [ "$QEMU_ONLY" = 1 ]; then
        mkdir -p "$REPO/build"
        ln -sfn "$bld/qemu-system-x86_64" "$REPO/build/qemu-system-x86_64"
        step "Ready: build/qemu-system-x86_64 alone (QEMU $QEMU_VERSION with ndk-pcie-telemetry)"
        return 0
    fi
    step "Building the QEMU-free parts (meson, build/)"
    meson_build "$REPO/build"
    ln -sfn "$bld/qemu-system-x86_64" "$REPO/build/qemu-system-x86_64"
    # the QTest programs' directory (tests/qtest/run-qtest.sh)
    ln -sfn "$bld/tests/qtest/ndk-pcie-telemetry" "$REPO/build/qemu-qtest-dir"
    rm -f "$REPO/build/ndk-pcie-telemetry-qtest"
    echo "$QEMU_VERSION" > "$REPO/build/qemu-version"

    if [ "$SANITIZE" = 1 ]; then
        build_qemu "the sanitized" "${QEMU_CONFIG[@]}" --enable-asan --enable-ubsan
        mkdir -p "$REPO/build/qemu-san"
        ln -sfn "$QEMU_BLD/qemu-system-x86_64" "$REPO/build/qemu-san/qemu-system-x86_64"
        ln -sfn "$QEMU_BLD/tests/qtest/ndk-pcie-telemetry" \
            "$REPO/build/qemu-san/qemu-qtest-dir"
        rm -f "$REPO/build/qemu-san/ndk-pcie-telemetry-qtest"
        step "Building the QEMU-free parts with clang, ASan, UBSan and the fuzz targets (build-san/)"
        CC=clang meson_build "$REPO/build-san" -Db_sanitize=address,undefined \
            -Db_lundef=false -Dfuzz=enabled
    fi
    if [ "$ARM64" = 1 ]; then
        QEMU_NINJA_TARGETS=(qemu-system-aarch64)
        build_qemu "the arm64" "${QEMU_ARM64_CONFIG[@]}"
        ln -sfn "$QEMU_BLD/qemu-system-aarch64" "$REPO/build/qemu-system-aarch64"
        step "Ready: build/qemu-system-aarch64 (QEMU $QEMU_VERSION with ndk-pcie-telemetry)"
    fi
    step "Ready: build/qemu-system-x86_64 (QEMU $QEMU_VERSION with ndk-pcie-telemetry)"
}

main "$@"
