/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plugin generator with the sample plugin of traffic-gen/plugins,
 * loaded by the path the build passes in PTM_SAMPLE_PLUGIN: its counts
 * through the core equal the closed form of its square wave, its settings
 * reach PCIE_STATUS, the fast counter equals the per-cycle reference on
 * its chunks, the same arguments give the same counts, and every way a
 * plugin can be wrong is refused with a message.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "ptm-sizing.h"
#include "ptm-gen.h"
#include "ptm-plugin.h"
#include "ptm-plugin-abi.h"
#include "ptm-scenario.h"
#include "test-support.h"

static char *tmpdir;

/* Channels of endpoint 0 of the default card (2 regions per bus). */
enum {
    PCIE_CYCLES = 0,
    RQ_WORDS = 1, RQ_SOF = 3, RQ_ITEMS = 6,
    RC_WORDS = 9,
    BRAKE0 = 17,
    TAG_BAND1 = 24,
    DMA_CYCLES = 31,
    UP_WORDS = 32, UP_SOF = 34, UP_MVB = 35, UP_ITEMS = 37,
    DOWN_WORDS = 40,
};

static const char *env_path(const char *var)
{
    const char *p = g_getenv(var);

    if (!p) {
        g_error("%s is not set: run the test with meson test", var);
    }
    return p;
}

static const char *sample(void)
{
    return env_path("PTM_SAMPLE_PLUGIN");
}

static void default_geometry(PtmConfig *cfg, PtmGeometry *geo)
{
    PtmCore *core;

    ptm_config_default(cfg);
    core = ptm_core_new(cfg);
    ptm_core_geometry(core, geo);
    ptm_core_free(core);
}

static PtmGen *plugin_gen(const char *path, const char *args,
                          const PtmGeometry *geo, char **err)
{
    PtmPluginParams p;

    ptm_model_plugin.defaults(&p);
    g_strlcpy(p.path, path, sizeof(p.path));
    g_strlcpy(p.args, args, sizeof(p.args));
    *err = NULL;
    return ptm_gen_new(&ptm_model_plugin, &p, geo, err);
}

/* A core of cfg driven by g, advanced to t ns. */
static PtmCore *run_core(const PtmConfig *cfg, PtmGen *g, uint64_t t)
{
    PtmCore *core = ptm_core_new(cfg);

    ptm_core_set_source(core, &ptm_gen_source_ops, g);
    ptm_core_power_on(core, 0);
    for (uint64_t s = 0; s <= t; s += 5000) {
        ptm_core_advance(core, s);
    }
    ptm_core_advance(core, t);
    return core;
}

static void run_card(const PtmConfig *cfg, const char *args, uint64_t t,
                     uint64_t *cnt, unsigned ncnt)
{
    PtmGeometry geo;
    PtmCore *core;
    PtmGen *g;
    char *err;

    core = ptm_core_new(cfg);
    ptm_core_geometry(core, &geo);
    ptm_core_free(core);
    g = plugin_gen(sample(), args, &geo, &err);
    if (!g) {
        g_error("%s", err);
    }
    core = run_core(cfg, g, t);
    g_assert_cmpuint(ncnt, <=, ptm_core_layout(core)->entries);
    for (unsigned e = 0; e < ncnt; e++) {
        cnt[e] = ptm_core_counter(core, false, e);
    }
    ptm_core_free(core);
    ptm_gen_free(g);
}

/* Cycles k in [from, to) with k mod period < busy. */
static uint64_t in_bursts(uint64_t from, uint64_t to, uint64_t busy,
                          uint64_t period)
{
    uint64_t n = 0;

    for (uint64_t k = from; k < to; k++) {
        n += k % period < busy;
    }
    return n;
}

