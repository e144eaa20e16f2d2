/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU-free model of PCIE_TELEMETRY_MI: the block's construction, reset,
 * register file, commands and migration state. The configuration rules are
 * in ptm-config.c, the evaluation of probes, FIFOs and the accumulator on
 * the virtual clock in ptm-eval.c. Cycle c of a clock of f Hz happens at
 * c / f seconds of virtual time; all conversions are exact integer
 * arithmetic.
 */
#include <string.h>

#include "ptm-core.h"
#include "ptm-eval-int.h"
#include "ptm-bytes.h"

/* ------------------------------------------------------------------ */
/* Time                                                                 */

static uint64_t ptm_cycles_at_ns(uint64_t ns, uint64_t hz)
{
    return (uint64_t)((u128)ns * hz / NS_PER_S);
}

static uint64_t ptm_first_cycle_at_ns(uint64_t ns, uint64_t hz)
{
    return (uint64_t)(((u128)ns * hz + NS_PER_S - 1) / NS_PER_S);
}

uint64_t ptm_core_mi_cycle(const PtmCore *core, uint64_t now_ns)
{
    return ptm_cycles_at_ns(now_ns, core->cfg.mi_clk_hz);
}

uint64_t ptm_core_next_pcie_window(const PtmCore *core, uint64_t now_ns)
{
    const PtmProbe *p = &core->probe[0];
    uint64_t hz = p->sh.info.hz, dp = core->cfg.drain_period;
    uint64_t c = ptm_cycles_at_ns(now_ns, hz), w = 1, start;

    if (p->origin > c + dp) {
        return c + 1;           /* held in reset: from the next cycle */
    }
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
    ptm_probe_order_init(p);
    /* room for ITEMS + 3 deltas (see PtmProbe) */
    p->ring_mask = 2 * p->fifo_depth - 1;
    p->fifo = g_new0(PtmDelta, p->ring_mask + 1);
    p->rq = g_new0(uint64_t, p->ring_mask + 1);
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
    core->live_old = g_new0(uint64_t, core->lay.entries);
    core->snap_old = g_new0(uint64_t, core->lay.entries);
    core->chunk = ptm_chunk_new();
    core->step_slots = PTM_STEP_SLOTS;
    core->tail = g_array_new(FALSE, FALSE, sizeof(PtmSegment));
    core->tail_seg = g_new(PtmSegment, PTM_CHUNK_SEGMENTS);
    ptm_eval_init(core);
    for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
        /* power-on values of Device Control: 128 B payload, 512 B reads */
        core->settings[e] = (PtmSettings) { .mps = 0, .mrrs = 2 };
    }
    ptm_core_power_on(core, 0);
    return core;
}

void ptm_core_free(PtmCore *core)
{
    if (!core) {
        return;
    }
    for (unsigned i = 0; i < core->nprobes; i++) {
        g_free(core->probe[i].pend);
        ptm_probe_order_free(&core->probe[i]);
        g_free(core->probe[i].fifo);
        g_free(core->probe[i].rq);
        for (unsigned k = 0; k < PTM_MEMO_SLOTS; k++) {
            g_free(core->probe[i].memo[k].d);
        }
    }
    ptm_eval_free(core);
    g_free(core->probe);
    g_free(core->drain_at);
    g_free(core->offer);
    g_free(core->live);
    g_free(core->snap);
    g_free(core->live_old);
    g_free(core->snap_old);
    ptm_chunk_free(core->chunk);
    g_array_free(core->tail, TRUE);
    g_free(core->tail_seg);
    g_free(core);
}

const PtmLayout *ptm_core_layout(const PtmCore *core)
{
    return &core->lay;
}

void ptm_core_probe_shape(const PtmCore *core, unsigned e, PtmDomain d,
                          PtmProbeShape *sh)
{
    *sh = core->probe[2 * e + (d == PTM_DOMAIN_DMA)].sh;
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
    ptm_eval_source_changed(core);
}

void ptm_core_set_reference(PtmCore *core, bool on)
{
    core->reference = on;
}

/*
 * Not a catch-up: the change waits in a queue until the evaluation reaches
 * its moment, so a guest that writes Device Control does not wait for a
 * model that costs more than real time.
 */
