/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NDK DMA engine (Medusa as software sees it) and the generator/loopback
 * switch: see ndp-dma.h and docs/dma.md. Its life cycle and saved state
 * are ndp-dma-state.c's.
 */
#include "ndp-dma-int.h"

/* ---- host memory -------------------------------------------------- */

static bool mem_read(NdpDma *d, uint64_t addr, void *buf, size_t len)
{
    return d->mem->read(d->opaque, addr, buf, len) == 0;
}

static bool mem_write(NdpDma *d, uint64_t addr, const void *buf, size_t len)
{
    return d->mem->write(d->opaque, addr, buf, len) == 0;
}

static void xfer(NdpDma *d, NdpDir dir, unsigned q, NdpXferKind kind,
                 uint64_t addr, uint32_t bytes)
{
    if (d->hooks && d->hooks->xfer) {
        d->hooks->xfer(d->opaque, dir, q, kind, addr, bytes);
    }
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = v;
    p[1] = v >> 8;
    p[2] = v >> 16;
    p[3] = v >> 24;
}

/* ---- queues ------------------------------------------------------- */

static void halt(NdpQueue *q, uint32_t err)
{
    q->running = 0;
    q->error = err;
}

/*
 * The RX headers of a run of frames, in one write. Where it fails the
 * queue halts and those frames count as discarded, not passed.
 */
static void flush_headers(NdpDma *d, unsigned qi)
{
    NdpQueue *q = &d->q[NDP_RX][qi];
    uint64_t addr = q->hdr_base + (uint64_t)q->hpend_at * NDP_HDR_SIZE;
    uint32_t n = q->hpend_n;

    if (!n) {
        return;
    }
    q->hpend_n = 0;
    if (!mem_write(d, addr, q->hpend, n * NDP_HDR_SIZE)) {
        halt(q, NDP_ERR_HDR_WRITE);
        q->live[CNT_PKTS] -= n;
        q->live[CNT_BYTES] -= q->hpend_bytes;
        q->live[CNT_DISC_PKTS] += n;
        q->live[CNT_DISC_BYTES] += q->hpend_bytes;
        return;
    }
    xfer(d, NDP_RX, qi, NDP_XFER_HDR_WRITE, addr, n * NDP_HDR_SIZE);
}

/*
 * The update buffer: HDP at +0 and, for RX, HHP at +4, written after the
 * data and headers they announce.
 */
static void flush_update(NdpDma *d, NdpDir dir, unsigned qi)
{
    NdpQueue *q = &d->q[dir][qi];
    uint8_t buf[8];
    unsigned n = dir == NDP_RX ? 8 : 4;

    if (dir == NDP_RX) {
        flush_headers(d, qi);
    }
    if (!q->dirty) {
        return;
    }
    q->dirty = 0;
    put_le32(buf, q->hdp);
    put_le32(buf + 4, q->hhp);
    if (!mem_write(d, q->upd_base, buf, n)) {
        halt(q, NDP_ERR_UPDATE_WRITE);
        return;
    }
    xfer(d, dir, qi, NDP_XFER_UPDATE_WRITE, q->upd_base, n);
}

static void flush_updates(NdpDma *d)
{
    for (unsigned dir = 0; dir < 2; dir++) {
        for (unsigned i = 0; i < d->nq; i++) {
            flush_update(d, dir, i);
        }
    }
}

static void count_discard(NdpQueue *q, uint64_t frames, uint64_t bytes)
{
    q->live[CNT_DISC_PKTS] += frames;
    q->live[CNT_DISC_BYTES] += bytes;
}

/* HDP moved on: descriptors behind it are gone from the fetched ones */
static inline void dcache_trim(NdpQueue *q)
{
    uint32_t k = (q->hdp - q->dcache_at) & q->mdp;

    if (k >= q->dcache_n) {
        q->dcache_n = 0;
    } else if (k) {
        q->dcache_off += k;
        q->dcache_n -= k;
        q->dcache_at = q->hdp;
    }
}

/*
 * Descriptor i (ring index) not among those fetched ahead: fetched now
 * with those after it, up to NDP_DESC_FETCH, SDP and the ring's end, in
 * one read.
 */
static G_GNUC_NO_INLINE bool desc_fetch(NdpDma *d, NdpQueue *q, NdpDir dir,
                                        unsigned qi, uint32_t i,
                                        uint64_t *desc)
{
    uint32_t n;
    uint64_t addr = q->desc_base + (uint64_t)i * 8;
    uint64_t b[NDP_DESC_FETCH];

    n = MIN((q->sdp - i) & q->mdp, (uint32_t)NDP_DESC_FETCH);
    n = MAX(MIN(n, q->mdp + 1 - i), 1u);
    if (!mem_read(d, addr, b, n * 8)) {
        q->dcache_n = 0;
        halt(q, NDP_ERR_DESC_READ);
        return false;
    }
    xfer(d, dir, qi, NDP_XFER_DESC_READ, addr, n * 8);
    for (uint32_t k = 0; k < n; k++) {
        q->dcache[k] = GUINT64_FROM_LE(b[k]);
    }
    q->dcache_at = i;
    q->dcache_n = n;
    q->dcache_off = 0;
    *desc = q->dcache[0];
    return true;
}

