/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PG381 model (pg381-core.h, docs/pg381.md): instructions, the run
 * as phases made in program order as virtual time reaches them
 * (pg381-int.h), counting, and the registers. The timing of a phase is
 * pg381-timing.c's, its state's migration pg381-state.c's.
 */
#include "pg381-int.h"

/* ------------------------------------------------------------------ */
/* Instructions                                                       */

uint32_t pg381_instr_bytes(const Pg381Instr *in)
{
    return (uint32_t)(in->len + 1) << MIN(in->size, 12);
}

void pg381_instr_encode(const Pg381Instr *in, uint32_t w[PG381_INSTR_WORDS])
{
    memset(w, 0, PG381_INSTR_WORDS * 4);
    w[0] = (in->cmd & PG381_CMD_MASK) |
           (in->last ? PG381_C_LAST : 0) |
           (in->loop_start ? PG381_C_LOOP_START : 0) |
           (in->loop_end ? PG381_C_LOOP_END : 0) |
           (in->id_incr ? PG381_C_ID_INCR : 0) |
           (in->addr_auto ? PG381_C_ADDR_AUTO : 0) |
           (uint32_t)(in->wait & 3) << PG381_C_WAIT_SHIFT |
           (in->data_integrity ? PG381_C_DI : 0) |
           (uint32_t)(in->pattern & 3) << PG381_C_PAT_SHIFT;
    w[1] = in->count;
    w[2] = in->start_delay;
    w[3] = in->len | (uint32_t)(in->size & 7) << 8 |
           (uint32_t)(in->burst & 3) << 12 | (uint32_t)(in->lock & 1) << 14 |
           (uint32_t)(in->cache & 15) << 16 | (uint32_t)(in->prot & 7) << 20 |
           (uint32_t)(in->qos & 15) << 24 | (uint32_t)(in->region & 15) << 28;
    w[4] = in->id | (uint32_t)in->user << 16;
    w[5] = in->pattern_value;
    w[6] = (uint32_t)in->base;
    w[7] = in->base >> 32;
    w[8] = (uint32_t)in->high;
    w[9] = in->high >> 32;
    w[10] = (uint32_t)in->offset;
    w[11] = in->offset >> 32;
    w[12] = (uint32_t)in->incr;
    w[13] = in->incr >> 32;
    w[14] = in->loop_count | (uint32_t)in->loop_incr << 16;
}

void pg381_instr_decode(const uint32_t w[PG381_INSTR_WORDS], Pg381Instr *out)
{
    *out = (Pg381Instr) {
        .cmd = w[0] & PG381_CMD_MASK,
        .last = w[0] & PG381_C_LAST,
        .loop_start = w[0] & PG381_C_LOOP_START,
        .loop_end = w[0] & PG381_C_LOOP_END,
        .id_incr = w[0] & PG381_C_ID_INCR,
        .addr_auto = w[0] & PG381_C_ADDR_AUTO,
        .wait = (w[0] >> PG381_C_WAIT_SHIFT) & 3,
        .data_integrity = w[0] & PG381_C_DI,
        .pattern = (w[0] >> PG381_C_PAT_SHIFT) & 3,
        .count = w[1],
        .start_delay = w[2],
        .len = w[3] & 0xFF,
        .size = (w[3] >> 8) & 7,
        .burst = (w[3] >> 12) & 3,
        .lock = (w[3] >> 14) & 1,
        .cache = (w[3] >> 16) & 15,
        .prot = (w[3] >> 20) & 7,
        .qos = (w[3] >> 24) & 15,
        .region = (w[3] >> 28) & 15,
        .id = w[4] & 0xFFFF,
        .user = (w[4] >> 16) & 0xFF,
        .pattern_value = w[5],
        .base = w[6] | (uint64_t)w[7] << 32,
        .high = w[8] | (uint64_t)w[9] << 32,
        .offset = w[10] | (uint64_t)w[11] << 32,
        .incr = w[12] | (uint64_t)w[13] << 32,
        .loop_count = w[14] & 0xFFFF,
        .loop_incr = w[14] >> 16,
    };
}

/* ------------------------------------------------------------------ */
/* Configuration and clocks                                           */

static bool pow2(uint64_t x)
{
    return x && !(x & (x - 1));
}

