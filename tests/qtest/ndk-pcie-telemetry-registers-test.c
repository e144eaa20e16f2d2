/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest of ndk-pcie-telemetry: the register file. Identity, the values of
 * every register of the defaults and of a larger card, access sizes,
 * aliases and read-only registers, the counters of an idle card, a card
 * on conventional PCI, across a system reset and hot-plugged late, and the
 * properties a card starts with or is refused. Expected values come from
 * FACTS.md and the layout rules (ndk-common.h), never from the card.
 */

#include "ndk-common.h"
#include "ndk-sim.h"

/* ------------------------------------------------------------------ */
/* Identity and registers                                             */

static void test_identity(void)
{
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0");
    g_assert_cmpint(n.t->dev->devfn, ==, QNDK_DEVFN);
    g_assert_cmphex(qpci_config_readw(n.t->dev, PCI_VENDOR_ID), ==,
                    PTL_QEMU_VENDOR_ID);
    g_assert_cmphex(qpci_config_readw(n.t->dev, PCI_DEVICE_ID), ==,
                    PTL_QEMU_DEVICE_ID);
    g_assert_cmphex(qpci_config_readb(n.t->dev, PCI_HEADER_TYPE) & 0x7F, ==,
                    PCI_HEADER_TYPE_NORMAL);
    g_assert_cmphex(rd(&n, PTL_REG_MAGIC), ==, PTL_MAGIC);
    ndk_close(&n);

    /* the IDs of a real card through the vendor-id / device-id properties */
    ndk_open_ids(&n, "q35", 0x18ec, 0xc000,
                 "-device ndk-pcie-telemetry,vendor-id=0x18ec,"
                 "device-id=0xc000");
    g_assert_cmphex(rd(&n, PTL_REG_MAGIC), ==, PTL_MAGIC);
    g_assert_cmphex(rd(&n, PTL_REG_VERSION), ==, PTL_VERSION_VALUE);
    ndk_close(&n);
}
/* Every word below 0x100: the listed values, all others 0. */
static void check_register_file(Ndk *n, const RegExpect *exp, size_t nexp)
{
    for (uint32_t off = 0; off < 0x100; off += 4) {
        uint32_t want = 0;

        for (size_t i = 0; i < nexp; i++) {
            if (exp[i].off == off) {
                want = exp[i].val;
            }
        }
        if (rd(n, off) != want) {
            g_test_message("register 0x%02x: 0x%08x, expected 0x%08x",
                           off, rd(n, off), want);
        }
        g_assert_cmphex(rd(n, off), ==, want);
    }
}

/* Only the listed words */
static void check_listed_registers(Ndk *n, const RegExpect *exp, size_t nexp)
{
    for (size_t i = 0; i < nexp; i++) {
        g_assert_cmphex(rd(n, exp[i].off), ==, exp[i].val);
    }
}
static void test_registers_default(void)
{
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES] = { 0 };
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0");
    check_register_file(&n, default_regs, G_N_ELEMENTS(default_regs));
    g_assert_cmpuint(rdq(&n, CNT(0)), ==, 0);

    /*
     * Idle card (no traffic object: buses idle, link up, all tags and
     * FIFO words free). At 25 us PCIe windows 0 and 1 (4095 + 4096
     * cycles) and DMA window 0 (4095) are in the live copy. Entry 0:
     * PCIe cycles; PCIe channels 1 + 2 (6 + 2) + 6 = 23..26 are the tag
     * bands, 27..30 the FIFO bands: band 3 (more than half free) for
     * both, entries 26 and 30; entry 31: DMA cycles. The bands count
     * from cycle 0 like the cycle counter, but their windows close later:
     * channel 26 in slot 2, 5 x 2 - 1 = 9 cycles after channel 0, and
     * channel 30 in slot 6, 5 x 6 - 1 = 29 cycles after it.
     */
    step_to(&n, n.t->t0 + 25000);
    wr(&n, PTL_REG_READ_SEL, 1);
    exp[0] = 4095 + 4096;
    exp[26] = 4095 + 4096 + 9;
    exp[30] = 4095 + 4096 + 29;
    exp[31] = 4095;
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("live, idle, 25 us", got, exp, DEF_ENTRIES);

    /* the configuration registers do not change with time */
    check_listed_registers(&n, default_regs, DEFAULT_CFG_REGS);
    ndk_close(&n);
}

