/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest of ndk-pcie-telemetry: the traffic generators. Live changes of a
 * generator (qom-set) that apply from the next drain window, the
 * invariants of the channel definitions on random traffic, the claims of
 * docs/traffic-generators.md on the ptc generator, a scenario's phases,
 * and the plugin generator with the project's sample plugin. Exact counts
 * come from the simulator (ndk-sim.h) or closed forms; where the traffic
 * is random the tests hold it to bounds that follow from the channels'
 * definitions.
 *
 * PTM_SAMPLE_PLUGIN names the sample plugin (run-qtest.sh sets it); the
 * plugin test fails (it does not skip) without it. The scenario and
 * plugin tests write their files into a temporary directory of their own.
 */

#include "ndk-common.h"
#include "ndk-sim.h"

/* ------------------------------------------------------------------ */
/* Live changes of the traffic (qom-set)                              */

#define LIVE_ARGS \
    "-object telemetry-traffic-pattern,id=t0,rq-frame-bytes=256 " \
    "-device ndk-pcie-telemetry,addr=04.0,traffic=t0"

/*
 * A qom-set while the card runs applies from the card's next PCIe drain
 * window: windows that started before it keep the old value.
 */
static void test_live_qom_set(void)
{
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES];
    uint64_t origin, od, from[3];
    SimProbe ver[3];
    g_autofree char *out = NULL;
    const char *desc = "";
    QDict *rsp;
    Ndk n;

    ndk_open(&n, "q35", LIVE_ARGS);
    origin = first_cycle(n.t->t0, PCIE_HZ);
    od = first_cycle(n.t->t0, DMA_HZ);
    g_assert_cmpint(qom_get_int(n.t->qts, "/objects/t0", "rq-frame-bytes"), ==,
                    256);

    /*
     * 15 us after the reset: PCIe cycle origin + 6000, inside window 1 =
     * [origin + 4095, origin + 8191). RQ frames of 256 bytes are 64 items
     * in 8 regions = 4 words, back to back: a word in every cycle. The
     * change applies from window 2, which starts at origin + 8191
     * (20.4775 us when the card starts at 0).
     */
    step_to(&n, n.t->t0 + 15000);
    g_assert_cmpuint(windows_by(n.t->now, origin, PCIE_HZ, DP), ==, 1);
    qom_set_ok(n.t->qts, "/objects/t0", "rq-frame-bytes", 0);
    g_assert_cmpint(qom_get_int(n.t->qts, "/objects/t0", "rq-frame-bytes"), ==,
                    0);

    /*
     * 35 us: window 2 = [8191, 12287) was drained at 30.72 us, its deltas
     * are in the live copy, window 3 ends at 40.96 us. RQ moved a word in
     * every cycle of windows 0 and 1 (4095 + 4096) and none in window 2;
     * the RQ channels do not count the origin (cycle 0), and their window
     * 2, which ends 5 (words) or 30 (items) cycles after the cycle
     * counter's, had no RQ traffic either.
     */
    step_to(&n, n.t->t0 + 35000);
    g_assert_cmpuint(windows_by(n.t->now, origin, PCIE_HZ, DP), ==, 3);
    wr(&n, PTL_REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095 + 2 * 4096);
    g_assert_cmpuint(cnt(&n, 1 + PTL_CH_WORDS), ==, 4095 + 4096 - 1);
    /* (words 1..3 of the frame whose SOF in cycle 0 was not seen: none) */
    g_assert_cmpuint(cnt(&n, 1 + PTL_CH_ITEMS), ==, 16 * (4095 + 4096 - 1 - 3));

    /* every counter: the simulator over the two versions */
    ver[0] = rq_probe(256);
    from[0] = origin;
    ver[1] = rq_probe(0);
    from[1] = drain_cycle(origin, DP, 1);
    g_assert_cmpuint(from[1], ==, origin + 8191);
    memset(exp, 0, sizeof(exp));
    sim_windows_versions(ver, from, 2, origin, DP, 3, exp);
    g_assert_cmpuint(exp[1 + PTL_CH_WORDS], ==, 4095 + 4096 - 1);
    /* the DMA buses stay idle: only their cycles, window 0 */
    g_assert_cmpuint(windows_by(n.t->now, od, DMA_HZ, DP), ==, 1);
    exp[31] = DP - 1;
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("live, rq-frame-bytes 256 -> 0", got, exp, DEF_ENTRIES);

    /*
     * Out of range (0 to 65536): refused with a message that names the
     * property; the value stays.
     */
    rsp = qom_set_int(n.t->qts, "/objects/t0", "rq-frame-bytes", 70000);
    g_assert_true(qdict_haskey(rsp, "error"));
    if (qdict_haskey(rsp, "error")) {
        desc = qdict_get_str(qdict_get_qdict(rsp, "error"), "desc");
    }
    g_test_message("qom-set rq-frame-bytes 70000: %s", desc);
    g_assert_nonnull(strstr(desc, "rq-frame-bytes"));
    qobject_unref(rsp);
    g_assert_cmpint(qom_get_int(n.t->qts, "/objects/t0", "rq-frame-bytes"), ==,
                    0);

    /*
     * Through HMP at 35 us (cycle 14000, window 3 = [12287, 16383)):
     * 128-byte frames (32 items in 4 regions = 2 words, back to back)
     * from window 4 = [16383, 20479) on.
     */
    out = qtest_hmp(n.t->qts, "qom-set /objects/t0 rq-frame-bytes 128");
    g_test_message("HMP qom-set: '%s'", out);
    g_assert_null(strstr(out, "rror"));
    g_assert_cmpint(qom_get_int(n.t->qts, "/objects/t0", "rq-frame-bytes"), ==,
                    128);

    /*
     * 55 us: PCIe windows 0..4, DMA windows 0 and 1. Words (slot 1, 5
     * cycles late): 4095 - 1 + 4096 (windows 0, 1 but cycle 0) + 4096 + 5
     * (window 4 and 5 cycles of window 5, [16383, 20484), all with the new
     * frames). SOF (slot 3, 15 cycles late): one every 4 cycles in
     * windows 0 and 1 but cycle 0 (cycles 4, ..., 8188: 2047), one every
     * 2 from window 4 on (16384, ..., 20492: 2055). Items (slot 6, 30
     * cycles late): 16 per word, also for word 1 of the frame that window
     * 4 begins with: the 256-byte frame cut after its word 2 at cycle 8190
     * was still open.
     */
    step_to(&n, n.t->t0 + 55000);
    g_assert_cmpuint(windows_by(n.t->now, origin, PCIE_HZ, DP), ==, 5);
    g_assert_cmpuint(windows_by(n.t->now, od, DMA_HZ, DP), ==, 2);
    ver[2] = rq_probe(128);
    from[2] = drain_cycle(origin, DP, 3);
    g_assert_cmpuint(from[2], ==, origin + 16383);
    memset(exp, 0, sizeof(exp));
    sim_windows_versions(ver, from, 3, origin, DP, 5, exp);
    exp[31] = 2 * DP - 1;
    g_assert_cmpuint(exp[0], ==, 5 * 4096 - 1);
    g_assert_cmpuint(exp[1 + PTL_CH_WORDS], ==, 4095 - 1 + 4096 + 4096 + 5);
    g_assert_cmpuint(exp[1 + PTL_CH_SOF], ==, 2047 + 2055);
    g_assert_cmpuint(exp[1 + PTL_CH_ITEMS], ==,
                     16 * (4095 - 1 + 4096 + 4096 + 30 - 3));
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("live, rq-frame-bytes 0 -> 128", got, exp, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    ndk_close(&n);
}

