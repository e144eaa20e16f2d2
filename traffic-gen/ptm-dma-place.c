/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The card's own DMA on the probes' buses (ptm-dma-traffic.h, the rule in
 * docs/dma.md): placement: transfers as frames on
 * their lanes and events of tags and FIFO words, trains of equal
 * transfers, the background's transfers.
 */
#include "ptm-dma-traffic-int.h"

/* ---- logging ------------------------------------------------------ */

/*
 * `count` equal frames of `cycles` cycles on a lane, frame i from cycle
 * start + i x period (cycles <= period <= UINT32_MAX, unused for one
 * frame): joined to the lane's last run where they continue it.
 */
static void lane_run(PtmDmaTraffic *t, unsigned l, uint64_t start,
                     uint32_t cycles, uint32_t period, uint32_t bytes,
                     bool mvb, uint32_t count)
{
    Lane *ln = &t->lane[l];
    Frame *last = ln->f->len > ln->head
                  ? &g_array_index(ln->f, Frame, ln->f->len - 1) : NULL;

    if (count == 1) {
        period = cycles;
    }
    ln->free_at = start + (uint64_t)(count - 1) * period + cycles;
    ln->total += count;
    if (last && last->bytes == bytes && last->mvb == mvb &&
        last->n <= UINT32_MAX - count) {
        uint64_t d = start - frame_start(last, last->n - 1);

        if (last->n == 1 ? d <= UINT32_MAX && (count == 1 || d == period)
                         : d == last->period &&
                           (count == 1 || period == last->period)) {
            last->period = d;
            last->n += count;
            return;
        }
    }
    {
        /* in place: a copy from the stack stalls on its byte fields */
        Frame *f = vec_push(ln->f);

        f->start = start;
        f->cycles = cycles;
        f->period = period;
        f->bytes = bytes;
        f->n = count;
        f->mvb = mvb;
        frame_place_end(t, l, f);
    }
}

/* A frame of `bytes` (0: MVB only) ready at cycle `ready`: where it ends */
static inline uint64_t lane_put(PtmDmaTraffic *t, unsigned l, uint64_t ready,
                                uint32_t bytes, bool mvb, uint64_t *start)
{
    Lane *ln = &t->lane[l];
    uint64_t s = MAX(ready, ln->free_at);

    lane_run(t, l, s, lane_cycles(ln, bytes), 0, bytes, mvb, 1);
    if (start) {
        *start = s;
    }
    return ln->free_at;
}

/* A part of a train of equal frames: n of them, one every period from start */
typedef struct Piece {
    uint64_t start;
    uint32_t period;
    uint32_t n;
} Piece;

/*
 * n equal frames of `cycles` cycles, frame i ready at cycle ready + i x
 * pace, on a lane free from cycle free_at: each starts when it is ready
 * and the lane is free, so the first ones go back to back while the lane
 * has a backlog (start_i = s + i x cycles) and the rest at the pace once
 * it is gone (ready + i x pace): at most two pieces, into out. Returns
 * their number.
 */
static inline unsigned paced_pieces(uint64_t free_at, uint64_t ready,
                                    uint32_t pace, uint32_t cycles,
                                    uint32_t n, Piece out[2])
{
    uint64_t s = MAX(ready, free_at), tight = n;

    if (pace > cycles) {
        /* start_i = max(ready + i x pace, s + i x cycles) */
        tight = MIN((uint64_t)n, (s - ready) / (pace - cycles) + 1);
    }
    out[0] = (Piece) { s, cycles, tight };
    if (tight < n) {
        out[1] = (Piece) { ready + tight * pace, pace, n - tight };
        return 2;
    }
    return 1;
}

/* The frames of paced_pieces() put on lane l: where the last ends */
static uint64_t lane_put_paced(PtmDmaTraffic *t, unsigned l, uint64_t ready,
                               uint32_t pace, uint32_t bytes, bool mvb,
                               uint32_t n)
{
    Lane *ln = &t->lane[l];
    uint32_t cycles = lane_cycles(ln, bytes);
    Piece p[2];
    unsigned np = paced_pieces(ln->free_at, ready, pace, cycles, n, p);

    for (unsigned i = 0; i < np; i++) {
        lane_run(t, l, p[i].start, cycles, p[i].period, bytes, mvb, p[i].n);
    }
    return ln->free_at;
}

