/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Drain windows, FIFO transport, the accumulator, commands and flags, on
 * the virtual time line. Expected values follow from FACTS.md (first delta
 * DRAIN_PERIOD - 1, BUSY of 1 + 2 x ENTRIES MI cycles, lost deltas with
 * 3 endpoints at DRAIN_PERIOD 1024) and from the clock arithmetic done by
 * hand in the comments: with the defaults a PCIe cycle is 2.5 ns, a DMA
 * cycle 5 ns and an MI cycle 10 ns.
 */
#include <glib.h>
#include <string.h>

#include "ptm-core.h"
#include "ptm-pattern.h"

typedef struct Card {
    PtmCore *core;
    PtmPattern pat;
} Card;

static Card *card_new(const PtmConfig *cfg, const PtmPatternParams *par)
{
    Card *c = g_new0(Card, 1);
    PtmGeometry geo;

    g_assert_null(ptm_config_check(cfg));
    c->core = ptm_core_new(cfg);
    if (par) {
        ptm_core_geometry(c->core, &geo);
        ptm_pattern_init(&c->pat, par, &geo);
        ptm_core_set_source(c->core, &ptm_pattern_ops, &c->pat);
    }
    ptm_core_power_on(c->core, 0);
    return c;
}

static void card_free(Card *c)
{
    ptm_core_free(c->core);
    g_free(c);
}

static uint32_t rd(Card *c, uint64_t t, uint32_t addr)
{
    return (uint32_t)ptm_core_read(c->core, t, addr, 4);
}

static uint64_t rd64(Card *c, uint64_t t, unsigned entry)
{
    return ptm_core_read(c->core, t, PTM_CNT_BASE + 8 * entry, 8);
}

static void cmd(Card *c, uint64_t t, uint32_t bits)
{
    ptm_core_write(c->core, t, PTM_REG_COMMAND, bits, 4);
}

/* RQ: 256-byte frames back to back, 4 words of 16 items each. */
static void busy_rq(PtmPatternParams *par)
{
    ptm_pattern_params_default(par);
    par->bus[PTM_BUS_RQ].frame_bytes = 256;
}

static void test_drain_lag(void)
{
    PtmConfig cfg;
    Card *c;

    ptm_config_default(&cfg);
    c = card_new(&cfg, NULL);
    ptm_core_write(c->core, 0, PTM_REG_READ_SEL, 1, 4);
    /*
     * PCIe window 0 ends at cycle 4095; the drain tick samples cycle 4096,
     * slot 0 is captured at 4097 and the cycle counter (group 0) written
     * into the FIFO at 4099. The first MI edge after PCIe edge 4100
     * (10250 ns, shared with MI edge 1025) is 1026; the read side sees the
     * write 4 edges later, the output registers hand it to an idle
     * accumulator which pops it at 1033, writes the sum at 1035, and a
     * read from MI cycle 1036 (10360 ns) sees it.
     */
    g_assert_cmpuint(rd64(c, 10000, 0), ==, 0);
    g_assert_cmpuint(rd64(c, 10359, 0), ==, 0);
    g_assert_cmpuint(rd64(c, 10360, 0), ==, 4095);
    /* DMA window 0 ends at DMA cycle 4095 = 20475 ns: nothing yet at 15 us */
    g_assert_cmpuint(rd64(c, 15000, 31), ==, 0);
    /* by 25 us: PCIe windows 0 and 1, DMA window 0 */
    g_assert_cmpuint(rd64(c, 25000, 0), ==, 4095 + 4096);
    g_assert_cmpuint(rd64(c, 25000, 31), ==, 4095);
    /* the snapshot copy is still all zero */
    ptm_core_write(c->core, 25000, PTM_REG_READ_SEL, 0, 4);
    g_assert_cmpuint(rd64(c, 25000, 0), ==, 0);
    card_free(c);
}