char *pg381_config_check(const Pg381Config *cfg)
{
    if (cfg->clock_hz < 1000000 || cfg->clock_hz > 4000000000ull) {
        return g_strdup_printf("a clock of %" G_GUINT64_FORMAT " Hz is "
                               "outside 1 MHz to 4 GHz", cfg->clock_hz);
    }
    if (!cfg->rq_bytes || !cfg->rc_bytes || cfg->rq_bytes > 4096 ||
        cfg->rc_bytes > 4096) {
        return g_strdup_printf("RQ and RC carry 1 to 4096 bytes a cycle, "
                               "not %u and %u", cfg->rq_bytes, cfg->rc_bytes);
    }
    if (!cfg->rq_hdr || cfg->rq_hdr > 64 || !cfg->rc_hdr ||
        cfg->rc_hdr > 64) {
        return g_strdup("TLP headers of 1 to 64 bytes");
    }
    if (cfg->latency_ns > 1000000000u) {
        return g_strdup("a completion latency over 1 s");
    }
    return NULL;
}

char *pg381_pcie_check(const Pg381Pcie *p)
{
    if (!pow2(p->mps) || p->mps < 128 || p->mps > 4096 ||
        !pow2(p->mrrs) || p->mrrs < 128 || p->mrrs > 4096) {
        return g_strdup_printf("MPS %u and MRRS %u: powers of 2 from 128 "
                               "to 4096", p->mps, p->mrrs);
    }
    if (p->rcb != 64 && p->rcb != 128) {
        return g_strdup_printf("an RCB of %u bytes (64 or 128)", p->rcb);
    }
    if (!p->tags) {
        return g_strdup("no tags");
    }
    return NULL;
}

/* The cycle now_ns falls in, false before START */
static bool cycle_at(const Pg381Core *s, uint64_t now, uint64_t *c)
{
    if (now < s->run.t0_ns) {
        return false;
    }
    *c = (uint64_t)((pg381_u128)(now - s->run.t0_ns) * s->cfg.clock_hz /
                    1000000000u);
    return true;
}

/* The first ns of cycle c */
static uint64_t ns_of(const Pg381Core *s, uint64_t c)
{
    pg381_u128 ns = ((pg381_u128)c * 1000000000u + s->cfg.clock_hz - 1) /
                    s->cfg.clock_hz;

    return s->run.t0_ns + (uint64_t)MIN(ns, (pg381_u128)(UINT64_MAX / 2));
}

/* ------------------------------------------------------------------ */
/* Phases                                                             */

/* The k-th value of first, first + d, ... restarting at `restart` past top */
static uint64_t wrap_seq(uint64_t first, uint64_t restart, uint64_t d,
                         uint64_t top, uint64_t k, uint64_t *n0,
                         uint64_t *n1)
{
    *n0 = d ? (top - first) / d + 1 : PG381_NO_END;
    *n1 = d ? (top - restart) / d + 1 : PG381_NO_END;
    return k < *n0 ? first + k * d : restart + (k - *n0) % *n1 * d;
}

static uint64_t phase_addr(const Pg381Phase *ph, uint64_t i)
{
    return i < ph->n0 ? ph->a0 + i * ph->incr
                      : ph->base + (i - ph->n0) % ph->n1 * ph->incr;
}

uint8_t pg381_phase_setup(Pg381Core *s, Pg381Phase *ph)
{
    const Pg381Instr *in = &s->run.prog[ph->pc];
    uint64_t bytes = pg381_instr_bytes(in), top, off, x;
    Pg381Shape sh;
    Pg381Timing *t = &ph->tm;

    ph->bytes = bytes;
    ph->beats = in->len + 1;
    ph->base = in->base;
    ph->incr = in->addr_auto ? bytes : in->incr;
    if (in->high < in->base || in->high - in->base < bytes - 1 ||
        in->offset > in->high - in->base - (bytes - 1)) {
        return PG381_ERR_ADDR;      /* checked at START, but for a state */
    }
    top = in->high - (bytes - 1);   /* the last start address */
    /* the loop's offset: on by loop_incr, from 0 again past the top */
    off = wrap_seq(in->offset, 0, s->run.loop_incr[ph->pc], top - in->base,
                   ph->iter, &x, &x);
    ph->a0 = in->base + off;
    wrap_seq(ph->a0, in->base, ph->incr, top, 0, &ph->n0, &ph->n1);
    memset(t, 0, sizeof(*t));
    t->n = in->count;
    t->s0 = ph->start;
    pg381_phase_shape(s, ph, &sh);
    if (ph->cmd == PG381_CMD_WRITE) {
        t->wc = sh.wc;
        t->g = sh.wc + in->start_delay;
        ph->busy = sh.wc;
    } else {
        t->g = sh.m * s->q + in->start_delay;
        t->C = sh.C;
        t->P = MAX(t->g, sh.C);
        t->L = s->lat;
        t->Lp = s->lat + sh.D;
        t->k1 = sh.k1;
        t->W = MIN(s->run.limit, s->run.pcie.tags / sh.m);
        if (!t->W) {
            return PG381_ERR_LIMIT; /* more tags than the card has */
        }
        t->sat = t->Lp > t->W * t->P;
        ph->busy = (uint64_t)sh.m * s->q;
    }
    ph->end = pg381_req_at(t, t->n - 1) + ph->busy;
    ph->last = pg381_done_at(t, t->n - 1);
    return 0;
}

