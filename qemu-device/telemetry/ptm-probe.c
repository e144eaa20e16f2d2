/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The probes of the PCIE_TELEMETRY_MI model: the MI cycle of a probe's
 * cycle, drain windows and their edges, counting a span of a probe from its
 * traffic source (closed-form range counts, chunks, kept counts of named
 * segment lists), a drain, and the live registers a PCIe drain updates.
 */
#include <string.h>

#include "ptm-probe-int.h"

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

/*
 * The read-out of the RTL: channels sit in G = ceil(n / 8) groups of 8;
 * the sweep after a drain tick takes slot s of every group at once, then
 * writes them group by group, one per cycle (a gap where a group has no
 * channel s), and moves on to slot s + 1: G + 1 cycles per slot. So the
 * window of a channel in slot s closes s (G + 1) cycles after slot 0's,
 * and its FIFO write comes s (G + 1) + g cycles after the first one.
 */
void ptm_probe_order_init(PtmProbe *p)
{
    unsigned n = p->sh.channels, G = (n + 7) / 8, k = 0;
    unsigned bus_ch = 6 + p->sh.info.regions;
    unsigned band0 = 1 + p->sh.info.buses * bus_ch + PTM_BRAKES;
    int e[2 * 8 + 2];
    unsigned ne = 0;

    p->groups = G;
    p->wr_chan = g_new0(unsigned, n);
    p->wr_off = g_new0(unsigned, n);
    p->pos_of = g_new0(unsigned, n);
    p->edge = g_new0(int, n);
    p->first = g_new0(uint8_t, n);
    p->carry = g_new0(uint64_t, n);
    for (unsigned s = 0; s < 8; s++) {
        for (unsigned g = 0; g < G; g++) {
            unsigned c = g * 8 + s;

            if (c < n) {
                p->wr_chan[k] = c;
                p->wr_off[k] = s * (G + 1) + g;
                p->pos_of[c] = k++;
            }
        }
    }
    for (unsigned c = 0; c < n; c++) {
        bool band = p->sh.brakes && c >= band0;
        unsigned ch = c ? (c - 1) % bus_ch : 0;

        p->edge[c] = (int)((c % 8) * (G + 1)) - (band ? 1 : 0);
        /*
         * The first cycle of an epoch (the last one the reset held) only
         * reaches the cycle counter and the MVB channels, whose input
         * registers the reset does not clear; the bands see it only after
         * an MI reset (their decode register is cleared by the probe's
         * own reset).
         */
        if (c == 0 || (c < 1 + p->sh.info.buses * bus_ch &&
                       (ch == PTM_CH_MVB || ch == PTM_CH_MVB_STALL))) {
            p->first[c] = 0;
        } else {
            p->first[c] = band ? 2 : 1;     /* 2: depends on the reset */
        }
    }
    for (unsigned c = 0; c < n && ne < G_N_ELEMENTS(e) - 2; c++) {
        bool seen = false;

        for (unsigned i = 0; i < ne; i++) {
            seen |= e[i] == p->edge[c];
        }
        if (!seen) {
            e[ne++] = p->edge[c];
        }
    }
    e[ne++] = 1;
    e[ne++] = 2;
    /* ascending, without duplicates */
    p->nedges = 0;
    for (;;) {
        int best = INT32_MAX;

        for (unsigned i = 0; i < ne; i++) {
            if (e[i] < best && (p->nedges == 0 ||
                                e[i] > p->edges[p->nedges - 1])) {
                best = e[i];
            }
        }
        if (best == INT32_MAX) {
            break;
        }
        p->edges[p->nedges++] = best;
    }
    /* the channels by edge: by_edge[at_edge[j] .. at_edge[j + 1]) */
    p->by_edge = g_new0(unsigned, n);
    p->at_edge = g_new0(unsigned, p->nedges + 1);
    k = 0;
    for (unsigned j = 0; j < p->nedges; j++) {
        p->at_edge[j] = k;
        for (unsigned c = 0; c < n; c++) {
            if (p->edge[c] == p->edges[j]) {
                p->by_edge[k++] = c;
            }
        }
    }
    p->at_edge[p->nedges] = k;
}

void ptm_probe_order_free(PtmProbe *p)
{
    g_free(p->agg_d);
    g_free(p->agg_c);
    g_free(p->agg_used);
    g_free(p->agg_list);
    g_free(p->wstep_mem);
    g_free(p->wstep_tag);
    g_free(p->wstep_vals);
    g_free(p->wr_chan);
    g_free(p->wr_off);
    g_free(p->pos_of);
    g_free(p->edge);
    g_free(p->first);
    g_free(p->carry);
    g_free(p->by_edge);
    g_free(p->at_edge);
}

/* Calls of a source's reset() a search may take before it gives up. */
#define PTM_RESET_CALLS 4096

/*
 * The source's answer for the cycles from `from` on: held or not (*held),
 * for how many cycles; a source without reset() never holds.
 */
static uint64_t reset_ask(const PtmCore *core, PtmProbe *p, uint64_t from,
                          bool *held)
{
    uint64_t max = UINT64_MAX - from, n;

    *held = false;
    if (!core->ops || !core->ops->reset) {
        return max;
    }
    n = core->ops->reset(core->opaque, &p->sh.info, from, max, held);
    if (n == 0 || n > max) {
        *held = false;          /* a source that broke its contract */
        n = max;
    }
    return n;
}

