/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The seeded generators (random, ptc) over many seeds and card geometries:
 * their signals keep the MFB/MVB rules cycle by cycle, the fast counter
 * equals the per-cycle reference on their chunks, the counters keep their
 * invariants, the same seed gives the same counts; and random's offered
 * load follows its parameter.
 */
#include <glib.h>
#include <string.h>

#include "ptm-core.h"
#include "ptm-gen.h"
#include "ptm-ptc.h"
#include "ptm-random.h"
#include "test-support.h"

/* The model under test of the shared cases. */
static const PtmGenModel *model;

static PtmGen *random_gen(const PtmGeometry *geo, uint32_t seed)
{
    PtmRandomParams p;
    PtmPtcParams q;
    char *err = NULL;
    PtmGen *g;

    if (model == &ptm_model_ptc) {
        ptm_ptc_params_default(&q);
        q.seed = seed;
        q.down_stall = 20;
        q.rq_stall = 10;
        g = ptm_gen_new(model, &q, geo, &err);
    } else {
        ptm_random_params_default(&p);
        p.seed = seed;
        p.brake_percent = 30;
        p.bus[PTM_BUS_RQ].max_bytes = 1500;
        p.bus[PTM_BUS_DOWN].stall = 30;
        g = ptm_gen_new(&ptm_model_random, &p, geo, &err);
    }
    g_assert_null(err);
    return g;
}

typedef struct BusState {
    bool open, held;
    PtmBusCycle last;
} BusState;

/* The MFB and MVB rules, checked on one cycle of one bus. */
static void check_rules(const PtmProbeInfo *pi, unsigned b,
                        const PtmBusCycle *bc, BusState *st)
{
    unsigned real = (1u << pi->bus_regions[b]) - 1;

    /* only real regions carry SOF or EOF */
    g_assert_cmphex(bc->sof & ~real, ==, 0);
    g_assert_cmphex(bc->eof & ~real, ==, 0);
    /* a stalled word is held until it is taken */
    if (st->held && bc->src_rdy) {
        g_assert_cmphex(bc->sof, ==, st->last.sof);
        g_assert_cmphex(bc->eof, ==, st->last.eof);
    }
    if (bc->src_rdy && bc->dst_rdy) {
        for (unsigned r = 0; r < pi->bus_regions[b]; r++) {
            if (bc->sof >> r & 1) {
                g_assert_false(st->open);   /* no SOF inside a frame */
                g_assert_cmpuint(r, ==, 0); /* frames start in region 0 */
                st->open = true;
            }
            if (bc->eof >> r & 1) {
                g_assert_true(st->open);    /* no EOF without a frame */
                g_assert_cmpuint(bc->eof_pos[r], <, pi->bus_items[b]);
                st->open = false;
            }
        }
    }
    /* MVB valid bits only with SRC_RDY, none on the PCIe side */
    if (pi->domain == PTM_DOMAIN_PCIE) {
        g_assert_cmphex(bc->mvb_vld, ==, 0);
        g_assert_cmpuint(bc->mvb_src_rdy, ==, 0);
    } else if (bc->mvb_vld) {
        g_assert_cmpuint(bc->mvb_src_rdy, ==, 1);
    }
    st->held = bc->src_rdy && !bc->dst_rdy;
    st->last = *bc;
}

