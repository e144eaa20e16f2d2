/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The libqos node of ndk-pcie-telemetry under QEMU's qgraph walker: each
 * case runs on every machine path that reaches the node (x86_64/pc over
 * CF8, x86_64/q35 over ECAM). Expected values come from the register map
 * and the device's page, never from the card.
 */
#include "qemu/osdep.h"
#include "tests/qtest/libqtest-single.h"
#include "tests/qtest/libqos/qgraph.h"

#include <libfdt.h>

#include "ndk-telemetry.h"

/* The default card's configuration registers (the device's page) */
static const uint32_t default_cfg[][2] = {
    { PTL_REG_MAGIC, PTL_MAGIC }, { PTL_REG_VERSION, PTL_VERSION_VALUE },
    { PTL_REG_CFG_TOPOLOGY, 0x00020101 }, { PTL_REG_CFG_LAYOUT, 0x30300040 },
    { PTL_REG_CFG_PCIE, 0x0E02021F }, { PTL_REG_CFG_DMA, 0x00020211 },
    { PTL_REG_CFG_DRAIN, 0x00041000 }, { PTL_REG_CNT_BASE, 0x00008000 },
    { PTL_REG_CFG_REGIONS, 0x02020202 }, { PTL_REG_CFG_WIDTH, 0x00200020 },
    { PTL_REG_CFG_HIST, 0x00000204 }, { PTL_REG_CFG_CAPACITY, 0x04000100 },
    { PTL_REG_CFG_WIDTH_DMA, 0x00200020 },
};

static void test_registers(void *obj, void *data, QGuestAllocator *alloc)
{
    QNdkTelemetry *t = obj;

    for (size_t i = 0; i < G_N_ELEMENTS(default_cfg); i++) {
        g_assert_cmphex(qndk_readl(t, default_cfg[i][0]), ==,
                        default_cfg[i][1]);
    }
    /* the layout the node decoded: 31 + 17 channels, 64 entries */
    g_assert_cmpuint(t->lay.endpoints, ==, 1);
    g_assert_cmpuint(t->lay.pcie_channels, ==, 31);
    g_assert_cmpuint(t->lay.dma_channels, ==, 17);
    g_assert_cmpuint(t->lay.entries, ==, 64);
    g_assert_cmpuint(t->lay.brake_reasons, ==, PTL_BRAKE_REASONS);
    /* below the counter window the map repeats every 0x100 bytes */
    g_assert_cmphex(qndk_readl(t, 0x100 + PTL_REG_MAGIC), ==, PTL_MAGIC);
    /* COMMAND reads 0, READ_SEL keeps bit 0 only */
    g_assert_cmphex(qndk_readl(t, PTL_REG_COMMAND), ==, 0);
    qndk_writel(t, PTL_REG_READ_SEL, 0xFFFFFFFF);
    g_assert_cmphex(qndk_readl(t, PTL_REG_READ_SEL), ==, PTL_READ_SEL_LIVE);
    qndk_writel(t, PTL_REG_READ_SEL, PTL_READ_SEL_SNAPSHOT);
}

/*
 * An idle card: a SNAPSHOT taken at time T shows the PCIe and DMA cycle
 * counters of the drain windows that ended by then; nothing else counts.
 * BUSY is not there yet right after the write.
 */
static void test_snapshot_idle(void *obj, void *data, QGuestAllocator *alloc)
{
    QNdkTelemetry *t = obj;
    uint32_t status;

    qndk_step(t, 1000000);
    qndk_writel(t, PTL_REG_COMMAND, PTL_CMD_SNAPSHOT);
    g_assert_cmphex(qndk_status(t) & PTL_STATUS_BUSY, ==, 0);
    qndk_step(t, 2 * t->mi_ns);
    g_assert_cmphex(qndk_status(t) & PTL_STATUS_BUSY, ==, PTL_STATUS_BUSY);
    qndk_wait_busy(t, 4 * t->lay.entries);
    status = qndk_status(t);
    g_assert_cmphex(status, ==, 0);
    /* 1 ms at 400 MHz = 400000 cycles: whole windows of 4096 only */
    g_assert_cmpuint(qndk_cycles(t, 0, false), >, 400000 - 2 * 4096);
    g_assert_cmpuint(qndk_cycles(t, 0, false), <=, 400000);
    g_assert_cmpuint(qndk_cycles(t, 0, false) % 4096, ==, 4095);
    g_assert_cmpuint(qndk_cycles(t, 0, true), >, 200000 - 2 * 4096);
    g_assert_cmpuint(qndk_cycles(t, 0, true), <=, 200000);
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_RQ, 0, PTL_CH_WORDS), ==, 0);
    g_assert_cmpuint(qndk_bus_counter(t, 0, QNDK_UP, 0, PTL_CH_WORDS), ==, 0);
    for (unsigned j = 0; j < PTL_BRAKE_REASONS; j++) {
        g_assert_cmpuint(qndk_brake(t, 0, j), ==, 0);
    }
    /* all tags free: every cycle counted falls in the top band */
    g_assert_cmpuint(qndk_band(t, 0, PTL_HIST_TAGS, 3), >, 0);
    g_assert_cmpuint(qndk_band(t, 0, PTL_HIST_TAGS, 0), ==, 0);
    qndk_clear(t);
    qndk_snapshot(t);
    g_assert_cmpuint(qndk_cycles(t, 0, false), <, 2 * 4096);
}