/* Whether every byte a phase touches is guest memory */
static bool phase_memory_ok(Pg381Core *s, const Pg381Phase *ph)
{
    uint64_t n = ph->tm.n, k0 = MIN(n, ph->n0);

    if (!s->ops.mem_valid) {
        return true;
    }
    if (!s->ops.mem_valid(s->opaque, ph->a0, (k0 - 1) * ph->incr +
                          ph->bytes)) {
        return false;
    }
    return n <= ph->n0 ||
           s->ops.mem_valid(s->opaque, ph->base,
                            (MIN(n - ph->n0, ph->n1) - 1) * ph->incr +
                            ph->bytes);
}

static void run_error(Pg381Run *r, uint8_t why, uint32_t pc, uint64_t cycle)
{
    r->err = why;
    r->err_pc = pc;
    r->err_cycle = cycle;
    r->ended = true;
}

/* Gives a phase's requests made by cycle c to the glue */
static void emit(Pg381Core *s, Pg381Phase *ph, uint64_t c)
{
    uint64_t upto = pg381_count_le(&ph->tm, pg381_req_at, c);
    const Pg381Instr *in = &s->run.prog[ph->pc];
    bool write = ph->cmd == PG381_CMD_WRITE;
    uint8_t buf[PG381_MAX_BYTES];

    if (!s->ops.transfer && !(write && s->ops.mem_write)) {
        ph->emitted = upto;
        return;
    }
    for (; ph->emitted < upto; ph->emitted++) {
        uint64_t a = phase_addr(ph, ph->emitted);

        if (write && s->ops.mem_write) {
            /* byte x of the pattern: byte x mod 4 of its word */
            for (uint32_t b = 0; b < ph->bytes; b++) {
                uint64_t x = a + b;
                uint32_t word = in->pattern == PG381_PAT_ADDR
                                ? (uint32_t)(x & ~3ull) : in->pattern_value;

                buf[b] = word >> (8 * (x & 3));
            }
            s->ops.mem_write(s->opaque, a, buf, ph->bytes);
        }
        if (s->ops.transfer) {
            s->ops.transfer(s->opaque,
                            ns_of(s, pg381_req_at(&ph->tm, ph->emitted)),
                            write, a, ph->bytes);
        }
    }
}

/* Is (pc, iter) the last time its channel runs in the program? */
static bool channel_last(const Pg381Run *r, int last_pc)
{
    return (int)r->pc == last_pc &&
           (!r->in_loop || r->iter + 1 >= r->loop_iters[r->pc]);
}

