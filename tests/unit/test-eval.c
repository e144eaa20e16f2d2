/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fast evaluation against the reference one (every window counted at
 * its drain, every delta carried with its value and added one by one):
 * twin cores with the same source see the same sequence of accesses at the
 * same virtual times, and every read must return the same value. Sources,
 * geometries, drain periods (including ones that lose deltas), clocks,
 * access patterns (reads at random moments, during BUSY, right after a
 * drain, after long unread stretches) and live parameter changes vary.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "ptm-core.h"
#include "ptm-gen.h"
#include "ptm-pattern.h"
#include "ptm-ptc.h"
#include "ptm-random.h"
#include "test-support.h"

typedef struct Twin {
    PtmCore *fast, *ref;
    PtmGen *gen;
    const PtmConfig *cfg;
    uint64_t t;
    unsigned reads;
} Twin;

static void twin_init(Twin *tw, const PtmConfig *cfg, PtmGen *gen)
{
    memset(tw, 0, sizeof(*tw));
    g_assert_null(ptm_config_check(cfg));
    tw->cfg = cfg;
    tw->gen = gen;
    tw->fast = ptm_core_new(cfg);
    tw->ref = ptm_core_new(cfg);
    ptm_core_set_reference(tw->ref, true);
    if (gen) {
        ptm_core_set_source(tw->fast, &ptm_gen_source_ops, gen);
        ptm_core_set_source(tw->ref, &ptm_gen_source_ops, gen);
    }
    ptm_core_power_on(tw->fast, 0);
    ptm_core_power_on(tw->ref, 0);
}

static void twin_free(Twin *tw)
{
    ptm_core_free(tw->fast);
    ptm_core_free(tw->ref);
    ptm_gen_free(tw->gen);
}

/* Both states keep the model's invariants after every access. */
static void twin_check(Twin *tw)
{
    char *ef = ptm_core_check(tw->fast), *er = ptm_core_check(tw->ref);

    if (ef || er) {
        g_error("t=%" G_GUINT64_FORMAT " ns: fast: %s; reference: %s",
                tw->t, ef ? ef : "ok", er ? er : "ok");
    }
}

static uint64_t twin_read(Twin *tw, uint32_t addr, unsigned size)
{
    uint64_t a = ptm_core_read(tw->fast, tw->t, addr, size);
    uint64_t b = ptm_core_read(tw->ref, tw->t, addr, size);

    if (a != b) {
        g_error("t=%" G_GUINT64_FORMAT " ns: read of 0x%x: fast 0x%"
                G_GINT64_MODIFIER "x, reference 0x%" G_GINT64_MODIFIER "x",
                tw->t, addr, a, b);
    }
    twin_check(tw);
    tw->reads++;
    return a;
}

static void twin_write(Twin *tw, uint32_t addr, uint64_t v, unsigned size)
{
    ptm_core_write(tw->fast, tw->t, addr, v, size);
    ptm_core_write(tw->ref, tw->t, addr, v, size);
    twin_check(tw);
}

/* Every counter, both copies, and the registers that change. */
static void twin_read_all(Twin *tw)
{
    const PtmLayout *lay = ptm_core_layout(tw->fast);
    unsigned used = tw->cfg->pcie_endpoints * lay->channels_per_endpoint;

    twin_read(tw, PTM_REG_STATUS, 4);
    for (unsigned e = 0; e < tw->cfg->pcie_endpoints; e++) {
        twin_read(tw, PTM_REG_PCIE_STATUS + 4 * e, 4);
        twin_read(tw, PTM_REG_PCIE_TAGS + 4 * e, 4);
        twin_read(tw, PTM_REG_PCIE_STFIFO + 4 * e, 4);
    }
    for (unsigned sel = 0; sel < 2; sel++) {
        twin_write(tw, PTM_REG_READ_SEL, sel, 4);
        for (unsigned k = 0; k < used; k++) {
            twin_read(tw, PTM_CNT_BASE + 8 * k, 8);
        }
    }
    g_assert_cmpuint(ptm_core_lost_deltas(tw->fast), ==,
                     ptm_core_lost_deltas(tw->ref));
    g_assert_cmpuint(ptm_core_applied_deltas(tw->fast), ==,
                     ptm_core_applied_deltas(tw->ref));
}

/* A random access: a register, a counter, a command or READ_SEL. */
static void twin_random_access(Twin *tw, GRand *r)
{
    const PtmLayout *lay = ptm_core_layout(tw->fast);
    unsigned k = g_rand_int_range(r, 0, 10);

    switch (k) {
    case 0:
        twin_write(tw, PTM_REG_COMMAND, g_rand_int_range(r, 0, 16), 4);
        break;
    case 1:
        twin_write(tw, PTM_REG_READ_SEL, g_rand_int_range(r, 0, 2), 4);
        break;
    case 2:
    case 3:
        twin_read(tw, PTM_REG_STATUS, 4);
        break;
    case 4:
        twin_read(tw, 0x40 + 0x40 * g_rand_int_range(r, 0, 3) +
                  4 * g_rand_int_range(r, 0, tw->cfg->pcie_endpoints), 4);
        break;
    default:
        twin_read(tw, PTM_CNT_BASE + 8 * g_rand_int_range(r, 0, lay->entries),
                  8);
        break;
    }
}

/* Virtual time to the next access: mostly short, sometimes very long. */
static uint64_t random_step_full(GRand *r)
{
    switch (g_rand_int_range(r, 0, 8)) {
    case 0:
        return g_rand_int_range(r, 0, 40);
    case 1:
    case 2:
        return g_rand_int_range(r, 0, 2000);
    case 3:
    case 4:
        return g_rand_int_range(r, 0, 100000);
    case 5:
        return g_rand_int_range(r, 0, 3000000);
    case 6:
        return 41000 * (uint64_t)g_rand_int_range(r, 1, 30);
    default:
        return (uint64_t)g_rand_int_range(r, 1, 12) * 1000000;
    }
}

