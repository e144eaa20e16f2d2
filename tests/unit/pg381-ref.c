/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A reference for test-pg381: a PG381 program run request by request and
 * completion frame by completion frame, by the rule docs/pg381.md states
 * (docs/dma.md's PTC rule for each request), written as a plain
 * simulation, without the model's closed forms.
 */
#include <glib.h>

#include "pg381-ref.h"

static uint64_t up(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* docs/dma.md's PTC rule for one request at addr, frames onto RC */
static void ref_request(const Pg381Config *c, const Pg381Pcie *p, RefReq *q,
                        uint64_t *rc_free, uint64_t lat, uint64_t rq_cycles,
                        Ref *ref)
{
    uint64_t end = q->addr + q->bytes, x = q->s;

    if (q->write) {
        for (uint64_t a = q->addr; a < end;) {
            uint64_t next = MIN((a / p->mps + 1) * p->mps, end);

            x += up(c->rq_hdr + (next - a), c->rq_bytes);
            a = next;
        }
        q->beats_at = x - 1;
        q->first = q->done = x;
        return;
    }
    q->first = 0;
    for (uint64_t a = q->addr; a < end; x += rq_cycles) {
        uint64_t next = MIN((a / p->mrrs + 1) * p->mrrs, end);

        for (uint64_t b = a; b < next;) {
            uint64_t cb = b == a && b % p->rcb
                          ? MIN((b / p->rcb + 1) * p->rcb, next) - b
                          : MIN((uint64_t)p->mps, next - b);
            uint64_t st = MAX(x + lat, *rc_free);

            /* a frame queued behind another, or RC idle inside a request */
            ref->rc_queue += *rc_free > x + lat;
            ref->rc_gap += q->first && *rc_free < x + lat;

            *rc_free = st + up(c->rc_hdr + cb, c->rc_bytes);
            if (!q->first) {
                q->first = *rc_free;
            }
            b += cb;
        }
        a = next;
    }
    q->done = q->beats_at = *rc_free;
}

/* Reads out at cycle x, their tags, and the first end after x */
static uint64_t ref_out(const Ref *ref, unsigned head, uint64_t x,
                        uint64_t *tags, uint64_t *next)
{
    uint64_t out = 0;

    *tags = 0;
    *next = UINT64_MAX;
    for (unsigned k = head; k < ref->r->len; k++) {
        RefReq *o = &g_array_index(ref->r, RefReq, k);

        if (!o->write && o->done > x) {
            out++;
            *tags += o->m;
            *next = MIN(*next, o->done);
        }
    }
    return out;
}

/* The program run request by request by the documented rule */
Ref ref_run(const Pg381Config *c, const Pg381Pcie *p, uint32_t limreg,
                   const Pg381Instr *prog)
{
    Ref ref = { .r = g_array_new(FALSE, FALSE, sizeof(RefReq)) };
    uint64_t lat = up((uint64_t)c->latency_ns * c->clock_hz, 1000000000u);
    uint64_t rq = up(c->rq_hdr, c->rq_bytes), t = 0, rc_free = 0;
    uint64_t lim = MIN(limreg, c->out_of_order ? 128u : 509u);
    unsigned pc = 0, loop_pc = 0, iter = 0, head = 0;
    bool in_loop = false;
    uint64_t loop_off[PG381_INSTRS] = { 0 };

    for (;;) {
        const Pg381Instr *in = &prog[pc];
        uint32_t bytes = (in->len + 1) << in->size;
        uint64_t incr = in->addr_auto ? bytes : in->incr, x = t;
        uint64_t tags, next;

        if (in->loop_start && !in_loop) {
            in_loop = true;
            loop_pc = pc;
            iter = 0;
            for (unsigned k = pc; k == pc || !prog[k - 1].loop_end; k++) {
                loop_off[k] = prog[k].offset;
            }
        }
        if (in->cmd == PG381_CMD_WAIT) {
            t = in->wait == PG381_WAIT_CLOCKS ? t + in->count : t;
            t = in->wait & PG381_WAIT_WR ? MAX(t, ref.wr_done) : t;
            t = in->wait & PG381_WAIT_RD ? MAX(t, ref.rd_done) : t;
        } else {
            uint64_t a = in->base + (in_loop ? loop_off[pc] : in->offset);

            if (in->cmd == PG381_CMD_READ) {
                x = MAX(t, ref.rd_done);
            }
            /* out of order, a write waits until fewer than lim reads are out */
            while (in->cmd == PG381_CMD_WRITE && c->out_of_order &&
                   ref_out(&ref, head, x, &tags, &next) >= lim) {
                x = next;
                ref.ooo_write++;
            }
            x += in->start_delay;
            for (uint32_t i = 0; i < in->count; i++) {
                RefReq q = { .write = in->cmd == PG381_CMD_WRITE,
                             .addr = a, .bytes = bytes, .beats = in->len + 1 };

                q.m = q.write ? 0 : up(a + bytes, p->mrrs) - a / p->mrrs;
                /* a read waits for a slot and its tags */
                while (!q.write &&
                       (ref_out(&ref, head, x, &tags, &next) >= lim ||
                        tags + q.m > p->tags)) {
                    ref.window += ref_out(&ref, head, x, &tags, &next) >= lim;
                    ref.tags += tags + q.m > p->tags;
                    x = next;
                }
                q.s = x;
                ref_request(c, p, &q, &rc_free, lat, rq, &ref);
                g_array_append_val(ref.r, q);
                if (q.write) {
                    ref.wr_done = MAX(ref.wr_done, q.done);
                    x = q.done + in->start_delay;
                    t = q.done;
                } else {
                    ref.rd_done = q.done;
                    x = q.s + q.m * rq + in->start_delay;
                    t = q.s + q.m * rq;
                }
                a += incr;
                if (a + bytes - 1 > in->high) {
                    a = in->base;
                }
            }
            while (head < ref.r->len &&
                   g_array_index(ref.r, RefReq, head).done <= t) {
                head++;             /* never out again: x only grows */
            }
        }
        if (in->loop_end && in_loop) {
            for (unsigned k = loop_pc; k <= pc; k++) {
                loop_off[k] += prog[loop_pc].loop_incr;
                if (prog[k].base + loop_off[k] +
                    ((prog[k].len + 1) << prog[k].size) - 1 > prog[k].high) {
                    loop_off[k] = 0;
                }
            }
            if (++iter < prog[loop_pc].loop_count) {
                pc = loop_pc;
                continue;
            }
            in_loop = false;
        }
        if (in->last) {
            break;
        }
        pc++;
    }
    ref.prog_end = t;
    ref.done = MAX(MAX(ref.wr_done, ref.rd_done), t) + 200;
    return ref;
}

/* The reference's registers at cycle c */
void ref_regs(const Ref *ref, uint64_t c, uint32_t cap_s,
                     uint32_t cap_e, GHashTable *out)
{
    uint64_t v[0x2300 / 4] = { 0 }, wbest = UINT64_MAX, rbest = UINT64_MAX;
    uint64_t wn = 0, rn = 0;

    for (unsigned k = 0; k < ref->r->len; k++) {
        RefReq *q = &g_array_index(ref->r, RefReq, k);
        bool win_s = q->s >= cap_s && q->s < cap_e && q->s <= c;
        bool win_b = q->beats_at >= cap_s && q->beats_at < cap_e &&
                     q->beats_at <= c;
        uint64_t l = q->first - q->s;

        if (q->write) {
            v[PG381_AWREQ / 4] += q->s <= c;
            v[PG381_WLAST / 4] += q->beats_at <= c;
            v[PG381_WRBEAT / 4] += (q->beats_at <= c) * q->beats;
            v[PG381_WIN_AWREQ / 4] += win_s;
            v[PG381_WIN_WRBEAT / 4] += win_b * q->beats;
            if (q->first <= c) {
                v[PG381_BRESP / 4]++;
                v[PG381_WAVG / 4] += l;
                v[PG381_WWORST / 4] = MAX(v[PG381_WWORST / 4], l);
                wbest = MIN(wbest, l);
                wn++;
            }
        } else {
            v[PG381_ARREQ / 4] += q->s <= c;
            v[PG381_RLAST / 4] += q->done <= c;
            v[PG381_RBEAT / 4] += (q->done <= c) * q->beats;
            v[PG381_WIN_ARREQ / 4] += win_s;
            v[PG381_WIN_RBEAT / 4] += win_b * q->beats;
            if (q->first <= c) {
                v[PG381_RAVG / 4] += l;
                v[PG381_RWORST / 4] = MAX(v[PG381_RWORST / 4], l);
                rbest = MIN(rbest, l);
                rn++;
            }
        }
    }
    v[PG381_WBEST / 4] = wn ? wbest : 0;
    v[PG381_RBEST / 4] = rn ? rbest : 0;
    v[PG381_WBW_EFF_CLK / 4] = MIN(c, ref->wr_done);
    v[PG381_RBW_EFF_CLK / 4] = MIN(c, ref->rd_done);
    v[PG381_FLOW_EMPTY / 4] =
        (c >= ref->prog_end ? PG381_FE_EMPTY : 0) |
        (c >= ref->wr_done ? PG381_FE_WR_DONE : 0) |
        (c >= ref->rd_done ? PG381_FE_RD_DONE : 0) |
        (c >= ref->done ? PG381_FE_DONE : 0);
    for (uint32_t off = PG381_RBEAT; off <= PG381_WIN_RBEAT; off += 4) {
        g_hash_table_insert(out, GUINT_TO_POINTER(off),
                            GUINT_TO_POINTER((uint32_t)v[off / 4]));
    }
}

