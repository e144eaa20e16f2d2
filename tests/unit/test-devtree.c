/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The card's NDK device tree: decompressed with liblzma and walked with
 * libfdt, every node and property the NDK software relies on, the XZ
 * container the kernel's decoder accepts (LZMA2 only, CRC32, dictionary of
 * at most 1 MiB), the word order of the VSEC data register.
 */
#include <glib.h>
#include <string.h>
#include <libfdt.h>
#include <lzma.h>

#include "ptm-devtree.h"

typedef struct Tree {
    uint8_t *xz;
    size_t xz_len;
    uint8_t fdt[65536];
    size_t fdt_len;
} Tree;

static Tree *build(uint32_t off, uint32_t ver, uint32_t eps)
{
    Tree *t = g_new0(Tree, 1);
    uint64_t memlimit = UINT64_MAX;
    size_t in_pos = 0;
    char *err = NULL;

    t->xz = ptm_devtree_build(off, ver, eps, &t->xz_len, &err);
    g_assert_null(err);
    g_assert_nonnull(t->xz);
    g_assert_cmpuint(t->xz_len, >, 12 + 12);
    g_assert_cmpint(lzma_stream_buffer_decode(&memlimit, 0, NULL, t->xz,
                                              &in_pos, t->xz_len, t->fdt,
                                              &t->fdt_len, sizeof(t->fdt)),
                    ==, LZMA_OK);
    /* one stream, nothing after it */
    g_assert_cmpuint(in_pos, ==, t->xz_len);
    return t;
}

static void tree_free(Tree *t)
{
    g_free(t->xz);
    g_free(t);
}

static uint32_t prop_u32(const void *fdt, int node, const char *name)
{
    int len = -1;
    const fdt32_t *p = fdt_getprop(fdt, node, name, &len);

    g_assert_nonnull(p);
    g_assert_cmpint(len, ==, 4);
    return fdt32_to_cpu(*p);
}

static void check_string(const void *fdt, int node, const char *name,
                         const char *want)
{
    int len = -1;
    const char *p = fdt_getprop(fdt, node, name, &len);

    g_assert_nonnull(p);
    /* one string with its terminating NUL */
    g_assert_cmpint(len, ==, (int)strlen(want) + 1);
    g_assert_cmpstr(p, ==, want);
}