/*
 * burst=3, idle=5: frames in cycles 0..2 of every 8. By 35 us the core has
 * drained PCIe windows 0..2 (the cycle counter: cycles [0, 12287)) and DMA
 * window 0 ([0, 4095)). A channel's window closes (c mod 8) x (G + 1)
 * cycles after the cycle counter's (G = 4 groups on the PCIe probe, 3 on
 * the DMA probe; the bands one cycle less), and bus events count from
 * cycle 1 (cycle 0 is the reset's last), MVB items from cycle 0. A 40-byte
 * frame is 10 items: region 0 full (8), 2 in region 1.
 */
static void test_counts(void)
{
    PtmConfig cfg;
    PtmGeometry geo;
    uint64_t c[48];

    default_geometry(&cfg, &geo);
    run_card(&cfg, "burst=3,idle=5,bytes=40,tags=5", 35000, c,
             G_N_ELEMENTS(c));
    g_assert_cmpuint(c[PCIE_CYCLES], ==, 12287);
    g_assert_cmpuint(c[RQ_WORDS], ==, in_bursts(1, 12287 + 5, 3, 8));
    g_assert_cmpuint(c[RQ_SOF], ==, in_bursts(1, 12287 + 15, 3, 8));
    g_assert_cmpuint(c[RQ_ITEMS], ==, 10 * in_bursts(1, 12287 + 30, 3, 8));
    g_assert_cmpuint(c[RC_WORDS], ==, 0);
    g_assert_cmpuint(c[BRAKE0], ==, 0);
    /* 5 free tags of 256: band 1 (at most an eighth) every cycle */
    g_assert_cmpuint(c[TAG_BAND1], ==, 12287 - 1);
    g_assert_cmpuint(c[DMA_CYCLES], ==, 4095);
    g_assert_cmpuint(c[UP_WORDS], ==, in_bursts(1, 4095 + 4, 3, 8));
    g_assert_cmpuint(c[UP_SOF], ==, in_bursts(1, 4095 + 12, 3, 8));
    g_assert_cmpuint(c[UP_MVB], ==, in_bursts(0, 4095 + 16, 3, 8));
    g_assert_cmpuint(c[UP_ITEMS], ==, 10 * in_bursts(1, 4095 + 24, 3, 8));
    g_assert_cmpuint(c[DOWN_WORDS], ==, 0);

    /* the defaults: 64 busy, 64 idle, 64-byte frames of 16 items */
    run_card(&cfg, "", 35000, c, G_N_ELEMENTS(c));
    g_assert_cmpuint(c[RQ_WORDS], ==, in_bursts(1, 12287 + 5, 64, 128));
    g_assert_cmpuint(c[RQ_ITEMS], ==,
                     16 * in_bursts(1, 12287 + 30, 64, 128));
}

/* The plugin's settings reach PCIE_STATUS (MPS in bits 2..0). */
static void test_settings(void)
{
    PtmConfig cfg;
    PtmGeometry geo;
    PtmCore *core;
    PtmGen *g;
    char *err;

    default_geometry(&cfg, &geo);
    for (unsigned mps = 0; mps <= 5; mps += 5) {
        g_autofree char *args = g_strdup_printf("mps=%u", mps);

        g = plugin_gen(sample(), args, &geo, &err);
        g_assert_null(err);
        core = run_core(&cfg, g, 15000);
        g_assert_cmpuint(ptm_core_read(core, 15000, PTM_REG_PCIE_STATUS, 4)
                         & 7, ==, mps);
        ptm_core_free(core);
        ptm_gen_free(g);
    }
}

/* Held cycles of a probe in [0, n): the one run of them, [*a, *b). */
static void held_span(PtmGen *g, const PtmProbeInfo *pi, uint64_t n,
                      uint64_t *a, uint64_t *b)
{
    *a = *b = 0;
    for (uint64_t c = 0; c < n;) {
        bool held;
        uint64_t k = ptm_gen_source_ops.reset(g, pi, c, n - c, &held);

        g_assert_cmpuint(k, >=, 1);
        g_assert_cmpuint(k, <=, n - c);
        if (held) {
            g_assert_cmpuint(*b, ==, 0);
            *a = c;
            *b = c + k;
        }
        c += k;
    }
}