/*
 * The same rule at a PCIe clock of 4 GHz (the highest allowed), where four
 * cycles share each ns. DRAIN_PERIOD 32768: window k >= 1 starts at cycle
 * origin + 32768 k - 1. At 12 us (cycle 48000, window 1 = [32767, 65535))
 * the change applies from window 2 (cycle 65535, 16383.75 ns): windows 0
 * and 1 keep the 256-byte frames, a word in every one of their 32767 +
 * 32768 cycles and a SOF every 4 cycles (0, 4, ..., 65532: 16384). The
 * RQ channels do not count the origin (a word with a SOF), and the cycles
 * their windows gain past the cycle counter's edge (5 to 30) have the new
 * value: no traffic.
 */
static void test_live_qom_set_4ghz(void)
{
    const uint64_t hz = 4000000000ull, dp = 32768;
    uint64_t origin;
    Ndk n;

    ndk_open(&n, "q35",
             "-object telemetry-traffic-pattern,id=t0,rq-frame-bytes=256 "
             "-device ndk-pcie-telemetry,addr=04.0,traffic=t0,"
             "pcie-clk-freq=4000000000,drain-period=32768");
    origin = first_cycle(n.t->t0, hz);
    g_assert_cmpuint(origin % 4, ==, 0);
    step_to(&n, n.t->t0 + 12000);
    g_assert_cmpuint(windows_by(n.t->now, origin, hz, dp), ==, 1);
    qom_set_ok(n.t->qts, "/objects/t0", "rq-frame-bytes", 0);

    /* 28.672 us: window 2 drained at 24.576 us; window 3 ends at 32.768 us */
    step_to(&n, n.t->t0 + 28672);
    g_assert_cmpuint(windows_by(n.t->now, origin, hz, dp), ==, 3);
    wr(&n, PTL_REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 3 * dp - 1);
    g_assert_cmpuint(cnt(&n, 1 + PTL_CH_WORDS), ==, 2 * dp - 2);
    g_assert_cmpuint(cnt(&n, 1 + PTL_CH_SOF), ==, 2 * dp / 4 - 1);
    /* words 1..3 of the frame of cycle 0, whose SOF was not seen: none */
    g_assert_cmpuint(cnt(&n, 1 + PTL_CH_ITEMS), ==, 16 * (2 * dp - 5));
    ndk_close(&n);
}

/*
 * Many changes while a slow DMA window is open. With dma-clk-freq=25 MHz
 * a DMA window lasts 4096 x 40 ns = 163.84 us, 16 PCIe windows; DMA
 * window 1 is [163.8 us, 327.64 us). At 168.84 us (PCIe window 16) UP goes
 * idle (up-frame-bytes 0), from PCIe window 17 (174.0775 us) on; then in
 * each of the PCIe windows 17 .. 16 + nbrake a change of `brake` alone (a
 * signal of the PCIe probe only), each from the PCIe window after it.
 */
#define MANY_ARGS \
    "-object telemetry-traffic-pattern,id=t0,up-frame-bytes=100,up-gap=3," \
    "up-stall=2 " \
    "-device ndk-pcie-telemetry,addr=04.0,traffic=t0,dma-clk-freq=25000000"
#define SLOW_DMA_HZ 25000000ull

static void many_changes(Ndk *n, unsigned nbrake, uint64_t *dma)
{
    uint64_t od = first_cycle(n->t->t0, SLOW_DMA_HZ);

    step_to(n, n->t->t0 + 16 * 10240 + 5000);
    qom_set_ok(n->t->qts, "/objects/t0", "up-frame-bytes", 0);
    for (unsigned k = 1; k <= nbrake; k++) {
        step_to(n, n->t->t0 + (16 + k) * 10240 + 5000);
        qom_set_ok(n->t->qts, "/objects/t0", "brake", k);
    }
    g_assert_cmpint(qom_get_int(n->t->qts, "/objects/t0", "up-frame-bytes"),
                    ==, 0);
    g_assert_cmpint(qom_get_int(n->t->qts, "/objects/t0", "brake"), ==, nbrake);
    /* 340 us: DMA windows 0 and 1 are in the live copy */
    step_to(n, n->t->t0 + 340000);
    g_assert_cmpuint(windows_by(n->t->now, od, SLOW_DMA_HZ, DP), ==, 2);
    wr(n, PTL_REG_READ_SEL, 1);
    for (unsigned e = 0; e < 17; e++) {
        dma[e] = cnt(n, 31 + e);
    }
}

static void test_live_many_changes(void)
{
    uint64_t x[17], y[17];
    Ndk n;

    /*
     * X: the UP change and 7 BRAKE changes, all within 2 DMA windows
     * (2 x 163.84 us) of each other: with the starting values 9 versions
     * of the parameters that DMA window 1 may need. Y: the UP change only.
     */
    ndk_open(&n, "q35", MANY_ARGS);
    many_changes(&n, 7, x);
    ndk_close(&n);
    ndk_open(&n, "q35", MANY_ARGS);
    many_changes(&n, 0, y);
    ndk_close(&n);

    /* BRAKE does not reach the DMA probe: both count the same */
    check_counters("DMA probe (entry 31 + i), 8 changes vs 1", x, y, 17);
    /*
     * UP period 2 stalled + 2 words + 3 idle = 7 cycles. DMA window 0
     * (4095 = 585 x 7 cycles): 1170 words. Window 1 had the old frames at
     * least until the change's moment, DMA cycle ceil(174077.5 / 40) =
     * 4352: cycles 4095 .. 4351, 257 = 36 x 7 + 5 from a period's start,
     * 36 x 2 + 2 words. So at least 1170 + 74 UP words (the words
     * channel misses cycle 0, a stalled one, and its windows end 4 cycles
     * after the cycle counter's: none fewer).
     */
    g_assert_cmpuint(x[1 + PTL_CH_WORDS], >=, 1170 + 74);
    g_assert_cmpuint(y[1 + PTL_CH_WORDS], >=, 1170 + 74);
    g_assert_cmpuint(x[0], ==, 2 * 4096 - 1);
}

/* ------------------------------------------------------------------ */
/* Random traffic                                                     */

/* Run a random card for 2 ms and read every counter after a SNAPSHOT. */
static void random_run(const char *props, uint64_t *c)
{
    g_autofree char *args = random_args(props);
    Ndk n;

    ndk_open(&n, "q35", args);
    step_to(&n, n.t->t0 + 2000000);
    snapshot(&n, DEF_ENTRIES);
    read_counters(&n, DEF_ENTRIES, c);
    /* accumulator load 0.46: nothing lost */
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    /* the snapshot holds what the live copy had at 2 ms */
    check_cycles(props, c, n.t->t0, n.t->t0 + 2000000);
    ndk_close(&n);
}

static void check_le(const char *what, const char *rel, unsigned e,
                     uint64_t a, uint64_t b)
{
    if (a > b) {
        g_test_message("%s: entry %u: %s: %" PRIu64 " > %" PRIu64, what, e,
                       rel, a, b);
    }
    g_assert_cmpuint(a, <=, b);
}

/*
 * The invariants compare channels whose windows differ: after whole
 * windows channel c holds the cycles [o + first_c, E_k + edge_c), so a
 * channel a may hold ch_extra(a, b) cycles that channel b lacks (at the
 * end: a later slot; at the start: cycle o, which only the cycle counter,
 * the MVB channels and the bands count). An invariant "a <= f(b)" that
 * holds cycle by cycle is widened by exactly those cycles times the most
 * a can gain in one cycle (or b lose): 1 for words, stalls, regions used
 * and BRAKE bits, R = 2 for SOF and MVB items, 8 items per region.
 */

