#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The replay generator against a VCD written by GHDL: simulate
# tests/replay/tb_replay.vhd for 1000 ns, dump it with --vcd, and run the
# /replay/ghdl case of test-replay on it (TAP on stdout). Fails, never
# skips, when GHDL is missing (scripts/setup.sh installs Debian's ghdl).
#
# usage: ghdl-vcd.sh <test-replay binary> [directory to keep out.vcd in]
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TEST=$1
KEEP=${2:-}

if ! command -v ghdl > /dev/null 2>&1; then
    echo "Bail out! ghdl not found: apt-get install ghdl (scripts/setup.sh does)"
    exit 1
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
# GHDL's messages go to stderr: stdout is the TAP stream
ghdl -a --std=08 "$HERE/tb_replay.vhd" >&2
ghdl -e --std=08 tb_replay >&2
ghdl -r --std=08 tb_replay --vcd=out.vcd --stop-time=1000ns >&2
if [ -n "$KEEP" ]; then
    cp out.vcd "$KEEP/"
fi
PTM_REPLAY_GHDL_VCD=$WORK/out.vcd "$TEST" --tap -p /replay/ghdl
