/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hisi-ptt: HiSilicon's PCIe Tune and Trace device, a root complex
 * integrated endpoint (19e5:a12e) with its registers in BAR 2 and one MSI
 * vector, as Linux's hisi_ptt driver probes it. The registers, tune
 * events and trace engine are the QEMU-free model of ptt-core.c; this
 * file gives it guest memory (DMA through the function, so bus mastering
 * must be on), its MSI, a timer that writes the trace every millisecond
 * while it runs, reset and migration. See docs/ptt.md.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "hw/pci/msi.h"
#include "hw/pci/pci_bus.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "system/dma.h"
#include "qom/object.h"

#include "hw/pci/pci_bridge.h"
#include "hw/pci/pcie_port.h"
#include "pcie-link-traffic.h"
#include "ptt-core.h"
#include "trace.h"

#define TYPE_HISI_PTT           "hisi-ptt"
OBJECT_DECLARE_SIMPLE_TYPE(HisiPttState, HISI_PTT)

#define HISI_PTT_VENDOR_ID      0x19e5
#define HISI_PTT_DEVICE_ID      0xa12e
#define HISI_PTT_MSI_OFFSET     0x50
#define HISI_PTT_EXP_OFFSET     0x70
#define HISI_PTT_POLL_NS        1000000     /* the trace's writes: 1 ms */

struct HisiPttState {
    PCIDevice parent_obj;

    MemoryRegion bar;
    PttCore core;
    QEMUTimer *timer;

    uint32_t sicl_id, core_id;
    uint32_t range_lower, range_upper;
    uint64_t max_bytes_per_s;

    /* migration: the model's state as bytes */
    uint8_t *state;
    uint32_t state_len;
};

static uint64_t hisi_ptt_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static int hisi_ptt_tlp_cmp(gconstpointer a, gconstpointer b)
{
    const PttTlp *x = a, *y = b;

    return x->tlp.t_ns < y->tlp.t_ns ? -1 : x->tlp.t_ns > y->tlp.t_ns;
}

/*
 * The TLPs of the functions below the root ports it covers (their
 * pcie-link-traffic tlps), in time order: each port's id is its slot's
 * (slot & 7) * 2, as the driver computes the filter bit. A function may
 * give its TLPs only once (the card walks its frames), so each gets an
 * equal share of max and everything it gives is passed on.
 */
static size_t hisi_ptt_tlps(void *opaque, uint64_t from, uint64_t to,
                            PttTlp *out, size_t max, uint64_t *resume)
{
    HisiPttState *s = opaque;
    PCIBus *root = pci_get_bus(PCI_DEVICE(s));
    g_autoptr(GPtrArray) devs = g_ptr_array_new();
    size_t count = 0, share;

    *resume = to;
    for (unsigned bdf = s->range_lower; bdf <= s->range_upper; bdf++) {
        PCIDevice *port = bdf >> 8 ? NULL : root->devices[bdf & 0xFF];
        PCIBus *sec;

        if (!port || !object_dynamic_cast(OBJECT(port), TYPE_PCIE_ROOT_PORT)) {
            continue;
        }
        sec = pci_bridge_get_sec_bus(PCI_BRIDGE(port));
        for (unsigned devfn = 0; devfn < 256; devfn++) {
            PCIDevice *dev = sec->devices[devfn];

            if (dev && DEVICE(dev)->realized) {
                g_ptr_array_add(devs, dev);
            }
        }
    }
    if (!devs->len) {
        return 0;
    }
    share = out ? MAX(max / devs->len, 1) : 0;
    for (guint k = 0; k < devs->len; k++) {
        PCIDevice *dev = g_ptr_array_index(devs, k);
        PCIDevice *port = pci_bridge_get_device(pci_get_bus(dev));
        g_autofree PcieTlp *tlp = out ? g_new(PcieTlp, share) : NULL;
        uint64_t r;
        size_t n = pcie_link_traffic_tlps(OBJECT(dev), from, to, tlp,
                                          share, &r);

        if (!out) {
            count += n;
            continue;
        }
        *resume = MIN(*resume, r);
        for (size_t i = 0; i < n && count < max; i++) {
            PttTlp *t = &out[count++];

            *t = (PttTlp) {
                .tlp = tlp[i],
                .port = (PCI_SLOT(port->devfn) & 7) * 2,
                .function = pci_requester_id(dev),
            };
        }
    }
    if (out) {
        qsort(out, count, sizeof(*out), hisi_ptt_tlp_cmp);
    }
    return count;
}