static void test_busy_duration(void)
{
    PtmConfig cfg;
    Card *c;

    ptm_config_default(&cfg);
    c = card_new(&cfg, NULL);
    /* at 15 us the accumulator is idle (window 0 done by ~11 us) */
    cmd(c, 15000, PTM_CMD_SNAPSHOT);                /* MI cycle 1500 */
    g_assert_cmpuint(rd(c, 15010, PTM_REG_STATUS) & 1, ==, 0);
    g_assert_cmpuint(rd(c, 15020, PTM_REG_STATUS) & 1, ==, 1);
    g_assert_cmpuint(rd(c, 16300, PTM_REG_STATUS) & 1, ==, 1);  /* 1630 */
    g_assert_cmpuint(rd(c, 16310, PTM_REG_STATUS) & 1, ==, 0);  /* 129 */
    g_assert_cmpuint(rd64(c, 16310, 0), ==, 4095);

    /* CLEAR and SNAPSHOT together: 2 + 4 x 64 = 258 cycles */
    cmd(c, 17000, PTM_CMD_SNAPSHOT | PTM_CMD_CLEAR);    /* 1700 */
    g_assert_cmpuint(rd(c, 17000 + 10 * 259, PTM_REG_STATUS) & 1, ==, 1);
    g_assert_cmpuint(rd(c, 17000 + 10 * 260, PTM_REG_STATUS) & 1, ==, 0);
    g_assert_cmpuint(rd64(c, 20000, 0), ==, 0);
    ptm_core_write(c->core, 20000, PTM_REG_READ_SEL, 1, 4);
    g_assert_cmpuint(rd64(c, 20000, 0), ==, 0);

    /* CLEAR alone: 129 cycles */
    cmd(c, 40000, PTM_CMD_CLEAR);
    g_assert_cmpuint(rd(c, 40000 + 10 * 130, PTM_REG_STATUS) & 1, ==, 1);
    g_assert_cmpuint(rd(c, 40000 + 10 * 131, PTM_REG_STATUS) & 1, ==, 0);
    card_free(c);
}

/* A command that arrives while a delta is being added waits for it. */
static void test_busy_behind_delta(void)
{
    PtmConfig cfg;
    PtmPatternParams par;
    Card *c;

    ptm_config_default(&cfg);
    busy_rq(&par);
    c = card_new(&cfg, &par);
    /*
     * The first delta (cycles) is popped at MI 1033 (see drain-lag) and
     * its sum written at 1035. A SNAPSHOT written in 1033 is seen from
     * 1035, too late to stop that delta but in time to keep the next one
     * (RQ region 1, popped no earlier than 1036) waiting: the sweep starts
     * when the accumulator is idle again, at 1036, and BUSY falls at
     * 1036 + 1 + 2 x 64 = 1165.
     */
    cmd(c, 10330, PTM_CMD_SNAPSHOT);
    g_assert_cmpuint(rd(c, 10340, PTM_REG_STATUS) & 1, ==, 0);
    g_assert_cmpuint(rd(c, 10350, PTM_REG_STATUS) & 1, ==, 1);
    g_assert_cmpuint(rd(c, 11640, PTM_REG_STATUS) & 1, ==, 1);
    g_assert_cmpuint(rd(c, 11650, PTM_REG_STATUS) & 1, ==, 0);
    /* the snapshot holds that delta and none taken after it */
    g_assert_cmpuint(rd64(c, 11650, 0), ==, 4095);
    g_assert_cmpuint(rd64(c, 11650, 8), ==, 0);
    g_assert_cmpuint(rd64(c, 11650, 1), ==, 0);
    /*
     * the live copy got the waiting deltas after BUSY: RQ words of window
     * 0, cycles 1 to 4095 + 5 (slot 1 closes 5 cycles after the counter)
     */
    ptm_core_write(c->core, 15000, PTM_REG_READ_SEL, 1, 4);
    g_assert_cmpuint(rd64(c, 15000, 1), ==, 4099);
    card_free(c);
}

