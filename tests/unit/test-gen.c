/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The generator frame: parameter ranges, the history of live changes,
 * spans cut at a change, migration of the history, and a live change seen
 * through the core from the next PCIe drain window on.
 */
#include <glib.h>
#include <string.h>

#include "ptm-core.h"
#include "ptm-gen.h"
#include "ptm-transfers.h"
#include "ptm-pattern.h"

static const PtmParamDesc *param(const PtmGenModel *m, const char *name)
{
    for (unsigned i = 0; i < m->nparams; i++) {
        if (!strcmp(m->params[i].name, name)) {
            return &m->params[i];
        }
    }
    g_error("no parameter %s", name);
}

static PtmGen *pattern_gen(uint32_t rq_bytes)
{
    PtmPatternParams par;
    PtmConfig cfg;
    PtmCore *core;
    PtmGeometry geo;
    PtmGen *g;
    char *err = NULL;

    ptm_config_default(&cfg);
    core = ptm_core_new(&cfg);
    ptm_core_geometry(core, &geo);
    ptm_core_free(core);
    ptm_pattern_params_default(&par);
    par.bus[PTM_BUS_RQ].frame_bytes = rq_bytes;
    g = ptm_gen_new(&ptm_model_pattern, &par, &geo, &err);
    g_assert_null(err);
    return g;
}

static uint32_t rq_at(PtmGen *g, uint64_t ns)
{
    return ((const PtmPatternParams *)ptm_gen_params_at(g, ns))
        ->bus[PTM_BUS_RQ].frame_bytes;
}

static void test_models(void)
{
    g_assert(ptm_gen_model_find("pattern") == &ptm_model_pattern);
    g_assert(ptm_gen_model_find("idle") == &ptm_model_idle);
    g_assert_null(ptm_gen_model_find("nope"));
    for (unsigned i = 0; ptm_gen_models[i]; i++) {
        const PtmGenModel *m = ptm_gen_models[i];
        void *p = g_malloc0(m->params_size);

        /* defaults are in range (strings are the model's to check) */
        m->defaults(p);
        for (unsigned k = 0; k < m->nparams; k++) {
            char *err = ptm_param_check(&m->params[k],
                                        ptm_param_get(&m->params[k], p));
            g_assert_null(err);
        }
        g_free(p);
    }
}

/*
 * What a long span costs each built-in model with its defaults, and what
 * the core makes of it: only a range query lets it stay idle unread.
 */
static void test_cost_classes(void)
{
    static const struct {
        const char *model;
        PtmCost cost;
    } want[] = {
        { "idle", PTM_COST_RANGE }, { "pattern", PTM_COST_RANGE },
        { "ptc", PTM_COST_WINDOW }, { "random", PTM_COST_WINDOW },
    };
    PtmConfig cfg;
    PtmGeometry geo;
    PtmCore *core;

    ptm_config_default(&cfg);
    core = ptm_core_new(&cfg);
    ptm_core_geometry(core, &geo);
    ptm_core_free(core);
    for (unsigned i = 0; i < G_N_ELEMENTS(want); i++) {
        const PtmGenModel *m = ptm_gen_model_find(want[i].model);
        void *p = g_malloc0(m->params_size);
        char *err = NULL;
        PtmGen *g;

        m->defaults(p);
        g = ptm_gen_new(m, p, &geo, &err);
        g_assert_null(err);
        g_assert_cmpint(ptm_gen_source_ops.cost(g), ==, want[i].cost);
        core = ptm_core_new(&cfg);
        ptm_core_set_source(core, &ptm_gen_source_ops, g);
        ptm_core_power_on(core, 0);
        /* long enough for the timing to be found periodic */
        ptm_core_advance(core, 2000000);
        g_assert_cmpint(ptm_core_lazy(core), ==,
                        want[i].cost == PTM_COST_RANGE);
        ptm_core_free(core);
        ptm_gen_free(g);
        g_free(p);
    }
}

