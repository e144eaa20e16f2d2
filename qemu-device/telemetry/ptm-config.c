/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PCIE_TELEMETRY_MI's generics: their defaults, the rules the firmware and
 * the register fields impose, and the layout (channels, counter entries,
 * FIFO depths) that follows from them.
 */
#include <glib.h>

#include "ptm-types.h"

/* ------------------------------------------------------------------ */
/* Configuration                                                        */

void ptm_config_default(PtmConfig *cfg)
{
    *cfg = (PtmConfig) {
        .pcie_endpoints = 1,
        .dma_ports = 1,
        .pcie_rq_mfb_regions = 2,
        .pcie_rc_mfb_regions = 2,
        .dma_up_mfb_regions = 2,
        .dma_down_mfb_regions = 2,
        .pcie_rq_mfb_region_bytes = 32,
        .pcie_rc_mfb_region_bytes = 32,
        .dma_up_mfb_region_bytes = 32,
        .dma_down_mfb_region_bytes = 32,
        .mfb_item_bytes = 4,
        .pcie_eof_pos_width = 3,
        .dma_eof_pos_width = 3,
        .cnt_width = 48,
        .drain_period = 4096,
        .tag_capacity = 256,
        .stfifo_capacity = 1024,
        .pcie_clk_hz = 400000000,
        .dma_clk_hz = 200000000,
        .mi_clk_hz = 100000000,
    };
}

static unsigned max_u(unsigned a, unsigned b)
{
    return a > b ? a : b;
}

static unsigned clog2(uint64_t v)
{
    unsigned r = 0;

    while ((1ull << r) < v) {
        r++;
    }
    return r;
}

unsigned ptm_fifo_depth(unsigned channels)
{
    unsigned groups = (channels + 7) / 8;

    return 1u << clog2(16 * groups);
}

void ptm_layout_compute(const PtmConfig *cfg, PtmLayout *lay)
{
    unsigned total;

    lay->pcie_regions = max_u(cfg->pcie_rq_mfb_regions,
                              cfg->pcie_rc_mfb_regions);
    lay->dma_regions = max_u(cfg->dma_up_mfb_regions,
                             cfg->dma_down_mfb_regions);
    lay->pcie_channels = 1 + 2 * (6 + lay->pcie_regions) +
                         PTM_BRAKES + PTM_HISTS * PTM_HIST_BANDS;
    lay->dma_channels = 1 + 2 * cfg->dma_ports * (6 + lay->dma_regions);
    lay->channels_per_endpoint = lay->pcie_channels + lay->dma_channels;
    total = cfg->pcie_endpoints * lay->channels_per_endpoint;
    lay->entries = 1u << clog2(total);
    lay->pcie_fifo_depth = ptm_fifo_depth(lay->pcie_channels);
    lay->dma_fifo_depth = ptm_fifo_depth(lay->dma_channels);
}

static char *check_range(const char *name, uint64_t v, uint64_t lo,
                         uint64_t hi)
{
    if (v < lo || v > hi) {
        return g_strdup_printf("property '%s' is %" G_GUINT64_FORMAT
                               ", allowed: %" G_GUINT64_FORMAT " to %"
                               G_GUINT64_FORMAT, name, v, lo, hi);
    }
    return NULL;
}

static char *check_region_bytes(const char *name, uint32_t bytes,
                                uint32_t item)
{
    if (bytes == 0 || bytes > 0xFFFF || bytes % item ||
        bytes / item > 256) {
        return g_strdup_printf("property '%s' is %u, allowed: a multiple of "
                               "mfb-item-bytes (%u) of 1 to 256 items, at "
                               "most 65535", name, bytes, item);
    }
    return NULL;
}

static char *check_eof_pos(const char *name, uint32_t width,
                           uint32_t bytes_a, uint32_t bytes_b, uint32_t item)
{
    unsigned items = max_u(bytes_a, bytes_b) / item;
    unsigned want = clog2(items);

    if (width != want) {
        return g_strdup_printf("property '%s' is %u, allowed: %u (log2 of "
                               "the %u items of the larger region of its "
                               "side)", name, width, want, items);
    }
    return NULL;
}