/* Learn whether the probe's reset comes before cycle `until`. */
static void reset_scan(const PtmCore *core, PtmProbe *p, uint64_t until)
{
    for (unsigned i = 0; p->rst_at == UINT64_MAX && p->rst_scan <= until &&
         i < PTM_RESET_CALLS; i++) {
        uint64_t from = p->rst_scan, n;
        bool h;

        if (!core->ops || !core->ops->reset || from == UINT64_MAX) {
            p->rst_scan = UINT64_MAX;
            return;
        }
        n = reset_ask(core, p, from, &h);
        if (h) {
            p->rst_at = from;
        } else {
            p->rst_scan = from + n;
        }
    }
}

/* MI cycle of the probe's next reset if it comes by MI cycle m, else MAX. */
uint64_t ptm_probe_reset_by(const PtmCore *core, PtmProbe *p, uint64_t m)
{
    uint64_t c = (uint64_t)(((u128)m + 1) * p->sh.info.hz /
                            core->cfg.mi_clk_hz);

    reset_scan(core, p, c);
    if (p->rst_at == UINT64_MAX) {
        /* none known: a search that gave up counts as one at its end */
        return p->rst_scan <= c ? ptm_mi_floor(core, p, p->rst_scan)
                                : UINT64_MAX;
    }
    return ptm_mi_floor(core, p, p->rst_at);
}

/* The probe's next reset is searched for from cycle `from` on. */
void ptm_probe_reset_from(PtmProbe *p, uint64_t from)
{
    p->rst_at = UINT64_MAX;
    p->rst_scan = from;
}

/* MI cycle of the probe's next event: its next drain or its reset. */
uint64_t ptm_probe_next_event(const PtmCore *core, PtmProbe *p)
{
    uint64_t tick = ptm_window_start(core, p, p->window + 1);

    reset_scan(core, p, tick);
    p->ev_reset = p->rst_at <= tick;
    if (p->ev_reset) {
        /*
         * The reset empties the FIFO at once, but a delta the accumulator
         * popped by the MI edge of the reset is still added: the event
         * comes after the takes of those pops.
         */
        return ptm_mi_floor(core, p, p->rst_at) + PTM_ACC_SHOW_MI;
    }
    return ptm_mi_floor(core, p, tick);
}

/*
 * The first cycle >= from in which the source lets the probe run;
 * UINT64_MAX if that never happens (or not within many of its answers).
 */
uint64_t ptm_probe_reset_end(PtmCore *core, PtmProbe *p, uint64_t from)
{
    for (unsigned i = 0; from < UINT64_MAX && i < PTM_RESET_CALLS; i++) {
        bool h;
        uint64_t n = reset_ask(core, p, from, &h);

        if (!h) {
            return from;
        }
        from += n;
    }
    return UINT64_MAX;
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

void ptm_core_set_step_slots(PtmCore *core, unsigned slots)
{
    /* (a power of two: sets by mask) */
    g_assert(slots >= 2 && slots <= PTM_STEP_SLOTS_MAX &&
             !(slots & (slots - 1)));
    for (unsigned i = 0; i < core->nprobes; i++) {
        PtmProbe *p = &core->probe[i];

        g_free(p->wstep_mem);
        g_free(p->wstep_tag);
        g_free(p->wstep_vals);
        g_free(p->agg_d);
        g_free(p->agg_c);
        p->wstep = p->wstep_mem = NULL;
        p->wstep_tag = NULL;
        p->wstep_vals = NULL;
        g_free(p->agg_used);
        g_free(p->agg_list);
        p->agg_d = p->agg_c = NULL;
        p->agg_used = NULL;
        p->agg_list = NULL;
    }
    core->step_slots = slots;
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
        m = &p->memo[set];
        for (unsigned k = set + 1; k < set + 4; k++) {
            if (p->memo[k].used < m->used) {
                m = &p->memo[k];
            }
        }
        m->out = (PtmCountState) { .open = st->open };
        ptm_count_state_window_start(&m->out);
        memset(m->d, 0, p->sh.channels * sizeof(m->d[0]));
        ptm_count_pass(&p->sh, &m->out, ch, m->d);
        m->valid = true;
        m->id = ch->id;
        m->open_in = st->open;
    }
    m->used = ++p->memo_clock;
    if (m->out.open != m->open_in && ch->repeat > 1) {
        return false;
    }
    for (unsigned c = 0; c < p->sh.channels; c++) {
        core->wacc[c] += m->d[c] * ch->repeat;
    }
    ptm_count_state_append(st, &m->out);
    return true;
}

/*
 * core->chunk describes the cycles [start, start + n) of a probe, n <= max:
 * the source's chunk, or idle for a probe without one or a chunk that
 * breaks the contract. Returns n.
 */
static uint64_t probe_fill(PtmCore *core, PtmProbe *p, uint64_t start,
                           uint64_t max)
{
    PtmChunk *ch = core->chunk;
    uint64_t n = 0;

    if (core->ops) {
        ch->seg = ch->scratch;
        ch->nseg = 0;
        ch->repeat = 1;
        ch->id = 0;
        core->ops->fill(core->opaque, &p->sh.info, start, max, ch);
        n = chunk_cycles(ch);
    }
    if (n == 0 || n > max) {
        n = idle_fill(core, max, ch);
    }
    return n;
}

/* Count the absolute cycles [start, end) of a probe into core->wacc. */
void ptm_probe_count_span(PtmCore *core, PtmProbe *p, uint64_t start,
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
        uint64_t n = probe_fill(core, p, start, end - start);

        if (!(core->chunk->id && !core->memo_off &&
              count_memo(core, p, core->chunk))) {
            ptm_count_chunk(&p->sh, &p->cs, core->chunk, core->wacc);
        }
        start += n;
    }
}

