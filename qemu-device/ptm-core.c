/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU-free model of PCIE_TELEMETRY_MI: configuration rules, register file,
 * probes, delta FIFOs and the accumulator.
 *
 * The model is an event simulation on the MI clock. Every probe drains its
 * window at a tick of its own clock and then writes one delta per cycle into
 * its FIFO; the accumulator takes one visible delta every three MI cycles,
 * serving the FIFOs round robin, and stops while a SNAPSHOT or CLEAR runs.
 * A probe's window is counted only when it is drained, from the signals the
 * source describes for it, so the cost is per drain window and per delta,
 * never per cycle. Cycle c of a clock of f Hz happens at c / f seconds of
 * virtual time; all conversions are exact integer arithmetic.
 */
#include <glib.h>
#include <string.h>

#include "ptm-core.h"

typedef unsigned __int128 u128;

typedef struct PtmDelta {
    uint64_t vis;           /* first MI cycle the accumulator may take it */
    uint32_t value;
    uint32_t channel;
} PtmDelta;

/* The counts of one pass of a segment list a source marked with an id. */
#define PTM_MEMO_SLOTS 64

typedef struct PtmMemo {
    bool valid;
    uint64_t used;                  /* for replacing the least recent */
    uint64_t id;
    uint32_t open_in, open_out;
    uint16_t tag_min, stfifo_min, tag_last, stfifo_last;
    uint8_t link_last;
    uint64_t *d;
} PtmMemo;

typedef struct PtmProbe {
    PtmProbeShape sh;
    PtmMemo memo[PTM_MEMO_SLOTS];
    uint64_t memo_clock;
    unsigned base;          /* first counter entry */
    unsigned fifo_depth;

    uint64_t origin;        /* absolute cycle that is the probe's cycle 0 */
    uint64_t window;        /* next window to drain */
    PtmCountState cs;
    uint32_t *pend;         /* deltas of the last drain not yet written */
    unsigned pend_n, pend_next;
    uint64_t pend_cycle0;   /* absolute cycle at which pend[0] is written */
    PtmDelta *fifo;
    unsigned head, count;
    uint64_t next_ev;       /* MI cycle of the next drain */
    uint64_t mi_ratio;      /* probe cycles per MI cycle if whole, else 0 */
    int mi_shift;           /* log2(mi_ratio) if a power of two, else -1 */
} PtmProbe;

struct PtmCore {
    PtmConfig cfg;
    PtmLayout lay;
    uint64_t cnt_mask;
    unsigned nprobes;
    PtmProbe *probe;
    uint64_t *live, *snap;
    const PtmSourceOps *ops;
    void *opaque;
    PtmSettings settings[PTM_MAX_ENDPOINTS];
    PtmChunk *chunk;
    uint64_t wacc[256];

    uint64_t mi_done;       /* MI cycles <= mi_done are simulated */
    uint64_t acc_free;      /* first MI cycle the accumulator is free */
    unsigned rr;            /* stream served last */
    unsigned next_drain;    /* probe with the earliest next_ev */
    /* hot values of every probe, packed for the scans of the event loop */
    uint64_t *drain_at;     /* = probe[i].next_ev */
    uint64_t *offer;        /* = probe_offer(probe[i]) */
    uint64_t busy_start, busy_end;
    bool lost, overrun, read_sel;
    uint32_t pcie_status[PTM_MAX_ENDPOINTS];
    uint32_t pcie_tags[PTM_MAX_ENDPOINTS];
    uint32_t pcie_stfifo[PTM_MAX_ENDPOINTS];
    uint64_t n_lost, n_applied;
    bool memo_off;
};

/* ------------------------------------------------------------------ */
/* Configuration                                                        */

void ptm_config_default(PtmConfig *cfg)
{
    *cfg = (PtmConfig) {
        .pcie_endpoints = 1,
        .dma_ports = 1,
        .pcie_rq_mfb_regions = 2,
        .pcie_rc_mfb_regions = 2,
        .dma_up_mfb_regions = 2,
        .dma_down_mfb_regions = 2,
        .pcie_rq_mfb_region_bytes = 32,
        .pcie_rc_mfb_region_bytes = 32,
        .dma_up_mfb_region_bytes = 32,
        .dma_down_mfb_region_bytes = 32,
        .mfb_item_bytes = 4,
        .pcie_eof_pos_width = 3,
        .dma_eof_pos_width = 3,
        .cnt_width = 48,
        .drain_period = 4096,
        .tag_capacity = 256,
        .stfifo_capacity = 1024,
        .pcie_clk_hz = 400000000,
        .dma_clk_hz = 200000000,
        .mi_clk_hz = 100000000,
    };
}

static unsigned max_u(unsigned a, unsigned b)
{
    return a > b ? a : b;
}

static unsigned clog2(uint64_t v)
{
    unsigned r = 0;

    while ((1ull << r) < v) {
        r++;
    }
    return r;
}

unsigned ptm_fifo_depth(unsigned channels)
{
    unsigned groups = (channels + 7) / 8;

    return 1u << clog2(16 * groups);
}

void ptm_layout_compute(const PtmConfig *cfg, PtmLayout *lay)
{
    unsigned total;

    lay->pcie_regions = max_u(cfg->pcie_rq_mfb_regions,
                              cfg->pcie_rc_mfb_regions);
    lay->dma_regions = max_u(cfg->dma_up_mfb_regions,
                             cfg->dma_down_mfb_regions);
    lay->pcie_channels = 1 + 2 * (6 + lay->pcie_regions) +
                         PTM_BRAKES + PTM_HISTS * PTM_HIST_BANDS;
    lay->dma_channels = 1 + 2 * cfg->dma_ports * (6 + lay->dma_regions);
    lay->channels_per_endpoint = lay->pcie_channels + lay->dma_channels;
    total = cfg->pcie_endpoints * lay->channels_per_endpoint;
    lay->entries = 1u << clog2(total);
    lay->pcie_fifo_depth = ptm_fifo_depth(lay->pcie_channels);
    lay->dma_fifo_depth = ptm_fifo_depth(lay->dma_channels);
}

static char *check_range(const char *name, uint64_t v, uint64_t lo,
                         uint64_t hi)
{
    if (v < lo || v > hi) {
        return g_strdup_printf("property '%s' is %" G_GUINT64_FORMAT
                               ", allowed: %" G_GUINT64_FORMAT " to %"
                               G_GUINT64_FORMAT, name, v, lo, hi);
    }
    return NULL;
}