/*
 * The sample's reset=A,hold=N holds endpoint 0's PCIe probe over PCIe
 * cycles [A, A + N) through ABI version 2's reset(); the same plugin built
 * as version 1 has no reset(), so nothing is held. Through a card, the
 * held probe's windows start again from the reset's last cycle: by 40 us
 * (PCIe cycle 16000) windows 0 and 1 before the reset at 9000 ([0, 8191))
 * and window 0 after it (last held cycle 9999: up to 9999 + 4095); without
 * the reset windows 0..2 ([0, 12287)).
 */
static void test_reset(void)
{
    PtmConfig cfg;
    PtmGeometry geo;
    PtmProbeInfo pcie = { .endpoint = 0, .domain = PTM_DOMAIN_PCIE };
    PtmProbeInfo dma = { .endpoint = 0, .domain = PTM_DOMAIN_DMA };
    const char *paths[2] = { sample(), env_path("PTM_V1_PLUGIN") };
    uint64_t a, b;
    PtmCore *core;
    PtmGen *g;
    char *err;

    default_geometry(&cfg, &geo);
    for (unsigned v = 0; v < 2; v++) {
        g = plugin_gen(paths[v], "reset=9000,hold=1000", &geo, &err);
        g_assert_null(err);
        held_span(g, &pcie, 100000, &a, &b);
        g_assert_cmpuint(a, ==, v ? 0 : 9000);
        g_assert_cmpuint(b, ==, v ? 0 : 10000);
        held_span(g, &dma, 100000, &a, &b);
        g_assert_cmpuint(b, ==, 0);
        core = run_core(&cfg, g, 40000);
        g_assert_cmpuint(ptm_core_counter(core, false, PCIE_CYCLES), ==,
                         v ? 4095 + 2 * 4096 : 4095 + 4096 + 4095);
        /* the DMA probe ran on: window 0 ([0, 4095)) by 40 us */
        g_assert_cmpuint(ptm_core_counter(core, false, DMA_CYCLES), ==,
                         4095);
        ptm_core_free(core);
        ptm_gen_free(g);
    }
}

static char *write_file(const char *name, const char *text)
{
    char *path = g_build_filename(tmpdir, name, NULL);

    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    return path;
}

static void expect_refusal(const char *path, const char *args,
                           const char *want1, const char *want2)
{
    PtmConfig cfg;
    PtmGeometry geo;
    g_autofree char *err = NULL;

    default_geometry(&cfg, &geo);
    g_assert_null(plugin_gen(path, args, &geo, &err));
    g_assert_nonnull(err);
    g_test_message("%s", err);
    if (!strstr(err, want1) || (want2 && !strstr(err, want2))) {
        g_error("'%s' lacks '%s' or '%s'", err, want1, want2);
    }
}

static void test_refusals(void)
{
    g_autofree char *missing = g_build_filename(tmpdir, "none.so", NULL);
    g_autofree char *text = write_file("text.so", "not an ELF file\n");

    expect_refusal("", "", "path is empty", NULL);
    expect_refusal(missing, "", missing, "no such file");
    expect_refusal(tmpdir, "", tmpdir, "not a regular file");
    expect_refusal(text, "", text, "not a shared object");
    expect_refusal(env_path("PTM_NO_ENTRY_PLUGIN"), "",
                   "no symbol ptm_plugin_entry", "not a telemetry traffic");
    {
        /* (the bad plugin claims this build's version + 1000) */
        char *ver = g_strdup_printf("ABI version %u",
                                    PTM_PLUGIN_ABI_VERSION + 1000);
        char *takes = g_strdup_printf("takes versions %u to %u",
                                      PTM_PLUGIN_ABI_OLDEST,
                                      PTM_PLUGIN_ABI_VERSION);

        expect_refusal(env_path("PTM_BAD_ABI_PLUGIN"), "", ver, takes);
        g_free(ver);
        g_free(takes);
    }
    /* create() refuses: the plugin's own message, with its name */
    expect_refusal(sample(), "bytes=1000", "(sample)", "bytes=1000");
    expect_refusal(sample(), "burst=3,foo=1", "unknown argument 'foo=1'",
                   NULL);
    expect_refusal(sample(), "burst=x", "burst=x", NULL);
    expect_refusal(sample(), "burst=0,idle=0", "both 0", NULL);
}

