/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The frames of a card's PCIe probe one by one, for a tracer that records
 * each TLP (the HiSilicon PTT): walking a traffic source's chunks over
 * the RQ (bus 0, card -> port) and RC (bus 1, port -> card) buses, as
 * ptm_count_cycle() reads them (a frame opens with a region's SOF and
 * closes at its EOF item), each frame with the cycles of its SOF and EOF
 * and its bytes. The walk remembers where it is: a tracer asks for the
 * next frames, never the same ones again. Its cost is per frame; spans
 * without an SOF or EOF cost per segment.
 */
#ifndef PTM_FRAMES_H
#define PTM_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptm-signals.h"

#define PTM_FRAME_BUSES 2u      /* RQ and RC */

typedef struct PtmLinkFrame {
    unsigned bus;               /* 0 RQ (up), 1 RC (down) */
    uint64_t sof_cycle, eof_cycle;
    uint64_t bytes;             /* its items x item bytes */
} PtmLinkFrame;

typedef struct PtmFrameWalk PtmFrameWalk;

/* A walk of probe `sh` from its cycle `start` on */
PtmFrameWalk *ptm_frames_new(const PtmProbeShape *sh, unsigned item_bytes,
                             uint64_t start);
void ptm_frames_free(PtmFrameWalk *w);
/* The first cycle not walked */
uint64_t ptm_frames_done(const PtmFrameWalk *w);

/*
 * The frames that end in the cycles from where the walk is to `end`,
 * oldest first, at most max of them into out (whole cycles only: a cycle
 * whose frames would not all fit stays for the next call). Returns how
 * many; the walk then stands after the last cycle it took.
 */
size_t ptm_frames_walk(PtmFrameWalk *w, const PtmSourceOps *ops,
                       void *opaque, uint64_t end, PtmLinkFrame *out,
                       size_t max);

/* On to `end` without frames: what is open there is dropped */
void ptm_frames_skip(PtmFrameWalk *w, uint64_t end);

#endif