/* Makes the phase of the instruction at pc, from r->next_t on */
static void make_phase(Pg381Core *s)
{
    Pg381Run *r = &s->run;
    const Pg381Instr *in = &r->prog[r->pc];
    uint64_t t = r->next_t, end;
    Pg381Phase ph = { .cmd = in->cmd, .pc = r->pc };
    uint8_t why;

    if (in->loop_start && !r->in_loop) {
        r->in_loop = true;
        r->loop_pc = r->pc;
        r->iter = 0;
    }
    ph.iter = r->in_loop ? r->iter : 0;
    if (in->cmd == PG381_CMD_WAIT) {
        end = t;
        if (in->wait == PG381_WAIT_CLOCKS) {
            end = t + in->count;
        }
        if (in->wait & PG381_WAIT_WR) {
            end = MAX(end, r->wr_done);
        }
        if (in->wait & PG381_WAIT_RD) {
            end = MAX(end, r->rd_done);
        }
    } else {
        uint64_t from = t;

        if (in->cmd == PG381_CMD_READ) {
            from = MAX(t, r->rd_done);  /* the reads before have drained */
        } else if (s->cfg.out_of_order && r->have_read &&
                   r->last_read.tm.n >= r->limit) {
            /* 128 in all: until the reads still out are fewer */
            from = MAX(t, pg381_done_at(&r->last_read.tm,
                                        r->last_read.tm.n - r->limit));
        }
        ph.start = from + in->start_delay;
        why = pg381_phase_setup(s, &ph);
        if (why) {
            run_error(r, why, r->pc, t);
            return;
        }
        if (!phase_memory_ok(s, &ph)) {
            run_error(r, PG381_ERR_MEMORY, r->pc, t);
            return;
        }
        end = ph.end;
        if (in->cmd == PG381_CMD_READ) {
            r->rd_done = ph.last;
            r->last_read = ph;
            r->have_read = true;
            r->rd_final |= channel_last(r, r->last_rd);
        } else {
            r->wr_done = MAX(r->wr_done, ph.last);
            r->wr_final |= channel_last(r, r->last_wr);
        }
        g_array_append_val(r->phases, ph);
    }
    r->next_t = end;
    if (in->loop_end && r->in_loop) {
        if (++r->iter < r->loop_iters[r->pc]) {
            r->pc = r->loop_pc;
            return;
        }
        r->in_loop = false;
        r->iter = 0;
    }
    if (in->last) {
        r->ended = r->prog_final = true;
        r->prog_end = end;
        return;
    }
    r->pc++;
}

/* ------------------------------------------------------------------ */
/* Counting                                                           */

static void merge_best(uint64_t *best, uint64_t *worst, uint64_t b,
                       uint64_t w)
{
    *best = MIN(*best, b);
    *worst = MAX(*worst, w);
}

/* What a phase counted by cycle c */
static void phase_add(const Pg381Run *r, const Pg381Phase *ph, uint64_t c,
                      Pg381Totals *t)
{
    const Pg381Timing *tm = &ph->tm;
    uint64_t s = r->cap_s, e = r->cap_e;
    uint64_t req = pg381_count_le(tm, pg381_req_at, c);
    uint64_t beats = pg381_count_le(tm, pg381_beats_at, c);
    uint64_t resp = pg381_count_le(tm, pg381_first_at, c);
    uint64_t sum = 0, best = UINT64_MAX, worst = 0;

    pg381_latencies(tm, resp, &sum, &best, &worst);
    if (ph->cmd == PG381_CMD_WRITE) {
        t->awreq += req;
        t->wlast += beats;
        t->wrbeat += beats * ph->beats;
        t->bresp += resp;
        t->w_n += resp;
        t->w_sum += sum;
        merge_best(&t->w_best, &t->w_worst, best, worst);
        if (r->cap_en) {
            t->win[0] += pg381_in_window(tm, pg381_req_at, s, e, c);
            t->win[1] += pg381_in_window(tm, pg381_beats_at, s, e, c) *
                         ph->beats;
        }
        return;
    }
    t->arreq += req;
    t->rlast += beats;
    t->rbeat += beats * ph->beats;
    t->r_n += resp;
    t->r_sum += sum;
    merge_best(&t->r_best, &t->r_worst, best, worst);
    if (r->cap_en) {
        t->win[2] += pg381_in_window(tm, pg381_req_at, s, e, c);
        t->win[3] += pg381_in_window(tm, pg381_beats_at, s, e, c) * ph->beats;
    }
}

static void totals_clear(Pg381Totals *t)
{
    memset(t, 0, sizeof(*t));
    t->w_best = t->r_best = UINT64_MAX;
}

static void totals_merge(Pg381Totals *t, const Pg381Totals *u)
{
    t->awreq += u->awreq;
    t->wlast += u->wlast;
    t->bresp += u->bresp;
    t->wrbeat += u->wrbeat;
    t->arreq += u->arreq;
    t->rlast += u->rlast;
    t->rbeat += u->rbeat;
    t->w_n += u->w_n;
    t->w_sum += u->w_sum;
    merge_best(&t->w_best, &t->w_worst, u->w_best, u->w_worst);
    t->r_n += u->r_n;
    t->r_sum += u->r_sum;
    merge_best(&t->r_best, &t->r_worst, u->r_best, u->r_worst);
    for (unsigned i = 0; i < 4; i++) {
        t->win[i] += u->win[i];
    }
}

