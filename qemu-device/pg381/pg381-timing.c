/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PG381 model's timing (pg381-int.h): what the PTC makes of one
 * request (docs/dma.md's rule), and a phase's events and latencies in
 * closed form. Counts at a cycle are how many events lie at or before it
 * (a binary search over monotone closed forms); latency sums, best and
 * worst come from a clamped linear term and, once saturated, a term of
 * two values, without going request by request.
 */
#include "pg381-int.h"

typedef __int128 s128;

uint64_t pg381_div_up(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

/* [addr, end) up to the next multiple of align (a power of 2) */
static uint64_t piece(uint64_t addr, uint64_t end, uint64_t align)
{
    return MIN((addr | (align - 1)) + 1, end) - addr;
}

/* ---- the PTC rule ------------------------------------------------- */

static void shape_at(const Pg381Core *s, bool write, uint64_t addr,
                     uint32_t bytes, Pg381Shape *sh)
{
    const Pg381Pcie *p = &s->run.pcie;
    uint64_t end = addr + bytes, K = 0;
    int64_t most = INT64_MIN;
    uint32_t j = 0;

    memset(sh, 0, sizeof(*sh));
    if (write) {
        /* one MWr per MPS-aligned block, a frame of header + payload */
        for (uint64_t a = addr, len; a < end; a += len) {
            len = piece(a, end, p->mps);
            sh->wc += pg381_div_up(s->cfg.rq_hdr + len, s->cfg.rq_bytes);
        }
        return;
    }
    /*
     * One MRd per MRRS-aligned block, q RQ cycles apart; its completions,
     * ready together a latency after it, run to the first RCB boundary
     * and then MPS each. D, the request's span on RC when RC is free, is
     * the most of (frame's ready - frames before it) + C.
     */
    for (uint64_t a = addr, len; a < end; a += len, j++) {
        len = piece(a, end, p->mrrs);
        for (uint64_t b = a, e = a + len, c; b < e; b += c) {
            uint64_t k;

            c = b == a && (b & (p->rcb - 1)) ? piece(b, e, p->rcb)
                                              : MIN(p->mps, e - b);
            k = pg381_div_up(s->cfg.rc_hdr + c, s->cfg.rc_bytes);
            if (!K) {
                sh->k1 = k;
            }
            most = MAX(most, (int64_t)(j * s->q) - (int64_t)K);
            K += k;
        }
    }
    sh->m = j;
    sh->C = K;
    sh->D = most + K;
}

/*
 * Every request of a phase is timed with the slowest shape of the
 * address residues (modulo MPS for writes, MRRS for reads) its requests
 * visit: all are alike for a steady instruction; otherwise it is the
 * model's choice (docs/pg381.md). In a stretch without a wrap the
 * residues repeat every m / gcd(incr, m) requests.
 */
void pg381_phase_shape(Pg381Core *s, const Pg381Phase *ph, Pg381Shape *out)
{
    bool write = ph->cmd == PG381_CMD_WRITE;
    uint64_t m = write ? s->run.pcie.mps : s->run.pcie.mrrs;
    uint64_t rd = ph->incr & (m - 1), per = rd ? m / (rd & -rd) : 1;
    uint64_t k0 = MIN((uint64_t)ph->tm.n, ph->n0);
    uint64_t k1 = ph->tm.n > ph->n0 ? MIN(ph->tm.n - ph->n0, ph->n1) : 0;
    Pg381ShapeKey key, *cached = &s->key[ph->pc];

    /* compared whole: no stray bytes in the padding */
    memset(&key, 0, sizeof(key));
    key.valid = true;
    key.write = write;
    key.bytes = ph->bytes;
    key.m = m;
    key.r0 = ph->a0 & (m - 1);
    key.r1 = ph->base & (m - 1);
    key.rd = rd;
    key.k0 = MIN(k0, per);
    key.k1 = MIN(k1, per);
    if (!memcmp(cached, &key, sizeof(key))) {
        *out = s->shape[ph->pc];
        return;
    }
    memset(out, 0, sizeof(*out));
    for (int seg = 0; seg < 2; seg++) {
        uint64_t r = seg ? key.r1 : key.r0, k = seg ? key.k1 : key.k0;

        for (uint64_t i = 0; i < k; i++, r = (r + rd) & (m - 1)) {
            Pg381Shape sh;

            shape_at(s, write, r, ph->bytes, &sh);
            out->m = MAX(out->m, sh.m);
            out->wc = MAX(out->wc, sh.wc);
            out->C = MAX(out->C, sh.C);
            out->D = MAX(out->D, sh.D);
            out->k1 = MAX(out->k1, sh.k1);
        }
    }
    *cached = key;
    s->shape[ph->pc] = *out;
}

/* ---- a phase's events --------------------------------------------- */

uint64_t pg381_req_at(const Pg381Timing *t, uint64_t i)
{
    if (t->wc || i < t->W) {
        return t->s0 + i * t->g;
    }
    if (t->sat) {
        return t->s0 + i / t->W * t->Lp + i % t->W * t->P;
    }
    return t->s0 + MAX(i * t->g, t->Lp + (i - t->W) * t->P);
}

uint64_t pg381_done_at(const Pg381Timing *t, uint64_t i)
{
    if (t->wc) {
        return pg381_req_at(t, i) + t->wc;
    }
    if (t->sat) {
        return t->s0 + (i / t->W + 1) * t->Lp + i % t->W * t->P;
    }
    return t->s0 + t->Lp + i * t->P;
}

uint64_t pg381_first_at(const Pg381Timing *t, uint64_t i)
{
    if (t->wc) {
        return pg381_done_at(t, i);
    }
    if (!i) {
        return t->s0 + t->L + t->k1;
    }
    return MAX(pg381_done_at(t, i - 1), pg381_req_at(t, i) + t->L) + t->k1;
}

/* Beats count with RLAST, and a write's with WLAST, a cycle before B */
uint64_t pg381_beats_at(const Pg381Timing *t, uint64_t i)
{
    return t->wc ? pg381_req_at(t, i) + t->wc - 1 : pg381_done_at(t, i);
}

uint64_t pg381_count_le(const Pg381Timing *t, Pg381At *at, uint64_t c)
{
    uint64_t lo = 0, hi = t->n;

    if (t->wc && at == pg381_req_at) {
        return c < t->s0 ? 0 : MIN((uint64_t)t->n, (c - t->s0) / t->g + 1);
    }
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;

        if (at(t, mid) <= c) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

uint64_t pg381_in_window(const Pg381Timing *t, Pg381At *at, uint64_t s,
                         uint64_t e, uint64_t c)
{
    if (e <= s || c < s) {
        return 0;
    }
    return pg381_count_le(t, at, MIN(c, e - 1)) -
           (s ? pg381_count_le(t, at, s - 1) : 0);
}

/* ---- latencies ---------------------------------------------------- */

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* The sum over i in [lo, hi) of alpha + i beta (beta >= 0) in [low, cap] */
static s128 sum_clamped(int64_t alpha, int64_t beta, uint64_t lo,
                        uint64_t hi, int64_t low, int64_t cap)
{
    int64_t i1, i2;

    if (lo >= hi) {
        return 0;
    }
    if (!beta) {
        return (s128)(hi - lo) * MIN(MAX(alpha, low), cap);
    }
    /* i1: the first above low, i2: the first at cap or above */
    i1 = floor_div(low - alpha, beta) + 1;
    i2 = -floor_div(alpha - cap, beta);
    i1 = MIN(MAX(i1, (int64_t)lo), (int64_t)hi);
    i2 = MIN(MAX(i2, i1), (int64_t)hi);
    return (s128)low * (i1 - (int64_t)lo) + (s128)alpha * (i2 - i1) +
           (s128)beta * ((s128)(i1 + i2 - 1) * (i2 - i1) / 2) +
           (s128)cap * ((int64_t)hi - i2);
}

/* How long f_{i-1} keeps RC busy past s_i (i >= 1) */
static int64_t rc_ahead(const Pg381Timing *t, uint64_t i)
{
    int64_t alpha = (int64_t)t->Lp - (int64_t)t->P;
    int64_t beta = (int64_t)(t->P - t->g);
    int64_t cap = (int64_t)((t->W - 1) * t->P);

    if (i < t->W) {
        return alpha + (int64_t)i * beta;
    }
    if (t->sat) {
        return i % t->W ? alpha : cap;
    }
    return MIN(alpha + (int64_t)i * beta, cap);
}

uint64_t pg381_latency(const Pg381Timing *t, uint64_t i)
{
    if (t->wc) {
        return t->wc;
    }
    return t->k1 + (i ? (uint64_t)MAX((int64_t)t->L, rc_ahead(t, i)) : t->L);
}

void pg381_latencies(const Pg381Timing *t, uint64_t k, uint64_t *sum,
                     uint64_t *best, uint64_t *worst)
{
    int64_t L = t->L, alpha = (int64_t)t->Lp - (int64_t)t->P;
    int64_t beta = (int64_t)(t->P - t->g);
    int64_t cap = (int64_t)((t->W - 1) * t->P);
    uint64_t w = MIN(t->W, k);
    uint64_t at[6] = { 0, 1, w - 1, t->W, t->W + 1, k - 1 };
    s128 total;

    if (!k) {
        return;
    }
    if (t->wc) {
        total = (s128)k * t->wc;
    } else {
        /* the first, then the window's first stretch: linear */
        total = (s128)k * t->k1 + L +
                sum_clamped(alpha, beta, 1, w, L, INT64_MAX / 4);
        if (k > t->W && t->sat) {
            /* a burst's first waits for the last burst's end, others not */
            uint64_t firsts = (k - 1) / t->W, others = k - t->W - firsts;

            total += (s128)firsts * MAX(L, cap) + (s128)others * MAX(L, alpha);
        } else if (k > t->W) {
            total += sum_clamped(alpha, beta, t->W, k, L, MAX(cap, L));
        }
    }
    *sum += (uint64_t)total;
    /* monotone in each stretch; the saturated part takes two values */
    for (unsigned j = 0; j < 6; j++) {
        if (at[j] < k) {
            uint64_t v = pg381_latency(t, at[j]);

            *best = MIN(*best, v);
            *worst = MAX(*worst, v);
        }
    }
}
