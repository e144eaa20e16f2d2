/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PCIe 6 flit names libpci lacks before 3.15 (Debian 12 has 3.9),
 * under the names newer libpci gives them, so that a build against a
 * newer libpci takes its own (inside the library only; include it after
 * <pci/header.h>). ptl-flit.c checks them against pcie-telemetry-flit.h.
 */
#ifndef PTL_PCI_FLIT_H
#define PTL_PCI_FLIT_H

#include <pci/header.h>

#ifndef PCI_EXT_CAP_ID_64GT
#define PCI_EXT_CAP_ID_64GT             0x31    /* Physical Layer 64.0 GT/s */
#endif
#ifndef PCI_EXT_CAP_ID_FLIT_LOG
#define PCI_EXT_CAP_ID_FLIT_LOG         0x32    /* Flit Logging */
#endif
#ifndef PCI_EXT_CAP_ID_FLIT_PM
#define PCI_EXT_CAP_ID_FLIT_PM          0x33    /* Flit Perf. Measurement */
#endif
#ifndef PCI_EXP_FLAGS_FLIT_MODE
#define PCI_EXP_FLAGS_FLIT_MODE         0x8000  /* Flit Mode Supported */
#endif
#ifndef PCI_EXP_LNKCTL_FLIT_MODE_DIS
#define PCI_EXP_LNKCTL_FLIT_MODE_DIS    0x2000  /* Flit Mode Disable */
#endif
#ifndef PCI_EXP_LNKSTA2
#define PCI_EXP_LNKSTA2                 0x32    /* Link Status 2 */
#endif
#ifndef PCI_EXP_LINKSTA2_FLIT_MODE
#define PCI_EXP_LINKSTA2_FLIT_MODE      0x0400  /* Flit Mode Status */
#endif

#endif