/* Fold what has ended by cycle c into the run's totals */
static void fold(Pg381Core *s, uint64_t c)
{
    Pg381Run *r = &s->run;

    for (guint i = 0; i < r->phases->len;) {
        Pg381Phase *ph = &g_array_index(r->phases, Pg381Phase, i);

        if (ph->last <= c && ph->emitted == ph->tm.n) {
            phase_add(r, ph, ph->last, &r->folded);
            g_array_remove_index(r->phases, i);
        } else {
            i++;
        }
    }
}

/* Brings the run up to virtual time now */
static void run_to(Pg381Core *s, uint64_t now, uint64_t *cycle)
{
    Pg381Run *r = &s->run;
    uint64_t c;

    if (!r->on || !cycle_at(s, now, &c)) {
        return;
    }
    for (;;) {
        if (r->phases->len) {
            emit(s, &g_array_index(r->phases, Pg381Phase,
                                   r->phases->len - 1), c);
        }
        if (r->ended || r->next_t > c) {
            break;
        }
        make_phase(s);
    }
    fold(s, c);
    if (cycle) {
        *cycle = c;
    }
}

void pg381_advance(Pg381Core *s, uint64_t now_ns)
{
    run_to(s, now_ns, NULL);
}

uint64_t pg381_next_ns(Pg381Core *s)
{
    Pg381Run *r = &s->run;

    if (!r->on || (!s->ops.transfer && !s->ops.mem_write)) {
        return UINT64_MAX;
    }
    if (r->phases->len) {
        Pg381Phase *ph = &g_array_index(r->phases, Pg381Phase,
                                        r->phases->len - 1);

        if (ph->emitted < ph->tm.n) {
            return ns_of(s, pg381_req_at(&ph->tm, ph->emitted));
        }
    }
    return r->ended ? UINT64_MAX : ns_of(s, r->next_t);
}

static bool err_seen(const Pg381Run *r, uint64_t c)
{
    return r->err && c >= r->err_cycle;
}

/* Done: 200 cycles after both channels and the program, PG381_NO_END unknown */
static uint64_t done_cycle(const Pg381Run *r)
{
    if (!r->wr_final || !r->rd_final || !r->prog_final || r->err) {
        return PG381_NO_END;
    }
    return MAX(MAX(r->wr_done, r->rd_done), r->prog_end) + PG381_DONE_DELAY;
}

static bool running(const Pg381Run *r, uint64_t c)
{
    return r->on && !err_seen(r, c) && c < done_cycle(r);
}

/* A channel's effective cycles of this run by cycle c */
static uint64_t eff_cycles(const Pg381Run *r, bool fin, uint64_t done,
                           uint64_t c)
{
    if (!r->on) {
        return 0;
    }
    if (r->err) {
        c = MIN(c, r->err_cycle);
    }
    return fin ? MIN(c, done) : c;
}

/* Every counter at cycle c: the runs before, and this one */
static void counters(Pg381Core *s, uint64_t c, Pg381Totals *t, uint64_t *wr_eff,
                     uint64_t *rd_eff)
{
    Pg381Run *r = &s->run;
    Pg381Totals run = r->folded;

    for (guint i = 0; i < r->phases->len; i++) {
        phase_add(r, &g_array_index(r->phases, Pg381Phase, i), c, &run);
    }
    *t = s->base;
    memset(t->win, 0, sizeof(t->win));     /* the window is this run's */
    totals_merge(t, &run);
    *wr_eff = s->base_wr_eff + eff_cycles(r, r->wr_final, r->wr_done, c);
    *rd_eff = s->base_rd_eff + eff_cycles(r, r->rd_final, r->rd_done, c);
}

