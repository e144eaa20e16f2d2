/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the card's DMA log (ptm-dma-traffic.h): the log's state and the
 * helpers its three parts share. Placement (ptm-dma-place.c) puts
 * transfers on the buses as frames and events; counting
 * (ptm-dma-count.c) describes and counts the probes' cycles from them;
 * ptm-dma-traffic.c makes, prunes, resets and saves the log. Not an API.
 */
#ifndef PTM_DMA_TRAFFIC_INT_H
#define PTM_DMA_TRAFFIC_INT_H

#include <string.h>
#include <glib.h>

#include "ptm-count.h"
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

static inline Vec *vec_new(guint esz)
{
    Vec *v = g_new0(Vec, 1);

    v->esz = esz;
    return v;
}

static inline void vec_free(Vec *v)
{
    if (v) {
        g_free(v->data);
        g_free(v);
    }
}

static inline void *vec_grow(Vec *v)
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
static inline void vec_drop_front(Vec *v, guint n)
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

static inline unsigned lane_regions(const PtmDmaTraffic *t, unsigned l)
{
    if (l == LANE_RQ) {
        return t->geo.rq_regions;
    }
    if (l == LANE_RC) {
        return t->geo.rc_regions;
    }
    return (l - LANE_DMA) % 2 ? t->geo.down_regions : t->geo.up_regions;
}

static inline unsigned lane_region_bytes(const PtmDmaTraffic *t, unsigned l)
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
static inline uint64_t muldiv(uint64_t x, uint64_t p, uint64_t q, bool up)
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

static inline Ratio ratio(uint64_t to, uint64_t from)
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

/* ---- what one part asks of another ---- */

/* ptm-dma-place.c: log the held train of equal transfers, if any */
void ptm_dma_train_log(PtmDmaTraffic *t);
/* the background's parameters from t_ns on */
const PtmTransfersParams *ptm_dma_bg_params_at(const PtmDmaTraffic *t,
                                               uint64_t t_ns);
/* play the background's transfers that start before cycle `end` at hz */
void ptm_dma_bg_play_before(PtmDmaTraffic *t, uint64_t hz, uint64_t end);
/* ptm-dma-count.c: the first frame of a lane that ends after cycle c */
guint ptm_dma_first_ending_after(Lane *ln, uint64_t c);

#endif
