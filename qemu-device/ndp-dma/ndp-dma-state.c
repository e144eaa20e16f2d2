/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NDK DMA engine: made, reset and freed, and its state saved and loaded
 * for migration (ndp-dma.h).
 */
#include "ndp-dma-int.h"

static const uint32_t gen_reset_regs[8] = {
    0, 60, 0x00010001, 0xFFFF0000, 0xFFFFFFFF, 0xFFFF, 0x60171100, 0,
};

/* ---- life cycle --------------------------------------------------- */

void ndp_dma_reset(NdpDma *d)
{
    for (unsigned dir = 0; dir < 2; dir++) {
        memset(d->q[dir], 0, d->nq * sizeof(NdpQueue));
    }
    for (unsigned p = 0; p < d->ports; p++) {
        NdpGls *s = &d->gls[p];

        memset(s, 0, sizeof(*s));
        for (unsigned k = 0; k < 2; k++) {
            NdpGen *g = &s->gen[k];

            g->length = gen_reset_regs[1];
            g->channel_incr = gen_reset_regs[2];
            g->channel_minmax = gen_reset_regs[3];
            memcpy(g->mac, gen_reset_regs + 4, sizeof(g->mac));
        }
    }
}

NdpDma *ndp_dma_new(unsigned ports, unsigned queues, uint64_t dma_hz,
                    unsigned bus_bytes, const NdpMemOps *mem,
                    const NdpHooks *hooks, void *opaque)
{
    NdpDma *d;

    g_assert(ports >= 1 && ports <= NDP_MAX_PORTS);
    g_assert(queues >= 1 && ports * queues <= NDP_MAX_QUEUES);
    g_assert(dma_hz > 0 && bus_bytes > 0);
    d = g_new0(NdpDma, 1);
    d->ports = ports;
    d->queues_per_port = queues;
    d->nq = ports * queues;
    while ((1u << d->chan_bits) < queues) {
        d->chan_bits++;
    }
    d->dma_hz = dma_hz;
    d->bus_bytes = bus_bytes;
    d->mem = mem;
    d->hooks = hooks;
    d->opaque = opaque;
    d->q[NDP_RX] = g_new0(NdpQueue, d->nq);
    d->q[NDP_TX] = g_new0(NdpQueue, d->nq);
    d->gls = g_new0(NdpGls, ports);
    ndp_dma_reset(d);
    return d;
}

void ndp_dma_free(NdpDma *d)
{
    if (!d) {
        return;
    }
    g_free(d->q[NDP_RX]);
    g_free(d->q[NDP_TX]);
    g_free(d->gls);
    g_free(d);
}

/* ---- migration ---------------------------------------------------- */

#define NDP_STATE_MAGIC 0x4E445031u     /* "NDP1" */

/* Every field, in one order for both directions of the copy. */
#define QUEUE_FIELDS(X, q) \
    X((q)->control) X((q)->running) X((q)->sdp) X((q)->shp) X((q)->hdp) \
    X((q)->hhp) X((q)->timeout) X((q)->desc_base) X((q)->hdr_base) \
    X((q)->upd_base) X((q)->mdp) X((q)->mhp) \
    X((q)->live[0]) X((q)->live[1]) X((q)->live[2]) X((q)->live[3]) \
    X((q)->snap[0]) X((q)->snap[1]) X((q)->snap[2]) X((q)->snap[3]) \
    X((q)->upper) X((q)->error) X((q)->dcache_at) X((q)->dcache_n) \
    DCACHE(X, q)
#define DCACHE(X, q) \
    X((q)->dcache[0]) X((q)->dcache[1]) X((q)->dcache[2]) X((q)->dcache[3]) \
    X((q)->dcache[4]) X((q)->dcache[5]) X((q)->dcache[6]) X((q)->dcache[7]) \
    X((q)->dcache[8]) X((q)->dcache[9]) X((q)->dcache[10]) \
    X((q)->dcache[11]) X((q)->dcache[12]) X((q)->dcache[13]) \
    X((q)->dcache[14]) X((q)->dcache[15])
#define GEN_FIELDS(X, g) \
    X((g)->control) X((g)->length) X((g)->channel_incr) \
    X((g)->channel_minmax) X((g)->mac[0]) X((g)->mac[1]) X((g)->mac[2]) \
    X((g)->mac[3]) X((g)->count) X((g)->base) X((g)->t0) X((g)->chan) \
    X((g)->bcnt)

