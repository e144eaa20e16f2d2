/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The card's own DMA on the probes' buses: see ptm-dma-traffic.h and the
 * rule in docs/dma.md.
 */
#include <string.h>
#include <glib.h>

#include "ptm-bytes.h"
#include "ptm-core.h"
#include "ptm-dma-traffic.h"
#include "ptm-gen.h"
#include "ptm-transfers.h"

typedef unsigned __int128 u128;

/*
 * A growable array of fixed-size elements, appended to in the hot path
 * without a call: the fields `data` and `len` are GArray's, so that
 * g_array_index() reads it too.
 */
typedef struct Vec {
    gchar *data;
    guint len, cap;
    guint esz;
} Vec;

static Vec *vec_new(guint esz)
{
    Vec *v = g_new0(Vec, 1);

    v->esz = esz;
    return v;
}

static void vec_free(Vec *v)
{
    if (v) {
        g_free(v->data);
        g_free(v);
    }
}

static void *vec_grow(Vec *v)
{
    v->cap = MAX(v->cap * 2, 256u);
    v->data = g_realloc_n(v->data, v->cap, v->esz);
    return v->data + (gsize)v->len++ * v->esz;
}

/* Room for one more element at the end: its address */
static inline void *vec_push(Vec *v)
{
    if (G_LIKELY(v->len < v->cap)) {
        return v->data + (gsize)v->len++ * v->esz;
    }
    return vec_grow(v);
}

#define vec_append(v, val) (*(typeof(val) *)vec_push(v) = (val))

/* Drop the first n elements */
static void vec_drop_front(Vec *v, guint n)
{
    memmove(v->data, v->data + (gsize)n * v->esz,
            (gsize)(v->len - n) * v->esz);
    v->len -= n;
}

/*
 * A run of n equal frames on a bus, one every `period` cycles (the bus's
 * clock): frame k takes the `cycles` cycles from start + k x period, and
 * the bus is idle in between where period > cycles. A frame equal to the
 * run's frames that starts one period after its last joins it, as the
 * completions of one read do (back to back) and the request headers of a
 * train of reads (paced by the bus before them), so a long read or a
 * burst of equal transfers costs one entry a bus.
 */
typedef struct Frame {
    uint64_t start;
    uint32_t cycles;
    uint32_t period;            /* >= cycles; cycles while n is 1 */
    uint32_t bytes;             /* on the MFB; 0: a header on the MVB only */
    uint32_t n;                 /* frames in the run, >= 1 */
    uint8_t mvb;                /* a header on the MVB in the first cycle */
    uint8_t end_r;              /* region of the last byte */
    uint16_t end_pos;           /* and its item there */
} Frame;

static inline uint64_t frame_start(const Frame *f, uint64_t k)
{
    return f->start + k * f->period;
}

static inline uint64_t run_end(const Frame *f)
{
    return frame_start(f, f->n - 1) + f->cycles;
}

/* The frame of a run whose period its cycle c (from its start on) is in */
static inline uint64_t run_frame(const Frame *f, uint64_t c)
{
    return (c - f->start) / f->period;
}

/*
 * Frames and events are appended at the end and forgotten at the head;
 * the array is compacted only once most of it is forgotten, and a cursor
 * remembers where the last look-up ended, since the core asks for cycles
 * mostly in order.
 */
typedef struct Lane {
    Vec *f;                     /* Frame, by start, from index head */
    guint head;
    guint cur;                  /* a hint: index of the last look-up */
    uint64_t free_at;           /* first cycle after the last frame */
    uint64_t total;             /* frames ever logged */
    unsigned width, rbytes;     /* bytes a cycle, bytes a region */
    int wshift;                 /* log2 of width if a power of 2, else -1 */
    int rshift;                 /* log2 of rbytes, or -1 */
} Lane;

/*
 * Changes of an amount over PCIe cycles: a run of n steps of `amt`, one
 * every `period` cycles from `cycle` on, with the running total after
 * its last step. Equal steps at a steady pace (the tags of a train of
 * reads) join one run.
 */
typedef struct Event {
    uint64_t cycle;             /* the first step */
    uint64_t cum;               /* the total up to and with the last */
    uint64_t amt;
    uint32_t period;            /* 1 while n is 1 */
    uint32_t n;
} Event;

static inline uint64_t ev_last(const Event *e)
{
    return e->cycle + (uint64_t)(e->n - 1) * e->period;
}

/* The total before the run's first step */
static inline uint64_t ev_before(const Event *e)
{
    return e->cum - e->amt * e->n;
}

enum { EV_TAKE, EV_RET, EV_RES, EV_FREE, EV_N };

typedef struct Events {
    Vec *e;                     /* from index head */
    guint head;
    guint cur;
    uint64_t base;              /* the total before the first kept one */
} Events;

enum { NLANES = 2 + PTM_MAX_BUSES };

/* A ratio of two rates, reduced; qshift: log2 of q if a power of 2, or -1 */
typedef struct Ratio {
    uint64_t p, q;
    int qshift;
} Ratio;

enum { LANE_RQ, LANE_RC, LANE_DMA };   /* then UP p = 2 + 2p, DOWN 3 + 2p */

/*
 * Equal transfers of one access, held until something else comes and then
 * logged together: the same time, port, direction and size, split alike
 * (the same first piece and, for a read, the same offset in the RCB, so
 * that every piece and completion is the same; the first's address
 * stands for them all). Only transfers of one request (and, for a read,
 * one completion) are held: the others gain nothing from it.
 */
typedef struct Train {
    uint64_t t_ns, addr;
    uint32_t bytes, n;
    uint32_t first, phase;
    unsigned port;
    bool write;
    PtmSettings set;
} Train;

