/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest of a PCIe 6 flit-mode link: a dwc-pcie-root-port with flit-mode=on
 * at 64 GT/s and the card below it with flit-mode=on, configuration space
 * through q35's ECAM. The extended-capability chains of both ends (order,
 * next pointers, no overlap), the PCIe capability's flit bits and their
 * negotiation (both ends, Flit Mode Disable and Retrain Link), Flit
 * Performance Measurement over a pattern card, the Flit Counter against
 * the link's closed form, injected flit errors on both ends, reset, and
 * the properties refused. Offsets and fields are the PCIe Base
 * Specification's as pciutils 3.15 names them, the latencies and flit
 * counts worked out here from docs/flit.md's link model.
 */

#include "ndk-common.h"

#define RP_DEVFN            QPCI_DEVFN(2, 0)
#define RP_EXP              0x70
#define CARD_EXP            0x80
#define PATTERN             "rq-frame-bytes=256,rq-gap=4,rq-stall=2," \
                            "rc-frame-bytes=100,rc-gap=1"
#define FLIT_ARGS(port, card) \
    "-device dwc-pcie-root-port,id=rp0,chassis=1,slot=1,addr=02.0," \
    "x-speed=64" port " " \
    "-object telemetry-traffic-pattern,id=t0," PATTERN " " \
    "-device ndk-pcie-telemetry,id=card,bus=rp0,traffic=t0,link-speed=64" \
    card

/* PCIe capability bits */
#define EXP_FLAGS_FLIT      0x8000
#define LNKCTL_RETRAIN      0x0020
#define LNKCTL_FLIT_DIS     0x2000
#define LNKSTA2             0x32
#define LNKSTA2_FLIT        0x0400

/* Extended capabilities */
#define ID_64GT             0x31
#define ID_FLIT_LOG         0x32
#define ID_FLIT_PERF        0x33
#define LOG_ERR1            0x04
#define LOG_MEAS_CTL        0x10
#define LOG_FLITS           0x14
#define LOG_INVALID         0x18
#define PERF_CAP            0x04
#define PERF_CTL            0x08
#define PERF_STATUS         0x0C
#define PERF_EN             1u
#define PERF_ACK            (1u << 1)
#define PERF_NAK            (2u << 1)
#define PERF_REPLAY         (4u << 1)
#define PERF_INST(n)        ((uint32_t)(n) << 6)
#define PERF_THR_100NS      (1u << 11)
#define PERF_TRACK_L0_REC   (1u << 14)
#define ST(st, n, cnt)      ((st) | (n) << 2 | (uint32_t)(cnt) << 8)

typedef struct Link {
    QTestState *qts;
    int64_t now;
} Link;

/* bus 0: the port; bus 1: the card */
static uint64_t at(int bus, uint32_t off)
{
    return ecam_at(bus, bus ? 0 : RP_DEVFN, off);
}

static uint32_t rd32(Link *l, int bus, uint32_t off)
{
    return qtest_readl(l->qts, at(bus, off));
}

static uint16_t rd16(Link *l, int bus, uint32_t off)
{
    return qtest_readw(l->qts, at(bus, off));
}

static void wr32(Link *l, int bus, uint32_t off, uint32_t v)
{
    qtest_writel(l->qts, at(bus, off), v);
}

static void wr16(Link *l, int bus, uint32_t off, uint16_t v)
{
    qtest_writew(l->qts, at(bus, off), v);
}

static void link_open(Link *l, const char *args)
{
    l->qts = qtest_initf("-machine q35 -nodefaults %s", args);
    ecam_on(l->qts);
    /* the port forwards bus 1 */
    qtest_writeb(l->qts, at(0, PCI_SECONDARY_BUS), 1);
    qtest_writeb(l->qts, at(0, PCI_SUBORDINATE_BUS), 1);
    l->now = qtest_clock_step(l->qts, 1000);
}

static void vstep(Link *l, int64_t ns)
{
    l->now = qtest_clock_step(l->qts, ns);
}

