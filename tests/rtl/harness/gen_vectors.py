#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write the inputs (card.txt, stimulus.trace, mi.txt) of the RTL vectors.

usage: gen_vectors.py OUTDIR [name ...]

Everything is deterministic (fixed seeds). run.py then adds expected.txt and
events.txt from the RTL.
"""

import math
import os
import random
import sys

T0_NS = 1000.0

SETS = {
    "A": {},
    "B": {"pcie-endpoints": 2, "dma-ports": 2,
          "pcie-rq-mfb-regions": 4, "pcie-rc-mfb-regions": 2,
          "dma-up-mfb-regions": 2, "dma-down-mfb-regions": 1,
          "pcie-rq-mfb-region-bytes": 32, "pcie-rc-mfb-region-bytes": 16,
          "dma-up-mfb-region-bytes": 64, "dma-down-mfb-region-bytes": 32,
          "pcie-eof-pos-width": 3, "dma-eof-pos-width": 4,
          "drain-period": 1024, "cnt-width": 33,
          "tag-capacity": 64, "stfifo-capacity": 256},
    "C": {"pcie-endpoints": 1, "dma-ports": 3,
          "pcie-rq-mfb-regions": 1, "pcie-rc-mfb-regions": 1,
          "dma-up-mfb-regions": 1, "dma-down-mfb-regions": 1,
          "pcie-rq-mfb-region-bytes": 64, "pcie-rc-mfb-region-bytes": 64,
          "dma-up-mfb-region-bytes": 64, "dma-down-mfb-region-bytes": 64,
          "pcie-eof-pos-width": 4, "dma-eof-pos-width": 4,
          "drain-period": 512, "cnt-width": 64},
}

DEFAULTS = {
    "pcie-endpoints": 1, "dma-ports": 1,
    "pcie-rq-mfb-regions": 2, "pcie-rc-mfb-regions": 2,
    "dma-up-mfb-regions": 2, "dma-down-mfb-regions": 2,
    "pcie-rq-mfb-region-bytes": 32, "pcie-rc-mfb-region-bytes": 32,
    "dma-up-mfb-region-bytes": 32, "dma-down-mfb-region-bytes": 32,
    "mfb-item-bytes": 4, "pcie-eof-pos-width": 3, "dma-eof-pos-width": 3,
    "cnt-width": 48, "drain-period": 4096, "tag-capacity": 256,
    "stfifo-capacity": 1024,
}

CLOCKS = {"pcie-clk-freq": 250000000, "dma-clk-freq": 200000000,
          "mi-clk-freq": 100000000}


def log2(n):
    return max(1, math.ceil(math.log2(n))) if n > 1 else 1


class Card:
    def __init__(self, gen, clocks):
        self.p = dict(DEFAULTS)
        self.p.update(gen)
        self.p.update(CLOCKS)
        self.p.update(clocks)
        p = self.p
        self.eps = p["pcie-endpoints"]
        self.ports = p["dma-ports"]
        self.rq, self.rc = p["pcie-rq-mfb-regions"], p["pcie-rc-mfb-regions"]
        self.up, self.down = p["dma-up-mfb-regions"], p["dma-down-mfb-regions"]
        ib = p["mfb-item-bytes"]
        self.items = {"rq": p["pcie-rq-mfb-region-bytes"] // ib,
                      "rc": p["pcie-rc-mfb-region-bytes"] // ib,
                      "up": p["dma-up-mfb-region-bytes"] // ib,
                      "down": p["dma-down-mfb-region-bytes"] // ib}
        self.dp = p["drain-period"]
        pr = max(self.rq, self.rc)
        dr = max(self.up, self.down)
        self.pch = 1 + 2 * (6 + pr) + 14
        self.dch = 1 + 2 * self.ports * (6 + dr)
        self.pg = -(-self.pch // 8)
        self.dg = -(-self.dch // 8)
        self.epch = self.pch + self.dch
        self.entries = 1 << log2(self.eps * self.epch)
        self.tagcap = min(p["tag-capacity"], 2047)
        self.stfcap = p["stfifo-capacity"]
        self.pp = 1e9 / p["pcie-clk-freq"]
        self.dpp = 1e9 / p["dma-clk-freq"]
        self.mp = 1e9 / p["mi-clk-freq"]

    def write(self, path):
        with open(path, "w") as f:
            f.write("# generics of PCIE_TELEMETRY_MI and the clocks, as the device's property names\n")
            for k in DEFAULTS:
                f.write("%s=%d\n" % (k, self.p[k]))
            for k in CLOCKS:
                f.write("%s=%d\n" % (k, self.p[k]))


# ---------------------------------------------------------------------------
# traffic
# ---------------------------------------------------------------------------

class MfbBus:
    """a generator of plausible MFB words for one bus"""

    def __init__(self, rng, regions, items):
        self.rng, self.regions, self.items = rng, regions, items
        self.open = False
        self.word = None

    def next_word(self):
        r = self.rng
        sof = eof = 0
        pos = {}
        open_ = self.open
        for reg in range(self.regions):
            if not open_ and r.random() < 0.5:
                sof |= 1 << reg
                open_ = True
            if open_ and r.random() < 0.45:
                eof |= 1 << reg
                pos[reg] = r.randrange(self.items)
                open_ = False
                # a frame that ends in this region may be followed by
                # a new one only in a later region (single block regions)
        self.open = open_
        return sof, eof, pos

    def cycle(self, name, f, src_p=0.85, dst_p=0.75):
        r = self.rng
        src = r.random() < src_p
        dst = r.random() < dst_p
        if src:
            if self.word is None:
                self.word = self.next_word()
            sof, eof, pos = self.word
            f[name + ".src"] = 1
            if sof:
                f[name + ".sof"] = sof
            if eof:
                f[name + ".eof"] = eof
            for reg, p in pos.items():
                if p:
                    f["%s.pos%d" % (name, reg)] = p
            if dst:
                self.word = None
        if dst:
            f[name + ".dst"] = 1


def band_values(cap, top):
    return [0, 1, max(1, cap // 8), cap // 8 + 1, cap // 2, cap // 2 + 1, cap, top]


class PcieGen:
    def __init__(self, card, seed):
        self.c = card
        self.rng = random.Random(seed)
        self.rq = MfbBus(self.rng, card.rq, card.items["rq"])
        self.rc = MfbBus(self.rng, card.rc, card.items["rc"])
        self.tags = band_values(card.tagcap, 2047)
        self.stf = band_values(card.stfcap, 65535)
        self.brake = 0
        self.tag = card.tagcap
        self.stfv = card.stfcap

    def burst(self, f):
        r = self.rng
        self.rq.cycle("rq", f)
        self.rc.cycle("rc", f, 0.8, 0.85)
        if r.random() < 0.4:
            self.brake = r.randrange(64)
        if self.brake:
            f["brake"] = self.brake
        if r.random() < 0.3:
            self.tag = r.choice(self.tags)
        if r.random() < 0.3:
            self.stfv = r.choice(self.stf)
        f["tags"] = self.tag
        f["stfifo"] = self.stfv
        if r.random() < 0.05:
            f["link"] = 0

    def steady(self, f, w):
        c = self.c
        f.update({"rq.src": 1, "rq.dst": 1, "rq.sof": 1, "rq.eof": 1})
        if w % c.items["rq"]:
            f["rq.pos0"] = w % c.items["rq"]
        f["rc.src"] = 1
        if w % 2 == 0:
            f["rc.dst"] = 1
        last = c.rc - 1
        f["rc.sof"] = 1
        f["rc.eof"] = 1 << last
        if (w + 2) % c.items["rc"]:
            f["rc.pos%d" % last] = (w + 2) % c.items["rc"]
        if (w * 13 + 5) % 64:
            f["brake"] = (w * 13 + 5) % 64
        f["tags"] = self.tags[w % 8]
        f["stfifo"] = self.stf[(w + 3) % 8]

    def settings(self, f, w):
        f["mps"] = w % 6
        f["mrrs"] = (w + 2) % 6
        if w % 2:
            f["ext_tag"] = 1
        if w % 3 == 1:
            f["tag_10b"] = 1
        if w % 4 >= 2:
            f["rcb"] = 1


class DmaGen:
    def __init__(self, card, seed):
        self.c = card
        self.rng = random.Random(seed)
        self.buses = []
        for p in range(card.ports):
            self.buses.append(("up%d" % p, MfbBus(self.rng, card.up, card.items["up"]), card.up))
            self.buses.append(("down%d" % p, MfbBus(self.rng, card.down, card.items["down"]), card.down))

    def burst(self, f):
        r = self.rng
        for name, bus, regs in self.buses:
            bus.cycle(name, f)
            if r.random() < 0.7:
                v = r.randrange(1, 1 << regs)
                f[name + ".vld"] = v
                f[name + ".msrc"] = 1
            if r.random() < 0.7:
                f[name + ".mdst"] = 1

    def steady(self, f, w):
        c = self.c
        for i, (name, bus, regs) in enumerate(self.buses):
            items = c.items["up" if name.startswith("up") else "down"]
            f[name + ".src"] = 1
            if (w + i) % 3 != 1:
                f[name + ".dst"] = 1
            f[name + ".sof"] = 1
            f[name + ".eof"] = 1 << (regs - 1)
            if (w + i) % items:
                f["%s.pos%d" % (name, regs - 1)] = (w + i) % items
            f[name + ".vld"] = (1 << regs) - 1 if (w + i) % 2 else 1
            f[name + ".msrc"] = 1
            if (w + i) % 4 != 3:
                f[name + ".mdst"] = 1


def fmt(probe, f, n):
    s = probe
    for k, v in f.items():
        s += " %s=%d" % (k, v)
    if n > 1:
        s += " cycles=%d" % n
    return s


class Probe:
    """builds the lines of one probe: reset intervals, bursts around ticks"""

    def __init__(self, name, gen, dp, groups, ncycles, resets, burst_ticks=5,
                 settings=False, burst_all=False):
        self.name, self.gen, self.dp, self.g = name, gen, dp, groups
        self.n = ncycles
        self.resets = sorted(resets)   # [(start, end)) lines with reset=1
        self.burst_ticks = burst_ticks
        self.settings = settings
        self.burst_all = burst_all
        self.ticks = self.tick_lines()

    def in_reset(self, k):
        for a, b in self.resets:
            if a <= k < b:
                return True
        return False

    def tick_lines(self):
        ticks = []
        k = 0
        rel = None
        while k < self.n:
            if self.in_reset(k):
                rel = None
            else:
                if rel is None:
                    rel = 0
                if rel % self.dp == self.dp - 1:
                    ticks.append(k)
                rel += 1
            k += 1
        return ticks

    def lines(self, extra_bursts=()):
        sweep = 8 * (self.g + 1)
        spans = []
        for t in self.ticks[:self.burst_ticks] if not self.burst_all else self.ticks:
            spans.append((t - 6, t + sweep + 6))
        for a, b in extra_bursts:
            spans.append((a, b))
        # reset edges get bursts too
        for a, b in self.resets:
            spans.append((a - 4, a + 4))
            spans.append((b - 4, b + 4))
        in_burst = bytearray(self.n)
        for a, b in spans:
            for k in range(max(0, a), min(self.n, b)):
                in_burst[k] = 1
        out = []
        prev, cnt = None, 0
        for k in range(self.n):
            f = {}
            if self.in_reset(k):
                f["reset"] = 1
            w = k // self.dp
            if in_burst[k]:
                self.gen.burst(f)
            else:
                self.gen.steady(f, w)
            if self.settings:
                self.gen.settings(f, w)
            key = tuple(f.items())
            if key == prev:
                cnt += 1
            else:
                if prev is not None:
                    out.append(fmt(self.name, dict(prev), cnt))
                prev, cnt = key, 1
        out.append(fmt(self.name, dict(prev), cnt))
        return out


# ---------------------------------------------------------------------------
# MI script
# ---------------------------------------------------------------------------

class Mi:
    def __init__(self, card):
        self.c = card
        self.ops = {}
        self.cur = 1

    def at(self, m):
        self.cur = max(self.cur, m)
        return self

    def put(self, op):
        while self.cur in self.ops:
            self.cur += 1
        self.ops[self.cur] = op
        self.cur += 1

    def wr(self, a, d):
        self.put("wr %x %x" % (a, d))

    def rd(self, a):
        self.put("rd %x" % a)

    def counter_words(self):
        c = self.c
        out = []
        for e in range(c.eps * c.epch):
            out += [0x8000 + 8 * e, 0x8000 + 8 * e + 4]
        return out

    def regs(self):
        for a in range(0, 0x40, 4):
            self.rd(a)
        for base in (0x40, 0x80, 0xC0):
            for e in range(self.c.eps):
                self.rd(base + 4 * e)

    def live_regs(self):
        for base in (0x40, 0x80, 0xC0):
            for e in range(self.c.eps):
                self.rd(base + 4 * e)

    def pass_counters(self, words=None, low_only=False):
        for a in (words or self.counter_words()):
            if low_only and a & 4:
                continue
            self.rd(a)

    def fill_until(self, m_end, fn):
        """call fn() repeatedly while cur < m_end"""
        while self.cur < m_end:
            fn()

    def pad(self, m):
        """STATUS reads up to (not including) edge m"""
        while self.cur < m:
            self.rd(0x24)

    def write(self, path, end):
        with open(path, "w") as f:
            f.write("# <MI edge> wr <addr> <data> | <MI edge> rd <addr> | <MI edge> end (hex)\n")
            if any(op.startswith("mireset") for op in self.ops.values()):
                f.write("# <MI edge m> mireset <n>: MI_RESET = 1 at MI edges m .. m+n-1 (n decimal)\n")
            for m in sorted(self.ops):
                f.write("%d %s\n" % (m, self.ops[m]))
            f.write("%d end\n" % max(end, max(self.ops) + 4))


# ---------------------------------------------------------------------------
# vectors
# ---------------------------------------------------------------------------

RP = 16   # reset lines at the start of a PCIe probe
RD = 12   # ... of the DMA probes


def lines_for(card, t_ns, dom):
    return int(math.ceil(t_ns / (card.pp if dom == "pcie" else card.dpp)))


def mi_edge(card, t_ns):
    return int(math.ceil(t_ns / card.mp))


def build(card, dur_ns, pres=None, dres=(), seed=1, burst_ticks=5, pcie_extra=None,
          burst_all=False):
    """pres: {e: [(a,b) lines]} extra PCIe resets; dres: DMA resets (lines)"""
    npl = lines_for(card, dur_ns, "pcie")
    ndl = lines_for(card, dur_ns, "dma")
    lines = []
    probes = {}
    for e in range(card.eps):
        rs = [(0, RP)] + list((pres or {}).get(e, []))
        p = Probe("pcie%d" % e, PcieGen(card, seed * 100 + e), card.dp, card.pg, npl, rs,
                  burst_ticks, settings=True, burst_all=burst_all)
        probes["pcie%d" % e] = p
        lines += p.lines((pcie_extra or {}).get(e, ()))
    for e in range(card.eps):
        rs = [(0, RD)] + list(dres)
        p = Probe("dma%d" % e, DmaGen(card, seed * 100 + 50 + e), card.dp, card.dg, ndl, rs,
                  burst_ticks, burst_all=burst_all)
        probes["dma%d" % e] = p
        lines += p.lines()
    return lines, probes


def t_of(card, dom, k):
    return k * (card.pp if dom == "pcie" else card.dpp)


def vec_edges(card):
    dur = (RP + 5.3 * card.dp) * card.pp
    lines, probes = build(card, dur, seed=11)
    mi = Mi(card)
    m_end = mi_edge(card, dur)
    mi.at(1).regs()
    mi.wr(0x28, 1)
    snaps = [0.32, 0.55, 0.81]
    snap_m = [mi_edge(card, dur * s) for s in snaps]
    for sm in snap_m:
        mi.fill_until(sm, lambda: mi.pass_counters())
        # the pass may run past sm: cut at sm is not needed, SNAPSHOT goes where the pass stops
        mi.wr(0x20, 1)
        for _ in range(6):
            mi.rd(0x24)
        mi.wr(0x28, 0)
        mi.pass_counters()
        mi.rd(0x24)
        mi.wr(0x28, 1)
    mi.fill_until(m_end, lambda: mi.pass_counters())
    mi.rd(0x24)
    mi.live_regs()
    return lines, mi, mi.cur + 4, probes


def vec_reset(card):
    dp = card.dp
    pp, dpp = card.pp, card.dpp
    dur = (RP + 9.6 * dp) * pp
    # PCIe resets, in PCIe lines
    pres = {0: []}
    a = RP + int(1.5 * dp)                  # mid-window, short
    pres[0].append((a, a + 37))
    # during a sweep: the next tick after that reset + 10
    t2 = a + 37 + dp - 1                    # tick after the restart
    pres[0].append((t2 + 11, t2 + 11 + 5))
    # both at once (PCIe and DMA at the same time): at 4.5 windows
    both_t = (RP + 4.5 * dp) * pp
    pb = int(both_t / pp)
    pres[0].append((pb, pb + 50))
    # long reset over several windows: 5.3 .. 7.6 windows
    la, lb = RP + int(5.3 * dp), RP + int(7.6 * dp)
    if card.eps > 1:
        pres[1] = [(la, lb)]
        # endpoint 1 also gets a mid-window reset later than endpoint 0's
        e1 = RP + int(2.4 * dp)
        pres[1].append((e1, e1 + 23))
    else:
        pres[0].append((la, lb))
    # never-ending reset of the last PCIe probe from 8.7 windows on
    ne = RP + int(8.7 * dp)
    # the traces run past the end of the MI script, so that this reset
    # never ends within the simulation
    tail_ns = (4 * card.entries + 2 * card.eps * card.epch + 400) * card.mp
    npl = lines_for(card, dur + tail_ns, "pcie")
    pres.setdefault(card.eps - 1, []).append((ne, npl + 10))
    # DMA resets, in DMA lines
    da = int((RP + 2.2 * dp) * pp / dpp)
    dres = [(da, da + 29)]
    db = int(both_t / dpp)
    dres.append((db, db + 40))
    lines, probes = build(card, dur + tail_ns, pres, dres, seed=22)
    # MI: STATUS, live registers and live counters all the time
    mi = Mi(card)
    m_end = mi_edge(card, dur)
    mi.at(1).regs()
    mi.wr(0x28, 1)
    # reset while deltas wait in the FIFO during a command: a SNAPSHOT
    # and a CLEAR just before a PCIe tick of endpoint 0, then a PCIe reset of
    # endpoint 0 after the sweep while the accumulator is still busy
    p0 = probes["pcie0"]
    tk = [t for t in p0.ticks if t > RP + 3 * dp][0]
    m_cmd = mi_edge(card, (tk - 3) * pp)
    # the command takes 2*ENTRIES (SNAPSHOT) + 2*ENTRIES (CLEAR) MI cycles
    busy_ns = 4 * card.entries * card.mp
    sweep = 8 * (card.pg + 1)
    r_start = tk + sweep + 4
    r_len = 7
    assert (r_start + r_len) * pp < m_cmd * card.mp + busy_ns * 0.8, "reset must fall while busy"
    extra = [(r_start, r_start + r_len)]
    pres[0].append(extra[0])
    lines, probes = build(card, dur + tail_ns, pres, dres, seed=22)

    def chunk():
        mi.rd(0x24)
        mi.live_regs()
        mi.pass_counters(low_only=True)
    mi.fill_until(m_cmd - 3 * (16 + card.eps * card.epch), chunk)
    mi.pad(m_cmd)
    mi.wr(0x20, 1)
    mi.wr(0x20, 2)
    mi.fill_until(m_end, chunk)
    mi.rd(0x24)
    mi.live_regs()
    mi.wr(0x28, 0)
    mi.wr(0x20, 1)
    mi.at(mi.cur + 2 * card.entries + 8)
    mi.pass_counters()
    return lines, mi, mi.cur + 4, probes


def vec_busy(card):
    dp = card.dp
    pp = card.pp
    dur = (RP + 8.5 * dp) * pp
    lines, probes = build(card, dur, seed=33, burst_all=True)
    mi = Mi(card)
    m_end = mi_edge(card, dur)
    words = mi.counter_words()
    mi.at(1).regs()
    e_busy = 2 * card.entries + 4

    def during(n, sel_toggle=False):
        # reads of counter words in every MI cycle for n cycles
        i = 0
        for _ in range(n):
            if sel_toggle and i % 8 == 7:
                mi.wr(0x28, (i // 8) % 2)
            else:
                mi.rd(0x24 if i % 16 == 0 else words[i % len(words)])
            i += 1

    def win(x):
        return mi_edge(card, (RP + x * dp) * pp)
    # 1: SNAPSHOT, reads of the snapshot copy in every cycle while busy
    mi.at(win(1.3))
    mi.wr(0x20, 1)
    during(e_busy + 10)
    # 2: CLEAR, reads of the snapshot copy, then CLEAR reading the live copy
    mi.at(win(1.7))
    mi.wr(0x20, 2)
    during(4 * card.entries + 10)
    mi.wr(0x28, 1)
    mi.pass_counters()
    mi.wr(0x20, 2)
    during(4 * card.entries + 10)
    # both copies alternately during a CLEAR
    mi.wr(0x20, 2)
    during(4 * card.entries + 10, sel_toggle=True)
    # 3: SNAPSHOT+CLEAR together
    mi.at(win(2.4))
    mi.wr(0x28, 1)
    mi.pass_counters()
    mi.wr(0x20, 3)
    during(4 * card.entries + 20)
    mi.wr(0x28, 0)
    mi.pass_counters()
    # 4: a command written while busy: SNAPSHOT during a CLEAR, CLEAR during a
    # SNAPSHOT, SNAPSHOT during SNAPSHOT
    mi.at(win(2.8))
    mi.wr(0x28, 1)
    mi.pass_counters()
    mi.wr(0x20, 2)
    during(20)
    mi.wr(0x20, 1)
    during(4 * card.entries + 20)
    mi.wr(0x28, 0)
    mi.pass_counters()
    mi.wr(0x20, 1)
    during(30)
    mi.wr(0x20, 2)
    during(4 * card.entries + 20)
    mi.wr(0x20, 1)
    during(9)
    mi.wr(0x20, 1)
    during(4 * card.entries + 20)
    # 5: starve the accumulator with back-to-back SNAPSHOTs over more than
    # two windows so that the probe FIFOs overflow (STATUS bit 1)
    mi.at(win(3.1))
    m_stop = win(7.2)
    while mi.cur < m_stop:
        m0 = mi.cur
        mi.wr(0x20, 1)
        for j in range(0, 2 * card.entries - 1, 8):
            mi.at(m0 + 1 + j)
            mi.rd(0x24)
        mi.at(m0 + 2 * card.entries)
    during(4 * card.entries + 20)
    # 6: clear flags (bit 2), reads of STATUS in every cycle
    mi.wr(0x20, 4)
    for _ in range(40):
        mi.rd(0x24)
    mi.pass_counters()
    # 7: clear the lowest values (bit 3): PCIE_TAGS / PCIE_STFIFO every cycle
    mi.at(win(7.7))
    mi.live_regs()
    mi.wr(0x20, 8)
    n = 0
    # until the end, and at least past the next status word of every endpoint
    m_stop = max(m_end, mi.cur + int(dp * pp / card.mp) + 40)
    while mi.cur < m_stop:
        mi.rd(0x80 + 4 * (n // 2 % card.eps) if n % 2 == 0 else 0xC0 + 4 * (n // 2 % card.eps))
        n += 1
    mi.rd(0x24)
    mi.regs()
    return lines, mi, mi.cur + 4, probes


def vec_overload(card):
    dp = card.dp
    pp = card.pp
    dur = (RP + 7.3 * dp) * pp
    lines, probes = build(card, dur, seed=44)
    mi = Mi(card)
    m_end = mi_edge(card, dur)
    mi.at(1).regs()
    mi.wr(0x28, 1)
    step = max(4, (m_end // 40))
    while mi.cur < m_end - step:
        mi.rd(0x24)
        mi.at(mi.cur + step)
    # STATUS and all counters at the end (live, then snapshot)
    mi.rd(0x24)
    mi.pass_counters()
    mi.wr(0x28, 0)
    mi.wr(0x20, 1)
    for _ in range(2 * card.entries + 4):
        mi.rd(0x24)
    mi.pass_counters()
    # clear flags and watch STATUS
    mi.wr(0x20, 4)
    for _ in range(60):
        mi.rd(0x24)
    return lines, mi, mi.cur + 4, probes


class FloorPcieGen(PcieGen):
    """random PCIe traffic in every line; the free storage-FIFO places rise
    with the line (floor 200 + k) and the free tags fall with it (floor
    2000 - k/24), each line at its floor or, often, above it: the lowest
    storage-FIFO value of a window names its first line, the lowest tag
    value its last lines"""

    def __init__(self, card, seed):
        PcieGen.__init__(self, card, seed)
        self.k = 0

    def burst(self, f):
        PcieGen.burst(self, f)
        r, k = self.rng, self.k
        self.k += 1
        stf = 200 + k
        if r.random() < 0.6:
            stf = min(65535, stf + r.choice((1, 2, 7, r.randrange(1, 30000))))
        tag = max(0, 2000 - k // 24)
        if r.random() < 0.6:
            tag = min(2047, tag + r.choice((1, 3, r.randrange(1, 2047))))
        f["tags"] = tag
        f["stfifo"] = stf


def vec_mireset(card):
    """MI_RESET asserted twice mid-run (mi.txt "mireset"): traffic on every
    channel in every line, domain resets only at the start"""
    dp = card.dp
    pp, dpp, mp = card.pp, card.dpp, card.mp
    DR = 4           # the last MI edge of a reset + DR: first probe edge after it + 2

    def k1(t_ns, per):
        # the first probe edge strictly after time t
        return int(math.floor(t_ns / per)) + 1

    def held_last(m_last, per):
        # the last probe edge that sees the synchronised MI reset
        return k1(m_last * mp, per) + 2
    # reset 1: between the 3rd and the 4th PCIe tick (3 status words sent, an
    # odd number), while the DMA probe writes the sweep of its 3rd tick
    dtick3 = RD + 3 * dp - 1
    m1 = mi_edge(card, (dtick3 + 15) * dpp)
    n1 = 1
    assert (RP + 3 * dp - 1) * pp < m1 * mp < (RP + 4 * dp - 1) * pp
    o_p = held_last(m1 + n1 - 1, pp)
    # reset 2: 60 lines after the 4th PCIe tick after reset 1 (4 more words,
    # 7 in all), while its deltas wait in the FIFO
    pt4 = o_p + 4 * dp
    m2 = mi_edge(card, (pt4 + 60) * pp)
    n2 = 5
    o_p2 = held_last(m2 + n2 - 1, pp)
    dur = (o_p2 + 3.2 * dp) * pp
    npl = lines_for(card, dur + 2000, "pcie")
    ndl = lines_for(card, dur + 2000, "dma")
    pg = Probe("pcie0", FloorPcieGen(card, 5501), dp, card.pg, npl, [(0, RP)],
               settings=True)
    dg = Probe("dma0", DmaGen(card, 5551), dp, card.dg, ndl, [(0, RD)])
    lines = pg.lines([(0, npl)]) + dg.lines([(0, ndl)])
    probes = {"pcie0": pg, "dma0": dg}
    mi = Mi(card)

    def chunk():
        mi.rd(0x24)
        mi.live_regs()
        mi.pass_counters()
    mi.at(1).regs()
    mi.wr(0x28, 1)
    # three drain periods of live reads, a SNAPSHOT and a pass over the
    # snapshot copy in the 3rd
    m_snap = mi_edge(card, (RP + 2.4 * dp) * pp)
    mi.fill_until(m_snap, chunk)
    mi.wr(0x20, 1)
    for _ in range(2 * card.entries + 4):
        mi.rd(0x24)
    mi.wr(0x28, 0)
    mi.pass_counters()
    mi.rd(0x28)
    mi.wr(0x28, 1)

    def around(m, n, m_next):
        mi.fill_until(m - 120, chunk)
        mi.pad(m - 1)
        mi.at(m)
        mi.put("mireset %d" % n)
        mi.cur = m + n
        regs = (0x40, 0x80, 0xC0, 0x24, 0x28)
        for i in range(200):
            mi.rd(regs[i % 5])
        # the counters as READ_SEL left them (the snapshot copy), then live
        mi.pass_counters()
        mi.rd(0x28)
        mi.wr(0x28, 1)
        mi.rd(0x28)
        # clear the lowest values (COMMAND bit 3) before the first PCIe tick
        # after the reset, so that its word's own lowest values show
        mi.wr(0x20, 8)
        mi.live_regs()
        mi.fill_until(m_next, chunk)
    around(m1, n1, m2 - 120)
    around(m2, n2, mi_edge(card, dur))
    mi.rd(0x24)
    mi.live_regs()
    return lines, mi, mi.cur + 4, probes


VECTORS = {
    "edges": vec_edges,
    "reset": vec_reset,
    "busy": vec_busy,
    "overload": vec_overload,
    "mireset": vec_mireset,
}

# vectors made by default: every kind on every set, mireset on set A only
DEFAULT_NAMES = [k + "-" + s for s in "ABC" for k in ("edges", "reset", "busy", "overload")] + \
    ["mireset-A"]

CLOCK_OVERRIDES = {
    "busy-A": {"pcie-clk-freq": 400000000},
    "overload-A": {"mi-clk-freq": 2000000},
    "overload-B": {"mi-clk-freq": 25000000},
    "overload-C": {"mi-clk-freq": 25000000},
}


def make(outdir, name):
    kind, s = name.rsplit("-", 1)
    card = Card(SETS[s], CLOCK_OVERRIDES.get(name, {}))
    lines, mi, end, probes = VECTORS[kind](card)
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    card.write(os.path.join(d, "card.txt"))
    with open(os.path.join(d, "stimulus.trace"), "w") as f:
        f.write("# %s: text trace (docs/replay.md) plus reset=1; line k of a probe is its edge k\n" % name)
        for ln in lines:
            f.write(ln + "\n")
    mi.write(os.path.join(d, "mi.txt"), end)
    return {p: v.ticks for p, v in probes.items()}


def main():
    out = sys.argv[1]
    names = sys.argv[2:] or DEFAULT_NAMES
    for n in names:
        ticks = make(out, n)
        print(n, {p: t[:3] for p, t in ticks.items()})


if __name__ == "__main__":
    main()
