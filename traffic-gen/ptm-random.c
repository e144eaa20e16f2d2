/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The random generator: seeded random frames on every bus that keep the
 * MFB and MVB rules (a frame starts in region 0 of a word, one SOF and one
 * EOF per region at most, a stalled word is held, MVB items count only with
 * their handshake).
 *
 * Time is cut into blocks of RANDOM_BLOCK_WINDOWS x DRAIN_PERIOD cycles
 * counted from cycle 0. In each block every bus draws a fresh random
 * schedule for a period of P cycles (P a power of two, at least 64 and two
 * of the longest frames, at most DRAIN_PERIOD) from the seed, the probe,
 * the bus and the block number, and plays it through the block. Frames
 * never cross a period's end. So the traffic changes from block to block
 * while one block costs a few dozen segments and is counted in closed
 * form, and the same seed always gives the same signals.
 */
#include <glib.h>
#include <string.h>

#include "ptm-count.h"
#include "ptm-random.h"
#include "ptm-pattern.h"

#define RUNS_MAX 512
/* Drain windows of one random decision (a block, 1 M PCIe cycles by default) */
#define RANDOM_BLOCK_WINDOWS 256

void ptm_random_params_default(PtmRandomParams *p)
{
    static const uint32_t load[PTM_BUS_KINDS] = { 70, 45, 60, 45 };

    memset(p, 0, sizeof(*p));
    p->seed = 1;
    p->link_up = true;
    p->tags_free = -1;
    p->stfifo_free = -1;
    p->up_read_percent = 50;
    for (unsigned k = 0; k < PTM_BUS_KINDS; k++) {
        p->bus[k].load = load[k];
        p->bus[k].min_bytes = 64;
        p->bus[k].max_bytes = 512;
        p->bus[k].stall = 5;
    }
}

static char *random_check(const void *params, const PtmGeometry *geo)
{
    const PtmRandomParams *p = params;
    static const char *const nm[] = { "rq", "rc", "up", "down" };

    for (unsigned k = 0; k < PTM_BUS_KINDS; k++) {
        if (p->bus[k].min_bytes > p->bus[k].max_bytes) {
            return g_strdup_printf("%s-min-bytes (%u) is above %s-max-bytes "
                                   "(%u)", nm[k], p->bus[k].min_bytes, nm[k],
                                   p->bus[k].max_bytes);
        }
    }
    return NULL;
}

/* uniform in [lo, hi] */
static uint32_t rng_range(PtmRng *r, uint32_t lo, uint32_t hi)
{
    return lo + (uint32_t)(ptm_rng_next(r) % ((uint64_t)hi - lo + 1));
}

static bool rng_percent(PtmRng *r, uint32_t pct)
{
    return ptm_rng_next(r) % 100 < pct;
}

/* A run of identical cycles of one bus. */
typedef struct Run {
    uint32_t cycles;
    PtmBusCycle bc;
} Run;

typedef struct BusPlan {
    unsigned n;
    Run run[RUNS_MAX];
} BusPlan;

static void plan_add(BusPlan *pl, uint32_t cycles, const PtmBusCycle *bc)
{
    if (cycles == 0) {
        return;
    }
    if (pl->n && !memcmp(&pl->run[pl->n - 1].bc, bc, sizeof(*bc))) {
        pl->run[pl->n - 1].cycles += cycles;
    } else if (pl->n < RUNS_MAX) {
        pl->run[pl->n].cycles = cycles;
        pl->run[pl->n].bc = *bc;
        pl->n++;
    } else {
        pl->run[pl->n - 1].cycles += cycles;    /* cannot happen: P bounds */
    }
}

