/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The card's NDK DMA engine through QEMU: its nodes in the device tree as
 * the nfb driver and libnfb find them, the BAR that holds it, queues
 * driven as the driver drives them with rings in guest memory (the libqos
 * allocator), the loopback and the RX generator against the documented
 * rule, bus mastering off, a system reset mid-transfer, a migration
 * mid-transfer against an unmigrated twin, and properties refused.
 */
#include "ndk-common.h"
#include "tests/qtest/libqos/malloc-pc.h"
#include <libfdt.h>

#include "ndp-dma.h"

#define DMA_ARGS  "-m 256M -device ndk-pcie-telemetry,addr=04.0,dma-queues=2"
#define DMA_BAR   (32u << 20)   /* holds the engine at 0x01000000.. */

typedef struct Ring {
    NdpDir dir;
    unsigned q;
    unsigned n;
    uint32_t buf_size;
    uint64_t desc, hdr, upd, buf;
    uint32_t sdp;
    uint64_t last_upper;
} Ring;

static uint64_t reg(Ndk *n, NdpDir dir, unsigned q, uint32_t off)
{
    return n->t->bar.addr + (dir ? NDP_BAR_TX_BASE : NDP_BAR_RX_BASE) +
           q * NDP_CTRL_SIZE + off;
}

static uint32_t qrd(Ndk *n, NdpDir dir, unsigned q, uint32_t off)
{
    return qtest_readl(n->t->qts, reg(n, dir, q, off));
}

static void qwr(Ndk *n, NdpDir dir, unsigned q, uint32_t off, uint32_t v)
{
    qtest_writel(n->t->qts, reg(n, dir, q, off), v);
}

static void qwrq(Ndk *n, NdpDir dir, unsigned q, uint32_t off, uint64_t v)
{
    qtest_writeq(n->t->qts, reg(n, dir, q, off), v);
}

static uint32_t gls_rd(Ndk *n, uint32_t off)
{
    return qtest_readl(n->t->qts, n->t->bar.addr + NDP_BAR_GLS_BASE + off);
}

static void gls_wr(Ndk *n, uint32_t off, uint32_t v)
{
    qtest_writel(n->t->qts, n->t->bar.addr + NDP_BAR_GLS_BASE + off, v);
}

static uint64_t cnt_read(Ndk *n, NdpDir dir, unsigned q, uint32_t off)
{
    qwr(n, dir, q, NDP_REG_CNT_PKTS, NDP_CNT_CMD_STROBE);
    return qtest_readq(n->t->qts, reg(n, dir, q, off));
}

static uint32_t mem32(Ndk *n, uint64_t addr)
{
    return qtest_readl(n->t->qts, addr);
}

/* Rings in guest memory from the allocator: 64-byte aligned buffers. */
static void ring_alloc(Ndk *n, QGuestAllocator *a, Ring *g, NdpDir dir,
                       unsigned q, unsigned entries, uint32_t buf_size)
{
    memset(g, 0, sizeof(*g));
    g->dir = dir;
    g->q = q;
    g->n = entries;
    g->buf_size = buf_size;
    g->desc = guest_alloc(a, entries * 8);
    g->hdr = guest_alloc(a, entries * 4);
    g->upd = guest_alloc(a, 8);
    g->buf = guest_alloc(a, (uint64_t)entries * buf_size + 128) +
             64 * (q + 1);
    g->last_upper = UINT64_MAX;
    qtest_memset(n->t->qts, g->upd, 0, 8);
}

/* nc_ndp_ctrl_start: bases, the mask probe, masks, pointers, START */
static void ring_start(Ndk *n, Ring *g)
{
    uint64_t probe;

    g_assert_cmpuint(qrd(n, g->dir, g->q, NDP_REG_STATUS) & 1, ==, 0);
    qwrq(n, g->dir, g->q, NDP_REG_DESC_BASE, g->desc);
    qwrq(n, g->dir, g->q, NDP_REG_UPDATE_BASE, g->upd);
    if (g->dir == NDP_RX) {
        qwrq(n, g->dir, g->q, NDP_REG_HDR_BASE, g->hdr);
    }
    qwrq(n, g->dir, g->q, NDP_REG_MDP, ~0ull);
    probe = qtest_readq(n->t->qts, reg(n, g->dir, g->q, NDP_REG_MDP));
    g_assert_cmpuint((uint32_t)probe >> 1, >=, g->n - 1);
    qwr(n, g->dir, g->q, NDP_REG_MDP, g->n - 1);
    qwr(n, g->dir, g->q, NDP_REG_MHP, g->n - 1);
    qwrq(n, g->dir, g->q, NDP_REG_SDP, 0);
    qwr(n, g->dir, g->q, NDP_REG_TIMEOUT, NDP_TIMEOUT_DEFAULT);
    qwr(n, g->dir, g->q, NDP_REG_CONTROL, 1);
    g_assert_cmpuint(qrd(n, g->dir, g->q, NDP_REG_STATUS), ==, 1);
}

static void put_desc(Ndk *n, Ring *g, uint64_t d)
{
    qtest_writeq(n->t->qts, g->desc + (g->sdp & (g->n - 1)) * 8, d);
    g->sdp++;
}

static void ring_post(Ndk *n, Ring *g, uint64_t addr, uint32_t len)
{
    if (addr >> 30 != g->last_upper) {
        put_desc(n, g, addr >> 30);
        g->last_upper = addr >> 30;
    }
    put_desc(n, g, 2ull << 62 | (uint64_t)len << 32 | (addr & 0x3FFFFFFF));
}