/*
 * pcie-endpoints=2, dma-ports=2, pcie-rq-mfb-regions=4:
 *   PCIe probe R = max(RQ 4, RC 2) = 4: 1 + 2 (6 + 4) + 6 + 8 = 35 (0x23)
 *   DMA probe P = 2, R = 2: 1 + 2 x 2 x (6 + 2) = 33 (0x21)
 *   channels per endpoint 35 + 33 = 68 (0x44); 2 x 68 = 136 -> ENTRIES 256
 *   CFG_TOPOLOGY = 2 | 2 << 8 | (2 x 2 probes = 4) << 16     = 0x00040202
 *   CFG_LAYOUT   = 256 | 48 << 16 | 68 << 24                  = 0x44300100
 *   CFG_PCIE     = 35 | 2 buses << 8 | 4 regions << 16 | 14 << 24
 *                                                             = 0x0E040223
 *   CFG_DMA      = 33 | (2 x 2 = 4 buses) << 8 | 2 << 16      = 0x00020421
 *   CFG_REGIONS  = RQ 4 | RC 2 << 8 | UP 2 << 16 | DOWN 2 << 24 = 0x02020204
 *   the rest as with the defaults; endpoints 0 and 1 have live registers.
 */
static void test_registers_2ep(void)
{
    static const RegExpect exp_regs[] = {
        { 0x00, 0x50544C4D }, { 0x04, 0x00020000 }, { 0x08, 0x00040202 },
        { 0x0C, 0x44300100 }, { 0x10, 0x0E040223 }, { 0x14, 0x00020421 },
        { 0x18, 0x00041000 }, { 0x1C, 0x00008000 }, { 0x2C, 0x02020204 },
        { 0x30, 0x00200020 }, { 0x34, 0x00000204 }, { 0x38, 0x04000100 },
        { 0x3C, 0x00200020 },
        { 0x80, 0x07FF0000 }, { 0x84, 0x07FF0000 },
        { 0xC0, 0xFFFF0000 }, { 0xC4, 0xFFFF0000 },
    };
    enum { ENTRIES = 256, CPE = 68, PCIE_CH = 35 };
    const Layout l35 = pcie_layout(4);
    uint64_t got[ENTRIES], exp[ENTRIES] = { 0 };
    int64_t tw;
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,"
             "pcie-endpoints=2,dma-ports=2,pcie-rq-mfb-regions=4");
    check_register_file(&n, exp_regs, G_N_ELEMENTS(exp_regs));

    /*
     * Idle at 27 us: PCIe windows 0 and 1, DMA window 0 of both
     * endpoints (136 deltas x 3 MI cycles = 4.1 us after 20.48 us).
     * Endpoint e's PCIe probe at 68 e: cycles at +0, tag bands at
     * 1 + 2 (6 + 4) + 6 = 27..30 (band 3: +30), FIFO bands 31..34 (+34);
     * its DMA probe at 68 e + 35: cycles. The PCIe probe of 35 channels
     * reads out in G = 5 groups: a band in slot s closes 6 s - 1 cycles
     * after the cycle counter, channel 30 (slot 6) 35 cycles, channel 34
     * (slot 2) 11 cycles.
     */
    step_to(&n, n.t->t0 + 27000);
    wr(&n, PTL_REG_READ_SEL, 1);
    g_assert_cmpuint(l35.n, ==, PCIE_CH);
    g_assert_cmpint(ch_edge(&l35, 30), ==, 35);
    g_assert_cmpint(ch_edge(&l35, 34), ==, 11);
    for (unsigned e = 0; e < 2; e++) {
        exp[CPE * e] = 4095 + 4096;
        exp[CPE * e + 30] = 4095 + 4096 + 35;
        exp[CPE * e + 34] = 4095 + 4096 + 11;
        exp[CPE * e + PCIE_CH] = 4095;
    }
    read_counters(&n, ENTRIES, got);
    check_counters("live, 2 endpoints, 27 us", got, exp, ENTRIES);
    /* the window aliases every ENTRIES x 8 = 0x800 bytes */
    g_assert_cmpuint(rd(&n, CNT(0) + 0x800), ==, 4095 + 4096);
    g_assert_cmpuint(rd(&n, CNT(CPE) + 0x800 * 3), ==, 4095 + 4096);

    /* SNAPSHOT: BUSY from the 2nd MI cycle for 1 + 2 x 256 = 513 cycles */
    tw = mi_edge(n.t->t0 + 28000);
    step_to(&n, tw);
    wr(&n, PTL_REG_COMMAND, PTL_CMD_SNAPSHOT);
    step_to(&n, tw + MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    step_to(&n, tw + 2 * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, PTL_STATUS_BUSY);
    step_to(&n, tw + (2 + 512) * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, PTL_STATUS_BUSY);
    step_to(&n, tw + (2 + 513) * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    wr(&n, PTL_REG_READ_SEL, 0);
    read_counters(&n, ENTRIES, got);
    check_counters("snapshot, 2 endpoints", got, exp, ENTRIES);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* Access sizes, aliasing, writes that must change nothing            */

static void test_access(void)
{
    uint64_t before[DEF_ENTRIES], after[DEF_ENTRIES], exp[DEF_ENTRIES];
    QPCIDevice *dev;
    QTestState *qts;
    QPCIBar bar;
    Ndk n;

    ndk_open(&n, "q35", PATTERN_ARGS
             "-device ndk-pcie-telemetry,addr=04.0,traffic=tp0");
    /* the raw accesses below go to BAR0, where the node found the block */
    g_assert_cmphex(n.t->block, ==, 0);
    dev = n.t->dev;
    qts = n.t->qts;
    bar = n.t->bar;
    /* PCIe window 0 in the live copy, no DMA window yet */
    step_to(&n, n.t->t0 + 15000);
    pattern_expect(n.t->t0, n.t->now, exp);
    g_assert_cmpuint(exp[0], ==, 4095);
    wr(&n, PTL_REG_READ_SEL, 1);
    read_counters(&n, DEF_ENTRIES, before);
    check_counters("live, 15 us", before, exp, DEF_ENTRIES);

    /* 64-bit loads: low word at +0, high word at +4 */
    for (unsigned e = 0; e < DEF_ENTRIES; e++) {
        g_assert_cmphex(rdq(&n, CNT(e)), ==, before[e]);
        g_assert_cmphex(qpci_io_readq(dev, bar, CNT(e)), ==, before[e]);
    }
    g_assert_cmphex(rdq(&n, PTL_REG_MAGIC), ==,
                    (uint64_t)PTL_VERSION_VALUE << 32 | PTL_MAGIC);

    /* below 0x8000 only address bits 7..2 decode */
    g_assert_cmphex(rd(&n, 0x100), ==, PTL_MAGIC);
    g_assert_cmphex(rd(&n, 0x104), ==, PTL_VERSION_VALUE);
    g_assert_cmphex(rd(&n, 0x7F0C), ==, 0x30300040);
    g_assert_cmphex(rd(&n, 0x4080), ==, 100 | 100 << 16);   /* PCIE_TAGS */
    /*
     * the counter window repeats every 64 x 8 bytes; entries 48..63 are
     * past the last endpoint
     */
    g_assert_cmpuint(cnt(&n, 64), ==, before[0]);
    g_assert_cmpuint(rd(&n, 0xFE00), ==, (uint32_t)before[0]);
    g_assert_cmpuint(rdq(&n, CNT(64 + 6)), ==, before[6]);
    g_assert_cmpuint(rd(&n, 0xFFFC), ==, 0);
    for (unsigned e = 48; e < 64; e++) {
        g_assert_cmpuint(before[e], ==, 0);
    }

    /* 1- and 2-byte reads pick byte lanes; unaligned reads too */
    g_assert_cmphex(qpci_io_readb(dev, bar, 0), ==, 0x4D);
    g_assert_cmphex(qpci_io_readb(dev, bar, 1), ==, 0x4C);
    g_assert_cmphex(qpci_io_readb(dev, bar, 2), ==, 0x54);
    g_assert_cmphex(qpci_io_readb(dev, bar, 3), ==, 0x50);
    g_assert_cmphex(qpci_io_readw(dev, bar, 0), ==, 0x4C4D);
    g_assert_cmphex(qpci_io_readw(dev, bar, 2), ==, 0x5054);
    g_assert_cmphex(qpci_io_readb(dev, bar, CNT(0)), ==,
                    before[0] & 0xFF);
    g_assert_cmphex(qtest_readl(qts, bar.addr + 1), ==, 0x0050544C);
    g_assert_cmphex(qtest_readl(qts, bar.addr + 2), ==, 0x00005054);
    g_assert_cmphex(qtest_readq(qts, bar.addr + 4), ==,
                    0x00020101ull << 32 | PTL_VERSION_VALUE);

    /* writes to read-only registers change nothing */
    wr(&n, PTL_REG_MAGIC, 0x12345678);
    wr(&n, PTL_REG_CFG_LAYOUT, 0);
    wr(&n, PTL_REG_CNT_BASE, 0);
    wr(&n, PTL_REG_STATUS, 0xFFFFFFFF);
    wr(&n, PTL_REG_PCIE_STATUS(0), 0xFFFFFFFF);
    wr(&n, PTL_REG_PCIE_TAGS(0), 0);
    wr(&n, PTL_REG_PCIE_STFIFO(0), 0);
    qpci_io_writeb(dev, bar, PTL_REG_VERSION + 1, 0xFF);
    qpci_io_writew(dev, bar, PTL_REG_CFG_DRAIN + 2, 0xFFFF);
    qtest_writeq(qts, bar.addr + PTL_REG_CFG_TOPOLOGY, ~0ull);
    /* the counter window is read-only, at any size and alignment */
    wr(&n, CNT(0), 0xFFFFFFFF);
    wr(&n, CNT(0) + 4, 0xFFFFFFFF);
    qtest_writeq(qts, bar.addr + CNT(6), ~0ull);
    qpci_io_writeb(dev, bar, CNT(1), 0x55);
    qpci_io_writew(dev, bar, CNT(2) + 2, 0x5555);
    qtest_writel(qts, bar.addr + CNT(3) + 1, 0xAAAAAAAA);
    qtest_writeq(qts, bar.addr + CNT(63) + 4, ~0ull);
    /* undefined: writes past the last register alias harmless ones */
    wr(&n, 0x4000, 0xFFFFFFFF);                 /* MAGIC */
    qpci_io_writeb(dev, bar, 0x7FFF, 0xFF);  /* PCIE_STFIFO(15) */
    /* a byte in lane 0 of READ_SEL sets it; a 16-bit zero clears it */
    qpci_io_writeb(dev, bar, PTL_REG_READ_SEL, 0x01);
    g_assert_cmphex(rd(&n, PTL_REG_READ_SEL), ==, 1);
    qpci_io_writew(dev, bar, PTL_REG_READ_SEL, 0);
    g_assert_cmphex(rd(&n, PTL_REG_READ_SEL), ==, 0);
    qpci_io_writeb(dev, bar, PTL_REG_READ_SEL, 0x01);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);

    check_listed_registers(&n, default_regs, DEFAULT_CFG_REGS);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 100 | 100 << 16);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STFIFO(0)), ==, 1024 | 1024 << 16);
    read_counters(&n, DEF_ENTRIES, after);
    check_counters("after writes", after, before, DEF_ENTRIES);

    /* a byte write of SNAPSHOT to COMMAND works */
    qpci_io_writeb(dev, bar, PTL_REG_COMMAND, PTL_CMD_SNAPSHOT);
    step(&n, 2 * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, PTL_STATUS_BUSY);
    wait_busy(&n, 129);

    /* and the card keeps counting: window 1 adds 4096 cycles */
    step_to(&n, n.t->t0 + 25000);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095 + 4096);
    wr(&n, PTL_REG_READ_SEL, 0);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* Conventional PCI                                                   */

