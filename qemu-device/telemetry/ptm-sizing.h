/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sizing a configuration (ptm-sizing.c): the accumulator's load, the
 * smallest drain period without losses, and whether a source's lossy
 * stretches count in bulk. A user of the register file, above it.
 */
#ifndef PTM_SIZING_H
#define PTM_SIZING_H

#include "ptm-core.h"

/*
 * Whether the accumulator keeps up (ptm-sizing.c). The load is
 * endpoints x 3 x (PCIe channels x f_PCIe + DMA channels x f_DMA) /
 * (DRAIN_PERIOD x f_MI): the fraction of MI cycles the single adder would
 * need. Above 1 deltas are lost all the time; just below 1 a SNAPSHOT's
 * pause may still make a FIFO overflow, which ptm_config_sizing() finds by
 * running the timing with SNAPSHOTs at many phases of the drains.
 */
typedef struct PtmSizing {
    double load;
    bool steady_loss;       /* deltas lost without any command */
    bool pause_loss;        /* lost only around SNAPSHOTs */
    uint32_t safe_drain_period;     /* smallest larger one with neither */
} PtmSizing;

double ptm_config_load(const PtmConfig *cfg);
/* cfg must pass ptm_config_check(); safe_drain_period 0 if none is. */
void ptm_config_sizing(const PtmConfig *cfg, PtmSizing *out);

/*
 * Over a card whose accumulator loses deltas all the time, whether a
 * traffic source lets the model count the lossy stretches in bulk (from
 * tables of its periods or the steps of the spans it names): a copy of the
 * card runs up to `ns` of virtual time over the source, in steps as the
 * device's background timer takes them, and counts the drain windows of
 * its lossy jumps, all of them and those counted one by one. It stops
 * early once the answer is clear. The same configuration and source give
 * the same counts, on any host. Returns false when nine in ten of those
 * windows or more were counted one by one: a source without a way to
 * count in bulk (its cost then grows with every window).
 */
bool ptm_config_lossy_bulk(const PtmConfig *cfg, const PtmSourceOps *ops,
                           void *opaque, uint64_t ns, uint64_t *single,
                           uint64_t *all);

#endif
