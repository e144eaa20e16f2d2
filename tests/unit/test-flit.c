/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The flit-mode capabilities of a link end (qemu-device/flit): the link's
 * closed form against a flit-by-flit walk, every register's access type,
 * latency sums and worst cases, overflow, thresholds and their one
 * interrupt, Nak and replay tracking between two ends, the LTSSM
 * trackers' register assignment, FBER and the error log, reset and
 * migration. Expected latencies are worked out here from the figures of
 * docs/flit.md (flit time, turnaround, flight), not taken from the model.
 */
#include <glib.h>
#include <string.h>

#include "flit-end.h"
#include "flit-link.h"

/* A link whose totals the test sets; interrupts are counted */
typedef struct Link {
    FlitTotals t;
    unsigned irqs;
} Link;

static void link_totals(void *opaque, uint64_t now, FlitTotals *out)
{
    *out = ((Link *)opaque)->t;
}

static void link_irq(void *opaque)
{
    ((Link *)opaque)->irqs++;
}

static void open_end(FlitEnd *s, Link *l, unsigned width, unsigned regs,
                     uint32_t flight)
{
    FlitEndConfig cfg = { .width = width, .ltssm_regs = regs,
                          .flight_ns = flight };

    memset(l, 0, sizeof(*l));
    g_assert_null(flit_end_check(&cfg));
    flit_end_init(s, &cfg, link_totals, link_irq, l);
    flit_end_set_active(s, true, 0, 0);
}

static uint32_t rd(FlitEnd *s, FlitCap cap, uint32_t off)
{
    return flit_end_read(s, cap, off, 4, 0);
}

static void wr(FlitEnd *s, FlitCap cap, uint32_t off, uint32_t val)
{
    flit_end_write(s, cap, off, val, 4, 0);
}

#define PERF_CTL(type, inst, thr) \
    (FLIT_PERF_EN | (type) << FLIT_PERF_TYPE_SHIFT | \
     (inst) << FLIT_PERF_INST_SHIFT | (thr) << FLIT_PERF_THR_SHIFT)
#define ST(st, n, cnt) ((st) | (n) << 2 | (cnt) << 8)

/* Flits in l0_ns walked one by one: K flits, then 40 symbols of SKP */
static uint64_t walk(unsigned w, uint64_t l0_ns)
{
    uint64_t sym = l0_ns * 8, at = 0, n = 0;
    unsigned k = 0, per = 256 / w;
    unsigned K = w == 16 ? 748 : w == 8 ? 374 : w == 4 ? 187 : w == 2 ? 93
                                                                    : 46;

    for (;;) {
        if (k == K) {
            at += 40;
            k = 0;
            continue;
        }
        if (at + per > sym) {
            return n;
        }
        at += per;
        n++;
        k++;
    }
}

static void test_closed_form(void)
{
    static const unsigned widths[] = { 1, 2, 4, 8, 16 };

    for (unsigned i = 0; i < G_N_ELEMENTS(widths); i++) {
        unsigned w = widths[i];

        for (uint64_t t = 0; t < 40000; t += 7) {
            g_assert_cmpuint(flit_slots(w, t), ==, walk(w, t));
        }
        g_assert_cmpuint(flit_slots(w, 3000001), ==, walk(w, 3000001));
    }
    /* x16: a flit every 2 ns; 748 flits and a SKP in 1501 ns */
    g_assert_cmpuint(flit_time_ps(16), ==, 2000);
    g_assert_cmpuint(flit_time_ps(1), ==, 32000);
    g_assert_cmpuint(flit_slots(16, 1501), ==, 748);
    g_assert_cmpuint(flit_slots(16, 1500), ==, 748);
    g_assert_cmpuint(flit_slots(16, 1496), ==, 748);
    g_assert_cmpuint(flit_slots(16, 1495), ==, 747);
    g_assert_cmpuint(flit_payload_flits(0), ==, 0);
    g_assert_cmpuint(flit_payload_flits(1), ==, 1);
    g_assert_cmpuint(flit_payload_flits(236), ==, 1);
    g_assert_cmpuint(flit_payload_flits(237), ==, 2);
    g_assert_false(flit_width_valid(12));
    g_assert_false(flit_width_valid(32));
}

