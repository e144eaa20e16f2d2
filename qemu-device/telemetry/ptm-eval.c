/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The evaluation engine of the PCIE_TELEMETRY_MI model: when and how the
 * probes (ptm-probe.c), FIFOs and accumulator (ptm-fifo.c) are evaluated.
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

#include "ptm-eval-int.h"

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

        return d->window * p->sh.channels + p->pos_of[d->channel];
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
            unsigned c = p->wr_chan[from - base];
            uint64_t *cnt = &core->live[p->base + c];

            *cnt = (*cnt + val[c]) & core->cnt_mask;
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
    bulk_end = MIN(frontier / n, p->window);
    if (p->loss->len) {
        bulk_end = MIN(bulk_end, g_array_index(p->loss, PtmLoss, 0).pos / n);
    }
    if (bulk_end > w) {
        /*
         * The window before the last on its own: its status word may show
         * while the last one's is still on its way.
         */
        if (bulk_end > w + 1 && p->sh.info.domain == PTM_DOMAIN_PCIE) {
            ptm_probe_count_windows(core, p, bulk_end - 1, core->wacc_out);
            for (unsigned c = 0; c < n; c++) {
                uint64_t *cnt = &core->live[p->base + c];

                *cnt = (*cnt + core->wacc_out[c]) & core->cnt_mask;
            }
            w = bulk_end - 1;
        }
        ptm_probe_count_windows(core, p, bulk_end, core->wacc_out);
        for (unsigned c = 0; c < n; c++) {
            uint64_t *cnt = &core->live[p->base + c];

            *cnt = (*cnt + core->wacc_out[c]) & core->cnt_mask;
        }
        w = bulk_end;
    }
    for (; w < p->window; w++) {
        uint64_t end = (w + 1) * n;

        ptm_probe_count_windows(core, p, w + 1, core->wacc_out);
        if (frontier > w * n) {
            settle_taken(core, p, w * n, MIN(frontier, end), core->wacc_out);
        }
        /* values for the deltas the FIFO holds and those still to write */
        for (; fi < p->count; fi++) {
            PtmDelta *d = &p->fifo[(p->head + fi) & p->ring_mask];

            if (d->window > w) {
                break;
            }
            if (d->window == w) {
                d->value = (uint32_t)core->wacc_out[d->channel];
            }
        }
        if (w + 1 == p->window) {
            for (unsigned c = 0; c < n; c++) {
                p->pend[c] = (uint32_t)core->wacc_out[c];
            }
        }
    }
    /* losses of counted windows need no more settling */
    g_array_set_size(p->loss, 0);
    p->counted = p->window;

}

static void settle_all(PtmCore *core)
{
    for (unsigned i = 0; i < core->nprobes; i++) {
        probe_settle(core, &core->probe[i]);
    }
}

/* ------------------------------------------------------------------ */
/* Periods of the timing                                                */

/* The next delta to be written or lost. */
static uint64_t probe_dfront(const PtmProbe *p)
{
    return p->window ? (p->window - 1) * p->sh.channels + p->pend_next : 0;
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
            mk->fifo[k] = p->fifo[(p->head + k) & p->ring_mask];
        }
        /* what only a timing that loses deltas depends on */
        mk->nread = p->nread;
        mk->occ = p->w_total - p->seen;
        mk->nrq = p->nrq;
        for (unsigned k = 0; k < p->nrq; k++) {
            mk->rq[k] = p->rq[(p->rq_head + k) & p->ring_mask];
        }
        for (unsigned k = 0; k < 2; k++) {
            mk->last_p[k] = p->last_p[k];
            mk->last_f[k] = p->last_f[k];
        }
        mk->dfront = probe_dfront(p);
        mk->lost = p->lost;
        mk->flag = p->flag;
        mk->nflag = p->nflag;
        mk->flagv = 0;
        for (unsigned k = 0; k < p->nflag && k < 64; k++) {
            mk->flagv |= (uint64_t)p->flagq[k].v << k;
        }
        g_array_set_size(p->mark_loss, 0);
    }
    core->mark_at = core->mi_done;
    core->mark_acc_free = MAX(core->acc_free, core->mi_done + 1) -
                          core->mi_done;
    core->mark_rr = core->rr;
    core->mark_lost = core->n_lost;
    core->mark_applied = core->n_applied;
    core->marked = true;
}

