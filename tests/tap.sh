# SPDX-License-Identifier: GPL-2.0-or-later
#
# TAP for the project's shell tests: source it, report each check with ok
# or fail, and end with tap_done (the plan, then its status as the last
# command's: 0 when every check passed).
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
# fail DESCRIPTION [DETAIL]: DETAIL follows as diagnostic lines
fail() {
    n=$((n + 1)); failed=$((failed + 1))
    echo "not ok $n - $1"
    [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/# /'
    return 0
}
tap_done() {
    echo "1..$n"
    [ "$failed" -eq 0 ]
}
