/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The NDK device tree of the virtual card: the flattened tree built with
 * libfdt's sequential-write functions, then one XZ stream from liblzma.
 *
 * The stream uses the LZMA2 filter alone with a CRC32 check and a small
 * dictionary, the subset the kernel's XZ decoder (which the NDK driver
 * uses) understands.
 */
#include <glib.h>
#include <string.h>
#include <libfdt.h>
#include <lzma.h>

#include "ptm-devtree.h"

/*
 * The tree is a few hundred bytes, about 1.3 KiB with the longest identity
 * strings; this leaves plenty of room.
 */
/* room for the telemetry block and a DMA engine of 64 + 64 queues */
#define PTM_DT_FDT_MAX  65536

static int fdt_cells(void *fdt, const char *name, uint32_t a, uint32_t b,
                     int n)
{
    fdt32_t cells[2] = { cpu_to_fdt32(a), cpu_to_fdt32(b) };

    return fdt_property(fdt, name, cells, n * sizeof(cells[0]));
}

/* The card names of nfb_ids (ndk-sw, drivers/kernel/drivers/nfb/pci.c) */
static const struct {
    uint16_t vendor_id, device_id;
    const char *name;
} nfb_card_names[] = {
    { 0x1b26, 0xcb40, "NFB-40G" },
    { 0x1b26, 0xcb80, "NFB-40G2" },
    { 0x1b26, 0xc1c1, "NFB-100G" },
    { 0x1b26, 0xc2c1, "NFB-100G2" },
    { 0x1b26, 0xc250, "NFB-200G2QL" },
    { 0x1c2c, 0xc240, "FB1CGG" },
    { 0x1c2c, 0x00d0, "FB1CGG" },
    { 0x1c2c, 0x00d1, "FB1CGG" },
    { 0x1c2c, 0x00d2, "TIVOLI" },
    { 0x1c2c, 0x00d3, "TIVOLI" },
    { 0x18ec, 0xc000, "COMBO-GENERIC" },
    { 0x18ec, 0xc400, "COMBO-400G1" },
    { 0x1bad, 0xd001, "AGI-FH400G" },
};

const char *ptm_devtree_card_name(uint32_t vendor_id, uint32_t device_id)
{
    for (size_t i = 0; i < G_N_ELEMENTS(nfb_card_names); i++) {
        if (nfb_card_names[i].vendor_id == vendor_id &&
            nfb_card_names[i].device_id == device_id) {
            return nfb_card_names[i].name;
        }
    }
    return PTM_MODEL_CARD_NAME;
}

char *ptm_devtree_check_string(const char *s)
{
    size_t len = strlen(s);

    if (len > PTM_FW_STRING_MAX) {
        return g_strdup_printf("has %zu characters", len);
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];

        if (c < 0x20 || c > 0x7e) {
            return g_strdup_printf("has the byte 0x%02x at offset %zu", c,
                                   i);
        }
    }
    return NULL;
}

/* A string property unless it is NULL or empty; 0 or a libfdt error. */
static int fdt_id_string(void *fdt, const char *name, const char *value)
{
    if (!value || !*value) {
        return 0;
    }
    return fdt_property_string(fdt, name, value);
}

#define TRY(x) do { r = (x); if (r < 0) { return r; } } while (0)

/* Phandles of the DMA parameter nodes (RX, TX) */
enum { DMA_PARAMS_RX_PHANDLE = 1, DMA_PARAMS_TX_PHANDLE = 2 };

static int build_dma_params(void *buf, const char *name, uint32_t phandle)
{
    int r;

    TRY(fdt_begin_node(buf, name));
    TRY(fdt_cells(buf, "frame_size_max", 0x3FFF, 0, 1));
    TRY(fdt_cells(buf, "frame_size_min", 60, 0, 1));
    TRY(fdt_cells(buf, "phandle", phandle, 0, 1));
    return fdt_end_node(buf);
}

/*
 * The engine as ndk-fpga's DevTree.tcl lays it out: a dma_module node with
 * the parameter nodes and the controllers, RX queues first, each in queue
 * order (the driver numbers them in tree order); a switch per port with
 * its generators as subnodes named as gls_mod.py looks for them.
 */
