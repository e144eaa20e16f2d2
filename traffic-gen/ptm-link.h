/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the PCIe link of a card carries, as the port above it would count
 * it: TLP payload bytes in each direction and the time the link is down,
 * taken from the same traffic source that drives the block's PCIe probe
 * of one endpoint, counted on their own (the block's resets, windows and
 * snapshots do not touch them) and only when asked.
 *
 * Upstream (card -> port) are the requests on RQ: each frame is a TLP of a
 * 16-byte header and its payload, so the payload is the frames' bytes, in
 * MFB items, less 16 a frame (a read request carries none). Downstream
 * (port -> card) are the completions on RC: 12 bytes of header a frame.
 * Payload is in whole items (DWs with 4-byte items), as TLPs carry it.
 * The link is down while the source holds the endpoint's PCIe reset or
 * drives its link-up signal low.
 */
#ifndef PTM_LINK_H
#define PTM_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptm-signals.h"

#define PTM_LINK_RQ_HDR 16u
#define PTM_LINK_RC_HDR 12u

typedef struct PtmLinkCount PtmLinkCount;

typedef struct PtmLinkTotals {
    uint64_t payload_up;        /* bytes card -> port (RQ) */
    uint64_t payload_down;      /* bytes port -> card (RC) */
    uint64_t down_cycles;       /* PCIe cycles with the link down */
    uint64_t frames_up;         /* RQ frames (SOFs) */
    uint64_t frames_down;       /* RC frames */
} PtmLinkTotals;

/* Counting of the probe `sh` (a PCIe probe) from its cycle `start` on. */
PtmLinkCount *ptm_link_new(const PtmProbeShape *sh, unsigned item_bytes,
                           uint64_t start);
void ptm_link_free(PtmLinkCount *lc);

/*
 * Count the cycles up to `end` (nothing if already there) from the
 * source. `link_always_up`: the source never drives the link down nor
 * holds a reset, so only its frames need counting.
 */
void ptm_link_advance(PtmLinkCount *lc, const PtmSourceOps *ops,
                      void *opaque, uint64_t end, bool link_always_up);
/* The first cycle not yet counted. */
uint64_t ptm_link_done(const PtmLinkCount *lc);
/* The totals of the cycles counted since start. */
void ptm_link_totals(const PtmLinkCount *lc, PtmLinkTotals *out);

/* Migration: the state as bytes (g_malloc'd); load refuses with a reason. */
void *ptm_link_save(const PtmLinkCount *lc, size_t *len);
char *ptm_link_load(PtmLinkCount *lc, const void *buf, size_t len);

#endif
