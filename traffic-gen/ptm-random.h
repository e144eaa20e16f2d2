/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The random generator (ptm-random.c). */
#ifndef PTM_RANDOM_H
#define PTM_RANDOM_H

#include "ptm-gen.h"
#include "ptm-pattern.h"

typedef struct PtmRandomBus {
    uint32_t load;                  /* percent of cycles offering a word */
    uint32_t min_bytes, max_bytes;  /* uniform frame length */
    uint32_t stall;                 /* percent of words held a cycle */
} PtmRandomBus;

typedef struct PtmRandomParams {
    uint32_t seed;
    bool link_up;
    int32_t tags_free;              /* -1: random per decision block */
    int32_t stfifo_free;            /* -1: random per decision block */
    uint32_t brake_percent;
    uint32_t up_read_percent;
    PtmRandomBus bus[PTM_BUS_KINDS];
} PtmRandomParams;

void ptm_random_params_default(PtmRandomParams *p);
extern const PtmGenModel ptm_model_random;

#endif