static uint32_t flow_empty(const Pg381Run *r, uint64_t c)
{
    uint32_t v = 0;

    if (!r->on) {
        return PG381_FE_EMPTY;
    }
    if (err_seen(r, c)) {
        v |= PG381_FE_ERROR | PG381_FE_EMPTY;
    }
    if (r->wr_final && c >= r->wr_done) {
        v |= PG381_FE_WR_DONE;
    }
    if (r->rd_final && c >= r->rd_done) {
        v |= PG381_FE_RD_DONE;
    }
    if (c >= done_cycle(r)) {
        v |= PG381_FE_DONE;
    }
    if (r->prog_final && c >= r->prog_end) {
        v |= PG381_FE_EMPTY;
    }
    return v;
}

/* A status register at cycle c (the run's counters t) */
static uint32_t status(Pg381Core *s, uint32_t off, uint64_t c,
                       const Pg381Totals *t, uint64_t wr_eff, uint64_t rd_eff)
{
    switch (off) {
    case PG381_RBEAT:
        return t->rbeat;
    case PG381_ARREQ:
        return t->arreq;
    case PG381_RLAST:
        return t->rlast;
    case PG381_RBW_EFF_CLK:
        return rd_eff;
    case PG381_RWORST:
        return t->r_worst;
    case PG381_RBEST:
        return t->r_n ? t->r_best : 0;
    case PG381_RAVG:
        return t->r_sum;
    case PG381_AWREQ:
        return t->awreq;
    case PG381_WLAST:
        return t->wlast;
    case PG381_BRESP:
        return t->bresp;
    case PG381_WRBEAT:
        return t->wrbeat;
    case PG381_WBW_EFF_CLK:
        return wr_eff;
    case PG381_WWORST:
        return t->w_worst;
    case PG381_WBEST:
        return t->w_n ? t->w_best : 0;
    case PG381_WAVG:
        return t->w_sum;
    case PG381_FLOW_EMPTY:
        return flow_empty(&s->run, c);
    case PG381_WIN_AWREQ:
    case PG381_WIN_WRBEAT:
    case PG381_WIN_ARREQ:
    case PG381_WIN_RBEAT:
        return t->win[(off - PG381_WIN_AWREQ) / 4];
    default:
        /* DI_ERR, the EXOKAY/SLVERR/DECERR counts, VLD_RDY: all 0 */
        return 0;
    }
}

/* ------------------------------------------------------------------ */
/* Runs                                                               */

void pg381_run_clear(Pg381Run *r)
{
    GArray *phases = r->phases;

    memset(r, 0, sizeof(*r));
    r->phases = phases;
    g_array_set_size(phases, 0);
    r->last_wr = r->last_rd = -1;
    totals_clear(&r->folded);
}

/*
 * The program's structure and fields, before anything is issued: the
 * first instruction that breaks a rule stops the run at once.
 */
void pg381_run_check(Pg381Core *s)
{
    Pg381Run *r = &s->run;
    int last = -1, loop = -1;

    for (unsigned k = 0; k < PG381_INSTRS; k++) {
        pg381_instr_decode(&r->ram[k * PG381_INSTR_WORDS], &r->prog[k]);
        if (last < 0 && r->prog[k].last) {
            last = k;
        }
    }
    if (last < 0) {
        run_error(r, PG381_ERR_NO_LAST, PG381_INSTRS - 1, 0);
        return;
    }
    if (!r->limit) {
        run_error(r, PG381_ERR_LIMIT, 0, 0);
        return;
    }
    for (int k = 0; k <= last; k++) {
        const Pg381Instr *in = &r->prog[k];
        uint64_t bytes = (uint64_t)(in->len + 1) << in->size;
        uint8_t why = 0;

        if (in->loop_start) {
            if (loop >= 0) {
                why = PG381_ERR_LOOP;
            } else if (!in->loop_count) {
                why = PG381_ERR_ZERO;
            }
            loop = k;
        }
        r->loop_iters[k] = loop >= 0 ? r->prog[loop].loop_count : 1;
        r->loop_incr[k] = loop >= 0 ? r->prog[loop].loop_incr : 0;
        if (in->loop_end && loop < 0) {
            why = PG381_ERR_LOOP;
        }
        if (in->cmd == PG381_CMD_READ || in->cmd == PG381_CMD_WRITE) {
            if (!in->count) {
                why = why ? why : PG381_ERR_ZERO;
            } else if (in->count > PG381_MAX_REQUESTS ||
                       bytes > PG381_MAX_BYTES) {
                why = why ? why : PG381_ERR_TOO_LONG;
            } else if (in->burst != PG381_BURST_INCR) {
                why = why ? why : PG381_ERR_BURST;
            } else if (in->id_incr != s->cfg.out_of_order) {
                why = why ? why : PG381_ERR_ID;
            } else if (in->high < in->base ||
                       in->high - in->base < bytes - 1 ||
                       in->offset > in->high - in->base - (bytes - 1)) {
                why = why ? why : PG381_ERR_ADDR;
            }
            if (in->cmd == PG381_CMD_WRITE) {
                r->last_wr = k;
            } else {
                r->last_rd = k;
            }
        } else if (in->cmd != PG381_CMD_WAIT) {
            why = why ? why : PG381_ERR_CMD;
        }
        if (in->loop_end && loop >= 0) {
            loop = -1;
        }
        if (k == last && loop >= 0) {
            why = why ? why : PG381_ERR_LOOP;
        }
        if (why) {
            run_error(r, why, k, 0);
            return;
        }
    }
    /* a channel with nothing to do is done from the start */
    r->wr_final = r->last_wr < 0;
    r->rd_final = r->last_rd < 0;
}

