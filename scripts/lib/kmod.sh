# SPDX-License-Identifier: GPL-2.0-or-later
#
# Out-of-tree kernel modules from files of Debian's linux-source, built
# unmodified against Debian's headers: sourced by scripts/guest-kernel-612.sh
# (amd64) and scripts/guest-arm64.sh (arm64, cross-built). The caller
# defines say (a message on stderr).

# kmod_build SRC OUT NAME HDIR REL NM [MAKE ARG...] -- FILE...: NAME.ko in
# OUT (made anew) from the FILEs (paths in the kernel tree) under SRC, with
# the kbuild of the headers in HDIR and make's further arguments (e.g.
# ARCH=arm64 CROSS_COMPILE=... for a cross build); checks with NM (nm, or
# the cross one) that the kernel exports every symbol the module needs and
# that its vermagic is release REL. On failure says why and returns 1.
kmod_build() {
    local src=$1 out=$2 name=$3 hdir=$4 rel=$5 nm=$6 f ko missing vermagic
    local make_args=()
    shift 6
    while [ $# -gt 0 ] && [ "$1" != -- ]; do make_args+=("$1"); shift; done
    shift
    rm -rf "$out"; mkdir -p "$out"
    for f; do cp "$src/$f" "$out/"; done
    echo "obj-m := $name.o" > "$out/Kbuild"
    say "building $name.ko"
    if ! make -s -C "$hdir" M="$out" "${make_args[@]}" modules \
            > "$out/build.log" 2>&1; then
        cat "$out/build.log" >&2; say "$name.ko does not build"; return 1
    fi
    ko="$out/$name.ko"
    # modpost has checked this too; named here all at once
    missing=$("$nm" -u "$ko" | awk '{print $2}' | sort -u |
              comm -23 - <(awk '{print $2}' "$hdir/Module.symvers" | sort -u) |
              paste -sd' ')
    if [ -n "$missing" ]; then
        say "$name.ko needs symbols the kernel does not export: $missing"
        return 1
    fi
    vermagic=$(tr '\0' '\n' < "$ko" | LC_ALL=C grep -a -m1 '^vermagic=' |
               cut -d= -f2- || true)
    if [ "${vermagic%% *}" != "$rel" ]; then
        say "$name.ko has vermagic \"$vermagic\", not $rel"; return 1
    fi
}

# kmod_alias KO ALIAS: the module binds what ALIAS (a prefix of a modalias
# such as pci:v000019E5d0000A12E) names; else says so and returns 1
kmod_alias() {
    tr '\0' '\n' < "$1" | LC_ALL=C grep -a "^alias=$2" > /dev/null ||
        { say "$(basename "$1") has no alias $2"; return 1; }
}
