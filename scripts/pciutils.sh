#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# pciutils 3.15 (lspci, setpci) for the guests and the host, from Debian
# unstable's binary packages, unmodified: pciutils and libpci3 at
# $PCIUTILS_VERSION, unstable's pci.ids, and unstable's libc6 and every
# further shared library the two programs load (their NEEDED entries,
# followed recursively; a soname missing from what is fetched is looked for
# among the Depends of the package that needs it). libpci 3.15 needs glibc
# 2.38, Debian 12 has 2.36: the programs run under unstable's own dynamic
# loader, on unstable's libraries alone (--inhibit-cache, --library-path),
# through the wrappers bin/lspci and bin/setpci.
#
# apt resolves and downloads the packages with a configuration of its own
# (sources, lists and cache under the cache directory below; unstable is
# never added to the machine's apt sources, nothing is installed on the
# host) and checks their hashes against the signed index; a package kept
# from an earlier run is checked against the SHA256 the index gave.
#
# Prints the path of a directory to copy into a guest (or use on the host):
#   bin/lspci, bin/setpci   wrappers (POSIX sh; busybox sh is enough); the
#                           lspci one reads root/usr/share/misc/pci.ids
#                           unless -i says otherwise
#   root/                   the programs, the libraries with the loader,
#                           pci.ids and the packages' copyright files
#   packages                the packages used: name version sha256
# e.g. the guests get it as /opt/pciutils (tests/e2e/e2e_support.py,
# pciutils_files()), whose bin/ guest/init puts first on PATH.
#
# Everything lives in $NDK_TELEMETRY_CACHE/pciutils-<version> (default
# ~/.cache/ndk-pcie-telemetry/pciutils-3.15.0-2): a rerun prints the path at
# once; the downloaded packages stay in its debs/ (with their hashes in
# packages), so the directory is rebuilt from them without the network.
# Remove that folder to fetch again.
#
# Environment:
#   NDK_TELEMETRY_CACHE  cache directory (default ~/.cache/ndk-pcie-telemetry)
#   PCIUTILS_VERSION     Debian version of pciutils and libpci3 (default
#                        1:3.15.0-2)
#   PCIUTILS_MIRROR      Debian mirror (default http://deb.debian.org/debian)
#
# Needs apt-get, dpkg-deb and readelf (binutils; installed with apt-get as
# root when missing). Exit status 0 ready, 1 error (the reason on stderr).
# usage: pciutils.sh
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/lib/private-apt.sh"
CACHE=${NDK_TELEMETRY_CACHE:-$HOME/.cache/ndk-pcie-telemetry}
VERSION=${PCIUTILS_VERSION:-1:3.15.0-2}
MIRROR=${PCIUTILS_MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# what the directory looks like; another value rebuilds it (from debs/)
LAYOUT=1
dir="$CACHE/pciutils-${VERSION#*:}"
UPSTREAM=${VERSION#*:}
UPSTREAM=${UPSTREAM%-*}
dist="$dir/dist"
MULTIARCH=x86_64-linux-gnu
LOADER=ld-linux-x86-64.so.2
# where the packages put libraries (unstable has them in /usr/lib)
LIBDIRS="usr/lib/$MULTIARCH lib/$MULTIARCH usr/lib64 lib64 usr/lib lib"
PROGRAMS="lspci setpci"

say() { echo "pciutils.sh: $*" >&2; }
die() {
    say "error: $1"
    [ $# -lt 2 ] || say "what to do: $2"
    exit 1
}
[ $# = 0 ] || { echo "usage: pciutils.sh" >&2; exit 2; }

ready() {
    [ "$(cat "$dir/stamp" 2>/dev/null)" = "layout $LAYOUT $VERSION" ] &&
        [ -x "$dist/bin/lspci" ] && [ -x "$dist/bin/setpci" ]
}
ready && { echo "$dist"; exit 0; }

case $(dpkg --print-architecture 2>/dev/null || uname -m) in
    amd64|x86_64) ;;
    *) die "only an amd64 (x86_64) host is supported" \
           "the guests are x86_64; run this on an x86_64 machine";;
esac

mkdir -p "$dir"
# one run at a time (guest tests may start side by side)
exec 9> "$dir/.lock"
if ! flock -n 9; then
    say "waiting for another run of pciutils.sh"
    flock 9
fi
ready && { echo "$dist"; exit 0; }
t0=$(date +%s)

# --- host tools -----------------------------------------------------------
need=()
command -v apt-get > /dev/null || die "apt-get is missing" \
    "this needs a Debian (or derived) host with apt"
command -v dpkg-deb > /dev/null || need+=(dpkg)
command -v readelf > /dev/null || need+=(binutils)
[ -s "$KEYRING" ] || need+=(debian-archive-keyring)
if [ ${#need[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || die "missing host packages: ${need[*]}" \
        "install them as root: apt-get install ${need[*]}"
    say "installing ${need[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        "${need[@]}" >&2 ||
        { apt-get update -q >&2 || true
          DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
              --no-install-recommends "${need[@]}" >&2; } ||
        die "cannot install ${need[*]}" "install them by hand and rerun"
fi

# --- apt of our own -------------------------------------------------------
# Debian unstable's binary index in $dir/apt: its own sources, lists, cache,
# no preferences, no status of the machine (nothing is installed), amd64
# only, no translations; the machine's apt.conf.d still applies (proxies),
# less its update hooks.
A="$dir/apt"
APTCONF="$A/apt.conf"
setup_apt() {
    mkdir -p "$A"
    cat > "$A/unstable.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: unstable
Components: main
Architectures: amd64
Signed-By: $KEYRING
EOF
    private_apt_conf "$A" amd64 "$A/unstable.sources" scripts/pciutils.sh
}
apt_get() { apt-get -c "$APTCONF" -q "$@"; }
apt_cache() { apt-cache -c "$APTCONF" "$@"; }

update_index() {
    setup_apt
    say "reading Debian unstable's package index ($MIRROR, about 11 MB)"
    local log="$A/update.log"
    if ! apt_get --error-on=any update > "$log" 2>&1 ||
       ! ls "$A"/lists/*_dists_unstable_main_binary-amd64_Packages* > /dev/null 2>&1; then
        sed 's/^/    /' "$log" >&2
        if grep -q -e NO_PUBKEY -e EXPKEYSIG -e 'not signed' "$log"; then
            die "apt cannot check the signature of Debian unstable's index with $KEYRING" \
                "update debian-archive-keyring (apt-get install debian-archive-keyring) and rerun"
        fi
        die "cannot read Debian unstable's package index from $MIRROR, and no pciutils $VERSION is cached in $dir" \
            "connect this machine to $MIRROR (or set PCIUTILS_MIRROR to a Debian mirror it reaches) and rerun, or copy $dir from a machine that has it"
    fi
}

# field PKG=VER NAME: a field of that version in the index (show with a
# version shows it alone, and at once: --no-all-versions takes 0.5 s)
field() {
    apt_cache show "$1" 2>/dev/null | sed -n "s/^$2: //p" | head -1 || true
}
# depends PKG=VER: the packages it depends on (every alternative), one a line
depends() {
    { field "$1" Pre-Depends; field "$1" Depends; } | tr ',|' '\n' |
        sed -e 's/([^)]*)//g' -e 's/\[[^]]*\]//g' -e 's/:any//' -e 's/[[:space:]]//g' |
        sed '/^$/d'
}

# --- packages -------------------------------------------------------------
debs="$dir/debs"
LIST="$dir/packages"            # name version sha256, of the packages used
declare -A HAVE=()              # name -> version (fetched and used)
declare -A TRIED=()             # names fetched or refused

# check_deb FILE SHA256: the file is a whole package with that hash
check_deb() {
    [ -s "$1" ] && [ "$(sha256sum < "$1" | cut -d' ' -f1)" = "$2" ] &&
        dpkg-deb -I "$1" > /dev/null 2>&1
}

# deb_of NAME VERSION: the package file of debs/ with that name and version
deb_of() {
    local g
    for g in "$debs/${1}_"*.deb; do
        [ -f "$g" ] && [ "$(dpkg-deb -f "$g" Package 2>/dev/null)" = "$1" ] &&
            [ "$(dpkg-deb -f "$g" Version 2>/dev/null)" = "$2" ] &&
            { echo "$g"; return 0; }
    done
    return 0
}

# fetch NAME [VERSION]: download (or reuse) NAME at VERSION (default: the
# index's candidate) into debs/; sets GOT to its file. Fails if the index
# has no such package or version.
fetch() {
    local name=$1 ver=${2:-} sha file
    TRIED[$name]=1
    if [ -z "$ver" ]; then
        ver=$(apt_cache policy "$name" 2>/dev/null | sed -n 's/^  Candidate: //p')
        { [ -n "$ver" ] && [ "$ver" != "(none)" ]; } || return 1
    fi
    sha=$(field "$name=$ver" SHA256)
    [ -n "$sha" ] || return 1
    file=$(deb_of "$name" "$ver")
    if [ -z "$file" ] || ! check_deb "$file" "$sha"; then
        [ -z "$file" ] || rm -f "$file"
        say "downloading $name $ver"
        mkdir -p "$debs"
        (cd "$debs" && apt_get download "$name=$ver" > "$dir/download.log" 2>&1) ||
            { sed 's/^/    /' "$dir/download.log" >&2
              die "apt-get download $name=$ver from Debian unstable failed" \
                  "check the connection to $MIRROR and rerun"; }
        file=$(deb_of "$name" "$ver")
        if [ -z "$file" ] || ! check_deb "$file" "$sha"; then
            die "the downloaded $name $ver does not match its SHA256 in the index" \
                "remove $debs and rerun"
        fi
    fi
    GOT=$file
    GOTSHA=$sha
    GOTVER=$ver
}

# is_elf FILE
is_elf() { [ "$(head -c4 "$1" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 7f454c46 ]; }
# needed FILE: its NEEDED sonames
needed() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }
# find_lib ROOT SONAME: the file the name resolves to in ROOT, or nothing
find_lib() {
    local d
    for d in $LIBDIRS; do
        [ -e "$1/$d/$2" ] && { echo "$1/$d/$2"; return 0; }
    done
    return 0
}
# owner ROOT PATH: the package (its extraction in ROOT/../pkg/NAME) that has PATH
owner() {
    local rel=${2#"$1"/} p
    for p in "$1"/../pkg/*/; do
        [ -e "$p$rel" ] || [ -L "$p$rel" ] && { basename "$p"; return 0; }
    done
    echo "?"
}

# closure ROOT: the programs and the libraries they load in ROOT (the array
# CLOSURE); the sonames missing, as "soname package-that-needs-it" (MISSING)
closure() {
    local root=$1 f so lib todo=() seen=" "
    CLOSURE=() MISSING=()
    for f in $PROGRAMS; do
        [ -f "$root/usr/bin/$f" ] || die "pciutils $VERSION has no /usr/bin/$f"
        todo+=("$root/usr/bin/$f")
    done
    while [ ${#todo[@]} -gt 0 ]; do
        f=${todo[0]}; todo=("${todo[@]:1}")
        CLOSURE+=("$f")
        for so in $(needed "$f"); do
            case $seen in *" $so "*) continue;; esac
            lib=$(find_lib "$root" "$so")
            if [ -n "$lib" ] && is_elf "$lib"; then
                seen="$seen$so "
                todo+=("$lib")
            else
                MISSING+=("$so $(owner "$root" "$f")")
            fi
        done
    done
}

extract() {   # NAME FILE WORK: into WORK/pkg/NAME and WORK/root
    mkdir -p "$3/pkg/$1" "$3/root"
    dpkg-deb -x "$2" "$3/pkg/$1"
    dpkg-deb -x "$2" "$3/root"
}

# stem SONAME: libfoo-1.2.so.3 -> foo (to try the likeliest package first)
stem() { local s=${1#lib}; s=${s%%.so*}; echo "${s%%-[0-9]*}" | tr 'A-Z_' 'a-z-'; }

# resolve WORK: fetch pciutils, libpci3, pci.ids and whatever the programs'
# NEEDED closure asks for; writes LIST
resolve() {
    local work=$1 name
    : > "$LIST.tmp"
    for name in pciutils libpci3; do
        fetch "$name" "$VERSION" || {
            local have
            have=$(apt_cache policy "$name" 2>/dev/null | sed -n 's/^  Candidate: //p' || true)
            die "Debian unstable has no $name $VERSION (it has ${have:-none})" \
                "set PCIUTILS_VERSION=$have to use that one (cached apart), or copy a $dir from a machine that has it"
        }
        HAVE[$name]=$GOTVER
        echo "$name $GOTVER $GOTSHA" >> "$LIST.tmp"
        extract "$name" "$GOT" "$work"
    done
    fetch pci.ids || die "Debian unstable has no pci.ids package"
    HAVE[pci.ids]=$GOTVER
    echo "pci.ids $GOTVER $GOTSHA" >> "$LIST.tmp"
    extract pci.ids "$GOT" "$work"

    local rounds=0 m so by cand c s provides
    while :; do
        closure "$work/root"
        [ ${#MISSING[@]} = 0 ] && break
        rounds=$((rounds + 1))
        [ $rounds -le 50 ] || die "the libraries' closure does not end"
        m=${MISSING[0]}
        so=${m% *} by=${m#* }
        [ "$by" != "?" ] || die "$so is needed by a file of no package"
        # the dependencies of the package that needs it, not yet fetched,
        # those whose name has the soname's stem first
        s=$(stem "$so")
        cand=$(depends "$by=${HAVE[$by]}" | while read -r c; do
            [ -z "${TRIED[$c]:-}" ] || continue
            case $c in *"$s"*) echo "0 $c";; *) echo "1 $c";; esac
        done | sort -u | cut -d' ' -f2)
        provides=
        for c in $cand; do
            [ -z "${TRIED[$c]:-}" ] || continue
            fetch "$c" || { say "note: $c (a dependency of $by) is not in the index"; continue; }
            mkdir -p "$work/pkg/$c"
            dpkg-deb -x "$GOT" "$work/pkg/$c"
            if [ -n "$(find_lib "$work/pkg/$c" "$so")" ]; then
                HAVE[$c]=$GOTVER
                echo "$c $GOTVER $GOTSHA" >> "$LIST.tmp"
                dpkg-deb -x "$GOT" "$work/root"
                say "$so (needed by $by): $c $GOTVER"
                provides=$c
                break
            fi
            rm -rf "$GOT" "$work/pkg/$c"   # not what is looked for
        done
        [ -n "$provides" ] || die "no package among the dependencies of $by in Debian unstable provides $so" \
            "this script's search for libraries needs looking at (packages so far: ${!HAVE[*]})"
    done
    mv "$LIST.tmp" "$LIST"
}

# --- the directory --------------------------------------------------------
# assemble WORK: from WORK/root (every package of LIST extracted) the
# programs, their libraries under their sonames, the loader, pci.ids and the
# copyright files into $dist.tmp, the wrappers, then a check on this host
assemble() {
    local root="$1/root" out="$dist.tmp" f name lib
    closure "$root"
    [ ${#MISSING[@]} = 0 ] || die "libraries missing from the packages: ${MISSING[*]}" \
        "remove $dir and rerun"
    rm -rf "$out"
    mkdir -p "$out/bin" "$out/root/usr/bin" "$out/root/usr/lib/$MULTIARCH" \
        "$out/root/usr/share/misc"
    for f in $PROGRAMS; do
        cp "$root/usr/bin/$f" "$out/root/usr/bin/$f"
    done
    # each library as a plain file under the name the programs ask for
    for lib in "${CLOSURE[@]}"; do
        case $lib in "$root/usr/bin/"*) continue;; esac
        cp -L "$lib" "$out/root/usr/lib/$MULTIARCH/$(basename "$lib")"
    done
    lib=$(find_lib "$root" "$LOADER")
    [ -n "$lib" ] || die "libc6 of Debian unstable has no $LOADER"
    cp -L "$lib" "$out/root/usr/lib/$MULTIARCH/$LOADER"
    f=$(ls "$root"/usr/share/misc/pci.ids 2>/dev/null || true)
    [ -s "$f" ] || die "the pci.ids package has no /usr/share/misc/pci.ids"
    cp "$f" "$out/root/usr/share/misc/pci.ids"
    while read -r name _; do
        f=$root/usr/share/doc/$name/copyright
        [ -f "$f" ] || continue
        mkdir -p "$out/root/usr/share/doc/$name"
        cp "$f" "$out/root/usr/share/doc/$name/copyright"
    done < "$LIST"
    cp "$LIST" "$out/packages"
    chmod -R u+w,go-w,a+rX "$out"

    for f in $PROGRAMS; do
        {
            echo '#!/bin/sh'
            echo '# SPDX-License-Identifier: GPL-2.0-or-later'
            echo "# $f of Debian's pciutils $VERSION (unmodified), run by the dynamic"
            echo "# loader of Debian unstable's libc6 on the libraries in ../root alone."
            echo "# Written by scripts/pciutils.sh; this directory may be moved or copied."
            echo 'r=$(dirname "$(dirname "$(readlink -f "$0")")")/root'
            echo "l=\$r/usr/lib/$MULTIARCH"
            if [ "$f" = lspci ]; then
                echo '# the names of the IDs from ../root (the last -i given wins; a lone'
                echo '# --version takes no other argument)'
                echo 'if [ $# != 1 ] || [ "$1" != --version ]; then'
                echo '    set -- -i "$r/usr/share/misc/pci.ids" "$@"'
                echo 'fi'
            fi
            echo "exec \"\$l/$LOADER\" --inhibit-cache --library-path \"\$l\" \\"
            echo "    --argv0 \"\$0\" \"\$r/usr/bin/$f\" \"\$@\""
        } > "$out/bin/$f"
        chmod 755 "$out/bin/$f"
    done

    # the check: the loader finds every library in root/, and the programs run
    local l="$out/root/usr/lib/$MULTIARCH" listing v
    for f in $PROGRAMS; do
        listing=$("$l/$LOADER" --inhibit-cache --library-path "$l" --list \
                  "$out/root/usr/bin/$f" 2>&1) ||
            die "the loader cannot load $f: $listing"
        if printf '%s\n' "$listing" | grep '=>' | grep -v -e "=> $l/" > /dev/null; then
            die "$f loads libraries from outside $out: $(printf '%s\n' "$listing" | grep '=>' | grep -v "=> $l/" | tr '\n' ' ')"
        fi
        v=$("$out/bin/$f" --version 2>&1) || die "$f --version failed on this host: $v"
        case $v in
            *"version $UPSTREAM"*) ;;
            *) die "$f --version says \"$v\", not $UPSTREAM";;
        esac
    done
    rm -rf "$dist"
    mv "$out" "$dist"
}

work="$dir/work"
rm -rf "$work" "$dist.tmp"
mkdir -p "$work"
# apt's lists and cache (~110 MB) are only needed while resolving
trap 'rm -rf "$work" "$dist.tmp" "$LIST.tmp" "$A"' EXIT
# the packages of an earlier run, all there and whole: no network needed
offline=0
if [ -s "$LIST" ]; then
    offline=1
    while read -r name ver sha; do
        f=$(deb_of "$name" "$ver")
        if [ -n "$f" ] && check_deb "$f" "$sha"; then
            extract "$name" "$f" "$work"
        else
            offline=0; break
        fi
    done < "$LIST"
fi
if [ $offline = 0 ]; then
    rm -rf "$work"; mkdir -p "$work"
    update_index
    resolve "$work"
fi
assemble "$work"
rm -f "$dir/download.log"
echo "layout $LAYOUT $VERSION" > "$dir/stamp"
say "ready in $(( $(date +%s) - t0 )) s: $dist ($("$dist/bin/lspci" --version))"
echo "$dist"
