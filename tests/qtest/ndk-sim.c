/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-cycle model of the pattern source and of the probes' channels
 * (see ndk-sim.h).
 */
#include "ndk-common.h"
#include "ndk-sim.h"

/* ------------------------------------------------------------------ */
/* Where each channel's window lies                                   */

Layout pcie_layout(unsigned regions)
{
    return (Layout) { 1 + 2 * (6 + regions) + 14, 2, regions, true };
}

Layout dma_layout(unsigned ports, unsigned regions)
{
    return (Layout) { 1 + 2 * ports * (6 + regions), 2 * ports, regions,
                      false };
}

bool ch_is_band(const Layout *l, unsigned c)
{
    return l->pcie && c + 8 >= l->n;
}

/*
 * The probe reads its channels out in G = ceil(n / 8) groups of 8:
 * channel c sits in slot c mod 8, and its window edge lies slot x (G + 1)
 * cycles after the cycle counter's (channel 0's); one cycle less for the
 * histogram bands. Default PCIe probe (31 channels): 5 x slot (bands
 * 5 x slot - 1); default DMA probe (17): 4 x slot.
 */
int64_t ch_edge(const Layout *l, unsigned c)
{
    int64_t g = DIV_ROUND_UP(l->n, 8);
    int64_t d = (int64_t)(c % 8) * (g + 1);

    return ch_is_band(l, c) ? d - 1 : d;
}

/*
 * The first probe cycle a channel counts, relative to the origin: the
 * origin is the reset's last cycle, and the input registers of the bus
 * words, stalls, SOF, items, regions and BRAKE bits are cleared in it;
 * the cycle counter, the MVB channels and (after an MI or device reset)
 * the histogram bands count it.
 */
unsigned ch_first(const Layout *l, unsigned c)
{
    if (c == 0 || ch_is_band(l, c)) {
        return 0;
    }
    if (c < 1 + l->nbus * (6 + l->regions)) {
        unsigned k = (c - 1) % (6 + l->regions);

        if (k == PTL_CH_MVB || k == PTL_CH_MVB_STALL) {
            return 0;
        }
    }
    return 1;
}

/*
 * After k whole drained windows of a probe with origin o and drain period
 * dp, channel c holds the probe cycles [lo, hi) = [o + first_c,
 * E_k + edge_c), E_k = o + k dp - 1 the cycle counter's k-th window edge.
 */
void ch_span(const Layout *l, uint64_t o, uint64_t dp, uint64_t k,
             unsigned c, uint64_t *lo, uint64_t *hi)
{
    if (!k) {
        *lo = *hi = o;
        return;
    }
    *lo = o + ch_first(l, c);
    *hi = o + k * dp - 1 + ch_edge(l, c);
}

/* Cycles of channel a's span (after whole windows) that b's lacks */
uint64_t ch_extra(const Layout *l, unsigned a, unsigned b)
{
    int64_t end = ch_edge(l, a) - ch_edge(l, b);
    int64_t start = (int64_t)ch_first(l, b) - (int64_t)ch_first(l, a);

    return MAX(end, 0) + MAX(start, 0);
}

/*
 * The same for the difference of two readings, windows i..j - 1: both
 * spans have j - i windows' worth of cycles, shifted by the edges'
 * difference, so each has that many cycles the other lacks.
 */
uint64_t ch_shift(const Layout *l, unsigned a, unsigned b)
{
    int64_t d = ch_edge(l, a) - ch_edge(l, b);

    return d < 0 ? -d : d;
}

/* ------------------------------------------------------------------ */
/* An independent per-cycle model of the pattern source and the channels */

Layout sim_layout(const SimProbe *p)
{
    return (Layout) {
        1 + p->nbus * (6 + p->regions) + (p->pcie ? 14 : 0),
        p->nbus, p->regions, p->pcie,
    };
}

/*
 * The bus at absolute cycle t. One period: `stall` cycles in which the
 * first word waits, the frame's words, `gap` idle cycles. A frame of B
 * bytes has ceil(B / 4) items in ceil(items / ipr) regions and fills the
 * bus's regions in order from region 0 of its first word.
 */