struct PtmDmaTraffic {
    PtmGeometry geo;
    unsigned nlanes;
    Lane lane[NLANES];
    Events ev[EV_N];            /* tags taken/returned, FIFO words */
    Vec *ret;                   /* cycle each read request's tag returns */
    uint64_t ret_base;          /* read requests before ret's first */
    uint64_t busy_until_ns;     /* the last frame's end (as of busy_lanes) */
    /* clock ratios: PCIe per DMA, DMA per PCIe, DMA and PCIe per ns */
    Ratio pcie_dma, dma_pcie, dma_ns, pcie_ns;
    /* the DMA cycle of the last transfer's time (a train shares one) */
    uint64_t up_t_ns, up_cycle;
    uint64_t now_ns;
    uint64_t lat;               /* PTM_DMA_LATENCY_NS in PCIe cycles */
    int ishift;                 /* log2 of an item's bytes, or -1 */
    PtmChunk *scratch;
    /* background transfers (ptm-transfers.h): the next slot to play */
    const PtmGen *bg;
    uint64_t bg_next_ns;        /* its time */
    uint64_t bg_slot;           /* its number, from 1 */
    PtmSettings settings;       /* the card's, splitting them */
    bool frame_by_frame;        /* tests: no runs of a transfer at once */
    Train train;                /* transfers not yet logged */
};

static unsigned lane_regions(const PtmDmaTraffic *t, unsigned l)
{
    if (l == LANE_RQ) {
        return t->geo.rq_regions;
    }
    if (l == LANE_RC) {
        return t->geo.rc_regions;
    }
    return (l - LANE_DMA) % 2 ? t->geo.down_regions : t->geo.up_regions;
}

static unsigned lane_region_bytes(const PtmDmaTraffic *t, unsigned l)
{
    if (l == LANE_RQ) {
        return t->geo.rq_region_bytes;
    }
    if (l == LANE_RC) {
        return t->geo.rc_region_bytes;
    }
    return (l - LANE_DMA) % 2 ? t->geo.down_region_bytes
                              : t->geo.up_region_bytes;
}

/*
 * x * p / q rounded down or up, in 64 bits where the product fits (the
 * ratios of the card's clocks reduce to small fractions), else in 128.
 */
static uint64_t muldiv(uint64_t x, uint64_t p, uint64_t q, bool up)
{
    uint64_t prod;

    if (!__builtin_mul_overflow(x, p, &prod) && prod <= UINT64_MAX - q) {
        return (prod + (up ? q - 1 : 0)) / q;
    }
    return (uint64_t)(((u128)x * p + (up ? q - 1 : 0)) / q);
}

static inline bool is_power_of_2(unsigned x)
{
    return x && !(x & (x - 1));
}

static Ratio ratio(uint64_t to, uint64_t from)
{
    uint64_t g = ptm_gcd64(to, from);
    uint64_t q = from / g;

    return (Ratio) { to / g, q, is_power_of_2(q) ? __builtin_ctzll(q) : -1 };
}

/*
 * x in the clock of `to` (muldiv by r): the card's clocks' ratios reduce
 * to 2/1, 1/2 and the like, so a shift does where the divisor is a power
 * of 2 (a division costs more than the rest of logging a frame).
 */
static inline uint64_t ratio_of(const Ratio *r, uint64_t x, bool up)
{
    uint64_t prod;

    if (r->qshift >= 0 && !__builtin_mul_overflow(x, r->p, &prod) &&
        prod <= UINT64_MAX - r->q) {
        return (prod + (up ? r->q - 1 : 0)) >> r->qshift;
    }
    return muldiv(x, r->p, r->q, up);
}

PtmDmaTraffic *ptm_dma_traffic_new(const PtmGeometry *geo)
{
    PtmDmaTraffic *t = g_new0(PtmDmaTraffic, 1);

    t->geo = *geo;
    t->nlanes = LANE_DMA + 2 * geo->dma_ports;
    t->pcie_dma = ratio(geo->pcie_hz, geo->dma_hz);
    t->dma_pcie = ratio(geo->dma_hz, geo->pcie_hz);
    t->dma_ns = ratio(geo->dma_hz, 1000000000u);
    t->pcie_ns = ratio(geo->pcie_hz, 1000000000u);
    for (unsigned l = 0; l < t->nlanes; l++) {
        t->lane[l].f = vec_new(sizeof(Frame));
        t->lane[l].rbytes = lane_region_bytes(t, l);
        t->lane[l].width = lane_regions(t, l) * t->lane[l].rbytes;
        t->lane[l].wshift = is_power_of_2(t->lane[l].width)
                            ? __builtin_ctz(t->lane[l].width) : -1;
        t->lane[l].rshift = is_power_of_2(t->lane[l].rbytes)
                            ? __builtin_ctz(t->lane[l].rbytes) : -1;
    }
    t->ishift = is_power_of_2(geo->item_bytes) ? __builtin_ctz(geo->item_bytes)
                                               : -1;
    t->lat = muldiv(PTM_DMA_LATENCY_NS, t->pcie_ns.p, t->pcie_ns.q, true);
    for (unsigned k = 0; k < EV_N; k++) {
        t->ev[k].e = vec_new(sizeof(Event));
    }
    t->ret = vec_new(sizeof(uint64_t));
    t->scratch = ptm_chunk_new();
    t->bg_slot = 1;
    return t;
}

void ptm_dma_traffic_set_frame_by_frame(PtmDmaTraffic *t, bool on)
{
    t->frame_by_frame = on;
}

void ptm_dma_traffic_free(PtmDmaTraffic *t)
{
    if (!t) {
        return;
    }
    for (unsigned l = 0; l < t->nlanes; l++) {
        vec_free(t->lane[l].f);
    }
    for (unsigned k = 0; k < EV_N; k++) {
        vec_free(t->ev[k].e);
    }
    vec_free(t->ret);
    ptm_chunk_free(t->scratch);
    g_free(t);
}

/* ---- logging ------------------------------------------------------ */

/* Cycles a frame of `bytes` takes on a lane (1 for a header alone) */
static inline uint32_t lane_cycles(const Lane *ln, uint32_t bytes)
{
    if (!bytes) {
        return 1;
    }
    if (ln->wshift >= 0) {
        return ((uint64_t)bytes + ln->width - 1) >> ln->wshift;
    }
    return ((uint64_t)bytes + ln->width - 1) / ln->width;
}

