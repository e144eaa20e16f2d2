/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ptc generator: a closed-loop behavioural model of the PCIe
 * transaction controller between the DMA module and PCIe.
 *
 * The DMA side asks for reads (a header on the UP MVB, no payload) and
 * writes (header and payload). The PTC turns a read into read requests of
 * at most MRRS bytes, each taking a tag and reserving storage-FIFO words
 * for its completions, and a write into write requests of at most MPS
 * bytes; requests go out on RQ with their TLP header in the data stream.
 * Completions come back on RC after the latency, in pieces of MPS bytes
 * (a multiple of RCB), and go down to the DMA side on DOWN, each with its
 * header on the MVB; the last one returns the tag, delivery frees the FIFO
 * words.
 *
 * The model decides per drain window (a block of DRAIN_PERIOD PCIe cycles
 * from cycle 0, with its own jitter of load and latency) a steady schedule
 * of one period of P = 256 PCIe cycles, repeated through the window. Tags,
 * FIFO words and completion credits held at any moment are counted over the
 * periodic schedule (a request issued in an earlier period still holds its
 * tag), so a resource that cannot sustain the asked rate throttles the
 * reads, and its BRAKE reason is active exactly in the cycles in which the
 * free amount is below what the next read needs. Frames never cross a
 * period's end, and every bus stays within its capacity.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "ptm-ptc.h"

#define PTC_PERIOD  256u            /* PCIe cycles of one schedule */
#define RQ_HDR      16u             /* bytes of a request TLP header */
#define RC_HDR      12u             /* bytes of a completion TLP header */
#define MAX_REQ     256u            /* DMA requests per period, at most */
#define MAX_TLP     (4 * MAX_REQ)

void ptm_ptc_params_default(PtmPtcParams *p)
{
    *p = (PtmPtcParams) {
        .seed = 1,
        .link_up = true,
        .load = 90,
        .read_percent = 40,
        .read_bytes = 2048,
        .write_bytes = 192,
        .latency_ns = 2000,
        .jitter_percent = 20,
        .tags = 48,
        .cplh_credits = 0,
        .rq_stall = 1,
        .down_stall = 5,
    };
}

static char *ptc_check(const void *params, const PtmGeometry *geo)
{
    const PtmPtcParams *p = params;

    if (geo->drain_period < PTC_PERIOD) {
        return g_strdup_printf("ptc needs a drain period of at least %u "
                               "cycles", PTC_PERIOD);
    }
    if ((uint64_t)PTC_PERIOD * geo->dma_hz % geo->pcie_hz) {
        return g_strdup("ptc needs a DMA clock that is a whole fraction of "
                        "256 PCIe cycles (e.g. half of it)");
    }
    (void)p;
    return NULL;
}

typedef struct Rng {
    uint64_t s;
} Rng;

