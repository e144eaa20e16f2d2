/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The delta FIFOs and the accumulator of the PCIE_TELEMETRY_MI model: a
 * probe's deltas written into its FIFO one per cycle after a drain (lost
 * when it is full), made visible to the MI side, and taken by the single
 * adder round robin, 3 MI cycles each, stopped while a command runs. The
 * event loop of the MI clock (ptm_run_to) drives drains and the adder.
 */
#include <string.h>

#include "ptm-fifo-int.h"

/* ------------------------------------------------------------------ */
/* The FIFO (ASFIFOX, first word fall through, two output registers)    */

void ptm_fifo_reset(PtmProbe *p)
{
    p->head = p->count = 0;
    p->nread = 0;
    p->w_total = p->seen = 0;
    p->rq_head = p->nrq = 0;
    p->last_p[0] = p->last_p[1] = 0;
    p->last_f[0] = p->last_f[1] = 0;
}

static PtmDelta *ring_at(PtmProbe *p, unsigned i)
{
    return &p->fifo[(p->head + i) & p->ring_mask];
}

/*
 * When each delta leaves the FIFO memory for the output registers (its
 * read pointer moves): as soon as its write is seen on the read side
 * (three MI edges before an idle accumulator could pop it), the one
 * before it has been read, and a register is free: none of the two
 * before it waits unpopped, or only the one before, read in the cycle
 * before or popped in this one, or both and the older is popped now.
 * Pops are known up to edge done - 1 - PTM_ACC_SHOW_MI (the takes before
 * `done`); a read that depends on a later pop stays unknown (and is
 * then after that edge).
 */
static void fifo_reads(PtmProbe *p, uint64_t done)
{
    uint64_t known = done > PTM_ACC_SHOW_MI ? done - PTM_ACC_SHOW_MI : 0;

    while (p->nread < p->count) {
        unsigned j = p->nread;
        PtmDelta *d = ring_at(p, j);
        /* the one and two before: in the ring (pop unknown) or popped */
        bool p1_known = j < 1, p2_known = j < 2;
        uint64_t p1 = j == 0 ? p->last_p[0] : UINT64_MAX;
        uint64_t p2 = j == 0 ? p->last_p[1] : j == 1 ? p->last_p[0]
                                                      : UINT64_MAX;
        uint64_t f1 = j == 0 ? p->last_f[0] : ring_at(p, j - 1)->f;
        uint64_t x = MAX(d->vis - 2 * PTM_ACC_SHOW_MI, f1 + 1);

        for (;;) {
            /* an unknown pop is at or after `known` */
            bool u1 = p1_known ? p1 >= x : true;
            bool u2 = p2_known ? p2 >= x : true;

            if ((!p1_known && x >= known) || (!p2_known && x >= known)) {
                return;         /* depends on pops not known yet */
            }
            if (!u1) {
                break;
            }
            if (!u2) {
                if (f1 + 1 == x || (p1_known && p1 == x)) {
                    break;
                }
                if (!p1_known) {
                    return;
                }
                x = p1;
                continue;
            }
            if (p2_known && p2 == x) {
                break;
            }
            if (!p2_known) {
                return;
            }
            x = p2;
        }
        d->f = x;
        p->rq[(p->rq_head + p->nrq) & p->ring_mask] = x;
        p->nrq++;
        p->nread++;
    }
}

/*
 * Reads the writer has seen at its edge k: a read at MI edge f reaches
 * the write side's full flag at the fifth of its edges after the first
 * one past MI edge f + 1.
 */
static uint64_t reads_seen(const PtmCore *core, PtmProbe *p, uint64_t k)
{
    uint64_t hz = p->sh.info.hz, mi = core->cfg.mi_clk_hz;

    while (p->nrq) {
        uint64_t f = p->rq[p->rq_head];
        uint64_t k1 = (uint64_t)((u128)(f + 1) * hz / mi) + 1;

        if (k1 + 5 > k) {
            break;
        }
        p->rq_head = (p->rq_head + 1) & p->ring_mask;
        p->nrq--;
        p->seen++;
    }
    return p->seen;
}

/*
 * FIFO writes are not events of their own: a probe's writes are
 * committed lazily, before each take from its FIFO and before its next
 * drain. A write at edge k is committed once the takes of the pops it
 * could have seen are done (pops by MI edge floor(k) - 1: takes up to
 * floor(k) + 2), and before any take it could feed.
 */
