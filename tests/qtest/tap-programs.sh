#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tap-programs.sh DIR [ARGS...]: run the QTest programs of programs.txt
# from DIR one after the other, each with --tap ARGS, as ONE TAP stream:
# their results renumbered in order and one plan at the end, so that
# meson's tap protocol counts every case. A program that is missing,
# bails out, crashes or exits with an error without a failed result of
# its own adds a "not ok" of its own; the exit status is 1 if any result
# failed. The caller sets the environment (QTEST_QEMU_BINARY, ...).
HERE=$(cd "$(dirname "$0")" && pwd)
dir=$1
shift

# programs.txt: one name a line; # comments and blank lines
programs=()
while read -r name _; do
    case $name in
    ''|'#'*) ;;
    *) programs+=("$name") ;;
    esac
done < "$HERE/programs.txt"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ndk-qtest-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

fail() {
    n=$((n + 1))
    failed=1
    echo "not ok $n - $*"
}

for prog in "${programs[@]}"; do
    bin="$dir/$prog"
    echo "# $prog"
    if [ ! -x "$bin" ]; then
        fail "$prog: $bin is missing"
        continue
    fi
    plan=
    results=0
    bad=0
    while IFS= read -r line; do
        if [[ $line =~ ^(not\ )?ok\ [0-9]+(.*)$ ]]; then
            n=$((n + 1))
            results=$((results + 1))
            if [ -n "${BASH_REMATCH[1]}" ]; then
                bad=1
                failed=1
            fi
            echo "${BASH_REMATCH[1]}ok $n${BASH_REMATCH[2]}"
        elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
            plan=${BASH_REMATCH[1]}
        elif [[ $line =~ ^Bail\ out!(.*)$ ]]; then
            bad=1
            fail "$prog: bailed out:${BASH_REMATCH[1]}"
        elif [[ $line =~ ^TAP\ version ]]; then
            :
        else
            echo "$line"
        fi
    done < <("$bin" --tap "$@"; echo $? > "$tmp/rc")
    rc=$(cat "$tmp/rc" 2>/dev/null || echo 255)
    if [ -z "$plan" ]; then
        fail "$prog: no TAP plan (exit status $rc)"
    elif [ "$results" -lt "$plan" ]; then
        fail "$prog: $((plan - results)) of its $plan results missing" \
             "(exit status $rc)"
    elif [ "$rc" != 0 ] && [ "$bad" = 0 ]; then
        fail "$prog: exit status $rc"
    fi
done
echo "1..$n"
exit $failed
