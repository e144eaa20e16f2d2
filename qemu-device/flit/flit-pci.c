/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The flit-mode capabilities on a PCI Express function (flit-pci.h).
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/module.h"
#include "qemu/range.h"
#include "hw/pci/msi.h"
#include "hw/pci/pcie.h"

#include "flit-pci.h"

/* Where each capability sits from the offset given */
static const uint16_t flit_pci_at[FLIT_CAPS] = { 0x00, 0x20, 0x60 };

static uint64_t flit_pci_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static uint8_t *flit_pci_exp(const FlitPci *f)
{
    return f->dev->config + f->dev->exp.exp_cap;
}

bool flit_pci_present(const FlitPci *f)
{
    return f && f->base[0];
}

static void flit_pci_irq(void *opaque)
{
    FlitPci *f = opaque;

    /* the capability's vector is 0, the function's one MSI message */
    if (msi_enabled(f->dev)) {
        msi_notify(f->dev, 0);
    }
}

static void flit_pci_arm(FlitPci *f)
{
    uint64_t when = flit_end_deadline(&f->end);

    if (when == UINT64_MAX) {
        timer_del(f->timer);
    } else {
        timer_mod(f->timer, when);
    }
}

static void flit_pci_timer(void *opaque)
{
    FlitPci *f = opaque;

    flit_end_sync(&f->end, flit_pci_now());
    flit_pci_arm(f);
}

static void flit_pci_totals(void *opaque, uint64_t now, FlitTotals *out)
{
    FlitPci *f = opaque;

    f->totals(f->owner, now, out);
}

void flit_pci_init(FlitPci *f, PCIDevice *d, uint16_t offset,
                   const FlitEndConfig *cfg, FlitTotalsFn *totals,
                   void *owner)
{
    f->dev = d;
    f->totals = totals;
    f->owner = owner;
    flit_end_init(&f->end, cfg, flit_pci_totals, flit_pci_irq, f);
    for (FlitCap c = 0; c < FLIT_CAPS; c++) {
        f->base[c] = offset + flit_pci_at[c];
        pcie_add_capability(d, flit_cap_id(c), FLIT_CAP_VER, f->base[c],
                            flit_cap_size(c, cfg));
    }
    pci_word_test_and_set_mask(flit_pci_exp(f) + PCI_EXP_FLAGS,
                               FLIT_EXP_FLAGS_FLIT);
    pci_word_test_and_set_mask(d->wmask + d->exp.exp_cap + PCI_EXP_LNKCTL,
                               FLIT_EXP_LNKCTL_FLIT_DIS);
    /* Flit Mode Status is the link's state, which migrates as it is */
    pci_word_test_and_clear_mask(d->cmask + d->exp.exp_cap + PCI_EXP_LNKSTA2,
                                 FLIT_EXP_LNKSTA2_FLIT);
    f->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, flit_pci_timer, f);
}

bool flit_pci_check(const FlitEndConfig *cfg, const char *type,
                    const char *width_prop, Error **errp)
{
    static const char *const props[] = {
        NULL, "flit-ltssm-regs", "flit-flight-ns"
    };
    FlitEndConfig one = { .width = cfg->width };
    g_autofree char *why = flit_end_check(&one);
    unsigned i = 0;

    if (!why) {
        one.ltssm_regs = cfg->ltssm_regs;
        why = flit_end_check(&one);
        i = 1;
    }
    if (!why) {
        one.flight_ns = cfg->flight_ns;
        why = flit_end_check(&one);
        i = 2;
    }
    if (why) {
        error_setg(errp, "%s: property '%s' with flit-mode=on: %s", type,
                   i ? props[i] : width_prop, why);
        return false;
    }
    return true;
}

void flit_pci_exit(FlitPci *f)
{
    if (f->timer) {
        timer_free(f->timer);
        f->timer = NULL;
    }
    g_free(f->last_error);
    f->last_error = NULL;
    g_free(f->state);
    f->state = NULL;
}

void flit_pci_reset(FlitPci *f)
{
    if (!flit_pci_present(f)) {
        return;
    }
    flit_end_reset(&f->end, flit_pci_now());
    /* Flit Mode Disable's power-on value */
    pci_word_test_and_clear_mask(flit_pci_exp(f) + PCI_EXP_LNKCTL,
                                 FLIT_EXP_LNKCTL_FLIT_DIS);
    flit_pci_train(f, false, 0);
}

bool flit_pci_wants(const FlitPci *f)
{
    return flit_pci_present(f) &&
           !(pci_get_word(flit_pci_exp(f) + PCI_EXP_LNKCTL) &
             FLIT_EXP_LNKCTL_FLIT_DIS);
}

bool flit_pci_active(const FlitPci *f)
{
    return flit_pci_present(f) && f->end.active;
}

void flit_pci_train(FlitPci *f, bool flit, unsigned width)
{
    if (!flit_pci_present(f)) {
        return;
    }
    flit_end_set_active(&f->end, flit, width, flit_pci_now());
    if (flit) {
        pci_word_test_and_set_mask(flit_pci_exp(f) + PCI_EXP_LNKSTA2,
                                   FLIT_EXP_LNKSTA2_FLIT);
    } else {
        pci_word_test_and_clear_mask(flit_pci_exp(f) + PCI_EXP_LNKSTA2,
                                     FLIT_EXP_LNKSTA2_FLIT);
    }
    flit_pci_arm(f);
}

void flit_pci_link_train(FlitPci *up, FlitPci *down)
{
    bool flit = flit_pci_wants(up) && flit_pci_wants(down);
    unsigned width = 0;

    if (flit_pci_present(up) && flit_pci_present(down)) {
        width = MIN(up->end.cfg.width, down->end.cfg.width);
    }
    flit_pci_train(up, flit, width);
    flit_pci_train(down, flit, width);
}