void *ndp_dma_save(const NdpDma *d, size_t *len)
{
    GByteArray *b = g_byte_array_new();

#define PUT(f) ptm_put64(b, (uint64_t)(f));
    ptm_put64(b, NDP_STATE_MAGIC);
    ptm_put64(b, d->ports);
    ptm_put64(b, d->queues_per_port);
    ptm_put64(b, (uint64_t)d->gen_now);
    for (unsigned dir = 0; dir < 2; dir++) {
        for (unsigned i = 0; i < d->nq; i++) {
            NdpQueue q = d->q[dir][i];

            /* the fetched descriptors in the state's slots */
            dcache_slots(&d->q[dir][i], q.dcache);
            QUEUE_FIELDS(PUT, &q)
        }
    }
    for (unsigned p = 0; p < d->ports; p++) {
        for (unsigned k = 0; k < 4; k++) {
            ptm_put64(b, d->gls[p].mux[k]);
        }
        for (unsigned k = 0; k < 2; k++) {
            GEN_FIELDS(PUT, &d->gls[p].gen[k])
        }
    }
#undef PUT
    *len = b->len;
    return g_byte_array_free(b, FALSE);
}

char *ndp_dma_load(NdpDma *d, const void *buf, size_t len)
{
    PtmReader r = { buf, len, false };
    NdpDma *n;
    uint64_t magic, ports, queues;

    magic = ptm_get64(&r);
    ports = ptm_get64(&r);
    queues = ptm_get64(&r);
    if (r.bad || magic != NDP_STATE_MAGIC) {
        return g_strdup("DMA state: not a state of this engine");
    }
    if (ports != d->ports || queues != d->queues_per_port) {
        return g_strdup_printf("DMA state: %u x %u queues here, %llu x %llu "
                               "in the state (dma-ports, dma-queues)",
                               d->ports, d->queues_per_port,
                               (unsigned long long)ports,
                               (unsigned long long)queues);
    }
    /* into a scratch copy, so that a bad state changes nothing */
    n = ndp_dma_new(d->ports, d->queues_per_port, d->dma_hz, d->bus_bytes,
                    d->mem, d->hooks, d->opaque);
#define GET(f) (f) = ptm_get64(&r);
    n->gen_now = (int64_t)ptm_get64(&r);
    for (unsigned dir = 0; dir < 2; dir++) {
        for (unsigned i = 0; i < n->nq; i++) {
            QUEUE_FIELDS(GET, &n->q[dir][i])
            /* the fetched descriptors from slot 0 */
            n->q[dir][i].dcache_off = 0;
        }
    }
    for (unsigned p = 0; p < n->ports; p++) {
        for (unsigned k = 0; k < 4; k++) {
            n->gls[p].mux[k] = ptm_get64(&r);
        }
        for (unsigned k = 0; k < 2; k++) {
            GEN_FIELDS(GET, &n->gls[p].gen[k])
        }
    }
#undef GET
    if (r.bad || r.left) {
        ndp_dma_free(n);
        return g_strdup("DMA state: wrong length");
    }
    if (n->gen_now < 0) {
        ndp_dma_free(n);
        return g_strdup("DMA state: negative time");
    }
    /* values a running engine never holds are refused, not used */
    for (unsigned dir = 0; dir < 2; dir++) {
        for (unsigned i = 0; i < n->nq; i++) {
            NdpQueue *q = &n->q[dir][i];

            if ((q->sdp | q->shp | q->hdp | q->hhp | q->mdp | q->mhp |
                 q->dcache_at) > NDP_PTR_MASK || q->running > 1 ||
                q->control > 1 || q->error > NDP_ERR_UPDATE_WRITE ||
                q->dcache_n > NDP_DESC_FETCH ||
                q->mdp != ptr_mask(q->mdp) || q->mhp != ptr_mask(q->mhp)) {
                ndp_dma_free(n);
                return g_strdup_printf("DMA state: queue %s%u out of range",
                                       dir ? "tx" : "rx", i);
            }
        }
    }
    for (unsigned p = 0; p < n->ports; p++) {
        for (unsigned k = 0; k < 2; k++) {
            NdpGen *g = &n->gls[p].gen[k];

            if (g->length > NDP_FRAME_MAX || g->chan > chan_width_max(n) ||
                g->bcnt >= gen_burst(g) || g->base > g->count ||
                g->t0 < 0 || g->t0 > n->gen_now) {
                ndp_dma_free(n);
                return g_strdup_printf("DMA state: generator %u of port %u "
                                       "out of range", k, p);
            }
        }
    }
    memcpy(d->q[NDP_RX], n->q[NDP_RX], n->nq * sizeof(NdpQueue));
    memcpy(d->q[NDP_TX], n->q[NDP_TX], n->nq * sizeof(NdpQueue));
    memcpy(d->gls, n->gls, n->ports * sizeof(NdpGls));
    d->gen_now = n->gen_now;
    ndp_dma_free(n);
    return NULL;
}
