/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The public register map (guest-tool/include/pcie-telemetry-regs.h)
 * against the model, which keeps its own definitions: the same offsets,
 * bits and VSEC, and for several generic sets the model's configuration
 * registers decoded with the header's fields give back the generics, and
 * the header's layout rules place every channel where the model does.
 * (tests/regmap-check.py holds the header against the JSON map and the
 * device's page.)
 */
#include <glib.h>
#include <string.h>

#include "pcie-telemetry-regs.h"
#include "ptm-core.h"
#include "ptm-devtree.h"

static void test_constants(void)
{
    static const struct {
        const char *name;
        uint32_t pub, model;
    } same[] = {
        { "MAGIC", PTL_MAGIC, PTM_MAGIC },
        { "VERSION", PTL_VERSION_VALUE, PTM_VERSION },
        { "block size", PTL_BLOCK_SIZE, PTM_BAR_SIZE },
        { "CNT_BASE", PTL_CNT_BASE_VALUE, PTM_CNT_BASE },
        { "REG_MAGIC", PTL_REG_MAGIC, PTM_REG_MAGIC },
        { "REG_VERSION", PTL_REG_VERSION, PTM_REG_VERSION },
        { "REG_CFG_TOPOLOGY", PTL_REG_CFG_TOPOLOGY, PTM_REG_CFG_TOPOLOGY },
        { "REG_CFG_LAYOUT", PTL_REG_CFG_LAYOUT, PTM_REG_CFG_LAYOUT },
        { "REG_CFG_PCIE", PTL_REG_CFG_PCIE, PTM_REG_CFG_PCIE },
        { "REG_CFG_DMA", PTL_REG_CFG_DMA, PTM_REG_CFG_DMA },
        { "REG_CFG_DRAIN", PTL_REG_CFG_DRAIN, PTM_REG_CFG_DRAIN },
        { "REG_CNT_BASE", PTL_REG_CNT_BASE, PTM_REG_CNT_BASE },
        { "REG_COMMAND", PTL_REG_COMMAND, PTM_REG_COMMAND },
        { "REG_STATUS", PTL_REG_STATUS, PTM_REG_STATUS },
        { "REG_READ_SEL", PTL_REG_READ_SEL, PTM_REG_READ_SEL },
        { "REG_CFG_REGIONS", PTL_REG_CFG_REGIONS, PTM_REG_CFG_REGIONS },
        { "REG_CFG_WIDTH", PTL_REG_CFG_WIDTH, PTM_REG_CFG_WIDTH },
        { "REG_CFG_HIST", PTL_REG_CFG_HIST, PTM_REG_CFG_HIST },
        { "REG_CFG_CAPACITY", PTL_REG_CFG_CAPACITY, PTM_REG_CFG_CAPACITY },
        { "REG_CFG_WIDTH_DMA", PTL_REG_CFG_WIDTH_DMA, PTM_REG_CFG_WIDTH_DMA },
        { "REG_PCIE_STATUS", PTL_REG_PCIE_STATUS(0), PTM_REG_PCIE_STATUS },
        { "REG_PCIE_TAGS", PTL_REG_PCIE_TAGS(0), PTM_REG_PCIE_TAGS },
        { "REG_PCIE_STFIFO", PTL_REG_PCIE_STFIFO(0), PTM_REG_PCIE_STFIFO },
        { "CMD_SNAPSHOT", PTL_CMD_SNAPSHOT, PTM_CMD_SNAPSHOT },
        { "CMD_CLEAR", PTL_CMD_CLEAR, PTM_CMD_CLEAR },
        { "CMD_CLEAR_FLAGS", PTL_CMD_CLEAR_FLAGS, PTM_CMD_CLEAR_FLAGS },
        { "CMD_CLEAR_LOWEST", PTL_CMD_CLEAR_LOWEST, PTM_CMD_CLEAR_LOWEST },
        { "STATUS_BUSY", PTL_STATUS_BUSY, PTM_STATUS_BUSY },
        { "STATUS_LOST", PTL_STATUS_LOST, PTM_STATUS_LOST },
        { "STATUS_OVERRUN", PTL_STATUS_OVERRUN, PTM_STATUS_OVERRUN },
        { "max endpoints", PTL_MAX_ENDPOINTS, PTM_MAX_ENDPOINTS },
        { "VSEC cap ID", PTL_VSEC_CAP_ID, PTM_VSEC_CAP_ID },
        { "VSEC offset", PTL_QEMU_VSEC_OFFSET, PTM_VSEC_OFFSET },
        { "VSEC length", PTL_VSEC_LEN, PTM_VSEC_SIZE },
        { "VSEC header", PTL_VSEC_HEADER_VALUE, PTM_VSEC_HEADER },
        { "VSEC REG_HEADER", PTL_VSEC_REG_HEADER, PTM_VSEC_REG_HEADER },
        { "VSEC REG_ENDPOINT", PTL_VSEC_REG_ENDPOINT, PTM_VSEC_REG_ENDPOINT },
        { "VSEC REG_LENGTH", PTL_VSEC_REG_LENGTH, PTM_VSEC_REG_LENGTH },
        { "VSEC REG_INDEX", PTL_VSEC_REG_INDEX, PTM_VSEC_REG_INDEX },
        { "VSEC REG_DATA", PTL_VSEC_REG_DATA, PTM_VSEC_REG_DATA },
        { "VSEC ENDPOINT_VALID", PTL_VSEC_ENDPOINT_VALID,
          PTM_VSEC_ENDPOINT_VALID },
        { "DT reg size", PTL_BLOCK_SIZE, PTM_DT_REG_SIZE },
        { "CH_WORDS", PTL_CH_WORDS, PTM_CH_WORDS },
        { "CH_STALL", PTL_CH_STALL, PTM_CH_STALL },
        { "CH_SOF", PTL_CH_SOF, PTM_CH_SOF },
        { "CH_MVB", PTL_CH_MVB, PTM_CH_MVB },
        { "CH_MVB_STALL", PTL_CH_MVB_STALL, PTM_CH_MVB_STALL },
        { "CH_ITEMS", PTL_CH_ITEMS, PTM_CH_ITEMS },
        { "CH_REGION0", PTL_CH_REGION0, PTM_CH_REGION0 },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(same); i++) {
        if (same[i].pub != same[i].model) {
            g_error("%s: header 0x%x, model 0x%x", same[i].name,
                    same[i].pub, same[i].model);
        }
    }
    g_assert_cmpstr(PTL_COMPATIBLE, ==, PTM_DT_COMPATIBLE);
    g_assert_cmpstr(PTL_DT_BUS_COMPATIBLE, ==, PTM_DT_BUS_COMPATIBLE);
    g_assert_cmpstr(PTL_DT_BUS_RESOURCE, ==, PTM_DT_BUS_RESOURCE);
    for (unsigned v = 0; v <= 2048; v++) {
        g_assert_cmpuint(ptl_hist_band(v, 256), ==, ptm_band(v, 256));
        g_assert_cmpuint(ptl_hist_band(v, 1024), ==, ptm_band(v, 1024));
        g_assert_cmpuint(ptl_hist_band(v, 7), ==, ptm_band(v, 7));
    }
}

static uint32_t rd(PtmCore *c, uint32_t off)
{
    return (uint32_t)ptm_core_read(c, 0, off, 4);
}

/* Decode the model's registers with the header and compare with cfg. */
static void check_config(const PtmConfig *cfg)
{
    PtmCore *c = ptm_core_new(cfg);
    const PtmLayout *lay;
    uint32_t topo, layout, pcie, dma, drain, regions, width, wdma, hist, cap;
    unsigned per_ep, pcie_ch, entries, brakes, reasons;

    ptm_core_power_on(c, 0);
    lay = ptm_core_layout(c);
    topo = rd(c, PTL_REG_CFG_TOPOLOGY);
    layout = rd(c, PTL_REG_CFG_LAYOUT);
    pcie = rd(c, PTL_REG_CFG_PCIE);
    dma = rd(c, PTL_REG_CFG_DMA);
    drain = rd(c, PTL_REG_CFG_DRAIN);
    regions = rd(c, PTL_REG_CFG_REGIONS);
    width = rd(c, PTL_REG_CFG_WIDTH);
    wdma = rd(c, PTL_REG_CFG_WIDTH_DMA);
    hist = rd(c, PTL_REG_CFG_HIST);
    cap = rd(c, PTL_REG_CFG_CAPACITY);

    g_assert_cmphex(rd(c, PTL_REG_MAGIC), ==, PTL_MAGIC);
    g_assert_cmpuint(rd(c, PTL_REG_VERSION) >> 16, ==, PTL_VERSION_MAJOR);
    g_assert_cmphex(rd(c, PTL_REG_CNT_BASE), ==, PTL_CNT_BASE_VALUE);
    g_assert_cmpuint(PTL_FIELD(topo, PTL_TOPOLOGY_ENDPOINTS), ==,
                     cfg->pcie_endpoints);
    g_assert_cmpuint(PTL_FIELD(topo, PTL_TOPOLOGY_DMA_PORTS), ==,
                     cfg->dma_ports);
    g_assert_cmpuint(PTL_FIELD(topo, PTL_TOPOLOGY_PROBES), ==,
                     2 * cfg->pcie_endpoints);
    g_assert_cmpuint(PTL_FIELD(layout, PTL_LAYOUT_CNT_WIDTH), ==,
                     cfg->cnt_width);
    g_assert_cmpuint(PTL_FIELD(drain, PTL_DRAIN_PERIOD), ==,
                     cfg->drain_period & 0xFFFF);
    g_assert_cmpuint(PTL_FIELD(drain, PTL_DRAIN_ITEM_BYTES), ==,
                     cfg->mfb_item_bytes);
    g_assert_cmpuint(PTL_FIELD(regions, PTL_REGIONS_RQ), ==,
                     cfg->pcie_rq_mfb_regions);
    g_assert_cmpuint(PTL_FIELD(regions, PTL_REGIONS_RC), ==,
                     cfg->pcie_rc_mfb_regions);
    g_assert_cmpuint(PTL_FIELD(regions, PTL_REGIONS_UP), ==,
                     cfg->dma_up_mfb_regions);
    g_assert_cmpuint(PTL_FIELD(regions, PTL_REGIONS_DOWN), ==,
                     cfg->dma_down_mfb_regions);
    g_assert_cmpuint(PTL_FIELD(width, PTL_WIDTH_LOW), ==,
                     cfg->pcie_rq_mfb_region_bytes);
    g_assert_cmpuint(PTL_FIELD(width, PTL_WIDTH_HIGH), ==,
                     cfg->pcie_rc_mfb_region_bytes);
    g_assert_cmpuint(PTL_FIELD(wdma, PTL_WIDTH_LOW), ==,
                     cfg->dma_up_mfb_region_bytes);
    g_assert_cmpuint(PTL_FIELD(wdma, PTL_WIDTH_HIGH), ==,
                     cfg->dma_down_mfb_region_bytes);
    g_assert_cmpuint(PTL_FIELD(cap, PTL_CAPACITY_TAGS), ==,
                     cfg->tag_capacity);
    g_assert_cmpuint(PTL_FIELD(cap, PTL_CAPACITY_STFIFO), ==,
                     cfg->stfifo_capacity);
    g_assert_cmpuint(PTL_FIELD(hist, PTL_HIST_BANDS), ==, PTL_HIST_BANDS);
    g_assert_cmpuint(PTL_FIELD(hist, PTL_HIST_PCIE), ==, PTL_PCIE_HISTS);
    g_assert_cmpuint(PTL_FIELD(hist, PTL_HIST_DMA), ==, 0);

    /* the header's layout rules against the model's layout */
    pcie_ch = PTL_FIELD(pcie, PTL_PROBE_CHANNELS);
    per_ep = PTL_FIELD(layout, PTL_LAYOUT_PER_ENDPOINT);
    entries = PTL_FIELD(layout, PTL_LAYOUT_ENTRIES);
    brakes = PTL_FIELD(pcie, PTL_PROBE_BRAKES);
    reasons = brakes - PTL_HIST_BANDS * PTL_PCIE_HISTS;
    g_assert_cmpuint(reasons, ==, PTL_BRAKE_REASONS);
    g_assert_cmpuint(PTL_FIELD(pcie, PTL_PROBE_REGIONS), ==,
                     lay->pcie_regions);
    g_assert_cmpuint(PTL_FIELD(dma, PTL_PROBE_REGIONS), ==,
                     lay->dma_regions);
    g_assert_cmpuint(PTL_FIELD(pcie, PTL_PROBE_BUSES), ==, 2);
    g_assert_cmpuint(PTL_FIELD(dma, PTL_PROBE_BUSES), ==, 2 * cfg->dma_ports);
    g_assert_cmpuint(PTL_FIELD(dma, PTL_PROBE_BRAKES), ==, 0);
    g_assert_cmpuint(pcie_ch, ==, lay->pcie_channels);
    g_assert_cmpuint(ptl_probe_channels(lay->pcie_regions, 2, brakes), ==,
                     lay->pcie_channels);
    g_assert_cmpuint(ptl_probe_channels(lay->dma_regions, 2 * cfg->dma_ports,
                                        0), ==, lay->dma_channels);
    g_assert_cmpuint(PTL_FIELD(dma, PTL_PROBE_CHANNELS), ==,
                     lay->dma_channels & 0xFF);
    g_assert_cmpuint(per_ep, ==, lay->channels_per_endpoint & 0xFF);
    g_assert_cmpuint(entries, ==, lay->entries);
    g_assert_cmpuint(ptl_entries(cfg->pcie_endpoints,
                                 lay->channels_per_endpoint), ==,
                     lay->entries);
    for (unsigned b = 0; b < 2 * cfg->dma_ports; b++) {
        for (unsigned k = 0; k < PTL_CH_REGION0 + lay->dma_regions; k++) {
            g_assert_cmpuint(ptl_bus_channel(lay->dma_regions, b, k), ==,
                             ptm_ch_bus(lay->dma_regions, b, k));
            if (b < 2 && k < PTL_CH_REGION0 + lay->pcie_regions) {
                g_assert_cmpuint(ptl_bus_channel(lay->pcie_regions, b, k),
                                 ==, ptm_ch_bus(lay->pcie_regions, b, k));
            }
        }
    }
    /* BRAKE reasons, then the bands, end the PCIe probe */
    g_assert_cmpuint(ptl_brake_channel(lay->pcie_regions, 0), ==,
                     ptm_ch_bus(lay->pcie_regions, 2, 0));
    g_assert_cmpuint(ptl_band_channel(lay->pcie_regions, reasons,
                                      PTL_HIST_STFIFO, PTL_HIST_BANDS - 1),
                     ==, lay->pcie_channels - 1);
    g_assert_cmpuint(ptl_entry(per_ep, pcie_ch, cfg->pcie_endpoints - 1, 1,
                               lay->dma_channels - 1), ==,
                     cfg->pcie_endpoints * lay->channels_per_endpoint - 1);
    ptm_core_free(c);
}

static void test_configs(void)
{
    PtmConfig cfg;

    ptm_config_default(&cfg);
    check_config(&cfg);

    cfg.pcie_endpoints = 2;
    cfg.dma_ports = 2;
    cfg.pcie_rq_mfb_regions = 4;
    cfg.pcie_eof_pos_width = 3;
    cfg.drain_period = 8192;
    cfg.cnt_width = 33;
    cfg.tag_capacity = 1000;
    g_assert_null(ptm_config_check(&cfg));
    check_config(&cfg);

    ptm_config_default(&cfg);
    cfg.pcie_endpoints = 3;
    cfg.dma_ports = 4;
    cfg.dma_down_mfb_regions = 1;
    cfg.stfifo_capacity = 65535;
    cfg.drain_period = 16384;
    g_assert_null(ptm_config_check(&cfg));
    check_config(&cfg);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/regmap/constants", test_constants);
    g_test_add_func("/regmap/configs", test_configs);
    return g_test_run();
}
