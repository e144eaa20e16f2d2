/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ptc generator's claims, checked on the counters of a default card:
 * "no free PCIe tag" covers every cycle in the lowest tag band, RD % is the
 * read share, Avg B is the request and completion size, the completions
 * that come back on RC go down on DOWN, no bus exceeds its capacity; with
 * its defaults, with a tag-starved pool and with an ample one.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "ptm-core.h"
#include "ptm-ptc.h"
#include "ptm-scenario.h"

/* Channels of the default card (2 regions, 1 DMA port) */
#define PCIE(b, k)  (1 + (b) * 8 + (k))
#define DMA(b, k)   (31 + 1 + (b) * 8 + (k))
enum { WORDS, STALL, SOF, MVB, MVBSTALL, ITEMS, REG0, REG1 };
#define BRAKE(k)    (17 + (k))
#define TAGBAND(j)  (23 + (j))

static bool memo = true;

static void run(const PtmPtcParams *p, uint64_t ns, uint64_t *cnt)
{
    PtmSettings set = { .mps = 1, .mrrs = 2, .ext_tag = true };
    PtmConfig cfg;
    PtmCore *core;
    PtmGeometry geo;
    PtmGen *g;
    char *err = NULL;

    ptm_config_default(&cfg);
    core = ptm_core_new(&cfg);
    ptm_core_geometry(core, &geo);
    g = ptm_gen_new(&ptm_model_ptc, p, &geo, &err);
    g_assert_null(err);
    ptm_core_set_source(core, &ptm_gen_source_ops, g);
    ptm_core_set_memo(core, memo);
    ptm_core_power_on(core, 0);
    ptm_core_set_settings(core, 0, 0, &set);      /* MPS 256, MRRS 512 */
    for (uint64_t t = 0; t <= ns; t += 100000) {
        ptm_core_advance(core, t);
    }
    for (unsigned e = 0; e < 64; e++) {
        cnt[e] = ptm_core_counter(core, false, e);
    }
    ptm_core_free(core);
    ptm_gen_free(g);
}

/* bytes are those of sof frames of size each, but for one cut frame */
/*
 * The items of sof frames of `size` bytes. The item channel closes its
 * windows up to 15 cycles after the SOF channel (channels are read out
 * slot by slot), so it may hold up to 15 words (64 bytes each) more; and
 * the last frame may be cut.
 */
static bool same_frames(uint64_t bytes, uint64_t size, uint64_t sof)
{
    const uint64_t slack = 15 * 64;

    return bytes <= size * sof + slack && bytes + size + slack > size * sof;
}

static void check_claims(const PtmPtcParams *p, const uint64_t *c)
{
    uint64_t cyc = c[0], dcyc = c[31];
    double rd;

    /* a read waits whenever fewer tags are free than it needs: every
     * cycle with no free tag is a cycle of reason 0 */
    g_assert_cmpuint(c[BRAKE(0)], >=, c[TAGBAND(0)]);
    /* RD % of the UP bus: (MVB items - SOF) / MVB items */
    rd = 100.0 * (c[DMA(0, MVB)] - c[DMA(0, SOF)]) / c[DMA(0, MVB)];
    g_test_message("RD %.2f %% for read-percent %u", rd, p->read_percent);
    g_assert_cmpfloat(rd, >, p->read_percent - 2.0);
    g_assert_cmpfloat(rd, <, p->read_percent + 2.0);
    /* Avg B: a write frame on UP carries write-bytes; a completion of
     * MPS (256) bytes goes down on DOWN, with a 12-byte header on RC. The
     * last window's edge may cut one frame: its SOF counted, not all of
     * its items yet. */
    g_assert_true(same_frames(c[DMA(0, ITEMS)] * 4, p->write_bytes,
                              c[DMA(0, SOF)]));
    g_assert_true(same_frames(c[DMA(1, ITEMS)] * 4, 256, c[DMA(1, SOF)]));
    g_assert_true(same_frames(c[PCIE(1, ITEMS)] * 4, 256 + 12,
                              c[PCIE(1, SOF)]));
    /* every completion on RC goes down on DOWN, with its MVB header;
     * they may differ by what is in flight at a window's edge */
    /* (the MVB channel's window ends 4 cycles after the SOF channel's, at
     * most 2 items a cycle) */
    g_assert_cmpuint(c[DMA(1, MVB)], >=, c[DMA(1, SOF)]);
    g_assert_cmpuint(c[DMA(1, MVB)], <=, c[DMA(1, SOF)] + 4 * 2);
    g_assert_cmpfloat((double)c[DMA(1, SOF)], >, 0.98 * c[PCIE(1, SOF)]);
    g_assert_cmpfloat((double)c[DMA(1, SOF)], <, 1.02 * c[PCIE(1, SOF)]);
    /* no bus beyond its capacity: 16 items a cycle */
    for (unsigned b = 0; b < 2; b++) {
        g_assert_cmpuint(c[PCIE(b, WORDS)] + c[PCIE(b, STALL)], <=, cyc);
        g_assert_cmpuint(c[PCIE(b, ITEMS)], <=, 16 * cyc);
        g_assert_cmpuint(c[DMA(b, WORDS)] + c[DMA(b, STALL)], <=, dcyc);
        g_assert_cmpuint(c[DMA(b, ITEMS)], <=, 16 * dcyc);
    }
    /* the PCIe side has no MVB */
    g_assert_cmpuint(c[PCIE(0, MVB)] + c[PCIE(1, MVB)], ==, 0);
}

