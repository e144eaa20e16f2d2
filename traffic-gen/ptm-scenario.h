/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scenario generator (ptm-scenario.c): a schedule of phases read from
 * a GLib key file, each phase another model with its own parameters for a
 * given time.
 *
 *   [phase idle]
 *   model=idle
 *   duration=2ms
 *   link-up=false
 *
 *   [phase burst]
 *   model=pattern
 *   duration=500us
 *   rq-frame-bytes=256
 *
 * Every group is a phase and must be named "phase <name>"; phases play in
 * the order of the file. `model` and `duration` (a whole number with a unit
 * ns, us, ms or s) are required; every other key is a parameter of the
 * phase's model, checked like a property of its own object.
 *
 * Phase boundaries are in virtual time from 0: phase k starts when the
 * durations of the phases before it have passed. After the last phase the
 * schedule starts again with the first if `loop` is set; otherwise the last
 * phase goes on forever. Each phase sees its own time from its start, so it
 * begins with a fresh frame (a pattern) or a fresh block (random), and a
 * looped phase plays the same traffic every time.
 */
#ifndef PTM_SCENARIO_H
#define PTM_SCENARIO_H

#include "ptm-gen.h"

typedef struct PtmScenarioParams {
    char file[PTM_PARAM_STR_LEN];   /* path of the key file */
    bool loop;
} PtmScenarioParams;

extern const PtmGenModel ptm_model_scenario;

/*
 * A duration such as "500us" in ns; NULL, or a message to g_free() when
 * the text is not a positive whole number with a unit ns, us, ms or s.
 */
char *ptm_scenario_parse_duration(const char *text, uint64_t *ns);

#endif
