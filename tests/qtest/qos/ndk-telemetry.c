/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqos driver for ndk-pcie-telemetry (see ndk-telemetry.h).
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "hw/pci/pci_regs.h"
#include "qobject/qdict.h"
#include "tests/qtest/libqos/pci-pc.h"

#include <libfdt.h>
#include <lzma.h>

#include "ndk-telemetry.h"

#define Q35_MCH_ID              0x29c08086u     /* device << 16 | vendor */
#define CFG_SPACE_SIZE          0x1000
#define DT_MAX_BYTES            (1u << 20)

/* ------------------------------------------------------------------ */
/* Finding and enabling                                                 */

typedef struct FindCtx {
    unsigned want, seen;
    QPCIDevice *dev;
} FindCtx;

static void find_cb(QPCIDevice *dev, int devfn, void *data)
{
    FindCtx *ctx = data;

    if (!ctx->dev && ctx->seen++ == ctx->want) {
        ctx->dev = dev;
    } else {
        g_free(dev);
    }
}

uint64_t qndk_q35_ecam(QPCIBus *bus)
{
    QPCIDevice *mch = qpci_device_find(bus, 0);
    uint64_t base = 0;
    uint32_t lo;

    if (!mch) {
        return 0;
    }
    if (qpci_config_readl(mch, PCI_VENDOR_ID) == Q35_MCH_ID) {
        lo = qpci_config_readl(mch, QNDK_Q35_PCIEXBAR);
        if (!(lo & 1)) {
            /* 256 MiB (length field 0) at the usual address */
            qpci_config_writel(mch, QNDK_Q35_PCIEXBAR + 4, 0);
            qpci_config_writel(mch, QNDK_Q35_PCIEXBAR,
                               (uint32_t)QNDK_Q35_ECAM_BASE | 1);
            lo = qpci_config_readl(mch, QNDK_Q35_PCIEXBAR);
        }
        if (lo & 1) {
            base = ((uint64_t)qpci_config_readl(mch, QNDK_Q35_PCIEXBAR + 4)
                    << 32 | lo) & 0xFF0000000ull;
        }
    }
    g_free(mch);
    return base;
}

/* The block's offset in BAR0 from the device tree; 0 without one. */
static uint64_t devtree_block_offset(QNdkTelemetry *t)
{
    size_t size = 0;
    void *fdt = qndk_devtree(t, &size);
    uint64_t off = 0;
    int node;

    if (!fdt) {
        return 0;
    }
    node = fdt_node_offset_by_compatible(fdt, -1, PTL_COMPATIBLE);
    if (node >= 0) {
        int len = 0;
        const fdt32_t *reg = fdt_getprop(fdt, node, "reg", &len);

        if (reg && len >= 4) {
            off = fdt32_to_cpu(reg[0]);
        }
    }
    g_free(fdt);
    return off;
}

/*
 * Everything but the clock: see qndk_open_at() for as_is.
 */
static void qndk_setup_card(QNdkTelemetry *t, QPCIBus *bus, QPCIDevice *dev,
                            bool as_is)
{
    uint64_t base;

    t->qts = bus->qts;
    t->bus = bus;
    t->dev = dev;
    t->mi_ns = QNDK_MI_NS_DEFAULT;
    t->poll_ns = QNDK_POLL_NS_DEFAULT;
    if (as_is) {
        /* the address and the command bits came with the state */
        t->bar.addr = qpci_config_readl(dev, PCI_BASE_ADDRESS_0) &
                      PCI_BASE_ADDRESS_MEM_MASK;
        t->bar.is_io = false;
        t->bar_size = 0;
    } else {
        /*
         * BAR0 reads 0 until it is assigned and memory decoding is on:
         * qpci_device_enable() sets the command bits, qpci_iomap()
         * assigns.
         */
        qpci_device_enable(dev);
        t->bar = qpci_iomap(dev, 0, &t->bar_size);
    }
    g_assert_false(t->bar.is_io);
    base = qndk_q35_ecam(bus);
    if (base && (qpci_config_readw(dev, PCI_STATUS) & PCI_STATUS_CAP_LIST)) {
        t->ecam = base + ((uint64_t)dev->devfn << 12);
    }
    t->block = devtree_block_offset(t);
    qndk_read_layout(t);
}