static void test_config(void)
{
    FlitEndConfig bad_w = { .width = 12 }, bad_r = { .width = 4,
                                                     .ltssm_regs = 6 };
    char *err;

    err = flit_end_check(&bad_w);
    g_assert_nonnull(strstr(err, "x12"));
    g_free(err);
    err = flit_end_check(&bad_r);
    g_assert_nonnull(strstr(err, "6 LTSSM"));
    g_free(err);
    g_assert_cmpuint(flit_cap_size(FLIT_CAP_PERF, &bad_r), ==, 0x10 + 24);
    g_assert_cmpuint(flit_cap_size(FLIT_CAP_LOG, &bad_r), ==, 0x3C);
    g_assert_cmpuint(flit_cap_size(FLIT_CAP_64GT, &bad_w), ==, 0x10 + 12);
}

static void test_access_types(void)
{
    FlitEnd s;
    Link l;

    open_end(&s, &l, 16, 3, 0);
    /* 0x0031: equalization done once trained in flit mode; RO */
    g_assert_cmphex(rd(&s, FLIT_CAP_64GT, FLIT_64GT_STATUS), ==, 0xF);
    wr(&s, FLIT_CAP_64GT, FLIT_64GT_STATUS, 0);
    wr(&s, FLIT_CAP_64GT, FLIT_64GT_CTL, ~0u);
    g_assert_cmphex(rd(&s, FLIT_CAP_64GT, FLIT_64GT_STATUS), ==, 0xF);
    g_assert_cmphex(rd(&s, FLIT_CAP_64GT, FLIT_64GT_CTL), ==, 0);
    flit_end_set_active(&s, false, 0, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_64GT, FLIT_64GT_STATUS), ==, 0);
    flit_end_set_active(&s, true, 0, 0);

    /* 0x0033: vector RO 0, count HwInit, control RW but [5:4] */
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_CAP), ==, 3 << 10);
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CAP, ~0u);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_CAP), ==, 3 << 10);
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, ~0u);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_CTL), ==, 0x3FFFFFCF);
    /* status RO: a write of all ones changes nothing but RW1C bit 7 */
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS) & ~3u, ==, 0);
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS, ~0u);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS) & ~3u, ==, 0);
    /* LTSSM registers: 3 exist, the 4th and 5th read 0 */
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x1C), ==, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x20), ==, 0);
    /* byte and word accesses within a dword; crossing ones do nothing */
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, 0x12345678 & 0x3FFFFFCE);
    g_assert_cmphex(flit_end_read(&s, FLIT_CAP_PERF, FLIT_PERF_CTL + 1, 1,
                                  0), ==, 0x56);
    g_assert_cmphex(flit_end_read(&s, FLIT_CAP_PERF, FLIT_PERF_CTL + 2, 2,
                                  0), ==, 0x1234);
    g_assert_cmphex(flit_end_read(&s, FLIT_CAP_PERF, FLIT_PERF_CTL + 2, 4,
                                  0), ==, 0);
    flit_end_write(&s, FLIT_CAP_PERF, FLIT_PERF_CTL + 3, 0, 1, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_CTL), ==, 0x00345648);
    /* the header dword is the PCI layer's */
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0), ==, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_LOG, 0x3C), ==, 0);

    /* 0x0032: counter control RW [11:0], FBER control RW but Clear */
    wr(&s, FLIT_CAP_LOG, FLIT_LOG_CNT_CTL, ~0u);
    g_assert_cmphex(rd(&s, FLIT_CAP_LOG, FLIT_LOG_CNT_CTL) & 0xFFFF, ==,
                    0x0FFF);
    wr(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_CTL, ~0u);
    g_assert_cmphex(rd(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_CTL), ==, 0xD);
    wr(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_FLITS, ~0u);
    wr(&s, FLIT_CAP_LOG, FLIT_LOG_ERR2, ~0u);
    g_assert_cmphex(rd(&s, FLIT_CAP_LOG, FLIT_LOG_ERR2), ==, 0);
}

