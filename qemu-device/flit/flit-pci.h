/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The flit-mode capabilities on a PCI Express function (glue): the three
 * extended capabilities of flit-end.h in configuration space, the PCIe
 * capability's flit bits (Flit Mode Supported, Flit Mode Disable, Flit
 * Mode Status), the end's MSI, its interrupt-check timer, injection and
 * migration. Both ends of a link implement the pcie-flit-link interface,
 * by which the root port trains the link and each end reaches the other
 * (Naks, LTSSM transitions). docs/flit.md.
 */
#ifndef FLIT_PCI_H
#define FLIT_PCI_H

#include "hw/pci/pci_device.h"
#include "migration/vmstate.h"
#include "qemu/timer.h"
#include "qom/object.h"

#include "flit-end.h"

/* 64.0 GT/s, Flit Logging, Flit Performance Measurement: 0x88 bytes */
#define FLIT_PCI_SPAN           0x88u

/* The bits of the PCIe capability (pciutils 3.15 names them alike) */
#define FLIT_EXP_FLAGS_FLIT     0x8000u     /* Flit Mode Supported */
#define FLIT_EXP_LNKCTL_FLIT_DIS 0x2000u    /* Flit Mode Disable */
#define FLIT_EXP_LNKSTA2_FLIT   0x0400u     /* Flit Mode Status */

typedef struct FlitPci {
    FlitEnd end;
    PCIDevice *dev;
    FlitTotalsFn *totals;       /* the device's, called with owner */
    void *owner;
    uint16_t base[FLIT_CAPS];   /* 0: the end has no capabilities */
    QEMUTimer *timer;
    char *last_error;           /* the last injection taken */

    /* migration: the model's state as bytes */
    uint8_t *state;
    uint32_t state_len;
} FlitPci;

extern const VMStateDescription vmstate_flit_pci;

/*
 * Adds the capabilities at offset (FLIT_PCI_SPAN bytes) after the
 * function's PCIe capability is in place, and marks flit mode supported.
 */
void flit_pci_init(FlitPci *f, PCIDevice *d, uint16_t offset,
                   const FlitEndConfig *cfg, FlitTotalsFn *totals,
                   void *opaque);
void flit_pci_exit(FlitPci *f);
/*
 * A configuration's refusal naming the device's property: width_prop
 * for the width, flit-ltssm-regs, flit-flight-ns.
 */
bool flit_pci_check(const FlitEndConfig *cfg, const char *type,
                    const char *width_prop, Error **errp);
/* A conventional reset of the function: the link is not trained */
void flit_pci_reset(FlitPci *f);

bool flit_pci_present(const FlitPci *f);
/* Flit Mode Supported and Flit Mode Disable clear */
bool flit_pci_wants(const FlitPci *f);
/*
 * The link between a port (up) and the function 0 below it (down)
 * trains: in flit mode when both support it and neither has Flit Mode
 * Disable set, at the narrower end's width. Either may be NULL.
 */
void flit_pci_link_train(FlitPci *up, FlitPci *down);
/* The link trained, in flit mode or not, at width lanes */
void flit_pci_train(FlitPci *f, bool flit, unsigned width);
bool flit_pci_active(const FlitPci *f);

/*
 * Configuration accesses: read merges the model's bytes into val (what
 * the PCI layer read); write after the PCI layer's own.
 */
uint32_t flit_pci_config_read(FlitPci *f, uint32_t addr, int len,
                              uint32_t val);
void flit_pci_config_write(FlitPci *f, uint32_t addr, uint32_t val,
                           int len);

/*
 * qom-set <dev> flit-error "kind=...,count=K[,lane=N]": errors in what
 * this end receives; the Naks go to the far end (NULL: none).
 */
bool flit_pci_inject(FlitPci *f, FlitPci *far, const char *text,
                     const char *who, Error **errp);

/* An LTSSM transition of the link, seen by this end */
void flit_pci_ltssm(FlitPci *f, FlitLtssmEvent ev, uint64_t delay_ns);

/* ------------------------------------------------------------------ */
/* The interface of a link end                                        */

#define TYPE_PCIE_FLIT_LINK "pcie-flit-link"

typedef struct PcieFlitLinkClass {
    InterfaceClass parent_class;
    /* the device's end, NULL if it has none (flit mode off) */
    FlitPci *(*flit)(Object *dev);
} PcieFlitLinkClass;

DECLARE_CLASS_CHECKERS(PcieFlitLinkClass, PCIE_FLIT_LINK,
                       TYPE_PCIE_FLIT_LINK)

/* obj's end if it implements the interface and has one, else NULL */
FlitPci *pcie_flit_link_end(Object *obj);

#endif
