# SPDX-License-Identifier: GPL-2.0-or-later
"""The counters a card with a telemetry-traffic-pattern generator must
hold, from the rules of docs/ndk-pcie-telemetry.md ("Counter layout",
"Semantics and timing", "telemetry-traffic-pattern") and
docs/traffic-generators.md; the same rules as the C QTest's per-cycle
simulator (sim_cycle, ch_span), counted by periods instead of cycle by
cycle so that an hour costs what a window does.

Nothing here reads a card: the geometry is the documented defaults with
the properties a test sets, the traffic the generator's parameters.
"""
from math import ceil

NS_PER_S = 10 ** 9

# bus channel quantities, in the order of the docs' table
WORDS, STALL, SOF, MVB, MVB_STALL, ITEMS, REGION0 = range(7)
BRAKE_REASONS = 6
BANDS = 4

DEFAULTS = {
    'pcie-endpoints': 1, 'dma-ports': 1,
    'pcie-rq-mfb-regions': 2, 'pcie-rc-mfb-regions': 2,
    'dma-up-mfb-regions': 2, 'dma-down-mfb-regions': 2,
    'pcie-rq-mfb-region-bytes': 32, 'pcie-rc-mfb-region-bytes': 32,
    'dma-up-mfb-region-bytes': 32, 'dma-down-mfb-region-bytes': 32,
    'mfb-item-bytes': 4, 'cnt-width': 48, 'drain-period': 4096,
    'tag-capacity': 256, 'stfifo-capacity': 1024,
    'pcie-clk-freq': 400000000, 'dma-clk-freq': 200000000,
    'mi-clk-freq': 100000000,
}

PATTERN_DEFAULTS = {
    'link-up': True, 'tags-free': -1, 'stfifo-free': -1, 'brake': 0,
    'brake-duty': 100, 'brake-period': 64, 'up-mvb-items': 1,
    'down-mvb-items': 1,
}
for _bus in ('rq', 'rc', 'up', 'down'):
    for _k in ('frame-bytes', 'gap', 'stall'):
        PATTERN_DEFAULTS['%s-%s' % (_bus, _k)] = 0


def next_pow2(x):
    p = 1
    while p < x:
        p *= 2
    return p


def band(v, c):
    """Histogram band of free value v of capacity c."""
    if v == 0:
        return 0
    if v <= c // 8:
        return 1
    return 2 if v <= c // 2 else 3