/* First cycle of window w of a probe (an epoch's window 0 is one short). */
uint64_t ptm_window_start(const PtmCore *core, const PtmProbe *p,
                             uint64_t w)
{
    uint64_t k = w - p->wbase;

    return p->origin + (k ? k * core->cfg.drain_period - 1 : 0);
}

/*
 * The few cycles [a, b) around a drain, where the channels' windows end
 * one slot after another: their segments, one run each, in core->tail,
 * so that each piece between two edges is counted from them instead of
 * asking the source again.
 */
static void tail_fetch(PtmCore *core, PtmProbe *p, uint64_t a, uint64_t b)
{
    size_t used = offsetof(PtmSegment, bus) +
                  p->sh.info.buses * sizeof(PtmBusCycle);

    g_array_set_size(core->tail, 0);
    p->sh.info.settings = core->settings[p->sh.info.endpoint];
    while (a < b) {
        uint64_t n = probe_fill(core, p, a, b - a);
        const PtmChunk *ch = core->chunk;

        for (uint64_t r = 0; r < ch->repeat; r++) {
            guint at = core->tail->len;

            /* the header and the probe's buses: the rest is never read */
            g_array_set_size(core->tail, at + ch->nseg);
            for (unsigned i = 0; i < ch->nseg; i++) {
                memcpy(&g_array_index(core->tail, PtmSegment, at + i),
                       &ch->seg[i], used);
            }
        }
        a += n;
    }
}

/*
 * Add the cycles [from, to) of the fetched tail (offsets) to wacc: the
 * segments in place, the first and last cut for the while.
 */
static void tail_count(PtmCore *core, PtmProbe *p, uint64_t from,
                       uint64_t to)
{
    PtmSegment *seg = (PtmSegment *)core->tail->data;
    guint n = core->tail->len, i0 = 0, i1;
    uint64_t pos = 0, keep0, keep1;
    PtmChunk ch = { .repeat = 1 };

    while (i0 < n && pos + seg[i0].cycles <= from) {
        pos += seg[i0++].cycles;
    }
    if (i0 == n || from >= to) {
        return;
    }
    /* pos: first cycle of segment i0; find the last segment of the piece */
    for (i1 = i0; i1 < n; i1++) {
        uint64_t end = pos + seg[i1].cycles;

        if (end >= to) {
            break;
        }
        pos = end;
    }
    if (i1 == n) {
        i1 = n - 1;
    }
    keep0 = seg[i0].cycles;
    keep1 = seg[i1].cycles;
    {
        /* cut the first at `from`, the last at `to` */
        uint64_t start0 = 0;

        for (guint k = 0; k < i0; k++) {
            start0 += seg[k].cycles;
        }
        if (i0 == i1) {
            seg[i0].cycles = MIN(to, start0 + keep0) - from;
        } else {
            seg[i0].cycles = start0 + keep0 - from;
            seg[i1].cycles = to - pos;
        }
    }
    for (guint k = i0; k <= i1; k += PTM_CHUNK_SEGMENTS) {
        ch.seg = &seg[k];
        ch.nseg = MIN(i1 + 1 - k, (guint)PTM_CHUNK_SEGMENTS);
        ptm_count_chunk(&p->sh, &p->cs, &ch, core->wacc);
    }
    seg[i0].cycles = keep0;
    seg[i1].cycles = keep1;
}

/* Count the cycles [a, b) into core->wacc, which starts from zero. */
static void count_piece(PtmCore *core, PtmProbe *p, uint64_t a, uint64_t b)
{
    memset(core->wacc, 0, p->sh.channels * sizeof(core->wacc[0]));
    if (a < b) {
        ptm_probe_count_span(core, p, a, b);
    }
}

/* The drain tick's sample (cycle E + 1): the lowest values end here. */
static void tick_lowest(PtmProbe *p)
{
    p->rt_tag_min = MIN(p->rt_tag_min, p->cs.tag_min);
    p->rt_stf_min = MIN(p->rt_stf_min, p->cs.stfifo_min);
    ptm_count_state_window_start(&p->cs);
}

/*
 * The status word of the tick that samples cycle k (the last counted
 * cycle): the bus handshake delivers it to the MI side at the fourth MI
 * edge after the first one past edge k + 1; it shows from the next.
 */
static void status_word(PtmCore *core, PtmProbe *p, uint64_t k,
                        uint64_t ticks)
{
    unsigned e = p->sh.info.endpoint;
    PtmSettings s = core->settings[e];
    PtmStatusWord *w;

    if (core->ops && core->ops->settings) {
        core->ops->settings(core->opaque, e, k, &s);
    }
    if (p->nword == PTM_WORDS) {
        ptm_pcie_regs_at(core, p->word[0].at);  /* long since there */
    }
    w = &p->word[p->nword++];
    w->at = ptm_mi_floor(core, p, k + 1) + 6;
    w->status = (s.mps & 7) | (s.mrrs & 7) << 3 | s.ext_tag << 6 |
                s.tag_10bit << 7 | s.rcb_128 << 8 | p->cs.link_last << 9;
    w->tag_now = p->cs.tag_last & 0x7FF;
    w->stf_now = p->cs.stfifo_last;
    w->tag_min = MIN(p->rt_tag_min, 0x7FF);
    w->stf_min = p->rt_stf_min;
    p->rt_tag_min = p->rt_stf_min = 0xFFFF;
    /* one word per tick; of several counted at once only the last shows */
    p->hs_odd ^= ticks & 1;
    p->sent = *w;
    p->has_sent = true;
}

/*
 * An MI reset does not reach a PCIe probe's running lowest values: keep
 * them, taken on to cycle `until`, for the next epoch's first window.
 */
