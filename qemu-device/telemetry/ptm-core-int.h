/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the PCIE_TELEMETRY_MI model: the state every layer of the engine
 * shares. Not an API. The layers, each calling and including only those
 * below it (a build check, tests/layers.py, holds them to that):
 *
 *   sizing          ptm-sizing.c               (ptm-sizing.h)
 *   register file   ptm-core.c                 (ptm-core.h)
 *   evaluation      ptm-eval.c, ptm-check.c    (ptm-eval-int.h)
 *   FIFO and adder  ptm-fifo.c                 (ptm-fifo-int.h)
 *   probes          ptm-probe.c                (ptm-probe-int.h, this one)
 *   layout, counts  ptm-config.c, ptm-count.c  (ptm-types.h, ptm-count.h)
 */
#ifndef PTM_CORE_INT_H
#define PTM_CORE_INT_H

#include <glib.h>

#include "ptm-types.h"
#include "ptm-count.h"

typedef unsigned __int128 u128;

#define NS_PER_S 1000000000ull

/*
 * A delta in a probe's FIFO. The reference evaluation carries its value;
 * the fast one names it by (window, channel) and looks its value up when
 * the accumulator has taken it.
 */
typedef struct PtmDelta {
    uint64_t vis;           /* first MI cycle the accumulator may take it */
    uint64_t f;             /* MI edge of its read from the FIFO memory */
    uint64_t window;
    uint32_t value;
    uint32_t channel;
} PtmDelta;

/* The counts of one pass of a segment list a source marked with an id. */
#define PTM_MEMO_SLOTS 64

typedef struct PtmMemo {
    bool valid;
    uint64_t used;                  /* for replacing the least recent */
    uint64_t id;
    uint32_t open_in;
    PtmCountState out;      /* counted from a fresh state (window start) */
    uint64_t *d;
} PtmMemo;

/* Deltas [pos, pos + n) of a probe that found its FIFO full. */
typedef struct PtmLoss {
    uint64_t pos, n;
} PtmLoss;

/* A change of an endpoint's negotiated settings, from MI cycle mi + 1 on. */
#define PTM_SETTINGS_QUEUE 64

typedef struct PtmSettingsChange {
    uint64_t mi;
    unsigned endpoint;
    PtmSettings settings;
} PtmSettingsChange;

/* What a probe's timing looked like at the start of a candidate period. */
typedef struct PtmProbeMark {
    uint64_t window, next_ev, pend_cycle0;
    unsigned pend_n, pend_next, count, nread, nrq;
    uint64_t occ;                   /* w_total - seen */
    uint64_t last_p[2], last_f[2];
    uint64_t *rq;
    PtmDelta *fifo;         /* count entries from the head */
    uint64_t dfront;        /* the next delta to write or lose */
    bool lost, flag;        /* the lost-delta flag and its changes */
    unsigned nflag;
    uint64_t flagv;         /* bit i: the value of change i */
} PtmProbeMark;

/*
 * What a PCIe probe's drain tick sends to the MI side through its bus
 * handshake: the settings and link state of the tick's sample, the free
 * tags and storage-FIFO words then and their lowest since the last word.
 */
typedef struct PtmStatusWord {
    uint64_t at;            /* first MI cycle that reads it */
    uint32_t status;        /* PCIE_STATUS */
    uint16_t tag_now, stf_now, tag_min, stf_min;
} PtmStatusWord;

/*
 * The windows of one period of a periodic source (PtmSourceOps.period),
 * for jumps over a timing that loses deltas: val holds the deltas of
 * windows wbase .. wbase + distinct - 1, window w >= wbase being the same
 * as row (w - wbase) mod distinct while the source's span and id hold;
 * cum[j] the sums of the kept deltas of the rows before j (rows + 1
 * entries, rows a multiple of distinct and of the kept pattern's windows).
 */
typedef struct PtmPeriodTable {
    bool valid;
    uint64_t id, from, until, period;
    uint64_t origin, wbase;
    uint64_t rows, distinct;
    bool quick;             /* distinct from the state's repeat (see ptm-eval.c) */
    unsigned keep_gen;
    uint32_t *val;
    uint64_t *cum;
} PtmPeriodTable;

/*
 * What counting a span of a probe's cycles adds (ptm-probe.c): d[c] before
 * channel c's window ends, carry[c] after; the count state's lowest values
 * before the drain tick's sample (min1), up to the status word (min2, with
 * its last values if has_l2) and after (end, with the last values and the
 * frame-open state at the span's end). Kept for spans a source names.
 */
typedef struct PtmWinStep {
    /* what a lookup compares and the next piece starts from: 64 bytes */
    uint64_t id, len;
    int64_t rel;                    /* the span's start - E */
    PtmCountState last_in, end;     /* (last_in.open: the open state in) */
    uint16_t low_tag, low_stfifo;   /* lowest of min1, min2 and end */
    bool has_l2;
    /* the rest: 64 bytes */
    uint64_t used;
    uint64_t busy;                  /* the probe's busy_gen: a window's */
    PtmCountState min1, min2;
    uint64_t *d, *carry;
} PtmWinStep;