static uint64_t random_step(GRand *r)
{
    return random_step_full(r);
}

static void twin_run(Twin *tw, GRand *r, unsigned accesses, unsigned slow)
{
    for (unsigned i = 0; i < accesses; i++) {
        tw->t += random_step_full(r) / MAX(slow, 1);
        twin_random_access(tw, r);
        if (g_rand_int_range(r, 0, 50) == 0) {
            twin_read_all(tw);
        }
    }
    twin_read_all(tw);
}

static PtmGen *make_gen(const PtmConfig *cfg, const char *model,
                        const char *const *kv)
{
    const PtmGenModel *m = ptm_gen_model_find(model);
    PtmCore *core = ptm_core_new(cfg);
    PtmGeometry geo;
    void *par;
    PtmGen *g;
    char *err = NULL;

    g_assert_nonnull(m);
    ptm_core_geometry(core, &geo);
    ptm_core_free(core);
    par = g_malloc0(m->params_size);
    m->defaults(par);
    for (unsigned i = 0; kv && kv[i]; i += 2) {
        bool found = false;

        for (unsigned p = 0; p < m->nparams; p++) {
            if (strcmp(m->params[p].name, kv[i])) {
                continue;
            }
            if (m->params[p].type == PTM_PARAM_STR) {
                g_assert_null(ptm_param_set_str(&m->params[p], par,
                                                kv[i + 1]));
            } else {
                ptm_param_set(&m->params[p], par,
                              g_ascii_strtoll(kv[i + 1], NULL, 0));
            }
            found = true;
        }
        g_assert_true(found);
    }
    g = ptm_gen_new(m, par, &geo, &err);
    if (!g) {
        g_error("%s: %s", model, err);
    }
    g_free(par);
    return g;
}

static const char *const first_pattern[] = {
    "rq-frame-bytes", "256", "rc-frame-bytes", "64", "up-frame-bytes", "128",
    "up-gap", "1", "down-frame-bytes", "512", "brake", "0x15",
    "brake-duty", "25", "tags-free", "20", "stfifo-free", "300",
    "up-mvb-items", "2", NULL,
};

static const char *const odd_pattern[] = {
    "rq-frame-bytes", "300", "rc-frame-bytes", "64", "rc-gap", "2",
    "up-frame-bytes", "128", "up-gap", "1", "down-frame-bytes", "512",
    "down-stall", "2", "brake", "0x15", "brake-duty", "25", "tags-free", "20",
    "stfifo-free", "300", "up-mvb-items", "2", NULL,
};

typedef struct Case {
    const char *name;
    const char *model;
    const char *const *params;
    unsigned endpoints, ports, rq_regions;
    unsigned drain_period;      /* 0: default */
    uint64_t pcie_hz, dma_hz, mi_hz;
    unsigned cnt_width;
    unsigned slow;              /* the reference's cost: steps / slow */
} Case;

static const Case cases[] = {
    { "idle", "idle", NULL, 1, 1, 2, 0, 0, 0, 0, 0 },
    { "pattern", "pattern", first_pattern, 1, 1, 2, 0, 0, 0, 0, 0 },
    { "pattern-odd", "pattern", odd_pattern, 1, 1, 2, 0, 0, 0, 0, 0, 40 },
    { "pattern-2x2", "pattern", first_pattern, 2, 2, 4, 0, 0, 0, 0, 0 },
    { "pattern-wrap", "pattern", first_pattern, 1, 1, 2, 32768,
      4000000000ull, 0, 0, 33 },
    { "pattern-odd-clocks", "pattern", odd_pattern, 1, 2, 2, 1024,
      250000000, 156250000, 125000000, 0, 30 },
    { "pattern-lossy", "pattern", first_pattern, 3, 1, 2, 1024, 0, 0, 0, 0,
      10 },
    { "random", "random", NULL, 1, 1, 2, 0, 0, 0, 0, 0 },
    { "ptc", "ptc", NULL, 1, 1, 2, 0, 0, 0, 0, 0 },
    { "ptc-2x2", "ptc", NULL, 2, 2, 4, 0, 0, 0, 0, 0 },
    /*
     * The accumulator keeps up on average (load 0.74), but each SNAPSHOT
     * stops it for 4097 MI cycles, and the FIFOs of 32 probes then
     * overflow, as the RTL's do.
     */
    { "ptc-16x4-busy-lossy", "ptc", NULL, 16, 4, 2, 16384, 0, 0, 0, 0 },
    { "ptc-16x4-overloaded", "ptc", NULL, 16, 4, 2, 0, 0, 0, 0, 0 },
    { "random-8-ports-lossy", "random", NULL, 2, 8, 2, 512, 0, 0, 0, 0, 50 },
};

static void make_cfg(const Case *c, PtmConfig *cfg)
{
    ptm_config_default(cfg);
    cfg->pcie_endpoints = c->endpoints;
    cfg->dma_ports = c->ports;
    cfg->pcie_rq_mfb_regions = c->rq_regions;
    if (c->drain_period) {
        cfg->drain_period = c->drain_period;
    }
    if (c->pcie_hz) {
        cfg->pcie_clk_hz = c->pcie_hz;
    }
    if (c->dma_hz) {
        cfg->dma_clk_hz = c->dma_hz;
    }
    if (c->mi_hz) {
        cfg->mi_clk_hz = c->mi_hz;
    }
    if (c->cnt_width) {
        cfg->cnt_width = c->cnt_width;
    }
}

