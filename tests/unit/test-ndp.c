/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The NDK DMA engine (ndp-dma.c) driven as CESNET's nfb driver and libnfb
 * drive the controller: the start sequence with the pointer-mask probe,
 * RX rings of type-0/type-2 descriptors with headers and the update
 * buffer, TX rings sent through the switch's loopback, STOP draining TX,
 * counters with their strobe commands, the RX generator against its
 * closed form, every bad input the guest can give, and migration.
 * Host memory is an array here; the QTest runs the same through QEMU.
 */
#include <glib.h>
#include <string.h>

#include "ndp-dma.h"

#define MEM_BASE    0x10000000ull
#define MEM_SIZE    (32u << 20)
#define DMA_HZ      200000000ull
#define BUS_BYTES   64u

typedef struct Host {
    uint8_t *mem;
    unsigned reads, writes, refused;
    /* transfers the engine reported, by kind */
    unsigned xfers[5];
    uint64_t xfer_bytes[5];
} Host;

static int host_read(void *opaque, uint64_t addr, void *buf, size_t len)
{
    Host *h = opaque;

    if (addr < MEM_BASE || addr + len > MEM_BASE + MEM_SIZE ||
        addr + len < addr) {
        h->refused++;
        return -1;
    }
    memcpy(buf, h->mem + (addr - MEM_BASE), len);
    h->reads++;
    return 0;
}

static int host_write(void *opaque, uint64_t addr, const void *buf,
                      size_t len)
{
    Host *h = opaque;

    if (addr < MEM_BASE || addr + len > MEM_BASE + MEM_SIZE ||
        addr + len < addr) {
        h->refused++;
        return -1;
    }
    memcpy(h->mem + (addr - MEM_BASE), buf, len);
    h->writes++;
    return 0;
}

static void host_xfer(void *opaque, NdpDir dir, unsigned queue,
                      NdpXferKind kind, uint64_t addr, uint32_t bytes)
{
    Host *h = opaque;

    h->xfers[kind]++;
    h->xfer_bytes[kind] += bytes;
}

static const NdpMemOps host_ops = { host_read, host_write };
static const NdpHooks host_hooks = { .xfer = host_xfer };

typedef struct Rig {
    Host host;
    NdpDma *d;
    int64_t now;
} Rig;

static Rig *rig_new(unsigned ports, unsigned queues)
{
    Rig *r = g_new0(Rig, 1);

    r->host.mem = g_malloc0(MEM_SIZE);
    r->d = ndp_dma_new(ports, queues, DMA_HZ, BUS_BYTES, &host_ops,
                       &host_hooks, &r->host);
    return r;
}

static void rig_free(Rig *r)
{
    ndp_dma_free(r->d);
    g_free(r->host.mem);
    g_free(r);
}

static uint64_t rd(Rig *r, NdpDir dir, unsigned q, uint32_t off, unsigned sz)
{
    return ndp_dma_read(r->d, dir, q, off, sz, r->now);
}

static void wr(Rig *r, NdpDir dir, unsigned q, uint32_t off, uint64_t v,
               unsigned sz)
{
    ndp_dma_write(r->d, dir, q, off, v, sz, r->now);
}

static uint8_t *at(Rig *r, uint64_t addr)
{
    g_assert_cmpuint(addr, >=, MEM_BASE);
    g_assert_cmpuint(addr, <, MEM_BASE + MEM_SIZE);
    return r->host.mem + (addr - MEM_BASE);
}

static void put64(Rig *r, uint64_t addr, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        at(r, addr)[i] = v >> 8 * i;
    }
}

