/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The NDK device tree: an XZ-compressed flattened device tree that the
 * firmware keeps behind a vendor-specific extended capability. This file
 * only decompresses and interprets it (the telemetry nodes, the firmware's
 * identity); reading it from the configuration space is in ptl-find.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfdt.h>
#include <lzma.h>

#include "pcie-telemetry.h"

/* Far above any real tree (the NDK driver stops at 64 KiB compressed). */
#define PTL_DEVTREE_MAX_OUT   (16u << 20)
#define PTL_DEVTREE_MEMLIMIT  (64u << 20)
#define PTL_MI_BUS_COMPATIBLE "netcope,bus,mi"

static const char *lzma_ret_text(lzma_ret r)
{
    switch (r) {
    case LZMA_FORMAT_ERROR:
        return "it is not an XZ stream";
    case LZMA_OPTIONS_ERROR:
        return "it uses unsupported XZ options";
    case LZMA_DATA_ERROR:
        return "the XZ data is corrupt";
    case LZMA_BUF_ERROR:
        return "the XZ stream is truncated";
    case LZMA_MEM_ERROR:
        return "out of memory";
    case LZMA_MEMLIMIT_ERROR:
        return "it needs more than 64 MiB to decompress";
    case LZMA_UNSUPPORTED_CHECK:
        return "its integrity check is not supported";
    default:
        return "the XZ decoder failed";
    }
}

ptl_err ptl_devtree_decompress(const void *xz, size_t len, void **fdt,
                               size_t *fdt_len, ptl_error *err)
{
    lzma_stream strm = LZMA_STREAM_INIT;
    uint8_t *out = NULL, *grown;
    size_t cap = 0;
    lzma_ret r;
    ptl_err code = PTL_OK;

    *fdt = NULL;
    *fdt_len = 0;
    if (!xz || len == 0) {
        return ptl_set_error(err, PTL_E_DEVTREE,
                             "the device tree is empty");
    }
    /*
     * TELL_ANY_CHECK reports the check type as soon as the stream header
     * is decoded, so that a stream the kernel's decoder would refuse
     * (CRC64, SHA-256) is refused here too, before any output is used.
     */
    r = lzma_stream_decoder(&strm, PTL_DEVTREE_MEMLIMIT, LZMA_TELL_ANY_CHECK);
    if (r != LZMA_OK) {
        return ptl_set_error(err, r == LZMA_MEM_ERROR ? PTL_E_INTERNAL
                                                      : PTL_E_DEVTREE,
                             "cannot start the XZ decoder: %s",
                             lzma_ret_text(r));
    }
    strm.next_in = xz;
    strm.avail_in = len;

    for (;;) {
        if (strm.avail_out == 0) {
            size_t ncap = cap ? cap * 2 : 64 * 1024;

            if (cap >= PTL_DEVTREE_MAX_OUT) {
                code = ptl_set_error(err, PTL_E_DEVTREE,
                                     "the device tree decompresses to more "
                                     "than %u MiB", PTL_DEVTREE_MAX_OUT >> 20);
                goto fail;
            }
            if (ncap > PTL_DEVTREE_MAX_OUT) {
                ncap = PTL_DEVTREE_MAX_OUT;
            }
            grown = realloc(out, ncap);
            if (!grown) {
                code = ptl_set_error(err, PTL_E_INTERNAL,
                                     "out of memory decompressing the "
                                     "device tree");
                goto fail;
            }
            out = grown;
            strm.next_out = out + cap;
            strm.avail_out = ncap - cap;
            cap = ncap;
        }
        r = lzma_code(&strm, LZMA_FINISH);
        if (r == LZMA_OK) {
            continue;
        }
        if (r == LZMA_GET_CHECK) {
            lzma_check check = lzma_get_check(&strm);

            if (check != LZMA_CHECK_NONE && check != LZMA_CHECK_CRC32) {
                code = ptl_set_error(err, PTL_E_DEVTREE,
                                     "the device tree's XZ stream uses "
                                     "integrity check %d; only CRC32 and "
                                     "none are accepted (as by the NDK "
                                     "driver)", (int)check);
                goto fail;
            }
            continue;
        }
        if (r == LZMA_STREAM_END) {
            break;
        }
        code = ptl_set_error(err, r == LZMA_MEM_ERROR ? PTL_E_INTERNAL
                                                      : PTL_E_DEVTREE,
                             "cannot decompress the device tree: %s",
                             lzma_ret_text(r));
        goto fail;
    }
    /*
     * Bytes after the end of the stream are ignored, as the driver does
     * (the tree is read in whole 32-bit words).
     */
    *fdt_len = strm.total_out;
    *fdt = out;
    lzma_end(&strm);
    if (*fdt_len == 0) {
        free(out);
        *fdt = NULL;
        return ptl_set_error(err, PTL_E_DEVTREE,
                             "the device tree decompresses to nothing");
    }
    return PTL_OK;

fail:
    lzma_end(&strm);
    free(out);
    return code;
}