/* CLEAR zeroes the copies but not the probes' narrow counters. */
static void test_clear_keeps_window(void)
{
    PtmConfig cfg;
    Card *c;

    ptm_config_default(&cfg);
    c = card_new(&cfg, NULL);
    ptm_core_write(c->core, 0, PTM_REG_READ_SEL, 1, 4);
    cmd(c, 15000, PTM_CMD_CLEAR);
    g_assert_cmpuint(rd64(c, 17000, 0), ==, 0);
    /* window 1 (cycles 4095..8190) drains at 20.48 us and is whole */
    g_assert_cmpuint(rd64(c, 25000, 0), ==, 4096);
    card_free(c);
}

static void test_lowest_values(void)
{
    PtmConfig cfg;
    PtmPatternParams par;
    PtmSettings s = { .mps = 2, .mrrs = 5, .ext_tag = true, .rcb_128 = true };
    Card *c;

    ptm_config_default(&cfg);
    ptm_pattern_params_default(&par);
    par.tags_free = 100;
    par.stfifo_free = 300;
    c = card_new(&cfg, &par);
    g_assert_cmphex(rd(c, 10000, PTM_REG_PCIE_TAGS), ==, 0x07FF0000);
    g_assert_cmphex(rd(c, 10000, PTM_REG_PCIE_STATUS), ==, 0);
    /*
     * The first drain tick samples PCIe cycle 4096 and sends its status
     * word: the first MI edge after cycle 4097 (10242.5 ns) is 1025, the
     * word arrives 4 edges later and shows from 1030 (10300 ns), with the
     * power-on settings (MPS 128 B, MRRS 512 B) and link up.
     */
    g_assert_cmphex(rd(c, 10290, PTM_REG_PCIE_TAGS), ==, 0x07FF0000);
    g_assert_cmphex(rd(c, 10300, PTM_REG_PCIE_TAGS), ==, 0x00640064);
    g_assert_cmphex(rd(c, 10300, PTM_REG_PCIE_STFIFO), ==, 0x012C012C);
    g_assert_cmphex(rd(c, 10300, PTM_REG_PCIE_STATUS), ==, 0x210);
    /* COMMAND bit 3 in MI cycle 1200 clears the lowest fields in 1201 */
    cmd(c, 12000, PTM_CMD_CLEAR_LOWEST);
    g_assert_cmphex(rd(c, 12010, PTM_REG_PCIE_TAGS), ==, 0x00640064);
    g_assert_cmphex(rd(c, 12020, PTM_REG_PCIE_TAGS), ==, 0x07FF0064);
    g_assert_cmphex(rd(c, 12020, PTM_REG_PCIE_STFIFO), ==, 0xFFFF012C);
    g_assert_cmpuint(rd(c, 12010, PTM_REG_STATUS) & 1, ==, 0);
    /* settings written at 15 us: the drain at 10.24 us keeps the old ones
     * even though nothing read the card in between */
    ptm_core_set_settings(c->core, 15000, 0, &s);
    g_assert_cmphex(rd(c, 20000, PTM_REG_PCIE_STATUS), ==, 0x210);
    /* the second tick samples cycle 8192 (20480 ns): shown from 20540 ns */
    g_assert_cmphex(rd(c, 20530, PTM_REG_PCIE_STATUS), ==, 0x210);
    g_assert_cmphex(rd(c, 20540, PTM_REG_PCIE_TAGS), ==, 0x00640064);
    g_assert_cmphex(rd(c, 20540, PTM_REG_PCIE_STATUS), ==,
                    2 | 5 << 3 | 1 << 6 | 1 << 8 | 1 << 9);
    card_free(c);
}

static void run_to(Card *c, uint64_t t_end, uint64_t step)
{
    for (uint64_t t = 0; t <= t_end; t += step) {
        ptm_core_advance(c->core, t);
    }
}