static void sim_bus_at(const SimBus *b, uint64_t t, SimSignals *s)
{
    unsigned items, nreg, words;
    uint64_t period, ph;

    memset(s, 0, sizeof(*s));
    if (!b->frame_bytes || t < b->start) {
        return;
    }
    t -= b->start;
    items = DIV_ROUND_UP(b->frame_bytes, ITEM_BYTES);
    nreg = DIV_ROUND_UP(items, b->ipr);
    words = DIV_ROUND_UP(nreg, b->regions);
    period = (uint64_t)b->stall + words + b->gap;
    ph = t % period;
    if (ph >= b->stall + words) {
        return;
    }
    s->src_rdy = true;
    if (ph < b->stall) {
        s->sof = 1;
        s->mvb_src_rdy = b->mvb;
        s->mvb_vld = b->mvb;
        return;
    }
    ph -= b->stall;
    s->dst_rdy = true;
    if (ph == 0) {
        s->sof = 1;
        s->mvb_src_rdy = s->mvb_dst_rdy = b->mvb;
        s->mvb_vld = b->mvb;
    }
    if (ph == words - 1) {
        s->eof = 1u << (nreg - 1 - ph * b->regions);
        s->eof_pos = (items - 1) % b->ipr;
    }
}

/*
 * What absolute cycle t of a probe adds to each channel, into inc (zeroed
 * here). open[b] says whether a frame of bus b is open after its last
 * moving word; it carries over from cycle to cycle. The frame state
 * starts closed after the probe's origin: the origin counts no bus event,
 * not even the SOF that would open a frame (seen false there).
 */
static void sim_cycle(const SimProbe *p, uint64_t t, bool seen, bool *open,
                      uint64_t *inc)
{
    memset(inc, 0, SIM_MAX_CH * sizeof(*inc));
    inc[0] = 1;
    for (unsigned b = 0; b < p->nbus; b++) {
        unsigned base = 1 + b * (6 + p->regions);
        SimSignals s;

        sim_bus_at(&p->bus[b], t, &s);
        if (!seen) {
            open[b] = false;
        } else if (s.src_rdy && s.dst_rdy) {
            inc[base + PTL_CH_WORDS]++;
            inc[base + PTL_CH_SOF] += ctpop32(s.sof);
            for (unsigned r = 0; r < p->regions; r++) {
                bool sof = s.sof >> r & 1;
                bool eof = s.eof >> r & 1;

                if (!open[b] && !sof) {
                    continue;
                }
                inc[base + PTL_CH_REGION0 + r]++;
                if (eof) {
                    inc[base + PTL_CH_ITEMS] += s.eof_pos + 1;
                    open[b] = false;
                } else {
                    inc[base + PTL_CH_ITEMS] += p->bus[b].ipr;
                    open[b] = true;
                }
            }
        } else if (s.src_rdy) {
            inc[base + PTL_CH_STALL]++;
        }
        if (s.mvb_src_rdy && s.mvb_dst_rdy) {
            inc[base + PTL_CH_MVB] += s.mvb_vld;
        } else if (s.mvb_src_rdy) {
            inc[base + PTL_CH_MVB_STALL]++;
        }
    }
    if (p->pcie) {
        unsigned base = 1 + p->nbus * (6 + p->regions);

        for (unsigned k = 0; k < 6; k++) {
            if (p->brake >> k & 1) {
                inc[base + k]++;
            }
        }
        inc[base + 6 + ptl_hist_band(p->tags_free, p->tag_capacity)]++;
        inc[base + 10 + ptl_hist_band(p->stfifo_free, p->stfifo_capacity)]++;
    }
}

/*
 * Run the absolute cycles [start, end) of a probe and count cycle t into
 * channel c only if lo[c] <= t < hi[c]; the bus events of cycle origin
 * (UINT64_MAX: none) are not seen.
 */
void sim_count_spans(const SimProbe *p, uint64_t start, uint64_t end,
                     uint64_t origin, const uint64_t *lo,
                     const uint64_t *hi, bool *open, uint64_t *acc)
{
    unsigned n = sim_layout(p).n;
    uint64_t inc[SIM_MAX_CH];

    for (uint64_t t = start; t < end; t++) {
        sim_cycle(p, t, t != origin, open, inc);
        for (unsigned c = 0; c < n; c++) {
            if (t >= lo[c] && t < hi[c]) {
                acc[c] += inc[c];
            }
        }
    }
}

/* Every channel over the absolute cycles [start, end), frames closed */
void sim_count(const SimProbe *p, uint64_t start, uint64_t end,
               uint64_t *acc)
{
    uint64_t lo[SIM_MAX_CH], hi[SIM_MAX_CH];
    bool open[2] = { false, false };

    for (unsigned c = 0; c < SIM_MAX_CH; c++) {
        lo[c] = start;
        hi[c] = end;
    }
    sim_count_spans(p, start, end, UINT64_MAX, lo, hi, open, acc);
}

