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

/* The tree is a few hundred bytes; this leaves plenty of room. */
#define PTM_DT_FDT_MAX  4096

static int fdt_cells(void *fdt, const char *name, uint32_t a, uint32_t b,
                     int n)
{
    fdt32_t cells[2] = { cpu_to_fdt32(a), cpu_to_fdt32(b) };

    return fdt_property(fdt, name, cells, n * sizeof(cells[0]));
}

/* Writes the tree into buf; returns 0 or a libfdt error code. */
static int build_fdt(void *buf, uint32_t block_offset, uint32_t version,
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
    /* zeroed: bytes past the tree must not depend on the heap */
    g_autofree uint8_t *fdt = g_malloc0(PTM_DT_FDT_MAX);
    lzma_options_lzma opt;
    lzma_filter filters[2];
    uint8_t *out;
    size_t fdt_len, out_max, out_pos = 0;
    lzma_ret lr;
    int r;

    *xz_len = 0;
    r = build_fdt(fdt, block_offset, version, pcie_endpoints);
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
