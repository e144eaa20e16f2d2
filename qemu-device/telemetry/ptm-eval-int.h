/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The evaluation layer of the engine (ptm-eval.c): the fast path over
 * repeating timings and the reference beside it, driving the FIFO layer
 * below. Called by the register file above.
 */
#ifndef PTM_EVAL_INT_H
#define PTM_EVAL_INT_H

#include "ptm-fifo-int.h"

void ptm_eval_init(PtmCore *core);
void ptm_eval_free(PtmCore *core);
/* after a reset, a load or a command: the timing may change */
void ptm_eval_restart(PtmCore *core);
void ptm_eval_probe_reset(PtmCore *core, PtmProbe *p);
void ptm_eval_advance(PtmCore *core, uint64_t m);
/* Towards m, but over a repeating timing only by whole periods. */
void ptm_eval_advance_coarse(PtmCore *core, uint64_t m);
void ptm_eval_refresh_all(PtmCore *core);
void ptm_eval_settle_all(PtmCore *core);
/* the source's traffic may have changed: forget what was derived from it */
void ptm_eval_source_changed(PtmCore *core);

#endif
