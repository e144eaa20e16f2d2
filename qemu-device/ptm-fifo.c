/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The delta FIFOs and the accumulator of the PCIE_TELEMETRY_MI model: a
 * probe's deltas written into its FIFO one per cycle after a drain (lost
 * when it is full), made visible to the MI side, and taken by the single
 * adder round robin, 3 MI cycles each, stopped while a command runs. The
 * event loop of the MI clock (ptm_run_to) drives drains and the adder.
 */
#include <string.h>

#include "ptm-core-int.h"

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
        uint64_t c = ptm_probe_write_cycle(p, p->pend_next);

        if (ptm_mi_floor(core, p, c) >= before) {
            return;
        }
        if (p->count == p->fifo_depth) {
            /*
             * Full, and no pop of this FIFO comes before `before`: every
             * write until then is lost. Count them at once.
             */
            uint64_t k = 1;

            if (before == UINT64_MAX) {
                k = p->pend_n - p->pend_next;
            } else if (p->mi_ratio) {
                uint64_t lim = before * p->mi_ratio;  /* first cycle of it */

                while (p->pend_next + k < p->pend_n &&
                       ptm_probe_write_cycle(p, p->pend_next + k) < lim) {
                    k++;
                }
            }
            core->lost = true;
            p->lost = true;
            ptm_probe_flag(core, p, c, true);
            if (k > 1) {
                ptm_probe_flag(core, p,
                               ptm_probe_write_cycle(p, p->pend_next + k - 1),
                               true);
            }
            core->n_lost += k;
            if (!core->reference && p->window > p->counted) {
                PtmLoss l = {
                    .pos = (p->window - 1) * p->sh.channels + p->pend_next,
                    .n = k,
                };
                PtmLoss *last = p->loss->len ? &g_array_index(p->loss,
                                PtmLoss, p->loss->len - 1) : NULL;

                if (last && last->pos + last->n == l.pos) {
                    last->n += l.n;
                } else {
                    g_array_append_val(p->loss, l);
                }
            }
            p->pend_next += k;
            continue;
        } else {
            p->fifo[(p->head + p->count) & (p->fifo_depth - 1)] = (PtmDelta) {
                .vis = ptm_mi_floor(core, p, c + 1) + PTM_FIFO_TAKE_MI,
                .window = p->window - 1,
                .value = p->pend[p->wr_chan[p->pend_next]],
                .channel = p->wr_chan[p->pend_next],
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
        return ptm_mi_floor(core, p,
                            ptm_probe_write_cycle(p, p->pend_next) + 1) +
               PTM_FIFO_TAKE_MI;
    }
    return UINT64_MAX;
}

/* Keep the packed copies of a probe's next drain and offer up to date. */
void ptm_probe_refresh(PtmCore *core, PtmProbe *p)
{
    unsigned i = p - core->probe;

    core->drain_at[i] = p->next_ev;
    core->offer[i] = probe_offer(core, p);
}

void ptm_find_next_drain(PtmCore *core)
{
    unsigned best = 0;

    for (unsigned i = 1; i < core->nprobes; i++) {
        if (core->drain_at[i] < core->drain_at[best]) {
            best = i;
        }
    }
    core->next_drain = best;
}

/*
 * The probe's own reset (PCIE_RESET or DMA_RESET) starts at cycle rst_at:
 * the sweep stops (its later writes never happen), the counters restart,
 * and a new epoch of windows begins when the reset ends, at its last held
 * cycle, as after any reset. Its flags are cleared with it.
 */
static void probe_reset_event(PtmCore *core, PtmProbe *p)
{
    uint64_t r0 = p->rst_at, r1;

    while (p->pend_n > p->pend_next &&
           ptm_probe_write_cycle(p, p->pend_n - 1) >= r0) {
        p->pend_n--;
    }
    probe_commit(core, p, UINT64_MAX);
    if (!core->reference) {
        ptm_eval_probe_settle(core, p);
    }
    /* the FIFO resets from both sides: what it holds is gone */
    p->head = p->count = 0;
    r1 = ptm_probe_reset_end(core, p, r0);
    p->wbase = p->window;
    p->counted = p->window;
    p->primed = false;
    p->domain_reset = true;
    p->lost = p->overrun = false;
    ptm_probe_flag(core, p, r0, false);
    ptm_probe_status_reset(core, p, r0);
    if (r1 == UINT64_MAX) {
        /* held for ever: no drain comes any more */
        p->origin = UINT64_MAX / 4;
        ptm_probe_reset_from(p, UINT64_MAX);
    } else {
        p->origin = r1 - 1;
        ptm_probe_reset_from(p, r1);
    }
    ptm_eval_restart(core);
}