static uint32_t get32(Rig *r, uint64_t addr)
{
    uint8_t *p = at(r, addr);

    return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t desc_upper(uint64_t addr)
{
    return addr >> 30;                          /* type 0 */
}

static uint64_t desc_data(uint64_t addr, uint32_t len, uint16_t meta,
                          bool next)
{
    return 2ull << 62 | (next ? 1ull << 61 : 0) |
           (uint64_t)(meta & 0xFFF) << 48 | (uint64_t)len << 32 |
           (addr & 0x3FFFFFFF);
}

/* A queue as the driver lays it out: rings and buffers in host memory. */
typedef struct Ring {
    NdpDir dir;
    unsigned q;
    unsigned n;                 /* descriptors = headers = buffers */
    uint32_t buf_size;
    uint64_t desc, hdr, upd, buf;
    uint32_t sdp;               /* next descriptor the driver writes */
    uint64_t last_upper;
} Ring;

static void ring_init(Ring *g, NdpDir dir, unsigned q, unsigned n,
                      uint32_t buf_size, uint64_t area)
{
    memset(g, 0, sizeof(*g));
    g->dir = dir;
    g->q = q;
    g->n = n;
    g->buf_size = buf_size;
    g->desc = area;
    g->hdr = area + 0x10000;
    g->upd = area + 0x20000;
    g->buf = area + 0x30000 + 64 * (q + 1);     /* 64-byte aligned only */
    g->last_upper = UINT64_MAX;
}

/* The driver's start sequence (nc_ndp_ctrl_start), mask probe included. */
static void ring_start(Rig *r, Ring *g)
{
    uint64_t probe;

    g_assert_cmpuint(rd(r, g->dir, g->q, NDP_REG_STATUS, 4) & 1, ==, 0);
    wr(r, g->dir, g->q, NDP_REG_DESC_BASE, g->desc, 8);
    wr(r, g->dir, g->q, NDP_REG_UPDATE_BASE, g->upd, 8);
    if (g->dir == NDP_RX) {
        wr(r, g->dir, g->q, NDP_REG_HDR_BASE, g->hdr, 8);
    }
    wr(r, g->dir, g->q, NDP_REG_MDP, ~0ull, 8);
    probe = rd(r, g->dir, g->q, NDP_REG_MDP, 8);
    g_assert_cmpuint((uint32_t)probe >> 1, >=, g->n - 1);
    g_assert_cmpuint((uint32_t)(probe >> 32) >> 1, >=, g->n - 1);
    wr(r, g->dir, g->q, NDP_REG_MDP, g->n - 1, 4);
    wr(r, g->dir, g->q, NDP_REG_MHP, g->n - 1, 4);
    wr(r, g->dir, g->q, NDP_REG_SDP, 0, 8);
    wr(r, g->dir, g->q, NDP_REG_TIMEOUT, NDP_TIMEOUT_DEFAULT, 4);
    wr(r, g->dir, g->q, NDP_REG_CONTROL, 1, 4);
    g_assert_cmpuint(rd(r, g->dir, g->q, NDP_REG_STATUS, 4) & 1, ==, 1);
}

/* One buffer's descriptors: a type 0 where the upper address changes. */
static unsigned ring_post(Rig *r, Ring *g, uint64_t addr, uint32_t len,
                          uint16_t meta, bool next)
{
    unsigned used = 0;

    if (addr >> 30 != g->last_upper) {
        put64(r, g->desc + (g->sdp & (g->n - 1)) * 8, desc_upper(addr));
        g->sdp++;
        g->last_upper = addr >> 30;
        used++;
    }
    put64(r, g->desc + (g->sdp & (g->n - 1)) * 8,
          desc_data(addr, len, meta, next));
    g->sdp++;
    return used + 1;
}

static uint64_t buf_addr(const Ring *g, unsigned i)
{
    return g->buf + (uint64_t)i * g->buf_size;
}

static void flush_sdp(Rig *r, Ring *g)
{
    wr(r, g->dir, g->q, NDP_REG_SDP, g->sdp & (g->n - 1), 4);
}

static uint64_t counter(Rig *r, NdpDir dir, unsigned q, uint32_t off)
{
    wr(r, dir, q, NDP_REG_CNT_PKTS, NDP_CNT_CMD_STROBE, 4);
    return rd(r, dir, q, off, 8);
}

static void fill_pattern(uint8_t *p, uint32_t len, unsigned seed)
{
    for (uint32_t i = 0; i < len; i++) {
        p[i] = (uint8_t)(i * 7 + seed * 13 + 1);
    }
}

/* ---- registers ---------------------------------------------------- */

static void test_registers(void)
{
    Rig *r = rig_new(1, 2);

    /* reset values: everything zero */
    for (uint32_t off = 0; off < NDP_CTRL_SIZE; off += 4) {
        g_assert_cmpuint(rd(r, NDP_RX, 1, off, 4), ==, 0);
        g_assert_cmpuint(rd(r, NDP_TX, 0, off, 4), ==, 0);
    }
    /* the mask probe reads back the pointers' width */
    wr(r, NDP_RX, 0, NDP_REG_MDP, ~0ull, 8);
    g_assert_cmphex(rd(r, NDP_RX, 0, NDP_REG_MDP, 8), ==,
                    0x0000FFFF0000FFFFull);
    /* a 64-bit write to SDP sets SHP too; a 32-bit one SDP only */
    wr(r, NDP_RX, 0, NDP_REG_SDP, 0x0000002200000011ull, 8);
    g_assert_cmphex(rd(r, NDP_RX, 0, NDP_REG_SDP, 4), ==, 0x11);
    g_assert_cmphex(rd(r, NDP_RX, 0, NDP_REG_SHP, 4), ==, 0x22);
    wr(r, NDP_RX, 0, NDP_REG_SDP, 0x33, 4);
    g_assert_cmphex(rd(r, NDP_RX, 0, NDP_REG_SHP, 4), ==, 0x22);
    /* pointers are 16 bits wide */
    wr(r, NDP_RX, 0, NDP_REG_SDP, 0x12345678, 4);
    g_assert_cmphex(rd(r, NDP_RX, 0, NDP_REG_SDP, 4), ==, 0x5678);
    /* byte writes merge into their register */
    wr(r, NDP_RX, 0, NDP_REG_TIMEOUT, 0x11223344, 4);
    wr(r, NDP_RX, 0, NDP_REG_TIMEOUT + 2, 0xAB, 1);
    g_assert_cmphex(rd(r, NDP_RX, 0, NDP_REG_TIMEOUT, 4), ==, 0x11AB3344);
    g_assert_cmphex(rd(r, NDP_RX, 0, NDP_REG_TIMEOUT + 1, 2), ==, 0xAB33);
    /* bases are 64-bit, also as two halves */
    wr(r, NDP_TX, 1, NDP_REG_DESC_BASE + 4, 0x9, 4);
    wr(r, NDP_TX, 1, NDP_REG_DESC_BASE, 0x87654000, 4);
    g_assert_cmphex(rd(r, NDP_TX, 1, NDP_REG_DESC_BASE, 8), ==,
                    0x987654000ull);
    /* read-only registers and holes ignore writes */
    wr(r, NDP_RX, 0, NDP_REG_STATUS, 1, 4);
    wr(r, NDP_RX, 0, NDP_REG_HDP, 7, 4);
    wr(r, NDP_RX, 0, 0x24, 7, 4);
    wr(r, NDP_RX, 0, NDP_REG_CNT_BYTES, 7, 8);
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_STATUS, 4), ==, 0);
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_HDP, 4), ==, 0);
    g_assert_cmpuint(rd(r, NDP_RX, 0, 0x24, 4), ==, 0);
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_CNT_BYTES, 8), ==, 0);
    /* past the window, past the queues: nothing, and no crash */
    wr(r, NDP_RX, 0, 0x7E, 0xFFFFFFFF, 4);
    g_assert_cmpuint(rd(r, NDP_RX, 0, 0x7E, 4), ==, 0);
    wr(r, NDP_RX, 2, NDP_REG_CONTROL, 1, 4);
    g_assert_cmpuint(rd(r, NDP_RX, 2, NDP_REG_STATUS, 4), ==, 0);
    /* nothing above touched host memory */
    g_assert_cmpuint(r->host.reads + r->host.writes + r->host.refused, ==, 0);
    rig_free(r);
}

/* ---- RX ----------------------------------------------------------- */