/* A live change to bad arguments is refused; nothing changes. */
static void test_live_refusal(void)
{
    PtmConfig cfg;
    PtmGeometry geo;
    PtmPluginParams p;
    PtmGen *g;
    char *err;

    default_geometry(&cfg, &geo);
    g = plugin_gen(sample(), "burst=1", &geo, &err);
    g_assert_null(err);
    p = *(const PtmPluginParams *)ptm_gen_params(g);
    g_strlcpy(p.args, "burst=1,tags=9999", sizeof(p.args));
    err = ptm_gen_set_params(g, &p, 1000, 0);
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(err, "tags=9999"));
    g_free(err);
    g_assert_cmpuint(g->nver, ==, 1);
    g_assert_cmpstr(((const PtmPluginParams *)ptm_gen_params(g))->args, ==,
                    "burst=1");
    ptm_gen_free(g);
}

static const PtmProbeInfo pcie_probe = {
    .domain = PTM_DOMAIN_PCIE, .buses = 2, .regions = 2,
    .bus_regions = { 2, 2 }, .bus_items = { 8, 8 }, .hz = 400000000,
};

/* Whether RQ moves in cycle c, by a fill of that cycle alone. */
static bool rq_moves(PtmGen *g, uint64_t c)
{
    PtmChunk *ch = ptm_chunk_new();
    bool moves;

    g_assert_cmpuint(ptm_gen_source_ops.fill(g, &pcie_probe, c, 1, ch), ==,
                     1);
    moves = ch->seg[0].bus[0].src_rdy && ch->seg[0].bus[0].dst_rdy;
    ptm_chunk_free(ch);
    return moves;
}

/*
 * Two versions of the arguments live at once, each with its instance; two
 * generators share the loaded object, and freeing one leaves the other
 * working. A relative path is from the current directory at loading.
 */
static void test_versions_and_sharing(void)
{
    PtmConfig cfg;
    PtmGeometry geo;
    PtmPluginParams p;
    g_autofree char *dir = g_path_get_dirname(sample());
    g_autofree char *base = g_path_get_basename(sample());
    g_autofree char *cwd = g_get_current_dir();
    PtmGen *a, *b;
    char *err;

    default_geometry(&cfg, &geo);
    a = plugin_gen(sample(), "burst=0,idle=1", &geo, &err);
    g_assert_null(err);
    p = *(const PtmPluginParams *)ptm_gen_params(a);
    g_strlcpy(p.args, "burst=1,idle=0", sizeof(p.args));
    g_assert_null(ptm_gen_set_params(a, &p, 1000, 0));
    g_assert_false(rq_moves(a, 0));
    g_assert_true(rq_moves(a, 100000));
    g_assert_false(rq_moves(a, 1));

    /* loaded (by check and by the first fill) while the directory is
     * current; once loaded, the instance stays */
    g_assert_cmpint(g_chdir(dir), ==, 0);
    b = plugin_gen(base, "burst=1,idle=0", &geo, &err);
    g_assert_null(err);
    g_assert_true(rq_moves(b, 5));
    g_assert_cmpint(g_chdir(cwd), ==, 0);
    ptm_gen_free(a);
    g_assert_true(rq_moves(b, 6));
    ptm_gen_free(b);
}