static void test_defaults(void)
{
    PtmPtcParams p;
    uint64_t c[64];

    ptm_ptc_params_default(&p);
    run(&p, 5000000, c);
    check_claims(&p, c);
    /* the defaults starve the tags now and then */
    g_assert_cmpuint(c[BRAKE(0)], >, 0);
    /* DOWN is held by the DMA side: reason 4 before its stall shows */
    g_assert_cmpuint(c[BRAKE(4)], >, 0);
    g_assert_cmpfloat((double)c[BRAKE(4)] / c[0], >=,
                      (double)c[DMA(1, STALL)] / c[31]);
}

static void test_tag_starved(void)
{
    PtmPtcParams p;
    uint64_t c[64];

    ptm_ptc_params_default(&p);
    p.tags = 16;
    run(&p, 5000000, c);
    check_claims(&p, c);
    g_assert_cmpuint(c[TAGBAND(0)], >, 0);
    g_assert_cmpfloat((double)c[BRAKE(0)] / c[0], >, 0.10);
    /* with 16 of 256 tags at most, free tags never leave the low bands */
    g_assert_cmpuint(c[TAGBAND(2)] + c[TAGBAND(3)], ==, 0);
}

static void test_ample_tags(void)
{
    PtmPtcParams p;
    uint64_t c[64];

    ptm_ptc_params_default(&p);
    p.tags = 0;                 /* the card's 256 */
    p.latency_ns = 500;
    run(&p, 5000000, c);
    check_claims(&p, c);
    g_assert_cmpuint(c[BRAKE(0)], ==, 0);
    g_assert_cmpuint(c[TAGBAND(0)], ==, 0);
}

static void test_same_seed(void)
{
    PtmPtcParams p;
    uint64_t a[64], b[64], d[64];

    ptm_ptc_params_default(&p);
    run(&p, 1000000, a);
    run(&p, 1000000, b);
    p.seed = 2;
    run(&p, 1000000, d);
    g_assert_cmpmem(a, sizeof(a), b, sizeof(b));
    g_assert_cmpint(memcmp(a, d, sizeof(a)), !=, 0);
}

/* Reusing the counts of named segment lists changes no count. */
static void test_memo_exact(void)
{
    PtmPtcParams p;
    uint64_t a[64], b[64];

    ptm_ptc_params_default(&p);
    memo = false;
    run(&p, 3000000, a);
    memo = true;
    run(&p, 3000000, b);
    g_assert_cmpmem(a, sizeof(a), b, sizeof(b));
}

/*
 * Two ptc phases of a scenario are two generators whose schedules have
 * the same build numbers: the names of their segment lists must still
 * differ, or reused counts would be wrong.
 */
static void run_scenario(const char *file, bool use_memo, uint64_t *cnt)
{
    PtmScenarioParams sp = { .loop = true };
    PtmConfig cfg;
    PtmCore *core;
    PtmGeometry geo;
    PtmGen *g;
    char *err = NULL;

    g_strlcpy(sp.file, file, sizeof(sp.file));
    ptm_config_default(&cfg);
    core = ptm_core_new(&cfg);
    ptm_core_geometry(core, &geo);
    g = ptm_gen_new(&ptm_model_scenario, &sp, &geo, &err);
    g_assert_null(err);
    ptm_core_set_source(core, &ptm_gen_source_ops, g);
    ptm_core_set_memo(core, use_memo);
    ptm_core_power_on(core, 0);
    for (uint64_t t = 0; t <= 3000000; t += 77777) {
        ptm_core_advance(core, t);
    }
    for (unsigned e = 0; e < 64; e++) {
        cnt[e] = ptm_core_counter(core, false, e);
    }
    ptm_core_free(core);
    ptm_gen_free(g);
}