char *ptm_config_check(const PtmConfig *cfg)
{
    PtmLayout lay;
    char *err;
    unsigned gmax, min_drain;

#define TRY(x) do { err = (x); if (err) { return err; } } while (0)
    TRY(check_range("pcie-endpoints", cfg->pcie_endpoints, 1,
                    PTM_MAX_ENDPOINTS));
    TRY(check_range("dma-ports", cfg->dma_ports, 1, PTM_MAX_DMA_PORTS));
    TRY(check_range("pcie-rq-mfb-regions", cfg->pcie_rq_mfb_regions, 1,
                    PTM_MAX_REGIONS));
    TRY(check_range("pcie-rc-mfb-regions", cfg->pcie_rc_mfb_regions, 1,
                    PTM_MAX_REGIONS));
    TRY(check_range("dma-up-mfb-regions", cfg->dma_up_mfb_regions, 1,
                    PTM_MAX_REGIONS));
    TRY(check_range("dma-down-mfb-regions", cfg->dma_down_mfb_regions, 1,
                    PTM_MAX_REGIONS));
    TRY(check_range("mfb-item-bytes", cfg->mfb_item_bytes, 1, 255));
    TRY(check_region_bytes("pcie-rq-mfb-region-bytes",
                           cfg->pcie_rq_mfb_region_bytes,
                           cfg->mfb_item_bytes));
    TRY(check_region_bytes("pcie-rc-mfb-region-bytes",
                           cfg->pcie_rc_mfb_region_bytes,
                           cfg->mfb_item_bytes));
    TRY(check_region_bytes("dma-up-mfb-region-bytes",
                           cfg->dma_up_mfb_region_bytes,
                           cfg->mfb_item_bytes));
    TRY(check_region_bytes("dma-down-mfb-region-bytes",
                           cfg->dma_down_mfb_region_bytes,
                           cfg->mfb_item_bytes));
    TRY(check_eof_pos("pcie-eof-pos-width", cfg->pcie_eof_pos_width,
                      cfg->pcie_rq_mfb_region_bytes,
                      cfg->pcie_rc_mfb_region_bytes, cfg->mfb_item_bytes));
    TRY(check_eof_pos("dma-eof-pos-width", cfg->dma_eof_pos_width,
                      cfg->dma_up_mfb_region_bytes,
                      cfg->dma_down_mfb_region_bytes, cfg->mfb_item_bytes));
    TRY(check_range("cnt-width", cfg->cnt_width, 33, 64));
    TRY(check_range("tag-capacity", cfg->tag_capacity, 1, 2047));
    TRY(check_range("stfifo-capacity", cfg->stfifo_capacity, 1, 65535));
    TRY(check_range("pcie-clk-freq", cfg->pcie_clk_hz, 1000000, 4000000000ull));
    TRY(check_range("dma-clk-freq", cfg->dma_clk_hz, 1000000, 4000000000ull));
    TRY(check_range("mi-clk-freq", cfg->mi_clk_hz, 1000000, 4000000000ull));
#undef TRY

    ptm_layout_compute(cfg, &lay);
    if (lay.channels_per_endpoint > 255) {
        return g_strdup_printf("properties 'dma-ports', "
                               "'dma-up-mfb-regions', 'dma-down-mfb-regions', "
                               "'pcie-rq-mfb-regions' and "
                               "'pcie-rc-mfb-regions' give %u channels per "
                               "endpoint, allowed: at most 255 (the "
                               "CFG_LAYOUT field)", lay.channels_per_endpoint);
    }
    if ((uint64_t)lay.entries * 8 > PTM_BAR_SIZE - PTM_CNT_BASE) {
        return g_strdup_printf("properties 'pcie-endpoints', 'dma-ports' and "
                               "regions need %u counters, allowed: at most "
                               "%u (the counter window of 0x%x bytes)",
                               lay.entries,
                               (PTM_BAR_SIZE - PTM_CNT_BASE) / 8,
                               PTM_BAR_SIZE - PTM_CNT_BASE);
    }
    gmax = (max_u(lay.pcie_channels, lay.dma_channels) + 7) / 8;
    min_drain = 8 * (gmax + 1) + 1;
    if (cfg->drain_period & (cfg->drain_period - 1) ||
        cfg->drain_period < min_drain || cfg->drain_period > PTM_MAX_DRAIN_PERIOD) {
        return g_strdup_printf("property 'drain-period' is %u, allowed: a "
                               "power of two from %u (more than 8 x (%u "
                               "channel groups + 1)) to 32768 (the CFG_DRAIN "
                               "field)", cfg->drain_period,
                               1u << clog2(min_drain), gmax);
    }
    return NULL;
}