/* The FIFO's reads and the flag of a probe repeat L MI cycles later. */
static bool probe_reads_repeat(const PtmProbe *p, uint64_t L)
{
    const PtmProbeMark *mk = &p->mark;
    uint64_t flagv = 0;

    if (p->nread != mk->nread || p->w_total - p->seen != mk->occ ||
        p->nrq != mk->nrq || p->lost != mk->lost || p->flag != mk->flag ||
        p->nflag != mk->nflag || p->nflag > 64) {
        return false;
    }
    for (unsigned k = 0; k < p->nflag; k++) {
        flagv |= (uint64_t)p->flagq[k].v << k;
    }
    if (flagv != mk->flagv) {
        return false;
    }
    for (unsigned k = 0; k < 2; k++) {
        if (p->last_p[k] != mk->last_p[k] + L ||
            p->last_f[k] != mk->last_f[k] + L) {
            return false;
        }
    }
    for (unsigned k = 0; k < p->nrq; k++) {
        if (p->rq[(p->rq_head + k) & p->ring_mask] != mk->rq[k] + L) {
            return false;
        }
    }
    return true;
}

/*
 * Is the state j periods after the mark the mark's, shifted? With `lossy`
 * (a timing that loses deltas) also what decides whether a write finds its
 * FIFO full (the reads from the FIFO memory, the writer's late view of
 * them) and whether a loss still changes the flag; without it no delta
 * may have been lost since the mark.
 */
static bool mark_repeats(const PtmCore *core, unsigned j, bool lossy)
{
    uint64_t L = j * core->period, dp = core->cfg.drain_period;

    if (core->mi_done != core->mark_at + L || core->rr != core->mark_rr ||
        core->busy_end > core->mark_at + 1 ||
        (lossy ? !core->lost : core->n_lost != core->mark_lost) ||
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
        if (lossy && !probe_reads_repeat(p, L)) {
            return false;
        }
        for (unsigned k = 0; k < p->count; k++) {
            const PtmDelta *d = &p->fifo[(p->head + k) & p->ring_mask];
            const PtmDelta *e = &mk->fifo[k];

            if (d->vis != e->vis + L || d->window != e->window + nw ||
                d->channel != e->channel ||
                (lossy && (d->f == UINT64_MAX ? e->f != UINT64_MAX
                                              : e->f == UINT64_MAX ||
                                                d->f != e->f + L))) {
                return false;
            }
        }
    }
    return true;
}

/*
 * From the losses of the j periods since the mark, which deltas each
 * probe keeps: the same ones in every j periods from now on.
 */
static bool keep_pattern(PtmCore *core, unsigned j)
{
    for (unsigned i = 0; i < core->nprobes; i++) {
        PtmProbe *p = &core->probe[i];
        unsigned n = p->sh.channels, nw = j * p->per_period, k = 0;
        uint64_t d0 = p->mark.dfront;

        if (nw == 0 || (uint64_t)nw * n > (1u << 20)) {
            return false;
        }
        g_free(p->keep);
        p->keep = g_malloc(nw * n);
        memset(p->keep, 1, nw * n);
        p->keep_nw = nw;
        p->keep_w0 = d0 / n;
        for (guint li = 0; li < p->mark_loss->len; li++) {
            const PtmLoss *l = &g_array_index(p->mark_loss, PtmLoss, li);

            if (l->pos < d0 || l->pos + l->n > d0 + (uint64_t)nw * n) {
                return false;
            }
            for (uint64_t x = l->pos; x < l->pos + l->n; x++) {
                p->keep[(x / n - p->keep_w0) % nw * n + x % n] = 0;
            }
        }
        g_free(p->kept);
        g_free(p->kept_at);
        p->kept = g_new(unsigned, nw * n);
        p->kept_at = g_new(unsigned, nw + 1);
        for (unsigned r = 0; r < nw; r++) {
            p->kept_at[r] = k;
            for (unsigned q = 0; q < n; q++) {
                if (p->keep[r * n + q]) {
                    p->kept[k++] = p->wr_chan[q];
                }
            }
        }
        p->kept_at[nw] = k;
    }
    core->keep_gen++;
    return true;
}

/* Is the delta at write position q of window w kept? */
static bool keeps(const PtmProbe *p, uint64_t w, unsigned q)
{
    unsigned nw = p->keep_nw;
    uint64_t r = w >= p->keep_w0 ? (w - p->keep_w0) % nw
                                 : (nw - (p->keep_w0 - w) % nw) % nw;

    return p->keep[r * p->sh.channels + q];
}