/* FACTS.md: 3 endpoints at DRAIN_PERIOD 1024 lose deltas, 2 do not. */
static void test_lost_deltas(void)
{
    PtmConfig cfg;
    Card *c;

    ptm_config_default(&cfg);
    cfg.drain_period = 1024;
    cfg.pcie_endpoints = 2;
    c = card_new(&cfg, NULL);
    run_to(c, 2000000, 100000);
    g_assert_cmpuint(rd(c, 2000000, PTM_REG_STATUS) & 2, ==, 0);
    g_assert_cmpuint(ptm_core_lost_deltas(c->core), ==, 0);
    card_free(c);

    cfg.pcie_endpoints = 3;
    c = card_new(&cfg, NULL);
    run_to(c, 2000000, 100000);
    g_assert_cmpuint(rd(c, 2000000, PTM_REG_STATUS) & 2, ==, 2);
    g_assert_cmpuint(ptm_core_lost_deltas(c->core), >, 0);
    /*
     * CLEAR FLAGS clears it: written in MI cycle 200000, the level change
     * reaches each probe two of its edges after the first one past it
     * (PCIe edge 800003) and STATUS shows that from the third MI edge
     * after it, 200003; it comes back while deltas keep being lost
     */
    cmd(c, 2000000, PTM_CMD_CLEAR_FLAGS);
    g_assert_cmpuint(rd(c, 2000020, PTM_REG_STATUS) & 2, ==, 2);
    g_assert_cmpuint(rd(c, 2000030, PTM_REG_STATUS) & 2, ==, 0);
    g_assert_cmpuint(rd(c, 2100000, PTM_REG_STATUS) & 2, ==, 2);
    card_free(c);

    /* 16 endpoints x 4 DMA ports at the default drain period: load 2.98 */
    cfg.pcie_endpoints = 16;
    cfg.dma_ports = 4;
    cfg.drain_period = 4096;
    c = card_new(&cfg, NULL);
    run_to(c, 300000, 10000);
    g_assert_cmpuint(rd(c, 300000, PTM_REG_STATUS) & 2, ==, 2);
    card_free(c);
}

/* CNT_WIDTH 33 wraps: 16 items per cycle at 4 GHz pass 2^33 in 0.134 s. */
static void test_wrap_33(void)
{
    PtmConfig cfg;
    PtmPatternParams par;
    const uint64_t dp = 32768, k = 24414;   /* windows done at t */
    uint64_t t, cyc = k * dp - 1;
    Card *c;

    ptm_config_default(&cfg);
    cfg.cnt_width = 33;
    cfg.drain_period = dp;
    cfg.pcie_clk_hz = 4000000000ull;
    busy_rq(&par);
    c = card_new(&cfg, &par);
    /* half a window after the end of window k - 1 */
    t = (k * dp + dp / 2) / 4;                      /* ns at 4 GHz */
    run_to(c, t, 1000000);
    ptm_core_write(c->core, t, PTM_REG_READ_SEL, 1, 4);
    g_assert_cmpuint(rd64(c, t, 0), ==, cyc);
    g_assert_cmpuint(16 * cyc, >, 1ull << 33);
    /*
     * RQ items (channel 6, slot 6) close 30 cycles after the counter and
     * start at cycle 1, inside the frame that began at cycle 0, whose
     * words 1..3 carry no open frame: items of cycles 4 .. cyc + 29
     */
    g_assert_cmpuint(rd64(c, t, 6), ==,
                     (16 * (cyc + 26)) & ((1ull << 33) - 1));
    /* the high word holds bit 32 only */
    g_assert_cmpuint(rd(c, t, PTM_CNT_BASE + 6 * 8 + 4), <=, 1);
    card_free(c);
}

static void all_counters(Card *c, uint64_t t, uint64_t *out)
{
    unsigned n = ptm_core_layout(c->core)->entries;

    ptm_core_advance(c->core, t);
    for (unsigned e = 0; e < n; e++) {
        out[e] = ptm_core_counter(c->core, false, e);
    }
}

/* Same traffic, same accesses: the same values however time is stepped. */
static void test_determinism(void)
{
    PtmConfig cfg;
    PtmPatternParams par;
    uint64_t a[128], b[128];
    Card *c1, *c2;

    ptm_config_default(&cfg);
    cfg.pcie_endpoints = 2;
    busy_rq(&par);
    par.bus[PTM_BUS_UP].frame_bytes = 100;
    par.bus[PTM_BUS_UP].gap = 3;
    par.bus[PTM_BUS_UP].stall = 2;
    c1 = card_new(&cfg, &par);
    c2 = card_new(&cfg, &par);
    run_to(c1, 3000000, 777);
    all_counters(c1, 3000000, a);
    all_counters(c2, 3000000, b);
    g_assert_cmpmem(a, sizeof(a), b, sizeof(b));
    card_free(c1);
    card_free(c2);
}