/*
 * A bus with base entry e of a probe of layout l whose cycle counter is
 * entry e0 (channel 0): words + stall <= cycles, SOF <= words x R, each
 * region-used <= words, items <= (sum of region-used) x 8.
 */
static void check_bus_bounds(const char *what, const uint64_t *c,
                             const Layout *l, unsigned e0, unsigned bus)
{
    unsigned rb = 1 + bus * (6 + l->regions), o = e0 + rb;
    uint64_t words = c[o + PTL_CH_WORDS], used_w = 0;
    /* words and stalls: at most 1 together in each cycle */
    uint64_t ws_extra = MAX(ch_extra(l, rb + PTL_CH_WORDS, 0),
                            ch_extra(l, rb + PTL_CH_STALL, 0));

    check_le(what, "words + stall <= cycles", o,
             words + c[o + PTL_CH_STALL], c[e0] + ws_extra);
    check_le(what, "SOF <= words x regions", o + PTL_CH_SOF, c[o + PTL_CH_SOF],
             l->regions * (words +
                           ch_extra(l, rb + PTL_CH_SOF, rb + PTL_CH_WORDS)));
    for (unsigned r = 0; r < l->regions; r++) {
        unsigned ch = rb + PTL_CH_REGION0 + r;

        check_le(what, "region-used <= words", o + PTL_CH_REGION0 + r,
                 c[o + PTL_CH_REGION0 + r],
                 words + ch_extra(l, ch, rb + PTL_CH_WORDS));
        /* the regions as seen over the items' span */
        used_w += c[o + PTL_CH_REGION0 + r] +
                  ch_extra(l, rb + PTL_CH_ITEMS, ch);
    }
    check_le(what, "items <= region-used x 8", o + PTL_CH_ITEMS,
             c[o + PTL_CH_ITEMS], 8 * used_w);
}

/*
 * Each of the two histograms (entries e0 + n - 8 .. n - 5 and n - 4 ..
 * n - 1) adds 1 to exactly one band in each cycle: its sum is the cycles,
 * give or take the cycles a band's span has that the cycle counter's
 * lacks and the other way round (a cycle is in one band only, so the
 * largest of these counts).
 */
static void check_histograms(const char *what, const uint64_t *c,
                             const Layout *l, unsigned e0)
{
    for (unsigned h = 0; h < 2; h++) {
        uint64_t sum = 0, more = 0, less = 0;

        for (unsigned j = 0; j < 4; j++) {
            unsigned ch = l->n - 8 + 4 * h + j;

            sum += c[e0 + ch];
            more = MAX(more, ch_extra(l, ch, 0));
            less = MAX(less, ch_extra(l, 0, ch));
        }
        if (sum + less < c[e0] || sum > c[e0] + more) {
            g_test_message("%s: histogram %u sums to %" PRIu64 ", cycles %"
                           PRIu64 " (-%" PRIu64 ", +%" PRIu64 ")", what, h,
                           sum, c[e0], less, more);
        }
        g_assert_cmpuint(sum + less, >=, c[e0]);
        g_assert_cmpuint(sum, <=, c[e0] + more);
    }
}

/*
 * The invariants of the channel definitions, per probe (R = 2 regions,
 * 8 items per region on every bus of the defaults), widened as above:
 *   the bus bounds of check_bus_bounds;
 *   PCIe probe: MVB and MVB stall 0, each BRAKE <= cycles, each
 *   histogram's 4 bands sum to the cycles;
 *   DMA probe: every frame has one MVB item with its SOF word, UP reads
 *   have one without: MVB items >= SOF on UP, = SOF on DOWN.
 */
static void check_random_invariants(const char *what, const uint64_t *c,
                                    bool brakes)
{
    static const unsigned base[2] = { 0, 31 };
    const Layout lay[2] = { pcie_layout(2), dma_layout(1, 2) };
    uint64_t sum;

    for (unsigned p = 0; p < 2; p++) {
        const Layout *l = &lay[p];
        uint64_t cyc = c[base[p]];

        for (unsigned b = 0; b < 2; b++) {
            unsigned rb = 1 + b * 8, o = base[p] + rb;
            uint64_t mvb = c[o + PTL_CH_MVB], sof = c[o + PTL_CH_SOF];

            g_assert_cmpuint(c[o + PTL_CH_WORDS], >, 0);
            check_bus_bounds(what, c, l, base[p], b);
            if (p == 0) {
                g_assert_cmpuint(mvb, ==, 0);
                g_assert_cmpuint(c[o + PTL_CH_MVB_STALL], ==, 0);
                continue;
            }
            /* SOF and MVB items: at most R = 2 of each in a cycle */
            check_le(what, "SOF <= MVB items", o + PTL_CH_MVB, sof,
                     mvb + 2 * ch_extra(l, rb + PTL_CH_SOF, rb + PTL_CH_MVB));
            if (b == 1) {
                check_le(what, "MVB items <= SOF (DOWN)", o + PTL_CH_MVB, mvb,
                         sof + 2 * ch_extra(l, rb + PTL_CH_MVB,
                                            rb + PTL_CH_SOF));
            }
            check_le(what, "MVB stall <= cycles", o + PTL_CH_MVB_STALL,
                     c[o + PTL_CH_MVB_STALL],
                     cyc + ch_extra(l, rb + PTL_CH_MVB_STALL, 0));
        }
    }

    sum = 0;
    for (unsigned k = 0; k < 6; k++) {
        check_le(what, "BRAKE <= cycles", 17 + k, c[17 + k],
                 c[0] + ch_extra(&lay[0], 17 + k, 0));
        sum += c[17 + k];
    }
    if (brakes) {
        g_assert_cmpuint(sum, >, 0);
    } else {
        /* brake-percent 0: never */
        g_assert_cmpuint(sum, ==, 0);
    }
    check_histograms(what, c, &lay[0], 0);
    for (unsigned e = 48; e < DEF_ENTRIES; e++) {
        g_assert_cmpuint(c[e], ==, 0);
    }
}

#define RANDOM_S3 "seed=3,rq-load=90,up-read-percent=20,brake-percent=30"
#define RANDOM_S4 "seed=4,rq-load=90,up-read-percent=20,brake-percent=30"

static void test_random_invariants(void)
{
    uint64_t def[DEF_ENTRIES], s3[DEF_ENTRIES], s3b[DEF_ENTRIES];
    uint64_t s4[DEF_ENTRIES];
    unsigned differ = 0;

    random_run("", def);
    check_random_invariants("random, defaults", def, false);
    random_run(RANDOM_S3, s3);
    check_random_invariants("random, seed 3", s3, true);
    /* UP: 20 % of the requests are reads, so more MVB items than SOFs */
    g_assert_cmpuint(s3[32 + PTL_CH_MVB], >, s3[32 + PTL_CH_SOF]);

    /* the same seed again: the same counts */
    random_run(RANDOM_S3, s3b);
    check_counters("random, seed 3 twice", s3b, s3, DEF_ENTRIES);

    /* another seed: other counts */
    random_run(RANDOM_S4, s4);
    check_random_invariants("random, seed 4", s4, true);
    for (unsigned e = 0; e < DEF_ENTRIES; e++) {
        differ += s4[e] != s3[e];
    }
    g_test_message("seed 3 vs seed 4: %u counters differ", differ);
    g_assert_cmpuint(differ, >, 0);
    /* only the cycles and the unused entries must agree */
    g_assert_cmpuint(s4[0], ==, s3[0]);
    g_assert_cmpuint(s4[31], ==, s3[31]);
}

/* ------------------------------------------------------------------ */
/* The ptc generator                                                  */