/* An extended capability of a function by ID, 0 if none */
static uint32_t ext_cap(Link *l, int bus, uint16_t id)
{
    uint32_t off = 0x100;

    for (unsigned i = 0; off && i < 64; i++) {
        uint32_t h = rd32(l, bus, off);

        if ((h & 0xFFFF) == id) {
            return off;
        }
        off = h >> 20;
    }
    return 0;
}

/* Flits in l0_ns of L0 at 64 GT/s, walked flit by flit (docs/flit.md) */
static uint64_t flits_walked(unsigned w, uint64_t l0_ns)
{
    uint64_t sym = l0_ns * 8, pos = 0, n = 0;
    unsigned per = 256 / w, k = 0;
    unsigned K = w == 16 ? 748 : w == 8 ? 374 : w == 4 ? 187 : w == 2 ? 93
                                                                    : 46;

    while (pos + per <= sym) {
        pos += per;
        n++;
        if (++k == K) {
            pos += 40;
            k = 0;
        }
    }
    return n;
}

/* ------------------------------------------------------------------ */

/* Both chains: IDs in order, next pointers, no capability overlaps */
static void check_chain(Link *l, int bus, const uint16_t *ids,
                        const uint32_t *offs, const uint32_t *sizes,
                        unsigned n)
{
    uint32_t off = 0x100, h = 0;

    for (unsigned i = 0; i < n; i++) {
        g_assert_cmphex(off, ==, offs[i]);
        h = rd32(l, bus, off);
        g_assert_cmphex(h & 0xFFFF, ==, ids[i]);
        if (ids[i] >= ID_64GT) {
            g_assert_cmphex(h >> 16 & 0xF, ==, 1);
        }
        if (i) {
            g_assert_cmpuint(offs[i - 1] + sizes[i - 1], <=, offs[i]);
        }
        off = h >> 20;
    }
    g_assert_cmphex(off, ==, 0);
}

static void test_chains(void)
{
    /* port: AER, ACS, RAS DES, then 64 GT/s, Flit Logging, Performance */
    static const uint16_t rp_ids[] = { 0x01, 0x0D, 0x0B, ID_64GT,
                                       ID_FLIT_LOG, ID_FLIT_PERF };
    static const uint32_t rp_at[] = { 0x100, 0x148, 0x200, 0x300, 0x320,
                                      0x360 };
    static const uint32_t rp_size[] = { 0x48, 0x08, 0x100, 0x20, 0x3C,
                                        0x24 };
    /* card: the device-tree VSEC, then the three, 2 LTSSM registers */
    static const uint16_t card_ids[] = { 0x0B, ID_64GT, ID_FLIT_LOG,
                                         ID_FLIT_PERF };
    static const uint32_t card_at[] = { 0x100, 0x200, 0x220, 0x260 };
    static const uint32_t card_size[] = { 0x20, 0x20, 0x3C, 0x18 };
    Link l;

    link_open(&l, FLIT_ARGS(",flit-mode=on",
                            ",flit-mode=on,flit-ltssm-regs=2"));
    check_chain(&l, 0, rp_ids, rp_at, rp_size, G_N_ELEMENTS(rp_ids));
    check_chain(&l, 1, card_ids, card_at, card_size, G_N_ELEMENTS(card_ids));
    /* LTSSM Tracking Register Count: 5 (default) and 2 */
    g_assert_cmphex(rd32(&l, 0, 0x360 + PERF_CAP), ==, 5 << 10);
    g_assert_cmphex(rd32(&l, 1, 0x260 + PERF_CAP), ==, 2 << 10);
    /* past the card's second LTSSM register: the next capability's room */
    g_assert_cmphex(rd32(&l, 1, 0x260 + 0x18), ==, 0);
    /* 64 GT/s: equalization done (complete, phases 1 to 3) */
    g_assert_cmphex(rd32(&l, 0, 0x300 + 0x0C), ==, 0xF);
    g_assert_cmphex(rd32(&l, 1, 0x200 + 0x0C), ==, 0xF);
    qtest_quit(l.qts);
}