static uint64_t buf_addr(const Ring *g, unsigned i)
{
    return g->buf + (uint64_t)i * g->buf_size;
}

static void flush_sdp(Ndk *n, Ring *g)
{
    qwr(n, g->dir, g->q, NDP_REG_SDP, g->sdp & (g->n - 1));
}

static void pattern(uint8_t *p, uint32_t len, unsigned seed)
{
    for (uint32_t i = 0; i < len; i++) {
        p[i] = (uint8_t)(i * 3 + seed * 11 + 5);
    }
}

static void open_dma(Ndk *n, QGuestAllocator *a, const char *args)
{
    ndk_open_sized(n, "q35", DMA_BAR, args);
    pc_alloc_init(a, n->t->qts, ALLOC_NO_FLAGS);
}

/* ---- the device tree ---------------------------------------------- */

static uint32_t fdt_u32(const void *fdt, int node, const char *name)
{
    int len;
    const fdt32_t *p = fdt_getprop(fdt, node, name, &len);

    g_assert_nonnull(p);
    g_assert_cmpint(len, >=, 4);
    return fdt32_to_cpu(p[0]);
}

static void test_devtree(void)
{
    Ndk n;
    QGuestAllocator a;
    g_autofree void *fdt = NULL;
    size_t size;
    int node, count = 0;

    open_dma(&n, &a, DMA_ARGS);
    fdt = qndk_devtree(n.t, &size);
    g_assert_nonnull(fdt);
    /* queues in tree order, each with what libnfb and the driver read */
    for (unsigned dir = 0; dir < 2; dir++) {
        const char *compat = dir ? "netcope,dma_ctrl_ndp_tx"
                                 : "netcope,dma_ctrl_ndp_rx";
        uint32_t base = dir ? NDP_BAR_TX_BASE : NDP_BAR_RX_BASE;
        unsigned q = 0;

        for (node = fdt_node_offset_by_compatible(fdt, -1, compat);
             node >= 0;
             node = fdt_node_offset_by_compatible(fdt, node, compat)) {
            int params;
            const fdt32_t *r = fdt_getprop(fdt, node, "reg", NULL);

            g_assert_nonnull(r);
            g_assert_cmphex(fdt32_to_cpu(r[0]), ==, base + q * 0x80);
            g_assert_cmphex(fdt32_to_cpu(r[1]), ==, 0x80);
            g_assert_cmphex(fdt_u32(fdt, node, "version"), <, 0x30000);
            g_assert_cmpuint(fdt_u32(fdt, node, "pcie"), ==, 0);
            params = fdt_node_offset_by_phandle(fdt,
                                                fdt_u32(fdt, node, "params"));
            g_assert_cmpint(params, >=, 0);
            g_assert_cmpuint(fdt_u32(fdt, params, "frame_size_min"), ==, 60);
            g_assert_cmpuint(fdt_u32(fdt, params, "frame_size_max"), ==,
                             0x3FFF);
            q++;
            count++;
        }
        g_assert_cmpuint(q, ==, 2);
    }
    /* the switch where gls_mod.py looks, with its generators */
    node = fdt_path_offset(fdt, "/firmware/mi_bus0/dbg_gls0");
    g_assert_cmpint(node, >=, 0);
    g_assert_cmpstr(fdt_getprop(fdt, node, "compatible", NULL), ==,
                    "cesnet,ofm,gen_loop_switch");
    node = fdt_path_offset(fdt, "/firmware/mi_bus0/dbg_gls0/mfb_gen2dma");
    g_assert_cmpint(node, >=, 0);
    g_assert_cmphex(fdt_u32(fdt, node, "reg"), ==, NDP_BAR_GLS_BASE + 0x80);
    g_assert_cmpint(count, ==, 4);
    ndk_close(&n);
}

/* Refused: too many queues, the block on top of the engine. */
static void test_bad_props(void)
{
    expect_refused("dma-queues=65", "dma-queues");
    expect_refused("dma-queues=17,dma-ports=4", "dma-queues");
    expect_refused("dma-queues=1,block-offset=0x1000000", "block-offset");
    expect_refused("dma-queues=1,block-offset=0xff8000", "block-offset");
}

/* ---- queues ------------------------------------------------------- */

/*
 * TX queue 1 sends frames through the switch's loopback into RX queue 1,
 * as ndp-tool loopback-hw expects: same bytes, same lengths, headers,
 * update buffers and counters.
 */
