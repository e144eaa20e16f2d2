/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The replay generator (ptm-replay.c): signals recorded by an HDL
 * simulation, from a VCD file with the port names of PCIE_TELEMETRY_MI or
 * from the plain text format of docs/replay.md.
 */
#ifndef PTM_REPLAY_H
#define PTM_REPLAY_H

#include "ptm-gen.h"

typedef struct PtmReplayParams {
    char file[PTM_PARAM_STR_LEN];   /* .vcd or text trace */
    char scope[PTM_PARAM_STR_LEN];  /* VCD scope, "" = the best one */
    char end[PTM_PARAM_STR_LEN];    /* "idle", "hold" or "loop" */
} PtmReplayParams;

void ptm_replay_params_default(PtmReplayParams *p);
extern const PtmGenModel ptm_model_replay;

/*
 * A trace as read for one card geometry. Loads are shared: the same file
 * (unchanged on disk), scope and geometry give the same trace.
 */
typedef struct PtmReplayTrace PtmReplayTrace;

/* NULL and *err (to g_free(), naming the file and line) if unusable. */
PtmReplayTrace *ptm_replay_load(const char *path, const char *scope,
                                const PtmGeometry *geo, char **err);
void ptm_replay_unref(PtmReplayTrace *t);
/* Cycles (rising clock edges) of endpoint e's probe of domain d. */
uint64_t ptm_replay_cycles(const PtmReplayTrace *t, unsigned e, PtmDomain d);
/* Runs of identical cycles, and distinct samples, stored for it. */
uint64_t ptm_replay_runs(const PtmReplayTrace *t, unsigned e, PtmDomain d);
uint64_t ptm_replay_samples(const PtmReplayTrace *t, unsigned e,
                            PtmDomain d);
/* Probe cycles in which an x or z bit that matters was read as 0. */
uint64_t ptm_replay_xz_cycles(const PtmReplayTrace *t);

#endif
