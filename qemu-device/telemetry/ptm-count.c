/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Counting the channels of one telemetry probe.
 *
 * ptm_count_cycle() is the literal definition of every channel, one cycle at
 * a time. ptm_count_chunk() gives the same counts for a whole chunk in time
 * that depends on the number of segments, not on the cycles they cover: the
 * only state carried between cycles that affects counts is one "frame open"
 * bit per bus, and a fixed input maps that bit by a constant, the identity
 * or a negation, so a run of identical inputs settles with period <= 2.
 */
#include <glib.h>
#include <string.h>

#include "ptm-count.h"

PtmChunk *ptm_chunk_new(void)
{
    PtmChunk *ch = g_new0(PtmChunk, 1);

    ch->scratch = g_new0(PtmSegment, PTM_CHUNK_SEGMENTS);
    ch->seg = ch->scratch;
    ch->repeat = 1;
    return ch;
}

void ptm_chunk_free(PtmChunk *ch)
{
    if (ch) {
        g_free(ch->scratch);
        g_free(ch);
    }
}

void ptm_count_state_window_start(PtmCountState *st)
{
    st->tag_min = 0xFFFF;
    st->stfifo_min = 0xFFFF;
}

void ptm_count_state_append(PtmCountState *st, const PtmCountState *span)
{
    st->open = span->open;
    st->tag_min = MIN(st->tag_min, span->tag_min);
    st->stfifo_min = MIN(st->stfifo_min, span->stfifo_min);
    st->tag_last = span->tag_last;
    st->stfifo_last = span->stfifo_last;
    st->link_last = span->link_last;
}

/* Without -mpopcnt the builtin is a library call; this is inline. */
static inline unsigned popcount16(unsigned v)
{
    v &= 0xFFFFu;
    v = v - ((v >> 1) & 0x5555u);
    v = (v & 0x3333u) + ((v >> 2) & 0x3333u);
    v = (v + (v >> 4)) & 0x0F0Fu;
    return (v + (v >> 8)) & 0x1Fu;
}

/*
 * One moving word on bus b entered with the frame-open state `open`: add
 * `mult` x its items and region-used counts, return the state after it.
 */
static unsigned bus_word(const PtmProbeShape *sh, unsigned b,
                         const PtmBusCycle *bc, unsigned open,
                         uint64_t *acc, uint64_t mult)
{
    unsigned regions = sh->info.regions;
    unsigned base = ptm_ch_bus(regions, b, 0);
    uint64_t items = 0;

    for (unsigned r = 0; r < regions; r++) {
        bool sof = bc->sof >> r & 1;
        bool eof = bc->eof >> r & 1;

        if (!(open || sof)) {
            continue;           /* not valid: an EOF here closes nothing */
        }
        if (eof) {
            items += (bc->eof_pos[r] & sh->eof_pos_mask) + 1;
            open = 0;
        } else {
            items += sh->info.bus_items[b];
            open = 1;
        }
        if (acc) {
            acc[base + PTM_CH_REGION0 + r] += mult;
        }
    }
    if (acc) {
        acc[base + PTM_CH_ITEMS] += items * mult;
    }
    return open;
}

/* Everything of a segment that does not depend on the frame-open state. */
static void count_stateless(const PtmProbeShape *sh, PtmCountState *st,
                            const PtmSegment *seg, uint64_t *acc, uint64_t n,
                            uint32_t lanes)
{
    unsigned regions = sh->info.regions;
    unsigned rmask = (1u << regions) - 1;

    if (lanes & PTM_LANE_SIDE) {
        acc[0] += n;
    }
    for (unsigned b = 0; b < sh->info.buses; b++) {
        const PtmBusCycle *bc = &seg->bus[b];
        unsigned base = ptm_ch_bus(regions, b, 0);
        bool moves = bc->src_rdy && bc->dst_rdy;

        if (!(lanes >> b & 1)) {
            continue;
        }
        if (moves) {
            acc[base + PTM_CH_WORDS] += n;
            acc[base + PTM_CH_SOF] += popcount16(bc->sof & rmask) * n;
        } else if (bc->src_rdy) {
            acc[base + PTM_CH_STALL] += n;
        }
        if (sh->info.domain == PTM_DOMAIN_PCIE) {
            continue;       /* the PCIe side has no MVB inputs */
        }
        if (bc->mvb_src_rdy && bc->mvb_dst_rdy) {
            acc[base + PTM_CH_MVB] += popcount16(bc->mvb_vld & rmask) * n;
        } else if (bc->mvb_src_rdy) {
            acc[base + PTM_CH_MVB_STALL] += n;
        }
    }
    if (sh->brakes && (lanes & PTM_LANE_SIDE)) {
        unsigned base = 1 + sh->info.buses * (6 + regions);
        uint16_t tag = seg->tag_free & 0x7FF;

        for (unsigned k = 0; k < PTM_BRAKES; k++) {
            if (seg->brake >> k & 1) {
                acc[base + k] += n;
            }
        }
        acc[base + PTM_BRAKES + ptm_band(tag, sh->tag_capacity)] += n;
        acc[base + PTM_BRAKES + PTM_HIST_BANDS +
            ptm_band(seg->stfifo_free, sh->stfifo_capacity)] += n;
        if (tag < st->tag_min) {
            st->tag_min = tag;
        }
        if (seg->stfifo_free < st->stfifo_min) {
            st->stfifo_min = seg->stfifo_free;
        }
        st->tag_last = tag;
        st->stfifo_last = seg->stfifo_free;
        st->link_last = seg->link_up ? 1 : 0;
    }
}