static void run_start(Pg381Core *s, uint64_t now, uint64_t c)
{
    Pg381Run *r = &s->run;

    if (r->on) {
        /* counters clear only by soft reset: the last run's stay */
        Pg381Totals t;
        uint64_t w, rd;

        counters(s, c, &t, &w, &rd);
        t.win[0] = t.win[1] = t.win[2] = t.win[3] = 0;
        s->base = t;
        s->base_wr_eff = w;
        s->base_rd_eff = rd;
    }
    pg381_run_clear(r);
    memset(s->key, 0, sizeof(s->key));
    r->on = true;
    r->t0_ns = now;
    r->pcie = s->pcie;
    r->limit = MIN(s->limit_reg & PG381_LIMIT_MASK,
                   s->cfg.out_of_order ? PG381_OOO_MAX : PG381_INORDER_MAX);
    r->cap_en = s->cap_en & 1;
    r->cap_s = s->cap_s;
    r->cap_e = s->cap_e;
    memcpy(r->ram, s->ram, sizeof(r->ram));
    pg381_run_check(s);
}

/* Soft reset (and power-on): the run and every counter cleared */
static void soft_reset(Pg381Core *s)
{
    pg381_run_clear(&s->run);
    totals_clear(&s->base);
    s->base_wr_eff = s->base_rd_eff = 0;
    memset(s->al, 0, sizeof(s->al));
}

/* ------------------------------------------------------------------ */
/* Registers                                                          */

Pg381Core *pg381_new(const Pg381Config *cfg, const Pg381Ops *ops,
                     void *opaque)
{
    Pg381Core *s = g_new0(Pg381Core, 1);
    Pg381Pcie p = { .mps = 256, .mrrs = 512, .rcb = 64, .tags = 32 };

    s->cfg = *cfg;
    s->ops = *ops;
    s->opaque = opaque;
    s->lat = pg381_div_up((pg381_u128)cfg->latency_ns * cfg->clock_hz,
                          1000000000u);
    s->q = pg381_div_up(cfg->rq_hdr, cfg->rq_bytes);
    s->pcie = p;
    s->run.phases = g_array_new(FALSE, FALSE, sizeof(Pg381Phase));
    pg381_reset(s);
    return s;
}

void pg381_free(Pg381Core *s)
{
    if (s) {
        g_array_free(s->run.phases, TRUE);
        g_free(s);
    }
}

void pg381_reset(Pg381Core *s)
{
    soft_reset(s);
    s->soft_rst = 1;
    s->credit[0] = s->credit[1] = 0;
    s->limit_reg = PG381_LIMIT_MASK;
    s->cap_en = s->cap_s = s->cap_e = 0;
    memset(s->ram, 0, sizeof(s->ram));
}

void pg381_set_pcie(Pg381Core *s, const Pg381Pcie *p)
{
    g_autofree char *err = pg381_pcie_check(p);

    if (!err) {
        s->pcie = *p;
    }
}

static uint32_t prog_len(const Pg381Core *s)
{
    for (unsigned k = 0; k < PG381_INSTRS; k++) {
        if (s->ram[k * PG381_INSTR_WORDS] & PG381_C_LAST) {
            return k + 1;
        }
    }
    return 0;
}

