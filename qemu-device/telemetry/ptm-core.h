/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU-free model of CESNET's PCIE_TELEMETRY_MI block: register file, the
 * per-endpoint probes with their drain windows and delta FIFOs, and the
 * single MI-clock accumulator with its live and snapshot counter copies.
 *
 * Time enters only as nanoseconds of a virtual clock; the model computes
 * what each clock domain did up to that moment when it is asked, so the
 * result depends on the sequence of (time, access) pairs alone.
 */
#ifndef PTM_CORE_H
#define PTM_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptm-signals.h"

#define PTM_MAGIC           0x50544C4Du
#define PTM_VERSION         0x00020000u
#define PTM_BAR_SIZE        0x10000u
#define PTM_CNT_BASE        0x8000u

/* Register offsets */
#define PTM_REG_MAGIC        0x00
#define PTM_REG_VERSION      0x04
#define PTM_REG_CFG_TOPOLOGY 0x08
#define PTM_REG_CFG_LAYOUT   0x0C
#define PTM_REG_CFG_PCIE     0x10
#define PTM_REG_CFG_DMA      0x14
#define PTM_REG_CFG_DRAIN    0x18
#define PTM_REG_CNT_BASE     0x1C
#define PTM_REG_COMMAND      0x20
#define PTM_REG_STATUS       0x24
#define PTM_REG_READ_SEL     0x28
#define PTM_REG_CFG_REGIONS  0x2C
#define PTM_REG_CFG_WIDTH    0x30
#define PTM_REG_CFG_HIST     0x34
#define PTM_REG_CFG_CAPACITY 0x38
#define PTM_REG_CFG_WIDTH_DMA 0x3C
#define PTM_REG_PCIE_STATUS  0x40
#define PTM_REG_PCIE_TAGS    0x80
#define PTM_REG_PCIE_STFIFO  0xC0

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

/*
 * Whether the accumulator keeps up (ptm-sizing.c). The load is
 * endpoints x 3 x (PCIe channels x f_PCIe + DMA channels x f_DMA) /
 * (DRAIN_PERIOD x f_MI): the fraction of MI cycles the single adder would
 * need. Above 1 deltas are lost all the time; just below 1 a SNAPSHOT's
 * pause may still make a FIFO overflow, which ptm_config_sizing() finds by
 * running the timing with SNAPSHOTs at many phases of the drains.
 */
typedef struct PtmSizing {
    double load;
    bool steady_loss;       /* deltas lost without any command */
    bool pause_loss;        /* lost only around SNAPSHOTs */
    uint32_t safe_drain_period;     /* smallest larger one with neither */
} PtmSizing;

double ptm_config_load(const PtmConfig *cfg);
/* cfg must pass ptm_config_check(); safe_drain_period 0 if none is. */
void ptm_config_sizing(const PtmConfig *cfg, PtmSizing *out);

/*
 * Over a card whose accumulator loses deltas all the time, whether a
 * traffic source lets the model count the lossy stretches in bulk (from
 * tables of its periods or the steps of the spans it names): a copy of the
 * card runs up to `ns` of virtual time over the source, in steps as the
 * device's background timer takes them, and counts the drain windows of
 * its lossy jumps, all of them and those counted one by one. It stops
 * early once the answer is clear. The same configuration and source give
 * the same counts, on any host. Returns false when nine in ten of those
 * windows or more were counted one by one: a source without a way to
 * count in bulk (its cost then grows with every window).
 */
bool ptm_config_lossy_bulk(const PtmConfig *cfg, const PtmSourceOps *ops,
                           void *opaque, uint64_t ns, uint64_t *single,
                           uint64_t *all);

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

/* ---- counting (ptm-count.c) ---- */



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

/* ---- the block ---- */

typedef struct PtmCore PtmCore;

/* cfg must be valid (ptm_config_check). The counter memory starts zeroed. */
PtmCore *ptm_core_new(const PtmConfig *cfg);
void ptm_core_free(PtmCore *core);
const PtmLayout *ptm_core_layout(const PtmCore *core);
/* The shape of endpoint e's probe of domain d, as sources are given it. */
void ptm_core_probe_shape(const PtmCore *core, unsigned e, PtmDomain d,
                          PtmProbeShape *sh);