/* Where a data frame's last byte lies: region and item in it */
static inline void frame_place_end(const PtmDmaTraffic *t, unsigned l, Frame *f)
{
    const Lane *ln = &t->lane[l];
    unsigned last, in_region;

    if (ln->wshift >= 0 && ln->rshift >= 0 && t->ishift >= 0) {
        last = f->bytes ? (f->bytes - 1) & (ln->width - 1) : 0;
        in_region = last & (ln->rbytes - 1);
        f->end_r = last >> ln->rshift;
        f->end_pos = in_region >> t->ishift;
        return;
    }
    last = f->bytes ? (f->bytes - 1) % ln->width : 0;
    f->end_r = last / ln->rbytes;
    f->end_pos = (last % ln->rbytes) / t->geo.item_bytes;
}

static inline void frame_end(const Frame *f, unsigned *r, unsigned *pos)
{
    *r = f->end_r;
    *pos = f->end_pos;
}

/*
 * `count` equal frames of `cycles` cycles on a lane, frame i from cycle
 * start + i x period (cycles <= period <= UINT32_MAX, unused for one
 * frame): joined to the lane's last run where they continue it.
 */
static void lane_run(PtmDmaTraffic *t, unsigned l, uint64_t start,
                     uint32_t cycles, uint32_t period, uint32_t bytes,
                     bool mvb, uint32_t count)
{
    Lane *ln = &t->lane[l];
    Frame *last = ln->f->len > ln->head
                  ? &g_array_index(ln->f, Frame, ln->f->len - 1) : NULL;

    if (count == 1) {
        period = cycles;
    }
    ln->free_at = start + (uint64_t)(count - 1) * period + cycles;
    ln->total += count;
    if (last && last->bytes == bytes && last->mvb == mvb &&
        last->n <= UINT32_MAX - count) {
        uint64_t d = start - frame_start(last, last->n - 1);

        if (last->n == 1 ? d <= UINT32_MAX && (count == 1 || d == period)
                         : d == last->period &&
                           (count == 1 || period == last->period)) {
            last->period = d;
            last->n += count;
            return;
        }
    }
    {
        /* in place: a copy from the stack stalls on its byte fields */
        Frame *f = vec_push(ln->f);

        f->start = start;
        f->cycles = cycles;
        f->period = period;
        f->bytes = bytes;
        f->n = count;
        f->mvb = mvb;
        frame_place_end(t, l, f);
    }
}

/* A frame of `bytes` (0: MVB only) ready at cycle `ready`: where it ends */
static inline uint64_t lane_put(PtmDmaTraffic *t, unsigned l, uint64_t ready,
                                uint32_t bytes, bool mvb, uint64_t *start)
{
    Lane *ln = &t->lane[l];
    uint64_t s = MAX(ready, ln->free_at);

    lane_run(t, l, s, lane_cycles(ln, bytes), 0, bytes, mvb, 1);
    if (start) {
        *start = s;
    }
    return ln->free_at;
}

/* A part of a train of equal frames: n of them, one every period from start */
typedef struct Piece {
    uint64_t start;
    uint32_t period;
    uint32_t n;
} Piece;

/*
 * n equal frames of `cycles` cycles, frame i ready at cycle ready + i x
 * pace, on a lane free from cycle free_at: each starts when it is ready
 * and the lane is free, so the first ones go back to back while the lane
 * has a backlog (start_i = s + i x cycles) and the rest at the pace once
 * it is gone (ready + i x pace): at most two pieces, into out. Returns
 * their number.
 */
static inline unsigned paced_pieces(uint64_t free_at, uint64_t ready,
                                    uint32_t pace, uint32_t cycles,
                                    uint32_t n, Piece out[2])
{
    uint64_t s = MAX(ready, free_at), tight = n;

    if (pace > cycles) {
        /* start_i = max(ready + i x pace, s + i x cycles) */
        tight = MIN((uint64_t)n, (s - ready) / (pace - cycles) + 1);
    }
    out[0] = (Piece) { s, cycles, tight };
    if (tight < n) {
        out[1] = (Piece) { ready + tight * pace, pace, n - tight };
        return 2;
    }
    return 1;
}

/* The frames of paced_pieces() put on lane l: where the last ends */
static uint64_t lane_put_paced(PtmDmaTraffic *t, unsigned l, uint64_t ready,
                               uint32_t pace, uint32_t bytes, bool mvb,
                               uint32_t n)
{
    Lane *ln = &t->lane[l];
    uint32_t cycles = lane_cycles(ln, bytes);
    Piece p[2];
    unsigned np = paced_pieces(ln->free_at, ready, pace, cycles, n, p);

    for (unsigned i = 0; i < np; i++) {
        lane_run(t, l, p[i].start, cycles, p[i].period, bytes, mvb, p[i].n);
    }
    return ln->free_at;
}

static inline void event_add(Events *ev, uint64_t cycle, uint64_t amount)
{
    Event *last = ev->e->len > ev->head
                  ? &g_array_index(ev->e, Event, ev->e->len - 1) : NULL;
    uint64_t cum = (last ? last->cum : ev->base) + amount;
    Event *e;

    if (last && last->amt == amount && last->n < UINT32_MAX &&
        cycle > ev_last(last) &&
        (last->n == 1 ? cycle - last->cycle <= UINT32_MAX
                      : cycle - ev_last(last) == last->period)) {
        if (last->n == 1) {
            last->period = cycle - last->cycle;
        }
        last->n++;
        last->cum = cum;
        return;
    }
    e = vec_push(ev->e);
    e->cycle = cycle;
    e->cum = cum;
    e->amt = amount;
    e->period = 1;
    e->n = 1;
}

/*
 * n steps of amt, at c0 + i x period (period >= 1): what n event_add()s
 * make, without a call a step.
 */
static void event_add_run(Events *ev, uint64_t c0, uint32_t period,
                          uint32_t n, uint64_t amt)
{
    Event *last;

    event_add(ev, c0, amt);
    last = &g_array_index(ev->e, Event, ev->e->len - 1);
    if (n > 1 && last->n > 1 && last->period != period) {
        /* c0 continued a run of another pace: the next step starts one */
        c0 += period;
        n--;
        event_add(ev, c0, amt);
        last = &g_array_index(ev->e, Event, ev->e->len - 1);
    }
    if (n == 1) {
        return;
    }
    if (period == 0 || (uint64_t)last->n + n - 1 > UINT32_MAX) {
        for (uint32_t i = 1; i < n; i++) {
            event_add(ev, c0 + (uint64_t)i * period, amt);
        }
        return;
    }
    if (last->n == 1) {
        last->period = period;
    }
    last->n += n - 1;
    last->cum += (uint64_t)(n - 1) * amt;
}

