/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libpcie-telemetry's device-tree half: XZ decompression and the walk
 * over the telemetry nodes. The trees are written here with libfdt's
 * sequential-write functions and compressed here with liblzma, so the
 * expected offsets and sizes are the ones each test put in.
 */
#include <glib.h>
#include <string.h>
#include <libfdt.h>
#include <lzma.h>

#include "pcie-telemetry.h"
#include "ptm-devtree.h"

#define COMPAT "cesnet,ofm,pcie_telemetry_mi"
#define BUS    "netcope,bus,mi"

typedef struct TNode {
    const char *name;
    uint64_t offset, size;
    uint32_t version, eps;
    bool no_reg;
} TNode;

typedef struct TBus {
    const char *name;
    const char *resource;       /* NULL: none */
    int cells;                  /* #address-cells = #size-cells */
    TNode nodes[4];
} TBus;

static void cells(void *fdt, const char *name, uint64_t v, int n)
{
    fdt32_t c[2];

    if (n == 2) {
        c[0] = cpu_to_fdt32(v >> 32);
        c[1] = cpu_to_fdt32((uint32_t)v);
    } else {
        c[0] = cpu_to_fdt32((uint32_t)v);
    }
    g_assert_cmpint(fdt_property(fdt, name, c, 4 * n), ==, 0);
}

static void put_node(void *fdt, const TNode *n, int ncells)
{
    g_assert_cmpint(fdt_begin_node(fdt, n->name), ==, 0);
    g_assert_cmpint(fdt_property_string(fdt, "compatible", COMPAT), ==, 0);
    if (!n->no_reg) {
        fdt32_t reg[4];
        int k = 0;

        if (ncells == 2) {
            reg[k++] = cpu_to_fdt32(n->offset >> 32);
        }
        reg[k++] = cpu_to_fdt32((uint32_t)n->offset);
        if (ncells == 2) {
            reg[k++] = cpu_to_fdt32(n->size >> 32);
        }
        reg[k++] = cpu_to_fdt32((uint32_t)n->size);
        g_assert_cmpint(fdt_property(fdt, "reg", reg, 4 * k), ==, 0);
    }
    cells(fdt, "version", n->version, 1);
    cells(fdt, "pcie-endpoints", n->eps, 1);
    g_assert_cmpint(fdt_end_node(fdt), ==, 0);
}

/* A tree with /firmware holding the buses; loose: a node outside them. */
static size_t make_fdt(void *buf, size_t len, const TBus *buses,
                       const TNode *loose)
{
    g_assert_cmpint(fdt_create(buf, len), ==, 0);
    g_assert_cmpint(fdt_finish_reservemap(buf), ==, 0);
    g_assert_cmpint(fdt_begin_node(buf, ""), ==, 0);
    cells(buf, "#address-cells", 1, 1);
    cells(buf, "#size-cells", 1, 1);
    g_assert_cmpint(fdt_begin_node(buf, "firmware"), ==, 0);
    for (const TBus *b = buses; b && b->name; b++) {
        g_assert_cmpint(fdt_begin_node(buf, b->name), ==, 0);
        g_assert_cmpint(fdt_property_string(buf, "compatible", BUS), ==, 0);
        if (b->resource) {
            g_assert_cmpint(fdt_property_string(buf, "resource",
                                                b->resource), ==, 0);
        }
        cells(buf, "#address-cells", b->cells, 1);
        cells(buf, "#size-cells", b->cells, 1);
        for (const TNode *n = b->nodes; n->name; n++) {
            put_node(buf, n, b->cells);
        }
        g_assert_cmpint(fdt_end_node(buf), ==, 0);
    }
    if (loose) {
        put_node(buf, loose, 1);
    }
    g_assert_cmpint(fdt_end_node(buf), ==, 0);     /* firmware */
    g_assert_cmpint(fdt_end_node(buf), ==, 0);     /* root */
    g_assert_cmpint(fdt_finish(buf), ==, 0);
    return fdt_totalsize(buf);
}

/* Preset 0: a small dictionary, as firmware uses, and fast tests. */
static uint8_t *xz(const void *in, size_t len, lzma_check check,
                   size_t *out_len)
{
    size_t cap = lzma_stream_buffer_bound(len), pos = 0;
    uint8_t *out = g_malloc(cap);

    g_assert_cmpint(lzma_easy_buffer_encode(0, check, NULL, in, len, out,
                                            &pos, cap), ==, LZMA_OK);
    *out_len = pos;
    return out;
}