static void test_history(void)
{
    PtmGen *g = pattern_gen(256);
    PtmPatternParams p = *(const PtmPatternParams *)ptm_gen_params(g);
    const PtmParamDesc *d = param(&ptm_model_pattern, "rq-frame-bytes");
    char *err;

    g_assert_nonnull(d);
    err = ptm_param_check(d, 70000);
    g_assert_nonnull(err);
    g_free(err);
    /* changes are at PCIe cycles; "now" is in ns (400 MHz: 2.5 ns) */
    p.bus[PTM_BUS_RQ].frame_bytes = 512;
    g_assert_null(ptm_gen_set_params(g, &p, 20000, 15000));
    g_assert_cmpuint(rq_at(g, 0), ==, 256);
    g_assert_cmpuint(rq_at(g, 19999), ==, 256);
    g_assert_cmpuint(rq_at(g, 20000), ==, 512);
    /* a second change before the first takes effect replaces it */
    p.bus[PTM_BUS_RQ].frame_bytes = 1024;
    g_assert_null(ptm_gen_set_params(g, &p, 20000, 16000));
    g_assert_cmpuint(g->nver, ==, 2);
    g_assert_cmpuint(rq_at(g, 20000), ==, 1024);
    /* a value the card cannot take is refused and nothing changes */
    p.tags_free = 5000;
    err = ptm_gen_set_params(g, &p, 40000, 30000);
    g_assert_nonnull(err);
    g_free(err);
    g_assert_cmpuint(g->nver, ==, 2);
    /* old versions go once no window can need them */
    p.tags_free = -1;
    for (unsigned i = 0; i < 20; i++) {
        uint64_t from = 100000 * (i + 1);

        p.bus[PTM_BUS_RQ].frame_bytes = 64 + i;
        g_assert_null(ptm_gen_set_params(g, &p, from,
                                         (from - 2000) * 5 / 2));
    }
    g_assert_cmpuint(g->nver, <=, 2);
    g_assert_cmpuint(rq_at(g, 2000000), ==, 64 + 19);
    /* changes that all may still be needed are kept; past the limit the
     * next one is refused */
    for (unsigned i = 0; g->nver < PTM_GEN_HISTORY; i++) {
        p.bus[PTM_BUS_RQ].frame_bytes = 100 + i % 50;
        g_assert_null(ptm_gen_set_params(g, &p, 3000000 + i, 2000));
    }
    err = ptm_gen_set_params(g, &p, 4000000, 2000);
    g_assert_nonnull(err);
    g_free(err);
    g_assert_cmpuint(rq_at(g, 2000000), ==, 64 + 19);
    ptm_gen_free(g);
}

static void test_fill_cut_at_change(void)
{
    PtmGen *g = pattern_gen(256);
    PtmPatternParams p = *(const PtmPatternParams *)ptm_gen_params(g);
    PtmProbeInfo probe = {
        .domain = PTM_DOMAIN_PCIE, .buses = 2, .regions = 2,
        .bus_regions = { 2, 2 }, .bus_items = { 8, 8 }, .hz = 400000000,
    };
    PtmChunk *ch = ptm_chunk_new();
    uint64_t n;

    p.bus[PTM_BUS_RQ].frame_bytes = 0;
    g_assert_null(ptm_gen_set_params(g, &p, 4000, 5000));
    /* from PCIe cycle 4000: a span from 0 stops there */
    n = ptm_gen_source_ops.fill(g, &probe, 0, 8192, ch);
    g_assert_cmpuint(n, ==, 4000);
    g_assert_cmpuint(ch->seg[0].bus[0].src_rdy, ==, 1);
    n = ptm_gen_source_ops.fill(g, &probe, 4000, 8192, ch);
    g_assert_cmpuint(n, ==, 8192);
    g_assert_cmpuint(ch->seg[0].bus[0].src_rdy, ==, 0);
    ptm_chunk_free(ch);
    ptm_gen_free(g);
}

static void test_save_load(void)
{
    PtmGen *a = pattern_gen(256), *b = pattern_gen(100);
    PtmPatternParams p = *(const PtmPatternParams *)ptm_gen_params(a);
    size_t len;
    void *blob;
    char *err;

    p.bus[PTM_BUS_RQ].frame_bytes = 512;
    g_assert_null(ptm_gen_set_params(a, &p, 20000, 15000));
    blob = ptm_gen_save(a, &len);
    g_assert_null(ptm_gen_load(b, blob, len));
    g_assert_cmpuint(rq_at(b, 0), ==, 256);
    g_assert_cmpuint(rq_at(b, 20000), ==, 512);
    err = ptm_gen_load(b, blob, len - 1);
    g_assert_nonnull(err);
    g_free(err);
    g_assert_cmpuint(rq_at(b, 20000), ==, 512);
    g_free(blob);
    ptm_gen_free(a);
    ptm_gen_free(b);
}