/* The spans of all channels after k windows; returns the largest end */
uint64_t sim_spans(const SimProbe *p, uint64_t o, uint64_t dp,
                   uint64_t k, uint64_t *lo, uint64_t *hi)
{
    Layout l = sim_layout(p);
    uint64_t end = o;

    g_assert_cmpuint(l.n, <=, SIM_MAX_CH);
    for (unsigned c = 0; c < l.n; c++) {
        ch_span(&l, o, dp, k, c, &lo[c], &hi[c]);
        end = MAX(end, hi[c]);
    }
    return end;
}

/*
 * The counters of a probe with origin o after k drained windows of dp
 * cycles when the traffic changes: version i describes the cycles from
 * from[i] (absolute, ascending, from[0] <= o) to from[i + 1]. The bus
 * state (an open frame) goes on across a change, as on a real bus whose
 * source changes.
 */
void sim_windows_versions(const SimProbe *ver, const uint64_t *from,
                          unsigned nver, uint64_t o, uint64_t dp,
                          uint64_t k, uint64_t *acc)
{
    uint64_t lo[SIM_MAX_CH], hi[SIM_MAX_CH];
    uint64_t end = sim_spans(&ver[0], o, dp, k, lo, hi);
    bool open[2] = { false, false };

    for (unsigned i = 0; i < nver; i++) {
        uint64_t s = MAX(o, from[i]);
        uint64_t e = i + 1 < nver ? MIN(end, from[i + 1]) : end;

        if (s < e) {
            sim_count_spans(&ver[i], s, e, o, lo, hi, open, acc);
        }
    }
}

/* The same with one version of the traffic */
void sim_windows(const SimProbe *p, uint64_t o, uint64_t dp,
                 uint64_t k, uint64_t *acc)
{
    sim_windows_versions(p, &o, 1, o, dp, k, acc);
}

/*
 * sim_windows over a long span: the pattern repeats every lcm of its
 * buses' periods (4 on the PCIe side, 7 on the DMA side) from absolute
 * cycle 0, and every frame is closed where a period starts, so the whole
 * periods that lie inside every channel's span are counted once and
 * multiplied; the pieces at either end cycle by cycle, each channel in
 * its own span.
 */
void sim_windows_long(const SimProbe *p, uint64_t period, uint64_t o,
                      uint64_t dp, uint64_t k, uint64_t *acc)
{
    uint64_t lo[SIM_MAX_CH], hi[SIM_MAX_CH], all_lo[SIM_MAX_CH] = { 0 };
    uint64_t all_hi[SIM_MAX_CH] = { 0 }, one[SIM_MAX_CH] = { 0 };
    uint64_t end = sim_spans(p, o, dp, k, lo, hi), head, whole, lo_max = o;
    uint64_t hi_min = end;
    unsigned n = sim_layout(p).n;
    bool open[2] = { false, false };

    for (unsigned c = 0; c < n; c++) {
        lo_max = MAX(lo_max, lo[c]);
        hi_min = MIN(hi_min, hi[c]);
    }
    head = MIN(hi_min, (lo_max + period - 1) / period * period);
    whole = (hi_min - head) / period;
    sim_count_spans(p, o, head, o, lo, hi, open, acc);
    for (unsigned c = 0; c < n; c++) {
        all_lo[c] = head;
        all_hi[c] = head + period;
    }
    open[0] = open[1] = false;
    sim_count_spans(p, head, head + period, o, all_lo, all_hi, open, one);
    for (unsigned c = 0; c < n; c++) {
        acc[c] += one[c] * whole;
    }
    open[0] = open[1] = false;
    sim_count_spans(p, head + whole * period, end, o, lo, hi, open, acc);
}

void pattern_probes(SimProbe *pcie, SimProbe *dma)
{
    const SimBus rq = { .frame_bytes = 256, .regions = 2, .ipr = 8 };
    const SimBus rc = { .frame_bytes = 0, .regions = 2, .ipr = 8 };
    const SimBus up = { .frame_bytes = 100, .gap = 3, .stall = 2,
                        .regions = 2, .ipr = 8, .mvb = true };
    const SimBus down = { .frame_bytes = 0, .regions = 2, .ipr = 8,
                          .mvb = true };

    *pcie = (SimProbe) {
        .hz = PCIE_HZ, .regions = 2, .nbus = 2, .bus = { rq, rc },
        .pcie = true, .brake = 5, .tags_free = 100, .tag_capacity = 256,
        .stfifo_free = 1024, .stfifo_capacity = 1024,
    };
    *dma = (SimProbe) {
        .hz = DMA_HZ, .regions = 2, .nbus = 2, .bus = { up, down },
    };
}