static int build_dma(void *buf, const PtmDevtreeDma *dma)
{
    char node[64];
    unsigned nq = dma->ports * dma->queues;
    int r;

    g_snprintf(node, sizeof(node), "dma_module@%x", dma->rx_base);
    TRY(fdt_begin_node(buf, node));
    TRY(fdt_cells(buf, "#address-cells", 1, 0, 1));
    TRY(fdt_cells(buf, "#size-cells", 1, 0, 1));
    TRY(build_dma_params(buf, "dma_params_rx0", DMA_PARAMS_RX_PHANDLE));
    TRY(build_dma_params(buf, "dma_params_tx0", DMA_PARAMS_TX_PHANDLE));
    for (unsigned dir = 0; dir < 2; dir++) {
        for (unsigned q = 0; q < nq; q++) {
            g_snprintf(node, sizeof(node), "dma_ctrl_ndp_%s%u",
                       dir ? "tx" : "rx", q);
            TRY(fdt_begin_node(buf, node));
            TRY(fdt_property_string(buf, "compatible",
                                    dir ? PTM_DT_DMA_TX_COMPATIBLE
                                        : PTM_DT_DMA_RX_COMPATIBLE));
            TRY(fdt_cells(buf, "reg",
                          (dir ? dma->tx_base : dma->rx_base) + q * 0x80,
                          0x80, 2));
            TRY(fdt_cells(buf, "version", PTM_DT_DMA_VERSION, 0, 1));
            TRY(fdt_cells(buf, "pcie", 0, 0, 1));
            TRY(fdt_cells(buf, "params",
                          dir ? DMA_PARAMS_TX_PHANDLE : DMA_PARAMS_RX_PHANDLE,
                          0, 1));
            TRY(fdt_end_node(buf));
        }
    }
    TRY(fdt_end_node(buf));         /* dma_module */
    for (unsigned p = 0; p < dma->ports; p++) {
        uint32_t base = dma->gls_base + p * 0x200;
        static const char *const gen[2] = { "mfb_gen2dma", "mfb_gen2eth" };

        g_snprintf(node, sizeof(node), "dbg_gls%u", p);
        TRY(fdt_begin_node(buf, node));
        TRY(fdt_property_string(buf, "compatible", PTM_DT_GLS_COMPATIBLE));
        TRY(fdt_cells(buf, "reg", base, 0x200, 2));
        TRY(fdt_cells(buf, "version", 1, 0, 1));
        for (unsigned k = 0; k < 2; k++) {
            TRY(fdt_begin_node(buf, gen[k]));
            TRY(fdt_property_string(buf, "compatible",
                                    PTM_DT_GEN_COMPATIBLE));
            TRY(fdt_cells(buf, "reg", base + 0x80 + k * 0x40, 0x40, 2));
            TRY(fdt_cells(buf, "version", 1, 0, 1));
            TRY(fdt_end_node(buf));
        }
        TRY(fdt_end_node(buf));     /* dbg_gls */
    }
    return 0;
}

/* Writes the tree into buf; returns 0 or a libfdt error code. */
static int build_fdt(void *buf, const PtmFirmwareId *id,
                     const PtmDevtreeDma *dma, const PtmDevtreePg381 *pg381,
                     uint32_t block_offset, uint32_t version,
                     uint32_t pcie_endpoints)
{
    char node[64];
    int r;

    g_snprintf(node, sizeof(node), "pcie_telemetry@%x", block_offset);
    TRY(fdt_create(buf, PTM_DT_FDT_MAX));
    TRY(fdt_finish_reservemap(buf));
    TRY(fdt_begin_node(buf, ""));
    TRY(fdt_cells(buf, "#address-cells", 1, 0, 1));
    TRY(fdt_cells(buf, "#size-cells", 1, 0, 1));

    TRY(fdt_begin_node(buf, "firmware"));
    if (id) {
        /* in the order of ndk-fpga's trees; properties before subnodes */
        TRY(fdt_id_string(buf, "card-name", id->card_name));
        TRY(fdt_id_string(buf, "project-name", id->project_name));
        TRY(fdt_id_string(buf, "project-variant", id->project_variant));
        TRY(fdt_id_string(buf, "project-version", id->project_version));
        TRY(fdt_cells(buf, "build-time", id->build_time, 0, 1));
        TRY(fdt_id_string(buf, "build-tool", id->build_tool));
        TRY(fdt_id_string(buf, "build-author", id->build_author));
        TRY(fdt_id_string(buf, "build-revision", id->build_revision));
    }
    TRY(fdt_begin_node(buf, "mi_bus0"));
    TRY(fdt_property_string(buf, "compatible", PTM_DT_BUS_COMPATIBLE));
    TRY(fdt_property_string(buf, "resource", PTM_DT_BUS_RESOURCE));
    TRY(fdt_cells(buf, "#address-cells", 1, 0, 1));
    TRY(fdt_cells(buf, "#size-cells", 1, 0, 1));

    TRY(fdt_begin_node(buf, node));
    TRY(fdt_property_string(buf, "compatible", PTM_DT_COMPATIBLE));
    TRY(fdt_cells(buf, "reg", block_offset, PTM_DT_REG_SIZE, 2));
    TRY(fdt_cells(buf, "version", version, 0, 1));
    TRY(fdt_cells(buf, "pcie-endpoints", pcie_endpoints, 0, 1));
    TRY(fdt_end_node(buf));         /* pcie_telemetry */
    if (dma && dma->queues) {
        TRY(build_dma(buf, dma));
    }
    if (pg381) {
        /* after the DMA engine's nodes, as its window follows theirs */
        g_snprintf(node, sizeof(node), "perf_axi_tg0@%x", pg381->base);
        TRY(fdt_begin_node(buf, node));
        TRY(fdt_property_string(buf, "compatible", PTM_DT_PG381_COMPATIBLE));
        TRY(fdt_cells(buf, "reg", pg381->base, pg381->size, 2));
        TRY(fdt_cells(buf, "clock-frequency", pg381->clock_hz, 0, 1));
        TRY(fdt_end_node(buf));
    }

    TRY(fdt_end_node(buf));         /* mi_bus0 */
    TRY(fdt_end_node(buf));         /* firmware */
    TRY(fdt_end_node(buf));         /* root */
    TRY(fdt_finish(buf));
#undef TRY
    return 0;
}

