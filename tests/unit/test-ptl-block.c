/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libpcie-telemetry against the QEMU-free core: layout decoding, readings
 * (READ_SEL, BUSY, BAR accesses, a vanished card), commands, differences
 * with wrap-around, and decoding into the data model. Expected values come
 * from FACTS.md and from the closed form of the test pattern
 * (test-ptl-support.h), worked out by hand in the comments.
 */
#include <glib.h>
#include <string.h>

#include "test-ptl-support.h"
#include "test-support.h"

static void check_default_layout(const ptl_layout *l)
{
    /* FACTS.md, "Register values with the defaults" decoded by hand */
    g_assert_cmphex(l->magic, ==, 0x50544C4D);
    g_assert_cmphex(l->version, ==, 0x00020000);
    g_assert_cmpuint(l->endpoints, ==, 1);
    g_assert_cmpuint(l->dma_ports, ==, 1);
    g_assert_cmpuint(l->probes, ==, 2);
    g_assert_cmpuint(l->entries, ==, 64);
    g_assert_cmpuint(l->cnt_width, ==, 48);
    g_assert_cmpuint(l->per_endpoint, ==, 48);
    g_assert_cmpuint(l->pcie_channels, ==, 31);
    g_assert_cmpuint(l->pcie_buses, ==, 2);
    g_assert_cmpuint(l->pcie_regions, ==, 2);
    g_assert_cmpuint(l->pcie_brakes, ==, 14);
    g_assert_cmpuint(l->dma_channels, ==, 17);
    g_assert_cmpuint(l->dma_buses, ==, 2);
    g_assert_cmpuint(l->dma_regions, ==, 2);
    g_assert_cmpuint(l->dma_brakes, ==, 0);
    g_assert_cmpuint(l->drain_period, ==, 4096);
    g_assert_cmpuint(l->item_bytes, ==, 4);
    g_assert_cmphex(l->cnt_base, ==, 0x8000);
    g_assert_cmpuint(l->rq_regions, ==, 2);
    g_assert_cmpuint(l->rc_regions, ==, 2);
    g_assert_cmpuint(l->up_regions, ==, 2);
    g_assert_cmpuint(l->down_regions, ==, 2);
    g_assert_cmpuint(l->rq_bytes, ==, 32);
    g_assert_cmpuint(l->rc_bytes, ==, 32);
    g_assert_cmpuint(l->up_bytes, ==, 32);
    g_assert_cmpuint(l->down_bytes, ==, 32);
    g_assert_cmpuint(l->hist_bands, ==, 4);
    g_assert_cmpuint(l->pcie_hists, ==, 2);
    g_assert_cmpuint(l->dma_hists, ==, 0);
    g_assert_cmpuint(l->tag_capacity, ==, 256);
    g_assert_cmpuint(l->stfifo_capacity, ==, 1024);
    g_assert_cmpuint(l->brake_reasons, ==, 6);
}

static void test_layout_default(void)
{
    PtmConfig cfg;
    PtlBench *b;
    ptl_block *blk;

    ptm_config_default(&cfg);
    b = ptl_bench_new(&cfg, NULL);
    blk = ptl_bench_open(b);
    check_default_layout(ptl_block_layout(blk));
    ptl_block_close(blk);
    ptl_bench_free(b);
}