static bool hisi_ptt_dma(void *opaque, uint64_t addr, const void *buf,
                         size_t len)
{
    HisiPttState *s = opaque;
    MemTxResult r = pci_dma_write(PCI_DEVICE(s), addr, buf, len);

    if (r != MEMTX_OK) {
        trace_hisi_ptt_dma_error(addr, len);
    }
    return r == MEMTX_OK;
}

static void hisi_ptt_irq(void *opaque)
{
    PCIDevice *d = PCI_DEVICE(opaque);

    if (msi_enabled(d)) {
        msi_notify(d, 0);
    }
}

static void hisi_ptt_arm(HisiPttState *s)
{
    if (ptt_tracing(&s->core)) {
        timer_mod(s->timer, hisi_ptt_now() + HISI_PTT_POLL_NS);
    } else {
        timer_del(s->timer);
    }
}

static void hisi_ptt_timer(void *opaque)
{
    HisiPttState *s = opaque;

    ptt_sync(&s->core, hisi_ptt_now());
    hisi_ptt_arm(s);
}

static uint64_t hisi_ptt_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    HisiPttState *s = opaque;
    uint32_t v = ptt_read(&s->core, addr, hisi_ptt_now());

    trace_hisi_ptt_read(addr, v);
    return v;
}

static void hisi_ptt_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                unsigned size)
{
    HisiPttState *s = opaque;
    bool was = ptt_tracing(&s->core);

    trace_hisi_ptt_write(addr, val);
    ptt_write(&s->core, addr, val, hisi_ptt_now());
    if (was != ptt_tracing(&s->core)) {
        hisi_ptt_arm(s);
    }
}

static const MemoryRegionOps hisi_ptt_mmio_ops = {
    .read = hisi_ptt_mmio_read,
    .write = hisi_ptt_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

static void hisi_ptt_realize(PCIDevice *d, Error **errp)
{
    HisiPttState *s = HISI_PTT(d);
    PttConfig cfg = {
        .sicl_id = s->sicl_id, .core_id = s->core_id,
        .range_lower = s->range_lower, .range_upper = s->range_upper,
        .max_bytes_per_s = s->max_bytes_per_s,
    };
    g_autofree char *why = NULL;
    static const char *const names[] = {
        "sicl-id", "core-id", "range-lower", "range-upper",
    };
    uint32_t vals[] = { s->sicl_id, s->core_id, s->range_lower,
                        s->range_upper };

    for (unsigned i = 0; i < ARRAY_SIZE(names); i++) {
        if (vals[i] > 0xFFFF) {
            error_setg(errp, "%s: property '%s' is 0x%x, allowed: 0 to "
                       "0xffff", TYPE_HISI_PTT, names[i], vals[i]);
            return;
        }
    }
    why = ptt_config_check(&cfg);
    if (why) {
        error_setg(errp, "%s: properties 'range-lower', 'range-upper' or "
                   "'max-bytes-per-s': %s", TYPE_HISI_PTT, why);
        return;
    }
    if (!pci_bus_is_express(pci_get_bus(d)) ||
        !pci_bus_is_root(pci_get_bus(d))) {
        error_setg(errp, "%s: a root complex integrated endpoint: put it on "
                   "the PCIe root bus (q35's pcie.0)", TYPE_HISI_PTT);
        return;
    }

    pci_config_set_vendor_id(d->config, HISI_PTT_VENDOR_ID);
    pci_config_set_device_id(d->config, HISI_PTT_DEVICE_ID);
    pci_config_set_class(d->config, PCI_CLASS_OTHERS);
    if (pcie_endpoint_cap_init(d, HISI_PTT_EXP_OFFSET) < 0) {
        error_setg(errp, "%s: cannot add the PCIe capability", TYPE_HISI_PTT);
        return;
    }
    /* one plain MSI vector, 64-bit: what the driver asks for */
    if (msi_init(d, HISI_PTT_MSI_OFFSET, 1, true, false, errp) < 0) {
        return;
    }
    memory_region_init_io(&s->bar, OBJECT(s), &hisi_ptt_mmio_ops, s,
                          "hisi-ptt-bar2", PTT_BAR_SIZE);
    pci_register_bar(d, 2, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar);
    ptt_init(&s->core, &cfg, hisi_ptt_tlps, hisi_ptt_dma, hisi_ptt_irq, s);
    s->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, hisi_ptt_timer, s);
}