/* #address-cells / #size-cells of node; 0 if absent, -1 if malformed. */
static int cells_prop(const void *fdt, int node, const char *name)
{
    const fdt32_t *p;
    int plen;

    p = fdt_getprop(fdt, node, name, &plen);
    if (!p) {
        return 0;
    }
    if (plen != 4) {
        return -1;
    }
    return (int)fdt32_to_cpu(*p);
}

static uint64_t read_cells(const fdt32_t *p, int n)
{
    uint64_t v = 0;
    int i;

    for (i = 0; i < n; i++) {
        v = (v << 32) | fdt32_to_cpu(p[i]);
    }
    return v;
}

static uint32_t u32_prop(const void *fdt, int node, const char *name)
{
    const fdt32_t *p;
    int plen;

    p = fdt_getprop(fdt, node, name, &plen);
    if (!p || plen < 4) {
        return 0;
    }
    return fdt32_to_cpu(*p);
}

/* Parses "PCI<e>,BAR<n>"; false if the string is anything else. */
static bool parse_resource(const char *s, int len, unsigned *ep,
                           unsigned *bar)
{
    char buf[64];
    unsigned e, b;
    int used = -1;

    if (len <= 0 || len > (int)sizeof(buf) || s[len - 1] != '\0') {
        return false;
    }
    memcpy(buf, s, len);
    if (sscanf(buf, "PCI%u,BAR%u%n", &e, &b, &used) != 2 || used < 0 ||
        buf[used] != '\0') {
        return false;
    }
    *ep = e;
    *bar = b;
    return true;
}

static ptl_err check_fdt(const void *fdt, size_t len, ptl_error *err)
{
    int rc;

    if (!fdt || len < sizeof(struct fdt_header)) {
        return ptl_set_error(err, PTL_E_DEVTREE,
                             "the device tree is too short (%zu bytes)", len);
    }
    rc = fdt_check_header(fdt);
    if (rc != 0) {
        return ptl_set_error(err, PTL_E_DEVTREE,
                             "the device tree is not a flattened device "
                             "tree: %s", fdt_strerror(rc));
    }
    if (fdt_totalsize(fdt) > len) {
        return ptl_set_error(err, PTL_E_DEVTREE,
                             "the device tree claims %u bytes but only %zu "
                             "were decompressed", fdt_totalsize(fdt), len);
    }
    return PTL_OK;
}

/*
 * Where node is in the card's BARs: the BAR of the MI bus that encloses
 * it and its reg. *taken false (and PTL_OK) for a node on no MI bus
 * (nothing maps it) or on another endpoint's.
 */
