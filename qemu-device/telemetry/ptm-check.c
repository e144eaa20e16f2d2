/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The invariants of a PCIE_TELEMETRY_MI model's state (ptm_core_check):
 * what every state the model reaches satisfies, and so what a state an
 * incoming migration brings must satisfy before the model runs on it.
 */
#include "ptm-eval-int.h"

/*
 * Farthest ahead of mi_done that something already scheduled may lie, in
 * MI cycles beyond what its own rule allows: clock rounding and the few
 * cycles of the bus crossings.
 */
#define SLACK 16

/* Positions stay far below overflow: QEMU's clock ends at 2^63 ns. */
#define POS_MAX (UINT64_MAX / 2)

#define FAIL(...) return g_strdup_printf("telemetry state: " __VA_ARGS__)

static char *check_probe(const PtmCore *core, const PtmProbe *p, unsigned i)
{
    unsigned n = p->sh.channels;
    uint64_t M = core->mi_done;
    uint64_t dp = core->cfg.drain_period;
    uint64_t prev = 0, last_vis = 0;

    /* windows: counted and drained ones, of this epoch */
    if (p->wbase > p->counted || p->counted > p->window) {
        FAIL("probe %u: windows out of order (epoch %" G_GUINT64_FORMAT ", counted %"
             G_GUINT64_FORMAT ", drained %" G_GUINT64_FORMAT ")", i, p->wbase, p->counted,
             p->window);
    }
    /* each public operation ends settled: nothing left to count */
    if (p->counted != p->window || p->loss->len) {
        FAIL("probe %u: drained windows not counted", i);
    }
    if (p->primed && (p->cw < p->wbase || p->cw > p->window)) {
        FAIL("probe %u: counting ahead of its windows", i);
    }
    if (p->origin > UINT64_MAX / 4 ||
        (p->window - p->wbase + 2) > (POS_MAX - p->origin) / dp) {
        FAIL("probe %u: window position out of range", i);
    }
    if (p->primed &&
        p->cpos != ptm_window_start(core, p, p->cw) + p->edges[p->nedges - 1]) {
        FAIL("probe %u: counting position is not its window's", i);
    }
    /* the next drain has not happened yet (nor the reset before it) */
    if (p->origin != UINT64_MAX / 4 &&
        ptm_mi_floor(core, p, ptm_window_start(core, p, p->window + 1)) <= M &&
        (p->rst_at == UINT64_MAX || ptm_mi_floor(core, p, p->rst_at) +
         PTM_ACC_SHOW_MI <= M)) {
        FAIL("probe %u: a drain before the evaluated time is pending", i);
    }
    /* the sweep of the last drain */
    if (p->pend_n > n || p->pend_next > p->pend_n ||
        p->pend_cycle0 > POS_MAX) {
        FAIL("probe %u: read-out out of range", i);
    }
    /* the FIFO: memory, two output registers, reads the writer sees late */
    if (p->nread > 2 || p->nread > p->count ||
        p->count - p->nread > p->fifo_depth || p->nrq > p->fifo_depth ||
        p->head > p->ring_mask || p->rq_head > p->ring_mask ||
        p->seen > p->w_total ||
        p->w_total - p->seen != p->count - p->nread + p->nrq) {
        FAIL("probe %u: FIFO counts disagree (%u held, %u read, %u reads "
             "unseen)", i, p->count, p->nread, p->nrq);
    }
    for (unsigned k = 0; k < p->count; k++) {
        const PtmDelta *d = &p->fifo[(p->head + k) & p->ring_mask];
        uint64_t pos;

        if (d->channel >= n || d->window < p->wbase ||
            d->window >= p->window) {
            FAIL("probe %u: FIFO entry %u names no drained window", i, k);
        }
        pos = d->window * n + p->pos_of[d->channel];
        if ((k && pos <= prev) || d->vis < last_vis ||
            d->vis > M + PTM_FIFO_TAKE_MI + SLACK) {
            FAIL("probe %u: FIFO entry %u out of order", i, k);
        }
        if ((k < p->nread) != (d->f != UINT64_MAX) ||
            (d->f != UINT64_MAX && d->f > M + SLACK)) {
            FAIL("probe %u: FIFO entry %u read out of turn", i, k);
        }
        prev = pos;
        last_vis = d->vis;
    }
    /* reads and pops already made: in order, none after M */
    prev = 0;
    for (unsigned k = 0; k < p->nrq; k++) {
        uint64_t f = p->rq[(p->rq_head + k) & p->ring_mask];

        if (f > M + SLACK || f < prev) {
            FAIL("probe %u: a FIFO read out of order or after the "
                 "evaluated time", i);
        }
        prev = f;
    }
    if (p->last_p[0] > M + SLACK || p->last_p[1] > p->last_p[0] ||
        p->last_f[0] > M + SLACK || p->last_f[1] > p->last_f[0]) {
        FAIL("probe %u: the last pops out of order or after the evaluated "
             "time", i);
    }
    /* what crosses to the MI side, oldest first */
    if (p->nword > PTM_WORDS || p->nflag > PTM_FLAG_CHANGES) {
        FAIL("probe %u: queues overfull", i);
    }
    for (unsigned k = 1; k < p->nword; k++) {
        if (p->word[k].at < p->word[k - 1].at) {
            FAIL("probe %u: status words out of order", i);
        }
    }
    /*
     * none later than the word of the window counted last (or of the
     * epoch's start): the next one counted must not come before it
     */
    if (p->nword && p->origin != UINT64_MAX / 4 &&
        p->word[p->nword - 1].at >
        ptm_mi_floor(core, p, ptm_window_start(core, p, p->primed ? p->cw
                                                                  : p->wbase) +
                     2) + 6) {
        FAIL("probe %u: a status word after the counted windows'", i);
    }
    for (unsigned k = 1; k < p->nflag; k++) {
        if (p->flagq[k].k < p->flagq[k - 1].k) {
            FAIL("probe %u: flag changes out of order", i);
        }
    }
    return NULL;
}