/* x16, no flight: 2 ns + 50 ns = 52 ns, 7 units of 8 ns */
static void test_ack_sum(void)
{
    FlitEnd s;
    Link l;

    g_assert_cmpuint(flit_ack_latency_ns(16, 0), ==, 52);
    open_end(&s, &l, 16, 0, 0);
    l.t.tx_payload = 1000;
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, PERF_CTL(FLIT_PERF_TYPE_ACK, 4, 0));
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    ST(1, 0, 0));
    l.t.tx_payload += 2 * 236;
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    ST(1, 2, 14));
    l.t.tx_payload += 1;          /* a third flit, partly filled */
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    ST(1, 3, 21));
    l.t.tx_payload += 10 * 236;
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    ST(2, 4, 28));
    /* done stays done; disabling keeps the result */
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    ST(2, 4, 28));
    /* x1 with 100 ns of flight: 32 + 200 + 80 = 312 ns, 39 units */
    g_assert_cmpuint(flit_ack_latency_ns(1, 100), ==, 312);
    g_assert_cmpuint(flit_replay_latency_ns(1, 100), ==, 344);
}

static void test_worst_case_and_overflow(void)
{
    FlitEnd s;
    Link l;

    open_end(&s, &l, 4, 0, 0);      /* x4: 8 + 56 = 64 ns, 8 units */
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, PERF_CTL(FLIT_PERF_TYPE_ACK, 0, 0));
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    ST(1, 0, 0));
    l.t.tx_payload = 5 * 236;
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    ST(1, 5, 8));
    l.t.tx_payload = 1000 * 236;    /* tracked stops at 31 */
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    ST(1, 31, 8));
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    ST(2, 31, 8));
    /* Enable 0 -> 1 starts afresh */
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, PERF_CTL(FLIT_PERF_TYPE_ACK, 0, 0));
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    ST(1, 0, 0));

    /* 1 ms of flight: 250 000 units do not fit 16 bits */
    open_end(&s, &l, 4, 0, 1000000);
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, PERF_CTL(FLIT_PERF_TYPE_ACK, 2, 0));
    l.t.tx_payload = 236;
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS) & 3, ==, 3);
    /* a sum overflows where one latency fits: 30 x 8200 units */
    open_end(&s, &l, 4, 0, 32768);
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL,
       PERF_CTL(FLIT_PERF_TYPE_ACK, 30, 0));
    l.t.tx_payload = 7 * 236;
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS) & 3, ==, 1);
    l.t.tx_payload = 9 * 236;
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS) & 3, ==, 3);
    /* a reserved type tracks nothing */
    open_end(&s, &l, 4, 0, 0);
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, PERF_CTL(3, 2, 0));
    l.t.tx_payload = 9 * 236;
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    ST(1, 0, 0));
}

static void test_threshold_interrupt(void)
{
    FlitEnd s;
    Link l;

    /* x1: 32 + 80 = 112 ns, above 100 ns, below 200 ns */
    open_end(&s, &l, 1, 0, 0);
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, PERF_CTL(FLIT_PERF_TYPE_ACK, 0, 2));
    g_assert_cmpuint(flit_end_deadline(&s), ==, UINT64_MAX);
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, 0);
    flit_end_write(&s, FLIT_CAP_PERF, FLIT_PERF_CTL,
                   PERF_CTL(FLIT_PERF_TYPE_ACK, 0, 1), 4, 5000);
    /* first look when the first Ack could come */
    g_assert_cmpuint(flit_end_deadline(&s), ==, 5000 + 112);
    flit_end_sync(&s, 5112);
    g_assert_cmpuint(l.irqs, ==, 0);        /* no traffic, no flit */
    g_assert_cmpuint(flit_end_deadline(&s), ==, 5112 + 1000000);
    l.t.tx_payload = 100;
    flit_end_sync(&s, 1005112);
    g_assert_cmpuint(l.irqs, ==, 1);
    g_assert_cmpuint(flit_end_deadline(&s), ==, UINT64_MAX);
    l.t.tx_payload = 10000;
    flit_end_sync(&s, 2005112);
    g_assert_cmpuint(l.irqs, ==, 1);        /* not while bit 7 is set */
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS) & FLIT_ST_INT,
                    ==, FLIT_ST_INT);
    flit_end_write(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS, FLIT_ST_INT, 1,
                   2005113);
    /* cleared: the next look at a tracked flit over it signals again */
    g_assert_cmpuint(l.irqs, ==, 1);
    flit_end_sync(&s, 2005114);
    g_assert_cmpuint(l.irqs, ==, 2);
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, 0);
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS, FLIT_ST_INT);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_STATUS) & FLIT_ST_INT,
                    ==, 0);
    g_assert_cmpuint(l.irqs, ==, 2);
}