void ptm_probe_keep_lowest(PtmCore *core, PtmProbe *p, uint64_t until)
{
    uint64_t from = p->primed ? p->cpos : p->origin;

    if (!p->primed) {
        memset(&p->cs, 0, sizeof(p->cs));
        ptm_count_state_window_start(&p->cs);
    }
    if (from < until) {
        count_piece(core, p, from, until);
    }
    p->keep_tag = MIN(p->rt_tag_min, p->cs.tag_min);
    p->keep_stf = MIN(p->rt_stf_min, p->cs.stfifo_min);
    p->keep_lowest = true;
}

/* The probe's own reset at edge k: a word of zeros if the level was up. */
void ptm_probe_status_reset(PtmCore *core, PtmProbe *p, uint64_t k)
{
    if (p->sh.info.domain != PTM_DOMAIN_PCIE || !p->hs_odd) {
        return;
    }
    if (p->nword == PTM_WORDS) {
        ptm_pcie_regs_at(core, p->word[0].at);
    }
    p->word[p->nword++] = (PtmStatusWord) {
        .at = ptm_mi_floor(core, p, k) + 6,
    };
    p->hs_odd = false;
    p->rt_tag_min = p->rt_stf_min = 0xFFFF;
}

/* Deliver the status words of a PCIe probe that show by MI cycle m. */
static void words_to(PtmCore *core, PtmProbe *p, uint64_t m, bool now_only)
{
    unsigned e = p->sh.info.endpoint;

    while (p->nword && p->word[0].at <= m) {
        const PtmStatusWord *w = &p->word[0];
        uint32_t lt = MIN(core->pcie_tags[e] >> 16, w->tag_min);
        uint32_t lf = MIN(core->pcie_stfifo[e] >> 16, w->stf_min);

        if (now_only) {
            lt = core->pcie_tags[e] >> 16;
            lf = core->pcie_stfifo[e] >> 16;
        }
        core->pcie_status[e] = w->status;
        core->pcie_tags[e] = w->tag_now | lt << 16;
        core->pcie_stfifo[e] = w->stf_now | lf << 16;
        memmove(&p->word[0], &p->word[1], --p->nword * sizeof(p->word[0]));
    }
}

/*
 * The live registers as a read in MI cycle m sees them: the status words
 * delivered by then, in order, and a clear of the lowest values, which
 * wins over the lowest of a word delivered in the same cycle.
 */
void ptm_pcie_regs_at(PtmCore *core, uint64_t m)
{
    uint64_t clr = core->low_clear_at;

    for (unsigned i = 0; i < core->nprobes; i += 2) {
        words_to(core, &core->probe[i], MIN(m, clr - 1), false);
    }
    if (clr <= m) {
        for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
            core->pcie_tags[e] = (core->pcie_tags[e] & 0xFFFF) | 0x07FF0000;
            core->pcie_stfifo[e] = (core->pcie_stfifo[e] & 0xFFFF) |
                                   0xFFFF0000;
        }
        for (unsigned i = 0; i < core->nprobes; i += 2) {
            words_to(core, &core->probe[i], clr, true);
        }
        core->low_clear_at = UINT64_MAX;
    }
    for (unsigned i = 0; i < core->nprobes; i += 2) {
        words_to(core, &core->probe[i], m, false);
    }
}

/*
 * Start counting an epoch: window 0 of every channel, up to the last
 * edge. Channels start at the epoch's first cycle or the one after (see
 * ptm_probe_order_init), the lowest values with the cycle after it.
 */
static void probe_prime(PtmCore *core, PtmProbe *p)
{
    unsigned n = p->sh.channels;
    uint64_t o = p->origin;

    memset(&p->cs, 0, sizeof(p->cs));
    ptm_count_state_window_start(&p->cs);
    p->rt_tag_min = p->rt_stf_min = 0xFFFF;
    if (p->keep_lowest) {
        p->cs.tag_min = p->keep_tag;
        p->cs.stfifo_min = p->keep_stf;
    }
    count_piece(core, p, o, o + 1);
    for (unsigned c = 0; c < n; c++) {
        bool at0 = p->first[c] == 0 || (p->first[c] == 2 && !p->domain_reset);

        p->carry[c] = at0 ? core->wacc[c] : 0;
    }
    /* its input registers held no word: no frame is open after it */
    p->cs.open = 0;
    if (!p->keep_lowest) {
        /* the probe's own reset held its lowest values at all ones */
        ptm_count_state_window_start(&p->cs);
    }
    p->keep_lowest = false;
    p->cpos = o + p->edges[p->nedges - 1];
    count_piece(core, p, o + 1, p->cpos);
    for (unsigned c = 0; c < n; c++) {
        p->carry[c] += core->wacc[c];
    }
    p->primed = true;
    p->cw = p->wbase;
}

/*
 * Counting windows [cw, w1) runs over the cycles [cpos, E(w1) + last
 * edge), E = E(w1): the middle, in the windows of every channel, then the
 * tail, where the channels' windows end one slot after another (channel c
 * at E + edge[c]). What a span [a, b) of those cycles adds depends only on
 * its cycles, where it lies against E and the frame-open state at a (and,
 * for a probe without the side lane's sample, the last values carried
 * along): compute_piece works it out into a step (before[c] and after[c]:
 * its counts before and after channel c's end; the count state's lowest
 * values before the drain tick's sample at E + 1, up to the status word at
 * E + 2, and after; the last values at E + 2 and at b). A source that
 * names spans of its cycles (PtmSourceOps.span_id) lets steps be reused:
 * a window is then counted from the steps of its named pieces.
 */