static inline void event_add(Events *ev, uint64_t cycle, uint64_t amount)
{
    Event *last = ev->e->len > ev->head
                  ? &g_array_index(ev->e, Event, ev->e->len - 1) : NULL;
    uint64_t cum = (last ? last->cum : ev->base) + amount;
    Event *e;

    if (last && last->amt == amount && last->n < UINT32_MAX &&
        cycle > ev_last(last) &&
        (last->n == 1 ? cycle - last->cycle <= UINT32_MAX
                      : cycle - ev_last(last) == last->period)) {
        if (last->n == 1) {
            last->period = cycle - last->cycle;
        }
        last->n++;
        last->cum = cum;
        return;
    }
    e = vec_push(ev->e);
    e->cycle = cycle;
    e->cum = cum;
    e->amt = amount;
    e->period = 1;
    e->n = 1;
}

/*
 * n steps of amt, at c0 + i x period (period >= 1): what n event_add()s
 * make, without a call a step.
 */
static void event_add_run(Events *ev, uint64_t c0, uint32_t period,
                          uint32_t n, uint64_t amt)
{
    Event *last;

    event_add(ev, c0, amt);
    last = &g_array_index(ev->e, Event, ev->e->len - 1);
    if (n > 1 && last->n > 1 && last->period != period) {
        /* c0 continued a run of another pace: the next step starts one */
        c0 += period;
        n--;
        event_add(ev, c0, amt);
        last = &g_array_index(ev->e, Event, ev->e->len - 1);
    }
    if (n == 1) {
        return;
    }
    if (period == 0 || (uint64_t)last->n + n - 1 > UINT32_MAX) {
        for (uint32_t i = 1; i < n; i++) {
            event_add(ev, c0 + (uint64_t)i * period, amt);
        }
        return;
    }
    if (last->n == 1) {
        last->period = period;
    }
    last->n += n - 1;
    last->cum += (uint64_t)(n - 1) * amt;
}

/* The tags the function may use: the card's, within its tag field */
static uint64_t tag_limit(const PtmDmaTraffic *t, const PtmSettings *set)
{
    uint64_t field = set->tag_10bit ? 768 : set->ext_tag ? 256 : 32;

    return MIN(MIN(t->geo.tag_capacity, 0x7FFu), field);
}

/*
 * The piece of [addr, end) at addr up to the next multiple of align (a
 * power of 2: MPS, MRRS and RCB are)
 */
static inline uint32_t piece(uint64_t addr, uint64_t end, uint64_t align)
{
    uint64_t next = (addr | (align - 1)) + 1;

    return MIN(next, end) - addr;
}

/*
 * n completions of `bytes` each, all ready on RC at `ready` (so back to
 * back there), each on DOWN from the DMA cycle its RC frame ends in: in
 * a few runs where the DOWN frames' ready cycles step evenly (or DOWN is
 * the slower bus, so that they queue). false (nothing put) where not.
 */
static bool completions(PtmDmaTraffic *t, unsigned down, uint64_t ready,
                        uint32_t bytes, uint64_t n, uint64_t *rc_end,
                        uint64_t *down_end)
{
    Lane *rc = &t->lane[LANE_RC], *dn = &t->lane[down];
    uint32_t c_rc = lane_cycles(rc, PTM_DMA_RC_HDR + bytes);
    uint32_t c_dn = lane_cycles(dn, bytes);
    const Ratio *r = &t->dma_pcie;
    uint64_t s = MAX(ready, rc->free_at), step = c_rc * r->p, pace;

    if (n > UINT32_MAX) {
        return false;
    }
    if (step <= c_dn * r->q) {
        pace = 0;               /* DOWN is the slower: they queue there */
    } else if (step % r->q == 0 && step / r->q <= UINT32_MAX) {
        pace = step / r->q;     /* RC's pace in DMA cycles, exactly */
    } else {
        return false;
    }
    lane_run(t, LANE_RC, s, c_rc, c_rc, PTM_DMA_RC_HDR + bytes, false, n);
    *rc_end = rc->free_at;
    *down_end = lane_put_paced(t, down, ratio_of(r, s + c_rc, true), pace,
                               bytes, true, n);
    return true;
}

