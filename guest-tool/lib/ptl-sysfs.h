/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers the library's sysfs code shares (inside the library only).
 */
#ifndef PTL_SYSFS_H
#define PTL_SYSFS_H

#include <stdbool.h>

/* "0000:01:00.0" (a sysfs name, nothing after it) into its parts */
bool ptl_parse_bdf(const char *s, unsigned *dom, unsigned *bus,
                   unsigned *dev, unsigned *fn);

#endif