static void probe_drain_event(PtmCore *core, PtmProbe *p)
{
    if (p->ev_reset) {
        probe_reset_event(core, p);
        p->next_ev = ptm_probe_next_event(core, p);
        ptm_probe_refresh(core, p);
        ptm_find_next_drain(core);
        return;
    }
    probe_commit(core, p, UINT64_MAX);
    ptm_probe_drain(core, p);
    p->next_ev = ptm_probe_next_event(core, p);
    ptm_probe_refresh(core, p);
    ptm_find_next_drain(core);
}

/* ------------------------------------------------------------------ */
/* Accumulator                                                          */

/*
 * While a command waits or sweeps the memory the accumulator stops: no pop
 * after the command's third MI edge until BUSY falls (takes are named by
 * the edge their sum shows from, PTM_ACC_SHOW_MI after the pop).
 */
static uint64_t acc_allowed(const PtmCore *core, uint64_t t)
{
    if (t >= core->acc_block && t < core->busy_end + 1 + PTM_ACC_SHOW_MI) {
        return core->busy_end + 1 + PTM_ACC_SHOW_MI;
    }
    return t;
}

/* MI cycle of the accumulator's next take, UINT64_MAX if none waits. */
static uint64_t acc_next(const PtmCore *core)
{
    uint64_t t = acc_allowed(core, core->acc_free);
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
    return best == UINT64_MAX ? best : acc_allowed(core, best);
}

/*
 * The last take up to MI cycle lim, when nothing stops the accumulator:
 * what it has taken, and the one or two takes that come by then. (Two
 * at most: a command that asks stops it three cycles later.)
 */
uint64_t ptm_acc_last_take(PtmCore *core, uint64_t lim)
{
    uint64_t last = core->acc_free >= PTM_ACC_MI_PER_DELTA
                    ? core->acc_free - PTM_ACC_MI_PER_DELTA : 0;
    uint64_t t1 = acc_next(core), t2 = UINT64_MAX, next = UINT64_MAX;
    unsigned s1 = core->nprobes;

    if (t1 > lim) {
        return last;
    }
    for (unsigned i = 1; i <= core->nprobes && s1 == core->nprobes; i++) {
        unsigned s = (core->rr + i) % core->nprobes;

        if (core->offer[s] <= t1) {
            s1 = s;
        }
    }
    if (s1 < core->nprobes) {
        const PtmProbe *p = &core->probe[s1];

        /* what s1 offers once its head is taken */
        if (p->count >= 2) {
            next = p->fifo[(p->head + 1) & (p->fifo_depth - 1)].vis;
        } else if (p->pend_next + (p->count ? 0 : 1) < p->pend_n) {
            unsigned k = p->pend_next + (p->count ? 0 : 1);

            next = ptm_mi_floor(core, p, ptm_probe_write_cycle(p, k) + 1) +
                   PTM_FIFO_TAKE_MI;
        }
    }
    for (unsigned s = 0; s < core->nprobes; s++) {
        t2 = MIN(t2, s == s1 ? next : core->offer[s]);
    }
    t2 = MAX(t2, t1 + PTM_ACC_MI_PER_DELTA);
    return t2 <= lim ? t2 : t1;
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

            /* the fast evaluation adds values of windows not yet counted
             * when it counts them */
            if (core->reference || d->window < p->counted) {
                *cnt = (*cnt + d->value) & core->cnt_mask;
            }
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

/* Run the events of MI cycles up to m. */
void ptm_run_to(PtmCore *core, uint64_t m)
{
    for (;;) {
        PtmProbe *bp = &core->probe[core->next_drain];
        uint64_t tp = core->drain_at[core->next_drain];
        uint64_t ta = acc_next(core);
        uint64_t tc = core->nsweep ? core->sweep[0].q : UINT64_MAX;

        /* at equal MI cycles the accumulator goes first, then a command */
        if (ta <= tp && ta <= tc && ta <= m) {
            acc_step(core, ta);
        } else if (tc <= tp && tc <= m) {
            ptm_sweep_apply(core);
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