static void test_save_load(void)
{
    PtmConfig cfg;
    PtmPatternParams par;
    uint64_t a[64], b[64];
    void *blob;
    size_t len;
    char *err;
    Card *c1, *c2;

    ptm_config_default(&cfg);
    busy_rq(&par);
    c1 = card_new(&cfg, &par);
    c2 = card_new(&cfg, &par);
    /* stop in the middle of a window's transport, with a command running */
    cmd(c1, 10300, PTM_CMD_SNAPSHOT);
    ptm_core_write(c1->core, 10300, PTM_REG_READ_SEL, 1, 4);
    ptm_core_advance(c1->core, 10400);
    blob = ptm_core_save(c1->core, &len);
    err = ptm_core_load(c2->core, blob, len);
    g_assert_null(err);
    g_assert_cmpuint(rd(c1, 10400, PTM_REG_STATUS), ==,
                     rd(c2, 10400, PTM_REG_STATUS));
    all_counters(c1, 500000, a);
    all_counters(c2, 500000, b);
    g_assert_cmpmem(a, sizeof(a), b, sizeof(b));
    g_assert_cmpuint(rd64(c1, 500000, 1), ==, rd64(c2, 500000, 1));
    /* truncated state is refused */
    err = ptm_core_load(c2->core, blob, len - 8);
    g_assert_nonnull(err);
    g_free(err);
    g_free(blob);
    card_free(c1);
    card_free(c2);
}

/* An MI reset keeps the counter memory and restarts the probes. */
static void test_reset(void)
{
    PtmConfig cfg;
    Card *c;

    ptm_config_default(&cfg);
    c = card_new(&cfg, NULL);
    ptm_core_write(c->core, 0, PTM_REG_READ_SEL, 1, 4);
    g_assert_cmpuint(rd64(c, 15000, 0), ==, 4095);
    ptm_core_reset(c->core, 15000);
    g_assert_cmpuint(rd(c, 15000, PTM_REG_READ_SEL), ==, 0);
    g_assert_cmphex(rd(c, 15000, PTM_REG_PCIE_TAGS), ==, 0x07FF0000);
    ptm_core_write(c->core, 15000, PTM_REG_READ_SEL, 1, 4);
    g_assert_cmpuint(rd64(c, 15000, 0), ==, 4095);
    /* the probe starts over at 15 us: its first window of 4095 cycles
     * drains at 15 us + 10237.5 ns */
    g_assert_cmpuint(rd64(c, 25000, 0), ==, 4095);
    g_assert_cmpuint(rd64(c, 27000, 0), ==, 2 * 4095);
    /* power-on zeroes it */
    ptm_core_power_on(c->core, 30000);
    ptm_core_write(c->core, 30000, PTM_REG_READ_SEL, 1, 4);
    g_assert_cmpuint(rd64(c, 30000, 0), ==, 0);
    card_free(c);
}

/* A source may report other settings for endpoints other than 0. */
static void other_settings(void *opaque, unsigned e, uint64_t cycle,
                           PtmSettings *set)
{
    if (e == 1) {
        set->mps = 1;
        set->tag_10bit = true;
    }
}

static uint64_t idle_fill(void *opaque, const PtmProbeInfo *probe,
                          uint64_t start, uint64_t max, PtmChunk *out)
{
    memset(&out->seg[0], 0, sizeof(out->seg[0]));
    out->seg[0].cycles = max;
    out->seg[0].link_up = probe->endpoint == 0;
    out->seg[0].tag_free = 5;
    out->nseg = 1;
    out->repeat = 1;
    return max;
}