/* The device tree names the block at offset 0 of BAR0 (q35 only) */
static void test_devtree(void *obj, void *data, QGuestAllocator *alloc)
{
    QNdkTelemetry *t = obj;
    g_autofree void *fdt = NULL;
    size_t size = 0;
    int node;

    if (!qndk_has_ecam(t)) {
        /* pc: no extended configuration space, the block at 0 */
        g_assert_null(qndk_devtree(t, &size));
        g_assert_cmpuint(t->block, ==, 0);
        return;
    }
    g_assert_cmphex(qndk_ext_config_readl(t, PTL_QEMU_VSEC_OFFSET +
                                          PTL_VSEC_REG_HEADER), ==,
                    PTL_VSEC_HEADER_VALUE);
    fdt = qndk_devtree(t, &size);
    g_assert_nonnull(fdt);
    node = fdt_node_offset_by_compatible(fdt, -1, PTL_COMPATIBLE);
    g_assert_cmpint(node, >=, 0);
    g_assert_cmpuint(t->block, ==, 0);
}

/* libpcie-telemetry's own reader, its BUSY waits on virtual time */
static void test_ptl_reader(void *obj, void *data, QGuestAllocator *alloc)
{
    QNdkTelemetry *t = obj;
    ptl_block *b = NULL;
    ptl_reading *r;
    ptl_error err;
    int64_t before;

    g_assert_cmpint(ptl_block_open(&qndk_ptl_ops, t, &b, &err), ==, PTL_OK);
    g_assert_cmpuint(ptl_block_layout(b)->entries, ==, 64);
    r = ptl_reading_new(ptl_block_layout(b));
    qndk_step(t, 500000);
    before = qndk_now(t);
    g_assert_cmpint(ptl_block_read(b, r, &err), ==, PTL_OK);
    /* the reading's clock ran on virtual time: two calls around the
     * SNAPSHOT write and at least one STATUS poll */
    g_assert_cmpint(qndk_now(t), >=, before + 3 * t->poll_ns);
    g_assert_cmpuint(r->t_ns, >, before);
    /* a sweep after the command: the PCIe cycles of 0.5 ms at 400 MHz */
    g_assert_cmpuint(r->counters[0], >, 200000 - 2 * 4096);
    g_assert_cmpuint(r->counters[0], <=, 200000 + 2 * 4096);
    g_assert_cmpuint(r->counters[0] % 4096, ==, 4095);
    g_assert_cmphex(r->status & PTL_STATUS_BUSY, ==, 0);
    /* link up, MPS 128 and MRRS 512 at reset (the device's page) */
    g_assert_cmphex(PTL_FIELD(r->pcie_status[0], PTL_PCIE_LINK_UP), ==, 1);
    g_assert_cmphex(PTL_FIELD(r->pcie_status[0], PTL_PCIE_MRRS), ==, 2);
    ptl_reading_free(r);
    ptl_block_close(b);
}

/*
 * qgraph keeps one QEMU for consecutive cases with the same command line;
 * these cases count from the card's reset, so each gets a QEMU of its own.
 */
static void *fresh_qemu(GString *cmd_line, void *arg)
{
    qos_invalidate_command_line();
    return arg;
}

static void register_tests(void)
{
    QOSGraphTestOptions opts = { .before = fresh_qemu };

    qos_add_test("registers", "ndk-pcie-telemetry-if", test_registers, &opts);
    qos_add_test("snapshot-idle", "ndk-pcie-telemetry-if", test_snapshot_idle,
                 &opts);
    qos_add_test("devtree", "ndk-pcie-telemetry-if", test_devtree, &opts);
    qos_add_test("ptl-reader", "ndk-pcie-telemetry-if", test_ptl_reader,
                 &opts);
}

libqos_init(register_tests);