static void test_loopback(void)
{
    Ndk n;
    QGuestAllocator a;
    Ring rx, tx;
    static const uint32_t lens[] = { 60, 64, 1500, 4096, 333 };
    uint8_t frame[4096], got[4096];
    uint64_t bytes = 0;

    open_dma(&n, &a, DMA_ARGS);
    gls_wr(&n, NDP_GLS_MUX_A, 1);
    ring_alloc(&n, &a, &rx, NDP_RX, 1, 64, 4096);
    ring_alloc(&n, &a, &tx, NDP_TX, 1, 64, 4096);
    ring_start(&n, &tx);
    ring_start(&n, &rx);
    for (unsigned i = 0; i < 32; i++) {
        ring_post(&n, &rx, buf_addr(&rx, i), 4096);
    }
    flush_sdp(&n, &rx);
    for (unsigned i = 0; i < G_N_ELEMENTS(lens); i++) {
        pattern(frame, lens[i], i);
        qtest_memwrite(n.t->qts, buf_addr(&tx, i), frame, lens[i]);
        ring_post(&n, &tx, buf_addr(&tx, i), lens[i]);
        bytes += lens[i];
    }
    flush_sdp(&n, &tx);
    g_assert_cmpuint(mem32(&n, tx.upd), ==, tx.sdp);
    for (unsigned i = 0; i < G_N_ELEMENTS(lens); i++) {
        uint32_t h = mem32(&n, rx.hdr + 4 * i);

        pattern(frame, lens[i], i);
        qtest_memread(n.t->qts, buf_addr(&rx, i), got, lens[i]);
        g_assert_cmpmem(got, lens[i], frame, lens[i]);
        g_assert_cmpuint(h & 0xFFFF, ==, lens[i]);
        g_assert_cmpuint(h >> 30, ==, i == 0 ? 2 : 1);
    }
    g_assert_cmpuint(mem32(&n, rx.upd + 4), ==, G_N_ELEMENTS(lens));
    g_assert_cmpuint(mem32(&n, rx.upd), ==, G_N_ELEMENTS(lens) + 1);
    g_assert_cmpuint(cnt_read(&n, NDP_TX, 1, NDP_REG_CNT_PKTS), ==,
                     G_N_ELEMENTS(lens));
    g_assert_cmpuint(cnt_read(&n, NDP_TX, 1, NDP_REG_CNT_BYTES), ==, bytes);
    g_assert_cmpuint(cnt_read(&n, NDP_RX, 1, NDP_REG_CNT_PKTS), ==,
                     G_N_ELEMENTS(lens));
    g_assert_cmpuint(cnt_read(&n, NDP_RX, 1, NDP_REG_CNT_BYTES), ==, bytes);
    /* queue 0 untouched; the block still answers */
    g_assert_cmpuint(cnt_read(&n, NDP_RX, 0, NDP_REG_CNT_PKTS), ==, 0);
    g_assert_cmphex(rd(&n, PTL_REG_MAGIC), ==, PTL_MAGIC);
    /* STOP: TX drained, RUNNING off */
    qwr(&n, NDP_RX, 1, NDP_REG_CONTROL, 0);
    qwr(&n, NDP_TX, 1, NDP_REG_CONTROL, 0);
    g_assert_cmpuint(qrd(&n, NDP_TX, 1, NDP_REG_STATUS), ==, 0);
    g_assert_cmpuint(qrd(&n, NDP_RX, 1, NDP_REG_STATUS), ==, 0);
    alloc_destroy(&a);
    ndk_close(&n);
}

/* frames of len bytes the generator makes in ns (docs/dma.md) */
static uint64_t gen_frames(uint64_t ns, uint32_t len)
{
    uint64_t cycles = ns * (DMA_HZ / 1000000) / 1000;
    /* the DMA side's UP bus of the defaults: 2 regions of 32 bytes */
    uint64_t per_frame = (len + 63) / 64;

    return cycles / per_frame;
}

/*
 * gls_mod.py's mode dma_rx: the generator to DMA RX on both channels,
 * read after 1 ms: every frame made is either in a ring or discarded.
 */
static void test_generator(void)
{
    Ndk n;
    QGuestAllocator a;
    Ring rx[2];
    int64_t t_on;
    uint64_t made, total = 0;

    open_dma(&n, &a, DMA_ARGS);
    for (unsigned q = 0; q < 2; q++) {
        ring_alloc(&n, &a, &rx[q], NDP_RX, q, 256, 2048);
        ring_start(&n, &rx[q]);
        for (unsigned i = 0; i < 200; i++) {
            ring_post(&n, &rx[q], buf_addr(&rx[q], i), 2048);
        }
        flush_sdp(&n, &rx[q]);
    }
    gls_wr(&n, NDP_GLS_MUX_C, 1);
    gls_wr(&n, NDP_GLS_GEN_RX + NDP_GEN_LENGTH, 252);
    gls_wr(&n, NDP_GLS_GEN_RX + NDP_GEN_CHANNEL_MINMAX, 1 << 16);
    gls_wr(&n, NDP_GLS_GEN_RX + NDP_GEN_CHANNEL_INCR, 0x10001);
    step(&n, 1000);
    t_on = n.t->now;
    gls_wr(&n, NDP_GLS_GEN_RX + NDP_GEN_CONTROL, 1);
    g_assert_cmphex(gls_rd(&n, NDP_GLS_GEN_RX + NDP_GEN_CONTROL), ==, 3);
    /* the timer delivers frames without any access */
    step(&n, 150000);
    g_assert_cmpuint(mem32(&n, rx[0].upd + 4), >, 0);
    step(&n, 1000000 - 150000);
    made = gen_frames(n.t->now - t_on, 252);
    g_assert_cmpuint(gls_rd(&n, NDP_GLS_GEN_RX + NDP_GEN_CNT_LOW), ==, made);
    for (unsigned q = 0; q < 2; q++) {
        uint64_t pass = cnt_read(&n, NDP_RX, q, NDP_REG_CNT_PKTS);
        uint64_t drop = cnt_read(&n, NDP_RX, q, NDP_REG_CNT_DISC_PKTS);
        uint32_t h = mem32(&n, rx[q].hdr);
        uint8_t f[16];

        g_assert_cmpuint(pass, ==, 200);
        g_assert_cmpuint(pass + drop, ==, made / 2 + (q == 0 ? made % 2 : 0));
        g_assert_cmpuint(h & 0xFFFF, ==, 252);
        qtest_memread(n.t->qts, buf_addr(&rx[q], 0), f, sizeof(f));
        g_assert_cmphex(f[12], ==, 0x88);
        g_assert_cmphex(f[13], ==, 0xB5);
        total += pass + drop;
    }
    g_assert_cmpuint(total, ==, made);
    gls_wr(&n, NDP_GLS_GEN_RX + NDP_GEN_CONTROL, 0);
    step(&n, 1000000);
    g_assert_cmpuint(gls_rd(&n, NDP_GLS_GEN_RX + NDP_GEN_CNT_LOW), ==, made);
    alloc_destroy(&a);
    ndk_close(&n);
}