static void test_source_settings(void)
{
    static const PtmSourceOps ops = {
        .fill = idle_fill, .settings = other_settings,
    };
    PtmConfig cfg;
    PtmCore *core;

    ptm_config_default(&cfg);
    cfg.pcie_endpoints = 2;
    core = ptm_core_new(&cfg);
    ptm_core_set_source(core, &ops, NULL);
    ptm_core_power_on(core, 0);
    /* endpoint 0: power-on settings (MRRS 512 B), link up */
    g_assert_cmphex(ptm_core_read(core, 11000, PTM_REG_PCIE_STATUS, 4), ==,
                    0x210);
    /* endpoint 1: MPS 256 B and 10-bit tags from the source, link down */
    g_assert_cmphex(ptm_core_read(core, 11000, PTM_REG_PCIE_STATUS + 4, 4),
                    ==, 0x011 | 1 << 7);
    g_assert_cmphex(ptm_core_read(core, 11000, PTM_REG_PCIE_TAGS + 4, 4),
                    ==, 0x00050005);
    ptm_core_free(core);
}

/* A card created late (hot-plug) starts from zero, without catching up. */
static void test_late_power_on(void)
{
    PtmConfig cfg;
    PtmCore *core;
    uint64_t t = 2000000000ull;                 /* 2 s */

    ptm_config_default(&cfg);
    core = ptm_core_new(&cfg);
    ptm_core_power_on(core, t);
    ptm_core_write(core, t, PTM_REG_READ_SEL, 1, 4);
    g_assert_cmpuint(ptm_core_read(core, t, PTM_CNT_BASE, 8), ==, 0);
    g_assert_cmpuint(ptm_core_applied_deltas(core), ==, 0);
    /* its first window: 4095 cycles from its creation */
    g_assert_cmpuint(ptm_core_read(core, t + 15000, PTM_CNT_BASE, 8), ==,
                     4095);
    ptm_core_free(core);
}

/* A state only loads into a card with the same generics and clocks. */
static void test_load_other_config(void)
{
    PtmConfig cfg;
    PtmCore *a, *b;
    void *blob;
    size_t len;
    char *err;

    ptm_config_default(&cfg);
    a = ptm_core_new(&cfg);
    ptm_core_power_on(a, 0);
    ptm_core_advance(a, 50000);
    blob = ptm_core_save(a, &len);
    cfg.cnt_width = 40;
    b = ptm_core_new(&cfg);
    ptm_core_power_on(b, 0);
    err = ptm_core_load(b, blob, len);
    g_assert_nonnull(err);
    g_free(err);
    ptm_core_free(b);
    ptm_config_default(&cfg);
    cfg.mi_clk_hz = 125000000;
    b = ptm_core_new(&cfg);
    ptm_core_power_on(b, 0);
    err = ptm_core_load(b, blob, len);
    g_assert_nonnull(err);
    g_free(err);
    /* and a refused state changed nothing */
    ptm_core_write(b, 0, PTM_REG_READ_SEL, 1, 4);
    g_assert_cmpuint(ptm_core_read(b, 0, PTM_CNT_BASE, 8), ==, 0);
    g_free(blob);
    ptm_core_free(a);
    ptm_core_free(b);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/timing/drain-lag", test_drain_lag);
    g_test_add_func("/timing/busy-duration", test_busy_duration);
    g_test_add_func("/timing/busy-behind-delta", test_busy_behind_delta);
    g_test_add_func("/timing/clear-keeps-window", test_clear_keeps_window);
    g_test_add_func("/timing/lowest-values", test_lowest_values);
    g_test_add_func("/timing/lost-deltas", test_lost_deltas);
    g_test_add_func("/timing/wrap-33", test_wrap_33);
    g_test_add_func("/timing/determinism", test_determinism);
    g_test_add_func("/timing/save-load", test_save_load);
    g_test_add_func("/timing/reset", test_reset);
    g_test_add_func("/timing/source-settings", test_source_settings);
    g_test_add_func("/timing/late-power-on", test_late_power_on);
    g_test_add_func("/timing/load-other-config", test_load_other_config);
    return g_test_run();
}