static void test_rx(void)
{
    Rig *r = rig_new(1, 1);
    Ring g;
    uint8_t frame[4096];
    static const uint32_t lens[] = { 60, 64, 1500, 4096, 61, 0 };
    unsigned descs = 0;
    uint64_t bytes = 0;

    ring_init(&g, NDP_RX, 0, 1024, 4096, MEM_BASE + 0x100000);
    ring_start(r, &g);
    /* the kernel posts all but 64 descriptors */
    for (unsigned i = 0; i < 1024 - 64; i++) {
        descs += ring_post(r, &g, buf_addr(&g, i), 4096, 0, false);
    }
    g_assert_cmpuint(descs, <, 1024);
    flush_sdp(r, &g);

    for (unsigned i = 0; i < G_N_ELEMENTS(lens); i++) {
        uint32_t h;

        fill_pattern(frame, lens[i], i);
        g_assert_true(ndp_dma_rx_frame(r->d, 0, frame, lens[i],
                                       i == 2 ? 0x310 : 0));
        /* the frame in its buffer, in ring order */
        g_assert_cmpmem(at(r, buf_addr(&g, i)), lens[i], frame, lens[i]);
        h = get32(r, g.hdr + i * 4);
        g_assert_cmpuint(h & 0xFFFF, ==, lens[i]);
        if (i == 2) {
            /* HDR_META: user header 0x10 bytes, flags 3 */
            g_assert_cmpuint((h >> 16) & 0xFF, ==, 0x10);
            g_assert_cmpuint((h >> 24) & 0xF, ==, 3);
        } else {
            g_assert_cmpuint((h >> 16) & 0xFF, ==, 0);
            g_assert_cmpuint((h >> 24) & 0xF, ==, 0);
        }
        /* the first frame used the type-0 descriptor too */
        g_assert_cmpuint(h >> 30, ==, i == 0 ? 2 : 1);
        /* the update buffer: HDP and HHP after the frame */
        g_assert_cmpuint(get32(r, g.upd), ==, i + 2);
        g_assert_cmpuint(get32(r, g.upd + 4), ==, i + 1);
        bytes += lens[i];
    }
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_HDP, 4), ==,
                     G_N_ELEMENTS(lens) + 1);
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_HHP, 4), ==, G_N_ELEMENTS(lens));
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_PKTS), ==,
                     G_N_ELEMENTS(lens));
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_BYTES), ==, bytes);
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_DISC_PKTS), ==, 0);
    /* the transfers the telemetry will count */
    g_assert_cmpuint(r->host.xfers[NDP_XFER_DATA_WRITE], ==,
                     G_N_ELEMENTS(lens) - 1);    /* the empty frame: none */
    g_assert_cmpuint(r->host.xfer_bytes[NDP_XFER_DATA_WRITE], ==, bytes);
    g_assert_cmpuint(r->host.xfers[NDP_XFER_HDR_WRITE], ==,
                     G_N_ELEMENTS(lens));
    g_assert_cmpuint(r->host.xfers[NDP_XFER_UPDATE_WRITE], ==,
                     G_N_ELEMENTS(lens));

    /* a frame larger than its buffer is discarded, descriptors kept */
    fill_pattern(frame, 4096, 9);
    g_assert_false(ndp_dma_rx_frame(r->d, 0, frame, 4097, 0));
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_HDP, 4), ==,
                     G_N_ELEMENTS(lens) + 1);
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_DISC_PKTS), ==, 1);
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_DISC_BYTES), ==, 4097);

    /* STOP: RUNNING clears at once, later frames are discarded */
    wr(r, NDP_RX, 0, NDP_REG_CONTROL, 0, 4);
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_STATUS, 4), ==, 0);
    r->host.writes = 0;
    g_assert_false(ndp_dma_rx_frame(r->d, 0, frame, 100, 0));
    g_assert_cmpuint(r->host.writes, ==, 0);
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_DISC_PKTS), ==, 2);
    rig_free(r);
}

/* RX fills the ring: the frames past the posted descriptors are dropped. */
static void test_rx_full(void)
{
    Rig *r = rig_new(1, 1);
    Ring g;
    uint8_t frame[128] = { 0 };
    unsigned posted = 0;

    ring_init(&g, NDP_RX, 0, 64, 2048, MEM_BASE + 0x100000);
    ring_start(r, &g);
    for (unsigned i = 0; i < 10; i++) {
        ring_post(r, &g, buf_addr(&g, i), 2048, 0, false);
        posted++;
    }
    flush_sdp(r, &g);
    for (unsigned i = 0; i < 15; i++) {
        bool ok = ndp_dma_rx_frame(r->d, 0, frame, sizeof(frame), 0);

        g_assert_true(ok == (i < posted));
    }
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_PKTS), ==, posted);
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_DISC_PKTS), ==,
                     15 - posted);
    /* more descriptors: frames flow again */
    ring_post(r, &g, buf_addr(&g, 10), 2048, 0, false);
    flush_sdp(r, &g);
    g_assert_true(ndp_dma_rx_frame(r->d, 0, frame, sizeof(frame), 0));
    rig_free(r);
}

/* XDP's multi-buffer descriptors: NEXT lets a frame span buffers. */
static void test_rx_chain(void)
{
    Rig *r = rig_new(1, 1);
    Ring g;
    uint8_t frame[3000];

    ring_init(&g, NDP_RX, 0, 64, 1024, MEM_BASE + 0x100000);
    ring_start(r, &g);
    for (unsigned i = 0; i < 8; i++) {
        ring_post(r, &g, buf_addr(&g, i), 1024, 0, true);
    }
    flush_sdp(r, &g);
    fill_pattern(frame, sizeof(frame), 5);
    g_assert_true(ndp_dma_rx_frame(r->d, 0, frame, sizeof(frame), 0));
    g_assert_cmpmem(at(r, buf_addr(&g, 0)), 1024, frame, 1024);
    g_assert_cmpmem(at(r, buf_addr(&g, 1)), 1024, frame + 1024, 1024);
    g_assert_cmpmem(at(r, buf_addr(&g, 2)), 952, frame + 2048, 952);
    /* one type 0 and three type 2: HDP 4, one header */
    g_assert_cmpuint(get32(r, g.upd), ==, 4);
    g_assert_cmpuint(get32(r, g.upd + 4), ==, 1);
    g_assert_cmpuint(get32(r, g.hdr) & 0xFFFF, ==, sizeof(frame));
    g_assert_cmpuint(get32(r, g.hdr) >> 30, ==, 3);
    rig_free(r);
}

/* ---- TX and the loopback ------------------------------------------ */