/*
 * bytes are those of sof frames of size each, but for one cut frame.
 * The items channel (slot 6) closes its window later than the SOF channel
 * (slot 3) and counts the items of extra_cycles cycles more, at most R x 8
 * items of ITEM_BYTES each a cycle (R = 2 on every bus of the defaults).
 */
static bool same_frames(uint64_t bytes, uint64_t size, uint64_t sof,
                        uint64_t extra_cycles)
{
    uint64_t more = extra_cycles * 2 * 8 * ITEM_BYTES;

    if (bytes > size * sof + more || bytes + size <= size * sof) {
        g_test_message("%" PRIu64 " bytes, %" PRIu64 " frames of %" PRIu64
                       " (+%" PRIu64 " bytes)", bytes, sof, size, more);
    }
    return bytes <= size * sof + more && bytes + size > size * sof;
}

/* Cycles the items of bus i (0 RQ, 1 RC, 2 + UP/DOWN) have that SOF lacks */
static uint64_t items_past_sof(unsigned i, unsigned ports)
{
    const Layout lp = pcie_layout(2), ld = dma_layout(ports, 2);
    unsigned rb = 1 + (i < 2 ? i : i - 2) * 8;

    return ch_extra(i < 2 ? &lp : &ld, rb + PTL_CH_ITEMS, rb + PTL_CH_SOF);
}

static void check_frames(const char *what, const uint64_t *c, unsigned i,
                         uint64_t size)
{
    uint64_t sof = c[bus_ch(i, PTL_CH_SOF)];
    uint64_t bytes = c[bus_ch(i, PTL_CH_ITEMS)] * ITEM_BYTES;

    g_test_message("%s: %s Avg B %.2f over %" PRIu64 " frames, expected %"
                   PRIu64, what, bus_name[i], sof ? (double)bytes / sof : 0,
                   sof, size);
    g_assert_cmpuint(sof, >, 0);
    g_assert_true(same_frames(bytes, size, sof, items_past_sof(i, 1)));
}

/*
 * The claims of docs/traffic-generators.md that hold for any card, on the
 * counters of a card with the ptc defaults after 3 ms, read after a
 * SNAPSHOT. At the middle of PCIe window 294 the PCIe probe has counted
 * windows 0..293 (cycles up to 1204222, 3010.5575 us) and the DMA probe
 * windows 0..146 (cycles up to 602110, 3010.555 us): the same span of time,
 * whole schedules of the model (its blocks are 4096 PCIe cycles from cycle
 * 0, its frames never cross the end of a 256-cycle period), so the
 * completions RC carried in it are those DOWN carried, to a frame.
 *
 * The completion size is the MPS PCIE_STATUS reports (256 B negotiated
 * here); read-bytes (2048) is a multiple of it, so every completion has
 * that size. With P DMA ports (entries: UP of port p is DMA bus 2p, DOWN
 * 2p + 1) every UP bus has its own RD % and Avg B, as the reference
 * report shows them; the completions of RC go down on the DOWN buses
 * together.
 */
/* Picoseconds of cycle c of a clock of hz (a divisor of 10^12) */
static uint64_t cycle_ps(uint64_t c, uint64_t hz)
{
    g_assert_cmpuint(1000000000000ull % hz, ==, 0);
    return c * (1000000000000ull / hz);
}

/* Whole cycles of a clock of hz that cover ps picoseconds (0 if <= 0) */
static uint64_t ps_cycles(int64_t ps, uint64_t hz)
{
    uint64_t per = 1000000000000ull / hz;

    return ps <= 0 ? 0 : ((uint64_t)ps + per - 1) / per;
}