static char *check_region_bytes(const char *name, uint32_t bytes,
                                uint32_t item)
{
    if (bytes == 0 || bytes > 0xFFFF || bytes % item ||
        bytes / item > 256) {
        return g_strdup_printf("property '%s' is %u, allowed: a multiple of "
                               "mfb-item-bytes (%u) of 1 to 256 items, at "
                               "most 65535", name, bytes, item);
    }
    return NULL;
}

static char *check_eof_pos(const char *name, uint32_t width,
                           uint32_t bytes_a, uint32_t bytes_b, uint32_t item)
{
    unsigned items = max_u(bytes_a, bytes_b) / item;
    unsigned want = clog2(items);

    if (width != want) {
        return g_strdup_printf("property '%s' is %u, allowed: %u (log2 of "
                               "the %u items of the larger region of its "
                               "side)", name, width, want, items);
    }
    return NULL;
}

char *ptm_config_check(const PtmConfig *cfg)
{
    PtmLayout lay;
    char *err;
    unsigned gmax, min_drain;

#define TRY(x) do { err = (x); if (err) { return err; } } while (0)
    TRY(check_range("pcie-endpoints", cfg->pcie_endpoints, 1,
                    PTM_MAX_ENDPOINTS));
    TRY(check_range("dma-ports", cfg->dma_ports, 1, PTM_MAX_DMA_PORTS));
    TRY(check_range("pcie-rq-mfb-regions", cfg->pcie_rq_mfb_regions, 1,
                    PTM_MAX_REGIONS));
    TRY(check_range("pcie-rc-mfb-regions", cfg->pcie_rc_mfb_regions, 1,
                    PTM_MAX_REGIONS));
    TRY(check_range("dma-up-mfb-regions", cfg->dma_up_mfb_regions, 1,
                    PTM_MAX_REGIONS));
    TRY(check_range("dma-down-mfb-regions", cfg->dma_down_mfb_regions, 1,
                    PTM_MAX_REGIONS));
    TRY(check_range("mfb-item-bytes", cfg->mfb_item_bytes, 1, 255));
    TRY(check_region_bytes("pcie-rq-mfb-region-bytes",
                           cfg->pcie_rq_mfb_region_bytes,
                           cfg->mfb_item_bytes));
    TRY(check_region_bytes("pcie-rc-mfb-region-bytes",
                           cfg->pcie_rc_mfb_region_bytes,
                           cfg->mfb_item_bytes));
    TRY(check_region_bytes("dma-up-mfb-region-bytes",
                           cfg->dma_up_mfb_region_bytes,
                           cfg->mfb_item_bytes));
    TRY(check_region_bytes("dma-down-mfb-region-bytes",
                           cfg->dma_down_mfb_region_bytes,
                           cfg->mfb_item_bytes));
    TRY(check_eof_pos("pcie-eof-pos-width", cfg->pcie_eof_pos_width,
                      cfg->pcie_rq_mfb_region_bytes,
                      cfg->pcie_rc_mfb_region_bytes, cfg->mfb_item_bytes));
    TRY(check_eof_pos("dma-eof-pos-width", cfg->dma_eof_pos_width,
                      cfg->dma_up_mfb_region_bytes,
                      cfg->dma_down_mfb_region_bytes, cfg->mfb_item_bytes));
    TRY(check_range("cnt-width", cfg->cnt_width, 33, 64));
    TRY(check_range("tag-capacity", cfg->tag_capacity, 1, 2047));
    TRY(check_range("stfifo-capacity", cfg->stfifo_capacity, 1, 65535));
    TRY(check_range("pcie-clk-freq", cfg->pcie_clk_hz, 1000000, 4000000000ull));
    TRY(check_range("dma-clk-freq", cfg->dma_clk_hz, 1000000, 4000000000ull));
    TRY(check_range("mi-clk-freq", cfg->mi_clk_hz, 1000000, 4000000000ull));
#undef TRY

    ptm_layout_compute(cfg, &lay);
    if (lay.channels_per_endpoint > 255) {
        return g_strdup_printf("properties 'dma-ports', "
                               "'dma-up-mfb-regions', 'dma-down-mfb-regions', "
                               "'pcie-rq-mfb-regions' and "
                               "'pcie-rc-mfb-regions' give %u channels per "
                               "endpoint, allowed: at most 255 (the "
                               "CFG_LAYOUT field)", lay.channels_per_endpoint);
    }
    if ((uint64_t)lay.entries * 8 > PTM_BAR_SIZE - PTM_CNT_BASE) {
        return g_strdup_printf("properties 'pcie-endpoints', 'dma-ports' and "
                               "regions need %u counters, allowed: at most "
                               "%u (the counter window of 0x%x bytes)",
                               lay.entries,
                               (PTM_BAR_SIZE - PTM_CNT_BASE) / 8,
                               PTM_BAR_SIZE - PTM_CNT_BASE);
    }
    gmax = (max_u(lay.pcie_channels, lay.dma_channels) + 7) / 8;
    min_drain = 8 * (gmax + 1) + 1;
    if (cfg->drain_period & (cfg->drain_period - 1) ||
        cfg->drain_period < min_drain || cfg->drain_period > 32768) {
        return g_strdup_printf("property 'drain-period' is %u, allowed: a "
                               "power of two from %u (more than 8 x (%u "
                               "channel groups + 1)) to 32768 (the CFG_DRAIN "
                               "field)", cfg->drain_period,
                               1u << clog2(min_drain), gmax);
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Time                                                                 */

#define NS_PER_S 1000000000ull

static uint64_t cycles_at_ns(uint64_t ns, uint64_t hz)
{
    return (uint64_t)((u128)ns * hz / NS_PER_S);
}

static uint64_t first_cycle_at_ns(uint64_t ns, uint64_t hz)
{
    return (uint64_t)(((u128)ns * hz + NS_PER_S - 1) / NS_PER_S);
}

/* MI cycle in which probe cycle c happens (its edge at or before c). */
static uint64_t mi_floor(const PtmCore *core, const PtmProbe *p, uint64_t c)
{
    if (p->mi_ratio) {
        /* the usual case: a whole ratio, mostly a power of two */
        return p->mi_shift >= 0 ? c >> p->mi_shift : c / p->mi_ratio;
    }
    return (uint64_t)((u128)c * core->cfg.mi_clk_hz / p->sh.info.hz);
}

static uint64_t mi_ceil(const PtmCore *core, const PtmProbe *p, uint64_t c)
{
    uint64_t hz = p->sh.info.hz;

    if (p->mi_ratio) {
        c += p->mi_ratio - 1;
        return p->mi_shift >= 0 ? c >> p->mi_shift : c / p->mi_ratio;
    }
    return (uint64_t)(((u128)c * core->cfg.mi_clk_hz + hz - 1) / hz);
}

uint64_t ptm_core_mi_cycle(const PtmCore *core, uint64_t now_ns)
{
    return cycles_at_ns(now_ns, core->cfg.mi_clk_hz);
}

uint64_t ptm_core_next_pcie_window(const PtmCore *core, uint64_t now_ns)
{
    const PtmProbe *p = &core->probe[0];
    uint64_t hz = p->sh.info.hz, dp = core->cfg.drain_period;
    uint64_t c = cycles_at_ns(now_ns, hz), w = 1, start;

    /* window w >= 1 starts at origin + w DP - 1 */
    if (c + 1 > p->origin) {
        w = (c + 1 - p->origin) / dp + 1;
    }
    start = p->origin + w * dp - 1;
    return start;
}

/* ------------------------------------------------------------------ */
/* Construction                                                         */

static void probe_init(PtmCore *core, PtmProbe *p, unsigned e, PtmDomain d)
{
    const PtmConfig *cfg = &core->cfg;
    const PtmLayout *lay = &core->lay;
    PtmProbeInfo *info = &p->sh.info;
    unsigned ib = cfg->mfb_item_bytes;

    memset(p, 0, sizeof(*p));
    info->endpoint = e;
    info->domain = d;
    if (d == PTM_DOMAIN_PCIE) {
        info->buses = 2;
        info->regions = lay->pcie_regions;
        info->bus_regions[0] = cfg->pcie_rq_mfb_regions;
        info->bus_regions[1] = cfg->pcie_rc_mfb_regions;
        info->bus_items[0] = cfg->pcie_rq_mfb_region_bytes / ib;
        info->bus_items[1] = cfg->pcie_rc_mfb_region_bytes / ib;
        info->hz = cfg->pcie_clk_hz;
        p->sh.channels = lay->pcie_channels;
        p->sh.brakes = PTM_BRAKES + PTM_HISTS * PTM_HIST_BANDS;
        p->sh.eof_pos_mask = (1u << cfg->pcie_eof_pos_width) - 1;
        p->base = e * lay->channels_per_endpoint;
        p->fifo_depth = lay->pcie_fifo_depth;
    } else {
        info->buses = 2 * cfg->dma_ports;
        info->regions = lay->dma_regions;
        for (unsigned b = 0; b < info->buses; b++) {
            bool up = !(b & 1);
            info->bus_regions[b] = up ? cfg->dma_up_mfb_regions
                                      : cfg->dma_down_mfb_regions;
            info->bus_items[b] = (up ? cfg->dma_up_mfb_region_bytes
                                     : cfg->dma_down_mfb_region_bytes) / ib;
        }
        info->hz = cfg->dma_clk_hz;
        p->sh.channels = lay->dma_channels;
        p->sh.brakes = 0;
        p->sh.eof_pos_mask = (1u << cfg->dma_eof_pos_width) - 1;
        p->base = e * lay->channels_per_endpoint + lay->pcie_channels;
        p->fifo_depth = lay->dma_fifo_depth;
    }
    p->mi_ratio = info->hz % cfg->mi_clk_hz ? 0 : info->hz / cfg->mi_clk_hz;
    p->mi_shift = -1;
    if (p->mi_ratio && !(p->mi_ratio & (p->mi_ratio - 1))) {
        p->mi_shift = __builtin_ctzll(p->mi_ratio);
    }
    p->sh.tag_capacity = cfg->tag_capacity;
    p->sh.stfifo_capacity = cfg->stfifo_capacity;
    p->pend = g_new0(uint32_t, p->sh.channels);
    p->fifo = g_new0(PtmDelta, p->fifo_depth);
    for (unsigned k = 0; k < PTM_MEMO_SLOTS; k++) {
        p->memo[k].d = g_new0(uint64_t, p->sh.channels);
    }
}

PtmCore *ptm_core_new(const PtmConfig *cfg)
{
    PtmCore *core = g_new0(PtmCore, 1);

    core->cfg = *cfg;
    ptm_layout_compute(cfg, &core->lay);
    core->cnt_mask = cfg->cnt_width >= 64 ? ~0ull
                                          : (1ull << cfg->cnt_width) - 1;
    core->nprobes = 2 * cfg->pcie_endpoints;
    core->probe = g_new0(PtmProbe, core->nprobes);
    for (unsigned i = 0; i < core->nprobes; i++) {
        probe_init(core, &core->probe[i], i / 2,
                   (i & 1) ? PTM_DOMAIN_DMA : PTM_DOMAIN_PCIE);
    }
    core->drain_at = g_new0(uint64_t, core->nprobes);
    core->offer = g_new0(uint64_t, core->nprobes);
    core->live = g_new0(uint64_t, core->lay.entries);
    core->snap = g_new0(uint64_t, core->lay.entries);
    core->chunk = ptm_chunk_new();
    for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
        /* power-on values of Device Control: 128 B payload, 512 B reads */
        core->settings[e] = (PtmSettings) { .mps = 0, .mrrs = 2 };
    }
    ptm_core_reset(core, 0);
    return core;
}

void ptm_core_free(PtmCore *core)
{
    if (!core) {
        return;
    }
    for (unsigned i = 0; i < core->nprobes; i++) {
        g_free(core->probe[i].pend);
        g_free(core->probe[i].fifo);
        for (unsigned k = 0; k < PTM_MEMO_SLOTS; k++) {
            g_free(core->probe[i].memo[k].d);
        }
    }
    g_free(core->probe);
    g_free(core->drain_at);
    g_free(core->offer);
    g_free(core->live);
    g_free(core->snap);
    ptm_chunk_free(core->chunk);
    g_free(core);
}

const PtmLayout *ptm_core_layout(const PtmCore *core)
{
    return &core->lay;
}

void ptm_core_geometry(const PtmCore *core, PtmGeometry *geo)
{
    const PtmConfig *c = &core->cfg;

    *geo = (PtmGeometry) {
        .endpoints = c->pcie_endpoints,
        .dma_ports = c->dma_ports,
        .rq_regions = c->pcie_rq_mfb_regions,
        .rc_regions = c->pcie_rc_mfb_regions,
        .up_regions = c->dma_up_mfb_regions,
        .down_regions = c->dma_down_mfb_regions,
        .rq_region_bytes = c->pcie_rq_mfb_region_bytes,
        .rc_region_bytes = c->pcie_rc_mfb_region_bytes,
        .up_region_bytes = c->dma_up_mfb_region_bytes,
        .down_region_bytes = c->dma_down_mfb_region_bytes,
        .item_bytes = c->mfb_item_bytes,
        .drain_period = c->drain_period,
        .tag_capacity = c->tag_capacity,
        .stfifo_capacity = c->stfifo_capacity,
        .pcie_hz = c->pcie_clk_hz,
        .dma_hz = c->dma_clk_hz,
        .mi_hz = c->mi_clk_hz,
    };
}

void ptm_core_set_source(PtmCore *core, const PtmSourceOps *ops, void *opaque)
{
    core->ops = ops;
    core->opaque = opaque;
}

void ptm_core_set_settings(PtmCore *core, uint64_t now_ns, unsigned e,
                           const PtmSettings *s)
{
    ptm_core_advance(core, now_ns);
    if (e < PTM_MAX_ENDPOINTS) {
        core->settings[e] = *s;
    }
}

/* ------------------------------------------------------------------ */
/* Probes                                                               */

/* MI cycle of the probe's next drain. */
static uint64_t probe_next_event(const PtmCore *core, const PtmProbe *p)
{
    uint64_t tick = p->origin + (p->window + 1) * core->cfg.drain_period - 1;

    return mi_floor(core, p, tick);
}

/* The chunk an absent source describes: idle buses, link up, all free. */
static uint64_t idle_fill(const PtmCore *core, uint64_t max, PtmChunk *ch)
{
    PtmSegment *s;

    ch->id = 0;
    ch->seg = ch->scratch;
    s = &ch->seg[0];

    memset(s, 0, sizeof(*s));
    s->cycles = max;
    s->link_up = 1;
    s->tag_free = MIN(core->cfg.tag_capacity, 0x7FF);
    s->stfifo_free = core->cfg.stfifo_capacity;
    ch->nseg = 1;
    ch->repeat = 1;
    return max;
}

/* Cycles a chunk covers, or 0 if it is malformed. */
static uint64_t chunk_cycles(const PtmChunk *ch)
{
    uint64_t sum = 0;

    if (ch->nseg < 1 || ch->nseg > PTM_CHUNK_SEGMENTS || ch->repeat < 1) {
        return 0;
    }
    for (unsigned i = 0; i < ch->nseg; i++) {
        if (ch->seg[i].cycles == 0) {
            return 0;
        }
        sum += ch->seg[i].cycles;
    }
    return sum * ch->repeat;
}

void ptm_core_set_memo(PtmCore *core, bool on)
{
    core->memo_off = !on;
}

/*
 * Count a chunk the source marked with an id from the counts of one pass
 * kept from before; false if that does not apply (the pass would not end
 * in the state it started from, so passes differ).
 */
static bool count_memo(PtmCore *core, PtmProbe *p, const PtmChunk *ch)
{
    PtmCountState *st = &p->cs;
    /* a set of four slots chosen by the id, the least recent replaced */
    unsigned set = (unsigned)((ch->id ^ (ch->id >> 29) ^ st->open) %
                              (PTM_MEMO_SLOTS / 4)) * 4;
    PtmMemo *m = NULL;

    for (unsigned k = set; k < set + 4; k++) {
        if (p->memo[k].valid && p->memo[k].id == ch->id &&
            p->memo[k].open_in == st->open) {
            m = &p->memo[k];
            break;
        }
    }
    if (!m) {
        PtmCountState one = *st;

        m = &p->memo[set];
        for (unsigned k = set + 1; k < set + 4; k++) {
            if (p->memo[k].used < m->used) {
                m = &p->memo[k];
            }
        }
        one.tag_min = one.stfifo_min = 0xFFFF;
        memset(m->d, 0, p->sh.channels * sizeof(m->d[0]));
        ptm_count_pass(&p->sh, &one, ch, m->d);
        m->valid = true;
        m->id = ch->id;
        m->open_in = st->open;
        m->open_out = one.open;
        m->tag_min = one.tag_min;
        m->stfifo_min = one.stfifo_min;
        m->tag_last = one.tag_last;
        m->stfifo_last = one.stfifo_last;
        m->link_last = one.link_last;
    }
    m->used = ++p->memo_clock;
    if (m->open_out != m->open_in && ch->repeat > 1) {
        return false;
    }
    for (unsigned c = 0; c < p->sh.channels; c++) {
        core->wacc[c] += m->d[c] * ch->repeat;
    }
    st->open = m->open_out;
    st->tag_min = MIN(st->tag_min, m->tag_min);
    st->stfifo_min = MIN(st->stfifo_min, m->stfifo_min);
    st->tag_last = m->tag_last;
    st->stfifo_last = m->stfifo_last;
    st->link_last = m->link_last;
    return true;
}

/* Count the absolute cycles [start, end) of a probe into core->wacc. */
static void probe_count_span(PtmCore *core, PtmProbe *p, uint64_t start,
                             uint64_t end)
{
    /* what the function negotiated; a source may model traffic by it */
    p->sh.info.settings = core->settings[p->sh.info.endpoint];
    while (start < end) {
        uint64_t max = end - start, n = 0;

        if (core->ops) {
            core->chunk->seg = core->chunk->scratch;
            core->chunk->nseg = 0;
            core->chunk->repeat = 1;
            core->chunk->id = 0;
            core->ops->fill(core->opaque, &p->sh.info, start, max,
                            core->chunk);
            n = chunk_cycles(core->chunk);
        }
        if (n == 0 || n > max) {
            /* no source, or one that broke its contract: idle */
            n = idle_fill(core, max, core->chunk);
        }
        if (!(core->chunk->id && !core->memo_off &&
              count_memo(core, p, core->chunk))) {
            ptm_count_chunk(&p->sh, &p->cs, core->chunk, core->wacc);
        }
        start += n;
    }
}

static void probe_drain(PtmCore *core, PtmProbe *p)
{
    uint64_t dp = core->cfg.drain_period;
    uint64_t w = p->window;
    uint64_t start = p->origin + (w ? w * dp - 1 : 0);
    uint64_t tick = p->origin + (w + 1) * dp - 1;

    memset(core->wacc, 0, p->sh.channels * sizeof(core->wacc[0]));
    ptm_count_state_window_start(&p->cs);
    probe_count_span(core, p, start, tick);
    for (unsigned c = 0; c < p->sh.channels; c++) {
        p->pend[c] = (uint32_t)core->wacc[c];
    }
    p->pend_n = p->sh.channels;
    p->pend_next = 0;
    /* group and FIFO input registers: 2 cycles, then a delta per cycle */
    p->pend_cycle0 = tick + 2;
    p->window++;

    if (p->sh.info.domain == PTM_DOMAIN_PCIE) {
        unsigned e = p->sh.info.endpoint;
        PtmSettings set = core->settings[e];
        const PtmSettings *s = &set;
        uint32_t low_tag = MIN(core->pcie_tags[e] >> 16, p->cs.tag_min);
        uint32_t low_fifo = MIN(core->pcie_stfifo[e] >> 16,
                                p->cs.stfifo_min);

        if (core->ops && core->ops->settings) {
            core->ops->settings(core->opaque, e, tick, &set);
        }

        core->pcie_status[e] = (s->mps & 7) | (s->mrrs & 7) << 3 |
                               s->ext_tag << 6 | s->tag_10bit << 7 |
                               s->rcb_128 << 8 | p->cs.link_last << 9;
        core->pcie_tags[e] = p->cs.tag_last | low_tag << 16;
        core->pcie_stfifo[e] = p->cs.stfifo_last | low_fifo << 16;
    }
}

/*
 * FIFO writes are not events of their own. In one MI cycle the pop goes
 * before the writes, and only pops of the same FIFO decide whether a write
 * finds room; so a probe's writes of MI cycles before `before` are
 * committed lazily, before each pop from its FIFO and before its next
 * drain, which keeps exactly that order at a fraction of the cost.
 */
static void probe_commit(PtmCore *core, PtmProbe *p, uint64_t before)
{
    while (p->pend_next < p->pend_n) {
        uint64_t c = p->pend_cycle0 + p->pend_next;

        if (mi_floor(core, p, c) >= before) {
            return;
        }
        if (p->count == p->fifo_depth) {
            /*
             * Full, and no pop of this FIFO comes before `before`: every
             * write until then is lost. Count them at once.
             */
            uint64_t k = 1;

            if (p->mi_ratio && before != UINT64_MAX) {
                uint64_t lim = before * p->mi_ratio;  /* first cycle of it */

                k = MIN(lim, p->pend_cycle0 + p->pend_n) - c;
            } else if (before == UINT64_MAX) {
                k = p->pend_n - p->pend_next;
            }
            core->lost = true;
            core->n_lost += k;
            p->pend_next += k;
            continue;
        } else {
            p->fifo[(p->head + p->count) & (p->fifo_depth - 1)] = (PtmDelta) {
                .vis = mi_ceil(core, p, c) + PTM_FIFO_SYNC_MI,
                .value = p->pend[p->pend_next],
                .channel = p->pend_next,
            };
            p->count++;
        }
        p->pend_next++;
    }
}

/* First MI cycle at which the probe's FIFO could offer a delta. */
static uint64_t probe_offer(const PtmCore *core, const PtmProbe *p)
{
    if (p->count) {
        return p->fifo[p->head].vis;
    }
    if (p->pend_next < p->pend_n) {
        return mi_ceil(core, p, p->pend_cycle0 + p->pend_next) +
               PTM_FIFO_SYNC_MI;
    }
    return UINT64_MAX;
}

/* Keep the packed copies of a probe's next drain and offer up to date. */
static void probe_refresh(PtmCore *core, PtmProbe *p)
{
    unsigned i = p - core->probe;

    core->drain_at[i] = p->next_ev;
    core->offer[i] = probe_offer(core, p);
}

static void find_next_drain(PtmCore *core)
{
    unsigned best = 0;

    for (unsigned i = 1; i < core->nprobes; i++) {
        if (core->drain_at[i] < core->drain_at[best]) {
            best = i;
        }
    }
    core->next_drain = best;
}

static void probe_drain_event(PtmCore *core, PtmProbe *p)
{
    probe_commit(core, p, UINT64_MAX);
    probe_drain(core, p);
    p->next_ev = probe_next_event(core, p);
    probe_refresh(core, p);
    find_next_drain(core);
}

/* ------------------------------------------------------------------ */
/* Accumulator                                                          */

/* MI cycle of the accumulator's next delta, UINT64_MAX if none waits. */
static uint64_t acc_next(const PtmCore *core)
{
    uint64_t t = MAX(core->acc_free, core->busy_end);
    uint64_t best = UINT64_MAX;

    /* in round-robin order: under load the next stream usually has one */
    for (unsigned i = 1; i <= core->nprobes; i++) {
        unsigned s = core->rr + i;
        uint64_t v = core->offer[s >= core->nprobes ? s - core->nprobes : s];

        if (v <= t) {
            return t;
        }
        best = MIN(best, v);
    }
    return best;
}

static void acc_step(PtmCore *core, uint64_t t)
{
    for (unsigned i = 1; i <= core->nprobes; i++) {
        unsigned s = core->rr + i >= core->nprobes
                     ? core->rr + i - core->nprobes : core->rr + i;
        PtmProbe *p = &core->probe[s];

        probe_commit(core, p, t);
        core->offer[s] = probe_offer(core, p);
        if (p->count && p->fifo[p->head].vis <= t) {
            PtmDelta *d = &p->fifo[p->head];
            uint64_t *cnt = &core->live[p->base + d->channel];

            *cnt = (*cnt + d->value) & core->cnt_mask;
            p->head = (p->head + 1) & (p->fifo_depth - 1);
            p->count--;
            core->acc_free = t + PTM_ACC_MI_PER_DELTA;
            core->rr = s;
            core->n_applied++;
            core->offer[s] = probe_offer(core, p);
            return;
        }
    }
}

static void advance_mi(PtmCore *core, uint64_t m)
{
    if (m <= core->mi_done) {
        return;
    }
    for (;;) {
        PtmProbe *bp = &core->probe[core->next_drain];
        uint64_t tp = core->drain_at[core->next_drain];
        uint64_t ta = acc_next(core);

        /* at equal MI cycles the accumulator goes first */
        if (ta <= tp && ta <= m) {
            acc_step(core, ta);
        } else if (tp <= m) {
            probe_drain_event(core, bp);
        } else {
            break;
        }
    }
    /* the writes up to now, so that STATUS shows their losses */
    for (unsigned i = 0; i < core->nprobes; i++) {
        probe_commit(core, &core->probe[i], m + 1);
        core->offer[i] = probe_offer(core, &core->probe[i]);
    }
    core->mi_done = m;
}

void ptm_core_advance(PtmCore *core, uint64_t now_ns)
{
    advance_mi(core, ptm_core_mi_cycle(core, now_ns));
}

/* ------------------------------------------------------------------ */
/* Reset                                                                */

static void live_regs_reset(PtmCore *core)
{
    for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
        core->pcie_status[e] = 0;
        core->pcie_tags[e] = 0x07FF0000;
        core->pcie_stfifo[e] = 0xFFFF0000;
    }
}

