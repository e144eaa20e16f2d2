/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "test-support.h"

const PtmTestGeo ptm_test_geos[] = {
    { 1, 1, 2, 2, 2, 2, 32, 32 },
    { 2, 2, 4, 2, 2, 2, 32, 32 },
    { 1, 3, 1, 2, 4, 1, 64, 16 },
    { 3, 1, 2, 2, 1, 1, 32, 64 },
};
const unsigned ptm_test_ngeos = G_N_ELEMENTS(ptm_test_geos);

void ptm_test_make_cfg(const PtmTestGeo *g, PtmConfig *cfg)
{
    unsigned ib = 4, pcie_items, dma_items;

    ptm_config_default(cfg);
    cfg->pcie_endpoints = g->endpoints;
    cfg->dma_ports = g->ports;
    cfg->pcie_rq_mfb_regions = g->rq;
    cfg->pcie_rc_mfb_regions = g->rc;
    cfg->dma_up_mfb_regions = g->up;
    cfg->dma_down_mfb_regions = g->down;
    cfg->pcie_rq_mfb_region_bytes = g->rq_bytes;
    cfg->dma_up_mfb_region_bytes = g->up_bytes;
    pcie_items = MAX(g->rq_bytes, 32u) / ib;
    dma_items = MAX(g->up_bytes, 32u) / ib;
    cfg->pcie_eof_pos_width = g_bit_storage(pcie_items - 1);
    cfg->dma_eof_pos_width = g_bit_storage(dma_items - 1);
    g_assert_null(ptm_config_check(cfg));
}

void ptm_test_probe_info(const PtmConfig *cfg, unsigned e, PtmDomain d,
                         PtmProbeInfo *pi)
{
    memset(pi, 0, sizeof(*pi));
    pi->endpoint = e;
    pi->domain = d;
    if (d == PTM_DOMAIN_PCIE) {
        pi->buses = 2;
        pi->regions = MAX(cfg->pcie_rq_mfb_regions, cfg->pcie_rc_mfb_regions);
        pi->bus_regions[0] = cfg->pcie_rq_mfb_regions;
        pi->bus_regions[1] = cfg->pcie_rc_mfb_regions;
        pi->bus_items[0] = cfg->pcie_rq_mfb_region_bytes / 4;
        pi->bus_items[1] = cfg->pcie_rc_mfb_region_bytes / 4;
        pi->hz = cfg->pcie_clk_hz;
    } else {
        pi->buses = 2 * cfg->dma_ports;
        pi->regions = MAX(cfg->dma_up_mfb_regions, cfg->dma_down_mfb_regions);
        for (unsigned b = 0; b < pi->buses; b++) {
            pi->bus_regions[b] = (b & 1) ? cfg->dma_down_mfb_regions
                                         : cfg->dma_up_mfb_regions;
            pi->bus_items[b] = ((b & 1) ? cfg->dma_down_mfb_region_bytes
                                        : cfg->dma_up_mfb_region_bytes) / 4;
        }
        pi->hz = cfg->dma_clk_hz;
    }
}

void ptm_test_probe_shape(const PtmConfig *cfg, const PtmProbeInfo *pi,
                          PtmProbeShape *sh)
{
    memset(sh, 0, sizeof(*sh));
    sh->info = *pi;
    sh->channels = pi->domain == PTM_DOMAIN_PCIE
        ? 1 + 2 * (6 + pi->regions) + 14 : 1 + pi->buses * (6 + pi->regions);
    sh->brakes = pi->domain == PTM_DOMAIN_PCIE ? 14 : 0;
    sh->eof_pos_mask = 0xFF;
    sh->tag_capacity = cfg->tag_capacity;
    sh->stfifo_capacity = cfg->stfifo_capacity;
}

void ptm_test_check_fast_path(PtmGen *g, const PtmConfig *cfg,
                              const PtmProbeInfo *pi, uint64_t start,
                              uint64_t end, bool odd_pieces)
{
    PtmChunk *ch = ptm_chunk_new();
    PtmProbeShape sh;
    PtmCountState a = { 0 }, b = { 0 };
    uint64_t ref[256] = { 0 }, fast[256] = { 0 };
    uint64_t t = start;

    ptm_test_probe_shape(cfg, pi, &sh);
    ptm_count_state_window_start(&a);
    ptm_count_state_window_start(&b);
    while (t < end) {
        uint64_t max = end - t, n;

        if (odd_pieces) {
            max = MIN(max, 1 + (t * 13 + 77) % 3001);
        }
        ch->seg = ch->scratch;
        ch->id = 0;
        n = ptm_gen_source_ops.fill(g, pi, t, max, ch);
        g_assert_cmpuint(n, >=, 1);
        g_assert_cmpuint(n, <=, max);
        ptm_count_chunk_reference(&sh, &a, ch, ref);
        ptm_count_chunk(&sh, &b, ch, fast);
        t += n;
    }
    g_assert_cmpmem(ref, sizeof(ref), fast, sizeof(fast));
    g_assert_cmpuint(ref[0], ==, end - start);
    ptm_chunk_free(ch);
}

void ptm_test_remove_dir(char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *name;

    while (d && (name = g_dir_read_name(d))) {
        g_autofree char *path = g_build_filename(dir, name, NULL);

        g_unlink(path);
    }
    g_rmdir(dir);
    g_free(dir);
}