char *ptm_core_check(const PtmCore *core)
{
    uint64_t M = core->mi_done;
    uint64_t E = core->lay.entries;
    uint64_t sweep_max = 4 * E + 2;
    uint64_t max_mi = (uint64_t)((u128)INT64_MAX * core->cfg.mi_clk_hz /
                                 NS_PER_S);

    if (M > max_mi) {
        FAIL("evaluated time beyond the clock's range");
    }
    for (unsigned e = 0; e < E; e++) {
        if ((core->live[e] | core->snap[e] | core->live_old[e] |
             core->snap_old[e]) & ~core->cnt_mask) {
            FAIL("counter %u wider than CNT_WIDTH", e);
        }
    }
    /* the accumulator: at most one delta being added */
    if (core->rr >= core->nprobes ||
        core->acc_free > M + PTM_ACC_MI_PER_DELTA) {
        FAIL("accumulator out of range");
    }
    /* commands: the running sweep and the waiting ones, in order */
    if (core->nsweep > PTM_SWEEPS || core->busy_start > core->busy_end ||
        core->busy_end > M + SLACK + (PTM_SWEEPS + 1) * sweep_max ||
        (core->sw_bits & ~(PTM_CMD_SNAPSHOT | PTM_CMD_CLEAR)) ||
        core->sw_q > M + SLACK ||
        (core->acc_block != UINT64_MAX && core->acc_block > M + SLACK) ||
        (core->low_clear_at != UINT64_MAX &&
         core->low_clear_at > M + SLACK)) {
        FAIL("command state out of range");
    }
    for (unsigned k = 0; k < core->nsweep; k++) {
        uint32_t bits = core->sweep[k].bits;

        if (!bits || (bits & ~(PTM_CMD_SNAPSHOT | PTM_CMD_CLEAR)) ||
            core->sweep[k].q <= M || core->sweep[k].q > core->busy_end ||
            (k && core->sweep[k].q < core->sweep[k - 1].q)) {
            FAIL("waiting command %u out of range", k);
        }
    }
    /* settings changes wait for their MI cycle, oldest first */
    if (core->nchanges > PTM_SETTINGS_QUEUE) {
        FAIL("settings queue overfull");
    }
    for (unsigned k = 0; k < core->nchanges; k++) {
        const PtmSettingsChange *ch = &core->changes[k];

        if (ch->endpoint >= PTM_MAX_ENDPOINTS || ch->mi <= M ||
            ch->mi > max_mi || (k && ch->mi < core->changes[k - 1].mi)) {
            FAIL("settings change %u out of range", k);
        }
    }
    for (unsigned i = 0; i < core->nprobes; i++) {
        char *err = check_probe(core, &core->probe[i], i);

        if (err) {
            return err;
        }
    }
    return NULL;
}