/* Through the core: RQ stops from the PCIe window after the change. */
static void test_live_change(void)
{
    PtmConfig cfg;
    PtmCore *core;
    PtmGeometry geo;
    PtmPatternParams p;
    PtmGen *g;
    char *err = NULL;
    uint64_t from;

    ptm_config_default(&cfg);
    core = ptm_core_new(&cfg);
    ptm_core_geometry(core, &geo);
    ptm_pattern_params_default(&p);
    p.bus[PTM_BUS_RQ].frame_bytes = 256;        /* a word every cycle */
    g = ptm_gen_new(&ptm_model_pattern, &p, &geo, &err);
    g_assert_null(err);
    ptm_core_set_source(core, &ptm_gen_source_ops, g);
    ptm_core_power_on(core, 0);
    ptm_core_write(core, 0, PTM_REG_READ_SEL, 1, 4);

    /* at 15 us window 1 runs (cycles 4095..8190); window 2 starts at
     * cycle 8191 = 20477.5 ns */
    ptm_core_advance(core, 15000);
    from = ptm_core_next_pcie_window(core, 15000);
    g_assert_cmpuint(from, ==, 8191);
    p.bus[PTM_BUS_RQ].frame_bytes = 0;
    g_assert_null(ptm_gen_set_params(g, &p, from, 15000));
    /*
     * by 35 us windows 0..2 are in: words in cycles 1..8190, none after
     * (cycle 0, the reset's last, counts no bus event; RQ words read out in
     * slot 1 close 5 cycles later than the cycle counter, with no traffic)
     */
    g_assert_cmpuint(ptm_core_read(core, 35000, PTM_CNT_BASE + 8, 8), ==,
                     4095 + 4096 - 1);
    g_assert_cmpuint(ptm_core_read(core, 35000, PTM_CNT_BASE, 8), ==,
                     4095 + 2 * 4096);
    ptm_core_free(core);
    ptm_gen_free(g);
}

/*
 * -object accepts only what QEMU's QAPI schema lists: every model's QAPI
 * struct (qemu-device/qapi/<model>.json) must name exactly its parameters,
 * with the matching types.
 */
static void test_qapi_matches_tables(void)
{
    const char *root = g_getenv("PTM_SOURCE_ROOT");
    static const char *const qapi_type[] = {
        "bool", "uint32", "int32", "str",
    };

    g_assert_nonnull(root);
    /* the signal models, then the DMA engine's background transfers */
    for (unsigned i = 0; i == 0 || ptm_gen_models[i - 1]; i++) {
        const PtmGenModel *m = ptm_gen_models[i] ? ptm_gen_models[i]
                                                 : &ptm_model_transfers;
        g_autofree char *path = g_strdup_printf("%s/qemu-device/qapi/%s.json",
                                                root, m->name);
        g_autofree char *text = NULL;
        g_autoptr(GRegex) re = g_regex_new("'\\*([a-z0-9-]+)': '([a-z0-9]+)'",
                                           0, 0, NULL);
        g_autoptr(GMatchInfo) mi = NULL;
        unsigned found = 0;

        if (!g_file_get_contents(path, &text, NULL, NULL)) {
            g_error("model %s has no QAPI file %s", m->name, path);
        }
        g_regex_match(re, text, 0, &mi);
        while (g_match_info_matches(mi)) {
            g_autofree char *name = g_match_info_fetch(mi, 1);
            g_autofree char *type = g_match_info_fetch(mi, 2);
            const PtmParamDesc *d = param(m, name);

            g_assert_cmpstr(type, ==, qapi_type[d->type]);
            found++;
            g_match_info_next(mi, NULL);
        }
        if (found != m->nparams) {
            g_error("%s: %u members in %s, %u parameters", m->name, found,
                    path, m->nparams);
        }
    }
}

/*
 * Above 1 GHz several cycles share a ns: the change still starts exactly
 * with the window (4 GHz, DRAIN_PERIOD 32768: window 2 starts at cycle
 * 65535 = 16383.75 ns).
 */
