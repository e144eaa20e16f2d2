#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Link this repository into a QEMU 10.0 source tree and add the Kconfig,
# meson and trace-events lines the device needs. Idempotent: every addition
# is a marked block that is written once; the links are renewed so that they
# point at the repository this script runs from.
#
# No file of the tree is written in place: a file that changes is replaced
# by a new one (written beside it, then renamed over it). The tree may share
# its files by hard links with the unpacked source that other trees are
# copies of (scripts/setup.sh), and these stay as they were.
#
# usage: qemu-integrate.sh QEMU_SRC_DIR [REPO_DIR]
set -euo pipefail
src=${1:?usage: qemu-integrate.sh QEMU_SRC_DIR [REPO_DIR]}
repo=${2:-$(cd "$(dirname "$0")/.." && pwd)}
mark="ndk-pcie-telemetry"

[ -f "$src/hw/misc/Kconfig" ] || { echo "qemu-integrate: $src is not a QEMU source tree" >&2; exit 1; }

# The whole repository appears as hw/misc/ndk-pcie-telemetry, its QTests as
# tests/qtest/ndk-pcie-telemetry.
ln -sfn "$repo" "$src/hw/misc/$mark"
ln -sfn "$repo/tests/qtest" "$src/tests/qtest/$mark"

# replace FILE by FILE.ndk-new (a new file, with FILE's mode)
replace_by_new() {
    chmod --reference="$1" "$1.ndk-new"
    mv "$1.ndk-new" "$1"
}

add_block() {  # file, block text
    local file=$1 text=$2
    grep -q "BEGIN $mark" "$file" && return 0
    { cat "$file"
      printf '\n# BEGIN %s (added by qemu-integrate.sh)\n%s\n# END %s\n' \
          "$mark" "$text" "$mark"; } > "$file.ndk-new"
    replace_by_new "$file"
}

add_block "$src/hw/misc/Kconfig" "config NDK_PCIE_TELEMETRY
    bool
    default y if PCI_DEVICES
    depends on PCI"
add_block "$src/hw/misc/meson.build" "subdir('$mark/qemu-device')"
add_block "$src/tests/qtest/meson.build" "subdir('$mark')"

# Trace events of the device live in its own directory.
if ! grep -q "'hw/misc/$mark/qemu-device'" "$src/meson.build"; then
    sed "s|^    'hw/misc',\$|    'hw/misc',\n    'hw/misc/$mark/qemu-device',|" \
        "$src/meson.build" > "$src/meson.build.ndk-new"
    replace_by_new "$src/meson.build"
    grep -q "'hw/misc/$mark/qemu-device'" "$src/meson.build" ||
        { echo "qemu-integrate: could not add the trace-events directory to meson.build" >&2; exit 1; }
fi

# -object and object-add accept only the types of the QAPI schema.
/usr/bin/python3 "$repo/scripts/qemu-qapi-patch.py" "$src/qapi/qom.json" \
    "$repo"/qemu-device/qapi/*.json
