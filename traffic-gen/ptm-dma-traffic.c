/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The card's own DMA on the probes' buses (ptm-dma-traffic.h, the rule in
 * docs/dma.md): the log made and freed, kept
 * small, reset, and saved for migration.
 */
#include "ptm-dma-traffic-int.h"

#include "ptm-bytes.h"

PtmDmaTraffic *ptm_dma_traffic_new(const PtmGeometry *geo)
{
    PtmDmaTraffic *t = g_new0(PtmDmaTraffic, 1);

    t->geo = *geo;
    t->nlanes = LANE_DMA + 2 * geo->dma_ports;
    t->pcie_dma = ratio(geo->pcie_hz, geo->dma_hz);
    t->dma_pcie = ratio(geo->dma_hz, geo->pcie_hz);
    t->dma_ns = ratio(geo->dma_hz, 1000000000u);
    t->pcie_ns = ratio(geo->pcie_hz, 1000000000u);
    for (unsigned l = 0; l < t->nlanes; l++) {
        t->lane[l].f = vec_new(sizeof(Frame));
        t->lane[l].rbytes = lane_region_bytes(t, l);
        t->lane[l].width = lane_regions(t, l) * t->lane[l].rbytes;
        t->lane[l].wshift = is_power_of_2(t->lane[l].width)
                            ? __builtin_ctz(t->lane[l].width) : -1;
        t->lane[l].rshift = is_power_of_2(t->lane[l].rbytes)
                            ? __builtin_ctz(t->lane[l].rbytes) : -1;
    }
    t->ishift = is_power_of_2(geo->item_bytes) ? __builtin_ctz(geo->item_bytes)
                                               : -1;
    t->lat = muldiv(PTM_DMA_LATENCY_NS, t->pcie_ns.p, t->pcie_ns.q, true);
    for (unsigned k = 0; k < EV_N; k++) {
        t->ev[k].e = vec_new(sizeof(Event));
    }
    t->ret = vec_new(sizeof(uint64_t));
    t->scratch = ptm_chunk_new();
    t->bg_slot = 1;
    return t;
}

void ptm_dma_traffic_set_frame_by_frame(PtmDmaTraffic *t, bool on)
{
    t->frame_by_frame = on;
}

void ptm_dma_traffic_free(PtmDmaTraffic *t)
{
    if (!t) {
        return;
    }
    for (unsigned l = 0; l < t->nlanes; l++) {
        vec_free(t->lane[l].f);
    }
    for (unsigned k = 0; k < EV_N; k++) {
        vec_free(t->ev[k].e);
    }
    vec_free(t->ret);
    ptm_chunk_free(t->scratch);
    g_free(t);
}

/* ---- keeping the log small ---------------------------------------- */

/* Drop an array's first `head` elements once they are most of it */
static void compact(Vec *a, guint *head, guint *cur)
{
    if (*head > 1024 && *head > a->len / 2) {
        vec_drop_front(a, *head);
        *cur = *cur > *head ? *cur - *head : 0;
        *head = 0;
    }
}

static void events_prune(Events *ev, uint64_t cycle)
{
    guint n = ev->head;

    while (n < ev->e->len &&
           ev_last(&g_array_index(ev->e, Event, n)) <= cycle) {
        n++;
    }
    if (n > ev->head) {
        ev->base = g_array_index(ev->e, Event, n - 1).cum;
        ev->head = n;
        compact(ev->e, &ev->head, &ev->cur);
    }
}

void ptm_dma_traffic_prune(PtmDmaTraffic *t, uint64_t t_ns)
{
    uint64_t pc = muldiv(t_ns, t->pcie_ns.p, t->pcie_ns.q, false);
    guint n;

    ptm_dma_train_log(t);
    for (unsigned l = 0; l < t->nlanes; l++) {
        Lane *ln = &t->lane[l];
        Ratio r = l < LANE_DMA ? t->pcie_ns : t->dma_ns;
        uint64_t c = muldiv(t_ns, r.p, r.q, false);

        ln->head = ptm_dma_first_ending_after(ln, c);
        compact(ln->f, &ln->head, &ln->cur);
    }
    for (unsigned k = 0; k < EV_N; k++) {
        events_prune(&t->ev[k], pc);
    }
    /* a read waits for the tag of the one 768 before it at most */
    n = 0;
    while (t->ret->len - n > 1024 &&
           g_array_index(t->ret, uint64_t, n) <= pc) {
        n++;
    }
    if (n > 4096) {
        vec_drop_front(t->ret, n);
        t->ret_base += n;
    }
}

