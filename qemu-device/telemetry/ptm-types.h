/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bottom of the PCIE_TELEMETRY_MI engine: the block's generics
 * (PtmConfig), the layout they give, its bands and channel numbers and the
 * timing facts every layer of the engine shares. Generators and the glue
 * include it as well; it includes nothing of the engine but the signals.
 */
#ifndef PTM_TYPES_H
#define PTM_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptm-signals.h"

/* The block's address space and where its counter memory starts. */
#define PTM_BAR_SIZE        0x10000u
#define PTM_CNT_BASE        0x8000u

/* COMMAND and STATUS bits: the layers below the register file act on them. */
#define PTM_CMD_SNAPSHOT     (1u << 0)
#define PTM_CMD_CLEAR        (1u << 1)
#define PTM_CMD_CLEAR_FLAGS  (1u << 2)
#define PTM_CMD_CLEAR_LOWEST (1u << 3)

#define PTM_STATUS_BUSY      (1u << 0)
#define PTM_STATUS_LOST      (1u << 1)
#define PTM_STATUS_OVERRUN   (1u << 2)

/*
 * A delta written at probe edge k: the first MI edge after edge k + 1
 * sees the write pointer 4 edges later; the FIFO's two output registers
 * and an idle accumulator take 3 more to pop it; its sum is written 2
 * edges after the pop and read from the next. The model names a delta's
 * take by that last edge: MI edge floor(k + 1) + 1 + 7 + 3.
 */
#define PTM_FIFO_TAKE_MI     11
/* Edges from the pop of a delta to the first read that sees its sum. */
#define PTM_ACC_SHOW_MI      3
/* MI cycles the accumulator spends on one delta. */
#define PTM_ACC_MI_PER_DELTA 3

/* The generics of PCIE_TELEMETRY_MI plus the model's clocks. */
typedef struct PtmConfig {
    uint32_t pcie_endpoints;
    uint32_t dma_ports;
    uint32_t pcie_rq_mfb_regions;
    uint32_t pcie_rc_mfb_regions;
    uint32_t dma_up_mfb_regions;
    uint32_t dma_down_mfb_regions;
    uint32_t pcie_rq_mfb_region_bytes;
    uint32_t pcie_rc_mfb_region_bytes;
    uint32_t dma_up_mfb_region_bytes;
    uint32_t dma_down_mfb_region_bytes;
    uint32_t mfb_item_bytes;
    uint32_t pcie_eof_pos_width;
    uint32_t dma_eof_pos_width;
    uint32_t cnt_width;
    uint32_t drain_period;
    uint32_t tag_capacity;
    uint32_t stfifo_capacity;
    uint64_t pcie_clk_hz;
    uint64_t dma_clk_hz;
    uint64_t mi_clk_hz;
} PtmConfig;

/* The defaults of the firmware (and of the device's properties). */
void ptm_config_default(PtmConfig *cfg);

/*
 * Check a configuration against what the firmware can be built with and
 * what the register fields can hold. Returns NULL when it is valid, else a
 * newly allocated message naming the property (as the device spells it)
 * and what is allowed; free it with g_free().
 */
char *ptm_config_check(const PtmConfig *cfg);

/* The largest DRAIN_PERIOD the firmware accepts. */
#define PTM_MAX_DRAIN_PERIOD 32768u

/* Layout derived from a configuration. */
typedef struct PtmLayout {
    unsigned pcie_regions;          /* max(RQ, RC) */
    unsigned dma_regions;           /* max(UP, DOWN) */
    unsigned pcie_channels;         /* 1 + 2 (6 + R) + 6 + 8 */
    unsigned dma_channels;          /* 1 + 2 P (6 + R) */
    unsigned channels_per_endpoint;
    unsigned entries;               /* power of two */
    unsigned pcie_fifo_depth;
    unsigned dma_fifo_depth;
} PtmLayout;