static void test_case(gconstpointer data)
{
    const Case *c = data;
    unsigned seeds = c->endpoints > 8 ? 1 : 3;

    for (unsigned seed = 1; seed <= seeds; seed++) {
        GRand *r = g_rand_new_with_seed(seed * 7919 + c->endpoints);
        PtmConfig cfg;
        Twin tw;

        make_cfg(c, &cfg);
        twin_init(&tw, &cfg, make_gen(&cfg, c->model, c->params));
        /* few kept steps: their reuse under constant replacement */
        if (seed == 2) {
            ptm_core_set_step_slots(tw.fast, 2);
        }
        twin_run(&tw, r, c->endpoints > 8 ? 60 : 300, c->slow);
        g_assert_cmpuint(tw.reads, >, 100);
        /* the cases are named for whether the accumulator keeps up */
        if (strstr(c->name, "lossy") || strstr(c->name, "overloaded")) {
            g_assert_cmpuint(ptm_core_lost_deltas(tw.ref), >, 0);
        } else {
            g_assert_cmpuint(ptm_core_lost_deltas(tw.ref), ==, 0);
        }
        twin_free(&tw);
        g_rand_free(r);
    }
}

/* Every geometry of the shared list, with the random source. */
static void test_geometries(void)
{
    for (unsigned i = 0; i < ptm_test_ngeos; i++) {
        GRand *r = g_rand_new_with_seed(100 + i);
        PtmConfig cfg;
        Twin tw;

        ptm_test_make_cfg(&ptm_test_geos[i], &cfg);
        twin_init(&tw, &cfg, make_gen(&cfg, "random", NULL));
        twin_run(&tw, r, 120, 4);
        twin_free(&tw);
        g_rand_free(r);
    }
}

/* A live change of the pattern between accesses, as qom-set makes it. */
static void test_live_change(void)
{
    static const unsigned sizes[] = { 64, 300, 0, 512, 128, 4096 };
    GRand *r = g_rand_new_with_seed(42);
    const PtmGenModel *m = &ptm_model_pattern;
    PtmPatternParams par;
    PtmConfig cfg;
    Twin tw;

    ptm_config_default(&cfg);
    twin_init(&tw, &cfg, make_gen(&cfg, "pattern", first_pattern));
    par = *(const PtmPatternParams *)ptm_gen_params(tw.gen);
    for (unsigned i = 0; i < 60; i++) {
        char *err;

        tw.t += random_step(r);
        twin_random_access(&tw, r);
        if (i % 5 == 4) {
            par.bus[PTM_BUS_RQ].frame_bytes = sizes[i / 5 % 6];
            par.bus[PTM_BUS_UP].gap = i % 7;
            /* the device first brings the model up to now */
            ptm_core_advance(tw.fast, tw.t);
            ptm_core_advance(tw.ref, tw.t);
            err = ptm_gen_set_params(tw.gen, &par,
                                     ptm_core_next_pcie_window(tw.fast, tw.t),
                                     tw.t);
            g_assert_null(err);
        }
    }
    twin_read_all(&tw);
    twin_free(&tw);
    g_rand_free(r);
    (void)m;
}

/* A live change as the device makes it: the model up to now first. */
static char *twin_set_params(Twin *tw, const void *par)
{
    ptm_core_advance(tw->fast, tw->t);
    ptm_core_advance(tw->ref, tw->t);
    return ptm_gen_set_params(tw->gen, par,
                              ptm_core_next_pcie_window(tw->fast, tw->t),
                              tw->t);
}

/*
 * Live changes of every parameter of the models that draw random numbers,
 * the seed among them. First the case a fuzz input found: ptc's seed
 * changed within a group of windows that share one jitter level, whose
 * level was still the old seed's for whichever side asked first.
 */
static void test_live_change_seeded(void)
{
    static const char *const models[] = { "ptc", "random" };
    PtmConfig cfg;
    Twin tw;

    ptm_config_default(&cfg);
    twin_init(&tw, &cfg, make_gen(&cfg, "ptc", NULL));
    {
        PtmPtcParams par = *(const PtmPtcParams *)ptm_gen_params(tw.gen);

        tw.t = 36;
        twin_write(&tw, PTM_REG_COMMAND, PTM_CMD_SNAPSHOT | PTM_CMD_CLEAR, 4);
        par.seed = 0;
        g_assert_null(twin_set_params(&tw, &par));
        for (unsigned i = 0; i < 3; i++) {
            tw.t += 50000;
            twin_write(&tw, PTM_REG_COMMAND, PTM_CMD_SNAPSHOT, 4);
        }
        twin_read_all(&tw);
    }
    twin_free(&tw);

    for (unsigned k = 0; k < G_N_ELEMENTS(models); k++) {
        const PtmGenModel *m = ptm_gen_model_find(models[k]);
        GRand *r = g_rand_new_with_seed(11 + k);
        const PtmParamDesc *seed = NULL;
        void *par;

        for (unsigned j = 0; j < m->nparams; j++) {
            if (!strcmp(m->params[j].name, "seed")) {
                seed = &m->params[j];
            }
        }
        g_assert_nonnull(seed);
        twin_init(&tw, &cfg, make_gen(&cfg, models[k], NULL));
        par = g_memdup2(ptm_gen_params(tw.gen), m->params_size);
        for (unsigned i = 0; i < 3 * 2 * m->nparams; i++) {
            const PtmParamDesc *d = &m->params[i / 6 % m->nparams];
            char *err;

            /* short steps: changes land within one jitter group */
            tw.t += g_rand_int_range(r, 0, 8000);
            twin_random_access(&tw, r);
            if (i % 3 != 2) {
                continue;
            }
            ptm_param_set(d, par, d->min + (int64_t)(g_rand_double(r) *
                                                     (d->max - d->min)));
            if (i % 2) {
                ptm_param_set(seed, par, g_rand_int(r));
            }
            err = twin_set_params(&tw, par);
            if (err) {
                /* values that do not fit together: back to those in force */
                g_free(err);
                memcpy(par, ptm_gen_params(tw.gen), m->params_size);
            }
        }
        twin_read_all(&tw);
        twin_free(&tw);
        g_free(par);
        g_rand_free(r);
    }
}

