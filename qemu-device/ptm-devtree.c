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
#define PTM_DT_FDT_MAX  4096

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

/* Writes the tree into buf; returns 0 or a libfdt error code. */
static int build_fdt(void *buf, const PtmFirmwareId *id,
                     uint32_t block_offset, uint32_t version,
                     uint32_t pcie_endpoints)
{
    char node[64];
    int r;

    g_snprintf(node, sizeof(node), "pcie_telemetry@%x", block_offset);
#define TRY(x) do { r = (x); if (r < 0) { return r; } } while (0)
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
    /* zeroed: bytes past the tree must not depend on the heap */
    g_autofree uint8_t *fdt = g_malloc0(PTM_DT_FDT_MAX);
    lzma_options_lzma opt;
    lzma_filter filters[2];
    uint8_t *out;
    size_t fdt_len, out_max, out_pos = 0;
    lzma_ret lr;
    int r;

    *xz_len = 0;
    r = build_fdt(fdt, id, block_offset, version, pcie_endpoints);
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
