#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Independent check of the probe side of a vector: a register-level Python
model of one probe (inputs -> decode -> per-channel counters -> drain sweep)
is run on stimulus.trace and every FIFO write attempt it predicts (edge,
channel, delta) is compared with the `wr` lines of events.txt.

usage: check_probe.py VECTOR_DIR [...]

The model follows the timing rules of ../README.md: inputs registered at the
edge of their line (SRC/DST/BRAKE forced to 0 while reset), the increment of
line L added to the counters at edge L+2, histogram bands one edge later;
DRAIN_TICK when the period counter (0 at R) reaches DP-1; slot s captured at
tick+1+s(G+1) keeping that edge's increment, channel 8g+s written at
tick+3+s(G+1)+g.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402


def expand(rows):
    out = []
    for n, row in rows:
        out.extend([row.split()] * n)
    return out


def band(v, cap):
    if v == 0:
        return 0
    if v <= cap // 8:
        return 1
    if v <= cap // 2:
        return 2
    return 3


def idle_line(kind, g):
    if kind == "pcie":
        return ["0", "0" * 2 * g.pr, "0" * 2 * g.pr, "0" * 2 * g.pr * g.pw, "00", "00", "000000",
                str(g.tag_idle), str(g.stf_idle), "0", "0", "0", "0", "0", "1"]
    nb = 2 * g.ports
    return ["0", "0" * nb * g.dr, "0" * nb * g.dr, "0" * nb * g.dr * g.dw,
            "0" * nb, "0" * nb, "0" * nb * g.dr, "0" * nb, "0" * nb]