/* Windows counted one by one before bulk counting is tried again. */
#define PTM_BULK_RETRY 64

/*
 * Count the windows [wa, wb) of a lossy jump one by one: the kept deltas
 * before a_end go to the counters, the windows from tail_w on to
 * jump_out; with rows set, each window's deltas also to rows.
 */
static void lossy_windows(PtmCore *core, PtmProbe *p, uint64_t wa,
                          uint64_t wb, uint64_t tail_w, uint64_t a_end,
                          uint32_t *rows)
{
    unsigned n = p->sh.channels;
    uint64_t *live = &core->live[p->base], mask = core->cnt_mask;
    uint64_t bulk_at = wa;

    for (uint64_t w = wa; w < wb; w++) {
        uint64_t r, *out;

        if (!rows && !p->defer_to && w >= bulk_at && w < tail_w &&
            w + 1 < wb) {
            /*
             * the windows of named pieces in bulk, all but the last; a
             * window it cannot name is counted below, then bulk again
             * (soon where it moved on, later where it could not start)
             */
            uint64_t to = ptm_probe_count_kept(core, p, MIN(tail_w, wb - 1));

            bulk_at = to > w ? to : w + PTM_BULK_RETRY;
            core->stats.bulk_windows += to - w;
            w = to;
        }
        r = (w - p->keep_w0) % p->keep_nw;
        out = w >= tail_w ? &p->jump_out[(w - tail_w) * n] : core->wacc_out;
        ptm_probe_count_windows(core, p, w + 1, out);
        core->stats.single_windows++;
        if (rows) {
            for (unsigned c = 0; c < n; c++) {
                rows[(w - wa) * n + c] = (uint32_t)out[c];
            }
        }
        if (w < tail_w) {
            for (unsigned i = p->kept_at[r]; i < p->kept_at[r + 1]; i++) {
                unsigned c = p->kept[i];

                live[c] = (live[c] + out[c]) & mask;
            }
            continue;
        }
        for (unsigned q = 0; q < n; q++) {
            unsigned c = p->wr_chan[q];

            if (w * n + q < a_end && p->keep[r * n + q]) {
                live[c] = (live[c] + out[c]) & mask;
            }
        }
    }
}

/*
 * Entries of a probe's period table at most (rows x channels of the sums,
 * and of the distinct rows' values): 2^20 (8 MiB of sums), and a card's
 * probes 2^24 together (a probe of a big card gets no less than 2^16).
 */
#define PTM_TABLE_MAX (1u << 20)
#define PTM_TABLES_MAX (1u << 24)

static uint64_t table_max(const PtmCore *core)
{
    return MIN(PTM_TABLE_MAX, MAX(PTM_TABLES_MAX / core->nprobes, 1u << 16));
}

/* The residue of window w in the pattern of kept deltas. */
static unsigned keep_residue(const PtmProbe *p, uint64_t w)
{
    uint64_t nw = p->keep_nw;

    return w >= p->keep_w0 ? (w - p->keep_w0) % nw
                           : (nw - (p->keep_w0 - w) % nw) % nw;
}

/*
 * Rows of the table for the pattern of kept deltas: every window residue
 * against every position of the source's period (doubled: the frame-open
 * state); 0 if more than the table may hold.
 */
static uint64_t table_rows(const PtmCore *core, const PtmProbe *p,
                           uint64_t P)
{
    uint64_t U = (uint64_t)p->keep_nw * core->cfg.drain_period;
    uint64_t M = 2 * P / ptm_gcd64(2 * P, U);

    if (M > table_max(core) ||
        M * p->keep_nw * p->sh.channels > table_max(core)) {
        return 0;
    }
    return M * p->keep_nw;
}

/*
 * Rows of a table that differ. The windows' traffic repeats every P
 * cycles and their frame-open state every 2 P from one period into the
 * span (every bus maps it through a period by a constant, the identity or
 * a negation), so row j + R is row j with R = 2P / gcd(2P, DRAIN_PERIOD).
 * Where the counting's state is found to repeat after R' = P / gcd(P,
 * DRAIN_PERIOD) windows (a quick table), the rows repeat with R'. Both
 * divide the rows, which span a multiple of 2 P.
 */
