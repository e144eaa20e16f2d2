/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dw-xdata-pcie: the Synopsys DesignWare xData traffic generator of a
 * DesignWare PCIe endpoint prototype (16c3:edda), as Linux's dw-xdata-pcie
 * driver probes it: its registers in BAR 0, a PCIe capability with the
 * link the function negotiated with the port above. The registers, tests
 * and counters are the QEMU-free model of xdata-core.c, which this file
 * gives the link (speed and width from Link Status, MPS and MRRS from
 * Device Control) and the virtual clock; the root port above learns the
 * traffic through pcie-link-traffic. No data moves: see docs/xdata.md.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "hw/pci/pci_bridge.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pci_ids.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "migration/vmstate.h"
#include "qom/object.h"

#include "pcie-link-traffic.h"
#include "xdata-core.h"
#include "trace.h"

#define TYPE_DW_XDATA_PCIE      "dw-xdata-pcie"
OBJECT_DECLARE_SIMPLE_TYPE(DwXdataState, DW_XDATA_PCIE)

#define DW_XDATA_DEVICE_ID      0xedda
#define DW_XDATA_EXP_OFFSET     0x70

struct DwXdataState {
    PCIDevice parent_obj;

    MemoryRegion bar;
    XdataCore core;

    PCIExpLinkSpeed link_speed;
    PCIExpLinkWidth link_width;
    uint32_t max_payload;

    /* migration: the model's state as bytes */
    uint8_t *state;
    uint32_t state_len;
};

static uint64_t dw_xdata_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* MT/s of a Link Status speed code (1: 2.5 GT/s ... 6: 64 GT/s) */
static uint32_t dw_xdata_mts(unsigned code)
{
    static const uint32_t mts[] = { 2500, 5000, 8000, 16000, 32000, 64000 };

    return mts[MIN(MAX(code, 1u), G_N_ELEMENTS(mts)) - 1];
}

/*
 * The link as the guest reads it: Link Status (what realize negotiated),
 * Device Control's MPS and MRRS, above the device's own MPS taken as it.
 */
static void dw_xdata_link(void *opaque, XdataLink *out)
{
    DwXdataState *s = opaque;
    uint8_t *cap = PCI_DEVICE(s)->config + PCI_DEVICE(s)->exp.exp_cap;
    uint16_t sta = pci_get_word(cap + PCI_EXP_LNKSTA);
    uint16_t ctl = pci_get_word(cap + PCI_EXP_DEVCTL);

    out->speed_mts = dw_xdata_mts(sta & PCI_EXP_LNKSTA_CLS);
    out->width = MAX((sta & PCI_EXP_LNKSTA_NLW) >> PCI_EXP_LNKSTA_NLW_SHIFT,
                     1);
    out->mps = MIN(128u << ((ctl & PCI_EXP_DEVCTL_PAYLOAD) >> 5),
                   s->max_payload);
    out->mrrs = MIN(128u << ((ctl & PCI_EXP_DEVCTL_READRQ) >> 12), 4096u);
}

static uint64_t dw_xdata_read(void *opaque, hwaddr addr, unsigned size)
{
    DwXdataState *s = opaque;
    uint64_t v = xdata_read(&s->core, addr, size, dw_xdata_now());

    trace_dw_xdata_read(addr, size, v);
    return v;
}

static void dw_xdata_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    DwXdataState *s = opaque;

    trace_dw_xdata_write(addr, size, val);
    if (xdata_write(&s->core, addr, size, val, dw_xdata_now())) {
        const XdataTest *t = xdata_test(&s->core);

        trace_dw_xdata_start(t->write ? "write" : "read", t->shape.payload,
                             t->link.speed_mts, t->link.width,
                             xdata_payload_per_s(&t->shape));
    }
}

static const MemoryRegionOps dw_xdata_ops = {
    .read = dw_xdata_read,
    .write = dw_xdata_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8,
               .unaligned = true },
    .impl = { .min_access_size = 1, .max_access_size = 8,
              .unaligned = true },
};

