/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scenario generator: phases switch exactly at their boundaries (in
 * counts through the core and cycle by cycle), loop or stay in the last
 * phase, each phase starts its model's time afresh, bad files are refused
 * with a message naming file, group and key, the fast counter equals the
 * per-cycle reference on its chunks, and the same file gives the same
 * counts.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "ptm-core.h"
#include "ptm-gen.h"
#include "ptm-scenario.h"
#include "test-support.h"

static char *tmpdir;

/* Channels of endpoint 0 of the default card (2 regions per bus). */
enum {
    PCIE_CYCLES = 0,
    RQ_WORDS = 1, RQ_SOF = 3, RQ_ITEMS = 6,
    RC_WORDS = 9,
    BRAKE0 = 17,
    TAG_BAND0 = 23, TAG_BAND3 = 26,
    DMA_CYCLES = 31,
    UP_WORDS = 32, UP_MVB = 35,
};

static char *write_file(const char *name, const char *text)
{
    char *path = g_build_filename(tmpdir, name, NULL);

    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    return path;
}

static void default_geometry(PtmConfig *cfg, PtmGeometry *geo)
{
    PtmCore *core;

    ptm_config_default(cfg);
    core = ptm_core_new(cfg);
    ptm_core_geometry(core, geo);
    ptm_core_free(core);
}

static PtmGen *scenario_gen(const char *file, bool loop,
                            const PtmGeometry *geo, char **err)
{
    PtmScenarioParams p;

    ptm_model_scenario.defaults(&p);
    g_strlcpy(p.file, file, sizeof(p.file));
    p.loop = loop;
    *err = NULL;
    return ptm_gen_new(&ptm_model_scenario, &p, geo, err);
}

/* Live counters of a card of cfg driven by the scenario, at t ns. */
static void run_card(const PtmConfig *cfg, const char *file, bool loop,
                     uint64_t t, uint64_t *cnt, unsigned ncnt)
{
    PtmCore *core = ptm_core_new(cfg);
    PtmGeometry geo;
    PtmGen *g;
    char *err;

    ptm_core_geometry(core, &geo);
    g = scenario_gen(file, loop, &geo, &err);
    g_assert_null(err);
    ptm_core_set_source(core, &ptm_gen_source_ops, g);
    ptm_core_power_on(core, 0);
    for (uint64_t s = 0; s <= t; s += 5000) {
        ptm_core_advance(core, s);
    }
    ptm_core_advance(core, t);
    g_assert_cmpuint(ncnt, <=, ptm_core_layout(core)->entries);
    for (unsigned e = 0; e < ncnt; e++) {
        cnt[e] = ptm_core_counter(core, false, e);
    }
    ptm_core_free(core);
    ptm_gen_free(g);
}

static const char burst_file[] =
    "# quiet, then a burst, then tag starvation\n"
    "[phase quiet]\n"
    "model=idle\n"
    "duration=10us\n"
    "\n"
    "[phase burst]\n"
    "model=pattern\n"
    "duration=5us\n"
    "rq-frame-bytes=256\n"
    "up-frame-bytes=32\n"
    "\n"
    "[phase starve]\n"
    "model=pattern\n"
    "duration = 5 us\n"
    "tags-free=0\n"
    "brake=0x1\n";

/*
 * PCIe at 400 MHz: quiet is cycles [0, 4000), burst [4000, 6000), starve
 * [6000, 8000). DMA at 200 MHz: burst is [2000, 3000). By 35 us the core
 * has counted PCIe windows 0..2 (cycles [0, 12287)) and DMA window 0
 * (cycles [0, 4095)). A 256-byte RQ frame is 64 items, 4 words of 16; a
 * 32-byte UP frame one word with its MVB item.
 */
