/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dwc-pcie-root-port: a PCIe root port with the RAS DES capability of a
 * Synopsys DesignWare controller, whose event counters and time-based
 * analysis Linux's dwc_pcie_pmu perf driver reads (dwc_rootport_<sbdf>).
 *
 * The capability's registers are the QEMU-free model of dwc-ras-des.c,
 * reached through the port's config_read/config_write hooks. Its
 * time-based analysis counts on QEMU_CLOCK_VIRTUAL what the functions on
 * the secondary bus report through the pcie-link-traffic interface,
 * summed by the model's DwcLinkSum; a function that is present but does
 * not implement it counts no payload and keeps the link up. Lane events
 * are injected with qom-set <port> lane-error "lane=N,event=NAME,count=K".
 * See docs/dwc-root-port.md.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/module.h"
#include "qemu/range.h"
#include "qemu/timer.h"
#include "hw/pci/msi.h"
#include "hw/pci/pcie.h"
#include "hw/pci/pcie_port.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "migration/vmstate.h"
#include "qom/object.h"

#include "dwc-ras-des.h"
#include "flit-pci.h"
#include "pcie-link-traffic.h"
#include "trace.h"

#define TYPE_DWC_PCIE_ROOT_PORT     "dwc-pcie-root-port"
OBJECT_DECLARE_TYPE(DwcRootPort, DwcRootPortClass, DWC_PCIE_ROOT_PORT)

/* Alibaba's ID, the one vendor Linux 6.12's dwc_pcie_pmu looks for */
#define DWC_RP_VENDOR_ID            0x1ded
#define DWC_RP_DEVICE_ID            0x8000
#define DWC_RP_REVISION             0x01

/* Configuration space */
#define DWC_RP_SSVID_OFFSET         0x40
#define DWC_RP_MSI_OFFSET           0x50
#define DWC_RP_EXP_OFFSET           0x70
#define DWC_RP_AER_OFFSET           0x100
#define DWC_RP_ACS_OFFSET           (DWC_RP_AER_OFFSET + PCI_ERR_SIZEOF)
#define DWC_RP_RAS_DES_OFFSET       0x200
#define DWC_RP_FLIT_OFFSET          (DWC_RP_RAS_DES_OFFSET + DWC_RAS_DES_LEN)
/* Retrain Link: the link's stay in Recovery (docs/flit.md) */
#define DWC_RP_RETRAIN_NS           20000

struct DwcRootPort {
    PCIESlot parent_obj;

    uint32_t vendor_id;
    uint32_t device_id;

    DwcRasDes des;
    DwcLinkSum links;
    QEMUTimer *timer;               /* the end of a timed analysis */
    DeviceListener listener;        /* functions come and go below */
    char *lane_error;               /* the last injection taken */

    /* PCIe 6 flit mode (docs/flit.md) */
    bool flit_mode;
    uint32_t flit_ltssm_regs;
    uint32_t flit_flight_ns;
    FlitPci flit;

    /* migration: the model's state as bytes */
    uint8_t *state;
    uint32_t state_len;
};

struct DwcRootPortClass {
    PCIERootPortClass parent_class;

    void (*parent_config_write)(PCIDevice *d, uint32_t addr, uint32_t val,
                                int len);
    void (*parent_exit)(PCIDevice *d);
    ResettablePhases parent_phases;
};

static uint64_t dwc_rp_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static PCIBus *dwc_rp_sec_bus(DwcRootPort *s)
{
    return pci_bridge_get_sec_bus(PCI_BRIDGE(s));
}

static const char *dwc_rp_name(DwcRootPort *s)
{
    const char *id = DEVICE(s)->id;

    return id ? id : "";
}

/* ------------------------------------------------------------------ */
/* Traffic below the port                                             */

/* What every realized function below that implements the interface says */
static void dwc_rp_sample(DwcRootPort *s, uint64_t now)
{
    PCIBus *bus = dwc_rp_sec_bus(s);

    for (unsigned devfn = 0; devfn < DWC_LINK_FUNCS; devfn++) {
        PCIDevice *dev = bus->devices[devfn];
        PcieLinkTotals t;

        if (!dev || !DEVICE(dev)->realized ||
            !pcie_link_traffic_totals(OBJECT(dev), now, &t)) {
            continue;
        }
        dwc_link_sum_update(&s->links, devfn, &t);
    }
}

