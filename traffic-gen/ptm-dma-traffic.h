/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The card's own DMA as the telemetry block sees it: every transfer the
 * DMA engine makes (ndp-dma.h) becomes activity on the probes' buses by
 * the rule in docs/dma.md, through a model of the PTC: a write leaves the
 * DMA side on UP (header on the MVB, payload on the MFB) and goes out on
 * RQ as write requests of at most MPS bytes; a read leaves as a header on
 * UP, goes out on RQ as read requests of at most MRRS bytes, each taking
 * a tag, and comes back on RC after the latency as completions (split at
 * the RCB and then every MPS bytes), which go down to the DMA side on
 * DOWN. Each bus carries one frame after another in order, each from the
 * first region of a new cycle.
 *
 * Transfers are logged as they happen, in virtual time order; where each
 * frame falls is decided when it is logged (it depends only on what came
 * before it), so the description is a pure function of (probe, cycle) as
 * the core needs, and spans without activity are counted at once.
 */
#ifndef PTM_DMA_TRAFFIC_H
#define PTM_DMA_TRAFFIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptm-signals.h"

/* Bytes of a request's and of a completion's TLP header in the stream */
#define PTM_DMA_RQ_HDR          16u
#define PTM_DMA_RC_HDR          12u
/* From a read request's first cycle to its first completion's ready */
#define PTM_DMA_LATENCY_NS      1000u

typedef struct PtmDmaTraffic PtmDmaTraffic;

/* The log for a card of this geometry (its endpoint 0 carries the DMA). */
PtmDmaTraffic *ptm_dma_traffic_new(const PtmGeometry *geo);
void ptm_dma_traffic_free(PtmDmaTraffic *t);

/*
 * For tests: place every frame one by one, as the rule reads, instead of
 * the equal completions and write requests of a transfer in runs at once
 * (which must give the same frames at the same cycles).
 */
void ptm_dma_traffic_set_frame_by_frame(PtmDmaTraffic *t, bool on);

/* The source to give the core (opaque: the log). */
const PtmSourceOps *ptm_dma_traffic_ops(void);

/*
 * A transfer of DMA port `port` made at virtual time t_ns (never before
 * an earlier one's): a write of `bytes` to host address addr, or a read of
 * them, split by the settings the function negotiated.
 */
void ptm_dma_traffic_add(PtmDmaTraffic *t, uint64_t t_ns, unsigned port,
                         bool write, uint64_t addr, uint32_t bytes,
                         const PtmSettings *set);

/*
 * Background transfers: the slots of a generator of the transfers model
 * (ptm-transfers.h), whose parameter history says what each slot holds,
 * logged beside the engine's transfers (NULL: none). From the card's start
 * (virtual time 0). While it is set the log always holds something.
 */
struct PtmGen;
void ptm_dma_traffic_set_background(PtmDmaTraffic *t,
                                    const struct PtmGen *gen);
/*
 * The settings the function negotiated from now_ns on, by which the
 * background's slots are split (the engine's transfers bring their own).
 */
void ptm_dma_traffic_set_settings(PtmDmaTraffic *t, uint64_t now_ns,
                                  const PtmSettings *set);

/*
 * Virtual time now: activity that ends by then costs the core nothing
 * more (PtmSourceOps.cost); until then the card counts in the background.
 */
void ptm_dma_traffic_set_now(PtmDmaTraffic *t, uint64_t now_ns);

/*
 * Whether the log holds anything (frames or tag and FIFO steps): the card
 * then brings the block up to time in the background, so that the log
 * can forget what it counted, even while each transfer ends before the
 * access that made it returns (virtual time runs on under TCG).
 */
bool ptm_dma_traffic_holds(PtmDmaTraffic *t);

/* Forget activity that ended before t_ns (the core counted it). */
void ptm_dma_traffic_prune(PtmDmaTraffic *t, uint64_t t_ns);

/*
 * A reset of the card at now_ns: everything in flight is gone, and the
 * background's slots before now_ns with it.
 */
void ptm_dma_traffic_reset(PtmDmaTraffic *t, uint64_t now_ns);

/* Frames logged so far on RQ, RC, UP and DOWN of port 0 (for tests) */
void ptm_dma_traffic_frames(PtmDmaTraffic *t, uint64_t out[4]);

/* Migration: the log as bytes (g_malloc'd); load refuses with a reason. */
void *ptm_dma_traffic_save(PtmDmaTraffic *t, size_t *len);
char *ptm_dma_traffic_load(PtmDmaTraffic *t, const void *buf, size_t len);

/*
 * One staircase of the log: steps of `amt` at cycle + i x period
 * (i = 0, 1, ...), the total `before` before the first.
 */
typedef struct PtmStairs {
    uint64_t cycle, period, before, amt;
} PtmStairs;

/*
 * The largest a - b at a's steps i0..i1 (i0 <= i1), every one of them at
 * or after b's first step (b's steps unbounded after), the totals after
 * each cycle's steps: at most *peak; false, *peak unchanged, where that
 * would take more than `most` candidate steps. Amounts below 2^24. The
 * counting's closed form, exported for its unit test.
 */
bool ptm_stairs_peak(const PtmStairs *a, const PtmStairs *b, uint64_t i0,
                     uint64_t i1, unsigned most, uint64_t *peak);

#endif