/* Settings of the function change between accesses. */
static void test_settings_change(void)
{
    GRand *r = g_rand_new_with_seed(7);
    PtmConfig cfg;
    Twin tw;

    ptm_config_default(&cfg);
    twin_init(&tw, &cfg, make_gen(&cfg, "ptc", NULL));
    for (unsigned i = 0; i < 80; i++) {
        PtmSettings s = {
            .mps = g_rand_int_range(r, 0, 3),
            .mrrs = g_rand_int_range(r, 0, 6),
            .ext_tag = g_rand_boolean(r),
            .rcb_128 = g_rand_boolean(r),
        };

        tw.t += random_step(r);
        twin_random_access(&tw, r);
        if (i % 4 == 3) {
            ptm_core_set_settings(tw.fast, tw.t, 0, &s);
            ptm_core_set_settings(tw.ref, tw.t, 0, &s);
        }
    }
    twin_read_all(&tw);
    twin_free(&tw);
    g_rand_free(r);
}

/*
 * A text trace of random frames on RQ, RC, UP (with MVB) and DOWN of
 * endpoint 0, with BRAKE bits, free tags and FIFO words that vary, so that
 * every lane has runs of its own; frames may straddle the trace's end.
 */
static char *write_trace(unsigned seed, unsigned frames, bool resets)
{
    GString *s = g_string_new("# test-eval trace\n");
    GRand *r = g_rand_new_with_seed(seed);
    char *path = NULL;
    int fd = g_file_open_tmp("test-eval-XXXXXX.trace", &path, NULL);
    static const char *const buses[2][2] = { { "rq", "rc" }, { "up0", "down0" } };

    for (int dma = 0; dma < 2; dma++) {
        if (resets) {
            /* held at the start, as testbenches do */
            g_string_append_printf(s, "%s cycles=%d reset=1\n",
                                   dma ? "dma0" : "pcie0",
                                   g_rand_int_range(r, 1, 200));
        }
        for (unsigned f = 0; f < frames; f++) {
            if (resets && g_rand_int_range(r, 0, 40) == 0) {
                /* short, mid-window, or over several windows */
                static const int len[] = { 1, 7, 300, 9000 };

                g_string_append_printf(s, "%s cycles=%d reset=1 %s\n",
                                       dma ? "dma0 up0.msrc=1 up0.mdst=1 "
                                             "up0.vld=1" : "pcie0 tags=3",
                                       len[g_rand_int_range(r, 0, 4)],
                                       dma ? "" : "rq.src=1 rq.dst=1 brake=5");
            }
            const char *bus = buses[dma][g_rand_int_range(r, 0, 2)];
            unsigned words = g_rand_int_range(r, 1, 5);
            GString *side = g_string_new("");

            if (!dma) {
                g_string_append_printf(side, " brake=%d tags=%d stfifo=%d",
                                       g_rand_int_range(r, 0, 64),
                                       g_rand_int_range(r, 0, 300),
                                       g_rand_int_range(r, 0, 1100));
            }
            for (unsigned w = 0; w < words; w++) {
                g_string_append_printf(s, "%s cycles=%d %s.src=1 %s.dst=1%s",
                                       dma ? "dma0" : "pcie0",
                                       g_rand_int_range(r, 1, 3), bus, bus,
                                       side->str);
                if (w == 0) {
                    g_string_append_printf(s, " %s.sof=1", bus);
                    if (dma && !strcmp(bus, "up0")) {
                        g_string_append(s, " up0.vld=1 up0.msrc=1 up0.mdst=1");
                    }
                }
                if (w == words - 1) {
                    g_string_append_printf(s, " %s.eof=2 %s.pos1=%d", bus,
                                           bus, g_rand_int_range(r, 0, 8));
                }
                g_string_append(s, "\n");
            }
            g_string_append_printf(s, "%s cycles=%d%s\n",
                                   dma ? "dma0" : "pcie0",
                                   g_rand_int_range(r, 1, 40), side->str);
            g_string_free(side, TRUE);
        }
    }
    g_assert_true(fd >= 0 && write(fd, s->str, s->len) == (ssize_t)s->len);
    close(fd);
    g_string_free(s, TRUE);
    g_rand_free(r);
    return path;
}

/* Replays, looped, held and ended idle, short and long. */
static void test_replay(void)
{
    static const char *const ends[] = { "loop", "hold", "idle" };
    static const unsigned frames[] = { 20, 3000 };

    for (unsigned f = 0; f < G_N_ELEMENTS(frames); f++) {
        char *trace = write_trace(f + 1, frames[f], false);

        for (unsigned k = 0; k < G_N_ELEMENTS(ends); k++) {
            const char *const kv[] = { "file", trace, "end", ends[k], NULL };
            GRand *r = g_rand_new_with_seed(f * 3 + k);
            PtmConfig cfg;
            Twin tw;

            ptm_config_default(&cfg);
            twin_init(&tw, &cfg, make_gen(&cfg, "replay", kv));
            twin_run(&tw, r, 200, 10);
            twin_free(&tw);
            g_rand_free(r);
        }
        g_unlink(trace);
        g_free(trace);
    }
}

/*
 * Probes held in their own reset: replays with PCIE_RESET and DMA_RESET
 * held at the start, for a cycle, mid-window and over several windows;
 * a looped scenario whose phases hold the PCIe, the DMA or all probes.
 */