static void test_negotiation(void)
{
    Link l;

    link_open(&l, FLIT_ARGS(",flit-mode=on", ",flit-mode=on"));
    g_assert_cmphex(rd16(&l, 0, RP_EXP + PCI_EXP_FLAGS) & EXP_FLAGS_FLIT,
                    ==, EXP_FLAGS_FLIT);
    g_assert_cmphex(rd16(&l, 1, CARD_EXP + PCI_EXP_FLAGS) & EXP_FLAGS_FLIT,
                    ==, EXP_FLAGS_FLIT);
    g_assert_cmphex(rd16(&l, 0, RP_EXP + LNKSTA2) & LNKSTA2_FLIT, ==,
                    LNKSTA2_FLIT);
    g_assert_cmphex(rd16(&l, 1, CARD_EXP + LNKSTA2) & LNKSTA2_FLIT, ==,
                    LNKSTA2_FLIT);
    /* 64 GT/s in the speeds of both and the current one */
    g_assert_cmphex(rd32(&l, 0, RP_EXP + PCI_EXP_LNKCAP2) & 0x40, ==, 0x40);
    g_assert_cmphex(rd16(&l, 1, CARD_EXP + PCI_EXP_LNKSTA) & 0xF, ==, 6);

    /* Flit Mode Disable takes effect when the link retrains */
    wr16(&l, 0, RP_EXP + PCI_EXP_LNKCTL, LNKCTL_FLIT_DIS);
    g_assert_cmphex(rd16(&l, 0, RP_EXP + LNKSTA2) & LNKSTA2_FLIT, ==,
                    LNKSTA2_FLIT);
    wr16(&l, 0, RP_EXP + PCI_EXP_LNKCTL, LNKCTL_FLIT_DIS | LNKCTL_RETRAIN);
    g_assert_cmphex(rd16(&l, 0, RP_EXP + LNKSTA2) & LNKSTA2_FLIT, ==, 0);
    g_assert_cmphex(rd16(&l, 1, CARD_EXP + LNKSTA2) & LNKSTA2_FLIT, ==, 0);
    g_assert_cmphex(rd32(&l, 0, 0x300 + 0x0C), ==, 0);
    wr16(&l, 0, RP_EXP + PCI_EXP_LNKCTL, LNKCTL_RETRAIN);
    g_assert_cmphex(rd16(&l, 1, CARD_EXP + LNKSTA2) & LNKSTA2_FLIT, ==,
                    LNKSTA2_FLIT);
    /* the card's own Flit Mode Disable too */
    wr16(&l, 1, CARD_EXP + PCI_EXP_LNKCTL, LNKCTL_FLIT_DIS);
    wr16(&l, 0, RP_EXP + PCI_EXP_LNKCTL, LNKCTL_RETRAIN);
    g_assert_cmphex(rd16(&l, 0, RP_EXP + LNKSTA2) & LNKSTA2_FLIT, ==, 0);
    /* a system reset clears Flit Mode Disable: flit mode again */
    qtest_system_reset(l.qts);
    ecam_on(l.qts);
    qtest_writeb(l.qts, at(0, PCI_SECONDARY_BUS), 1);
    qtest_writeb(l.qts, at(0, PCI_SUBORDINATE_BUS), 1);
    g_assert_cmphex(rd16(&l, 1, CARD_EXP + LNKSTA2) & LNKSTA2_FLIT, ==,
                    LNKSTA2_FLIT);
    g_assert_cmphex(rd16(&l, 0, RP_EXP + LNKSTA2) & LNKSTA2_FLIT, ==,
                    LNKSTA2_FLIT);
    qtest_quit(l.qts);

    /* one end without flit mode: no flit mode, and no capabilities there */
    link_open(&l, FLIT_ARGS(",flit-mode=on", ""));
    g_assert_cmphex(rd16(&l, 0, RP_EXP + LNKSTA2) & LNKSTA2_FLIT, ==, 0);
    g_assert_cmphex(rd16(&l, 1, CARD_EXP + PCI_EXP_FLAGS) & EXP_FLAGS_FLIT,
                    ==, 0);
    g_assert_cmphex(ext_cap(&l, 1, ID_FLIT_LOG), ==, 0);
    g_assert_cmphex(ext_cap(&l, 0, ID_FLIT_LOG), ==, 0x320);
    qtest_quit(l.qts);
}