/* Compress, decompress with the library, list the nodes of endpoint ep. */
static ptl_err roundtrip(const TBus *buses, const TNode *loose, unsigned ep,
                         ptl_node_info **nodes, unsigned *n, ptl_error *e)
{
    static uint8_t fdt[8192];
    size_t flen = make_fdt(fdt, sizeof(fdt), buses, loose), xlen, olen;
    uint8_t *x = xz(fdt, flen, LZMA_CHECK_CRC32, &xlen);
    void *out;
    ptl_err r;

    r = ptl_devtree_decompress(x, xlen, &out, &olen, e);
    g_free(x);
    g_assert_cmpint(r, ==, PTL_OK);
    g_assert_cmpuint(olen, ==, flen);
    g_assert_cmpmem(out, olen, fdt, flen);
    r = ptl_devtree_nodes(out, olen, ep, nodes, n, e);
    free(out);
    return r;
}

static void test_one_node(void)
{
    TBus b[] = {
        { "mi_bus0", "PCI0,BAR0", 1,
          { { "pcie_telemetry@20000", 0x20000, 0x10000, 0x20000, 2 } } },
        { NULL },
    };
    ptl_node_info *nodes;
    unsigned n;
    ptl_error e = { 0 };

    g_assert_cmpint(roundtrip(b, NULL, 0, &nodes, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpstr(nodes[0].path, ==,
                    "/firmware/mi_bus0/pcie_telemetry@20000");
    g_assert_cmpuint(nodes[0].bar, ==, 0);
    g_assert_cmpuint(nodes[0].offset, ==, 0x20000);
    g_assert_cmpuint(nodes[0].size, ==, 0x10000);
    g_assert_cmpuint(nodes[0].version, ==, 0x20000);
    g_assert_cmpuint(nodes[0].pcie_endpoints, ==, 2);
    free(nodes);
}

/* Index N is tree order, not the order of the offsets. */
static void test_two_nodes_order(void)
{
    TBus b[] = {
        { "mi_bus0", "PCI0,BAR0", 1,
          { { "telemetry_b", 0x40000, 0x10000, 0x20001, 1 } } },
        { "mi_bus1", "PCI0,BAR2", 1,
          { { "telemetry_a", 0x10000, 0x10000, 0x20000, 1 } } },
        { NULL },
    };
    ptl_node_info *nodes;
    unsigned n;
    ptl_error e = { 0 };

    g_assert_cmpint(roundtrip(b, NULL, 0, &nodes, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmpuint(nodes[0].offset, ==, 0x40000);
    g_assert_cmpuint(nodes[0].bar, ==, 0);
    g_assert_cmpuint(nodes[0].version, ==, 0x20001);
    g_assert_cmpuint(nodes[1].offset, ==, 0x10000);
    g_assert_cmpuint(nodes[1].bar, ==, 2);
    g_assert_cmpstr(nodes[1].path, ==, "/firmware/mi_bus1/telemetry_a");
    free(nodes);
}

/* A node on the bus of another endpoint belongs to that endpoint. */
static void test_other_endpoint(void)
{
    TBus b[] = {
        { "mi_bus0", "PCI0,BAR0", 1,
          { { "t0", 0x10000, 0x10000, 0x20000, 2 } } },
        { "mi_bus1", "PCI1,BAR0", 1,
          { { "t1", 0x30000, 0x10000, 0x20000, 2 },
            { "t2", 0x50000, 0x10000, 0x20000, 2 } } },
        { NULL },
    };
    ptl_node_info *nodes;
    unsigned n;
    ptl_error e = { 0 };

    g_assert_cmpint(roundtrip(b, NULL, 0, &nodes, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpuint(nodes[0].offset, ==, 0x10000);
    free(nodes);
    g_assert_cmpint(roundtrip(b, NULL, 1, &nodes, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmpuint(nodes[0].offset, ==, 0x30000);
    g_assert_cmpuint(nodes[1].offset, ==, 0x50000);
    free(nodes);
    g_assert_cmpint(roundtrip(b, NULL, 2, &nodes, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 0);
    g_assert_null(nodes);
}

static void test_two_cell_reg(void)
{
    TBus b[] = {
        { "mi_bus0", "PCI0,BAR4", 2,
          { { "t", 0x100020000ull, 0x10000, 0x20000, 1 } } },
        { NULL },
    };
    ptl_node_info *nodes;
    unsigned n;
    ptl_error e = { 0 };

    g_assert_cmpint(roundtrip(b, NULL, 0, &nodes, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpuint(nodes[0].bar, ==, 4);
    g_assert_cmpuint(nodes[0].offset, ==, 0x100020000ull);
    g_assert_cmpuint(nodes[0].size, ==, 0x10000);
    free(nodes);
}

/* A node outside every MI bus cannot be mapped: it is not listed. */
static void test_node_outside_bus(void)
{
    TBus b[] = {
        { "mi_bus0", "PCI0,BAR0", 1,
          { { "t", 0x8000000, 0x10000, 0x20000, 1 } } },
        { NULL },
    };
    TNode loose = { "loose", 0x1000, 0x10000, 0x20000, 1 };
    ptl_node_info *nodes;
    unsigned n;
    ptl_error e = { 0 };

    g_assert_cmpint(roundtrip(b, &loose, 0, &nodes, &n, &e), ==, PTL_OK);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpuint(nodes[0].offset, ==, 0x8000000);
    free(nodes);
}

static void test_bad_resource(void)
{
    TBus b1[] = {
        { "mi_bus0", "PCIe0,BAR0", 1, { { "t", 0, 0x10000, 0x20000, 1 } } },
        { NULL },
    };
    TBus b2[] = {
        { "mi_bus0", NULL, 1, { { "t", 0, 0x10000, 0x20000, 1 } } },
        { NULL },
    };
    TBus b3[] = {
        { "mi_bus0", "PCI0,BAR6", 1, { { "t", 0, 0x10000, 0x20000, 1 } } },
        { NULL },
    };
    ptl_node_info *nodes;
    unsigned n;
    ptl_error e = { 0 };

    g_assert_cmpint(roundtrip(b1, NULL, 0, &nodes, &n, &e), ==,
                    PTL_E_DEVTREE);
    g_assert_nonnull(strstr(e.msg, "/firmware/mi_bus0"));
    g_assert_nonnull(strstr(e.msg, "PCI<e>,BAR<n>"));
    g_assert_cmpint(roundtrip(b2, NULL, 0, &nodes, &n, &e), ==,
                    PTL_E_DEVTREE);
    g_assert_cmpint(roundtrip(b3, NULL, 0, &nodes, &n, &e), ==,
                    PTL_E_DEVTREE);
    g_assert_nonnull(strstr(e.msg, "BAR6"));
}

static void test_missing_reg(void)
{
    TBus b[] = {
        { "mi_bus0", "PCI0,BAR0", 1,
          { { "t", 0, 0x10000, 0x20000, 1, .no_reg = true } } },
        { NULL },
    };
    ptl_node_info *nodes;
    unsigned n;
    ptl_error e = { 0 };

    g_assert_cmpint(roundtrip(b, NULL, 0, &nodes, &n, &e), ==,
                    PTL_E_DEVTREE);
    g_assert_nonnull(strstr(e.msg, "reg"));
    g_assert_null(nodes);
}

/*
 * Cells the library does not take: the message names the node (its path
 * is copied out of the node list, which is freed on the way out).
 */
static void test_bad_cells(void)
{
    TBus b[] = {
        { "mi_bus0", "PCI0,BAR0", 3, { { "telemetry_a", 0, 0x10000,
                                         0x20000, 1 } } },
        { NULL },
    };
    ptl_node_info *nodes;
    unsigned n;
    ptl_error e = { 0 };

    g_assert_cmpint(roundtrip(b, NULL, 0, &nodes, &n, &e), ==,
                    PTL_E_DEVTREE);
    g_assert_null(nodes);
    g_assert_cmpstr(e.msg, ==, "/firmware/mi_bus0/telemetry_a: "
                    "#address-cells 3 / #size-cells 3 are not supported "
                    "(1 or 2)");
}

static uint8_t sample_fdt[4096];
static size_t sample_len;

static void make_sample(void)
{
    TBus b[] = {
        { "mi_bus0", "PCI0,BAR0", 1, { { "t", 0, 0x10000, 0x20000, 1 } } },
        { NULL },
    };

    sample_len = make_fdt(sample_fdt, sizeof(sample_fdt), b, NULL);
}

static ptl_err decompress(const uint8_t *x, size_t len, ptl_error *e)
{
    void *out = (void *)1;
    size_t olen = 1;
    ptl_err r = ptl_devtree_decompress(x, len, &out, &olen, e);

    if (r == PTL_OK) {
        g_assert_cmpuint(olen, ==, sample_len);
        g_assert_cmpmem(out, olen, sample_fdt, sample_len);
        free(out);
    } else {
        g_assert_null(out);
        g_assert_cmpuint(olen, ==, 0);
        g_assert_cmpint(e->code, ==, r);
        g_assert_null(strchr(e->msg, '\n'));
    }
    return r;
}

static void test_xz_checks(void)
{
    static const struct {
        lzma_check check;
        ptl_err want;
    } cases[] = {
        /* what the kernel's decoder (the NDK driver) takes ... */
        { LZMA_CHECK_NONE, PTL_OK },
        { LZMA_CHECK_CRC32, PTL_OK },
        /* ... and what it refuses, so no firmware can ship it */
        { LZMA_CHECK_CRC64, PTL_E_DEVTREE },
        { LZMA_CHECK_SHA256, PTL_E_DEVTREE },
    };
    ptl_error e = { 0 };

    make_sample();
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        size_t len;
        uint8_t *x = xz(sample_fdt, sample_len, cases[i].check, &len);

        g_assert_cmpint(decompress(x, len, &e), ==, cases[i].want);
        if (cases[i].want != PTL_OK) {
            g_assert_nonnull(strstr(e.msg, "CRC32"));
        }
        g_free(x);
    }
}

static void test_xz_damaged(void)
{
    ptl_error e = { 0 };
    uint8_t garbage[256];
    uint8_t *x, *padded;
    size_t len;

    make_sample();
    x = xz(sample_fdt, sample_len, LZMA_CHECK_CRC32, &len);

    /* missing */
    g_assert_cmpint(decompress(NULL, 0, &e), ==, PTL_E_DEVTREE);
    g_assert_cmpint(decompress(x, 0, &e), ==, PTL_E_DEVTREE);

    /* garbage */
    for (size_t i = 0; i < sizeof(garbage); i++) {
        garbage[i] = (uint8_t)(i * 37 + 11);
    }
    g_assert_cmpint(decompress(garbage, sizeof(garbage), &e), ==,
                    PTL_E_DEVTREE);
    g_assert_nonnull(strstr(e.msg, "not an XZ stream"));

    /* truncated anywhere */
    for (size_t cut = 1; cut < len; cut += (cut < 16 || cut > len - 16)
                                           ? 1 : 7) {
        g_assert_cmpint(decompress(x, cut, &e), ==, PTL_E_DEVTREE);
    }
    g_assert_cmpint(decompress(x, len - 1, &e), ==, PTL_E_DEVTREE);
    g_assert_nonnull(strstr(e.msg, "truncated"));

    /* a flipped bit inside the compressed data */
    x[len / 2] ^= 0x10;
    g_assert_cmpint(decompress(x, len, &e), ==, PTL_E_DEVTREE);
    x[len / 2] ^= 0x10;

    /* whole words are read from the card: zero padding after the end */
    padded = g_malloc0(len + 3);
    memcpy(padded, x, len);
    g_assert_cmpint(decompress(padded, len + 3, &e), ==, PTL_OK);
    g_free(padded);
    g_free(x);
}

/* A good XZ stream of something that is not a flattened device tree. */
static void test_not_fdt(void)
{
    static const char text[] = "firmware { mi_bus0 { } }; not a DTB at all "
                               "but long enough for a header";
    ptl_node_info *nodes = (void *)1;
    unsigned n = 7;
    ptl_error e = { 0 };
    size_t xlen, olen;
    uint8_t *x = xz(text, sizeof(text), LZMA_CHECK_CRC32, &xlen);
    void *out;

    g_assert_cmpint(ptl_devtree_decompress(x, xlen, &out, &olen, &e), ==,
                    PTL_OK);
    g_assert_cmpint(ptl_devtree_nodes(out, olen, 0, &nodes, &n, &e), ==,
                    PTL_E_DEVTREE);
    g_assert_nonnull(strstr(e.msg, "not a flattened device tree"));
    g_assert_null(nodes);
    g_assert_cmpuint(n, ==, 0);
    /* shorter than a header */
    g_assert_cmpint(ptl_devtree_nodes(out, 8, 0, &nodes, &n, &e), ==,
                    PTL_E_DEVTREE);
    free(out);
    g_free(x);

    /* a tree cut short: its header claims more than there is */
    make_sample();
    g_assert_cmpint(ptl_devtree_nodes(sample_fdt, sample_len - 8, 0, &nodes,
                                      &n, &e), ==, PTL_E_DEVTREE);
}

/*
 * The tree the virtual card builds, read word by word as from its VSEC
 * data register (little-endian bytes 4i..4i+3), then parsed here.
 */
static void test_card_tree(void)
{
    static const uint32_t offsets[] = { 0, 0x20000, 0x1230000 };

    for (size_t k = 0; k < G_N_ELEMENTS(offsets); k++) {
        char *err = NULL;
        size_t xlen, olen;
        uint8_t *x = ptm_devtree_build(offsets[k], 0x00020000, 3, &xlen,
                                       &err);
        size_t words = (xlen + 3) / 4;
        uint8_t *buf = g_malloc0(words * 4);
        ptl_node_info *nodes;
        unsigned n;
        ptl_error e = { 0 };
        void *fdt;

        g_assert_null(err);
        for (size_t i = 0; i < words; i++) {
            uint32_t w = ptm_devtree_word(x, xlen, i);

            buf[4 * i] = w;
            buf[4 * i + 1] = w >> 8;
            buf[4 * i + 2] = w >> 16;
            buf[4 * i + 3] = w >> 24;
        }
        g_assert_cmpint(ptl_devtree_decompress(buf, xlen, &fdt, &olen, &e),
                        ==, PTL_OK);
        g_assert_cmpint(ptl_devtree_nodes(fdt, olen, 0, &nodes, &n, &e), ==,
                        PTL_OK);
        g_assert_cmpuint(n, ==, 1);
        g_assert_cmpuint(nodes[0].bar, ==, 0);
        g_assert_cmpuint(nodes[0].offset, ==, offsets[k]);
        g_assert_cmpuint(nodes[0].size, ==, 0x10000);
        g_assert_cmpuint(nodes[0].version, ==, 0x00020000);
        g_assert_cmpuint(nodes[0].pcie_endpoints, ==, 3);
        free(nodes);
        /* the card's tree is on endpoint 0 only */
        g_assert_cmpint(ptl_devtree_nodes(fdt, olen, 1, &nodes, &n, &e), ==,
                        PTL_OK);
        g_assert_cmpuint(n, ==, 0);
        free(fdt);
        g_free(buf);
        g_free(x);
    }
}

/* ---------------------------------------------------------------------
 * The firmware's identity: /firmware's properties and the serial number.
 */
typedef struct TProp {
    const char *node;           /* "/firmware" or "/board" */
    const char *name;
    const void *value;
    int len;                    /* -1: a string with its NUL */
} TProp;

static uint8_t fw_fdt[65536];

/* A tree of the nodes and properties in props[], up to one with no name. */
static void *make_fw_fdt(const TProp *props)
{
    g_assert_cmpint(fdt_create_empty_tree(fw_fdt, sizeof(fw_fdt)), ==, 0);
    for (const TProp *p = props; p->name; p++) {
        int node = fdt_path_offset(fw_fdt, p->node);
        int len = p->len < 0 ? (int)strlen(p->value) + 1 : p->len;

        if (node == -FDT_ERR_NOTFOUND) {
            node = fdt_add_subnode(fw_fdt, 0, p->node + 1);
        }
        g_assert_cmpint(node, >=, 0);
        g_assert_cmpint(fdt_setprop(fw_fdt, node, p->name, p->value, len), ==,
                        0);
    }
    g_assert_cmpint(fdt_pack(fw_fdt), ==, 0);
    return fw_fdt;
}

static void firmware_of(const TProp *props, ptl_firmware_info *fw)
{
    void *fdt = make_fw_fdt(props);

    /* anything in it is overwritten */
    memset(fw, 'x', sizeof(*fw));
    ptl_devtree_firmware(fdt, fdt_totalsize(fdt), fw);
}

static void test_firmware_all(void)
{
    static const uint8_t build_time[4] = { 0x6b, 0x0f, 0x6d, 0xa6 };
    static const uint8_t serial[4] = { 0x00, 0x01, 0xe2, 0x40 };
    const TProp props[] = {
        { "/firmware", "card-name", "COMBO-400G1", -1 },
        { "/firmware", "project-name", "NDK_MINIMAL", -1 },
        { "/firmware", "project-variant", "400G1", -1 },
        { "/firmware", "project-version", "0.7.2", -1 },
        { "/firmware", "build-time", build_time, 4 },
        { "/firmware", "build-tool", "Quartus Prime Pro 23.4", -1 },
        { "/firmware", "build-author", "Jana Nov\xc3\xa1kov\xc3\xa1", -1 },
        { "/firmware", "build-revision", "a1b2c3d", -1 },
        { "/board", "serial-number", serial, 4 },
        { "/board", "serial-number-string", "SN-OTHER", -1 },
        { "/firmware", "serial-number", "no", -1 },
        { NULL },
    };
    ptl_firmware_info fw;

    firmware_of(props, &fw);
    g_assert_cmpstr(fw.card_name, ==, "COMBO-400G1");
    g_assert_cmpstr(fw.project_name, ==, "NDK_MINIMAL");
    g_assert_cmpstr(fw.project_variant, ==, "400G1");
    g_assert_cmpstr(fw.project_version, ==, "0.7.2");
    g_assert_true(fw.has_build_time);
    g_assert_cmpuint(fw.build_time, ==, 0x6b0f6da6);
    g_assert_cmpstr(fw.build_tool, ==, "Quartus Prime Pro 23.4");
    /* UTF-8 is kept as it is */
    g_assert_cmpstr(fw.build_author, ==, "Jana Nov\xc3\xa1kov\xc3\xa1");
    g_assert_cmpstr(fw.build_revision, ==, "a1b2c3d");
    /* /board's number first, as nfb-info takes it */
    g_assert_cmpstr(fw.serial_number, ==, "123456");
}

static void test_firmware_missing(void)
{
    static const uint8_t big_serial[4] = { 0xff, 0xff, 0xff, 0xfe };
    const TProp only_card[] = {
        { "/firmware", "card-name", "COMBO-GENERIC", -1 },
        { NULL },
    };
    const TProp serials[] = {
        /* /board's number of another length: its string is taken */
        { "/board", "serial-number", big_serial, 3 },
        { "/board", "serial-number-string", "A-0042", -1 },
        { NULL },
    };
    const TProp fw_serial[] = {
        /* neither in /board: /firmware's, a number beyond 2^31 */
        { "/board", "serial-number-string", "", -1 },
        { "/firmware", "serial-number", big_serial, 4 },
        { NULL },
    };
    const TProp other_nodes[] = {
        { "/firmware-old", "card-name", "NO", -1 },
        { "/system", "project-name", "NO", -1 },
        { NULL },
    };
    const TProp none[] = { { NULL } };
    ptl_firmware_info fw, empty;

    memset(&empty, 0, sizeof(empty));
    firmware_of(only_card, &fw);
    g_assert_cmpstr(fw.card_name, ==, "COMBO-GENERIC");
    g_assert_cmpstr(fw.project_name, ==, "");
    g_assert_cmpstr(fw.project_version, ==, "");
    g_assert_cmpstr(fw.serial_number, ==, "");
    g_assert_false(fw.has_build_time);
    g_assert_cmpuint(fw.build_time, ==, 0);

    firmware_of(serials, &fw);
    g_assert_cmpstr(fw.serial_number, ==, "A-0042");
    g_assert_cmpstr(fw.card_name, ==, "");
    firmware_of(fw_serial, &fw);
    g_assert_cmpstr(fw.serial_number, ==, "4294967294");

    firmware_of(other_nodes, &fw);
    g_assert_cmpmem(&fw, sizeof(fw), &empty, sizeof(empty));
    firmware_of(none, &fw);
    g_assert_cmpmem(&fw, sizeof(fw), &empty, sizeof(empty));

    /* not a tree, or cut short: nothing, and no read past the end */
    memset(&fw, 'x', sizeof(fw));
    ptl_devtree_firmware("not a tree at all, just some text here", 39, &fw);
    g_assert_cmpmem(&fw, sizeof(fw), &empty, sizeof(empty));
    make_fw_fdt(only_card);
    memset(&fw, 'x', sizeof(fw));
    ptl_devtree_firmware(fw_fdt, fdt_totalsize(fw_fdt) - 4, &fw);
    g_assert_cmpmem(&fw, sizeof(fw), &empty, sizeof(empty));
    ptl_devtree_firmware(NULL, 0, &fw);
    g_assert_cmpmem(&fw, sizeof(fw), &empty, sizeof(empty));
}

/*
 * What a hostile or broken card may put in: empty properties, strings
 * without their NUL, lists of strings, control characters and escape
 * sequences, bytes that are not UTF-8, numbers of the wrong length.
 */
static void test_firmware_malformed(void)
{
    static const uint8_t time8[8] = { 0, 0, 0, 0, 0x6b, 0x0f, 0x6d, 0xa6 };
    const TProp props[] = {
        { "/firmware", "card-name", "", 0 },
        { "/firmware", "project-name", "", -1 },
        { "/firmware", "project-variant", "ABCD", 4 },        /* no NUL */
        { "/firmware", "project-version", "1.0\0" "2.0", 8 },  /* a list */
        { "/firmware", "build-time", time8, 8 },
        { "/firmware", "build-tool", "\x1b]0;owned\x07tool\r\n", -1 },
        /* C1 control CSI, a lone continuation byte, a cut sequence */
        { "/firmware", "build-author", "a\xc2\x9b" "b\x80" "c\xe2\x82", -1 },
        /* overlong '/', a surrogate, DEL */
        { "/firmware", "build-revision", "\xc0\xaf\xed\xa0\x80\x7f", -1 },
        { "/firmware", "serial-number", "", 0 },
        { NULL },
    };
    ptl_firmware_info fw;

    firmware_of(props, &fw);
    g_assert_cmpstr(fw.card_name, ==, "");
    g_assert_cmpstr(fw.project_name, ==, "");
    g_assert_cmpstr(fw.project_variant, ==, "ABCD");
    g_assert_cmpstr(fw.project_version, ==, "1.0");
    g_assert_false(fw.has_build_time);
    g_assert_cmpstr(fw.build_tool, ==, "?]0;owned?tool??");
    g_assert_cmpstr(fw.build_author, ==, "a??b?c??");
    g_assert_cmpstr(fw.build_revision, ==, "??????");
    g_assert_cmpstr(fw.serial_number, ==, "");
}

/* Strings longer than the buffer are cut between characters, "..." last. */
static void test_firmware_long(void)
{
    g_autofree char *fits = g_strnfill(PTL_FIRMWARE_TEXT - 1, 'f');
    g_autofree char *over = g_strnfill(PTL_FIRMWARE_TEXT, 'o');
    g_autofree char *huge = g_strnfill(60000, 'h');
    GString *accents = g_string_new("x");
    GString *want = g_string_new("x");
    TProp props[] = {
        { "/firmware", "card-name", fits, -1 },
        { "/firmware", "project-name", over, -1 },
        { "/firmware", "build-tool", huge, (int)strlen(huge) },  /* no NUL */
        { "/firmware", "build-author", NULL, -1 },
        { NULL },
    };
    ptl_firmware_info fw;

    /* "x" and 100 two-byte characters */
    for (int i = 0; i < 100; i++) {
        g_string_append(accents, "\xc3\xa9");
    }
    props[3].value = accents->str;
    firmware_of(props, &fw);
    g_assert_cmpstr(fw.card_name, ==, fits);
    g_assert_cmpuint(strlen(fw.project_name), ==, PTL_FIRMWARE_TEXT - 1);
    g_assert_true(g_str_has_suffix(fw.project_name, "oo..."));
    g_assert_cmpuint(strlen(fw.build_tool), ==, PTL_FIRMWARE_TEXT - 1);
    g_assert_true(g_str_has_prefix(fw.build_tool, "hhhh"));
    g_assert_true(g_str_has_suffix(fw.build_tool, "hh..."));
    /*
     * 124 bytes before the "...": "x" and 61 characters (123 bytes); the
     * 62nd would be split
     */
    for (int i = 0; i < 61; i++) {
        g_string_append(want, "\xc3\xa9");
    }
    g_string_append(want, "...");
    g_assert_cmpstr(fw.build_author, ==, want->str);
    g_assert_true(g_utf8_validate(fw.build_author, -1, NULL));
    g_string_free(accents, TRUE);
    g_string_free(want, TRUE);
}

/* A device-tree VSEC at 0x100 that serves xz[] word by word. */
typedef struct TCard {
    const uint8_t *xz;
    size_t len;
    uint32_t index;
} TCard;

static bool tcard_read32(void *opaque, uint32_t offset, uint32_t *value)
{
    TCard *c = opaque;

    switch (offset) {
    case 0x108:
        *value = 0x80000000u;   /* endpoint 0 */
        return true;
    case 0x10c:
        *value = c->len;
        return true;
    case 0x114:
        *value = 0;
        for (unsigned k = 0; k < 4; k++) {
            if (4 * (size_t)c->index + k < c->len) {
                *value |= (uint32_t)c->xz[4 * c->index + k] << (8 * k);
            }
        }
        return true;
    default:
        return false;
    }
}

static bool tcard_write32(void *opaque, uint32_t offset, uint32_t value)
{
    TCard *c = opaque;

    c->index = value;
    return offset == 0x110;
}

static const ptl_config_ops tcard_ops = {
    .read32 = tcard_read32,
    .write32 = tcard_write32,
};

/*
 * Through the card's capability: the identity comes with the nodes, and
 * without them when the tree has no telemetry node or a broken one.
 */
static void test_firmware_read(void)
{
    static const uint8_t build_time[4] = { 0x6b, 0x0f, 0x6d, 0xa6 };
    TBus good[] = {
        { "mi_bus0", "PCI0,BAR0", 1, { { "t", 0x20000, 0x10000, 0x20000,
                                         1 } } },
        { NULL },
    };
    TBus broken[] = {
        { "mi_bus0", "PCIe0,BAR0", 1, { { "t", 0, 0x10000, 0x20000, 1 } } },
        { NULL },
    };
    TBus no_node[] = {
        { "mi_bus0", "PCI0,BAR0", 1, { { NULL } } },
        { NULL },
    };
    const TBus *trees[] = { good, broken, no_node };
    const ptl_err want[] = { PTL_OK, PTL_E_DEVTREE, PTL_E_NO_NODE };

    for (size_t i = 0; i < G_N_ELEMENTS(trees); i++) {
        static uint8_t fdt[16384];
        size_t xlen;
        uint8_t *x;
        TCard card;
        ptl_node_info *nodes;
        ptl_firmware_info fw;
        ptl_error e = { 0 };
        unsigned n;
        int ep, node;

        make_fdt(fdt, sizeof(fdt), trees[i], NULL);
        g_assert_cmpint(fdt_open_into(fdt, fdt, sizeof(fdt)), ==, 0);
        node = fdt_path_offset(fdt, "/firmware");
        g_assert_cmpint(fdt_setprop_string(fdt, node, "card-name",
                                           "COMBO-GENERIC"), ==, 0);
        g_assert_cmpint(fdt_setprop_string(fdt, node, "project-version",
                                           "0.1.0"), ==, 0);
        g_assert_cmpint(fdt_setprop(fdt, node, "build-time", build_time, 4),
                        ==, 0);
        g_assert_cmpint(fdt_pack(fdt), ==, 0);
        x = xz(fdt, fdt_totalsize(fdt), LZMA_CHECK_CRC32, &xlen);
        card = (TCard){ .xz = x, .len = xlen };
        memset(&fw, 'x', sizeof(fw));
        g_assert_cmpint(ptl_devtree_read(&tcard_ops, &card, 0x100,
                                         "0000:01:00.0", &ep, &nodes, &n,
                                         &fw, &e), ==, want[i]);
        g_assert_cmpint(ep, ==, 0);
        g_assert_cmpuint(n, ==, want[i] == PTL_OK ? 1 : 0);
        free(nodes);
        g_assert_cmpstr(fw.card_name, ==, "COMBO-GENERIC");
        g_assert_cmpstr(fw.project_version, ==, "0.1.0");
        g_assert_cmpstr(fw.project_name, ==, "");
        g_assert_true(fw.has_build_time);
        g_assert_cmpuint(fw.build_time, ==, 0x6b0f6da6);

        /* a tree that cannot be decompressed: nothing; NULL is taken */
        card.len = xlen - 1;
        g_assert_cmpint(ptl_devtree_read(&tcard_ops, &card, 0x100,
                                         "0000:01:00.0", &ep, &nodes, &n,
                                         &fw, &e), ==, PTL_E_DEVTREE);
        g_assert_cmpstr(fw.card_name, ==, "");
        g_assert_false(fw.has_build_time);
        card.len = xlen;
        g_assert_cmpint(ptl_devtree_read(&tcard_ops, &card, 0x100,
                                         "0000:01:00.0", &ep, &nodes, &n,
                                         NULL, &e), ==, want[i]);
        free(nodes);
        g_free(x);
    }
}

/* The lines --list prints of a card's firmware. */
static char *card_lines(const ptl_card_info *c)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    g_assert_nonnull(f);
    g_assert_cmpint(ptl_format_card_lines(f, c, "  "), ==, 0);
    g_assert_cmpint(fclose(f), ==, 0);
    return text;
}

static void test_firmware_lines(void)
{
    ptl_card_info *c = g_new0(ptl_card_info, 1);
    ptl_firmware_info *fw = &c->firmware;
    char *text;

    /* the time in the local time zone, as nfb-info */
    g_setenv("TZ", "UTC", TRUE);
    tzset();

    text = card_lines(c);
    g_assert_cmpstr(text, ==, "");
    free(text);

    strcpy(fw->card_name, "COMBO-GENERIC");
    strcpy(fw->project_name, "NDK-TELEMETRY-MODEL");
    strcpy(fw->project_version, "0.1.0");
    strcpy(fw->project_variant, "DEFAULT");
    strcpy(fw->serial_number, "42");
    fw->has_build_time = true;
    fw->build_time = 1796215334;
    strcpy(fw->build_author, "NDK developers");
    strcpy(fw->build_tool, "Vivado 2024.1");
    strcpy(fw->build_revision, "a1b2c3d");
    text = card_lines(c);
    g_assert_cmpstr(text, ==,
                    "  card COMBO-GENERIC, serial 42, project "
                    "NDK-TELEMETRY-MODEL 0.1.0 (variant DEFAULT)\n"
                    "  built 2026-12-02 12:42:14 UTC by NDK developers with "
                    "Vivado 2024.1, revision a1b2c3d\n");
    free(text);

    /* parts left out, and words for the ones that lose their context */
    fw->card_name[0] = '\0';
    fw->project_name[0] = '\0';
    fw->serial_number[0] = '\0';
    fw->build_author[0] = '\0';
    fw->build_tool[0] = '\0';
    text = card_lines(c);
    g_assert_cmpstr(text, ==, "  project version 0.1.0 (variant DEFAULT)\n"
                    "  built 2026-12-02 12:42:14 UTC, revision a1b2c3d\n");
    free(text);

    fw->project_version[0] = '\0';
    fw->has_build_time = false;
    strcpy(fw->build_author, "someone");
    text = card_lines(c);
    g_assert_cmpstr(text, ==, "  project variant DEFAULT\n"
                    "  built by someone, revision a1b2c3d\n");
    free(text);

    memset(fw, 0, sizeof(*fw));
    strcpy(fw->build_revision, "a1b2c3d");
    strcpy(fw->project_name, "P");
    text = card_lines(c);
    g_assert_cmpstr(text, ==, "  project P\n  revision a1b2c3d\n");
    free(text);
    g_free(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ptl-devtree/one-node", test_one_node);
    g_test_add_func("/ptl-devtree/two-nodes-tree-order", test_two_nodes_order);
    g_test_add_func("/ptl-devtree/other-endpoint", test_other_endpoint);
    g_test_add_func("/ptl-devtree/two-cell-reg", test_two_cell_reg);
    g_test_add_func("/ptl-devtree/node-outside-bus", test_node_outside_bus);
    g_test_add_func("/ptl-devtree/bad-resource", test_bad_resource);
    g_test_add_func("/ptl-devtree/missing-reg", test_missing_reg);
    g_test_add_func("/ptl-devtree/bad-cells", test_bad_cells);
    g_test_add_func("/ptl-devtree/xz-checks", test_xz_checks);
    g_test_add_func("/ptl-devtree/xz-damaged", test_xz_damaged);
    g_test_add_func("/ptl-devtree/not-fdt", test_not_fdt);
    g_test_add_func("/ptl-devtree/card-tree", test_card_tree);
    g_test_add_func("/ptl-devtree/firmware-all", test_firmware_all);
    g_test_add_func("/ptl-devtree/firmware-missing", test_firmware_missing);
    g_test_add_func("/ptl-devtree/firmware-malformed",
                    test_firmware_malformed);
    g_test_add_func("/ptl-devtree/firmware-long", test_firmware_long);
    g_test_add_func("/ptl-devtree/firmware-read", test_firmware_read);
    g_test_add_func("/ptl-devtree/firmware-lines", test_firmware_lines);
    return g_test_run();
}