/*
 * Descriptor idx (one of those posted, HDP to SDP) of queue q: from the
 * ones fetched ahead, or fetched now.
 */
static inline bool read_desc(NdpDma *d, NdpQueue *q, NdpDir dir,
                             unsigned qi, uint32_t idx, uint64_t *desc)
{
    uint32_t k = (idx - q->dcache_at) & q->mdp;

    if (k < q->dcache_n) {
        *desc = q->dcache[q->dcache_off + k];
        return true;
    }
    return desc_fetch(d, q, dir, qi, idx & q->mdp, desc);
}

static unsigned desc_type(uint64_t desc)
{
    return desc >> NDP_DESC_TYPE_SHIFT;
}

static uint64_t upper_of(uint64_t desc)
{
    return (desc & NDP_DESC_UPPER_MASK) << 30;
}

/*
 * One frame into RX queue qi: the buffers of the next type-2 descriptors
 * (after any type-0), its header, then the pointers. Discarded, with the
 * discard counters, where the queue is stopped, has too few descriptors
 * or headers, or the buffers cannot hold it.
 */
static bool rx_frame(NdpDma *d, unsigned qi, const uint8_t *data,
                     uint32_t len, uint16_t meta)
{
    NdpQueue *q = &d->q[NDP_RX][qi];
    uint32_t avail, used = 0, pos = 0, hdr_len;
    uint64_t upper = q->upper;
    struct { uint64_t addr; uint32_t len; } seg[8];
    unsigned nseg = 0;
    uint8_t *hdr;

    if (!q->running || ((q->shp - q->hhp - 1) & q->mhp) == 0) {
        count_discard(q, 1, len);
        return false;
    }
    avail = (q->sdp - q->hdp) & q->mdp;
    /* find the buffers first: nothing moves unless the frame fits */
    while (pos < len || nseg == 0) {
        uint64_t desc;

        if (used == avail || nseg == G_N_ELEMENTS(seg)) {
            count_discard(q, 1, len);
            return false;
        }
        if (!read_desc(d, q, NDP_RX, qi, q->hdp + used, &desc)) {
            count_discard(q, 1, len);
            return false;
        }
        used++;
        if (desc_type(desc) == NDP_DESC_TYPE_UPPER) {
            upper = upper_of(desc);
            continue;
        }
        if (desc_type(desc) != NDP_DESC_TYPE_DATA) {
            continue;           /* types 1 and 3: skipped */
        }
        seg[nseg].addr = upper | (desc & NDP_DESC_ADDR_MASK);
        seg[nseg].len = MIN((uint32_t)(desc >> NDP_DESC_LEN_SHIFT) & 0xFFFF,
                            len - pos);
        pos += seg[nseg].len;
        nseg++;
        if (pos < len && !(desc & NDP_DESC_NEXT)) {
            /* the buffer is too small and the descriptor ends the chain */
            count_discard(q, 1, len);
            return false;
        }
    }
    pos = 0;
    for (unsigned i = 0; i < nseg; i++) {
        if (seg[i].len && !mem_write(d, seg[i].addr, data + pos, seg[i].len)) {
            halt(q, NDP_ERR_DATA);
            count_discard(q, 1, len);
            return false;
        }
        if (seg[i].len) {
            xfer(d, NDP_RX, qi, NDP_XFER_DATA_WRITE, seg[i].addr, seg[i].len);
        }
        pos += seg[i].len;
    }
    hdr_len = MIN(meta & 0xFFu, len);
    /* the header joins the run of this call's headers, if it follows it */
    if (q->hpend_n &&
        (q->hpend_n == NDP_HDR_BATCH ||
         q->hpend_at + q->hpend_n != (q->hhp & q->mhp))) {
        flush_headers(d, qi);
    }
    if (!q->hpend_n) {
        q->hpend_at = q->hhp & q->mhp;
        q->hpend_bytes = 0;
    }
    hdr = q->hpend + q->hpend_n * NDP_HDR_SIZE;
    hdr[0] = len;
    hdr[1] = len >> 8;
    hdr[2] = hdr_len;
    hdr[3] = ((meta >> 8) & NDP_HDR_FLAGS_MASK) |
             MIN(used, 3u) << NDP_HDR_FREE_DESC_SHIFT;
    q->hpend_n++;
    q->hpend_bytes += len;
    q->upper = upper;
    q->hdp = (q->hdp + used) & q->mdp;
    dcache_trim(q);
    q->hhp = (q->hhp + 1) & q->mhp;
    q->live[CNT_PKTS]++;
    q->live[CNT_BYTES] += len;
    q->dirty = 1;
    return true;
}