static void ptc_claims(const char *args, unsigned ports)
{
    const Layout lp = pcie_layout(2), ld = dma_layout(ports, 2);
    uint64_t c[DEF_ENTRIES], origin, od, down_sof = 0;
    uint64_t rc_lo, rc_hi, rc_more = 0, down_more = 0;
    uint32_t st, tags, mps;
    int64_t t;
    Ndk n;

    g_assert_cmpuint(31 + 1 + 2 * ports * 8, <=, DEF_ENTRIES);
    ptc_open(&n, args);
    origin = first_cycle(n.t->t0, PCIE_HZ);
    od = first_cycle(n.t->t0, DMA_HZ);
    step_to(&n, word_ns(origin, 0));
    st = rd(&n, PTL_REG_PCIE_STATUS(0));
    g_assert_cmphex(st, ==, PTC_STATUS);
    mps = 128u << (st & 7);
    g_assert_cmpuint(mps, ==, 256);

    t = mid_window(&n, 294);
    step_to(&n, t);
    snapshot(&n, DEF_ENTRIES);
    wr(&n, PTL_REG_READ_SEL, 0);
    read_counters(&n, DEF_ENTRIES, c);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, PTC_STATUS);
    tags = rd(&n, PTL_REG_PCIE_TAGS(0));
    check_cycles(args, c, n.t->t0, t);
    g_assert_cmpuint(c[0], ==, 294 * 4096 - 1);
    g_assert_cmpuint(c[DMA_CYCLES], ==, 147 * 4096 - 1);
    ndk_close(&n);

    /*
     * every cycle with no free tag is a cycle of "no free PCIe tag"; tag
     * band 0 (slot 7, from cycle o) holds 30 cycles BRAKE 0 (slot 1, from
     * cycle o + 1) lacks, 1 count each at most
     */
    g_test_message("BRAKE 0: %" PRIu64 " cycles, tag band 0: %" PRIu64,
                   c[BRAKE_CH(0)], c[TAG_BAND(0)]);
    g_assert_cmpuint(ch_extra(&lp, TAG_BAND(0), BRAKE_CH(0)), ==, 30);
    g_assert_cmpuint(c[BRAKE_CH(0)] +
                     ch_extra(&lp, TAG_BAND(0), BRAKE_CH(0)), >=,
                     c[TAG_BAND(0)]);

    /* RC: completions of MPS bytes with their 12-byte header */
    check_frames("ptc", c, 1, mps + 12);
    for (unsigned p = 0; p < ports; p++) {
        unsigned up = 2 * p, down = 2 * p + 1;
        uint64_t mvb = c[DCH(up, PTL_CH_MVB)], sof = c[DCH(up, PTL_CH_SOF)];
        double rdp = mvb ? 100.0 * (mvb - sof) / mvb : 0;

        /* RD % of UP: (MVB items - SOF) / MVB items = read-percent (40) */
        g_test_message("ptc, DMA port %u: RD %% of UP %.2f (%" PRIu64
                       " MVB items, %" PRIu64 " SOF)", p, rdp, mvb, sof);
        g_assert_cmpuint(mvb, >, 0);
        g_assert_cmpfloat(rdp, >=, 38.0);
        g_assert_cmpfloat(rdp, <=, 42.0);
        /* UP carries the writes of write-bytes (192), DOWN completions */
        g_assert_true(same_frames(c[DCH(up, PTL_CH_ITEMS)] * ITEM_BYTES, 192,
                                  sof, items_past_sof(2 + up, ports)));
        g_assert_true(same_frames(c[DCH(down, PTL_CH_ITEMS)] * ITEM_BYTES, mps,
                                  c[DCH(down, PTL_CH_SOF)],
                                  items_past_sof(2 + down, ports)));
        /*
         * each completion on DOWN has its MVB header: MVB items (from
         * cycle o, a slot later) and SOF differ by at most R = 2 for each
         * cycle one's span has and the other's lacks
         */
        g_assert_cmpuint(c[DCH(down, PTL_CH_MVB)], <=,
                         c[DCH(down, PTL_CH_SOF)] +
                         2 * ch_extra(&ld, DCH(down, PTL_CH_MVB) - DMA_CYCLES,
                                      DCH(down, PTL_CH_SOF) - DMA_CYCLES));
        g_assert_cmpuint(c[DCH(down, PTL_CH_SOF)], <=,
                         c[DCH(down, PTL_CH_MVB)] +
                         2 * ch_extra(&ld, DCH(down, PTL_CH_SOF) - DMA_CYCLES,
                                      DCH(down, PTL_CH_MVB) - DMA_CYCLES));
        /* DOWN held by the DMA side: reason 4 covers its stalls and more */
        g_assert_cmpfloat((double)c[BRAKE_CH(4)] / c[0], >=,
                          (double)c[DCH(down, PTL_CH_STALL)] / c[DMA_CYCLES]);
        down_sof += c[DCH(down, PTL_CH_SOF)];
    }
    /*
     * every completion on RC appears on DOWN, to 2 frames. The SOF
     * channels of RC (PCIe cycles) and of each DOWN (DMA cycles) cover
     * different spans of time: each side may also count the SOF (R = 2 a
     * cycle of its own clock) of the time its span has and the other's
     * lacks, at either end.
     */
    ch_span(&lp, origin, DP, 294, PCH(1, PTL_CH_SOF), &rc_lo, &rc_hi);
    rc_lo = cycle_ps(rc_lo, PCIE_HZ);
    rc_hi = cycle_ps(rc_hi, PCIE_HZ);
    for (unsigned p = 0; p < ports; p++) {
        uint64_t lo, hi;

        ch_span(&ld, od, DP, 147, DCH(2 * p + 1, PTL_CH_SOF) - DMA_CYCLES, &lo,
                &hi);
        lo = cycle_ps(lo, DMA_HZ);
        hi = cycle_ps(hi, DMA_HZ);
        rc_more = MAX(rc_more,
                      2 * ps_cycles((int64_t)rc_hi - (int64_t)hi, PCIE_HZ) +
                      2 * ps_cycles((int64_t)lo - (int64_t)rc_lo, PCIE_HZ));
        down_more += 2 * ps_cycles((int64_t)hi - (int64_t)rc_hi, DMA_HZ) +
                     2 * ps_cycles((int64_t)rc_lo - (int64_t)lo, DMA_HZ);
    }
    g_test_message("ptc: %" PRIu64 " completions on RC, %" PRIu64 " on DOWN"
                   " (+%" PRIu64 ", +%" PRIu64 ")", c[PCH(1, PTL_CH_SOF)],
                   down_sof, rc_more, down_more);
    g_assert_cmpuint(down_sof + 2 + rc_more, >=, c[PCH(1, PTL_CH_SOF)]);
    g_assert_cmpuint(down_sof, <=, c[PCH(1, PTL_CH_SOF)] + 2 + down_more);

    /* no bus beyond its width, within the cycles of its own clock */
    for (unsigned i = 0; i < 2 + 2 * ports; i++) {
        unsigned e0 = i < 2 ? PCH(i, 0) : DCH(i - 2, 0);
        uint64_t cyc = c[i < 2 ? 0 : DMA_CYCLES];
        uint64_t words = c[e0 + PTL_CH_WORDS];

        g_test_message("ptc, PCIe/DMA bus %u: %" PRIu64 " words, %" PRIu64
                       " stalls of %" PRIu64 " cycles", i, words,
                       c[e0 + PTL_CH_STALL], cyc);
        g_assert_cmpuint(words, >, 0);
        if (i < 2) {
            check_bus_bounds(args, c, &lp, 0, i);
        } else {
            check_bus_bounds(args, c, &ld, DMA_CYCLES, i - 2);
        }
    }
    /* the PCIe side has no MVB */
    for (unsigned b = 0; b < 2; b++) {
        g_assert_cmpuint(c[PCH(b, PTL_CH_MVB)], ==, 0);
        g_assert_cmpuint(c[PCH(b, PTL_CH_MVB_STALL)], ==, 0);
    }
    /*
     * The PTC hands out at most tags = 48 of the 256: never more than
     * 256 / 2 free (band 3); each histogram counts every cycle once (its
     * bands' windows widened as in check_histograms).
     */
    g_assert_cmpuint(c[TAG_BAND(3)], ==, 0);
    g_assert_cmpuint(tags & 0xFFFF, <=, 48);
    g_assert_cmpuint(tags >> 16, <=, tags & 0xFFFF);
    check_histograms(args, c, &lp, 0);
    for (unsigned e = 32 + 16 * ports; e < DEF_ENTRIES; e++) {
        g_assert_cmpuint(c[e], ==, 0);
    }
}

static void test_ptc_claims(void)
{
    ptc_claims(PTC_ARGS, 1);
}

/*
 * The same with 2 DMA ports: 31 + 1 + 2 x 2 x 8 = 64 channels per
 * endpoint, ENTRIES 64; the DMA buses UP0, DOWN0, UP1, DOWN1 at 32, 40,
 * 48, 56.
 */
static void test_ptc_claims_2ports(void)
{
    ptc_claims("-object telemetry-traffic-ptc,id=t0 "
               "-device ndk-pcie-telemetry,addr=04.0,traffic=t0,dma-ports=2",
               2);
}

/*
 * qom-set tags=8 and latency-ns=4000 while the card runs: from the next
 * PCIe drain window on, reads hold their tags twice as long and only 8
 * exist, so "no free PCIe tag" (BRAKE 0) is active in a larger share of
 * the cycles. Live counters at the middle of PCIe windows 20 and 60 give
 * the delta of windows 20..59 (old values); the change is made in window
 * 60 and applies from window 61; counters in windows 62 and 102 give the
 * delta of windows 62..101 (new values). 40 windows each: five jitter
 * groups of 8 windows.
 */