static void test_boundaries_no_loop(void)
{
    g_autofree char *file = write_file("burst.ini", burst_file);
    PtmConfig cfg;
    PtmGeometry geo;
    uint64_t c[40];

    default_geometry(&cfg, &geo);
    run_card(&cfg, file, false, 35000, c, G_N_ELEMENTS(c));
    g_assert_cmpuint(c[PCIE_CYCLES], ==, 12287);
    g_assert_cmpuint(c[RQ_WORDS], ==, 2000);
    g_assert_cmpuint(c[RQ_SOF], ==, 500);
    g_assert_cmpuint(c[RQ_ITEMS], ==, 500 * 64);
    g_assert_cmpuint(c[RC_WORDS], ==, 0);
    /*
     * the last phase goes on: starving from cycle 6000 to the end of the
     * channel's windows, which close (c mod 8) x 5 cycles after the cycle
     * counter's (the bands one cycle less): BRAKE0 (17) 5, TAG_BAND0 (23) 34
     */
    g_assert_cmpuint(c[BRAKE0], ==, 12287 + 5 - 6000);
    g_assert_cmpuint(c[BRAKE0 + 1], ==, 0);
    g_assert_cmpuint(c[TAG_BAND0], ==, 12287 + 34 - 6000);
    g_assert_cmpuint(c[TAG_BAND3], ==, 6000);
    g_assert_cmpuint(c[DMA_CYCLES], ==, 4095);
    g_assert_cmpuint(c[UP_WORDS], ==, 1000);
    g_assert_cmpuint(c[UP_MVB], ==, 1000);
}

/* Looped, the schedule repeats every 20 us = 8000 PCIe cycles. */
static void test_boundaries_loop(void)
{
    g_autofree char *file = write_file("burst.ini", burst_file);
    PtmConfig cfg;
    PtmGeometry geo;
    uint64_t c[40];

    default_geometry(&cfg, &geo);
    run_card(&cfg, file, true, 35000, c, G_N_ELEMENTS(c));
    g_assert_cmpuint(c[PCIE_CYCLES], ==, 12287);
    /*
     * burst again from 12000, up to each channel's window edge (RQ words,
     * channel 1, 5 cycles after the cycle counter's; RQ SOF, channel 3,
     * 15): 292 more words, frames at 12000, 12004, .., 12300
     */
    g_assert_cmpuint(c[RQ_WORDS], ==, 2000 + 292);
    g_assert_cmpuint(c[RQ_SOF], ==, 500 + 76);
    g_assert_cmpuint(c[BRAKE0], ==, 2000);
    g_assert_cmpuint(c[TAG_BAND0], ==, 2000);
    /* tag band 3 (channel 26) up to 9 cycles after, less the starving */
    g_assert_cmpuint(c[TAG_BAND3], ==, 12287 + 9 - 2000);
    /* DMA: [4000, 4095) is quiet again */
    g_assert_cmpuint(c[UP_WORDS], ==, 1000);

    /* by 55 us PCIe windows 0..12287+2*4096 and DMA window 1 are in */
    run_card(&cfg, file, true, 55000, c, G_N_ELEMENTS(c));
    g_assert_cmpuint(c[PCIE_CYCLES], ==, 20479);
    /* bursts [4000, 6000), [12000, 14000), [20000, 20484) */
    g_assert_cmpuint(c[RQ_WORDS], ==, 2000 + 2000 + 484);
    /* starving [6000, 8000), [14000, 16000) */
    g_assert_cmpuint(c[BRAKE0], ==, 4000);
    g_assert_cmpuint(c[DMA_CYCLES], ==, 8191);
    /* UP bursts [2000, 3000), [6000, 7000) */
    g_assert_cmpuint(c[UP_WORDS], ==, 2000);
}

/* What a probe's bus 0 does in each of n cycles from 0, by fill. */
typedef struct Cyc {
    bool moves, sof;
    uint16_t tags;
    uint8_t link;
} Cyc;

static void play(PtmGen *g, const PtmProbeInfo *pi, uint64_t n, Cyc *out)
{
    PtmChunk *ch = ptm_chunk_new();
    uint64_t t = 0;

    while (t < n) {
        /* ask in odd pieces, so spans also start inside phases */
        uint64_t max = MIN(n - t, 1 + (t * 7 + 333) % 997);
        uint64_t got, c = t;

        ch->seg = ch->scratch;
        got = ptm_gen_source_ops.fill(g, pi, t, max, ch);
        g_assert_cmpuint(got, >=, 1);
        g_assert_cmpuint(got, <=, max);
        for (uint64_t r = 0; r < ch->repeat; r++) {
            for (unsigned i = 0; i < ch->nseg; i++) {
                const PtmSegment *s = &ch->seg[i];

                for (uint64_t k = 0; k < s->cycles; k++, c++) {
                    out[c].moves = s->bus[0].src_rdy && s->bus[0].dst_rdy;
                    out[c].sof = s->bus[0].sof & 1;
                    out[c].tags = s->tag_free;
                    out[c].link = s->link_up;
                }
            }
        }
        g_assert_cmpuint(c, ==, t + got);
        t += got;
    }
    ptm_chunk_free(ch);
}