static ptl_err node_place(const void *fdt, int node, unsigned endpoint,
                          bool *taken, char *path, size_t path_len,
                          unsigned *bar, uint64_t *offset, uint64_t *size,
                          ptl_error *err)
{
    int parent = fdt_parent_offset(fdt, node);
    int bus = parent;
    const char *res;
    const fdt32_t *reg;
    int res_len, reg_len, ac, sc;
    unsigned bus_ep;

    *taken = false;
    /* The enclosing MI bus says which endpoint and BAR hold it. */
    while (bus >= 0 &&
           fdt_node_check_compatible(fdt, bus, PTL_MI_BUS_COMPATIBLE)) {
        bus = fdt_parent_offset(fdt, bus);
    }
    if (bus < 0) {
        return PTL_OK;
    }
    res = fdt_getprop(fdt, bus, "resource", &res_len);
    if (!res || !parse_resource(res, res_len, &bus_ep, bar)) {
        char bus_path[128];

        if (fdt_get_path(fdt, bus, bus_path, sizeof(bus_path)) != 0) {
            snprintf(bus_path, sizeof(bus_path), "(node at %d)", bus);
        }
        return ptl_set_error(err, PTL_E_DEVTREE,
                             "MI bus %s has no resource property of the "
                             "form \"PCI<e>,BAR<n>\"", bus_path);
    }
    if (bus_ep != endpoint) {
        return PTL_OK;
    }

    /*
     * reg is in the cells of the direct parent, else of the bus;
     * NDK trees give 1 and 1.
     */
    ac = cells_prop(fdt, parent, "#address-cells");
    sc = cells_prop(fdt, parent, "#size-cells");
    if (ac == 0) {
        ac = cells_prop(fdt, bus, "#address-cells");
    }
    if (sc == 0) {
        sc = cells_prop(fdt, bus, "#size-cells");
    }
    ac = ac == 0 ? 1 : ac;
    sc = sc == 0 ? 1 : sc;
    reg = fdt_getprop(fdt, node, "reg", &reg_len);

    if (fdt_get_path(fdt, node, path, path_len) != 0) {
        const char *name = fdt_get_name(fdt, node, NULL);

        snprintf(path, path_len, "%s", name ? name : "?");
    }
    if (ac < 1 || ac > 2 || sc < 1 || sc > 2) {
        return ptl_set_error(err, PTL_E_DEVTREE,
                             "%s: #address-cells %d / #size-cells %d "
                             "are not supported (1 or 2)", path, ac, sc);
    }
    if (!reg || reg_len < (ac + sc) * 4) {
        return ptl_set_error(err, PTL_E_DEVTREE,
                             "%s: reg is missing or shorter than %d "
                             "cells", path, ac + sc);
    }
    if (*bar > 5) {
        return ptl_set_error(err, PTL_E_DEVTREE,
                             "%s: its bus is mapped to BAR%u, which no "
                             "PCI function has", path, *bar);
    }
    *offset = read_cells(reg, ac);
    *size = read_cells(reg + ac, sc);
    *taken = true;
    return PTL_OK;
}

/*
 * The nodes compatible with compatible on an MI bus of endpoint, in tree
 * order, placed (path, BAR, reg), with their offsets in the tree for the
 * caller's own properties (*list and *offs malloc'd, both NULL when *n is
 * 0). Errors: those of check_fdt and node_place, PTL_E_DEVTREE for a
 * damaged tree, PTL_E_INTERNAL.
 */