static void log_transfer(PtmDmaTraffic *t, uint64_t t_ns, unsigned port,
                         bool write, uint64_t addr, uint32_t bytes,
                         const PtmSettings *set)
{
    unsigned up = LANE_DMA + 2 * port, down = up + 1;
    unsigned mps_shift = 7 + MIN(set->mps, 5);
    uint64_t mps = 1u << mps_shift, mrrs = 128u << MIN(set->mrrs, 5);
    uint64_t rcb = set->rcb_128 ? 128 : 64;
    uint64_t end = addr + bytes, up_end, rq_ready;
    uint64_t lat = t->lat;

    if (port >= t->geo.dma_ports || bytes == 0 || end < addr) {
        return;
    }
    /* the request leaves the DMA side */
    if (t_ns != t->up_t_ns) {
        t->up_t_ns = t_ns;
        t->up_cycle = muldiv(t_ns, t->dma_ns.p, t->dma_ns.q, false);
    }
    up_end = lane_put(t, up, t->up_cycle + 1, write ? bytes : 0, true, NULL);
    rq_ready = ratio_of(&t->pcie_dma, up_end, true);
    while (addr < end) {
        uint32_t len = piece(addr, end, write ? mps : mrrs);
        uint64_t rq_start, rc_end = 0, down_end = 0, limit;
        uint64_t words = 0, k;

        if (write) {
            uint64_t full = (end - addr) >> mps_shift;

            if (len == mps && full > 1 && !t->frame_by_frame) {
                /* whole MPS blocks, each ready as the one before ends */
                rq_ready = lane_put_paced(t, LANE_RQ, rq_ready, 0,
                                          PTM_DMA_RQ_HDR + mps, false, full);
                addr += full * mps;
                continue;
            }
            rq_ready = lane_put(t, LANE_RQ, rq_ready, PTM_DMA_RQ_HDR + len,
                                false, NULL);
            addr += len;
            continue;
        }
        /* a read request waits for a tag */
        k = t->ret_base + t->ret->len;
        limit = tag_limit(t, set);
        if (k >= limit && k - limit >= t->ret_base) {
            uint64_t i = k - limit - t->ret_base;

            rq_ready = MAX(rq_ready, g_array_index(t->ret, uint64_t, i));
        }
        rq_ready = lane_put(t, LANE_RQ, rq_ready, PTM_DMA_RQ_HDR, false,
                            &rq_start);
        /* its completions: to the first RCB boundary, then MPS each */
        for (uint64_t a = addr, e = addr + len; a < e;) {
            uint32_t c = a == addr && (a & (rcb - 1)) ? piece(a, e, rcb)
                                                      : MIN(mps, e - a);
            uint64_t full = (e - a) >> mps_shift;

            if (c == mps && full > 1 && !t->frame_by_frame &&
                completions(t, down, rq_start + lat, mps, full, &rc_end,
                            &down_end)) {
                a += full * mps;
                continue;
            }
            rc_end = lane_put(t, LANE_RC, rq_start + lat,
                              PTM_DMA_RC_HDR + c, false, NULL);
            down_end = lane_put(t, down,
                                ratio_of(&t->dma_pcie, rc_end, true), c, true,
                                NULL);
            a += c;
        }
        words = lane_cycles(&t->lane[LANE_RC], len);
        event_add(&t->ev[EV_TAKE], rq_start, 1);
        event_add(&t->ev[EV_RES], rq_start, words);
        event_add(&t->ev[EV_RET], rc_end, 1);
        event_add(&t->ev[EV_FREE],
                  ratio_of(&t->pcie_dma, down_end, true), words);
        vec_append(t->ret, rc_end);
        addr += len;
    }
}

/* ---- trains: equal transfers of one access at once ---------------- */

