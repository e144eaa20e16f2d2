/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A TLP that crossed a device's link, header and time, as a device below
 * a root port reports it (pcie-link-traffic.h, the tlps method) and a
 * tracer above takes it (the HiSilicon PTT). Plain C, no QEMU headers.
 */
#ifndef PCIE_TLP_H
#define PCIE_TLP_H

#include <stdbool.h>
#include <stdint.h>

#define PCIE_TLP_P      1u      /* posted request */
#define PCIE_TLP_NP     2u      /* non-posted request */
#define PCIE_TLP_CPL    4u      /* completion */

typedef struct PcieTlp {
    uint64_t t_ns;              /* virtual time it crossed */
    uint32_t hdr[4];            /* header DW0-3; a 3DW header's DW3 is 0 */
    bool up;                    /* device -> port (inbound at the port) */
    uint8_t type;               /* PCIE_TLP_* */
} PcieTlp;

/* Header DW0: Fmt [31:29], Type [28:24], Length [9:0] in DWs */
#define PCIE_TLP_FMT_3DW        0u
#define PCIE_TLP_FMT_4DW        1u
#define PCIE_TLP_FMT_3DW_DATA   2u
#define PCIE_TLP_FMT_4DW_DATA   3u
#define PCIE_TLP_TYPE_MEM       0x00u
#define PCIE_TLP_TYPE_CPL       0x0Au

static inline uint32_t pcie_tlp_dw0(unsigned fmt, unsigned type,
                                    unsigned len_dw)
{
    return fmt << 29 | type << 24 | (len_dw & 0x3FF);
}

#endif