void ptm_core_reset(PtmCore *core, uint64_t now_ns)
{
    uint64_t m = ptm_core_mi_cycle(core, now_ns);

    /* what happened before the reset stays in the counter memory */
    advance_mi(core, m);
    for (unsigned i = 0; i < core->nprobes; i++) {
        PtmProbe *p = &core->probe[i];

        p->origin = first_cycle_at_ns(now_ns, p->sh.info.hz);
        p->window = 0;
        for (unsigned k = 0; k < PTM_MEMO_SLOTS; k++) {
            p->memo[k].valid = false;
            p->memo[k].used = 0;
        }
        memset(&p->cs, 0, sizeof(p->cs));
        p->pend_n = p->pend_next = 0;
        p->head = p->count = 0;
        p->next_ev = probe_next_event(core, p);
        probe_refresh(core, p);
    }
    find_next_drain(core);
    core->mi_done = m;
    core->acc_free = m + 1;
    core->rr = core->nprobes - 1;
    core->busy_start = core->busy_end = 0;
    core->lost = core->overrun = false;
    core->read_sel = false;
    live_regs_reset(core);
}

void ptm_core_power_on(PtmCore *core, uint64_t now_ns)
{
    /* nothing ran before the FPGA was configured: no catching up */
    core->mi_done = ptm_core_mi_cycle(core, now_ns);
    ptm_core_reset(core, now_ns);
    memset(core->live, 0, core->lay.entries * sizeof(uint64_t));
    memset(core->snap, 0, core->lay.entries * sizeof(uint64_t));
    core->n_lost = core->n_applied = 0;
}