static void stage_close(PtmWinStep *st, unsigned stage, const PtmCountState *cs)
{
    PtmCountState *m = stage == 0 ? &st->min1 : stage == 1 ? &st->min2
                                                         : &st->end;

    m->tag_min = cs->tag_min;
    m->stfifo_min = cs->stfifo_min;
}

static void compute_piece(PtmCore *core, PtmProbe *p, uint64_t E,
                          uint64_t a, uint64_t b, PtmWinStep *st)
{
    unsigned n = p->sh.channels, stage = a < E + 1 ? 0 : a < E + 2 ? 1 : 2;
    PtmCountState save = p->cs;
    uint64_t e0 = E + p->edges[0], x = a, m = MIN(b, MAX(a, e0));
    uint64_t *taken = core->taken;

    p->cs = (PtmCountState) { .open = save.open };
    if (!p->sh.brakes) {
        p->cs.tag_last = save.tag_last;
        p->cs.stfifo_last = save.stfifo_last;
        p->cs.link_last = save.link_last;
    }
    ptm_count_state_window_start(&p->cs);
    st->min1 = st->min2 = st->end = p->cs;
    st->has_l2 = false;
    memset(st->d, 0, n * sizeof(st->d[0]));
    memset(st->carry, 0, n * sizeof(st->carry[0]));
    /* before the first end: in the windows of every channel */
    if (x < m) {
        count_piece(core, p, x, m);
        memcpy(st->d, core->wacc, n * sizeof(st->d[0]));
        x = m;
    }
    if (x < b) {
        /* piece by piece between the ends into one running sum */
        uint64_t pos = x;

        tail_fetch(core, p, x, b);
        memset(core->wacc, 0, n * sizeof(core->wacc[0]));
        for (unsigned k = 0; k < p->nedges; k++) {
            uint64_t pt = E + p->edges[k];

            if (pt <= x) {
                continue;
            }
            if (MIN(pt, b) > pos) {
                tail_count(core, p, pos - x, MIN(pt, b) - x);
                pos = MIN(pt, b);
            }
            if (pt >= b) {
                break;
            }
            for (unsigned i = p->at_edge[k]; i < p->at_edge[k + 1]; i++) {
                unsigned c = p->by_edge[i];

                taken[c] = core->wacc[c];
            }
            if (p->edges[k] == 1 && stage == 0) {
                stage_close(st, 0, &p->cs);   /* the drain tick's sample */
                ptm_count_state_window_start(&p->cs);
                stage = 1;
            } else if (p->edges[k] == 2 && stage == 1) {
                stage_close(st, 1, &p->cs);   /* the status word's */
                st->min2.tag_last = p->cs.tag_last;
                st->min2.stfifo_last = p->cs.stfifo_last;
                st->min2.link_last = p->cs.link_last;
                st->has_l2 = true;
                ptm_count_state_window_start(&p->cs);
                stage = 2;
            }
        }
        if (pos < b) {
            tail_count(core, p, pos - x, b - x);
        }
        for (unsigned c = 0; c < n; c++) {
            uint64_t pt = E + p->edge[c];

            if (pt <= x) {
                st->carry[c] += core->wacc[c];
            } else if (pt < b) {
                st->d[c] += taken[c];
                st->carry[c] += core->wacc[c] - taken[c];
            } else {
                st->d[c] += core->wacc[c];
            }
        }
    }
    if (stage == 1 && b == E + 2) {
        /* ends at the status word: its values are the last ones */
        st->min2.tag_last = p->cs.tag_last;
        st->min2.stfifo_last = p->cs.stfifo_last;
        st->min2.link_last = p->cs.link_last;
        st->has_l2 = true;
    }
    stage_close(st, stage, &p->cs);
    st->end.tag_last = p->cs.tag_last;
    st->end.stfifo_last = p->cs.stfifo_last;
    st->end.link_last = p->cs.link_last;
    st->end.open = p->cs.open;
    p->cs = save;
}