/* The tags the function may use: the card's, within its tag field */
static uint64_t tag_limit(const PtmDmaTraffic *t, const PtmSettings *set)
{
    uint64_t field = set->tag_10bit ? 768 : set->ext_tag ? 256 : 32;

    return MIN(MIN(t->geo.tag_capacity, 0x7FFu), field);
}

/*
 * The piece of [addr, end) at addr up to the next multiple of align (a
 * power of 2: MPS, MRRS and RCB are)
 */
static inline uint32_t piece(uint64_t addr, uint64_t end, uint64_t align)
{
    uint64_t next = (addr | (align - 1)) + 1;

    return MIN(next, end) - addr;
}

/*
 * n completions of `bytes` each, all ready on RC at `ready` (so back to
 * back there), each on DOWN from the DMA cycle its RC frame ends in: in
 * a few runs where the DOWN frames' ready cycles step evenly (or DOWN is
 * the slower bus, so that they queue). false (nothing put) where not.
 */
static bool completions(PtmDmaTraffic *t, unsigned down, uint64_t ready,
                        uint32_t bytes, uint64_t n, uint64_t *rc_end,
                        uint64_t *down_end)
{
    Lane *rc = &t->lane[LANE_RC], *dn = &t->lane[down];
    uint32_t c_rc = lane_cycles(rc, PTM_DMA_RC_HDR + bytes);
    uint32_t c_dn = lane_cycles(dn, bytes);
    const Ratio *r = &t->dma_pcie;
    uint64_t s = MAX(ready, rc->free_at), step = c_rc * r->p, pace;

    if (n > UINT32_MAX) {
        return false;
    }
    if (step <= c_dn * r->q) {
        pace = 0;               /* DOWN is the slower: they queue there */
    } else if (step % r->q == 0 && step / r->q <= UINT32_MAX) {
        pace = step / r->q;     /* RC's pace in DMA cycles, exactly */
    } else {
        return false;
    }
    lane_run(t, LANE_RC, s, c_rc, c_rc, PTM_DMA_RC_HDR + bytes, false, n);
    *rc_end = rc->free_at;
    *down_end = lane_put_paced(t, down, ratio_of(r, s + c_rc, true), pace,
                               bytes, true, n);
    return true;
}

static void log_transfer(PtmDmaTraffic *t, uint64_t t_ns, unsigned port,
                         bool write, uint64_t addr, uint32_t bytes,
                         const PtmSettings *set)
{
    unsigned up = LANE_DMA + 2 * port, down = up + 1;
    unsigned mps_shift = 7 + MIN(set->mps, 5);
    uint64_t mps = 1u << mps_shift, mrrs = 128u << MIN(set->mrrs, 5);
    uint64_t rcb = set->rcb_128 ? 128 : 64;
    uint64_t end = addr + bytes, up_end, rq_ready;
    uint64_t lat = t->lat;

    if (port >= t->geo.dma_ports || bytes == 0 || end < addr) {
        return;
    }
    /* the request leaves the DMA side */
    if (t_ns != t->up_t_ns) {
        t->up_t_ns = t_ns;
        t->up_cycle = muldiv(t_ns, t->dma_ns.p, t->dma_ns.q, false);
    }
    up_end = lane_put(t, up, t->up_cycle + 1, write ? bytes : 0, true, NULL);
    rq_ready = ratio_of(&t->pcie_dma, up_end, true);
    while (addr < end) {
        uint32_t len = piece(addr, end, write ? mps : mrrs);
        uint64_t rq_start, rc_end = 0, down_end = 0, limit;
        uint64_t words = 0, k;

        if (write) {
            uint64_t full = (end - addr) >> mps_shift;

            if (len == mps && full > 1 && !t->frame_by_frame) {
                /* whole MPS blocks, each ready as the one before ends */
                rq_ready = lane_put_paced(t, LANE_RQ, rq_ready, 0,
                                          PTM_DMA_RQ_HDR + mps, false, full);
                addr += full * mps;
                continue;
            }
            rq_ready = lane_put(t, LANE_RQ, rq_ready, PTM_DMA_RQ_HDR + len,
                                false, NULL);
            addr += len;
            continue;
        }
        /* a read request waits for a tag */
        k = t->ret_base + t->ret->len;
        limit = tag_limit(t, set);
        if (k >= limit && k - limit >= t->ret_base) {
            uint64_t i = k - limit - t->ret_base;

            rq_ready = MAX(rq_ready, g_array_index(t->ret, uint64_t, i));
        }
        rq_ready = lane_put(t, LANE_RQ, rq_ready, PTM_DMA_RQ_HDR, false,
                            &rq_start);
        /* its completions: to the first RCB boundary, then MPS each */
        for (uint64_t a = addr, e = addr + len; a < e;) {
            uint32_t c = a == addr && (a & (rcb - 1)) ? piece(a, e, rcb)
                                                      : MIN(mps, e - a);
            uint64_t full = (e - a) >> mps_shift;

            if (c == mps && full > 1 && !t->frame_by_frame &&
                completions(t, down, rq_start + lat, mps, full, &rc_end,
                            &down_end)) {
                a += full * mps;
                continue;
            }
            rc_end = lane_put(t, LANE_RC, rq_start + lat,
                              PTM_DMA_RC_HDR + c, false, NULL);
            down_end = lane_put(t, down,
                                ratio_of(&t->dma_pcie, rc_end, true), c, true,
                                NULL);
            a += c;
        }
        words = lane_cycles(&t->lane[LANE_RC], len);
        event_add(&t->ev[EV_TAKE], rq_start, 1);
        event_add(&t->ev[EV_RES], rq_start, words);
        event_add(&t->ev[EV_RET], rc_end, 1);
        event_add(&t->ev[EV_FREE],
                  ratio_of(&t->pcie_dma, down_end, true), words);
        vec_append(t->ret, rc_end);
        addr += len;
    }
}

