#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Re-run the shared recording rtl-vectors/periodic through the harness and
compare with its expected.txt (the harness's own validation).

usage: validate_periodic.py --src SRC_DIR --periodic .../rtl-vectors/periodic [--work DIR]

The recording's clocks have rising edges at 1.25 + 2.5k ns (PCIe),
2.5 + 5k ns (DMA) and 5 + 10k ns (MI); MI_RESET ends at 195 ns. Edge 0 of
each clock is put at 101.25 / 102.5 / 105 ns, the VCD is sampled at those
edges (values from before each edge's changes), the final SNAPSHOT write is
sampled at the MI edge at 150.425 us and the 192 words are read afterwards.
"""

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--periodic", required=True)
    ap.add_argument("--work", default="/tmp/rtl-sim/build")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="periodic-")
    subprocess.check_call([sys.executable, os.path.join(HERE, "vcd2trace.py"),
                           os.path.join(a.periodic, "ports.vcd.xz"), os.path.join(d, "stimulus.trace"),
                           "--pcie-t0-ps", "101250", "--pcie-period-ps", "2500",
                           "--dma-t0-ps", "102500", "--dma-period-ps", "5000", "--tail-ns", "6000"])
    with open(os.path.join(d, "card.txt"), "w") as f:
        f.write("pcie-clk-freq=400000000\ndma-clk-freq=200000000\nmi-clk-freq=100000000\n")
    snap_m = (150425000 - 105000) // 10000          # 15032
    m = snap_m + 168
    with open(os.path.join(d, "mi.txt"), "w") as f:
        f.write("%d wr 20 1\n" % snap_m)
        for addr in list(range(0, 0x100, 4)) + list(range(0x8000, 0x8200, 4)):
            f.write("%d rd %x\n" % (m, addr))
            m += 1
        f.write("%d end\n" % (m + 5))
    run.run_vector(d, a.src, a.work, t0s=(101250, 102500, 105000), mi_reset_end=195000)
    got = [ln.split()[1:] for ln in open(os.path.join(d, "expected.txt")) if not ln.startswith("#")]
    want = [ln.split() for ln in open(os.path.join(a.periodic, "expected.txt")) if ln.strip() and not ln.startswith("#")]
    bad = [(w, g) for w, g in zip(want, got) if [x.lower() for x in w] != g]
    if len(want) != len(got) or bad:
        print("MISMATCH: %d of %d words differ" % (len(bad) + abs(len(want) - len(got)), len(want)))
        for w, g in bad[:10]:
            print("  want %s got %s" % (" ".join(w), " ".join(g)))
        sys.exit(1)
    print("periodic: all %d words match (%s)" % (len(want), d))


if __name__ == "__main__":
    main()