/* Add the steps of a window's pieces, in order, to the probe. */
static void apply_steps(PtmCore *core, PtmProbe *p, uint64_t E, uint64_t w1,
                        const PtmWinStep *const *st, unsigned nst,
                        uint64_t *out)
{
    unsigned n = p->sh.channels;
    PtmCountState m1 = p->cs, m2 = st[nst - 1]->end, m3;
    const PtmWinStep *last = st[nst - 1];

    ptm_count_state_window_start(&m2);
    m3 = m2;
    {
        /* (no aliasing: the loops vectorize) */
        uint64_t *restrict o = out, *restrict cy = p->carry;
        const uint64_t *restrict d = st[0]->d, *restrict k = st[0]->carry;

        for (unsigned c = 0; c < n; c++) {
            o[c] = cy[c] + d[c];
            cy[c] = k[c];
        }
        for (unsigned i = 1; i < nst; i++) {
            d = st[i]->d;
            k = st[i]->carry;
            for (unsigned c = 0; c < n; c++) {
                o[c] += d[c];
                cy[c] += k[c];
            }
        }
    }
    for (unsigned i = 0; i < nst; i++) {
        m1.tag_min = MIN(m1.tag_min, st[i]->min1.tag_min);
        m1.stfifo_min = MIN(m1.stfifo_min, st[i]->min1.stfifo_min);
        m2.tag_min = MIN(m2.tag_min, st[i]->min2.tag_min);
        m2.stfifo_min = MIN(m2.stfifo_min, st[i]->min2.stfifo_min);
        m3.tag_min = MIN(m3.tag_min, st[i]->end.tag_min);
        m3.stfifo_min = MIN(m3.stfifo_min, st[i]->end.stfifo_min);
        if (st[i]->has_l2) {
            m2.tag_last = st[i]->min2.tag_last;
            m2.stfifo_last = st[i]->min2.stfifo_last;
            m2.link_last = st[i]->min2.link_last;
        }
    }
    p->cs.tag_min = m1.tag_min;
    p->cs.stfifo_min = m1.stfifo_min;
    tick_lowest(p);
    p->cs.tag_min = m2.tag_min;
    p->cs.stfifo_min = m2.stfifo_min;
    if (p->sh.info.domain == PTM_DOMAIN_PCIE) {
        p->cs.tag_last = m2.tag_last;
        p->cs.stfifo_last = m2.stfifo_last;
        p->cs.link_last = m2.link_last;
        status_word(core, p, E + 1, w1 - p->cw);
    }
    p->cs.tag_min = MIN(p->cs.tag_min, m3.tag_min);
    p->cs.stfifo_min = MIN(p->cs.stfifo_min, m3.stfifo_min);
    p->cs.tag_last = last->end.tag_last;
    p->cs.stfifo_last = last->end.stfifo_last;
    p->cs.link_last = last->end.link_last;
    p->cs.open = last->end.open;
    p->cpos = E + p->edges[p->nedges - 1];
    p->cw = w1;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Residues of windows an aggregated count tells apart, at most. */
#define PTM_AGG_RES 16

/*
 * Add what the windows counted with kept step k contributed to the kept
 * deltas (agg_d: windows of residue r it belongs to, agg_c: windows of
 * residue r its carry went to), and forget the counts.
 */
static void agg_flush(PtmCore *core, PtmProbe *p, unsigned k)
{
    uint64_t *live = &core->live[p->base], mask = core->cnt_mask;
    const PtmWinStep *st = &p->wstep[k];

    if (!p->agg_used[k]) {
        return;
    }
    p->agg_used[k] = false;     /* (stays listed: flushing again is a no-op) */
    for (unsigned r = 0; r < p->keep_nw; r++) {
        uint64_t a = p->agg_d[k * PTM_AGG_RES + r];
        uint64_t b = p->agg_c[k * PTM_AGG_RES + r];

        if (!(a | b)) {
            continue;
        }
        for (unsigned i = p->kept_at[r]; i < p->kept_at[r + 1]; i++) {
            unsigned c = p->kept[i];

            live[c] = (live[c] + a * st->d[c] + b * st->carry[c]) & mask;
        }
        p->agg_d[k * PTM_AGG_RES + r] = 0;
        p->agg_c[k * PTM_AGG_RES + r] = 0;
    }
}

static void agg_list(PtmCore *core, PtmProbe *p, unsigned k);

/* Slot k gets counts: list it for the flush at the end. */
static inline void agg_mark(PtmCore *core, PtmProbe *p, unsigned k)
{
    if (!p->agg_used[k]) {
        agg_list(core, p, k);
    }
}

static __attribute__((noinline)) void agg_list(PtmCore *core, PtmProbe *p,
                                               unsigned k)
{
    if (p->agg_n == 2 * core->step_slots) {
        /* (a slot flushed on its reuse may be listed twice) */
        for (unsigned j = 0; j < p->agg_n; j++) {
            agg_flush(core, p, p->agg_list[j]);
        }
        p->agg_n = 0;
    }
    p->agg_used[k] = true;
    p->agg_list[p->agg_n++] = k;
}

/*
 * The step of the named span [a, a + len) from the frame-open state and
 * last values of *in: kept, or computed into a slot no other piece of this
 * window uses (those taken so far carry the window's busy_gen).
 */
static const PtmWinStep *piece_step(PtmCore *core, PtmProbe *p, uint64_t E,
                                    uint64_t id, uint64_t a, uint64_t len,
                                    const PtmCountState *in)
{
    bool lasts = !p->sh.brakes;
    int64_t rel = (int64_t)(a - E);
    /*
     * The set by the span alone, the state it starts from only in the
     * tag: the set's lines load while the piece before is still being
     * looked up (the state comes from its step).
     */
    uint64_t h = mix64(id ^ (uint64_t)rel * 0x9e3779b97f4a7c15ull ^
                       len << 32);
    uint64_t key = (h ^ ((uint64_t)in->open << 40 ^
                         (lasts ? (uint64_t)in->tag_last |
                                  (uint64_t)in->stfifo_last << 16 |
                                  (uint64_t)in->link_last << 32 : 0)) *
                        0xc2b2ae3d27d4eb4full) | 1;
    unsigned ways = MIN(core->step_slots, PTM_STEP_WAYS);
    unsigned set = (unsigned)(h & (core->step_slots / ways - 1)) * ways;
    PtmWinStep *st = NULL;
    PtmCountState save = p->cs;

    if (!p->wstep) {
        unsigned n = p->sh.channels;

        p->wstep_mem = g_malloc0(sizeof(PtmWinStep) * core->step_slots + 63);
        p->wstep = (PtmWinStep *)(((uintptr_t)p->wstep_mem + 63) &
                                  ~(uintptr_t)63);
        p->wstep_tag = g_new0(uint64_t, core->step_slots);
        p->wstep_vals = g_new0(uint64_t, 2 * n * core->step_slots);
        for (unsigned i = 0; i < core->step_slots; i++) {
            p->wstep[i].d = &p->wstep_vals[2 * n * i];
            p->wstep[i].carry = &p->wstep_vals[2 * n * i + n];
        }
    }
    /* (the tags first: a set's fit in a line the steps are not in) */
    for (unsigned k = set; k < set + ways; k++) {
        PtmWinStep *w = &p->wstep[k];

        if (p->wstep_tag[k] == key && w->id == id && w->rel == rel &&
            w->len == len && w->last_in.open == in->open &&
            (!lasts || (w->last_in.tag_last == in->tag_last &&
                        w->last_in.stfifo_last == in->stfifo_last &&
                        w->last_in.link_last == in->link_last))) {
            w->used = ++p->wstep_clock;
            w->busy = p->busy_gen;
            return w;
        }
    }
    for (unsigned k = set; k < set + ways; k++) {
        if (p->wstep[k].busy != p->busy_gen &&
            (!st || p->wstep[k].used < st->used)) {
            st = &p->wstep[k];
        }
    }
    if (!st) {
        return NULL;
    }
    if (p->agg_d) {
        agg_flush(core, p, st - p->wstep);
    }
    st->busy = p->busy_gen;
    p->cs.open = in->open;
    p->cs.tag_last = in->tag_last;
    p->cs.stfifo_last = in->stfifo_last;
    p->cs.link_last = in->link_last;
    compute_piece(core, p, E, a, a + len, st);
    p->cs = save;
    p->wstep_tag[st - p->wstep] = key;
    st->id = id;
    st->rel = rel;
    st->len = len;
    st->low_tag = MIN(st->min1.tag_min, MIN(st->min2.tag_min,
                                            st->end.tag_min));
    st->low_stfifo = MIN(st->min1.stfifo_min, MIN(st->min2.stfifo_min,
                                                  st->end.stfifo_min));
    st->last_in = *in;
    st->used = ++p->wstep_clock;
    return st;
}

/* Pieces of a window at most, from the source's names. */
#define PTM_PIECES 8

/* The steps of a window's named pieces; 0 if the source names too few. */
static unsigned named_steps(PtmCore *core, PtmProbe *p, uint64_t E,
                            const PtmWinStep **st)
{
    uint64_t a = p->cpos, end = E + p->edges[p->nedges - 1];
    uint64_t ids[PTM_PIECES], lens[PTM_PIECES];
    PtmCountState in = p->cs;
    unsigned nst = 0, n = 0;

    p->sh.info.settings = core->settings[p->sh.info.endpoint];
    if (core->ops->span_ids) {
        n = core->ops->span_ids(core->opaque, &p->sh.info, a, end, ids,
                                lens, PTM_PIECES);
        if (!n) {
            return 0;
        }
    }
    while (a < end) {
        uint64_t len = 0, id;

        if (n) {
            /* (what the source says is checked as a piece's name is) */
            if (nst == n) {
                return 0;
            }
            id = ids[nst];
            len = lens[nst];
        } else {
            id = core->ops->span_id(core->opaque, &p->sh.info, a, end - a,
                                    &len);
        }
        if (!id || len == 0 || len > end - a || nst == PTM_PIECES) {
            return 0;
        }
        st[nst] = piece_step(core, p, E, id, a, len, &in);
        if (!st[nst]) {
            return 0;
        }
        in.open = st[nst]->end.open;
        in.tag_last = st[nst]->end.tag_last;
        in.stfifo_last = st[nst]->end.stfifo_last;
        in.link_last = st[nst]->end.link_last;
        nst++;
        a += len;
    }
    return nst;
}

/*
 * Count windows [cw, wb) of a timing that repeats with its losses, adding
 * only the deltas kept (p->keep: by window residue) to the counters:
 * windows of named pieces by how often each kept step served which
 * residue, never channel by channel. The count state ends as after
 * counting them at once (one status word for all, with their lowest
 * values), the carry as counted. Returns the windows done (fewer where
 * the source stops naming them): the caller counts the rest.
 */
uint64_t ptm_probe_count_kept(PtmCore *core, PtmProbe *p, uint64_t wb)
{
    uint64_t *live = &core->live[p->base], mask = core->cnt_mask;
    unsigned nw = p->keep_nw, prev_n = 0, prev[PTM_PIECES], r;
    uint64_t w = p->cw, E_last = 0;
    uint16_t mf_tag = p->cs.tag_min, mf_stf = p->cs.stfifo_min;
    size_t na = (size_t)core->step_slots * PTM_AGG_RES;

    if (!p->primed || p->cw <= p->wbase || core->reference ||
        core->memo_off || !core->ops || !core->ops->span_id ||
        nw > PTM_AGG_RES || p->keep_w0 > w) {
        return w;
    }
    if (!p->agg_d) {
        p->agg_d = g_new0(uint32_t, na);
        p->agg_c = g_new0(uint32_t, na);
        p->agg_used = g_new0(bool, core->step_slots);
        p->agg_list = g_new0(unsigned, 2 * core->step_slots);
    }
    r = (w - p->keep_w0) % nw;
    for (; w < wb; w++, r = r + 1 == nw ? 0 : r + 1) {
        uint64_t E = ptm_window_start(core, p, w + 1);
        const PtmWinStep *st[PTM_PIECES];
        unsigned nst;

        /* the window before's steps stay: their carry counts come here */
        p->busy_gen++;
        for (unsigned i = 0; i < prev_n; i++) {
            p->wstep[prev[i]].busy = p->busy_gen;
        }
        nst = named_steps(core, p, E, st);
        if (!nst) {
            break;
        }
        if (prev_n) {
            /*
             * the window before is not the last: its carry comes here,
             * its lowest values go to the one status word
             */
            for (unsigned i = 0; i < prev_n; i++) {
                const PtmWinStep *q = &p->wstep[prev[i]];

                agg_mark(core, p, prev[i]);
                p->agg_c[prev[i] * PTM_AGG_RES + r]++;
                mf_tag = MIN(mf_tag, q->low_tag);
                mf_stf = MIN(mf_stf, q->low_stfifo);
            }
        } else {
            /* what the window's carry already holds */
            for (unsigned i = p->kept_at[r]; i < p->kept_at[r + 1]; i++) {
                unsigned c = p->kept[i];

                live[c] = (live[c] + p->carry[c]) & mask;
            }
        }
        for (unsigned i = 0; i < nst; i++) {
            unsigned k = st[i] - p->wstep;

            agg_mark(core, p, k);
            p->agg_d[k * PTM_AGG_RES + r]++;
            prev[i] = k;
        }
        prev_n = nst;
        p->cpos = E + p->edges[p->nedges - 1];
        p->cs.open = st[nst - 1]->end.open;
        p->cs.tag_last = st[nst - 1]->end.tag_last;
        p->cs.stfifo_last = st[nst - 1]->end.stfifo_last;
        p->cs.link_last = st[nst - 1]->end.link_last;
        E_last = E;
    }
    if (prev_n) {
        /*
         * the last window as one counted on its own (its deltas are in
         * agg_d already): its carry, tick and the stretch's status word
         */
        const PtmWinStep *last[PTM_PIECES];

        for (unsigned i = 0; i < prev_n; i++) {
            last[i] = &p->wstep[prev[i]];
        }
        p->cs.tag_min = mf_tag;
        p->cs.stfifo_min = mf_stf;
        apply_steps(core, p, E_last, w, last, prev_n, core->wacc_out);
    }
    for (unsigned i = 0; i < p->agg_n; i++) {
        agg_flush(core, p, p->agg_list[i]);
    }
    p->agg_n = 0;
    return w;
}

/*
 * Count the windows [counted, w1) of the current epoch (w1 > counted):
 * out[c] gets the sum of their deltas of channel c. Counting runs on to
 * E(w1) + the last edge; what lies beyond a channel's edge stays in carry
 * for window w1.
 */
void ptm_probe_count_windows(PtmCore *core, PtmProbe *p, uint64_t w1,
                             uint64_t *out)
{
    uint64_t E = ptm_window_start(core, p, w1);
    const PtmWinStep *st[PTM_PIECES];
    unsigned nst = 0;

    if (!p->primed) {
        probe_prime(core, p);
    }
    if (p->defer_to) {
        /* the windows a table gave, counted with these in one piece */
        g_assert(w1 >= p->defer_to && p->defer_to > p->cw);
        p->defer_to = 0;
        ptm_probe_count_windows(core, p, w1, out);
        for (unsigned c = 0; c < p->sh.channels; c++) {
            out[c] -= core->defer_sum[c];
        }
        return;
    }
    /* (kept steps pay where windows come one by one: lossy jumps) */
    if (w1 == p->cw + 1 && p->cw > p->wbase && !core->reference &&
        !core->memo_off && core->lossy && core->ops && core->ops->span_id) {
        p->busy_gen++;
        nst = named_steps(core, p, E, st);
    }
    if (!nst) {
        /* (a loaded state is swapped in by value: point it here) */
        core->step.d = core->step_vals;
        core->step.carry = core->step_vals + 256;
        compute_piece(core, p, E, p->cpos, E + p->edges[p->nedges - 1],
                      &core->step);
        st[0] = &core->step;
        nst = 1;
    }
    apply_steps(core, p, E, w1, st, nst, out);
}

/*
 * The probe's lost-delta flag changes at its edge k: set by a write that
 * found the FIFO full, cleared by COMMAND bit 2 or the probe's reset (a
 * set wins in the same edge). STATUS shows it from the third MI edge
 * after the first past edge k.
 */
void ptm_probe_flag(PtmCore *core, PtmProbe *p, uint64_t k, bool v)
{
    unsigned i = p->nflag;

    /* a change to what the flag will be anyway changes nothing */
    if (p->nflag && p->flagq[p->nflag - 1].k <= k &&
        p->flagq[p->nflag - 1].v == v) {
        return;
    }

    if (p->nflag == PTM_FLAG_CHANGES) {
        p->flag = p->flagq[0].v;        /* long since shown */
        memmove(&p->flagq[0], &p->flagq[1],
                --p->nflag * sizeof(p->flagq[0]));
        i = p->nflag;
    }
    while (i > 0 && (p->flagq[i - 1].k > k ||
                     (p->flagq[i - 1].k == k && !v && p->flagq[i - 1].v))) {
        i--;
    }
    memmove(&p->flagq[i + 1], &p->flagq[i],
            (p->nflag - i) * sizeof(p->flagq[0]));
    p->flagq[i].k = k;
    p->flagq[i].at = ptm_mi_floor(core, p, k) + 3;
    p->flagq[i].v = v;
    p->nflag++;
}

/* Cycle of the k-th FIFO write after the drain that ends window w. */
uint64_t ptm_probe_write_cycle(const PtmProbe *p, unsigned k)
{
    return p->pend_cycle0 + p->wr_off[k];
}

void ptm_probe_drain(PtmCore *core, PtmProbe *p)
{
    uint64_t w = p->window;
    uint64_t E = ptm_window_start(core, p, w + 1);

    if (core->reference) {
        ptm_probe_count_windows(core, p, w + 1, core->wacc_out);
        for (unsigned c = 0; c < p->sh.channels; c++) {
            p->pend[c] = (uint32_t)core->wacc_out[c];
        }
        p->counted = w + 1;
    }
    p->pend_n = p->sh.channels;
    p->pend_next = 0;
    /*
     * The tick is sampled at E + 1; slot 0 is captured one cycle later,
     * its group register and the FIFO input register add two more.
     */
    p->pend_cycle0 = E + 4;
    p->window++;
}