static void test_tx_loopback(void)
{
    Rig *r = rig_new(1, 2);
    Ring rx, tx;
    uint8_t frame[2048];
    static const uint32_t lens[] = { 60, 1500, 64, 2048, 100 };
    uint64_t bytes = 0;

    ndp_gls_write(r->d, 0, NDP_GLS_MUX_A, 1, 4, r->now);
    g_assert_cmpuint(ndp_gls_read(r->d, 0, NDP_GLS_MUX_A, 4, r->now), ==, 1);
    /* queue 1 of each direction: the loopback keeps the channel */
    ring_init(&rx, NDP_RX, 1, 256, 4096, MEM_BASE + 0x100000);
    ring_init(&tx, NDP_TX, 1, 256, 4096, MEM_BASE + 0x800000);
    ring_start(r, &tx);
    ring_start(r, &rx);
    for (unsigned i = 0; i < 64; i++) {
        ring_post(r, &rx, buf_addr(&rx, i), 4096, 0, false);
    }
    flush_sdp(r, &rx);
    for (unsigned i = 0; i < G_N_ELEMENTS(lens); i++) {
        fill_pattern(at(r, buf_addr(&tx, i)), lens[i], 20 + i);
        ring_post(r, &tx, buf_addr(&tx, i), lens[i], 0, false);
        bytes += lens[i];
    }
    /* nothing moves before SDP is written */
    g_assert_cmpuint(get32(r, tx.upd), ==, 0);
    flush_sdp(r, &tx);
    /* TX consumed every descriptor and said so */
    g_assert_cmpuint(get32(r, tx.upd), ==, tx.sdp);
    g_assert_cmpuint(rd(r, NDP_TX, 1, NDP_REG_HDP, 4), ==, tx.sdp);
    for (unsigned i = 0; i < G_N_ELEMENTS(lens); i++) {
        fill_pattern(frame, lens[i], 20 + i);
        g_assert_cmpmem(at(r, buf_addr(&rx, i)), lens[i], frame, lens[i]);
        g_assert_cmpuint(get32(r, rx.hdr + 4 * i) & 0xFFFF, ==, lens[i]);
    }
    g_assert_cmpuint(get32(r, rx.upd + 4), ==, G_N_ELEMENTS(lens));
    g_assert_cmpuint(counter(r, NDP_TX, 1, NDP_REG_CNT_PKTS), ==,
                     G_N_ELEMENTS(lens));
    g_assert_cmpuint(counter(r, NDP_TX, 1, NDP_REG_CNT_BYTES), ==, bytes);
    g_assert_cmpuint(counter(r, NDP_RX, 1, NDP_REG_CNT_PKTS), ==,
                     G_N_ELEMENTS(lens));
    g_assert_cmpuint(counter(r, NDP_RX, 1, NDP_REG_CNT_BYTES), ==, bytes);
    /* queue 0 saw nothing */
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_PKTS) +
                     counter(r, NDP_RX, 0, NDP_REG_CNT_DISC_PKTS), ==, 0);
    /* the loopback off: frames leave towards Ethernet */
    ndp_gls_write(r->d, 0, NDP_GLS_MUX_A, 0, 4, r->now);
    ring_post(r, &tx, buf_addr(&tx, 10), 200, 0, false);
    flush_sdp(r, &tx);
    g_assert_cmpuint(counter(r, NDP_TX, 1, NDP_REG_CNT_PKTS), ==,
                     G_N_ELEMENTS(lens) + 1);
    g_assert_cmpuint(counter(r, NDP_RX, 1, NDP_REG_CNT_PKTS), ==,
                     G_N_ELEMENTS(lens));
    rig_free(r);
}

/* A gather list (NEXT), and what STOP does with TX. */
static void test_tx_stop(void)
{
    Rig *r = rig_new(1, 1);
    Ring rx, tx;
    uint8_t frame[3000];

    ndp_gls_write(r->d, 0, NDP_GLS_MUX_A, 1, 4, r->now);
    ring_init(&rx, NDP_RX, 0, 64, 4096, MEM_BASE + 0x100000);
    ring_init(&tx, NDP_TX, 0, 64, 4096, MEM_BASE + 0x800000);
    ring_start(r, &tx);
    ring_start(r, &rx);
    for (unsigned i = 0; i < 16; i++) {
        ring_post(r, &rx, buf_addr(&rx, i), 4096, 0, false);
    }
    flush_sdp(r, &rx);
    /* a frame gathered from two buffers */
    fill_pattern(frame, sizeof(frame), 3);
    memcpy(at(r, buf_addr(&tx, 0)), frame, 1000);
    memcpy(at(r, buf_addr(&tx, 1)), frame + 1000, 2000);
    ring_post(r, &tx, buf_addr(&tx, 0), 1000, 0, true);
    /* the chain's end is not posted yet: nothing is sent */
    flush_sdp(r, &tx);
    g_assert_cmpuint(rd(r, NDP_TX, 0, NDP_REG_HDP, 4), ==, 0);
    ring_post(r, &tx, buf_addr(&tx, 1), 2000, 0, false);
    flush_sdp(r, &tx);
    g_assert_cmpuint(rd(r, NDP_TX, 0, NDP_REG_HDP, 4), ==, 3);
    g_assert_cmpmem(at(r, buf_addr(&rx, 0)), sizeof(frame), frame,
                    sizeof(frame));
    /* a chain left open at STOP is dropped so that HDP reaches SDP */
    ring_post(r, &tx, buf_addr(&tx, 2), 100, 0, true);
    flush_sdp(r, &tx);
    g_assert_cmpuint(rd(r, NDP_TX, 0, NDP_REG_HDP, 4), ==, 3);
    wr(r, NDP_TX, 0, NDP_REG_CONTROL, 0, 4);
    g_assert_cmpuint(rd(r, NDP_TX, 0, NDP_REG_STATUS, 4), ==, 0);
    g_assert_cmpuint(get32(r, tx.upd), ==, tx.sdp);
    g_assert_cmpuint(counter(r, NDP_TX, 0, NDP_REG_CNT_PKTS), ==, 1);
    g_assert_cmpuint(counter(r, NDP_TX, 0, NDP_REG_CNT_DISC_PKTS), ==, 1);
    /* a zero-length frame is discarded, the queue goes on */
    ring_start(r, &tx);
    tx.sdp = 0;
    tx.last_upper = UINT64_MAX;
    ring_post(r, &tx, buf_addr(&tx, 0), 0, 0, false);
    ring_post(r, &tx, buf_addr(&tx, 1), 64, 0, false);
    flush_sdp(r, &tx);
    g_assert_cmpuint(get32(r, tx.upd), ==, 3);
    g_assert_cmpuint(counter(r, NDP_TX, 0, NDP_REG_CNT_PKTS), ==, 2);
    g_assert_cmpuint(counter(r, NDP_TX, 0, NDP_REG_CNT_DISC_PKTS), ==, 2);
    rig_free(r);
}

/* ---- counters ----------------------------------------------------- */