/*
 * Flit->Ack over the card's requests: x16, 10 ns of flight: 2 + 20 + 50 =
 * 72 ns, 9 units of 8 ns a flit; ten flits in well under a microsecond
 */
static void test_ack_measurement(void)
{
    Link l;
    uint32_t perf;

    link_open(&l, FLIT_ARGS(",flit-mode=on", ",flit-mode=on"));
    perf = ext_cap(&l, 1, ID_FLIT_PERF);
    wr32(&l, 1, perf + PERF_CTL, PERF_EN | PERF_ACK | PERF_INST(10));
    g_assert_cmphex(rd32(&l, 1, perf + PERF_STATUS), ==, ST(1, 0, 0));
    vstep(&l, 10000);
    g_assert_cmphex(rd32(&l, 1, perf + PERF_STATUS), ==, ST(2, 10, 90));
    /* worst case until disabled */
    wr32(&l, 1, perf + PERF_CTL, 0);
    wr32(&l, 1, perf + PERF_CTL, PERF_EN | PERF_ACK);
    vstep(&l, 10000);
    g_assert_cmphex(rd32(&l, 1, perf + PERF_STATUS), ==, ST(1, 31, 9));
    wr32(&l, 1, perf + PERF_CTL, 0);
    g_assert_cmphex(rd32(&l, 1, perf + PERF_STATUS), ==, ST(2, 31, 9));

    /* the port sends the completions: 100 B frames, same latency */
    perf = ext_cap(&l, 0, ID_FLIT_PERF);
    wr32(&l, 0, perf + PERF_CTL, PERF_EN | PERF_ACK | PERF_INST(3) |
         PERF_THR_100NS);
    vstep(&l, 10000);
    /* 72 ns is below the 100 ns threshold: no interrupt bit */
    g_assert_cmphex(rd32(&l, 0, perf + PERF_STATUS), ==, ST(2, 3, 27));
    qtest_quit(l.qts);

    /* no traffic, no tracked flit */
    l.qts = qtest_initf("-machine q35 -nodefaults "
        "-device dwc-pcie-root-port,id=rp0,chassis=1,slot=1,addr=02.0,"
        "x-speed=64,flit-mode=on "
        "-device ndk-pcie-telemetry,bus=rp0,link-speed=64,flit-mode=on");
    ecam_on(l.qts);
    qtest_writeb(l.qts, at(0, PCI_SECONDARY_BUS), 1);
    qtest_writeb(l.qts, at(0, PCI_SUBORDINATE_BUS), 1);
    wr32(&l, 1, 0x260 + PERF_CTL, PERF_EN | PERF_ACK | PERF_INST(1));
    vstep(&l, 1000000);
    g_assert_cmphex(rd32(&l, 1, 0x260 + PERF_STATUS), ==, ST(1, 0, 0));
    qtest_quit(l.qts);
}