/*
 * Boundaries that fall between cycles: 1001 ns is PCIe cycle 400.4 and
 * DMA cycle 200.2, so the second phase starts with cycles 401 and 201 (the
 * first whose time, rounded down, is 1001 ns or later). One pass is 2000
 * ns = 800 PCIe or 400 DMA cycles. The pattern phase sees its own time:
 * its 4-word frames start with the phase, not at multiples of 4.
 */
static void test_boundaries_between_cycles(void)
{
    g_autofree char *file = write_file("odd.ini",
        "[phase a]\nmodel=idle\nduration=1001ns\n"
        "[phase b]\nmodel=pattern\nduration=999ns\nrq-frame-bytes=256\n"
        "up-frame-bytes=256\n");
    PtmConfig cfg;
    PtmGeometry geo;
    PtmProbeInfo pcie, dma;
    Cyc *cyc = g_new0(Cyc, 4000);
    PtmGen *g;
    char *err;

    default_geometry(&cfg, &geo);
    ptm_test_probe_info(&cfg, 0, PTM_DOMAIN_PCIE, &pcie);
    ptm_test_probe_info(&cfg, 0, PTM_DOMAIN_DMA, &dma);
    g = scenario_gen(file, true, &geo, &err);
    g_assert_null(err);

    play(g, &pcie, 4000, cyc);
    for (unsigned c = 0; c < 4000; c++) {
        bool busy = c % 800 >= 401;

        g_assert_cmpint(cyc[c].moves, ==, busy);
        g_assert_cmpint(cyc[c].sof, ==, busy && (c % 800 - 401) % 4 == 0);
    }
    /* the DMA side: a 256-byte UP frame is 4 words of 2 x 8 items too */
    play(g, &dma, 4000, cyc);
    for (unsigned c = 0; c < 4000; c++) {
        bool busy = c % 400 >= 201;

        g_assert_cmpint(cyc[c].moves, ==, busy);
        g_assert_cmpint(cyc[c].sof, ==, busy && (c % 400 - 201) % 4 == 0);
    }
    ptm_gen_free(g);

    /* without loop the pattern goes on after 2000 ns */
    g = scenario_gen(file, false, &geo, &err);
    g_assert_null(err);
    play(g, &pcie, 4000, cyc);
    for (unsigned c = 0; c < 4000; c++) {
        g_assert_cmpint(cyc[c].moves, ==, c >= 401);
        g_assert_cmpint(cyc[c].sof, ==, c >= 401 && (c - 401) % 4 == 0);
    }
    g_free(cyc);
    ptm_gen_free(g);
}

/*
 * A link-down phase shows in PCIE_STATUS, whose bit 9 is the link at the
 * last cycle of the drained window: window 0 ends with cycle 4094 (10.235
 * us), window 1 with 8190 (20.475 us), window 2 with 12286 (30.715 us).
 */
static void test_link_down(void)
{
    g_autofree char *file = write_file("down.ini",
        "[phase up]\nmodel=idle\nduration=12us\n"
        "[phase down]\nmodel=idle\nlink-up=off\nduration=18us\n"
        "[phase up again]\nmodel=idle\nduration=1ms\n");
    PtmConfig cfg;
    PtmGeometry geo;
    PtmCore *core;
    PtmGen *g;
    char *err;

    default_geometry(&cfg, &geo);
    core = ptm_core_new(&cfg);
    g = scenario_gen(file, false, &geo, &err);
    g_assert_null(err);
    ptm_core_set_source(core, &ptm_gen_source_ops, g);
    ptm_core_power_on(core, 0);
    g_assert_cmphex(ptm_core_read(core, 15000, PTM_REG_PCIE_STATUS, 4) &
                    (1u << 9), ==, 1u << 9);
    g_assert_cmphex(ptm_core_read(core, 25000, PTM_REG_PCIE_STATUS, 4) &
                    (1u << 9), ==, 0);
    g_assert_cmphex(ptm_core_read(core, 35000, PTM_REG_PCIE_STATUS, 4) &
                    (1u << 9), ==, 1u << 9);
    ptm_core_free(core);
    ptm_gen_free(g);
}