/* Kept steps per probe: sets of four ways by span, at most the maximum. */
#define PTM_STEP_SLOTS 512
#define PTM_STEP_WAYS 4
#define PTM_STEP_SLOTS_MAX 1024

/* Window edges of a probe: offsets after the window's start cycle E. */
#define PTM_MAX_EDGES 40

typedef struct PtmProbe {
    PtmProbeShape sh;
    /*
     * Read-out order (the RTL reads its channels in groups of 8: slot s of
     * every group at once, then the next slot): the k-th FIFO write of a
     * sweep is channel wr_chan[k], wr_off[k] cycles after the first; the
     * window of channel c ends edge[c] cycles after E (one less for the
     * histogram bands, whose decode adds a register).
     */
    unsigned groups;
    unsigned *wr_chan, *wr_off, *pos_of;
    int *edge;
    int edges[PTM_MAX_EDGES];   /* the distinct edges and 1, 2, ascending */
    unsigned nedges;
    unsigned *by_edge, *at_edge;    /* channels grouped by edge */
    uint8_t *first;         /* cycle of the epoch where channel c starts */
    /*
     * Counting runs ahead of the windows: up to cpos = E(counted) + the
     * last edge; carry[c] holds what it counted of window `counted`.
     */
    bool primed;
    uint64_t cpos;
    uint64_t *carry;
    uint64_t wbase;         /* window index of the epoch's window 0 */
    uint64_t cw;            /* windows counted up to (count_windows) */
    bool domain_reset;      /* the epoch began with the probe's own reset */
    /* lowest values since the last status word (PCIe probes) */
    uint16_t rt_tag_min, rt_stf_min;
    /* status words on their way to the MI side, oldest first */
#define PTM_WORDS 64
    PtmStatusWord word[PTM_WORDS];
    unsigned nword;
    /*
     * The handshake signals a word by toggling a level: after an odd
     * number of words the probe's own reset toggles it back, and the MI
     * side takes that for a word of zeros (the data register resets too).
     */
    bool hs_odd;
    bool has_sent;
    PtmStatusWord sent;     /* the last word sent */
    /* an MI reset keeps the running lowest values into the next epoch */
    bool keep_lowest;
    uint16_t keep_tag, keep_stf;
    /*
     * The lost-delta flag as STATUS shows it, and its changes on their way
     * to the MI side (by probe edge; shown from MI cycle `at`).
     */
#define PTM_FLAG_CHANGES 64
    bool flag;
    struct {
        uint64_t k, at;
        bool v;
    } flagq[PTM_FLAG_CHANGES];
    unsigned nflag;
    /*
     * The probe's own reset: its next held cycle, UINT64_MAX if none is
     * known before rst_scan (the source is asked on as drains approach).
     */
    uint64_t rst_at, rst_scan;
    bool ev_reset;          /* next_ev is the reset, not a drain */
    bool lost, overrun;     /* the probe's flags */
    PtmMemo memo[PTM_MEMO_SLOTS];
    uint64_t memo_clock;
    unsigned base;          /* first counter entry */
    unsigned fifo_depth;    /* ITEMS of the FIFO memory */
    /*
     * The FIFO: the ring holds deltas until the accumulator takes them
     * (up to ITEMS in memory, 2 in the output registers, 1 being added);
     * the first nread of them have left the memory for the output
     * registers (f known). The writer sees those reads late: w_total
     * written, `seen` reads seen, rq[] the edges of reads not yet seen.
     */
    unsigned ring_mask;
    unsigned nread;
    uint64_t w_total, seen;
    uint64_t *rq;
    unsigned rq_head, nrq;
    uint64_t last_p[2], last_f[2];  /* pop and read edges of the last two */

    uint64_t origin;        /* absolute cycle that is the probe's cycle 0 */
    uint64_t window;        /* next window to drain */
    PtmCountState cs;
    uint32_t *pend;         /* reference: deltas of the last drain */
    unsigned pend_n, pend_next;
    uint64_t pend_cycle0;   /* absolute cycle at which pend[0] is written */
    PtmDelta *fifo;
    unsigned head, count;
    uint64_t next_ev;       /* MI cycle of the next drain */
    uint64_t mi_ratio;      /* probe cycles per MI cycle if whole, else 0 */
    int mi_shift;           /* log2(mi_ratio) if a power of two, else -1 */

    /*
     * Fast evaluation. Deltas are numbered window x channels + channel;
     * the accumulator takes or loses them in that order. A delta of a
     * window not yet counted carries no value: counting the window adds it.
     */
    uint64_t counted;       /* windows counted from the source */
    GArray *loss;           /* PtmLoss of windows not yet counted */
    uint64_t per_period;    /* windows in one period of the timing */
    PtmProbeMark mark;
    GArray *mark_loss;      /* PtmLoss since the mark */
    /*
     * A timing that repeats with losses: in window w the delta at write
     * position q is kept iff keep[((w - keep_w0) mod keep_nw) * n + q];
     * kept[kept_at[r] .. kept_at[r + 1]) lists the channels kept in
     * residue r.
     */
    unsigned keep_nw;
    uint64_t keep_w0;
    uint8_t *keep;
    unsigned *kept, *kept_at;
    PtmPeriodTable ptab;
    PtmWinStep *wstep;      /* PTM_STEP_SLOTS steps of named spans */
    void *wstep_mem;        /* (what holds them, aligned to a cache line) */
    uint64_t *wstep_tag;    /* their keys (odd), 0: none */
    uint64_t *wstep_vals;
    uint64_t wstep_clock;
    uint64_t busy_gen;      /* one per window counted from kept steps */
    uint32_t *agg_d, *agg_c;        /* see ptm_probe_count_kept */
    bool *agg_used;                 /* slots with counts */
    unsigned *agg_list, agg_n;      /* and where they are listed */
    uint64_t *jump_out;     /* the last windows of a jump, counted */
    /*
     * 0, or the window up to which a lossy jump took windows from a table
     * without counting them: the next count of windows runs from cw on
     * and takes their known sum (PtmCore.defer_sum) off its own.
     */
    uint64_t defer_to;
    uint64_t jump_cap;      /* windows jump_out holds */
} PtmProbe;

