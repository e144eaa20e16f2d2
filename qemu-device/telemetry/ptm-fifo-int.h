/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The FIFO layer of the engine (ptm-fifo.c): the MI clock's events, drains
 * into the probes' FIFOs, the single adder and the sweeps of the counter
 * memory. Calls only the probes and the layout below it; what the
 * evaluation above must do at an event, ptm_run_to leaves to its caller.
 */
#ifndef PTM_FIFO_INT_H
#define PTM_FIFO_INT_H

#include "ptm-probe-int.h"

void ptm_probe_refresh(PtmCore *core, PtmProbe *p);
void ptm_fifo_reset(PtmProbe *p);
void ptm_find_next_drain(PtmCore *core);
uint64_t ptm_acc_last_take(PtmCore *core, uint64_t lim);

/* Why ptm_run_to returned. */
typedef enum PtmRunStop {
    PTM_RUN_DONE,       /* every event up to m ran */
    PTM_RUN_SWEEP,      /* a sweep starts: ptm_sweep_apply() it */
    PTM_RUN_RESET,      /* a probe's own reset starts: see below */
} PtmRunStop;
/*
 * Run the events of MI cycles up to m, stopping before a sweep and before
 * a probe's own reset. The caller settles what the evaluation owes and
 * continues: for a sweep with ptm_sweep_apply(), for a reset with
 * ptm_fifo_reset_begin() and ptm_fifo_reset_finish() around its settling
 * of *reset; then calls again.
 */
PtmRunStop ptm_run_to(PtmCore *core, uint64_t m, PtmProbe **reset);
/* The sweep that starts now: its values, read entry by entry. */
void ptm_sweep_apply(PtmCore *core);
/* The probe's reset: its FIFO's writes before it, then the rest. */
void ptm_fifo_reset_begin(PtmCore *core, PtmProbe *p);
void ptm_fifo_reset_finish(PtmCore *core, PtmProbe *p);

#endif