/* The schedule of one bus for one period of P cycles. */
static void plan_bus(const PtmRandomParams *p, const PtmGeometry *geo,
                     unsigned kind, bool mvb, unsigned ipr, unsigned regions,
                     uint32_t period, PtmRng *r, BusPlan *pl)
{
    const PtmRandomBus *b = &p->bus[kind];
    unsigned ib = geo->item_bytes;
    uint32_t t = 0, offered = 0;
    uint32_t budget = (uint32_t)((uint64_t)period * b->load / 100);
    PtmBusCycle idle = { 0 };

    pl->n = 0;
    while (t < period && offered < budget) {
        uint32_t bytes = rng_range(r, b->min_bytes, b->max_bytes);
        uint32_t used = 0, gap;
        PtmFrame f;
        bool read = kind == PTM_BUS_UP && rng_percent(r, p->up_read_percent);
        PtmBusCycle bc;

        if (read) {
            /* a read request: its header on the MVB, no payload */
            if (t + 1 > period) {
                break;
            }
            memset(&bc, 0, sizeof(bc));
            bc.mvb_vld = 1;
            bc.mvb_src_rdy = 1;
            bc.mvb_dst_rdy = 1;
            plan_add(pl, 1, &bc);
            t++;
            offered++;
            used = 1;
        } else {
            ptm_frame_shape(bytes, ib, ipr, regions, &f);
            /*
             * worst case every word stalls once; near the period's end a
             * shorter frame is drawn, if the shortest one still fits
             */
            if (t + 2 * f.words > period) {
                uint32_t fit = (period - t) / 2 * regions * ipr * ib;

                if (fit < b->min_bytes) {
                    break;
                }
                bytes = rng_range(r, b->min_bytes, MIN(fit, b->max_bytes));
                ptm_frame_shape(bytes, ib, ipr, regions, &f);
            }
            for (uint32_t j = 0; j < f.words; j++) {
                memset(&bc, 0, sizeof(bc));
                bc.src_rdy = 1;
                ptm_frame_word(&f, j, mvb ? 1 : 0, &bc);
                if (rng_percent(r, b->stall)) {
                    plan_add(pl, 1, &bc);           /* held, not taken */
                    used++;
                }
                bc.dst_rdy = 1;
                bc.mvb_dst_rdy = bc.mvb_src_rdy;
                plan_add(pl, 1, &bc);
                used++;
            }
            t += used;
            offered += used;
        }
        /* an idle gap that keeps the offered share near the load */
        gap = b->load ? used * (100 - b->load) / b->load : period;
        gap = rng_range(r, 0, 2 * gap);
        gap = MIN(gap, period - t);
        plan_add(pl, gap, &idle);
        t += gap;
    }
    plan_add(pl, period - t, &idle);
}

/* Everything one probe plays in one block. */
typedef struct BlockPlan {
    bool valid;
    unsigned endpoint;
    PtmDomain domain;
    uint64_t block;
    PtmRandomParams params;     /* the values it was made with */
    uint32_t period;
    PtmChunk chunk;             /* one period, repeat 1 */
    PtmSegment segs[PTM_CHUNK_SEGMENTS];
} BlockPlan;

/*
 * Two plans per probe: a window that straddles two blocks asks for both,
 * one after the other.
 */
typedef struct RandomCache {
    BlockPlan plan[2 * PTM_MAX_ENDPOINTS][2];
    BusPlan bus[PTM_MAX_BUSES];
} RandomCache;

static uint32_t period_for(const PtmRandomParams *p, const PtmGeometry *geo,
                           const PtmProbeInfo *probe)
{
    uint32_t longest = 1, period = 64;

    for (unsigned b = 0; b < probe->buses; b++) {
        unsigned kind = ptm_pattern_bus_kind(probe, b);
        PtmFrame f;

        ptm_frame_shape(p->bus[kind].max_bytes, geo->item_bytes,
                        probe->bus_items[b], probe->bus_regions[b], &f);
        longest = MAX(longest, 2 * f.words + 1);
    }
    while (period < 2 * longest && period < geo->drain_period) {
        period *= 2;
    }
    return MIN(period, geo->drain_period);
}

