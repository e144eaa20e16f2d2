#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What `meson install` puts on a machine for the guest tool, staged into a
# temporary DESTDIR: the tool, the shared library with its soname links,
# the header, a pkg-config file that a C program can build against, and a
# man page that renders without warnings. TAP output.
# usage: PTM_BUILD_DIR=<build> install-test.sh   (meson test sets it)
set -uo pipefail
B=${PTM_BUILD_DIR:?PTM_BUILD_DIR must name the meson build directory}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest
. "$SRC/tests/tap.sh"
# check DESCRIPTION COMMAND...: ok when the command succeeds
check() {
    local what=$1 out
    shift
    if out=$("$@" 2>&1); then ok "$what"; else fail "$what" "$out"; fi
}
# Abandon the rest when a step that every later check needs fails.
bail() { echo "Bail out! $1"; exit 1; }

# --no-rebuild: meson test has built everything already, and a rebuild
# from inside a running test would fight it for the build directory.
if out=$(meson install -C "$B" --destdir "$dest" --no-rebuild 2>&1); then
    ok "meson install --destdir"
else
    fail "meson install --destdir" "$out"
    bail "nothing was installed"
fi

# Install directories as this build configured them (absolute, prefix
# included), so the test holds for any --prefix and --libdir.
opt() {
    meson introspect --buildoptions "$B" | /usr/bin/python3 -c '
import json, os, sys
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
v = o[sys.argv[1]]
print(v if os.path.isabs(v) else os.path.join(o["prefix"], v))' "$1"
}
for d in bindir libdir includedir mandir; do
    v=$(opt $d) || bail "cannot read the $d option of $B"
    printf -v "$d" '%s' "$v"
done
tool=$dest$bindir/pcie-telemetry
lib=$dest$libdir
version=$(meson introspect --projectinfo "$B" | /usr/bin/python3 -c '
import json, sys
print(json.load(sys.stdin)["version"])')

# The tool
check "pcie-telemetry in bindir ($bindir)" test -x "$tool" -a -f "$tool"
# The build's rpath must not survive the install.
rpath=$(readelf -d "$tool" 2>&1 | grep -E 'R(UN)?PATH' || true)
if [[ $rpath == *"$B"* ]]; then
    fail "installed tool has no rpath into the build directory" "$rpath"
else
    ok "installed tool has no rpath into the build directory"
fi

# The library and its soname links
real=libpcie-telemetry.so.$version
check "$real in libdir ($libdir)" test -f "$lib/$real" -a ! -L "$lib/$real"
for link in libpcie-telemetry.so.0 libpcie-telemetry.so; do
    target=$(readlink "$lib/$link" 2>/dev/null)
    case $target in
    libpcie-telemetry.so.0 | "$real")
        # .so may point to .so.0, which points to the file itself
        if [ "$(readlink -f "$lib/$link")" = "$(readlink -f "$lib/$real")" ]; then
            ok "$link is a link to $real"
        else
            fail "$link is a link to $real" "resolves to $(readlink -f "$lib/$link")"
        fi
        ;;
    *)
        fail "$link is a link to $real" "readlink: '${target}'"
        ;;
    esac