static inline bool same_settings(const PtmSettings *a, const PtmSettings *b)
{
    return a->mps == b->mps && a->mrrs == b->mrrs && a->ext_tag == b->ext_tag &&
           a->tag_10bit == b->tag_10bit && a->rcb_128 == b->rcb_128;
}

/*
 * What splits a transfer: its first piece and a read's offset in the RCB.
 * Returns whether it is one request and, for a read, one completion (what
 * train_at_once() places).
 */
static inline bool split_key(const PtmSettings *set, bool write,
                             uint64_t addr, uint32_t bytes, uint32_t *first,
                             uint32_t *phase)
{
    uint64_t mps = 128u << MIN(set->mps, 5), mrrs = 128u << MIN(set->mrrs, 5);
    uint64_t rcb = set->rcb_128 ? 128 : 64;

    *first = piece(addr, addr + bytes, write ? mps : mrrs);
    *phase = write ? 0 : addr & (rcb - 1);
    return *first == bytes &&
           (write || (*phase ? MIN(rcb - *phase, bytes)
                             : MIN(mps, bytes)) == bytes);
}

/* x steps of a clock at `period` apart in the clock of r: exact, or 0 */
static inline uint64_t pace_in(const Ratio *r, uint64_t period)
{
    uint64_t x = period * r->p;

    return x % r->q ? 0 : x / r->q;
}

/*
 * m transfers of a train (m <= the tags for reads), each one request and,
 * for a read, one completion (split_key() holds no others): placed a few
 * runs a bus, the frames
 * log_transfer() gives them one by one. Every transfer's frames leave UP
 * back to back (they share the DMA cycle), so each later bus sees them
 * ready at a steady pace and puts them in at most two pieces (backlog,
 * then the pace); a piece stays one pace on the next bus where the
 * clocks' ratio maps its period to whole cycles. false, with nothing
 * placed, where that does not hold, or where a read's tag could have to
 * wait for one still out.
 */
