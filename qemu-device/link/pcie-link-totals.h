/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What crossed a PCIe link, as a function below a port reports it
 * (pcie-link-traffic.h) and the port's QEMU-free model sums it
 * (dwc-ras-des.h). Plain C, no QEMU headers.
 */
#ifndef PCIE_LINK_TOTALS_H
#define PCIE_LINK_TOTALS_H

#include <stdint.h>

typedef struct PcieLinkTotals {
    uint64_t payload_up;    /* TLP payload bytes device -> port (port's Rx) */
    uint64_t payload_down;  /* TLP payload bytes port -> device (port's Tx) */
    uint64_t link_down_ns;  /* time the device held its link down (reset) */
} PcieLinkTotals;

#endif
