/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sizing check of a configuration (ptm_config_sizing), against the
 * load formula with the channel counts written out and against cards that
 * are read the way the tool reads them: SNAPSHOTs at random moments, the
 * lost-delta flag in STATUS watched.
 */
#include <glib.h>

#include "ptm-sizing.h"

/*
 * Whether a card of cfg shows the lost-delta flag within `readings`
 * SNAPSHOTs at random moments 0.5 to 1.5 ms apart (a fast watch of the
 * tool; none: only the flag after a stretch without commands).
 */
static bool reads_lose(const PtmConfig *cfg, unsigned readings,
                       uint32_t seed)
{
    PtmCore *core = ptm_core_new(cfg);
    GRand *rnd = g_rand_new_with_seed(seed);
    uint64_t t = 1000000;
    bool lost = false;

    g_assert_null(ptm_config_check(cfg));
    ptm_core_power_on(core, 0);
    for (unsigned i = 0; i <= readings && !lost; i++) {
        lost = ptm_core_read(core, t, PTM_REG_STATUS, 4) & PTM_STATUS_LOST;
        if (i < readings) {
            ptm_core_write(core, t, PTM_REG_COMMAND, PTM_CMD_SNAPSHOT, 4);
        }
        t += g_rand_int_range(rnd, 500000, 1500000);
    }
    g_rand_free(rnd);
    ptm_core_free(core);
    return lost;
}

static void test_load_formula(void)
{
    PtmConfig cfg;

    ptm_config_default(&cfg);
    cfg.drain_period = 1024;
    cfg.pcie_endpoints = 3;
    /* 31 PCIe and 17 DMA channels with one DMA port, two regions */
    g_assert_cmpfloat_with_epsilon(ptm_config_load(&cfg),
                                   3 * 3 * (31 * 400e6 + 17 * 200e6) /
                                   (1024 * 100e6), 1e-12);
    ptm_config_default(&cfg);
    cfg.pcie_endpoints = 16;
    cfg.dma_ports = 4;
    /* 1 + 2 x 4 x (6 + 2) = 65 DMA channels */
    g_assert_cmpfloat_with_epsilon(ptm_config_load(&cfg),
                                   16 * 3 * (31 * 400e6 + 65 * 200e6) /
                                   (4096 * 100e6), 1e-12);
}

static void test_defaults_keep_up(void)
{
    PtmConfig cfg;
    PtmSizing sz;

    ptm_config_default(&cfg);
    ptm_config_sizing(&cfg, &sz);
    g_assert_false(sz.steady_loss);
    g_assert_false(sz.pause_loss);
    g_assert_cmpuint(sz.safe_drain_period, ==, 0);
    g_assert_false(reads_lose(&cfg, 200, 1));
}

static void test_overloaded(void)
{
    PtmConfig cfg, safe;
    PtmSizing sz;

    ptm_config_default(&cfg);
    cfg.pcie_endpoints = 16;
    cfg.dma_ports = 4;
    ptm_config_sizing(&cfg, &sz);
    g_assert_cmpfloat(sz.load, >, 1);
    g_assert_true(sz.steady_loss);
    g_assert_true(reads_lose(&cfg, 0, 2));
    /* the suggestion keeps up under readings; half of it does not */
    g_assert_cmpuint(sz.safe_drain_period, >, cfg.drain_period);
    safe = cfg;
    safe.drain_period = sz.safe_drain_period;
    g_assert_false(reads_lose(&safe, 200, 3));
    safe.drain_period /= 2;
    g_assert_true(reads_lose(&safe, 200, 4));
}

/* Load 0.93: it keeps up until a SNAPSHOT pauses the accumulator. */
static void test_pause_overflows(void)
{
    PtmConfig cfg, safe;
    PtmSizing sz;

    ptm_config_default(&cfg);
    cfg.pcie_endpoints = 2;
    cfg.drain_period = 1024;
    ptm_config_sizing(&cfg, &sz);
    g_assert_cmpfloat(sz.load, <, 1);
    g_assert_false(sz.steady_loss);
    g_assert_true(sz.pause_loss);
    g_assert_false(reads_lose(&cfg, 0, 5));
    g_assert_true(reads_lose(&cfg, 100, 6));
    safe = cfg;
    safe.drain_period = sz.safe_drain_period;
    g_assert_cmpuint(safe.drain_period, >, cfg.drain_period);
    g_assert_false(reads_lose(&safe, 100, 7));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sizing/load-formula", test_load_formula);
    g_test_add_func("/sizing/defaults-keep-up", test_defaults_keep_up);
    g_test_add_func("/sizing/overloaded", test_overloaded);
    g_test_add_func("/sizing/pause-overflows", test_pause_overflows);
    return g_test_run();
}