static void probe_commit(PtmCore *core, PtmProbe *p, uint64_t before,
                         uint64_t done)
{
    while (p->pend_next < p->pend_n) {
        uint64_t c = ptm_probe_write_cycle(p, p->pend_next);

        if (ptm_mi_floor(core, p, c) >= before) {
            return;
        }
        fifo_reads(p, done);
        if (p->w_total - reads_seen(core, p, c) >= p->fifo_depth) {
            /*
             * Full: so are the writes until the writer sees the next read
             * (none known: none it could see before `before`). Lose them
             * at once.
             */
            uint64_t lim = UINT64_MAX, k = 1;

            if (p->nrq) {
                lim = (uint64_t)((u128)(p->rq[p->rq_head] + 1) *
                                 p->sh.info.hz / core->cfg.mi_clk_hz) + 6;
            }
            while (p->pend_next + k < p->pend_n) {
                uint64_t ck = ptm_probe_write_cycle(p, p->pend_next + k);

                if (ck >= lim || ptm_mi_floor(core, p, ck) >= before) {
                    break;
                }
                k++;
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
            if (!core->reference && core->marked) {
                /* what a repeating timing loses in each period */
                PtmLoss l = {
                    .pos = (p->window - 1) * p->sh.channels + p->pend_next,
                    .n = k,
                };

                g_array_append_val(p->mark_loss, l);
            }
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
            *ring_at(p, p->count) = (PtmDelta) {
                .vis = ptm_mi_floor(core, p, c + 1) + PTM_FIFO_TAKE_MI,
                .f = UINT64_MAX,
                .window = p->window - 1,
                .value = p->pend[p->wr_chan[p->pend_next]],
                .channel = p->wr_chan[p->pend_next],
            };
            p->count++;
            p->w_total++;
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
 * cycle, as after any reset. Its flags are cleared with it. Between the
 * two halves the evaluation settles what the probe drained before.
 */
void ptm_fifo_reset_begin(PtmCore *core, PtmProbe *p)
{
    uint64_t r0 = p->rst_at;

    while (p->pend_n > p->pend_next &&
           ptm_probe_write_cycle(p, p->pend_n - 1) >= r0) {
        p->pend_n--;
    }
    probe_commit(core, p, UINT64_MAX, p->next_ev + 1);
}

void ptm_fifo_reset_finish(PtmCore *core, PtmProbe *p)
{
    uint64_t r0 = p->rst_at, r1;

    /* the FIFO resets from both sides: what it holds is gone */
    ptm_fifo_reset(p);
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
        /*
         * The epoch starts with the last held cycle. A reset the source
         * does not hold after all (only a state loaded from elsewhere
         * claims one) holds no cycle: the epoch starts where it was.
         */
        p->origin = r1 > r0 ? r1 - 1 : r0;
        ptm_probe_reset_from(p, r1);
    }
    p->next_ev = ptm_probe_next_event(core, p);
    ptm_probe_refresh(core, p);
    ptm_find_next_drain(core);
}

static void probe_drain_event(PtmCore *core, PtmProbe *p)
{
    probe_commit(core, p, UINT64_MAX, p->next_ev + 1);
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
            next = p->fifo[(p->head + 1) & p->ring_mask].vis;
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

        probe_commit(core, p, t > 2 ? t - 2 : 0, t);
        core->offer[s] = probe_offer(core, p);
        if (p->count && p->fifo[p->head].vis <= t) {
            PtmDelta *d = &p->fifo[p->head];

            fifo_reads(p, t);
            p->last_p[1] = p->last_p[0];
            p->last_p[0] = t - PTM_ACC_SHOW_MI;
            p->last_f[1] = p->last_f[0];
            p->last_f[0] = d->f;
            p->nread -= p->nread > 0;
            uint64_t *cnt = &core->live[p->base + d->channel];

            /* the fast evaluation adds values of windows not yet counted
             * when it counts them */
            if (core->reference || d->window < p->counted) {
                *cnt = (*cnt + d->value) & core->cnt_mask;
            }
            p->head = (p->head + 1) & p->ring_mask;
            p->count--;
            core->acc_free = t + PTM_ACC_MI_PER_DELTA;
            core->rr = s;
            core->n_applied++;
            core->offer[s] = probe_offer(core, p);
            return;
        }
    }
}

/* The sweep that starts now: its values, read entry by entry. */
void ptm_sweep_apply(PtmCore *core)
{
    unsigned entries = core->lay.entries;
    uint32_t bits = core->sweep[0].bits;

    memcpy(core->live_old, core->live, entries * sizeof(uint64_t));
    memcpy(core->snap_old, core->snap, entries * sizeof(uint64_t));
    core->sw_q = core->sweep[0].q;
    core->sw_bits = bits;
    if (bits & PTM_CMD_CLEAR) {
        memset(core->live, 0, entries * sizeof(uint64_t));
        memset(core->snap, 0, entries * sizeof(uint64_t));
    }
    if (bits & PTM_CMD_SNAPSHOT) {
        memcpy(core->snap, core->live, entries * sizeof(uint64_t));
    }
    memmove(&core->sweep[0], &core->sweep[1],
            --core->nsweep * sizeof(core->sweep[0]));
}

PtmRunStop ptm_run_to(PtmCore *core, uint64_t m, PtmProbe **reset)
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
            return PTM_RUN_SWEEP;
        } else if (tp <= m && bp->ev_reset) {
            *reset = bp;
            return PTM_RUN_RESET;
        } else if (tp <= m) {
            probe_drain_event(core, bp);
        } else {
            break;
        }
    }
    /* the writes up to now, so that STATUS shows their losses */
    for (unsigned i = 0; i < core->nprobes; i++) {
        probe_commit(core, &core->probe[i], m > 2 ? m - 2 : 0, m + 1);
        core->offer[i] = probe_offer(core, &core->probe[i]);
    }
    core->stats.simulated_mi += m - core->mi_done;
    core->mi_done = m;
    return PTM_RUN_DONE;
}