/* Two windows of each probe: rules per cycle, fast = reference. */
static void check_probe(PtmGen *g, const PtmConfig *cfg,
                        const PtmProbeInfo *pi)
{
    PtmChunk *ch = ptm_chunk_new();
    PtmProbeShape sh;
    PtmCountState a = { 0 }, b = { 0 };
    uint64_t ref[256] = { 0 }, fast[256] = { 0 };
    BusState st[PTM_MAX_BUSES] = { 0 };
    /* from a block edge, where no frame is open; across a block edge */
    uint64_t start = 3 * cfg->drain_period, end = start + 2 * cfg->drain_period;

    ptm_test_probe_shape(cfg, pi, &sh);
    ptm_count_state_window_start(&a);
    ptm_count_state_window_start(&b);
    while (start < end) {
        uint64_t n = ptm_gen_source_ops.fill(g, pi, start, end - start, ch);

        g_assert_cmpuint(n, >=, 1);
        g_assert_cmpuint(n, <=, end - start);
        for (uint64_t rep = 0; rep < ch->repeat; rep++) {
            for (unsigned i = 0; i < ch->nseg; i++) {
                for (uint64_t c = 0; c < ch->seg[i].cycles; c++) {
                    for (unsigned bb = 0; bb < pi->buses; bb++) {
                        check_rules(pi, bb, &ch->seg[i].bus[bb], &st[bb]);
                    }
                }
            }
        }
        ptm_count_chunk_reference(&sh, &a, ch, ref);
        ptm_count_chunk(&sh, &b, ch, fast);
        start += n;
    }
    g_assert_cmpmem(ref, sizeof(ref), fast, sizeof(fast));
    g_assert_cmpuint(ref[0], ==, 2 * cfg->drain_period);
    ptm_chunk_free(ch);
}

static void test_rules_and_fast_path(void)
{
    for (unsigned gi = 0; gi < ptm_test_ngeos; gi++) {
        PtmConfig cfg;
        PtmCore *core;
        PtmGeometry geo;

        ptm_test_make_cfg(&ptm_test_geos[gi], &cfg);
        core = ptm_core_new(&cfg);
        ptm_core_geometry(core, &geo);
        ptm_core_free(core);
        for (uint32_t seed = 1; seed <= 25; seed++) {
            PtmGen *g = random_gen(&geo, seed);

            for (unsigned e = 0; e < cfg.pcie_endpoints; e++) {
                PtmProbeInfo pi;

                ptm_test_probe_info(&cfg, e, PTM_DOMAIN_PCIE, &pi);
                check_probe(g, &cfg, &pi);
                ptm_test_probe_info(&cfg, e, PTM_DOMAIN_DMA, &pi);
                check_probe(g, &cfg, &pi);
            }
            ptm_gen_free(g);
        }
    }
}

/* Counters of a card driven by the generator for t ns, live copy. */
static void run_card(const PtmConfig *cfg, uint32_t seed, uint64_t t,
                     uint64_t *cnt)
{
    PtmCore *core = ptm_core_new(cfg);
    PtmGeometry geo;
    PtmGen *g;
    unsigned n;

    ptm_core_geometry(core, &geo);
    g = random_gen(&geo, seed);
    ptm_core_set_source(core, &ptm_gen_source_ops, g);
    ptm_core_power_on(core, 0);
    for (uint64_t s = 0; s <= t; s += 100000) {
        ptm_core_advance(core, s);
    }
    n = ptm_core_layout(core)->entries;
    for (unsigned e = 0; e < n; e++) {
        cnt[e] = ptm_core_counter(core, false, e);
    }
    ptm_core_free(core);
    ptm_gen_free(g);
}

