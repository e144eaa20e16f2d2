/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What several unit tests share: card geometries and probe descriptions. */
#ifndef TEST_SUPPORT_H
#define TEST_SUPPORT_H

#include <stdbool.h>

#include "ptm-core.h"
#include "ptm-gen.h"

typedef struct PtmTestGeo {
    unsigned endpoints, ports, rq, rc, up, down, rq_bytes, up_bytes;
} PtmTestGeo;

/* Cards of unlike shapes: wide and narrow buses, several ports. */
extern const PtmTestGeo ptm_test_geos[];
extern const unsigned ptm_test_ngeos;

void ptm_test_make_cfg(const PtmTestGeo *g, PtmConfig *cfg);
/* A probe as the core describes it to a source, built independently. */
void ptm_test_probe_info(const PtmConfig *cfg, unsigned e, PtmDomain d,
                         PtmProbeInfo *pi);
void ptm_test_probe_shape(const PtmConfig *cfg, const PtmProbeInfo *pi,
                          PtmProbeShape *sh);
/*
 * The fast counter equals the per-cycle reference over the generator's
 * chunks for [start, end) of a probe; with odd_pieces the span is asked
 * for in pieces of odd sizes, so spans start inside runs too.
 */
void ptm_test_check_fast_path(PtmGen *g, const PtmConfig *cfg,
                              const PtmProbeInfo *pi, uint64_t start,
                              uint64_t end, bool odd_pieces);

/* Remove a temporary directory made by a test, with its files, and free it. */
void ptm_test_remove_dir(char *dir);

#endif