static bool train_at_once(PtmDmaTraffic *t, const Train *tr, uint32_t m)
{
    const PtmSettings *set = &tr->set;
    unsigned up = LANE_DMA + 2 * tr->port, down = up + 1;
    Lane *lu = &t->lane[up], *lq = &t->lane[LANE_RQ];
    Lane *lc = &t->lane[LANE_RC], *ld = &t->lane[down];
    uint32_t bytes = tr->bytes, c_up = lane_cycles(lu, tr->write ? bytes : 0);
    uint64_t pace = pace_in(&t->pcie_dma, c_up), s_up, r0, limit, k0, fr;
    uint32_t c_rq, c_rc, c_dn, words, free_pace[8];
    Piece rq[2], rc[4], dn[8];
    unsigned nrq, nrc = 0, ndn = 0;

    if (pace == 0 || pace > UINT32_MAX) {
        return false;
    }
    if (tr->t_ns != t->up_t_ns) {
        t->up_t_ns = tr->t_ns;
        t->up_cycle = muldiv(tr->t_ns, t->dma_ns.p, t->dma_ns.q, false);
    }
    s_up = MAX(t->up_cycle + 1, lu->free_at);
    r0 = ratio_of(&t->pcie_dma, s_up + c_up, true);
    if (tr->write) {
        lane_run(t, up, s_up, c_up, c_up, bytes, true, m);
        lane_put_paced(t, LANE_RQ, r0, pace, PTM_DMA_RQ_HDR + bytes, false, m);
        return true;
    }
    /* the tags the train's requests wait for are back by its first */
    limit = tag_limit(t, set);
    k0 = t->ret_base + t->ret->len;
    if (m > limit) {
        return false;
    }
    for (uint64_t k = k0 + m; k-- > k0;) {
        if (k < limit || k - limit < t->ret_base) {
            break;              /* none out that far back */
        }
        if (g_array_index(t->ret, uint64_t, k - limit - t->ret_base) > r0) {
            return false;
        }
    }
    c_rq = lane_cycles(lq, PTM_DMA_RQ_HDR);
    c_rc = lane_cycles(lc, PTM_DMA_RC_HDR + bytes);
    c_dn = lane_cycles(ld, bytes);
    words = lane_cycles(lc, bytes);
    nrq = paced_pieces(lq->free_at, r0, pace, c_rq, m, rq);
    fr = lc->free_at;
    for (unsigned i = 0; i < nrq; i++) {
        unsigned k = paced_pieces(fr, rq[i].start + t->lat, rq[i].period,
                                  c_rc, rq[i].n, &rc[nrc]);

        nrc += k;
        fr = rc[nrc - 1].start + (uint64_t)(rc[nrc - 1].n - 1) *
             rc[nrc - 1].period + c_rc;
    }
    fr = ld->free_at;
    for (unsigned i = 0; i < nrc; i++) {
        uint64_t p = rc[i].n > 1 ? pace_in(&t->dma_pcie, rc[i].period) : 0;
        unsigned k;

        if ((rc[i].n > 1 && p == 0) || p > UINT32_MAX) {
            return false;
        }
        k = paced_pieces(fr, ratio_of(&t->dma_pcie, rc[i].start + c_rc, true),
                         p, c_dn, rc[i].n, &dn[ndn]);
        ndn += k;
        fr = dn[ndn - 1].start + (uint64_t)(dn[ndn - 1].n - 1) *
             dn[ndn - 1].period + c_dn;
    }
    for (unsigned i = 0; i < ndn; i++) {
        uint64_t p = dn[i].n > 1 ? pace_in(&t->pcie_dma, dn[i].period) : 1;

        if (p == 0 || p > UINT32_MAX) {
            return false;
        }
        free_pace[i] = p;
    }
    /* placed: UP, then each bus and the steps it makes */
    lane_run(t, up, s_up, c_up, c_up, 0, true, m);
    for (unsigned i = 0; i < nrq; i++) {
        lane_run(t, LANE_RQ, rq[i].start, c_rq, rq[i].period, PTM_DMA_RQ_HDR,
                 false, rq[i].n);
        event_add_run(&t->ev[EV_TAKE], rq[i].start, rq[i].period, rq[i].n, 1);
        event_add_run(&t->ev[EV_RES], rq[i].start, rq[i].period, rq[i].n,
                      words);
    }
    for (unsigned i = 0; i < nrc; i++) {
        uint64_t end = rc[i].start + c_rc;

        lane_run(t, LANE_RC, rc[i].start, c_rc, rc[i].period,
                 PTM_DMA_RC_HDR + bytes, false, rc[i].n);
        event_add_run(&t->ev[EV_RET], end, rc[i].period, rc[i].n, 1);
        for (uint32_t j = 0; j < rc[i].n; j++) {
            vec_append(t->ret, end + (uint64_t)j * rc[i].period);
        }
    }
    for (unsigned i = 0; i < ndn; i++) {
        lane_run(t, down, dn[i].start, c_dn, dn[i].period, bytes, true,
                 dn[i].n);
        event_add_run(&t->ev[EV_FREE],
                      ratio_of(&t->pcie_dma, dn[i].start + c_dn, true),
                      free_pace[i], dn[i].n, words);
    }
    return true;
}

/* Log the held train: in parts a tag limit long, at once where they can */
void ptm_dma_train_log(PtmDmaTraffic *t)
{
    const Train *tr = &t->train;    /* logging it leaves it as it is */
    uint32_t n = tr->n;

    t->train.n = 0;
    while (n) {
        uint64_t lim = tr->write ? n : tag_limit(t, &tr->set);
        uint32_t m = lim ? MIN(n, lim) : n;

        if (m < 2 || !train_at_once(t, tr, m)) {
            for (uint32_t i = 0; i < m; i++) {
                log_transfer(t, tr->t_ns, tr->port, tr->write, tr->addr,
                             tr->bytes, &tr->set);
            }
        }
        n -= m;
    }
}

/* ---- background transfers ----------------------------------------- */

const PtmTransfersParams *ptm_dma_bg_params_at(const PtmDmaTraffic *t,
                                               uint64_t t_ns)
{
    return ptm_gen_params_at(t->bg, muldiv(t_ns, t->pcie_ns.p, t->pcie_ns.q,
                                           false));
}