/* A plugin as a phase of a scenario, with its settings delegated. */
static void test_in_scenario(void)
{
    g_autofree char *text = g_strdup_printf(
        "[phase plugin]\nmodel=plugin\nduration=10us\npath=%s\n"
        "args=burst=1,idle=0,mps=3\n"
        "[phase idle]\nmodel=idle\nduration=10us\n", sample());
    g_autofree char *file = write_file("plugin.ini", text);
    PtmScenarioParams p;
    PtmConfig cfg;
    PtmGeometry geo;
    PtmSettings set = { .mps = 1 };
    PtmGen *g;
    char *err = NULL;

    default_geometry(&cfg, &geo);
    ptm_model_scenario.defaults(&p);
    g_strlcpy(p.file, file, sizeof(p.file));
    g = ptm_gen_new(&ptm_model_scenario, &p, &geo, &err);
    if (!g) {
        g_error("%s", err);
    }
    /* 10 us = PCIe cycle 4000 */
    g_assert_true(rq_moves(g, 3999));
    g_assert_false(rq_moves(g, 4000));
    ptm_gen_source_ops.settings(g, 0, 3999, &set);
    g_assert_cmpuint(set.mps, ==, 3);
    set.mps = 1;
    ptm_gen_source_ops.settings(g, 0, 4000, &set);
    g_assert_cmpuint(set.mps, ==, 1);
    ptm_gen_free(g);
}

/* ----------------------------------------- fast path and same counts */

static void test_fast_path(void)
{
    static const char *const args[] = {
        "burst=3,idle=5,bytes=40", "burst=1,idle=0,bytes=64",
        "burst=0,idle=7", "burst=100,idle=1,bytes=1,tags=0",
    };

    for (unsigned gi = 0; gi < ptm_test_ngeos; gi++) {
        PtmConfig cfg;
        PtmCore *core;
        PtmGeometry geo;

        ptm_test_make_cfg(&ptm_test_geos[gi], &cfg);
        core = ptm_core_new(&cfg);
        ptm_core_geometry(core, &geo);
        ptm_core_free(core);
        for (unsigned ai = 0; ai < G_N_ELEMENTS(args); ai++) {
            char *err;
            PtmGen *g = plugin_gen(sample(), args[ai], &geo, &err);

            if (!g) {
                g_error("%s", err);
            }
            for (unsigned e = 0; e < cfg.pcie_endpoints; e++) {
                for (int d = 0; d < 2; d++) {
                    PtmProbeInfo pi;

                    ptm_test_probe_info(&cfg, e, d ? PTM_DOMAIN_DMA : PTM_DOMAIN_PCIE,
                               &pi);
                    ptm_test_check_fast_path(g, &cfg, &pi, 0, 30000, true);
                    ptm_test_check_fast_path(g, &cfg, &pi, 12345, 12345 + 9000, true);
                }
            }
            ptm_gen_free(g);
        }
    }
}

static void test_same_counts(void)
{
    PtmConfig cfg;
    uint64_t a[64], b[64], c[64];

    ptm_test_make_cfg(&ptm_test_geos[1], &cfg);
    run_card(&cfg, "burst=7,idle=2,bytes=33", 100000, a, G_N_ELEMENTS(a));
    run_card(&cfg, "burst=7,idle=2,bytes=33", 100000, b, G_N_ELEMENTS(b));
    g_assert_cmpmem(a, sizeof(a), b, sizeof(b));
    run_card(&cfg, "burst=7,idle=3,bytes=33", 100000, c, G_N_ELEMENTS(c));
    g_assert_cmpint(memcmp(a, c, sizeof(a)), !=, 0);
}

