/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the PG381 model (no API): its state, and what its files share.
 * pg381-timing.c: what the PTC makes of a request and the closed forms
 * of a phase's timing; pg381-core.c: instructions, phases, runs and the
 * registers; pg381-state.c: migration.
 *
 * A run is a sequence of phases, one an instruction (and loop
 * iteration), made in program order as virtual time reaches them. A
 * phase's N requests follow
 *
 *   s_i  handshake (and the transfer's time): s_0 = start, then at least
 *        g after the one before, and not before response i - W (W: the
 *        outstanding window, of the limits and the tags a request needs)
 *   writes  B response b_i = s_i + wc (its MWr frames have left RQ)
 *   reads   completions on RC in order; a_i the end of request i's first
 *        frame (first R beat), f_i of its last (RLAST):
 *        f_i = max(f_{i-1} + C, s_i + L + D),
 *        a_i = max(f_{i-1}, s_i + L) + k1
 *
 * whose solution (the heaviest path through that max-plus recurrence) is,
 * with P = max(g, C), L' = L + D and "saturated" where L' > W P:
 *
 *   s_i = s_0 + i g                                   (i < W)
 *         s_0 + floor(i / W) L' + (i mod W) P         (i >= W, saturated)
 *         s_0 + max(i g, L' + (i - W) P)              (i >= W, not)
 *   f_i = s_0 + (floor(i / W) + 1) L' + (i mod W) P   (saturated)
 *         s_0 + L' + i P                              (not)
 */
#ifndef PG381_INT_H
#define PG381_INT_H

#include <string.h>
#include <glib.h>

#include "pg381-core.h"

#define PG381_RAM_WORDS         (PG381_INSTRS * PG381_INSTR_WORDS)
#define PG381_NO_END            UINT64_MAX
#define PG381_LIMIT_MASK        0xFFFu

typedef unsigned __int128 pg381_u128;

/* What the PTC makes of one request at a given address */
typedef struct Pg381Shape {
    uint32_t m;                 /* read requests (MRd) */
    uint64_t wc;                /* write: RQ cycles of its MWr frames */
    uint64_t C, D, k1;          /* read: RC cycles, span, first frame */
} Pg381Shape;

/* The timing of a phase's requests, in cycles since START */
typedef struct Pg381Timing {
    uint32_t n;                 /* requests */
    uint64_t s0, g;             /* first handshake, least spacing */
    uint64_t wc;                /* write: RQ cycles, its latency; read: 0 */
    uint64_t C, P, Lp, L, k1, W;
    bool sat;
} Pg381Timing;

/* One instruction run once: a READ or WRITE and its requests */
typedef struct Pg381Phase {
    uint8_t cmd;
    uint16_t pc;
    uint32_t iter;              /* of the loop around it */
    uint64_t start;             /* its first handshake */
    uint32_t emitted;           /* requests given to the glue */
    /* derived from the above (pg381_phase_setup()) */
    Pg381Timing tm;
    uint32_t bytes, beats;
    uint64_t a0, base, incr, n0, n1;    /* the addresses */
    uint64_t busy;              /* RQ cycles of a request */
    uint64_t end;               /* the next instruction may start */
    uint64_t last;              /* its last response */
} Pg381Phase;

/* Every counter; the extremes are UINT64_MAX and 0 while none counted */
typedef struct Pg381Totals {
    uint64_t awreq, wlast, bresp, wrbeat;
    uint64_t arreq, rlast, rbeat;
    uint64_t w_n, w_sum, w_best, w_worst;
    uint64_t r_n, r_sum, r_best, r_worst;
    uint64_t win[4];            /* AWREQ, WRBEAT, ARREQ, RBEAT */
} Pg381Totals;

/* What a phase's shape depends on (the residues its addresses visit) */
typedef struct Pg381ShapeKey {
    bool valid, write;
    uint32_t bytes;
    uint64_t m, r0, r1, rd, k0, k1;
} Pg381ShapeKey;

typedef struct Pg381Run {
    bool on;                    /* started since the last (soft) reset */
    uint64_t t0_ns;
    Pg381Pcie pcie;
    uint32_t limit;             /* outstanding, with the mode's */
    bool cap_en;
    uint32_t cap_s, cap_e;
    uint32_t ram[PG381_RAM_WORDS];      /* the program as START found it */
    Pg381Instr prog[PG381_INSTRS];
    uint16_t loop_iters[PG381_INSTRS];  /* of the loop around each */
    uint16_t loop_incr[PG381_INSTRS];   /* its START's loop_addr_incr_by */
    int last_wr, last_rd;       /* each channel's last instruction */
    /* the instruction stream */
    uint32_t pc, iter, loop_pc;
    bool in_loop, ended;
    uint64_t next_t;            /* the next phase may start */
    uint64_t rd_done, wr_done;  /* each channel's last response so far */
    bool wr_final, rd_final, prog_final;
    uint64_t prog_end;
    uint8_t err;
    uint32_t err_pc;
    uint64_t err_cycle;
    bool have_read;
    Pg381Phase last_read;       /* drains before the next read */
    GArray *phases;             /* of Pg381Phase, not yet folded */
    Pg381Totals folded;
} Pg381Run;

struct Pg381Core {
    Pg381Config cfg;
    Pg381Ops ops;
    void *opaque;
    uint64_t lat;               /* the latency in cycles */
    uint64_t q;                 /* RQ cycles of an MRd */
    Pg381Pcie pcie;             /* for the next START */
    uint32_t soft_rst, credit[2], limit_reg;
    uint32_t cap_en, cap_s, cap_e;
    uint32_t ram[PG381_RAM_WORDS];
    uint32_t al[PG381_AL_COUNT];
    Pg381Totals base;           /* the runs before this one */
    uint64_t base_wr_eff, base_rd_eff;
    Pg381Run run;
    Pg381ShapeKey key[PG381_INSTRS];
    Pg381Shape shape[PG381_INSTRS];
};

/* ---- pg381-timing.c ---------------------------------------------- */

uint64_t pg381_div_up(uint64_t a, uint64_t b);
/* The shape a phase's requests are timed with (its slowest) */
void pg381_phase_shape(Pg381Core *s, const Pg381Phase *ph, Pg381Shape *out);
/* Request i's handshake, B or RLAST, first response, beats counted */
uint64_t pg381_req_at(const Pg381Timing *t, uint64_t i);
uint64_t pg381_done_at(const Pg381Timing *t, uint64_t i);
uint64_t pg381_first_at(const Pg381Timing *t, uint64_t i);
uint64_t pg381_beats_at(const Pg381Timing *t, uint64_t i);
typedef uint64_t Pg381At(const Pg381Timing *t, uint64_t i);
/* How many of the requests' events `at` lie at or before cycle c */
uint64_t pg381_count_le(const Pg381Timing *t, Pg381At *at, uint64_t c);
/* Events in the capture window [s, e) by cycle c */
uint64_t pg381_in_window(const Pg381Timing *t, Pg381At *at, uint64_t s,
                         uint64_t e, uint64_t c);
uint64_t pg381_latency(const Pg381Timing *t, uint64_t i);
/* The latencies of the first k requests: sum added, extremes merged */
void pg381_latencies(const Pg381Timing *t, uint64_t k, uint64_t *sum,
                     uint64_t *best, uint64_t *worst);

/* ---- pg381-core.c ------------------------------------------------ */

/* A phase's addresses and timing from (pc, iter, start): 0 or PG381_ERR_* */
uint8_t pg381_phase_setup(Pg381Core *s, Pg381Phase *ph);
void pg381_run_clear(Pg381Run *r);
/* Decodes the run's program and checks it (an error stops the run) */
void pg381_run_check(Pg381Core *s);

#endif