static void make_plan(const PtmGen *gen, const PtmRandomParams *p,
                      const PtmProbeInfo *probe, uint64_t block,
                      RandomCache *c, BlockPlan *bp)
{
    const PtmGeometry *geo = &gen->geo;
    uint32_t period = period_for(p, geo, probe);
    unsigned idx[PTM_MAX_BUSES] = { 0 };
    uint32_t left[PTM_MAX_BUSES];
    uint32_t brake_on[PTM_BRAKES];
    PtmRng r;
    uint32_t t = 0;
    unsigned tags, words;
    PtmChunk *ch = &bp->chunk;

    ch->seg = bp->segs;

    for (unsigned b = 0; b < probe->buses; b++) {
        unsigned kind = ptm_pattern_bus_kind(probe, b);

        r.s = ptm_hash(p->seed, probe->endpoint, probe->domain * 64 + b, block);
        plan_bus(p, geo, kind, probe->domain == PTM_DOMAIN_DMA,
                 probe->bus_items[b], probe->bus_regions[b], period, &r,
                 &c->bus[b]);
        left[b] = c->bus[b].run[0].cycles;
    }
    r.s = ptm_hash(p->seed, probe->endpoint, 1000, block);
    tags = p->tags_free >= 0 ? (unsigned)p->tags_free
                             : rng_range(&r, 0, MIN(geo->tag_capacity, 0x7FF));
    words = p->stfifo_free >= 0 ? (unsigned)p->stfifo_free
                                : rng_range(&r, 0, geo->stfifo_capacity);
    for (unsigned k = 0; k < PTM_BRAKES; k++) {
        brake_on[k] = period * rng_range(&r, 0, p->brake_percent) / 100;
    }

    /* merge the buses' runs into segments of the whole probe */
    ch->nseg = 0;
    ch->repeat = 1;
    while (t < period && ch->nseg < PTM_CHUNK_SEGMENTS) {
        PtmSegment *s = &ch->seg[ch->nseg++];
        uint32_t run = period - t;

        s->brake = 0;
        for (unsigned k = 0; k < PTM_BRAKES; k++) {
            if (t < brake_on[k]) {
                s->brake |= 1u << k;
                run = MIN(run, brake_on[k] - t);
            } else if (brake_on[k] > t) {
                run = MIN(run, brake_on[k] - t);
            }
        }
        s->tag_free = tags;
        s->stfifo_free = words;
        s->link_up = p->link_up;
        for (unsigned b = 0; b < probe->buses; b++) {
            s->bus[b] = c->bus[b].run[idx[b]].bc;
            run = MIN(run, left[b]);
        }
        s->cycles = run;
        t += run;
        for (unsigned b = 0; b < probe->buses; b++) {
            left[b] -= run;
            if (left[b] == 0 && idx[b] + 1 < c->bus[b].n) {
                idx[b]++;
                left[b] = c->bus[b].run[idx[b]].cycles;
            }
        }
    }
    /* too many segments for one chunk: the rest of the period idles */
    if (t < period) {
        ch->seg[ch->nseg - 1].cycles += period - t;
        memset(ch->seg[ch->nseg - 1].bus, 0, sizeof(ch->seg[0].bus));
    }
    bp->valid = true;
    bp->endpoint = probe->endpoint;
    bp->domain = probe->domain;
    bp->block = block;
    bp->params = *p;
    bp->period = period;
}

/* The plan of a probe's block, made when first asked for. */
static const BlockPlan *plan_at(PtmGen *g, const PtmRandomParams *p,
                                const PtmProbeInfo *probe, uint64_t block)
{
    RandomCache *c;
    BlockPlan *bp;

    if (!g->cache) {
        g->cache = g_new0(RandomCache, 1);
    }
    c = g->cache;
    /* (by the block's parity: neighbours never evict each other) */
    bp = &c->plan[probe->endpoint * 2 + probe->domain][block & 1];
    if (!bp->valid || bp->block != block ||
        memcmp(&bp->params, p, sizeof(*p))) {
        make_plan(g, p, probe, block, c, bp);
    }
    return bp;
}

static uint64_t random_fill(const PtmGen *gen, const void *params,
                            const PtmProbeInfo *probe, uint64_t start,
                            uint64_t max, PtmChunk *out)
{
    PtmGen *g = (PtmGen *)gen;      /* the cache is derived data only */
    const PtmRandomParams *p = params;
    uint64_t blen = (uint64_t)gen->geo.drain_period * RANDOM_BLOCK_WINDOWS;
    uint64_t in_block = start % blen;
    const BlockPlan *bp = plan_at(g, p, probe, start / blen);

    max = MIN(max, blen - in_block);
    return ptm_serve_periodic(bp->chunk.seg, bp->chunk.nseg, bp->period,
                              in_block % bp->period, max, 0, out);
}

/* A block's period as one chunk played as often as it fits: O(segments). */
static bool random_count(const PtmGen *gen, const void *params,
                         const PtmProbeShape *sh, uint64_t start, uint64_t end,
                         PtmCountState *st, uint64_t *acc)
{
    PtmGen *g = (PtmGen *)gen;
    const PtmRandomParams *p = params;
    uint64_t blen = (uint64_t)gen->geo.drain_period * RANDOM_BLOCK_WINDOWS;
    PtmSegment cut;
    PtmChunk ch = { .scratch = &cut };

    while (start < end) {
        const BlockPlan *bp = plan_at(g, p, &sh->info, start / blen);
        uint64_t stop = MIN(end, start - start % blen + blen);
        uint64_t whole;

        if (start % bp->period == 0 &&
            (whole = (stop - start) / bp->period) > 0) {
            ch.seg = bp->chunk.seg;
            ch.nseg = bp->chunk.nseg;
            ch.repeat = whole;
            ptm_count_chunk(sh, st, &ch, acc);
            start += whole * bp->period;
            continue;
        }
        start += ptm_serve_periodic(bp->chunk.seg, bp->chunk.nseg, bp->period,
                                    start % bp->period, stop - start, 0, &ch);
        ptm_count_chunk(sh, st, &ch, acc);
    }
    return true;
}