/* A plugin built for ABI version 1 loads and counts as the sample does. */
static void test_abi_v1(void)
{
    PtmConfig cfg;
    PtmGeometry geo;
    const char *v1 = env_path("PTM_V1_PLUGIN");
    const char *v2 = env_path("PTM_SAMPLE_PLUGIN");
    PtmPluginParams par;
    PtmGen *g[2];
    PtmCore *core[2];
    char *err = NULL;

    default_geometry(&cfg, &geo);
    for (unsigned i = 0; i < 2; i++) {
        memset(&par, 0, sizeof(par));
        g_strlcpy(par.path, i ? v2 : v1, sizeof(par.path));
        g_strlcpy(par.args, "burst=3,idle=5,bytes=40", sizeof(par.args));
        g[i] = ptm_gen_new(&ptm_model_plugin, &par, &geo, &err);
        g_assert_null(err);
        core[i] = run_core(&cfg, g[i], 35000);
    }
    for (unsigned e = 0; e < ptm_core_layout(core[0])->entries; e++) {
        g_assert_cmpuint(ptm_core_counter(core[0], false, e), ==,
                         ptm_core_counter(core[1], false, e));
    }
    g_assert_cmpuint(ptm_core_counter(core[0], false, 0), >, 0);
    for (unsigned i = 0; i < 2; i++) {
        /* neither declares a cost (nor counts): per window, not lazy */
        g_assert_cmpint(ptm_gen_source_ops.cost(g[i]), ==, PTM_COST_WINDOW);
        g_assert_false(ptm_core_lazy(core[i]));
        ptm_core_free(core[i]);
        ptm_gen_free(g[i]);
    }
}

/*
 * On cards that lose deltas all the time (DRAIN_PERIOD 64, and 1024 with
 * 3 endpoints, which keeps most channels now and then), with
 * and without the reset of endpoint 0's PCIe probe: the fast evaluation
 * equals the reference at every read. The sample's period() lets it
 * count lossy stretches from tables; the same plugin built for version 1
 * has none, and its windows are counted one by one.
 */
static void test_lossy(void)
{
    static const char *const args[] = {
        "burst=3,idle=5,bytes=40", "burst=50,idle=77,bytes=64",
        "burst=50,idle=77,bytes=64,reset=300000,hold=9000",
    };
    static const unsigned dps[] = { 64, 1024 };

    for (unsigned k = 0; k < 2 * G_N_ELEMENTS(dps) * G_N_ELEMENTS(args);
         k++) {
        unsigned d = k % 2, a = k / 2 % G_N_ELEMENTS(args);
        bool v1 = k / (2 * G_N_ELEMENTS(args));
        PtmConfig cfg;
        PtmGeometry geo;
        PtmCore *core[2];
        PtmEvalStats st;
        uint64_t t = 0;
        char *err;
        PtmGen *g;
        GRand *r;

        if (v1 && a == 2) {
            continue;           /* (version 1 has no reset) */
        }
        r = g_rand_new_with_seed(77 + k);
        ptm_config_default(&cfg);
        cfg.drain_period = dps[d];
        cfg.pcie_endpoints = d ? 3 : 1;
        core[0] = ptm_core_new(&cfg);
        ptm_core_geometry(core[0], &geo);
        g = plugin_gen(v1 ? env_path("PTM_V1_PLUGIN") : sample(), args[a],
                       &geo, &err);
        g_assert_nonnull(g);
        core[1] = ptm_core_new(&cfg);
        ptm_core_set_reference(core[1], true);
        for (unsigned i = 0; i < 2; i++) {
            ptm_core_set_source(core[i], &ptm_gen_source_ops, g);
            ptm_core_power_on(core[i], 0);
        }
        while (t < 8000000) {
            const PtmLayout *lay = ptm_core_layout(core[0]);
            unsigned e = g_rand_int_range(r, 0, lay->entries);

            t += g_rand_int_range(r, 0, 4) ? g_rand_int_range(r, 1000, 900000)
                                           : 3000000;
            if (g_rand_int_range(r, 0, 8) == 0) {
                for (unsigned i = 0; i < 2; i++) {
                    ptm_core_write(core[i], t, PTM_REG_COMMAND,
                                   PTM_CMD_SNAPSHOT, 4);
                }
            }
            g_assert_cmphex(ptm_core_read(core[0], t, PTM_REG_STATUS, 4), ==,
                            ptm_core_read(core[1], t, PTM_REG_STATUS, 4));
            g_assert_cmphex(ptm_core_read(core[0], t, PTM_CNT_BASE + 8 * e, 8),
                            ==,
                            ptm_core_read(core[1], t, PTM_CNT_BASE + 8 * e, 8));
        }
        for (unsigned e = 0; e < ptm_core_layout(core[0])->entries; e++) {
            g_assert_cmphex(ptm_core_read(core[0], t, PTM_CNT_BASE + 8 * e, 8),
                            ==,
                            ptm_core_read(core[1], t, PTM_CNT_BASE + 8 * e, 8));
        }
        g_assert_cmpuint(ptm_core_lost_deltas(core[1]), >, 0);
        ptm_core_eval_stats(core[0], &st);
        g_test_message("case %u: %s, DRAIN_PERIOD %u: lossy jumps %"
                       G_GUINT64_FORMAT ", windows from tables %"
                       G_GUINT64_FORMAT ", one by one %" G_GUINT64_FORMAT,
                       k, args[a], dps[d], st.lossy_jumps, st.table_windows,
                       st.single_windows);
        g_assert_cmpuint(st.lossy_jumps, >, 0);
        if (v1) {
            g_assert_cmpuint(st.table_windows, ==, 0);
        } else {
            /* (the reset starts an epoch, whose first periods are simulated) */
            g_assert_cmpuint(st.table_windows, >,
                             (a == 2 ? 1 : 4) * st.single_windows);
        }
        ptm_core_free(core[0]);
        ptm_core_free(core[1]);
        ptm_gen_free(g);
        g_rand_free(r);
    }
}