static void test_resets(void)
{
    static const char *const ends[] = { "loop", "hold", "idle" };
    static const char ini[] =
        "[phase a]\nmodel=pattern\nduration=300us\n"
        "[phase b]\nmodel=pattern\nduration=7us\nreset=pcie\n"
        "[phase c]\nmodel=random\nduration=250us\n"
        "[phase d]\nmodel=idle\nduration=90us\nreset=dma\n"
        "[phase e]\nmodel=pattern\nduration=100us\nreset=pcie1\n"
        "[phase f]\nmodel=random\nduration=33us\nreset=all\n";
    char *path = NULL;
    int fd;

    for (unsigned k = 0; k < G_N_ELEMENTS(ends); k++) {
        char *trace = write_trace(k + 7, 3000, true);
        const char *const kv[] = { "file", trace, "end", ends[k], NULL };
        GRand *r = g_rand_new_with_seed(40 + k);
        PtmConfig cfg;
        Twin tw;

        ptm_config_default(&cfg);
        twin_init(&tw, &cfg, make_gen(&cfg, "replay", kv));
        twin_run(&tw, r, 200, 10);
        twin_free(&tw);
        g_rand_free(r);
        g_unlink(trace);
        g_free(trace);
    }

    fd = g_file_open_tmp("test-eval-XXXXXX.ini", &path, NULL);
    g_assert_true(fd >= 0 && write(fd, ini, strlen(ini)) ==
                  (ssize_t)strlen(ini));
    close(fd);
    {
        const char *const kv[] = { "file", path, "loop", "1", NULL };
        GRand *r = g_rand_new_with_seed(9);
        PtmConfig cfg;
        Twin tw;

        ptm_config_default(&cfg);
        cfg.pcie_endpoints = 2;
        twin_init(&tw, &cfg, make_gen(&cfg, "scenario", kv));
        twin_run(&tw, r, 300, 10);
        twin_free(&tw);
        g_rand_free(r);
    }
    g_unlink(path);
    g_free(path);
}

/* The example scenario, looped: phases of idle, pattern and random. */
static void test_scenario(void)
{
    const char *root = g_getenv("PTM_SOURCE_ROOT");
    GRand *r = g_rand_new_with_seed(5);
    PtmConfig cfg;
    char *file;
    Twin tw;

    g_assert_nonnull(root);
    file = g_build_filename(root, "examples", "scenario-burst.ini", NULL);
    {
        const char *const kv[] = { "file", file, "loop", "1", NULL };

        ptm_config_default(&cfg);
        twin_init(&tw, &cfg, make_gen(&cfg, "scenario", kv));
    }
    /* 2 s unread first: a long catch-up over 200 loops of the phases */
    tw.t += 2000000000ull;
    twin_read_all(&tw);
    twin_run(&tw, r, 200, 10);
    twin_free(&tw);
    g_rand_free(r);
    g_free(file);
}

/*
 * Overloaded cards, whose timing repeats with its losses: the fast
 * evaluation jumps whole periods and sums only the deltas kept. Reads at
 * random moments between a few and hundreds of periods apart, now and
 * then a command (which ends the repeat until it is found again).
 */
typedef struct LossyCase {
    const char *model;
    const char *const *params;
    unsigned endpoints, ports, rq_regions, drain_period;
    uint64_t pcie_hz, dma_hz, mi_hz;
    uint64_t vtime_ns;          /* virtual time of the run */
} LossyCase;

static const LossyCase lossy_cases[] = {
    { "ptc", NULL, 16, 4, 2, 0, 0, 0, 0, 20000000 },
    { "pattern", first_pattern, 16, 4, 2, 0, 0, 0, 0, 10000000 },
    { "pattern", first_pattern, 1, 1, 2, 64, 0, 0, 0, 10000000 },
    { "ptc", NULL, 1, 1, 2, 256, 0, 0, 0, 30000000 },
    { "ptc", NULL, 2, 2, 4, 512, 0, 0, 0, 30000000 },
    { "pattern", odd_pattern, 3, 1, 2, 1024, 0, 0, 0, 20000000 },
    { "random", NULL, 2, 8, 2, 512, 0, 0, 0, 30000000 },
    { "pattern", odd_pattern, 1, 2, 2, 256, 250000000, 156250000,
      125000000, 30000000 },
    { "random", NULL, 4, 2, 1, 1024, 0, 0, 0, 40000000 },
};

static void lossy_cfg(const LossyCase *c, PtmConfig *cfg)
{
    ptm_config_default(cfg);
    cfg->pcie_endpoints = c->endpoints;
    cfg->dma_ports = c->ports;
    cfg->pcie_rq_mfb_regions = c->rq_regions;
    if (c->drain_period) {
        cfg->drain_period = c->drain_period;
    }
    if (c->pcie_hz) {
        cfg->pcie_clk_hz = c->pcie_hz;
        cfg->dma_clk_hz = c->dma_hz;
        cfg->mi_clk_hz = c->mi_hz;
    }
}

/* A twin of fresh cores (fast and reference) over tw's source and time. */
static Twin cross_twin(const Twin *tw, const PtmConfig *cfg)
{
    Twin cross = *tw;

    cross.fast = ptm_core_new(cfg);
    cross.ref = ptm_core_new(cfg);
    ptm_core_set_reference(cross.ref, true);
    ptm_core_set_source(cross.fast, &ptm_gen_source_ops, tw->gen);
    ptm_core_set_source(cross.ref, &ptm_gen_source_ops, tw->gen);
    return cross;
}

/*
 * The fast core's state, saved now, loaded into a fresh twin (fast and
 * reference): both twins then go on side by side for `steps` accesses
 * up to max_step ns apart, a SNAPSHOT now and then, and read the same
 * counters and STATUS, as the saver does. Returns the new twin.
 */