/*
 * Bus mastering off: the engine's reads and writes go nowhere, the queue
 * halts, and guest memory keeps what it had.
 */
static void test_no_bus_master(void)
{
    Ndk n;
    QGuestAllocator a;
    Ring tx;
    uint16_t cmd;

    open_dma(&n, &a, DMA_ARGS);
    ring_alloc(&n, &a, &tx, NDP_TX, 0, 64, 4096);
    ring_start(&n, &tx);
    cmd = qpci_config_readw(n.t->dev, PCI_COMMAND);
    qpci_config_writew(n.t->dev, PCI_COMMAND, cmd & ~PCI_COMMAND_MASTER);
    qtest_writel(n.t->qts, tx.upd, 0xDEADBEEF);
    ring_post(&n, &tx, buf_addr(&tx, 0), 100);
    flush_sdp(&n, &tx);
    g_assert_cmpuint(qrd(&n, NDP_TX, 0, NDP_REG_STATUS), ==, 0);
    g_assert_cmphex(mem32(&n, tx.upd), ==, 0xDEADBEEF);
    g_assert_cmpuint(cnt_read(&n, NDP_TX, 0, NDP_REG_CNT_PKTS), ==, 0);
    alloc_destroy(&a);
    ndk_close(&n);
}

/*
 * A system reset mid-transfer stops every queue and generator: after it
 * the engine writes nothing, however long the clock runs.
 */
static void test_reset(void)
{
    Ndk n;
    QGuestAllocator a;
    Ring rx;

    open_dma(&n, &a, DMA_ARGS);
    ring_alloc(&n, &a, &rx, NDP_RX, 0, 256, 2048);
    ring_start(&n, &rx);
    for (unsigned i = 0; i < 100; i++) {
        ring_post(&n, &rx, buf_addr(&rx, i), 2048);
    }
    flush_sdp(&n, &rx);
    gls_wr(&n, NDP_GLS_MUX_C, 1);
    gls_wr(&n, NDP_GLS_GEN_RX + NDP_GEN_CHANNEL_INCR, 0x10000);
    gls_wr(&n, NDP_GLS_GEN_RX + NDP_GEN_CONTROL, 1);
    step(&n, 150000);
    g_assert_cmpuint(mem32(&n, rx.upd + 4), ==, 100);
    qtest_system_reset(n.t->qts);
    qtest_writel(n.t->qts, rx.upd, 0xDEADBEEF);
    qtest_writel(n.t->qts, rx.upd + 4, 0xDEADBEEF);
    qtest_writel(n.t->qts, rx.hdr + 4 * 100, 0xDEADBEEF);
    step(&n, 2000000);
    g_assert_cmphex(mem32(&n, rx.upd), ==, 0xDEADBEEF);
    g_assert_cmphex(mem32(&n, rx.upd + 4), ==, 0xDEADBEEF);
    g_assert_cmphex(mem32(&n, rx.hdr + 4 * 100), ==, 0xDEADBEEF);
    /* the reset cleared BAR0 and the command register: assign them again */
    qpci_config_writel(n.t->dev, PCI_BASE_ADDRESS_0, n.t->bar.addr);
    qpci_device_enable(n.t->dev);
    g_assert_cmphex(rd(&n, PTL_REG_MAGIC), ==, PTL_MAGIC);
    g_assert_cmpuint(qrd(&n, NDP_RX, 0, NDP_REG_STATUS), ==, 0);
    g_assert_cmpuint(qrd(&n, NDP_RX, 0, NDP_REG_SDP), ==, 0);
    g_assert_cmpuint(qrd(&n, NDP_RX, 0, NDP_REG_DESC_BASE), ==, 0);
    g_assert_cmpuint(gls_rd(&n, NDP_GLS_GEN_RX + NDP_GEN_CONTROL), ==, 0);
    g_assert_cmpuint(gls_rd(&n, NDP_GLS_MUX_C), ==, 0);
    alloc_destroy(&a);
    ndk_close(&n);
}

/* ACPI PCI hot-plug's eject register of the pc machine */
#define PC_ACPI_PCIHP_EJ        0xae08

/*
 * Hot-unplug with the RX generator running and descriptors just posted
 * (its next tick would fill them): after the eject nothing is written.
 */
