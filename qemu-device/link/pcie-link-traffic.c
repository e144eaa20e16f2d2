/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pcie-link-traffic QOM interface (pcie-link-traffic.h).
 */
#include "qemu/osdep.h"
#include "qemu/module.h"
#include "pcie-link-traffic.h"

bool pcie_link_traffic_totals(Object *obj, uint64_t now_ns,
                              PcieLinkTotals *out)
{
    PcieLinkTrafficClass *ltc;

    memset(out, 0, sizeof(*out));
    if (!object_dynamic_cast(obj, TYPE_PCIE_LINK_TRAFFIC)) {
        return false;
    }
    ltc = PCIE_LINK_TRAFFIC_GET_CLASS(obj);
    if (!ltc->totals) {
        return false;
    }
    ltc->totals(obj, now_ns, out);
    return true;
}

size_t pcie_link_traffic_tlps(Object *obj, uint64_t from, uint64_t to,
                              PcieTlp *out, size_t max, uint64_t *resume)
{
    PcieLinkTrafficClass *ltc;

    *resume = to;
    if (!object_dynamic_cast(obj, TYPE_PCIE_LINK_TRAFFIC)) {
        return 0;
    }
    ltc = PCIE_LINK_TRAFFIC_GET_CLASS(obj);
    return ltc->tlps ? ltc->tlps(obj, from, to, out, max, resume) : 0;
}

static const TypeInfo pcie_link_traffic_info = {
    .name = TYPE_PCIE_LINK_TRAFFIC,
    .parent = TYPE_INTERFACE,
    .class_size = sizeof(PcieLinkTrafficClass),
};

static void pcie_link_traffic_register_types(void)
{
    type_register_static(&pcie_link_traffic_info);
}

type_init(pcie_link_traffic_register_types)
