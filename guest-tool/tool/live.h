/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie-telemetry --live: one screen redrawn in place every interval.
 */
#ifndef PTT_LIVE_H
#define PTT_LIVE_H

#include "pcie-telemetry.h"
#include "options.h"

/* Runs until q or Ctrl-C; returns the tool's exit code. */
int ptt_live(const ptt_opts *o, const ptl_find_opts *fo);

#endif
