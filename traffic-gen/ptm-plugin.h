/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plugin generator (ptm-plugin.c): traffic from a shared object that
 * implements the C ABI of ptm-plugin-abi.h, loaded by path with GModule.
 */
#ifndef PTM_PLUGIN_H
#define PTM_PLUGIN_H

#include "ptm-gen.h"

typedef struct PtmPluginParams {
    char path[PTM_PARAM_STR_LEN];   /* the shared object */
    char args[PTM_PARAM_STR_LEN];   /* free text for its create() */
} PtmPluginParams;

extern const PtmGenModel ptm_model_plugin;

#endif