static void test_counter_commands(void)
{
    Rig *r = rig_new(1, 1);
    Ring g;
    uint8_t frame[100] = { 0 };

    ring_init(&g, NDP_RX, 0, 64, 4096, MEM_BASE + 0x100000);
    ring_start(r, &g);
    for (unsigned i = 0; i < 8; i++) {
        ring_post(r, &g, buf_addr(&g, i), 4096, 0, false);
    }
    flush_sdp(r, &g);
    ndp_dma_rx_frame(r->d, 0, frame, 100, 0);
    ndp_dma_rx_frame(r->d, 0, frame, 100, 0);
    /* the registers show the last sample, not the live count */
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_CNT_PKTS, 8), ==, 0);
    wr(r, NDP_RX, 0, NDP_REG_CNT_PKTS, NDP_CNT_CMD_STROBE, 4);
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_CNT_PKTS, 8), ==, 2);
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_CNT_BYTES, 4), ==, 200);
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_CNT_BYTES + 4, 4), ==, 0);
    ndp_dma_rx_frame(r->d, 0, frame, 100, 0);
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_CNT_PKTS, 8), ==, 2);
    /* strobe and reset: the sample, then counting from zero */
    wr(r, NDP_RX, 0, NDP_REG_CNT_PKTS, NDP_CNT_CMD_STROBE_RESET, 4);
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_CNT_PKTS, 8), ==, 3);
    ndp_dma_rx_frame(r->d, 0, frame, 100, 0);
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_PKTS), ==, 1);
    /* reset clears both */
    wr(r, NDP_RX, 0, NDP_REG_CNT_PKTS, NDP_CNT_CMD_RESET, 4);
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_CNT_PKTS, 8), ==, 0);
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_PKTS), ==, 0);
    rig_free(r);
}

/* ---- bad input from the guest ------------------------------------- */

static void test_bad_addresses(void)
{
    Rig *r = rig_new(1, 4);
    Ring g;
    uint8_t frame[200] = { 0 };

    /* descriptors outside host memory: the queue halts, nothing written */
    ring_init(&g, NDP_RX, 0, 64, 4096, MEM_BASE + 0x100000);
    ring_start(r, &g);
    wr(r, NDP_RX, 0, NDP_REG_DESC_BASE, 0x1000, 8);
    wr(r, NDP_RX, 0, NDP_REG_SDP, 5, 4);
    r->host.writes = 0;
    g_assert_false(ndp_dma_rx_frame(r->d, 0, frame, 100, 0));
    g_assert_cmpint(ndp_dma_queue_error(r->d, NDP_RX, 0), ==,
                    NDP_ERR_DESC_READ);
    g_assert_cmpuint(rd(r, NDP_RX, 0, NDP_REG_STATUS, 4), ==, 0);
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_DISC_PKTS), ==, 1);

    /* a buffer outside host memory */
    ring_init(&g, NDP_RX, 1, 64, 4096, MEM_BASE + 0x200000);
    ring_start(r, &g);
    ring_post(r, &g, 0xFFFFFFFF00000000ull, 4096, 0, false);
    flush_sdp(r, &g);
    g_assert_false(ndp_dma_rx_frame(r->d, 1, frame, 100, 0));
    g_assert_cmpint(ndp_dma_queue_error(r->d, NDP_RX, 1), ==, NDP_ERR_DATA);

    /* headers outside */
    ring_init(&g, NDP_RX, 2, 64, 4096, MEM_BASE + 0x300000);
    ring_start(r, &g);
    wr(r, NDP_RX, 2, NDP_REG_HDR_BASE, MEM_BASE + MEM_SIZE - 2, 8);
    ring_post(r, &g, buf_addr(&g, 0), 4096, 0, false);
    flush_sdp(r, &g);
    g_assert_false(ndp_dma_rx_frame(r->d, 2, frame, 100, 0));
    g_assert_cmpint(ndp_dma_queue_error(r->d, NDP_RX, 2), ==,
                    NDP_ERR_HDR_WRITE);

    /* the update buffer outside: TX halts after its frame */
    ring_init(&g, NDP_TX, 3, 64, 4096, MEM_BASE + 0x400000);
    ring_start(r, &g);
    wr(r, NDP_TX, 3, NDP_REG_UPDATE_BASE, 8, 8);
    ring_post(r, &g, buf_addr(&g, 0), 64, 0, false);
    flush_sdp(r, &g);
    g_assert_cmpint(ndp_dma_queue_error(r->d, NDP_TX, 3), ==,
                    NDP_ERR_UPDATE_WRITE);
    g_assert_cmpuint(rd(r, NDP_TX, 3, NDP_REG_STATUS, 4), ==, 0);

    /* TX data outside, at the top of the address space */
    ring_init(&g, NDP_TX, 2, 64, 4096, MEM_BASE + 0x500000);
    ring_start(r, &g);
    ring_post(r, &g, 0xFFFFFFFFFFFFFF80ull, 0x100, 0, false);
    flush_sdp(r, &g);
    g_assert_cmpint(ndp_dma_queue_error(r->d, NDP_TX, 2), ==, NDP_ERR_DATA);
    g_assert_cmpuint(counter(r, NDP_TX, 2, NDP_REG_CNT_PKTS), ==, 0);

    /* a new START clears the error */
    ring_init(&g, NDP_TX, 2, 64, 4096, MEM_BASE + 0x500000);
    ring_start(r, &g);
    g_assert_cmpint(ndp_dma_queue_error(r->d, NDP_TX, 2), ==, NDP_ERR_NONE);
    rig_free(r);
}

/*
 * A queue started with nothing configured (masks 0, bases 0): frames are
 * discarded, nothing is read or written; a STOP of a queue never started
 * writes no update buffer.
 */
static void test_half_configured(void)
{
    Rig *r = rig_new(1, 1);
    uint8_t frame[64] = { 0 };

    wr(r, NDP_RX, 0, NDP_REG_CONTROL, 0, 4);
    wr(r, NDP_TX, 0, NDP_REG_CONTROL, 0, 4);
    wr(r, NDP_RX, 0, NDP_REG_CONTROL, 1, 4);
    wr(r, NDP_TX, 0, NDP_REG_CONTROL, 1, 4);
    wr(r, NDP_TX, 0, NDP_REG_SDP, 0xFFFF, 4);
    g_assert_false(ndp_dma_rx_frame(r->d, 0, frame, 64, 0));
    g_assert_cmpuint(r->host.reads + r->host.writes + r->host.refused, ==, 0);
    /* ring overrun: SDP far past the ring is taken modulo the mask */
    wr(r, NDP_TX, 0, NDP_REG_MDP, 7, 4);
    wr(r, NDP_TX, 0, NDP_REG_DESC_BASE, MEM_BASE, 8);
    wr(r, NDP_TX, 0, NDP_REG_UPDATE_BASE, MEM_BASE + 0x1000, 8);
    wr(r, NDP_TX, 0, NDP_REG_SDP, 0x1235, 4);
    /* zeroed descriptors are type 0: consumed, nothing sent */
    g_assert_cmpuint(rd(r, NDP_TX, 0, NDP_REG_HDP, 4), ==, 0);
    wr(r, NDP_TX, 0, NDP_REG_CONTROL, 0, 4);
    g_assert_cmpuint(rd(r, NDP_TX, 0, NDP_REG_HDP, 4), ==, 5);
    g_assert_cmpuint(counter(r, NDP_TX, 0, NDP_REG_CNT_PKTS), ==, 0);
    rig_free(r);
}