static Twin migrate_on(Twin *tw, const PtmConfig *cfg, GRand *r,
                       unsigned steps, int max_step)
{
    Twin cross = cross_twin(tw, cfg);
    size_t len;
    void *blob = ptm_core_save(tw->fast, &len);

    g_assert_null(ptm_core_load(cross.fast, blob, len));
    g_assert_null(ptm_core_load(cross.ref, blob, len));
    g_free(blob);
    for (unsigned k = 0; k < steps; k++) {
        unsigned e = g_rand_int_range(r, 0,
                                      ptm_core_layout(tw->fast)->entries);

        tw->t += g_rand_int_range(r, 2000, max_step);
        cross.t = tw->t;
        if (k % 5 == 4) {
            twin_write(tw, PTM_REG_COMMAND, PTM_CMD_SNAPSHOT, 4);
            twin_write(&cross, PTM_REG_COMMAND, PTM_CMD_SNAPSHOT, 4);
        }
        g_assert_cmphex(twin_read(tw, PTM_CNT_BASE + 8 * e, 8), ==,
                        twin_read(&cross, PTM_CNT_BASE + 8 * e, 8));
        g_assert_cmphex(twin_read(tw, PTM_REG_STATUS, 4), ==,
                        twin_read(&cross, PTM_REG_STATUS, 4));
    }
    twin_read_all(tw);
    twin_read_all(&cross);
    return cross;
}

static char *twin_set_params(Twin *tw, const void *par);

/*
 * Accesses to an overloaded card until vtime_ns: reads at random moments
 * between a few and hundreds of periods of the timing apart, now and then
 * a command and, for a pattern or random, a live change of its frames or
 * seed and load.
 */
static void lossy_run(Twin *tw, GRand *r, uint64_t vtime_ns, const char *model)
{
    bool pattern = !strcmp(model, "pattern");

    while (tw->t < vtime_ns) {
        unsigned k = g_rand_int_range(r, 0, 40);

        tw->t += g_rand_int_range(r, 0, 3) ? g_rand_int_range(r, 2000, 1500000)
                                           : g_rand_int_range(r, 0, 2000);
        if (k == 0) {
            twin_write(tw, PTM_REG_COMMAND, g_rand_int_range(r, 1, 16), 4);
        } else if (k == 1 && pattern) {
            /* a live change: another period from the next window on */
            static const unsigned sizes[] = { 256, 300, 64, 512 };
            PtmPatternParams par =
                *(const PtmPatternParams *)ptm_gen_params(tw->gen);

            par.bus[PTM_BUS_RQ].frame_bytes =
                sizes[g_rand_int_range(r, 0, 4)];
            par.bus[PTM_BUS_UP].gap = g_rand_int_range(r, 0, 3);
            g_assert_null(twin_set_params(tw, &par));
        } else if (k == 1 && !strcmp(model, "random")) {
            PtmRandomParams par =
                *(const PtmRandomParams *)ptm_gen_params(tw->gen);

            par.seed = g_rand_int(r);
            par.bus[PTM_BUS_RQ].load = g_rand_int_range(r, 10, 90);
            g_assert_null(twin_set_params(tw, &par));
        } else if (k < 4) {
            twin_read_all(tw);
        } else {
            twin_random_access(tw, r);
        }
    }
    twin_read_all(tw);
}

static void test_lossy_jumps(void)
{
    for (unsigned i = 0; i < G_N_ELEMENTS(lossy_cases); i++) {
        const LossyCase *c = &lossy_cases[i];
        GRand *r = g_rand_new_with_seed(900 + i);
        PtmEvalStats st;
        PtmConfig cfg;
        Twin tw;

        lossy_cfg(c, &cfg);
        twin_init(&tw, &cfg, make_gen(&cfg, c->model, c->params));
        if (i % 2) {
            ptm_core_set_step_slots(tw.fast, 4);
        }
        lossy_run(&tw, r, c->vtime_ns, c->model);
        ptm_core_eval_stats(tw.fast, &st);
        g_assert_cmpuint(ptm_core_lost_deltas(tw.ref), >, 0);
        g_test_message("case %u: %" G_GUINT64_FORMAT " lossy jumps of %"
                       G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " MI cycles "
                       "jumped, %" G_GUINT64_FORMAT " simulated, %"
                       G_GUINT64_FORMAT " windows from tables", i,
                       st.lossy_jumps, st.jumps, st.jumped_mi,
                       st.simulated_mi, st.table_windows);
        /* a periodic source's windows come from one period of them */
        if (!strcmp(c->model, "pattern")) {
            g_assert_cmpuint(st.table_windows, >, 0);
        }
        /* ptc's from the kept steps of the pieces it names */
        if (!strcmp(c->model, "ptc")) {
            g_assert_cmpuint(st.bulk_windows, >, 4 * st.single_windows);
        }
        if (st.lossy_jumps == 0 || st.jumped_mi <= st.simulated_mi) {
            g_error("case %u: %" G_GUINT64_FORMAT " lossy jumps, %"
                    G_GUINT64_FORMAT " MI cycles jumped, %" G_GUINT64_FORMAT
                    " simulated", i, st.lossy_jumps, st.jumped_mi,
                    st.simulated_mi);
        }
        twin_free(&tw);
        g_rand_free(r);
    }
}

/* A file of the given text (g_unlink and g_free it). */
static char *write_file(const char *tmpl, const char *text)
{
    char *path = NULL;
    int fd = g_file_open_tmp(tmpl, &path, NULL);

    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(write(fd, text, strlen(text)), ==, strlen(text));
    close(fd);
    return path;
}

/*
 * Cards overloaded at DRAIN_PERIOD 64 and 256 with the sources whose
 * traffic changes from span to span: random decision blocks, looped
 * scenarios whose phases (pattern, random, idle, ptc) are shorter and
 * longer than a period of the timing, looped and ending replays. The
 * fast evaluation counts their lossy periods from a table per span;
 * every read equals the reference's. A migration in the middle of such
 * a period goes on as the saver would.
 */