static void test_conventional_pci(void)
{
    Ndk n;

    ndk_open(&n, "pc", "-device ndk-pcie-telemetry,addr=04.0");
    g_assert_cmpint(n.t->dev->devfn, ==, QNDK_DEVFN);
    g_assert_cmphex(rd(&n, PTL_REG_MAGIC), ==, PTL_MAGIC);
    g_assert_cmphex(rd(&n, PTL_REG_VERSION), ==, PTL_VERSION_VALUE);
    g_assert_cmphex(rd(&n, PTL_REG_CFG_LAYOUT), ==, 0x30300040);
    /* no PCIe capability, nothing at 0x80 */
    g_assert_cmphex(qpci_find_capability(n.t->dev, PCI_CAP_ID_EXP, 0), ==, 0);
    g_assert_cmphex(qpci_config_readl(n.t->dev, 0x80), ==, 0);
    /* it counts all the same */
    step_to(&n, n.t->t0 + 15000);
    wr(&n, PTL_REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)) & (1 << 9), ==, 1 << 9);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* Reset                                                              */

static void test_reset(void)
{
    uint64_t origin;
    uint32_t st;
    uint8_t exp;
    int64_t tr;
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0");
    exp = qpci_find_capability(n.t->dev, PCI_CAP_ID_EXP, 0);
    g_assert_cmphex(exp, ==, 0x80);
    set_pcie_settings(&n, exp, 1, 3, true, true, true);
    step_to(&n, n.t->t0 + 15000);
    wr(&n, PTL_REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    snapshot(&n, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), !=, 0);

    /* a system reset is an MI reset: the counter memory stays */
    tr = n.t->now;
    qtest_system_reset(n.t->qts);
    g_assert_cmpint(qtest_clock_step(n.t->qts, 1), ==, tr + 1);
    n.t->now = tr + 1;
    qpci_device_enable(n.t->dev);
    n.t->bar = qpci_iomap(n.t->dev, 0, NULL);
    g_assert_cmphex(rd(&n, PTL_REG_MAGIC), ==, PTL_MAGIC);
    g_assert_cmphex(rd(&n, PTL_REG_READ_SEL), ==, 0);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, 0);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 0x07FF0000);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STFIFO(0)), ==, 0xFFFF0000);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    wr(&n, PTL_REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);

    /*
     * The probes start over at the reset: their first window is again
     * 4095 cycles, drained 10.24 us after the reset (without the reset
     * window 1 would have brought 4096 at 20.48 us).
     */
    origin = first_cycle(tr, PCIE_HZ);
    step_to(&n, cycle_ns(drain_cycle(origin, DP, 0), PCIE_HZ) + 2000);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095 + 4095);
    /* and Device Control is back at its power-on values */
    st = status_from_config(qpci_config_readw(n.t->dev, exp + PCI_EXP_DEVCTL),
                            qpci_config_readw(n.t->dev, exp + PCI_EXP_DEVCTL2),
                            qpci_config_readw(n.t->dev, exp + PCI_EXP_LNKCTL));
    g_assert_cmphex(st & 7, ==, 0);
    g_assert_cmphex(st >> 3 & 7, ==, 2);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* A card hot-plugged long after the machine started                  */