def model(lines, kind, card, g, n_edges):
    """returns [(edge, channel, delta)] of fifo_wr_en"""
    if kind == "pcie":
        buses = 2
        regs = g.pr
        items = [card["pcie-rq-mfb-region-bytes"] // card["mfb-item-bytes"],
                 card["pcie-rc-mfb-region-bytes"] // card["mfb-item-bytes"]]
        pw = g.pw
        brakes = 14
    else:
        buses = 2 * g.ports
        regs = g.dr
        items = []
        for p in range(g.ports):
            items += [card["dma-up-mfb-region-bytes"] // card["mfb-item-bytes"],
                      card["dma-down-mfb-region-bytes"] // card["mfb-item-bytes"]]
        pw = g.dw
        brakes = 0
    bch = 6 + regs
    ch = 1 + buses * bch + brakes
    groups = -(-ch // 8)
    dp = card["drain-period"]
    def bit(sv, i):          # bit i of an MSB-first binary string
        return sv[len(sv) - 1 - i] == "1"

    def field(sv, i, w):
        return int(sv[len(sv) - (i + 1) * w:len(sv) - i * w] or "0", 2)

    # register state (values seen at the current edge)
    R = {"sof": "0" * buses * regs, "eof": "0" * buses * regs, "pos": "0" * buses * regs * pw,
         "src": "0" * buses, "dst": "0" * buses, "brake": 0, "vld": "0" * buses * regs,
         "msrc": "0" * buses, "mdst": "0" * buses}
    band_reg = 0          # pcie: stfifo band bits << 4 | tag band bits (one-hot)
    fopen = [False] * buses
    step_reg = [0] * ch
    cnt = [0] * (groups * 8)
    period = 0
    sweep, slot, pos = False, 0, 0
    grp = [0] * groups
    wr_en, wr_dat = False, None
    out = []
    for k in range(n_edges):
        ln = lines[k]
        rst = ln[0] == "1"
        # ---- combinational from the registers seen at k
        move = [bit(R["src"], b) and bit(R["dst"], b) for b in range(buses)]
        hold = [bit(R["src"], b) and not bit(R["dst"], b) for b in range(buses)]
        mmove = [bit(R["msrc"], b) and bit(R["mdst"], b) for b in range(buses)]
        mhold = [bit(R["msrc"], b) and not bit(R["mdst"], b) for b in range(buses)]
        step = [0] * ch
        step[0] = 1
        new_open = list(fopen)
        for b in range(buses):
            o = fopen[b]
            isum = ssum = msum = 0
            rv = []
            for r in range(regs):
                j = b * regs + r
                v = o or bit(R["sof"], j)
                rv.append(v)
                if v:
                    isum += (field(R["pos"], j, pw) + 1) if bit(R["eof"], j) else items[b]
                if bit(R["sof"], j):
                    ssum += 1
                if bit(R["vld"], j):
                    msum += 1
                o = (o or bit(R["sof"], j)) and not bit(R["eof"], j)
            new_open[b] = o
            base = 1 + b * bch
            step[base + 0] = 1 if move[b] else 0
            step[base + 1] = 1 if hold[b] else 0
            step[base + 2] = ssum if move[b] else 0
            step[base + 3] = msum if mmove[b] else 0
            step[base + 4] = 1 if mhold[b] else 0
            step[base + 5] = isum if move[b] else 0
            for r in range(regs):
                step[base + 6 + r] = 1 if (move[b] and rv[r]) else 0
        for kk in range(brakes):
            step[1 + buses * bch + kk] = (R["brake"] >> kk) & 1
        tick = period == dp - 1
        capture = sweep and pos == 0
        emit_grp = min(max(pos, 1), groups) - 1
        emit_chan = emit_grp * 8 + slot
        emit_en = sweep and pos != 0 and emit_chan < ch
        # ---- outputs of this edge
        if wr_en:
            out.append((k, wr_dat[0], wr_dat[1]))
        # ---- register updates at edge k
        n_wr_dat = (emit_chan, grp[emit_grp])
        n_wr_en = emit_en and not rst
        if capture:
            for gg in range(groups):
                grp[gg] = cnt[gg * 8 + slot]
        for i in range(ch):
            if rst:
                cnt[i] = 0
            elif capture and i % 8 == slot:
                cnt[i] = step_reg[i]
            else:
                cnt[i] = cnt[i] + step_reg[i]
        step_reg = [0] * ch if rst else step
        for b in range(buses):
            if move[b]:
                fopen[b] = new_open[b]
        if rst:
            fopen = [False] * buses
        # sweep
        if tick:
            sweep, slot, pos = True, 0, 0
        elif sweep:
            if pos == groups:
                pos = 0
                if slot == 7:
                    sweep = False
                else:
                    slot += 1
            else:
                pos += 1
        if rst:
            sweep, slot, pos = False, 0, 0
        period = 0 if rst else (period + 1) % dp
        wr_en, wr_dat = n_wr_en, n_wr_dat
        # input registers
        if kind == "pcie":
            brake_in = int(ln[6], 2) | (band_reg << 6)
            tb_ = band(int(ln[7]), card["tag-capacity"])
            sb_ = band(int(ln[8]), card["stfifo-capacity"])
            band_reg = 0 if rst else ((1 << sb_) << 4) | (1 << tb_)
            R = {"sof": ln[1], "eof": ln[2], "pos": ln[3], "src": ln[4], "dst": ln[5],
                 "brake": brake_in, "vld": "0" * buses * regs, "msrc": "0" * buses,
                 "mdst": "0" * buses}
        else:
            R = {"sof": ln[1], "eof": ln[2], "pos": ln[3], "src": ln[4], "dst": ln[5],
                 "brake": 0, "vld": ln[6], "msrc": ln[7], "mdst": ln[8]}
        if rst:
            R["src"] = "0" * buses
            R["dst"] = "0" * buses
            R["brake"] = 0
    return out


def check(vdir):
    card = run.read_card(os.path.join(vdir, "card.txt"))
    g = run.Geometry(card)
    probes = run.parse_trace(os.path.join(vdir, "stimulus.trace"), g)
    wr = {}
    last = {}
    for ln in open(os.path.join(vdir, "events.txt")):
        x = ln.split()
        if x and x[0] == "wr":
            wr.setdefault(int(x[1]), []).append((int(x[2]), int(x[3]), int(x[4])))
        if x and x[0] in ("rst", "tick", "wr", "full", "rsync", "flagclr"):
            last[int(x[1])] = max(last.get(int(x[1]), 0), int(x[2]))
    ok = bad = 0
    for e in range(g.eps):
        for j, kind in enumerate(("pcie", "dma")):
            s = 2 * e + j
            lines = expand(probes[(kind, e)])
            n_edges = max(last.get(s, 0) + 1, 1)
            idle = idle_line(kind, g)
            lines = lines + [idle] * max(0, n_edges - len(lines))
            if kind == "dma" and e > 0:
                # DMA_RESET is dma0's reset column
                d0 = expand(probes[("dma", 0)])
                lines = [[d0[i][0] if i < len(d0) else "0"] + lines[i][1:] for i in range(len(lines))]
            got = model(lines, kind, card, g, n_edges)
            want = wr.get(s, [])
            if got == want:
                ok += 1
            else:
                bad += 1
                for a, b in zip(got, want):
                    if a != b:
                        print("  stream %d: model %s rtl %s" % (s, a, b))
                        break
                else:
                    print("  stream %d: model %d writes, rtl %d" % (s, len(got), len(want)))
    return ok, bad


def main():
    for d in sys.argv[1:]:
        ok, bad = check(d)
        print("%s: %d streams match, %d differ" % (d, ok, bad))


if __name__ == "__main__":
    main()