void ptm_core_set_settings(PtmCore *core, uint64_t now_ns, unsigned e,
                           const PtmSettings *s)
{
    uint64_t m = ptm_core_mi_cycle(core, now_ns);

    const PtmSettings *last;

    if (e >= PTM_MAX_ENDPOINTS) {
        return;
    }
    last = &core->settings[e];
    /* the settings this endpoint will have: unchanged is no change */
    for (unsigned k = 0; k < core->nchanges; k++) {
        if (core->changes[k].endpoint == e) {
            last = &core->changes[k].settings;
        }
    }
    if (!memcmp(last, s, sizeof(*s))) {
        return;
    }
    if (core->nchanges == PTM_SETTINGS_QUEUE) {
        /* a full queue: bring the model up to now after all */
        ptm_eval_advance(core, m);
    }
    if (m <= core->mi_done) {
        core->settings[e] = *s;
        return;
    }
    core->changes[core->nchanges++] = (PtmSettingsChange) {
        .mi = m, .endpoint = e, .settings = *s,
    };
}

/* ------------------------------------------------------------------ */
/* Reset                                                                */

static void ptm_live_regs_reset(PtmCore *core)
{
    for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
        core->pcie_status[e] = 0;
        core->pcie_tags[e] = 0x07FF0000;
        core->pcie_stfifo[e] = 0xFFFF0000;
    }
}

/* The registers of the MI side and the accumulator after MI_RESET. */
static void mi_side_reset(PtmCore *core, uint64_t m)
{
    ptm_eval_refresh_all(core);
    ptm_eval_restart(core);
    core->mi_done = m;
    core->acc_free = m + 1;
    core->rr = 0;            /* RESET: the stream served last is 0 */
    core->busy_start = core->busy_end = 0;
    core->nsweep = 0;
    core->sw_q = core->sw_bits = 0;
    core->acc_block = UINT64_MAX;
    core->lost = core->overrun = false;
    core->read_sel = false;
    core->low_clear_at = UINT64_MAX;
    ptm_live_regs_reset(core);
}

/*
 * MI_RESET sampled by MI edges m .. m + cycles - 1 (a QEMU system reset:
 * one edge). The accumulator drops a delta it has not written, the FIFOs
 * empty at once, the MI side restarts (the counter memory keeps its
 * values), and each probe, through its reset synchronizer, is held from
 * the first of its edges after MI edge m - 1 to two edges after the first
 * one past MI edge m + cycles - 1: its windows start again from there.
 * What the reset does not reach stays: a PCIe probe's running lowest
 * values and the level of its status handshake, which, if it toggled an
 * odd number of times, delivers its last word again 5 MI edges after the
 * reset (the MI side's copy of the level was reset).
 */
void ptm_core_mi_reset(PtmCore *core, uint64_t now_ns, unsigned cycles)
{
    uint64_t m = ptm_core_mi_cycle(core, now_ns);
    uint64_t last = m + MAX(cycles, 1u) - 1;

    if (now_ns == core->power_on_ns) {
        /*
         * The reset that brings the configured FPGA up (QEMU resets every
         * device when the machine starts, or right after a hot-plug):
         * still the power-on state.
         */
        ptm_core_power_on(core, now_ns);
        return;
    }
    /* what happened before the reset stays in the counter memory */
    ptm_eval_advance(core, m);
    for (unsigned i = 0; i < core->nprobes; i++) {
        PtmProbe *p = &core->probe[i];
        uint64_t hz = p->sh.info.hz, mi = core->cfg.mi_clk_hz;
        uint64_t o = (uint64_t)((u128)last * hz / mi) + 1 + 2;
        PtmStatusWord again = { 0 };
        bool repeat = false;

        if (p->sh.info.domain == PTM_DOMAIN_PCIE) {
            /* the running lowest: on to the reset's end, kept */
            ptm_probe_keep_lowest(core, p, o + 1);
            repeat = p->hs_odd && p->has_sent;
            again = p->sent;
            again.at = last + 6;
        }
        p->origin = o;
        ptm_eval_probe_reset(core, p);
        if (repeat) {
            p->word[p->nword++] = again;
        }
    }
    mi_side_reset(core, m);
}

void ptm_core_reset(PtmCore *core, uint64_t now_ns)
{
    ptm_core_mi_reset(core, now_ns, 1);
}