/* The model's traffic source */
static void dwc_rp_totals(void *opaque, uint64_t now, DwcLinkTotals *out)
{
    DwcRootPort *s = opaque;

    dwc_rp_sample(s, now);
    dwc_link_sum_totals(&s->links, now, out);
}

/* The flit model's totals: what the port sent and received, time in L0 */
static void dwc_rp_flit_totals(void *opaque, uint64_t now, FlitTotals *out)
{
    DwcRootPort *s = opaque;
    DwcLinkTotals t;

    dwc_rp_totals(s, now, &t);
    out->tx_payload = t.payload_down;
    out->rx_payload = t.payload_up;
    out->l0_ns = t.l0_ns;
}

/* The far end of the link: function 0 below, if it has flit mode */
static FlitPci *dwc_rp_flit_far(DwcRootPort *s)
{
    PCIDevice *dev = dwc_rp_sec_bus(s)->devices[0];

    if (!dev || !DEVICE(dev)->realized) {
        return NULL;
    }
    return pcie_flit_link_end(OBJECT(dev));
}

/* Link training (flit-pci.h) */
static void dwc_rp_flit_train(DwcRootPort *s)
{
    if (!flit_pci_present(&s->flit)) {
        return;
    }
    flit_pci_link_train(&s->flit, dwc_rp_flit_far(s));
    trace_dwc_rp_flit_train(dwc_rp_name(s), flit_pci_active(&s->flit),
                            s->flit.end.width);
}

static PCIDevice *dwc_rp_below(DwcRootPort *s, DeviceState *dev)
{
    if (!dev->parent_bus || dev->parent_bus != BUS(dwc_rp_sec_bus(s))) {
        return NULL;
    }
    return (PCIDevice *)object_dynamic_cast(OBJECT(dev), TYPE_PCI_DEVICE);
}

static void dwc_rp_dev_realize(DeviceListener *l, DeviceState *dev)
{
    DwcRootPort *s = container_of(l, DwcRootPort, listener);
    PCIDevice *pd = dwc_rp_below(s, dev);
    uint64_t now = dwc_rp_now();

    if (pd) {
        dwc_link_sum_attach(&s->links, pd->devfn, now);
        trace_dwc_rp_function(dwc_rp_name(s), pd->devfn, 1, now);
        if (pd->devfn == 0) {
            dwc_rp_flit_train(s);
        }
    }
}

/* (after the function's own unrealize: what it last said is kept) */
static void dwc_rp_dev_unrealize(DeviceListener *l, DeviceState *dev)
{
    DwcRootPort *s = container_of(l, DwcRootPort, listener);
    PCIDevice *pd = dwc_rp_below(s, dev);
    uint64_t now = dwc_rp_now();

    if (pd) {
        dwc_link_sum_detach(&s->links, pd->devfn, now);
        trace_dwc_rp_function(dwc_rp_name(s), pd->devfn, 0, now);
        if (pd->devfn == 0) {
            flit_pci_train(&s->flit, false, 0);     /* no link */
        }
    }
}

/* ------------------------------------------------------------------ */
/* The capability                                                     */

static void dwc_rp_arm(DwcRootPort *s)
{
    uint64_t end = dwc_ras_des_deadline(&s->des);

    if (end == UINT64_MAX) {
        timer_del(s->timer);
    } else {
        timer_mod(s->timer, end);
    }
}

static void dwc_rp_timer(void *opaque)
{
    DwcRootPort *s = opaque;
    uint64_t now = dwc_rp_now();

    if (!dwc_ras_des_tba_running(&s->des, now)) {
        trace_dwc_rp_tba(dwc_rp_name(s), "end", now);
    }
    dwc_rp_arm(s);
}

/*
 * Retrain Link: both ends go through Recovery (the LTSSM trackers see
 * it) and train again, which is when Flit Mode Disable takes effect.
 */