struct PtmCore {
    PtmConfig cfg;
    PtmLayout lay;
    uint64_t cnt_mask;
    unsigned nprobes;
    PtmProbe *probe;
    uint64_t *live, *snap;
    const PtmSourceOps *ops;
    void *opaque;
    PtmSettings settings[PTM_MAX_ENDPOINTS];
    PtmSettingsChange changes[PTM_SETTINGS_QUEUE];   /* oldest first */
    unsigned nchanges;
    PtmChunk *chunk;
    uint64_t wacc[256];
    uint64_t wacc_out[256];
    PtmWinStep step;        /* of a stretch no source names */
    uint64_t step_vals[2 * 256];
    uint64_t taken[256];
    uint64_t defer_sum[256];        /* see PtmProbe.defer_to */
    unsigned step_slots;    /* PTM_STEP_SLOTS, or fewer to test */
    GArray *tail;           /* PtmSegment: the cycles around a drain */
    PtmSegment *tail_seg;   /* PTM_CHUNK_SEGMENTS, for counting a piece */

    uint64_t mi_done;       /* MI cycles <= mi_done are simulated */
    uint64_t acc_free;      /* first MI cycle the accumulator is free */
    unsigned rr;            /* stream served last */
    unsigned next_drain;    /* probe with the earliest next_ev */
    /* hot values of every probe, packed for the scans of the event loop */
    uint64_t *drain_at;     /* = probe[i].next_ev */
    uint64_t *offer;        /* = probe_offer(probe[i]) */
    /*
     * SNAPSHOT and CLEAR: a request waits for the accumulator's delta, then
     * the memory is swept (sweep[], in order, applied at their start q);
     * BUSY reads 1 over [busy_start, busy_end); takes from acc_block on
     * wait for the end.
     */
#define PTM_SWEEPS 4
    struct {
        uint64_t q;
        uint32_t bits;
    } sweep[PTM_SWEEPS];
    unsigned nsweep;
    uint64_t sw_q;          /* the last applied sweep: its start, kinds */
    uint32_t sw_bits;
    uint64_t acc_block;
    uint64_t busy_start, busy_end;
    /*
     * The command sweeps its copies one entry at a time: until an entry's
     * turn, reads see what it held before (see entry_read in ptm-core.c).
     */
    uint64_t *live_old, *snap_old;

    bool lost, overrun, read_sel;
    uint64_t low_clear_at;  /* COMMAND bit 3 or CLEAR shows from here */
    uint64_t power_on_ns;   /* the FPGA was configured then */
    uint32_t pcie_status[PTM_MAX_ENDPOINTS];
    uint32_t pcie_tags[PTM_MAX_ENDPOINTS];
    uint32_t pcie_stfifo[PTM_MAX_ENDPOINTS];
    uint64_t n_lost, n_applied;
    bool memo_off;

    /* evaluation */
    bool reference;         /* count at each drain, add each delta's value */
    uint64_t period;        /* MI cycles after which drains repeat, 0: none */
    bool marked;            /* mark_at holds a probe-by-probe mark */
    bool steady;            /* the timing repeats from mark_at on */
    uint64_t mark_at;
    uint64_t mark_hold;     /* no mark before this MI cycle */
    uint64_t mark_acc_free;
    unsigned mark_rr;
    uint64_t mark_lost, mark_applied;
    uint64_t applied_per_period;
    PtmEvalStats stats;
    bool lossy;             /* the repeating timing loses deltas */
    unsigned keep_gen;      /* changes with every new keep pattern */
    uint64_t lost_per_period;
    unsigned mult;          /* the timing repeats every mult x period */
};

#endif
