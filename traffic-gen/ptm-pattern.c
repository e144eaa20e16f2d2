/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pattern source. A chunk is one joint period of all buses of a probe
 * (the least common multiple of their periods), played as often as fits;
 * when that period is too long for one chunk, the chunk is a plain run of
 * segments.
 */
#include <glib.h>
#include <string.h>

#include "ptm-count.h"
#include "ptm-pattern.h"

#define MAX_JOINT_PERIOD (1u << 20)

void ptm_pattern_params_default(PtmPatternParams *par)
{
    memset(par, 0, sizeof(*par));
    par->link_up = true;
    par->tags_free = -1;
    par->stfifo_free = -1;
    par->brake_duty = 100;
    par->brake_period = 64;
    for (unsigned k = 0; k < PTM_BUS_KINDS; k++) {
        par->bus[k].mvb_items = 1;
    }
}

char *ptm_pattern_check(const PtmPatternParams *par, const PtmGeometry *geo)
{
    if (par->tags_free > 0x7FF) {
        return g_strdup_printf("tags-free is %d, allowed: -1 (capacity) or "
                               "0 to 2047", par->tags_free);
    }
    if (par->stfifo_free > 0xFFFF) {
        return g_strdup_printf("stfifo-free is %d, allowed: -1 (capacity) "
                               "or 0 to 65535", par->stfifo_free);
    }
    if (par->brake > 0x3F) {
        return g_strdup_printf("brake is 0x%x, allowed: 0 to 0x3f",
                               par->brake);
    }
    for (unsigned k = 0; k < PTM_BUS_KINDS; k++) {
        const PtmPatternBus *b = &par->bus[k];
        unsigned regions = k == PTM_BUS_UP ? geo->up_regions
                                           : geo->down_regions;

        if (b->frame_bytes > 65536 || b->gap > 65536 || b->stall > 65536) {
            return g_strdup("frame bytes, gap and stall are limited to "
                            "65536");
        }
        if (k >= PTM_BUS_UP && (b->mvb_items < 1 || b->mvb_items > regions)) {
            return g_strdup_printf("%s-mvb-items is %u, allowed: 1 to %u "
                                   "(the regions of the bus)",
                                   k == PTM_BUS_UP ? "up" : "down",
                                   b->mvb_items, regions);
        }
    }
    if (par->brake_duty > 100 || par->brake_period < 1) {
        return g_strdup("brake-duty is a percentage and brake-period at "
                        "least 1");
    }
    return NULL;
}

void ptm_pattern_init(PtmPattern *pat, const PtmPatternParams *par,
                      const PtmGeometry *geo)
{
    pat->par = *par;
    pat->geo = *geo;
}

unsigned ptm_pattern_bus_kind(const PtmProbeInfo *probe, unsigned b)
{
    if (probe->domain == PTM_DOMAIN_PCIE) {
        return b ? PTM_BUS_RC : PTM_BUS_RQ;
    }
    return (b & 1) ? PTM_BUS_DOWN : PTM_BUS_UP;
}

/* The shape of one bus's frame. */
typedef struct BusShape {
    bool active;
    uint32_t mvb_items;             /* 0 on the PCIe side */
    uint64_t period;
    uint32_t stall, words, gap;
    PtmFrame frame;
} BusShape;

static void bus_shape(const PtmPattern *pat, const PtmProbeInfo *probe,
                      unsigned b, BusShape *bs)
{
    const PtmPatternBus *pb = &pat->par.bus[ptm_pattern_bus_kind(probe, b)];
    unsigned ib = pat->geo.item_bytes;

    memset(bs, 0, sizeof(*bs));
    bs->period = 1;
    if (pb->frame_bytes == 0) {
        return;
    }
    bs->active = true;
    bs->mvb_items = probe->domain == PTM_DOMAIN_DMA ? MAX(pb->mvb_items, 1)
                                                    : 0;
    ptm_frame_shape(pb->frame_bytes, ib, probe->bus_items[b],
                    probe->bus_regions[b], &bs->frame);
    bs->words = bs->frame.words;
    bs->stall = pb->stall;
    bs->gap = pb->gap;
    bs->period = (uint64_t)bs->stall + bs->words + bs->gap;
}

