/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Does the accumulator keep up with a configuration? Its load follows
 * from the generics and clocks alone; whether a SNAPSHOT's pause makes a
 * FIFO overflow depends on how the drains of the probes fall against the
 * pause, so that is found by running the block's timing (which no traffic
 * changes) with SNAPSHOTs at many phases. Used by the device at realize
 * to warn about a card that loses deltas.
 */
#include <glib.h>

#include "ptm-sizing.h"

#define NS_PER_S_SIZING 1000000000ull

double ptm_config_load(const PtmConfig *cfg)
{
    PtmLayout lay;
    double per_s;

    ptm_layout_compute(cfg, &lay);
    /* deltas per second offered, each taking PTM_ACC_MI_PER_DELTA cycles */
    per_s = cfg->pcie_endpoints *
            ((double)lay.pcie_channels * cfg->pcie_clk_hz +
             (double)lay.dma_channels * cfg->dma_clk_hz) / cfg->drain_period;
    return per_s * PTM_ACC_MI_PER_DELTA / cfg->mi_clk_hz;
}

/* Snapshots at this many phases of the drains. */
#define PTM_SIZING_PHASES 64

/*
 * Run the timing of cfg on an idle card and report whether deltas were
 * lost before any command (*steady) and after SNAPSHOTs at
 * PTM_SIZING_PHASES phases of the drains (*paused).
 */
static void sizing_run(const PtmConfig *cfg, double load, bool *steady,
                       bool *paused)
{
    PtmCore *core = ptm_core_new(cfg);
    const PtmLayout *lay = ptm_core_layout(core);
    uint64_t fast = MAX(cfg->pcie_clk_hz, cfg->dma_clk_hz);
    uint64_t slow = MIN(cfg->pcie_clk_hz, cfg->dma_clk_hz);
    uint64_t t_short = (uint64_t)cfg->drain_period * NS_PER_S_SIZING / fast;
    uint64_t t_long = (uint64_t)cfg->drain_period * NS_PER_S_SIZING / slow;
    /* the longest pause (a request waits up to a delta, then sweeps) */
    uint64_t pause = (2 * (uint64_t)lay->entries + 8) * NS_PER_S_SIZING /
                     cfg->mi_clk_hz;
    /*
     * Between two SNAPSHOTs the FIFOs drain what the pause held back (at
     * load r that takes about pause x r / (1 - r)); the spacing then
     * moves on by an odd fraction of both window lengths, so that the
     * SNAPSHOTs meet every phase of the drains.
     */
    double r = MIN(load, 0.98);
    uint64_t spacing = MAX(t_short, (uint64_t)(pause * (2 + 4 * r / (1 - r)))) +
                       t_long / PTM_SIZING_PHASES + t_short / 7 + 3;
    uint64_t t = 2 * t_long + 2 * t_short;

    ptm_core_power_on(core, 0);
    *steady = ptm_core_read(core, t, PTM_REG_STATUS, 4) & PTM_STATUS_LOST;
    for (unsigned i = 0; i < PTM_SIZING_PHASES && !*steady; i++) {
        ptm_core_write(core, t, PTM_REG_COMMAND, PTM_CMD_SNAPSHOT, 4);
        t += spacing;
    }
    *paused = !*steady &&
              (ptm_core_read(core, t + t_long, PTM_REG_STATUS, 4) &
               PTM_STATUS_LOST);
    ptm_core_free(core);
}

void ptm_config_sizing(const PtmConfig *cfg, PtmSizing *out)
{
    PtmConfig c = *cfg;

    *out = (PtmSizing) { .load = ptm_config_load(cfg) };
    if (out->load > 1) {
        out->steady_loss = true;
    } else {
        sizing_run(cfg, out->load, &out->steady_loss, &out->pause_loss);
    }
    if (!out->steady_loss && !out->pause_loss) {
        return;
    }
    /* the smallest larger drain period that avoids both */
    for (c.drain_period = cfg->drain_period * 2;
         c.drain_period <= PTM_MAX_DRAIN_PERIOD; c.drain_period *= 2) {
        double load = ptm_config_load(&c);
        bool steady, paused;

        if (load > 1) {
            continue;
        }
        sizing_run(&c, load, &steady, &paused);
        if (!steady && !paused) {
            out->safe_drain_period = c.drain_period;
            return;
        }
    }
}

/* Steps of the copy's run: as the device's timer ticks, at its shortest. */
#define PTM_LOSSY_STEP_NS 4000000ull
/* Windows counted one by one after which a mostly-single run stops. */
#define PTM_LOSSY_ENOUGH 20000

bool ptm_config_lossy_bulk(const PtmConfig *cfg, const PtmSourceOps *ops,
                           void *opaque, uint64_t ns, uint64_t *single,
                           uint64_t *all)
{
    PtmCore *core = ptm_core_new(cfg);
    PtmEvalStats st = { 0 };

    ptm_core_set_source(core, ops, opaque);
    ptm_core_power_on(core, 0);
    for (uint64_t t = PTM_LOSSY_STEP_NS; t <= ns; t += PTM_LOSSY_STEP_NS) {
        ptm_core_advance_coarse(core, t);
        ptm_core_eval_stats(core, &st);
        if (st.single_windows >= PTM_LOSSY_ENOUGH &&
            st.single_windows >
            9 * (st.table_windows + st.bulk_windows)) {
            break;
        }
    }
    ptm_core_free(core);
    *single = st.single_windows;
    *all = st.single_windows + st.table_windows + st.bulk_windows;
    return *single <= 9 * (*all - *single);
}