static void test_lossy_sources(void)
{
    static const char scenario_text[] =
        "[phase first]\nmodel=pattern\nduration=300us\n"
        "rq-frame-bytes=256\nrc-frame-bytes=64\nup-frame-bytes=128\n"
        "up-gap=1\ndown-frame-bytes=512\nbrake=0x15\nbrake-duty=25\n"
        "tags-free=20\nstfifo-free=300\nup-mvb-items=2\n"
        "[phase short idle]\nmodel=idle\nduration=3us\n"
        "[phase random]\nmodel=random\nduration=700us\nseed=3\n"
        "[phase odd]\nmodel=pattern\nduration=90us\nrq-frame-bytes=300\n"
        "rc-gap=2\ndown-stall=2\n%s";
    static const unsigned dps[] = { 64, 256 };
    char *trace = write_trace(11, 12, false);
    char *long_trace = write_trace(12, 300, false);
    /*
     * A phase that leaves a frame open on RQ, then a looped trace that
     * starts as a recording does, in the middle of a frame: its EOF
     * closes that one frame in the first turn and nothing in the others,
     * so the counting's state must be found to repeat before windows are
     * taken from a table.
     */
    char *open_trace = write_file("test-eval-XXXXXX.trace",
                                  "pcie0 rq.src=1 rq.dst=1 rq.sof=1\n"
                                  "pcie0 cycles=5\n");
    char *mid_trace = write_file("test-eval-XXXXXX.trace",
                                 "pcie0 cycles=3000\n"
                                 "pcie0 rq.src=1 rq.dst=1 rq.eof=1 "
                                 "rq.pos0=3\n"
                                 "pcie0 cycles=99\n");
    char *sc_mid, *sc64, *sc256;

    {
        char *t64 = g_strdup_printf(scenario_text, "");
        char *t256 = g_strdup_printf(scenario_text,
                                     "[phase ptc]\nmodel=ptc\n"
                                     "duration=150us\n");

        char *tmid = g_strdup_printf("[phase open]\nmodel=replay\n"
                                     "duration=10us\nfile=%s\nend=hold\n"
                                     "[phase mid]\nmodel=replay\n"
                                     "duration=20ms\nfile=%s\nend=loop\n",
                                     open_trace, mid_trace);

        sc_mid = write_file("test-eval-XXXXXX.ini", tmid);
        g_free(tmid);
        sc64 = write_file("test-eval-XXXXXX.ini", t64);
        sc256 = write_file("test-eval-XXXXXX.ini", t256);
        g_free(t64);
        g_free(t256);
    }
    for (unsigned d = 0; d < G_N_ELEMENTS(dps); d++) {
        const char *const random_kv[] = { "seed", "5", NULL };
        const char *const scenario_kv[] = { "file", d ? sc256 : sc64,
                                            "loop", "1", NULL };
        const char *const loop_kv[] = { "file", trace, "end", "loop", NULL };
        const char *const long_kv[] = { "file", long_trace, "end", "loop",
                                        NULL };
        const char *const hold_kv[] = { "file", trace, "end", "hold", NULL };
        const struct {
            const char *model;
            const char *const *kv;
        } src[] = {
            { "random", random_kv }, { "scenario", scenario_kv },
            { "replay", loop_kv }, { "replay", long_kv },
            { "replay", hold_kv },
        };

        for (unsigned i = 0; i < G_N_ELEMENTS(src); i++) {
            GRand *r = g_rand_new_with_seed(2100 + 10 * d + i);
            PtmEvalStats st;
            PtmConfig cfg;
            Twin tw, cross;

            ptm_config_default(&cfg);
            cfg.drain_period = dps[d];
            twin_init(&tw, &cfg, make_gen(&cfg, src[i].model, src[i].kv));
            if (i % 2) {
                ptm_core_set_step_slots(tw.fast, 4);
            }
            lossy_run(&tw, r, 3000000, src[i].model);
            /*
             * long unread stretches, as the device's background ticks
             * give them: a table of many distinct windows is built only
             * in a jump over at least twice as many
             */
            for (unsigned k = 0; k < 2; k++) {
                tw.t += 12000000 + g_rand_int_range(r, 0, 100000);
                twin_read_all(&tw);
            }
            /* mid-period: a migration, both ways on */
            tw.t += g_rand_int_range(r, 1000, 30000);
            twin_read(&tw, PTM_REG_STATUS, 4);
            cross = migrate_on(&tw, &cfg, r, 12, 1500000);
            ptm_core_eval_stats(tw.fast, &st);
            g_test_message("DRAIN_PERIOD %u, %s %s: %" G_GUINT64_FORMAT
                           " lossy jumps, windows from tables %"
                           G_GUINT64_FORMAT ", one by one %" G_GUINT64_FORMAT,
                           dps[d], src[i].model, src[i].kv[1] == trace ||
                           src[i].kv[1] == long_trace ? src[i].kv[3] : "",
                           st.lossy_jumps, st.table_windows,
                           st.single_windows);
            g_assert_cmpuint(ptm_core_lost_deltas(tw.ref), >, 0);
            g_assert_cmpuint(st.lossy_jumps, >, 0);
            /* most windows of the lossy periods come from tables */
            g_assert_cmpuint(st.table_windows, >, 4 * st.single_windows);
            ptm_core_free(cross.fast);
            ptm_core_free(cross.ref);
            twin_free(&tw);
            g_rand_free(r);
        }
    }
    {
        /* (a card that keeps RQ's items now and then: 3 endpoints) */
        const char *const mid_kv[] = { "file", sc_mid, "loop", "1", NULL };
        GRand *r = g_rand_new_with_seed(2200);
        PtmEvalStats st;
        PtmConfig cfg;
        Twin tw;

        ptm_config_default(&cfg);
        cfg.pcie_endpoints = 3;
        cfg.drain_period = 1024;
        twin_init(&tw, &cfg, make_gen(&cfg, "scenario", mid_kv));
        for (unsigned k = 0; k < 3; k++) {
            tw.t += 30000000 + g_rand_int_range(r, 0, 100000);
            twin_read_all(&tw);
        }
        lossy_run(&tw, r, tw.t + 4000000, "scenario");
        ptm_core_eval_stats(tw.fast, &st);
        g_assert_cmpuint(ptm_core_lost_deltas(tw.ref), >, 0);
        g_assert_cmpuint(st.table_windows, >, 4 * st.single_windows);
        twin_free(&tw);
        g_rand_free(r);
    }
    g_unlink(trace);
    g_unlink(long_trace);
    g_unlink(open_trace);
    g_unlink(mid_trace);
    g_unlink(sc_mid);
    g_unlink(sc64);
    g_unlink(sc256);
    g_free(trace);
    g_free(long_trace);
    g_free(open_trace);
    g_free(mid_trace);
    g_free(sc_mid);
    g_free(sc64);
    g_free(sc256);
}