static void test_ptc_qom_set_tags(void)
{
    const Layout lp = pcie_layout(2);
    uint64_t ca[DEF_ENTRIES], cb[DEF_ENTRIES], cc[DEF_ENTRIES];
    uint64_t cd[DEF_ENTRIES], before[DEF_ENTRIES], after[DEF_ENTRIES];
    uint64_t origin;
    double sb, sa;
    uint32_t tags;
    Ndk n;

    ptc_open(&n, PTC_ARGS);
    origin = first_cycle(n.t->t0, PCIE_HZ);
    wr(&n, PTL_REG_READ_SEL, 1);
    step_to(&n, mid_window(&n, 20));
    g_assert_cmpuint(windows_by(n.t->now, origin, PCIE_HZ, DP), ==, 20);
    read_counters(&n, DEF_ENTRIES, ca);
    step_to(&n, mid_window(&n, 60));
    g_assert_cmpuint(windows_by(n.t->now, origin, PCIE_HZ, DP), ==, 60);
    read_counters(&n, DEF_ENTRIES, cb);
    qom_set_ok(n.t->qts, "/objects/t0", "tags", 8);
    qom_set_ok(n.t->qts, "/objects/t0", "latency-ns", 4000);
    g_assert_cmpint(qom_get_int(n.t->qts, "/objects/t0", "tags"), ==, 8);
    g_assert_cmpint(qom_get_int(n.t->qts, "/objects/t0", "latency-ns"), ==,
                    4000);
    step_to(&n, mid_window(&n, 62));
    g_assert_cmpuint(windows_by(n.t->now, origin, PCIE_HZ, DP), ==, 62);
    read_counters(&n, DEF_ENTRIES, cc);
    /* window 61 had the new pool: at most 8 tags free now and lowest */
    tags = rd(&n, PTL_REG_PCIE_TAGS(0));
    step_to(&n, mid_window(&n, 102));
    read_counters(&n, DEF_ENTRIES, cd);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    ndk_close(&n);

    for (unsigned e = 0; e < DEF_ENTRIES; e++) {
        before[e] = cb[e] - ca[e];
        after[e] = cd[e] - cc[e];
    }
    g_assert_cmpuint(before[0], ==, 40 * DP);
    g_assert_cmpuint(after[0], ==, 40 * DP);
    sb = (double)before[BRAKE_CH(0)] / before[0];
    sa = (double)after[BRAKE_CH(0)] / after[0];
    g_test_message("BRAKE 0 share: %.4f with 48 tags and 2000 ns, %.4f with "
                   "8 tags and 4000 ns", sb, sa);
    g_assert_cmpfloat(sa, >, sb);
    g_assert_cmpuint(after[BRAKE_CH(0)], >, before[BRAKE_CH(0)]);
    /*
     * the claim holds on both sides. Each difference covers 40 windows of
     * every channel, but a channel's windows lie edge_c cycles after the
     * cycle counter's: tag band 0 (slot 7, 34) holds 29 cycles BRAKE 0
     * (slot 1, 5) lacks, 1 count each at most.
     */
    g_assert_cmpuint(ch_shift(&lp, TAG_BAND(0), BRAKE_CH(0)), ==, 29);
    g_assert_cmpuint(before[BRAKE_CH(0)] +
                     ch_shift(&lp, TAG_BAND(0), BRAKE_CH(0)), >=,
                     before[TAG_BAND(0)]);
    g_assert_cmpuint(after[BRAKE_CH(0)] +
                     ch_shift(&lp, TAG_BAND(0), BRAKE_CH(0)), >=,
                     after[TAG_BAND(0)]);
    /*
     * with 8 tags at most, free tags stay in bands 0 and 1 (<= 256 / 8):
     * each cycle in one of them; their windows (slots 7 and 0: edges 34
     * and -1) are 35 cycles apart, so 35 cycles may count in both or in
     * neither
     */
    g_assert_cmpuint(after[TAG_BAND(2)] + after[TAG_BAND(3)], ==, 0);
    g_assert_cmpuint(ch_shift(&lp, TAG_BAND(0), TAG_BAND(1)), ==, 35);
    g_assert_cmpuint(after[TAG_BAND(0)] + after[TAG_BAND(1)], <=,
                     40 * DP + ch_shift(&lp, TAG_BAND(0), TAG_BAND(1)));
    g_assert_cmpuint(after[TAG_BAND(0)] + after[TAG_BAND(1)] +
                     ch_shift(&lp, TAG_BAND(0), TAG_BAND(1)), >=, 40 * DP);
    g_assert_cmpuint(tags & 0xFFFF, <=, 8);
    /* reads still flow */
    g_assert_cmpuint(after[DCH(1, PTL_CH_WORDS)], >, 0);
}

/* ------------------------------------------------------------------ */
/* The scenario generator                                             */

/*
 * Phase 1: the link is down, nothing moves, for 50 us. Phase 2, the last,
 * for ever: 256-byte RQ frames back to back, and on UP the 100-byte frames
 * of PATTERN_ARGS (2 stalled cycles, 2 words, 3 idle: period 7). Phase 2
 * starts at 50 us: PCIe cycle 20000, inside PCIe window 4 = [16383, 20479),
 * and DMA cycle 10000 = 7 x 1428 + 4, inside DMA window 2. A phase plays
 * its own pattern time from its first cycle, so UP begins there with the
 * first stalled cycle of a frame, not 4 cycles into a period.
 */
static const char scenario_ini[] =
    "# written by the QTest: 50 us of a link that is down\n"
    "[phase down]\n"
    "model=idle\n"
    "duration=50us\n"
    "link-up=false\n"
    "\n"
    "# then 256-byte RQ frames back to back, for ever (the last phase)\n"
    "[phase rq]\n"
    "model = pattern\n"
    "duration = 1 ms\n"
    "rq-frame-bytes=256\n"
    "up-frame-bytes=100\n"
    "up-gap=3\n"
    "up-stall=2\n";

/* A parameter the pattern model does not have */
static const char scenario_bad_ini[] =
    "[phase 1]\n"
    "model=pattern\n"
    "duration=10us\n"
    "rq-bytes=256\n";