bool ptm_dma_traffic_holds(PtmDmaTraffic *t)
{
    ptm_dma_train_log(t);
    if (t->bg) {
        return true;
    }
    for (unsigned l = 0; l < t->nlanes; l++) {
        if (t->lane[l].f->len > t->lane[l].head) {
            return true;
        }
    }
    for (unsigned k = 0; k < EV_N; k++) {
        if (t->ev[k].e->len > t->ev[k].head) {
            return true;
        }
    }
    return false;
}

void ptm_dma_traffic_reset(PtmDmaTraffic *t, uint64_t now_ns)
{
    ptm_dma_train_log(t);
    for (unsigned l = 0; l < t->nlanes; l++) {
        (t->lane[l].f)->len = 0;
        t->lane[l].head = t->lane[l].cur = 0;
        t->lane[l].free_at = 0;
    }
    for (unsigned k = 0; k < EV_N; k++) {
        (t->ev[k].e)->len = 0;
        t->ev[k].head = t->ev[k].cur = 0;
        t->ev[k].base = 0;
    }
    (t->ret)->len = 0;
    t->ret_base = 0;
    t->busy_until_ns = 0;
    /* slots not yet played went with the reset */
    while (t->bg && t->bg_next_ns < now_ns) {
        t->bg_next_ns += ptm_dma_bg_params_at(t, t->bg_next_ns)->interval_ns;
        t->bg_slot++;
    }
}

/* ---- migration ---------------------------------------------------- */

/*
 * "DMT2": runs with a period, steps as runs; "DMAT", the format before,
 * (back-to-back runs, one step an entry) is still read.
 */
#define DMA_TRAFFIC_MAGIC 0x444D5432u
#define DMA_TRAFFIC_MAGIC_V1 0x444D4154u

void *ptm_dma_traffic_save(PtmDmaTraffic *t, size_t *len)
{
    GByteArray *b = g_byte_array_new();

    ptm_dma_train_log(t);
    ptm_put64(b, DMA_TRAFFIC_MAGIC);
    ptm_put64(b, t->nlanes);
    ptm_put64(b, t->busy_until_ns);
    ptm_put64(b, t->now_ns);
    for (unsigned l = 0; l < t->nlanes; l++) {
        const Lane *ln = &t->lane[l];

        ptm_put64(b, ln->free_at);
        ptm_put64(b, ln->total);
        ptm_put64(b, ln->f->len - ln->head);
        for (guint i = ln->head; i < ln->f->len; i++) {
            const Frame *f = &g_array_index(ln->f, Frame, i);

            ptm_put64(b, f->start);
            ptm_put64(b, f->cycles);
            ptm_put64(b, f->n);
            ptm_put64(b, f->period);
            ptm_put64(b, f->bytes);
            ptm_put64(b, f->mvb);
        }
    }
    for (unsigned k = 0; k < EV_N; k++) {
        ptm_put64(b, t->ev[k].base);
        ptm_put64(b, t->ev[k].e->len - t->ev[k].head);
        for (guint i = t->ev[k].head; i < t->ev[k].e->len; i++) {
            const Event *e = &g_array_index(t->ev[k].e, Event, i);

            ptm_put64(b, e->cycle);
            ptm_put64(b, e->n);
            ptm_put64(b, e->period);
            ptm_put64(b, e->amt);
            ptm_put64(b, e->cum);
        }
    }
    ptm_put64(b, t->ret_base);
    ptm_put64(b, t->ret->len);
    for (guint i = 0; i < t->ret->len; i++) {
        ptm_put64(b, g_array_index(t->ret, uint64_t, i));
    }
    ptm_put64(b, t->bg_next_ns);
    ptm_put64(b, t->bg_slot);
    ptm_put64(b, t->settings.mps);
    ptm_put64(b, t->settings.mrrs);
    ptm_put64(b, t->settings.ext_tag);
    ptm_put64(b, t->settings.tag_10bit);
    ptm_put64(b, t->settings.rcb_128);
    *len = b->len;
    return g_byte_array_free(b, FALSE);
}

