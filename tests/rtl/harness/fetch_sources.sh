#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Collect the VHDL sources the harness compiles into one directory.
# usage: fetch_sources.sh NDK_FPGA_GIT_DIR SRC_DIR [TELEMETRY_DIR]
# NDK_FPGA_GIT_DIR: a clone (or bare mirror) of CESNET's ndk-fpga; the files
# are taken from its HEAD with git show. TELEMETRY_DIR holds
# pcie_telemetry_probe.vhd, pcie_telemetry_acc.vhd and pcie_telemetry_mi.vhd
# (ndk-fpga 2026 sources), which are copied as they are.
set -e
git_dir=$1
src=$2
mkdir -p "$src"
for f in comp/base/pkg/math_pack.vhd comp/base/pkg/type_pack.vhd \
         comp/base/async/reset/reset.vhd comp/base/async/open_loop/open_loop.vhd \
         comp/base/async/open_loop_smd/open_loop_smd.vhd \
         comp/base/async/bus_handshake/sync_pgen.vhd \
         comp/base/async/bus_handshake/bus_handshake_fsm.vhd \
         comp/base/async/bus_handshake/bus_handshake.vhd \
         comp/base/mem/dp_bram/dp_bram_behav.vhd comp/base/mem/sdp_bram/sdp_bram_behav.vhd \
         comp/base/mem/gen_lutram/altdpram/altdpram_wrap_ent.vhd \
         comp/base/mem/gen_lutram/altdpram/altdpram_wrap_empty.vhd \
         comp/base/mem/gen_lutram/gen_lutram.vhd comp/base/fifo/asfifox/asfifox.vhd; do
    git -C "$git_dir" show "HEAD:$f" > "$src/$(basename "$f")"
done
if [ -n "$3" ]; then
    cp "$3/pcie_telemetry_probe.vhd" "$3/pcie_telemetry_acc.vhd" "$3/pcie_telemetry_mi.vhd" "$src/"
fi
ls "$src"
