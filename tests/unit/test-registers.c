/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Register file of the core: values for several generic sets (expected
 * values from FACTS.md or worked out by hand from the layout rules),
 * address decoding, sub-word accesses and the configuration rules.
 */
#include <glib.h>
#include <string.h>

#include "ptm-core.h"

static uint32_t rd(PtmCore *c, uint32_t addr)
{
    return (uint32_t)ptm_core_read(c, 0, addr, 4);
}

typedef struct RegExpect {
    uint32_t off, val;
} RegExpect;

static void check_regs(const PtmConfig *cfg, const RegExpect *exp, size_t n)
{
    PtmCore *c;
    char *err = ptm_config_check(cfg);

    g_assert_null(err);
    c = ptm_core_new(cfg);
    ptm_core_power_on(c, 0);
    for (size_t i = 0; i < n; i++) {
        uint32_t v = rd(c, exp[i].off);

        if (v != exp[i].val) {
            g_error("register 0x%02x: 0x%08x, expected 0x%08x",
                    exp[i].off, v, exp[i].val);
        }
    }
    ptm_core_free(c);
}

/* FACTS.md: "Register values with the defaults" */
static void test_default_registers(void)
{
    static const RegExpect exp[] = {
        { 0x00, 0x50544C4D }, { 0x04, 0x00020000 }, { 0x08, 0x00020101 },
        { 0x0C, 0x30300040 }, { 0x10, 0x0E02021F }, { 0x14, 0x00020211 },
        { 0x18, 0x00041000 }, { 0x1C, 0x00008000 }, { 0x20, 0 },
        { 0x24, 0 }, { 0x28, 0 }, { 0x2C, 0x02020202 },
        { 0x30, 0x00200020 }, { 0x34, 0x00000204 }, { 0x38, 0x04000100 },
        { 0x3C, 0x00200020 },
        /* live registers before the first drain update */
        { 0x40, 0 }, { 0x80, 0x07FF0000 }, { 0xC0, 0xFFFF0000 },
        /* endpoint 1 does not exist */
        { 0x44, 0 }, { 0x84, 0 }, { 0xC4, 0 },
    };
    PtmConfig cfg;

    ptm_config_default(&cfg);
    check_regs(&cfg, exp, G_N_ELEMENTS(exp));
}

/*
 * 2 endpoints, 2 DMA ports: PCIe probe 1 + 2 (6 + 2) + 14 = 31 channels,
 * DMA probe 1 + 2 x 2 (6 + 2) = 33, 64 per endpoint, 128 entries.
 */
static void test_two_by_two(void)
{
    static const RegExpect exp[] = {
        { 0x08, 0x00040202 }, { 0x0C, 0x40300080 }, { 0x10, 0x0E02021F },
        { 0x14, 0x00020421 }, { 0x18, 0x00041000 }, { 0x2C, 0x02020202 },
        { 0x80, 0x07FF0000 }, { 0x84, 0x07FF0000 }, { 0x88, 0 },
    };
    PtmConfig cfg;

    ptm_config_default(&cfg);
    cfg.pcie_endpoints = 2;
    cfg.dma_ports = 2;
    check_regs(&cfg, exp, G_N_ELEMENTS(exp));
}

/*
 * RQ with 4 regions, RC with 2: the PCIe probe is built for 4 regions:
 * 1 + 2 (6 + 4) + 14 = 35 channels; DMA 17; 52 per endpoint; 64 entries.
 * EOF_POS width stays 3 (8 items per 32-byte region).
 */
static void test_rq4_rc2(void)
{
    static const RegExpect exp[] = {
        { 0x08, 0x00020101 }, { 0x0C, 0x34300040 }, { 0x10, 0x0E040223 },
        { 0x14, 0x00020211 }, { 0x2C, 0x02020204 }, { 0x30, 0x00200020 },
    };
    PtmConfig cfg;

    ptm_config_default(&cfg);
    cfg.pcie_rq_mfb_regions = 4;
    check_regs(&cfg, exp, G_N_ELEMENTS(exp));
}