void ptm_core_power_on(PtmCore *core, uint64_t now_ns)
{
    uint64_t m = ptm_core_mi_cycle(core, now_ns);

    /*
     * Nothing ran before the FPGA was configured: no catching up, no
     * state to keep; the probes' first windows start at the first cycle
     * of each clock from now on.
     */
    core->mi_done = m;
    core->power_on_ns = now_ns;
    for (unsigned i = 0; i < core->nprobes; i++) {
        PtmProbe *p = &core->probe[i];

        p->origin = ptm_first_cycle_at_ns(now_ns, p->sh.info.hz);
        p->hs_odd = p->has_sent = false;
        p->keep_lowest = false;
        p->rt_tag_min = p->rt_stf_min = 0xFFFF;
        ptm_eval_probe_reset(core, p);
    }
    mi_side_reset(core, m);
    memset(core->live, 0, core->lay.entries * sizeof(uint64_t));
    memset(core->snap, 0, core->lay.entries * sizeof(uint64_t));
    core->n_lost = core->n_applied = 0;
}


void ptm_core_advance(PtmCore *core, uint64_t now_ns)
{
    ptm_eval_advance(core, ptm_core_mi_cycle(core, now_ns));
}

void ptm_core_advance_coarse(PtmCore *core, uint64_t now_ns)
{
    ptm_eval_advance_coarse(core, ptm_core_mi_cycle(core, now_ns));
}

uint64_t ptm_core_done_ns(const PtmCore *core)
{
    uint64_t hz = core->cfg.mi_clk_hz;

    return (uint64_t)(((u128)core->mi_done * NS_PER_S + hz - 1) / hz);
}

bool ptm_core_lazy(const PtmCore *core)
{
    /* a count over an empty span asks whether the source counts at all */
    return !core->reference && core->steady && !core->lossy &&
           (!core->ops || (core->ops->count && core->ops->cost &&
                           core->ops->cost(core->opaque) == PTM_COST_RANGE &&
                           core->ops->count(core->opaque, &core->probe[0].sh,
                                            0, 0, NULL, NULL)));
}

/* ------------------------------------------------------------------ */
/* Registers                                                            */

static bool is_busy(const PtmCore *core, uint64_t m)
{
    return m >= core->busy_start && m < core->busy_end;
}

/* MI cycles from a sweep's start to the first that reads BUSY 0. */
static uint64_t sweep_len(const PtmCore *core, uint32_t bits)
{
    uint64_t E = core->lay.entries;

    return (bits & PTM_CMD_SNAPSHOT) && (bits & PTM_CMD_CLEAR) ? 4 * E + 2
                                                               : 2 * E + 1;
}

/*
 * A SNAPSHOT and/or CLEAR written in MI cycle m. Its request is seen from
 * m + 2; a delta the accumulator took up to then is written first (it
 * may still take one or two whose pop comes by m + 2); the sweep starts
 * when the accumulator is idle, CLEAR before SNAPSHOT. A request made
 * while another waits or runs is kept until the running sweep ends; one
 * whose kind is already waiting joins it.
 */
static void command_sweep(PtmCore *core, uint64_t m, uint32_t bits)
{
    uint64_t q;

    if (core->nsweep) {
        /* the last scheduled sweep: join it if it has not started yet */
        unsigned k = core->nsweep - 1;

        if (core->sweep[k].q >= m + 2) {
            core->sweep[k].bits |= bits;
            core->busy_end = core->sweep[k].q +
                             sweep_len(core, core->sweep[k].bits);
            return;
        }
    }
    if (m + 2 < core->busy_end || core->nsweep) {
        /* behind the running one */
        q = MAX(core->busy_end, m + 2);
        if (core->nsweep == PTM_SWEEPS) {
            core->sweep[core->nsweep - 1].bits |= bits;
            return;
        }
    } else {
        q = MAX(m + 2, ptm_acc_last_take(core, m + 2 + PTM_ACC_SHOW_MI));
        core->acc_block = m + 3 + PTM_ACC_SHOW_MI;
        core->busy_start = m + 2;
    }
    core->sweep[core->nsweep].q = q;
    core->sweep[core->nsweep].bits = bits;
    core->nsweep++;
    core->busy_end = q + sweep_len(core, bits);
    ptm_eval_restart(core);
}

