/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The probes' layer of the engine (ptm-probe.c): clocks and windows of a
 * probe, counting its cycles, its flags and status words. Calls only the
 * layout below it.
 */
#ifndef PTM_PROBE_INT_H
#define PTM_PROBE_INT_H

#include "ptm-core-int.h"

uint64_t ptm_mi_floor(const PtmCore *core, const PtmProbe *p, uint64_t c);
uint64_t ptm_mi_ceil(const PtmCore *core, const PtmProbe *p, uint64_t c);
uint64_t ptm_window_start(const PtmCore *core, const PtmProbe *p, uint64_t w);
uint64_t ptm_probe_next_event(const PtmCore *core, PtmProbe *p);
uint64_t ptm_probe_reset_end(PtmCore *core, PtmProbe *p, uint64_t from);
void ptm_probe_reset_from(PtmProbe *p, uint64_t from);
uint64_t ptm_probe_reset_by(const PtmCore *core, PtmProbe *p, uint64_t m);
void ptm_probe_order_init(PtmProbe *p);
void ptm_probe_order_free(PtmProbe *p);
/* Count the absolute cycles [start, end) of a probe into core->wacc. */
void ptm_probe_count_span(PtmCore *core, PtmProbe *p, uint64_t start,
                          uint64_t end);
void ptm_probe_count_windows(PtmCore *core, PtmProbe *p, uint64_t w1,
                             uint64_t *out);
uint64_t ptm_probe_count_kept(PtmCore *core, PtmProbe *p, uint64_t wb);
uint64_t ptm_probe_write_cycle(const PtmProbe *p, unsigned k);
void ptm_probe_flag(PtmCore *core, PtmProbe *p, uint64_t k, bool v);
void ptm_pcie_regs_at(PtmCore *core, uint64_t m);
void ptm_probe_status_reset(PtmCore *core, PtmProbe *p, uint64_t k);
void ptm_probe_keep_lowest(PtmCore *core, PtmProbe *p, uint64_t until);
void ptm_probe_drain(PtmCore *core, PtmProbe *p);

#endif
