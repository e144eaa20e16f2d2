/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie-telemetry --live.
 */
#include <stdio.h>

#include "live.h"

int ptt_live(const ptt_opts *o, const ptl_find_opts *fo)
{
    (void)o;
    (void)fo;
    fprintf(stderr, "pcie-telemetry: --live is not built yet\n");
    return PTL_E_USAGE;
}