/* ------------------------------------------------------------------ */
/* Registers                                                            */

static bool is_busy(const PtmCore *core, uint64_t m)
{
    return m >= core->busy_start && m < core->busy_end;
}

static void command(PtmCore *core, uint64_t m, uint32_t bits)
{
    unsigned entries = core->lay.entries;

    if (bits & PTM_CMD_CLEAR_FLAGS) {
        core->lost = core->overrun = false;
    }
    if (bits & PTM_CMD_CLEAR_LOWEST) {
        for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
            core->pcie_tags[e] = (core->pcie_tags[e] & 0xFFFF) | 0x07FF0000;
            core->pcie_stfifo[e] = (core->pcie_stfifo[e] & 0xFFFF) |
                                   0xFFFF0000;
        }
    }
    /* SNAPSHOT or CLEAR while one runs is dropped, as the MI side does */
    if ((bits & (PTM_CMD_SNAPSHOT | PTM_CMD_CLEAR)) && m >= core->busy_end) {
        bool both = (bits & 3) == 3;
        uint64_t dur = both ? 2 + 4ull * entries : 1 + 2ull * entries;
        /* the command waits for a delta the accumulator is adding */
        uint64_t extra = core->acc_free > m + 1 ? core->acc_free - (m + 1) : 0;

        core->busy_start = m + 2;
        core->busy_end = m + 2 + dur + extra;
        if (bits & PTM_CMD_CLEAR) {
            memset(core->live, 0, entries * sizeof(uint64_t));
            memset(core->snap, 0, entries * sizeof(uint64_t));
            for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
                core->pcie_tags[e] = (core->pcie_tags[e] & 0xFFFF) |
                                     0x07FF0000;
                core->pcie_stfifo[e] = (core->pcie_stfifo[e] & 0xFFFF) |
                                       0xFFFF0000;
            }
        }
        if (bits & PTM_CMD_SNAPSHOT) {
            memcpy(core->snap, core->live, entries * sizeof(uint64_t));
        }
    }
}

