/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Counting a probe's channels over the segments a source gives
 * (ptm-count.c): the per-cycle definition, the fast counts, lanes and
 * repeats. The engine's lowest layer, beside the types; generators count
 * their named pieces with it.
 */
#ifndef PTM_COUNT_H
#define PTM_COUNT_H

#include "ptm-types.h"

void ptm_count_state_window_start(PtmCountState *st);
/* The literal per-cycle definition of every channel. */
void ptm_count_cycle(const PtmProbeShape *sh, PtmCountState *st,
                     const PtmSegment *cyc, uint64_t *acc);
/* Counts a chunk one cycle at a time with ptm_count_cycle(). */
void ptm_count_chunk_reference(const PtmProbeShape *sh, PtmCountState *st,
                               const PtmChunk *ch, uint64_t *acc);
/* The segment list once, ignoring repeat. */
void ptm_count_pass(const PtmProbeShape *sh, PtmCountState *st,
                    const PtmChunk *ch, uint64_t *acc);
/*
 * Lanes of a probe that count independently: bus b is bit b; the side lane
 * is everything else (the cycles, BRAKE, the histograms, lowest and last
 * values, the link).
 */
#define PTM_LANE_SIDE   (1u << 31)
#define PTM_LANES_ALL   0xFFFFFFFFu
/*
 * *st after a span counted with ptm_count_chunk() from st->open and a state
 * fresh from ptm_count_state_window_start() that ended as *span: the span's
 * frame-open bits and last values, the lower of the lowest values.
 */
void ptm_count_state_append(PtmCountState *st, const PtmCountState *span);
/*
 * A pass counted `repeat` times from *st into acc (nch <= 256 channels),
 * in at most three passes: a pass maps each bus's frame-open bit by a
 * constant, the identity or a negation.
 */
typedef void (*PtmCountPass)(void *opaque, PtmCountState *st, uint64_t *acc);
void ptm_count_repeat(unsigned nch, PtmCountState *st, uint64_t *acc,
                      uint64_t repeat, PtmCountPass pass, void *opaque);
/* As ptm_count_chunk, but only the channels and state of some lanes. */
void ptm_count_chunk_lanes(const PtmProbeShape *sh, PtmCountState *st,
                           const PtmChunk *ch, uint64_t *acc, uint32_t lanes);
/* Same counts as the reference, in time independent of run lengths. */
void ptm_count_chunk(const PtmProbeShape *sh, PtmCountState *st,
                     const PtmChunk *ch, uint64_t *acc);

#endif