/* A frame the TX queue of global index qi sent, into its port's switch. */
static void tx_out(NdpDma *d, const NdpGls *s, unsigned qi,
                   const uint8_t *data, uint32_t len, uint16_t meta)
{
    if (s->mux[0] & 1) {
        /* the loopback: TX channel c to RX channel c of the same port */
        rx_frame(d, qi, data, len, meta);
    }
    /* otherwise towards Ethernet, which this card does not have */
}

/*
 * Send what TX queue qi has been given: frames whose descriptors are all
 * posted. With `draining` (a STOP) a chain left open at SDP is dropped,
 * so that HDP reaches SDP as the driver's stop waits for.
 */
static void tx_process(NdpDma *d, unsigned qi, bool draining)
{
    NdpQueue *q = &d->q[NDP_TX][qi];
    const NdpGls *s = &d->gls[qi / d->queues_per_port];

    while (q->running && q->hdp != (q->sdp & q->mdp)) {
        uint32_t avail = (q->sdp - q->hdp) & q->mdp, used = 0, len = 0;
        uint16_t meta = 0;
        uint64_t upper = q->upper;
        bool bad = false, done = false;

        /* one frame: descriptors up to one without NEXT */
        while (!done) {
            uint64_t desc, addr;
            uint32_t dlen;

            if (used == avail) {
                if (!draining) {
                    return;     /* the rest of the chain is not posted */
                }
                bad = true;
                break;
            }
            if (!read_desc(d, q, NDP_TX, qi, q->hdp + used, &desc)) {
                q->dirty = 1;
                return;
            }
            used++;
            if (desc_type(desc) == NDP_DESC_TYPE_UPPER) {
                upper = upper_of(desc);
                continue;
            }
            if (desc_type(desc) != NDP_DESC_TYPE_DATA) {
                continue;
            }
            addr = upper | (desc & NDP_DESC_ADDR_MASK);
            dlen = (desc >> NDP_DESC_LEN_SHIFT) & 0xFFFF;
            meta = (desc >> NDP_DESC_META_SHIFT) & 0xFFF;
            done = !(desc & NDP_DESC_NEXT);
            if (bad || (uint64_t)len + dlen > NDP_FRAME_MAX) {
                bad = true;
                len += dlen;
                continue;
            }
            if (dlen && !mem_read(d, addr, d->frame + len, dlen)) {
                halt(q, NDP_ERR_DATA);
                q->dirty = 1;
                return;
            }
            if (dlen) {
                xfer(d, NDP_TX, qi, NDP_XFER_DATA_READ, addr, dlen);
            }
            len += dlen;
        }
        q->upper = upper;
        q->hdp = (q->hdp + used) & q->mdp;
        dcache_trim(q);
        q->dirty = 1;
        if (!done) {
            /* a STOP dropped a chain left open (or only type-0s were left) */
            if (len) {
                count_discard(q, 1, len);
            }
            break;
        }
        if (bad || len == 0) {
            count_discard(q, 1, len);
            continue;
        }
        q->live[CNT_PKTS]++;
        q->live[CNT_BYTES] += len;
        tx_out(d, s, qi, d->frame, len, meta);
    }
}

static void queue_start(NdpDma *d, NdpDir dir, unsigned qi)
{
    NdpQueue *q = &d->q[dir][qi];

    if (q->running) {
        return;
    }
    q->running = 1;
    q->error = NDP_ERR_NONE;
    q->hdp = 0;
    q->hhp = 0;
    q->upper = 0;
    q->dirty = 0;
    q->dcache_n = 0;
    if (dir == NDP_TX) {
        tx_process(d, qi, false);
    }
}

static void queue_stop(NdpDma *d, NdpDir dir, unsigned qi)
{
    NdpQueue *q = &d->q[dir][qi];

    if (!q->running) {
        return;
    }
    if (dir == NDP_TX) {
        tx_process(d, qi, true);
    }
    q->running = 0;
    q->dirty = 1;               /* the final pointers, once more */
}

static void counter_cmd(NdpQueue *q, uint32_t cmd)
{
    switch (cmd) {
    case NDP_CNT_CMD_RESET:
        memset(q->live, 0, sizeof(q->live));
        memset(q->snap, 0, sizeof(q->snap));
        break;
    case NDP_CNT_CMD_STROBE:
        memcpy(q->snap, q->live, sizeof(q->snap));
        break;
    case NDP_CNT_CMD_STROBE_RESET:
        memcpy(q->snap, q->live, sizeof(q->snap));
        memset(q->live, 0, sizeof(q->live));
        break;
    default:
        break;                  /* 3: no command */
    }
}