/* pcie-link-traffic: the tests' payload and the CPU's BAR accesses */
static void dw_xdata_link_totals(Object *obj, uint64_t now,
                                 PcieLinkTotals *out)
{
    xdata_totals(&DW_XDATA_PCIE(obj)->core, now, out);
}

/*
 * Link Status: the narrower and slower of the device's Link Capabilities
 * and those of the port above (QEMU trains no link); on a root bus the
 * device's own.
 */
static void dw_xdata_negotiate(DwXdataState *s)
{
    PCIDevice *d = PCI_DEVICE(s);
    PCIDevice *port = pci_bridge_get_device(pci_get_bus(d));
    uint8_t *cap = d->config + d->exp.exp_cap;
    unsigned speed = s->link_speed, width = s->link_width;

    if (port && pci_is_express(port) && port->exp.exp_cap) {
        uint32_t lnkcap = pci_get_long(port->config + port->exp.exp_cap +
                                       PCI_EXP_LNKCAP);

        speed = MIN(speed, lnkcap & PCI_EXP_LNKCAP_SLS);
        width = MIN(width, (lnkcap & PCI_EXP_LNKCAP_MLW) >> 4);
    }
    pci_word_test_and_clear_mask(cap + PCI_EXP_LNKSTA,
                                 PCI_EXP_LNKSTA_CLS | PCI_EXP_LNKSTA_NLW);
    pci_word_test_and_set_mask(cap + PCI_EXP_LNKSTA,
                               QEMU_PCI_EXP_LNKSTA_CLS(MAX(speed, 1u)) |
                               QEMU_PCI_EXP_LNKSTA_NLW(MAX(width, 1u)));
}

static void dw_xdata_realize(PCIDevice *d, Error **errp)
{
    DwXdataState *s = DW_XDATA_PCIE(d);
    uint8_t *cap;
    int pos;

    if (s->max_payload < 128 || s->max_payload > 4096 ||
        !is_power_of_2(s->max_payload)) {
        error_setg(errp, "%s: property 'max-payload-size' is %u, allowed: "
                   "128, 256, 512, 1024, 2048 or 4096", TYPE_DW_XDATA_PCIE,
                   s->max_payload);
        return;
    }
    if (!pci_bus_is_express(pci_get_bus(d))) {
        error_setg(errp, "%s: a PCIe endpoint: put it on a PCIe bus (q35's "
                   "pcie.0, or below a PCIe root or downstream port)",
                   TYPE_DW_XDATA_PCIE);
        return;
    }

    pos = pcie_endpoint_cap_init(d, DW_XDATA_EXP_OFFSET);
    if (pos < 0) {
        error_setg(errp, "%s: cannot add the PCIe capability",
                   TYPE_DW_XDATA_PCIE);
        return;
    }
    cap = d->config + pos;
    pci_long_test_and_clear_mask(cap + PCI_EXP_DEVCAP,
                                 PCI_EXP_DEVCAP_PAYLOAD);
    pci_long_test_and_set_mask(cap + PCI_EXP_DEVCAP,
                               ctz32(s->max_payload / 128));
    /* what the host programs: the TLP sizes of the tests */
    pci_word_test_and_set_mask(d->wmask + pos + PCI_EXP_DEVCTL,
                               PCI_EXP_DEVCTL_PAYLOAD | PCI_EXP_DEVCTL_READRQ);
    pcie_cap_fill_link_ep_usp(d, s->link_width, s->link_speed);
    dw_xdata_negotiate(s);

    memory_region_init_io(&s->bar, OBJECT(s), &dw_xdata_ops, s,
                          "dw-xdata-bar0", XDATA_BAR_SIZE);
    pci_register_bar(d, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &s->bar);
    xdata_init(&s->core, dw_xdata_link, s);
}