static void test_durations(void)
{
    static const struct {
        const char *text;
        uint64_t ns;
    } good[] = {
        { "7ns", 7 }, { "500us", 500000 }, { "2ms", 2000000 },
        { "1s", 1000000000 }, { " 3 us ", 3000 },
    };
    static const char *const bad[] = {
        "1.5ms", "10", "ms", "-1us", "0s", "5 min", "", "99999999999s",
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(good); i++) {
        uint64_t ns = 0;

        g_assert_null(ptm_scenario_parse_duration(good[i].text, &ns));
        g_assert_cmpuint(ns, ==, good[i].ns);
    }
    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        uint64_t ns;
        g_autofree char *err = ptm_scenario_parse_duration(bad[i], &ns);

        g_assert_nonnull(err);
    }
}

/* Every refusal names what is wrong: file, group, key as it applies. */
/*
 * reset= holds the named probes in reset for the phase, whatever the model:
 * phase b (100 us to 150 us: PCIe cycles [40000, 60000) at 400 MHz, DMA
 * cycles [20000, 30000) at 200 MHz) holds endpoint 1's PCIe probe and every
 * DMA probe, phase c (from 150 us) none; and a card then restarts those
 * probes' windows from the reset's last cycle.
 */
static void test_reset(void)
{
    g_autofree char *file = write_file("reset.ini",
        "[phase a]\nmodel=pattern\nduration=100us\nrq-frame-bytes=256\n"
        "[phase b]\nmodel=pattern\nduration=50us\nrq-frame-bytes=256\n"
        "reset=pcie1, dma\n"
        "[phase c]\nmodel=pattern\nduration=1ms\nrq-frame-bytes=256\n");
    static const struct {
        unsigned e;
        PtmDomain d;
        uint64_t from, to;      /* held over [from, to), or from == to */
    } want[] = {
        { 0, PTM_DOMAIN_PCIE, 0, 0 },
        { 1, PTM_DOMAIN_PCIE, 40000, 60000 },
        { 0, PTM_DOMAIN_DMA, 20000, 30000 },
        { 1, PTM_DOMAIN_DMA, 20000, 30000 },
    };
    PtmConfig cfg;
    PtmGeometry geo;
    PtmCore *core;
    PtmGen *g;
    char *err;

    ptm_config_default(&cfg);
    cfg.pcie_endpoints = 2;
    core = ptm_core_new(&cfg);
    ptm_core_geometry(core, &geo);
    g = scenario_gen(file, false, &geo, &err);
    g_assert_null(err);
    for (unsigned i = 0; i < G_N_ELEMENTS(want); i++) {
        PtmProbeInfo pi = { .endpoint = want[i].e, .domain = want[i].d,
                            .hz = want[i].d ? cfg.dma_clk_hz
                                            : cfg.pcie_clk_hz };
        uint64_t c = 0, held_from = 0, held_to = 0;

        while (c < 100000) {
            bool held;
            uint64_t n = ptm_gen_source_ops.reset(g, &pi, c, 100000 - c,
                                                  &held);

            g_assert_cmpuint(n, >=, 1);
            if (held) {
                g_assert_cmpuint(held_to, ==, 0);
                held_from = c;
                held_to = c + n;
            }
            c += n;
        }
        g_assert_cmpuint(held_from, ==, want[i].from);
        g_assert_cmpuint(held_to, ==, want[i].to);
    }

    /*
     * Through a card, at 175 us (PCIe cycle 70000): endpoint 0 ran on, its
     * windows 0..16 end at 4095 + 16 x 4096 = 69631. Endpoint 1's PCIe
     * probe drained windows 0..8 (up to 36863) before the reset at 40000;
     * the window then running was aborted; after the release (last held
     * cycle 59999) a new window 0 ends at 59999 + 4095 and window 1 4096
     * cycles later, at 68190, drained by then.
     */
    ptm_core_set_source(core, &ptm_gen_source_ops, g);
    ptm_core_power_on(core, 0);
    ptm_core_advance(core, 175000);
    g_assert_cmpuint(ptm_core_counter(core, false, 0), ==, 4095 + 16 * 4096);
    g_assert_cmpuint(ptm_core_counter(core, false, 48), ==,
                     4095 + 8 * 4096 + 4095 + 4096);
    ptm_core_free(core);
    ptm_gen_free(g);
}