/*
 * Signals of the bus at cycle t; returns how many cycles from t on they
 * stay the same (UINT64_MAX for an idle bus).
 */
static uint64_t bus_at(const BusShape *bs, uint64_t t, PtmBusCycle *bc)
{
    uint64_t ph;

    memset(bc, 0, sizeof(*bc));
    if (!bs->active) {
        return UINT64_MAX;
    }
    ph = t % bs->period;
    if (ph < bs->stall) {
        ptm_frame_word(&bs->frame, 0, bs->mvb_items, bc);
        bc->src_rdy = 1;
        return bs->stall - ph;
    }
    ph -= bs->stall;
    if (ph < bs->words) {
        uint32_t j = ph;

        ptm_frame_word(&bs->frame, j, bs->mvb_items, bc);
        bc->src_rdy = 1;
        bc->dst_rdy = 1;
        if (bc->mvb_src_rdy) {
            bc->mvb_dst_rdy = 1;
        }
        if (j > 0 && j + 1 < bs->words) {
            return bs->words - 1 - j;   /* the middle words are alike */
        }
        return 1;
    }
    return bs->words + bs->gap - ph;
}

/* Segments for [t, t + len); returns the cycles covered (may be less). */
static uint64_t emit(const PtmPattern *pat, const PtmProbeInfo *probe,
                     const BusShape *bs, uint64_t t, uint64_t len,
                     PtmChunk *out)
{
    const PtmPatternParams *par = &pat->par;
    unsigned tags = par->tags_free < 0 ? MIN(pat->geo.tag_capacity, 0x7FFu)
                                       : (unsigned)par->tags_free;
    unsigned words = par->stfifo_free < 0 ? pat->geo.stfifo_capacity
                                          : (unsigned)par->stfifo_free;
    uint64_t on = (uint64_t)par->brake_period * par->brake_duty / 100;
    uint64_t done = 0;

    out->nseg = 0;
    while (done < len && out->nseg < PTM_CHUNK_SEGMENTS) {
        PtmSegment *s = &out->seg[out->nseg++];
        uint64_t run = len - done;

        s->brake = 0;
        if (probe->domain == PTM_DOMAIN_PCIE && par->brake) {
            /* on for the first `on` cycles of every brake period */
            uint64_t ph = (t + done) % par->brake_period;

            if (ph < on) {
                s->brake = par->brake;
                run = on < par->brake_period ? MIN(run, on - ph) : run;
            } else {
                run = MIN(run, par->brake_period - ph);
            }
        }
        s->link_up = pat->par.link_up;
        s->tag_free = tags;
        s->stfifo_free = words;
        for (unsigned b = 0; b < probe->buses; b++) {
            run = MIN(run, bus_at(&bs[b], t + done, &s->bus[b]));
        }
        s->cycles = run;
        done += run;
    }
    return done;
}

static uint64_t pattern_fill(void *opaque, const PtmProbeInfo *probe,
                             uint64_t start, uint64_t max, PtmChunk *out)
{
    const PtmPattern *pat = opaque;
    BusShape bs[PTM_MAX_BUSES];
    uint64_t joint = 1, got;

    for (unsigned b = 0; b < probe->buses; b++) {
        bus_shape(pat, probe, b, &bs[b]);
        if (joint <= MAX_JOINT_PERIOD) {
            joint = joint / ptm_gcd64(joint, bs[b].period) * bs[b].period;
        }
    }
    if (probe->domain == PTM_DOMAIN_PCIE && pat->par.brake &&
        pat->par.brake_duty > 0 && pat->par.brake_duty < 100) {
        uint64_t bp = pat->par.brake_period;

        joint = joint / ptm_gcd64(joint, bp) * bp;
    }
    out->repeat = 1;
    if (joint <= max && joint <= MAX_JOINT_PERIOD) {
        got = emit(pat, probe, bs, start, joint, out);
        if (got == joint) {
            out->repeat = max / joint;
            return joint * out->repeat;
        }
    }
    return emit(pat, probe, bs, start, max, out);
}