static uint32_t queue_reg_read(const NdpQueue *q, uint32_t off)
{
    switch (off) {
    case NDP_REG_CONTROL:
        return q->control;
    case NDP_REG_STATUS:
        return q->running ? NDP_STATUS_RUNNING : 0;
    case NDP_REG_SDP:
        return q->sdp;
    case NDP_REG_SHP:
        return q->shp;
    case NDP_REG_HDP:
        return q->hdp;
    case NDP_REG_HHP:
        return q->hhp;
    case NDP_REG_TIMEOUT:
        return q->timeout;
    case NDP_REG_DESC_BASE:
    case NDP_REG_DESC_BASE + 4:
        return q->desc_base >> 8 * (off - NDP_REG_DESC_BASE);
    case NDP_REG_HDR_BASE:
    case NDP_REG_HDR_BASE + 4:
        return q->hdr_base >> 8 * (off - NDP_REG_HDR_BASE);
    case NDP_REG_UPDATE_BASE:
    case NDP_REG_UPDATE_BASE + 4:
        return q->upd_base >> 8 * (off - NDP_REG_UPDATE_BASE);
    case NDP_REG_MDP:
        return q->mdp;
    case NDP_REG_MHP:
        return q->mhp;
    default:
        if (off >= NDP_REG_CNT_PKTS && off < NDP_CTRL_SIZE) {
            unsigned k = (off - NDP_REG_CNT_PKTS) / 8;

            return q->snap[k] >> (off & 4 ? 32 : 0);
        }
        return 0;
    }
}

static void set_half(uint64_t *reg, uint32_t off, uint32_t base, uint32_t v)
{
    if (off == base) {
        *reg = (*reg & 0xFFFFFFFF00000000ull) | v;
    } else {
        *reg = (*reg & 0xFFFFFFFFull) | (uint64_t)v << 32;
    }
}

/* Effects of a write that wait until all of its registers are written */
enum { DO_CONTROL = 1, DO_SDP = 2 };

static unsigned queue_reg_write(NdpDma *d, NdpDir dir, unsigned qi,
                                uint32_t off, uint32_t v)
{
    NdpQueue *q = &d->q[dir][qi];

    switch (off) {
    case NDP_REG_CONTROL:
        q->control = v & NDP_CONTROL_START;
        return DO_CONTROL;
    case NDP_REG_SDP:
        q->sdp = v & NDP_PTR_MASK;
        return DO_SDP;
    case NDP_REG_SHP:
        q->shp = v & NDP_PTR_MASK;
        return 0;
    case NDP_REG_TIMEOUT:
        q->timeout = v;
        return 0;
    case NDP_REG_DESC_BASE:
    case NDP_REG_DESC_BASE + 4:
        set_half(&q->desc_base, off, NDP_REG_DESC_BASE, v);
        q->dcache_n = 0;
        return 0;
    case NDP_REG_HDR_BASE:
    case NDP_REG_HDR_BASE + 4:
        set_half(&q->hdr_base, off, NDP_REG_HDR_BASE, v);
        return 0;
    case NDP_REG_UPDATE_BASE:
    case NDP_REG_UPDATE_BASE + 4:
        set_half(&q->upd_base, off, NDP_REG_UPDATE_BASE, v);
        return 0;
    case NDP_REG_MDP:
        q->mdp = ptr_mask(v);
        q->dcache_n = 0;
        return 0;
    case NDP_REG_MHP:
        q->mhp = ptr_mask(v);
        return 0;
    case NDP_REG_CNT_PKTS:
        counter_cmd(q, v);
        return 0;
    default:
        return 0;               /* read-only or nothing there */
    }
}

/* ---- the generators ----------------------------------------------- */

static uint64_t gen_cycles_per_frame(const NdpDma *d, const NdpGen *g)
{
    uint32_t len = g->length ? g->length : 1;

    return (len + d->bus_bytes - 1) / d->bus_bytes;
}

/* frames a running generator has made by time t */
static uint64_t gen_made(const NdpDma *d, const NdpGen *g, int64_t t)
{
    unsigned __int128 cycles;

    if (!(g->control & NDP_GEN_CTRL_ENABLE) || t <= g->t0) {
        return g->base;
    }
    cycles = (unsigned __int128)(t - g->t0) * d->dma_hz / 1000000000u;
    return g->base + (uint64_t)(cycles / gen_cycles_per_frame(d, g));
}