static void qndk_setup(QNdkTelemetry *t, QPCIBus *bus, QPCIDevice *dev)
{
    qndk_setup_card(t, bus, dev, false);
    /*
     * qtest has no command that reads the clock without moving it: a
     * 1 ns step tells the time, which then advances only through
     * qndk_step(); t0 is the time QEMU started at.
     */
    t->now = qtest_clock_step(t->qts, 1);
    t->t0 = t->now - 1;
}

static QPCIDevice *qndk_find(QPCIBus *bus, uint16_t vendor,
                             uint16_t device, unsigned index)
{
    FindCtx ctx = { .want = index };

    qpci_device_foreach(bus, vendor ? vendor : PTL_QEMU_VENDOR_ID,
                        device ? device : PTL_QEMU_DEVICE_ID, find_cb, &ctx);
    return ctx.dev;
}

QNdkTelemetry *qndk_open(QPCIBus *bus, uint16_t vendor, uint16_t device,
                         unsigned index)
{
    QPCIDevice *dev = qndk_find(bus, vendor, device, index);
    QNdkTelemetry *t;

    if (!dev) {
        return NULL;
    }
    t = g_new0(QNdkTelemetry, 1);
    qndk_setup(t, bus, dev);
    return t;
}

QNdkTelemetry *qndk_open_at(QPCIBus *bus, uint16_t vendor, uint16_t device,
                            unsigned index, int64_t now_ns, bool as_is)
{
    QPCIDevice *dev = qndk_find(bus, vendor, device, index);
    QNdkTelemetry *t;

    if (!dev) {
        return NULL;
    }
    t = g_new0(QNdkTelemetry, 1);
    qndk_setup_card(t, bus, dev, as_is);
    t->t0 = t->now = now_ns;
    return t;
}

void qndk_close(QNdkTelemetry *t)
{
    if (!t) {
        return;
    }
    qpci_iounmap(t->dev, t->bar);
    g_free(t->dev);
    g_free(t);
}

static QNdkTelemetry * G_GNUC_PRINTF(4, 0)
qndk_startv(const char *machine, uint16_t vendor, uint16_t device,
            const char *extra_fmt, va_list ap)
{
    g_autofree char *extra = g_strdup_vprintf(extra_fmt, ap);
    QNdkTelemetry *t;
    QTestState *qts;
    QPCIBus *bus;

    qts = qtest_initf("-machine %s -nodefaults %s", machine, extra);
    bus = qpci_new_pc(qts, NULL);
    t = qndk_open(bus, vendor, device, 0);
    g_assert_nonnull(t);
    t->owns_machine = true;
    return t;
}

QNdkTelemetry *qndk_start(const char *machine, const char *extra_fmt, ...)
{
    QNdkTelemetry *t;
    va_list ap;

    va_start(ap, extra_fmt);
    t = qndk_startv(machine, 0, 0, extra_fmt, ap);
    va_end(ap);
    return t;
}

QNdkTelemetry *qndk_start_ids(const char *machine, uint16_t vendor,
                              uint16_t device, const char *extra_fmt, ...)
{
    QNdkTelemetry *t;
    va_list ap;

    va_start(ap, extra_fmt);
    t = qndk_startv(machine, vendor, device, extra_fmt, ap);
    va_end(ap);
    return t;
}

void qndk_stop(QNdkTelemetry *t)
{
    QTestState *qts;
    QPCIBus *bus;

    if (!t) {
        return;
    }
    g_assert_true(t->owns_machine);
    qts = t->qts;
    bus = t->bus;
    qndk_close(t);
    qpci_free_pc(bus);
    qtest_quit(qts);
}

/* ------------------------------------------------------------------ */
/* Registers                                                            */

uint32_t qndk_readl(QNdkTelemetry *t, uint32_t off)
{
    return qpci_io_readl(t->dev, t->bar, t->block + off);
}

void qndk_writel(QNdkTelemetry *t, uint32_t off, uint32_t val)
{
    qpci_io_writel(t->dev, t->bar, t->block + off, val);
}

uint64_t qndk_readq(QNdkTelemetry *t, uint32_t off)
{
    return qtest_readq(t->qts, t->bar.addr + t->block + off);
}