/*
 * One period of a lane on its own: bus b's stall, frame and gap, or for
 * the side lane (b = buses) one period of the BRAKE bits with the constant
 * link, tags and storage FIFO. Returns the segments; *period their cycles.
 */
static unsigned lane_period(const PtmPattern *pat, const PtmProbeInfo *probe,
                            unsigned b, PtmSegment *seg, uint64_t *period)
{
    const PtmPatternParams *par = &pat->par;
    unsigned n = 0;

    if (b < probe->buses) {
        BusShape bs;
        uint64_t t = 0;

        bus_shape(pat, probe, b, &bs);
        *period = bs.period;
        do {
            PtmBusCycle bc;
            uint64_t run = MIN(bus_at(&bs, t, &bc), bs.period - t);

            memset(&seg[n], 0, sizeof(seg[n]));
            seg[n].cycles = run;
            seg[n].bus[b] = bc;
            n++;
            t += run;
        } while (t < bs.period);
        return n;
    }
    *period = 1;
    memset(seg, 0, 2 * sizeof(seg[0]));
    seg[0].link_up = seg[1].link_up = par->link_up;
    seg[0].tag_free = seg[1].tag_free =
        par->tags_free < 0 ? MIN(pat->geo.tag_capacity, 0x7FFu)
                           : (unsigned)par->tags_free;
    seg[0].stfifo_free = seg[1].stfifo_free =
        par->stfifo_free < 0 ? pat->geo.stfifo_capacity
                             : (unsigned)par->stfifo_free;
    seg[0].cycles = 1;
    if (probe->domain == PTM_DOMAIN_PCIE && par->brake) {
        uint64_t on = (uint64_t)par->brake_period * par->brake_duty / 100;

        if (on >= par->brake_period) {
            seg[0].brake = par->brake;
        } else if (on > 0) {
            *period = par->brake_period;
            seg[0].brake = par->brake;
            seg[0].cycles = on;
            seg[1].cycles = par->brake_period - on;
            return 2;
        }
    }
    return 1;
}

/* Longest period the pattern names (a common multiple of its lanes'). */
#define MAX_PERIOD (1ull << 40)

/*
 * Every lane is a function of the probe's cycle modulo its own period:
 * the probe's traffic repeats with their least common multiple.
 */
static uint64_t pattern_period(const PtmPattern *pat,
                               const PtmProbeInfo *probe)
{
    uint64_t joint = 1;

    for (unsigned b = 0; b <= probe->buses; b++) {
        PtmSegment seg[8];
        uint64_t period;

        lane_period(pat, probe, b, seg, &period);
        joint = joint / ptm_gcd64(joint, period) * period;
        if (joint > MAX_PERIOD) {
            return 0;
        }
    }
    return joint;
}

static uint64_t pattern_model_period(const PtmGen *gen, const void *params,
                                     const PtmProbeInfo *probe,
                                     uint64_t cycle, uint64_t *from,
                                     uint64_t *until, uint64_t *id);

/* Every lane by its own period: no common multiple of the buses' periods. */
static bool pattern_count(void *opaque, const PtmProbeShape *sh,
                          uint64_t start, uint64_t end, PtmCountState *st,
                          uint64_t *acc)
{
    const PtmPattern *pat = opaque;
    const PtmProbeInfo *probe = &sh->info;
    PtmSegment seg[8], cut;
    PtmChunk ch = { .scratch = &cut };

    for (unsigned b = 0; b <= probe->buses; b++) {
        uint64_t period, t = start;
        unsigned nseg = lane_period(pat, probe, b, seg, &period);
        uint32_t lane = b < probe->buses ? 1u << b : PTM_LANE_SIDE;

        while (t < end) {
            t += ptm_serve_periodic(seg, nseg, period, t % period, end - t,
                                    0, &ch);
            ptm_count_chunk_lanes(sh, st, &ch, acc, lane);
        }
    }
    return true;
}