static void test_unplug(void)
{
    Ndk n;
    QGuestAllocator a;
    Ring rx;

    ndk_open_sized(&n, "pc", DMA_BAR,
                   "-m 256M -device ndk-pcie-telemetry,id=ndk0,addr=04.0,"
                   "dma-queues=1");
    pc_alloc_init(&a, n.t->qts, ALLOC_NO_FLAGS);
    ring_alloc(&n, &a, &rx, NDP_RX, 0, 256, 2048);
    ring_start(&n, &rx);
    gls_wr(&n, NDP_GLS_MUX_C, 1);
    gls_wr(&n, NDP_GLS_GEN_RX + NDP_GEN_CONTROL, 1);
    step(&n, 150000);
    g_assert_cmpuint(cnt_read(&n, NDP_RX, 0, NDP_REG_CNT_DISC_PKTS), >, 0);
    for (unsigned i = 0; i < 100; i++) {
        ring_post(&n, &rx, buf_addr(&rx, i), 2048);
    }
    flush_sdp(&n, &rx);
    qtest_writel(n.t->qts, rx.upd + 4, 0xDEADBEEF);
    qtest_writel(n.t->qts, rx.hdr, 0xDEADBEEF);
    qtest_qmp_device_del_send(n.t->qts, "ndk0");
    qtest_outl(n.t->qts, PC_ACPI_PCIHP_EJ, 1 << (n.t->dev->devfn >> 3));
    qtest_qmp_eventwait(n.t->qts, "DEVICE_DELETED");
    step(&n, 2000000);
    g_assert_cmphex(mem32(&n, rx.upd + 4), ==, 0xDEADBEEF);
    g_assert_cmphex(mem32(&n, rx.hdr), ==, 0xDEADBEEF);
    alloc_destroy(&a);
    ndk_close(&n);
}

/* ---- the telemetry of the engine's own transfers ------------------- */

/* Expected counts of one bus, by the rule of docs/dma.md */
typedef struct BusExp {
    uint64_t words, sof, mvb, items;
} BusExp;

#define BUS_W   64u     /* bytes a cycle on every bus of the defaults */

static void bus_frame(BusExp *b, uint32_t bytes, bool mvb)
{
    if (bytes) {
        b->words += (bytes + BUS_W - 1) / BUS_W;
        b->sof++;
        b->items += (bytes + 3) / 4;
    }
    b->mvb += mvb;
}

/* A read of bytes at addr: UP header, RQ requests, RC and DOWN pieces */
static void rule_read(BusExp *e, uint64_t addr, uint32_t bytes,
                      uint64_t mps, uint64_t mrrs, uint64_t rcb)
{
    bus_frame(&e[QNDK_UP], 0, true);
    for (uint64_t a = addr, end = addr + bytes; a < end;) {
        uint64_t len = MIN((a / mrrs + 1) * mrrs, end) - a;

        bus_frame(&e[QNDK_RQ], 16, false);
        for (uint64_t c = a; c < a + len;) {
            uint64_t n = c == a && c % rcb ?
                         MIN((c / rcb + 1) * rcb, a + len) - c :
                         MIN(mps, a + len - c);

            bus_frame(&e[QNDK_RC], 12 + n, false);
            bus_frame(&e[QNDK_DOWN], n, true);
            c += n;
        }
        a += len;
    }
}

static void rule_write(BusExp *e, uint64_t addr, uint32_t bytes, uint64_t mps)
{
    bus_frame(&e[QNDK_UP], bytes, true);
    for (uint64_t a = addr, end = addr + bytes; a < end;) {
        uint64_t len = MIN((a / mps + 1) * mps, end) - a;

        bus_frame(&e[QNDK_RQ], 16 + len, false);
        a += len;
    }
}

/*
 * Every bus's words, SOFs and items equal the rule's, and the MVB headers
 * of the buses whose headers the test knows in full (bit b: bus b)
 */
static void check_rule(Ndk *n, const BusExp *e, unsigned mvb_buses)
{
    for (unsigned b = 0; b < 4; b++) {
        g_assert_cmpuint(qndk_bus_counter(n->t, 0, b, 0, PTL_CH_WORDS), ==,
                         e[b].words);
        g_assert_cmpuint(qndk_bus_counter(n->t, 0, b, 0, PTL_CH_SOF), ==,
                         e[b].sof);
        g_assert_cmpuint(qndk_bus_counter(n->t, 0, b, 0, PTL_CH_ITEMS), ==,
                         e[b].items);
        if (mvb_buses & (1u << b)) {
            g_assert_cmpuint(qndk_bus_counter(n->t, 0, b, 0, PTL_CH_MVB), ==,
                             e[b].mvb);
        }
    }
}

/*
 * TX queue 0 sends frames towards Ethernet (the loopback off): the block
 * counts each descriptor read, each frame's data read and the update
 * write, split by the settings the test negotiated (MPS 256, MRRS 512,
 * RCB 128), exactly as the rule says.
 */
static void test_telemetry(void)
{
    Ndk n;
    QGuestAllocator a;
    Ring tx;
    BusExp e[4] = { 0 };
    static const uint32_t lens[] = { 60, 1500, 4096, 333, 64, 2000 };
    open_dma(&n, &a, DMA_ARGS);
    set_pcie_settings(&n, 0x80, 1, 2, true, false, true);
    ring_alloc(&n, &a, &tx, NDP_TX, 0, 64, 4096);
    ring_start(&n, &tx);
    for (unsigned i = 0; i < G_N_ELEMENTS(lens); i++) {
        rule_read(e, buf_addr(&tx, i), lens[i], 256, 512, 128);
        ring_post(&n, &tx, buf_addr(&tx, i), lens[i]);
    }
    /* the descriptors (type 0 and type 2), posted at once: one fetch */
    g_assert_cmpuint(tx.sdp, <=, NDP_DESC_FETCH);
    rule_read(e, tx.desc, 8 * tx.sdp, 256, 512, 128);
    rule_write(e, tx.upd, 4, 256);
    step(&n, 10000);
    flush_sdp(&n, &tx);
    g_assert_cmpuint(mem32(&n, tx.upd), ==, tx.sdp);
    /* the transfers are on the buses for a few microseconds */
    step(&n, 2000000);
    qndk_snapshot(n.t);
    for (unsigned b = 0; b < 4; b++) {
        g_test_message("%s: words %" PRIu64 " sof %" PRIu64 " mvb %" PRIu64
                       " items %" PRIu64, bus_name[b],
                       qndk_bus_counter(n.t, 0, b, 0, PTL_CH_WORDS),
                       qndk_bus_counter(n.t, 0, b, 0, PTL_CH_SOF),
                       qndk_bus_counter(n.t, 0, b, 0, PTL_CH_MVB),
                       qndk_bus_counter(n.t, 0, b, 0, PTL_CH_ITEMS));
        g_assert_cmpuint(qndk_bus_counter(n.t, 0, b, 0, PTL_CH_STALL), ==, 0);
    }
    check_rule(&n, e, 1u << QNDK_UP | 1u << QNDK_DOWN);
    g_assert_cmpuint(e[QNDK_RC].sof, >, G_N_ELEMENTS(lens));
    alloc_destroy(&a);
    ndk_close(&n);
}