static uint64_t rng_next(Rng *r)
{
    uint64_t x = (r->s += 0x9e3779b97f4a7c15ull);

    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Uniform in [-pct, +pct] percent, as a factor. */
static double jitter(Rng *r, uint32_t pct)
{
    double u = (double)(rng_next(r) >> 11) / (double)(1ull << 53);

    return 1.0 + (2 * u - 1) * pct / 100.0;
}

/* The MFB shape of one bus. */
typedef struct Bus {
    unsigned ib, ipr, regions;
} Bus;

static uint32_t words_of(const Bus *b, uint32_t bytes)
{
    uint32_t items = (bytes + b->ib - 1) / b->ib;
    uint32_t nreg = (items + b->ipr - 1) / b->ipr;

    return (nreg + b->regions - 1) / b->regions;
}

/* Is [start, start + n) free on this bus? */
static bool run_free(const PtmBusCycle *cyc, uint32_t start, uint32_t n)
{
    for (uint32_t t = start; t < start + n; t++) {
        if (cyc[t].src_rdy) {
            return false;
        }
    }
    return true;
}

/* First start >= from (circularly) where n free cycles fit in [0, len). */
static int64_t find_run(const PtmBusCycle *cyc, uint32_t len, uint32_t from,
                        uint32_t n)
{
    for (uint32_t k = 0; k < len; k++) {
        uint32_t s = (from + k) % len;

        if (s + n <= len && run_free(cyc, s, n)) {
            return s;
        }
    }
    return -1;
}

/*
 * A frame of `bytes` from cycle `start`: a word per cycle, a held word
 * (SRC_RDY without DST_RDY) where stall says so. Returns its end.
 */
static uint32_t put_frame(PtmBusCycle *cyc, uint32_t start, const Bus *b,
                          uint32_t bytes, bool mvb, const uint8_t *stall)
{
    uint32_t items = (bytes + b->ib - 1) / b->ib;
    uint32_t nreg = (items + b->ipr - 1) / b->ipr;
    uint32_t words = (nreg + b->regions - 1) / b->regions;
    uint32_t t = start;

    for (uint32_t j = 0; j < words; j++) {
        PtmBusCycle w = { .src_rdy = 1, .dst_rdy = 1 };
        uint32_t first = j * b->regions;
        uint32_t last = MIN(nreg, first + b->regions) - 1;

        if (j == 0) {
            w.sof = 1;
            if (mvb) {
                w.mvb_vld = 1;
                w.mvb_src_rdy = 1;
                w.mvb_dst_rdy = 1;
            }
        }
        if (j == words - 1) {
            w.eof = 1u << (last - first);
            w.eof_pos[last - first] = (items - 1) % b->ipr;
        }
        if (stall && stall[t]) {
            cyc[t] = w;
            cyc[t].dst_rdy = 0;
            cyc[t].mvb_dst_rdy = 0;
            t++;
        }
        cyc[t++] = w;
    }
    return t;
}

/* Add 1 on the circular span [s, s + h) of a periodic count, h any size. */
static void hold_add(int32_t *diff, int32_t *base, uint32_t P, uint64_t s,
                     uint64_t h, int32_t amount)
{
    uint32_t r = h % P, st = s % P;

    *base += amount * (int32_t)(h / P);
    if (!r) {
        return;
    }
    diff[st] += amount;
    if (st + r <= P) {
        diff[st + r] -= amount;
    } else {
        diff[P] -= amount;
        diff[0] += amount;
        diff[st + r - P] -= amount;
    }
}

static void hold_sum(const int32_t *diff, int32_t base, uint32_t P,
                     int32_t *out)
{
    int32_t run = base;

    for (uint32_t t = 0; t < P; t++) {
        run += diff[t];
        out[t] = run;
    }
}

typedef struct Req {
    bool read;
    uint32_t port;
    uint32_t issue;                         /* first RQ cycle */
} Req;

typedef struct Cpl {
    uint32_t rc_end;                        /* PCIe cycle after it */
    uint32_t bytes, port;
} Cpl;

typedef struct PcieCycle {
    PtmBusCycle rq, rc;
    uint16_t tags, fifo;
    uint8_t brake;
} PcieCycle;

typedef struct Plan {
    bool valid;
    uint64_t block;
    PtmPtcParams params;
    PtmSettings settings;
    PtmPtcSummary sum;
    uint32_t pd;                            /* DMA cycles per period */
    unsigned npcie, ndma;
    PtmSegment pcie[PTC_PERIOD];
    PtmSegment dma[PTC_PERIOD];
} Plan;

typedef struct Work {
    PcieCycle pc[PTC_PERIOD];
    PtmBusCycle rq[PTC_PERIOD + 2 * MAX_TLP], rc[PTC_PERIOD];
    PtmBusCycle dma[PTM_MAX_BUSES][PTC_PERIOD];
    uint8_t rq_stall[PTC_PERIOD + 2 * MAX_TLP];
    int32_t d_tag[PTC_PERIOD + 1], d_fifo[PTC_PERIOD + 1];
    int32_t d_cplh[PTC_PERIOD + 1];
    int32_t tags[PTC_PERIOD], fifo[PTC_PERIOD], cplh[PTC_PERIOD];
    uint8_t release[PTC_PERIOD];
    Req req[MAX_REQ];
    Cpl cpl[MAX_TLP * 8];
} Work;

/*
 * Plans of the last blocks of every endpoint: the PCIe and DMA probes of
 * one endpoint drain at different times and both need the same plans.
 */
#define PLAN_SLOTS 4

typedef struct PtcCache {
    Plan *plan[PTM_MAX_ENDPOINTS * PLAN_SLOTS];
    Work work;
} PtcCache;

static void make_plan(const PtmGen *gen, const PtmPtcParams *p,
                      const PtmProbeInfo *probe, uint64_t block, Work *w,
                      Plan *pl)
{
    const PtmGeometry *geo = &gen->geo;
    const PtmSettings *s = &probe->settings;
    const uint32_t P = PTC_PERIOD;
    const uint32_t pd = (uint64_t)P * geo->dma_hz / geo->pcie_hz;
    const unsigned ports = geo->dma_ports;
    const uint32_t mps = 128u << MIN(s->mps, 5), mrrs = 128u << MIN(s->mrrs, 5);
    const unsigned ib = geo->item_bytes;
    const Bus rq = { ib, geo->rq_region_bytes / ib, geo->rq_regions };
    const Bus rc = { ib, geo->rc_region_bytes / ib, geo->rc_regions };
    const Bus up = { ib, geo->up_region_bytes / ib, geo->up_regions };
    const Bus down = { ib, geo->down_region_bytes / ib, geo->down_regions };
    uint32_t rd_bytes = MAX(p->read_bytes, 1), wr_bytes = MAX(p->write_bytes, 1);
    uint32_t kr = (rd_bytes + mrrs - 1) / mrrs;       /* read TLPs */
    uint32_t kw = (wr_bytes + mps - 1) / mps;         /* write TLPs */
    uint32_t ncpl_tlp = (MIN(rd_bytes, mrrs) + mps - 1) / mps;
    uint32_t tag_limit, fifo_word = rc.regions * rc.ipr * ib;
    uint32_t lat, n_max, n, nr, nw, hold, fifo_need, cpl_words = 0;
    uint32_t w_rq_rd, w_rq_wr, w_up, w_down = 0, rq_cur = 0;
    double c_rq, c_rc, c_up, c_down, ask, rdshare = p->read_percent / 100.0;
    double nf, nrf, nwf;
    Req *req = w->req;
    Cpl *cpl = w->cpl;
    uint32_t ncpl = 0, stretch, ph;
    int32_t tag_base = 0, fifo_base = 0, cplh_base = 0;
    Rng r = { ptm_hash(p->seed, probe->endpoint, block, 0x707463) };

    memset(w, 0, sizeof(*w));
    /* tags the settings allow: 5-bit, 8-bit or 10-bit tag field */
    tag_limit = s->tag_10bit ? 768 : s->ext_tag ? 256 : 32;
    tag_limit = MIN(tag_limit, p->tags ? p->tags : geo->tag_capacity);
    tag_limit = MIN(tag_limit, 0x7FF);
    lat = (uint32_t)((uint64_t)p->latency_ns * geo->pcie_hz / 1000000000ull *
                     jitter(&r, p->jitter_percent));

    /* words every DMA request costs on each bus, on average */
    w_rq_rd = words_of(&rq, RQ_HDR);
    w_rq_wr = words_of(&rq, RQ_HDR + MIN(wr_bytes, mps));
    w_up = words_of(&up, wr_bytes);
    for (uint32_t left = rd_bytes; left; ) {
        uint32_t c = MIN(left, mps);

        cpl_words += words_of(&rc, RC_HDR + c);
        w_down += words_of(&down, c);
        left -= c;
    }
    c_rq = rdshare * kr * w_rq_rd + (1 - rdshare) * kw * w_rq_wr;
    c_rc = rdshare * cpl_words;
    c_up = (1 - rdshare) * w_up / ports;
    c_down = rdshare * w_down / ports;
    /* the RQ also carries the endpoint's stalls */
    ask = P / (c_rq * (1 + p->rq_stall / 100.0) + 1e-9);
    ask = MIN(ask, P / (c_rc + 1e-9));
    /* the DMA side places whole frames around the held stretch: leave
     * it room to fit them */
    ask = MIN(ask, 0.9 * pd * (1 - p->down_stall / 100.0) / (c_down + 1e-9));
    ask = MIN(ask, 0.9 * pd / (c_up + 1e-9));
    n_max = (uint32_t)MIN(ask * 0.97, (double)MAX_REQ);
    nf = n_max * MIN(p->load * jitter(&r, p->jitter_percent), 100.0) / 100.0;
    nrf = nf * rdshare;

    /*
     * A read TLP holds its tag from its issue to the end of its last
     * completion, and its FIFO words until DOWN has taken them: the
     * sustainable read rate is what the resources allow (Little's law).
     */
    hold = lat + cpl_words / kr + 2;
    fifo_need = (MIN(rd_bytes, mrrs) + fifo_word - 1) / fifo_word;
    pl->sum.tag_limited = false;
    if (nrf * kr * hold > (double)tag_limit * P) {
        nrf = (double)tag_limit * P / hold / kr;
        pl->sum.tag_limited = true;
    }
    nrf = MIN(nrf, (double)geo->stfifo_capacity * P /
                   ((hold + 8.0) * fifo_need * kr));
    if (p->cplh_credits) {
        nrf = MIN(nrf, (double)p->cplh_credits * P /
                       ((double)hold * ncpl_tlp * kr));
    }
    /* requests leave the DMA side in order: writes wait behind reads */
    nf = rdshare > 0 ? MIN(nf, nrf / rdshare) : nf;
    nwf = nf - (rdshare > 0 ? nrf : 0);
    /* whole requests per period; the fractions carry from block to block */
    nr = (uint32_t)(floor(nrf * (block + 1)) - floor(nrf * block));
    nw = (uint32_t)(floor(nwf * (block + 1)) - floor(nwf * block));
    n = MIN(nr + nw, MAX_REQ);

    /* RQ: the DMA requests in order, spread over the period */
    for (uint32_t g = 0, k = 0; g < P + 2 * MAX_TLP; g++) {
        /* Bresenham: rq_stall percent of the words are held once */
        w->rq_stall[g] = (uint64_t)(k + 1) * p->rq_stall / 100 >
                         (uint64_t)k * p->rq_stall / 100;
        k++;
    }
    for (uint32_t i = 0; i < n; i++) {
        bool read = (uint64_t)(i + 1) * MIN(nr, n) / n >
                    (uint64_t)i * MIN(nr, n) / n;
        uint32_t target = (uint64_t)i * P / n, k = read ? kr : kw;

        req[i] = (Req) { .read = read, .port = i % ports };
        rq_cur = MAX(rq_cur, target);
        for (uint32_t j = 0; j < k; j++) {
            uint32_t bytes = read ? RQ_HDR
                : RQ_HDR + MIN(wr_bytes - j * mps, mps);
            uint32_t start = rq_cur, end;

            end = put_frame(w->rq, start, &rq, bytes, false, w->rq_stall);
            if (end > P) {
                memset(&w->rq[start], 0, (end - start) * sizeof(w->rq[0]));
                n = i;          /* no room left: the period ends here */
                goto rq_done;
            }
            if (j == 0) {
                req[i].issue = start;
            }
            rq_cur = end;
            if (!read) {
                continue;
            }
            /* its completions on RC, and what it holds meanwhile */
            {
                uint32_t tlp_bytes = MIN(rd_bytes - j * mrrs, mrrs);
                uint64_t abs = (uint64_t)start + lat, first = abs;
                uint32_t pieces = 0;

                for (uint32_t left = tlp_bytes; left; ) {
                    uint32_t c = MIN(left, mps);
                    uint32_t cw = words_of(&rc, RC_HDR + c);
                    int64_t at = find_run(w->rc, P, abs % P, cw);

                    if (at < 0 || ncpl >= G_N_ELEMENTS(w->cpl)) {
                        break;              /* RC full: cannot happen */
                    }
                    put_frame(w->rc, at, &rc, RC_HDR + c, false, NULL);
                    abs += ((uint64_t)at + P - abs % P) % P + cw;
                    cpl[ncpl++] = (Cpl) { .rc_end = (at + cw) % P,
                                          .bytes = c, .port = req[i].port };
                    left -= c;
                    pieces++;
                }
                hold_add(w->d_tag, &tag_base, P, start, abs - start, 1);
                hold_add(w->d_fifo, &fifo_base, P, start,
                         abs - start + 8, fifo_need);
                hold_add(w->d_cplh, &cplh_base, P, start, first - start +
                         (abs - first) / 2, pieces);
                w->release[abs % P] = 1;
            }
        }
    }
rq_done:
    hold_sum(w->d_tag, tag_base, P, w->tags);
    hold_sum(w->d_fifo, fifo_base, P, w->fifo);
    hold_sum(w->d_cplh, cplh_base, P, w->cplh);

    /* DOWN: the DMA side holds it for a stretch of every period */
    stretch = pd * p->down_stall / 100;
    ph = stretch ? rng_next(&r) % (pd - stretch + 1) : 0;

    /* the DMA side: requests on UP, completions on DOWN */
    for (uint32_t i = 0; i < n; i++) {
        PtmBusCycle *bus = w->dma[2 * req[i].port];
        uint32_t d = ((uint64_t)req[i].issue * pd / P + pd - 2) % pd;

        for (uint32_t k = 0; k < pd; k++) {
            uint32_t c = (d + k) % pd;

            if (req[i].read) {
                /* a read is its header alone, on the MVB */
                if (!bus[c].mvb_src_rdy) {
                    bus[c].mvb_vld = 1;
                    bus[c].mvb_src_rdy = 1;
                    bus[c].mvb_dst_rdy = 1;
                    break;
                }
            } else {
                uint32_t ww = words_of(&up, wr_bytes);

                if (c + ww <= pd && run_free(bus, c, ww) &&
                    !bus[c].mvb_src_rdy) {
                    put_frame(bus, c, &up, wr_bytes, true, NULL);
                    break;
                }
            }
        }
    }
    for (uint32_t i = 0; i < ncpl; i++) {
        PtmBusCycle *bus = w->dma[2 * cpl[i].port + 1];
        uint32_t cw = words_of(&down, cpl[i].bytes);
        uint32_t d = ((uint64_t)cpl[i].rc_end * pd / P + 2) % pd;
        int64_t at;

        /* nothing moves on DOWN during the stretch */
        for (uint32_t t = ph; t < ph + stretch; t++) {
            bus[t].src_rdy = 1;     /* reserve */
        }
        at = find_run(bus, pd, d, cw);
        for (uint32_t t = ph; t < ph + stretch; t++) {
            bus[t].src_rdy = 0;
        }
        if (at >= 0) {
            put_frame(bus, at, &down, cpl[i].bytes, true, NULL);
        }
    }
    /* a frame due in the stretch waits there with its first word held */
    for (unsigned b = 1; stretch && b < 2 * ports; b += 2) {
        PtmBusCycle *bus = w->dma[b];
        uint32_t end = ph + stretch;

        if (end < pd && bus[end].sof) {
            for (uint32_t t = ph + stretch / 2; t < end; t++) {
                bus[t] = bus[end];
                bus[t].dst_rdy = 0;
                bus[t].mvb_dst_rdy = 0;
            }
        }
    }

    /* the PCIe side, cycle by cycle */
    for (uint32_t t = 0; t < P; t++) {
        PcieCycle *c = &w->pc[t];
        int32_t free_tags = MAX((int32_t)tag_limit - w->tags[t], 0);
        int32_t free_fifo = MAX((int32_t)geo->stfifo_capacity - w->fifo[t],
                                0);
        uint32_t dma_t = (uint64_t)t * pd / P;

        c->rq = w->rq[t];
        c->rc = w->rc[t];
        c->tags = free_tags;
        c->fifo = free_fifo;
        /* a read waits for tags whenever fewer are free than it needs */
        if (free_tags < (int32_t)kr && nr) {
            c->brake |= 1u << PTM_BRAKE_NO_TAG;
        } else if (nr && w->release[(t + P - 1) % P] && w->rq[t].sof &&
                   !w->rq[t].dst_rdy) {
            /* a tag just returned is not in the tag FIFO yet */
            c->brake |= 1u << PTM_BRAKE_TAG_NOT_READY;
        }
        if (free_fifo < (int32_t)(fifo_need * kr) && nr) {
            c->brake |= 1u << PTM_BRAKE_NO_STFIFO;
        }
        if (p->cplh_credits && nr &&
            w->cplh[t] + (int32_t)ncpl_tlp > (int32_t)p->cplh_credits) {
            c->brake |= 1u << PTM_BRAKE_NO_CPLH;
        }
        /* DOWN held: seen here a few cycles before the DMA side stalls */
        if (stretch && dma_t + 2 >= ph && dma_t < ph + stretch) {
            c->brake |= 1u << PTM_BRAKE_MFB_DOWN;
            if (dma_t < ph + stretch / 2) {
                c->brake |= 1u << PTM_BRAKE_MVB_DOWN;
            }
        }
    }

    /* run-length encode both sides */
    pl->npcie = 0;
    for (uint32_t t = 0; t < P; t++) {
        if (pl->npcie &&
            !memcmp(&w->pc[t], &w->pc[t - 1], sizeof(w->pc[0]))) {
            pl->pcie[pl->npcie - 1].cycles++;
            continue;
        }
        PtmSegment *sg = &pl->pcie[pl->npcie++];

        memset(sg, 0, offsetof(PtmSegment, bus));
        sg->cycles = 1;
        sg->brake = w->pc[t].brake;
        sg->tag_free = w->pc[t].tags;
        sg->stfifo_free = w->pc[t].fifo;
        sg->link_up = p->link_up;
        sg->bus[0] = w->pc[t].rq;
        sg->bus[1] = w->pc[t].rc;
    }
    pl->ndma = 0;
    for (uint32_t t = 0; t < pd; t++) {
        bool same = pl->ndma > 0;

        for (unsigned b = 0; same && b < 2 * ports; b++) {
            same = !memcmp(&w->dma[b][t], &w->dma[b][t - 1],
                           sizeof(PtmBusCycle));
        }
        if (same) {
            pl->dma[pl->ndma - 1].cycles++;
            continue;
        }
        PtmSegment *sg = &pl->dma[pl->ndma++];

        memset(sg, 0, offsetof(PtmSegment, bus));
        sg->cycles = 1;
        sg->link_up = p->link_up;
        for (unsigned b = 0; b < 2 * ports; b++) {
            sg->bus[b] = w->dma[b][t];
        }
    }
    pl->valid = true;
    pl->block = block;
    pl->params = *p;
    pl->settings = *s;
    pl->pd = pd;
    pl->sum.period = P;
    pl->sum.reads = 0;
    pl->sum.writes = 0;
    for (uint32_t i = 0; i < n; i++) {
        pl->sum.reads += req[i].read;
        pl->sum.writes += !req[i].read;
    }
    pl->sum.tag_limit = tag_limit;
}

static Plan *plan_for(const PtmGen *gen, const PtmPtcParams *p,
                      const PtmProbeInfo *probe, uint64_t block)
{
    PtmGen *g = (PtmGen *)gen;      /* the cache is derived data only */
    PtcCache *c;
    Plan *pl;
    unsigned slot;

    if (!g->cache) {
        g->cache = g_new0(PtcCache, 1);
    }
    c = g->cache;
    slot = probe->endpoint * PLAN_SLOTS + block % PLAN_SLOTS;
    if (!c->plan[slot]) {
        c->plan[slot] = g_new0(Plan, 1);
    }
    pl = c->plan[slot];
    if (!pl->valid || pl->block != block ||
        memcmp(&pl->params, p, sizeof(*p)) ||
        memcmp(&pl->settings, &probe->settings, sizeof(pl->settings))) {
        make_plan(gen, p, probe, block, &c->work, pl);
    }
    return pl;
}

static uint64_t ptc_fill(const PtmGen *gen, const void *params,
                         const PtmProbeInfo *probe, uint64_t start,
                         uint64_t max, PtmChunk *out)
{
    const PtmPtcParams *p = params;
    bool pcie = probe->domain == PTM_DOMAIN_PCIE;
    uint64_t pd = (uint64_t)PTC_PERIOD * gen->geo.dma_hz / gen->geo.pcie_hz;
    uint64_t period = pcie ? PTC_PERIOD : pd;
    uint64_t blen = gen->geo.drain_period * period / PTC_PERIOD;
    uint64_t block = start / blen, in_block = start % blen;
    Plan *pl = plan_for(gen, p, probe, block);

    max = MIN(max, blen - in_block);
    return ptm_serve_periodic(pcie ? pl->pcie : pl->dma,
                              pcie ? pl->npcie : pl->ndma, period,
                              in_block % period, max, out);
}

void ptm_ptc_summary(const PtmGen *gen, unsigned endpoint, uint64_t block,
                     PtmPtcSummary *out)
{
    PtmProbeInfo probe = { .endpoint = endpoint };
    const PtmPtcParams *p = ptm_gen_params(gen);

    probe.settings = (PtmSettings) { .mps = 1, .mrrs = 2, .ext_tag = true };
    *out = plan_for(gen, p, &probe, block)->sum;
}

static void ptc_cache_free(void *cache)
{
    PtcCache *c = cache;

    for (unsigned i = 0; i < G_N_ELEMENTS(c->plan); i++) {
        g_free(c->plan[i]);
    }
    g_free(c);
}

#define OFF(f) offsetof(PtmPtcParams, f)
static const PtmParamDesc ptc_params[] = {
    { "seed", PTM_PARAM_U32, OFF(seed), 0, UINT32_MAX,
      "random seed of the jitter" },
    { "link-up", PTM_PARAM_BOOL, OFF(link_up), 0, 1, "PCIe link up" },
    { "load", PTM_PARAM_U32, OFF(load), 0, 100,
      "percent of the busiest bus's capacity the DMA side asks for" },
    { "read-percent", PTM_PARAM_U32, OFF(read_percent), 0, 100,
      "percent of DMA requests that are reads" },
    { "read-bytes", PTM_PARAM_U32, OFF(read_bytes), 4, 65536,
      "bytes one DMA read asks for" },
    { "write-bytes", PTM_PARAM_U32, OFF(write_bytes), 4, 65536,
      "bytes one DMA write carries" },
    { "latency-ns", PTM_PARAM_U32, OFF(latency_ns), 0, 1000000,
      "ns from a read request to its first completion" },
    { "jitter-percent", PTM_PARAM_U32, OFF(jitter_percent), 0, 90,
      "variation of load and latency from one drain period to the next" },
    { "tags", PTM_PARAM_U32, OFF(tags), 0, 2047,
      "tags the PTC may use (0: the card's tag capacity)" },
    { "cplh-credits", PTM_PARAM_U32, OFF(cplh_credits), 0, 65535,
      "completion headers the hard IP can take (0: no limit)" },
    { "rq-stall", PTM_PARAM_U32, OFF(rq_stall), 0, 50,
      "percent of RQ words the PCIe endpoint holds a cycle" },
    { "down-stall", PTM_PARAM_U32, OFF(down_stall), 0, 50,
      "percent of time the DMA side holds the DOWN stream" },
};
#undef OFF

static void ptc_defaults(void *params)
{
    ptm_ptc_params_default(params);
}

const PtmGenModel ptm_model_ptc = {
    .name = "ptc",
    .summary = "closed-loop model of the PTC: requests, tags, completions",
    .params_size = sizeof(PtmPtcParams),
    .params = ptc_params,
    .nparams = G_N_ELEMENTS(ptc_params),
    .defaults = ptc_defaults,
    .check = ptc_check,
    .fill = ptc_fill,
    .cache_free = ptc_cache_free,
};