/* The Flit Counter of received flits against the closed form */
static void test_flit_counter(void)
{
    static const struct {
        const char *width;
        unsigned lanes;
    } w[] = { { "", 16 }, { ",x-width=4", 4 } };

    for (unsigned i = 0; i < G_N_ELEMENTS(w); i++) {
        g_autofree char *port = g_strdup_printf(",flit-mode=on%s",
                                                w[i].width);
        g_autofree char *args = g_strdup_printf(
            "-device dwc-pcie-root-port,id=rp0,chassis=1,slot=1,addr=02.0,"
            "x-speed=64%s -device ndk-pcie-telemetry,bus=rp0,"
            "link-speed=64,flit-mode=on", port);
        Link l;
        uint32_t log;
        int64_t t0;

        link_open(&l, args);
        log = ext_cap(&l, 0, ID_FLIT_LOG);
        t0 = l.now;
        wr32(&l, 0, log + LOG_MEAS_CTL, 1);
        vstep(&l, 3000000);
        /* the link has been in L0 since the machine started */
        g_assert_cmpuint(rd32(&l, 0, log + LOG_FLITS), ==,
                         flits_walked(w[i].lanes, l.now) -
                         flits_walked(w[i].lanes, t0));
        /* the card counts the same flits (it trained to the same width) */
        log = ext_cap(&l, 1, ID_FLIT_LOG);
        t0 = l.now;
        wr32(&l, 1, log + LOG_MEAS_CTL, 1);
        vstep(&l, 1000000);
        g_assert_cmpuint(rd32(&l, 1, log + LOG_FLITS), ==,
                         flits_walked(w[i].lanes, l.now) -
                         flits_walked(w[i].lanes, t0));
        qtest_quit(l.qts);
    }
}

/* Errors injected into what the card receives: the port gets the Naks */
static void test_injection(void)
{
    Link l;
    uint32_t rp_perf, card_perf, card_log;
    g_autofree char *err = NULL;
    g_autofree char *last = NULL;

    link_open(&l, FLIT_ARGS(",flit-mode=on", ",flit-mode=on"));
    rp_perf = ext_cap(&l, 0, ID_FLIT_PERF);
    card_perf = ext_cap(&l, 1, ID_FLIT_PERF);
    card_log = ext_cap(&l, 1, ID_FLIT_LOG);
    wr32(&l, 0, rp_perf + PERF_CTL, PERF_EN | PERF_NAK);
    wr32(&l, 1, card_perf + PERF_CTL, PERF_EN | PERF_REPLAY | PERF_INST(3));
    wr32(&l, 1, card_log + LOG_MEAS_CTL, 1);
    err = qom_set_error(qom_set_str(l.qts, "/machine/peripheral/card",
                                    "flit-error",
                                    "kind=uncorrectable,count=3"));
    g_assert_cmpstr(err, ==, "");
    g_free(err);
    last = qom_get_str(l.qts, "/machine/peripheral/card", "flit-error");
    g_assert_cmpstr(last, ==, "kind=uncorrectable,count=3");
    /* port: Flit->Nak 72 ns, 9 units; card: Nak->Replay 74 ns, 10 */
    g_assert_cmphex(rd32(&l, 0, rp_perf + PERF_STATUS), ==, ST(1, 3, 9));
    g_assert_cmphex(rd32(&l, 1, card_perf + PERF_STATUS), ==, ST(2, 3, 30));
    /* the card's log: valid, x16, 2 more consecutive, uncorrectable */
    g_assert_cmphex(rd32(&l, 1, card_log + LOG_ERR1), ==,
                    1 | 4 << 1 | 2 << 8 | 1u << 15);
    g_assert_cmpuint(rd32(&l, 1, card_log + LOG_INVALID), ==, 3);
    /* the port's log saw nothing */
    g_assert_cmphex(rd32(&l, 0, ext_cap(&l, 0, ID_FLIT_LOG) + LOG_ERR1), ==,
                    0);
    /* refused: a lane past the link, a bad kind */
    err = qom_set_error(qom_set_str(l.qts, "/machine/peripheral/rp0",
                                    "flit-error",
                                    "kind=correctable,lane=16"));
    g_assert_nonnull(strstr(err, "flit-error"));
    g_free(err);
    err = qom_set_error(qom_set_str(l.qts, "/machine/peripheral/rp0",
                                    "flit-error", "kind=fatal"));
    g_assert_nonnull(strstr(err, "kind 'fatal'"));
    qtest_quit(l.qts);
}

