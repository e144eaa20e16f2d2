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
    return g_test_run();
}