done
soname=$(readelf -d "$lib/$real" 2>&1 | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
if [ "$soname" = libpcie-telemetry.so.0 ]; then
    ok "SONAME libpcie-telemetry.so.0"
else
    fail "SONAME libpcie-telemetry.so.0" "readelf -d gives SONAME '$soname'"
fi

# The header, as it is in the source tree
check "pcie-telemetry.h in includedir ($includedir)" \
    cmp "$SRC/guest-tool/include/pcie-telemetry.h" "$dest$includedir/pcie-telemetry.h"

# pkg-config against the staged tree: SYSROOT prefixes the .pc's paths with
# the destdir; the system's own .pc files (libpci, liblzma) are still found.
pc=$lib/pkgconfig/pcie-telemetry.pc
check "pcie-telemetry.pc in $libdir/pkgconfig" test -f "$pc"
export PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_PATH=$lib/pkgconfig
modversion=$(pkg-config --modversion pcie-telemetry 2>&1)
if [ "$modversion" = "$version" ]; then
    ok "pkg-config --modversion is $version"
else
    fail "pkg-config --modversion is $version" "$modversion"
fi
cflags=$(pkg-config --cflags pcie-telemetry 2>&1)
if [[ " $cflags " == *" -I$dest$includedir "* ]]; then
    ok "Cflags: -I\${includedir}"
else
    fail "Cflags: -I\${includedir}" "pkg-config --cflags: $cflags"
fi
libs=$(pkg-config --libs pcie-telemetry 2>&1)
if [[ " $libs " == *" -L$lib "* && " $libs " == *" -lpcie-telemetry "* ]]; then
    ok "Libs: -L\${libdir} -lpcie-telemetry"
else
    fail "Libs: -L\${libdir} -lpcie-telemetry" "pkg-config --libs: $libs"
fi

# A program built the way users build against the library
cat > "$tmp/prog.c" <<'EOF'
#include <stdio.h>
#include <pcie-telemetry.h>

int main(void)
{
    printf("pcie-telemetry %s\n", ptl_version_string());
    return 0;
}
EOF
# shellcheck disable=SC2046 # pkg-config's words are meant to split
if out=$(cc -Wall -Werror -o "$tmp/prog" "$tmp/prog.c" \
         $(pkg-config --cflags --libs pcie-telemetry) 2>&1); then
    ok "a program builds with cc \$(pkg-config --cflags --libs pcie-telemetry)"
else
    fail "a program builds with cc \$(pkg-config --cflags --libs pcie-telemetry)" "$out"
fi
# It must load the staged library, not one installed on the machine.
loaded=$(LD_LIBRARY_PATH=$lib ldd "$tmp/prog" 2>&1 | grep libpcie-telemetry)
if [[ $loaded == *"=> $lib/libpcie-telemetry.so.0 "* ]]; then
    ok "the program loads the staged libpcie-telemetry.so.0"
else
    fail "the program loads the staged libpcie-telemetry.so.0" "ldd: $loaded"
fi
prog_out=$(LD_LIBRARY_PATH=$lib "$tmp/prog" 2>&1)
tool_out=$(LD_LIBRARY_PATH=$lib "$tool" --version 2>&1)
if [ -n "$prog_out" ] && [ "$prog_out" = "$tool_out" ] &&
   [ "$tool_out" = "pcie-telemetry $version" ]; then
    ok "ptl_version_string() agrees with pcie-telemetry --version ($version)"
else
    fail "ptl_version_string() agrees with pcie-telemetry --version ($version)" \
        "program: '$prog_out'; tool: '$tool_out'"
fi

# The man page
man=$dest$mandir/man1/pcie-telemetry.1
check "pcie-telemetry.1 under $mandir/man1" test -f "$man"
# the first line that is not a roff comment is the title
th=$(grep -v -m 1 '^\.\\"' "$man" 2>/dev/null)
if [[ $th == ".TH PCIE-TELEMETRY 1 "* ]]; then
    ok "the man page starts with .TH PCIE-TELEMETRY 1"
else
    fail "the man page starts with .TH PCIE-TELEMETRY 1" "first line: '$th'"
fi
if command -v groff > /dev/null; then
    warn=$(groff -ww -z -man -Tutf8 "$man" 2>&1)
    if [ -z "$warn" ]; then
        ok "groff -ww -z -man: no warnings"
    else
        fail "groff -ww -z -man: no warnings" "$warn"
    fi
    page=$(groff -man -Tutf8 "$man" 2>&1 | sed 's/.\x08//g')
    if grep -q '^NAME' <<< "$page" && grep -q '^SYNOPSIS' <<< "$page" &&
       grep -q '^ \+pcie-telemetry .*report' <<< "$page"; then
        ok "groff -man -Tutf8 renders NAME and SYNOPSIS"
    else
        fail "groff -man -Tutf8 renders NAME and SYNOPSIS" "$(head -n 10 <<< "$page")"
    fi
else
    ok "# SKIP groff is not installed"
    ok "# SKIP groff is not installed"
fi
if command -v man > /dev/null; then
    # --warnings=w is groff -ww (all warnings); MANWIDTH: no tty to take the width from
    err=$(MANWIDTH=80 MAN_DISABLE_SECCOMP=1 man --warnings=w -l "$man" 2>&1 > "$tmp/man.txt")
    if [ -z "$err" ] && grep -q 'SYNOPSIS' "$tmp/man.txt"; then
        ok "man -l renders the page without warnings"
    else
        fail "man -l renders the page without warnings" "$err$(head -n 5 "$tmp/man.txt")"
    fi
else
    ok "# SKIP man is not installed"
fi

tap_done