static uint64_t table_distinct(const PtmCore *core, uint64_t P, bool quick)
{
    uint64_t x = quick ? P : 2 * P;

    return x / ptm_gcd64(x, core->cfg.drain_period);
}

/* Row sums of the kept deltas, from the distinct rows' values. */
static void table_finish(const PtmCore *core, PtmProbe *p)
{
    PtmPeriodTable *t = &p->ptab;
    unsigned n = p->sh.channels, nw = p->keep_nw;
    unsigned r = keep_residue(p, t->wbase);

    t->cum = g_renew(uint64_t, t->cum, ((size_t)t->rows + 1) * n);
    memset(t->cum, 0, n * sizeof(t->cum[0]));
    for (uint64_t j = 0; j < t->rows; j++) {
        const uint32_t *row = &t->val[j % t->distinct * n];
        const uint8_t *keep = &p->keep[r * n];
        uint64_t *sum = &t->cum[j * n];

        for (unsigned q = 0; q < n; q++) {
            unsigned c = p->wr_chan[q];

            sum[n + c] = sum[c] + (keep[q] ? row[c] : 0);
        }
        r = r + 1 == nw ? 0 : r + 1;
    }
    t->keep_gen = core->keep_gen;
    t->valid = true;
}

/* The first window w (> wbase) with E(w) + edge >= c. */
static uint64_t window_at_edge(const PtmCore *core, const PtmProbe *p,
                               uint64_t c, unsigned edge)
{
    uint64_t dp = core->cfg.drain_period, x = p->origin + edge - 1, k;

    if (c <= x + dp) {
        return p->wbase + 1;
    }
    k = (c - x) / dp + ((c - x) % dp != 0);
    return k > UINT64_MAX - p->wbase ? UINT64_MAX : p->wbase + k;
}

/* The first window w (> wbase) whose first edge E(w) + edges[0] is >= c. */
static uint64_t window_from(const PtmCore *core, const PtmProbe *p, uint64_t c)
{
    return window_at_edge(core, p, c, p->edges[0]);
}

/*
 * The windows from wa (> wbase) on, up to wb, whose counting runs up to
 * E(w) + the last edge no later than cycle c: the end of those, at most wb.
 */
static uint64_t window_until(const PtmCore *core, const PtmProbe *p,
                             uint64_t wa, uint64_t wb, uint64_t c)
{
    uint64_t dp = core->cfg.drain_period;
    uint64_t x = p->origin + p->edges[p->nedges - 1] - 1;
    uint64_t k;

    if (c < x + (wa + 1 - p->wbase) * dp) {
        return wa;
    }
    k = (c - x) / dp;       /* E(wbase + k) + last edge <= c */
    return k >= wb - p->wbase ? wb : p->wbase + k;
}

/*
 * How far from window wa on (towards wb) a table of the source's period
 * gives the windows: the end of those (wa if none), after checking the
 * table against the source (forgetting one that no longer holds, summing
 * again one whose pattern of kept deltas changed) and setting its span
 * and size for one to build from wa; *next is the first window where
 * asking again may find a table (wb if none before it). A source whose
 * traffic changes from span to span (decision blocks, phases) is given a
 * table per span. Counting runs from a window's first edge to the next
 * window's last: a quick table starts with the first window whose
 * counting starts in the span, another one period into it.
 */