/* Errors received at a go to b as Naks; a awaits the replays */
static void test_nak_and_replay(void)
{
    FlitEnd a, b;
    Link la, lb;
    FlitError e = { .kind = FLIT_ERR_UNCORRECTABLE, .count = 3 };
    uint32_t naks;

    open_end(&a, &la, 8, 0, 10);
    open_end(&b, &lb, 8, 0, 10);
    wr(&b, FLIT_CAP_PERF, FLIT_PERF_CTL, PERF_CTL(FLIT_PERF_TYPE_NAK, 0, 0));
    wr(&a, FLIT_CAP_PERF, FLIT_PERF_CTL,
       PERF_CTL(FLIT_PERF_TYPE_REPLAY, 5, 0));
    lb.t.tx_payload = 100 * 236;     /* Acks do not count as Naks */
    naks = flit_end_rx_errors(&a, &e, 0);
    g_assert_cmpuint(naks, ==, 3);
    flit_end_naks_received(&b, naks, 0);
    /* x8, 10 ns: 4 + 20 + 52 = 76 ns, 10 units; replay 80 ns, 10 */
    g_assert_cmphex(rd(&b, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    ST(1, 3, 10));
    g_assert_cmphex(rd(&a, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    ST(1, 3, 30));
    e.count = 4;
    flit_end_naks_received(&b, flit_end_rx_errors(&a, &e, 0), 0);
    g_assert_cmphex(rd(&a, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    ST(2, 5, 50));
    /* correctable errors make no Nak */
    e = (FlitError){ .kind = FLIT_ERR_CORRECTABLE, .lane = 2, .count = 9 };
    g_assert_cmpuint(flit_end_rx_errors(&a, &e, 0), ==, 0);
    /* nothing counts while the link is not in flit mode */
    flit_end_set_active(&a, false, 0, 0);
    e.kind = FLIT_ERR_UNCORRECTABLE;
    g_assert_cmpuint(flit_end_rx_errors(&a, &e, 0), ==, 0);
}

static void test_ltssm_trackers(void)
{
    FlitEnd s;
    Link l;
    uint32_t ctl;

    /* trackers 14 and 16 enabled, two registers: 10h is 14, 14h is 16 */
    open_end(&s, &l, 4, 2, 0);
    ctl = FLIT_PERF_EN | (1u | 4u) << FLIT_PERF_TRACK_SHIFT |
          2u << FLIT_PERF_LINST_SHIFT;
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, ctl);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x10), ==, ST(1, 0, 0));
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x14), ==, ST(1, 0, 0));
    /* 100 us: 2 units of 64 us; 10 us: 1 */
    flit_end_ltssm(&s, FLIT_LTSSM_L0_RECOVERY, 100000, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x10), ==, ST(1, 1, 2));
    flit_end_ltssm(&s, FLIT_LTSSM_L0_RECOVERY, 10000, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x10), ==, ST(2, 2, 3));
    flit_end_ltssm(&s, FLIT_LTSSM_L0_RECOVERY, 10000, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x10), ==, ST(2, 2, 3));
    flit_end_ltssm(&s, FLIT_LTSSM_L10_L0, 70000, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x14), ==, ST(1, 1, 2));
    /* an event whose tracker is off counts nowhere */
    flit_end_ltssm(&s, FLIT_LTSSM_L0P_UP, 70000, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x14), ==, ST(1, 1, 2));
    /* disabling ends what runs; the values stay (ROS) */
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, ctl & ~FLIT_PERF_EN);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x14), ==, ST(2, 1, 2));
    /* a conventional reset keeps them (sticky) */
    flit_end_reset(&s, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x10), ==, ST(2, 2, 3));
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, FLIT_PERF_CTL), ==, 0);

    /* one register, trackers 15 and 14: it is 14's (the lower bit) */
    open_end(&s, &l, 4, 1, 0);
    ctl = FLIT_PERF_EN | 3u << FLIT_PERF_TRACK_SHIFT |
          1u << FLIT_PERF_LTHR_SHIFT;         /* 6.4 ms */
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, ctl);
    flit_end_ltssm(&s, FLIT_LTSSM_L0P_UP, 64000, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x10), ==, ST(1, 0, 0));
    /* worst case (instances 0) keeps the longest; 7 ms interrupts once */
    flit_end_ltssm(&s, FLIT_LTSSM_L0_RECOVERY, 128000, 0);
    flit_end_ltssm(&s, FLIT_LTSSM_L0_RECOVERY, 64000, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x10), ==, ST(1, 2, 2));
    g_assert_cmpuint(l.irqs, ==, 0);
    flit_end_ltssm(&s, FLIT_LTSSM_L0_RECOVERY, 7000000, 0);
    flit_end_ltssm(&s, FLIT_LTSSM_L0_RECOVERY, 7000000, 0);
    g_assert_cmpuint(l.irqs, ==, 1);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x10), ==,
                    ST(1, 4, 110) | FLIT_ST_INT);
    /* Enable 0 -> 1 clears status, count and counter, not bit 7 */
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, 0);
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, ctl);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x10), ==,
                    ST(1, 0, 0) | FLIT_ST_INT);
    wr(&s, FLIT_CAP_PERF, 0x10, FLIT_ST_INT);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x10), ==, ST(1, 0, 0));
    /* with no registers nothing is tracked */
    open_end(&s, &l, 4, 0, 0);
    wr(&s, FLIT_CAP_PERF, FLIT_PERF_CTL, ctl);
    flit_end_ltssm(&s, FLIT_LTSSM_L0_RECOVERY, 7000000, 0);
    g_assert_cmpuint(l.irqs, ==, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_PERF, 0x10), ==, 0);
}