static void test_hotplug_late(void)
{
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES] = { 0 };
    QTestState *qts;
    int64_t now;
    Ndk n;

    qts = qtest_init("-machine pc -nodefaults");
    now = qtest_clock_step(qts, 20000000);
    g_assert_cmpint(now, ==, 20000000);
    qtest_qmp_device_add(qts, "ndk-pcie-telemetry", "late", "{}");
    ndk_open_plugged(&n, qpci_new_pc(qts, NULL), now, NDK_BAR_SIZE);

    /* the counter memory of a freshly configured FPGA: zeros */
    g_assert_cmphex(rd(&n, PTL_REG_MAGIC), ==, PTL_MAGIC);
    wr(&n, PTL_REG_READ_SEL, 1);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("late card, live, at once", got, exp, DEF_ENTRIES);
    wr(&n, PTL_REG_READ_SEL, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("late card, snapshot, at once", got, exp, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 0x07FF0000);

    /*
     * Its probes start at its creation: PCIe cycle 0.4 x 20 ms = 8000000.
     * 15 us later window 0 (4095 cycles, drained 10.24 us after the
     * creation) is in the live copy: cycles, tag band 3 and FIFO band 3
     * (idle card, all free), whose windows close 9 (slot 2) and 29 (slot
     * 6) cycles after the cycle counter's; DMA window 0 ends 20.475 us
     * after it.
     */
    g_assert_cmpuint(first_cycle(n.t->t0, PCIE_HZ), ==, 8000000);
    step_to(&n, n.t->t0 + 15000);
    wr(&n, PTL_REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    exp[0] = 4095;
    exp[26] = 4095 + 9;
    exp[30] = 4095 + 29;
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("late card, live, +15 us", got, exp, DEF_ENTRIES);

    /* +25 us: PCIe windows 0 and 1, DMA window 0 */
    step_to(&n, n.t->t0 + 25000);
    exp[0] = 4095 + 4096;
    exp[26] = 4095 + 4096 + 9;
    exp[30] = 4095 + 4096 + 29;
    exp[31] = 4095;
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("late card, live, +25 us", got, exp, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);

    /*
     * Unplugged again: the device must really go (DEVICE_DELETED comes
     * only when the object is freed, so nothing may keep a reference).
     */
    qpci_unplug_acpi_device_test(n.t->qts, "late", n.t->dev->devfn >> 3);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* Properties                                                         */

static void test_bad_properties(void)
{
    /* not a power of two; 32 <= 8 x (ceil(31 / 8) + 1) = 40 */
    expect_refused("drain-period=1000", "drain-period");
    expect_refused("drain-period=32", "drain-period");
    expect_refused("cnt-width=32", "cnt-width");
    expect_refused("cnt-width=65", "cnt-width");
    expect_refused("pcie-endpoints=0", "pcie-endpoints");
    expect_refused("pcie-endpoints=17", "pcie-endpoints");
    /* 32-byte regions of 4-byte items: EOF_POS width log2(8) = 3 */
    expect_refused("pcie-eof-pos-width=2", "pcie-eof-pos-width");
    /* 64-byte RQ regions: 16 items need width 4 */
    expect_refused("pcie-rq-mfb-region-bytes=64", "pcie-eof-pos-width");
    expect_refused("dma-eof-pos-width=4", "dma-eof-pos-width");
    /* not a multiple of 0x1000; past 0x0fff0000 */
    expect_refused("block-offset=0x20800", "block-offset");
    expect_refused("block-offset=0x10000000", "block-offset");
}

/* The smallest and largest legal values start and read back. */
static void test_edge_properties(void)
{
    Ndk n;

    /*
     * 64 > 40; CFG_DRAIN = 64 | 4 << 16; CFG_LAYOUT = 64 | 64 << 16 |
     * 48 << 24
     */
    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,"
             "drain-period=64,cnt-width=64");
    g_assert_cmphex(rd(&n, PTL_REG_CFG_DRAIN), ==, 0x00040040);
    g_assert_cmphex(rd(&n, PTL_REG_CFG_LAYOUT), ==, 0x30400040);
    /*
     * Accumulator load 3 x (31 x 400 MHz + 17 x 200 MHz) / (64 x 100 MHz)
     * = 7.4: deltas get lost within microseconds.
     */
    step_to(&n, n.t->t0 + 100000);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS) & PTL_STATUS_LOST, ==,
                    PTL_STATUS_LOST);
    ndk_close(&n);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_set_nonfatal_assertions();

    g_test_add_func("/ndk-pcie-telemetry/q35/identity", test_identity);
    g_test_add_func("/ndk-pcie-telemetry/registers/defaults",
                    test_registers_default);
    g_test_add_func("/ndk-pcie-telemetry/registers/2ep-2dma-rq4",
                    test_registers_2ep);
    g_test_add_func("/ndk-pcie-telemetry/access/sizes-alias-readonly",
                    test_access);
    g_test_add_func("/ndk-pcie-telemetry/pc/conventional",
                    test_conventional_pci);
    g_test_add_func("/ndk-pcie-telemetry/reset/keeps-counters", test_reset);
    g_test_add_func("/ndk-pcie-telemetry/hotplug/late-starts-from-zero",
                    test_hotplug_late);
    g_test_add_func("/ndk-pcie-telemetry/properties/refused",
                    test_bad_properties);
    g_test_add_func("/ndk-pcie-telemetry/properties/edges",
                    test_edge_properties);

    return g_test_run();
}