static void check_tree(uint32_t off, uint32_t ver, uint32_t eps)
{
    Tree *t = build(off, ver, eps);
    const void *fdt = t->fdt;
    g_autofree char *name = g_strdup_printf("pcie_telemetry@%x", off);
    const fdt32_t *reg;
    int root, fw, bus, tel, len, n;

    g_assert_cmpint(fdt_check_header(fdt), ==, 0);
    g_assert_cmpuint(fdt_totalsize(fdt), ==, t->fdt_len);

    root = fdt_path_offset(fdt, "/");
    g_assert_cmpint(root, >=, 0);
    g_assert_cmphex(prop_u32(fdt, root, "#address-cells"), ==, 1);
    g_assert_cmphex(prop_u32(fdt, root, "#size-cells"), ==, 1);

    fw = fdt_path_offset(fdt, "/firmware");
    g_assert_cmpint(fw, >=, 0);

    /* exactly one MI bus, a child of /firmware */
    bus = fdt_node_offset_by_compatible(fdt, -1, "netcope,bus,mi");
    g_assert_cmpint(bus, >=, 0);
    g_assert_cmpint(fdt_parent_offset(fdt, bus), ==, fw);
    g_assert_cmpint(fdt_node_offset_by_compatible(fdt, bus, "netcope,bus,mi"),
                    ==, -FDT_ERR_NOTFOUND);
    check_string(fdt, bus, "compatible", "netcope,bus,mi");
    check_string(fdt, bus, "resource", "PCI0,BAR0");
    g_assert_cmphex(prop_u32(fdt, bus, "#address-cells"), ==, 1);
    g_assert_cmphex(prop_u32(fdt, bus, "#size-cells"), ==, 1);

    /* exactly one telemetry block, on that bus */
    tel = fdt_node_offset_by_compatible(fdt, -1,
                                        "cesnet,ofm,pcie_telemetry_mi");
    g_assert_cmpint(tel, >=, 0);
    g_assert_cmpint(fdt_parent_offset(fdt, tel), ==, bus);
    g_assert_cmpint(fdt_node_offset_by_compatible(fdt, tel,
                        "cesnet,ofm,pcie_telemetry_mi"), ==,
                    -FDT_ERR_NOTFOUND);
    g_assert_cmpstr(fdt_get_name(fdt, tel, NULL), ==, name);
    check_string(fdt, tel, "compatible", "cesnet,ofm,pcie_telemetry_mi");
    reg = fdt_getprop(fdt, tel, "reg", &len);
    g_assert_nonnull(reg);
    g_assert_cmpint(len, ==, 8);
    g_assert_cmphex(fdt32_to_cpu(reg[0]), ==, off);
    g_assert_cmphex(fdt32_to_cpu(reg[1]), ==, 0x10000);
    g_assert_cmphex(prop_u32(fdt, tel, "version"), ==, ver);
    g_assert_cmpuint(prop_u32(fdt, tel, "pcie-endpoints"), ==, eps);

    /* nothing else: root has one child, /firmware one, the bus one */
    n = 0;
    for (int c = fdt_first_subnode(fdt, root); c >= 0;
         c = fdt_next_subnode(fdt, c)) {
        n++;
    }
    g_assert_cmpint(n, ==, 1);
    g_assert_cmpint(fdt_first_subnode(fdt, fw), ==, bus);
    g_assert_cmpint(fdt_next_subnode(fdt, bus), <, 0);
    g_assert_cmpint(fdt_first_subnode(fdt, bus), ==, tel);
    g_assert_cmpint(fdt_next_subnode(fdt, tel), <, 0);
    g_assert_cmpint(fdt_first_subnode(fdt, tel), <, 0);
    tree_free(t);
}

static void test_tree(void)
{
    check_tree(0, 0x00020000, 1);
    check_tree(0x20000, 0x00020000, 2);
    check_tree(0x0FFF0000, 0x00020000, 16);
    check_tree(0x1000, 0x00020001, 3);
}

/* Past one variable-length integer of the XZ format (7 bits a byte). */
static const uint8_t *skip_vli(const uint8_t *p)
{
    for (int i = 0; i < 9; i++) {
        if (!(*p++ & 0x80)) {
            return p;
        }
    }
    g_assert_not_reached();
}

/*
 * The container, decoded field by field from the XZ file format: stream
 * header magic and flags, one block whose only filter is LZMA2, the
 * dictionary size from the LZMA2 property byte, the stream footer.
 */
