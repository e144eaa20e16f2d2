#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Convert a port recording (VCD of the DUT's PCIe and DMA inputs, one
endpoint, as in shared/rtl-vectors) into a text trace with reset=1 fields.

Line k of probe pcie0 (dma0) holds the values sampled at the k-th rising edge
of that clock at or after --pcie-t0 (--dma-t0): the values from before the
changes recorded at the edge's timestamp. After the end of the VCD the last
values are kept for --tail-ns more nanoseconds.

usage: vcd2trace.py ports.vcd[.xz] out.trace --pcie-t0-ps 101250 --pcie-period-ps 2500
                    --dma-t0-ps 102500 --dma-period-ps 5000 [--tail-ns 6000]
"""

import argparse
import lzma
import re


def read_vcd(path):
    op = lzma.open if path.endswith(".xz") else open
    names = {}
    changes = {}
    t = 0
    with op(path, "rt") as f:
        for line in f:
            if line.startswith("$var"):
                tok = line.split()
                nm = re.sub(r"\[.*\]$", "", tok[4])
                names[tok[3]] = nm
                changes[nm] = []
            elif line.startswith("$enddefinitions"):
                break
        for line in f:
            line = line.strip()
            if not line or line[0] == "$":
                continue
            c = line[0]
            if c == "#":
                t = int(line[1:])
            elif c == "b":
                v, i = line[1:].split()
                changes[names[i]].append((t, int(v, 2)))
            else:
                changes[names[line[1:]]].append((t, int(c)))
    return changes, t


def sampler(changes, names, t0_fs, p_fs, t_end_fs):
    """yield one dict per edge t0 + k*p <= t_end: values before the edge"""
    idx = {n: 0 for n in names}
    cur = {n: 0 for n in names}
    k = 0
    while True:
        te = t0_fs + k * p_fs
        if te > t_end_fs:
            return
        for n in names:
            ch = changes[n]
            j = idx[n]
            while j < len(ch) and ch[j][0] < te:
                cur[n] = ch[j][1]
                j += 1
            idx[n] = j
        yield dict(cur)
        k += 1


def masks(v, regions, bus):
    return (v >> (bus * regions)) & ((1 << regions) - 1)


def pcie_line(s, regions=2, pw=3):
    f = ["pcie0"]
    if s["pcie_reset"]:
        f.append("reset=1")
    for b, nm in ((0, "rq"), (1, "rc")):
        src = (s["pcie_mfb_src_rdy"] >> b) & 1
        dst = (s["pcie_mfb_dst_rdy"] >> b) & 1
        sof = masks(s["pcie_mfb_sof"], regions, b)
        eof = masks(s["pcie_mfb_eof"], regions, b)
        if src:
            f.append("%s.src=1" % nm)
        if dst:
            f.append("%s.dst=1" % nm)
        if sof:
            f.append("%s.sof=%d" % (nm, sof))
        if eof:
            f.append("%s.eof=%d" % (nm, eof))
        for r in range(regions):
            p = (s["pcie_mfb_eof_pos"] >> ((b * regions + r) * pw)) & ((1 << pw) - 1)
            if p:
                f.append("%s.pos%d=%d" % (nm, r, p))
    if s["pcie_ptc_brake"]:
        f.append("brake=%d" % s["pcie_ptc_brake"])
    f.append("tags=%d" % s["pcie_tag_free"])
    f.append("stfifo=%d" % s["pcie_stfifo_free"])
    if not s["pcie_link_up"]:
        f.append("link=0")
    for k, n in (("pcie_mps", "mps"), ("pcie_mrrs", "mrrs"), ("pcie_ext_tag_en", "ext_tag"),
                 ("pcie_10b_tag_req_en", "tag_10b"), ("pcie_rcb_size", "rcb")):
        if s[k]:
            f.append("%s=%d" % (n, s[k]))
    return " ".join(f)


def dma_line(s, regions=2, pw=3):
    f = ["dma0"]
    if s["dma_reset"]:
        f.append("reset=1")
    for b, nm in ((0, "up"), (1, "down")):
        for key, fld in (("dma_mfb_src_rdy", "src"), ("dma_mfb_dst_rdy", "dst"),
                         ("dma_mvb_src_rdy", "msrc"), ("dma_mvb_dst_rdy", "mdst")):
            if (s[key] >> b) & 1:
                f.append("%s.%s=1" % (nm, fld))
        for key, fld in (("dma_mfb_sof", "sof"), ("dma_mfb_eof", "eof"), ("dma_mvb_vld", "vld")):
            v = masks(s[key], regions, b)
            if v:
                f.append("%s.%s=%d" % (nm, fld, v))
        for r in range(regions):
            p = (s["dma_mfb_eof_pos"] >> ((b * regions + r) * pw)) & ((1 << pw) - 1)
            if p:
                f.append("%s.pos%d=%d" % (nm, r, p))
    return " ".join(f)


def emit(out, lines):
    prev, n = None, 0
    for ln in lines:
        if ln == prev:
            n += 1
            continue
        if prev is not None:
            out.write(prev + (" cycles=%d" % n if n > 1 else "") + "\n")
        prev, n = ln, 1
    if prev is not None:
        out.write(prev + (" cycles=%d" % n if n > 1 else "") + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vcd")
    ap.add_argument("out")
    ap.add_argument("--pcie-t0-ps", type=int, required=True)
    ap.add_argument("--pcie-period-ps", type=int, required=True)
    ap.add_argument("--dma-t0-ps", type=int, required=True)
    ap.add_argument("--dma-period-ps", type=int, required=True)
    ap.add_argument("--tail-ns", type=int, default=6000)
    a = ap.parse_args()
    ch, t_end = read_vcd(a.vcd)
    t_stop = t_end + a.tail_ns * 10**6
    pn = [n for n in ch if n.startswith("pcie_") and n != "pcie_clk"]
    dn = [n for n in ch if n.startswith("dma_") and n != "dma_clk"]
    with open(a.out, "w") as out:
        out.write("# converted from %s by vcd2trace.py\n" % a.vcd.split("/")[-1])
        emit(out, (pcie_line(s) for s in sampler(ch, pn, a.pcie_t0_ps * 1000, a.pcie_period_ps * 1000, t_stop)))
        emit(out, (dma_line(s) for s in sampler(ch, dn, a.dma_t0_ps * 1000, a.dma_period_ps * 1000, t_stop)))


if __name__ == "__main__":
    main()