static void test_flit_counter(void)
{
    static const unsigned widths[] = { 1, 4, 16 };

    for (unsigned i = 0; i < G_N_ELEMENTS(widths); i++) {
        unsigned w = widths[i];
        FlitEnd s;
        Link l;
        uint64_t want;

        open_end(&s, &l, w, 0, 0);
        l.t.l0_ns = 1000;
        wr(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_CTL, FLIT_LOG_MEAS_EN);
        l.t.l0_ns = 1000 + 3000000;
        want = walk(w, 3001000) - walk(w, 1000);
        g_assert_cmpuint(rd(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_FLITS), ==, want);
        /* stopped, it holds; started again, it goes on from there */
        wr(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_CTL, 0);
        l.t.l0_ns += 5000000;
        g_assert_cmpuint(rd(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_FLITS), ==, want);
        wr(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_CTL, FLIT_LOG_MEAS_EN);
        l.t.l0_ns += 2000;
        want += walk(w, 8003000) - walk(w, 8001000);
        g_assert_cmpuint(rd(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_FLITS), ==, want);
        /* Clear restarts from 0 */
        wr(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_CTL,
           FLIT_LOG_MEAS_EN | FLIT_LOG_MEAS_CLEAR);
        g_assert_cmpuint(rd(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_FLITS), ==, 0);
        /* not in flit mode: no flits */
        flit_end_set_active(&s, false, 0, 0);
        l.t.l0_ns += 1000000;
        g_assert_cmpuint(rd(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_FLITS), ==, 0);
        /* the reporter restarts from 0 (its reset): counted from there */
        flit_end_set_active(&s, true, 0, 0);
        l.t.l0_ns = 2000;
        want = walk(w, 8005000) - walk(w, 8003000);
        g_assert_cmpuint(rd(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_FLITS), ==, want);
    }
}

/* An x16 end on a link that trained to x4 counts x4 flits */
static void test_trained_width(void)
{
    FlitEnd s;
    Link l;

    open_end(&s, &l, 16, 0, 0);
    flit_end_set_active(&s, true, 4, 0);
    wr(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_CTL, FLIT_LOG_MEAS_EN);
    l.t.l0_ns = 1000000;
    g_assert_cmpuint(rd(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_FLITS), ==,
                     walk(4, 1000000));
    /* wider than the end, or no width: kept */
    flit_end_set_active(&s, true, 32, 0);
    flit_end_set_active(&s, true, 0, 0);
    wr(&s, FLIT_CAP_LOG, FLIT_LOG_CNT_CTL, FLIT_LOG_CNT_EN);
    g_assert_cmphex(rd(&s, FLIT_CAP_LOG, FLIT_LOG_CNT_CTL) >> 16, ==, 2);
}