void ptm_core_geometry(const PtmCore *core, PtmGeometry *geo);

/*
 * The reference evaluation: every window counted at its drain, every delta
 * carried with its value and added by the accumulator, as the RTL does it.
 * Slow; the oracle the fast evaluation is tested against. Set it before
 * anything runs.
 */
void ptm_core_set_reference(PtmCore *core, bool on);

/* The traffic source; NULL ops = idle with the link up. */
void ptm_core_set_source(PtmCore *core, const PtmSourceOps *ops, void *opaque);
/*
 * Settings of endpoint e as the host negotiated them from now_ns on; the
 * drains sample them. The model first catches up to now_ns, so drains
 * before that moment keep the settings they saw.
 */
void ptm_core_set_settings(PtmCore *core, uint64_t now_ns, unsigned e,
                           const PtmSettings *s);

/* Power-on: counter memory zeroed, then everything as after an MI reset. */
void ptm_core_power_on(PtmCore *core, uint64_t now_ns);
/* MI reset: probes, FIFOs, flags, READ_SEL and live registers restart. */
void ptm_core_reset(PtmCore *core, uint64_t now_ns);
/* MI_RESET held for `cycles` MI cycles from now (ptm_core_reset: 1). */
void ptm_core_mi_reset(PtmCore *core, uint64_t now_ns, unsigned cycles);

/* Bring every clock domain up to now_ns (optional: accesses do it too). */
void ptm_core_advance(PtmCore *core, uint64_t now_ns);
/*
 * The same for work in the background: over a timing that repeats, when
 * enough whole periods are left to jump, it stops at the last whole period
 * before now_ns, so that no part of a period is simulated delta by delta
 * only to be simulated again up to the next access.
 */
void ptm_core_advance_coarse(PtmCore *core, uint64_t now_ns);
/* The virtual time up to which the model has evaluated the block. */
uint64_t ptm_core_done_ns(const PtmCore *core);
/*
 * Whether catching up over any stretch of virtual time now costs about
 * the same as over a short one: the source counts in closed form (it
 * declares PTM_COST_RANGE) and the timing of drains and deltas repeats (no
 * delta lost, no command running). While it does, nothing needs to run
 * until the next access.
 */
bool ptm_core_lazy(const PtmCore *core);

/* BAR accesses: any size 1..8, any alignment, little endian. */
uint64_t ptm_core_read(PtmCore *core, uint64_t now_ns, uint32_t addr,
                       unsigned size);
void ptm_core_write(PtmCore *core, uint64_t now_ns, uint32_t addr,
                    uint64_t val, unsigned size);

/*
 * The PCIe cycle (since virtual time 0) with which endpoint 0's PCIe probe
 * starts its next drain window after now_ns: where a live change of the
 * traffic takes effect.
 */
uint64_t ptm_core_next_pcie_window(const PtmCore *core, uint64_t now_ns);

/* MI cycle of a moment, and the BUSY window of the last command. */
uint64_t ptm_core_mi_cycle(const PtmCore *core, uint64_t now_ns);
uint64_t ptm_core_busy_until(const PtmCore *core);
/* Raw counter e of the live (snapshot = false) or snapshot copy. */
uint64_t ptm_core_counter(const PtmCore *core, bool snapshot, unsigned e);
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
/* Deltas lost so far (diagnostics; the guest sees only the flag). */
uint64_t ptm_core_lost_deltas(const PtmCore *core);
/* Deltas applied by the accumulator so far (diagnostics). */
uint64_t ptm_core_applied_deltas(const PtmCore *core);
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

/* Migration: the whole dynamic state as a byte string. */
void *ptm_core_save(const PtmCore *core, size_t *len);
/* Returns NULL on success, else a message to g_free(). */
char *ptm_core_load(PtmCore *core, const void *buf, size_t len);

#endif