/*
 * The interrupts go out as the function's MSI: programmed to an address
 * in RAM, the message's data lands there. x1 with 10 ns of flight: Flit->
 * Ack takes 32 + 20 + 80 = 132 ns, over the 100 ns threshold: one message,
 * none while Status bit 7 is set, another once it is cleared. On the
 * card, the flit error counter's trigger.
 */
#define MSI_AT              0x50
#define MSI_RAM             0x200000
#define MSI_DATA            0x4321

static void msi_on(Link *l, int bus)
{
    wr32(l, bus, MSI_AT + PCI_MSI_ADDRESS_LO, MSI_RAM + 0x10 * bus);
    wr32(l, bus, MSI_AT + PCI_MSI_ADDRESS_HI, 0);
    wr16(l, bus, MSI_AT + PCI_MSI_DATA_64, MSI_DATA + bus);
    wr16(l, bus, MSI_AT + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE);
    wr16(l, bus, PCI_COMMAND, PCI_COMMAND_MASTER | PCI_COMMAND_MEMORY);
}

static void test_interrupts(void)
{
    Link l;
    uint32_t perf, log;

    link_open(&l, FLIT_ARGS(",flit-mode=on,x-width=1",
                            ",flit-mode=on,link-width=1"));
    msi_on(&l, 0);
    msi_on(&l, 1);
    perf = ext_cap(&l, 0, ID_FLIT_PERF);
    wr32(&l, 0, perf + PERF_CTL, PERF_EN | PERF_ACK | PERF_THR_100NS);
    g_assert_cmphex(qtest_readl(l.qts, MSI_RAM), ==, 0);
    vstep(&l, 2000000);
    g_assert_cmphex(qtest_readl(l.qts, MSI_RAM), ==, MSI_DATA);
    g_assert_cmphex(rd32(&l, 0, perf + PERF_STATUS) & 0x80, ==, 0x80);
    qtest_writel(l.qts, MSI_RAM, 0);
    vstep(&l, 3000000);
    g_assert_cmphex(qtest_readl(l.qts, MSI_RAM), ==, 0);
    wr32(&l, 0, perf + PERF_STATUS, 0x80);
    vstep(&l, 2000000);
    g_assert_cmphex(qtest_readl(l.qts, MSI_RAM), ==, MSI_DATA);
    /* 17 counts of 8 ns (132 ns) as the worst */
    g_assert_cmphex(rd32(&l, 0, perf + PERF_STATUS) & 0xFFFF03, ==,
                    17 << 8 | 1);

    /* the card's flit error counter: trigger at 4 errors */
    log = ext_cap(&l, 1, ID_FLIT_LOG);
    wr16(&l, 1, log + 0x0C, 1 | 2 | 4 << 4);
    g_free(qom_set_error(qom_set_str(l.qts, "/machine/peripheral/card",
                                     "flit-error", "count=3")));
    g_assert_cmphex(qtest_readl(l.qts, MSI_RAM + 0x10), ==, 0);
    g_free(qom_set_error(qom_set_str(l.qts, "/machine/peripheral/card",
                                     "flit-error",
                                     "kind=correctable,lane=0")));
    g_assert_cmphex(qtest_readl(l.qts, MSI_RAM + 0x10), ==, MSI_DATA + 1);
    g_assert_cmphex(rd16(&l, 1, log + 0x0E), ==, 4 << 8 | 8);
    /* without MSI enabled nothing is written */
    wr32(&l, 0, perf + PERF_CTL, 0);
    wr32(&l, 0, perf + PERF_STATUS, 0x80);
    wr16(&l, 0, MSI_AT + PCI_MSI_FLAGS, 0);
    qtest_writel(l.qts, MSI_RAM, 0);
    wr32(&l, 0, perf + PERF_CTL, PERF_EN | PERF_ACK | PERF_THR_100NS);
    vstep(&l, 2000000);
    g_assert_cmphex(rd32(&l, 0, perf + PERF_STATUS) & 0x80, ==, 0x80);
    g_assert_cmphex(qtest_readl(l.qts, MSI_RAM), ==, 0);
    qtest_quit(l.qts);
}

