/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie-telemetry --listen.
 */
#include <stdio.h>

#include "exporter.h"

int ptt_exporter(const ptt_opts *o, const ptl_find_opts *fo)
{
    (void)o;
    (void)fo;
    fprintf(stderr, "pcie-telemetry: --listen is not built yet\n");
    return PTL_E_USAGE;
}