uint64_t ptm_core_busy_until(const PtmCore *core)
{
    return core->busy_end;
}

static uint32_t reg_read(PtmCore *core, uint64_t m, uint32_t addr)
{
    const PtmConfig *c = &core->cfg;
    const PtmLayout *l = &core->lay;
    unsigned e;

    addr &= PTM_BAR_SIZE - 1;
    if (addr >= PTM_CNT_BASE) {
        uint64_t v;

        e = (addr >> 3) & (l->entries - 1);
        if (e >= c->pcie_endpoints * l->channels_per_endpoint) {
            return 0;
        }
        v = core->read_sel ? core->live[e] : core->snap[e];
        return (addr & 4) ? (uint32_t)(v >> 32) : (uint32_t)v;
    }
    addr &= 0xFC;
    if (addr >= PTM_REG_PCIE_STATUS) {
        e = (addr & 0x3F) >> 2;
        if (e >= c->pcie_endpoints) {
            return 0;
        }
        switch (addr & 0xC0) {
        case PTM_REG_PCIE_STATUS:
            return core->pcie_status[e];
        case PTM_REG_PCIE_TAGS:
            return core->pcie_tags[e];
        default:
            return core->pcie_stfifo[e];
        }
    }
    switch (addr) {
    case PTM_REG_MAGIC:
        return PTM_MAGIC;
    case PTM_REG_VERSION:
        return PTM_VERSION;
    case PTM_REG_CFG_TOPOLOGY:
        return (c->pcie_endpoints & 0xFF) | (c->dma_ports & 0xFF) << 8 |
               ((2 * c->pcie_endpoints) & 0xFF) << 16;
    case PTM_REG_CFG_LAYOUT:
        return (l->entries & 0xFFFF) | (c->cnt_width & 0xFF) << 16 |
               (l->channels_per_endpoint & 0xFF) << 24;
    case PTM_REG_CFG_PCIE:
        return (l->pcie_channels & 0xFF) | 2 << 8 |
               (l->pcie_regions & 0xFF) << 16 |
               (PTM_BRAKES + PTM_HISTS * PTM_HIST_BANDS) << 24;
    case PTM_REG_CFG_DMA:
        return (l->dma_channels & 0xFF) | ((2 * c->dma_ports) & 0xFF) << 8 |
               (l->dma_regions & 0xFF) << 16;
    case PTM_REG_CFG_DRAIN:
        return (c->drain_period & 0xFFFF) | (c->mfb_item_bytes & 0xFF) << 16;
    case PTM_REG_CNT_BASE:
        return PTM_CNT_BASE;
    case PTM_REG_STATUS:
        return (is_busy(core, m) ? PTM_STATUS_BUSY : 0) |
               (core->lost ? PTM_STATUS_LOST : 0) |
               (core->overrun ? PTM_STATUS_OVERRUN : 0);
    case PTM_REG_READ_SEL:
        return core->read_sel;
    case PTM_REG_CFG_REGIONS:
        return (c->pcie_rq_mfb_regions & 0xFF) |
               (c->pcie_rc_mfb_regions & 0xFF) << 8 |
               (c->dma_up_mfb_regions & 0xFF) << 16 |
               (c->dma_down_mfb_regions & 0xFF) << 24;
    case PTM_REG_CFG_WIDTH:
        return (c->pcie_rq_mfb_region_bytes & 0xFFFF) |
               (c->pcie_rc_mfb_region_bytes & 0xFFFF) << 16;
    case PTM_REG_CFG_HIST:
        return PTM_HIST_BANDS | PTM_HISTS << 8;
    case PTM_REG_CFG_CAPACITY:
        return (c->tag_capacity & 0xFFFF) |
               (c->stfifo_capacity & 0xFFFF) << 16;
    case PTM_REG_CFG_WIDTH_DMA:
        return (c->dma_up_mfb_region_bytes & 0xFFFF) |
               (c->dma_down_mfb_region_bytes & 0xFFFF) << 16;
    default:            /* COMMAND and the unused words read 0 */
        return 0;
    }
}