void qndk_read_layout(QNdkTelemetry *t)
{
    uint32_t topo = qndk_readl(t, PTL_REG_CFG_TOPOLOGY);
    uint32_t layout = qndk_readl(t, PTL_REG_CFG_LAYOUT);
    uint32_t pcie = qndk_readl(t, PTL_REG_CFG_PCIE);
    uint32_t dma = qndk_readl(t, PTL_REG_CFG_DMA);
    uint32_t drain = qndk_readl(t, PTL_REG_CFG_DRAIN);
    uint32_t hist = qndk_readl(t, PTL_REG_CFG_HIST);
    QNdkLayout *l = &t->lay;

    l->endpoints = PTL_FIELD(topo, PTL_TOPOLOGY_ENDPOINTS);
    l->dma_ports = PTL_FIELD(topo, PTL_TOPOLOGY_DMA_PORTS);
    l->entries = PTL_FIELD(layout, PTL_LAYOUT_ENTRIES);
    l->cnt_width = PTL_FIELD(layout, PTL_LAYOUT_CNT_WIDTH);
    l->pcie_regions = PTL_FIELD(pcie, PTL_PROBE_REGIONS);
    l->dma_regions = PTL_FIELD(dma, PTL_PROBE_REGIONS);
    /* channel counts from the rules: the 8-bit fields wrap past 255 */
    l->pcie_channels = ptl_probe_channels(l->pcie_regions, 2,
                                          PTL_FIELD(pcie, PTL_PROBE_BRAKES));
    l->dma_channels = ptl_probe_channels(l->dma_regions, 2 * l->dma_ports,
                                         PTL_FIELD(dma, PTL_PROBE_BRAKES));
    l->per_endpoint = l->pcie_channels + l->dma_channels;
    l->brake_reasons = PTL_FIELD(pcie, PTL_PROBE_BRAKES) -
                       PTL_FIELD(hist, PTL_HIST_BANDS) *
                       PTL_FIELD(hist, PTL_HIST_PCIE);
    l->drain_period = PTL_FIELD(drain, PTL_DRAIN_PERIOD);
    if (!l->drain_period) {
        l->drain_period = 65536;
    }
    l->cnt_base = qndk_readl(t, PTL_REG_CNT_BASE);
}

/* ------------------------------------------------------------------ */
/* Virtual time and commands                                            */

int64_t qndk_now(QNdkTelemetry *t)
{
    return t->now;
}

int64_t qndk_step(QNdkTelemetry *t, int64_t ns)
{
    g_assert_cmpint(ns, >=, 0);
    if (ns) {
        t->now = qtest_clock_step(t->qts, ns);
    }
    return t->now;
}

int64_t qndk_step_to(QNdkTelemetry *t, int64_t t_ns)
{
    g_assert_cmpint(t_ns, >=, t->now);
    return qndk_step(t, t_ns - t->now);
}

uint32_t qndk_status(QNdkTelemetry *t)
{
    return qndk_readl(t, PTL_REG_STATUS);
}

unsigned qndk_wait_busy(QNdkTelemetry *t, unsigned max_cycles)
{
    unsigned c = 0;

    while (qndk_status(t) & PTL_STATUS_BUSY) {
        if (c >= max_cycles) {
            g_test_message("qndk_wait_busy: STATUS still BUSY after %u MI "
                           "cycles: raise max_cycles (a sweep takes about "
                           "2 x ENTRIES + 8 MI cycles) or check that t->mi_ns "
                           "is the card's MI clock period", c);
            /* with non-fatal assertions the test goes on: stop here */
            g_assert_cmpuint(c, <, max_cycles);
            break;
        }
        qndk_step(t, t->mi_ns);
        c++;
    }
    return c;
}

static uint32_t command_and_wait(QNdkTelemetry *t, uint32_t cmd)
{
    qndk_writel(t, PTL_REG_COMMAND, cmd);
    /* BUSY shows from the second MI cycle after the write */
    qndk_step(t, 2 * t->mi_ns);
    /* a sweep of all entries, with room for the request's wait */
    qndk_wait_busy(t, 4 * t->lay.entries + 64);
    return qndk_status(t);
}

uint32_t qndk_snapshot(QNdkTelemetry *t)
{
    qndk_writel(t, PTL_REG_READ_SEL, PTL_READ_SEL_SNAPSHOT);
    return command_and_wait(t, PTL_CMD_SNAPSHOT);
}

uint32_t qndk_clear(QNdkTelemetry *t)
{
    return command_and_wait(t, PTL_CMD_CLEAR);
}

void qndk_clear_flags(QNdkTelemetry *t, bool lowest_too)
{
    qndk_writel(t, PTL_REG_COMMAND, PTL_CMD_CLEAR_FLAGS |
                (lowest_too ? PTL_CMD_CLEAR_LOWEST : 0));
}

/* ------------------------------------------------------------------ */
/* Counters                                                             */

