#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The C example of docs/qtest.md as a user runs it: examples/qtest/ copied
# to a directory outside the clone, built and run with the documented
# command. TAP from scripts/qtest-user.sh.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ndk-c-example-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cp -r "$REPO/examples/qtest" "$work/my-tests"
"$REPO/scripts/qtest-user.sh" "$work/my-tests"