static void dwc_rp_flit_retrain(DwcRootPort *s)
{
    FlitPci *far = dwc_rp_flit_far(s);

    if (far && flit_pci_active(&s->flit)) {
        flit_pci_ltssm(&s->flit, FLIT_LTSSM_L0_RECOVERY, DWC_RP_RETRAIN_NS);
        flit_pci_ltssm(far, FLIT_LTSSM_L0_RECOVERY, DWC_RP_RETRAIN_NS);
    }
    dwc_rp_flit_train(s);
}

static uint32_t dwc_rp_config_read(PCIDevice *d, uint32_t addr, int len)
{
    DwcRootPort *s = DWC_PCIE_ROOT_PORT(d);
    uint32_t val = pci_default_read_config(d, addr, len);
    uint32_t lo = DWC_RP_RAS_DES_OFFSET + DWC_RAS_DES_REGS;
    uint32_t hi = DWC_RP_RAS_DES_OFFSET + DWC_RAS_DES_LEN;
    uint32_t a, b, v, sh, mask;

    val = flit_pci_config_read(&s->flit, addr, len, val);
    if (!ranges_overlap(addr, len, lo, hi - lo)) {
        return val;
    }
    /* the bytes of the registers come from the model */
    a = MAX(addr, lo);
    b = MIN(addr + len, hi);
    v = dwc_ras_des_read(&s->des, a - DWC_RP_RAS_DES_OFFSET, b - a,
                         dwc_rp_now());
    sh = 8 * (a - addr);
    mask = (b - a == 4 ? ~0u : (1u << (8 * (b - a))) - 1) << sh;
    val = (val & ~mask) | ((v << sh) & mask);
    trace_dwc_rp_config_read(dwc_rp_name(s), addr - DWC_RP_RAS_DES_OFFSET,
                             len, val);
    return val;
}

static void dwc_rp_config_write(PCIDevice *d, uint32_t addr, uint32_t val,
                                int len)
{
    DwcRootPort *s = DWC_PCIE_ROOT_PORT(d);
    DwcRootPortClass *drc = DWC_PCIE_ROOT_PORT_GET_CLASS(s);
    uint32_t lo = DWC_RP_RAS_DES_OFFSET + DWC_RAS_DES_REGS;
    uint32_t hi = DWC_RP_RAS_DES_OFFSET + DWC_RAS_DES_LEN;
    uint64_t now = dwc_rp_now();
    uint32_t a, b;
    bool was, is;

    /*
     * A secondary bus reset restarts the totals of the functions below:
     * what they counted up to it is taken first.
     */
    if (ranges_overlap(addr, len, PCI_BRIDGE_CONTROL, 2)) {
        dwc_rp_sample(s, now);
    }
    drc->parent_config_write(d, addr, val, len);
    flit_pci_config_write(&s->flit, addr, val, len);
    if (flit_pci_present(&s->flit) &&
        ranges_overlap(addr, len, d->exp.exp_cap + PCI_EXP_LNKCTL, 1) &&
        (val >> (8 * (d->exp.exp_cap + PCI_EXP_LNKCTL - addr)) &
         PCI_EXP_LNKCTL_RL)) {
        dwc_rp_flit_retrain(s);
    }
    if (!ranges_overlap(addr, len, lo, hi - lo)) {
        return;
    }
    trace_dwc_rp_config_write(dwc_rp_name(s), addr - DWC_RP_RAS_DES_OFFSET,
                              len, val);
    a = MAX(addr, lo);
    b = MIN(addr + len, hi);
    was = dwc_ras_des_tba_running(&s->des, now);
    dwc_ras_des_write(&s->des, a - DWC_RP_RAS_DES_OFFSET,
                      val >> (8 * (a - addr)), b - a, now);
    is = dwc_ras_des_tba_running(&s->des, now);
    if (was != is) {
        trace_dwc_rp_tba(dwc_rp_name(s), is ? "start" : "stop", now);
    }
    dwc_rp_arm(s);
}

