/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest of ndk-pcie-telemetry: the counts of the pattern traffic source,
 * predicted by the per-cycle simulator of ndk-sim.h (itself checked here
 * against closed forms worked out by hand): a card read mid-window, one
 * left unread for an hour of virtual time, and one hot-plugged in the
 * middle of a frame.
 */

#include "ndk-common.h"
#include "ndk-sim.h"

/* ------------------------------------------------------------------ */
/* Counts of the pattern source                                       */

static void test_pattern_counts(void)
{
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES];
    uint64_t origin;
    int64_t t;
    Ndk n;

    check_simulator();
    check_edges();

    ndk_open(&n, "q35", PATTERN_ARGS
             "-device ndk-pcie-telemetry,addr=04.0,traffic=tp0");
    origin = first_cycle(n.t->t0, PCIE_HZ);

    /* live registers before the first drain */
    step_to(&n, n.t->t0 + 10000);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, 0);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 0x07FF0000);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STFIFO(0)), ==, 0xFFFF0000);

    /* after it: 100 free tags now and at the lowest, 1024 FIFO words */
    step_to(&n, word_ns(origin, 0));
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 100 | 100 << 16);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STFIFO(0)), ==, 1024 | 1024 << 16);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)) & (1 << 9), ==, 1 << 9);

    /*
     * CLEAR_LOWEST raises the lowest values two MI cycles after the write
     * (the command register, then the lowest values), no BUSY; the next
     * drain lowers them again
     */
    step_to(&n, n.t->t0 + 12000);
    wr(&n, PTL_REG_COMMAND, PTL_CMD_CLEAR_LOWEST);
    step(&n, MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 100 | 100 << 16);
    step(&n, MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 0x07FF0000 | 100);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STFIFO(0)), ==, 0xFFFF0000 | 1024);
    step(&n, 2 * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    step_to(&n, word_ns(origin, 1));
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 100 | 100 << 16);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STFIFO(0)), ==, 1024 | 1024 << 16);

    /*
     * Half a PCIe window after the drain of window 8: PCIe windows 0..8
     * (9 x 4096 - 1 cycles), DMA windows 0..3 (4 x 4096 - 1 cycles).
     */
    t = n.t->t0 + 9 * 10240 + 5120;
    pattern_expect(n.t->t0, t, exp);
    g_assert_cmpuint(exp[0], ==, 9 * 4096 - 1);
    g_assert_cmpuint(exp[31], ==, 4 * 4096 - 1);
    /*
     * RQ moves a word in every cycle: its words channel (slot 1) counts
     * cycles [1, 36863 + 5), its items (slot 6) [1, 36863 + 30), 16 items
     * a word but for words 1..3 of the frame whose SOF in cycle 0 was not
     * seen; FIFO band 3 (slot 6, a band) [0, 36863 + 29)
     */
    g_assert_cmpuint(exp[1 + PTL_CH_WORDS], ==, 36863 - 1 + 5);
    g_assert_cmpuint(exp[1 + PTL_CH_ITEMS], ==, 16 * (36863 - 1 + 30 - 3));
    g_assert_cmpuint(exp[30], ==, 36863 + 29);
    step_to(&n, t);
    snapshot(&n, DEF_ENTRIES);
    wr(&n, PTL_REG_READ_SEL, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("pattern, snapshot", got, exp, DEF_ENTRIES);
    wr(&n, PTL_REG_READ_SEL, 1);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("pattern, live", got, exp, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    ndk_close(&n);
}
/*
 * The card left unread for an hour (and for ten seconds) of virtual time:
 * the first reading after it equals the pattern's closed form.
 */
static void test_pattern_hour_unread(void)
{
    static const int64_t unread[] = { 10000000000LL, 3600000000000LL };
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES];

    for (size_t i = 0; i < G_N_ELEMENTS(unread); i++) {
        /* half a PCIe window after a drain */
        int64_t t;
        uint64_t op, od, wp, wd;
        SimProbe pp, dp;
        Ndk n;

        ndk_open(&n, "q35", PATTERN_ARGS
                 "-device ndk-pcie-telemetry,addr=04.0,traffic=tp0");
        t = n.t->t0 + unread[i] / 10240 * 10240 + 5120;
        op = first_cycle(n.t->t0, PCIE_HZ);
        od = first_cycle(n.t->t0, DMA_HZ);
        wp = windows_by(t, op, PCIE_HZ, DP);
        wd = windows_by(t, od, DMA_HZ, DP);
        memset(exp, 0, sizeof(exp));
        pattern_probes(&pp, &dp);
        sim_windows_long(&pp, 4, op, DP, wp, exp);
        sim_windows_long(&dp, 7, od, DP, wd, exp + 31);
        g_assert_cmpuint(exp[0], >, unread[i] / 3);

        step_to(&n, t);
        wr(&n, PTL_REG_READ_SEL, 1);
        read_counters(&n, DEF_ENTRIES, got);
        check_counters("pattern, live, after a long unread stretch", got,
                       exp, DEF_ENTRIES);
        g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 100 | 100 << 16);
        g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
        snapshot(&n, DEF_ENTRIES);
        wr(&n, PTL_REG_READ_SEL, 0);
        read_counters(&n, DEF_ENTRIES, got);
        g_assert_cmpuint(got[0], >=, exp[0]);
        ndk_close(&n);
    }
}