static void test_error_log_and_counter(void)
{
    FlitEnd s;
    Link l;
    FlitError unc = { .kind = FLIT_ERR_UNCORRECTABLE, .count = 2 };
    FlitError unr = { .kind = FLIT_ERR_UNRECOGNIZED, .count = 40 };
    FlitError cor = { .kind = FLIT_ERR_CORRECTABLE, .lane = 5, .count = 7 };
    uint32_t v;

    open_end(&s, &l, 8, 0, 0);
    wr(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_CTL, FLIT_LOG_MEAS_EN);
    /* counter: uncorrectable only, interrupt at 3 */
    wr(&s, FLIT_CAP_LOG, FLIT_LOG_CNT_CTL, FLIT_LOG_CNT_EN |
       FLIT_LOG_CNT_INT_EN | 1u << 2 | 3u << 4);
    v = rd(&s, FLIT_CAP_LOG, FLIT_LOG_CNT_CTL) >> 16;
    g_assert_cmphex(v, ==, 3);                  /* x8 when started */
    flit_end_rx_errors(&s, &unc, 0);
    flit_end_rx_errors(&s, &cor, 0);
    v = rd(&s, FLIT_CAP_LOG, FLIT_LOG_CNT_CTL) >> 16;
    g_assert_cmphex(v, ==, 2 << 8 | 3);
    g_assert_cmpuint(l.irqs, ==, 0);
    flit_end_rx_errors(&s, &unr, 0);
    v = rd(&s, FLIT_CAP_LOG, FLIT_LOG_CNT_CTL) >> 16;
    g_assert_cmphex(v, ==, 42 << 8 | 8 | 3);
    g_assert_cmpuint(l.irqs, ==, 1);
    for (int i = 0; i < 10; i++) {
        flit_end_rx_errors(&s, &unr, 0);
    }
    v = rd(&s, FLIT_CAP_LOG, FLIT_LOG_CNT_CTL) >> 16;
    g_assert_cmphex(v >> 8, ==, 0xFF);          /* saturates */
    g_assert_cmpuint(l.irqs, ==, 1);
    /* RW1C of the status's interrupt bit, by a word write at 0x0E */
    flit_end_write(&s, FLIT_CAP_LOG, FLIT_LOG_CNT_STS, 8, 2, 0);
    v = rd(&s, FLIT_CAP_LOG, FLIT_LOG_CNT_CTL) >> 16;
    g_assert_cmphex(v & 8, ==, 0);
    g_assert_cmphex(v & 7, ==, 3);             /* the width stays */
    g_assert_cmphex(rd(&s, FLIT_CAP_LOG, FLIT_LOG_CNT_CTL) & 0xFFFF, ==,
                    0x37);

    /* FBER: invalid flits and lane 5's correctable ones */
    g_assert_cmpuint(rd(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_INVALID), ==,
                     2 + 11 * 40);
    g_assert_cmphex(rd(&s, FLIT_CAP_LOG, 0x1C + 8), ==, 7u << 16);
    cor.lane = 9;                               /* past x8: not counted */
    flit_end_rx_errors(&s, &cor, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_LOG, 0x1C + 16), ==, 0);

    /* the log: the first entry, More while others wait, RW1C Valid */
    v = rd(&s, FLIT_CAP_LOG, FLIT_LOG_ERR1);
    g_assert_cmphex(v, ==, 1 | 3 << 1 | 1 << 8 | FLIT_LOG_ERR1_MORE |
                    FLIT_LOG_ERR1_UNCOR);
    for (int i = 0; i < 12; i++) {
        wr(&s, FLIT_CAP_LOG, FLIT_LOG_ERR1, FLIT_LOG_ERR1_VALID);
    }
    g_assert_cmphex(rd(&s, FLIT_CAP_LOG, FLIT_LOG_ERR1), ==, 0);
    flit_end_rx_errors(&s, &unr, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_LOG, FLIT_LOG_ERR1), ==,
                    1 | 3 << 1 | 31 << 8 | FLIT_LOG_ERR1_UNREC);
    /* a reset clears Flit Logging */
    flit_end_reset(&s, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_LOG, FLIT_LOG_ERR1), ==, 0);
    g_assert_cmphex(rd(&s, FLIT_CAP_LOG, FLIT_LOG_MEAS_INVALID), ==, 0);
}