static void command(PtmCore *core, uint64_t m, uint32_t bits)
{
    if (bits & PTM_CMD_CLEAR_FLAGS) {
        /* the level change crosses to each probe: two of its edges */
        for (unsigned i = 0; i < core->nprobes; i++) {
            PtmProbe *p = &core->probe[i];
            uint64_t k1 = (uint64_t)((u128)m * p->sh.info.hz /
                                     core->cfg.mi_clk_hz) + 1;

            ptm_probe_flag(core, p, k1 + 2, false);
        }
    }
    if (bits & (PTM_CMD_CLEAR_LOWEST | PTM_CMD_CLEAR)) {
        /* registered in the next MI cycle, read from the one after */
        ptm_pcie_regs_at(core, m + 1);
        core->low_clear_at = MIN(core->low_clear_at, m + 2);
    }
    if (bits & (PTM_CMD_SNAPSHOT | PTM_CMD_CLEAR)) {
        command_sweep(core, m, bits & (PTM_CMD_SNAPSHOT | PTM_CMD_CLEAR));
    }
}

uint64_t ptm_core_busy_until(const PtmCore *core)
{
    return core->busy_end;
}

/*
 * Entry e of a copy as a read in MI cycle m sees it. A sweep that started
 * at q writes one address per cycle: CLEAR the live copy's entry e at
 * q + 1 + e and the snapshot copy's at q + 1 + E + e (SNAPSHOT after CLEAR
 * copies zeros there, no later than CLEAR does); SNAPSHOT alone reads an
 * entry in one cycle and writes it in the next, entry e at q + 2 + 2e. A
 * write shows from the MI cycle after it.
 */
static uint64_t entry_read(const PtmCore *core, uint64_t m, bool snap,
                           unsigned e)
{
    uint64_t E = core->lay.entries, q = core->sw_q;
    uint32_t bits = core->sw_bits;

    if (!bits || m < q || m >= q + sweep_len(core, bits)) {
        return snap ? core->snap[e] : core->live[e];
    }
    if (bits & PTM_CMD_CLEAR) {
        if (!snap) {
            return m < q + 2 + e ? core->live_old[e] : core->live[e];
        }
        return m < q + 2 + E + e ? core->snap_old[e] : core->snap[e];
    }
    if (!snap) {
        return core->live[e];
    }
    return m < q + 3 + 2 * e ? core->snap_old[e] : core->snap[e];
}

/* STATUS bit 1: the probes' flags as they show in MI cycle m. */
static bool flags_at(PtmCore *core, uint64_t m)
{
    bool any = false;

    for (unsigned i = 0; i < core->nprobes; i++) {
        PtmProbe *p = &core->probe[i];

        while (p->nflag && p->flagq[0].at <= m) {
            p->flag = p->flagq[0].v;
            memmove(&p->flagq[0], &p->flagq[1],
                    --p->nflag * sizeof(p->flagq[0]));
        }
        any |= p->flag;
    }
    return any;
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
        v = entry_read(core, m, !core->read_sel, e);
        return (addr & 4) ? (uint32_t)(v >> 32) : (uint32_t)v;
    }
    addr &= 0xFC;
    if (addr >= PTM_REG_PCIE_STATUS) {
        e = (addr & 0x3F) >> 2;
        if (e >= c->pcie_endpoints) {
            return 0;
        }
        ptm_pcie_regs_at(core, m);
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
               (flags_at(core, m) ? PTM_STATUS_LOST : 0) |
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

/*
 * Whether an access of the counter window reads the snapshot copy as it
 * stands for good: only a sweep changes that copy, and every sweep asked
 * for has run. Such a read leaves the evaluation where it is (it catches
 * up at the next access that needs it, to the same result), so that the
 * read-out of a card of many endpoints costs one catch-up, not one per
 * counter.
 */
static bool reads_settled_snapshot(const PtmCore *core, uint64_t m,
                                   uint32_t addr, unsigned size)
{
    uint32_t a = addr & (PTM_BAR_SIZE - 1);

    return a >= PTM_CNT_BASE && a + size <= PTM_BAR_SIZE &&
           core->read_sel == 0 && core->nsweep == 0 &&
           (!core->sw_bits || m >= core->sw_q + sweep_len(core,
                                                          core->sw_bits));
}

uint64_t ptm_core_read(PtmCore *core, uint64_t now_ns, uint32_t addr,
                       unsigned size)
{
    uint64_t m = ptm_core_mi_cycle(core, now_ns);
    uint64_t v = 0;
    uint32_t word = 0, word_addr = 1;   /* 1: no word read yet */

    size = MIN(MAX(size, 1u), 8u);
    if (!reads_settled_snapshot(core, m, addr, size)) {
        ptm_eval_advance(core, m);
    }
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

    ptm_eval_advance(core, m);
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
#define PTM_SAVE_VERSION 4u

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
        ptm_put64(b, *u32[i]);
    }
    ptm_put64(b, c->pcie_clk_hz);
    ptm_put64(b, c->dma_clk_hz);
    ptm_put64(b, c->mi_clk_hz);
}