/*
 * The simulator against closed forms, for spans that start at a frame
 * boundary (cycle 0 of the pattern).
 */
void check_simulator(void)
{
    SimProbe pp, dp;
    uint64_t a[31] = { 0 }, b[17] = { 0 };
    /* PCIe window of 9 x 4096 - 1 = 36863 cycles */
    const uint64_t np = 36863;
    /* DMA: 4 x 4096 - 1 = 16383 = 7 x 2340 + 3 cycles */
    const uint64_t nd = 16383;

    pattern_probes(&pp, &dp);
    sim_count(&pp, 0, np, a);
    g_assert_cmpuint(a[0], ==, np);
    /* RQ moves a word in every cycle, 16 items per word */
    g_assert_cmpuint(a[1 + PTL_CH_WORDS], ==, 36863);
    g_assert_cmpuint(a[1 + PTL_CH_STALL], ==, 0);
    g_assert_cmpuint(a[1 + PTL_CH_SOF], ==, 9216);         /* ceil(36863 / 4) */
    g_assert_cmpuint(a[1 + PTL_CH_MVB], ==, 0);
    g_assert_cmpuint(a[1 + PTL_CH_ITEMS], ==, 589808);     /* 16 x 36863 */
    g_assert_cmpuint(a[1 + PTL_CH_REGION0], ==, 36863);
    g_assert_cmpuint(a[1 + PTL_CH_REGION0 + 1], ==, 36863);
    for (unsigned c = 9; c <= 16; c++) {               /* RC idle */
        g_assert_cmpuint(a[c], ==, 0);
    }
    g_assert_cmpuint(a[17], ==, 36863);                /* BRAKE 0 */
    g_assert_cmpuint(a[18], ==, 0);
    g_assert_cmpuint(a[19], ==, 36863);                /* BRAKE 2 */
    g_assert_cmpuint(a[20] + a[21] + a[22], ==, 0);
    g_assert_cmpuint(a[23 + 2], ==, 36863);            /* tags band 2 */
    g_assert_cmpuint(a[27 + 3], ==, 36863);            /* FIFO band 3 */

    sim_count(&dp, 0, nd, b);
    /*
     * 2340 periods of (stall, stall, word 0, word 1, gap x 3) and the
     * cycles stall, stall, word 0. Word 0: SOF, MVB item, 8 + 8 items;
     * word 1: 8 items and the EOF at item 0 of region 1 (25 = 3 x 8 + 1).
     */
    g_assert_cmpuint(b[0], ==, nd);
    g_assert_cmpuint(b[1 + PTL_CH_WORDS], ==, 2 * 2340 + 1);
    g_assert_cmpuint(b[1 + PTL_CH_STALL], ==, 2 * 2341);
    g_assert_cmpuint(b[1 + PTL_CH_SOF], ==, 2341);
    g_assert_cmpuint(b[1 + PTL_CH_MVB], ==, 2341);
    g_assert_cmpuint(b[1 + PTL_CH_MVB_STALL], ==, 2 * 2341);
    g_assert_cmpuint(b[1 + PTL_CH_ITEMS], ==, 25 * 2340 + 16);
    g_assert_cmpuint(b[1 + PTL_CH_REGION0], ==, 2 * 2340 + 1);
    g_assert_cmpuint(b[1 + PTL_CH_REGION0 + 1], ==, 2 * 2340 + 1);
    for (unsigned c = 9; c <= 16; c++) {               /* DOWN idle */
        g_assert_cmpuint(b[c], ==, 0);
    }
}

/*
 * The window edges against the examples worked out by hand: the default
 * PCIe probe (31 channels, G = 4) has RQ words (slot 1) 5 cycles after
 * the cycle counter, FIFO band 3 (channel 30, slot 6) 29 and tag band 1
 * (channel 24, slot 0) -1; the default DMA probe (17, G = 3) 4 x slot;
 * the PCIe probe of 4 RQ regions (35, G = 5) 6 x slot.
 */
