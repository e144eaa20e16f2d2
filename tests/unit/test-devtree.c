/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The card's NDK device tree: decompressed with liblzma and walked with
 * libfdt, every node and property the NDK software relies on, the
 * firmware's identity on /firmware as nfb-info reads it, the XZ container
 * the kernel's decoder accepts (LZMA2 only, CRC32, dictionary of at most
 * 1 MiB), the word order of the VSEC data register.
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

static Tree *build_id(const PtmFirmwareId *id, uint32_t off, uint32_t ver,
                      uint32_t eps)
{
    Tree *t = g_new0(Tree, 1);
    uint64_t memlimit = UINT64_MAX;
    size_t in_pos = 0;
    char *err = NULL;

    t->xz = ptm_devtree_build_id(id, off, ver, eps, &t->xz_len, &err);
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

static Tree *build(uint32_t off, uint32_t ver, uint32_t eps)
{
    return build_id(NULL, off, ver, eps);
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

/* ------------------------------------------------------------------ */
/* The firmware's identity on /firmware                                 */

/* The /firmware properties that are not nodes, by name, in tree order. */
static GPtrArray *firmware_props(const void *fdt)
{
    GPtrArray *names = g_ptr_array_new();
    int fw = fdt_path_offset(fdt, "/firmware"), p;

    g_assert_cmpint(fw, >=, 0);
    fdt_for_each_property_offset(p, fdt, fw) {
        const char *name = NULL;

        g_assert_nonnull(fdt_getprop_by_offset(fdt, p, &name, NULL));
        g_ptr_array_add(names, (gpointer)name);
    }
    return names;
}

static void check_names(GPtrArray *got, const char *const *want)
{
    unsigned n = 0;

    while (want[n]) {
        g_assert_cmpuint(n, <, got->len);
        g_assert_cmpstr(g_ptr_array_index(got, n), ==, want[n]);
        n++;
    }
    g_assert_cmpuint(got->len, ==, n);
}

/*
 * Every property as nfb-info reads it (tools/info/info.c of ndk-sw):
 * strings with their NUL, build-time one 32-bit big-endian cell; the
 * telemetry node's tree is unchanged by the identity.
 */
static void test_firmware_id(void)
{
    static const char *const all[] = {
        "card-name", "project-name", "project-variant", "project-version",
        "build-time", "build-tool", "build-author", "build-revision", NULL,
    };
    const PtmFirmwareId id = {
        .card_name = "QEMU-NDK-TELEMETRY",
        .project_name = "ndk-pcie-telemetry",
        .project_variant = "2EP",
        .project_version = "0.1.0",
        .build_time = 0xDEADBEEF,
        .build_tool = "QEMU",
        .build_author = "someone@example.org",
        .build_revision = "8462f87",
    };
    Tree *t = build_id(&id, 0x20000, 0x00020000, 2);
    const void *fdt = t->fdt;
    int fw = fdt_path_offset(fdt, "/firmware");
    g_autoptr(GPtrArray) names = firmware_props(fdt);
    const uint8_t *cell;
    int len = -1, tel;

    check_names(names, all);
    check_string(fdt, fw, "card-name", "QEMU-NDK-TELEMETRY");
    check_string(fdt, fw, "project-name", "ndk-pcie-telemetry");
    check_string(fdt, fw, "project-variant", "2EP");
    check_string(fdt, fw, "project-version", "0.1.0");
    check_string(fdt, fw, "build-tool", "QEMU");
    check_string(fdt, fw, "build-author", "someone@example.org");
    check_string(fdt, fw, "build-revision", "8462f87");
    /* big endian, as fdt32_to_cpu in nfb-info expects */
    cell = fdt_getprop(fdt, fw, "build-time", &len);
    g_assert_nonnull(cell);
    g_assert_cmpint(len, ==, 4);
    g_assert_cmphex(cell[0], ==, 0xDE);
    g_assert_cmphex(cell[1], ==, 0xAD);
    g_assert_cmphex(cell[2], ==, 0xBE);
    g_assert_cmphex(cell[3], ==, 0xEF);
    /* the MI bus and the block are where they were */
    tel = fdt_path_offset(fdt, "/firmware/mi_bus0/pcie_telemetry@20000");
    g_assert_cmpint(tel, >=, 0);
    g_assert_cmpint(fdt_first_subnode(fdt, fw), ==,
                    fdt_path_offset(fdt, "/firmware/mi_bus0"));
    g_assert_cmpint(fdt_next_subnode(fdt, fdt_first_subnode(fdt, fw)), <, 0);
    g_assert_cmpuint(prop_u32(fdt, tel, "pcie-endpoints"), ==, 2);
    tree_free(t);
}

/* NULL and empty strings are left out; build-time stays. */
static void test_firmware_id_absent(void)
{
    static const char *const some[] = {
        "card-name", "project-version", "build-time", NULL,
    };
    static const char *const time_only[] = { "build-time", NULL };
    static const char *const none[] = { NULL };
    const PtmFirmwareId id = {
        .card_name = "COMBO-GENERIC",
        .project_name = "",
        .project_version = "1.2",
    };
    const PtmFirmwareId empty = { .build_time = 0 };
    Tree *t = build_id(&id, 0, 0x00020000, 1);
    Tree *e = build_id(&empty, 0, 0x00020000, 1);
    Tree *n = build(0, 0x00020000, 1);
    g_autoptr(GPtrArray) ids = firmware_props(t->fdt);
    g_autoptr(GPtrArray) eids = firmware_props(e->fdt);
    g_autoptr(GPtrArray) nids = firmware_props(n->fdt);

    check_names(ids, some);
    check_string(t->fdt, fdt_path_offset(t->fdt, "/firmware"), "card-name",
                 "COMBO-GENERIC");
    g_assert_cmpuint(prop_u32(t->fdt, fdt_path_offset(t->fdt, "/firmware"),
                              "build-time"), ==, 0);
    check_names(eids, time_only);
    /* without an identity: /firmware holds only its bus, as before */
    check_names(nids, none);
    tree_free(t);
    tree_free(e);
    tree_free(n);
}

/* Strings of PTM_FW_STRING_MAX characters fit in the tree. */
static void test_firmware_id_longest(void)
{
    g_autofree char *s = g_strnfill(PTM_FW_STRING_MAX, '~');
    const PtmFirmwareId id = {
        .card_name = s, .project_name = s, .project_variant = s,
        .project_version = s, .build_time = UINT32_MAX, .build_tool = s,
        .build_author = s, .build_revision = s,
    };
    Tree *t = build_id(&id, 0x0FFF0000, 0x00020000, 16);
    int fw = fdt_path_offset(t->fdt, "/firmware");

    check_string(t->fdt, fw, "card-name", s);
    check_string(t->fdt, fw, "build-revision", s);
    g_assert_cmphex(prop_u32(t->fdt, fw, "build-time"), ==, UINT32_MAX);
    g_assert_cmpint(fdt_path_offset(t->fdt, "/firmware/mi_bus0/"
                                    "pcie_telemetry@fff0000"), >=, 0);
    tree_free(t);
}

/* Another identity gives other bytes (a migration's ends must agree). */
static void test_firmware_id_deterministic(void)
{
    PtmFirmwareId id = { .card_name = "A", .build_time = 1 };
    size_t la, lb, lc, ld;
    char *err = NULL;
    g_autofree uint8_t *a = ptm_devtree_build_id(&id, 0, 0x20000, 1, &la,
                                                 &err);
    g_autofree uint8_t *b = ptm_devtree_build_id(&id, 0, 0x20000, 1, &lb,
                                                 &err);
    g_autofree uint8_t *c = NULL, *d = NULL;

    id.build_time = 2;
    c = ptm_devtree_build_id(&id, 0, 0x20000, 1, &lc, &err);
    id.build_time = 1;
    id.card_name = "B";
    d = ptm_devtree_build_id(&id, 0, 0x20000, 1, &ld, &err);
    g_assert_null(err);
    g_assert_cmpmem(a, la, b, lb);
    g_assert_false(la == lc && !memcmp(a, c, la));
    g_assert_false(la == ld && !memcmp(a, d, la));
}

/* The names of nfb_ids in ndk-sw's drivers/kernel/drivers/nfb/pci.c */
static void test_card_names(void)
{
    g_assert_cmpstr(ptm_devtree_card_name(0x18ec, 0xc000), ==,
                    "COMBO-GENERIC");
    g_assert_cmpstr(ptm_devtree_card_name(0x18ec, 0xc400), ==,
                    "COMBO-400G1");
    g_assert_cmpstr(ptm_devtree_card_name(0x1b26, 0xcb40), ==, "NFB-40G");
    g_assert_cmpstr(ptm_devtree_card_name(0x1b26, 0xcb80), ==, "NFB-40G2");
    g_assert_cmpstr(ptm_devtree_card_name(0x1b26, 0xc1c1), ==, "NFB-100G");
    g_assert_cmpstr(ptm_devtree_card_name(0x1b26, 0xc2c1), ==,
                    "NFB-100G2");
    g_assert_cmpstr(ptm_devtree_card_name(0x1b26, 0xc250), ==,
                    "NFB-200G2QL");
    g_assert_cmpstr(ptm_devtree_card_name(0x1c2c, 0xc240), ==, "FB1CGG");
    g_assert_cmpstr(ptm_devtree_card_name(0x1c2c, 0x00d0), ==, "FB1CGG");
    g_assert_cmpstr(ptm_devtree_card_name(0x1c2c, 0x00d1), ==, "FB1CGG");
    g_assert_cmpstr(ptm_devtree_card_name(0x1c2c, 0x00d2), ==, "TIVOLI");
    g_assert_cmpstr(ptm_devtree_card_name(0x1c2c, 0x00d3), ==, "TIVOLI");
    g_assert_cmpstr(ptm_devtree_card_name(0x1bad, 0xd001), ==,
                    "AGI-FH400G");
    /* the model's own ID, a second function (no name), a swapped pair */
    g_assert_cmpstr(ptm_devtree_card_name(0x1234, 0x0d7b), ==,
                    "QEMU-NDK-TELEMETRY");
    g_assert_cmpstr(ptm_devtree_card_name(0x1b26, 0xc1c0), ==,
                    "QEMU-NDK-TELEMETRY");
    g_assert_cmpstr(ptm_devtree_card_name(0xc000, 0x18ec), ==,
                    "QEMU-NDK-TELEMETRY");
}

static void check_refused(const char *s, const char *why)
{
    g_autofree char *got = ptm_devtree_check_string(s);

    g_assert_cmpstr(got, ==, why);
}

/* Printable ASCII, 0x20 to 0x7e, at most 127 characters. */
static void test_check_string(void)
{
    g_autofree char *longest = g_strnfill(PTM_FW_STRING_MAX, 'x');
    g_autofree char *too_long = g_strnfill(PTM_FW_STRING_MAX + 1, 'x');
    char all[0x7f - 0x20 + 1];

    for (int c = 0x20; c < 0x7f; c++) {
        all[c - 0x20] = c;
    }
    all[0x7f - 0x20] = 0;
    g_assert_null(ptm_devtree_check_string(""));
    g_assert_null(ptm_devtree_check_string(all));
    g_assert_null(ptm_devtree_check_string(longest));
    check_refused(too_long, "has 128 characters");
    check_refused("a\nb", "has the byte 0x0a at offset 1");
    check_refused("\x1f", "has the byte 0x1f at offset 0");
    check_refused("abc\x7f", "has the byte 0x7f at offset 3");
    check_refused("caf\xc3\xa9", "has the byte 0xc3 at offset 3");
}

/* The model's version is the project's (meson.build). */
static void test_model_version(void)
{
    g_assert_cmpstr(PTM_MODEL_VERSION, ==, PTM_MESON_VERSION);
}

/*
 * The DMA engine's nodes at the largest engine (16 ports x 4 queues each
 * way): every controller in queue order with its reg, version, pcie and
 * a params phandle that resolves, a switch per port with its generators;
 * a tree with dma NULL or 0 queues is the tree without an engine, byte
 * for byte.
 */
static void test_dma_nodes(void)
{
    PtmDevtreeDma dma = {
        .ports = 16, .queues = 4, .rx_base = 0x01000000,
        .tx_base = 0x01200000, .gls_base = 0x01400000,
    };
    PtmDevtreeDma none = dma;
    Tree *t = g_new0(Tree, 1);
    uint64_t memlimit = UINT64_MAX;
    size_t in_pos = 0, a_len, b_len;
    char *err = NULL;
    g_autofree uint8_t *a = NULL, *b = NULL;

    t->xz = ptm_devtree_build_dma(NULL, &dma, 0, 0x00020000, 1, &t->xz_len,
                                  &err);
    g_assert_null(err);
    g_assert_cmpint(lzma_stream_buffer_decode(&memlimit, 0, NULL, t->xz,
                                              &in_pos, t->xz_len, t->fdt,
                                              &t->fdt_len, sizeof(t->fdt)),
                    ==, LZMA_OK);
    g_assert_cmpint(fdt_check_header(t->fdt), ==, 0);
    for (unsigned dir = 0; dir < 2; dir++) {
        const char *compat = dir ? "netcope,dma_ctrl_ndp_tx"
                                 : "netcope,dma_ctrl_ndp_rx";
        unsigned q = 0;

        for (int n = fdt_node_offset_by_compatible(t->fdt, -1, compat);
             n >= 0; n = fdt_node_offset_by_compatible(t->fdt, n, compat)) {
            const fdt32_t *reg = fdt_getprop(t->fdt, n, "reg", NULL);
            const fdt32_t *par = fdt_getprop(t->fdt, n, "params", NULL);
            const fdt32_t *ver = fdt_getprop(t->fdt, n, "version", NULL);
            int pn;

            g_assert_nonnull(reg);
            g_assert_cmphex(fdt32_to_cpu(reg[0]), ==,
                            (dir ? 0x01200000u : 0x01000000u) + 0x80 * q);
            g_assert_cmphex(fdt32_to_cpu(reg[1]), ==, 0x80);
            g_assert_nonnull(ver);
            g_assert_cmphex(fdt32_to_cpu(*ver), ==, 0x20000);
            g_assert_nonnull(fdt_getprop(t->fdt, n, "pcie", NULL));
            g_assert_nonnull(par);
            pn = fdt_node_offset_by_phandle(t->fdt, fdt32_to_cpu(*par));
            g_assert_cmpint(pn, >=, 0);
            g_assert_nonnull(fdt_getprop(t->fdt, pn, "frame_size_max", NULL));
            q++;
        }
        g_assert_cmpuint(q, ==, 64);
    }
    for (unsigned p = 0; p < 16; p++) {
        g_autofree char *path =
            g_strdup_printf("/firmware/mi_bus0/dbg_gls%u/mfb_gen2dma", p);
        int n = fdt_path_offset(t->fdt, path);
        const fdt32_t *reg;

        g_assert_cmpint(n, >=, 0);
        reg = fdt_getprop(t->fdt, n, "reg", NULL);
        g_assert_cmphex(fdt32_to_cpu(reg[0]), ==, 0x01400000 + 0x200 * p + 0x80);
    }
    g_free(t->xz);
    g_free(t);

    /* no engine: the same bytes as before there was one */
    none.queues = 0;
    a = ptm_devtree_build_id(NULL, 0x20000, 0x00020000, 2, &a_len, &err);
    b = ptm_devtree_build_dma(NULL, &none, 0x20000, 0x00020000, 2, &b_len,
                              &err);
    g_assert_null(err);
    g_assert_cmpmem(a, a_len, b, b_len);
}

/*
 * The PG381 generator's node after the DMA engine's, with its window and
 * clock; a tree without the generator has no such node.
 */
static void test_pg381_node(void)
{
    PtmDevtreeDma dma = {
        .ports = 1, .queues = 2, .rx_base = 0x01000000,
        .tx_base = 0x01200000, .gls_base = 0x01400000,
    };
    PtmDevtreePg381 pg = {
        .base = 0x01800000, .size = 0x10000, .clock_hz = 250000000,
    };
    uint64_t memlimit = UINT64_MAX;

    for (unsigned with = 0; with < 2; with++) {
        Tree *t = g_new0(Tree, 1);
        size_t in_pos = 0;
        char *err = NULL;
        const fdt32_t *reg;
        int n;

        t->xz = ptm_devtree_build_card(NULL, with ? &dma : NULL,
                                       &pg, 0, 0x00020000, 1, &t->xz_len,
                                       &err);
        g_assert_null(err);
        g_assert_cmpint(lzma_stream_buffer_decode(&memlimit, 0, NULL, t->xz,
                                                  &in_pos, t->xz_len,
                                                  t->fdt, &t->fdt_len,
                                                  sizeof(t->fdt)),
                        ==, LZMA_OK);
        n = fdt_path_offset(t->fdt, "/firmware/mi_bus0/perf_axi_tg0@1800000");
        g_assert_cmpint(n, >=, 0);
        check_string(t->fdt, n, "compatible", "xlnx,perf-axi-tg-1.0");
        reg = fdt_getprop(t->fdt, n, "reg", NULL);
        g_assert_nonnull(reg);
        g_assert_cmphex(fdt32_to_cpu(reg[0]), ==, 0x01800000);
        g_assert_cmphex(fdt32_to_cpu(reg[1]), ==, 0x10000);
        g_assert_cmpuint(prop_u32(t->fdt, n, "clock-frequency"), ==,
                         250000000);
        g_assert_cmpint(fdt_node_offset_by_compatible(t->fdt, -1,
                                                      "xlnx,perf-axi-tg-1.0"),
                        ==, n);
        /* the telemetry block stays where it was */
        g_assert_cmpint(fdt_path_offset(t->fdt,
                                        "/firmware/mi_bus0/pcie_telemetry@0"),
                        >=, 0);
        tree_free(t);
    }
    {
        Tree *t = build(0, 0x00020000, 1);

        g_assert_cmpint(fdt_node_offset_by_compatible(t->fdt, -1,
                                                      "xlnx,perf-axi-tg-1.0"),
                        <, 0);
        tree_free(t);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/devtree/tree", test_tree);
    g_test_add_func("/devtree/xz-container", test_xz_container);
    g_test_add_func("/devtree/deterministic", test_deterministic);
    g_test_add_func("/devtree/words", test_words);
    g_test_add_func("/devtree/firmware-id", test_firmware_id);
    g_test_add_func("/devtree/firmware-id-absent", test_firmware_id_absent);
    g_test_add_func("/devtree/firmware-id-longest",
                    test_firmware_id_longest);
    g_test_add_func("/devtree/firmware-id-deterministic",
                    test_firmware_id_deterministic);
    g_test_add_func("/devtree/card-names", test_card_names);
    g_test_add_func("/devtree/check-string", test_check_string);
    g_test_add_func("/devtree/model-version", test_model_version);
    g_test_add_func("/devtree/dma-nodes", test_dma_nodes);
    g_test_add_func("/devtree/pg381-node", test_pg381_node);
    return g_test_run();
}