void ptm_count_cycle(const PtmProbeShape *sh, PtmCountState *st,
                     const PtmSegment *cyc, uint64_t *acc)
{
    count_stateless(sh, st, cyc, acc, 1, PTM_LANES_ALL);
    for (unsigned b = 0; b < sh->info.buses; b++) {
        const PtmBusCycle *bc = &cyc->bus[b];

        if (bc->src_rdy && bc->dst_rdy) {
            unsigned open = bus_word(sh, b, bc, st->open >> b & 1, acc, 1);
            st->open = (st->open & ~(1u << b)) | open << b;
        }
    }
}

void ptm_count_chunk_reference(const PtmProbeShape *sh, PtmCountState *st,
                               const PtmChunk *ch, uint64_t *acc)
{
    for (uint64_t rep = 0; rep < ch->repeat; rep++) {
        for (unsigned i = 0; i < ch->nseg; i++) {
            for (uint64_t c = 0; c < ch->seg[i].cycles; c++) {
                ptm_count_cycle(sh, st, &ch->seg[i], acc);
            }
        }
    }
}

/* n identical cycles of a segment. */
static void count_segment(const PtmProbeShape *sh, PtmCountState *st,
                          const PtmSegment *seg, uint64_t *acc, uint32_t lanes)
{
    uint64_t n = seg->cycles;

    count_stateless(sh, st, seg, acc, n, lanes);
    for (unsigned b = 0; b < sh->info.buses; b++) {
        const PtmBusCycle *bc = &seg->bus[b];
        unsigned s0, s1, s2, out;
        uint64_t rem = n - 1;

        if (!(bc->src_rdy && bc->dst_rdy && (lanes >> b & 1))) {
            continue;
        }
        s0 = st->open >> b & 1;
        s1 = bus_word(sh, b, bc, s0, acc, 1);
        out = s1;
        if (rem) {
            s2 = bus_word(sh, b, bc, s1, NULL, 0);
            if (s2 == s1) {
                bus_word(sh, b, bc, s1, acc, rem);
            } else {
                /* the state alternates s1, s2, s1, ... */
                bus_word(sh, b, bc, s1, acc, (rem + 1) / 2);
                bus_word(sh, b, bc, s2, acc, rem / 2);
                out = (rem & 1) ? s2 : s1;
            }
        }
        st->open = (st->open & ~(1u << b)) | out << b;
    }
}

static void count_pass(const PtmProbeShape *sh, PtmCountState *st,
                       const PtmChunk *ch, uint64_t *acc, uint32_t lanes)
{
    for (unsigned i = 0; i < ch->nseg; i++) {
        count_segment(sh, st, &ch->seg[i], acc, lanes);
    }
}

void ptm_count_pass(const PtmProbeShape *sh, PtmCountState *st,
                    const PtmChunk *ch, uint64_t *acc)
{
    count_pass(sh, st, ch, acc, PTM_LANES_ALL);
}

void ptm_count_repeat(unsigned nch, PtmCountState *st, uint64_t *acc,
                      uint64_t repeat, PtmCountPass pass, void *opaque)
{
    uint64_t d1[256], d2[256];
    uint64_t rem;
    uint32_t s0, s1, s2;

    if (repeat <= 1) {
        pass(opaque, st, acc);
        return;
    }
    /*
     * Every bus maps its open bit through a pass by a constant, the
     * identity or a negation, so the joint state repeats with period 1 or
     * 2 from the second pass on; when the first pass ends where it began,
     * every pass is the same.
     */
    s0 = st->open;
    memset(d1, 0, nch * sizeof(d1[0]));
    pass(opaque, st, d1);
    s1 = st->open;
    if (s1 == s0) {
        for (unsigned c = 0; c < nch; c++) {
            acc[c] += d1[c] * repeat;
        }
        return;
    }
    for (unsigned c = 0; c < nch; c++) {
        acc[c] += d1[c];
    }
    rem = repeat - 1;
    memset(d1, 0, nch * sizeof(d1[0]));
    pass(opaque, st, d1);
    if (st->open == s1) {
        for (unsigned c = 0; c < nch; c++) {
            acc[c] += d1[c] * rem;
        }
        return;
    }
    s2 = st->open;
    memset(d2, 0, nch * sizeof(d2[0]));
    pass(opaque, st, d2);       /* ends in state s1 again */
    for (unsigned c = 0; c < nch; c++) {
        acc[c] += d1[c] * ((rem + 1) / 2) + d2[c] * (rem / 2);
    }
    /* an odd number of passes from s1 ends in s2 */
    st->open = (rem & 1) ? s2 : s1;
}

typedef struct ChunkPass {
    const PtmProbeShape *sh;
    const PtmChunk *ch;
    uint32_t lanes;
} ChunkPass;

static void chunk_pass(void *opaque, PtmCountState *st, uint64_t *acc)
{
    const ChunkPass *cp = opaque;

    count_pass(cp->sh, st, cp->ch, acc, cp->lanes);
}

void ptm_count_chunk_lanes(const PtmProbeShape *sh, PtmCountState *st,
                           const PtmChunk *ch, uint64_t *acc, uint32_t lanes)
{
    ChunkPass cp = { .sh = sh, .ch = ch, .lanes = lanes };

    ptm_count_repeat(sh->channels, st, acc, ch->repeat, chunk_pass, &cp);
}

void ptm_count_chunk(const PtmProbeShape *sh, PtmCountState *st,
                     const PtmChunk *ch, uint64_t *acc)
{
    ptm_count_chunk_lanes(sh, st, ch, acc, PTM_LANES_ALL);
}
