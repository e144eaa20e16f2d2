/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The library's register accessors on the QEMU-free core, with a virtual
 * clock that advances by a fixed cost per access, access counters and
 * injected faults; and the pattern whose counts the ptl tests know in
 * closed form.
 */
#ifndef TEST_PTL_SUPPORT_H
#define TEST_PTL_SUPPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "pcie-telemetry.h"
#include "ptm-core.h"
#include "ptm-pattern.h"

#define PTL_BENCH_MAX_OVERRIDES 8
#define PTL_BENCH_LOG           64

typedef struct PtlBench {
    PtmConfig cfg;
    PtmCore *core;
    PtmPattern pat;
    uint64_t t;                 /* virtual clock, ns */
    uint64_t access_ns;         /* cost of one access */

    /* faults */
    bool stuck_busy;            /* STATUS always shows BUSY ... */
    uint64_t busy_step_ns;      /* ... and each such read takes this long */
    int64_t gone_after;         /* accesses until reads give all ones; -1 */
    unsigned noverride;
    struct { uint32_t off, val; } override[PTL_BENCH_MAX_OVERRIDES];

    /* counts since the last ptl_bench_reset_counts() */
    unsigned accesses, reads32, reads64, writes, status_reads;
    unsigned window_reads[4096];        /* per counter entry */
    bool low_before_high;               /* 32-bit pairs read low first */
    unsigned nlog;
    struct { uint32_t off, val; } log[PTL_BENCH_LOG];  /* writes */
} PtlBench;

extern const ptl_regs_ops ptl_bench_ops;      /* with 64-bit loads */
extern const ptl_regs_ops ptl_bench_ops32;    /* two 32-bit reads */

/* par NULL: idle card */
PtlBench *ptl_bench_new(const PtmConfig *cfg, const PtmPatternParams *par);
void ptl_bench_free(PtlBench *b);
/* Move the clock forward to t (never back). */
void ptl_bench_at(PtlBench *b, uint64_t t);
void ptl_bench_reset_counts(PtlBench *b);
void ptl_bench_override(PtlBench *b, uint32_t off, uint32_t val);
ptl_block *ptl_bench_open(PtlBench *b);

/*
 * The test pattern of the ptl tests (every bus period divides the drain
 * period of 4096 cycles, so each whole window holds the same counts):
 *   RQ   200 B frames (50 items, 7 regions of 8 items, 4 words of 2
 *        regions), 2 stalled cycles before, 2 idle after: period 8
 *   RC   64 B (16 items, 1 word), 7 idle cycles: period 8
 *   UP   128 B (32 items, 2 words), 1 stalled cycle (MFB and MVB), 5 idle,
 *        2 MVB items per frame: period 8
 *   DOWN 32 B (8 items, 1 word, region 0 only), 7 idle: period 8
 *   BRAKE reasons 0 and 2 on 16 of every 64 PCIe cycles
 *   20 free tags (capacity 256: band 1), 700 free storage-FIFO words
 *   (capacity 1024: band 3)
 */
void ptl_test_pattern(PtmPatternParams *par);

/*
 * Moments of the default card at which no delta is on its way, so that a
 * snapshot holds whole drain windows of every channel: PCIe windows end at
 * 10237.5 + 10240 k ns, DMA windows at 20475 + 20480 k ns, and their deltas
 * are added within 1.5 us. Between the first and the second, PCIe windows
 * k = 2..9 (8 x 4096 cycles) and DMA windows k = 1..4 (4 x 4096) drain.
 */
#define PTL_T_FIRST   25000u
#define PTL_T_SECOND  107400u
#define PTL_PCIE_CYC  (8u * 4096)
#define PTL_DMA_CYC   (4u * 4096)

#endif