/* when frame number n (n > base) of a running generator is made */
static int64_t gen_time_of(const NdpDma *d, const NdpGen *g, uint64_t n)
{
    unsigned __int128 cyc = (unsigned __int128)(n - g->base) *
                            gen_cycles_per_frame(d, g);
    unsigned __int128 ns = (cyc * 1000000000u + d->dma_hz - 1) / d->dma_hz;

    return ns > (unsigned __int128)(INT64_MAX - g->t0) ? INT64_MAX
                                                       : g->t0 + (int64_t)ns;
}

static unsigned gen_out_channel(const NdpDma *d, const NdpGen *g)
{
    unsigned incr = g->channel_incr & 0xFF, ch = g->chan, r = 0;

    if (incr == 0) {
        return 0;
    }
    if (g->channel_incr & 0x100) {      /* bit-reversed */
        for (unsigned i = 0; i < d->chan_bits; i++) {
            r |= ((ch >> i) & 1) << (d->chan_bits - 1 - i);
        }
        ch = r;
    }
    return ch;
}

/* the channel after a burst ends */
static void gen_next_channel(const NdpDma *d, NdpGen *g)
{
    unsigned top = chan_width_max(d);
    unsigned ch_min = g->channel_minmax & 0xFFFF & top;
    unsigned ch_max = g->channel_minmax >> 16;

    if (g->chan < ch_max && g->chan < top) {
        g->chan = (g->chan + (g->channel_incr & 0xFF)) & top;
    } else {
        g->chan = ch_min;
    }
}

/* advance the channel sequence by n frames */
static void gen_step(const NdpDma *d, NdpGen *g, uint64_t n)
{
    uint32_t burst = gen_burst(g);

    while (n) {
        uint64_t k = MIN(n, (uint64_t)(burst - MIN(g->bcnt, burst - 1)));

        n -= k;
        g->bcnt += k;
        if (g->bcnt >= burst) {
            g->bcnt = 0;
            gen_next_channel(d, g);
        }
    }
}

/*
 * Advance by n frames, adding how many went to each output channel to
 * per_ch: burst by burst until the channel at a burst's start repeats,
 * then whole cycles at once.
 */
static void gen_step_counting(const NdpDma *d, NdpGen *g, uint64_t n,
                              uint64_t *per_ch)
{
    uint32_t burst = gen_burst(g);
    int seen[64 + 1];
    uint64_t cyc_ch[64] = { 0 };
    unsigned steps = 0;

    memset(seen, -1, sizeof(seen));
    if (g->bcnt && n) {                 /* finish the burst under way */
        uint64_t k = MIN(n, (uint64_t)(burst - MIN(g->bcnt, burst - 1)));

        per_ch[gen_out_channel(d, g)] += k;
        gen_step(d, g, k);
        n -= k;
    }
    while (n >= burst) {
        if (seen[g->chan] >= 0) {
            /* a cycle of `len` bursts from here: all of them at once */
            unsigned len = steps - seen[g->chan];
            uint64_t cycles = n / ((uint64_t)len * burst);
            NdpGen probe = *g;

            memset(cyc_ch, 0, sizeof(cyc_ch));
            for (unsigned i = 0; i < len; i++) {
                cyc_ch[gen_out_channel(d, &probe)] += burst;
                gen_next_channel(d, &probe);
            }
            for (unsigned c = 0; c < 64; c++) {
                per_ch[c] += cyc_ch[c] * cycles;
            }
            n -= cycles * len * burst;
            memset(seen, -1, sizeof(seen));
            steps = 0;
            if (n < burst) {
                break;
            }
        }
        seen[g->chan] = steps++;
        per_ch[gen_out_channel(d, g)] += burst;
        gen_next_channel(d, g);
        n -= burst;
    }
    if (n) {
        per_ch[gen_out_channel(d, g)] += n;
        gen_step(d, g, n);
    }
}

/*
 * A frame of generator g in d->frame, all but its stamp: the MAC
 * addresses, the EtherType, zeros.
 */
static void gen_frame_init(NdpDma *d, const NdpGen *g, uint32_t len)
{
    uint8_t hdr[14];

    for (int i = 0; i < 4; i++) {
        hdr[i] = g->mac[0] >> 8 * i;
        hdr[6 + i] = g->mac[2] >> 8 * i;
    }
    hdr[4] = g->mac[1];
    hdr[5] = g->mac[1] >> 8;
    hdr[10] = g->mac[3];
    hdr[11] = g->mac[3] >> 8;
    hdr[12] = NDP_GEN_ETHERTYPE >> 8;
    hdr[13] = NDP_GEN_ETHERTYPE & 0xFF;
    memset(d->frame, 0, len);
    memcpy(d->frame, hdr, MIN(len, (uint32_t)sizeof(hdr)));
}

