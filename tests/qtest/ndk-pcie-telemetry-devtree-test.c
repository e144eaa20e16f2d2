/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest of ndk-pcie-telemetry: how software finds the block. The NDK
 * device-tree VSEC in extended configuration space (FACTS.md, "How
 * software finds the block"), the tree it holds, the block at an offset
 * of a larger BAR0, a card without a tree, the tree's index across a
 * migration, and the firmware's identity on /firmware as nfb-info reads
 * it. Expected values come from the NDK's device-tree conventions and the
 * card's properties.
 */

#include "ndk-common.h"

#include <libfdt.h>
#include <lzma.h>

/* ------------------------------------------------------------------ */
/* The NDK device tree and the block's offset in BAR0                 */

#define DT_ARGS "-device ndk-pcie-telemetry,addr=04.0,pcie-endpoints=2," \
                "block-offset=0x20000"
#define DT_OFFSET               0x20000
#define DT_BAR_SIZE             0x40000

static uint32_t vsec_rd(Ndk *n, uint32_t reg)
{
    return qndk_ext_config_readl(n->t, PTL_QEMU_VSEC_OFFSET + reg);
}

static void vsec_wr(Ndk *n, uint32_t reg, uint32_t val)
{
    qndk_ext_config_writel(n->t, PTL_QEMU_VSEC_OFFSET + reg, val);
}

/* ECAM address of byte reg of the VSEC (for narrow accesses) */
static uint64_t vsec_addr(Ndk *n, uint32_t reg)
{
    g_assert_true(qndk_has_ecam(n->t));
    return n->t->ecam + PTL_QEMU_VSEC_OFFSET + reg;
}

/* The whole stream, word by word through the index and data registers. */
static GByteArray *vsec_fetch(Ndk *n)
{
    uint32_t len = vsec_rd(n, PTL_VSEC_REG_LENGTH);
    uint32_t words = DIV_ROUND_UP(len, 4);
    GByteArray *b = g_byte_array_sized_new(words * 4);
    uint8_t le[4];

    g_assert_cmpuint(len, >, 24);
    g_assert_cmpuint(len, <, 4096);
    for (uint32_t i = 0; i < words; i++) {
        vsec_wr(n, PTL_VSEC_REG_INDEX, i);
        g_assert_cmpuint(vsec_rd(n, PTL_VSEC_REG_INDEX), ==, i);
        stl_le_p(le, vsec_rd(n, PTL_VSEC_REG_DATA));
        g_byte_array_append(b, le, 4);
    }
    /* the last word is padded with zeros */
    for (uint32_t i = len; i < words * 4; i++) {
        g_assert_cmphex(b->data[i], ==, 0);
    }
    g_byte_array_set_size(b, len);
    return b;
}

static uint32_t fdt_u32(const void *fdt, int node, const char *name)
{
    int len = -1;
    const fdt32_t *p = fdt_getprop(fdt, node, name, &len);

    g_assert_nonnull(p);
    g_assert_cmpint(len, ==, 4);
    return fdt32_to_cpu(*p);
}

/*
 * Decompress the stream and find what NDK software looks for: the
 * telemetry node on an MI bus of /firmware mapped to BAR0 of endpoint 0.
 */
static void check_devtree(GByteArray *xz, uint32_t offset, unsigned eps)
{
    g_autofree uint8_t *fdt = g_malloc0(65536);
    uint64_t memlimit = 1024 * 1024 + 65536;
    size_t in_pos = 0, out_pos = 0;
    lzma_stream_flags flags;
    const fdt32_t *reg;
    const char *str;
    int fw, bus, tel, len;

    g_assert_cmpint(lzma_stream_header_decode(&flags, xz->data), ==,
                    LZMA_OK);
    g_assert_cmpint(flags.check, ==, LZMA_CHECK_CRC32);
    /* a decoder limited to little more than a 1 MiB dictionary copes */
    g_assert_cmpint(lzma_stream_buffer_decode(&memlimit, 0, NULL, xz->data,
                                              &in_pos, xz->len, fdt,
                                              &out_pos, 65536), ==, LZMA_OK);
    g_assert_cmpuint(in_pos, ==, xz->len);
    g_assert_cmpint(fdt_check_header(fdt), ==, 0);
    g_assert_cmpuint(fdt_totalsize(fdt), ==, out_pos);

    fw = fdt_path_offset(fdt, "/firmware");
    g_assert_cmpint(fw, >=, 0);
    tel = fdt_node_offset_by_compatible(fdt, -1,
                                        "cesnet,ofm,pcie_telemetry_mi");
    g_assert_cmpint(tel, >=, 0);
    g_assert_cmpint(fdt_node_offset_by_compatible(fdt, tel,
                        "cesnet,ofm,pcie_telemetry_mi"), ==,
                    -FDT_ERR_NOTFOUND);
    bus = fdt_parent_offset(fdt, tel);
    g_assert_cmpint(fdt_parent_offset(fdt, bus), ==, fw);
    g_assert_cmpint(fdt_node_check_compatible(fdt, bus, "netcope,bus,mi"),
                    ==, 0);
    str = fdt_getprop(fdt, bus, "resource", &len);
    g_assert_nonnull(str);
    g_assert_cmpstr(str, ==, "PCI0,BAR0");
    g_assert_cmphex(fdt_u32(fdt, bus, "#address-cells"), ==, 1);
    g_assert_cmphex(fdt_u32(fdt, bus, "#size-cells"), ==, 1);

    reg = fdt_getprop(fdt, tel, "reg", &len);
    g_assert_nonnull(reg);
    g_assert_cmpint(len, ==, 8);
    g_assert_cmphex(fdt32_to_cpu(reg[0]), ==, offset);
    g_assert_cmphex(fdt32_to_cpu(reg[1]), ==, 0x10000);
    g_assert_cmphex(fdt_u32(fdt, tel, "version"), ==, PTL_VERSION_VALUE);
    g_assert_cmpuint(fdt_u32(fdt, tel, "pcie-endpoints"), ==, eps);
}

/* The VSEC through ECAM, its registers, and the tree it holds. */
static void test_devtree_vsec(void)
{
    g_autoptr(GByteArray) xz = NULL;
    uint32_t words, w;
    Ndk n;

    ndk_open_sized(&n, "q35", DT_BAR_SIZE, DT_ARGS);
    ecam_enable(n.t->bus);
    g_assert_cmphex(qndk_ext_config_readl(n.t, 0), ==,
                    PTL_QEMU_DEVICE_ID << 16 | PTL_QEMU_VENDOR_ID);

    /* ID 0x000B, version 1, the last capability */
    g_assert_cmphex(vsec_rd(&n, 0), ==, 0x0001000B);
    g_assert_cmphex(vsec_rd(&n, 4), ==, PTL_VSEC_HEADER_VALUE);
    g_assert_cmphex(vsec_rd(&n, PTL_VSEC_REG_ENDPOINT), ==, 0x80000000);
    /* after reset the index is 0: the data word starts with the XZ magic */
    g_assert_cmphex(vsec_rd(&n, PTL_VSEC_REG_INDEX), ==, 0);
    g_assert_cmphex(vsec_rd(&n, PTL_VSEC_REG_DATA), ==, 0x587A37FD);
    g_assert_cmphex(vsec_rd(&n, 0x18), ==, 0);
    g_assert_cmphex(vsec_rd(&n, 0x1C), ==, 0);

    xz = vsec_fetch(&n);
    check_devtree(xz, DT_OFFSET, 2);
    words = DIV_ROUND_UP(xz->len, 4);

    /* narrow reads of the data register: bytes of word 1 */
    vsec_wr(&n, PTL_VSEC_REG_INDEX, 1);
    w = ldl_le_p(xz->data + 4);
    for (int i = 0; i < 4; i++) {
        g_assert_cmphex(qtest_readb(n.t->qts,
                                    vsec_addr(&n, PTL_VSEC_REG_DATA + i)),
                        ==, (w >> (8 * i)) & 0xFF);
    }
    g_assert_cmphex(qtest_readw(n.t->qts,
                                vsec_addr(&n, PTL_VSEC_REG_DATA + 2)),
                    ==, w >> 16);
    /* past the end: 0, and the index keeps all 32 bits */
    vsec_wr(&n, PTL_VSEC_REG_INDEX, words);
    g_assert_cmphex(vsec_rd(&n, PTL_VSEC_REG_DATA), ==, 0);
    vsec_wr(&n, PTL_VSEC_REG_INDEX, 0xFFFFFFFF);
    g_assert_cmphex(vsec_rd(&n, PTL_VSEC_REG_INDEX), ==, 0xFFFFFFFF);
    g_assert_cmphex(vsec_rd(&n, PTL_VSEC_REG_DATA), ==, 0);

    /* everything but the index is read-only */
    for (uint32_t r = 0; r < 0x20; r += 4) {
        if (r != PTL_VSEC_REG_INDEX) {
            vsec_wr(&n, r, 0x5A5A5A5A);
        }
    }
    g_assert_cmphex(vsec_rd(&n, 0), ==, 0x0001000B);
    g_assert_cmphex(vsec_rd(&n, 4), ==, PTL_VSEC_HEADER_VALUE);
    g_assert_cmphex(vsec_rd(&n, PTL_VSEC_REG_ENDPOINT), ==, 0x80000000);
    g_assert_cmphex(vsec_rd(&n, PTL_VSEC_REG_LENGTH), ==, xz->len);
    g_assert_cmphex(vsec_rd(&n, PTL_VSEC_REG_INDEX), ==, 0xFFFFFFFF);
    g_assert_cmphex(vsec_rd(&n, 0x18), ==, 0);
    g_assert_cmphex(vsec_rd(&n, 0x1C), ==, 0);
    vsec_wr(&n, PTL_VSEC_REG_INDEX, 0);
    g_assert_cmphex(vsec_rd(&n, PTL_VSEC_REG_DATA), ==, ldl_le_p(xz->data));

    /* a system reset puts the index back to 0 */
    vsec_wr(&n, PTL_VSEC_REG_INDEX, 3);
    qtest_system_reset(n.t->qts);
    ecam_enable(n.t->bus);
    g_assert_cmphex(vsec_rd(&n, PTL_VSEC_REG_INDEX), ==, 0);
    ndk_close(&n);
}

/* Size probe of BAR0: all ones written, the size bits read back as 0. */
static uint64_t bar0_size(Ndk *n)
{
    uint32_t saved = qpci_config_readl(n->t->dev, PCI_BASE_ADDRESS_0), probe;
    uint16_t cmd = qpci_config_readw(n->t->dev, PCI_COMMAND);

    qpci_config_writew(n->t->dev, PCI_COMMAND, cmd & ~PCI_COMMAND_MEMORY);
    qpci_config_writel(n->t->dev, PCI_BASE_ADDRESS_0, 0xFFFFFFFF);
    probe = qpci_config_readl(n->t->dev, PCI_BASE_ADDRESS_0);
    qpci_config_writel(n->t->dev, PCI_BASE_ADDRESS_0, saved);
    qpci_config_writew(n->t->dev, PCI_COMMAND, cmd);
    return (uint64_t)(uint32_t)~(probe & PCI_BASE_ADDRESS_MEM_MASK) + 1;
}

/* The block at 0x20000 of a 0x40000-byte BAR0; the rest is empty. */
static void test_block_offset(void)
{
    static const uint32_t outside[] = {
        0x0, 0x20, 0x28, 0x8000, 0x10020, 0x1FFFC, 0x30000, 0x30020,
        0x38000, 0x3FFFC,
    };
    Ndk n;

    ndk_open_sized(&n, "q35", DT_BAR_SIZE, DT_ARGS);
    /* the node found the block where the accesses below expect it */
    g_assert_cmphex(n.t->block, ==, DT_OFFSET);
    g_assert_cmphex(bar0_size(&n), ==, DT_BAR_SIZE);
    g_assert_cmphex(bar_rd(&n, DT_OFFSET + PTL_REG_MAGIC), ==, PTL_MAGIC);
    g_assert_cmphex(bar_rd(&n, DT_OFFSET + PTL_REG_VERSION), ==,
                    PTL_VERSION_VALUE);
    /* 2 endpoints, 1 DMA port, 4 probes */
    g_assert_cmphex(bar_rd(&n, DT_OFFSET + PTL_REG_CFG_TOPOLOGY), ==,
                    0x00040102);
    for (size_t i = 0; i < G_N_ELEMENTS(outside); i++) {
        g_assert_cmphex(bar_rd(&n, outside[i]), ==, 0);
    }
    g_assert_cmphex(bar_rdq(&n, 0x1FFF8), ==, 0);
    g_assert_cmphex(qpci_io_readb(n.t->dev, n.t->bar, 0x3FFFF), ==, 0);
    /* an alias of MAGIC near the end of the register area */
    g_assert_cmphex(bar_rd(&n, DT_OFFSET + 0x7F00), ==, PTL_MAGIC);

    /* PCIe window 0 drained: 4095 cycles in the live copy */
    step_to(&n, n.t->t0 + 15000);
    bar_wr(&n, DT_OFFSET + PTL_REG_READ_SEL, 1);
    g_assert_cmpuint(bar_rd(&n, CNT(0)), ==, 0);
    g_assert_cmpuint(bar_rd(&n, CNT(0) + 4), ==, 0);
    g_assert_cmpuint(bar_rd(&n, DT_OFFSET + CNT(0)), ==, 4095);
    /*
     * Writes outside the block change nothing: CLEAR and READ_SEL at the
     * offsets the registers would have without the offset, and elsewhere.
     */
    for (size_t i = 0; i < G_N_ELEMENTS(outside); i++) {
        bar_wr(&n, outside[i], PTL_CMD_CLEAR | PTL_CMD_CLEAR_FLAGS);
        qpci_io_writeq(n.t->dev, n.t->bar, outside[i] & ~7u, ~0ull);
    }
    bar_wr(&n, PTL_REG_READ_SEL, 0);
    for (size_t i = 0; i < G_N_ELEMENTS(outside); i++) {
        g_assert_cmphex(bar_rd(&n, outside[i]), ==, 0);
    }
    step(&n, 2000);
    g_assert_cmphex(bar_rd(&n, DT_OFFSET + PTL_REG_STATUS), ==, 0);
    g_assert_cmphex(bar_rd(&n, DT_OFFSET + PTL_REG_READ_SEL), ==, 1);
    g_assert_cmpuint(bar_rd(&n, DT_OFFSET + CNT(0)), ==, 4095);
    /* and the block still takes its own commands */
    bar_wr(&n, DT_OFFSET + PTL_REG_COMMAND, PTL_CMD_CLEAR);
    /* 1 + 2 x 128 MI cycles, done before PCIe window 1 drains (20.48 us) */
    step(&n, 3000);
    g_assert_cmphex(bar_rd(&n, DT_OFFSET + PTL_REG_STATUS), ==, 0);
    g_assert_cmpuint(bar_rd(&n, DT_OFFSET + CNT(0)), ==, 0);
    ndk_close(&n);

    /* the largest offset: a 256 MiB BAR0 */
    ndk_open_sized(&n, "q35", 0x10000000,
                   "-device ndk-pcie-telemetry,addr=04.0,"
                   "block-offset=0x0fff0000");
    g_assert_cmphex(n.t->block, ==, 0x0FFF0000);
    g_assert_cmphex(bar_rd(&n, 0x0FFF0000 + PTL_REG_MAGIC), ==, PTL_MAGIC);
    g_assert_cmphex(bar_rd(&n, 0x0FFEFFFC), ==, 0);
    g_assert_cmphex(bar_rd(&n, 0), ==, 0);
    ndk_close(&n);

    /* block-offset 0x1000: the next power of two is 0x20000 */
    ndk_open_sized(&n, "q35", 0x20000,
                   "-device ndk-pcie-telemetry,addr=04.0,block-offset=0x1000");
    g_assert_cmphex(n.t->block, ==, 0x1000);
    g_assert_cmphex(bar_rd(&n, 0x1000 + PTL_REG_MAGIC), ==, PTL_MAGIC);
    g_assert_cmphex(bar_rd(&n, 0x11000), ==, 0);
    g_assert_cmphex(bar_rd(&n, 0), ==, 0);
    ndk_close(&n);
}

/* devtree=off: no capability in the extended space, the block at 0. */
static void test_devtree_off(void)
{
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,devtree=off");
    ecam_enable(n.t->bus);
    g_assert_cmphex(qndk_ext_config_readl(n.t, 0), ==,
                    PTL_QEMU_DEVICE_ID << 16 | PTL_QEMU_VENDOR_ID);
    g_assert_cmphex(vsec_rd(&n, 0), ==, 0);
    g_assert_cmphex(vsec_rd(&n, 4), ==, 0);
    g_assert_cmphex(vsec_rd(&n, 0xC), ==, 0);
    g_assert_cmphex(rd(&n, PTL_REG_MAGIC), ==, PTL_MAGIC);
    ndk_close(&n);
}

/* The word index is configuration space: it survives a migration. */
static void test_devtree_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-dt-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    g_autoptr(GByteArray) xz = NULL;
    int64_t t0, t1;
    Ndk a, b;

    g_assert(dir);
    ndk_open_sized(&a, "q35", DT_BAR_SIZE, DT_ARGS);
    ecam_enable(a.t->bus);
    xz = vsec_fetch(&a);
    g_assert_cmpuint(xz->len, >, 4 * 5 + 4);
    vsec_wr(&a, PTL_VSEC_REG_INDEX, 5);
    g_assert_cmphex(vsec_rd(&a, PTL_VSEC_REG_DATA), ==,
                    ldl_le_p(xz->data + 20));
    t0 = a.t->t0;
    t1 = a.t->now + 1000;
    step_to(&a, t1);
    migrate_out(&a, uri);

    migrate_in(&b, "q35", DT_ARGS, uri, t0, t1);
    /* ECAM came with the MCH's state, the index with the card's */
    g_assert_cmphex(vsec_rd(&b, 4), ==, PTL_VSEC_HEADER_VALUE);
    g_assert_cmphex(vsec_rd(&b, PTL_VSEC_REG_LENGTH), ==, xz->len);
    g_assert_cmphex(vsec_rd(&b, PTL_VSEC_REG_INDEX), ==, 5);
    g_assert_cmphex(vsec_rd(&b, PTL_VSEC_REG_DATA), ==,
                    ldl_le_p(xz->data + 20));
    g_assert_cmphex(bar_rd(&b, DT_OFFSET + PTL_REG_MAGIC), ==, PTL_MAGIC);
    g_assert_cmphex(bar_rd(&b, 0), ==, 0);
    ndk_close(&b);
    unlink(file);
    rmdir(dir);
}