/* The negotiated width of the link (Link Status), as the guest reads it */
static unsigned dwc_rp_link_width(DwcRootPort *s)
{
    PCIDevice *d = PCI_DEVICE(s);
    uint16_t sta;

    pcie_sync_bridge_lnk(d);
    sta = pci_get_word(d->config + d->exp.exp_cap + PCI_EXP_LNKSTA);
    return (sta & PCI_EXP_LNKSTA_NLW) >> PCI_EXP_LNKSTA_NLW_SHIFT;
}

static char *dwc_rp_get_lane_error(Object *obj, Error **errp)
{
    DwcRootPort *s = DWC_PCIE_ROOT_PORT(obj);

    return g_strdup(s->lane_error ? s->lane_error : "");
}

static void dwc_rp_set_lane_error(Object *obj, const char *value,
                                  Error **errp)
{
    DwcRootPort *s = DWC_PCIE_ROOT_PORT(obj);
    g_autofree char *err = NULL;
    DwcLaneError e;
    unsigned width;
    bool counted;

    if (!DEVICE(obj)->realized) {
        error_setg(errp, "%s: 'lane-error' injects into a running port: set "
                   "it with qom-set", TYPE_DWC_PCIE_ROOT_PORT);
        return;
    }
    err = dwc_lane_error_parse(value, &e);
    if (!err) {
        width = dwc_rp_link_width(s);
        err = dwc_ras_des_inject(&s->des, width, e.lane, e.index, e.count,
                                 &counted);
    }
    if (err) {
        error_setg(errp, "%s '%s': lane-error '%s': %s",
                   TYPE_DWC_PCIE_ROOT_PORT, dwc_rp_name(s), value, err);
        return;
    }
    g_free(s->lane_error);
    s->lane_error = g_strdup_printf("lane=%u,event=%s,count=%u", e.lane,
                                    dwc_lane_event_name(e.index), e.count);
    trace_dwc_rp_lane_error(dwc_rp_name(s), e.lane,
                            dwc_lane_event_id(e.index), e.count, counted);
}

static char *dwc_rp_get_flit_error(Object *obj, Error **errp)
{
    DwcRootPort *s = DWC_PCIE_ROOT_PORT(obj);

    return g_strdup(s->flit.last_error ? s->flit.last_error : "");
}

static void dwc_rp_set_flit_error(Object *obj, const char *value,
                                  Error **errp)
{
    DwcRootPort *s = DWC_PCIE_ROOT_PORT(obj);
    g_autofree char *who = g_strdup_printf("%s '%s'",
                                           TYPE_DWC_PCIE_ROOT_PORT,
                                           dwc_rp_name(s));

    if (!DEVICE(obj)->realized) {
        error_setg(errp, "%s: 'flit-error' injects into a running port: "
                   "set it with qom-set", TYPE_DWC_PCIE_ROOT_PORT);
        return;
    }
    flit_pci_inject(&s->flit, dwc_rp_flit_far(s), value, who, errp);
}

static FlitPci *dwc_rp_flit_end(Object *obj)
{
    DwcRootPort *s = DWC_PCIE_ROOT_PORT(obj);

    return flit_pci_present(&s->flit) ? &s->flit : NULL;
}

/* ------------------------------------------------------------------ */
/* The device                                                         */

static uint8_t dwc_rp_aer_vector(const PCIDevice *d)
{
    return 0;
}

static int dwc_rp_interrupts_init(PCIDevice *d, Error **errp)
{
    return msi_init(d, DWC_RP_MSI_OFFSET, 1, true, false, errp);
}

static void dwc_rp_interrupts_uninit(PCIDevice *d)
{
    msi_uninit(d);
}