static void test_bad_files(void)
{
    static const struct {
        const char *text;
        const char *want[3];
    } cases[] = {
        { "this is not a key file\n", { "Key file" } },
        { "# nothing\n", { "no phases" } },
        { "[setup]\nmodel=idle\nduration=1us\n",
          { "[setup]", "not a phase" } },
        { "[phase 1]\nduration=1us\n", { "[phase 1]", "no model=" } },
        { "[phase 1]\nmodel=fancy\nduration=1us\n",
          { "[phase 1]", "model=fancy", "no such model" } },
        { "[phase 1]\nmodel=scenario\nduration=1us\n",
          { "[phase 1]", "cannot be a phase" } },
        { "[phase 1]\nmodel=idle\n", { "[phase 1]", "no duration=" } },
        { "[phase 1]\nmodel=idle\nduration=5 min\n",
          { "[phase 1]", "duration", "5 min" } },
        { "[phase 1]\nmodel=idle\nduration=0ms\n", { "duration", "0ms" } },
        { "[phase 1]\nmodel=idle\nduration=1us\n"
          "[phase 2]\nmodel=pattern\nduration=1us\nrq-bytes=64\n",
          { "[phase 2]", "rq-bytes", "pattern has no such parameter" } },
        { "[phase 1]\nmodel=pattern\nduration=1us\nrq-frame-bytes=70000\n",
          { "[phase 1]", "rq-frame-bytes is 70000" } },
        { "[phase 1]\nmodel=pattern\nduration=1us\nrq-gap=-1\n",
          { "[phase 1]", "rq-gap is -1" } },
        { "[phase 1]\nmodel=idle\nduration=1us\nlink-up=maybe\n",
          { "[phase 1]", "link-up=maybe" } },
        { "[phase 1]\nmodel=idle\nduration=1us\nreset=dma0\n",
          { "[phase 1]", "'dma0'", "DMA_RESET is one" } },
        { "[phase 1]\nmodel=idle\nduration=1us\nreset=pcie1\n",
          { "[phase 1]", "pcie1", "1 endpoint" } },
        { "[phase 1]\nmodel=pattern\nduration=1us\nrq-gap=12abc\n",
          { "rq-gap=12abc", "not a whole number" } },
        { "[phase 1]\nmodel=pattern\nduration=1us\ntags-free=3000\n",
          { "[phase 1]", "tags-free" } },
        /* the model's own check */
        { "[phase r]\nmodel=random\nduration=1us\nrq-min-bytes=600\n"
          "rq-max-bytes=100\n", { "[phase r]", "rq-min-bytes (600)" } },
        { "[phase 1]\nmodel=idle\nduration=1us\n"
          "[phase 1]\nmodel=idle\nduration=2us\n",
          { "[phase 1]", "given twice" } },
        { "[phase 1]\nmodel=idle\nduration=3000000000s\n"
          "[phase 2]\nmodel=idle\nduration=3000000000s\n",
          { "[phase 2]", "longer than" } },
        { "[phase 1]\nmodel=plugin\nduration=1us\n",
          { "[phase 1]", "path is empty" } },
    };
    PtmConfig cfg;
    PtmGeometry geo;

    default_geometry(&cfg, &geo);
    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *name = g_strdup_printf("bad%u.ini", i);
        g_autofree char *file = write_file(name, cases[i].text);
        g_autofree char *err = NULL;
        PtmGen *g = scenario_gen(file, false, &geo, &err);

        g_assert_null(g);
        g_assert_nonnull(err);
        g_test_message("%s", err);
        g_assert_nonnull(strstr(err, file));
        for (unsigned k = 0; k < 3 && cases[i].want[k]; k++) {
            if (!strstr(err, cases[i].want[k])) {
                g_error("case %u: '%s' lacks '%s'", i, err, cases[i].want[k]);
            }
        }
    }
    /* no file at all */
    {
        g_autofree char *err = NULL;
        g_autofree char *missing = g_build_filename(tmpdir, "none.ini", NULL);

        g_assert_null(scenario_gen("", false, &geo, &err));
        g_assert_nonnull(strstr(err, "file is empty"));
        g_clear_pointer(&err, g_free);
        g_assert_null(scenario_gen(missing, false, &geo, &err));
        g_assert_nonnull(strstr(err, "none.ini"));
    }
}