static void check_invariants(const PtmConfig *cfg, const uint64_t *cnt)
{
    PtmLayout lay;

    ptm_layout_compute(cfg, &lay);
    for (unsigned e = 0; e < cfg->pcie_endpoints; e++) {
        for (int d = 0; d < 2; d++) {
            const uint64_t *c = cnt + e * lay.channels_per_endpoint +
                                (d ? lay.pcie_channels : 0);
            unsigned R = d ? lay.dma_regions : lay.pcie_regions;
            unsigned buses = d ? 2 * cfg->dma_ports : 2;
            uint64_t cycles = c[0];
            /*
             * Channels close their windows up to 7 (G + 1) cycles after the
             * cycle counter (read out in G groups of 8, slot by slot), and
             * the bands one cycle before: sums over channels agree within
             * that many cycles.
             */
            unsigned nch = d ? lay.dma_channels : lay.pcie_channels;
            uint64_t slack = 8 * ((nch + 7) / 8 + 1);

            g_assert_cmpuint(cycles, >, 0);
            for (unsigned b = 0; b < buses; b++) {
                const uint64_t *x = c + 1 + b * (6 + R);
                unsigned ipr = d ? ((b & 1) ? cfg->dma_down_mfb_region_bytes
                                            : cfg->dma_up_mfb_region_bytes) / 4
                                 : (b ? cfg->pcie_rc_mfb_region_bytes
                                      : cfg->pcie_rq_mfb_region_bytes) / 4;
                uint64_t used = 0;

                for (unsigned r = 0; r < R; r++) {
                    used += x[6 + r];
                    g_assert_cmpuint(x[6 + r], <=, x[0] + slack);
                }
                g_assert_cmpuint(x[0] + x[1], <=, cycles + 2 * slack);
                g_assert_cmpuint(x[2], <=, (x[0] + slack) * R);
                g_assert_cmpuint(x[5], <=, (used + R * slack) * ipr);
                if (!d) {
                    g_assert_cmpuint(x[3], ==, 0);   /* no MVB on PCIe */
                    g_assert_cmpuint(x[4], ==, 0);
                }
            }
            if (!d) {
                const uint64_t *k = c + 1 + 2 * (6 + R);
                uint64_t tags = 0, words = 0;

                for (unsigned i = 0; i < 6; i++) {
                    g_assert_cmpuint(k[i], <=, cycles + slack);
                }
                for (unsigned j = 0; j < 4; j++) {
                    tags += k[6 + j];
                    words += k[10 + j];
                }
                /* one band per cycle, each band up to its own edge */
                g_assert_cmpuint(tags, <=, cycles + 4 * slack);
                g_assert_cmpuint(tags + 4 * slack, >=, cycles);
                g_assert_cmpuint(words, <=, cycles + 4 * slack);
                g_assert_cmpuint(words + 4 * slack, >=, cycles);
            }
        }
    }
}

static void test_invariants_and_seeds(void)
{
    for (unsigned gi = 0; gi < ptm_test_ngeos; gi++) {
        PtmConfig cfg;
        uint64_t a[4096] = { 0 }, b[4096] = { 0 }, c[4096] = { 0 };

        ptm_test_make_cfg(&ptm_test_geos[gi], &cfg);
        run_card(&cfg, 7, 2000000, a);
        run_card(&cfg, 7, 2000000, b);
        run_card(&cfg, 8, 2000000, c);
        check_invariants(&cfg, a);
        check_invariants(&cfg, c);
        /* same seed, same counts; another seed, other counts */
        g_assert_cmpmem(a, sizeof(a), b, sizeof(b));
        g_assert_cmpint(memcmp(a, c, sizeof(a)), !=, 0);
    }
}

/* The offered share (words + stall) follows the load parameter. */
static void test_load(void)
{
    PtmConfig cfg;
    uint64_t cnt[64];
    double rq, rc;

    ptm_test_make_cfg(&ptm_test_geos[0], &cfg);
    run_card(&cfg, 3, 5000000, cnt);
    rq = (double)(cnt[1] + cnt[2]) / cnt[0];
    rc = (double)(cnt[9] + cnt[10]) / cnt[0];
    g_test_message("offered: RQ %.3f (load 0.70), RC %.3f (load 0.45)",
                   rq, rc);
    g_assert_cmpfloat(rq, >, 0.63);
    g_assert_cmpfloat(rq, <, 0.77);
    g_assert_cmpfloat(rc, >, 0.40);
    g_assert_cmpfloat(rc, <, 0.50);
}

static void with_model(gconstpointer data)
{
    const void *const *pair = data;

    model = pair[0];
    ((void (*)(void))pair[1])();
}

int main(int argc, char **argv)
{
    static const void *cases[][3] = {
        { &ptm_model_random, test_rules_and_fast_path,
          "/random/rules-and-fast-path" },
        { &ptm_model_random, test_invariants_and_seeds,
          "/random/invariants-and-seeds" },
        { &ptm_model_random, test_load, "/random/load" },
        { &ptm_model_ptc, test_rules_and_fast_path,
          "/ptc/rules-and-fast-path" },
        { &ptm_model_ptc, test_invariants_and_seeds,
          "/ptc/invariants-and-seeds" },
    };

    g_test_init(&argc, &argv, NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_test_add_data_func(cases[i][2], cases[i], with_model);
    }
    return g_test_run();
}