/* The capability and offset in it of a configuration address, or -1 */
static int flit_pci_which(const FlitPci *f, uint32_t addr, uint32_t *off)
{
    for (FlitCap c = 0; c < FLIT_CAPS; c++) {
        uint32_t size = flit_cap_size(c, &f->end.cfg);

        if (addr >= f->base[c] + 4u && addr < f->base[c] + size) {
            *off = addr - f->base[c];
            return c;
        }
    }
    return -1;
}

uint32_t flit_pci_config_read(FlitPci *f, uint32_t addr, int len,
                              uint32_t val)
{
    uint32_t off, v;
    int c;

    if (!flit_pci_present(f) ||
        !ranges_overlap(addr, len, f->base[0], FLIT_PCI_SPAN)) {
        return val;
    }
    /* config accesses are naturally aligned: one register each */
    c = flit_pci_which(f, addr, &off);
    if (c < 0) {
        return val;
    }
    v = flit_end_read(&f->end, c, off, len, flit_pci_now());
    flit_pci_arm(f);
    return v;
}

void flit_pci_config_write(FlitPci *f, uint32_t addr, uint32_t val,
                           int len)
{
    uint32_t off;
    int c;

    if (!flit_pci_present(f) ||
        !ranges_overlap(addr, len, f->base[0], FLIT_PCI_SPAN)) {
        return;
    }
    c = flit_pci_which(f, addr, &off);
    if (c < 0) {
        return;
    }
    flit_end_write(&f->end, c, off, val, len, flit_pci_now());
    flit_pci_arm(f);
}

bool flit_pci_inject(FlitPci *f, FlitPci *far, const char *text,
                     const char *who, Error **errp)
{
    g_autofree char *err = NULL;
    uint64_t now = flit_pci_now();
    FlitError e;
    uint32_t naks;

    if (!flit_pci_present(f)) {
        error_setg(errp, "%s: 'flit-error' needs flit-mode=on", who);
        return false;
    }
    err = flit_error_parse(text, &e);
    if (!err && !f->end.active) {
        err = g_strdup("the link is not in flit mode");
    }
    if (!err && e.kind == FLIT_ERR_CORRECTABLE && e.lane >= f->end.width) {
        err = g_strdup_printf("lane %u of a x%u link", e.lane, f->end.width);
    }
    if (err) {
        error_setg(errp, "%s: flit-error '%s': %s", who, text, err);
        return false;
    }
    naks = flit_end_rx_errors(&f->end, &e, now);
    if (naks && flit_pci_active(far)) {
        flit_end_naks_received(&far->end, naks, now);
        flit_pci_arm(far);
    }
    g_free(f->last_error);
    f->last_error = g_strdup_printf("kind=%s,count=%u",
                                    flit_error_kind_name(e.kind), e.count);
    if (e.kind == FLIT_ERR_CORRECTABLE) {
        char *t = g_strdup_printf("%s,lane=%u", f->last_error, e.lane);

        g_free(f->last_error);
        f->last_error = t;
    }
    flit_pci_arm(f);
    return true;
}

void flit_pci_ltssm(FlitPci *f, FlitLtssmEvent ev, uint64_t delay_ns)
{
    if (flit_pci_present(f)) {
        flit_end_ltssm(&f->end, ev, delay_ns, flit_pci_now());
    }
}

/* ------------------------------------------------------------------ */
/* Migration                                                          */

static int flit_pci_pre_save(void *opaque)
{
    FlitPci *f = opaque;
    size_t len = 0;

    g_free(f->state);
    f->state = NULL;
    if (flit_pci_present(f)) {
        f->state = flit_end_save(&f->end, &len);
    }
    f->state_len = len;
    return 0;
}

static int flit_pci_post_load(void *opaque, int version_id)
{
    FlitPci *f = opaque;
    g_autofree char *err = NULL;

    if (flit_pci_present(f) != (f->state_len != 0)) {
        err = g_strdup("flit-mode differs between source and destination");
    } else if (f->state_len) {
        err = flit_end_load(&f->end, f->state, f->state_len);
    }
    g_free(f->state);
    f->state = NULL;
    f->state_len = 0;
    if (err) {
        error_report("%s: %s", f->dev ? object_get_typename(OBJECT(f->dev))
                                      : "flit", err);
        return -EINVAL;
    }
    if (flit_pci_present(f)) {
        flit_pci_arm(f);
    }
    return 0;
}

const VMStateDescription vmstate_flit_pci = {
    .name = "flit-pci",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = flit_pci_pre_save,
    .post_load = flit_pci_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(state_len, FlitPci),
        VMSTATE_VBUFFER_ALLOC_UINT32(state, FlitPci, 0, NULL, state_len),
        VMSTATE_END_OF_LIST()
    }
};

/* ------------------------------------------------------------------ */
/* The interface                                                      */

FlitPci *pcie_flit_link_end(Object *obj)
{
    PcieFlitLinkClass *k;

    if (!obj || !object_dynamic_cast(obj, TYPE_PCIE_FLIT_LINK)) {
        return NULL;
    }
    k = PCIE_FLIT_LINK_GET_CLASS(obj);
    return k->flit ? k->flit(obj) : NULL;
}

static const TypeInfo pcie_flit_link_info = {
    .name = TYPE_PCIE_FLIT_LINK,
    .parent = TYPE_INTERFACE,
    .class_size = sizeof(PcieFlitLinkClass),
};

static void pcie_flit_link_register_types(void)
{
    type_register_static(&pcie_flit_link_info);
}

type_init(pcie_flit_link_register_types)