char *ptm_dma_traffic_load(PtmDmaTraffic *t, const void *buf, size_t len)
{
    PtmReader rd = { buf, len, false };
    PtmDmaTraffic *n = ptm_dma_traffic_new(&t->geo);
    uint64_t v = 0, cnt = 0;
    bool ok = true, v1;

    ptm_dma_train_log(t);
#define GET(x) do { (x) = ptm_get64(&rd); ok = ok && !rd.bad; } while (0)
    GET(v);
    v1 = v == DMA_TRAFFIC_MAGIC_V1;
    ok = ok && (v == DMA_TRAFFIC_MAGIC || v1);
    GET(cnt);
    ok = ok && cnt == t->nlanes;
    GET(n->busy_until_ns);
    GET(n->now_ns);
    for (unsigned l = 0; ok && l < n->nlanes; l++) {
        Lane *ln = &n->lane[l];
        uint64_t prev_end = 0;

        GET(ln->free_at);
        GET(ln->total);
        GET(cnt);
        ok = ok && cnt <= rd.left / (v1 ? 40 : 48);
        for (uint64_t i = 0; ok && i < cnt; i++) {
            Frame f = { 0 };
            uint64_t nf = 0, mvb = 0, cycles = 0, period = 0;

            GET(f.start);
            GET(cycles);
            GET(nf);
            if (v1) {
                period = cycles;        /* back to back */
            } else {
                GET(period);
            }
            GET(f.bytes);
            GET(mvb);
            if (nf == 1) {
                period = cycles;
            }
            /* in order, not overlapping, within the lane */
            ok = ok && cycles >= 1 && period >= cycles &&
                 period <= UINT32_MAX && nf >= 1 && nf <= UINT32_MAX &&
                 mvb <= 1 && f.start >= prev_end &&
                 f.start <= ln->free_at &&
                 ln->free_at - f.start >= cycles &&
                 (ln->free_at - f.start - cycles) / period >= nf - 1;
            f.cycles = cycles;
            f.period = period;
            f.n = nf;
            f.mvb = mvb;
            prev_end = ok ? run_end(&f) : 0;
            ok = ok && (f.bytes || f.mvb) &&
                 f.cycles == lane_cycles(ln, f.bytes);
            frame_place_end(n, l, &f);
            vec_append(ln->f, f);
        }
    }
    for (unsigned k = 0; ok && k < EV_N; k++) {
        uint64_t prev = 0, cum;

        GET(n->ev[k].base);
        cum = n->ev[k].base;
        GET(cnt);
        ok = ok && cnt <= rd.left / (v1 ? 16 : 40);
        for (uint64_t i = 0; ok && i < cnt; i++) {
            Event e = { .n = 1, .period = 1 };
            uint64_t ne = 1, period = 1;

            GET(e.cycle);
            if (!v1) {
                GET(ne);
                GET(period);
                GET(e.amt);
            }
            GET(e.cum);
            if (v1) {
                e.amt = e.cum - cum;
            }
            /* in order; the steps add up to the total, without wrapping */
            ok = ok && e.cycle >= prev && e.cum >= cum && ne >= 1 &&
                 ne <= UINT32_MAX && period >= 1 && period <= UINT32_MAX &&
                 (ne == 1 || e.amt <= (e.cum - cum) / ne) &&
                 e.cum - cum == e.amt * ne &&
                 (UINT64_MAX - e.cycle) / period >= ne - 1;
            e.n = ne;
            e.period = ne == 1 ? 1 : period;
            prev = ok ? ev_last(&e) : 0;
            cum = e.cum;
            vec_append(n->ev[k].e, e);
        }
    }
    GET(n->ret_base);
    GET(cnt);
    ok = ok && cnt <= rd.left / 8;
    for (uint64_t i = 0; ok && i < cnt; i++) {
        uint64_t r;

        GET(r);
        vec_append(n->ret, r);
    }
    GET(n->bg_next_ns);
    GET(n->bg_slot);
    {
        uint64_t set[5] = { 0 };

        for (unsigned i = 0; i < 5; i++) {
            GET(set[i]);
        }
        ok = ok && set[0] <= 7 && set[1] <= 7 && set[2] <= 1 && set[3] <= 1 &&
             set[4] <= 1;
        n->settings = (PtmSettings) {
            .mps = set[0], .mrrs = set[1], .ext_tag = set[2],
            .tag_10bit = set[3], .rcb_128 = set[4],
        };
    }
    /* a slot number that counts from 1, at a time a slot can have */
    ok = ok && n->bg_slot >= 1;
#undef GET
    if (!ok || rd.left) {
        ptm_dma_traffic_free(n);
        return g_strdup("DMA traffic log: malformed");
    }
    for (unsigned l = 0; l < t->nlanes; l++) {
        Lane tmp = t->lane[l];

        t->lane[l] = n->lane[l];
        n->lane[l] = tmp;
    }
    for (unsigned k = 0; k < EV_N; k++) {
        Vec *tmp = t->ev[k].e;

        t->ev[k] = n->ev[k];
        n->ev[k].e = tmp;
    }
    {
        Vec *tmp = t->ret;

        t->ret = n->ret;
        n->ret = tmp;
    }
    t->ret_base = n->ret_base;
    t->busy_until_ns = n->busy_until_ns;
    t->now_ns = n->now_ns;
    t->bg_next_ns = n->bg_next_ns;
    t->bg_slot = n->bg_slot;
    t->settings = n->settings;
    ptm_dma_traffic_free(n);
    return NULL;
}