/*
 * A card with a DMA engine counts its own transfers, with background
 * transfers of a transfers generator at most; that generator needs the
 * engine.
 */
static void test_traffic_refused(void)
{
    const char *extra[] = {
        "-object", "telemetry-traffic-pattern,id=t0",
        "-device", "ndk-pcie-telemetry,traffic=t0,dma-queues=1", NULL,
    };
    const char *alone[] = {
        "-object", "telemetry-traffic-transfers,id=t0",
        "-device", "ndk-pcie-telemetry,traffic=t0", NULL,
    };
    const char *port[] = {
        "-object", "telemetry-traffic-transfers,id=t0,port=1",
        "-device", "ndk-pcie-telemetry,traffic=t0,dma-queues=1", NULL,
    };

    expect_start_refused(extra, "telemetry-traffic-pattern");
    expect_start_refused(alone, "'dma-queues'");
    expect_start_refused(port, "port=1");
}

static void qom_set_u32(Ndk *n, const char *prop, uint32_t v)
{
    QDict *r = qtest_qmp(n->t->qts, "{'execute': 'qom-set', 'arguments': "
                         "{'path': '/objects/bg', 'property': %s, "
                         "'value': %u}}", prop, v);

    g_assert_false(qdict_haskey(r, "error"));
    qobject_unref(r);
}

/*
 * Background transfers beside the engine: idle at first, a write of 300
 * and a read of 1000 bytes every 10 us once set live (after the test
 * negotiated MPS 256, MRRS 512, RCB 128), idle again 1 ms later. Every
 * bus counts whole slots by the rule, about 100 of them; a port the card
 * does not have is refused live too, and the old values stay.
 */
static void test_background(void)
{
    Ndk n;
    QGuestAllocator a;
    BusExp e[4] = { 0 };
    uint64_t slots;
    QDict *r;

    open_dma(&n, &a, "-m 256M -object telemetry-traffic-transfers,id=bg,"
             "interval-ns=10000,write-bytes=0,read-bytes=0,address=0x100000,"
             "stride=0 -device ndk-pcie-telemetry,addr=04.0,dma-queues=1,"
             "traffic=bg");
    set_pcie_settings(&n, 0x80, 1, 2, true, false, true);
    step(&n, 200000);
    qom_set_u32(&n, "write-bytes", 300);
    qom_set_u32(&n, "read-bytes", 1000);
    step(&n, 1000000);
    qom_set_u32(&n, "write-bytes", 0);
    qom_set_u32(&n, "read-bytes", 0);
    r = qtest_qmp(n.t->qts, "{'execute': 'qom-set', 'arguments': "
                  "{'path': '/objects/bg', 'property': 'port', "
                  "'value': 1}}");
    g_assert_true(qdict_haskey(r, "error"));
    qobject_unref(r);
    step(&n, 2000000);
    qndk_snapshot(n.t);
    /* a write and a read of each slot put two headers on the UP MVB */
    slots = qndk_bus_counter(n.t, 0, QNDK_UP, 0, PTL_CH_MVB) / 2;
    g_test_message("%" PRIu64 " slots", slots);
    g_assert_cmpuint(slots, >=, 90);
    g_assert_cmpuint(slots, <=, 101);
    for (uint64_t k = 0; k < slots; k++) {
        rule_write(e, 0x100000, 300, 256);
        rule_read(e, 0x100000, 1000, 256, 512, 128);
    }
    check_rule(&n, e, 1u << QNDK_DOWN);
    alloc_destroy(&a);
    ndk_close(&n);
}

/* ---- a recording of a real driver, replayed ------------------------ */

/*
 * A recording is QEMU's log of the trace events ndk_dma_* of a guest run
 * (tests/qtest/data/README.md), with header lines:
 *   # args: <QEMU arguments of the card, memory included>
 *   # settings: <mps bytes> <mrrs bytes> <rcb bytes> <ext-tag> <10-bit tag>
 * Register writes are replayed in order, each after writing into guest
 * memory the descriptors the engine fetched right after it in the
 * recording; every register read must return what it returned then, and
 * the block must count the recorded transfers by the rule.
 */
typedef struct RecEvent {
    char kind;                  /* W, R, X (transfer), D (descriptor) */
    char what[4];               /* rx, tx, gls */
    uint64_t addr, val;
    unsigned size;
    unsigned xkind;
} RecEvent;

static uint64_t region_base(const char *what)
{
    return !strcmp(what, "rx") ? NDP_BAR_RX_BASE :
           !strcmp(what, "tx") ? NDP_BAR_TX_BASE : NDP_BAR_GLS_BASE;
}