/* 16 endpoints: 16 x 48 = 768 counters in 1024 entries. */
static void test_sixteen(void)
{
    static const RegExpect exp[] = {
        { 0x08, 0x00200110 }, { 0x0C, 0x30300400 }, { 0x7C, 0 },
        { 0xBC, 0x07FF0000 }, { 0xFC, 0xFFFF0000 },
    };
    PtmConfig cfg;

    ptm_config_default(&cfg);
    cfg.pcie_endpoints = 16;
    check_regs(&cfg, exp, G_N_ELEMENTS(exp));
}

/*
 * Other widths: 64-byte RC regions of 8-byte items, CNT_WIDTH 64,
 * DRAIN_PERIOD 1024, capacities 512 / 4096.
 */
static void test_widths(void)
{
    static const RegExpect exp[] = {
        { 0x0C, 0x30400040 }, { 0x18, 0x00080400 }, { 0x30, 0x00400020 },
        { 0x38, 0x10000200 }, { 0x3C, 0x00100020 },
    };
    PtmConfig cfg;

    ptm_config_default(&cfg);
    cfg.mfb_item_bytes = 8;
    cfg.pcie_rq_mfb_region_bytes = 32;      /* 4 items */
    cfg.pcie_rc_mfb_region_bytes = 64;      /* 8 items: width 3 */
    cfg.dma_up_mfb_region_bytes = 32;       /* 4 items: width 2 */
    cfg.dma_down_mfb_region_bytes = 16;
    cfg.pcie_eof_pos_width = 3;
    cfg.dma_eof_pos_width = 2;
    cfg.cnt_width = 64;
    cfg.drain_period = 1024;
    cfg.tag_capacity = 512;
    cfg.stfifo_capacity = 4096;
    check_regs(&cfg, exp, G_N_ELEMENTS(exp));
    /* CNT_WIDTH 64 is 0x40 in CFG_LAYOUT[23:16] */
}

/* FACTS.md: only address bits 7..2 below 0x8000; entry bits and bit 2 in
 * the counter window; byte enables ignored. */
static void test_decoding(void)
{
    PtmConfig cfg;
    PtmCore *c;

    ptm_config_default(&cfg);
    c = ptm_core_new(&cfg);
    ptm_core_power_on(c, 0);
    g_assert_cmphex(rd(c, 0x100), ==, PTM_MAGIC);
    g_assert_cmphex(rd(c, 0x7F04), ==, PTM_VERSION);
    g_assert_cmphex(rd(c, 0x1000 + 0x38), ==, 0x04000100);
    /* sub-word reads pick byte lanes of the word */
    g_assert_cmphex(ptm_core_read(c, 0, 0x00, 1), ==, 0x4D);
    g_assert_cmphex(ptm_core_read(c, 0, 0x01, 1), ==, 0x4C);
    g_assert_cmphex(ptm_core_read(c, 0, 0x02, 2), ==, 0x5054);
    /* a 64-bit read of two registers returns both */
    g_assert_cmphex(ptm_core_read(c, 0, 0x00, 8), ==,
                    (uint64_t)PTM_VERSION << 32 | PTM_MAGIC);
    /* READ_SEL keeps bit 0 only, also through a byte write */
    ptm_core_write(c, 0, 0x28, 0xFFFFFFFF, 4);
    g_assert_cmphex(rd(c, 0x28), ==, 1);
    ptm_core_write(c, 0, 0x28, 0xFFFFFFFE, 4);
    g_assert_cmphex(rd(c, 0x28), ==, 0);
    ptm_core_write(c, 0, 0x28, 0x01, 1);
    g_assert_cmphex(rd(c, 0x28), ==, 1);
    /* a byte written to lane 1 lands in bit 8: READ_SEL stays 0 */
    ptm_core_write(c, 0, 0x28, 0x00, 4);
    ptm_core_write(c, 0, 0x29, 0x01, 1);
    g_assert_cmphex(rd(c, 0x28), ==, 0);
    /* read-only registers ignore writes */
    ptm_core_write(c, 0, 0x00, 0x12345678, 4);
    ptm_core_write(c, 0, 0x0C, 0, 4);
    g_assert_cmphex(rd(c, 0x00), ==, PTM_MAGIC);
    g_assert_cmphex(rd(c, 0x0C), ==, 0x30300040);
    /* counter window aliases every ENTRIES x 8 bytes; entries 48..63 are
     * past the last endpoint and read 0 */
    g_assert_cmphex(rd(c, 0x8000 + 64 * 8), ==, rd(c, 0x8000));
    g_assert_cmphex(rd(c, 0x8000 + 50 * 8), ==, 0);
    g_assert_cmphex(rd(c, 0xFFFC), ==, 0);
    /* writes into the counter window change nothing */
    ptm_core_write(c, 0, 0x8000, 0xFFFFFFFF, 4);
    g_assert_cmphex(rd(c, 0x8000), ==, 0);
    ptm_core_free(c);
}