/* ------------------------------------------------------------------ */
/* The firmware's identity on /firmware of the device tree            */

/* The card's tree, fetched through the VSEC and decompressed. */
static uint8_t *fetch_fdt(Ndk *n)
{
    g_autoptr(GByteArray) xz = NULL;
    uint8_t *fdt = g_malloc0(65536);
    uint64_t memlimit = UINT64_MAX;
    size_t in_pos = 0, out_pos = 0;

    ecam_enable(n->t->bus);
    xz = vsec_fetch(n);
    g_assert_cmpint(lzma_stream_buffer_decode(&memlimit, 0, NULL, xz->data,
                                              &in_pos, xz->len, fdt,
                                              &out_pos, 65536), ==, LZMA_OK);
    g_assert_cmpint(fdt_check_header(fdt), ==, 0);
    return fdt;
}

/* A string of /firmware as nfb-info reads it; NULL: not there. */
static void check_fw_string(const void *fdt, const char *name,
                            const char *want)
{
    int fw = fdt_path_offset(fdt, "/firmware"), len = -1;
    const char *p;

    g_assert_cmpint(fw, >=, 0);
    p = fdt_getprop(fdt, fw, name, &len);
    if (!want) {
        g_assert_null(p);
        g_assert_cmpint(len, ==, -FDT_ERR_NOTFOUND);
        return;
    }
    g_assert_nonnull(p);
    g_assert_cmpint(len, ==, (int)strlen(want) + 1);
    g_assert_cmpstr(p, ==, want);
}