/*
 * A live change to a bad file is refused and nothing changes; a change to
 * another file plays that file from the change on.
 */
static void test_live_file_change(void)
{
    g_autofree char *idle = write_file("idle.ini",
        "[phase 1]\nmodel=idle\nduration=1s\n");
    g_autofree char *busy = write_file("busy.ini",
        "[phase 1]\nmodel=pattern\nduration=1s\nrq-frame-bytes=64\n");
    g_autofree char *bad = write_file("bad.ini",
        "[phase 1]\nmodel=pattern\nduration=1s\nrq-frames=64\n");
    PtmConfig cfg;
    PtmGeometry geo;
    PtmProbeInfo pi;
    PtmScenarioParams p;
    Cyc *cyc = g_new0(Cyc, 200000);
    PtmGen *g;
    char *err;

    default_geometry(&cfg, &geo);
    ptm_test_probe_info(&cfg, 0, PTM_DOMAIN_PCIE, &pi);
    g = scenario_gen(idle, false, &geo, &err);
    g_assert_null(err);
    p = *(const PtmScenarioParams *)ptm_gen_params(g);
    g_strlcpy(p.file, bad, sizeof(p.file));
    err = ptm_gen_set_params(g, &p, 1000, 0);
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(err, "rq-frames"));
    g_free(err);
    g_assert_cmpuint(g->nver, ==, 1);
    g_assert_cmpstr(((const PtmScenarioParams *)ptm_gen_params(g))->file, ==,
                    idle);

    g_strlcpy(p.file, busy, sizeof(p.file));
    g_assert_null(ptm_gen_set_params(g, &p, 1000, 0));
    play(g, &pi, 200000, cyc);
    g_assert_false(cyc[0].moves);
    g_assert_true(cyc[199999].moves);
    g_free(cyc);
    ptm_gen_free(g);
}

/* ----------------------------------------- fast path and same counts */

static const char mixed_file[] =
    "[phase idle]\nmodel=idle\nduration=7us\ntags-free=3\n"
    "[phase random]\nmodel=random\nduration=23us\nseed=5\n"
    "brake-percent=20\nrq-max-bytes=1500\n"
    "[phase pattern]\nmodel=pattern\nduration=9999ns\nrq-frame-bytes=100\n"
    "rq-stall=3\nup-frame-bytes=64\nup-gap=5\ndown-frame-bytes=40\n"
    "[phase down]\nmodel=idle\nduration=3us\nlink-up=false\n";

static void test_fast_path(void)
{
    g_autofree char *file = write_file("mixed.ini", mixed_file);

    for (unsigned gi = 0; gi < ptm_test_ngeos; gi++) {
        PtmConfig cfg;
        PtmCore *core;
        PtmGeometry geo;
        PtmGen *g;
        char *err;

        ptm_test_make_cfg(&ptm_test_geos[gi], &cfg);
        core = ptm_core_new(&cfg);
        ptm_core_geometry(core, &geo);
        ptm_core_free(core);
        g = scenario_gen(file, true, &geo, &err);
        g_assert_null(err);
        for (unsigned e = 0; e < cfg.pcie_endpoints; e++) {
            for (int d = 0; d < 2; d++) {
                PtmProbeInfo pi;

                ptm_test_probe_info(&cfg, e, d ? PTM_DOMAIN_DMA : PTM_DOMAIN_PCIE,
                           &pi);
                /* two passes of 43 us, from 0 and from inside a phase */
                ptm_test_check_fast_path(g, &cfg, &pi, 0, pi.hz / 1000000 * 86, false);
                ptm_test_check_fast_path(g, &cfg, &pi, 1234, 1234 + 20000, false);
            }
        }
        ptm_gen_free(g);
    }
}