static void expect_refused(PtmConfig *cfg, const char *prop)
{
    char *err = ptm_config_check(cfg);

    g_assert_nonnull(err);
    if (!strstr(err, prop)) {
        g_error("message '%s' does not name '%s'", err, prop);
    }
    g_free(err);
    ptm_config_default(cfg);
}

static void test_config_rules(void)
{
    PtmConfig cfg;
    char *err;

    ptm_config_default(&cfg);
    g_assert_null(ptm_config_check(&cfg));

    cfg.pcie_endpoints = 0;
    expect_refused(&cfg, "pcie-endpoints");
    cfg.pcie_endpoints = 17;
    expect_refused(&cfg, "pcie-endpoints");
    cfg.cnt_width = 32;
    expect_refused(&cfg, "cnt-width");
    cfg.cnt_width = 65;
    expect_refused(&cfg, "cnt-width");
    cfg.drain_period = 3000;
    expect_refused(&cfg, "drain-period");
    cfg.drain_period = 65536;           /* would read 0 in CFG_DRAIN */
    expect_refused(&cfg, "drain-period");
    cfg.drain_period = 32;              /* firmware needs more than 8 (G+1) */
    expect_refused(&cfg, "drain-period");
    cfg.pcie_eof_pos_width = 4;
    expect_refused(&cfg, "pcie-eof-pos-width");
    cfg.dma_eof_pos_width = 2;
    expect_refused(&cfg, "dma-eof-pos-width");
    cfg.pcie_rq_mfb_region_bytes = 30;
    expect_refused(&cfg, "pcie-rq-mfb-region-bytes");
    cfg.dma_ports = 14;                 /* 31 + 1 + 28 x 8 = 256 channels */
    expect_refused(&cfg, "dma-ports");
    cfg.tag_capacity = 0;
    expect_refused(&cfg, "tag-capacity");
    cfg.mi_clk_hz = 0;
    expect_refused(&cfg, "mi-clk-freq");

    /* the smallest legal drain period for the default probes is 64 */
    cfg.drain_period = 64;
    g_assert_null(ptm_config_check(&cfg));
    /* 16 endpoints x 4 DMA ports: 31 + 65 = 96 channels, 2048 entries */
    cfg.pcie_endpoints = 16;
    cfg.dma_ports = 4;
    cfg.drain_period = 4096;
    err = ptm_config_check(&cfg);
    g_assert_null(err);
    /* 16 x 13 ports: 31 + 209 = 240 channels, 3840 counters in 4096
     * entries: the window of 0x8000 bytes is full but fits */
    cfg.dma_ports = 13;
    err = ptm_config_check(&cfg);
    g_assert_null(err);
    /* 13 ports with 3 regions per DMA bus: 31 + 1 + 26 x 9 = 266 */
    cfg.dma_up_mfb_regions = 3;
    expect_refused(&cfg, "dma-ports");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/registers/default", test_default_registers);
    g_test_add_func("/registers/two-endpoints-two-ports", test_two_by_two);
    g_test_add_func("/registers/rq4-rc2", test_rq4_rc2);
    g_test_add_func("/registers/sixteen-endpoints", test_sixteen);
    g_test_add_func("/registers/widths", test_widths);
    g_test_add_func("/registers/decoding", test_decoding);
    g_test_add_func("/registers/config-rules", test_config_rules);
    return g_test_run();
}