/*
 * Headers of one call's frames go out in runs of consecutive ring slots:
 * a run that does not fit in host memory halts the queue and its frames
 * count as discarded, not passed.
 */
static void test_header_runs(void)
{
    Rig *r = rig_new(1, 1);
    Ring g;

    ring_init(&g, NDP_RX, 0, 64, 2048, MEM_BASE + 0x100000);
    /* the header ring's slots 0 and 1 fit, slot 2 does not */
    g.hdr = MEM_BASE + MEM_SIZE - 8;
    ring_start(r, &g);
    for (unsigned i = 0; i < 10; i++) {
        ring_post(r, &g, buf_addr(&g, i), 2048, 0, false);
    }
    flush_sdp(r, &g);
    ndp_gls_write(r->d, 0, NDP_GLS_MUX_C, 1, 4, r->now);
    ndp_gls_write(r->d, 0, NDP_GLS_GEN_RX + NDP_GEN_CHANNEL_INCR, 0x10000, 4,
                  r->now);
    ndp_gls_write(r->d, 0, NDP_GLS_GEN_RX + NDP_GEN_CONTROL, 1, 4, r->now);
    /* 3 frames of one cycle in one run: one write of 12 bytes, refused */
    r->now += 15;
    ndp_dma_run(r->d, r->now);
    g_assert_cmpint(ndp_dma_queue_error(r->d, NDP_RX, 0), ==,
                    NDP_ERR_HDR_WRITE);
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_PKTS), ==, 0);
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_DISC_PKTS), ==, 3);
    g_assert_cmpuint(counter(r, NDP_RX, 0, NDP_REG_CNT_DISC_BYTES), ==,
                     3 * 60);
    g_assert_cmpuint(r->host.xfers[NDP_XFER_HDR_WRITE], ==, 0);
    rig_free(r);
}

/* ---- the generator ------------------------------------------------ */

static void gls(Rig *r, unsigned port, uint32_t off, uint32_t v)
{
    ndp_gls_write(r->d, port, off, v, 4, r->now);
}

static uint32_t gls_rd(Rig *r, unsigned port, uint32_t off)
{
    return ndp_gls_read(r->d, port, off, 4, r->now);
}

static void test_gls_registers(void)
{
    Rig *r = rig_new(2, 1);

    /* reset values of the generators as the firmware has them */
    g_assert_cmphex(gls_rd(r, 1, NDP_GLS_GEN_RX + NDP_GEN_LENGTH), ==, 60);
    g_assert_cmphex(gls_rd(r, 1, NDP_GLS_GEN_RX + NDP_GEN_CHANNEL_INCR), ==,
                    0x00010001);
    g_assert_cmphex(gls_rd(r, 1, NDP_GLS_GEN_TX + NDP_GEN_CHANNEL_MINMAX), ==,
                    0xFFFF0000);
    g_assert_cmphex(gls_rd(r, 0, NDP_GLS_GEN_RX + NDP_GEN_SRC_MAC_LOW), ==,
                    0x60171100);
    /* muxes keep their implemented bits */
    gls(r, 1, NDP_GLS_MUX_C, 0xFF);
    gls(r, 1, NDP_GLS_MUX_A, 0xFF);
    g_assert_cmphex(gls_rd(r, 1, NDP_GLS_MUX_C), ==, 3);
    g_assert_cmphex(gls_rd(r, 1, NDP_GLS_MUX_A), ==, 1);
    g_assert_cmphex(gls_rd(r, 0, NDP_GLS_MUX_C), ==, 0);
    g_assert_cmphex(gls_rd(r, 0, 0x20), ==, 0xDEAD1440);
    /* speed meters read as done */
    g_assert_cmphex(gls_rd(r, 0, 0x44) & 1, ==, 1);
    g_assert_cmphex(gls_rd(r, 0, 0x1F0), ==, 0);
    /* enable: busy follows; disable */
    gls(r, 0, NDP_GLS_GEN_TX + NDP_GEN_CONTROL, 1);
    g_assert_cmphex(gls_rd(r, 0, NDP_GLS_GEN_TX + NDP_GEN_CONTROL), ==, 3);
    gls(r, 0, NDP_GLS_GEN_TX + NDP_GEN_CONTROL, 0);
    g_assert_cmphex(gls_rd(r, 0, NDP_GLS_GEN_TX + NDP_GEN_CONTROL), ==, 0);
    /* a reset of the card brings the defaults back */
    ndp_dma_reset(r->d);
    g_assert_cmphex(gls_rd(r, 1, NDP_GLS_MUX_C), ==, 0);
    rig_free(r);
}

/* frames a generator of `len` bytes makes in ns, by the documented rule */
static uint64_t frames_in(uint64_t ns, uint32_t len)
{
    uint64_t cycles = ns * (DMA_HZ / 1000000) / 1000;
    uint64_t per_frame = (len + BUS_BYTES - 1) / BUS_BYTES;

    return cycles / per_frame;
}

