/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Broken plugins for the unit tests of the loader, one source built twice:
 * with PTM_BAD_ABI it claims an ABI version no build has; without it, it
 * exports no ptm_plugin_entry at all (a shared object, but not a plugin).
 */
#include <stddef.h>

#include "ptm-plugin-abi.h"

#ifdef PTM_BAD_ABI
static void *bad_create(const char *args, const PtmGeometry *geo, char **err)
{
    return NULL;    /* never called: the version is refused first */
}

static const PtmPluginApi bad_api = {
    .abi_version = PTM_PLUGIN_ABI_VERSION + 1000,
    .name = "bad-abi",
    .create = bad_create,
};

const PtmPluginApi *ptm_plugin_entry(void)
{
    return &bad_api;
}
#else
PTM_PLUGIN_EXPORT int ptm_not_a_plugin(void);

int ptm_not_a_plugin(void)
{
    return 0;
}
#endif