static uint64_t table_reach(const PtmCore *core, PtmProbe *p, uint64_t wa,
                            uint64_t wb, uint64_t *next)
{
    PtmPeriodTable *t = &p->ptab;
    uint64_t from = 0, until = 0, id = 0, P, rows, to, first;
    uint64_t a = ptm_window_start(core, p, wa) + p->edges[0];
    bool same;

    *next = wb;
    if (!core->ops || !core->ops->period || wa <= p->wbase) {
        return wa;
    }
    P = core->ops->period(core->opaque, &p->sh.info, a, &from, &until, &id);
    to = P && a >= from ? window_until(core, p, wa, wb, until) : wa;
    if (to == wa && P && until > a) {
        /*
         * The window runs into the next span: a quick table of that one
         * may start with it, where its counting starts in it.
         */
        uint64_t c = ptm_window_start(core, p, wa) +
                     p->edges[p->nedges - 1];

        if (c >= until) {
            P = core->ops->period(core->opaque, &p->sh.info, c, &from,
                                  &until, &id);
            to = P && c >= from ? window_until(core, p, wa, wb, until) : wa;
        }
    }
    if (P == 0 || P > (UINT64_MAX >> 2) || to == wa) {
        if (until > a || (P && from > a)) {
            /*
             * none here: the source may know one from there on, and a
             * quick table of it start with the first window counted in it
             */
            *next = MIN(wb, MAX(wa + 1, window_at_edge(core, p,
                                                       P && from > a
                                                       ? from : until,
                                                       p->edges[p->nedges -
                                                                1])));
        }
        return wa;
    }
    rows = table_rows(core, p, P);
    if (!rows ||
        table_distinct(core, P, false) * p->sh.channels > table_max(core)) {
        return wa;
    }
    same = t->id == id && t->from == from && t->period == P &&
           t->origin == p->origin;
    if (t->valid && (!same || wa < t->wbase)) {
        t->valid = false;
    }
    t->until = until;
    if (t->valid) {
        if (t->keep_gen != core->keep_gen) {
            /* another pattern of kept deltas: the same windows, new sums */
            t->rows = rows;
            table_finish(core, p);
        }
        return to;
    }
    if (!same) {
        t->id = id;
        t->from = from;
        t->period = P;
        t->origin = p->origin;
        t->quick = true;
    }
    t->rows = rows;
    t->distinct = table_distinct(core, P, t->quick);
    first = t->quick ? window_at_edge(core, p, from, p->edges[p->nedges - 1])
                     : window_from(core, p, from + P);
    if (first > wa) {
        *next = MIN(first, to);
        return wa;
    }
    if (to - wa < 2 * (t->distinct + 1)) {
        /* too short a stretch for a table: its windows */
        *next = to;
        return wa;
    }
    return to;
}

/* The kept sums of rows [j, j + len) of a table, len <= rows, into acc. */
static void table_add(const PtmPeriodTable *t, unsigned n, uint64_t j,
                      uint64_t len, uint64_t times, uint64_t *acc)
{
    const uint64_t *cum = t->cum, *all = &cum[(uint64_t)t->rows * n];

    for (unsigned c = 0; c < n; c++) {
        uint64_t v = all[c] * times;

        if (j + len <= t->rows) {
            v += cum[(j + len) * n + c] - cum[j * n + c];
        } else {
            v += all[c] - cum[j * n + c] + cum[(j + len - t->rows) * n + c];
        }
        acc[c] += v;
    }
}

/* Bring a count a table deferred (see table_windows) up to date now. */
static void defer_settle(PtmCore *core, PtmProbe *p)
{
    if (p->defer_to) {
        ptm_probe_count_windows(core, p, p->defer_to, core->wacc_out);
    }
}

/*
 * Build the table from window w on: its distinct rows counted one by one
 * (their kept deltas to the counters as in any jump), the rest their
 * repeats. A quick table counts one window more and checks that the
 * counting's state repeats (else the next try is the other kind). Returns
 * the first window not counted.
 */
static uint64_t table_build(PtmCore *core, PtmProbe *p, uint64_t w,
                            uint64_t tail_w, uint64_t a_end)
{
    PtmPeriodTable *t = &p->ptab;
    unsigned n = p->sh.channels;
    uint64_t R = t->distinct;

    t->val = g_renew(uint32_t, t->val, (size_t)(R + 1) * n);
    defer_settle(core, p);
    if (t->quick) {
        uint32_t open = p->cs.open;

        lossy_windows(core, p, w, w + R, tail_w, a_end, t->val);
        if (p->cs.open != open) {
            t->quick = false;
            return w + R;
        }
        lossy_windows(core, p, w + R, w + R + 1, tail_w, a_end,
                      &t->val[R * n]);
        /* the rows of windows w + 1 .. w + R repeat */
        memmove(t->val, &t->val[n], (size_t)R * n * sizeof(t->val[0]));
        t->wbase = w + 1;
        table_finish(core, p);
        return w + R + 1;
    }
    lossy_windows(core, p, w, w + R, tail_w, a_end, t->val);
    t->wbase = w;
    table_finish(core, p);
    return w + R;
}

/*
 * The windows [w, to) of a lossy jump from the table: the kept deltas
 * taken in the jump to the counters, those of the windows still in flight
 * (from tail_w on) to jump_out; then the counting's state (open frames,
 * lowest values, words) brought to window `to` in one piece.
 */