static void dwc_rp_realize(DeviceState *dev, Error **errp)
{
    DwcRootPort *s = DWC_PCIE_ROOT_PORT(dev);
    PCIERootPortClass *rpc = PCIE_ROOT_PORT_GET_CLASS(dev);
    PCIESlot *slot = PCIE_SLOT(dev);
    PCIDevice *d = PCI_DEVICE(dev);
    Error *local_err = NULL;
    uint8_t ssvid;

    if (s->vendor_id == 0 || s->vendor_id >= 0xFFFF) {
        error_setg(errp, "%s: property 'vendor-id' is 0x%x, allowed: 0x0001 "
                   "to 0xfffe", TYPE_DWC_PCIE_ROOT_PORT, s->vendor_id);
        return;
    }
    if (s->device_id > 0xFFFF) {
        error_setg(errp, "%s: property 'device-id' is 0x%x, allowed: 0x0000 "
                   "to 0xffff", TYPE_DWC_PCIE_ROOT_PORT, s->device_id);
        return;
    }
    if (slot->width > DWC_RAS_DES_LANES) {
        error_setg(errp, "%s: property 'x-width' is %u lanes, allowed: at "
                   "most %u (lane select of the RAS DES counters is 4 bits)",
                   TYPE_DWC_PCIE_ROOT_PORT, slot->width, DWC_RAS_DES_LANES);
        return;
    }

    if (s->flit_mode) {
        FlitEndConfig fc = {
            .width = slot->width, .ltssm_regs = s->flit_ltssm_regs,
            .flight_ns = s->flit_flight_ns,
        };
        if (slot->speed != QEMU_PCI_EXP_LNK_64GT) {
            error_setg(errp, "%s: property 'flit-mode' needs 'x-speed=64' "
                       "(flit mode is PCIe 6.0's, at 64 GT/s)",
                       TYPE_DWC_PCIE_ROOT_PORT);
            return;
        }
        if (!flit_pci_check(&fc, TYPE_DWC_PCIE_ROOT_PORT, "x-width", errp)) {
            return;
        }
    }

    rpc->parent_realize(dev, &local_err);
    if (local_err) {
        error_propagate(errp, local_err);
        return;
    }

    pci_config_set_vendor_id(d->config, s->vendor_id);
    pci_config_set_device_id(d->config, s->device_id);
    ssvid = pci_find_capability(d, PCI_CAP_ID_SSVID);
    if (ssvid) {
        pci_set_word(d->config + ssvid + PCI_SSVID_VENDOR_ID, s->vendor_id);
    }
    /* after AER and ACS; the registers are the model's, read-only here */
    pcie_add_capability(d, PCI_EXT_CAP_ID_VNDR, 1, DWC_RP_RAS_DES_OFFSET,
                        DWC_RAS_DES_LEN);
    pci_set_long(d->config + DWC_RP_RAS_DES_OFFSET + 4, DWC_RAS_DES_VSEC_HDR);

    if (s->flit_mode) {
        FlitEndConfig fc = {
            .width = slot->width, .ltssm_regs = s->flit_ltssm_regs,
            .flight_ns = s->flit_flight_ns,
        };

        /* after RAS DES: 64.0 GT/s, Flit Logging, Flit Performance */
        flit_pci_init(&s->flit, d, DWC_RP_FLIT_OFFSET, &fc,
                      dwc_rp_flit_totals, s);
    }

    dwc_ras_des_init(&s->des, dwc_rp_totals, s);
    dwc_link_sum_init(&s->links, dwc_rp_now());
    s->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, dwc_rp_timer, s);
    s->listener.realize = dwc_rp_dev_realize;
    s->listener.unrealize = dwc_rp_dev_unrealize;
    device_listener_register(&s->listener);
}

static void dwc_rp_exit(PCIDevice *d)
{
    DwcRootPort *s = DWC_PCIE_ROOT_PORT(d);
    DwcRootPortClass *drc = DWC_PCIE_ROOT_PORT_GET_CLASS(s);

    device_listener_unregister(&s->listener);
    timer_free(s->timer);
    s->timer = NULL;
    flit_pci_exit(&s->flit);
    drc->parent_exit(d);
}

static void dwc_rp_reset_hold(Object *obj, ResetType type)
{
    DwcRootPort *s = DWC_PCIE_ROOT_PORT(obj);
    DwcRootPortClass *drc = DWC_PCIE_ROOT_PORT_GET_CLASS(obj);

    if (drc->parent_phases.hold) {
        drc->parent_phases.hold(obj, type);
    }
    /* the capability as at power-on; the link sums run on */
    dwc_ras_des_reset(&s->des);
    if (s->timer) {
        timer_del(s->timer);
    }
    flit_pci_reset(&s->flit);
    trace_dwc_rp_reset(dwc_rp_name(s), type);
}