static void test_scenario_phases(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-scn-XXXXXX", NULL);
    g_autofree char *ini = NULL, *bad = NULL, *args = NULL, *desc = NULL;
    g_autofree char *file = NULL;
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES] = { 0 };
    uint64_t origin, p2, d2, from[2];
    SimProbe ver[2], pp, dp;
    uint32_t st0;
    uint8_t ecap;
    Ndk n;

    g_assert(dir);
    ini = write_tmp(dir, "phases.ini", scenario_ini);
    bad = write_tmp(dir, "bad.ini", scenario_bad_ini);
    args = g_strdup_printf("-object telemetry-traffic-scenario,id=t0,file=%s "
                           "-device ndk-pcie-telemetry,addr=04.0,traffic=t0",
                           ini);
    ndk_open(&n, "q35", args);
    /* the phases are in virtual time from 0: the arithmetic below too */
    g_assert_cmpint(n.t->t0, ==, 0);
    origin = first_cycle(n.t->t0, PCIE_HZ);
    p2 = first_cycle(50000, PCIE_HZ);
    g_assert_cmpuint(p2, ==, 20000);
    g_assert_cmpuint(drain_cycle(origin, DP, 3), <, p2);
    g_assert_cmpuint(drain_cycle(origin, DP, 4), >, p2);
    d2 = first_cycle(50000, DMA_HZ);
    g_assert_cmpuint(d2, ==, 10000);
    ecap = qpci_find_capability(n.t->dev, PCI_CAP_ID_EXP, 0);
    st0 = status_from_config(
        qpci_config_readw(n.t->dev, ecap + PCI_EXP_DEVCTL),
        qpci_config_readw(n.t->dev, ecap + PCI_EXP_DEVCTL2),
        qpci_config_readw(n.t->dev, ecap + PCI_EXP_LNKCTL));
    st0 &= ~(1u << 9);

    /* after the first drain: link down, all tags and FIFO words free */
    step_to(&n, word_ns(origin, 0));
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st0);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 256 | 256 << 16);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STFIFO(0)), ==, 1024 | 1024 << 16);
    /* the drain of window 3 samples cycle 16384, 41 us: still down */
    step_to(&n, word_ns(origin, 3));
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st0);

    /* 45 us: windows 0..3 counted, RQ has not moved */
    step_to(&n, n.t->t0 + 45000);
    g_assert_cmpuint(windows_by(n.t->now, origin, PCIE_HZ, DP), ==, 4);
    wr(&n, PTL_REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4 * DP - 1);
    g_assert_cmpuint(cnt(&n, PCH(0, PTL_CH_WORDS)), ==, 0);
    g_assert_cmpuint(cnt(&n, PCH(0, PTL_CH_ITEMS)), ==, 0);

    /* the drain of window 4 samples cycle 20480, in phase 2: link up */
    step_to(&n, word_ns(origin, 4));
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st0 | 1u << 9);

    /*
     * 55 us: window 4 counted. RQ moved a word in each cycle from 20000
     * and started a frame every 4 cycles from 20000; 16 items in every
     * word. Each RQ channel's window 4 ends 5 x slot cycles after the
     * cycle counter's (20479): words (slot 1) count 20000..20483 (484),
     * SOF (slot 3) 20000, ..., 20492 (124), items (slot 6) 509 words,
     * region 0 (slot 7) 514 words, region 1 (slot 0) 20000..20478 (479).
     */
    step_to(&n, n.t->t0 + 55000);
    g_assert_cmpuint(windows_by(n.t->now, origin, PCIE_HZ, DP), ==, 5);
    g_assert_cmpuint(cnt(&n, PCH(0, PTL_CH_WORDS)), ==, 484);
    g_assert_cmpuint(cnt(&n, PCH(0, PTL_CH_SOF)), ==, 124);
    g_assert_cmpuint(cnt(&n, PCH(0, PTL_CH_ITEMS)), ==, 16 * 509);
    g_assert_cmpuint(cnt(&n, PCH(0, PTL_CH_REGION0)), ==, 514);
    g_assert_cmpuint(cnt(&n, PCH(0, PTL_CH_REGION0 + 1)), ==, 479);
    /* DMA windows 0 and 1 (cycles up to 8190) were all in phase 1 */
    g_assert_cmpuint(windows_by(n.t->now, first_cycle(n.t->t0, DMA_HZ), DMA_HZ,
                                DP), ==, 2);
    g_assert_cmpuint(cnt(&n, DMA_CYCLES), ==, 2 * DP - 1);
    g_assert_cmpuint(cnt(&n, DCH(0, PTL_CH_WORDS)), ==, 0);

    /* a file with an unknown key is refused, naming file, group and key */
    desc = qom_set_error(qom_set_str(n.t->qts, "/objects/t0", "file", bad));
    g_test_message("qom-set file %s: %s", bad, desc);
    g_assert_nonnull(strstr(desc, bad));
    g_assert_nonnull(strstr(desc, "[phase 1]"));
    g_assert_nonnull(strstr(desc, "rq-bytes"));
    file = qom_get_str(n.t->qts, "/objects/t0", "file");
    g_assert_cmpstr(file, ==, ini);

    /*
     * Half a window after the drain of window 8: every counter, the
     * simulator over the two phases (both with all tags and FIFO words
     * free). DMA windows 0..3 = cycles [0, 16383) of the cycle counter:
     * UP idle up to 10000, then phase 2's own cycles of its pattern, up
     * to 6383 + 4 x slot. UP words (slot 1) see [0, 6387): 6387 = 7 x 912
     * + 3, 912 frames and the first word of one more; SOF (slot 3) and
     * MVB items (slot 4) [0, 6395) = 7 x 913 + 4, 914 frames; items (slot
     * 6) [0, 6407) = 7 x 915 + 2: 915 frames of 25 items. The DMA probe
     * starts at cycle 0 like the PCIe one (the card was reset at 0).
     */
    ver[0] = rq_probe(0);
    from[0] = origin;
    ver[1] = rq_probe(256);
    from[1] = p2;
    sim_windows_versions(ver, from, 2, origin, DP, 9, exp);
    pattern_probes(&pp, &dp);
    dp.bus[0].start = d2;
    sim_windows(&dp, first_cycle(n.t->t0, DMA_HZ), DP, 4, exp + DMA_CYCLES);
    g_assert_cmpuint(exp[DMA_CYCLES], ==, 4 * DP - 1);
    g_assert_cmpuint(exp[PCH(0, PTL_CH_WORDS)], ==, 484 + 4 * 4096);
    g_assert_cmpuint(exp[PCH(0, PTL_CH_SOF)], ==, 124 + 4 * 1024);
    g_assert_cmpuint(exp[TAG_BAND(3)], ==, 9 * 4096 - 1 + 9);
    g_assert_cmpuint(exp[DCH(0, PTL_CH_WORDS)], ==, 2 * 912 + 1);
    /* stalls (slot 2): [0, 6391) = 7 x 913: 913 frames' 2 cycles */
    g_assert_cmpuint(exp[DCH(0, PTL_CH_STALL)], ==, 2 * 913);
    g_assert_cmpuint(exp[DCH(0, PTL_CH_SOF)], ==, 914);
    g_assert_cmpuint(exp[DCH(0, PTL_CH_MVB)], ==, 914);
    g_assert_cmpuint(exp[DCH(0, PTL_CH_ITEMS)], ==, 25 * 915);
    step_to(&n, mid_window(&n, 9));
    g_assert_cmpuint(windows_by(n.t->now, origin, PCIE_HZ, DP), ==, 9);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("scenario, live", got, exp, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st0 | 1u << 9);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    ndk_close(&n);
    unlink(ini);
    unlink(bad);
    rmdir(dir);
}

/* ------------------------------------------------------------------ */
/* The plugin generator with the sample plugin                        */

/*
 * The sample plugin with burst=3, idle=6, bytes=40, tags=20, mps=1: a
 * period of 9 cycles from cycle 0 of each probe, a one-word frame on RQ and
 * on UP (with its MVB item) in each of its first 3 cycles. 40 bytes are 10
 * items: region 0 with the SOF and 8 items, region 1 with the EOF at item
 * 1 (2 items). Over the first C cycles the frames number
 * C / 9 x 3 + min(C % 9, 3). RC and DOWN idle, no BRAKE, 20 free tags
 * (band 1 of 256: 1 <= 20 <= 32), all FIFO words free (band 3); MPS
 * encoding 1 in PCIE_STATUS instead of the host's 0.
 */
#define SQ_ARGS         "burst=3,,idle=6,,bytes=40,,tags=20,,mps=1"
#define SQ_BURST        3
#define SQ_PERIOD       9

static uint64_t sq_frames(uint64_t c)
{
    return c / SQ_PERIOD * SQ_BURST + MIN(c % SQ_PERIOD, SQ_BURST);
}

/*
 * Counters after kp PCIe and kd DMA windows of a card reset at 0, each
 * channel over its own span: per frame and per cycle of its span.
 */
static void sq_probe(const Layout *l, uint64_t k, const uint64_t *per_frame,
                     const uint64_t *per_cycle, uint64_t *exp)
{
    for (unsigned c = 0; c < l->n; c++) {
        uint64_t lo, hi;

        ch_span(l, 0, DP, k, c, &lo, &hi);
        exp[c] = per_frame[c] * (sq_frames(hi) - sq_frames(lo)) +
                 per_cycle[c] * (hi - lo);
    }
}

static void sq_expect(uint64_t kp, uint64_t kd, uint64_t *exp)
{
    const Layout lp = pcie_layout(2), ld = dma_layout(1, 2);
    uint64_t pf[SIM_MAX_CH] = { 0 }, pc[SIM_MAX_CH] = { 0 };
    uint64_t df[SIM_MAX_CH] = { 0 }, dc[SIM_MAX_CH] = { 0 };

    memset(exp, 0, DEF_ENTRIES * sizeof(*exp));
    pc[0] = 1;
    pf[PCH(0, PTL_CH_WORDS)] = pf[PCH(0, PTL_CH_SOF)] = 1;
    pf[PCH(0, PTL_CH_ITEMS)] = 10;
    pf[PCH(0, PTL_CH_REGION0)] = pf[PCH(0, PTL_CH_REGION0 + 1)] = 1;
    pc[TAG_BAND(1)] = 1;
    pc[FIFO_BAND(3)] = 1;
    dc[0] = 1;
    df[1 + PTL_CH_WORDS] = df[1 + PTL_CH_SOF] = df[1 + PTL_CH_MVB] = 1;
    df[1 + PTL_CH_ITEMS] = 10;
    df[1 + PTL_CH_REGION0] = df[1 + PTL_CH_REGION0 + 1] = 1;
    sq_probe(&lp, kp, pf, pc, exp);
    sq_probe(&ld, kd, df, dc, exp + DMA_CYCLES);
}

