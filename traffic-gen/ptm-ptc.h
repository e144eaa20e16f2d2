/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The ptc generator: a behavioural model of the PTC (ptm-ptc.c). */
#ifndef PTM_PTC_H
#define PTM_PTC_H

#include "ptm-gen.h"

typedef struct PtmPtcParams {
    uint32_t seed;
    bool link_up;
    uint32_t load;              /* percent of the bottleneck bus asked for */
    uint32_t read_percent;      /* DMA requests that are reads */
    uint32_t read_bytes;        /* bytes one DMA read asks for */
    uint32_t write_bytes;       /* bytes one DMA write carries */
    uint32_t latency_ns;        /* request to first completion */
    uint32_t jitter_percent;    /* variation of load and latency per window */
    uint32_t tags;              /* tags the PTC may use, 0: the capacity */
    uint32_t cplh_credits;      /* completion headers in flight, 0: any */
    uint32_t rq_stall;          /* percent of RQ words the endpoint holds */
    uint32_t down_stall;        /* percent of time the DMA side holds DOWN */
} PtmPtcParams;

void ptm_ptc_params_default(PtmPtcParams *p);
extern const PtmGenModel ptm_model_ptc;

#endif