/* The defaults: the model's identity, the card named by its PCI ID. */
#define FW_BUILD_TIME           1796215334u     /* 2026-12-02 12:42:14 UTC */

static void check_fw_defaults(const void *fdt, const char *card_name)
{
    int fw = fdt_path_offset(fdt, "/firmware");

    check_fw_string(fdt, "card-name", card_name);
    check_fw_string(fdt, "project-name", "ndk-pcie-telemetry");
    check_fw_string(fdt, "project-variant", NULL);
    check_fw_string(fdt, "project-version", "0.1.0");
    g_assert_cmpuint(fdt_u32(fdt, fw, "build-time"), ==, FW_BUILD_TIME);
    /* no QEMU version: the tree is the same in every QEMU release */
    check_fw_string(fdt, "build-tool", "QEMU");
    check_fw_string(fdt, "build-author", "ndk-pcie-telemetry developers");
    check_fw_string(fdt, "build-revision", NULL);
}

static void test_firmware_id(void)
{
    g_autofree uint8_t *fdt = NULL;
    g_autofree char *name = NULL;
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,id=ndk0");
    fdt = fetch_fdt(&n);
    check_fw_defaults(fdt, "QEMU-NDK-TELEMETRY");
    /* the telemetry node is still where NDK software looks */
    g_assert_cmpint(fdt_path_offset(fdt, "/firmware/mi_bus0/"
                                    "pcie_telemetry@0"), >=, 0);
    name = qom_get_str(n.t->qts, "/machine/peripheral/ndk0", "card-name");
    g_assert_cmpstr(name, ==, "QEMU-NDK-TELEMETRY");
    ndk_close(&n);
    g_clear_pointer(&fdt, g_free);
    g_clear_pointer(&name, g_free);

    /* CESNET's generic NDK ID: the name the nfb driver gives it */
    ndk_open_ids(&n, "q35", 0x18ec, 0xc000,
                 "-device ndk-pcie-telemetry,addr=04.0,id=ndk0,"
                 "vendor-id=0x18ec,device-id=0xc000");
    fdt = fetch_fdt(&n);
    check_fw_defaults(fdt, "COMBO-GENERIC");
    name = qom_get_str(n.t->qts, "/machine/peripheral/ndk0", "card-name");
    g_assert_cmpstr(name, ==, "COMBO-GENERIC");
    ndk_close(&n);
}