static void table_windows(PtmCore *core, PtmProbe *p, uint64_t w,
                          uint64_t to, uint64_t tail_w, uint64_t a_end)
{
    const PtmPeriodTable *t = &p->ptab;
    unsigned n = p->sh.channels;
    uint64_t *live = &core->live[p->base], mask = core->cnt_mask;
    uint64_t mid = MAX(w, MIN(to, tail_w)), len = mid - w;

    defer_settle(core, p);
    memset(core->wacc_out, 0, n * sizeof(core->wacc_out[0]));
    table_add(t, n, (w - t->wbase) % t->rows, len % t->rows, len / t->rows,
              core->wacc_out);
    for (unsigned c = 0; c < n; c++) {
        live[c] = (live[c] + core->wacc_out[c]) & mask;
    }
    /* the windows of the deltas still in flight: from the table */
    for (uint64_t v = mid; v < to; v++) {
        const uint32_t *row = &t->val[(v - t->wbase) % t->distinct * n];
        unsigned r = keep_residue(p, v);

        for (unsigned q = 0; q < n; q++) {
            unsigned c = p->wr_chan[q];

            p->jump_out[(v - tail_w) * n + c] = row[c];
            if (v * n + q < a_end && p->keep[r * n + q]) {
                live[c] = (live[c] + row[c]) & mask;
            }
        }
    }
    core->stats.table_windows += to - w;
    /*
     * The counting's state is brought on by the next count of windows,
     * together with its own (a window that straddles into the next span):
     * the sum of these windows' deltas, from the table, is taken off it.
     */
    {
        uint64_t k = (w - t->wbase) % t->distinct, m = to - w;
        uint64_t whole = m / t->distinct, part = m % t->distinct;
        uint64_t *sum = core->defer_sum;

        memset(sum, 0, n * sizeof(sum[0]));
        for (uint64_t j = 0; j < t->distinct; j++) {
            const uint32_t *row = &t->val[j * n];
            /* row j's windows among the m from row k on */
            uint64_t times = whole + ((j + t->distinct - k) % t->distinct <
                                      part);

            for (unsigned c = 0; c < n && times; c++) {
                sum[c] += times * row[c];
            }
        }
        p->defer_to = to;
    }
}


/*
 * The counting of a jump over k whole periods of a timing that loses
 * deltas: the deltas taken during the jump are the FIFO's, the kept ones
 * of those still to write, and the kept ones of the windows drained in
 * it, up to the frontier shifted by the jump; the deltas beyond it are in
 * the FIFO after the jump and get their values.
 */