/*
 * The same traffic on a card hot-plugged (conventional PCI, ACPI hotplug)
 * at 991 ns: the probes start at PCIe cycle ceil(991 x 0.4) = 397 = 4 x 99
 * + 1, word 1 of an RQ frame, and at DMA cycle ceil(991 x 0.2) = 199 =
 * 7 x 28 + 3, word 1 of an UP frame. Words of a frame whose SOF came
 * before the reset move without an open frame: they count as words but
 * add no items and use no region. The origin itself counts no bus event.
 */
static void test_pattern_counts_hotplug(void)
{
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES];
    QTestState *qts;
    int64_t t, now;
    Ndk n;

    qts = qtest_init("-machine pc -nodefaults " PATTERN_ARGS);
    now = qtest_clock_step(qts, 991);
    g_assert_cmpint(now, ==, 991);
    qtest_qmp_device_add(qts, "ndk-pcie-telemetry", "ndk0",
                         "{ 'addr': '04.0', 'traffic': 'tp0' }");
    ndk_open_plugged(&n, qpci_new_pc(qts, NULL), now, NDK_BAR_SIZE);
    g_assert_cmpuint(first_cycle(n.t->t0, PCIE_HZ) % 4, ==, 1);
    g_assert_cmpuint(first_cycle(n.t->t0, DMA_HZ) % 7, ==, 3);

    t = n.t->t0 + 9 * 10240 + 5120;
    pattern_expect(n.t->t0, t, exp);
    /*
     * The partial frames. RQ items (slot 6) count the cycles [o + 1,
     * o + 36863 + 30), a word in each, of which words 2 and 3 of the cut
     * frame (o + 1, o + 2) add no items. UP items (DMA slot 6) count
     * [o + 1, o + 16383 + 24): o + 1 = 200 is the first idle cycle of
     * its period, 3 idle cycles to the next period, then 16403 = 7 x 2343
     * + 2 cycles: 2343 whole frames of 25 items and the 2 stalled cycles
     * of the next one.
     */
    g_assert_cmpuint(exp[1 + PTL_CH_ITEMS], ==, 16 * (36863 - 1 + 30 - 2));
    g_assert_cmpuint(exp[31 + 1 + PTL_CH_ITEMS], ==, 25 * 2343);
    step_to(&n, t);
    snapshot(&n, DEF_ENTRIES);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("hot-plugged, snapshot", got, exp, DEF_ENTRIES);
    ndk_close(&n);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_set_nonfatal_assertions();

    g_test_add_func("/ndk-pcie-telemetry/traffic/pattern-counts",
                    test_pattern_counts);
    g_test_add_func("/ndk-pcie-telemetry/traffic/pattern-hour-unread",
                    test_pattern_hour_unread);
    g_test_add_func("/ndk-pcie-telemetry/traffic/pattern-counts-hotplug",
                    test_pattern_counts_hotplug);

    return g_test_run();
}