static void reg_write(PtmCore *core, uint64_t m, uint32_t addr, uint32_t v)
{
    addr &= PTM_BAR_SIZE - 1;
    if (addr >= PTM_CNT_BASE) {
        return;
    }
    switch (addr & 0xFC) {
    case PTM_REG_COMMAND:
        command(core, m, v & 0xF);
        break;
    case PTM_REG_READ_SEL:
        core->read_sel = v & 1;
        break;
    default:
        break;
    }
}

uint64_t ptm_core_read(PtmCore *core, uint64_t now_ns, uint32_t addr,
                       unsigned size)
{
    uint64_t m = ptm_core_mi_cycle(core, now_ns);
    uint64_t v = 0;
    uint32_t word = 0, word_addr = 1;   /* 1: no word read yet */

    advance_mi(core, m);
    size = MIN(MAX(size, 1u), 8u);
    /* the MI bus returns whole words; byte lanes pick the bytes asked for */
    for (unsigned i = 0; i < size; i++) {
        uint32_t a = addr + i;

        if ((a & ~3u) != word_addr) {
            word_addr = a & ~3u;
            word = reg_read(core, m, word_addr);
        }
        v |= (uint64_t)((word >> (8 * (a & 3))) & 0xFF) << (8 * i);
    }
    return v;
}

