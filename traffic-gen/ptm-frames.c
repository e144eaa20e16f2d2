/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A traffic source's frames one by one (ptm-frames.h).
 */
#include <glib.h>
#include <string.h>

#include "ptm-frames.h"

/* Cycles a call walks one by one at most (a source's odd segments) */
#define PTM_FRAMES_CYCLE_CAP    (1u << 20)

struct PtmFrameWalk {
    PtmProbeShape sh;
    unsigned item_bytes;
    uint64_t done;
    bool open[PTM_FRAME_BUSES];
    uint64_t items[PTM_FRAME_BUSES];
    uint64_t start[PTM_FRAME_BUSES];
    PtmChunk *ch;
};

PtmFrameWalk *ptm_frames_new(const PtmProbeShape *sh, unsigned item_bytes,
                             uint64_t start)
{
    PtmFrameWalk *w = g_new0(PtmFrameWalk, 1);

    w->sh = *sh;
    w->item_bytes = item_bytes;
    w->done = start;
    w->ch = ptm_chunk_new();
    return w;
}

void ptm_frames_free(PtmFrameWalk *w)
{
    if (w) {
        ptm_chunk_free(w->ch);
        g_free(w);
    }
}

uint64_t ptm_frames_done(const PtmFrameWalk *w)
{
    return w->done;
}

void ptm_frames_skip(PtmFrameWalk *w, uint64_t end)
{
    if (end > w->done) {
        w->done = end;
        memset(w->open, 0, sizeof(w->open));
        memset(w->items, 0, sizeof(w->items));
    }
}

static unsigned regions_of(const PtmFrameWalk *w, unsigned b)
{
    unsigned r = w->sh.info.bus_regions[b];

    return r ? r : w->sh.info.regions;
}

/* Does the bus do anything but carry an open frame on in this cycle? */
static bool bus_marks(const PtmFrameWalk *w, unsigned b, const PtmBusCycle *bc)
{
    unsigned mask = (1u << regions_of(w, b)) - 1;

    return bc->src_rdy && bc->dst_rdy && ((bc->sof | bc->eof) & mask);
}

/*
 * One cycle c of a segment on both buses, as ptm_count_cycle() reads it;
 * the frames it closes go to out. Returns how many.
 */
static unsigned walk_cycle(PtmFrameWalk *w, const PtmSegment *seg,
                           uint64_t c, PtmLinkFrame *out)
{
    unsigned n = 0;

    for (unsigned b = 0; b < PTM_FRAME_BUSES; b++) {
        const PtmBusCycle *bc = &seg->bus[b];

        if (!(bc->src_rdy && bc->dst_rdy)) {
            continue;
        }
        for (unsigned r = 0; r < regions_of(w, b); r++) {
            bool sof = bc->sof >> r & 1, eof = bc->eof >> r & 1;

            if (!(w->open[b] || sof)) {
                continue;
            }
            if (sof) {
                /* a new frame here (an unfinished one is dropped) */
                w->items[b] = 0;
                w->start[b] = c;
            }
            if (eof) {
                w->items[b] += (bc->eof_pos[r] & w->sh.eof_pos_mask) + 1;
                out[n++] = (PtmLinkFrame) {
                    .bus = b, .sof_cycle = w->start[b], .eof_cycle = c,
                    .bytes = w->items[b] * w->item_bytes,
                };
                w->open[b] = false;
                w->items[b] = 0;
            } else {
                w->items[b] += w->sh.info.bus_items[b];
                w->open[b] = true;
            }
        }
    }
    return n;
}

size_t ptm_frames_walk(PtmFrameWalk *w, const PtmSourceOps *ops,
                       void *opaque, uint64_t end, PtmLinkFrame *out,
                       size_t max)
{
    PtmLinkFrame cyc[PTM_FRAME_BUSES * PTM_MAX_REGIONS];
    uint64_t stepped = 0;
    size_t n = 0;

    while (w->done < end && ops && ops->fill) {
        PtmChunk *ch = w->ch;
        uint64_t c = w->done, got = 0;

        ch->seg = ch->scratch;
        ch->repeat = 1;
        ch->nseg = 0;
        ch->id = 0;
        ops->fill(opaque, &w->sh.info, c, end - c, ch);
        for (unsigned i = 0; i < ch->nseg; i++) {
            got += ch->seg[i].cycles;
        }
        if (!got || got * ch->repeat > end - c) {
            w->done = end;          /* a source that describes nothing */
            break;
        }
        for (uint64_t rep = 0; rep < ch->repeat; rep++) {
            for (unsigned i = 0; i < ch->nseg; i++) {
                const PtmSegment *seg = &ch->seg[i];
                bool marks = bus_marks(w, 0, &seg->bus[0]) ||
                             bus_marks(w, 1, &seg->bus[1]);

                if (!marks) {
                    /* open frames grow by whole words; nothing closes */
                    for (unsigned b = 0; b < PTM_FRAME_BUSES; b++) {
                        const PtmBusCycle *bc = &seg->bus[b];

                        if (w->open[b] && bc->src_rdy && bc->dst_rdy) {
                            w->items[b] += (uint64_t)regions_of(w, b) *
                                           w->sh.info.bus_items[b] *
                                           seg->cycles;
                        }
                    }
                    w->done += seg->cycles;
                    continue;
                }
                for (uint64_t k = 0; k < seg->cycles; k++) {
                    PtmFrameWalk keep = *w;
                    unsigned m = walk_cycle(w, seg, w->done, cyc);

                    if (n + m > max || stepped >= PTM_FRAMES_CYCLE_CAP) {
                        *w = keep;  /* this cycle waits for the next call */
                        return n;
                    }
                    memcpy(&out[n], cyc, m * sizeof(cyc[0]));
                    n += m;
                    w->done++;
                    stepped++;
                }
            }
        }
    }
    return n;
}
