#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Run one RTL vector through GHDL.

A vector directory holds card.txt (generics and clocks as the QEMU device's
property names), stimulus.trace (the project's text-trace format plus the
field reset=1) and mi.txt (the MI script). This script compiles the RTL (once
per work directory), converts the inputs for tb_telemetry_mi.vhd, runs the
simulation and writes expected.txt (the RTL's read results) and events.txt
(the internal event log) into the vector directory.

The RTL is not part of this repository; see README.md next to this file.
"""

import argparse
import bisect
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# compile order of the sources (file names inside --src)
SOURCES = [
    "math_pack.vhd", "type_pack.vhd", "reset.vhd", "open_loop.vhd",
    "open_loop_smd.vhd", "sync_pgen.vhd", "bus_handshake_fsm.vhd",
    "bus_handshake.vhd", "dp_bram_behav.vhd", "sdp_bram_behav.vhd",
    "altdpram_wrap_ent.vhd", "altdpram_wrap_empty.vhd", "gen_lutram.vhd",
    "asfifox.vhd", "pcie_telemetry_probe.vhd", "pcie_telemetry_acc.vhd",
    "pcie_telemetry_mi.vhd",
]

CARD_DEFAULTS = {
    "pcie-endpoints": 1, "dma-ports": 1,
    "pcie-rq-mfb-regions": 2, "pcie-rc-mfb-regions": 2,
    "dma-up-mfb-regions": 2, "dma-down-mfb-regions": 2,
    "pcie-rq-mfb-region-bytes": 32, "pcie-rc-mfb-region-bytes": 32,
    "dma-up-mfb-region-bytes": 32, "dma-down-mfb-region-bytes": 32,
    "mfb-item-bytes": 4, "pcie-eof-pos-width": 3, "dma-eof-pos-width": 3,
    "cnt-width": 48, "drain-period": 4096, "tag-capacity": 256,
    "stfifo-capacity": 1024,
    "pcie-clk-freq": 250000000, "dma-clk-freq": 200000000,
    "mi-clk-freq": 100000000,
}

# card.txt property -> tb generic
GENERICS = {
    "pcie-endpoints": "PCIE_ENDPOINTS", "dma-ports": "DMA_PORTS",
    "pcie-rq-mfb-regions": "PCIE_RQ_MFB_REGIONS",
    "pcie-rc-mfb-regions": "PCIE_RC_MFB_REGIONS",
    "dma-up-mfb-regions": "DMA_UP_MFB_REGIONS",
    "dma-down-mfb-regions": "DMA_DOWN_MFB_REGIONS",
    "pcie-rq-mfb-region-bytes": "PCIE_RQ_MFB_REGION_BYTES",
    "pcie-rc-mfb-region-bytes": "PCIE_RC_MFB_REGION_BYTES",
    "dma-up-mfb-region-bytes": "DMA_UP_MFB_REGION_BYTES",
    "dma-down-mfb-region-bytes": "DMA_DOWN_MFB_REGION_BYTES",
    "mfb-item-bytes": "MFB_ITEM_BYTES",
    "pcie-eof-pos-width": "PCIE_EOF_POS_WIDTH",
    "dma-eof-pos-width": "DMA_EOF_POS_WIDTH",
    "cnt-width": "CNT_WIDTH", "drain-period": "DRAIN_PERIOD",
    "tag-capacity": "TAG_CAPACITY", "stfifo-capacity": "STFIFO_CAPACITY",
}

T0_PS = 1000000          # first probe/MI edge (edge 0) of every clock
MI_RESET_END_PS = 900000  # MI_RESET is active from 0 to here


def period_ps(freq):
    p = 10**12 // freq
    if p * freq != 10**12:
        sys.exit("clock %d Hz has no whole period in ps" % freq)
    return p


def read_card(path):
    card = dict(CARD_DEFAULTS)
    for raw in open(path):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        k, v = [x.strip() for x in line.split("=", 1)]
        if k == "device":
            continue
        if k not in card:
            sys.exit("%s: unknown property %s" % (path, k))
        card[k] = int(v, 0)
    return card


# ---------------------------------------------------------------------------
# text trace -> per-probe stimulus rows
# ---------------------------------------------------------------------------

class Geometry:
    def __init__(self, card):
        self.eps = card["pcie-endpoints"]
        self.ports = card["dma-ports"]
        self.rq = card["pcie-rq-mfb-regions"]
        self.rc = card["pcie-rc-mfb-regions"]
        self.up = card["dma-up-mfb-regions"]
        self.down = card["dma-down-mfb-regions"]
        self.pr = max(self.rq, self.rc)
        self.dr = max(self.up, self.down)
        self.pw = card["pcie-eof-pos-width"]
        self.dw = card["dma-eof-pos-width"]
        self.tag_idle = min(card["tag-capacity"], 2047)
        self.stf_idle = card["stfifo-capacity"]


def num(v):
    return int(v, 0)


def bits(value, width):
    return format(value, "0%db" % width) if width else ""


def parse_trace(path, g):
    """returns {('pcie'|'dma', e): [(n, row_string), ...]}"""
    out = {}
    for e in range(g.eps):
        out[("pcie", e)] = []
        out[("dma", e)] = []
    for lno, raw in enumerate(open(path), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        toks = line.split()
        m = re.fullmatch(r"(pcie|dma)(\d*)", toks[0].lower())
        if not m:
            sys.exit("%s:%d: unknown probe %s" % (path, lno, toks[0]))
        kind, e = m.group(1), int(m.group(2) or 0)
        if e >= g.eps:
            continue
        f = {}
        for t in toks[1:]:
            k, v = t.split("=", 1)
            f[k.lower()] = num(v)
        n = f.pop("cycles", 1)
        rst = f.pop("reset", 0)
        if kind == "pcie":
            sof = eof = pos = src = dst = 0
            for b, name, regs in ((0, "rq", g.rq), (1, "rc", g.rc)):
                if f.get(name + ".sof", 0) >> regs or f.get(name + ".eof", 0) >> regs:
                    sys.exit("%s:%d: mask too wide" % (path, lno))
                sof |= f.pop(name + ".sof", 0) << (b * g.pr)
                eof |= f.pop(name + ".eof", 0) << (b * g.pr)
                src |= f.pop(name + ".src", 0) << b
                dst |= f.pop(name + ".dst", 0) << b
                for r in range(regs):
                    p = f.pop("%s.pos%d" % (name, r), 0)
                    assert p < (1 << g.pw)
                    pos |= p << ((b * g.pr + r) * g.pw)
            brake = f.pop("brake", 0)
            tags = f.pop("tags", g.tag_idle)
            stf = f.pop("stfifo", g.stf_idle)
            mps = f.pop("mps", 0)
            mrrs = f.pop("mrrs", 0)
            ext = f.pop("ext_tag", 0)
            t10 = f.pop("tag_10b", 0)
            rcb = f.pop("rcb", 0)
            link = f.pop("link", 1)
            if f:
                sys.exit("%s:%d: unknown fields %s" % (path, lno, list(f)))
            row = " ".join([
                str(rst), bits(sof, 2 * g.pr), bits(eof, 2 * g.pr),
                bits(pos, 2 * g.pr * g.pw), bits(src, 2), bits(dst, 2),
                bits(brake, 6), str(tags), str(stf), str(mps), str(mrrs),
                str(ext), str(t10), str(rcb), str(link)])
        else:
            nb = 2 * g.ports
            sof = eof = pos = src = dst = vld = msrc = mdst = 0
            for p in range(g.ports):
                for b, name, regs in ((2 * p, "up", g.up), (2 * p + 1, "down", g.down)):
                    names = [name + str(p)] + ([name] if p == 0 else [])
                    for nm in names:
                        for fld in (".sof", ".eof", ".vld"):
                            if f.get(nm + fld, 0) >> regs:
                                sys.exit("%s:%d: mask too wide" % (path, lno))
                        sof |= f.pop(nm + ".sof", 0) << (b * g.dr)
                        eof |= f.pop(nm + ".eof", 0) << (b * g.dr)
                        vld |= f.pop(nm + ".vld", 0) << (b * g.dr)
                        src |= f.pop(nm + ".src", 0) << b
                        dst |= f.pop(nm + ".dst", 0) << b
                        msrc |= f.pop(nm + ".msrc", 0) << b
                        mdst |= f.pop(nm + ".mdst", 0) << b
                        for r in range(regs):
                            pv = f.pop("%s.pos%d" % (nm, r), 0)
                            assert pv < (1 << g.dw)
                            pos |= pv << ((b * g.dr + r) * g.dw)
            if f:
                sys.exit("%s:%d: unknown fields %s" % (path, lno, list(f)))
            row = " ".join([
                str(rst), bits(sof, nb * g.dr), bits(eof, nb * g.dr),
                bits(pos, nb * g.dr * g.dw), bits(src, nb), bits(dst, nb),
                bits(vld, nb * g.dr), bits(msrc, nb), bits(mdst, nb)])
        lst = out[(kind, e)]
        if lst and lst[-1][1] == row:
            lst[-1] = (lst[-1][0] + n, row)
        else:
            lst.append((n, row))
    return out


def check_dma_resets(probes, g):
    def resets(rows):
        r = []
        for n, row in rows:
            r.append((n, row.split()[0]))
        return r

    def expand(rr):
        out = []
        for n, v in rr:
            out.extend([v] * n)
        return out
    ref = expand(resets(probes[("dma", 0)]))
    for e in range(1, g.eps):
        other = expand(resets(probes[("dma", e)]))
        ln = min(len(ref), len(other))
        if ref[:ln] != other[:ln] or "1" in other[ln:]:
            print("warning: dma%d's reset differs from dma0's; DMA_RESET follows dma0" % e)


# ---------------------------------------------------------------------------
# VCD -> events
# ---------------------------------------------------------------------------

def wave_paths():
    p = "/tb/dut/ep_g/%s/%s"
    sigs = []
    for probe in ("pcie_probe_i", "dma_probe_i"):
        for s in ("drain_tick_sig", "fifo_wr_en", "fifo_wr_data", "fifo_wr_full",
                  "probe_reset", "flag_clr", "fifo_i/wr_addr_synced_reg",
                  "fifo_i/rd_addr_synced_reg", "fifo_i/rd_addr_cnt"):
            sigs.append(p % (probe, s))
    for s in ("pcie_index", "pcie_delta", "dma_index", "dma_delta"):
        sigs.append("/tb/dut/ep_g/" + s)
    for s in ("probe_rd", "probe_vld", "probe_fifo_ovf", "probe_overrun",
              "pcie_aux_vld", "acc_busy", "acc_i/pa_re", "acc_i/pa_we"):
        sigs.append("/tb/dut/" + s)
    sigs.append("/tb/mi_reset")
    return sigs


def parse_vcd(path):
    """returns {name: [(time_fs, value_str), ...]} with hierarchical names
    like tb.dut.ep_g(0).pcie_probe_i.fifo_wr_en"""
    ids = {}
    scope = []
    changes = {}
    t = 0
    with open(path) as f:
        for line in f:
            if line.startswith("$scope"):
                scope.append(line.split()[2])
            elif line.startswith("$upscope"):
                scope.pop()
            elif line.startswith("$var"):
                tok = line.split()
                name = ".".join(scope + [re.sub(r"\[.*\]$", "", tok[4])])
                ids.setdefault(tok[3], []).append(name)
                changes[name] = []
            elif line.startswith("$enddefinitions"):
                break
        for line in f:
            c = line[0]
            if c == "#":
                t = int(line[1:])
            elif c == "b":
                v, i = line[1:].split()
                for n in ids[i]:
                    changes[n].append((t, v))
            elif c in "01UXZWLH-":
                i = line[1:].strip()
                for n in ids[i]:
                    changes[n].append((t, c))
    return changes


def sample(ch, t0, p, k0, k1):
    """value seen by edges k0..k1 (edge time t0+k*p in fs): the last change
    strictly before the edge"""
    out = []
    j = 0
    cur = None
    n = len(ch)
    for k in range(k0, k1 + 1):
        te = t0 + k * p
        while j < n and ch[j][0] < te:
            cur = ch[j][1]
            j += 1
        out.append(cur)
    return out


def to_int(v):
    if v is None or re.search(r"[^01]", v):
        return None
    return int(v, 2)


def make_events(vcd, card, clocks, t_end_fs, t0s):
    g = Geometry(card)
    ch = parse_vcd(vcd)
    ev = []   # (time_fs, order, text)
    pp, dp, mp = [c * 1000 for c in clocks]
    pt0, dt0, mt0 = [t * 1000 for t in t0s]

    def probe_events(s, pre, t_p, T0):
        k1 = (t_end_fs - T0) // t_p
        get = lambda n: sample(ch[pre + n], T0, t_p, 0, k1)
        tick = get("drain_tick_sig")
        wen = get("fifo_wr_en")
        wdat = get("fifo_wr_data")
        full = get("fifo_wr_full")
        rst = get("probe_reset")
        fclr = get("flag_clr")
        rs = get("fifo_i.rd_addr_synced_reg")
        iw = idx_w[s]
        last = {}
        for i in range(k1 + 1):
            te = T0 + i * t_p
            if rst[i] != last.get("rst"):
                ev.append((te, 0, "rst %d %d %s" % (s, i, rst[i])))
                last["rst"] = rst[i]
            if tick[i] == "1":
                ev.append((te, 1, "tick %d %d" % (s, i)))
            if wen[i] == "1":
                d = wdat[i]
                ev.append((te, 2, "wr %d %d %d %d %s" % (s, i, int(d[:iw], 2), int(d[iw:], 2), full[i])))
            if full[i] != last.get("full"):
                ev.append((te, 3, "full %d %d %s" % (s, i, full[i])))
                last["full"] = full[i]
            if rst[i] == "0" and rs[i] != last.get("rs"):
                ev.append((te, 4, "rsync %d %d %d" % (s, i, to_int(rs[i]))))
                last["rs"] = rs[i]
            if fclr[i] == "1":
                ev.append((te, 5, "flagclr %d %d" % (s, i)))

    idx_w = {}
    for e in range(g.eps):
        for j, (probe, nm, t_p, T0) in enumerate((("pcie_probe_i", "pcie", pp, pt0), ("dma_probe_i", "dma", dp, dt0))):
            s = 2 * e + j
            base = "tb.dut.ep_g(%d)." % e
            idx_w[s] = len(ch[base + nm + "_index"][0][1])
            probe_events(s, base + probe + ".", t_p, T0)

    # MI domain
    T0 = mt0
    k0 = 0
    k1 = (t_end_fs - T0) // mp
    get = lambda n: sample(ch[n], T0, mp, k0, k1)
    rd = get("tb.dut.probe_rd")
    vld = get("tb.dut.probe_vld")
    ovf = get("tb.dut.probe_fifo_ovf")
    ovr = get("tb.dut.probe_overrun")
    aux = get("tb.dut.pcie_aux_vld")
    busy = get("tb.dut.acc_busy")
    mrst = get("tb.mi_reset")
    pre = get("tb.dut.acc_i.pa_re")
    pwe = get("tb.dut.acc_i.pa_we")
    idx = {}
    dlt = {}
    ws = {}
    rp = {}
    for e in range(g.eps):
        base = "tb.dut.ep_g(%d)." % e
        idx[2 * e] = get(base + "pcie_index")
        dlt[2 * e] = get(base + "pcie_delta")
        idx[2 * e + 1] = get(base + "dma_index")
        dlt[2 * e + 1] = get(base + "dma_delta")
        ws[2 * e] = get(base + "pcie_probe_i.fifo_i.wr_addr_synced_reg")
        ws[2 * e + 1] = get(base + "dma_probe_i.fifo_i.wr_addr_synced_reg")
        rp[2 * e] = get(base + "pcie_probe_i.fifo_i.rd_addr_cnt")
        rp[2 * e + 1] = get(base + "dma_probe_i.fifo_i.rd_addr_cnt")
    ns = 2 * g.eps
    st = prev = "IDLE"
    last = {}
    last["mireset"] = "0"   # MI_RESET is 0 from edge 0 on unless the script asserts it
    for i in range(k1 - k0 + 1):
        m = k0 + i
        te = T0 + m * mp
        if mrst[i] != last["mireset"]:
            ev.append((te, 9, "mireset %d %s" % (m, mrst[i])))
            last["mireset"] = mrst[i]
        r = rd[i]
        # vectors are MSB first: stream s is character ns-1-s
        pops = [s for s in range(ns) if r and r[ns - 1 - s] == "1"]
        for s in range(ns):
            for key, arr in (("vld", vld), ("ovf", ovf), ("overrun", ovr)):
                v = arr[i][ns - 1 - s] if arr[i] else None
                if v != last.get((key, s)):
                    ev.append((te, 10, "%s %d %d %s" % (key, s, m, v)))
                    last[(key, s)] = v
            w = to_int(ws[s][i])
            if w != last.get(("ws", s)):
                ev.append((te, 11, "wsync %d %d %s" % (s, m, w)))
                last[("ws", s)] = w
            w = to_int(rp[s][i])
            if w != last.get(("rp", s)):
                ev.append((te, 11, "rptr %d %d %s" % (s, m, w)))
                last[("rp", s)] = w
        for s in pops:
            ev.append((te, 12, "pop %d %d %d %d" % (s, m, to_int(idx[s][i]), to_int(dlt[s][i]))))
        if aux[i]:
            for e in range(g.eps):
                if aux[i][g.eps - 1 - e] == "1":
                    ev.append((te, 13, "aux %d %d" % (e, m)))
        if i > 0 and mrst[i - 1] == "1":
            # MI_RESET seen at the previous edge put the FSM in IDLE (a delta
            # in ACC_RD or ACC_ADD then is dropped)
            st = "IDLE"
        elif pops:
            st = "ACC_RD"
        elif pre[i] == "1":
            st = "SNAP_RD"
        elif pwe[i] == "1":
            st = {"ACC_ADD": "ACC_WR", "SNAP_RD": "SNAP_WR"}.get(prev, "CLEAR")
        elif prev == "ACC_RD":
            st = "ACC_ADD"
        else:
            st = "IDLE"
        # the alternation SNAP_RD/SNAP_WR inside a snapshot sweep is not
        # logged: SNAP_RD at m0 reads live entry i at m0+2i, writes it at m0+2i+1
        if st != prev and not (prev, st) in (("SNAP_RD", "SNAP_WR"), ("SNAP_WR", "SNAP_RD")):
            ev.append((te, 14, "acc %d %s" % (m, st)))
        prev = st
        if busy[i] != last.get("busy"):
            ev.append((te, 15, "busy %d %s" % (m, busy[i])))
            last["busy"] = busy[i]
    ev.sort(key=lambda x: (x[0], x[1]))
    return [x[2] for x in ev]


# ---------------------------------------------------------------------------

def compile_rtl(src, work):
    os.makedirs(work, exist_ok=True)
    stamp = os.path.join(work, "compiled")
    if os.path.exists(stamp):
        return
    xpm = os.path.join(work, "xpm")
    os.makedirs(xpm, exist_ok=True)
    stub = os.path.join(work, "xpm_stub.vhd")
    with open(stub, "w") as f:
        # asfifox.vhd names library XPM inside translate_off; an empty
        # package lets GHDL analyse it (the XPM branch is not elaborated)
        f.write("package vcomponents is\nend package;\n")
    subprocess.check_call(["ghdl", "-a", "--std=08", "--work=xpm", "--workdir=" + xpm, stub])
    for s in SOURCES + [os.path.join(HERE, "tb_telemetry_mi.vhd")]:
        path = s if os.path.isabs(s) else os.path.join(src, s)
        subprocess.check_call(["ghdl", "-a", "--std=08", "-frelaxed", "-Wno-hide",
                               "-Wno-shared", "-Wno-binding", "--workdir=" + work,
                               "-P" + xpm, path])
    subprocess.check_call(["ghdl", "-e", "--std=08", "-frelaxed", "-Wno-binding",
                           "--workdir=" + work, "-P" + xpm, "tb"])
    open(stamp, "w").close()


def run_vector(vdir, src, work, keep=False, t0s=None, mi_reset_end=MI_RESET_END_PS):
    src, work = os.path.abspath(src), os.path.abspath(work)
    card = read_card(os.path.join(vdir, "card.txt"))
    g = Geometry(card)
    clocks = [period_ps(card[k]) for k in ("pcie-clk-freq", "dma-clk-freq", "mi-clk-freq")]
    compile_rtl(src, work)
    rdir = os.path.join(work, "run-" + os.path.basename(os.path.abspath(vdir)))
    shutil.rmtree(rdir, ignore_errors=True)
    os.makedirs(rdir)
    probes = parse_trace(os.path.join(vdir, "stimulus.trace"), g)
    check_dma_resets(probes, g)
    for (kind, e), rows in probes.items():
        with open(os.path.join(rdir, "%s%d.stim" % (kind, e)), "w") as f:
            for n, row in rows:
                f.write("%d %s\n" % (n, row))
    last_m = 0
    held = -1          # the last MI edge of the latest scripted MI_RESET
    last_rd = -10
    with open(os.path.join(vdir, "mi.txt")) as fi, open(os.path.join(rdir, "mi.stim"), "w") as fo:
        for raw in fi:
            line = raw.split("#", 1)[0].split()
            if not line:
                continue
            m = int(line[0])
            if m <= last_m:
                sys.exit("mi.txt: edges must increase (%d)" % m)
            if m <= held:
                sys.exit("mi.txt: edge %d falls inside an MI reset" % m)
            last_m = m
            if line[1] == "wr":
                fo.write("%d wr %08X %08X\n" % (m, int(line[2], 16), int(line[3], 16)))
            elif line[1] == "rd":
                fo.write("%d rd %08X\n" % (m, int(line[2], 16)))
                last_rd = m
            elif line[1] == "mireset":
                n = int(line[2])
                if n < 1:
                    sys.exit("mi.txt: mireset needs n >= 1")
                # a read sampled at m-1 would lose its DRDY (the MI read
                # pipeline is reset at m)
                if last_rd >= m - 1:
                    sys.exit("mi.txt: the read at %d is cut by the MI reset at %d" % (last_rd, m))
                fo.write("%d rs %d\n" % (m, n))
                held = m + n - 1
                last_m = held
            elif line[1] == "end":
                fo.write("%d en\n" % m)
            else:
                sys.exit("mi.txt: bad line %s" % raw)
    t0 = t0s or (T0_PS, T0_PS, T0_PS)
    gens = ["-g%s=%d" % (GENERICS[k], card[k]) for k in GENERICS]
    gens += ["-gPCIE_PERIOD_PS=%d" % clocks[0], "-gDMA_PERIOD_PS=%d" % clocks[1],
             "-gMI_PERIOD_PS=%d" % clocks[2], "-gPCIE_T0_PS=%d" % t0[0],
             "-gDMA_T0_PS=%d" % t0[1], "-gMI_T0_PS=%d" % t0[2],
             "-gMI_RESET_END_PS=%d" % mi_reset_end, "-gDIR=" + rdir]
    opt = os.path.join(rdir, "wave.opt")
    with open(opt, "w") as f:
        f.write("$ version 1.1\n")
        for p in wave_paths():
            f.write(p + "\n")
    vcd = os.path.join(rdir, "wave.vcd")
    cmd = ["ghdl", "-r", "--std=08", "-frelaxed", "--workdir=" + work,
           "-P" + os.path.join(work, "xpm"), "tb"] + gens + [
           "--ieee-asserts=disable", "--read-wave-opt=" + opt, "--vcd=" + vcd]
    res = subprocess.run(cmd, cwd=rdir, capture_output=True, text=True)
    if res.returncode != 0 or "simulation done" not in res.stderr + res.stdout:
        sys.stderr.write(res.stdout + res.stderr)
        sys.exit("simulation failed for %s" % vdir)
    reads = open(os.path.join(rdir, "reads.txt")).read().splitlines()
    with open(os.path.join(vdir, "expected.txt"), "w") as f:
        f.write("# <MI edge m that sampled the read> <address> <data>, from the RTL\n")
        for r in reads:
            m, a, d = r.split()
            f.write("%s %s %s\n" % (m, a.lower(), d.lower()))
    t_end_fs = os.path.getsize(vcd) and last_time(vcd)
    events = make_events(vcd, card, clocks, t_end_fs, t0)
    with open(os.path.join(vdir, "events.txt"), "w") as f:
        f.write("# events of the RTL run, in time order; see ../README.md for the format\n")
        for e in events:
            f.write(e + "\n")
    if not keep:
        os.remove(vcd)
    return reads, events


def last_time(vcd):
    t = 0
    with open(vcd, "rb") as f:
        f.seek(max(0, os.path.getsize(vcd) - 65536))
        for line in f.read().decode(errors="replace").splitlines():
            if line.startswith("#"):
                t = int(line[1:])
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("vectors", nargs="+", help="vector directories")
    ap.add_argument("--src", required=True, help="directory with the RTL sources (see README.md)")
    ap.add_argument("--work", default="/tmp/rtl-sim/build", help="GHDL work directory")
    ap.add_argument("--keep-vcd", action="store_true")
    a = ap.parse_args()
    for v in a.vectors:
        reads, events = run_vector(v, a.src, a.work, a.keep_vcd)
        print("%s: %d reads, %d events" % (v, len(reads), len(events)))


if __name__ == "__main__":
    main()