static void settle_lossy_jump(PtmCore *core, PtmProbe *p, uint64_t nw)
{
    unsigned n = p->sh.channels;
    uint64_t *live = &core->live[p->base], mask = core->cnt_mask;
    uint64_t a_end = probe_frontier(p) + nw * n;
    uint64_t w0 = p->window, w1 = w0 + nw, tail_w = a_end / n;
    uint64_t w;

    g_assert(p->counted == p->window);
    if (w1 - tail_w > p->jump_cap) {
        p->jump_cap = w1 - tail_w;
        g_free(p->jump_out);
        p->jump_out = g_new(uint64_t, p->jump_cap * n);
    }
    for (unsigned j = 0; j < p->count; j++) {
        const PtmDelta *d = &p->fifo[(p->head + j) & p->ring_mask];

        live[d->channel] = (live[d->channel] + d->value) & mask;
    }
    for (unsigned q = p->pend_next; q < p->pend_n; q++) {
        if (keeps(p, w0 - 1, q)) {
            unsigned c = p->wr_chan[q];

            live[c] = (live[c] + p->pend[c]) & mask;
        }
    }
    /* span by span of the source's period: from tables where they pay */
    for (w = w0; w < w1;) {
        PtmPeriodTable *t = &p->ptab;
        uint64_t next = w1, to = table_reach(core, p, w, w1, &next);

        if (to > w && !t->valid) {
            w = table_build(core, p, w, tail_w, a_end);
            continue;
        }
        if (to > w) {
            table_windows(core, p, w, to, tail_w, a_end);
            w = to;
        } else {
            next = MAX(next, w + 1);
            lossy_windows(core, p, w, next, tail_w, a_end, NULL);
            w = next;
        }
    }
    defer_settle(core, p);
    /* the values of the deltas still in flight after the jump */
    for (unsigned j = 0; j < p->count; j++) {
        PtmDelta *d = &p->fifo[(p->head + j) & p->ring_mask];
        uint64_t dw = d->window + nw;

        g_assert(dw >= tail_w && dw < w1);
        d->value = (uint32_t)p->jump_out[(dw - tail_w) * n + d->channel];
    }
    if (w1 > tail_w) {
        for (unsigned c = 0; c < n; c++) {
            p->pend[c] = (uint32_t)p->jump_out[(w1 - 1 - tail_w) * n + c];
        }
    }
    p->counted = w1;
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
        if (core->lossy) {
            settle_lossy_jump(core, p, nw);
        }
        for (unsigned j = 0; j < p->count; j++) {
            PtmDelta *d = &p->fifo[(p->head + j) & p->ring_mask];
            uint64_t *cnt = &core->live[p->base + d->channel];

            if (!core->lossy) {
                *cnt = (*cnt + d->value) & core->cnt_mask;
            }
            d->vis += span;
            d->window += nw;
            if (d->f != UINT64_MAX) {
                d->f += span;
            }
        }
        for (unsigned q = p->pend_next; q < p->pend_n && !core->lossy; q++) {
            unsigned c = p->wr_chan[q];
            uint64_t *cnt = &core->live[p->base + c];

            *cnt = (*cnt + p->pend[c]) & core->cnt_mask;
        }
        p->window += nw;
        p->pend_cycle0 += nw * dp;
        /* the FIFO's reads move with the jump */
        for (unsigned j = 0; j < 2; j++) {
            p->last_p[j] += span;
            p->last_f[j] += span;
        }
        for (unsigned j = 0; j < p->nrq; j++) {
            p->rq[(p->rq_head + j) & p->ring_mask] += span;
        }
        /* the next drain, or a reset found meanwhile (the jump ends before) */
        p->next_ev = ptm_probe_next_event(core, p);
    }
    core->acc_free = MAX(core->acc_free, core->mi_done + 1) + span;
    core->n_applied += k * core->applied_per_period;
    core->n_lost += k * core->lost_per_period;
    core->stats.jumps++;
    core->stats.lossy_jumps += core->lossy;
    core->stats.jumped_mi += span;
    core->mi_done += span;
    ptm_eval_refresh_all(core);
    mark_take(core);
}

/* ------------------------------------------------------------------ */
/* Advancing                                                            */

/* Periods of L after which the round robin must have settled. */
#define PTM_MAX_PERIODS 16
/* MI cycles simulated between two settlings of a long catch-up. */
#define PTM_SETTLE_STRIDE 65536

static void advance_to(PtmCore *core, uint64_t m);

/*
 * The MI clock's events up to m, with what the evaluation owes at those
 * the FIFO layer stops at: before a sweep copies the counters, what the
 * accumulator took; before a probe's own reset, what it drained.
 */
static void run_to(PtmCore *core, uint64_t m)
{
    PtmProbe *p = NULL;

    for (;;) {
        switch (ptm_run_to(core, m, &p)) {
        case PTM_RUN_DONE:
            return;
        case PTM_RUN_SWEEP:
            ptm_eval_settle_all(core);
            ptm_sweep_apply(core);
            break;
        case PTM_RUN_RESET:
            ptm_fifo_reset_begin(core, p);
            if (!core->reference) {
                probe_settle(core, p);
            }
            ptm_fifo_reset_finish(core, p);
            ptm_eval_restart(core);
            break;
        }
    }
}

/* Up to MI cycle m, applying the settings changes queued on the way. */
void ptm_eval_advance(PtmCore *core, uint64_t m)
{
    while (core->nchanges && core->changes[0].mi <= m) {
        PtmSettingsChange ch = core->changes[0];

        advance_to(core, ch.mi);
        core->settings[ch.endpoint] = ch.settings;
        ptm_eval_source_changed(core);
        memmove(&core->changes[0], &core->changes[1],
                --core->nchanges * sizeof(core->changes[0]));
    }
    advance_to(core, m);
}