/* ---- trains: equal transfers of one access at once ---------------- */

static inline bool same_settings(const PtmSettings *a, const PtmSettings *b)
{
    return a->mps == b->mps && a->mrrs == b->mrrs && a->ext_tag == b->ext_tag &&
           a->tag_10bit == b->tag_10bit && a->rcb_128 == b->rcb_128;
}

/*
 * What splits a transfer: its first piece and a read's offset in the RCB.
 * Returns whether it is one request and, for a read, one completion (what
 * train_at_once() places).
 */
static inline bool split_key(const PtmSettings *set, bool write,
                             uint64_t addr, uint32_t bytes, uint32_t *first,
                             uint32_t *phase)
{
    uint64_t mps = 128u << MIN(set->mps, 5), mrrs = 128u << MIN(set->mrrs, 5);
    uint64_t rcb = set->rcb_128 ? 128 : 64;

    *first = piece(addr, addr + bytes, write ? mps : mrrs);
    *phase = write ? 0 : addr & (rcb - 1);
    return *first == bytes &&
           (write || (*phase ? MIN(rcb - *phase, bytes)
                             : MIN(mps, bytes)) == bytes);
}

/* x steps of a clock at `period` apart in the clock of r: exact, or 0 */
static inline uint64_t pace_in(const Ratio *r, uint64_t period)
{
    uint64_t x = period * r->p;

    return x % r->q ? 0 : x / r->q;
}

/*
 * m transfers of a train (m <= the tags for reads), each one request and,
 * for a read, one completion (split_key() holds no others): placed a few
 * runs a bus, the frames
 * log_transfer() gives them one by one. Every transfer's frames leave UP
 * back to back (they share the DMA cycle), so each later bus sees them
 * ready at a steady pace and puts them in at most two pieces (backlog,
 * then the pace); a piece stays one pace on the next bus where the
 * clocks' ratio maps its period to whole cycles. false, with nothing
 * placed, where that does not hold, or where a read's tag could have to
 * wait for one still out.
 */
static bool train_at_once(PtmDmaTraffic *t, const Train *tr, uint32_t m)
{
    const PtmSettings *set = &tr->set;
    unsigned up = LANE_DMA + 2 * tr->port, down = up + 1;
    Lane *lu = &t->lane[up], *lq = &t->lane[LANE_RQ];
    Lane *lc = &t->lane[LANE_RC], *ld = &t->lane[down];
    uint32_t bytes = tr->bytes, c_up = lane_cycles(lu, tr->write ? bytes : 0);
    uint64_t pace = pace_in(&t->pcie_dma, c_up), s_up, r0, limit, k0, fr;
    uint32_t c_rq, c_rc, c_dn, words, free_pace[8];
    Piece rq[2], rc[4], dn[8];
    unsigned nrq, nrc = 0, ndn = 0;

    if (pace == 0 || pace > UINT32_MAX) {
        return false;
    }
    if (tr->t_ns != t->up_t_ns) {
        t->up_t_ns = tr->t_ns;
        t->up_cycle = muldiv(tr->t_ns, t->dma_ns.p, t->dma_ns.q, false);
    }
    s_up = MAX(t->up_cycle + 1, lu->free_at);
    r0 = ratio_of(&t->pcie_dma, s_up + c_up, true);
    if (tr->write) {
        lane_run(t, up, s_up, c_up, c_up, bytes, true, m);
        lane_put_paced(t, LANE_RQ, r0, pace, PTM_DMA_RQ_HDR + bytes, false, m);
        return true;
    }
    /* the tags the train's requests wait for are back by its first */
    limit = tag_limit(t, set);
    k0 = t->ret_base + t->ret->len;
    if (m > limit) {
        return false;
    }
    for (uint64_t k = k0 + m; k-- > k0;) {
        if (k < limit || k - limit < t->ret_base) {
            break;              /* none out that far back */
        }
        if (g_array_index(t->ret, uint64_t, k - limit - t->ret_base) > r0) {
            return false;
        }
    }
    c_rq = lane_cycles(lq, PTM_DMA_RQ_HDR);
    c_rc = lane_cycles(lc, PTM_DMA_RC_HDR + bytes);
    c_dn = lane_cycles(ld, bytes);
    words = lane_cycles(lc, bytes);
    nrq = paced_pieces(lq->free_at, r0, pace, c_rq, m, rq);
    fr = lc->free_at;
    for (unsigned i = 0; i < nrq; i++) {
        unsigned k = paced_pieces(fr, rq[i].start + t->lat, rq[i].period,
                                  c_rc, rq[i].n, &rc[nrc]);

        nrc += k;
        fr = rc[nrc - 1].start + (uint64_t)(rc[nrc - 1].n - 1) *
             rc[nrc - 1].period + c_rc;
    }
    fr = ld->free_at;
    for (unsigned i = 0; i < nrc; i++) {
        uint64_t p = rc[i].n > 1 ? pace_in(&t->dma_pcie, rc[i].period) : 0;
        unsigned k;

        if ((rc[i].n > 1 && p == 0) || p > UINT32_MAX) {
            return false;
        }
        k = paced_pieces(fr, ratio_of(&t->dma_pcie, rc[i].start + c_rc, true),
                         p, c_dn, rc[i].n, &dn[ndn]);
        ndn += k;
        fr = dn[ndn - 1].start + (uint64_t)(dn[ndn - 1].n - 1) *
             dn[ndn - 1].period + c_dn;
    }
    for (unsigned i = 0; i < ndn; i++) {
        uint64_t p = dn[i].n > 1 ? pace_in(&t->pcie_dma, dn[i].period) : 1;

        if (p == 0 || p > UINT32_MAX) {
            return false;
        }
        free_pace[i] = p;
    }
    /* placed: UP, then each bus and the steps it makes */
    lane_run(t, up, s_up, c_up, c_up, 0, true, m);
    for (unsigned i = 0; i < nrq; i++) {
        lane_run(t, LANE_RQ, rq[i].start, c_rq, rq[i].period, PTM_DMA_RQ_HDR,
                 false, rq[i].n);
        event_add_run(&t->ev[EV_TAKE], rq[i].start, rq[i].period, rq[i].n, 1);
        event_add_run(&t->ev[EV_RES], rq[i].start, rq[i].period, rq[i].n,
                      words);
    }
    for (unsigned i = 0; i < nrc; i++) {
        uint64_t end = rc[i].start + c_rc;

        lane_run(t, LANE_RC, rc[i].start, c_rc, rc[i].period,
                 PTM_DMA_RC_HDR + bytes, false, rc[i].n);
        event_add_run(&t->ev[EV_RET], end, rc[i].period, rc[i].n, 1);
        for (uint32_t j = 0; j < rc[i].n; j++) {
            vec_append(t->ret, end + (uint64_t)j * rc[i].period);
        }
    }
    for (unsigned i = 0; i < ndn; i++) {
        lane_run(t, down, dn[i].start, c_dn, dn[i].period, bytes, true,
                 dn[i].n);
        event_add_run(&t->ev[EV_FREE],
                      ratio_of(&t->pcie_dma, dn[i].start + c_dn, true),
                      free_pace[i], dn[i].n, words);
    }
    return true;
}