/* Whole periods of every lane are one range query each. */
static PtmCost pattern_cost(void *opaque)
{
    return PTM_COST_RANGE;
}

static PtmCost pattern_model_cost(const PtmGen *gen, const void *params)
{
    return PTM_COST_RANGE;
}

static uint64_t pattern_ops_period(void *opaque, const PtmProbeInfo *probe,
                                   uint64_t cycle, uint64_t *from,
                                   uint64_t *until, uint64_t *id)
{
    *from = 0;
    *until = UINT64_MAX;
    *id = 1;
    return pattern_period(opaque, probe);
}

const PtmSourceOps ptm_pattern_ops = {
    .fill = pattern_fill,
    .count = pattern_count,
    .cost = pattern_cost,
    .period = pattern_ops_period,
};

/* ------------------------------------------------------ generator models */

#define OFF(f) offsetof(PtmPatternParams, f)
#define FRAME(nm, kind)                                                     \
    { #nm "-frame-bytes", PTM_PARAM_U32, OFF(bus[kind].frame_bytes), 0,     \
      65536, "bytes of each frame on the " #nm " bus (0: idle)" }
#define GAP(nm, kind)                                                       \
    { #nm "-gap", PTM_PARAM_U32, OFF(bus[kind].gap), 0, 65536,               \
      "idle cycles after each frame on the " #nm " bus" }
#define STALL(nm, kind)                                                     \
    { #nm "-stall", PTM_PARAM_U32, OFF(bus[kind].stall), 0, 65536,           \
      "cycles the first word of each frame waits on the " #nm " bus" }

static const PtmParamDesc pattern_params[] = {
    { "link-up", PTM_PARAM_BOOL, OFF(link_up), 0, 1, "PCIe link up" },
    { "tags-free", PTM_PARAM_I32, OFF(tags_free), -1, 2047,
      "free PCIe tags (-1: the card's tag capacity)" },
    { "stfifo-free", PTM_PARAM_I32, OFF(stfifo_free), -1, 65535,
      "free storage FIFO words (-1: the card's capacity)" },
    { "brake", PTM_PARAM_U32, OFF(brake), 0, 0x3f,
      "BRAKE bits (bit k = reason k), active as brake-duty says" },
    { "brake-duty", PTM_PARAM_U32, OFF(brake_duty), 0, 100,
      "percent of each brake period the BRAKE bits are active" },
    { "brake-period", PTM_PARAM_U32, OFF(brake_period), 1, 65536,
      "PCIe cycles of one on/off period of the BRAKE bits" },
    { "up-mvb-items", PTM_PARAM_U32, OFF(bus[PTM_BUS_UP].mvb_items), 1, 16,
      "MVB items of each UP frame (requests per frame)" },
    { "down-mvb-items", PTM_PARAM_U32, OFF(bus[PTM_BUS_DOWN].mvb_items), 1,
      16, "MVB items of each DOWN frame" },
    FRAME(rq, PTM_BUS_RQ), GAP(rq, PTM_BUS_RQ), STALL(rq, PTM_BUS_RQ),
    FRAME(rc, PTM_BUS_RC), GAP(rc, PTM_BUS_RC), STALL(rc, PTM_BUS_RC),
    FRAME(up, PTM_BUS_UP), GAP(up, PTM_BUS_UP), STALL(up, PTM_BUS_UP),
    FRAME(down, PTM_BUS_DOWN), GAP(down, PTM_BUS_DOWN),
    STALL(down, PTM_BUS_DOWN),
};
#undef OFF

static void pattern_defaults(void *params)
{
    ptm_pattern_params_default(params);
}

static char *pattern_model_check(const void *params, const PtmGeometry *geo)
{
    return ptm_pattern_check(params, geo);
}

static uint64_t pattern_model_fill(const PtmGen *gen, const void *params,
                                   const PtmProbeInfo *probe, uint64_t start,
                                   uint64_t max, PtmChunk *out)
{
    PtmPattern pat = { .par = *(const PtmPatternParams *)params,
                       .geo = gen->geo };

    return pattern_fill(&pat, probe, start, max, out);
}

static bool pattern_model_count(const PtmGen *gen, const void *params,
                                const PtmProbeShape *probe, uint64_t start,
                                uint64_t end, PtmCountState *st, uint64_t *acc)
{
    PtmPattern pat = { .par = *(const PtmPatternParams *)params,
                       .geo = gen->geo };

    return pattern_count(&pat, probe, start, end, st, acc);
}

static uint64_t pattern_model_period(const PtmGen *gen, const void *params,
                                     const PtmProbeInfo *probe,
                                     uint64_t cycle, uint64_t *from,
                                     uint64_t *until, uint64_t *id)
{
    PtmPattern pat = { .par = *(const PtmPatternParams *)params,
                       .geo = gen->geo };

    return pattern_period(&pat, probe);
}

const PtmGenModel ptm_model_pattern = {
    .name = "pattern",
    .summary = "every bus repeats one frame forever",
    .params_size = sizeof(PtmPatternParams),
    .params = pattern_params,
    .nparams = G_N_ELEMENTS(pattern_params),
    .defaults = pattern_defaults,
    .check = pattern_model_check,
    .fill = pattern_model_fill,
    .count = pattern_model_count,
    .cost = pattern_model_cost,
    .period = pattern_model_period,
};

#define OFF(f) offsetof(PtmIdleParams, f)
static const PtmParamDesc idle_params[] = {
    { "link-up", PTM_PARAM_BOOL, OFF(link_up), 0, 1, "PCIe link up" },
    { "tags-free", PTM_PARAM_I32, OFF(tags_free), -1, 2047,
      "free PCIe tags (-1: the card's tag capacity)" },
    { "stfifo-free", PTM_PARAM_I32, OFF(stfifo_free), -1, 65535,
      "free storage FIFO words (-1: the card's capacity)" },
};
#undef OFF

static void idle_defaults(void *params)
{
    *(PtmIdleParams *)params = (PtmIdleParams) {
        .link_up = true, .tags_free = -1, .stfifo_free = -1,
    };
}

static void idle_pattern(const PtmGen *gen, const PtmIdleParams *ip,
                         PtmPattern *pat)
{
    pat->geo = gen->geo;
    ptm_pattern_params_default(&pat->par);
    pat->par.link_up = ip->link_up;
    pat->par.tags_free = ip->tags_free;
    pat->par.stfifo_free = ip->stfifo_free;
}

static uint64_t idle_model_fill(const PtmGen *gen, const void *params,
                                const PtmProbeInfo *probe, uint64_t start,
                                uint64_t max, PtmChunk *out)
{
    PtmPattern pat;

    idle_pattern(gen, params, &pat);
    return pattern_fill(&pat, probe, start, max, out);
}

static bool idle_model_count(const PtmGen *gen, const void *params,
                             const PtmProbeShape *probe, uint64_t start,
                             uint64_t end, PtmCountState *st, uint64_t *acc)
{
    PtmPattern pat;

    idle_pattern(gen, params, &pat);
    return pattern_count(&pat, probe, start, end, st, acc);
}

static uint64_t idle_model_period(const PtmGen *gen, const void *params,
                                  const PtmProbeInfo *probe, uint64_t cycle,
                                  uint64_t *from, uint64_t *until,
                                  uint64_t *id)
{
    PtmPattern pat;

    idle_pattern(gen, params, &pat);
    return pattern_period(&pat, probe);
}

const PtmGenModel ptm_model_idle = {
    .name = "idle",
    .summary = "no traffic; link and free resources constant",
    .params_size = sizeof(PtmIdleParams),
    .params = idle_params,
    .nparams = G_N_ELEMENTS(idle_params),
    .defaults = idle_defaults,
    .fill = idle_model_fill,
    .count = idle_model_count,
    .cost = pattern_model_cost,
    .period = idle_model_period,
};
