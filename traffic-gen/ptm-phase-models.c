/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The generator models built into the library that a scenario's phase may
 * be: every one but the scenario itself, which ptm-models.c adds above
 * the scenario that looks its phases up here.
 */
#include <stddef.h>

#include "ptm-gen.h"
#include "ptm-pattern.h"
#include "ptm-plugin.h"
#include "ptm-ptc.h"
#include "ptm-random.h"
#include "ptm-replay.h"

const PtmGenModel *const ptm_gen_phase_models[] = {
    &ptm_model_idle,
    &ptm_model_pattern,
    &ptm_model_random,
    &ptm_model_replay,
    &ptm_model_plugin,
    &ptm_model_ptc,
    NULL,
};

const PtmGenModel *ptm_gen_phase_model_find(const char *name)
{
    return ptm_gen_model_in(ptm_gen_phase_models, name);
}