/* Log the held train: in parts a tag limit long, at once where they can */
static void train_log(PtmDmaTraffic *t)
{
    const Train *tr = &t->train;    /* logging it leaves it as it is */
    uint32_t n = tr->n;

    t->train.n = 0;
    while (n) {
        uint64_t lim = tr->write ? n : tag_limit(t, &tr->set);
        uint32_t m = lim ? MIN(n, lim) : n;

        if (m < 2 || !train_at_once(t, tr, m)) {
            for (uint32_t i = 0; i < m; i++) {
                log_transfer(t, tr->t_ns, tr->port, tr->write, tr->addr,
                             tr->bytes, &tr->set);
            }
        }
        n -= m;
    }
}

/* ---- background transfers ----------------------------------------- */

static const PtmTransfersParams *bg_params_at(const PtmDmaTraffic *t,
                                              uint64_t t_ns)
{
    return ptm_gen_params_at(t->bg, muldiv(t_ns, t->pcie_ns.p, t->pcie_ns.q,
                                           false));
}

/*
 * Play the background's slots up to and with time `until` (ns). Slots are
 * logged in time order, before any transfer of the DMA engine at the same
 * or a later time, whatever asks first: the engine's transfers (at the
 * present), or the block counting cycles that a slot may reach.
 */
static void bg_play(PtmDmaTraffic *t, uint64_t until)
{
    while (t->bg && t->bg_next_ns <= until) {
        const PtmTransfersParams *p = bg_params_at(t, t->bg_next_ns);
        uint64_t addr = (uint32_t)(p->address +
                                   (uint32_t)(t->bg_slot - 1) * p->stride);

        if (p->port < t->geo.dma_ports) {
            log_transfer(t, t->bg_next_ns, p->port, true, addr,
                         p->write_bytes, &t->settings);
            log_transfer(t, t->bg_next_ns, p->port, false, addr,
                         p->read_bytes, &t->settings);
        }
        t->bg_slot++;
        t->bg_next_ns += p->interval_ns;
    }
}

/*
 * Before cycles [.., end) of a clock of `hz` are described: a slot at
 * time s puts its first frame at a cycle after s's (UP one DMA cycle on,
 * RQ after UP), so the slots that can reach them are those whose cycle
 * is below end - 1: s x hz < (end - 1) x 10^9.
 */
static void bg_play_before(PtmDmaTraffic *t, uint64_t hz, uint64_t end)
{
    if (t->bg && end > 1) {
        u128 lim = (u128)(end - 1) * 1000000000u;

        /* the last ns s with s x hz < lim */
        bg_play(t, (uint64_t)MIN((lim + hz - 1) / hz - 1, (u128)UINT64_MAX));
    }
}

void ptm_dma_traffic_set_background(PtmDmaTraffic *t, const PtmGen *gen)
{
    train_log(t);
    t->bg = gen;
    t->bg_slot = 1;
    t->bg_next_ns = gen ? bg_params_at(t, 0)->interval_ns : 0;
}

void ptm_dma_traffic_set_settings(PtmDmaTraffic *t, uint64_t now_ns,
                                  const PtmSettings *set)
{
    train_log(t);
    /* slots before the change are split by the settings they saw */
    if (now_ns) {
        bg_play(t, now_ns - 1);
    }
    t->settings = *set;
}

void ptm_dma_traffic_add(PtmDmaTraffic *t, uint64_t t_ns, unsigned port,
                         bool write, uint64_t addr, uint32_t bytes,
                         const PtmSettings *set)
{
    Train *tr = &t->train;
    uint32_t first, phase;

    if (t->frame_by_frame || port >= t->geo.dma_ports || bytes == 0 ||
        addr + bytes < addr ||
        !split_key(set, write, addr, bytes, &first, &phase)) {
        /* one by one: what train_at_once() does not place is not held */
        train_log(t);
        bg_play(t, t_ns);
        log_transfer(t, t_ns, port, write, addr, bytes, set);
        return;
    }
    if (tr->n && tr->n < UINT32_MAX && tr->t_ns == t_ns && tr->port == port &&
        tr->write == write && tr->bytes == bytes && tr->first == first &&
        tr->phase == phase && same_settings(&tr->set, set)) {
        tr->n++;
        return;
    }
    train_log(t);
    bg_play(t, t_ns);
    *tr = (Train) {
        .t_ns = t_ns, .addr = addr, .bytes = bytes, .n = 1, .first = first,
        .phase = phase, .port = port, .write = write, .set = *set,
    };
}

void ptm_dma_traffic_set_now(PtmDmaTraffic *t, uint64_t now_ns)
{
    train_log(t);
    t->now_ns = MAX(t->now_ns, now_ns);
}