static ptl_err placed_nodes(const void *fdt, size_t len,
                            const char *compatible, unsigned endpoint,
                            ptl_dt_node **list, int **offs, unsigned *n,
                            ptl_error *err)
{
    unsigned count = 0, cap = 0;
    int node;
    ptl_err code;

    *list = NULL;
    *offs = NULL;
    *n = 0;
    code = check_fdt(fdt, len, err);
    if (code != PTL_OK) {
        return code;
    }
    for (node = fdt_node_offset_by_compatible(fdt, -1, compatible);
         node >= 0;
         node = fdt_node_offset_by_compatible(fdt, node, compatible)) {
        ptl_dt_node dn = { 0 };
        bool taken;

        code = node_place(fdt, node, endpoint, &taken, dn.path,
                          sizeof(dn.path), &dn.bar, &dn.offset, &dn.size,
                          err);
        if (code != PTL_OK) {
            goto fail;
        }
        if (!taken) {
            continue;
        }
        if (cap == count) {
            ptl_dt_node *grown;
            int *grown_offs;

            cap = cap ? cap * 2 : 4;
            grown = realloc(*list, cap * sizeof(**list));
            if (grown) {
                *list = grown;
            }
            grown_offs = realloc(*offs, cap * sizeof(**offs));
            if (grown_offs) {
                *offs = grown_offs;
            }
            if (!grown || !grown_offs) {
                code = ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
                goto fail;
            }
        }
        (*list)[count] = dn;
        (*offs)[count++] = node;
    }
    if (node != -FDT_ERR_NOTFOUND) {
        code = ptl_set_error(err, PTL_E_DEVTREE,
                             "the device tree is damaged: %s",
                             fdt_strerror(node));
        goto fail;
    }
    *n = count;
    return PTL_OK;
fail:
    free(*list);
    free(*offs);
    *list = NULL;
    *offs = NULL;
    return code;
}

ptl_err ptl_devtree_nodes(const void *fdt, size_t len, unsigned endpoint,
                          ptl_node_info **nodes, unsigned *n, ptl_error *err)
{
    ptl_dt_node *placed;
    ptl_node_info *list = NULL;
    int *offs;
    unsigned count;
    ptl_err code;

    *nodes = NULL;
    *n = 0;
    code = placed_nodes(fdt, len, PTL_COMPATIBLE, endpoint, &placed, &offs,
                        &count, err);
    if (code != PTL_OK) {
        return code;
    }
    if (count > 0) {
        list = calloc(count, sizeof(*list));
        if (!list) {
            free(placed);
            free(offs);
            return ptl_set_error(err, PTL_E_INTERNAL, "out of memory");
        }
    }
    for (unsigned i = 0; i < count; i++) {
        memcpy(list[i].path, placed[i].path, sizeof(list[i].path));
        list[i].bar = placed[i].bar;
        list[i].offset = placed[i].offset;
        list[i].size = placed[i].size;
        list[i].version = u32_prop(fdt, offs[i], "version");
        list[i].pcie_endpoints = u32_prop(fdt, offs[i], "pcie-endpoints");
    }
    free(placed);
    free(offs);
    *nodes = list;
    *n = count;
    return PTL_OK;
}

ptl_err ptl_devtree_compatible(const void *fdt, size_t len,
                               const char *compatible, unsigned endpoint,
                               ptl_dt_node **nodes, unsigned *n,
                               ptl_error *err)
{
    int *offs;
    ptl_err code = placed_nodes(fdt, len, compatible, endpoint, nodes, &offs,
                                n, err);

    if (code != PTL_OK) {
        return code;
    }
    for (unsigned i = 0; i < *n; i++) {
        (*nodes)[i].clock_hz = u32_prop(fdt, offs[i], "clock-frequency");
    }
    free(offs);
    return PTL_OK;
}

/* ---------------------------------------------------------------------
 * The firmware's identity. The tree comes from the card: a property may
 * be missing, empty, without its NUL, longer than any buffer, or hold
 * bytes that a terminal would take for commands.
 */

/*
 * Bytes of the character at s[0..n) that are shown as they are: printable
 * ASCII, or a well-formed UTF-8 sequence of a character that is not a C1
 * control; 0 for a byte shown as '?'.
 */
static unsigned text_char_len(const uint8_t *s, size_t n)
{
    uint32_t cp;
    unsigned len;

    if (s[0] >= 0x20 && s[0] < 0x7f) {
        return 1;
    }
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        cp = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        cp = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len) {
        return 0;
    }
    for (unsigned i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    /* overlong forms, surrogates, past U+10FFFF, C1 controls */
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
        (cp >= 0x80 && cp < 0xa0)) {
        return 0;
    }
    return len;
}