/* After every device's reset: the link trains again */
static void dwc_rp_reset_exit(Object *obj, ResetType type)
{
    DwcRootPort *s = DWC_PCIE_ROOT_PORT(obj);
    DwcRootPortClass *drc = DWC_PCIE_ROOT_PORT_GET_CLASS(obj);

    if (drc->parent_phases.exit) {
        drc->parent_phases.exit(obj, type);
    }
    dwc_rp_flit_train(s);
}

static void dwc_rp_instance_finalize(Object *obj)
{
    DwcRootPort *s = DWC_PCIE_ROOT_PORT(obj);

    g_free(s->lane_error);
    g_free(s->state);
    g_free(s->flit.last_error);
    g_free(s->flit.state);
}

static int dwc_rp_pre_save(void *opaque)
{
    DwcRootPort *s = opaque;
    size_t len;

    g_free(s->state);
    s->state = dwc_state_save(&s->des, &s->links, &len);
    s->state_len = len;
    return 0;
}

static int dwc_rp_post_load(void *opaque, int version_id)
{
    DwcRootPort *s = opaque;
    g_autofree char *err = dwc_state_load(&s->des, &s->links, s->state,
                                          s->state_len);

    g_free(s->state);
    s->state = NULL;
    s->state_len = 0;
    if (err) {
        error_report("%s '%s': %s", TYPE_DWC_PCIE_ROOT_PORT, dwc_rp_name(s),
                     err);
        return -EINVAL;
    }
    dwc_rp_arm(s);
    return pcie_cap_slot_post_load(opaque, version_id);
}

static bool dwc_rp_flit_needed(void *opaque)
{
    DwcRootPort *s = opaque;

    return flit_pci_present(&s->flit);
}

static const VMStateDescription vmstate_dwc_rp_flit = {
    .name = TYPE_DWC_PCIE_ROOT_PORT "/flit",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = dwc_rp_flit_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(flit, DwcRootPort, 1, vmstate_flit_pci, FlitPci),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_dwc_rp = {
    .name = TYPE_DWC_PCIE_ROOT_PORT,
    .priority = MIG_PRI_PCI_BUS,
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = dwc_rp_pre_save,
    .post_load = dwc_rp_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj.parent_obj.parent_obj.parent_obj,
                           DwcRootPort),
        VMSTATE_STRUCT(parent_obj.parent_obj.parent_obj.parent_obj.exp.aer_log,
                       DwcRootPort, 0, vmstate_pcie_aer_log, PCIEAERLog),
        VMSTATE_UINT32(state_len, DwcRootPort),
        VMSTATE_VBUFFER_ALLOC_UINT32(state, DwcRootPort, 0, NULL, state_len),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_dwc_rp_flit,
        NULL
    }
};

static const Property dwc_rp_props[] = {
    DEFINE_PROP_UINT32("vendor-id", DwcRootPort, vendor_id, DWC_RP_VENDOR_ID),
    DEFINE_PROP_UINT32("device-id", DwcRootPort, device_id, DWC_RP_DEVICE_ID),
    /* a Gen4 x16 port; the link trains to the narrower of both ends */
    DEFINE_PROP_PCIE_LINK_SPEED("x-speed", PCIESlot, speed,
                                PCIE_LINK_SPEED_16),
    DEFINE_PROP_PCIE_LINK_WIDTH("x-width", PCIESlot, width,
                                PCIE_LINK_WIDTH_16),
    DEFINE_PROP_BOOL("flit-mode", DwcRootPort, flit_mode, false),
    DEFINE_PROP_UINT32("flit-ltssm-regs", DwcRootPort, flit_ltssm_regs, 5),
    DEFINE_PROP_UINT32("flit-flight-ns", DwcRootPort, flit_flight_ns, 10),
};

