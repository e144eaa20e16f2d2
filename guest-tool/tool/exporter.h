/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie-telemetry --listen: a Prometheus exporter of every telemetry block
 * found (or those the options select).
 */
#ifndef PTT_EXPORTER_H
#define PTT_EXPORTER_H

#include "pcie-telemetry.h"
#include "options.h"

/* Runs until SIGINT or SIGTERM; returns the tool's exit code. */
int ptt_exporter(const ptt_opts *o, const ptl_find_opts *fo);

#endif
