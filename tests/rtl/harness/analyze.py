#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check a vector's events.txt against its expected.txt and measure timing.

usage: analyze.py VECTOR_DIR [...]

* replays the accumulator from the pop/acc events (a delta is added to the
  live copy at the ACC_WR edge = pop edge + 2, SNAP_WR copies, CLEAR zeroes)
  and compares every counter read in expected.txt;
* checks the timing rules listed in tests/rtl/README.md and prints counts of
  rule hits and misses.
"""

import collections
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402


def log2(n):
    return max(1, math.ceil(math.log2(n))) if n > 1 else 1


class Vec:
    def __init__(self, d):
        self.d = d
        self.card = run.read_card(os.path.join(d, "card.txt"))
        c = self.card
        self.pp, self.dp, self.mp = [run.period_ps(c[k]) for k in ("pcie-clk-freq", "dma-clk-freq", "mi-clk-freq")]
        self.eps = c["pcie-endpoints"]
        pr = max(c["pcie-rq-mfb-regions"], c["pcie-rc-mfb-regions"])
        dr = max(c["dma-up-mfb-regions"], c["dma-down-mfb-regions"])
        self.pch = 1 + 2 * (6 + pr) + 14
        self.dch = 1 + 2 * c["dma-ports"] * (6 + dr)
        self.epch = self.pch + self.dch
        self.entries = 1 << log2(self.eps * self.epch)
        self.groups = {}
        self.items = {}
        for e in range(self.eps):
            for s, ch in ((2 * e, self.pch), (2 * e + 1, self.dch)):
                g = -(-ch // 8)
                self.groups[s] = g
                self.items[s] = 1 << log2(2 * g * 8)
        self.cw = c["cnt-width"]
        self.ev = [ln.split() for ln in open(os.path.join(d, "events.txt")) if not ln.startswith("#")]
        self.reads = [ln.split() for ln in open(os.path.join(d, "expected.txt")) if not ln.startswith("#")]
        self.mi = [ln.split("#")[0].split() for ln in open(os.path.join(d, "mi.txt"))]
        self.mi = [x for x in self.mi if x]

    def period(self, s):
        return self.pp if s % 2 == 0 else self.dp

    def t(self, s, k):
        return run.T0_PS + k * self.period(s)

    def tm(self, m):
        return run.T0_PS + m * self.mp

    def first_mi_after(self, t):
        return (t - run.T0_PS) // self.mp + 1

    def first_probe_after(self, s, t):
        return (t - run.T0_PS) // self.period(s) + 1

    def base(self, s):
        return (s // 2) * self.epch + (self.pch if s % 2 else 0)


def check(vdir, same_edge_visible=False):
    v = Vec(vdir)
    stats = collections.Counter()
    notes = []
    E = v.entries
    mask = (1 << v.cw) - 1
    # ---------------- accumulator replay -----------------------------------
    writes = collections.defaultdict(list)   # MI edge -> [(addr, value or ('copy',e))]
    acc_ev = [x for x in v.ev if x[0] in ("pop", "acc")]
    # MI edges that sample a scripted MI_RESET (mi.txt "mireset")
    mi_held = set()
    for x in v.mi:
        if x[1] == "mireset":
            mi_held.update(range(int(x[0]), int(x[0]) + int(x[2])))
    live_adds = []
    for x in v.ev:
        if x[0] == "pop":
            s, m, idx, d = map(int, x[1:])
            if m in mi_held or m + 1 in mi_held:
                # the MI reset puts the FSM in IDLE before ACC_WR: dropped
                stats["pop dropped by an MI reset"] += 1
                continue
            live_adds.append((m + 2, v.base(s) + idx, d))
    acc_list = [(int(x[1]), x[2]) for x in v.ev if x[0] == "acc"]
    snap_events = []   # (edge of write, entry)
    clears = []
    for j, (m, st) in enumerate(acc_list):
        if st == "SNAP_RD":
            m_end = acc_list[j + 1][0] if j + 1 < len(acc_list) else m + 2 * v.entries
            for i in range((m_end - m) // 2):
                snap_events.append((m + 2 * i + 1, i))
            stats["snapshot sweep of %d cycles" % (m_end - m)] += 1
        if st == "CLEAR":
            clears.append(m)
            stats["clear sweep"] += 1
    clear_events = []
    for c0 in clears:
        for a in range(2 * E):
            clear_events.append((c0 + a, a))
    ops = []
    for m, e, d in live_adds:
        ops.append((m, 1, ("add", e, d)))
    for m, e in snap_events:
        ops.append((m, 1, ("snap", e)))
    for m, a in clear_events:
        ops.append((m, 1, ("clr", a)))
    # read_live
    sel_changes = []
    for x in v.mi:
        if x[1] == "wr" and int(x[2], 16) == 0x28:
            sel_changes.append((int(x[0]) + 1, int(x[3], 16) & 1))
        elif x[1] == "mireset":
            # MI_RESET clears READ_SEL (the counter memory keeps its contents)
            sel_changes.append((int(x[0]) + 1, 0))
    for r in v.reads:
        m, a, d = int(r[0]), int(r[1], 16), int(r[2], 16)
        if a & 0x8000:
            ops.append((m, 2 if same_edge_visible else 0, ("read", a, d)))
    ops.sort(key=lambda o: (o[0], o[1]))
    mem = [0] * (2 * E)
    live_sel = 0
    si = 0
    sel_changes.sort()
    bad = 0
    for m, _, op in ops:
        while si < len(sel_changes) and sel_changes[si][0] <= m:
            live_sel = sel_changes[si][1]
            si += 1
        if op[0] == "add":
            mem[op[1]] = (mem[op[1]] + op[2]) & mask
        elif op[0] == "snap":
            mem[E + op[1]] = mem[op[1]]
        elif op[0] == "clr":
            mem[op[1]] = 0
        else:
            a, d = op[1], op[2]
            e = ((a >> 3) & (E - 1)) + (0 if live_sel else E)
            want = mem[e] & 0xffffffff if not a & 4 else mem[e] >> 32
            if want == d:
                stats["read ok"] += 1
            else:
                stats["read MISMATCH"] += 1
                if bad < 5:
                    notes.append("read at %d of %x: model %x rtl %x" % (m, a, want, d))
                bad += 1

    # ---------------- probe-side timing ------------------------------------
    by_s = collections.defaultdict(list)
    for x in v.ev:
        if x[0] in ("rst", "tick", "wr", "full", "rsync", "flagclr"):
            by_s[int(x[1])].append(x)
    for s, lst in by_s.items():
        R = None
        tick = None
        for x in lst:
            k = int(x[2])
            if x[0] == "rst":
                if x[3] == "0":
                    R = k
                tick = None
            elif x[0] == "tick":
                if tick is None:
                    stats["stream %d: first tick after release R at R+%d" % (s, k - R)] += 1
                else:
                    stats["tick spacing %d" % (k - tick)] += 1
                tick = k
            elif x[0] == "wr" and tick is not None:
                idx = int(x[3])
                g, sl = idx // 8, idx % 8
                want = tick + 3 + sl * (v.groups[s] + 1) + g
                stats["wr at tick+3+slot*(G+1)+group " + ("ok" if k == want else "BAD")] += 1
    # write -> wsync -> vld; rptr -> rsync -> full
    for s in by_s:
        nwr = 0
        wq = []
        ws_ev = [(int(x[2]), int(x[3])) for x in v.ev if x[0] == "wsync" and int(x[1]) == s]
        rp_ev = [(int(x[2]), int(x[3])) for x in v.ev if x[0] == "rptr" and int(x[1]) == s]
        rs_ev = [(int(x[2]), int(x[3])) for x in by_s[s] if x[0] == "rsync"]
        full_ev = [(int(x[2]), int(x[3])) for x in by_s[s] if x[0] == "full"]
        mod = 2 * v.items[s]
        # writes since the last reset
        cnt = 0
        wlist = []
        for x in by_s[s]:
            if x[0] == "rst" and x[3] == "1":
                cnt = 0
            if x[0] == "wr" and x[5] == "0":
                cnt += 1
                wlist.append((int(x[2]), cnt % mod))
        wsd = {}
        for m, val in ws_ev:
            wsd.setdefault(val, []).append(m)
        for k, c in wlist:
            m1 = v.first_mi_after(v.t(s, k + 1))
            cands = [m for m, val in ws_ev if m >= m1 and (val - c) % mod < v.items[s]]
            if cands and cands[0] == m1 + 4:
                stats["write k -> wsync at m1+4, m1 = first MI edge after edge k+1: ok"] += 1
            elif cands:
                stats["write k -> wsync at m1+4: other (%d)" % (cands[0] - m1)] += 1
        rsd = {}
        for k, val in rs_ev:
            rsd.setdefault(val, []).append(k)
        for m, val in rp_ev:
            if val == 0:
                continue
            k1 = v.first_probe_after(s, v.tm(m))
            cands = [k for k, x in rs_ev if k >= k1 and (x - val) % mod < v.items[s]]
            if cands and cands[0] == k1 + 4:
                stats["rptr seen at m -> rsync seen at k1+4, k1 = first probe edge after MI edge m: ok"] += 1
            elif cands:
                stats["rptr -> rsync: other (%d)" % (cands[0] - k1)] += 1
        rsk = set(k for k, _ in rs_ev)
        for k, val in full_ev:
            if val == 0 and k > 0:
                stats["full->0 seen 1 edge after an rsync change: " + ("ok" if (k - 1) in rsk else "no")] += 1
    # vld -> 1 two MI edges after a wsync change
    wsm = set((int(x[1]), int(x[2])) for x in v.ev if x[0] == "wsync")
    for x in v.ev:
        if x[0] == "vld" and x[3] == "1":
            s, m = int(x[1]), int(x[2])
            stats["vld->1 seen 2 MI edges after a wsync change: " + ("ok" if (s, m - 2) in wsm else "no")] += 1
    # pop timing: IDLE at m-1 (or ACC_WR at m-1) sees VLD
    # aux: pcie tick at k -> aux at m1+4
    auxm = collections.defaultdict(set)
    for x in v.ev:
        if x[0] == "aux":
            auxm[int(x[1])].add(int(x[2]))
    for x in v.ev:
        if x[0] == "tick" and int(x[1]) % 2 == 0:
            s, k = int(x[1]), int(x[2])
            m1 = v.first_mi_after(v.t(s, k + 1))
            stats["pcie tick k -> aux_vld at m1+4, m1 = first MI edge after edge k+1: " + ("ok" if (m1 + 4) in auxm[s // 2] else "no")] += 1
    # commands
    acc_list = [(int(x[1]), x[2]) for x in v.ev if x[0] == "acc"]
    busy_ev = [(int(x[1]), x[2]) for x in v.ev if x[0] == "busy"]
    ovf_ev = [(int(x[1]), int(x[2]), x[3]) for x in v.ev if x[0] == "ovf"]
    for x in v.mi:
        if x[1] == "wr" and int(x[2], 16) == 0x20:
            w, d = int(x[0]), int(x[3], 16)
            if d & 3:
                b = [m for m, val in busy_ev if m > w]
                prevb = [val for m, val in busy_ev if m <= w + 1]
                if b and prevb and prevb[-1] == "0":
                    stats["COMMAND %d at w: BUSY reads 1 from w+%d" % (d & 3, b[0] - w)] += 1
                st = [(m, s_) for m, s_ in acc_list if m > w and s_ in ("SNAP_RD", "CLEAR")]
                if st:
                    stats["COMMAND %d at w: %s starts at w+%d" % (d & 3, st[0][1], st[0][0] - w)] += 1
            if d & 4:
                seen = set()
                for s, m, val in ovf_ev:
                    if m > w and s not in seen:
                        seen.add(s)
                        if val == "0":
                            stats["clear flags at w: stream %d TX_FIFO_OVF 0 at w+%d" % (s, m - w)] += 1
    for x in v.ev:
        if x[0] == "flagclr":
            pass
    return stats, notes


def main():
    for d in sys.argv[1:]:
        st, notes = check(d)
        print("==", d)
        for k in sorted(st):
            print("   %6d  %s" % (st[k], k))
        for n in notes:
            print("   ", n)


if __name__ == "__main__":
    main()
