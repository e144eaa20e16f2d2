/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Names the output formats share (inside the library only).
 */
#ifndef PTL_NAMES_H
#define PTL_NAMES_H

/* BRAKE reasons with a name; further ones are numbered */
#define PTL_NAMED_REASONS 6

/* BRAKE reasons as label values: "no_free_pcie_tag", ... */
extern const char *const ptl_reason_slug[PTL_NAMED_REASONS];
/* ptl_bus_kind as label values: "RQ", "RC", "UP", "DOWN" */
extern const char *const ptl_kind_name[4];

#endif
