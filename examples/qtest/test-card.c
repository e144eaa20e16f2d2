/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An example register test against the virtual NDK telemetry card, the
 * kind an NDK software team keeps in its own repository and builds with
 *
 *     <clone>/scripts/qtest-user.sh <directory holding this file>
 *
 * It is a plain libqtest program over the libqos driver's API
 * (qos/ndk-telemetry.h) and the public register map
 * (pcie-telemetry-regs.h). See docs/qtest.md.
 */
#include "qemu/osdep.h"
#include "ndk-telemetry.h"

/*
 * The RQ bus carries 64-byte frames back to back: with two 32-byte regions
 * each frame is one word, so in every PCIe cycle a word moves with a SOF,
 * fills both regions and carries 64 / 4 = 16 MFB items.
 */
/*
 * A probe reads its channels out one after the other, so each channel's
 * drain window ends a few cycles after the previous one's (the device's
 * page, "Semantics and timing"): counts of one snapshot agree within
 * that many cycles, the channels of the probe.
 */
#define SLOT_CYCLES 32

static void assert_near(uint64_t got, uint64_t want, uint64_t tol)
{
    g_assert_cmpuint(got, <=, want + tol);
    g_assert_cmpuint(got + tol, >=, want);
}

#define CARD "-device ndk-pcie-telemetry,traffic=t0 " \
             "-object telemetry-traffic-pattern,id=t0,rq-frame-bytes=64"

static void test_back_to_back_frames(void)
{
    QNdkTelemetry *t = qndk_start("q35", CARD);
    uint64_t words, cycles;

    g_assert_cmphex(qndk_readl(t, PTL_REG_MAGIC), ==, PTL_MAGIC);
    /* nothing moves until the test steps virtual time */
    qndk_step(t, 1000000);
    g_assert_cmphex(qndk_snapshot(t) & PTL_STATUS_LOST, ==, 0);

    words = qndk_bus_counter(t, 0, QNDK_RQ, 0, PTL_CH_WORDS);
    cycles = qndk_cycles(t, 0, false);
    g_assert_cmpuint(words, >, 390000);        /* ~1 ms at 400 MHz */
    assert_near(words, cycles, SLOT_CYCLES);
    assert_near(qndk_bus_counter(t, 0, QNDK_RQ, 0, PTL_CH_SOF), words,
                SLOT_CYCLES);
    assert_near(qndk_bus_counter(t, 0, QNDK_RQ, 0, PTL_CH_ITEMS),
                16 * words, 16 * SLOT_CYCLES);
    assert_near(qndk_bus_counter(t, 0, QNDK_RQ, 0, PTL_CH_REGION0 + 1),
                words, SLOT_CYCLES);
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_RQ, 0, PTL_CH_STALL), ==,
                     0);
    /* the other buses are idle */
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_RC, 0, PTL_CH_WORDS), ==,
                     0);

    /* after CLEAR a snapshot holds at most a drain window or two */
    qndk_clear(t);
    qndk_snapshot(t);
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_RQ, 0, PTL_CH_WORDS), <,
                     2 * 4096);
    qndk_stop(t);
}

/*
 * SNAPSHOT by hand, as read-out code does it. Under qtest virtual time
 * stands still between commands, so a wait for BUSY must step the clock
 * in its loop, or it spins for ever (scripts/qtest-user.sh then stops the
 * program after its time limit); and it must be bounded, so that a BUSY
 * that never drops fails the test with a message instead of hanging it.
 * qndk_wait_busy(t, max_cycles) is the driver's bounded wait.
 */
static void wait_while_busy(QNdkTelemetry *t)
{
    /* a sweep takes about 2 x ENTRIES + 8 MI cycles */
    unsigned max = 4 * t->lay.entries + 64, n = 0;

    while (qndk_status(t) & PTL_STATUS_BUSY) {
        if (n++ == max) {
            g_test_message("BUSY still set after %u MI cycles of %" PRId64
                           " ns: raise the bound, or set t->mi_ns to the "
                           "card's MI period (mi-clk-freq)", max, t->mi_ns);
            g_assert_cmpuint(n, <=, max);
        }
        qndk_step(t, t->mi_ns);     /* nothing moves without a step */
    }
}

static void test_snapshot_by_hand(void)
{
    QNdkTelemetry *t = qndk_start("q35", CARD);

    qndk_step(t, 100000);
    qndk_writel(t, PTL_REG_READ_SEL, PTL_READ_SEL_SNAPSHOT);
    qndk_writel(t, PTL_REG_COMMAND, PTL_CMD_SNAPSHOT);
    /* BUSY rises from the second MI cycle after the command */
    g_assert_cmphex(qndk_status(t) & PTL_STATUS_BUSY, ==, 0);
    qndk_step(t, 2 * t->mi_ns);
    g_assert_cmphex(qndk_status(t) & PTL_STATUS_BUSY, ==, PTL_STATUS_BUSY);
    wait_while_busy(t);
    /* 100 us at 400 MHz: 9 whole drain windows of 4096 cycles */
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_RQ, 0, PTL_CH_WORDS), >,
                     8 * 4096);
    qndk_stop(t);
}

/* libpcie-telemetry's own reader, as a team's read-out code uses it */
static void test_library_reading(void)
{
    QNdkTelemetry *t = qndk_start("q35", CARD);
    ptl_block *b = NULL;
    ptl_reading *r;
    ptl_data *d;
    ptl_error err;

    g_assert_cmpint(ptl_block_open(&qndk_ptl_ops, t, &b, &err), ==, PTL_OK);
    r = ptl_reading_new(ptl_block_layout(b));
    qndk_step(t, 1000000);
    g_assert_cmpint(ptl_block_read(b, r, &err), ==, PTL_OK);
    d = ptl_data_decode(ptl_block_layout(b), r);
    g_assert_nonnull(d);
    g_assert_cmpuint(d->endpoints[0].buses[0].kind, ==, PTL_BUS_RQ);
    assert_near(d->endpoints[0].buses[0].items,
                16 * d->endpoints[0].buses[0].words, 16 * SLOT_CYCLES);
    g_assert_true(d->endpoints[0].link_up);
    ptl_data_free(d);
    ptl_reading_free(r);
    ptl_block_close(b);
    qndk_stop(t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/example/back-to-back-frames", test_back_to_back_frames);
    qtest_add_func("/example/snapshot-by-hand", test_snapshot_by_hand);
    qtest_add_func("/example/library-reading", test_library_reading);
    return g_test_run();
}