static void dw_xdata_reset_hold(Object *obj, ResetType type)
{
    DwXdataState *s = DW_XDATA_PCIE(obj);
    PCIDevice *d = PCI_DEVICE(obj);
    uint8_t *cap = d->config + d->exp.exp_cap;

    xdata_reset(&s->core);
    /* MPS 128 and MRRS 512 bytes, the specification's defaults */
    pci_word_test_and_clear_mask(cap + PCI_EXP_DEVCTL,
                                 PCI_EXP_DEVCTL_PAYLOAD |
                                 PCI_EXP_DEVCTL_READRQ);
    pci_word_test_and_set_mask(cap + PCI_EXP_DEVCTL, 2 << 12);
}

static void dw_xdata_finalize(Object *obj)
{
    g_free(DW_XDATA_PCIE(obj)->state);
}

static int dw_xdata_pre_save(void *opaque)
{
    DwXdataState *s = opaque;
    size_t len;

    g_free(s->state);
    s->state = xdata_save(&s->core, &len);
    s->state_len = len;
    return 0;
}

static int dw_xdata_post_load(void *opaque, int version_id)
{
    DwXdataState *s = opaque;
    g_autofree char *err = xdata_load(&s->core, s->state, s->state_len);

    g_free(s->state);
    s->state = NULL;
    s->state_len = 0;
    if (err) {
        error_report("%s: %s", TYPE_DW_XDATA_PCIE, err);
        return -EINVAL;
    }
    return 0;
}

/* A running test goes on: its start and end are virtual times */
static const VMStateDescription vmstate_dw_xdata = {
    .name = TYPE_DW_XDATA_PCIE,
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = dw_xdata_pre_save,
    .post_load = dw_xdata_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, DwXdataState),
        VMSTATE_UINT32(state_len, DwXdataState),
        VMSTATE_VBUFFER_ALLOC_UINT32(state, DwXdataState, 0, NULL, state_len),
        VMSTATE_END_OF_LIST()
    }
};

static const Property dw_xdata_props[] = {
    DEFINE_PROP_PCIE_LINK_SPEED("link-speed", DwXdataState, link_speed,
                                PCIE_LINK_SPEED_8),
    DEFINE_PROP_PCIE_LINK_WIDTH("link-width", DwXdataState, link_width,
                                PCIE_LINK_WIDTH_4),
    DEFINE_PROP_UINT32("max-payload-size", DwXdataState, max_payload, 256),
};

static void dw_xdata_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(oc);
    ResettableClass *rc = RESETTABLE_CLASS(oc);

    pc->realize = dw_xdata_realize;
    pc->vendor_id = PCI_VENDOR_ID_SYNOPSYS;
    pc->device_id = DW_XDATA_DEVICE_ID;
    pc->class_id = PCI_CLASS_OTHERS;
    rc->phases.hold = dw_xdata_reset_hold;
    dc->desc = "Synopsys DesignWare xData PCIe traffic generator (endpoint)";
    dc->vmsd = &vmstate_dw_xdata;
    device_class_set_props(dc, dw_xdata_props);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
    PCIE_LINK_TRAFFIC_CLASS(oc)->totals = dw_xdata_link_totals;
    object_class_property_set_description(oc, "link-speed",
        "Link Capabilities speed in GT/s: 2_5, 5, 8, 16, 32 or 64; Link "
        "Status and the tests' rate take the slower of it and the port's");
    object_class_property_set_description(oc, "link-width",
        "Link Capabilities width in lanes: 1, 2, 4, 8, 12, 16 or 32; Link "
        "Status and the tests' rate take the narrower of it and the port's");
    object_class_property_set_description(oc, "max-payload-size",
        "Max_Payload_Size supported in bytes (Device Capabilities): 128 to "
        "4096, a power of 2");
}

static const TypeInfo dw_xdata_info = {
    .name = TYPE_DW_XDATA_PCIE,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(DwXdataState),
    .instance_finalize = dw_xdata_finalize,
    .class_init = dw_xdata_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { TYPE_PCIE_LINK_TRAFFIC },
        { }
    },
};

static void dw_xdata_register_types(void)
{
    type_register_static(&dw_xdata_info);
}

type_init(dw_xdata_register_types)