static GArray *rec_parse(const char *text, char **args, unsigned set[5])
{
    GArray *ev = g_array_new(FALSE, TRUE, sizeof(RecEvent));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);

    for (char **l = lines; *l; l++) {
        const char *p = *l;
        RecEvent e = { 0 };
        unsigned q;

        if (g_str_has_prefix(p, "# args: ")) {
            *args = g_strdup(p + 8);
            continue;
        }
        if (g_str_has_prefix(p, "# settings: ")) {
            g_assert_cmpint(sscanf(p + 12, "%u %u %u %u %u", &set[0],
                                   &set[1], &set[2], &set[3], &set[4]), ==,
                            5);
            continue;
        }
        /* the log backend's optional "pid@seconds:" prefix */
        if (strchr(p, '@') && strchr(p, ':') &&
            strchr(p, '@') < strchr(p, ':') && g_ascii_isdigit(*p)) {
            p = strchr(p, ':') + 1;
        }
        if (sscanf(p, "ndk_dma_write %3s %" SCNx64 " size %u val %" SCNx64,
                   e.what, &e.addr, &e.size, &e.val) == 4) {
            e.kind = 'W';
        } else if (sscanf(p, "ndk_dma_read %3s %" SCNx64 " size %u val %"
                          SCNx64, e.what, &e.addr, &e.size, &e.val) == 4) {
            e.kind = 'R';
        } else if (sscanf(p, "ndk_dma_xfer %2s%u kind %u addr %" SCNx64
                          " bytes %u", e.what, &q, &e.xkind, &e.addr,
                          &e.size) == 5) {
            e.kind = 'X';
        } else if (sscanf(p, "ndk_dma_desc descriptor at %" SCNx64 ": %"
                          SCNx64, &e.addr, &e.val) == 2) {
            e.kind = 'D';
        } else {
            continue;
        }
        g_array_append_val(ev, e);
    }
    return ev;
}

static void test_replay(const void *data)
{
    const char *name = data;
    g_autofree char *path = g_build_filename(NDK_REPO, "tests", "qtest",
                                             "data", name, NULL);
    g_autofree char *text = NULL, *args = NULL;
    unsigned set[5] = { 0 }, reads = 0, writes = 0, frames = 0;
    BusExp e[4] = { 0 };
    GArray *ev;
    Ndk n;

    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    ev = rec_parse(text, &args, set);
    g_assert_nonnull(args);
    g_assert_cmpuint(set[0], >=, 128);
    ndk_open_sized(&n, "q35", DMA_BAR, args);
    set_pcie_settings(&n, 0x80, __builtin_ctz(set[0] / 128),
                      __builtin_ctz(set[1] / 128), set[3], set[4],
                      set[2] == 128);
    for (guint i = 0; i < ev->len; i++) {
        RecEvent *r = &g_array_index(ev, RecEvent, i);
        uint64_t at = n.t->bar.addr + region_base(r->what) + r->addr;

        switch (r->kind) {
        case 'W':
            /* the descriptors the engine is about to fetch */
            for (guint k = i + 1; k < ev->len; k++) {
                RecEvent *d = &g_array_index(ev, RecEvent, k);

                if (d->kind == 'W' || d->kind == 'R') {
                    break;
                }
                if (d->kind == 'D') {
                    qtest_writeq(n.t->qts, d->addr, d->val);
                }
            }
            step(&n, 1000);
            switch (r->size) {
            case 1:
                qtest_writeb(n.t->qts, at, r->val);
                break;
            case 2:
                qtest_writew(n.t->qts, at, r->val);
                break;
            case 4:
                qtest_writel(n.t->qts, at, r->val);
                break;
            default:
                qtest_writeq(n.t->qts, at, r->val);
            }
            writes++;
            break;
        case 'R': {
            uint64_t v = r->size == 8 ? qtest_readq(n.t->qts, at) :
                         r->size == 4 ? qtest_readl(n.t->qts, at) :
                         r->size == 2 ? qtest_readw(n.t->qts, at) :
                                        qtest_readb(n.t->qts, at);

            if (v != r->val) {
                g_test_message("read %u (event %u): %s 0x%" PRIx64
                               " size %u", reads, i, r->what, r->addr,
                               r->size);
            }
            g_assert_cmphex(v, ==, r->val);
            reads++;
            break;
        }
        case 'X':
            if (r->xkind >= NDP_XFER_DATA_WRITE) {
                rule_write(e, r->addr, r->size, set[0]);
            } else {
                rule_read(e, r->addr, r->size, set[0], set[1], set[2]);
            }
            frames += r->xkind == NDP_XFER_HDR_WRITE ? r->size / 4 : 0;
            break;
        }
    }
    g_test_message("%s: %u writes, %u reads replayed, %u RX frames",
                   name, writes, reads, frames);
    g_assert_cmpuint(writes, >, 0);
    step(&n, 2000000);
    qndk_snapshot(n.t);
    check_rule(&n, e, 0);
    g_array_free(ev, TRUE);
    ndk_close(&n);
}

/* ---- migration ---------------------------------------------------- */

#define MIG_RINGS 3
#define MIG_RING_BYTES (64 * 4096 + 0x10000)

/* A fixed layout, so that both QEMUs have the rings at the same place */
static void mig_rings(Ring *rx, Ring *tx)
{
    memset(rx, 0, sizeof(*rx));
    memset(tx, 0, sizeof(*tx));
    rx->dir = NDP_RX;
    tx->dir = NDP_TX;
    rx->n = tx->n = 64;
    rx->buf_size = tx->buf_size = 4096;
    rx->desc = 0x2000000;
    rx->hdr = 0x2001000;
    rx->upd = 0x2002000;
    rx->buf = 0x2010040;
    tx->desc = 0x3000000;
    tx->upd = 0x3002000;
    tx->buf = 0x3010040;
    rx->last_upper = tx->last_upper = UINT64_MAX;
}