void ptm_layout_compute(const PtmConfig *cfg, PtmLayout *lay);
/* FIFO depth of a probe of n channels: 2^ceil(log2(16 ceil(n/8))) */
unsigned ptm_fifo_depth(unsigned channels);
/* Channel numbers inside a probe */
static inline unsigned ptm_ch_bus(unsigned regions, unsigned bus, unsigned k)
{
    return 1 + bus * (6 + regions) + k;
}
enum {
    PTM_CH_WORDS = 0, PTM_CH_STALL = 1, PTM_CH_SOF = 2, PTM_CH_MVB = 3,
    PTM_CH_MVB_STALL = 4, PTM_CH_ITEMS = 5, PTM_CH_REGION0 = 6,
};

/* Greatest common divisor (periods of clocks, buses and windows). */
static inline uint64_t ptm_gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;

        a = b;
        b = t;
    }
    return a;
}

/* Band of a free value v of a resource with capacity c: 0..3 */
static inline unsigned ptm_band(unsigned v, unsigned c)
{
    if (v == 0) {
        return 0;
    }
    if (v <= c / 8) {
        return 1;
    }
    return v <= c / 2 ? 2 : 3;
}

/* The block (ptm-core.h); its state inside the engine is ptm-core-int.h's. */
typedef struct PtmCore PtmCore;

/*
 * How the fast evaluation got where it is (diagnostics for tests and
 * benchmarks): jumps over repeating periods of the timing, those of a
 * timing that loses deltas, and the MI cycles jumped and simulated.
 */
typedef struct PtmEvalStats {
    uint64_t jumps, lossy_jumps;
    uint64_t jumped_mi, simulated_mi;
    uint64_t table_windows;     /* windows a lossy jump took from a table */
    uint64_t bulk_windows;      /* ... counted in bulk, named by piece */
    uint64_t single_windows;    /* ... counted one by one */
} PtmEvalStats;

/*
 * Knobs and diagnostics of the block that the layer owning them implements
 * (probes: memo and step slots; evaluation: stats and the state check);
 * ptm-core.h offers them with the rest of the block's API.
 */
/*
 * Reuse of counts of chunks a source marks with an id (on by default;
 * off only to test that it changes nothing).
 */
void ptm_core_set_memo(PtmCore *core, bool on);
/*
 * Steps of named spans kept per probe (PtmSourceOps.span_id; a power of
 * two, 2 to 1024, 512 by default): fewer only to test their reuse.
 */
void ptm_core_set_step_slots(PtmCore *core, unsigned slots);
void ptm_core_eval_stats(const PtmCore *core, PtmEvalStats *st);

/*
 * The invariants every state of the model satisfies; NULL, or a message
 * (g_free) naming the first that fails:
 * - sizes and indices: queues (waiting commands, settings changes, status
 *   words, flag changes) within their arrays; the round robin's stream,
 *   FIFO heads and delta channels within the probe;
 * - counters: every entry of both copies (and of the copies a running
 *   sweep reads from) fits CNT_WIDTH;
 * - windows of each probe: epoch start <= counted <= drained, counting
 *   ahead at its window's last edge, positions far from overflow;
 * - FIFO counts: at most 2 in the output registers and ITEMS in memory,
 *   and the writer's view agrees (written - seen = held - read + unseen
 *   reads); entries in write order, of drained windows of the epoch;
 * - settled: every drained window counted, no loss left to apply (each
 *   public operation ends so);
 * - clock positions against the evaluated MI cycle M: every probe's next
 *   drain (or reset) after M; the accumulator, commands, FIFO entries and
 *   reads at most a few cycles (a command's sweeps) past M; waiting
 *   commands and settings changes after M and in order; M within the
 *   clock's range.
 * A state that passes is evaluated on in time bounded by the virtual time
 * asked for: nothing before M is left to catch up.
 */
char *ptm_core_check(const PtmCore *core);

#endif