static void test_generator(void)
{
    Rig *r = rig_new(1, 4);
    Ring g[4];
    unsigned posted = 100;
    uint64_t made, total = 0;

    for (unsigned q = 0; q < 4; q++) {
        ring_init(&g[q], NDP_RX, q, 1024, 4096,
                  MEM_BASE + 0x100000 + q * 0x600000);
        ring_start(r, &g[q]);
        for (unsigned i = 0; i < posted; i++) {
            ring_post(r, &g[q], buf_addr(&g[q], i), 4096, 0, false);
        }
        flush_sdp(r, &g[q]);
    }
    /* mode "dma_rx" of gls_mod.py: generator to DMA RX, channels 0..3 */
    gls(r, 0, NDP_GLS_MUX_C, 1);
    gls(r, 0, NDP_GLS_GEN_RX + NDP_GEN_LENGTH, 124);
    gls(r, 0, NDP_GLS_GEN_RX + NDP_GEN_CHANNEL_MINMAX, 3 << 16);
    gls(r, 0, NDP_GLS_GEN_RX + NDP_GEN_CHANNEL_INCR, 0x10001);
    r->now = 1000;
    gls(r, 0, NDP_GLS_GEN_RX + NDP_GEN_CONTROL, 1);
    /* 1 us: 100 frames of two cycles */
    r->now += 1000;
    r->host.xfers[NDP_XFER_HDR_WRITE] = 0;
    g_assert_cmpint(ndp_dma_run(r->d, r->now), <, INT64_MAX);
    made = frames_in(1000, 124);
    g_assert_cmpuint(made, ==, 100);
    /* each queue's 25 headers in runs of at most 16: two writes each */
    g_assert_cmpuint(r->host.xfers[NDP_XFER_HDR_WRITE], ==, 4 * 2);
    g_assert_cmpuint(r->host.xfer_bytes[NDP_XFER_HDR_WRITE], ==, 100 * 4);
    g_assert_cmpuint(gls_rd(r, 0, NDP_GLS_GEN_RX + NDP_GEN_CNT_LOW), ==, made);
    for (unsigned q = 0; q < 4; q++) {
        uint32_t h = get32(r, g[q].hdr);
        const uint8_t *f = at(r, buf_addr(&g[q], 0));

        g_assert_cmpuint(counter(r, NDP_RX, q, NDP_REG_CNT_PKTS), ==, 25);
        /* the generator's frame: MACs, EtherType 0x88B5, HDR_META 0x400 */
        g_assert_cmpuint(h & 0xFFFF, ==, 124);
        g_assert_cmpuint((h >> 24) & 0xF, ==, 4);
        g_assert_cmphex(f[0], ==, 0xFF);
        g_assert_cmphex(f[6], ==, 0x00);
        g_assert_cmphex(f[7], ==, 0x11);
        g_assert_cmphex(f[8], ==, 0x17);
        g_assert_cmphex(f[9], ==, 0x60);
        g_assert_cmphex(f[12], ==, 0x88);
        g_assert_cmphex(f[13], ==, 0xB5);
        g_assert_cmphex(f[20], ==, 0);
    }
    /* a virtual second more: the rings fill, the rest is discarded */
    r->now += 1000000000;
    ndp_dma_run(r->d, r->now);
    made = frames_in(1000001000, 124) - frames_in(1000, 124);
    g_assert_cmpuint(made, ==, 100000000);
    made += frames_in(1000, 124);       /* all of them since the start */
    for (unsigned q = 0; q < 4; q++) {
        uint64_t pass = counter(r, NDP_RX, q, NDP_REG_CNT_PKTS);
        uint64_t drop = counter(r, NDP_RX, q, NDP_REG_CNT_DISC_PKTS);

        g_assert_cmpuint(pass, ==, posted);
        /* the channels take turns: a quarter each */
        g_assert_cmpuint(pass + drop, ==, made / 4);
        g_assert_cmpuint(counter(r, NDP_RX, q, NDP_REG_CNT_DISC_BYTES), ==,
                         drop * 124);
        total += pass + drop;
    }
    g_assert_cmpuint(total, ==, made);
    g_assert_cmpuint(gls_rd(r, 0, NDP_GLS_GEN_RX + NDP_GEN_CNT_LOW) |
                     (uint64_t)gls_rd(r, 0, NDP_GLS_GEN_RX + NDP_GEN_CNT_HIGH)
                     << 32, ==, made);
    /* stopped: no more frames, no timer needed */
    gls(r, 0, NDP_GLS_GEN_RX + NDP_GEN_CONTROL, NDP_GEN_CTRL_CLEAR);
    g_assert_cmpint(ndp_dma_run(r->d, r->now + 5000), ==, INT64_MAX);
    g_assert_cmpuint(gls_rd(r, 0, NDP_GLS_GEN_RX + NDP_GEN_CNT_LOW), ==, 0);
    rig_free(r);
}

/*
 * Bulk counting equals frame by frame: runs of many lengths on a card
 * whose generator sends bursts of 3 to channels 1..6 of 8 queues, one
 * stopped; the same frames run in 1 ns steps and at once.
 */
static void test_generator_bulk(void)
{
    Rig *a = rig_new(1, 8), *b = rig_new(1, 8);
    Rig *rigs[2] = { a, b };

    for (unsigned k = 0; k < 2; k++) {
        Rig *r = rigs[k];

        for (unsigned q = 0; q < 8; q++) {
            Ring g;

            if (q == 4) {
                continue;       /* stopped: everything to it is discarded */
            }
            ring_init(&g, NDP_RX, q, 64, 2048,
                      MEM_BASE + 0x100000 + q * 0x100000);
            ring_start(r, &g);
            for (unsigned i = 0; i < 5 + q; i++) {
                ring_post(r, &g, buf_addr(&g, i), 2048, 0, false);
            }
            flush_sdp(r, &g);
        }
        gls(r, 0, NDP_GLS_MUX_C, 1);
        gls(r, 0, NDP_GLS_GEN_RX + NDP_GEN_CHANNEL_MINMAX, 6 << 16 | 1);
        gls(r, 0, NDP_GLS_GEN_RX + NDP_GEN_CHANNEL_INCR, 3 << 16 | 1);
        gls(r, 0, NDP_GLS_GEN_RX + NDP_GEN_LENGTH, 64);
        gls(r, 0, NDP_GLS_GEN_RX + NDP_GEN_CONTROL, 1);
    }
    for (int64_t t = 1; t <= 3000; t++) {
        ndp_dma_run(a->d, t);
    }
    ndp_dma_run(b->d, 3000);
    for (unsigned q = 0; q < 8; q++) {
        for (uint32_t off = NDP_REG_CNT_PKTS; off < NDP_CTRL_SIZE; off += 8) {
            g_assert_cmpuint(counter(a, NDP_RX, q, off), ==,
                             counter(b, NDP_RX, q, off));
        }
    }
    /* channel 0 only at the start (the sequence starts there), 7 never */
    g_assert_cmpuint(counter(a, NDP_RX, 0, NDP_REG_CNT_PKTS) +
                     counter(a, NDP_RX, 0, NDP_REG_CNT_DISC_PKTS), ==, 3);
    g_assert_cmpuint(counter(a, NDP_RX, 7, NDP_REG_CNT_PKTS) +
                     counter(a, NDP_RX, 7, NDP_REG_CNT_DISC_PKTS), ==, 0);
    g_assert_cmpuint(counter(a, NDP_RX, 4, NDP_REG_CNT_PKTS), ==, 0);
    g_assert_cmpuint(counter(a, NDP_RX, 4, NDP_REG_CNT_DISC_PKTS), >, 0);
    g_assert_cmpmem(a->host.mem, MEM_SIZE, b->host.mem, MEM_SIZE);
    rig_free(a);
    rig_free(b);
}