static void hisi_ptt_exit(PCIDevice *d)
{
    HisiPttState *s = HISI_PTT(d);

    timer_free(s->timer);
    s->timer = NULL;
    msi_uninit(d);
}

static void hisi_ptt_reset_hold(Object *obj, ResetType type)
{
    HisiPttState *s = HISI_PTT(obj);

    ptt_reset(&s->core);
    if (s->timer) {
        timer_del(s->timer);
    }
}

static void hisi_ptt_finalize(Object *obj)
{
    g_free(HISI_PTT(obj)->state);
}

static int hisi_ptt_pre_save(void *opaque)
{
    HisiPttState *s = opaque;
    size_t len;

    ptt_sync(&s->core, hisi_ptt_now());
    g_free(s->state);
    s->state = ptt_save(&s->core, &len);
    s->state_len = len;
    return 0;
}

static int hisi_ptt_post_load(void *opaque, int version_id)
{
    HisiPttState *s = opaque;
    g_autofree char *err = ptt_load(&s->core, s->state, s->state_len);

    g_free(s->state);
    s->state = NULL;
    s->state_len = 0;
    if (err) {
        error_report("%s: %s", TYPE_HISI_PTT, err);
        return -EINVAL;
    }
    hisi_ptt_arm(s);
    return 0;
}

static const VMStateDescription vmstate_hisi_ptt = {
    .name = TYPE_HISI_PTT,
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = hisi_ptt_pre_save,
    .post_load = hisi_ptt_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, HisiPttState),
        VMSTATE_UINT32(state_len, HisiPttState),
        VMSTATE_VBUFFER_ALLOC_UINT32(state, HisiPttState, 0, NULL, state_len),
        VMSTATE_END_OF_LIST()
    }
};

static const Property hisi_ptt_props[] = {
    DEFINE_PROP_UINT32("sicl-id", HisiPttState, sicl_id, 0),
    DEFINE_PROP_UINT32("core-id", HisiPttState, core_id, 0),
    DEFINE_PROP_UINT32("range-lower", HisiPttState, range_lower, 0x0000),
    DEFINE_PROP_UINT32("range-upper", HisiPttState, range_upper, 0x00FF),
    DEFINE_PROP_UINT64("max-bytes-per-s", HisiPttState, max_bytes_per_s,
                       64 * 1024 * 1024),
};

static void hisi_ptt_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(oc);
    ResettableClass *rc = RESETTABLE_CLASS(oc);

    pc->realize = hisi_ptt_realize;
    pc->exit = hisi_ptt_exit;
    pc->vendor_id = HISI_PTT_VENDOR_ID;
    pc->device_id = HISI_PTT_DEVICE_ID;
    pc->class_id = PCI_CLASS_OTHERS;
    rc->phases.hold = hisi_ptt_reset_hold;
    dc->desc = "HiSilicon PCIe Tune and Trace device (RCiEP)";
    dc->vmsd = &vmstate_hisi_ptt;
    device_class_set_props(dc, hisi_ptt_props);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
    object_class_property_set_description(oc, "sicl-id",
        "LOCATION [31:16]: the driver names the PMU hisi_ptt<sicl>_<core>");
    object_class_property_set_description(oc, "core-id",
        "LOCATION [15:0]");
    object_class_property_set_description(oc, "range-lower",
        "DEVICE_RANGE [15:0]: the lowest root port BDF it covers");
    object_class_property_set_description(oc, "range-upper",
        "DEVICE_RANGE [31:16]: the highest root port BDF it covers");
    object_class_property_set_description(oc, "max-bytes-per-s",
        "record bytes a virtual second the model writes at most; further "
        "records are dropped and counted (default 64 MiB)");
}

static const TypeInfo hisi_ptt_info = {
    .name = TYPE_HISI_PTT,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(HisiPttState),
    .instance_finalize = hisi_ptt_finalize,
    .class_init = hisi_ptt_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void hisi_ptt_register_types(void)
{
    type_register_static(&hisi_ptt_info);
}

type_init(hisi_ptt_register_types)
