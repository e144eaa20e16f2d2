/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The VCD reader of the replay generator (ptm-vcd.c): a VCD file with the
 * port names of PCIE_TELEMETRY_MI into a trace's store (ptm-trace.h).
 */
#ifndef PTM_VCD_H
#define PTM_VCD_H

#include "ptm-trace.h"

/* NULL, or a message to g_free() naming the file and line. */
char *ptm_vcd_load(PtmReplayTrace *t, const char *path, const char *scope,
                   const char *buf, size_t len);

#endif
