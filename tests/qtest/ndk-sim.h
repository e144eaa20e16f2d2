/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where each channel's window lies, and a small per-cycle model of the
 * pattern traffic source and of the channels. Counts of the pattern
 * source are predicted by this simulator, written for the QTest and
 * itself checked against closed forms worked out by hand
 * (check_simulator, check_edges).
 */
#ifndef NDK_SIM_H
#define NDK_SIM_H

#include "ndk-common.h"

/*
 * The layout of a probe's channels: 1 (cycles) + nbus x (6 + regions),
 * and on a PCIe probe 6 BRAKE bits and 8 histogram bands (tag bands 0..3,
 * storage-FIFO bands 0..3), the last 8 channels.
 */
typedef struct Layout {
    unsigned n;
    unsigned nbus;
    unsigned regions;
    bool pcie;
} Layout;

#define SIM_MAX_CH              64

Layout pcie_layout(unsigned regions);
Layout dma_layout(unsigned ports, unsigned regions);
bool ch_is_band(const Layout *l, unsigned c);
/* Cycles channel c's window edge lies after the cycle counter's */
int64_t ch_edge(const Layout *l, unsigned c);
/* The first probe cycle a channel counts, relative to the origin */
unsigned ch_first(const Layout *l, unsigned c);
/* The probe cycles [lo, hi) channel c holds after k whole windows */
void ch_span(const Layout *l, uint64_t o, uint64_t dp, uint64_t k,
             unsigned c, uint64_t *lo, uint64_t *hi);
/* Cycles of channel a's span (after whole windows) that b's lacks */
uint64_t ch_extra(const Layout *l, unsigned a, unsigned b);
/* The same for the difference of two readings */
uint64_t ch_shift(const Layout *l, unsigned a, unsigned b);

/* One bus of a probe under the pattern source */
typedef struct SimBus {
    uint32_t frame_bytes;       /* 0: idle */
    uint32_t gap;
    uint32_t stall;
    unsigned regions;           /* regions the bus really has */
    unsigned ipr;               /* items per region */
    bool mvb;                   /* one MVB item per frame, with word 0 */
    uint64_t start;             /* cycle 0 of its pattern; idle before */
} SimBus;

typedef struct SimProbe {
    uint64_t hz;
    unsigned regions;           /* of the probe: the wider of its buses */
    unsigned nbus;
    SimBus bus[2];
    bool pcie;                  /* BRAKE and histogram channels */
    uint32_t brake;
    unsigned tags_free, tag_capacity;
    unsigned stfifo_free, stfifo_capacity;
} SimProbe;

typedef struct SimSignals {
    bool src_rdy, dst_rdy, mvb_src_rdy, mvb_dst_rdy;
    unsigned mvb_vld;
    uint32_t sof, eof;          /* bit r: region r */
    unsigned eof_pos;
} SimSignals;

Layout sim_layout(const SimProbe *p);
/* cycles [start, end), cycle t counted into c only in [lo[c], hi[c]) */
void sim_count_spans(const SimProbe *p, uint64_t start, uint64_t end,
                     uint64_t origin, const uint64_t *lo,
                     const uint64_t *hi, bool *open, uint64_t *acc);
/* Every channel over the absolute cycles [start, end), frames closed */
void sim_count(const SimProbe *p, uint64_t start, uint64_t end,
               uint64_t *acc);
/* The spans of all channels after k windows; returns the largest end */
uint64_t sim_spans(const SimProbe *p, uint64_t o, uint64_t dp,
                   uint64_t k, uint64_t *lo, uint64_t *hi);
/* The counters after k windows, traffic version i from from[i] on */
void sim_windows_versions(const SimProbe *ver, const uint64_t *from,
                          unsigned nver, uint64_t o, uint64_t dp,
                          uint64_t k, uint64_t *acc);
/* The same with one version of the traffic */
void sim_windows(const SimProbe *p, uint64_t o, uint64_t dp,
                 uint64_t k, uint64_t *acc);
/* The same over a long span of a pattern that repeats every period */
void sim_windows_long(const SimProbe *p, uint64_t period, uint64_t o,
                      uint64_t dp, uint64_t k, uint64_t *acc);

/*
 * The traffic of the counting tests, on a card with the default generics:
 *   rq-frame-bytes=256: 64 items in 8 regions of 8 items = 4 words of 2
 *     regions, back to back (period 4);
 *   up-frame-bytes=100, up-gap=3, up-stall=2: 25 items in 4 regions = 2
 *     words; period 2 + 2 + 3 = 7;
 *   tags-free=100 (band 2 of 256: 32 < 100 <= 128), storage FIFO at its
 *   capacity 1024 (band 3), BRAKE bits 0 and 2.
 */
#define PATTERN_ARGS \
    "-object telemetry-traffic-pattern,id=tp0,rq-frame-bytes=256," \
    "up-frame-bytes=100,up-gap=3,up-stall=2,tags-free=100,brake=5 "

/* The probes of PATTERN_ARGS */
void pattern_probes(SimProbe *pcie, SimProbe *dma);
/* The simulator and the window edges against the closed forms */
void check_simulator(void);
void check_edges(void);
/*
 * Expected counters (64 entries, default layout) of a card with the
 * pattern, reset at t0, read at t (mid-window)
 */
void pattern_expect(int64_t t0, int64_t t, uint64_t *exp);
/* The PCIe probe of a card whose only traffic is RQ frames of rq_bytes */
SimProbe rq_probe(uint32_t rq_bytes);

#endif