/* Retrain Link: both ends' L0->Recovery trackers count it */
static void test_ltssm_retrain(void)
{
    Link l;
    uint32_t perf;

    link_open(&l, FLIT_ARGS(",flit-mode=on", ",flit-mode=on"));
    perf = ext_cap(&l, 0, ID_FLIT_PERF);
    wr32(&l, 0, perf + PERF_CTL, PERF_EN | PERF_TRACK_L0_REC);
    wr32(&l, 1, 0x260 + PERF_CTL, PERF_EN | PERF_TRACK_L0_REC);
    wr16(&l, 0, RP_EXP + PCI_EXP_LNKCTL, LNKCTL_RETRAIN);
    wr16(&l, 0, RP_EXP + PCI_EXP_LNKCTL, LNKCTL_RETRAIN);
    /* 20 us of Recovery: 1 unit of 64 us; the worst of two */
    g_assert_cmphex(rd32(&l, 0, perf + 0x10), ==, ST(1, 2, 1));
    g_assert_cmphex(rd32(&l, 1, 0x260 + 0x10), ==, ST(1, 2, 1));
    /* a reset keeps them (sticky) and stops the run */
    qtest_system_reset(l.qts);
    ecam_on(l.qts);
    g_assert_cmphex(rd32(&l, 0, perf + 0x10), ==, ST(1, 2, 1));
    g_assert_cmphex(rd32(&l, 0, perf + PERF_CTL), ==, 0);
    qtest_quit(l.qts);
}

/*
 * A link with measurements going on, migrated in their middle: every
 * flit register of both ends equals an unmigrated twin's afterwards.
 */
#define MIG_ARGS FLIT_ARGS(",flit-mode=on,flit-flight-ns=40", \
                           ",flit-mode=on,flit-flight-ns=40")
#define MIG_T0  500000
#define MIG_T1  1500000

static void mig_setup(Link *l)
{
    ecam_on(l->qts);
    qtest_writeb(l->qts, at(0, PCI_SECONDARY_BUS), 1);
    qtest_writeb(l->qts, at(0, PCI_SUBORDINATE_BUS), 1);
    qtest_clock_set(l->qts, 100000);
    wr32(l, 0, 0x320 + LOG_MEAS_CTL, 1);
    wr32(l, 1, 0x220 + LOG_MEAS_CTL, 1);
    wr32(l, 0, 0x360 + PERF_CTL, PERF_EN | PERF_NAK | PERF_TRACK_L0_REC);
    wr32(l, 1, 0x260 + PERF_CTL, PERF_EN | PERF_ACK | PERF_INST(20) |
         PERF_THR_100NS);
    wr16(l, 0, RP_EXP + PCI_EXP_LNKCTL, LNKCTL_RETRAIN);
    g_free(qom_set_error(qom_set_str(l->qts, "/machine/peripheral/card",
                                     "flit-error", "count=2")));
    qtest_clock_set(l->qts, MIG_T0);
}

static void mig_finish(Link *l, uint32_t *regs)
{
    g_free(qom_set_error(qom_set_str(l->qts, "/machine/peripheral/card",
                                     "flit-error", "count=5")));
    qtest_clock_set(l->qts, MIG_T1);
    for (int bus = 0; bus < 2; bus++) {
        for (uint32_t o = 0; o < 0x88; o += 4) {
            regs[bus * 0x22 + o / 4] = rd32(l, bus, (bus ? 0x200 : 0x300) + o);
        }
    }
}

