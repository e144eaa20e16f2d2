/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pcie-link-traffic QOM interface: a PCIe function below a port tells
 * the port what crossed its link. The DesignWare root port
 * (dwc-pcie-root-port) sums it over the functions on its secondary bus
 * for its time-based analysis (docs/dwc-root-port.md).
 *
 * A device implements it by naming TYPE_PCIE_LINK_TRAFFIC among its
 * TypeInfo's interfaces and setting totals in its class_init:
 *
 *     PcieLinkTrafficClass *ltc = PCIE_LINK_TRAFFIC_CLASS(oc);
 *     ltc->totals = mydev_link_totals;
 *
 * totals is called with the BQL held, at the virtual time now_ns of the
 * port's access (QEMU_CLOCK_VIRTUAL, never earlier than any time it was
 * called with before), and only on a realized device. Its totals count
 * from the device's last reset (realize included); after a reset they
 * restart from 0, which the port notices and sums across.
 */
#ifndef PCIE_LINK_TRAFFIC_H
#define PCIE_LINK_TRAFFIC_H

#include "qom/object.h"
#include "pcie-link-totals.h"
#include "pcie-tlp.h"

#define TYPE_PCIE_LINK_TRAFFIC "pcie-link-traffic"


typedef struct PcieLinkTrafficClass {
    InterfaceClass parent_class;
    /* cumulative since the device's last reset, as of virtual time now_ns */
    void (*totals)(Object *dev, uint64_t now_ns, PcieLinkTotals *out);
    /*
     * Optional: the TLPs with their headers in [from, to), oldest first,
     * at most max into out (out NULL: how many there are); sets *resume
     * to where a next call goes on. A device gives what it kept: docs/
     * ptt.md says which TLPs the card keeps and for how long.
     */
    size_t (*tlps)(Object *dev, uint64_t from, uint64_t to, PcieTlp *out,
                   size_t max, uint64_t *resume);
} PcieLinkTrafficClass;

DECLARE_CLASS_CHECKERS(PcieLinkTrafficClass, PCIE_LINK_TRAFFIC,
                       TYPE_PCIE_LINK_TRAFFIC)
#define PCIE_LINK_TRAFFIC(obj) \
    INTERFACE_CHECK(PcieLinkTraffic, (obj), TYPE_PCIE_LINK_TRAFFIC)

typedef struct PcieLinkTraffic PcieLinkTraffic;

/*
 * The totals of obj if it implements the interface (and true), else
 * zeros (and false).
 */
bool pcie_link_traffic_totals(Object *obj, uint64_t now_ns,
                              PcieLinkTotals *out);

/* obj's TLPs (the tlps method), or 0 with *resume = to if it has none */
size_t pcie_link_traffic_tlps(Object *obj, uint64_t from, uint64_t to,
                              PcieTlp *out, size_t max, uint64_t *resume);

#endif