/* Its stamp, where the frame has room: the DMA cycle it was made in */
static inline void gen_frame_stamp(NdpDma *d, uint32_t len, uint64_t cycle)
{
    if (len > 14) {
        d->frame[14] = cycle;
    }
    if (len > 15) {
        d->frame[15] = cycle >> 8;
    }
}

/*
 * Whether a generator's channel sequence, from where it is, still reaches
 * a queue that takes frames: a cycle of bursts returns within 2^W + 1.
 */
static bool gen_reaches_open(const NdpDma *d, const NdpGen *g,
                             const bool *full)
{
    NdpGen probe = *g;

    for (unsigned i = 0; i <= 2 * (chan_width_max(d) + 1) + 1; i++) {
        unsigned ch = gen_out_channel(d, &probe);

        if (ch < d->queues_per_port && !full[ch]) {
            return true;
        }
        gen_next_channel(d, &probe);
    }
    return false;
}

/* Frames of a burst still to come at the channel the generator is at */
static uint64_t gen_burst_left(const NdpGen *g)
{
    uint32_t burst = gen_burst(g);

    return burst - MIN(g->bcnt, burst - 1);
}

/*
 * The RX generator of a port from its last run up to frame `upto`: frame
 * by frame while a queue takes them, then (every reachable queue full or
 * stopped, or the switch not routing the generator to the DMA) the rest
 * counted at once.
 */
static void gen_rx_run(NdpDma *d, unsigned port, uint64_t upto)
{
    NdpGls *s = &d->gls[port];
    NdpGen *g = &s->gen[0];
    bool to_dma = (s->mux[2] & 3) == 1 && !(s->mux[0] & 1);
    uint32_t len = MIN(g->length, NDP_FRAME_MAX);
    bool full[64] = { false };
    uint64_t t0_cycle = (uint64_t)((unsigned __int128)g->t0 * d->dma_hz /
                                   1000000000u);
    uint64_t cpf = gen_cycles_per_frame(d, g);
    unsigned q0 = port * d->queues_per_port;
    bool framed = false;        /* d->frame holds the frame but its stamp */

    while (g->count < upto) {
        uint64_t n = upto - g->count;
        uint64_t k = MIN(n, gen_burst_left(g));
        unsigned ch = gen_out_channel(d, g);
        unsigned qi = q0 + ch;

        if (!to_dma || ch >= d->queues_per_port || full[ch]) {
            if (!to_dma || !gen_reaches_open(d, g, full)) {
                uint64_t per_ch[64] = { 0 };

                gen_step_counting(d, g, n, per_ch);
                g->count += n;
                for (unsigned c = 0; to_dma && c < d->queues_per_port; c++) {
                    count_discard(&d->q[NDP_RX][q0 + c], per_ch[c],
                                  per_ch[c] * len);
                }
                return;
            }
            if (ch < d->queues_per_port) {
                count_discard(&d->q[NDP_RX][qi], k, k * len);
            }
            /* else: no such queue, the frames leave the DMA unseen */
        } else {
            /*
             * Frame number m (count + 1 on) is made in DMA cycle
             * t0_cycle + (m - base - 1) x cpf; nothing else of it changes
             * within a run (rx_frame only reads d->frame).
             */
            uint64_t cycle = t0_cycle + (g->count - g->base) * cpf;

            if (!framed) {
                gen_frame_init(d, g, len);
                framed = true;
            }
            for (uint64_t i = 0; i < k; i++, cycle += cpf) {
                gen_frame_stamp(d, len, cycle);
                if (!rx_frame(d, qi, d->frame, len, NDP_GEN_META)) {
                    full[ch] = true;
                    count_discard(&d->q[NDP_RX][qi], k - i - 1,
                                  (k - i - 1) * len);
                    break;
                }
            }
        }
        gen_step(d, g, k);
        g->count += k;
    }
}

int64_t ndp_dma_run(NdpDma *d, int64_t now_ns)
{
    int64_t next = INT64_MAX;

    if (now_ns > d->gen_now) {
        d->gen_now = now_ns;
    }
    for (unsigned p = 0; p < d->ports; p++) {
        NdpGls *s = &d->gls[p];

        for (unsigned k = 0; k < 2; k++) {
            NdpGen *g = &s->gen[k];
            uint64_t upto;

            if (!(g->control & NDP_GEN_CTRL_ENABLE)) {
                continue;
            }
            upto = gen_made(d, g, d->gen_now);
            if (k == 0) {
                gen_rx_run(d, p, upto);
                next = MIN(next, gen_time_of(d, g, upto + 1));
            } else {
                g->count = upto;        /* towards Ethernet: counted only */
            }
        }
    }
    flush_updates(d);
    return next;
}

/* Before a generator's settings change: count up to now, start anew. */
static void gen_rebase(NdpDma *d, NdpGen *g)
{
    g->base = g->count;
    g->t0 = d->gen_now;
}