static void test_memo_two_generators(void)
{
    g_autofree char *dir = g_dir_make_tmp("ptc-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "two.ini", NULL);
    uint64_t a[64], b[64];

    g_assert_true(g_file_set_contents(file,
        "[phase a]\nmodel=ptc\nduration=200us\nload=90\n"
        "[phase b]\nmodel=ptc\nduration=200us\nload=30\n"
        "read-percent=80\ntags=8\n", -1, NULL));
    run_scenario(file, false, a);
    run_scenario(file, true, b);
    g_assert_cmpmem(a, sizeof(a), b, sizeof(b));
    g_unlink(file);
    g_rmdir(dir);
}

/*
 * Naming a range at once (span_ids) gives the pieces span_id gives one
 * after another, under one version of the parameters and across a change,
 * in both domains and for every endpoint; a range of more pieces than
 * asked for gets none.
 */
static void test_span_ids(void)
{
    const PtmSourceOps *ops = &ptm_gen_source_ops;
    PtmConfig cfg;
    PtmCore *core;
    PtmGeometry geo;
    PtmPtcParams p;
    PtmGen *g;
    char *err = NULL;
    GRand *r = g_rand_new_with_seed(7);
    unsigned checked = 0, refused = 0;

    ptm_config_default(&cfg);
    cfg.pcie_endpoints = 2;
    core = ptm_core_new(&cfg);
    ptm_core_geometry(core, &geo);
    ptm_ptc_params_default(&p);
    g = ptm_gen_new(&ptm_model_ptc, &p, &geo, &err);
    g_assert_null(err);
    p.load = 40;
    p.seed = 9;
    /* a second version from PCIe cycle 3 000 000 on */
    g_assert_null(ptm_gen_set_params(g, &p, 3000000, 0));
    for (unsigned i = 0; i < 4000; i++) {
        PtmProbeInfo info = {
            .endpoint = g_rand_int_range(r, 0, 2),
            .domain = g_rand_boolean(r) ? PTM_DOMAIN_PCIE : PTM_DOMAIN_DMA,
            .settings = { .mps = 1, .mrrs = 2, .ext_tag = true },
        };
        uint64_t ids[8], lens[8], want[9], wlen[9];
        uint64_t start, end, a;
        unsigned n, k = 0, max = g_rand_int_range(r, 1, 9);

        info.hz = info.domain == PTM_DOMAIN_PCIE ? geo.pcie_hz : geo.dma_hz;
        start = g_rand_int_range(r, 0, 6000000);
        end = start + g_rand_int_range(r, 1, 4 * geo.drain_period);
        for (a = start; a < end && k < 9; k++) {
            want[k] = ops->span_id(g, &info, a, end - a, &wlen[k]);
            g_assert_cmpuint(want[k], !=, 0);
            g_assert_cmpuint(wlen[k], >=, 1);
            g_assert_cmpuint(wlen[k], <=, end - a);
            a += wlen[k];
        }
        n = ops->span_ids(g, &info, start, end, ids, lens, max);
        if (a < end || k > max) {
            g_assert_cmpuint(n, ==, 0);
            refused++;
            continue;
        }
        g_assert_cmpuint(n, ==, k);
        for (unsigned j = 0; j < n; j++) {
            g_assert_cmpuint(ids[j], ==, want[j]);
            g_assert_cmpuint(lens[j], ==, wlen[j]);
        }
        checked++;
    }
    /* both outcomes were tried */
    g_assert_cmpuint(checked, >, 1000);
    g_assert_cmpuint(refused, >, 100);
    g_rand_free(r);
    ptm_gen_free(g);
    ptm_core_free(core);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ptc/claims-defaults", test_defaults);
    g_test_add_func("/ptc/claims-tag-starved", test_tag_starved);
    g_test_add_func("/ptc/claims-ample-tags", test_ample_tags);
    g_test_add_func("/ptc/same-seed", test_same_seed);
    g_test_add_func("/ptc/memo-exact", test_memo_exact);
    g_test_add_func("/ptc/memo-two-generators", test_memo_two_generators);
    g_test_add_func("/ptc/span-ids", test_span_ids);
    return g_test_run();
}