static void test_live_change_4ghz(void)
{
    PtmConfig cfg;
    PtmCore *core;
    PtmGeometry geo;
    PtmPatternParams p;
    PtmGen *g;
    char *err = NULL;

    ptm_config_default(&cfg);
    cfg.pcie_clk_hz = 4000000000ull;
    cfg.drain_period = 32768;
    core = ptm_core_new(&cfg);
    ptm_core_geometry(core, &geo);
    ptm_pattern_params_default(&p);
    p.bus[PTM_BUS_RQ].frame_bytes = 256;
    g = ptm_gen_new(&ptm_model_pattern, &p, &geo, &err);
    g_assert_null(err);
    ptm_core_set_source(core, &ptm_gen_source_ops, g);
    ptm_core_power_on(core, 0);
    ptm_core_write(core, 0, PTM_REG_READ_SEL, 1, 4);
    ptm_core_advance(core, 12000);
    g_assert_cmpuint(ptm_core_next_pcie_window(core, 12000), ==, 65535);
    p.bus[PTM_BUS_RQ].frame_bytes = 0;
    g_assert_null(ptm_gen_set_params(g, &p, 65535, 12000));
    /* busy up to window 2, idle from it: words in cycles 1..65534 */
    g_assert_cmpuint(ptm_core_read(core, 30000, PTM_CNT_BASE + 8, 8), ==,
                     65534);
    ptm_core_free(core);
    ptm_gen_free(g);
}

/*
 * The pattern's duty-cycled BRAKE bits and MVB items per frame, through the
 * core: window 0 has cycles 0..4094, so BRAKE bit 0 on for 16 of every 64
 * cycles gives 63 x 16 + 16 = 1024 cycles; UP frames of 64 bytes are one
 * word each (2 regions of 8 items) every cycle, with 3 MVB items each:
 * DMA window 0 (4095 cycles) has 4095 frames and 3 x 4095 MVB items.
 */
static void test_pattern_duty_and_mvb(void)
{
    PtmConfig cfg;
    PtmCore *core;
    PtmGeometry geo;
    PtmPatternParams p;
    PtmGen *g;
    char *err = NULL;

    ptm_config_default(&cfg);
    cfg.dma_up_mfb_regions = 4;                 /* room for 3 items */
    core = ptm_core_new(&cfg);
    ptm_core_geometry(core, &geo);
    ptm_pattern_params_default(&p);
    p.brake = 1;
    p.brake_duty = 25;
    p.brake_period = 64;
    p.bus[PTM_BUS_UP].frame_bytes = 64;
    p.bus[PTM_BUS_UP].mvb_items = 3;
    g = ptm_gen_new(&ptm_model_pattern, &p, &geo, &err);
    g_assert_null(err);
    ptm_core_set_source(core, &ptm_gen_source_ops, g);
    ptm_core_power_on(core, 0);
    ptm_core_write(core, 0, PTM_REG_READ_SEL, 1, 4);
    /*
     * PCIe probe: 1 + 2 x (6 + 2) = 17 is BRAKE 0 (slot 1 of 4 groups: its
     * window 0 is cycles [1, 4095 + 5)): 16 of every 64 cycles, from cycle
     * 1; the DMA probe of 4 regions (21 channels, 3 groups) starts at 31:
     * UP SOF at 31 + 1 + 2 (window 0 [1, 4095 + 12)), MVB at 31 + 1 + 3
     * ([0, 4095 + 16): MVB items count the reset's last cycle too)
     */
    g_assert_cmpuint(ptm_core_read(core, 15000, PTM_CNT_BASE + 8 * 17, 8),
                     ==, 64 * 16 - 1 + 4);
    g_assert_cmpuint(ptm_core_read(core, 25000, PTM_CNT_BASE + 8 * 34, 8),
                     ==, 4095 + 12 - 1);
    g_assert_cmpuint(ptm_core_read(core, 25000, PTM_CNT_BASE + 8 * 35, 8),
                     ==, 3 * (4095 + 16));
    /* more MVB items than the bus has regions is refused */
    p.bus[PTM_BUS_UP].mvb_items = 5;
    err = ptm_pattern_check(&p, &geo);
    g_assert_nonnull(err);
    g_free(err);
    ptm_core_free(core);
    ptm_gen_free(g);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/gen/models", test_models);
    g_test_add_func("/gen/history", test_history);
    g_test_add_func("/gen/cost-classes", test_cost_classes);
    g_test_add_func("/gen/fill-cut-at-change", test_fill_cut_at_change);
    g_test_add_func("/gen/save-load", test_save_load);
    g_test_add_func("/gen/live-change", test_live_change);
    g_test_add_func("/gen/live-change-4ghz", test_live_change_4ghz);
    g_test_add_func("/gen/qapi-matches-tables", test_qapi_matches_tables);
    g_test_add_func("/gen/pattern-duty-and-mvb", test_pattern_duty_and_mvb);
    return g_test_run();
}