static void dwc_rp_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    PCIERootPortClass *rpc = PCIE_ROOT_PORT_CLASS(klass);
    DwcRootPortClass *drc = DWC_PCIE_ROOT_PORT_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);

    k->vendor_id = DWC_RP_VENDOR_ID;
    k->device_id = DWC_RP_DEVICE_ID;
    k->revision = DWC_RP_REVISION;
    drc->parent_config_write = k->config_write;
    k->config_write = dwc_rp_config_write;
    k->config_read = dwc_rp_config_read;
    drc->parent_exit = k->exit;
    k->exit = dwc_rp_exit;
    dc->desc = "PCIe root port with DesignWare RAS DES counters";
    dc->vmsd = &vmstate_dwc_rp;
    device_class_set_props(dc, dwc_rp_props);
    device_class_set_parent_realize(dc, dwc_rp_realize, &rpc->parent_realize);
    resettable_class_set_parent_phases(rc, NULL, dwc_rp_reset_hold,
                                       dwc_rp_reset_exit,
                                       &drc->parent_phases);
    PCIE_FLIT_LINK_CLASS(klass)->flit = dwc_rp_flit_end;

    rpc->aer_vector = dwc_rp_aer_vector;
    rpc->interrupts_init = dwc_rp_interrupts_init;
    rpc->interrupts_uninit = dwc_rp_interrupts_uninit;
    rpc->exp_offset = DWC_RP_EXP_OFFSET;
    rpc->aer_offset = DWC_RP_AER_OFFSET;
    rpc->acs_offset = DWC_RP_ACS_OFFSET;
    rpc->ssvid_offset = DWC_RP_SSVID_OFFSET;
    rpc->ssid = 0;

    object_class_property_add_str(klass, "lane-error",
                                  dwc_rp_get_lane_error,
                                  dwc_rp_set_lane_error);
    object_class_property_set_description(klass, "lane-error",
        "inject lane events: \"lane=N,event=NAME,count=K\" (NAME as perf "
        "names it, e.g. rx_memory_read, or its ID, e.g. 0x70c; count 1 if "
        "left out; N below the negotiated link width); reads back the "
        "last injection taken");
    object_class_property_add_str(klass, "flit-error",
                                  dwc_rp_get_flit_error,
                                  dwc_rp_set_flit_error);
    object_class_property_set_description(klass, "flit-error",
        "inject flit errors into what the port receives: \"kind=K,count=N"
        "[,lane=L]\" (K uncorrectable, unrecognized or correctable, which "
        "names its lane); the uncorrectable and unrecognized ones are "
        "Nak'd and replayed; reads back the last injection taken");
    object_class_property_set_description(klass, "flit-mode",
        "PCIe 6.0 flit mode (needs x-speed=64): Flit Mode Supported, the "
        "Physical Layer 64.0 GT/s, Flit Logging and Flit Performance "
        "Measurement capabilities; the link runs in flit mode when the "
        "device below supports it too");
    object_class_property_set_description(klass, "flit-ltssm-regs",
        "LTSSM Tracking Register Count of Flit Performance Measurement, 0 "
        "to 5");
    object_class_property_set_description(klass, "flit-flight-ns",
        "one-way time on the wire in ns (the link model's latencies)");
    object_class_property_set_description(klass, "vendor-id",
        "PCI vendor ID; Linux's dwc_pcie_pmu matches the RAS DES capability "
        "with it: 0x1ded (Alibaba) in 6.12, later kernels also 0x17cb "
        "(Qualcomm) and others");
}

static const TypeInfo dwc_rp_info = {
    .name = TYPE_DWC_PCIE_ROOT_PORT,
    .parent = TYPE_PCIE_ROOT_PORT,
    .instance_size = sizeof(DwcRootPort),
    .instance_finalize = dwc_rp_instance_finalize,
    .class_size = sizeof(DwcRootPortClass),
    .class_init = dwc_rp_class_init,
    .interfaces = (InterfaceInfo[]) {
        { TYPE_PCIE_FLIT_LINK },
        { }
    },
};

static void dwc_rp_register_types(void)
{
    type_register_static(&dwc_rp_info);
}

type_init(dwc_rp_register_types)