static void test_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("flit-mig-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    uint32_t want[0x44], got[0x44];
    Link a, b;

    a.qts = qtest_initf("-machine q35 -nodefaults %s", MIG_ARGS);
    mig_setup(&a);
    mig_finish(&a, want);
    qtest_quit(a.qts);

    a.qts = qtest_initf("-machine q35 -nodefaults %s", MIG_ARGS);
    mig_setup(&a);
    qtest_qmp_assert_success(a.qts, "{ 'execute': 'stop' }");
    qtest_qmp_assert_success(a.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    wait_migration(a.qts);
    qtest_quit(a.qts);
    b.qts = qtest_initf("-machine q35 -nodefaults %s -incoming defer",
                        MIG_ARGS);
    qtest_qmp_assert_success(b.qts, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", uri);
    wait_migration(b.qts);
    qtest_qmp_assert_success(b.qts, "{ 'execute': 'cont' }");
    g_assert_cmpint(qtest_clock_set(b.qts, MIG_T0), ==, MIG_T0);
    mig_finish(&b, got);
    qtest_quit(b.qts);
    unlink(file);
    for (unsigned i = 0; i < G_N_ELEMENTS(want); i++) {
        g_assert_cmphex(got[i], ==, want[i]);
    }
    /* and the run did something worth comparing */
    g_assert_cmpuint(want[0x22 + (0x260 - 0x200 + PERF_STATUS) / 4] & 3, ==,
                     2);
    g_assert_cmpuint(want[(0x360 - 0x300 + PERF_STATUS) / 4] >> 2 & 31, ==,
                     7);
    g_assert_cmpuint(want[(0x320 - 0x300 + LOG_FLITS) / 4], >, 100000);

    /* a destination without flit mode refuses the stream */
    a.qts = qtest_initf("-machine q35 -nodefaults %s", MIG_ARGS);
    mig_setup(&a);
    qtest_qmp_assert_success(a.qts, "{ 'execute': 'stop' }");
    qtest_qmp_assert_success(a.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    wait_migration(a.qts);
    qtest_quit(a.qts);
    b.qts = qtest_initf("-machine q35 -nodefaults %s -incoming defer",
                        FLIT_ARGS(",flit-mode=on,flit-flight-ns=40", ""));
    qtest_qmp_assert_success(b.qts, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", uri);
    /* the load fails and QEMU exits with 1 */
    for (int i = 0; i < 20000 && qtest_probe_child(b.qts); i++) {
        g_usleep(1000);
    }
    g_assert_false(qtest_probe_child(b.qts));
    qtest_set_expected_status(b.qts, 1);
    qtest_quit(b.qts);
    unlink(file);
    rmdir(dir);
}

static void test_props_refused(void)
{
    static const struct {
        const char *dev, *needle;
    } bad[] = {
        { "dwc-pcie-root-port,chassis=1,slot=1,flit-mode=on",
          "'x-speed=64'" },
        { "dwc-pcie-root-port,chassis=1,slot=1,flit-mode=on,x-speed=64,"
          "x-width=12", "'x-width'" },
        { "dwc-pcie-root-port,chassis=1,slot=1,flit-mode=on,x-speed=64,"
          "flit-ltssm-regs=6", "'flit-ltssm-regs'" },
        { "ndk-pcie-telemetry,flit-mode=on", "'link-speed=64'" },
        { "ndk-pcie-telemetry,flit-mode=on,link-speed=64,link-width=32",
          "'link-width'" },
        { "ndk-pcie-telemetry,flit-mode=on,link-speed=64,flit-flight-ns="
          "2000000", "'flit-flight-ns'" },
        { "ndk-pcie-telemetry,flit-error=kind=uncorrectable", "qom-set" },
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *extra[] = { "-device", bad[i].dev, NULL };

        expect_start_refused(extra, bad[i].needle);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/flit-link/chains", test_chains);
    qtest_add_func("/flit-link/negotiation", test_negotiation);
    qtest_add_func("/flit-link/ack-measurement", test_ack_measurement);
    qtest_add_func("/flit-link/flit-counter", test_flit_counter);
    qtest_add_func("/flit-link/injection", test_injection);
    qtest_add_func("/flit-link/interrupts", test_interrupts);
    qtest_add_func("/flit-link/ltssm-retrain", test_ltssm_retrain);
    qtest_add_func("/flit-link/migration", test_migration);
    qtest_add_func("/flit-link/props-refused", test_props_refused);
    return g_test_run();
}