class Geometry:
    """A card's generics: the defaults with the given properties."""

    def __init__(self, props=None):
        g = dict(DEFAULTS)
        g.update({k: int(str(v), 0) for k, v in (props or {}).items()
                  if k in DEFAULTS})
        self.g = g
        self.endpoints = g['pcie-endpoints']
        self.ports = g['dma-ports']
        self.item = g['mfb-item-bytes']
        self.dp = g['drain-period']
        self.hz = {'pcie': g['pcie-clk-freq'], 'dma': g['dma-clk-freq'],
                   'mi': g['mi-clk-freq']}
        # (real regions, items per region) of each bus kind
        self.bus = {}
        for kind, side in (('rq', 'pcie'), ('rc', 'pcie'), ('up', 'dma'),
                           ('down', 'dma')):
            regions = g['%s-%s-mfb-regions' % (side, kind)]
            ipr = g['%s-%s-mfb-region-bytes' % (side, kind)] // self.item
            self.bus[kind] = (regions, ipr)
        self.pcie_regions = max(self.bus['rq'][0], self.bus['rc'][0])
        self.dma_regions = max(self.bus['up'][0], self.bus['down'][0])
        self.pcie_channels = 1 + 2 * (6 + self.pcie_regions) + \
            BRAKE_REASONS + 2 * BANDS
        self.dma_channels = 1 + 2 * self.ports * (6 + self.dma_regions)
        self.per_endpoint = self.pcie_channels + self.dma_channels
        self.entries = next_pow2(self.endpoints * self.per_endpoint)

    def origin(self, domain, t0=0):
        """First cycle at or after the card's creation at t0."""
        return -(-t0 * self.hz[domain] // NS_PER_S)

    def cycle_at(self, domain, t):
        return t * self.hz[domain] // NS_PER_S

    def cycle_time(self, domain, c):
        return -(-c * NS_PER_S // self.hz[domain])

    def drain_cycle(self, domain, k, t0=0):
        """Last cycle of window k: the drain tick samples the next one."""
        return self.origin(domain, t0) + (k + 1) * self.dp - 1

    def windows_by(self, domain, t, t0=0):
        """Windows a probe has drained by t (t well inside a window)."""
        c = self.cycle_at(domain, t)
        w = (c + 1 - self.origin(domain, t0)) // self.dp
        if w:
            assert t - self.cycle_time(domain, self.drain_cycle(
                domain, w - 1, t0)) >= 3000, 'too close after a drain'
        assert self.cycle_time(domain, self.drain_cycle(domain, w, t0)) - t \
            >= 1000, 'too close before a drain'
        return w


class Bus:
    """One bus of a probe playing the pattern: a period of `stall`
    cycles in which the first word waits, the frame's words, `gap` idle
    cycles; from cycle 0 of its clock."""

    def __init__(self, frame_bytes, gap, stall, regions, ipr, item,
                 probe_regions, mvb_items):
        self.active = frame_bytes > 0
        self.R = probe_regions
        self.regions = regions
        self.ipr = ipr
        self.mvb_items = mvb_items
        if self.active:
            self.items = ceil(frame_bytes / item)
            self.nreg = ceil(self.items / ipr)
            self.words = ceil(self.nreg / regions)
            self.stall, self.gap = stall, gap
            self.period = stall + self.words + gap
        else:
            self.period = 1
        self.table = self._period_sums()

    def signals(self, t):
        """(src_rdy, dst_rdy, sof, eof region or None, eof_pos, mvb
        valid items, mvb_src_rdy, mvb_dst_rdy) at cycle t."""
        if not self.active:
            return (False, False, False, None, 0, 0, False, False)
        ph = t % self.period
        if ph >= self.stall + self.words:
            return (False, False, False, None, 0, 0, False, False)
        stalled = ph < self.stall
        j = 0 if stalled else ph - self.stall
        sof = j == 0
        eof = None
        if j == self.words - 1:
            first = j * self.regions
            eof = min(self.nreg, first + self.regions) - 1 - first
        pos = (self.items - 1) % self.ipr
        mvb = self.mvb_items if sof else 0
        return (True, not stalled, sof, eof, pos, mvb, bool(mvb),
                bool(mvb) and not stalled)

    def step(self, t, seen, open_):
        """What cycle t adds to the bus's 6 + R channels, and the frame
        state after it. A cycle not seen (the origin) counts no bus event
        and leaves the frame closed; the MVB channels count it."""
        inc = [0] * (6 + self.R)
        src, dst, sof, eof, pos, mvb, msrc, mdst = self.signals(t)
        if not seen:
            open_ = False
        elif src and dst:
            inc[WORDS] += 1
            inc[SOF] += 1 if sof else 0
            for r in range(self.R):
                sof_r = sof and r == 0
                if not open_ and not sof_r:
                    continue
                inc[REGION0 + r] += 1
                if eof == r:
                    inc[ITEMS] += pos + 1
                    open_ = False
                else:
                    inc[ITEMS] += self.ipr
                    open_ = True
        elif src:
            inc[STALL] += 1
        if msrc and mdst:
            inc[MVB] += mvb
        elif msrc:
            inc[MVB_STALL] += 1
        return inc, open_

    def run(self, start, end, open_, origin):
        acc = [0] * (6 + self.R)
        for t in range(start, end):
            inc, open_ = self.step(t, t != origin, open_)
            for i, x in enumerate(inc):
                acc[i] += x
        return acc, open_

    def _period_sums(self):
        # a period from its first cycle: stall, then the word with the
        # SOF, which makes region 0 valid whatever state came before, so
        # the sums do not depend on it; the frame's EOF closes it
        return self.run(0, self.period, False, None)[0]

    def advance(self, start, end, open_, origin):
        """(sums over cycles [start, end), frame state at end)."""
        acc = [0] * (6 + self.R)
        if start >= end:
            return acc, open_
        if start == origin:
            inc, open_ = self.run(start, start + 1, open_, origin)
            acc = _add(acc, inc)
            start += 1
        P = self.period
        if end - start <= 2 * P:
            inc, open_ = self.run(start, end, open_, origin)
            return _add(acc, inc), open_
        boundary = -(-start // P) * P
        inc, open_ = self.run(start, boundary, open_, origin)
        acc = _add(acc, inc)
        n = (end - boundary) // P
        acc = _add(acc, [x * n for x in self.table])
        if n and self.active:
            open_ = False
        inc, open_ = self.run(boundary + n * P, end, open_, origin)
        return _add(acc, inc), open_


def _add(a, b):
    return [x + y for x, y in zip(a, b)]


class ProbeTraffic:
    """What a pattern's parameters make of one probe."""

    def __init__(self, geo, domain, params):
        p = dict(PATTERN_DEFAULTS)
        p.update({k: _value(v) for k, v in params.items()})
        self.domain = domain
        self.pcie = domain == 'pcie'
        if self.pcie:
            kinds = ['rq', 'rc']
            self.R = geo.pcie_regions
        else:
            kinds = ['up', 'down'] * geo.ports
            self.R = geo.dma_regions
        self.buses = []
        for kind in kinds:
            regions, ipr = geo.bus[kind]
            mvb = 0 if self.pcie else p['%s-mvb-items' % kind]
            self.buses.append(Bus(p['%s-frame-bytes' % kind],
                                  p['%s-gap' % kind], p['%s-stall' % kind],
                                  regions, ipr, geo.item, self.R, mvb))
        self.brake = p['brake'] if self.pcie else 0
        self.brake_period = p['brake-period']
        self.brake_on = p['brake-period'] * p['brake-duty'] // 100
        cap_t, cap_f = geo.g['tag-capacity'], geo.g['stfifo-capacity']
        tags = min(cap_t, 0x7ff) if p['tags-free'] < 0 else p['tags-free']
        fifo = cap_f if p['stfifo-free'] < 0 else p['stfifo-free']
        self.tag_band = band(tags, cap_t)
        self.fifo_band = band(fifo, cap_f)
        self.channels = 1 + len(self.buses) * (6 + self.R) + \
            (BRAKE_REASONS + 2 * BANDS if self.pcie else 0)

    def brake_cycles(self, a, b):
        """Cycles in [a, b) in which the BRAKE bits are set."""
        if b <= a or not self.brake or self.brake_on <= 0:
            return 0
        if self.brake_on >= self.brake_period:
            return b - a

        def upto(x):
            n, r = divmod(x, self.brake_period)
            return n * self.brake_on + min(r, self.brake_on)
        return upto(b) - upto(a)


def _value(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    s = str(v)
    if s in ('on', 'true', 'yes'):
        return 1
    if s in ('off', 'false', 'no'):
        return 0
    return int(s, 0)


class Probe:
    """A probe's channels after k drained windows, over versions of the
    traffic: versions = [(first cycle, ProbeTraffic)], ascending."""

    def __init__(self, versions, origin, dp):
        self.versions = versions
        self.o = origin
        self.dp = dp
        first = versions[0][1]
        self.n = first.channels
        self.pcie = first.pcie
        self.nbus = len(first.buses)
        self.R = first.R

    def is_band(self, c):
        return self.pcie and c + 2 * BANDS >= self.n

    def edge(self, c):
        """Channel c's windows end slot x (G + 1) cycles after the cycle
        counter's (bands one cycle earlier)."""
        g = -(-self.n // 8)
        d = (c % 8) * (g + 1)
        return d - 1 if self.is_band(c) else d

    def first(self, c):
        """0 for the channels that count the origin (cycles, MVB, the
        bands after power-on), 1 for bus events and BRAKE."""
        if c == 0 or self.is_band(c):
            return 0
        if c < 1 + self.nbus * (6 + self.R):
            if (c - 1) % (6 + self.R) in (MVB, MVB_STALL):
                return 0
        return 1

    def span(self, c, k):
        if not k:
            return self.o, self.o
        return self.o + self.first(c), self.o + k * self.dp - 1 + self.edge(c)

    def _segments(self, end):
        """(start, stop, traffic) of each version within [o, end)."""
        out = []
        for i, (frm, tr) in enumerate(self.versions):
            s = max(self.o, frm)
            e = self.versions[i + 1][0] if i + 1 < len(self.versions) \
                else end
            e = min(e, end)
            if s < e:
                out.append((s, e, tr))
        return out

    def bus_prefix(self, b, x):
        """Bus b's sums over [o, x), the frame state carried across
        versions as on a real bus whose source changes."""
        acc = [0] * (6 + self.R)
        open_ = False
        for s, e, tr in self._segments(x):
            inc, open_ = tr.buses[b].advance(s, e, open_, self.o)
            acc = _add(acc, inc)
        return acc

    def side(self, c, lo, hi):
        """A BRAKE or band channel over [lo, hi)."""
        base = 1 + self.nbus * (6 + self.R)
        total = 0
        for s, e, tr in self._segments(hi):
            a, z = max(s, lo), e
            if a >= z:
                continue
            if c < base + BRAKE_REASONS:
                if tr.brake >> (c - base) & 1:
                    total += tr.brake_cycles(a, z)
            else:
                j = c - base - BRAKE_REASONS
                hist, b = divmod(j, BANDS)
                if b == (tr.tag_band if hist == 0 else tr.fifo_band):
                    total += z - a
        return total

    def expect(self, k):
        """Every channel after k whole windows."""
        out = [0] * self.n
        base = 1 + self.nbus * (6 + self.R)
        for c in range(self.n):
            lo, hi = self.span(c, k)
            if c == 0:
                out[c] = hi - lo
            elif c < base:
                b, q = divmod(c - 1, 6 + self.R)
                out[c] = self.bus_prefix(b, hi)[q] - \
                    self.bus_prefix(b, lo)[q]
            else:
                out[c] = self.side(c, lo, hi)
        return out


def expect_card(geo, versions, t, t0=0):
    """Every counter entry of a card (geo.entries of them) at virtual time
    t, well inside a window of both probes, the generator's parameters
    changing as versions = [(virtual time of the change, params)] say:
    each applies from the start of the PCIe drain window after the one
    its time falls in, and on the DMA side from the first DMA cycle at or
    after that moment (docs/traffic-generators.md, "Reconfiguration")."""
    op, od = geo.origin('pcie', t0), geo.origin('dma', t0)
    pv, dv = [], []
    for tc, params in versions:
        if tc is None:
            fp, fd = op, od
        else:
            w = (geo.cycle_at('pcie', tc) + 1 - op) // geo.dp
            fp = geo.drain_cycle('pcie', w, t0)
            # the DMA side switches at that moment: the first DMA cycle at
            # or after PCIe cycle fp, in exact (ps) time
            fd = -(-fp * geo.hz['dma'] // geo.hz['pcie'])
        pv.append((fp, ProbeTraffic(geo, 'pcie', params)))
        dv.append((fd, ProbeTraffic(geo, 'dma', params)))
    pcie = Probe(pv, op, geo.dp).expect(geo.windows_by('pcie', t, t0))
    dma = Probe(dv, od, geo.dp).expect(geo.windows_by('dma', t, t0))
    out = [0] * geo.entries
    for e in range(geo.endpoints):
        at = e * geo.per_endpoint
        out[at:at + geo.pcie_channels] = pcie
        at += geo.pcie_channels
        out[at:at + geo.dma_channels] = dma
    return out
