/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the replay generator's unit tests (test-replay.c and
 * test-replay-random.c) share: temporary files, cards, counting a span of
 * a replay, the expected counts of a bus, and a small random generator.
 */
#ifndef REPLAY_SUPPORT_H
#define REPLAY_SUPPORT_H

#include <glib.h>

#include "ptm-core.h"
#include "ptm-gen.h"
#include "ptm-replay.h"

typedef struct Rng {
    uint64_t s;
} Rng;

char *tmp_file(const char *suffix, const char *text);
void card_geometry(const PtmConfig *cfg, PtmGeometry *geo);
void probe_shape(const PtmConfig *cfg, unsigned e, PtmDomain d,
                 PtmProbeShape *sh);
PtmGen *replay_gen(const PtmGeometry *geo, const char *file,
                   const char *scope, const char *end, char **err);
PtmGen *replay_ok(const PtmGeometry *geo, const char *file,
                  const char *scope, const char *end);
void count_span(PtmGen *g, const PtmProbeShape *sh, uint64_t start,
                uint64_t n, uint64_t step, uint64_t *acc);
void expect_bus(uint64_t *exp, unsigned R, unsigned b, uint64_t words,
                uint64_t stall, uint64_t sof, uint64_t mvb,
                uint64_t mvb_stall, uint64_t items, uint64_t r0,
                uint64_t r1);
uint64_t *brakes_of(uint64_t *c, unsigned R);
void assert_counts(const uint64_t *got, const uint64_t *exp,
                   unsigned n);
uint32_t rnd(Rng *r, uint32_t n);

/* test-replay-random.c */
void test_random_vcd(void);
void test_random_text(void);

#endif