static void test_xz_container(void)
{
    static const uint8_t magic[6] = { 0xFD, '7', 'z', 'X', 'Z', 0x00 };
    Tree *t = build(0x20000, 0x00020000, 2);
    const uint8_t *x = t->xz, *p;
    lzma_stream_flags sf, ff;
    lzma_filter filters[LZMA_FILTERS_MAX + 1];
    lzma_block block;
    lzma_options_lzma *lz;
    uint8_t dict_byte;
    uint32_t dict;
    unsigned hdr;

    g_assert_cmpmem(x, 6, magic, 6);
    /* stream flags: 0x00, then the check type (1 = CRC32) */
    g_assert_cmphex(x[6], ==, 0x00);
    g_assert_cmphex(x[7], ==, 0x01);
    g_assert_cmpint(lzma_stream_header_decode(&sf, x), ==, LZMA_OK);
    g_assert_cmpint(sf.check, ==, LZMA_CHECK_CRC32);
    g_assert_cmpint(lzma_stream_footer_decode(&ff, x + t->xz_len - 12), ==,
                    LZMA_OK);
    g_assert_cmpint(ff.check, ==, LZMA_CHECK_CRC32);
    g_assert_cmpmem(x + t->xz_len - 2, 2, "YZ", 2);

    /* the block header right after the 12-byte stream header */
    hdr = (x[12] + 1) * 4;
    g_assert_cmpuint(hdr, >=, 8);
    /* flags: one filter (bits 1..0 = 0), no reserved bits */
    g_assert_cmphex(x[13] & 0x3C, ==, 0);
    g_assert_cmphex(x[13] & 0x03, ==, 0);
    memset(&block, 0, sizeof(block));
    block.version = 0;
    block.check = sf.check;
    block.header_size = hdr;
    block.filters = filters;
    g_assert_cmpint(lzma_block_header_decode(&block, NULL, x + 12), ==,
                    LZMA_OK);
    g_assert_cmphex(filters[0].id, ==, LZMA_FILTER_LZMA2);
    g_assert_true(filters[1].id == LZMA_VLI_UNKNOWN);
    lz = filters[0].options;
    g_assert_cmpuint(lz->dict_size, <=, 1024 * 1024);
    g_assert_cmpuint(lz->dict_size, ==, PTM_DT_XZ_DICT);

    /*
     * The same from the raw bytes: after the flags, the compressed and
     * uncompressed sizes if flagged (variable-length integers), then the
     * filter ID (0x21), one property byte, and that byte: the dictionary
     * is 2 or 3 shifted left by b / 2 + 11.
     */
    p = x + 14;
    if (x[13] & 0x40) {
        p = skip_vli(p);
    }
    if (x[13] & 0x80) {
        p = skip_vli(p);
    }
    g_assert_cmphex(p[0], ==, 0x21);
    g_assert_cmphex(p[1], ==, 1);
    dict_byte = p[2];
    g_assert_cmpuint(dict_byte, <, 40);
    dict = (2u | (dict_byte & 1)) << (dict_byte / 2 + 11);
    g_assert_cmpuint(dict, ==, lz->dict_size);
    g_assert_cmpuint(dict, <=, 1024 * 1024);
    free(lz);
    tree_free(t);
}

/* The same inputs give the same bytes; other inputs give others. */
static void test_deterministic(void)
{
    size_t la, lb, lc;
    char *err = NULL;
    g_autofree uint8_t *a = ptm_devtree_build(0x20000, 0x20000, 2, &la, &err);
    g_autofree uint8_t *b = ptm_devtree_build(0x20000, 0x20000, 2, &lb, &err);
    g_autofree uint8_t *c = ptm_devtree_build(0x30000, 0x20000, 2, &lc, &err);

    g_assert_null(err);
    g_assert_nonnull(a);
    g_assert_cmpmem(a, la, b, lb);
    g_assert_false(la == lc && !memcmp(a, c, la));
}

/* Word i of the stream is bytes 4i..4i+3, little endian, zero-padded. */
static void test_words(void)
{
    static const uint8_t s[] = { 0x01, 0x02, 0x03, 0x04, 0xA5, 0xB6 };
    Tree *t;

    g_assert_cmphex(ptm_devtree_word(s, sizeof(s), 0), ==, 0x04030201);
    g_assert_cmphex(ptm_devtree_word(s, sizeof(s), 1), ==, 0x0000B6A5);
    g_assert_cmphex(ptm_devtree_word(s, sizeof(s), 2), ==, 0);
    g_assert_cmphex(ptm_devtree_word(s, sizeof(s), 0x40000000), ==, 0);
    g_assert_cmphex(ptm_devtree_word(s, sizeof(s), 0xFFFFFFFF), ==, 0);
    g_assert_cmphex(ptm_devtree_word(s, 4, 1), ==, 0);

    /* FD '7' 'z' 'X': the XZ magic is the first word a reader fetches */
    t = build(0, 0x00020000, 1);
    g_assert_cmphex(ptm_devtree_word(t->xz, t->xz_len, 0), ==, 0x587A37FD);
    /* 'Z', 0x00, then the stream flags 0x00 0x01 (CRC32) */
    g_assert_cmphex(ptm_devtree_word(t->xz, t->xz_len, 1), ==, 0x0100005A);
    tree_free(t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/devtree/tree", test_tree);
    g_test_add_func("/devtree/xz-container", test_xz_container);
    g_test_add_func("/devtree/deterministic", test_deterministic);
    g_test_add_func("/devtree/words", test_words);
    return g_test_run();
}
