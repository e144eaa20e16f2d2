/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the NDK DMA engine: its state and the helpers its two files share
 * (ndp-dma.c: queues, generators, register accesses; ndp-dma-state.c:
 * life cycle and migration). Not an API.
 */
#ifndef NDP_DMA_INT_H
#define NDP_DMA_INT_H

#include <string.h>
#include <glib.h>

#include "ndp-dma.h"
#include "ptm-bytes.h"

enum { CNT_PKTS, CNT_BYTES, CNT_DISC_PKTS, CNT_DISC_BYTES, CNT_N };

typedef struct NdpQueue {
    uint32_t control;
    uint32_t running;
    uint32_t sdp, shp, hdp, hhp;
    uint32_t timeout;
    uint64_t desc_base, hdr_base, upd_base;
    uint32_t mdp, mhp;
    uint64_t live[CNT_N];       /* counting */
    uint64_t snap[CNT_N];       /* what the registers show */
    uint64_t upper;             /* address bits 63..30 of type-2 buffers */
    uint32_t error;             /* NDP_ERR_* that halted it */
    uint32_t dirty;             /* pointers moved since the last update */
    /*
     * Descriptors fetched ahead: dcache_n of them from ring index
     * dcache_at (posted ones only, which software no longer changes), in
     * dcache[dcache_off ..]. HDP moving on only moves the offset; a fetch
     * fills the array from 0.
     */
    uint32_t dcache_at, dcache_n, dcache_off;
    uint64_t dcache[NDP_DESC_FETCH];
    /*
     * RX headers not yet written: hpend_n of them from ring index
     * hpend_at, for frames of hpend_bytes. Always empty between two calls
     * into the engine (so not part of its state).
     */
    uint32_t hpend_at, hpend_n;
    uint64_t hpend_bytes;
    uint8_t hpend[NDP_HDR_BATCH * NDP_HDR_SIZE];
} NdpQueue;

typedef struct NdpGen {
    uint32_t control;           /* bit 0 enable */
    uint32_t length;
    uint32_t channel_incr;
    uint32_t channel_minmax;
    uint32_t mac[4];            /* dst low, dst high, src low, src high */
    uint64_t count;             /* frames made (the CNT registers) */
    /* while enabled: frames made by time t = base + (t - t0) / period */
    uint64_t base;
    int64_t t0;
    uint32_t chan, bcnt;        /* the channel sequence */
} NdpGen;

typedef struct NdpGls {
    uint32_t mux[4];
    NdpGen gen[2];              /* RX (to DMA), TX (to Ethernet) */
} NdpGls;

struct NdpDma {
    unsigned ports, queues_per_port, nq;
    unsigned chan_bits;         /* channel width of the generators */
    uint64_t dma_hz;
    unsigned bus_bytes;
    const NdpMemOps *mem;
    const NdpHooks *hooks;
    void *opaque;
    NdpQueue *q[2];             /* [dir][queue] */
    NdpGls *gls;
    int64_t gen_now;            /* generators ran up to here */
    uint8_t frame[NDP_FRAME_MAX + 1];
};

/*
 * The 16 slots of a saved state: the fetched descriptors from dcache_at
 * on, 0 after them (a load reads them from slot 0, offset 0)
 */
static inline void dcache_slots(const NdpQueue *q, uint64_t *slot)
{
    for (uint32_t j = 0; j < NDP_DESC_FETCH; j++) {
        slot[j] = j < q->dcache_n ? q->dcache[q->dcache_off + j] : 0;
    }
}

/*
 * A pointer mask as the engine keeps it: 2^k - 1, the smallest that
 * covers the bits written. With holes in it a pointer could step onto
 * itself ((p + n) & m == p) and never reach SDP.
 */
static inline uint32_t ptr_mask(uint64_t v)
{
    uint32_t m = v & NDP_PTR_MASK;

    m |= m >> 1;
    m |= m >> 2;
    m |= m >> 4;
    m |= m >> 8;
    return m;
}

static inline unsigned chan_width_max(const NdpDma *d)
{
    return (1u << d->chan_bits) - 1;
}

static inline uint32_t gen_burst(const NdpGen *g)
{
    uint32_t b = g->channel_incr >> 16;

    return b ? b : 1;
}

#endif