/*
 * Migration of an overloaded card in the middle of a lossy period, after
 * jumps over such periods: the saved state goes on, in a fast and in a
 * reference core, as the saver does.
 */
static void test_load_across_lossy(void)
{
    for (unsigned i = 0; i < 4; i++) {
        const LossyCase *c = &lossy_cases[i];
        GRand *r = g_rand_new_with_seed(1700 + i);
        PtmEvalStats st;
        PtmConfig cfg;
        Twin tw, cross;

        lossy_cfg(c, &cfg);
        twin_init(&tw, &cfg, make_gen(&cfg, c->model, c->params));
        for (unsigned k = 0; k < 6; k++) {
            tw.t += g_rand_int_range(r, 300000, 3000000);
            twin_read(&tw, PTM_REG_STATUS, 4);
        }
        ptm_core_eval_stats(tw.fast, &st);
        g_assert_cmpuint(st.lossy_jumps, >, 0);
        /* mid-period: a few microseconds on */
        tw.t += g_rand_int_range(r, 1000, 30000);
        twin_read(&tw, PTM_REG_STATUS, 4);
        cross = migrate_on(&tw, &cfg, r, 10, 1500000);
        g_assert_cmpuint(ptm_core_lost_deltas(tw.fast), ==,
                         ptm_core_lost_deltas(cross.fast));
        ptm_core_free(cross.fast);
        ptm_core_free(cross.ref);
        twin_free(&tw);
        g_rand_free(r);
    }
}

/* Long unread stretches (the reference pays for every window of them). */
static void test_long_unread(void)
{
    PtmConfig cfg;
    Twin tw;

    ptm_config_default(&cfg);
    twin_init(&tw, &cfg, make_gen(&cfg, "pattern", first_pattern));
    for (unsigned i = 1; i <= 3; i++) {
        tw.t += i * 300000000ull + 12345;
        twin_read_all(&tw);
        twin_write(&tw, PTM_REG_COMMAND, PTM_CMD_SNAPSHOT, 4);
        twin_read_all(&tw);
    }
    twin_free(&tw);
}

/*
 * A state saved by the fast evaluation goes on in the reference one (and
 * the other way round) exactly as the saver would have: saved states are
 * settled. The soak benchmark checks QEMU's long runs this way.
 */
static void test_load_across(void)
{
    static const char *const models[] = { "ptc", "random", "pattern" };

    for (unsigned k = 0; k < G_N_ELEMENTS(models); k++) {
        GRand *r = g_rand_new_with_seed(500 + k);
        PtmConfig cfg;
        Twin tw, cross;
        size_t len;
        void *blob;

        ptm_config_default(&cfg);
        cfg.pcie_endpoints = 2;
        twin_init(&tw, &cfg, make_gen(&cfg, models[k],
                                      k == 2 ? first_pattern : NULL));
        twin_run(&tw, r, 80, 1);
        /* the fast one's state into a reference core, and back */
        cross = cross_twin(&tw, &cfg);
        blob = ptm_core_save(tw.fast, &len);
        g_assert_null(ptm_core_load(cross.ref, blob, len));
        g_free(blob);
        blob = ptm_core_save(tw.ref, &len);
        g_assert_null(ptm_core_load(cross.fast, blob, len));
        g_free(blob);
        for (unsigned i = 0; i < 120; i++) {
            uint64_t step = random_step(r);

            tw.t += step;
            cross.t = tw.t;
            if (i % 7 == 0) {
                twin_write(&tw, PTM_REG_COMMAND, PTM_CMD_SNAPSHOT, 4);
                twin_write(&cross, PTM_REG_COMMAND, PTM_CMD_SNAPSHOT, 4);
            }
            for (unsigned e = 0; e < ptm_core_layout(tw.fast)->entries; e++) {
                uint64_t a = twin_read(&tw, PTM_CNT_BASE + 8 * e, 8);
                uint64_t b = twin_read(&cross, PTM_CNT_BASE + 8 * e, 8);

                g_assert_cmphex(a, ==, b);
            }
            g_assert_cmphex(twin_read(&tw, PTM_REG_STATUS, 4), ==,
                            twin_read(&cross, PTM_REG_STATUS, 4));
        }
        ptm_core_free(cross.fast);
        ptm_core_free(cross.ref);
        twin_free(&tw);
        g_rand_free(r);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *path = g_strdup_printf("/eval/fast-equals-reference/%s",
                                     cases[i].name);

        g_test_add_data_func(path, &cases[i], test_case);
        g_free(path);
    }
    g_test_add_func("/eval/geometries", test_geometries);
    g_test_add_func("/eval/live-change", test_live_change);
    g_test_add_func("/eval/live-change-seeded", test_live_change_seeded);
    g_test_add_func("/eval/settings-change", test_settings_change);
    g_test_add_func("/eval/long-unread", test_long_unread);
    g_test_add_func("/eval/lossy-jumps", test_lossy_jumps);
    g_test_add_func("/eval/load-across-lossy", test_load_across_lossy);
    g_test_add_func("/eval/lossy-sources", test_lossy_sources);
    g_test_add_func("/eval/load-across", test_load_across);
    g_test_add_func("/eval/replay", test_replay);
    g_test_add_func("/eval/scenario", test_scenario);
    g_test_add_func("/eval/resets", test_resets);
    return g_test_run();
}