uint32_t pg381_read(Pg381Core *s, uint32_t off, uint64_t now_ns)
{
    Pg381Run *r = &s->run;
    uint64_t c = 0;
    Pg381Totals t;
    uint64_t w, rd;

    if (off & 3 || off >= PG381_WINDOW) {
        return 0;
    }
    run_to(s, now_ns, &c);
    if (off >= PG381_RAM) {
        return s->ram[(off - PG381_RAM) / 4];
    }
    switch (off) {
    case PG381_SOFT_RST:
        return s->soft_rst;
    case PG381_START:
        return running(r, c);
    case PG381_CREDIT_FLOW0:
    case PG381_CREDIT_FLOW1:
        return s->credit[(off - PG381_CREDIT_FLOW0) / 4];
    case PG381_OUTSTND_RESP_LIMIT:
        return s->limit_reg;
    case PG381_CAPTURE_ENABLE:
        return s->cap_en;
    case PG381_CAPTURE_START:
        return s->cap_s;
    case PG381_CAPTURE_END:
        return s->cap_e;
    case PG381_CARD_ID:
        return PG381_CARD_MAGIC;
    case PG381_CARD_PARAMS:
        return s->cfg.out_of_order | s->cfg.data_integrity << 1;
    case PG381_CARD_CLOCK:
        return s->cfg.clock_hz;
    case PG381_CARD_ERROR:
        return err_seen(r, c) ? PG381_ERR_VALID |
               (uint32_t)r->err << PG381_ERR_REASON_SHIFT | r->err_pc : 0;
    case PG381_CARD_PROG_LEN:
        return prog_len(s);
    }
    if (off >= PG381_AL_BASE && off < PG381_AL_BASE + 4 * PG381_AL_COUNT) {
        return s->al[(off - PG381_AL_BASE) / 4];
    }
    if (off < PG381_STATUS_BASE || off > PG381_WIN_RBEAT) {
        return 0;
    }
    counters(s, c, &t, &w, &rd);
    if (off == PG381_CAPTURE_ALL) {
        /* one instant for every copy */
        for (unsigned k = 0; k < PG381_AL_COUNT; k++) {
            s->al[k] = status(s, PG381_STATUS_BASE + 4 * k, c, &t, w, rd);
        }
        return 0;
    }
    return status(s, off, c, &t, w, rd);
}

void pg381_write(Pg381Core *s, uint32_t off, uint32_t val, uint64_t now_ns)
{
    Pg381Run *r = &s->run;
    uint64_t c = 0;

    if (off & 3 || off >= PG381_WINDOW) {
        return;
    }
    run_to(s, now_ns, &c);
    if (off >= PG381_RAM) {
        /* the program is read at START; a run's stays as it was */
        if (!running(r, c)) {
            s->ram[(off - PG381_RAM) / 4] = val;
        }
        return;
    }
    switch (off) {
    case PG381_SOFT_RST:
        if (!(val & 1) && (s->soft_rst & 1)) {
            soft_reset(s);
        }
        s->soft_rst = val & 1;
        return;
    case PG381_START:
        if ((val & 1) && (s->soft_rst & 1) && !running(r, c)) {
            run_start(s, now_ns, c);
        }
        return;
    case PG381_CREDIT_FLOW0:
    case PG381_CREDIT_FLOW1:
        s->credit[(off - PG381_CREDIT_FLOW0) / 4] = val;
        return;
    case PG381_OUTSTND_RESP_LIMIT:
        s->limit_reg = val & PG381_LIMIT_MASK;
        return;
    case PG381_CAPTURE_ENABLE:
        s->cap_en = val & 1;
        return;
    case PG381_CAPTURE_START:
        s->cap_s = val;
        return;
    case PG381_CAPTURE_END:
        s->cap_e = val;
        return;
    }
}

void pg381_load_program(Pg381Core *s, const Pg381Instr *prog, unsigned n,
                        uint64_t now_ns)
{
    for (unsigned k = 0; k < MIN(n, PG381_INSTRS); k++) {
        uint32_t w[PG381_INSTR_WORDS];

        pg381_instr_encode(&prog[k], w);
        for (unsigned i = 0; i < PG381_INSTR_WORDS; i++) {
            pg381_write(s, PG381_INSTR(k) + 4 * i, w[i], now_ns);
        }
    }
}