/* ---- migration ---------------------------------------------------- */

static void test_migration(void)
{
    Rig *a = rig_new(1, 2), *b = rig_new(1, 2), *c;
    Ring rx, tx;
    size_t len;
    void *st;
    char *err;

    ndp_gls_write(a->d, 0, NDP_GLS_MUX_A, 1, 4, 0);
    ring_init(&rx, NDP_RX, 0, 64, 4096, MEM_BASE + 0x100000);
    ring_init(&tx, NDP_TX, 0, 64, 4096, MEM_BASE + 0x800000);
    ring_start(a, &tx);
    ring_start(a, &rx);
    for (unsigned i = 0; i < 20; i++) {
        ring_post(a, &rx, buf_addr(&rx, i), 4096, 0, false);
    }
    flush_sdp(a, &rx);
    for (unsigned i = 0; i < 5; i++) {
        fill_pattern(at(a, buf_addr(&tx, i)), 100 + i, i);
        ring_post(a, &tx, buf_addr(&tx, i), 100 + i, 0, false);
    }
    flush_sdp(a, &tx);
    gls(a, 0, NDP_GLS_GEN_RX + NDP_GEN_LENGTH, 300);
    gls(a, 0, NDP_GLS_GEN_RX + NDP_GEN_CONTROL, 1);
    a->now = 777;
    ndp_dma_run(a->d, a->now);

    /* mid-transfer: the state and memory go to b */
    st = ndp_dma_save(a->d, &len);
    memcpy(b->host.mem, a->host.mem, MEM_SIZE);
    err = ndp_dma_load(b->d, st, len);
    g_assert_null(err);
    b->now = a->now;
    for (unsigned k = 0; k < 2; k++) {
        Rig *r = k ? b : a;
        Ring t2 = tx;

        for (unsigned i = 5; i < 9; i++) {
            fill_pattern(at(r, buf_addr(&t2, i)), 200 + i, i);
            ring_post(r, &t2, buf_addr(&t2, i), 200 + i, 0, false);
        }
        flush_sdp(r, &t2);
        r->now += 50000;
        ndp_dma_run(r->d, r->now);
    }
    for (unsigned dir = 0; dir < 2; dir++) {
        for (unsigned q = 0; q < 2; q++) {
            for (uint32_t off = 0; off < NDP_CTRL_SIZE; off += 4) {
                g_assert_cmphex(rd(a, dir, q, off, 4), ==, rd(b, dir, q, off, 4));
            }
        }
    }
    g_assert_cmpuint(gls_rd(a, 0, NDP_GLS_GEN_RX + NDP_GEN_CNT_LOW), ==,
                     gls_rd(b, 0, NDP_GLS_GEN_RX + NDP_GEN_CNT_LOW));
    g_assert_cmpmem(a->host.mem, MEM_SIZE, b->host.mem, MEM_SIZE);

    /* bad states are refused and change nothing */
    c = rig_new(1, 3);
    err = ndp_dma_load(c->d, st, len);
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(err, "dma-queues"));
    g_free(err);
    err = ndp_dma_load(b->d, st, len - 1);
    g_assert_nonnull(err);
    g_free(err);
    ((uint8_t *)st)[24 + 8 * 2] = 0xFF;         /* rx0 SDP out of range */
    ((uint8_t *)st)[24 + 8 * 2 + 2] = 0x01;
    err = ndp_dma_load(b->d, st, len);
    g_assert_nonnull(err);
    g_free(err);
    g_assert_cmphex(rd(b, NDP_RX, 0, NDP_REG_SDP, 4), ==, rx.sdp);
    g_free(st);
    rig_free(a);
    rig_free(b);
    rig_free(c);
}

/*
 * A pointer mask with holes (0xF9) is taken as the mask that covers it
 * (0xFF) and reads back so: a TX ring posted under it is sent to SDP
 * (with the mask as written, HDP + 2 & 0xF9 would stay at 0 for ever).
 */
static void test_mask_holes(void)
{
    Rig *r = rig_new(1, 1);
    Ring tx;

    ring_init(&tx, NDP_TX, 0, 256, 4096, MEM_BASE + 0x800000);
    ring_start(r, &tx);
    wr(r, NDP_TX, 0, NDP_REG_MDP, 0xF9, 4);
    wr(r, NDP_TX, 0, NDP_REG_MHP, 0x0102, 4);
    g_assert_cmphex(rd(r, NDP_TX, 0, NDP_REG_MDP, 4), ==, 0xFF);
    g_assert_cmphex(rd(r, NDP_TX, 0, NDP_REG_MHP, 4), ==, 0x1FF);
    for (unsigned i = 0; i < 100; i++) {
        ring_post(r, &tx, buf_addr(&tx, i), 64, 0, false);
    }
    flush_sdp(r, &tx);
    g_assert_cmpuint(rd(r, NDP_TX, 0, NDP_REG_HDP, 4), ==, tx.sdp & 0xFF);
    g_assert_cmpuint(counter(r, NDP_TX, 0, NDP_REG_CNT_PKTS), ==, 100);
    rig_free(r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ndp/registers", test_registers);
    g_test_add_func("/ndp/mask-holes", test_mask_holes);
    g_test_add_func("/ndp/rx", test_rx);
    g_test_add_func("/ndp/rx-full", test_rx_full);
    g_test_add_func("/ndp/rx-chain", test_rx_chain);
    g_test_add_func("/ndp/tx-loopback", test_tx_loopback);
    g_test_add_func("/ndp/tx-stop", test_tx_stop);
    g_test_add_func("/ndp/counter-commands", test_counter_commands);
    g_test_add_func("/ndp/bad-addresses", test_bad_addresses);
    g_test_add_func("/ndp/half-configured", test_half_configured);
    g_test_add_func("/ndp/header-runs", test_header_runs);
    g_test_add_func("/ndp/gls-registers", test_gls_registers);
    g_test_add_func("/ndp/generator", test_generator);
    g_test_add_func("/ndp/generator-bulk", test_generator_bulk);
    g_test_add_func("/ndp/migration", test_migration);
    return g_test_run();
}
