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

#include "ptm-count.h"
#include "ptm-ptc.h"

#define PTC_PERIOD  256u            /* PCIe cycles of one schedule */
#define RQ_HDR      16u             /* bytes of a request TLP header */
#define RC_HDR      12u             /* bytes of a completion TLP header */
#define MAX_REQ     256u            /* DMA requests per period, at most */
#define JITTER_BLOCKS 8             /* windows that share one jitter */
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
    /* a schedule holds at most PTC_PERIOD cycles of either clock */
    if (geo->dma_hz > geo->pcie_hz) {
        return g_strdup("ptc needs a DMA clock no faster than the PCIe "
                        "clock");
    }
    if ((uint64_t)PTC_PERIOD * geo->dma_hz % geo->pcie_hz) {
        return g_strdup("ptc needs a DMA clock that is a whole fraction of "
                        "256 PCIe cycles (e.g. half of it)");
    }
    (void)p;
    return NULL;
}

/* The MFB shape of one bus. */
typedef struct Bus {
    unsigned ib, ipr, regions;
} Bus;

static uint32_t words_of(const Bus *b, uint32_t bytes)
{
    PtmFrame f;

    ptm_frame_shape(bytes, b->ib, b->ipr, b->regions, &f);
    return f.words;
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
    PtmFrame f;
    uint32_t t = start;

    ptm_frame_shape(bytes, b->ib, b->ipr, b->regions, &f);
    for (uint32_t j = 0; j < f.words; j++) {
        PtmBusCycle w = { .src_rdy = 1, .dst_rdy = 1 };

        ptm_frame_word(&f, j, mvb ? 1 : 0, &w);
        w.mvb_dst_rdy = w.mvb_src_rdy;
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

/*
 * What decides a period's schedule. Random choices are quantized (eight
 * latencies, eight positions of the held DOWN stretch) and request counts
 * are whole, so windows share schedules and a schedule is built once.
 */
typedef struct Key {
    PtmPtcParams params;
    PtmSettings settings;
    uint32_t lat, nr, nw, ph;
    bool tag_limited;
} Key;

typedef struct Plan {
    bool valid;
    Key key;
    uint32_t pd;                            /* DMA cycles per period */
    uint64_t build;                         /* unique to this schedule */
    unsigned npcie, ndma;
    PtmSegment *pcie, *dma;                 /* exactly npcie, ndma */
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
    PtmSegment seg[PTC_PERIOD];
} Work;

#define PLANS 128                           /* schedules kept, by key */
#define SLOTS 4                             /* recent blocks per endpoint */

typedef struct Recent {
    uint64_t block;
    unsigned plan;
    uint64_t gen;                           /* the plan's build number */
    bool valid;
} Recent;

/* What decide() works out for one jitter level, before a block's counts. */
typedef struct Decision {
    bool valid;
    uint64_t serial;        /* of the parameters' version, 0: unknown */
    PtmPtcParams params;
    PtmSettings settings;
    Key key;                /* nr, nw still to set */
    double nrf, nwf;
} Decision;

/* The counts of one period of a schedule, from all frames closed. */
typedef struct PassCounts {
    uint64_t build;         /* the plan's build these belong to, 0: none */
    PtmCountState out;      /* counted from a fresh state (window start) */
    uint64_t d[256];
} PassCounts;

#define SUMS 16                     /* schedules summed at once by a count */
#define PIECES 512                  /* pieces of blocks whose counts are kept */

/* The counts of cycles [from, from + n) of a block of one schedule. */
typedef struct Piece {
    uint64_t build;                 /* the plan's build, 0: empty */
    uint64_t from, n;
    uint32_t open_in;
    bool pcie;
    PassCounts c;
} Piece;

/*
 * The name of an endpoint's block (ptc_span_id): a hash of what its key
 * varies by, under one version of the parameters and the settings. The
 * probes of an endpoint name the same blocks, one after another.
 */
typedef struct BlockName {
    uint64_t block, serial;         /* serial 0: none */
    uint64_t name;
    PtmSettings settings;
} BlockName;

#define NAMES 8192                  /* blocks named per endpoint, by block */

typedef struct PtcCache {
    Decision decision[8];
    BlockName *names;                           /* NAMES per endpoint */
    uint64_t blen[2];                           /* a block: DMA, PCIe */
    uint64_t level_group[PTM_MAX_ENDPOINTS];    /* jitter group + 1 */
    uint32_t level_seed[PTM_MAX_ENDPOINTS];     /* the seed it came from */
    uint32_t level[PTM_MAX_ENDPOINTS];
    uint16_t index[64];                         /* plan slot + 1 by hash */
    PassCounts *pass[2];                        /* by domain, PLANS each */
    PassCounts *sum;                            /* SUMS, of one count */
    Piece *piece;                               /* PIECES, by hash */
    Plan plan[PLANS];
    uint64_t built[PLANS];
    uint64_t hash[PLANS];                   /* of the plan's key */
    uint64_t used[PLANS];                   /* for replacing the least recent */
    uint64_t builds, clock;
    Recent recent[PTM_MAX_ENDPOINTS * SLOTS];
    Work work;
} PtcCache;

/* Sizes that follow from the parameters, settings and bus shapes. */
typedef struct Derived {
    uint32_t P, pd, ports, mps, mrrs, rd_bytes, wr_bytes;
    uint32_t kr, kw, ncpl_tlp, tag_limit, fifo_word, fifo_need;
    uint32_t cpl_words, w_rq_rd, w_rq_wr, w_up, w_down;
    Bus rq, rc, up, down;
    double rdshare;
} Derived;

static void derive(const PtmGeometry *geo, const PtmPtcParams *p,
                   const PtmSettings *s, Derived *d)
{
    unsigned ib = geo->item_bytes;

    memset(d, 0, sizeof(*d));
    d->P = PTC_PERIOD;
    d->pd = (uint64_t)d->P * geo->dma_hz / geo->pcie_hz;
    d->ports = geo->dma_ports;
    d->mps = 128u << MIN(s->mps, 5);
    d->mrrs = 128u << MIN(s->mrrs, 5);
    d->rq = (Bus) { ib, geo->rq_region_bytes / ib, geo->rq_regions };
    d->rc = (Bus) { ib, geo->rc_region_bytes / ib, geo->rc_regions };
    d->up = (Bus) { ib, geo->up_region_bytes / ib, geo->up_regions };
    d->down = (Bus) { ib, geo->down_region_bytes / ib, geo->down_regions };
    d->rd_bytes = MAX(p->read_bytes, 1);
    d->wr_bytes = MAX(p->write_bytes, 1);
    d->kr = (d->rd_bytes + d->mrrs - 1) / d->mrrs;
    d->kw = (d->wr_bytes + d->mps - 1) / d->mps;
    d->ncpl_tlp = (MIN(d->rd_bytes, d->mrrs) + d->mps - 1) / d->mps;
    /* tags the settings allow: 5-bit, 8-bit or 10-bit tag field */
    d->tag_limit = s->tag_10bit ? 768 : s->ext_tag ? 256 : 32;
    d->tag_limit = MIN(d->tag_limit, p->tags ? p->tags : geo->tag_capacity);
    d->tag_limit = MIN(d->tag_limit, 0x7FF);
    d->fifo_word = d->rc.regions * d->rc.ipr * ib;
    d->fifo_need = (MIN(d->rd_bytes, d->mrrs) + d->fifo_word - 1) /
                   d->fifo_word;
    d->w_rq_rd = words_of(&d->rq, RQ_HDR);
    d->w_rq_wr = words_of(&d->rq, RQ_HDR + MIN(d->wr_bytes, d->mps));
    d->w_up = words_of(&d->up, d->wr_bytes);
    for (uint32_t left = d->rd_bytes; left; ) {
        uint32_t c = MIN(left, d->mps);

        d->cpl_words += words_of(&d->rc, RC_HDR + c);
        d->w_down += words_of(&d->down, c);
        left -= c;
    }
    d->rdshare = p->read_percent / 100.0;
}

/* The schedule of one endpoint's block: its latency, requests, stretch. */
/* Everything of a schedule that follows from the jitter level alone. */
static void decide_level(const PtmGen *gen, const PtmPtcParams *p,
                         const PtmSettings *set, uint32_t level, Decision *dc)
{
    const PtmGeometry *geo = &gen->geo;
    Key *key = &dc->key;
    Derived d;
    double c_rq, c_rc, c_up, c_down, ask, nf, nrf, nwf, lj;
    uint32_t n_max, hold, stretch;

    derive(geo, p, set, &d);
    memset(key, 0, sizeof(*key));
    key->params = *p;
    key->settings = *set;
    /*
     * One of eight levels of jitter moves latency, load and the held
     * stretch together: few distinct schedules, each built once.
     */
    lj = 1.0 + ((double)level / 7 * 2 - 1) * p->jitter_percent / 100.0;
    key->lat = (uint32_t)((uint64_t)p->latency_ns * geo->pcie_hz /
                          1000000000ull * lj);
    c_rq = d.rdshare * d.kr * d.w_rq_rd + (1 - d.rdshare) * d.kw * d.w_rq_wr;
    c_rc = d.rdshare * d.cpl_words;
    c_up = (1 - d.rdshare) * d.w_up / d.ports;
    c_down = d.rdshare * d.w_down / d.ports;
    /* the RQ also carries the endpoint's stalls */
    ask = d.P / (c_rq * (1 + p->rq_stall / 100.0) + 1e-9);
    ask = MIN(ask, d.P / (c_rc + 1e-9));
    /*
     * the DMA side places whole frames around the held stretch: leave
     * it room to fit them
     */
    ask = MIN(ask, 0.9 * d.pd * (1 - p->down_stall / 100.0) /
                   (c_down + 1e-9));
    ask = MIN(ask, 0.9 * d.pd / (c_up + 1e-9));
    n_max = (uint32_t)MIN(ask * 0.97, (double)MAX_REQ);
    /* a longer latency comes with a lighter load */
    nf = n_max * MIN(p->load * (2 - lj), 100.0) / 100.0;
    nrf = nf * d.rdshare;

    /*
     * A read TLP holds its tag from its issue to the end of its last
     * completion, and its FIFO words until DOWN has taken them: the
     * sustainable read rate is what the resources allow (Little's law).
     */
    hold = key->lat + d.cpl_words / d.kr + 2;
    if (nrf * d.kr * hold > (double)d.tag_limit * d.P) {
        nrf = (double)d.tag_limit * d.P / hold / d.kr;
        key->tag_limited = true;
    }
    nrf = MIN(nrf, (double)geo->stfifo_capacity * d.P /
                   ((hold + 8.0) * d.fifo_need * d.kr));
    if (p->cplh_credits) {
        nrf = MIN(nrf, (double)p->cplh_credits * d.P /
                       ((double)hold * d.ncpl_tlp * d.kr));
    }
    /* requests leave the DMA side in order: writes wait behind reads */
    nf = d.rdshare > 0 ? MIN(nf, nrf / d.rdshare) : nf;
    nwf = nf - (d.rdshare > 0 ? nrf : 0);
    dc->nrf = nrf;
    dc->nwf = nwf;
    /* the DMA side holds DOWN for a stretch, at one of eight places */
    stretch = d.pd * p->down_stall / 100;
    key->ph = stretch ? level * (d.pd - stretch) / 7 : 0;
}


/* floor(), by a conversion where that is exact (the common case, faster) */
static inline double floor_of(double x)
{
    return x >= 0 && x < 0x1p62 ? (double)(int64_t)x : floor(x);
}

/*
 * The decision for an endpoint's block: its jitter level's, and the block's
 * whole requests in *nr, *nw (what varies from block to block).
 */
static const Decision *decide_counts(const PtmGen *gen, const PtmPtcParams *p,
                                     const PtmProbeInfo *probe, uint64_t block,
                                     uint64_t serial, uint32_t *nr,
                                     uint32_t *nw)
{
    PtcCache *c = gen->cache;
    /*
     * The jitter changes every JITTER_BLOCKS windows; endpoints run through
     * the same sequence of levels, each from its own place in it, so they
     * differ at any moment and share schedules.
     */
    unsigned e = probe->endpoint;
    uint32_t level;
    Decision *dc;

    /* a live change of the seed may come within a group: key on both */
    if (c->level_group[e] != block / JITTER_BLOCKS + 1 ||
        c->level_seed[e] != p->seed) {
        PtmRng r = { ptm_hash(p->seed, block / JITTER_BLOCKS + 5 * e,
                              0, 0x707463) };

        c->level[e] = ptm_rng_next(&r) % 8;
        c->level_group[e] = block / JITTER_BLOCKS + 1;
        c->level_seed[e] = p->seed;
    }
    level = c->level[e];
    dc = &c->decision[level];

    if (!dc->valid ||
        (serial ? dc->serial != serial
                : memcmp(&dc->params, p, sizeof(*p)) != 0) ||
        memcmp(&dc->settings, &probe->settings, sizeof(probe->settings))) {
        decide_level(gen, p, &probe->settings, level, dc);
        dc->params = *p;
        dc->settings = probe->settings;
        dc->valid = true;
    }
    dc->serial = serial;
    /* whole requests per period; the fractions carry from block to block */
    *nr = (uint32_t)(floor_of(dc->nrf * (block + 1)) -
                     floor_of(dc->nrf * block));
    *nw = (uint32_t)(floor_of(dc->nwf * (block + 1)) -
                     floor_of(dc->nwf * block));
    if (*nr + *nw > MAX_REQ) {
        *nw = MAX_REQ - MIN(*nr, MAX_REQ);
        *nr = MIN(*nr, MAX_REQ);
    }
    return dc;
}

/* The schedule of one endpoint's block: its latency, requests, stretch. */
static void decide(const PtmGen *gen, const PtmPtcParams *p,
                   const PtmProbeInfo *probe, uint64_t block, Key *key)
{
    uint32_t nr, nw;
    const Decision *dc = decide_counts(gen, p, probe, block,
                                       ptm_gen_params_serial(gen, p),
                                       &nr, &nw);

    *key = dc->key;
    key->nr = nr;
    key->nw = nw;
}

/*
 * Build the schedule with nr reads and nw writes; false if a frame found no
 * room (the caller then tries with fewer requests).
 */
static bool build_once(const PtmGen *gen, const Key *key, uint32_t nr,
                       uint32_t nw, Work *w, Plan *pl)
{
    const PtmGeometry *geo = &gen->geo;
    const PtmPtcParams *p = &key->params;
    Derived dv;
    uint32_t P, pd, ports, mps, mrrs, rd_bytes, wr_bytes, kr, kw, ncpl_tlp;
    uint32_t tag_limit, fifo_need, lat, n, rq_cur = 0, reads = 0, writes = 0;
    bool failed = false;
    Bus rq, rc, up, down;
    Req *req = w->req;
    Cpl *cpl = w->cpl;
    uint32_t ncpl = 0, stretch, ph;
    int32_t tag_base = 0, fifo_base = 0, cplh_base = 0;

    derive(geo, p, &key->settings, &dv);
    P = dv.P;
    pd = dv.pd;
    ports = dv.ports;
    mps = dv.mps;
    mrrs = dv.mrrs;
    rd_bytes = dv.rd_bytes;
    wr_bytes = dv.wr_bytes;
    kr = dv.kr;
    kw = dv.kw;
    ncpl_tlp = dv.ncpl_tlp;
    tag_limit = dv.tag_limit;
    fifo_need = dv.fifo_need;
    rq = dv.rq;
    rc = dv.rc;
    up = dv.up;
    down = dv.down;
    lat = key->lat;
    n = nr + nw;

    /* only what this card uses needs clearing */
    memset(w->pc, 0, sizeof(w->pc));
    memset(w->rq, 0, sizeof(w->rq));
    memset(w->rc, 0, sizeof(w->rc));
    for (unsigned b = 0; b < 2 * ports; b++) {
        memset(w->dma[b], 0, pd * sizeof(w->dma[b][0]));
    }
    memset(w->d_tag, 0, sizeof(w->d_tag));
    memset(w->d_fifo, 0, sizeof(w->d_fifo));
    memset(w->d_cplh, 0, sizeof(w->d_cplh));
    memset(w->release, 0, sizeof(w->release));

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

        /* reads and writes each go round the ports */
        req[i] = (Req) { .read = read,
                         .port = (read ? reads++ : writes++) % ports };
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
                        failed = true;      /* RC full */
                        break;
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
    ph = key->ph;

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
            if (k == pd - 1) {
                failed = true;      /* UP full */
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
        if (at < 0) {
            failed = true;          /* DOWN full */
            break;
        }
        put_frame(bus, at, &down, cpl[i].bytes, true, NULL);
    }
    if (failed) {
        return false;
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

    /* run-length encode both sides, into plans of their exact size */
    g_free(pl->pcie);
    g_free(pl->dma);
    pl->npcie = 0;
    for (uint32_t t = 0; t < P; t++) {
        PtmSegment *sg;

        if (pl->npcie &&
            !memcmp(&w->pc[t], &w->pc[t - 1], sizeof(w->pc[0]))) {
            w->seg[pl->npcie - 1].cycles++;
            continue;
        }
        sg = &w->seg[pl->npcie++];
        memset(sg, 0, offsetof(PtmSegment, bus));
        sg->cycles = 1;
        sg->brake = w->pc[t].brake;
        sg->tag_free = w->pc[t].tags;
        sg->stfifo_free = w->pc[t].fifo;
        sg->link_up = p->link_up;
        sg->bus[0] = w->pc[t].rq;
        sg->bus[1] = w->pc[t].rc;
    }
    pl->pcie = g_memdup2(w->seg, pl->npcie * sizeof(PtmSegment));
    pl->ndma = 0;
    for (uint32_t t = 0; t < pd; t++) {
        bool same = pl->ndma > 0;
        PtmSegment *sg;

        for (unsigned b = 0; same && b < 2 * ports; b++) {
            same = !memcmp(&w->dma[b][t], &w->dma[b][t - 1],
                           sizeof(PtmBusCycle));
        }
        if (same) {
            w->seg[pl->ndma - 1].cycles++;
            continue;
        }
        sg = &w->seg[pl->ndma++];
        memset(sg, 0, offsetof(PtmSegment, bus));
        sg->cycles = 1;
        sg->link_up = p->link_up;
        for (unsigned b = 0; b < 2 * ports; b++) {
            sg->bus[b] = w->dma[b][t];
        }
    }
    pl->dma = g_memdup2(w->seg, pl->ndma * sizeof(PtmSegment));
    pl->valid = true;
    pl->key = *key;
    pl->pd = pd;
    return true;
}

/*
 * The requests of a block are whole numbers with the fraction carried from
 * block to block; a block that rounds up may not fit where the average
 * does. Then it gets one request less, a read first, until every frame has
 * room: no completion is ever dropped.
 */
static void build_plan(const PtmGen *gen, const Key *key, Work *w,
                       Plan *pl)
{
    uint32_t nr = key->nr, nw = key->nw;

    while (!build_once(gen, key, nr, nw, w, pl)) {
        if (nr) {
            nr--;
        } else if (nw) {
            nw--;
        }
    }
}

static Plan *plan_for(const PtmGen *gen, const PtmPtcParams *p,
                      const PtmProbeInfo *probe, uint64_t block)
{
    PtmGen *g = (PtmGen *)gen;      /* the cache is derived data only */
    PtcCache *c;
    Recent *rc;
    Key key;
    unsigned slot;
    uint64_t h;

    if (!g->cache) {
        g->cache = g_new0(PtcCache, 1);
    }
    c = g->cache;
    /* the PCIe and DMA probes of an endpoint ask for the same blocks */
    rc = &c->recent[probe->endpoint * SLOTS + block % SLOTS];
    if (rc->valid && rc->block == block &&
        c->built[rc->plan] == rc->gen &&
        !memcmp(&c->plan[rc->plan].key.params, p, sizeof(*p)) &&
        !memcmp(&c->plan[rc->plan].key.settings, &probe->settings,
                sizeof(probe->settings))) {
        return &c->plan[rc->plan];
    }
    decide(gen, p, probe, block, &key);
    h = ptm_hash(key.lat, key.nr, key.nw,
                 key.ph ^ (uint64_t)key.tag_limited << 32);
    slot = c->index[h & 63];
    if (slot && c->plan[slot - 1].valid && c->hash[slot - 1] == h &&
        !memcmp(&c->plan[slot - 1].key, &key, sizeof(key))) {
        slot--;
        goto found;
    }
    slot = PLANS;
    for (unsigned i = 0, lru = 0; i < PLANS; i++) {
        if (c->plan[i].valid && c->hash[i] == h &&
            !memcmp(&c->plan[i].key, &key, sizeof(key))) {
            slot = i;
            break;
        }
        if (c->used[i] < c->used[lru]) {
            lru = i;
        }
        if (i == PLANS - 1) {
            slot = lru;
            build_plan(gen, &key, &c->work, &c->plan[slot]);
            c->hash[slot] = h;
            c->built[slot] = ++c->builds;
            c->plan[slot].build = c->builds;
        }
    }
    c->index[h & 63] = slot + 1;
found:
    c->used[slot] = ++c->clock;
    *rc = (Recent) { .block = block, .plan = slot, .gen = c->built[slot],
                     .valid = true };
    return &c->plan[slot];
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
    /* a schedule's build number names its segment lists */
    return ptm_serve_periodic(pcie ? pl->pcie : pl->dma,
                              pcie ? pl->npcie : pl->ndma, period,
                              in_block % period, max,
                              2 * pl->build + !pcie + 1, out);
}

/* The counts of one period of plan pl for a probe of shape sh. */
static const PassCounts *pass_counts(PtcCache *c, const Plan *pl,
                                     const PtmProbeShape *sh)
{
    bool pcie = sh->info.domain == PTM_DOMAIN_PCIE;
    PassCounts *pc;
    PtmChunk ch = { .repeat = 1 };

    if (!c->pass[!pcie]) {
        c->pass[!pcie] = g_new0(PassCounts, PLANS);
    }
    pc = &c->pass[!pcie][pl - c->plan];
    if (pc->build == pl->build) {
        return pc;
    }
    memset(pc->d, 0, sizeof(pc->d));
    ch.seg = pcie ? pl->pcie : pl->dma;
    ch.nseg = pcie ? pl->npcie : pl->ndma;
    pc->out = (PtmCountState) { 0 };
    ptm_count_state_window_start(&pc->out);
    ptm_count_chunk(sh, &pc->out, &ch, pc->d);
    pc->build = pl->build;
    return pc;
}

/* Cycles [from, from + n) of a block of plan pl, counted from state *st. */
static void count_piece_direct(const Plan *pl, const PtmProbeShape *sh,
                               uint64_t from, uint64_t n, PtmCountState *st,
                               uint64_t *acc)
{
    bool pcie = sh->info.domain == PTM_DOMAIN_PCIE;
    uint64_t period = pcie ? PTC_PERIOD : pl->pd;
    uint64_t stop = from + n;
    PtmSegment cut;
    PtmChunk ch = { .scratch = &cut };

    while (from < stop) {
        uint64_t whole = (stop - from) / period;

        if (from % period == 0 && whole) {
            ch.seg = pcie ? pl->pcie : pl->dma;
            ch.nseg = pcie ? pl->npcie : pl->ndma;
            ch.repeat = whole;
            ptm_count_chunk(sh, st, &ch, acc);
            from += whole * period;
            continue;
        }
        from += ptm_serve_periodic(pcie ? pl->pcie : pl->dma,
                                   pcie ? pl->npcie : pl->ndma, period,
                                   from % period, stop - from, 0, &ch);
        ptm_count_chunk(sh, st, &ch, acc);
    }
}

static void count_piece(PtcCache *c, const Plan *pl, const PtmProbeShape *sh,
                        uint64_t from, uint64_t n, PtmCountState *st,
                        uint64_t *acc)
{
    bool pcie = sh->info.domain == PTM_DOMAIN_PCIE;
    Piece *p;

    if (!c->piece) {
        c->piece = g_new0(Piece, PIECES);
    }
    p = &c->piece[ptm_hash(pl->build, from, n, st->open * 2 + pcie) %
                  PIECES];
    if (p->build != pl->build || p->from != from || p->n != n ||
        p->open_in != st->open || p->pcie != pcie) {
        p->c.out = (PtmCountState) { .open = st->open };
        ptm_count_state_window_start(&p->c.out);
        memset(p->c.d, 0, sh->channels * sizeof(p->c.d[0]));
        count_piece_direct(pl, sh, from, n, &p->c.out, p->c.d);
        p->build = pl->build;
        p->from = from;
        p->n = n;
        p->open_in = st->open;
        p->pcie = pcie;
    }
    for (unsigned ci = 0; ci < sh->channels; ci++) {
        acc[ci] += p->c.d[ci];
    }
    ptm_count_state_append(st, &p->c.out);
}

/*
 * Whole blocks by the counts of their schedule's period, summed per
 * schedule (a few distinct ones serve many blocks); pieces of blocks and
 * schedules that leave a frame open at their end as fill has them.
 */
static bool ptc_count(const PtmGen *gen, const void *params,
                      const PtmProbeShape *sh, uint64_t start, uint64_t end,
                      PtmCountState *st, uint64_t *acc)
{
    const PtmProbeInfo *probe = &sh->info;
    const PtmPtcParams *p = params;
    bool pcie = probe->domain == PTM_DOMAIN_PCIE;
    uint64_t pd = (uint64_t)PTC_PERIOD * gen->geo.dma_hz / gen->geo.pcie_hz;
    uint64_t period = pcie ? PTC_PERIOD : pd;
    uint64_t blen = gen->geo.drain_period * period / PTC_PERIOD;
    uint64_t reps = blen / period, blocks[SUMS];
    unsigned nsum = 0;
    Key keys[SUMS];
    PtmSegment cut;
    PtmChunk ch = { .scratch = &cut };
    PtcCache *c = gen->cache;

    if (blen % period || sh->channels > 256) {
        return false;
    }
    while (start < end) {
        uint64_t block = start / blen, in_block = start % blen;
        Plan *pl;
        const PassCounts *pc;
        unsigned k;
        Key key;

        if (!in_block && end - start >= blen && nsum && !st->open) {
            /* within one count the parameters and settings stay: a
             * schedule is named by what decide() varies per block */
            decide(gen, p, probe, block, &key);
            for (k = 0; k < nsum; k++) {
                if (keys[k].lat == key.lat && keys[k].nr == key.nr &&
                    keys[k].nw == key.nw && keys[k].ph == key.ph &&
                    keys[k].tag_limited == key.tag_limited) {
                    break;
                }
            }
            if (k < nsum) {
                blocks[k]++;
                ptm_count_state_append(st, &c->sum[k].out);
                start += blen;
                continue;
            }
        }
        pl = plan_for(gen, p, probe, block);
        c = gen->cache;
        if (in_block || end - start < blen) {
            uint64_t n = MIN(end - start, blen - in_block);

            /*
             * Drain windows cut blocks at the same places again and again:
             * the counts of such a piece are kept
             */
            count_piece(c, pl, sh, in_block, n, st, acc);
            start += n;
            continue;
        }
        pc = pass_counts(c, pl, sh);
        if (st->open || pc->out.open) {
            ch.seg = pcie ? pl->pcie : pl->dma;
            ch.nseg = pcie ? pl->npcie : pl->ndma;
            ch.repeat = reps;
            ptm_count_chunk(sh, st, &ch, acc);
            start += blen;
            continue;
        }
        if (!c->sum) {
            c->sum = g_new0(PassCounts, SUMS);
        }
        /* a copy: a schedule built later may take the plan's slot */
        for (k = 0; k < nsum && c->sum[k].build != pc->build; k++) {
        }
        if (k == nsum) {
            if (nsum == SUMS) {
                for (unsigned j = 0; j < nsum; j++) {
                    for (unsigned ci = 0; ci < sh->channels; ci++) {
                        acc[ci] += c->sum[j].d[ci] * blocks[j] * reps;
                    }
                }
                nsum = k = 0;
            }
            c->sum[nsum] = *pc;
            keys[nsum] = pl->key;
            blocks[nsum++] = 0;
        }
        blocks[k]++;
        ptm_count_state_append(st, &pc->out);
        start += blen;
    }
    for (unsigned j = 0; j < nsum; j++) {
        for (unsigned ci = 0; ci < sh->channels; ci++) {
            acc[ci] += c->sum[j].d[ci] * blocks[j] * reps;
        }
    }
    return true;
}

static void ptc_cache_free(void *cache)
{
    PtcCache *c = cache;

    g_free(c->pass[0]);
    g_free(c->pass[1]);
    g_free(c->sum);
    g_free(c->piece);
    g_free(c->names);
    for (unsigned i = 0; i < PLANS; i++) {
        g_free(c->plan[i].pcie);
        g_free(c->plan[i].dma);
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

/*
 * Within a block a span is what fill makes of it: the segments of the
 * block's schedule from the span's phase, and a schedule is built from
 * its key alone (blocks of one key share it). Within one version of the
 * parameters (the generator names that) the key is what decide() varies
 * per block, and the settings.
 */
/* Decide block `block` of the probe's endpoint and name it in *bn. */
static __attribute__((noinline)) void name_block(const PtmGen *gen,
                                                 const void *params,
                                                 const PtmProbeInfo *probe,
                                                 uint64_t block,
                                                 uint64_t serial,
                                                 BlockName *bn)
{
    const PtmSettings *st = &probe->settings;
    uint32_t nr, nw;
    const Decision *dc = decide_counts(gen, params, probe, block, serial,
                                       &nr, &nw);
    const Key *k = &dc->key;

    *bn = (BlockName) {
        .block = block, .serial = serial, .settings = *st,
        .name = ptm_mix64(ptm_mix64((uint64_t)k->lat << 32 ^ k->ph ^
                                    (uint64_t)k->tag_limited << 63) ^
                          ((uint64_t)nr << 40 ^ (uint64_t)nw << 20 ^
                           (uint64_t)(st->mps & 7) << 10 ^
                           (uint64_t)(st->mrrs & 7) << 13 ^
                           (uint64_t)st->ext_tag << 16 ^
                           (uint64_t)st->tag_10bit << 17 ^
                           (uint64_t)st->rcb_128 << 18)),
    };
}

/* The name of block `block` of the probe's endpoint, decided once. */
static inline uint64_t block_name(const PtmGen *gen, PtcCache *c,
                                  const void *params,
                                  const PtmProbeInfo *probe, uint64_t block,
                                  uint64_t serial)
{
    const PtmSettings *st = &probe->settings;
    BlockName *bn = &c->names[probe->endpoint * NAMES +
                              (block & (NAMES - 1))];

    if (!serial || bn->serial != serial || bn->block != block ||
        memcmp(&bn->settings, st, sizeof(*st))) {
        name_block(gen, params, probe, block, serial, bn);
    }
    return bn->name;
}

/* The cache, and the length of a block in the probe's domain. */
static inline PtcCache *names_cache(const PtmGen *gen,
                                    const PtmProbeInfo *probe, uint64_t *blen)
{
    PtmGen *g = (PtmGen *)gen;      /* the cache is derived data only */
    PtcCache *c = g->cache;

    if (!c) {
        c = g->cache = g_new0(PtcCache, 1);
    }
    if (!c->names) {
        uint64_t pd = (uint64_t)PTC_PERIOD * gen->geo.dma_hz /
                      gen->geo.pcie_hz;

        c->names = g_new0(BlockName, (size_t)PTM_MAX_ENDPOINTS * NAMES);
        c->blen[0] = gen->geo.drain_period * pd / PTC_PERIOD;
        c->blen[1] = gen->geo.drain_period;
    }
    *blen = c->blen[probe->domain == PTM_DOMAIN_PCIE];
    return c;
}

/* (blocks are mostly a power of two long: no division then) */
static inline uint64_t block_of(uint64_t start, uint64_t blen)
{
    return blen & (blen - 1) ? start / blen : start >> __builtin_ctzll(blen);
}

/* A piece's name: its block's, where in the block it starts, how long. */
static inline uint64_t piece_name(uint64_t name, bool pcie, uint64_t in_block,
                                  uint64_t len)
{
    /* (the name is a hash already: the engine hashes the piece's id) */
    return (name ^ (uint64_t)pcie << 63 ^
            (in_block | len << 32) * 0x9e3779b97f4a7c15ull) | 1;
}

static uint64_t ptc_span_id(const PtmGen *gen, const void *params,
                            const PtmProbeInfo *probe, uint64_t start,
                            uint64_t max, uint64_t *len)
{
    uint64_t blen, block, in_block;
    PtcCache *c = names_cache(gen, probe, &blen);

    block = block_of(start, blen);
    in_block = start - block * blen;
    *len = MIN(max, blen - in_block);
    return piece_name(block_name(gen, c, params, probe, block,
                                 ptm_gen_params_serial(gen, params)),
                      probe->domain == PTM_DOMAIN_PCIE, in_block, *len);
}

/* As ptc_span_id, piece after piece: one lookup of what they share. */
static unsigned ptc_span_ids(const PtmGen *gen, const void *params,
                             const PtmProbeInfo *probe, uint64_t start,
                             uint64_t end, uint64_t *ids, uint64_t *lens,
                             unsigned max)
{
    uint64_t blen, block, in_block, serial = ptm_gen_params_serial(gen, params);
    PtcCache *c = names_cache(gen, probe, &blen);
    bool pcie = probe->domain == PTM_DOMAIN_PCIE;
    unsigned n = 0;

    block = block_of(start, blen);
    in_block = start - block * blen;
    for (; start < end; block++, in_block = 0) {
        uint64_t len = MIN(end - start, blen - in_block);

        if (n == max) {
            return 0;
        }
        ids[n] = piece_name(block_name(gen, c, params, probe, block, serial),
                            pcie, in_block, len);
        lens[n++] = len;
        start += len;
    }
    return n;
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
    .count = ptc_count,
    .span_id = ptc_span_id,
    .span_ids = ptc_span_ids,
    .cache_free = ptc_cache_free,
};