static void advance_to(PtmCore *core, uint64_t m)
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
            uint64_t k = (m - core->mi_done) / (core->mult * L);
            uint64_t lim = core->mi_done + k * core->mult * L;

            /* a probe's own reset ends the repeat: jump to a period before */
            for (unsigned i = 0; i < core->nprobes; i++) {
                uint64_t r = ptm_probe_reset_by(core, &core->probe[i], lim);

                if (r != UINT64_MAX) {
                    uint64_t before = r > core->mi_done ? r - core->mi_done
                                                        : 0;

                    k = MIN(k, before / (core->mult * L));
                    k = k ? k - 1 : 0;
                    lim = core->mi_done + k * core->mult * L;
                }
            }
            if (k >= shift_min(core)) {
                settle_all(core);       /* after a jump cut short before */
                shift_periods(core, k);
                continue;
            }
            to = MIN(m, core->mi_done + core->mult * L);
            run_to(core, to);
            settle_all(core);
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
                bool lossy = core->n_lost != core->mark_lost;

                if (mark_repeats(core, j, lossy) &&
                    (!lossy || keep_pattern(core, j))) {
                    core->mult = j;
                    core->applied_per_period = core->n_applied -
                                               core->mark_applied;
                    core->lost_per_period = core->n_lost - core->mark_lost;
                    core->lossy = lossy;
                    core->steady = true;
                    mark_take(core);
                } else if (lossy && j < PTM_MAX_PERIODS &&
                           core->busy_end <= core->mark_at + 1) {
                    /* the same mark, more periods */
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

void ptm_eval_source_changed(PtmCore *core)
{
    for (unsigned i = 0; i < core->nprobes; i++) {
        core->probe[i].ptab.valid = false;
    }
}

void ptm_core_eval_stats(const PtmCore *core, PtmEvalStats *st)
{
    *st = core->stats;
}

void ptm_eval_advance_coarse(PtmCore *core, uint64_t m)
{
    if (!core->reference && core->period && core->steady &&
        m > core->mi_done) {
        uint64_t P = core->mult * core->period;
        uint64_t k = (m - core->mi_done) / P;

        /*
         * whole periods only: the rest (less than one) would be simulated
         * delta by delta, and the next access does that anyway
         */
        if (k >= shift_min(core)) {
            m = core->mi_done + k * P;
        }
    }
    ptm_eval_advance(core, m);
}

void ptm_eval_restart(PtmCore *core)
{
    core->marked = false;
    core->steady = false;
    core->lossy = false;
    core->mark_hold = 0;
}

void ptm_eval_refresh_all(PtmCore *core)
{
    for (unsigned i = 0; i < core->nprobes; i++) {
        ptm_probe_refresh(core, &core->probe[i]);
    }
    ptm_find_next_drain(core);
}

void ptm_eval_probe_reset(PtmCore *core, PtmProbe *p)
{
    p->ptab.valid = false;
    p->window = 0;
    for (unsigned k = 0; k < PTM_MEMO_SLOTS; k++) {
        p->memo[k].valid = false;
        p->memo[k].used = 0;
    }
    memset(&p->cs, 0, sizeof(p->cs));
    p->pend_n = p->pend_next = 0;
    p->head = p->count = 0;
    ptm_fifo_reset(p);
    p->counted = 0;
    g_array_set_size(p->loss, 0);
    p->wbase = 0;
    p->primed = false;
    p->domain_reset = false;
    p->lost = p->overrun = false;
    p->flag = false;
    p->nflag = 0;
    p->nword = 0;
    ptm_probe_reset_from(p, p->origin);
    p->next_ev = ptm_probe_next_event(core, p);
}


void ptm_eval_settle_all(PtmCore *core)
{
    if (!core->reference) {
        settle_all(core);
    }
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
        p->mark_loss = g_array_new(FALSE, FALSE, sizeof(PtmLoss));
        /* the windows a FIFO's deltas span, and the one still to write */
        p->mark.fifo = g_new0(PtmDelta, p->ring_mask + 1);
        p->mark.rq = g_new0(uint64_t, p->ring_mask + 1);
        if (L) {
            /* MI cycles after which this probe's drains recur */
            uint64_t lp = dpmi / ptm_gcd64(hz, dpmi % hz);

            L = L / ptm_gcd64(L, lp) * lp;
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
        if (p->mark_loss) {
            g_array_free(p->mark_loss, TRUE);
        }
        g_free(p->mark.fifo);
        g_free(p->mark.rq);
        g_free(p->keep);
        g_free(p->kept);
        g_free(p->kept_at);
        g_free(p->jump_out);
        g_free(p->ptab.val);
        g_free(p->ptab.cum);
    }
}