uint64_t qndk_counter(QNdkTelemetry *t, unsigned entry)
{
    return qndk_readq(t, ptl_cnt_offset(t->lay.cnt_base, entry));
}

void qndk_counters(QNdkTelemetry *t, uint64_t *out, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        out[i] = qndk_counter(t, i);
    }
}

unsigned qndk_entry(QNdkTelemetry *t, unsigned e, bool dma, unsigned ch)
{
    g_assert_cmpuint(e, <, t->lay.endpoints);
    g_assert_cmpuint(ch, <, dma ? t->lay.dma_channels : t->lay.pcie_channels);
    return ptl_entry(t->lay.per_endpoint, t->lay.pcie_channels, e, dma, ch);
}

unsigned qndk_bus_entry(QNdkTelemetry *t, unsigned e, QNdkBusKind bus,
                        unsigned port, unsigned k)
{
    bool dma = bus == QNDK_UP || bus == QNDK_DOWN;
    unsigned b, regions = dma ? t->lay.dma_regions : t->lay.pcie_regions;

    g_assert_cmpuint(k, <, PTL_CH_REGION0 + regions);
    if (dma) {
        g_assert_cmpuint(port, <, t->lay.dma_ports);
        b = 2 * port + (bus == QNDK_DOWN);
    } else {
        b = bus == QNDK_RC;
    }
    return qndk_entry(t, e, dma, ptl_bus_channel(regions, b, k));
}

uint64_t qndk_bus_counter(QNdkTelemetry *t, unsigned e, QNdkBusKind bus,
                          unsigned port, unsigned k)
{
    return qndk_counter(t, qndk_bus_entry(t, e, bus, port, k));
}

uint64_t qndk_cycles(QNdkTelemetry *t, unsigned e, bool dma)
{
    return qndk_counter(t, qndk_entry(t, e, dma, PTL_CH_CYCLES));
}

uint64_t qndk_brake(QNdkTelemetry *t, unsigned e, unsigned reason)
{
    g_assert_cmpuint(reason, <, t->lay.brake_reasons);
    return qndk_counter(t, qndk_entry(t, e, false,
                        ptl_brake_channel(t->lay.pcie_regions, reason)));
}

uint64_t qndk_band(QNdkTelemetry *t, unsigned e, unsigned h, unsigned j)
{
    g_assert_cmpuint(h, <, PTL_PCIE_HISTS);
    g_assert_cmpuint(j, <, PTL_HIST_BANDS);
    return qndk_counter(t, qndk_entry(t, e, false,
                        ptl_band_channel(t->lay.pcie_regions,
                                         t->lay.brake_reasons, h, j)));
}

/* ------------------------------------------------------------------ */
/* Configuration space and the device tree                              */

bool qndk_has_ecam(QNdkTelemetry *t)
{
    return t->ecam != 0;
}

uint32_t qndk_ext_config_readl(QNdkTelemetry *t, uint32_t off)
{
    g_assert_true(qndk_has_ecam(t));
    g_assert_cmpuint(off, <, CFG_SPACE_SIZE);
    return qtest_readl(t->qts, t->ecam + (off & ~3u));
}

void qndk_ext_config_writel(QNdkTelemetry *t, uint32_t off, uint32_t val)
{
    g_assert_true(qndk_has_ecam(t));
    g_assert_cmpuint(off, <, CFG_SPACE_SIZE);
    qtest_writel(t->qts, t->ecam + (off & ~3u), val);
}

void *qndk_devtree(QNdkTelemetry *t, size_t *size)
{
    uint32_t v = PTL_QEMU_VSEC_OFFSET, len, words, index;
    g_autofree uint8_t *xz = NULL;
    uint8_t *out;
    size_t in_pos = 0, out_pos = 0;
    uint64_t memlimit = UINT64_MAX;

    if (!qndk_has_ecam(t) ||
        (qndk_ext_config_readl(t, v) & 0xFFFF) != PTL_VSEC_CAP_ID ||
        (qndk_ext_config_readl(t, v + PTL_VSEC_REG_HEADER) & 0xFFFF) !=
        PTL_VSEC_ID) {
        return NULL;
    }
    len = qndk_ext_config_readl(t, v + PTL_VSEC_REG_LENGTH);
    if (!len || len > DT_MAX_BYTES) {
        return NULL;
    }
    words = DIV_ROUND_UP(len, 4);
    xz = g_malloc(words * 4);
    /* the index is the guest's: put it back afterwards */
    index = qndk_ext_config_readl(t, v + PTL_VSEC_REG_INDEX);
    for (uint32_t i = 0; i < words; i++) {
        qndk_ext_config_writel(t, v + PTL_VSEC_REG_INDEX, i);
        stl_le_p(xz + 4 * i,
                 qndk_ext_config_readl(t, v + PTL_VSEC_REG_DATA));
    }
    qndk_ext_config_writel(t, v + PTL_VSEC_REG_INDEX, index);
    out = g_malloc(DT_MAX_BYTES);
    if (lzma_stream_buffer_decode(&memlimit, 0, NULL, xz, &in_pos, len,
                                  out, &out_pos, DT_MAX_BYTES) != LZMA_OK ||
        fdt_check_header(out)) {
        g_free(out);
        return NULL;
    }
    if (size) {
        *size = out_pos;
    }
    return out;
}