static void test_plugin_sample(void)
{
    const char *so = g_getenv("PTM_SAMPLE_PLUGIN");
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-plg-XXXXXX", NULL);
    g_autofree char *obj = NULL, *quoted = NULL, *args = NULL;
    g_autofree char *got_args = NULL, *desc = NULL, *text = NULL;
    g_autofree char *obj_missing = NULL, *obj_text = NULL, *obj_bad = NULL;
    g_autofree char *msg_text = NULL, *msg_bad = NULL;
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES], origin;
    uint32_t st;
    uint8_t ecap;
    Ndk n;

    if (!so || !g_file_test(so, G_FILE_TEST_IS_REGULAR)) {
        g_test_message("PTM_SAMPLE_PLUGIN (%s) names no file: run the test "
                       "with tests/qtest/run-qtest.sh after building the "
                       "project (build/traffic-gen/plugins/"
                       "ptm-sample-plugin.so)", so ? so : "unset");
        g_test_fail();
        return;
    }
    g_assert(dir);

    /* the hand arithmetic of the closed form */
    g_assert_cmpuint(sq_frames(9 * 4096 - 1), ==, 4095 * 3 + 3);
    g_assert_cmpuint(sq_frames(4 * 4096 - 1), ==, 1820 * 3 + 3);
    g_assert_cmpuint(sq_frames(4095), ==, 455 * 3);

    obj = g_strdup_printf("telemetry-traffic-plugin,id=t0,path=%s,args="
                          SQ_ARGS, so);
    quoted = g_shell_quote(obj);
    args = g_strdup_printf("-object %s "
                           "-device ndk-pcie-telemetry,addr=04.0,traffic=t0",
                           quoted);
    ndk_open(&n, "q35", args);
    g_assert_cmpint(n.t->t0, ==, 0);
    origin = first_cycle(n.t->t0, PCIE_HZ);
    got_args = qom_get_str(n.t->qts, "/objects/t0", "args");
    g_assert_cmpstr(got_args, ==, "burst=3,idle=6,bytes=40,tags=20,mps=1");
    ecap = qpci_find_capability(n.t->dev, PCI_CAP_ID_EXP, 0);
    st = status_from_config(qpci_config_readw(n.t->dev, ecap + PCI_EXP_DEVCTL),
                            qpci_config_readw(n.t->dev, ecap + PCI_EXP_DEVCTL2),
                            qpci_config_readw(n.t->dev, ecap + PCI_EXP_LNKCTL));
    g_assert_cmphex(st & 7, ==, 0);
    st |= 1;

    step_to(&n, word_ns(origin, 0));
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 20 | 20 << 16);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STFIFO(0)), ==, 1024 | 1024 << 16);
    /* 15 us: the deltas of PCIe window 0 are in, no DMA window yet */
    step_to(&n, n.t->t0 + 15000);
    g_assert_cmpuint(windows_by(n.t->now, origin, PCIE_HZ, DP), ==, 1);
    wr(&n, PTL_REG_READ_SEL, 1);
    sq_expect(1, 0, exp);
    g_assert_cmpuint(exp[0], ==, 4095);
    /* RQ words (slot 1): cycles [1, 4095 + 5) */
    g_assert_cmpuint(exp[PCH(0, PTL_CH_WORDS)], ==, sq_frames(4100) - 1);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("plugin, live, PCIe window 0", got, exp, DEF_ENTRIES);

    /* arguments the plugin refuses: the old ones stay */
    desc = qom_set_error(qom_set_str(n.t->qts, "/objects/t0", "args",
                                     "bytes=100"));
    g_test_message("qom-set args bytes=100: %s", desc);
    g_assert_nonnull(strstr(desc, "bytes=100"));
    g_assert_nonnull(strstr(desc, "(sample)"));
    g_free(got_args);
    got_args = qom_get_str(n.t->qts, "/objects/t0", "args");
    g_assert_cmpstr(got_args, ==, "burst=3,idle=6,bytes=40,tags=20,mps=1");

    /* PCIe windows 0..8 (36863 cycles), DMA windows 0..3 (16383) */
    step_to(&n, mid_window(&n, 9));
    sq_expect(9, 4, exp);
    g_assert_cmpuint(exp[0], ==, 9 * 4096 - 1);
    g_assert_cmpuint(exp[DMA_CYCLES], ==, 4 * 4096 - 1);
    /*
     * RQ words (slot 1): cycles [1, 36863 + 5), 36868 = 9 x 4096 + 4: all
     * 4096 x 3 + 3 frames but the one of cycle 0; DMA MVB items (slot 4,
     * from cycle 0): [0, 16383 + 16), 16399 = 9 x 1822 + 1
     */
    g_assert_cmpuint(exp[PCH(0, PTL_CH_WORDS)], ==, 12290);
    g_assert_cmpuint(exp[DCH(0, PTL_CH_MVB)], ==, 1822 * 3 + 1);
    snapshot(&n, DEF_ENTRIES);
    wr(&n, PTL_REG_READ_SEL, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("plugin, snapshot", got, exp, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st);
    ndk_close(&n);

    /* refused at start-up, with the reason: a path that does not exist */
    obj_missing = g_strdup_printf("telemetry-traffic-plugin,id=t0,path=%s/"
                                  "no-such-plugin.so", dir);
    msg_text = g_strdup_printf("plugin %s/no-such-plugin.so: no such file",
                               dir);
    {
        const char *extra[] = {
            "-object", obj_missing,
            "-device", "ndk-pcie-telemetry,traffic=t0", NULL,
        };

        expect_start_refused(extra, msg_text);
    }
    /* a file that is not a shared object */
    text = write_tmp(dir, "not-a-plugin.so", "not an ELF file\n");
    obj_text = g_strdup_printf("telemetry-traffic-plugin,id=t0,path=%s",
                               text);
    g_free(msg_text);
    msg_text = g_strdup_printf("plugin %s: not a shared object that can be "
                               "loaded", text);
    {
        const char *extra[] = {
            "-object", obj_text,
            "-device", "ndk-pcie-telemetry,traffic=t0", NULL,
        };

        expect_start_refused(extra, msg_text);
    }
    /* arguments the plugin's create() refuses: a frame is one word */
    obj_bad = g_strdup_printf("telemetry-traffic-plugin,id=t0,path=%s,"
                              "args=bytes=100", so);
    msg_bad = g_strdup_printf("plugin %s (sample): bytes=100: a frame is "
                              "one word here, 1 to 64 bytes", so);
    {
        const char *extra[] = {
            "-object", obj_bad,
            "-device", "ndk-pcie-telemetry,traffic=t0", NULL,
        };

        expect_start_refused(extra, msg_bad);
    }
    unlink(text);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_set_nonfatal_assertions();

    g_test_add_func("/ndk-pcie-telemetry/live/qom-set-next-window",
                    test_live_qom_set);
    g_test_add_func("/ndk-pcie-telemetry/live/qom-set-next-window-4ghz",
                    test_live_qom_set_4ghz);
    g_test_add_func("/ndk-pcie-telemetry/live/many-changes-keep-past",
                    test_live_many_changes);
    g_test_add_func("/ndk-pcie-telemetry/random/invariants",
                    test_random_invariants);
    g_test_add_func("/ndk-pcie-telemetry/ptc/claims", test_ptc_claims);
    g_test_add_func("/ndk-pcie-telemetry/ptc/claims-2-dma-ports",
                    test_ptc_claims_2ports);
    g_test_add_func("/ndk-pcie-telemetry/ptc/qom-set-tags",
                    test_ptc_qom_set_tags);
    g_test_add_func("/ndk-pcie-telemetry/scenario/phases",
                    test_scenario_phases);
    g_test_add_func("/ndk-pcie-telemetry/plugin/sample", test_plugin_sample);

    return g_test_run();
}
