/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pattern source: every bus repeats the same frame forever, so that
 * every counter of the block follows in closed form from its parameters.
 *
 * One period of a bus is `stall` cycles in which the first word of a frame
 * waits (SRC_RDY without DST_RDY, and on DMA buses the MVB item waits too),
 * then the frame's words, then `gap` idle cycles. A frame of B bytes has
 * ceil(B / item) items in ceil(items / items-per-region) regions, starts in
 * region 0 of its first word and fills the bus's real regions in order. On
 * the DMA buses each frame has one MVB item, moving with the first word.
 * Each frame carries `mvb_items` MVB items (valid bits of regions 0 and up)
 * with its first word on the DMA buses. The BRAKE bits are set for the
 * first brake_duty percent of every brake_period PCIe cycles (100: always);
 * the free tags and storage-FIFO words are constant. All endpoints and DMA
 * ports see the same traffic.
 */
#ifndef PTM_PATTERN_H
#define PTM_PATTERN_H

#include "ptm-gen.h"

enum { PTM_BUS_RQ, PTM_BUS_RC, PTM_BUS_UP, PTM_BUS_DOWN, PTM_BUS_KINDS };

typedef struct PtmPatternBus {
    uint32_t frame_bytes;           /* 0: the bus stays idle */
    uint32_t gap;                   /* idle cycles after each frame */
    uint32_t stall;                 /* stalled cycles before each frame */
    uint32_t mvb_items;             /* DMA buses: MVB items per frame */
} PtmPatternBus;

typedef struct PtmPatternParams {
    bool link_up;
    int32_t tags_free;              /* -1: the tag capacity */
    int32_t stfifo_free;            /* -1: the storage FIFO capacity */
    uint32_t brake;                 /* BRAKE bits, 6 bits */
    uint32_t brake_duty;            /* percent of each brake period on */
    uint32_t brake_period;          /* PCIe cycles */
    PtmPatternBus bus[PTM_BUS_KINDS];
} PtmPatternParams;

typedef struct PtmPattern {
    PtmPatternParams par;
    PtmGeometry geo;
} PtmPattern;

void ptm_pattern_params_default(PtmPatternParams *par);
/* NULL if the parameters fit the geometry, else a message to g_free() */
char *ptm_pattern_check(const PtmPatternParams *par, const PtmGeometry *geo);
void ptm_pattern_init(PtmPattern *pat, const PtmPatternParams *par,
                      const PtmGeometry *geo);
/* Which kind of bus bus b of a probe is. */
unsigned ptm_pattern_bus_kind(const PtmProbeInfo *probe, unsigned b);

extern const PtmSourceOps ptm_pattern_ops;   /* opaque: PtmPattern * */

/* The same as generator models: "pattern", and "idle" (no frames). */
extern const PtmGenModel ptm_model_pattern;
extern const PtmGenModel ptm_model_idle;

typedef struct PtmIdleParams {
    bool link_up;
    int32_t tags_free;
    int32_t stfifo_free;
} PtmIdleParams;

#endif