static uint32_t gen_reg_read(NdpDma *d, NdpGen *g, uint32_t off)
{
    switch (off) {
    case NDP_GEN_CONTROL:
        /* busy follows enable: it generates whenever it is on */
        return (g->control & NDP_GEN_CTRL_ENABLE) ?
               NDP_GEN_CTRL_ENABLE | NDP_GEN_CTRL_BUSY : 0;
    case NDP_GEN_LENGTH:
        return g->length;
    case NDP_GEN_CHANNEL_INCR:
        return g->channel_incr;
    case NDP_GEN_CHANNEL_MINMAX:
        return g->channel_minmax;
    case NDP_GEN_DST_MAC_LOW:
    case NDP_GEN_DST_MAC_HIGH:
    case NDP_GEN_SRC_MAC_LOW:
    case NDP_GEN_SRC_MAC_HIGH:
        return g->mac[(off - NDP_GEN_DST_MAC_LOW) / 4];
    case NDP_GEN_CNT_LOW:
        return g->count;
    case NDP_GEN_CNT_HIGH:
        return g->count >> 32;
    default:
        return 0;
    }
}

static void gen_reg_write(NdpDma *d, unsigned port, unsigned k,
                          uint32_t off, uint32_t v)
{
    NdpGen *g = &d->gls[port].gen[k];
    bool was_on = g->control & NDP_GEN_CTRL_ENABLE;

    switch (off) {
    case NDP_GEN_CONTROL:
        if (v & NDP_GEN_CTRL_CLEAR) {
            g->count = 0;
        }
        g->control = v & NDP_GEN_CTRL_ENABLE;
        break;
    case NDP_GEN_LENGTH:
        g->length = v & NDP_FRAME_MAX;
        break;
    case NDP_GEN_CHANNEL_INCR:
        g->channel_incr = v & 0xFFFF03FF;
        /* a shorter burst ends the one under way */
        g->bcnt = MIN(g->bcnt, gen_burst(g) - 1);
        break;
    case NDP_GEN_CHANNEL_MINMAX:
        g->channel_minmax = v;
        break;
    case NDP_GEN_DST_MAC_LOW:
    case NDP_GEN_SRC_MAC_LOW:
        g->mac[(off - NDP_GEN_DST_MAC_LOW) / 4] = v;
        break;
    case NDP_GEN_DST_MAC_HIGH:
    case NDP_GEN_SRC_MAC_HIGH:
        g->mac[(off - NDP_GEN_DST_MAC_LOW) / 4] = v & 0xFFFF;
        break;
    default:
        return;
    }
    gen_rebase(d, g);
    if (k == 0 && d->hooks && d->hooks->gen_changed &&
        was_on != !!(g->control & NDP_GEN_CTRL_ENABLE)) {
        d->hooks->gen_changed(d->opaque, port, !was_on);
    }
}

static uint32_t gls_reg_read(NdpDma *d, unsigned port, uint32_t off)
{
    NdpGls *s = &d->gls[port];

    if (off < 0x10) {
        return s->mux[off / 4];
    }
    if (off < 0x40) {
        return 0xDEAD1440;
    }
    if (off < 0x80) {
        /*
         * Speed meters: not modelled. Each reads as done (status bit 0)
         * after the longest interval with no bytes, so tools that wait
         * for them do not hang.
         */
        switch (off & 0xF) {
        case 0x0:
            return 0xFFFFFF;
        case 0x4:
            return 1;
        default:
            return 0;
        }
    }
    if (off < 0x100) {
        return gen_reg_read(d, &s->gen[(off - 0x80) / NDP_GEN_SIZE],
                            off % NDP_GEN_SIZE);
    }
    return 0;
}

static void gls_reg_write(NdpDma *d, unsigned port, uint32_t off, uint32_t v)
{
    NdpGls *s = &d->gls[port];
    static const uint32_t mux_bits[4] = { 1, 1, 3, 3 };

    if (off < 0x10) {
        s->mux[off / 4] = v & mux_bits[off / 4];
    } else if (off >= 0x80 && off < 0x100) {
        gen_reg_write(d, port, (off - 0x80) / NDP_GEN_SIZE,
                      off % NDP_GEN_SIZE, v);
    }
}

/* ---- register accesses -------------------------------------------- */

typedef uint32_t (*WordRead)(NdpDma *d, void *ctx, uint32_t off);

static uint64_t read_words(NdpDma *d, void *ctx, WordRead rd, uint32_t off,
                           unsigned size, uint32_t limit)
{
    uint64_t val = 0;

    for (unsigned i = 0; i < size; i++) {
        uint32_t a = off + i;
        uint32_t w;

        if (a >= limit) {
            break;
        }
        w = rd(d, ctx, a & ~3u);
        val |= (uint64_t)((w >> 8 * (a & 3)) & 0xFF) << 8 * i;
    }
    return val;
}