void *ptm_core_save(const PtmCore *core, size_t *len)
{
    GByteArray *b = g_byte_array_new();

    ptm_put64(b, PTM_SAVE_MAGIC);
    ptm_put64(b, PTM_SAVE_VERSION);
    config_put(b, &core->cfg);
    for (unsigned e = 0; e < core->lay.entries; e++) {
        ptm_put64(b, core->live[e]);
        ptm_put64(b, core->snap[e]);
    }
    ptm_put64(b, core->mi_done);
    ptm_put64(b, core->acc_free);
    ptm_put64(b, core->rr);
    ptm_put64(b, core->busy_start);
    ptm_put64(b, core->busy_end);
    ptm_put64(b, core->sw_q);
    ptm_put64(b, core->sw_bits | (uint64_t)core->nsweep << 8);
    ptm_put64(b, core->acc_block);
    ptm_put64(b, core->low_clear_at);
    ptm_put64(b, core->power_on_ns);
    for (unsigned k = 0; k < core->nsweep; k++) {
        ptm_put64(b, core->sweep[k].q);
        ptm_put64(b, core->sweep[k].bits);
    }
    for (unsigned e = 0; e < core->lay.entries; e++) {
        ptm_put64(b, core->live_old[e]);
        ptm_put64(b, core->snap_old[e]);
    }
    ptm_put64(b, core->lost | core->overrun << 1 | core->read_sel << 2 |
             core->reference << 3);
    for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
        const PtmSettings *s = &core->settings[e];

        ptm_put64(b, core->pcie_status[e]);
        ptm_put64(b, core->pcie_tags[e]);
        ptm_put64(b, core->pcie_stfifo[e]);
        ptm_put64(b, s->mps | s->mrrs << 3 | s->ext_tag << 6 |
                 s->tag_10bit << 7 | s->rcb_128 << 8);
    }
    ptm_put64(b, core->n_lost);
    ptm_put64(b, core->n_applied);
    ptm_put64(b, core->nchanges);
    for (unsigned k = 0; k < core->nchanges; k++) {
        const PtmSettingsChange *ch = &core->changes[k];
        const PtmSettings *s = &ch->settings;

        ptm_put64(b, ch->mi);
        ptm_put64(b, ch->endpoint | (uint64_t)(s->mps | s->mrrs << 3 |
                 s->ext_tag << 6 | s->tag_10bit << 7 | s->rcb_128 << 8) << 32);
    }
    for (unsigned i = 0; i < core->nprobes; i++) {
        const PtmProbe *p = &core->probe[i];

        ptm_put64(b, p->origin);
        ptm_put64(b, p->window);
        ptm_put64(b, p->cs.open);
        ptm_put64(b, p->cs.tag_min | (uint64_t)p->cs.stfifo_min << 16 |
                 (uint64_t)p->cs.tag_last << 32 |
                 (uint64_t)p->cs.stfifo_last << 48);
        ptm_put64(b, p->cs.link_last);
        ptm_put64(b, p->pend_n);
        ptm_put64(b, p->pend_next);
        ptm_put64(b, p->pend_cycle0);
        for (unsigned c = 0; c < p->pend_n; c++) {
            ptm_put64(b, p->pend[c]);
        }
        ptm_put64(b, p->count);
        for (unsigned k = 0; k < p->count; k++) {
            const PtmDelta *d = &p->fifo[(p->head + k) & p->ring_mask];

            ptm_put64(b, d->vis);
            ptm_put64(b, d->value | (uint64_t)d->channel << 32);
            ptm_put64(b, d->window);
            ptm_put64(b, d->f);
        }
        /* the FIFO's reads and what its writer has seen of them */
        ptm_put64(b, p->nread);
        ptm_put64(b, p->w_total);
        ptm_put64(b, p->seen);
        ptm_put64(b, p->nrq);
        for (unsigned k = 0; k < p->nrq; k++) {
            ptm_put64(b, p->rq[(p->rq_head + k) & p->ring_mask]);
        }
        for (unsigned k = 0; k < 2; k++) {
            ptm_put64(b, p->last_p[k]);
            ptm_put64(b, p->last_f[k]);
        }
        /* the fast evaluation: windows counted, losses not settled */
        ptm_put64(b, p->counted);
        ptm_put64(b, p->loss->len);
        for (unsigned k = 0; k < p->loss->len; k++) {
            ptm_put64(b, g_array_index(p->loss, PtmLoss, k).pos);
            ptm_put64(b, g_array_index(p->loss, PtmLoss, k).n);
        }
        /* epochs, counting ahead, what the last drain sends, own reset */
        ptm_put64(b, p->wbase);
        ptm_put64(b, p->cw);
        ptm_put64(b, p->primed | p->domain_reset << 1 | p->lost << 2 |
                 p->overrun << 3 | (uint64_t)p->flag << 4 |
                 (uint64_t)p->hs_odd << 5 | (uint64_t)p->has_sent << 6 |
                 (uint64_t)p->keep_lowest << 7 | (uint64_t)p->keep_tag << 16 |
                 (uint64_t)p->keep_stf << 32);
        ptm_put64(b, p->sent.at);
        ptm_put64(b, p->sent.status | (uint64_t)p->sent.tag_now << 32 |
                 (uint64_t)p->sent.stf_now << 48);
        ptm_put64(b, p->sent.tag_min | (uint64_t)p->sent.stf_min << 16);
        ptm_put64(b, p->cpos);
        for (unsigned c = 0; c < p->sh.channels; c++) {
            ptm_put64(b, p->carry[c]);
        }
        ptm_put64(b, p->rt_tag_min | (uint64_t)p->rt_stf_min << 16 |
                 (uint64_t)p->nword << 32 | (uint64_t)p->nflag << 40);
        for (unsigned k = 0; k < p->nword; k++) {
            const PtmStatusWord *w = &p->word[k];

            ptm_put64(b, w->at);
            ptm_put64(b, w->status | (uint64_t)w->tag_now << 32 |
                     (uint64_t)w->stf_now << 48);
            ptm_put64(b, w->tag_min | (uint64_t)w->stf_min << 16);
        }
        for (unsigned k = 0; k < p->nflag; k++) {
            ptm_put64(b, p->flagq[k].k);
            ptm_put64(b, p->flagq[k].at);
            ptm_put64(b, p->flagq[k].v);
        }
        ptm_put64(b, p->rst_at);
        ptm_put64(b, p->rst_scan);
    }
    *len = b->len;
    return g_byte_array_free(b, FALSE);
}