uint8_t *ptm_devtree_build(uint32_t block_offset, uint32_t version,
                           uint32_t pcie_endpoints, size_t *xz_len,
                           char **errmsg)
{
    return ptm_devtree_build_id(NULL, block_offset, version, pcie_endpoints,
                                xz_len, errmsg);
}

uint8_t *ptm_devtree_build_id(const PtmFirmwareId *id, uint32_t block_offset,
                              uint32_t version, uint32_t pcie_endpoints,
                              size_t *xz_len, char **errmsg)
{
    return ptm_devtree_build_dma(id, NULL, block_offset, version,
                                 pcie_endpoints, xz_len, errmsg);
}

uint8_t *ptm_devtree_build_dma(const PtmFirmwareId *id,
                               const PtmDevtreeDma *dma,
                               uint32_t block_offset, uint32_t version,
                               uint32_t pcie_endpoints, size_t *xz_len,
                               char **errmsg)
{
    return ptm_devtree_build_card(id, dma, NULL, block_offset, version,
                                  pcie_endpoints, xz_len, errmsg);
}

uint8_t *ptm_devtree_build_card(const PtmFirmwareId *id,
                                const PtmDevtreeDma *dma,
                                const PtmDevtreePg381 *pg381,
                                uint32_t block_offset, uint32_t version,
                                uint32_t pcie_endpoints, size_t *xz_len,
                                char **errmsg)
{
    /* zeroed: bytes past the tree must not depend on the heap */
    g_autofree uint8_t *fdt = g_malloc0(PTM_DT_FDT_MAX);
    lzma_options_lzma opt;
    lzma_filter filters[2];
    uint8_t *out;
    size_t fdt_len, out_max, out_pos = 0;
    lzma_ret lr;
    int r;

    *xz_len = 0;
    r = build_fdt(fdt, id, dma, pg381, block_offset, version,
                  pcie_endpoints);
    if (r < 0) {
        *errmsg = g_strdup_printf("cannot build the device tree: %s",
                                  fdt_strerror(r));
        return NULL;
    }
    fdt_len = fdt_totalsize(fdt);

    if (lzma_lzma_preset(&opt, LZMA_PRESET_DEFAULT)) {
        *errmsg = g_strdup("liblzma has no default LZMA2 preset");
        return NULL;
    }
    opt.dict_size = PTM_DT_XZ_DICT;
    filters[0].id = LZMA_FILTER_LZMA2;
    filters[0].options = &opt;
    filters[1].id = LZMA_VLI_UNKNOWN;
    filters[1].options = NULL;

    out_max = lzma_stream_buffer_bound(fdt_len);
    out = g_malloc0(out_max);
    lr = lzma_stream_buffer_encode(filters, LZMA_CHECK_CRC32, NULL, fdt,
                                   fdt_len, out, &out_pos, out_max);
    if (lr != LZMA_OK) {
        g_free(out);
        *errmsg = g_strdup_printf("cannot compress the device tree "
                                  "(liblzma error %d)", (int)lr);
        return NULL;
    }
    *xz_len = out_pos;
    return out;
}

uint32_t ptm_devtree_word(const uint8_t *xz, size_t xz_len, uint32_t index)
{
    uint64_t at = (uint64_t)index * 4;
    uint32_t w = 0;

    for (unsigned i = 0; i < 4; i++) {
        if (at + i < xz_len) {
            w |= (uint32_t)xz[at + i] << (8 * i);
        }
    }
    return w;
}