void check_edges(void)
{
    Layout lp = pcie_layout(2), ld = dma_layout(1, 2);
    Layout lp4 = pcie_layout(4), ld2 = dma_layout(2, 2);
    uint64_t lo, hi;

    g_assert_cmpuint(lp.n, ==, 31);
    g_assert_cmpuint(ld.n, ==, 17);
    g_assert_cmpuint(lp4.n, ==, 35);
    g_assert_cmpuint(ld2.n, ==, 33);
    g_assert_cmpint(ch_edge(&lp, 0), ==, 0);
    g_assert_cmpint(ch_edge(&lp, 1), ==, 5);
    g_assert_cmpint(ch_edge(&lp, 6), ==, 30);
    g_assert_cmpint(ch_edge(&lp, 22), ==, 30);         /* BRAKE 5 */
    g_assert_cmpint(ch_edge(&lp, 23), ==, 34);         /* tag band 0 */
    g_assert_cmpint(ch_edge(&lp, 24), ==, -1);
    g_assert_cmpint(ch_edge(&lp, 30), ==, 29);
    g_assert_cmpint(ch_edge(&ld, 7), ==, 28);
    g_assert_cmpint(ch_edge(&ld, 16), ==, 0);
    g_assert_cmpint(ch_edge(&lp4, 30), ==, 35);
    g_assert_cmpint(ch_edge(&lp4, 34), ==, 11);
    g_assert_cmpint(ch_edge(&ld2, 32), ==, 0);
    /* the MVB channels (bus channels 3, 4) and the bands count cycle o */
    g_assert_cmpuint(ch_first(&lp, 0), ==, 0);
    g_assert_cmpuint(ch_first(&lp, 1), ==, 1);
    g_assert_cmpuint(ch_first(&ld, 4), ==, 0);
    g_assert_cmpuint(ch_first(&ld, 13), ==, 0);
    g_assert_cmpuint(ch_first(&ld, 14), ==, 1);
    g_assert_cmpuint(ch_first(&lp, 22), ==, 1);
    g_assert_cmpuint(ch_first(&lp, 23), ==, 0);
    ch_span(&lp, 100, DP, 2, 1, &lo, &hi);
    g_assert_cmpuint(lo, ==, 101);
    g_assert_cmpuint(hi, ==, 100 + 2 * DP - 1 + 5);
    ch_span(&lp, 100, DP, 0, 1, &lo, &hi);
    g_assert_cmpuint(hi, ==, lo);
    /* region 0 of RQ (d 35) against RQ words (d 5): 30 more cycles */
    g_assert_cmpuint(ch_extra(&lp, 7, 1), ==, 30);
    g_assert_cmpuint(ch_extra(&lp, 1, 7), ==, 0);
    /* RQ words against the cycles: 5 cycles at the end, none at the start */
    g_assert_cmpuint(ch_extra(&lp, 1, 0), ==, 5);
    g_assert_cmpuint(ch_extra(&lp, 0, 1), ==, 1);
    g_assert_cmpuint(ch_shift(&lp, 24, 23), ==, 35);
}

/*
 * Expected counters (64 entries, default layout) of a card with the
 * pattern, reset at t0, read at t (mid-window): the PCIe probe in entries
 * 0..30, the DMA probe in 31..47, nothing in 48..63.
 */
void pattern_expect(int64_t t0, int64_t t, uint64_t *exp)
{
    SimProbe pp, dp;
    uint64_t op = first_cycle(t0, PCIE_HZ), od = first_cycle(t0, DMA_HZ);
    uint64_t wp = windows_by(t, op, PCIE_HZ, DP);
    uint64_t wd = windows_by(t, od, DMA_HZ, DP);

    memset(exp, 0, DEF_ENTRIES * sizeof(*exp));
    pattern_probes(&pp, &dp);
    sim_windows(&pp, op, DP, wp, exp);
    sim_windows(&dp, od, DP, wd, exp + 31);
}


/*
 * The PCIe probe of a card whose only traffic is RQ frames of rq_bytes,
 * back to back; all tags and FIFO words free (band 3 of both).
 */
SimProbe rq_probe(uint32_t rq_bytes)
{
    return (SimProbe) {
        .hz = PCIE_HZ, .regions = 2, .nbus = 2,
        .bus = {
            { .frame_bytes = rq_bytes, .regions = 2, .ipr = 8 },
            { .frame_bytes = 0, .regions = 2, .ipr = 8 },
        },
        .pcie = true, .tags_free = 256, .tag_capacity = 256,
        .stfifo_free = 1024, .stfifo_capacity = 1024,
    };
}
