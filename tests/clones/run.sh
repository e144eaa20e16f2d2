#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Each clone of the repository has a QEMU of its own. A temporary clone of
# this repository at HEAD gets a commit that adds a device property
# (x-clone-check) and is set up with scripts/setup.sh --qemu-only in this
# clone's cache; its QEMU must list the property, this clone's QEMU must
# not, and this clone's build/qemu-system-x86_64 must still be the same
# binary of this clone's own build tree. Prints the temporary clone's
# set-up time; removes the clone and its QEMU build afterwards. TAP output.
# usage: tests/clones/run.sh   (after scripts/setup.sh in this clone)
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd -P)
. "$SRC/tests/tap.sh"
bail() { echo "Bail out! $1"; exit 1; }
prop=x-clone-check
# the device's state (its struct) and its property list
state_h=qemu-device/card/ndk-card.h
dev=qemu-device/card/ndk-pcie-telemetry.c

# the directory clones/<id> of the cache that a build's binary resolves into
clone_dir() {
    local real
    real=$(readlink -f "$1") || return 1
    case "$real" in
        */qemu-*/clones/*/build/qemu-system-x86_64)
            echo "${real%/build/qemu-system-x86_64}";;
        *) return 1;;
    esac
}
# has_prop QEMU: the device's property list names $prop
has_prop() {
    local out
    out=$("$1" -device ndk-pcie-telemetry,help 2>&1) ||
        { echo "# $1 -device ndk-pcie-telemetry,help failed: $out"; return 2; }
    grep -q "^ *$prop=" <<< "$out"
}

qemu="$SRC/build/qemu-system-x86_64"
own=$(clone_dir "$qemu") ||
    bail "$qemu does not resolve into a clone's QEMU build of the cache (run scripts/setup.sh)"
[ "$(cat "$own/repo" 2>/dev/null)" = "$SRC" ] ||
    bail "$own belongs to $(cat "$own/repo" 2>/dev/null || echo nobody), not to $SRC"
# $CACHE/qemu-<version>-<key>/clones/<id>
CACHE=$(dirname "$(dirname "$(dirname "$own")")")
own_bin=$(readlink -f "$qemu")
own_mtime=$(stat -c %Y "$own_bin")
ok "this clone's QEMU is its own build ($own)"
has_prop "$qemu"
[ $? = 1 ] || bail "this clone's QEMU lists $prop already, or does not run"

tmp=$(mktemp -d)
clone=$tmp/repo
cleanup() {
    local d
    for d in "$CACHE"/qemu-*/clones/*/; do
        [ "$(cat "$d/repo" 2>/dev/null)" = "$clone" ] && rm -rf "$d"
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

git clone -q "$SRC" "$clone" || bail "git clone $SRC failed"
clone=$(cd "$clone" && pwd -P)
# a field and its property, the property last in the list
sed -i -e 's/^    uint32_t build_time;$/&\n    uint32_t x_clone_check;/' \
    "$clone/$state_h"
sed -i -e "s/^    DEFINE_PROP_LINK(\"traffic\", /    DEFINE_PROP_UINT32(\"$prop\", NdkPcieTelemetryState, x_clone_check, 0),\n&/" \
    "$clone/$dev"
if [ "$(grep -c '^    uint32_t x_clone_check;$' "$clone/$state_h")" = 1 ] &&
   [ "$(grep -c "DEFINE_PROP_UINT32(\"$prop\"" "$clone/$dev")" = 1 ]; then
    ok "the temporary clone's device has a property $prop"
else
    fail "the temporary clone's device has a property $prop" \
        "the edit of $dev did not apply (its struct or property list changed?)"
    bail "no device to tell the clones apart"
fi
git -C "$clone" -c user.name="clones test" -c user.email=clones-test@localhost \
    commit -q -am "A property $prop" || bail "git commit in the temporary clone failed"

start=$(date +%s)
# its QEMU alone: the project's own build has nothing to tell the clones apart
if NDK_TELEMETRY_CACHE=$CACHE NDK_TELEMETRY_NO_APT=1 "$clone/scripts/setup.sh" \
        --qemu-only > "$tmp/setup.log" 2>&1; then
    ok "set-up of the temporary clone"
else
    fail "set-up of the temporary clone" "$(tail -30 "$tmp/setup.log")"
    bail "the temporary clone has no QEMU"
fi
echo "# set-up of the temporary clone: $(( $(date +%s) - start )) s"

cqemu="$clone/build/qemu-system-x86_64"
if cdir=$(clone_dir "$cqemu") && [ "$cdir" != "$own" ] &&
   [ "$(cat "$cdir/repo" 2>/dev/null)" = "$clone" ]; then
    ok "the temporary clone's QEMU is its own build ($cdir)"
else
    fail "the temporary clone's QEMU is its own build" \
        "$cqemu -> $(readlink -f "$cqemu")"
fi
if has_prop "$cqemu"; then
    ok "the temporary clone's QEMU lists $prop"
else
    fail "the temporary clone's QEMU lists $prop"
fi
has_prop "$qemu"
case $? in
    1) ok "this clone's QEMU does not list $prop";;
    *) fail "this clone's QEMU does not list $prop";;
esac
if [ "$(readlink -f "$qemu")" = "$own_bin" ] &&
   [ "$(stat -c %Y "$own_bin")" = "$own_mtime" ]; then
    ok "this clone's build/qemu-system-x86_64 is still its own, unchanged"
else
    fail "this clone's build/qemu-system-x86_64 is still its own, unchanged" \
        "$qemu -> $(readlink -f "$qemu"), was $own_bin (mtime $own_mtime)"
fi
tap_done