void ptm_dma_traffic_frames(PtmDmaTraffic *t, uint64_t out[4])
{
    train_log(t);
    for (unsigned l = 0; l < 4; l++) {
        out[l] = l < t->nlanes ? t->lane[l].total : 0;
    }
}

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
static guint first_ending_after(Lane *ln, uint64_t c)
{
    return seek(ln->head, ln->f->len, &ln->cur, frame_ends_by, ln->f, c);
}

/* A lane's cycle c into *bc; how long it stays so (UINT64_MAX: for good) */
static uint64_t lane_cycle(PtmDmaTraffic *t, unsigned l, uint64_t c,
                           PtmBusCycle *bc)
{
    Lane *ln = &t->lane[l];
    guint i = first_ending_after(ln, c);
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

    train_log(t);
    if (probe->endpoint != 0) {
        return 0;               /* the DMA uses endpoint 0 only: idle */
    }
    bg_play_before(t, probe->hz, end);
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

    train_log(t);
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
    bg_play_before(t, probe->info.hz, end);
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
        i = first_ending_after(ln, start);
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
        j = first_ending_after(ln, end);
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

    train_log(t);
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

/* ---- keeping the log small ---------------------------------------- */

/* Drop an array's first `head` elements once they are most of it */
static void compact(Vec *a, guint *head, guint *cur)
{
    if (*head > 1024 && *head > a->len / 2) {
        vec_drop_front(a, *head);
        *cur = *cur > *head ? *cur - *head : 0;
        *head = 0;
    }
}

static void events_prune(Events *ev, uint64_t cycle)
{
    guint n = ev->head;

    while (n < ev->e->len &&
           ev_last(&g_array_index(ev->e, Event, n)) <= cycle) {
        n++;
    }
    if (n > ev->head) {
        ev->base = g_array_index(ev->e, Event, n - 1).cum;
        ev->head = n;
        compact(ev->e, &ev->head, &ev->cur);
    }
}

void ptm_dma_traffic_prune(PtmDmaTraffic *t, uint64_t t_ns)
{
    uint64_t pc = muldiv(t_ns, t->pcie_ns.p, t->pcie_ns.q, false);
    guint n;

    train_log(t);
    for (unsigned l = 0; l < t->nlanes; l++) {
        Lane *ln = &t->lane[l];
        Ratio r = l < LANE_DMA ? t->pcie_ns : t->dma_ns;
        uint64_t c = muldiv(t_ns, r.p, r.q, false);

        ln->head = first_ending_after(ln, c);
        compact(ln->f, &ln->head, &ln->cur);
    }
    for (unsigned k = 0; k < EV_N; k++) {
        events_prune(&t->ev[k], pc);
    }
    /* a read waits for the tag of the one 768 before it at most */
    n = 0;
    while (t->ret->len - n > 1024 &&
           g_array_index(t->ret, uint64_t, n) <= pc) {
        n++;
    }
    if (n > 4096) {
        vec_drop_front(t->ret, n);
        t->ret_base += n;
    }
}

bool ptm_dma_traffic_holds(PtmDmaTraffic *t)
{
    train_log(t);
    if (t->bg) {
        return true;
    }
    for (unsigned l = 0; l < t->nlanes; l++) {
        if (t->lane[l].f->len > t->lane[l].head) {
            return true;
        }
    }
    for (unsigned k = 0; k < EV_N; k++) {
        if (t->ev[k].e->len > t->ev[k].head) {
            return true;
        }
    }
    return false;
}

void ptm_dma_traffic_reset(PtmDmaTraffic *t, uint64_t now_ns)
{
    train_log(t);
    for (unsigned l = 0; l < t->nlanes; l++) {
        (t->lane[l].f)->len = 0;
        t->lane[l].head = t->lane[l].cur = 0;
        t->lane[l].free_at = 0;
    }
    for (unsigned k = 0; k < EV_N; k++) {
        (t->ev[k].e)->len = 0;
        t->ev[k].head = t->ev[k].cur = 0;
        t->ev[k].base = 0;
    }
    (t->ret)->len = 0;
    t->ret_base = 0;
    t->busy_until_ns = 0;
    /* slots not yet played went with the reset */
    while (t->bg && t->bg_next_ns < now_ns) {
        t->bg_next_ns += bg_params_at(t, t->bg_next_ns)->interval_ns;
        t->bg_slot++;
    }
}

/* ---- migration ---------------------------------------------------- */

/*
 * "DMT2": runs with a period, steps as runs; "DMAT", the format before,
 * (back-to-back runs, one step an entry) is still read.
 */
#define DMA_TRAFFIC_MAGIC 0x444D5432u
#define DMA_TRAFFIC_MAGIC_V1 0x444D4154u

void *ptm_dma_traffic_save(PtmDmaTraffic *t, size_t *len)
{
    GByteArray *b = g_byte_array_new();

    train_log(t);
    ptm_put64(b, DMA_TRAFFIC_MAGIC);
    ptm_put64(b, t->nlanes);
    ptm_put64(b, t->busy_until_ns);
    ptm_put64(b, t->now_ns);
    for (unsigned l = 0; l < t->nlanes; l++) {
        const Lane *ln = &t->lane[l];

        ptm_put64(b, ln->free_at);
        ptm_put64(b, ln->total);
        ptm_put64(b, ln->f->len - ln->head);
        for (guint i = ln->head; i < ln->f->len; i++) {
            const Frame *f = &g_array_index(ln->f, Frame, i);

            ptm_put64(b, f->start);
            ptm_put64(b, f->cycles);
            ptm_put64(b, f->n);
            ptm_put64(b, f->period);
            ptm_put64(b, f->bytes);
            ptm_put64(b, f->mvb);
        }
    }
    for (unsigned k = 0; k < EV_N; k++) {
        ptm_put64(b, t->ev[k].base);
        ptm_put64(b, t->ev[k].e->len - t->ev[k].head);
        for (guint i = t->ev[k].head; i < t->ev[k].e->len; i++) {
            const Event *e = &g_array_index(t->ev[k].e, Event, i);

            ptm_put64(b, e->cycle);
            ptm_put64(b, e->n);
            ptm_put64(b, e->period);
            ptm_put64(b, e->amt);
            ptm_put64(b, e->cum);
        }
    }
    ptm_put64(b, t->ret_base);
    ptm_put64(b, t->ret->len);
    for (guint i = 0; i < t->ret->len; i++) {
        ptm_put64(b, g_array_index(t->ret, uint64_t, i));
    }
    ptm_put64(b, t->bg_next_ns);
    ptm_put64(b, t->bg_slot);
    ptm_put64(b, t->settings.mps);
    ptm_put64(b, t->settings.mrrs);
    ptm_put64(b, t->settings.ext_tag);
    ptm_put64(b, t->settings.tag_10bit);
    ptm_put64(b, t->settings.rcb_128);
    *len = b->len;
    return g_byte_array_free(b, FALSE);
}

char *ptm_dma_traffic_load(PtmDmaTraffic *t, const void *buf, size_t len)
{
    PtmReader rd = { buf, len, false };
    PtmDmaTraffic *n = ptm_dma_traffic_new(&t->geo);
    uint64_t v = 0, cnt = 0;
    bool ok = true, v1;

    train_log(t);
#define GET(x) do { (x) = ptm_get64(&rd); ok = ok && !rd.bad; } while (0)
    GET(v);
    v1 = v == DMA_TRAFFIC_MAGIC_V1;
    ok = ok && (v == DMA_TRAFFIC_MAGIC || v1);
    GET(cnt);
    ok = ok && cnt == t->nlanes;
    GET(n->busy_until_ns);
    GET(n->now_ns);
    for (unsigned l = 0; ok && l < n->nlanes; l++) {
        Lane *ln = &n->lane[l];
        uint64_t prev_end = 0;

        GET(ln->free_at);
        GET(ln->total);
        GET(cnt);
        ok = ok && cnt <= rd.left / (v1 ? 40 : 48);
        for (uint64_t i = 0; ok && i < cnt; i++) {
            Frame f = { 0 };
            uint64_t nf = 0, mvb = 0, cycles = 0, period = 0;

            GET(f.start);
            GET(cycles);
            GET(nf);
            if (v1) {
                period = cycles;        /* back to back */
            } else {
                GET(period);
            }
            GET(f.bytes);
            GET(mvb);
            if (nf == 1) {
                period = cycles;
            }
            /* in order, not overlapping, within the lane */
            ok = ok && cycles >= 1 && period >= cycles &&
                 period <= UINT32_MAX && nf >= 1 && nf <= UINT32_MAX &&
                 mvb <= 1 && f.start >= prev_end &&
                 f.start <= ln->free_at &&
                 ln->free_at - f.start >= cycles &&
                 (ln->free_at - f.start - cycles) / period >= nf - 1;
            f.cycles = cycles;
            f.period = period;
            f.n = nf;
            f.mvb = mvb;
            prev_end = ok ? run_end(&f) : 0;
            ok = ok && (f.bytes || f.mvb) &&
                 f.cycles == lane_cycles(ln, f.bytes);
            frame_place_end(n, l, &f);
            vec_append(ln->f, f);
        }
    }
    for (unsigned k = 0; ok && k < EV_N; k++) {
        uint64_t prev = 0, cum;

        GET(n->ev[k].base);
        cum = n->ev[k].base;
        GET(cnt);
        ok = ok && cnt <= rd.left / (v1 ? 16 : 40);
        for (uint64_t i = 0; ok && i < cnt; i++) {
            Event e = { .n = 1, .period = 1 };
            uint64_t ne = 1, period = 1;

            GET(e.cycle);
            if (!v1) {
                GET(ne);
                GET(period);
                GET(e.amt);
            }
            GET(e.cum);
            if (v1) {
                e.amt = e.cum - cum;
            }
            /* in order; the steps add up to the total, without wrapping */
            ok = ok && e.cycle >= prev && e.cum >= cum && ne >= 1 &&
                 ne <= UINT32_MAX && period >= 1 && period <= UINT32_MAX &&
                 (ne == 1 || e.amt <= (e.cum - cum) / ne) &&
                 e.cum - cum == e.amt * ne &&
                 (UINT64_MAX - e.cycle) / period >= ne - 1;
            e.n = ne;
            e.period = ne == 1 ? 1 : period;
            prev = ok ? ev_last(&e) : 0;
            cum = e.cum;
            vec_append(n->ev[k].e, e);
        }
    }
    GET(n->ret_base);
    GET(cnt);
    ok = ok && cnt <= rd.left / 8;
    for (uint64_t i = 0; ok && i < cnt; i++) {
        uint64_t r;

        GET(r);
        vec_append(n->ret, r);
    }
    GET(n->bg_next_ns);
    GET(n->bg_slot);
    {
        uint64_t set[5] = { 0 };

        for (unsigned i = 0; i < 5; i++) {
            GET(set[i]);
        }
        ok = ok && set[0] <= 7 && set[1] <= 7 && set[2] <= 1 && set[3] <= 1 &&
             set[4] <= 1;
        n->settings = (PtmSettings) {
            .mps = set[0], .mrrs = set[1], .ext_tag = set[2],
            .tag_10bit = set[3], .rcb_128 = set[4],
        };
    }
    /* a slot number that counts from 1, at a time a slot can have */
    ok = ok && n->bg_slot >= 1;
#undef GET
    if (!ok || rd.left) {
        ptm_dma_traffic_free(n);
        return g_strdup("DMA traffic log: malformed");
    }
    for (unsigned l = 0; l < t->nlanes; l++) {
        Lane tmp = t->lane[l];

        t->lane[l] = n->lane[l];
        n->lane[l] = tmp;
    }
    for (unsigned k = 0; k < EV_N; k++) {
        Vec *tmp = t->ev[k].e;

        t->ev[k] = n->ev[k];
        n->ev[k].e = tmp;
    }
    {
        Vec *tmp = t->ret;

        t->ret = n->ret;
        n->ret = tmp;
    }
    t->ret_base = n->ret_base;
    t->busy_until_ns = n->busy_until_ns;
    t->now_ns = n->now_ns;
    t->bg_next_ns = n->bg_next_ns;
    t->bg_slot = n->bg_slot;
    t->settings = n->settings;
    ptm_dma_traffic_free(n);
    return NULL;
}