static char *load_into(PtmCore *core, const void *buf, size_t len)
{
    PtmReader r = { .p = buf, .left = len };
    GByteArray *want = g_byte_array_new();
    uint64_t flags;
    bool same = true;

    if (ptm_get64(&r) != PTM_SAVE_MAGIC || ptm_get64(&r) != PTM_SAVE_VERSION) {
        g_byte_array_free(want, TRUE);
        return g_strdup("telemetry state: not a state of this version");
    }
    config_put(want, &core->cfg);
    for (size_t i = 0; i < want->len / 8; i++) {
        uint64_t v = 0;

        for (int k = 0; k < 8; k++) {
            v |= (uint64_t)want->data[8 * i + k] << (8 * k);
        }
        same &= ptm_get64(&r) == v;
    }
    g_byte_array_free(want, TRUE);
    if (!same || r.bad) {
        return g_strdup("telemetry state: saved with other properties");
    }
    for (unsigned e = 0; e < core->lay.entries; e++) {
        core->live[e] = ptm_get64(&r) & core->cnt_mask;
        core->snap[e] = ptm_get64(&r) & core->cnt_mask;
    }
    core->mi_done = ptm_get64(&r);
    core->acc_free = ptm_get64(&r);
    core->rr = ptm_get64(&r) % core->nprobes;
    core->busy_start = ptm_get64(&r);
    core->busy_end = ptm_get64(&r);
    core->sw_q = ptm_get64(&r);
    flags = ptm_get64(&r);
    core->sw_bits = flags & (PTM_CMD_SNAPSHOT | PTM_CMD_CLEAR);
    core->nsweep = MIN(flags >> 8 & 0xFF, PTM_SWEEPS);
    core->acc_block = ptm_get64(&r);
    core->low_clear_at = ptm_get64(&r);
    core->power_on_ns = ptm_get64(&r);
    for (unsigned k = 0; k < core->nsweep; k++) {
        core->sweep[k].q = ptm_get64(&r);
        core->sweep[k].bits = ptm_get64(&r) & (PTM_CMD_SNAPSHOT | PTM_CMD_CLEAR);
    }
    for (unsigned e = 0; e < core->lay.entries; e++) {
        core->live_old[e] = ptm_get64(&r) & core->cnt_mask;
        core->snap_old[e] = ptm_get64(&r) & core->cnt_mask;
    }
    flags = ptm_get64(&r);
    core->lost = flags & 1;
    core->overrun = flags >> 1 & 1;
    core->read_sel = flags >> 2 & 1;
    /*
     * Bit 3 says which evaluation saved it. Either loads into either: a
     * state is settled (every drained window counted, each delta's value
     * known), which is what the reference keeps at all times.
     */
    for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
        uint64_t s;

        core->pcie_status[e] = ptm_get64(&r);
        core->pcie_tags[e] = ptm_get64(&r);
        core->pcie_stfifo[e] = ptm_get64(&r);
        s = ptm_get64(&r);
        core->settings[e] = (PtmSettings) {
            .mps = s & 7, .mrrs = s >> 3 & 7, .ext_tag = s >> 6 & 1,
            .tag_10bit = s >> 7 & 1, .rcb_128 = s >> 8 & 1,
        };
    }
    core->n_lost = ptm_get64(&r);
    core->n_applied = ptm_get64(&r);
    core->nchanges = ptm_get64(&r);
    if (core->nchanges > PTM_SETTINGS_QUEUE) {
        return g_strdup("telemetry state: truncated or corrupt");
    }
    for (unsigned k = 0; k < core->nchanges; k++) {
        uint64_t v, s;

        core->changes[k].mi = ptm_get64(&r);
        v = ptm_get64(&r);
        s = v >> 32;
        core->changes[k].endpoint = (uint32_t)v % PTM_MAX_ENDPOINTS;
        core->changes[k].settings = (PtmSettings) {
            .mps = s & 7, .mrrs = s >> 3 & 7, .ext_tag = s >> 6 & 1,
            .tag_10bit = s >> 7 & 1, .rcb_128 = s >> 8 & 1,
        };
    }
    for (unsigned i = 0; i < core->nprobes && !r.bad; i++) {
        PtmProbe *p = &core->probe[i];
        uint64_t v;

        p->origin = ptm_get64(&r);
        p->window = ptm_get64(&r);
        p->cs.open = ptm_get64(&r);
        v = ptm_get64(&r);
        p->cs.tag_min = v;
        p->cs.stfifo_min = v >> 16;
        p->cs.tag_last = v >> 32;
        p->cs.stfifo_last = v >> 48;
        p->cs.link_last = ptm_get64(&r) & 1;
        p->pend_n = ptm_get64(&r);
        p->pend_next = ptm_get64(&r);
        p->pend_cycle0 = ptm_get64(&r);
        if (p->pend_n > p->sh.channels || p->pend_next > p->pend_n) {
            r.bad = true;
            break;
        }
        for (unsigned c = 0; c < p->pend_n; c++) {
            p->pend[c] = ptm_get64(&r);
        }
        p->head = 0;
        p->count = ptm_get64(&r);
        if (p->count > p->ring_mask + 1) {
            r.bad = true;
            break;
        }
        for (unsigned k = 0; k < p->count; k++) {
            p->fifo[k].vis = ptm_get64(&r);
            v = ptm_get64(&r);
            p->fifo[k].value = (uint32_t)v;
            p->fifo[k].channel = (uint32_t)(v >> 32) % p->sh.channels;
            p->fifo[k].window = ptm_get64(&r);
            p->fifo[k].f = ptm_get64(&r);
        }
        p->nread = ptm_get64(&r);
        p->w_total = ptm_get64(&r);
        p->seen = ptm_get64(&r);
        p->rq_head = 0;
        p->nrq = ptm_get64(&r);
        if (p->nread > p->count || p->nrq > p->ring_mask + 1 ||
            p->seen > p->w_total) {
            r.bad = true;
            break;
        }
        for (unsigned k = 0; k < p->nrq; k++) {
            p->rq[k] = ptm_get64(&r);
        }
        for (unsigned k = 0; k < 2; k++) {
            p->last_p[k] = ptm_get64(&r);
            p->last_f[k] = ptm_get64(&r);
        }
        p->counted = ptm_get64(&r);
        if (p->counted > p->window) {
            r.bad = true;
            break;
        }
        v = ptm_get64(&r);
        if (v > r.left / 16) {
            r.bad = true;
            break;
        }
        for (uint64_t k = 0; k < v; k++) {
            PtmLoss l = { .pos = ptm_get64(&r) };

            l.n = ptm_get64(&r);
            g_array_append_val(p->loss, l);
        }
        p->wbase = ptm_get64(&r);
        p->cw = ptm_get64(&r);
        v = ptm_get64(&r);
        p->primed = v & 1;
        p->domain_reset = v >> 1 & 1;
        p->lost = v >> 2 & 1;
        p->overrun = v >> 3 & 1;
        p->flag = v >> 4 & 1;
        p->hs_odd = v >> 5 & 1;
        p->has_sent = v >> 6 & 1;
        p->keep_lowest = v >> 7 & 1;
        p->keep_tag = (v >> 16) & 0x7FF;
        p->keep_stf = v >> 32;
        p->sent.at = ptm_get64(&r);
        v = ptm_get64(&r);
        p->sent.status = (uint32_t)v & 0x3FF;
        p->sent.tag_now = (v >> 32) & 0x7FF;
        p->sent.stf_now = v >> 48;
        v = ptm_get64(&r);
        p->sent.tag_min = v & 0x7FF;
        p->sent.stf_min = v >> 16;
        p->cpos = ptm_get64(&r);
        for (unsigned c = 0; c < p->sh.channels; c++) {
            p->carry[c] = ptm_get64(&r);
        }
        v = ptm_get64(&r);
        p->rt_tag_min = v;
        p->rt_stf_min = v >> 16;
        p->nword = v >> 32 & 0xFF;
        p->nflag = v >> 40 & 0xFF;
        if (p->nword > PTM_WORDS || p->nflag > PTM_FLAG_CHANGES) {
            r.bad = true;
            break;
        }
        for (unsigned k = 0; k < p->nword; k++) {
            PtmStatusWord *w = &p->word[k];

            w->at = ptm_get64(&r);
            v = ptm_get64(&r);
            w->status = (uint32_t)v & 0x3FF;
            w->tag_now = (v >> 32) & 0x7FF;
            w->stf_now = v >> 48;
            v = ptm_get64(&r);
            w->tag_min = v & 0x7FF;
            w->stf_min = v >> 16;
        }
        for (unsigned k = 0; k < p->nflag; k++) {
            p->flagq[k].k = ptm_get64(&r);
            p->flagq[k].at = ptm_get64(&r);
            p->flagq[k].v = ptm_get64(&r) & 1;
        }
        p->rst_at = ptm_get64(&r);
        p->rst_scan = ptm_get64(&r);
        /*
         * The FIFO as its writer sees it: what was written and not seen
         * read is what waits in memory plus the reads not yet seen.
         */
        if (p->wbase > p->window || p->pend_cycle0 > UINT64_MAX / 2 ||
            p->origin > UINT64_MAX / 2 || p->cpos > UINT64_MAX / 2 ||
            p->nread > 2 || p->count - p->nread > p->fifo_depth ||
            p->nrq > p->fifo_depth ||
            p->w_total - p->seen != p->count - p->nread + p->nrq) {
            r.bad = true;
            break;
        }
        for (unsigned k = 0; k < p->nrq; k++) {
            r.bad |= p->rq[k] > UINT64_MAX / 2;
        }
        if (r.bad) {
            break;
        }
        p->next_ev = ptm_probe_next_event(core, p);
    }
    if (r.bad || r.left) {
        return g_strdup("telemetry state: truncated or corrupt");
    }
    ptm_eval_refresh_all(core);
    ptm_eval_restart(core);
    return NULL;
}

char *ptm_core_load(PtmCore *core, const void *buf, size_t len)
{
    /* into a scratch core first, so that a bad state changes nothing */
    PtmCore *tmp = ptm_core_new(&core->cfg);
    char *err;

    tmp->reference = core->reference;
    tmp->memo_off = core->memo_off;
    /* the source: a probe's next event may look for its resets */
    tmp->ops = core->ops;
    tmp->opaque = core->opaque;
    err = load_into(tmp, buf, len);
    if (!err) {
        /* what the model never reaches by itself is refused too */
        err = ptm_core_check(tmp);
    }
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