static void test_migration(void)
{
    FlitEnd a, b, c;
    Link la, lb, lc;
    FlitError unc = { .kind = FLIT_ERR_UNCORRECTABLE, .count = 2 };
    size_t len;
    void *bytes;
    char *err;

    open_end(&a, &la, 16, 2, 30);
    la.t.l0_ns = 777;
    la.t.tx_payload = 5000;
    wr(&a, FLIT_CAP_LOG, FLIT_LOG_MEAS_CTL, FLIT_LOG_MEAS_EN);
    wr(&a, FLIT_CAP_PERF, FLIT_PERF_CTL, PERF_CTL(FLIT_PERF_TYPE_ACK, 9, 0) |
       1u << FLIT_PERF_TRACK_SHIFT);
    flit_end_rx_errors(&a, &unc, 0);
    flit_end_ltssm(&a, FLIT_LTSSM_L0_RECOVERY, 200000, 0);
    la.t.l0_ns = 99999;
    la.t.tx_payload = 6000;
    bytes = flit_end_save(&a, &len);

    open_end(&b, &lb, 16, 2, 30);
    lb.t = la.t;
    g_assert_null(flit_end_load(&b, bytes, len));
    for (FlitCap cap = 0; cap < FLIT_CAPS; cap++) {
        for (uint32_t off = 4; off < 0x3C; off += 4) {
            g_assert_cmphex(rd(&b, cap, off), ==, rd(&a, cap, off));
        }
    }
    /* and they go on alike */
    la.t.tx_payload = lb.t.tx_payload = 9000;
    g_assert_cmphex(rd(&b, FLIT_CAP_PERF, FLIT_PERF_STATUS), ==,
                    rd(&a, FLIT_CAP_PERF, FLIT_PERF_STATUS));
    /* refused: short, another configuration, not ours */
    open_end(&c, &lc, 16, 2, 30);
    err = flit_end_load(&c, bytes, len - 8);
    g_assert_nonnull(err);
    g_free(err);
    open_end(&c, &lc, 8, 2, 30);
    err = flit_end_load(&c, bytes, len);
    g_assert_nonnull(strstr(err, "width"));
    g_free(err);
    memset(bytes, 0, 8);
    err = flit_end_load(&b, bytes, len);
    g_assert_nonnull(err);
    g_free(err);
    g_free(bytes);
}

static void test_parse(void)
{
    FlitError e;
    char *err;

    g_assert_null(flit_error_parse("", &e));
    g_assert_cmpuint(e.kind, ==, FLIT_ERR_UNCORRECTABLE);
    g_assert_cmpuint(e.count, ==, 1);
    g_assert_null(flit_error_parse("count=5,kind=unrecognized", &e));
    g_assert_cmpuint(e.kind, ==, FLIT_ERR_UNRECOGNIZED);
    g_assert_cmpuint(e.count, ==, 5);
    g_assert_null(flit_error_parse("kind=correctable,lane=3", &e));
    g_assert_cmpuint(e.lane, ==, 3);
    static const char *const bad[] = {
        "kind=fatal", "count=0", "count=x", "lane=2", "kind=correctable",
        "kind=correctable,lane=16", "speed=1", "count",
    };
    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        err = flit_error_parse(bad[i], &e);
        g_assert_nonnull(err);
        g_free(err);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flit/closed-form", test_closed_form);
    g_test_add_func("/flit/config", test_config);
    g_test_add_func("/flit/access-types", test_access_types);
    g_test_add_func("/flit/ack-sum", test_ack_sum);
    g_test_add_func("/flit/worst-case-overflow", test_worst_case_and_overflow);
    g_test_add_func("/flit/threshold-interrupt", test_threshold_interrupt);
    g_test_add_func("/flit/nak-replay", test_nak_and_replay);
    g_test_add_func("/flit/ltssm-trackers", test_ltssm_trackers);
    g_test_add_func("/flit/flit-counter", test_flit_counter);
    g_test_add_func("/flit/trained-width", test_trained_width);
    g_test_add_func("/flit/error-log-counter", test_error_log_and_counter);
    g_test_add_func("/flit/migration", test_migration);
    g_test_add_func("/flit/parse", test_parse);
    return g_test_run();
}
