/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Every generator model built into the library, the scenario among them. */
#include <stddef.h>

#include "ptm-gen.h"
#include "ptm-pattern.h"
#include "ptm-plugin.h"
#include "ptm-ptc.h"
#include "ptm-random.h"
#include "ptm-replay.h"
#include "ptm-scenario.h"

const PtmGenModel *const ptm_gen_models[] = {
    &ptm_model_idle,
    &ptm_model_pattern,
    &ptm_model_random,
    &ptm_model_replay,
    &ptm_model_scenario,
    &ptm_model_plugin,
    &ptm_model_ptc,
    NULL,
};

const PtmGenModel *ptm_gen_model_find(const char *name)
{
    return ptm_gen_model_in(ptm_gen_models, name);
}