static void mig_phase1(Ndk *n, Ring *rx, Ring *tx)
{
    uint8_t frame[1024];

    gls_wr(n, NDP_GLS_MUX_A, 1);
    ring_start(n, tx);
    ring_start(n, rx);
    for (unsigned i = 0; i < 40; i++) {
        ring_post(n, rx, buf_addr(rx, i), 4096);
    }
    flush_sdp(n, rx);
    for (unsigned i = 0; i < 10; i++) {
        pattern(frame, 200 + i, i);
        qtest_memwrite(n->t->qts, buf_addr(tx, i), frame, 200 + i);
        ring_post(n, tx, buf_addr(tx, i), 200 + i);
    }
    flush_sdp(n, tx);
    /*
     * the generator counts across the migration (its frames go nowhere
     * while the loopback is on)
     */
    gls_wr(n, NDP_GLS_MUX_C, 1);
    gls_wr(n, NDP_GLS_GEN_RX + NDP_GEN_CONTROL, 1);
    step(n, 5000);
}

static void mig_phase2(Ndk *n, Ring *rx, Ring *tx)
{
    uint8_t frame[1024];

    for (unsigned i = 10; i < 20; i++) {
        pattern(frame, 300 + i, i);
        qtest_memwrite(n->t->qts, buf_addr(tx, i), frame, 300 + i);
        ring_post(n, tx, buf_addr(tx, i), 300 + i);
    }
    flush_sdp(n, tx);
    step(n, 50000);
}

static void mig_compare(Ndk *b, Ndk *c)
{
    g_autofree uint8_t *mb = g_malloc(MIG_RING_BYTES);
    g_autofree uint8_t *mc = g_malloc(MIG_RING_BYTES);

    for (unsigned dir = 0; dir < 2; dir++) {
        for (unsigned q = 0; q < 2; q++) {
            for (uint32_t off = 0; off < NDP_REG_CNT_PKTS; off += 4) {
                g_assert_cmphex(qrd(b, dir, q, off), ==, qrd(c, dir, q, off));
            }
            for (uint32_t off = NDP_REG_CNT_PKTS; off < NDP_CTRL_SIZE;
                 off += 8) {
                g_assert_cmpuint(cnt_read(b, dir, q, off), ==,
                                 cnt_read(c, dir, q, off));
            }
        }
    }
    for (uint32_t off = 0; off < 0x100; off += 4) {
        g_assert_cmphex(gls_rd(b, off), ==, gls_rd(c, off));
    }
    for (unsigned k = 0; k < 2; k++) {
        uint64_t base = k ? 0x3000000 : 0x2000000;

        qtest_memread(b->t->qts, base, mb, MIG_RING_BYTES);
        qtest_memread(c->t->qts, base, mc, MIG_RING_BYTES);
        g_assert_cmpmem(mb, MIG_RING_BYTES, mc, MIG_RING_BYTES);
    }
}

static void test_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-dma-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    Ndk a, b, c;
    Ring rx, tx, rx_c, tx_c;
    int64_t t0, t1;

    ndk_open_sized(&a, "q35", DMA_BAR, DMA_ARGS);
    ndk_open_sized(&c, "q35", DMA_BAR, DMA_ARGS);
    mig_rings(&rx, &tx);
    mig_rings(&rx_c, &tx_c);
    t0 = a.t->t0;
    mig_phase1(&a, &rx, &tx);
    mig_phase1(&c, &rx_c, &tx_c);
    t1 = a.t->now;
    migrate_out(&a, uri);
    migrate_in(&b, "q35", DMA_ARGS, uri, t0, t1);
    g_assert_cmpint(c.t->now, ==, t1);
    mig_phase2(&b, &rx, &tx);
    mig_phase2(&c, &rx_c, &tx_c);
    g_assert_cmpuint(cnt_read(&c, NDP_RX, 0, NDP_REG_CNT_PKTS), ==, 20);
    mig_compare(&b, &c);
    ndk_close(&b);
    ndk_close(&c);
    unlink(path);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ndk-pcie-telemetry/dma/devtree", test_devtree);
    qtest_add_func("/ndk-pcie-telemetry/dma/bad-props", test_bad_props);
    qtest_add_func("/ndk-pcie-telemetry/dma/loopback", test_loopback);
    qtest_add_func("/ndk-pcie-telemetry/dma/generator", test_generator);
    qtest_add_func("/ndk-pcie-telemetry/dma/no-bus-master",
                   test_no_bus_master);
    qtest_add_func("/ndk-pcie-telemetry/dma/reset", test_reset);
    qtest_add_func("/ndk-pcie-telemetry/dma/unplug", test_unplug);
    qtest_add_func("/ndk-pcie-telemetry/dma/telemetry", test_telemetry);
    qtest_add_func("/ndk-pcie-telemetry/dma/traffic-refused",
                   test_traffic_refused);
    qtest_add_func("/ndk-pcie-telemetry/dma/background", test_background);
    qtest_add_func("/ndk-pcie-telemetry/dma/migration", test_migration);
    qtest_add_data_func("/ndk-pcie-telemetry/dma/replay/loopback",
                        "ndp-loopback.trace", test_replay);
    return g_test_run();
}