/* Every property set, and empty ones left out. */
static void test_firmware_id_set(void)
{
    g_autofree uint8_t *fdt = NULL;
    int fw;
    Ndk n;

    ndk_open(&n, "q35", "-device 'ndk-pcie-telemetry,addr=04.0,"
             "card-name=N6010,project-name=NDK_NIC,project-variant=100G2,"
             "project-version=0.3.2,build-time=1685752222,"
             "build-tool=Quartus Version 22.4.0 Build 94 SC Pro Edition,"
             "build-author=no-reply@liberouter.org,build-revision=1a2b3c4'");
    fdt = fetch_fdt(&n);
    fw = fdt_path_offset(fdt, "/firmware");
    check_fw_string(fdt, "card-name", "N6010");
    check_fw_string(fdt, "project-name", "NDK_NIC");
    check_fw_string(fdt, "project-variant", "100G2");
    check_fw_string(fdt, "project-version", "0.3.2");
    g_assert_cmpuint(fdt_u32(fdt, fw, "build-time"), ==, 1685752222);
    check_fw_string(fdt, "build-tool",
                    "Quartus Version 22.4.0 Build 94 SC Pro Edition");
    check_fw_string(fdt, "build-author", "no-reply@liberouter.org");
    check_fw_string(fdt, "build-revision", "1a2b3c4");
    ndk_close(&n);
    g_clear_pointer(&fdt, g_free);

    /* empty: as firmware built without them (the driver names the card) */
    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,card-name=,"
             "project-name=,project-version=,build-tool=,build-author=,"
             "build-time=0");
    fdt = fetch_fdt(&n);
    fw = fdt_path_offset(fdt, "/firmware");
    check_fw_string(fdt, "card-name", NULL);
    check_fw_string(fdt, "project-name", NULL);
    check_fw_string(fdt, "project-version", NULL);
    check_fw_string(fdt, "build-tool", NULL);
    check_fw_string(fdt, "build-author", NULL);
    g_assert_cmpuint(fdt_u32(fdt, fw, "build-time"), ==, 0);
    ndk_close(&n);
}

