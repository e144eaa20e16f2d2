/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The evaluation engine of the PCIE_TELEMETRY_MI model: drain windows,
 * delta FIFOs and the accumulator on the MI clock.
 *
 * The timing of the block (when a probe drains, when each delta enters its
 * FIFO, when the accumulator takes it or finds the FIFO full) does not
 * depend on what was counted, only on the clocks, the drain period and the
 * commands. So the engine simulates the timing alone, naming each delta by
 * (window, channel), and settles values lazily: at each access, the
 * windows drained since the last one are counted from the source, those
 * whose every delta was taken in one range query (a source that answers in
 * closed form makes that O(1)), the few still in flight one by one.
 *
 * The timing itself repeats: drains recur with a period of L MI cycles
 * (the least common multiple of the probes' window lengths), and once the
 * state at the start of one period equals that at the start of the next,
 * every later period is the same until a command or reset intervenes. The
 * engine then jumps over whole periods. An accumulator that loses deltas
 * is simulated delta by delta.
 *
 * With core->reference set, the engine is the literal one the fast path is
 * tested against: each window is counted at its drain and each delta
 * carries its value into the FIFO.
 */
#include <string.h>

#include "ptm-core-int.h"

/* MI cycle in which probe cycle c happens (its edge at or before c). */
uint64_t ptm_mi_floor(const PtmCore *core, const PtmProbe *p, uint64_t c)
{
    if (p->mi_ratio) {
        /* the usual case: a whole ratio, mostly a power of two */
        return p->mi_shift >= 0 ? c >> p->mi_shift : c / p->mi_ratio;
    }
    return (uint64_t)((u128)c * core->cfg.mi_clk_hz / p->sh.info.hz);
}

uint64_t ptm_mi_ceil(const PtmCore *core, const PtmProbe *p, uint64_t c)
{
    uint64_t hz = p->sh.info.hz;

    if (p->mi_ratio) {
        c += p->mi_ratio - 1;
        return p->mi_shift >= 0 ? c >> p->mi_shift : c / p->mi_ratio;
    }
    return (uint64_t)(((u128)c * core->cfg.mi_clk_hz + hz - 1) / hz);
}

/* ------------------------------------------------------------------ */
/* Probes                                                               */

/* MI cycle of the probe's next drain. */
static uint64_t probe_next_event(const PtmCore *core, const PtmProbe *p)
{
    uint64_t tick = p->origin + (p->window + 1) * core->cfg.drain_period - 1;

    return ptm_mi_floor(core, p, tick);
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
    if (!core->reference && core->ops && core->ops->count && start < end &&
        core->ops->count(core->opaque, &p->sh, start, end, &p->cs,
                         core->wacc)) {
        return;
    }
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

/* First cycle of window w of a probe (window 0 is one cycle short). */
static uint64_t window_start(const PtmCore *core, const PtmProbe *p,
                             uint64_t w)
{
    return p->origin + (w ? w * core->cfg.drain_period - 1 : 0);
}

/* The live registers of an endpoint after the drain at PCIe cycle tick. */
static void pcie_regs_update(PtmCore *core, PtmProbe *p, uint64_t tick)
{
    unsigned e = p->sh.info.endpoint;
    PtmSettings set = core->settings[e];
    const PtmSettings *s = &set;
    uint32_t low_tag = MIN(core->pcie_tags[e] >> 16, p->cs.tag_min);
    uint32_t low_fifo = MIN(core->pcie_stfifo[e] >> 16, p->cs.stfifo_min);

    if (core->ops && core->ops->settings) {
        core->ops->settings(core->opaque, e, tick, &set);
    }
    core->pcie_status[e] = (s->mps & 7) | (s->mrrs & 7) << 3 |
                           s->ext_tag << 6 | s->tag_10bit << 7 |
                           s->rcb_128 << 8 | p->cs.link_last << 9;
    core->pcie_tags[e] = p->cs.tag_last | low_tag << 16;
    core->pcie_stfifo[e] = p->cs.stfifo_last | low_fifo << 16;
}

static void probe_drain(PtmCore *core, PtmProbe *p)
{
    uint64_t w = p->window;
    uint64_t tick = window_start(core, p, w + 1);

    if (core->reference) {
        memset(core->wacc, 0, p->sh.channels * sizeof(core->wacc[0]));
        ptm_count_state_window_start(&p->cs);
        probe_count_span(core, p, window_start(core, p, w), tick);
        for (unsigned c = 0; c < p->sh.channels; c++) {
            p->pend[c] = (uint32_t)core->wacc[c];
        }
        if (p->sh.info.domain == PTM_DOMAIN_PCIE) {
            pcie_regs_update(core, p, tick);
        }
    }
    p->pend_n = p->sh.channels;
    p->pend_next = 0;
    /* group and FIFO input registers: 2 cycles, then a delta per cycle */
    p->pend_cycle0 = tick + 2;
    p->window++;
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

        if (ptm_mi_floor(core, p, c) >= before) {
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
                .vis = ptm_mi_ceil(core, p, c) + PTM_FIFO_SYNC_MI,
                .window = p->window - 1,
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
        return ptm_mi_ceil(core, p, p->pend_cycle0 + p->pend_next) +
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
static void run_to(PtmCore *core, uint64_t m)
{
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

/* ------------------------------------------------------------------ */
/* Settling values                                                      */

/*
 * Deltas below this one are taken or lost: the FIFO's head, or the next
 * write if the FIFO is empty (losses only ever hit later deltas).
 */
static uint64_t probe_frontier(const PtmProbe *p)
{
    if (p->count) {
        const PtmDelta *d = &p->fifo[p->head];

        return d->window * p->sh.channels + d->channel;
    }
    if (p->window == 0) {
        return 0;
    }
    return (p->window - 1) * p->sh.channels + p->pend_next;
}

/*
 * Add the values of window w's deltas [from, to) that were not lost (all
 * of them taken or lost: below the frontier).
 */
static void settle_taken(PtmCore *core, PtmProbe *p, uint64_t from,
                         uint64_t to, const uint64_t *val)
{
    unsigned n = p->sh.channels;
    uint64_t base = from / n * n;
    unsigned li = 0;

    while (from < to) {
        uint64_t end = to;

        while (li < p->loss->len &&
               g_array_index(p->loss, PtmLoss, li).pos +
               g_array_index(p->loss, PtmLoss, li).n <= from) {
            li++;
        }
        if (li < p->loss->len) {
            const PtmLoss *l = &g_array_index(p->loss, PtmLoss, li);

            if (l->pos <= from) {
                from = MIN(l->pos + l->n, to);
                continue;
            }
            end = MIN(end, l->pos);
        }
        for (; from < end; from++) {
            uint64_t *cnt = &core->live[p->base + (from - base)];

            *cnt = (*cnt + val[from - base]) & core->cnt_mask;
        }
    }
    g_array_remove_range(p->loss, 0, li);
}

/*
 * Count the windows the probe drained since the last settling. The deltas
 * the accumulator took meanwhile get their values added: those of whole
 * windows in one range query; the deltas still in the FIFO or waiting to
 * be written get their values, which the accumulator adds when it takes
 * them.
 */
static void probe_settle(PtmCore *core, PtmProbe *p)
{
    unsigned n = p->sh.channels;
    uint64_t frontier = probe_frontier(p);
    uint64_t w = p->counted, bulk_end;
    unsigned fi = 0;

    if (p->window == p->counted) {
        return;
    }
    ptm_count_state_window_start(&p->cs);
    bulk_end = MIN(frontier / n, p->window);
    if (p->loss->len) {
        bulk_end = MIN(bulk_end, g_array_index(p->loss, PtmLoss, 0).pos / n);
    }
    if (bulk_end > w) {
        memset(core->wacc, 0, n * sizeof(core->wacc[0]));
        probe_count_span(core, p, window_start(core, p, w),
                         window_start(core, p, bulk_end));
        for (unsigned c = 0; c < n; c++) {
            uint64_t *cnt = &core->live[p->base + c];

            *cnt = (*cnt + core->wacc[c]) & core->cnt_mask;
        }
        w = bulk_end;
    }
    for (; w < p->window; w++) {
        uint64_t end = (w + 1) * n;

        memset(core->wacc, 0, n * sizeof(core->wacc[0]));
        probe_count_span(core, p, window_start(core, p, w),
                         window_start(core, p, w + 1));
        if (frontier > w * n) {
            settle_taken(core, p, w * n, MIN(frontier, end), core->wacc);
        }
        /* values for the deltas the FIFO holds and those still to write */
        for (; fi < p->count; fi++) {
            PtmDelta *d = &p->fifo[(p->head + fi) & (p->fifo_depth - 1)];

            if (d->window > w) {
                break;
            }
            if (d->window == w) {
                d->value = (uint32_t)core->wacc[d->channel];
            }
        }
        if (w + 1 == p->window) {
            for (unsigned c = 0; c < n; c++) {
                p->pend[c] = (uint32_t)core->wacc[c];
            }
        }
    }
    /* losses of counted windows need no more settling */
    g_array_set_size(p->loss, 0);
    p->counted = p->window;
    if (p->sh.info.domain == PTM_DOMAIN_PCIE) {
        pcie_regs_update(core, p, window_start(core, p, p->window));
    }
}

static void settle_all(PtmCore *core)
{
    for (unsigned i = 0; i < core->nprobes; i++) {
        probe_settle(core, &core->probe[i]);
    }
}

/* ------------------------------------------------------------------ */
/* Periods of the timing                                                */

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;

        a = b;
        b = t;
    }
    return a;
}

static void mark_take(PtmCore *core)
{
    for (unsigned i = 0; i < core->nprobes; i++) {
        PtmProbe *p = &core->probe[i];
        PtmProbeMark *mk = &p->mark;

        mk->window = p->window;
        mk->next_ev = p->next_ev;
        mk->pend_cycle0 = p->pend_cycle0;
        mk->pend_n = p->pend_n;
        mk->pend_next = p->pend_next;
        mk->count = p->count;
        for (unsigned k = 0; k < p->count; k++) {
            mk->fifo[k] = p->fifo[(p->head + k) & (p->fifo_depth - 1)];
        }
    }
    core->mark_at = core->mi_done;
    core->mark_acc_free = MAX(core->acc_free, core->mi_done + 1) -
                          core->mi_done;
    core->mark_rr = core->rr;
    core->mark_lost = core->n_lost;
    core->mark_applied = core->n_applied;
    core->marked = true;
}

/* Is the state j periods after the mark the mark's, shifted? */
static bool mark_repeats(const PtmCore *core, unsigned j)
{
    uint64_t L = j * core->period, dp = core->cfg.drain_period;

    if (core->mi_done != core->mark_at + L || core->n_lost != core->mark_lost ||
        core->rr != core->mark_rr || core->busy_end > core->mark_at + 1 ||
        MAX(core->acc_free, core->mi_done + 1) - core->mi_done !=
        core->mark_acc_free) {
        return false;
    }
    for (unsigned i = 0; i < core->nprobes; i++) {
        const PtmProbe *p = &core->probe[i];
        const PtmProbeMark *mk = &p->mark;
        uint64_t nw = j * p->per_period;

        if (p->window != mk->window + nw || p->next_ev != mk->next_ev + L ||
            p->pend_n != mk->pend_n || p->pend_next != mk->pend_next ||
            p->count != mk->count ||
            (p->pend_next < p->pend_n &&
             p->pend_cycle0 != mk->pend_cycle0 + nw * dp)) {
            return false;
        }
        for (unsigned k = 0; k < p->count; k++) {
            const PtmDelta *d = &p->fifo[(p->head + k) & (p->fifo_depth - 1)];

            if (d->vis != mk->fifo[k].vis + L ||
                d->window != mk->fifo[k].window + nw ||
                d->channel != mk->fifo[k].channel) {
                return false;
            }
        }
    }
    return true;
}

/*
 * Periods a jump must span so that every delta now in flight is taken
 * within it (then no delta keeps a value across the jump).
 */
static uint64_t shift_min(const PtmCore *core)
{
    uint64_t k = 1;

    for (unsigned i = 0; i < core->nprobes; i++) {
        const PtmProbe *p = &core->probe[i];
        uint64_t per = core->mult * p->per_period * p->sh.channels;
        uint64_t span = p->window * p->sh.channels - probe_frontier(p);

        if (per) {
            k = MAX(k, (span + per - 1) / per);
        }
    }
    return k;
}

/*
 * Jump k whole periods of a timing that repeats (k >= shift_min()). The
 * deltas in flight are taken during the jump: their values go to the
 * counters now; the FIFOs then hold the deltas of later windows, which the
 * next settling counts.
 */
static void shift_periods(PtmCore *core, uint64_t k)
{
    uint64_t span = k * core->mult * core->period;
    uint64_t dp = core->cfg.drain_period;

    for (unsigned i = 0; i < core->nprobes; i++) {
        PtmProbe *p = &core->probe[i];
        uint64_t nw = k * core->mult * p->per_period;

        g_assert(p->counted == p->window);
        for (unsigned j = 0; j < p->count; j++) {
            PtmDelta *d = &p->fifo[(p->head + j) & (p->fifo_depth - 1)];
            uint64_t *cnt = &core->live[p->base + d->channel];

            *cnt = (*cnt + d->value) & core->cnt_mask;
            d->vis += span;
            d->window += nw;
        }
        for (unsigned c = p->pend_next; c < p->pend_n; c++) {
            uint64_t *cnt = &core->live[p->base + c];

            *cnt = (*cnt + p->pend[c]) & core->cnt_mask;
        }
        p->window += nw;
        p->next_ev += span;
        p->pend_cycle0 += nw * dp;
    }
    core->acc_free = MAX(core->acc_free, core->mi_done + 1) + span;
    core->n_applied += k * core->applied_per_period;
    core->mi_done += span;
    ptm_eval_refresh_all(core);
    mark_take(core);
}

/* ------------------------------------------------------------------ */
/* Advancing                                                            */

/* Periods of L after which the round robin must have settled. */
#define PTM_MAX_PERIODS 16
/* Periods without looking for a repeat after one that lost deltas. */
#define PTM_LOSSY_PERIODS 64
/* MI cycles simulated between two settlings of a long catch-up. */
#define PTM_SETTLE_STRIDE 65536

void ptm_eval_advance(PtmCore *core, uint64_t m)
{
    if (m <= core->mi_done) {
        return;
    }
    if (core->reference) {
        run_to(core, m);
        return;
    }
    while (core->mi_done < m) {
        uint64_t L = core->period;
        uint64_t to = m;

        if (L && core->steady &&
            (m - core->mi_done) / (core->mult * L) >= shift_min(core)) {
            shift_periods(core, (m - core->mi_done) / (core->mult * L));
            continue;
        }
        if (L && !core->marked && core->mi_done >= core->mark_hold) {
            mark_take(core);
        }
        if (L && !core->steady && core->marked) {
            /* the next end of a whole period from the mark */
            unsigned j = (core->mi_done - core->mark_at) / L + 1;
            uint64_t grid = core->mark_at + j * L;

            if (grid <= m) {
                /*
                 * Does the state repeat after j periods? The round robin
                 * may make the true period a few times L.
                 */
                run_to(core, grid);
                settle_all(core);
                if (mark_repeats(core, j)) {
                    core->mult = j;
                    core->applied_per_period = core->n_applied -
                                               core->mark_applied;
                    core->steady = true;
                    mark_take(core);
                } else if (core->n_lost != core->mark_lost) {
                    /* losing deltas: no repeat to find for a while */
                    core->marked = false;
                    core->mark_hold = core->mi_done +
                                      PTM_LOSSY_PERIODS * L;
                } else if (j >= PTM_MAX_PERIODS ||
                           core->busy_end > core->mark_at + 1) {
                    mark_take(core);
                }
                continue;
            }
        }
        if (m - core->mi_done > PTM_SETTLE_STRIDE) {
            to = core->mi_done + PTM_SETTLE_STRIDE;
        }
        run_to(core, to);
        settle_all(core);
    }
    settle_all(core);       /* after a jump that ended at m */
}

void ptm_eval_restart(PtmCore *core)
{
    core->marked = false;
    core->steady = false;
    core->mark_hold = 0;
}

void ptm_eval_refresh_all(PtmCore *core)
{
    for (unsigned i = 0; i < core->nprobes; i++) {
        probe_refresh(core, &core->probe[i]);
    }
    find_next_drain(core);
}

void ptm_eval_probe_reset(PtmCore *core, PtmProbe *p)
{
    p->window = 0;
    for (unsigned k = 0; k < PTM_MEMO_SLOTS; k++) {
        p->memo[k].valid = false;
        p->memo[k].used = 0;
    }
    memset(&p->cs, 0, sizeof(p->cs));
    p->pend_n = p->pend_next = 0;
    p->head = p->count = 0;
    p->counted = 0;
    g_array_set_size(p->loss, 0);
    p->next_ev = probe_next_event(core, p);
}

void ptm_eval_init(PtmCore *core)
{
    const PtmConfig *cfg = &core->cfg;
    uint64_t dpmi = (uint64_t)cfg->drain_period * cfg->mi_clk_hz;
    uint64_t L = 1;

    for (unsigned i = 0; i < core->nprobes; i++) {
        PtmProbe *p = &core->probe[i];
        uint64_t hz = p->sh.info.hz;

        p->loss = g_array_new(FALSE, FALSE, sizeof(PtmLoss));
        p->mark.fifo = g_new0(PtmDelta, p->fifo_depth);
        if (L) {
            /* MI cycles after which this probe's drains recur */
            uint64_t lp = dpmi / gcd64(hz, dpmi % hz);

            L = L / gcd64(L, lp) * lp;
            if (L > (1u << 26)) {
                L = 0;          /* clocks without a short common period */
            }
        }
    }
    core->period = L;
    for (unsigned i = 0; i < core->nprobes; i++) {
        PtmProbe *p = &core->probe[i];

        p->per_period = L ? L * p->sh.info.hz / dpmi : 0;
    }
}

void ptm_eval_free(PtmCore *core)
{
    for (unsigned i = 0; i < core->nprobes; i++) {
        PtmProbe *p = &core->probe[i];

        if (p->loss) {
            g_array_free(p->loss, TRUE);
        }
        g_free(p->mark.fifo);
    }
}