/* 2 endpoints, 2 DMA ports, 4 RQ regions (ptm_test_geos[1]) */
static void test_layout_two_endpoints(void)
{
    PtmConfig cfg;
    PtlBench *b;
    ptl_block *blk;
    const ptl_layout *l;

    ptm_test_make_cfg(&ptm_test_geos[1], &cfg);
    b = ptl_bench_new(&cfg, NULL);
    blk = ptl_bench_open(b);
    l = ptl_block_layout(blk);
    /* PCIe probe R = 4: 1 + 2 (6 + 4) + 14 = 35; DMA probe R = 2, 2 ports:
     * 1 + 4 (6 + 2) = 33; 68 per endpoint, 136 -> 256 entries */
    g_assert_cmpuint(l->endpoints, ==, 2);
    g_assert_cmpuint(l->dma_ports, ==, 2);
    g_assert_cmpuint(l->probes, ==, 4);
    g_assert_cmpuint(l->pcie_channels, ==, 35);
    g_assert_cmpuint(l->pcie_regions, ==, 4);
    g_assert_cmpuint(l->dma_channels, ==, 33);
    g_assert_cmpuint(l->dma_buses, ==, 4);
    g_assert_cmpuint(l->dma_regions, ==, 2);
    g_assert_cmpuint(l->per_endpoint, ==, 68);
    g_assert_cmpuint(l->entries, ==, 256);
    g_assert_cmpuint(l->rq_regions, ==, 4);
    g_assert_cmpuint(l->rc_regions, ==, 2);
    g_assert_cmpuint(l->up_regions, ==, 2);
    g_assert_cmpuint(l->down_regions, ==, 2);
    g_assert_cmpuint(l->brake_reasons, ==, 6);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

static ptl_err open_err(PtlBench *b, ptl_error *err)
{
    ptl_block *blk = (ptl_block *)b;     /* must be reset to NULL */
    ptl_err rc;

    memset(err, 0, sizeof(*err));
    rc = ptl_block_open(&ptl_bench_ops, b, &blk, err);
    if (rc) {
        g_assert_null(blk);
        g_assert_cmpint(err->code, ==, rc);
        g_assert_cmpuint(strlen(err->msg), >, 0);
        g_assert_null(strchr(err->msg, '\n'));
    } else {
        ptl_block_close(blk);
    }
    return rc;
}

static void test_open_errors(void)
{
    PtmConfig cfg;
    PtlBench *b;
    ptl_error err;
    ptl_block *blk;

    ptm_config_default(&cfg);

    b = ptl_bench_new(&cfg, NULL);
    ptl_bench_override(b, PTM_REG_MAGIC, 0x12345678);
    g_assert_cmpint(open_err(b, &err), ==, PTL_E_MAGIC);
    g_assert_nonnull(strstr(err.msg, "0x12345678"));
    ptl_bench_free(b);

    b = ptl_bench_new(&cfg, NULL);
    ptl_bench_override(b, PTM_REG_VERSION, 0x00030001);
    g_assert_cmpint(open_err(b, &err), ==, PTL_E_VERSION);
    g_assert_nonnull(strstr(err.msg, "3.1"));
    g_assert_nonnull(strstr(err.msg, "major 2"));
    ptl_bench_free(b);

    /* another minor version is fine */
    b = ptl_bench_new(&cfg, NULL);
    ptl_bench_override(b, PTM_REG_VERSION, 0x00020007);
    g_assert_cmpint(open_err(b, &err), ==, PTL_OK);
    ptl_bench_free(b);

    /* a card that reads all ones */
    b = ptl_bench_new(&cfg, NULL);
    b->gone_after = 0;
    g_assert_cmpint(open_err(b, &err), ==, PTL_E_GONE);
    g_assert_nonnull(strstr(err.msg, "not responding"));
    ptl_bench_free(b);

    /* a counter window that leaves the 64 KiB block: 64 x 8 from 0xFF00 */
    b = ptl_bench_new(&cfg, NULL);
    ptl_bench_override(b, PTM_REG_CNT_BASE, 0xFF00);
    g_assert_cmpint(open_err(b, &err), ==, PTL_E_BAR);
    ptl_bench_free(b);

    /* 32 entries cannot hold the 48 counters of the endpoint */
    b = ptl_bench_new(&cfg, NULL);
    ptl_bench_override(b, PTM_REG_CFG_LAYOUT, 0x30300020);
    g_assert_cmpint(open_err(b, &err), ==, PTL_E_INTERNAL);
    ptl_bench_free(b);

    /* CFG_PCIE claims 30 channels where the buses need 31 */
    b = ptl_bench_new(&cfg, NULL);
    ptl_bench_override(b, PTM_REG_CFG_PCIE, 0x0E02021E);
    g_assert_cmpint(open_err(b, &err), ==, PTL_E_INTERNAL);
    ptl_bench_free(b);

    /* CFG_DRAIN 0 is 65536 */
    b = ptl_bench_new(&cfg, NULL);
    ptl_bench_override(b, PTM_REG_CFG_DRAIN, 0x00040000);
    g_assert_cmpint(ptl_block_open(&ptl_bench_ops, b, &blk, NULL), ==,
                    PTL_OK);
    g_assert_cmpuint(ptl_block_layout(blk)->drain_period, ==, 65536);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

/* Raw counters of the default card over c PCIe and d DMA cycles of the test
 * pattern, by channel number (FACTS.md numbering). */
static void expected_default(uint64_t c, uint64_t d, uint64_t *x)
{
    const uint64_t exp[48] = {
        c,
        /* RQ: period 8 = 2 stalled, 4 words, 2 idle; 50 items in 7
         * regions: 4 in region 0, 3 in region 1 */
        c / 2, c / 4, c / 8, 0, 0, 50 * c / 8, c / 2, 3 * c / 8,
        /* RC: one word of both regions every 8 cycles, 16 items */
        c / 8, 0, c / 8, 0, 0, 2 * c, c / 8, c / 8,
        /* BRAKE 0 and 2 on a quarter of the cycles */
        c / 4, 0, c / 4, 0, 0, 0,
        /* 20 free tags of 256: band 1; 700 of 1024 words: band 3 */
        0, c, 0, 0,
        0, 0, 0, c,
        d,
        /* UP: period 8 = 1 stalled (MFB and MVB), 2 words, 5 idle; 2 MVB
         * items and 32 MFB items in 4 regions per frame */
        d / 4, d / 8, d / 8, d / 4, d / 8, 4 * d, d / 4, d / 4,
        /* DOWN: one word of region 0 every 8 cycles, 8 items, 1 MVB item */
        d / 8, 0, d / 8, d / 8, 0, d, d / 8, 0,
    };

    memcpy(x, exp, sizeof(exp));
}

static PtlBench *pattern_bench(void)
{
    PtmConfig cfg;
    PtmPatternParams par;

    ptm_config_default(&cfg);
    ptl_test_pattern(&par);
    return ptl_bench_new(&cfg, &par);
}

static ptl_reading *read_at(PtlBench *b, ptl_block *blk, uint64_t t)
{
    ptl_reading *r = ptl_reading_new(ptl_block_layout(blk));
    ptl_error err;

    ptl_bench_at(b, t);
    if (ptl_block_read(blk, r, &err)) {
        g_error("ptl_block_read: %s", err.msg);
    }
    return r;
}

static void test_read_diff_pattern(void)
{
    PtlBench *b = pattern_bench();
    ptl_block *blk = ptl_bench_open(b);
    ptl_reading *r1 = read_at(b, blk, PTL_T_FIRST);
    ptl_reading *r2 = read_at(b, blk, PTL_T_SECOND);
    uint64_t t1 = r1->t_ns, t2 = r2->t_ns, exp[48];

    /* READ_SEL at t, SNAPSHOT between t + 100 and t + 200 */
    g_assert_cmpuint(t1, ==, PTL_T_FIRST + 150);
    g_assert_cmpuint(t2, ==, PTL_T_SECOND + 150);
    ptl_reading_diff(ptl_block_layout(blk), r1, r2, r2);
    expected_default(PTL_PCIE_CYC, PTL_DMA_CYC, exp);
    for (unsigned i = 0; i < 48; i++) {
        if (r2->counters[i] != exp[i]) {
            g_error("counter %u: %" G_GUINT64_FORMAT ", expected %"
                    G_GUINT64_FORMAT, i, r2->counters[i], exp[i]);
        }
    }
    for (unsigned i = 48; i < 64; i++) {
        g_assert_cmpuint(r2->counters[i], ==, 0);
    }
    /* 20 tags and 700 words, now and lowest; link up */
    g_assert_cmphex(r2->tags[0], ==, 20 << 16 | 20);
    g_assert_cmphex(r2->stfifo[0], ==, 700 << 16 | 700);
    g_assert_cmphex(r2->pcie_status[0] & (1 << 9), ==, 1 << 9);
    g_assert_cmpuint(r2->status, ==, 0);
    ptl_reading_free(r1);
    ptl_reading_free(r2);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

/* The decoded data model of the same interval. */
static void test_decode_pattern(void)
{
    PtlBench *b = pattern_bench();
    ptl_block *blk = ptl_bench_open(b);
    const ptl_layout *l = ptl_block_layout(blk);
    ptl_reading *r1, *r2;
    PtmSettings s = { .mps = 2, .mrrs = 5, .ext_tag = true };
    const uint64_t c = PTL_PCIE_CYC, d = PTL_DMA_CYC;
    ptl_data *dt;
    const ptl_endpoint *ep;
    const ptl_bus *bus;

    ptm_core_set_settings(b->core, 0, 0, &s);
    r1 = read_at(b, blk, PTL_T_FIRST);
    r2 = read_at(b, blk, PTL_T_SECOND);
    ptl_reading_diff(l, r1, r2, r2);
    dt = ptl_data_decode(l, r2);
    g_assert_nonnull(dt);
    g_assert_false(dt->busy || dt->lost_deltas || dt->readout_overrun);
    g_assert_cmpuint(dt->config.entries, ==, 64);
    g_assert_cmpuint(dt->nendpoints, ==, 1);
    ep = &dt->endpoints[0];
    g_assert_cmpuint(ep->index, ==, 0);
    g_assert_true(ep->link_up);
    g_assert_cmpuint(ep->mps, ==, 512);
    g_assert_cmpuint(ep->mrrs, ==, 4096);
    g_assert_true(ep->ext_tag);
    g_assert_false(ep->tag_10b);
    g_assert_cmpuint(ep->rcb, ==, 64);
    g_assert_cmpuint(ep->tags_free, ==, 20);
    g_assert_cmpuint(ep->tags_free_min, ==, 20);
    g_assert_cmpuint(ep->stfifo_free, ==, 700);
    g_assert_cmpuint(ep->stfifo_free_min, ==, 700);
    g_assert_cmpuint(ep->pcie_cycles, ==, c);
    g_assert_cmpuint(ep->dma_cycles, ==, d);
    g_assert_cmpuint(ep->nbrakes, ==, 6);
    g_assert_cmpuint(ep->brakes[0], ==, c / 4);
    g_assert_cmpuint(ep->brakes[1], ==, 0);
    g_assert_cmpuint(ep->brakes[2], ==, c / 4);
    g_assert_cmpuint(ep->brakes[5], ==, 0);
    g_assert_cmpuint(ep->nhists, ==, 2);
    g_assert_cmpuint(ep->nbands, ==, 4);
    g_assert_cmpuint(ep->hists[1], ==, c);
    g_assert_cmpuint(ep->hists[4 + 3], ==, c);
    g_assert_cmpuint(ep->hists[0] + ep->hists[2] + ep->hists[3], ==, 0);
    g_assert_cmpuint(ep->nbuses, ==, 4);

    bus = &ep->buses[0];
    g_assert_cmpstr(bus->name, ==, "PTC -> PCIe (RQ)");
    g_assert_cmpint(bus->kind, ==, PTL_BUS_RQ);
    g_assert_true(bus->pcie_clk && !bus->has_mvb && !bus->dma_up);
    g_assert_cmpuint(bus->words, ==, c / 2);
    g_assert_cmpuint(bus->backpressure, ==, c / 4);
    g_assert_cmpuint(bus->transactions, ==, c / 8);
    g_assert_cmpuint(bus->items, ==, 50 * c / 8);
    g_assert_cmpuint(bus->nregions, ==, 2);
    g_assert_cmpuint(bus->regions[0], ==, c / 2);
    g_assert_cmpuint(bus->regions[1], ==, 3 * c / 8);
    g_assert_cmpuint(bus->region_bytes, ==, 32);

    bus = &ep->buses[1];
    g_assert_cmpstr(bus->name, ==, "PCIe -> PTC (RC)");
    g_assert_cmpint(bus->kind, ==, PTL_BUS_RC);
    g_assert_true(bus->pcie_clk && !bus->has_mvb && !bus->dma_up);
    g_assert_cmpuint(bus->items, ==, 2 * c);

    bus = &ep->buses[2];
    g_assert_cmpstr(bus->name, ==, "DMA0 -> PTC (UP)");
    g_assert_cmpint(bus->kind, ==, PTL_BUS_UP);
    g_assert_cmpuint(bus->port, ==, 0);
    g_assert_true(!bus->pcie_clk && bus->has_mvb && bus->dma_up);
    g_assert_cmpuint(bus->mvb, ==, d / 4);
    g_assert_cmpuint(bus->mvb_backpressure, ==, d / 8);
    g_assert_cmpuint(bus->transactions, ==, d / 8);

    bus = &ep->buses[3];
    g_assert_cmpstr(bus->name, ==, "PTC -> DMA0 (DOWN)");
    g_assert_cmpint(bus->kind, ==, PTL_BUS_DOWN);
    g_assert_true(!bus->pcie_clk && bus->has_mvb && !bus->dma_up);
    g_assert_cmpuint(bus->items, ==, d);
    g_assert_cmpuint(bus->regions[0], ==, d / 8);
    g_assert_cmpuint(bus->regions[1], ==, 0);

    ptl_data_free(dt);
    ptl_reading_free(r1);
    ptl_reading_free(r2);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

/*
 * 2 endpoints, 2 ports, 4 RQ regions: RQ's 200 B frames are 7 regions in 2
 * words of 4 (regions 0-2 twice, region 3 once per frame); every endpoint
 * and port sees the same traffic.
 */
static void test_decode_two_endpoints(void)
{
    PtmConfig cfg;
    PtmPatternParams par;
    PtlBench *b;
    ptl_block *blk;
    const ptl_layout *l;
    ptl_reading *r1, *r2;
    ptl_data *dt;
    static const char *const names[6] = {
        "PTC -> PCIe (RQ)", "PCIe -> PTC (RC)", "DMA0 -> PTC (UP)",
        "PTC -> DMA0 (DOWN)", "DMA1 -> PTC (UP)", "PTC -> DMA1 (DOWN)",
    };

    ptm_test_make_cfg(&ptm_test_geos[1], &cfg);
    ptl_test_pattern(&par);
    /* RQ: 2 stalled, 2 words, 4 idle: still period 8 */
    par.bus[PTM_BUS_RQ].gap = 4;
    b = ptl_bench_new(&cfg, &par);
    blk = ptl_bench_open(b);
    l = ptl_block_layout(blk);
    r1 = read_at(b, blk, PTL_T_FIRST);
    r2 = read_at(b, blk, PTL_T_SECOND);
    ptl_reading_diff(l, r1, r2, r2);
    dt = ptl_data_decode(l, r2);
    g_assert_cmpuint(dt->nendpoints, ==, 2);
    for (unsigned e = 0; e < 2; e++) {
        const ptl_endpoint *ep = &dt->endpoints[e];
        const uint64_t c = ep->pcie_cycles, d = ep->dma_cycles;
        const ptl_bus *rq = &ep->buses[0];

        g_assert_cmpuint(ep->index, ==, e);
        /* whole windows of both clocks, 2 DMA cycles per 4 PCIe cycles */
        g_assert_cmpuint(c % 4096, ==, 0);
        g_assert_cmpuint(d % 4096, ==, 0);
        g_assert_cmpuint(c, >=, 4096);
        g_assert_cmpuint(ep->nbuses, ==, 6);
        for (unsigned k = 0; k < 6; k++) {
            g_assert_cmpstr(ep->buses[k].name, ==, names[k]);
        }
        g_assert_cmpuint(rq->nregions, ==, 4);
        g_assert_cmpuint(rq->words, ==, c / 4);
        g_assert_cmpuint(rq->regions[0], ==, c / 4);
        g_assert_cmpuint(rq->regions[1], ==, c / 4);
        g_assert_cmpuint(rq->regions[2], ==, c / 4);
        g_assert_cmpuint(rq->regions[3], ==, c / 8);
        g_assert_cmpuint(rq->items, ==, 50 * c / 8);
        g_assert_cmpuint(ep->buses[1].nregions, ==, 2);
        g_assert_cmpuint(ep->brakes[0], ==, c / 4);
        g_assert_cmpuint(ep->hists[1], ==, c);
        for (unsigned p = 0; p < 2; p++) {
            const ptl_bus *up = &ep->buses[2 + 2 * p];
            const ptl_bus *down = &ep->buses[3 + 2 * p];

            g_assert_cmpuint(up->port, ==, p);
            g_assert_cmpuint(down->port, ==, p);
            g_assert_true(up->dma_up && !down->dma_up);
            g_assert_cmpuint(up->mvb, ==, d / 4);
            g_assert_cmpuint(up->items, ==, 4 * d);
            g_assert_cmpuint(down->items, ==, d);
            g_assert_cmpuint(down->regions[0], ==, d / 8);
        }
    }
    g_assert_cmpuint(dt->endpoints[0].pcie_cycles, ==,
                     dt->endpoints[1].pcie_cycles);
    ptl_data_free(dt);
    ptl_reading_free(r1);
    ptl_reading_free(r2);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

/*
 * READ_SEL left at 1 (live copy) by someone else: the reading still gets
 * the snapshot. The SNAPSHOT lands just before the first PCIe window's
 * deltas (added from 10.27 us, held back while BUSY), so they reach the
 * live copy while the window is read out and the copies differ.
 */
static void test_read_sel_corrected(void)
{
    PtlBench *b = pattern_bench();
    ptl_block *blk = ptl_bench_open(b);
    ptl_reading *r;
    unsigned differ = 0;

    ptm_core_write(b->core, b->t, PTM_REG_READ_SEL, 1, 4);
    r = read_at(b, blk, 10150);
    g_assert_cmpuint(ptm_core_read(b->core, b->t, PTM_REG_READ_SEL, 4), ==,
                     0);
    for (unsigned i = 0; i < 48; i++) {
        g_assert_cmpuint(r->counters[i], ==,
                         ptm_core_counter(b->core, true, i));
        differ += ptm_core_counter(b->core, false, i) !=
                  ptm_core_counter(b->core, true, i);
    }
    g_assert_cmpuint(differ, >, 0);
    ptl_reading_free(r);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

/*
 * BAR accesses of one reading of the default card: READ_SEL and SNAPSHOT
 * writes, n STATUS reads, 48 counter loads (entries 48-63 are never read),
 * 3 live registers. With 2 us per access (slower than BUSY's 1.29 us) n is
 * 1: 54 accesses.
 */
static void test_read_accesses(void)
{
    PtlBench *b = pattern_bench();
    ptl_block *blk = ptl_bench_open(b);
    ptl_reading *r;

    ptl_bench_reset_counts(b);
    r = read_at(b, blk, PTL_T_FIRST);
    g_assert_cmpuint(b->writes, ==, 2);
    g_assert_cmphex(b->log[0].off, ==, PTM_REG_READ_SEL);
    g_assert_cmphex(b->log[0].val, ==, 0);
    g_assert_cmphex(b->log[1].off, ==, PTM_REG_COMMAND);
    g_assert_cmphex(b->log[1].val, ==, PTM_CMD_SNAPSHOT);
    g_assert_cmpuint(b->reads64, ==, 48);
    for (unsigned i = 0; i < 64; i++) {
        g_assert_cmpuint(b->window_reads[i], ==, i < 48);
    }
    /* 100 ns per access: BUSY (1.29 us) takes 13 or 14 polls */
    g_assert_cmpuint(b->status_reads, >=, 2);
    g_assert_cmpuint(b->status_reads, <=, 15);
    g_assert_cmpuint(b->reads32, ==, b->status_reads + 3);
    g_assert_cmpuint(b->accesses, ==, 53 + b->status_reads);
    ptl_reading_free(r);

    b->access_ns = 2000;
    ptl_bench_reset_counts(b);
    r = read_at(b, blk, PTL_T_SECOND);
    g_assert_cmpuint(b->status_reads, ==, 1);
    g_assert_cmpuint(b->accesses, ==, 54);
    ptl_reading_free(r);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

/* Without 64-bit loads: low word, then high word, of the same counters. */
static void test_read_32bit(void)
{
    PtlBench *b = pattern_bench();
    ptl_block *blk;
    ptl_reading *r;
    ptl_error err;
    uint64_t exp[48];

    g_assert_cmpint(ptl_block_open(&ptl_bench_ops32, b, &blk, &err), ==, 0);
    ptl_bench_at(b, PTL_T_FIRST);
    r = ptl_reading_new(ptl_block_layout(blk));
    /* wipe the first PCIe windows by a CLEAR: the counters then hold the
     * whole windows drained after it */
    g_assert_cmpint(ptl_block_clear(blk, &err), ==, 0);
    ptl_bench_at(b, PTL_T_SECOND);
    ptl_bench_reset_counts(b);
    g_assert_cmpint(ptl_block_read(blk, r, &err), ==, 0);
    g_assert_cmpuint(b->reads64, ==, 0);
    g_assert_cmpuint(b->reads32, ==, 2 * 48 + b->status_reads + 3);
    g_assert_true(b->low_before_high);
    expected_default(PTL_PCIE_CYC, PTL_DMA_CYC, exp);
    for (unsigned i = 0; i < 48; i++) {
        g_assert_cmpuint(r->counters[i], ==, exp[i]);
    }
    ptl_reading_free(r);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

/* STATUS that never leaves BUSY: PTL_E_BUSY after 1 s of the same clock. */
static void test_busy_timeout(void)
{
    PtlBench *b = pattern_bench();
    ptl_block *blk = ptl_bench_open(b);
    ptl_reading *r = ptl_reading_new(ptl_block_layout(blk));
    ptl_error err;
    uint64_t t0;

    b->stuck_busy = true;
    b->busy_step_ns = 1000000;          /* 1 ms per poll */
    ptl_bench_at(b, PTL_T_FIRST);
    t0 = b->t;
    g_assert_cmpint(ptl_block_read(blk, r, &err), ==, PTL_E_BUSY);
    g_assert_cmpint(err.code, ==, PTL_E_BUSY);
    g_assert_nonnull(strstr(err.msg, "BUSY"));
    /* not before 1 s, and not much after */
    g_assert_cmpuint(b->t - t0, >=, 1000000000u);
    g_assert_cmpuint(b->t - t0, <=, 1003000000u);
    g_assert_cmpuint(b->status_reads, >=, 1000);

    t0 = b->t;
    g_assert_cmpint(ptl_block_clear(blk, &err), ==, PTL_E_BUSY);
    g_assert_cmpuint(b->t - t0, >=, 1000000000u);
    ptl_reading_free(r);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

/* A card that disappears: before the SNAPSHOT, during the read-out. */
static void test_gone(void)
{
    PtlBench *b = pattern_bench();
    ptl_block *blk = ptl_bench_open(b);
    ptl_reading *r = ptl_reading_new(ptl_block_layout(blk));
    ptl_error err;

    ptl_bench_at(b, PTL_T_FIRST);
    b->gone_after = b->accesses;
    g_assert_cmpint(ptl_block_read(blk, r, &err), ==, PTL_E_GONE);
    /* the first STATUS read said so: no counter was read */
    g_assert_cmpuint(b->reads64, ==, 0);

    /* gone after READ_SEL, SNAPSHOT and the polls: caught in the window */
    b->access_ns = 2000;
    ptl_bench_reset_counts(b);
    b->gone_after = 3 + 5;
    g_assert_cmpint(ptl_block_read(blk, r, &err), ==, PTL_E_GONE);
    g_assert_cmpuint(b->reads64, ==, 6);

    /* gone during the live registers */
    ptl_bench_reset_counts(b);
    b->gone_after = 3 + 48;
    g_assert_cmpint(ptl_block_read(blk, r, &err), ==, PTL_E_GONE);
    g_assert_cmpint(err.code, ==, PTL_E_GONE);
    ptl_reading_free(r);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

/* COMMAND bits of clear and clear_flags; the lowest values reset. */
static void test_commands(void)
{
    PtlBench *b = pattern_bench();
    ptl_block *blk = ptl_bench_open(b);
    ptl_error err;

    ptl_bench_at(b, PTL_T_FIRST);
    ptl_bench_reset_counts(b);
    g_assert_cmpint(ptl_block_clear_flags(blk, false, &err), ==, 0);
    g_assert_cmpuint(b->nlog, ==, 1);
    g_assert_cmphex(b->log[0].off, ==, PTM_REG_COMMAND);
    g_assert_cmphex(b->log[0].val, ==, PTM_CMD_CLEAR_FLAGS);
    /* 20 tags now and lowest */
    g_assert_cmphex(ptm_core_read(b->core, b->t, PTM_REG_PCIE_TAGS, 4), ==,
                    0x00140014);
    g_assert_cmpint(ptl_block_clear_flags(blk, true, &err), ==, 0);
    g_assert_cmphex(b->log[1].val, ==,
                    PTM_CMD_CLEAR_FLAGS | PTM_CMD_CLEAR_LOWEST);
    g_assert_cmphex(ptm_core_read(b->core, b->t, PTM_REG_PCIE_TAGS, 4), ==,
                    0x07FF0014);

    /* the lowest value follows the current one again, then the clear of -c
     * resets it with the counters and the flags */
    ptl_bench_at(b, PTL_T_SECOND);
    g_assert_cmphex(ptm_core_read(b->core, b->t, PTM_REG_PCIE_TAGS, 4), ==,
                    0x00140014);
    ptl_bench_reset_counts(b);
    g_assert_cmpint(ptl_block_clear(blk, &err), ==, 0);
    g_assert_cmphex(b->log[0].val, ==, PTM_CMD_CLEAR | PTM_CMD_CLEAR_FLAGS |
                    PTM_CMD_CLEAR_LOWEST);
    g_assert_cmphex(ptm_core_read(b->core, b->t, PTM_REG_PCIE_TAGS, 4) >> 16,
                    ==, 0x07FF);
    /* waited until BUSY cleared: the last STATUS read was not busy */
    g_assert_cmpuint(ptl_block_status(blk) & 1, ==, 0);
    g_assert_cmpuint(b->status_reads, >=, 3);
    g_assert_cmpuint(ptm_core_counter(b->core, false, 0), ==, 0);
    g_assert_cmpuint(ptm_core_counter(b->core, true, 1), ==, 0);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

/* Deltas lost (3 endpoints at DRAIN_PERIOD 1024, FACTS.md): the flag. */
static void test_lost_flag(void)
{
    PtmConfig cfg;
    PtmPatternParams par;
    PtlBench *b;
    ptl_block *blk;
    ptl_reading *r;
    ptl_data *d;

    ptm_config_default(&cfg);
    cfg.pcie_endpoints = 3;
    cfg.drain_period = 1024;
    ptl_test_pattern(&par);
    b = ptl_bench_new(&cfg, &par);
    blk = ptl_bench_open(b);
    r = read_at(b, blk, 200000);
    g_assert_cmphex(r->status & 2, ==, 2);
    d = ptl_data_decode(ptl_block_layout(blk), r);
    g_assert_true(d->lost_deltas);
    g_assert_false(d->readout_overrun);
    ptl_data_free(d);
    ptl_reading_free(r);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

static ptl_layout width_layout(unsigned w)
{
    ptl_layout l = { .entries = 4, .endpoints = 1, .cnt_width = w };

    return l;
}

/* Differences modulo 2^CNT_WIDTH, readings built by hand. */
static void test_diff_wrap(void)
{
    ptl_layout l33 = width_layout(33), l64 = width_layout(64);
    ptl_reading *a = ptl_reading_new(&l33), *b = ptl_reading_new(&l33);
    ptl_reading *o = ptl_reading_new(&l33);
    const uint64_t m33 = (1ull << 33) - 1;

    /* 100 before the wrap, 50 after it: 150 */
    a->counters[0] = m33 - 99;
    b->counters[0] = 50;
    /* no wrap */
    a->counters[1] = 1000;
    b->counters[1] = 5000;
    /* a whole turn minus one */
    a->counters[2] = 1;
    b->counters[2] = 0;
    /* equal */
    a->counters[3] = 77;
    b->counters[3] = 77;
    a->t_ns = 5;
    b->t_ns = 1005;
    b->status = 2;
    b->tags[0] = 0x00030076;
    ptl_reading_diff(&l33, a, b, o);
    g_assert_cmpuint(o->counters[0], ==, 150);
    g_assert_cmpuint(o->counters[1], ==, 4000);
    g_assert_cmpuint(o->counters[2], ==, m33);
    g_assert_cmpuint(o->counters[3], ==, 0);
    g_assert_cmpuint(o->t_ns, ==, 1005);
    g_assert_cmpuint(o->status, ==, 2);
    g_assert_cmphex(o->tags[0], ==, 0x00030076);

    /* 64 bits: plain unsigned wrap */
    a->counters[0] = UINT64_MAX - 9;
    b->counters[0] = 10;
    ptl_reading_diff(&l64, a, b, b);
    g_assert_cmpuint(b->counters[0], ==, 20);
    ptl_reading_free(a);
    ptl_reading_free(b);
    ptl_reading_free(o);
}

/*
 * A real wrap at CNT_WIDTH 33 would take 21 s of PCIe cycles; instead both
 * readings of the block (at 33 bits) are moved by the same amount so that
 * every earlier value sits 5 below 2^33: the later ones wrap, and the
 * difference must not change.
 */
static void test_diff_wrap_block(void)
{
    PtmConfig cfg;
    PtmPatternParams par;
    PtlBench *b;
    ptl_block *blk;
    ptl_reading *r1, *r2;
    const uint64_t m33 = (1ull << 33) - 1;
    uint64_t exp[48];

    ptm_config_default(&cfg);
    cfg.cnt_width = 33;
    ptl_test_pattern(&par);
    b = ptl_bench_new(&cfg, &par);
    blk = ptl_bench_open(b);
    g_assert_cmpuint(ptl_block_layout(blk)->cnt_width, ==, 33);
    r1 = read_at(b, blk, PTL_T_FIRST);
    r2 = read_at(b, blk, PTL_T_SECOND);
    for (unsigned i = 0; i < 48; i++) {
        uint64_t shift = (m33 + 1 - 5 - r1->counters[i]) & m33;

        r1->counters[i] = (r1->counters[i] + shift) & m33;
        r2->counters[i] = (r2->counters[i] + shift) & m33;
    }
    g_assert_cmpuint(r1->counters[0], ==, m33 - 4);
    g_assert_cmpuint(r2->counters[0], <, 1u << 20);     /* wrapped */
    ptl_reading_diff(ptl_block_layout(blk), r1, r2, r2);
    expected_default(PTL_PCIE_CYC, PTL_DMA_CYC, exp);
    for (unsigned i = 0; i < 48; i++) {
        g_assert_cmpuint(r2->counters[i], ==, exp[i]);
    }
    ptl_reading_free(r1);
    ptl_reading_free(r2);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

static void test_errors_and_version(void)
{
    ptl_error err;

    g_assert_cmpint(ptl_set_error(&err, PTL_E_BAR, "BAR%d is %s", 2,
                                  "small\nreally"), ==, PTL_E_BAR);
    g_assert_cmpint(err.code, ==, PTL_E_BAR);
    g_assert_cmpstr(err.msg, ==, "BAR2 is small really");
    g_assert_cmpint(ptl_set_error(NULL, PTL_E_GONE, "x"), ==, PTL_E_GONE);
    g_assert_cmpstr(ptl_err_name(PTL_E_BUSY), ==, "busy");
    g_assert_cmpstr(ptl_err_name(PTL_E_NO_CARD), ==, "no card");
    g_assert_cmpstr(ptl_version_string(), ==, PTL_TEST_VERSION);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ptl/layout/default", test_layout_default);
    g_test_add_func("/ptl/layout/two-endpoints", test_layout_two_endpoints);
    g_test_add_func("/ptl/open/errors", test_open_errors);
    g_test_add_func("/ptl/read/diff-pattern", test_read_diff_pattern);
    g_test_add_func("/ptl/read/decode", test_decode_pattern);
    g_test_add_func("/ptl/read/decode-two-endpoints",
                    test_decode_two_endpoints);
    g_test_add_func("/ptl/read/read-sel", test_read_sel_corrected);
    g_test_add_func("/ptl/read/accesses", test_read_accesses);
    g_test_add_func("/ptl/read/32-bit", test_read_32bit);
    g_test_add_func("/ptl/read/busy-timeout", test_busy_timeout);
    g_test_add_func("/ptl/read/gone", test_gone);
    g_test_add_func("/ptl/commands", test_commands);
    g_test_add_func("/ptl/lost-flag", test_lost_flag);
    g_test_add_func("/ptl/diff/wrap", test_diff_wrap);
    g_test_add_func("/ptl/diff/wrap-block", test_diff_wrap_block);
    g_test_add_func("/ptl/errors", test_errors_and_version);
    return g_test_run();
}