/*
 * Writes s[0..n) as shown into dst (NULL: nowhere), whole characters only,
 * at most limit bytes; returns the bytes written.
 */
static size_t put_text(char *dst, size_t limit, const uint8_t *s, size_t n)
{
    size_t in = 0, out = 0;

    while (in < n) {
        unsigned k = text_char_len(s + in, n - in);
        size_t put = k ? k : 1;

        if (out + put > limit) {
            break;
        }
        if (dst && k) {
            memcpy(dst + out, s + in, k);
        } else if (dst) {
            dst[out] = '?';
        }
        out += put;
        in += put;
    }
    return out;
}

/* The first string of a property of len bytes (all of them without NUL). */
static void copy_text(char *dst, size_t size, const void *prop, int len)
{
    size_t n, end;

    dst[0] = '\0';
    if (!prop || len <= 0) {
        return;
    }
    n = strnlen(prop, (size_t)len);
    if (put_text(NULL, SIZE_MAX, prop, n) < size) {
        end = put_text(dst, size - 1, prop, n);
    } else {
        end = put_text(dst, size - 4, prop, n);
        memcpy(dst + end, "...", 3);
        end += 3;
    }
    dst[end] = '\0';
}

static void text_prop(const void *fdt, int node, const char *name,
                      char *dst, size_t size)
{
    const void *p = NULL;
    int len = 0;

    if (node >= 0) {
        p = fdt_getprop(fdt, node, name, &len);
    }
    copy_text(dst, size, p, len);
}

/* A 32-bit property: exactly 4 bytes, as nfb-info takes it. */
static bool u32_exact_prop(const void *fdt, int node, const char *name,
                           uint32_t *value)
{
    const void *p;
    int len;

    if (node < 0) {
        return false;
    }
    p = fdt_getprop(fdt, node, name, &len);
    if (!p || len != 4) {
        return false;
    }
    /* byte by byte: nothing in a tree from the card is known aligned */
    *value = fdt32_ld(p);
    return true;
}

/* serial-number of node, else its serial-number-string; false: neither. */
static bool serial_prop(const void *fdt, int node, char *dst, size_t size)
{
    uint32_t serial;

    if (u32_exact_prop(fdt, node, "serial-number", &serial)) {
        snprintf(dst, size, "%u", serial);
        return true;
    }
    text_prop(fdt, node, "serial-number-string", dst, size);
    return dst[0] != '\0';
}

void ptl_devtree_firmware(const void *fdt, size_t len, ptl_firmware_info *fw)
{
    int node;

    memset(fw, 0, sizeof(*fw));
    if (!fdt || len < sizeof(struct fdt_header) ||
        fdt_check_header(fdt) != 0 || fdt_totalsize(fdt) > len) {
        return;
    }
    node = fdt_path_offset(fdt, "/firmware");
    text_prop(fdt, node, "card-name", fw->card_name, sizeof(fw->card_name));
    text_prop(fdt, node, "project-name", fw->project_name,
              sizeof(fw->project_name));
    text_prop(fdt, node, "project-variant", fw->project_variant,
              sizeof(fw->project_variant));
    text_prop(fdt, node, "project-version", fw->project_version,
              sizeof(fw->project_version));
    text_prop(fdt, node, "build-tool", fw->build_tool,
              sizeof(fw->build_tool));
    text_prop(fdt, node, "build-author", fw->build_author,
              sizeof(fw->build_author));
    text_prop(fdt, node, "build-revision", fw->build_revision,
              sizeof(fw->build_revision));
    fw->has_build_time = u32_exact_prop(fdt, node, "build-time",
                                        &fw->build_time);
    if (!serial_prop(fdt, fdt_path_offset(fdt, "/board"), fw->serial_number,
                     sizeof(fw->serial_number))) {
        serial_prop(fdt, node, fw->serial_number, sizeof(fw->serial_number));
    }
}