/*
 * Play the background's slots up to and with time `until` (ns). Slots are
 * logged in time order, before any transfer of the DMA engine at the same
 * or a later time, whatever asks first: the engine's transfers (at the
 * present), or the block counting cycles that a slot may reach.
 */
static void bg_play(PtmDmaTraffic *t, uint64_t until)
{
    while (t->bg && t->bg_next_ns <= until) {
        const PtmTransfersParams *p = ptm_dma_bg_params_at(t, t->bg_next_ns);
        uint64_t addr = (uint32_t)(p->address +
                                   (uint32_t)(t->bg_slot - 1) * p->stride);

        if (p->port < t->geo.dma_ports) {
            log_transfer(t, t->bg_next_ns, p->port, true, addr,
                         p->write_bytes, &t->settings);
            log_transfer(t, t->bg_next_ns, p->port, false, addr,
                         p->read_bytes, &t->settings);
        }
        t->bg_slot++;
        t->bg_next_ns += p->interval_ns;
    }
}

/*
 * Before cycles [.., end) of a clock of `hz` are described: a slot at
 * time s puts its first frame at a cycle after s's (UP one DMA cycle on,
 * RQ after UP), so the slots that can reach them are those whose cycle
 * is below end - 1: s x hz < (end - 1) x 10^9.
 */
void ptm_dma_bg_play_before(PtmDmaTraffic *t, uint64_t hz, uint64_t end)
{
    if (t->bg && end > 1) {
        u128 lim = (u128)(end - 1) * 1000000000u;

        /* the last ns s with s x hz < lim */
        bg_play(t, (uint64_t)MIN((lim + hz - 1) / hz - 1, (u128)UINT64_MAX));
    }
}

void ptm_dma_traffic_set_background(PtmDmaTraffic *t, const PtmGen *gen)
{
    ptm_dma_train_log(t);
    t->bg = gen;
    t->bg_slot = 1;
    t->bg_next_ns = gen ? ptm_dma_bg_params_at(t, 0)->interval_ns : 0;
}

void ptm_dma_traffic_set_settings(PtmDmaTraffic *t, uint64_t now_ns,
                                  const PtmSettings *set)
{
    ptm_dma_train_log(t);
    /* slots before the change are split by the settings they saw */
    if (now_ns) {
        bg_play(t, now_ns - 1);
    }
    t->settings = *set;
}

void ptm_dma_traffic_add(PtmDmaTraffic *t, uint64_t t_ns, unsigned port,
                         bool write, uint64_t addr, uint32_t bytes,
                         const PtmSettings *set)
{
    Train *tr = &t->train;
    uint32_t first, phase;

    if (t->frame_by_frame || port >= t->geo.dma_ports || bytes == 0 ||
        addr + bytes < addr ||
        !split_key(set, write, addr, bytes, &first, &phase)) {
        /* one by one: what train_at_once() does not place is not held */
        ptm_dma_train_log(t);
        bg_play(t, t_ns);
        log_transfer(t, t_ns, port, write, addr, bytes, set);
        return;
    }
    if (tr->n && tr->n < UINT32_MAX && tr->t_ns == t_ns && tr->port == port &&
        tr->write == write && tr->bytes == bytes && tr->first == first &&
        tr->phase == phase && same_settings(&tr->set, set)) {
        tr->n++;
        return;
    }
    ptm_dma_train_log(t);
    bg_play(t, t_ns);
    *tr = (Train) {
        .t_ns = t_ns, .addr = addr, .bytes = bytes, .n = 1, .first = first,
        .phase = phase, .port = port, .write = write, .set = *set,
    };
}

void ptm_dma_traffic_set_now(PtmDmaTraffic *t, uint64_t now_ns)
{
    ptm_dma_train_log(t);
    t->now_ns = MAX(t->now_ns, now_ns);
}

void ptm_dma_traffic_frames(PtmDmaTraffic *t, uint64_t out[4])
{
    ptm_dma_train_log(t);
    for (unsigned l = 0; l < 4; l++) {
        out[l] = l < t->nlanes ? t->lane[l].total : 0;
    }
}