/*
 * A block plays its plan's period over and over: the block is the span
 * of the period (within the parameters' own), named by its number.
 */
static uint64_t random_period(const PtmGen *gen, const void *params,
                              const PtmProbeInfo *probe, uint64_t cycle,
                              uint64_t *from, uint64_t *until, uint64_t *id)
{
    const PtmRandomParams *p = params;
    uint64_t blen = (uint64_t)gen->geo.drain_period * RANDOM_BLOCK_WINDOWS;
    uint64_t start = cycle - cycle % blen;

    *from = MAX(*from, start);
    *until = MIN(*until, start + blen);
    *id = ptm_hash(p->seed, probe->endpoint, probe->domain, cycle / blen);
    return period_for(p, &gen->geo, probe);
}

static void random_cache_free(void *cache)
{
    g_free(cache);
}

#define OFF(f) offsetof(PtmRandomParams, f)
#define LOAD(nm, k)                                                         \
    { #nm "-load", PTM_PARAM_U32, OFF(bus[k].load), 0, 100,                  \
      "percent of cycles the " #nm " source offers words" }
#define MINB(nm, k)                                                         \
    { #nm "-min-bytes", PTM_PARAM_U32, OFF(bus[k].min_bytes), 1, 65536,      \
      "shortest frame on the " #nm " bus" }
#define MAXB(nm, k)                                                         \
    { #nm "-max-bytes", PTM_PARAM_U32, OFF(bus[k].max_bytes), 1, 65536,      \
      "longest frame on the " #nm " bus" }
#define STALL(nm, k)                                                        \
    { #nm "-stall", PTM_PARAM_U32, OFF(bus[k].stall), 0, 100,                \
      "percent of words that wait a cycle on the " #nm " bus" }

static const PtmParamDesc random_params[] = {
    { "seed", PTM_PARAM_U32, OFF(seed), 0, UINT32_MAX, "random seed" },
    { "link-up", PTM_PARAM_BOOL, OFF(link_up), 0, 1, "PCIe link up" },
    { "tags-free", PTM_PARAM_I32, OFF(tags_free), -1, 2047,
      "free PCIe tags (-1: random per decision block)" },
    { "stfifo-free", PTM_PARAM_I32, OFF(stfifo_free), -1, 65535,
      "free storage FIFO words (-1: random per decision block)" },
    { "brake-percent", PTM_PARAM_U32, OFF(brake_percent), 0, 100,
      "each BRAKE bit is active for up to this share of the cycles" },
    { "up-read-percent", PTM_PARAM_U32, OFF(up_read_percent), 0, 100,
      "percent of UP requests that are reads (MVB header only)" },
    LOAD(rq, PTM_BUS_RQ), MINB(rq, PTM_BUS_RQ), MAXB(rq, PTM_BUS_RQ),
    STALL(rq, PTM_BUS_RQ),
    LOAD(rc, PTM_BUS_RC), MINB(rc, PTM_BUS_RC), MAXB(rc, PTM_BUS_RC),
    STALL(rc, PTM_BUS_RC),
    LOAD(up, PTM_BUS_UP), MINB(up, PTM_BUS_UP), MAXB(up, PTM_BUS_UP),
    STALL(up, PTM_BUS_UP),
    LOAD(down, PTM_BUS_DOWN), MINB(down, PTM_BUS_DOWN),
    MAXB(down, PTM_BUS_DOWN), STALL(down, PTM_BUS_DOWN),
};
#undef OFF

static void random_defaults(void *params)
{
    ptm_random_params_default(params);
}

const PtmGenModel ptm_model_random = {
    .name = "random",
    .summary = "seeded random frames within the bus rules",
    .params_size = sizeof(PtmRandomParams),
    .params = random_params,
    .nparams = G_N_ELEMENTS(random_params),
    .defaults = random_defaults,
    .check = random_check,
    .fill = random_fill,
    .count = random_count,
    .period = random_period,
    .cache_free = random_cache_free,
};