void ptm_core_write(PtmCore *core, uint64_t now_ns, uint32_t addr,
                    uint64_t val, unsigned size)
{
    uint64_t m = ptm_core_mi_cycle(core, now_ns);
    uint32_t word = 0, word_addr = addr & ~3u;

    advance_mi(core, m);
    size = MIN(MAX(size, 1u), 8u);
    /* byte enables are ignored: bytes not written arrive as zeros */
    for (unsigned i = 0; i < size; i++) {
        uint32_t a = addr + i;

        if ((a & ~3u) != word_addr) {
            reg_write(core, m, word_addr, word);
            word_addr = a & ~3u;
            word = 0;
        }
        word |= (uint32_t)((val >> (8 * i)) & 0xFF) << (8 * (a & 3));
    }
    reg_write(core, m, word_addr, word);
}

uint64_t ptm_core_counter(const PtmCore *core, bool snapshot, unsigned e)
{
    if (e >= core->lay.entries) {
        return 0;
    }
    return snapshot ? core->snap[e] : core->live[e];
}

uint64_t ptm_core_lost_deltas(const PtmCore *core)
{
    return core->n_lost;
}

uint64_t ptm_core_applied_deltas(const PtmCore *core)
{
    return core->n_applied;
}

/* ------------------------------------------------------------------ */
/* Migration                                                            */

#define PTM_SAVE_MAGIC   0x50544D53u    /* "PTMS" */
#define PTM_SAVE_VERSION 1u

static void put(GByteArray *b, const void *p, size_t n)
{
    g_byte_array_append(b, p, n);
}

static void put64(GByteArray *b, uint64_t v)
{
    uint8_t le[8];

    for (int i = 0; i < 8; i++) {
        le[i] = v >> (8 * i);
    }
    put(b, le, 8);
}

/* Every generic and clock: a state only fits a card built alike. */
static void config_put(GByteArray *b, const PtmConfig *c)
{
    const uint32_t *u32[] = {
        &c->pcie_endpoints, &c->dma_ports, &c->pcie_rq_mfb_regions,
        &c->pcie_rc_mfb_regions, &c->dma_up_mfb_regions,
        &c->dma_down_mfb_regions, &c->pcie_rq_mfb_region_bytes,
        &c->pcie_rc_mfb_region_bytes, &c->dma_up_mfb_region_bytes,
        &c->dma_down_mfb_region_bytes, &c->mfb_item_bytes,
        &c->pcie_eof_pos_width, &c->dma_eof_pos_width, &c->cnt_width,
        &c->drain_period, &c->tag_capacity, &c->stfifo_capacity,
    };

    for (size_t i = 0; i < G_N_ELEMENTS(u32); i++) {
        put64(b, *u32[i]);
    }
    put64(b, c->pcie_clk_hz);
    put64(b, c->dma_clk_hz);
    put64(b, c->mi_clk_hz);
}