/* ------------------------------------------------------------------ */
/* The traffic object                                                   */

char *qndk_traffic_set(QNdkTelemetry *t, const char *id, const char *prop,
                       const char *value_json)
{
    g_autofree char *cmd = g_strdup_printf(
        "{ 'execute': 'qom-set', 'arguments': { 'path': '/objects/%s', "
        "'property': '%s', 'value': %s } }", id, prop, value_json);
    QDict *rsp = qtest_qmp(t->qts, "%s", cmd);
    char *msg = NULL;

    if (qdict_haskey(rsp, "error")) {
        msg = g_strdup(qdict_get_str(qdict_get_qdict(rsp, "error"), "desc"));
    }
    qobject_unref(rsp);
    return msg;
}

/* ------------------------------------------------------------------ */
/* libpcie-telemetry over qtest                                         */

static uint32_t ptl_read32(void *opaque, uint32_t offset)
{
    return qndk_readl(opaque, offset);
}

static void ptl_write32(void *opaque, uint32_t offset, uint32_t value)
{
    qndk_writel(opaque, offset, value);
}

static uint64_t ptl_read64(void *opaque, uint32_t offset)
{
    return qndk_readq(opaque, offset);
}

static uint64_t ptl_now_ns(void *opaque)
{
    QNdkTelemetry *t = opaque;

    return qndk_step(t, t->poll_ns);
}

const ptl_regs_ops qndk_ptl_ops = {
    .read32 = ptl_read32,
    .write32 = ptl_write32,
    .read64 = ptl_read64,
    .now_ns = ptl_now_ns,
};

/* ------------------------------------------------------------------ */
/* qgraph                                                               */

static void *qndk_get_driver(void *obj, const char *interface)
{
    if (!g_strcmp0(interface, "ndk-pcie-telemetry-if")) {
        return obj;
    }
    fprintf(stderr, "%s not present in ndk-pcie-telemetry\n", interface);
    g_assert_not_reached();
}

static void qndk_destructor(QOSGraphObject *obj)
{
    QNdkTelemetry *t = (QNdkTelemetry *)obj;

    qpci_iounmap(t->dev, t->bar);
    g_free(t->dev);
}

static void *qndk_create(void *pci_bus, QGuestAllocator *alloc, void *addr)
{
    QNdkTelemetry *t = g_new0(QNdkTelemetry, 1);
    QPCIBus *bus = pci_bus;
    QPCIDevice *dev = qpci_device_find(bus, ((QPCIAddress *)addr)->devfn);

    g_assert_nonnull(dev);
    qndk_setup(t, bus, dev);
    t->obj.get_driver = qndk_get_driver;
    t->obj.destructor = qndk_destructor;
    return &t->obj;
}

static void qndk_register_nodes(void)
{
    QPCIAddress addr = {
        .devfn = QNDK_DEVFN,
        .vendor_id = PTL_QEMU_VENDOR_ID,
        .device_id = PTL_QEMU_DEVICE_ID,
    };
    /* no default VGA or NIC: their option ROMs are not in every build */
    QOSGraphEdgeOptions opts = {
        .before_cmd_line = "-nodefaults",
        .extra_device_opts = "addr=04.0",
    };

    add_qpci_address(&opts, &addr);
    qos_node_create_driver("ndk-pcie-telemetry", qndk_create);
    qos_node_consumes("ndk-pcie-telemetry", "pci-bus", &opts);
    qos_node_produces("ndk-pcie-telemetry", "ndk-pcie-telemetry-if");
}

libqos_init(qndk_register_nodes);