/*
 * The check the device makes at realize: over a card that loses deltas
 * all the time, the sample (which declares its period) is counted in
 * bulk, the same plugin built for version 1 window by window.
 */
static void test_lossy_check(void)
{
    PtmConfig cfg;
    PtmGeometry geo;
    PtmCore *core;

    ptm_config_default(&cfg);
    cfg.drain_period = 64;
    core = ptm_core_new(&cfg);
    ptm_core_geometry(core, &geo);
    ptm_core_free(core);
    for (unsigned v1 = 0; v1 < 2; v1++) {
        uint64_t single, all;
        char *err;
        PtmGen *g = plugin_gen(v1 ? env_path("PTM_V1_PLUGIN") : sample(),
                               "burst=50,idle=77", &geo, &err);

        g_assert_nonnull(g);
        g_assert_cmpint(ptm_config_lossy_bulk(&cfg, &ptm_gen_source_ops, g,
                                              20000000, &single, &all), ==,
                        !v1);
        g_test_message("version %s: %" G_GUINT64_FORMAT " of %"
                       G_GUINT64_FORMAT " windows one by one",
                       v1 ? "1" : "4", single, all);
        g_assert_cmpuint(all, >, 10000);
        ptm_gen_free(g);
    }
}

int main(int argc, char **argv)
{
    int ret;

    g_test_init(&argc, &argv, NULL);
    tmpdir = g_dir_make_tmp("test-plugin-XXXXXX", NULL);
    g_assert_nonnull(tmpdir);
    g_test_add_func("/plugin/counts", test_counts);
    g_test_add_func("/plugin/settings", test_settings);
    g_test_add_func("/plugin/reset", test_reset);
    g_test_add_func("/plugin/refusals", test_refusals);
    g_test_add_func("/plugin/live-refusal", test_live_refusal);
    g_test_add_func("/plugin/versions-and-sharing",
                    test_versions_and_sharing);
    g_test_add_func("/plugin/in-scenario", test_in_scenario);
    g_test_add_func("/plugin/fast-path", test_fast_path);
    g_test_add_func("/plugin/same-counts", test_same_counts);
    g_test_add_func("/plugin/abi-v1", test_abi_v1);
    g_test_add_func("/plugin/lossy", test_lossy);
    g_test_add_func("/plugin/lossy-check", test_lossy_check);
    ret = g_test_run();
    ptm_test_remove_dir(tmpdir);
    return ret;
}