typedef struct QueueRef {
    NdpDir dir;
    unsigned qi;
} QueueRef;

static uint32_t queue_word(NdpDma *d, void *ctx, uint32_t off)
{
    QueueRef *r = ctx;

    return queue_reg_read(&d->q[r->dir][r->qi], off);
}

static uint32_t gls_word(NdpDma *d, void *ctx, uint32_t off)
{
    return gls_reg_read(d, *(unsigned *)ctx, off);
}

uint64_t ndp_dma_read(NdpDma *d, NdpDir dir, unsigned queue, uint32_t off,
                      unsigned size, int64_t now_ns)
{
    QueueRef r = { dir, queue };

    if (queue >= d->nq || size > 8) {
        return 0;
    }
    ndp_dma_run(d, now_ns);
    return read_words(d, &r, queue_word, off, size, NDP_CTRL_SIZE);
}

/* the 32-bit words a write covers, each merged with what it read before */
static unsigned write_words(NdpDma *d, void *ctx, WordRead rd, uint32_t off,
                            uint64_t val, unsigned size, uint32_t limit,
                            unsigned (*wr)(NdpDma *, void *, uint32_t,
                                           uint32_t))
{
    unsigned effects = 0;
    uint32_t first = off & ~3u;

    for (uint32_t w = first; w < off + size && w < limit; w += 4) {
        uint32_t cur = 0, mask = 0, nv = 0;

        for (unsigned b = 0; b < 4; b++) {
            uint32_t a = w + b;

            if (a >= off && a < off + size) {
                mask |= 0xFFu << 8 * b;
                nv |= (uint32_t)((val >> 8 * (a - off)) & 0xFF) << 8 * b;
            }
        }
        if (mask != 0xFFFFFFFF) {
            cur = rd(d, ctx, w);
        }
        effects |= wr(d, ctx, w, (cur & ~mask) | nv);
    }
    return effects;
}

static unsigned queue_word_write(NdpDma *d, void *ctx, uint32_t off,
                                 uint32_t v)
{
    QueueRef *r = ctx;

    return queue_reg_write(d, r->dir, r->qi, off, v);
}

void ndp_dma_write(NdpDma *d, NdpDir dir, unsigned queue, uint32_t off,
                   uint64_t val, unsigned size, int64_t now_ns)
{
    QueueRef r = { dir, queue };
    NdpQueue *q;
    unsigned effects;

    if (queue >= d->nq || size > 8) {
        return;
    }
    ndp_dma_run(d, now_ns);
    q = &d->q[dir][queue];
    effects = write_words(d, &r, queue_word, off, val, size, NDP_CTRL_SIZE,
                          queue_word_write);
    if (effects & DO_CONTROL) {
        if (q->control & NDP_CONTROL_START) {
            queue_start(d, dir, queue);
        } else {
            queue_stop(d, dir, queue);
        }
    }
    if ((effects & DO_SDP) && dir == NDP_TX) {
        tx_process(d, queue, false);
    }
    flush_updates(d);
}

uint64_t ndp_gls_read(NdpDma *d, unsigned port, uint32_t off, unsigned size,
                      int64_t now_ns)
{
    if (port >= d->ports || size > 8) {
        return 0;
    }
    ndp_dma_run(d, now_ns);
    return read_words(d, &port, gls_word, off, size, NDP_GLS_SIZE);
}

static unsigned gls_word_write(NdpDma *d, void *ctx, uint32_t off, uint32_t v)
{
    gls_reg_write(d, *(unsigned *)ctx, off, v);
    return 0;
}

void ndp_gls_write(NdpDma *d, unsigned port, uint32_t off, uint64_t val,
                   unsigned size, int64_t now_ns)
{
    if (port >= d->ports || size > 8) {
        return;
    }
    ndp_dma_run(d, now_ns);
    write_words(d, &port, gls_word, off, val, size, NDP_GLS_SIZE,
                gls_word_write);
    flush_updates(d);
}

bool ndp_dma_rx_frame(NdpDma *d, unsigned queue, const uint8_t *data,
                      uint32_t len, uint16_t meta)
{
    bool ok;

    if (queue >= d->nq || len > NDP_FRAME_MAX) {
        return false;
    }
    ok = rx_frame(d, queue, data, len, meta);
    flush_updates(d);
    /* its header may have failed only now */
    return ok && d->q[NDP_RX][queue].error != NDP_ERR_HDR_WRITE;
}

int ndp_dma_queue_error(const NdpDma *d, NdpDir dir, unsigned queue)
{
    return queue < d->nq ? (int)d->q[dir][queue].error : 0;
}

unsigned ndp_dma_queues(const NdpDma *d)
{
    return d->nq;
}