static void test_same_counts(void)
{
    g_autofree char *file = write_file("mixed.ini", mixed_file);
    g_autofree char *text = g_strdup(mixed_file);
    PtmConfig cfg;
    uint64_t a[64], b[64], c[64];

    ptm_test_make_cfg(&ptm_test_geos[1], &cfg);
    run_card(&cfg, file, true, 200000, a, G_N_ELEMENTS(a));
    run_card(&cfg, file, true, 200000, b, G_N_ELEMENTS(b));
    g_assert_cmpmem(a, sizeof(a), b, sizeof(b));
    /* another seed in the random phase, other counts */
    strstr(text, "seed=5")[5] = '6';
    g_free(file);
    file = write_file("mixed6.ini", text);
    run_card(&cfg, file, true, 200000, c, G_N_ELEMENTS(c));
    g_assert_cmpint(memcmp(a, c, sizeof(a)), !=, 0);
}

/*
 * A schedule that ends costs what its phases cost; a looped one costs per
 * turn, as does one with a phase that decides per window.
 */
static void test_cost(void)
{
    g_autofree char *burst = write_file("burst.ini", burst_file);
    g_autofree char *mixed = write_file("mixed.ini", mixed_file);
    const char *files[] = { burst, burst, mixed, mixed };
    const bool loops[] = { false, true, false, true };
    const PtmCost want[] = {
        PTM_COST_RANGE, PTM_COST_WINDOW, PTM_COST_WINDOW, PTM_COST_WINDOW,
    };
    PtmConfig cfg;
    PtmGeometry geo;

    default_geometry(&cfg, &geo);
    for (unsigned i = 0; i < G_N_ELEMENTS(files); i++) {
        char *err;
        PtmGen *g = scenario_gen(files[i], loops[i], &geo, &err);

        g_assert_null(err);
        g_assert_cmpint(ptm_gen_source_ops.cost(g), ==, want[i]);
        ptm_gen_free(g);
    }
}

/* The example shipped in examples/ is a valid scenario. */
static void test_example(void)
{
    const char *root = g_getenv("PTM_SOURCE_ROOT");
    g_autofree char *file = NULL;
    PtmConfig cfg;
    PtmGeometry geo;
    PtmGen *g;
    char *err;

    g_assert_nonnull(root);
    file = g_build_filename(root, "examples", "scenario-burst.ini", NULL);
    default_geometry(&cfg, &geo);
    g = scenario_gen(file, true, &geo, &err);
    if (!g) {
        g_error("%s", err);
    }
    ptm_gen_free(g);
}

int main(int argc, char **argv)
{
    int ret;

    g_test_init(&argc, &argv, NULL);
    tmpdir = g_dir_make_tmp("test-scenario-XXXXXX", NULL);
    g_assert_nonnull(tmpdir);
    g_test_add_func("/scenario/durations", test_durations);
    g_test_add_func("/scenario/boundaries-no-loop", test_boundaries_no_loop);
    g_test_add_func("/scenario/cost", test_cost);
    g_test_add_func("/scenario/boundaries-loop", test_boundaries_loop);
    g_test_add_func("/scenario/boundaries-between-cycles",
                    test_boundaries_between_cycles);
    g_test_add_func("/scenario/link-down", test_link_down);
    g_test_add_func("/scenario/bad-files", test_bad_files);
    g_test_add_func("/scenario/reset", test_reset);
    g_test_add_func("/scenario/live-file-change", test_live_file_change);
    g_test_add_func("/scenario/fast-path", test_fast_path);
    g_test_add_func("/scenario/same-counts", test_same_counts);
    g_test_add_func("/scenario/example", test_example);
    ret = g_test_run();
    ptm_test_remove_dir(tmpdir);
    return ret;
}
