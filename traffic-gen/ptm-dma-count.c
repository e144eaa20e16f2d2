/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The card's own DMA on the probes' buses (ptm-dma-traffic.h, the rule in
 * docs/dma.md): counting: the probes' cycles
 * described from the log, and counted, walked and spanned in bulk.
 */
#include "ptm-dma-traffic-int.h"

/* ---- describing cycles -------------------------------------------- */

/* The first index of [lo, hi) not `passed` by c (hi if none): a bisection */
static inline __attribute__((always_inline))
guint first_not_passed(guint lo, guint hi,
                       bool (*passed)(const void *arr, guint i, uint64_t c),
                       const void *arr, uint64_t c)
{
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;

        if (passed(arr, mid, c)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/*
 * The first index of [head, len) whose element is not yet `passed` by
 * cycle c (len if none), in an array sorted so that passed ones come
 * first: a few steps on from the cursor of the last look-up, since the
 * core asks for cycles mostly in order, else a binary search.
 */
static inline __attribute__((always_inline))
guint seek(guint head, guint len, guint *cur,
           bool (*passed)(const void *arr, guint i, uint64_t c),
           const void *arr, uint64_t c)
{
    guint lo = head, hi = len, i = MAX(*cur, head);

    if (i < hi && (i == lo || passed(arr, i - 1, c))) {
        for (unsigned k = 0; k < 8 && i < hi; k++, i++) {
            if (!passed(arr, i, c)) {
                *cur = i;
                return i;
            }
        }
        lo = i;
    }
    *cur = first_not_passed(lo, hi, passed, arr, c);
    return *cur;
}

static bool frame_ends_by(const void *arr, guint i, uint64_t c)
{
    return run_end(&g_array_index((Vec *)arr, Frame, i)) <= c;
}

/* The first run of a lane that ends after cycle c (len if none) */
guint ptm_dma_first_ending_after(Lane *ln, uint64_t c)
{
    return seek(ln->head, ln->f->len, &ln->cur, frame_ends_by, ln->f, c);
}

/* A lane's cycle c into *bc; how long it stays so (UINT64_MAX: for good) */
static uint64_t lane_cycle(PtmDmaTraffic *t, unsigned l, uint64_t c,
                           PtmBusCycle *bc)
{
    Lane *ln = &t->lane[l];
    guint i = ptm_dma_first_ending_after(ln, c);
    const Frame *f;
    uint64_t o, k;

    memset(bc, 0, sizeof(*bc));
    if (i == ln->f->len) {
        return UINT64_MAX;
    }
    f = &g_array_index(ln->f, Frame, i);
    if (f->start > c) {
        return f->start - c;
    }
    /* frame k of the run, at its cycle o */
    k = run_frame(f, c);
    o = c - frame_start(f, k);
    if (o >= f->cycles) {
        return f->period - o;   /* idle up to frame k + 1 */
    }
    if (f->bytes) {
        bc->src_rdy = 1;
        bc->dst_rdy = 1;
    }
    if (o == 0) {
        bc->sof = f->bytes ? 1 : 0;
        if (f->mvb) {
            bc->mvb_vld = 1;
            bc->mvb_src_rdy = 1;
            bc->mvb_dst_rdy = 1;
        }
    }
    if (o == f->cycles - 1 && f->bytes) {
        unsigned r, pos;

        frame_end(f, &r, &pos);
        bc->eof = 1u << r;
        bc->eof_pos[r] = pos;
    }
    if (f->cycles == 1 && f->period == 1) {
        return f->n - k;        /* one-cycle frames: all their cycles alike */
    }
    if (o == 0 || o == f->cycles - 1) {
        return 1;
    }
    return f->cycles - 1 - o;
}

/* Every step of the run is at or before c */
static bool event_by(const void *arr, guint i, uint64_t c)
{
    return ev_last(&g_array_index((Vec *)arr, Event, i)) <= c;
}

/* Free tags and FIFO words of amounts x (tags out, words held) */
static inline uint16_t free_tags(const PtmDmaTraffic *t, uint64_t x)
{
    uint64_t cap = MIN(t->geo.tag_capacity, 0x7FFu);

    return cap - MIN(x, cap);
}

static inline uint16_t free_words(const PtmDmaTraffic *t, uint64_t x)
{
    return t->geo.stfifo_capacity - MIN(x, (uint64_t)t->geo.stfifo_capacity);
}

/*
 * Where an amount stands at cycle c, lo the run with the next step after
 * c (len if none): the steps of it taken by c (*done) and the next step's
 * cycle (UINT64_MAX if none). Returns the amount.
 */
static uint64_t events_stand(const Events *ev, guint lo, uint64_t c,
                             uint32_t *done, uint64_t *next)
{
    const Event *e;
    uint64_t k;

    *done = 0;
    if (lo == ev->e->len) {
        *next = UINT64_MAX;
        return lo > ev->head ? g_array_index(ev->e, Event, lo - 1).cum
                             : ev->base;
    }
    e = &g_array_index(ev->e, Event, lo);
    if (e->cycle > c) {
        *next = e->cycle;
        return ev_before(e);
    }
    k = (c - e->cycle) / e->period + 1;     /* < n: the run goes on */
    *done = k;
    *next = e->cycle + k * e->period;
    return ev_before(e) + k * e->amt;
}

/* The same, the run (*ix) found from the cursor of the last look-up */
static uint64_t events_find(Events *ev, uint64_t c, guint *ix, uint32_t *done,
                            uint64_t *next)
{
    *ix = seek(ev->head, ev->e->len, &ev->cur, event_by, ev->e, c);
    return events_stand(ev, *ix, c, done, next);
}

/* An amount at cycle c, and the next cycle it changes at */
static uint64_t events_at(Events *ev, uint64_t c, uint64_t *next)
{
    guint ix;
    uint32_t done;
    uint64_t nx, v = events_find(ev, c, &ix, &done, &nx);

    *next = MIN(*next, nx);
    return v;
}

static uint64_t dma_fill(void *opaque, const PtmProbeInfo *probe,
                         uint64_t start, uint64_t max, PtmChunk *out)
{
    PtmDmaTraffic *t = opaque;
    bool pcie = probe->domain == PTM_DOMAIN_PCIE;
    uint64_t c = start, end = start + max;
    unsigned nseg = 0;

    ptm_dma_train_log(t);
    if (probe->endpoint != 0) {
        return 0;               /* the DMA uses endpoint 0 only: idle */
    }
    ptm_dma_bg_play_before(t, probe->hz, end);
    out->seg = out->scratch;
    while (c < end && nseg < PTM_CHUNK_SEGMENTS) {
        PtmSegment *s = &out->seg[nseg++];
        uint64_t run = end - c;

        memset(s, 0, offsetof(PtmSegment, bus) +
                     probe->buses * sizeof(PtmBusCycle));
        s->link_up = 1;
        for (unsigned b = 0; b < probe->buses; b++) {
            unsigned l = pcie ? b : LANE_DMA + b;

            if (l < t->nlanes) {
                run = MIN(run, lane_cycle(t, l, c, &s->bus[b]));
            }
        }
        if (pcie) {
            uint64_t next = UINT64_MAX, tags, words;

            tags = events_at(&t->ev[EV_TAKE], c, &next) -
                   events_at(&t->ev[EV_RET], c, &next);
            words = events_at(&t->ev[EV_RES], c, &next) -
                    events_at(&t->ev[EV_FREE], c, &next);
            s->tag_free = free_tags(t, tags);
            s->stfifo_free = free_words(t, words);
            run = MIN(run, next - c);
        }
        s->cycles = run;
        c += run;
    }
    out->nseg = nseg;
    out->repeat = 1;
    out->id = 0;
    return c - start;
}

/* A lane's part of [a, z) (a frame cut by the span) from fill's chunks */
static void count_lane_piece(PtmDmaTraffic *t, const PtmProbeShape *probe,
                             unsigned b, uint64_t a, uint64_t z,
                             PtmCountState *st, uint64_t *acc)
{
    PtmChunk *ch = t->scratch;

    while (a < z) {
        ch->seg = ch->scratch;
        a += dma_fill(t, &probe->info, a, z - a, ch);
        ptm_count_chunk_lanes(probe, st, ch, acc, 1u << b);
    }
}

/*
 * A lane's whole frames from frame qi of run i up to (without) frame qj
 * of run j: a data frame of c cycles whose last
 * byte is in region r at item p adds c words, one SOF, (c - 1) x R x I +
 * r x I + p + 1 items (R the probe's regions, I a region's items) and to
 * region k's count c - 1, and 1 more for k <= r; a header on the MVB adds
 * one MVB item. Each frame is counted once, by the span it ends in.
 */
static void count_lane_frames(PtmDmaTraffic *t, const PtmProbeShape *probe,
                              unsigned b, unsigned l, guint i, uint64_t qi,
                              guint j, uint64_t qj, uint64_t *acc)
{
    Lane *ln = &t->lane[l];
    unsigned regions = probe->info.regions;
    unsigned base = ptm_ch_bus(regions, b, 0);
    unsigned items = ln->rbytes / t->geo.item_bytes;
    uint64_t words = 0, sof = 0, mvb = 0, cyc1 = 0, tail = 0, above = 0;
    uint64_t last_in[PTM_MAX_REGIONS] = { 0 };

    for (guint k = i; k <= j && k < ln->f->len; k++) {
        const Frame *f = &g_array_index(ln->f, Frame, k);
        uint64_t m = (k == j ? qj : f->n) - (k == i ? qi : 0);

        mvb += f->mvb * m;
        if (f->bytes) {
            unsigned r, pos;

            frame_end(f, &r, &pos);
            words += f->cycles * m;
            sof += m;
            cyc1 += (f->cycles - 1) * m;
            tail += ((uint64_t)r * items + pos + 1) * m;
            last_in[r] += m;
        }
    }
    acc[base + PTM_CH_WORDS] += words;
    acc[base + PTM_CH_SOF] += sof;
    if (probe->info.domain == PTM_DOMAIN_DMA) {
        acc[base + PTM_CH_MVB] += mvb;
    }
    acc[base + PTM_CH_ITEMS] += cyc1 * regions * probe->info.bus_items[b] +
                                tail;
    /* region k: every middle and first cycle, and the last ones from k on */
    for (unsigned k = MIN(regions, (unsigned)PTM_MAX_REGIONS); k-- > 0;) {
        above += last_in[k];
        acc[base + PTM_CH_REGION0 + k] += cyc1 + above;
    }
}

/* The four amounts walked over a span: where each kind's runs stand */
typedef struct Walk {
    uint64_t amount[EV_N];      /* at the present cycle */
    uint64_t next[EV_N];        /* the next step's cycle, UINT64_MAX: none */
    guint ix[EV_N];             /* the run of that step */
    uint32_t done[EV_N];        /* its steps already taken */
} Walk;

/* The walk's tags out and FIFO words held */
static inline void walk_amounts(const Walk *w, uint64_t x[2])
{
    x[0] = w->amount[EV_TAKE] - w->amount[EV_RET];
    x[1] = w->amount[EV_RES] - w->amount[EV_FREE];
}

/* Take every step of kind k at or before cycle c, a run at a time */
static inline void walk_pass(PtmDmaTraffic *t, Walk *w, unsigned k,
                             uint64_t c)
{
    Events *ev = &t->ev[k];

    while (w->next[k] <= c) {
        const Event *e = &g_array_index(ev->e, Event, w->ix[k]);
        /* mostly one step: no division */
        uint64_t steps = c - w->next[k] < e->period
                         ? w->done[k] + 1
                         : (c - e->cycle) / e->period + 1;

        if (steps >= e->n) {
            w->amount[k] = e->cum;
            w->done[k] = 0;
            w->ix[k]++;
            w->next[k] = w->ix[k] < ev->e->len
                         ? g_array_index(ev->e, Event, w->ix[k]).cycle
                         : UINT64_MAX;
        } else {
            w->amount[k] = ev_before(e) + steps * e->amt;
            w->done[k] = steps;
            w->next[k] = e->cycle + steps * e->period;
        }
    }
}

/*
 * `run` cycles at amounts x (tags out, FIFO words held): into the bands of
 * the two histograms, and the window's least and last free values
 */
static inline void stretch(const PtmDmaTraffic *t, const PtmProbeShape *probe,
                           const uint64_t x[2], uint64_t run,
                           uint64_t band[2][PTM_HIST_BANDS],
                           PtmCountState *st)
{
    uint16_t tag = free_tags(t, x[0]), fifo = free_words(t, x[1]);

    band[0][ptm_band(tag, probe->tag_capacity)] += run;
    band[1][ptm_band(fifo, probe->stfifo_capacity)] += run;
    st->tag_min = MIN(st->tag_min, tag);
    st->stfifo_min = MIN(st->stfifo_min, fifo);
    st->tag_last = tag;
    st->stfifo_last = fifo;
    st->link_last = 1;
}

/* Cycles [c, e) at the walk's amounts into the histograms */
typedef struct Hist {
    uint64_t band[2][PTM_HIST_BANDS];   /* tags, FIFO words */
    uint64_t lo[2], hi[2];              /* amounts seen */
} Hist;

/*
 * Walk [c, e): each stretch between steps into h, the window's minima
 * and last values into st.
 */
static void walk_span(PtmDmaTraffic *t, const PtmProbeShape *probe, Walk *w,
                      uint64_t c, uint64_t e, Hist *h, PtmCountState *st)
{
    while (c < e) {
        uint64_t x[2], next = MIN(MIN(w->next[0], w->next[1]),
                            MIN(w->next[2], w->next[3]));
        uint64_t run = MIN(next, e) - c;

        walk_amounts(w, x);
        stretch(t, probe, x, run, h->band, st);
        for (unsigned i = 0; i < 2; i++) {
            h->lo[i] = MIN(h->lo[i], x[i]);
            h->hi[i] = MAX(h->hi[i], x[i]);
        }
        c += run;
        for (unsigned k = 0; k < EV_N; k++) {
            walk_pass(t, w, k, c);
        }
    }
}

/* The band of amount x of histogram i (0 tags, 1 FIFO words) */
static inline unsigned hist_band(const PtmDmaTraffic *t,
                                 const PtmProbeShape *probe, unsigned i,
                                 uint64_t x)
{
    return i ? ptm_band(free_words(t, x), probe->stfifo_capacity)
             : ptm_band(free_tags(t, x), probe->tag_capacity);
}

/*
 * How many periods after the first the amounts seen in it ([lo, hi],
 * moving by d each period) stay in the band they were all in: at most
 * jmax (0 if they were not all in one band).
 */
static uint64_t band_stays(const PtmDmaTraffic *t, const PtmProbeShape *probe,
                           unsigned i, uint64_t lo, uint64_t hi, int64_t d,
                           uint64_t jmax)
{
    unsigned b = hist_band(t, probe, i, lo);
    uint64_t ok = 0, bad = jmax + 1;

    if (d == 0) {
        return jmax;
    }
    if (hist_band(t, probe, i, hi) != b) {
        return 0;
    }
    if (d < 0) {
        /* amounts never go below 0 (negated unsigned: d may be INT64_MIN) */
        uint64_t down = -(uint64_t)d;

        if (lo / down < jmax) {
            jmax = lo / down;
            bad = jmax + 1;
        }
    }
    /* the band is monotonic in the amount: search the last j that keeps it */
    while (bad - ok > 1) {
        uint64_t j = ok + (bad - ok) / 2;
        uint64_t l = lo + j * d, u = hi + j * d;

        if (hist_band(t, probe, i, l) == b && hist_band(t, probe, i, u) == b) {
            ok = j;
        } else {
            bad = j;
        }
    }
    return MIN(ok, jmax);
}

/*
 * From cycle c, where every amount that changes before `end` steps at one
 * pace p (each a run with its next step in (c, c + p]) and the others stay:
 * period i (cycles [c + (i - 1)p, c + ip)) sees the amounts of period 1
 * moved by i - 1 steps of each. Period 1 is walked; the periods after it
 * whose cycles fall in the same bands are added as multiples of it.
 * Returns the cycle reached (c if the pace is not steady enough).
 */
static uint64_t walk_periods(PtmDmaTraffic *t, const PtmProbeShape *probe,
                             Walk *w, uint64_t c, uint64_t end, uint64_t *acc,
                             unsigned base, PtmCountState *st)
{
    uint64_t p, m = UINT64_MAX, j, x0[2], x1[2];
    int64_t d[2];
    Hist h = { .lo = { UINT64_MAX, UINT64_MAX } };
    unsigned k0 = 0;

    /* the pace: that of the run of the earliest next step */
    for (unsigned k = 1; k < EV_N; k++) {
        if (w->next[k] < w->next[k0]) {
            k0 = k;
        }
    }
    if (w->next[k0] == UINT64_MAX) {
        return c;
    }
    p = g_array_index(t->ev[k0].e, Event, w->ix[k0]).period;
    if (w->next[k0] - c > p) {
        return c;               /* nothing steps in the first period */
    }
    for (unsigned k = 0; k < EV_N; k++) {
        const Event *e;

        if (w->next[k] == UINT64_MAX) {
            continue;
        }
        e = &g_array_index(t->ev[k].e, Event, w->ix[k]);
        if (w->next[k] - c <= p) {
            /* a kind at the pace: the steps of its run, the last one kept
             * for a next run that may start in the last period */
            if (e->period != p || e->n - w->done[k] < 2) {
                return c;
            }
            m = MIN(m, e->n - w->done[k] - 1);
        } else {
            m = MIN(m, (w->next[k] - c) / p);   /* a kind that stays */
        }
    }
    m = MIN(m, (end - c) / p);
    if (m < 4) {
        return c;
    }
    walk_amounts(w, x0);
    walk_span(t, probe, w, c, c + p, &h, st);
    walk_amounts(w, x1);
    j = m - 1;
    for (unsigned i = 0; i < 2; i++) {
        d[i] = (int64_t)(x1[i] - x0[i]);
        j = band_stays(t, probe, i, h.lo[i], h.hi[i], d[i], j);
    }
    for (unsigned i = 0; i < PTM_HIST_BANDS; i++) {
        acc[base + PTM_BRAKES + i] += h.band[0][i] * (1 + j);
        acc[base + PTM_BRAKES + PTM_HIST_BANDS + i] += h.band[1][i] * (1 + j);
    }
    c += p * (1 + j);
    if (j) {
        /* the largest amounts (least free) of the periods */
        uint64_t top[2];

        for (unsigned i = 0; i < 2; i++) {
            top[i] = h.hi[i] + (d[i] > 0 ? j * d[i] : 0);
        }
        st->tag_min = MIN(st->tag_min, free_tags(t, top[0]));
        st->stfifo_min = MIN(st->stfifo_min, free_words(t, top[1]));
        /* the last cycle's amounts, then the steps at c */
        for (unsigned k = 0; k < EV_N; k++) {
            walk_pass(t, w, k, c - 1);
        }
        walk_amounts(w, x1);
        st->tag_last = free_tags(t, x1[0]);
        st->stfifo_last = free_words(t, x1[1]);
        for (unsigned k = 0; k < EV_N; k++) {
            walk_pass(t, w, k, c);
        }
    }
    return c;
}

/* ---- a span in one band: only the peaks to find -------------------- */

/* The most steps one pair of runs is worth before walking it is cheaper */
#define PEAK_CANDIDATES 32
/* The shortest span in one band counted at once; shorter ones are walked */
#define ONE_BAND_MIN 64

/*
 * a - b at a's steps rises or falls by the difference of the two paces,
 * with a sawtooth of less than one step of b on top, so the peak is among
 * the last or the first few steps (where a or b steps faster), or within
 * one period of the sawtooth (equal paces).
 */
bool ptm_stairs_peak(const PtmStairs *a, const PtmStairs *b, uint64_t i0,
                     uint64_t i1, unsigned most, uint64_t *peak)
{
    uint64_t p = a->period, q = b->period, lo = i0, hi = i1, k, top = 0;
    int64_t slope;

    if (a->amt >= 1u << 24 || b->amt >= 1u << 24 || p >= 1ull << 32 ||
        q >= 1ull << 32) {
        return false;           /* keeps the products below in 64 bits */
    }
    slope = (int64_t)(a->amt * q) - (int64_t)(b->amt * p);
    if (slope > 0) {
        k = b->amt * (q - 1) / (uint64_t)slope;
        lo = i1 - MIN(k, i1 - i0);
    } else if (slope < 0) {
        k = b->amt * (q - 1) / (uint64_t)-slope;
        hi = i0 + MIN(k, i1 - i0);
    } else {
        hi = i0 + MIN(q / ptm_gcd64(p, q) - 1, i1 - i0);
    }
    if (hi - lo >= most) {
        return false;
    }
    for (uint64_t i = lo; i <= hi; i++) {
        uint64_t at = a->cycle + i * p;
        uint64_t x = a->before + (i + 1) * a->amt;
        uint64_t y = b->before + ((at - b->cycle) / q + 1) * b->amt;

        top = MAX(top, x - y);
    }
    *peak = MAX(*peak, top);
    return true;
}

/* The same of two runs of the log, a's totals raised by lift */
static bool run_pair_peak(const Event *ea, const Event *eb, uint64_t lift,
                          uint64_t i0, uint64_t i1, uint64_t *peak)
{
    PtmStairs a = { ea->cycle, ea->period, ev_before(ea) + lift, ea->amt };
    PtmStairs b = { eb->cycle, eb->period, ev_before(eb), eb->amt };

    return ptm_stairs_peak(&a, &b, i0, i1, PEAK_CANDIDATES, peak);
}

/*
 * Into *peak the largest a + lift - b (kinds ka and kb) at a's steps in
 * (c, z], the only cycles where it can rise; ia and ib are the runs of
 * each with the next step after c. False where a pair of runs needs too
 * many candidates.
 */
static bool steps_peak(const PtmDmaTraffic *t, unsigned ka, guint ia,
                       unsigned kb, guint ib, uint64_t lift, uint64_t c,
                       uint64_t z, uint64_t *peak)
{
    const Events *evb = &t->ev[kb];
    Vec *va = t->ev[ka].e, *vb = evb->e;

    for (; ia < va->len; ia++) {
        const Event *ea = &g_array_index(va, Event, ia);
        uint64_t i0, i1, a0 = ev_before(ea) + lift;

        if (ea->cycle > z) {
            break;
        }
        i0 = ea->cycle > c ? 0 : (c - ea->cycle) / ea->period + 1;
        i1 = MIN((uint64_t)ea->n - 1, (z - ea->cycle) / ea->period);
        while (i0 <= i1) {
            uint64_t at = ea->cycle + i0 * ea->period, j;
            const Event *eb;

            while (ib < vb->len &&
                   ev_last(&g_array_index(vb, Event, ib)) < at) {
                ib++;
            }
            if (ib == vb->len) {
                /* b stays at its total: a's last step is the peak */
                uint64_t b = ib > evb->head
                             ? g_array_index(vb, Event, ib - 1).cum
                             : evb->base;

                *peak = MAX(*peak, a0 + (i1 + 1) * ea->amt - b);
                break;
            }
            eb = &g_array_index(vb, Event, ib);
            if (at < eb->cycle) {
                /* b stays until eb: the last of a's steps before it */
                j = MIN(i1, (eb->cycle - 1 - ea->cycle) / ea->period);
                *peak = MAX(*peak, a0 + (j + 1) * ea->amt - ev_before(eb));
            } else {
                j = MIN(i1, (ev_last(eb) - ea->cycle) / ea->period);
                if (!run_pair_peak(ea, eb, lift, i0, j, peak)) {
                    return false;
                }
            }
            i0 = j + 1;
        }
    }
    return true;
}

/*
 * The first run of kind k from run i on that `passed` does not pass by v
 * (len if none): a gallop, then a binary search, not moving the cursor.
 */
static guint ev_gallop(const PtmDmaTraffic *t, unsigned k, guint i,
                       bool (*passed)(const void *arr, guint i, uint64_t v),
                       uint64_t v)
{
    Vec *e = t->ev[k].e;
    guint lo = i, hi = e->len, step = 1;

    if (lo == hi || !passed(e, lo, v)) {
        return lo;
    }
    /* lo passed: double the step until one does not */
    while (step < hi - lo && passed(e, lo + step, v)) {
        lo += step;
        step *= 2;
    }
    /* step < hi - lo: that one did not */
    return first_not_passed(lo + 1, MIN(hi, lo + step), passed, e, v);
}

/* The run's total never goes above v */
static bool event_upto(const void *arr, guint i, uint64_t v)
{
    return g_array_index((Vec *)arr, Event, i).cum <= v;
}

/* The cycle kind k's total first goes above v, from run i on (or never) */
static uint64_t ev_above(const PtmDmaTraffic *t, unsigned k, guint i,
                         uint64_t v)
{
    const Event *e;

    i = ev_gallop(t, k, i, event_upto, v);
    if (i == t->ev[k].e->len) {
        return UINT64_MAX;
    }
    e = &g_array_index(t->ev[k].e, Event, i);
    if (ev_before(e) > v) {
        return e->cycle;
    }
    return e->cycle + (v - ev_before(e)) / e->amt * e->period;
}

/* The walk z at cycle c, from where w stands (at or before c) */
static void walk_at(const PtmDmaTraffic *t, const Walk *w, uint64_t c,
                    Walk *z)
{
    for (unsigned k = 0; k < EV_N; k++) {
        z->ix[k] = ev_gallop(t, k, w->ix[k], event_by, c);
        z->amount[k] = events_stand(&t->ev[k], z->ix[k], c, &z->done[k],
                                    &z->next[k]);
    }
}

/*
 * The first amount in (lo, hi] of histogram i that is in band b if lo is
 * not, or out of it if lo is in it (there is one at hi): the band falls
 * as the amount grows.
 */
static uint64_t band_turn(const PtmDmaTraffic *t, const PtmProbeShape *probe,
                          unsigned i, unsigned b, uint64_t lo, uint64_t hi)
{
    bool in = hist_band(t, probe, i, lo) == b;

    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;

        if ((hist_band(t, probe, i, mid) == b) == in) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return hi;
}

/*
 * The least and the largest amount of histogram i in the band of amount
 * x (the largest UINT64_MAX where the band of none free goes on)
 */
static void band_range(const PtmDmaTraffic *t, const PtmProbeShape *probe,
                       unsigned i, uint64_t x, uint64_t *bottom,
                       uint64_t *top)
{
    unsigned b = hist_band(t, probe, i, x);
    uint64_t cap = i ? t->geo.stfifo_capacity
                     : MIN(t->geo.tag_capacity, 0x7FFu);

    *bottom = b == hist_band(t, probe, i, 0) ? 0
              : band_turn(t, probe, i, b, 0, x);
    *top = b == hist_band(t, probe, i, cap) ? UINT64_MAX
           : band_turn(t, probe, i, b, x, cap) - 1;
}

/* The kinds that add to the tags out and FIFO words held, and that take */
static const unsigned up_kind[2] = { EV_TAKE, EV_RES };
static const unsigned down_kind[2] = { EV_RET, EV_FREE };

/*
 * The cycles from c on, up to `end`, that the amounts cannot take out of
 * the bands they are in at c: up to where what is taken from c on could
 * exceed the band's top (what was returned by c counted) or what is
 * returned could go below its bottom.
 */
static uint64_t band_holds_to(const PtmDmaTraffic *t,
                              const PtmProbeShape *probe, const Walk *w,
                              uint64_t c, uint64_t end)
{
    uint64_t x[2], e = end;

    walk_amounts(w, x);
    for (unsigned i = 0; i < 2 && e > c; i++) {
        uint64_t top, bottom;

        band_range(t, probe, i, x[i], &bottom, &top);
        if (top != UINT64_MAX) {
            e = MIN(e, ev_above(t, up_kind[i], w->ix[up_kind[i]],
                                w->amount[down_kind[i]] + top));
        }
        if (bottom) {
            e = MIN(e, ev_above(t, down_kind[i], w->ix[down_kind[i]],
                                w->amount[up_kind[i]] - bottom));
        }
    }
    return e;
}

/*
 * The most of amount i (tags out, words held) over cycles [c, e), found
 * at the steps that add to it, and with `least` also the least, at the
 * steps that take from it (as the most of lift less the amount). False
 * where a pair of runs needs too many candidates.
 */
static bool span_extremes(const PtmDmaTraffic *t, const Walk *w, unsigned i,
                          uint64_t c, uint64_t e, uint64_t *least,
                          uint64_t *most)
{
    unsigned u = up_kind[i], d = down_kind[i];
    uint64_t x[2], lift = 1ull << 40, m;

    walk_amounts(w, x);
    *most = x[i];
    if (!steps_peak(t, u, w->ix[u], d, w->ix[d], 0, c, e - 1, most)) {
        return false;
    }
    if (!least) {
        return true;
    }
    if (x[i] >= lift) {
        return false;
    }
    m = lift - x[i];
    if (!steps_peak(t, d, w->ix[d], u, w->ix[u], lift, c, e - 1, &m)) {
        return false;
    }
    *least = lift - m;
    return true;
}

/*
 * Where the amounts stay in their bands from c on, found exactly: up to
 * c + chunk, else half as far, down to ONE_BAND_MIN cycles (c if not
 * even that far), with the most of each into peak.
 */
static uint64_t band_stays_to(const PtmDmaTraffic *t,
                              const PtmProbeShape *probe, const Walk *w,
                              uint64_t c, uint64_t end, uint64_t chunk,
                              uint64_t peak[2])
{
    uint64_t x[2];

    walk_amounts(w, x);
    for (uint64_t len = MIN(chunk, end - c); len >= ONE_BAND_MIN; len /= 2) {
        unsigned i;

        for (i = 0; i < 2; i++) {
            uint64_t least, b = hist_band(t, probe, i, x[i]);

            if (!span_extremes(t, w, i, c, c + len, &least, &peak[i]) ||
                hist_band(t, probe, i, least) != b ||
                hist_band(t, probe, i, peak[i]) != b) {
                break;
            }
        }
        if (i == 2) {
            return c + len;
        }
    }
    return c;
}

/*
 * Cycles [c, e), where the amounts stay in the bands they are in at c:
 * every cycle into those bands, and the most of each (peak, or NULL to
 * find them) for the least free values. w stands at c and is moved to e.
 * False, w unmoved, where a peak is not found at once.
 */
static bool span_one_band(PtmDmaTraffic *t, const PtmProbeShape *probe,
                          Walk *w, uint64_t c, uint64_t e,
                          const uint64_t *peak,
                          uint64_t band[2][PTM_HIST_BANDS], PtmCountState *st)
{
    Walk z;
    uint64_t x[2], most[2];

    if (!peak) {
        for (unsigned i = 0; i < 2; i++) {
            if (!span_extremes(t, w, i, c, e, NULL, &most[i])) {
                return false;
            }
        }
        peak = most;
    }
    walk_amounts(w, x);
    band[0][hist_band(t, probe, 0, x[0])] += e - c;
    band[1][hist_band(t, probe, 1, x[1])] += e - c;
    st->tag_min = MIN(st->tag_min, free_tags(t, peak[0]));
    st->stfifo_min = MIN(st->stfifo_min, free_words(t, peak[1]));
    walk_at(t, w, e - 1, &z);
    walk_amounts(&z, x);
    st->tag_last = free_tags(t, x[0]);
    st->stfifo_last = free_words(t, x[1]);
    st->link_last = 1;
    *w = z;
    for (unsigned k = 0; k < EV_N; k++) {
        walk_pass(t, w, k, e);
    }
    return true;
}

/*
 * The probe's own channels: cycles, and on the PCIe probe the histograms,
 * walking the steps of the four amounts together from where each stands
 * at `start`, a steady pace of them a period at a time.
 */
static void count_side(PtmDmaTraffic *t, const PtmProbeShape *probe,
                       uint64_t start, uint64_t end, PtmCountState *st,
                       uint64_t *acc)
{
    unsigned base = 1 + probe->info.buses * (6 + probe->info.regions);
    unsigned wait = 0, backoff = 1;
    uint64_t band[2][PTM_HIST_BANDS] = { { 0 } };
    uint64_t walk_to = start, chunk = 4 * ONE_BAND_MIN;
    Walk w;

    acc[0] += end - start;
    if (!probe->brakes) {
        return;
    }
    for (unsigned k = 0; k < EV_N; k++) {
        w.amount[k] = events_find(&t->ev[k], start, &w.ix[k], &w.done[k],
                                  &w.next[k]);
    }
    for (uint64_t c = start; c < end;) {
        uint64_t x[2], next, run;

        if (c >= walk_to) {
            uint64_t peak[2], e = band_holds_to(t, probe, &w, c, end);
            bool found = false;

            if (e - c < ONE_BAND_MIN) {
                /* the bounds are too wide: the amounts' own extremes */
                e = band_stays_to(t, probe, &w, c, end, chunk, peak);
                found = true;
                chunk = e > c ? 2 * (e - c) : 4 * ONE_BAND_MIN;
            }
            if (e - c >= ONE_BAND_MIN &&
                span_one_band(t, probe, &w, c, e, found ? peak : NULL, band,
                              st)) {
                c = e;
                continue;
            }
            /* bands change soon: walk a while before looking again */
            walk_to = c + ONE_BAND_MIN;
        }
        if (!wait) {
            uint64_t to = walk_periods(t, probe, &w, c, end, acc, base, st);

            if (to != c) {
                backoff = 1;
                c = to;
                continue;
            }
            /* not steady here: look again a step on, then 2, 4, 8 */
            wait = backoff;
            backoff = MIN(backoff * 2, 8u);
        }
        wait--;
        /* up to the next step */
        walk_amounts(&w, x);
        next = MIN(MIN(w.next[0], w.next[1]), MIN(w.next[2], w.next[3]));
        run = MIN(next, end) - c;
        stretch(t, probe, x, run, band, st);
        c += run;
        for (unsigned k = 0; k < EV_N; k++) {
            if (w.next[k] <= c) {
                walk_pass(t, &w, k, c);
            }
        }
    }
    for (unsigned i = 0; i < PTM_HIST_BANDS; i++) {
        acc[base + PTM_BRAKES + i] += band[0][i];
        acc[base + PTM_BRAKES + PTM_HIST_BANDS + i] += band[1][i];
    }
    for (unsigned k = 0; k < EV_N; k++) {
        t->ev[k].cur = w.ix[k];
    }
}

/*
 * A span counted from the log: the probe's cycles and histograms over the
 * steps of the tags and FIFO words, each bus's whole frames summed, and
 * the frames the span cuts from fill's chunks.
 */
static bool dma_count(void *opaque, const PtmProbeShape *probe,
                      uint64_t start, uint64_t end, PtmCountState *st,
                      uint64_t *acc)
{
    PtmDmaTraffic *t = opaque;
    PtmChunk *ch = t->scratch;
    bool pcie = probe->info.domain == PTM_DOMAIN_PCIE;

    ptm_dma_train_log(t);
    if (start == end) {
        return true;
    }
    ch->seg = ch->scratch;
    if (probe->info.endpoint != 0) {
        /* what the core counts where fill describes nothing */
        PtmSegment *s = &ch->seg[0];

        memset(s, 0, sizeof(*s));
        s->cycles = end - start;
        s->link_up = 1;
        s->tag_free = MIN(t->geo.tag_capacity, 0x7FFu);
        s->stfifo_free = t->geo.stfifo_capacity;
        ch->nseg = 1;
        ch->repeat = 1;
        ch->id = 0;
        ptm_count_chunk(probe, st, ch, acc);
        return true;
    }
    ptm_dma_bg_play_before(t, probe->info.hz, end);
    count_side(t, probe, start, end, st, acc);
    for (unsigned b = 0; b < probe->info.buses; b++) {
        unsigned l = pcie ? b : LANE_DMA + b;
        Lane *ln;
        guint i, j;
        uint64_t c = start, qi = 0, qj = 0, cut_from = 0;
        bool cut = false;

        if (l >= t->nlanes) {
            continue;
        }
        ln = &t->lane[l];
        /* (i, qi): the first frame from c on, c past a frame cut by start */
        i = ptm_dma_first_ending_after(ln, start);
        if (i < ln->f->len) {
            const Frame *f = &g_array_index(ln->f, Frame, i);

            if (f->start < start) {
                uint64_t k = run_frame(f, start);
                uint64_t fs = frame_start(f, k);

                qi = k;
                if (fs < start) {
                    /* frame k began before the span: its rest, if any */
                    if (start < fs + f->cycles) {
                        c = MIN(end, fs + f->cycles);
                        count_lane_piece(t, probe, b, start, c, st, acc);
                    }
                    qi = k + 1;
                }
                if (qi == f->n) {
                    i++;
                    qi = 0;
                }
            }
        }
        /* (j, qj): the first frame that does not end by end */
        j = ptm_dma_first_ending_after(ln, end);
        if (j < ln->f->len) {
            const Frame *f = &g_array_index(ln->f, Frame, j);

            if (f->start < end) {
                qj = run_frame(f, end);
                cut_from = frame_start(f, qj);
                if (cut_from + f->cycles <= end) {
                    qj++;       /* end is in the gap after frame qj */
                } else {
                    cut = cut_from < end;
                }
            }
        }
        if (j > i || (j == i && qj > qi)) {
            count_lane_frames(t, probe, b, l, i, qi, j, qj, acc);
            st->open &= ~(1u << b);
        }
        /* the frame end cuts, unless it is the one start cut */
        if (cut && (j > i || (j == i && qj >= qi))) {
            count_lane_piece(t, probe, b, MAX(c, cut_from), end, st, acc);
        }
    }
    return true;
}

static PtmCost dma_cost(void *opaque)
{
    PtmDmaTraffic *t = opaque;

    ptm_dma_train_log(t);
    if (t->bg) {
        return PTM_COST_WINDOW; /* slots keep coming */
    }
    /* the lanes' last frames, in time */
    for (unsigned l = 0; l < t->nlanes; l++) {
        Ratio r = l < LANE_DMA ? t->pcie_ns : t->dma_ns;

        t->busy_until_ns = MAX(t->busy_until_ns,
                               muldiv(t->lane[l].free_at, r.q, r.p, true));
    }
    return t->busy_until_ns <= t->now_ns ? PTM_COST_RANGE : PTM_COST_WINDOW;
}

static const PtmSourceOps dma_ops = {
    .fill = dma_fill,
    .count = dma_count,
    .cost = dma_cost,
};

const PtmSourceOps *ptm_dma_traffic_ops(void)
{
    return &dma_ops;
}