/* Wrong values of the new properties stop QEMU and name the property. */
static void test_bad_link_id(void)
{
    g_autofree char *too_long = g_strnfill(128, 'x');
    g_autofree char *props = g_strdup_printf("card-name=%s", too_long);
    g_autofree char *longest = g_strnfill(127, 'x');
    Ndk n;

    expect_refused("link-speed=7", "link-speed");
    expect_refused("link-speed=2.5", "link-speed");
    expect_refused("link-width=3", "link-width");
    expect_refused("link-width=64", "link-width");
    expect_refused(props, "card-name");
    expect_refused("project-name=a\tb", "project-name");
    expect_refused("project-variant=\x7f", "project-variant");
    expect_refused("project-version=1.0\n", "project-version");
    expect_refused("build-tool=caf\xc3\xa9", "build-tool");
    expect_refused("build-author=\x01", "build-author");
    expect_refused("build-revision=\x1b[0m", "build-revision");
    expect_refused("build-time=4294967296", "build-time");
    expect_refused("build-time=-1", "build-time");
    expect_refused("msi=maybe", "msi");

    /* the longest string is taken */
    g_clear_pointer(&props, g_free);
    props = g_strdup_printf("-device ndk-pcie-telemetry,addr=04.0,"
                            "build-revision=%s", longest);
    ndk_open(&n, "q35", props);
    g_assert_cmphex(rd(&n, PTL_REG_MAGIC), ==, PTL_MAGIC);
    ndk_close(&n);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_set_nonfatal_assertions();

    g_test_add_func("/ndk-pcie-telemetry/devtree/vsec", test_devtree_vsec);
    g_test_add_func("/ndk-pcie-telemetry/devtree/off", test_devtree_off);
    g_test_add_func("/ndk-pcie-telemetry/devtree/block-offset",
                    test_block_offset);
    g_test_add_func("/ndk-pcie-telemetry/devtree/migration",
                    test_devtree_migration);
    g_test_add_func("/ndk-pcie-telemetry/firmware-id/defaults",
                    test_firmware_id);
    g_test_add_func("/ndk-pcie-telemetry/firmware-id/set-and-empty",
                    test_firmware_id_set);
    g_test_add_func("/ndk-pcie-telemetry/properties/refused-link-id",
                    test_bad_link_id);

    return g_test_run();
}