void *ptm_core_save(const PtmCore *core, size_t *len)
{
    GByteArray *b = g_byte_array_new();

    put64(b, PTM_SAVE_MAGIC);
    put64(b, PTM_SAVE_VERSION);
    config_put(b, &core->cfg);
    for (unsigned e = 0; e < core->lay.entries; e++) {
        put64(b, core->live[e]);
        put64(b, core->snap[e]);
    }
    put64(b, core->mi_done);
    put64(b, core->acc_free);
    put64(b, core->rr);
    put64(b, core->busy_start);
    put64(b, core->busy_end);
    put64(b, core->lost | core->overrun << 1 | core->read_sel << 2);
    for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
        const PtmSettings *s = &core->settings[e];

        put64(b, core->pcie_status[e]);
        put64(b, core->pcie_tags[e]);
        put64(b, core->pcie_stfifo[e]);
        put64(b, s->mps | s->mrrs << 3 | s->ext_tag << 6 |
                 s->tag_10bit << 7 | s->rcb_128 << 8);
    }
    put64(b, core->n_lost);
    put64(b, core->n_applied);
    for (unsigned i = 0; i < core->nprobes; i++) {
        const PtmProbe *p = &core->probe[i];

        put64(b, p->origin);
        put64(b, p->window);
        put64(b, p->cs.open);
        put64(b, p->cs.tag_min | (uint64_t)p->cs.stfifo_min << 16 |
                 (uint64_t)p->cs.tag_last << 32 |
                 (uint64_t)p->cs.stfifo_last << 48);
        put64(b, p->cs.link_last);
        put64(b, p->pend_n);
        put64(b, p->pend_next);
        put64(b, p->pend_cycle0);
        for (unsigned c = 0; c < p->pend_n; c++) {
            put64(b, p->pend[c]);
        }
        put64(b, p->count);
        for (unsigned k = 0; k < p->count; k++) {
            const PtmDelta *d = &p->fifo[(p->head + k) % p->fifo_depth];

            put64(b, d->vis);
            put64(b, d->value | (uint64_t)d->channel << 32);
        }
    }
    *len = b->len;
    return g_byte_array_free(b, FALSE);
}

typedef struct Reader {
    const uint8_t *p;
    size_t left;
    bool bad;
} Reader;

static uint64_t get64(Reader *r)
{
    uint64_t v = 0;

    if (r->left < 8) {
        r->bad = true;
        return 0;
    }
    for (int i = 0; i < 8; i++) {
        v |= (uint64_t)r->p[i] << (8 * i);
    }
    r->p += 8;
    r->left -= 8;
    return v;
}

static char *load_into(PtmCore *core, const void *buf, size_t len)
{
    Reader r = { .p = buf, .left = len };
    GByteArray *want = g_byte_array_new();
    uint64_t flags;
    bool same = true;

    if (get64(&r) != PTM_SAVE_MAGIC || get64(&r) != PTM_SAVE_VERSION) {
        g_byte_array_free(want, TRUE);
        return g_strdup("telemetry state: not a state of this version");
    }
    config_put(want, &core->cfg);
    for (size_t i = 0; i < want->len / 8; i++) {
        uint64_t v = 0;

        for (int k = 0; k < 8; k++) {
            v |= (uint64_t)want->data[8 * i + k] << (8 * k);
        }
        same &= get64(&r) == v;
    }
    g_byte_array_free(want, TRUE);
    if (!same || r.bad) {
        return g_strdup("telemetry state: saved with other properties");
    }
    for (unsigned e = 0; e < core->lay.entries; e++) {
        core->live[e] = get64(&r) & core->cnt_mask;
        core->snap[e] = get64(&r) & core->cnt_mask;
    }
    core->mi_done = get64(&r);
    core->acc_free = get64(&r);
    core->rr = get64(&r) % core->nprobes;
    core->busy_start = get64(&r);
    core->busy_end = get64(&r);
    flags = get64(&r);
    core->lost = flags & 1;
    core->overrun = flags >> 1 & 1;
    core->read_sel = flags >> 2 & 1;
    for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
        uint64_t s;

        core->pcie_status[e] = get64(&r);
        core->pcie_tags[e] = get64(&r);
        core->pcie_stfifo[e] = get64(&r);
        s = get64(&r);
        core->settings[e] = (PtmSettings) {
            .mps = s & 7, .mrrs = s >> 3 & 7, .ext_tag = s >> 6 & 1,
            .tag_10bit = s >> 7 & 1, .rcb_128 = s >> 8 & 1,
        };
    }
    core->n_lost = get64(&r);
    core->n_applied = get64(&r);
    for (unsigned i = 0; i < core->nprobes && !r.bad; i++) {
        PtmProbe *p = &core->probe[i];
        uint64_t v;

        p->origin = get64(&r);
        p->window = get64(&r);
        p->cs.open = get64(&r);
        v = get64(&r);
        p->cs.tag_min = v;
        p->cs.stfifo_min = v >> 16;
        p->cs.tag_last = v >> 32;
        p->cs.stfifo_last = v >> 48;
        p->cs.link_last = get64(&r) & 1;
        p->pend_n = get64(&r);
        p->pend_next = get64(&r);
        p->pend_cycle0 = get64(&r);
        if (p->pend_n > p->sh.channels || p->pend_next > p->pend_n) {
            r.bad = true;
            break;
        }
        for (unsigned c = 0; c < p->pend_n; c++) {
            p->pend[c] = get64(&r);
        }
        p->head = 0;
        p->count = get64(&r);
        if (p->count > p->fifo_depth) {
            r.bad = true;
            break;
        }
        for (unsigned k = 0; k < p->count; k++) {
            p->fifo[k].vis = get64(&r);
            v = get64(&r);
            p->fifo[k].value = (uint32_t)v;
            p->fifo[k].channel = (uint32_t)(v >> 32) % p->sh.channels;
        }
        p->next_ev = probe_next_event(core, p);
        probe_refresh(core, p);
    }
    find_next_drain(core);
    if (r.bad || r.left) {
        return g_strdup("telemetry state: truncated or corrupt");
    }
    return NULL;
}

char *ptm_core_load(PtmCore *core, const void *buf, size_t len)
{
    /* into a scratch core first, so that a bad state changes nothing */
    PtmCore *tmp = ptm_core_new(&core->cfg);
    char *err = load_into(tmp, buf, len);
    PtmCore keep;

    if (!err) {
        keep = *core;
        *core = *tmp;
        core->ops = keep.ops;
        core->opaque = keep.opaque;
        *tmp = keep;
    }
    ptm_core_free(tmp);
    return err;
}
