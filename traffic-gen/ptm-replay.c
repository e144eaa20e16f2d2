/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The replay generator: per-cycle signals recorded by an HDL simulation of
 * the firmware, from a VCD file that uses the port names of
 * PCIE_TELEMETRY_MI or from the plain text format of docs/replay.md.
 *
 * A file is read once per (file, scope, card geometry) into one run-length
 * list per probe: cycle k of a probe is the k-th rising edge of its clock in
 * the file, sampled with the values from before that timestamp's changes.
 * A run is an index into the probe's table of distinct samples, each packed
 * into a few bytes per bus, so a long trace costs 12 bytes per change of
 * what the probe sees. fill() unpacks runs into segments; a looped trace of
 * fewer runs than a chunk holds is played whole with the chunk's repeat.
 *
 * Samples are stored normalised: fields no counter can see (SOF, EOF,
 * EOF_POS and DST_RDY of a bus without SRC_RDY, the MVB valid bits and
 * DST_RDY without MVB SRC_RDY, EOF_POS of a region without EOF, the MVB of
 * the PCIe side) are cleared, so that runs merge and x/z there is ignored.
 */
#include <glib.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ptm-core.h"
#include "ptm-replay.h"

#define PROBES          (2 * PTM_MAX_ENDPOINTS)
#define PROBE_INDEX(e, d) (2 * (e) + (d))
#define DMA_CLOCK       PTM_MAX_ENDPOINTS   /* clock slot of DMA_CLK */

/* ------------------------------------------------------------ the ports */

typedef enum PortKind {
    PK_ARRAY,           /* slv_array_t: a vector per endpoint */
    PK_EPVEC,           /* std_logic_vector: a bit per endpoint */
    PK_SCALAR,          /* std_logic shared by all endpoints */
} PortKind;

enum {
    PORT_PCIE_CLK, PORT_PCIE_SOF, PORT_PCIE_EOF, PORT_PCIE_EOF_POS,
    PORT_PCIE_SRC_RDY, PORT_PCIE_DST_RDY, PORT_BRAKE, PORT_STFIFO_FREE,
    PORT_TAG_FREE, PORT_MPS, PORT_MRRS, PORT_EXT_TAG, PORT_TAG_10B,
    PORT_RCB, PORT_LINK_UP,
    PORT_DMA_CLK, PORT_DMA_SOF, PORT_DMA_EOF, PORT_DMA_EOF_POS,
    PORT_DMA_SRC_RDY, PORT_DMA_DST_RDY, PORT_MVB_VLD, PORT_MVB_SRC_RDY,
    PORT_MVB_DST_RDY,
    NPORTS
};

typedef struct PortDesc {
    const char *name;           /* lower case, as matched */
    PortKind kind;
    PtmDomain dom;
} PortDesc;

#define PORT(id, nm, k, d) [id] = { nm, k, d }
static const PortDesc port_tab[NPORTS] = {
    PORT(PORT_PCIE_CLK, "pcie_clk", PK_EPVEC, PTM_DOMAIN_PCIE),
    PORT(PORT_PCIE_SOF, "pcie_mfb_sof", PK_ARRAY, PTM_DOMAIN_PCIE),
    PORT(PORT_PCIE_EOF, "pcie_mfb_eof", PK_ARRAY, PTM_DOMAIN_PCIE),
    PORT(PORT_PCIE_EOF_POS, "pcie_mfb_eof_pos", PK_ARRAY, PTM_DOMAIN_PCIE),
    PORT(PORT_PCIE_SRC_RDY, "pcie_mfb_src_rdy", PK_ARRAY, PTM_DOMAIN_PCIE),
    PORT(PORT_PCIE_DST_RDY, "pcie_mfb_dst_rdy", PK_ARRAY, PTM_DOMAIN_PCIE),
    PORT(PORT_BRAKE, "pcie_ptc_brake", PK_ARRAY, PTM_DOMAIN_PCIE),
    PORT(PORT_STFIFO_FREE, "pcie_stfifo_free", PK_ARRAY, PTM_DOMAIN_PCIE),
    PORT(PORT_TAG_FREE, "pcie_tag_free", PK_ARRAY, PTM_DOMAIN_PCIE),
    PORT(PORT_MPS, "pcie_mps", PK_ARRAY, PTM_DOMAIN_PCIE),
    PORT(PORT_MRRS, "pcie_mrrs", PK_ARRAY, PTM_DOMAIN_PCIE),
    PORT(PORT_EXT_TAG, "pcie_ext_tag_en", PK_EPVEC, PTM_DOMAIN_PCIE),
    PORT(PORT_TAG_10B, "pcie_10b_tag_req_en", PK_EPVEC, PTM_DOMAIN_PCIE),
    PORT(PORT_RCB, "pcie_rcb_size", PK_EPVEC, PTM_DOMAIN_PCIE),
    PORT(PORT_LINK_UP, "pcie_link_up", PK_EPVEC, PTM_DOMAIN_PCIE),
    PORT(PORT_DMA_CLK, "dma_clk", PK_SCALAR, PTM_DOMAIN_DMA),
    PORT(PORT_DMA_SOF, "dma_mfb_sof", PK_ARRAY, PTM_DOMAIN_DMA),
    PORT(PORT_DMA_EOF, "dma_mfb_eof", PK_ARRAY, PTM_DOMAIN_DMA),
    PORT(PORT_DMA_EOF_POS, "dma_mfb_eof_pos", PK_ARRAY, PTM_DOMAIN_DMA),
    PORT(PORT_DMA_SRC_RDY, "dma_mfb_src_rdy", PK_ARRAY, PTM_DOMAIN_DMA),
    PORT(PORT_DMA_DST_RDY, "dma_mfb_dst_rdy", PK_ARRAY, PTM_DOMAIN_DMA),
    PORT(PORT_MVB_VLD, "dma_mvb_vld", PK_ARRAY, PTM_DOMAIN_DMA),
    PORT(PORT_MVB_SRC_RDY, "dma_mvb_src_rdy", PK_ARRAY, PTM_DOMAIN_DMA),
    PORT(PORT_MVB_DST_RDY, "dma_mvb_dst_rdy", PK_ARRAY, PTM_DOMAIN_DMA),
};
#undef PORT

static bool port_is_clock(unsigned port)
{
    return port == PORT_PCIE_CLK || port == PORT_DMA_CLK;
}

static int port_find(const char *lower)
{
    for (unsigned i = 0; i < NPORTS; i++) {
        if (!strcmp(port_tab[i].name, lower)) {
            return i;
        }
    }
    return -1;
}

/* What the card's geometry makes of the ports. */
typedef struct Shape {
    unsigned endpoints;
    unsigned buses[2];          /* per domain */
    unsigned regions[2];        /* regions of the probe: the wider bus */
    unsigned pos_width[2];      /* bits of one EOF_POS field */
    uint16_t tags_idle, stfifo_idle;
} Shape;

static unsigned clog2u(unsigned v)
{
    unsigned r = 0;

    while ((1u << r) < v) {
        r++;
    }
    return r;
}

static void shape_init(Shape *sh, const PtmGeometry *geo)
{
    unsigned ib = MAX(geo->item_bytes, 1u);

    sh->endpoints = MIN(geo->endpoints, PTM_MAX_ENDPOINTS);
    sh->buses[PTM_DOMAIN_PCIE] = 2;
    sh->buses[PTM_DOMAIN_DMA] = MIN(2 * geo->dma_ports, PTM_MAX_BUSES);
    sh->regions[PTM_DOMAIN_PCIE] = MIN(MAX(geo->rq_regions, geo->rc_regions),
                                       PTM_MAX_REGIONS);
    sh->regions[PTM_DOMAIN_DMA] = MIN(MAX(geo->up_regions, geo->down_regions),
                                      PTM_MAX_REGIONS);
    /* the firmware insists on log2 of the larger region's items */
    sh->pos_width[PTM_DOMAIN_PCIE] =
        MIN(clog2u(MAX(geo->rq_region_bytes, geo->rc_region_bytes) / ib), 8);
    sh->pos_width[PTM_DOMAIN_DMA] =
        MIN(clog2u(MAX(geo->up_region_bytes, geo->down_region_bytes) / ib), 8);
    sh->tags_idle = MIN(geo->tag_capacity, 0x7FFu);
    sh->stfifo_idle = MIN(geo->stfifo_capacity, 0xFFFFu);
}

/* Bits of one element of a port on this card, and how that comes about. */
static unsigned port_width(const Shape *sh, unsigned port, char *why,
                           size_t len)
{
    PtmDomain d = port_tab[port].dom;
    unsigned B = sh->buses[d], R = sh->regions[d], W = sh->pos_width[d];

    switch (port) {
    case PORT_PCIE_SOF: case PORT_PCIE_EOF:
    case PORT_DMA_SOF: case PORT_DMA_EOF: case PORT_MVB_VLD:
        snprintf(why, len, "%u buses x %u regions", B, R);
        return B * R;
    case PORT_PCIE_EOF_POS: case PORT_DMA_EOF_POS:
        snprintf(why, len, "%u buses x %u regions x %u-bit EOF_POS", B, R, W);
        return B * R * W;
    case PORT_PCIE_SRC_RDY: case PORT_PCIE_DST_RDY:
    case PORT_DMA_SRC_RDY: case PORT_DMA_DST_RDY:
    case PORT_MVB_SRC_RDY: case PORT_MVB_DST_RDY:
        snprintf(why, len, "one bit per bus, %u buses", B);
        return B;
    case PORT_BRAKE:
        snprintf(why, len, "6 BRAKE reasons");
        return 6;
    case PORT_STFIFO_FREE:
        snprintf(why, len, "16 bits");
        return 16;
    case PORT_TAG_FREE:
        snprintf(why, len, "11 bits");
        return 11;
    case PORT_MPS: case PORT_MRRS:
        snprintf(why, len, "3 bits");
        return 3;
    default:
        snprintf(why, len, "one bit");
        return 1;
    }
}

/* ------------------------------------------------------------- samples */

enum {
    SET_MPS = 1, SET_MRRS = 2, SET_EXT_TAG = 4, SET_TAG_10B = 8, SET_RCB = 16,
};

typedef struct SampleBus {
    uint16_t sof, eof, vld;
    uint8_t src, dst, msrc, mdst;
    uint8_t pos[PTM_MAX_REGIONS];
} SampleBus;

/* One cycle of one probe while it is read. */
typedef struct Sample {
    uint8_t brake, link, set_mask;
    PtmSettings set;                /* the fields set_mask names */
    uint16_t tags, stfifo;
    SampleBus bus[PTM_MAX_BUSES];
} Sample;

/* A probe with all its ports absent. */
static void sample_idle(const Shape *sh, Sample *s)
{
    memset(s, 0, sizeof(*s));
    s->link = 1;
    s->tags = sh->tags_idle;
    s->stfifo = sh->stfifo_idle;
}

/* Clear what no counter sees, so that equal counts mean equal samples. */
static void sample_normalize(const Shape *sh, PtmDomain d, Sample *s)
{
    for (unsigned b = 0; b < sh->buses[d]; b++) {
        SampleBus *sb = &s->bus[b];

        if (!sb->src) {
            sb->dst = 0;
            sb->sof = sb->eof = 0;
        }
        for (unsigned r = 0; r < PTM_MAX_REGIONS; r++) {
            if (!(sb->eof >> r & 1)) {
                sb->pos[r] = 0;
            }
        }
        if (!sb->msrc || d == PTM_DOMAIN_PCIE) {
            sb->msrc = sb->mdst = 0;
            sb->vld = 0;
        }
    }
    if (d == PTM_DOMAIN_DMA) {
        /* the DMA probe has no BRAKE, resources or settings */
        s->brake = s->link = s->set_mask = 0;
        memset(&s->set, 0, sizeof(s->set));
        s->tags = s->stfifo = 0;
    }
}

/*
 * Packed sample: 8 bytes (BRAKE | link << 6, settings mask, MPS | MRRS << 3
 * | ext tag << 6 | 10-bit tag << 7, RCB, free tags, free words), then per
 * bus SOF, EOF, MVB valid (16 bits each), the handshakes and one EOF_POS
 * byte per region.
 */
#define PACK_HDR 8
#define PACK_BUS 7
#define PACK_MAX (PACK_HDR + PTM_MAX_BUSES * (PACK_BUS + PTM_MAX_REGIONS))

static unsigned pack_stride(unsigned buses, unsigned regions)
{
    return PACK_HDR + buses * (PACK_BUS + regions);
}

static void put16(uint8_t *o, uint16_t v)
{
    o[0] = v;
    o[1] = v >> 8;
}

static uint16_t get16(const uint8_t *i)
{
    return i[0] | i[1] << 8;
}

static void sample_pack(const Sample *s, unsigned B, unsigned R, uint8_t *o)
{
    o[0] = (s->brake & 0x3F) | (s->link & 1) << 6;
    o[1] = s->set_mask;
    o[2] = (s->set.mps & 7) | (s->set.mrrs & 7) << 3 | s->set.ext_tag << 6 |
           s->set.tag_10bit << 7;
    o[3] = s->set.rcb_128;
    put16(o + 4, s->tags);
    put16(o + 6, s->stfifo);
    o += PACK_HDR;
    for (unsigned b = 0; b < B; b++) {
        const SampleBus *sb = &s->bus[b];

        put16(o, sb->sof);
        put16(o + 2, sb->eof);
        put16(o + 4, sb->vld);
        o[6] = sb->src | sb->dst << 1 | sb->msrc << 2 | sb->mdst << 3;
        memcpy(o + PACK_BUS, sb->pos, R);
        o += PACK_BUS + R;
    }
}

static void unpack_segment(const uint8_t *in, unsigned B, unsigned R,
                           PtmSegment *seg)
{
    memset(seg, 0, offsetof(PtmSegment, bus) + B * sizeof(PtmBusCycle));
    seg->brake = in[0] & 0x3F;
    seg->link_up = in[0] >> 6 & 1;
    seg->tag_free = get16(in + 4);
    seg->stfifo_free = get16(in + 6);
    in += PACK_HDR;
    for (unsigned b = 0; b < B; b++) {
        PtmBusCycle *bc = &seg->bus[b];

        bc->sof = get16(in);
        bc->eof = get16(in + 2);
        bc->mvb_vld = get16(in + 4);
        bc->src_rdy = in[6] & 1;
        bc->dst_rdy = in[6] >> 1 & 1;
        bc->mvb_src_rdy = in[6] >> 2 & 1;
        bc->mvb_dst_rdy = in[6] >> 3 & 1;
        memcpy(bc->eof_pos, in + PACK_BUS, R);
        in += PACK_BUS + R;
    }
}

static void unpack_settings(const uint8_t *in, PtmSettings *set)
{
    if (in[1] & SET_MPS) {
        set->mps = in[2] & 7;
    }
    if (in[1] & SET_MRRS) {
        set->mrrs = in[2] >> 3 & 7;
    }
    if (in[1] & SET_EXT_TAG) {
        set->ext_tag = in[2] >> 6 & 1;
    }
    if (in[1] & SET_TAG_10B) {
        set->tag_10bit = in[2] >> 7 & 1;
    }
    if (in[1] & SET_RCB) {
        set->rcb_128 = in[3] & 1;
    }
}

/* -------------------------------------------------------------- traces */

/* The run-length list of one probe. */
typedef struct Probe {
    unsigned buses, regions, stride;
    uint8_t *pool;              /* distinct packed samples */
    uint32_t nsamp, capsamp;
    uint64_t *end;              /* run i: cycles [end[i-1], end[i]) */
    uint32_t *idx;              /* its sample */
    uint32_t nruns, capruns;
    uint32_t *hash;             /* sample + 1 per slot, while reading */
    uint32_t hcap;
    struct Blocks *blk;         /* prefix sums, made when first counted */
} Probe;

struct PtmReplayTrace {
    gint ref;
    Shape sh;
    Probe probe[PROBES];
    uint64_t xz_cycles;
};

static uint32_t hash_bytes(const uint8_t *b, unsigned n)
{
    uint32_t h = 2166136261u;

    for (unsigned i = 0; i < n; i++) {
        h = (h ^ b[i]) * 16777619u;
    }
    return h ^ (h >> 15);
}

static void probe_rehash(Probe *p, uint32_t cap)
{
    g_free(p->hash);
    p->hash = g_new0(uint32_t, cap);
    p->hcap = cap;
    for (uint32_t s = 0; s < p->nsamp; s++) {
        uint32_t i = hash_bytes(p->pool + (size_t)s * p->stride, p->stride);

        for (i &= cap - 1; p->hash[i]; i = (i + 1) & (cap - 1)) {
        }
        p->hash[i] = s + 1;
    }
}

/* Index of a packed sample in the probe's table, added if new. */
static uint32_t probe_intern(Probe *p, const uint8_t *packed)
{
    uint32_t i;

    if (2 * (p->nsamp + 1) > p->hcap) {
        probe_rehash(p, p->hcap ? 2 * p->hcap : 64);
    }
    i = hash_bytes(packed, p->stride) & (p->hcap - 1);
    for (;; i = (i + 1) & (p->hcap - 1)) {
        uint32_t s = p->hash[i];

        if (!s) {
            break;
        }
        if (!memcmp(p->pool + (size_t)(s - 1) * p->stride, packed,
                    p->stride)) {
            return s - 1;
        }
    }
    if (p->nsamp == p->capsamp) {
        p->capsamp = p->capsamp ? 2 * p->capsamp : 16;
        p->pool = g_realloc(p->pool, (size_t)p->capsamp * p->stride);
    }
    memcpy(p->pool + (size_t)p->nsamp * p->stride, packed, p->stride);
    p->hash[i] = ++p->nsamp;
    return p->nsamp - 1;
}

/* n more cycles of sample s. */
static void probe_push(Probe *p, uint32_t s, uint64_t n)
{
    uint64_t base = p->nruns ? p->end[p->nruns - 1] : 0;

    if (p->nruns && p->idx[p->nruns - 1] == s) {
        p->end[p->nruns - 1] += n;
        return;
    }
    if (p->nruns == p->capruns) {
        p->capruns = p->capruns ? 2 * p->capruns : 64;
        p->end = g_renew(uint64_t, p->end, p->capruns);
        p->idx = g_renew(uint32_t, p->idx, p->capruns);
    }
    p->end[p->nruns] = base + n;
    p->idx[p->nruns] = s;
    p->nruns++;
}

static uint64_t probe_cycles(const Probe *p)
{
    return p->nruns ? p->end[p->nruns - 1] : 0;
}

/* The run holding cycle k < probe_cycles(p); hint: where to look first. */
static uint32_t probe_find(const Probe *p, uint64_t k, uint32_t hint)
{
    uint32_t lo = 0, hi = p->nruns - 1;

    if (hint < p->nruns && k < p->end[hint] &&
        (hint == 0 || k >= p->end[hint - 1])) {
        return hint;
    }
    if (hint + 1 < p->nruns && k >= p->end[hint] && k < p->end[hint + 1]) {
        return hint + 1;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (p->end[mid] > k) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

static uint64_t run_start(const Probe *p, uint32_t i)
{
    return i ? p->end[i - 1] : 0;
}

static const uint8_t *run_sample(const Probe *p, uint32_t i)
{
    return p->pool + (size_t)p->idx[i] * p->stride;
}

static PtmReplayTrace *trace_new(const PtmGeometry *geo)
{
    PtmReplayTrace *t = g_new0(PtmReplayTrace, 1);

    t->ref = 1;
    shape_init(&t->sh, geo);
    for (unsigned e = 0; e < t->sh.endpoints; e++) {
        for (unsigned d = 0; d < 2; d++) {
            Probe *p = &t->probe[PROBE_INDEX(e, d)];

            p->buses = t->sh.buses[d];
            p->regions = t->sh.regions[d];
            p->stride = pack_stride(p->buses, p->regions);
        }
    }
    return t;
}

/* Reading is over: drop the hash tables and the slack. */
static void trace_finish(PtmReplayTrace *t)
{
    for (unsigned i = 0; i < PROBES; i++) {
        Probe *p = &t->probe[i];

        g_free(p->hash);
        p->hash = NULL;
        p->hcap = 0;
        if (p->nsamp) {
            p->pool = g_realloc(p->pool, (size_t)p->nsamp * p->stride);
            p->capsamp = p->nsamp;
        }
        if (p->nruns) {
            p->end = g_renew(uint64_t, p->end, p->nruns);
            p->idx = g_renew(uint32_t, p->idx, p->nruns);
            p->capruns = p->nruns;
        }
    }
}

/*
 * Prefix sums of a probe's runs in blocks of BLOCK_RUNS: the counts of all
 * runs before each block, counted from the trace's first cycle with every
 * frame closed, with the frame-open bits at each block's start and the
 * lowest free tags and storage-FIFO words in each block. A span is then
 * counted from its runs up to the next block, whole blocks at once, and
 * the runs after the last whole block.
 */
#define BLOCK_RUNS 64

typedef struct Blocks {
    unsigned nch;
    uint32_t nblocks;
    uint64_t *cum;              /* (nblocks + 1) x nch */
    uint32_t *open;             /* nblocks + 1 */
    uint16_t *tag_min, *fifo_min;
} Blocks;

static void blocks_free(struct Blocks *b)
{
    if (b) {
        g_free(b->cum);
        g_free(b->open);
        g_free(b->tag_min);
        g_free(b->fifo_min);
        g_free(b);
    }
}

/* Run i's sample, cycles [from, to) of it, counted into acc and st. */
static void count_run(const Probe *pr, const PtmProbeShape *sh, uint32_t i,
                      uint64_t from, uint64_t to, PtmCountState *st,
                      uint64_t *acc)
{
    PtmSegment seg;
    PtmChunk ch = { .repeat = 1, .nseg = 1, .seg = &seg };

    unpack_segment(run_sample(pr, i), pr->buses, pr->regions, &seg);
    seg.cycles = to - from;
    ptm_count_chunk(sh, st, &ch, acc);
}

static Blocks *blocks_get(Probe *pr, const PtmProbeShape *sh)
{
    Blocks *b = pr->blk;
    PtmCountState st = { 0 };

    if (b) {
        return b;
    }
    b = g_new0(Blocks, 1);
    b->nch = sh->channels;
    b->nblocks = (pr->nruns + BLOCK_RUNS - 1) / BLOCK_RUNS;
    b->cum = g_new0(uint64_t, (size_t)(b->nblocks + 1) * b->nch);
    b->open = g_new0(uint32_t, b->nblocks + 1);
    b->tag_min = g_new0(uint16_t, b->nblocks + 1);
    b->fifo_min = g_new0(uint16_t, b->nblocks + 1);
    for (uint32_t k = 0; k < b->nblocks; k++) {
        uint64_t *acc = &b->cum[(size_t)(k + 1) * b->nch];

        memcpy(acc, &b->cum[(size_t)k * b->nch], b->nch * sizeof(*acc));
        b->open[k] = st.open;
        ptm_count_state_window_start(&st);
        for (uint32_t i = k * BLOCK_RUNS;
             i < MIN((k + 1) * BLOCK_RUNS, pr->nruns); i++) {
            count_run(pr, sh, i, run_start(pr, i), pr->end[i], &st, acc);
        }
        b->tag_min[k] = st.tag_min;
        b->fifo_min[k] = st.stfifo_min;
    }
    b->open[b->nblocks] = st.open;
    pr->blk = b;
    return b;
}

/*
 * Trace cycles [k, kend) (kend <= the trace's cycles) into acc and st:
 * run by run until the frame-open bits agree with the prefix sums' at a
 * block's start, then whole blocks, then run by run again.
 */
static void count_trace(Probe *pr, const PtmProbeShape *sh, uint64_t k,
                        uint64_t kend, PtmCountState *st, uint64_t *acc)
{
    Blocks *b = blocks_get(pr, sh);
    uint32_t i = probe_find(pr, k, 0);
    uint32_t last = probe_find(pr, kend - 1, i);

    while (i <= last) {
        uint32_t blk = i / BLOCK_RUNS;
        uint32_t stop = blk;

        if (i % BLOCK_RUNS == 0 && k == run_start(pr, i) &&
            st->open == b->open[blk]) {
            /* whole blocks, while one more run is left after them */
            while (stop < b->nblocks && (stop + 1) * BLOCK_RUNS <= last) {
                st->tag_min = MIN(st->tag_min, b->tag_min[stop]);
                st->stfifo_min = MIN(st->stfifo_min, b->fifo_min[stop]);
                stop++;
            }
        }
        if (stop > blk) {
            const uint64_t *lo = &b->cum[(size_t)blk * b->nch];
            const uint64_t *hi = &b->cum[(size_t)stop * b->nch];

            for (unsigned c = 0; c < b->nch; c++) {
                acc[c] += hi[c] - lo[c];
            }
            st->open = b->open[stop];
            i = stop * BLOCK_RUNS;
            k = run_start(pr, i);
            continue;
        }
        count_run(pr, sh, i, k, MIN(pr->end[i], kend), st, acc);
        k = pr->end[i];
        i++;
    }
}

static void trace_free(PtmReplayTrace *t)
{
    for (unsigned i = 0; i < PROBES; i++) {
        g_free(t->probe[i].pool);
        g_free(t->probe[i].end);
        g_free(t->probe[i].idx);
        g_free(t->probe[i].hash);
        blocks_free(t->probe[i].blk);
    }
    g_free(t);
}

void ptm_replay_unref(PtmReplayTrace *t)
{
    if (t && g_atomic_int_dec_and_test(&t->ref)) {
        trace_free(t);
    }
}

static const Probe *trace_probe(const PtmReplayTrace *t, unsigned e,
                                PtmDomain d)
{
    return e < t->sh.endpoints ? &t->probe[PROBE_INDEX(e, d)] : NULL;
}

uint64_t ptm_replay_cycles(const PtmReplayTrace *t, unsigned e, PtmDomain d)
{
    const Probe *p = trace_probe(t, e, d);

    return p ? probe_cycles(p) : 0;
}

uint64_t ptm_replay_runs(const PtmReplayTrace *t, unsigned e, PtmDomain d)
{
    const Probe *p = trace_probe(t, e, d);

    return p ? p->nruns : 0;
}

uint64_t ptm_replay_samples(const PtmReplayTrace *t, unsigned e,
                            PtmDomain d)
{
    const Probe *p = trace_probe(t, e, d);

    return p ? p->nsamp : 0;
}

uint64_t ptm_replay_xz_cycles(const PtmReplayTrace *t)
{
    return t->xz_cycles;
}

/* Add a finished sample of probe (e, d) for n cycles. */
static uint32_t trace_add(PtmReplayTrace *t, unsigned e, PtmDomain d,
                          Sample *s, uint64_t n)
{
    Probe *p = &t->probe[PROBE_INDEX(e, d)];
    uint8_t packed[PACK_MAX];
    uint32_t idx;

    sample_normalize(&t->sh, d, s);
    sample_pack(s, p->buses, p->regions, packed);
    idx = probe_intern(p, packed);
    probe_push(p, idx, n);
    return idx;
}

/* ------------------------------------------------------------- reading */

typedef struct Rd {
    const char *path;
    const char *p, *end;
    unsigned line;
} Rd;

static G_GNUC_PRINTF(3, 4) char *rd_error(const char *path, unsigned line,
                                          const char *fmt, ...)
{
    va_list ap;
    g_autofree char *msg = NULL;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    return line ? g_strdup_printf("%s:%u: %s", path, line, msg)
                : g_strdup_printf("%s: %s", path, msg);
}

/* The next whitespace-separated token; false at the end. */
static bool rd_token(Rd *r, const char **tok, size_t *len)
{
    const char *p = r->p;

    while (p < r->end && g_ascii_isspace(*p)) {
        if (*p == '\n') {
            r->line++;
        }
        p++;
    }
    if (p == r->end) {
        r->p = p;
        return false;
    }
    *tok = p;
    while (p < r->end && !g_ascii_isspace(*p)) {
        p++;
    }
    *len = p - *tok;
    r->p = p;
    return true;
}

static bool tok_is(const char *t, size_t n, const char *s)
{
    return strlen(s) == n && !memcmp(t, s, n);
}

/* Unsigned number: decimal, 0x hex or 0b binary, all of s. */
static bool parse_u64(const char *s, size_t n, uint64_t *v)
{
    unsigned base = 10;
    size_t i = 0;

    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        i = 2;
    } else if (n > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
        base = 2;
        i = 2;
    }
    if (i == n) {
        return false;
    }
    *v = 0;
    for (; i < n; i++) {
        int d = g_ascii_xdigit_value(s[i]);

        if (s[i] == '_' && base != 10) {
            continue;
        }
        if (d < 0 || (unsigned)d >= base || *v > (UINT64_MAX - d) / base) {
            return false;
        }
        *v = *v * base + d;
    }
    return true;
}

/* ---------------------------------------------------------------- VCD */

typedef struct Sel {
    bool range;
    int64_t a, b;               /* index a, or range a:b (left:right) */
} Sel;

/* A $var whose name is a port. */
typedef struct Cand {
    unsigned scope, port, size, line, nsel;
    Sel sel[2];
    char *id;
    char *ref;                  /* as the file writes it */
} Cand;

/* A port GHDL left out ("$comment name is not handled $end"). */
typedef struct Unhandled {
    unsigned scope, port, line;
} Unhandled;

typedef struct Scope {
    int parent;
    unsigned depth;
    char *path;                 /* lower case, dot separated */
} Scope;

/* One identifier code the replay needs. */
typedef struct Sig {
    unsigned size, words;
    uint64_t *cur_v, *cur_u;    /* value and x/z bits; bit 0 = rightmost */
    uint64_t *nxt_v, *nxt_u;    /* after this timestamp's changes */
    bool touched;
    uint32_t probes;            /* bit 2e+d: samples it feeds */
} Sig;

/* Bit sig_bit of signal sig is bit elem_bit of a port element. */
typedef struct BitRef {
    uint32_t sig, sig_bit, elem_bit;
} BitRef;

typedef struct Elem {
    GArray *bits;               /* BitRef; NULL if the file lacks it */
    unsigned width, line;
    uint64_t *v, *u, *seen;
} Elem;

typedef struct Vcd {
    Rd rd;
    PtmReplayTrace *t;
    const Shape *sh;
    GArray *scopes;             /* Scope */
    GArray *cands;              /* Cand */
    GArray *unhandled;          /* Unhandled */
    GPtrArray *sigs;            /* Sig */
    GHashTable *ids;            /* id code -> sig + 1 */
    GPtrArray *touched;
    Elem elem[NPORTS][PTM_MAX_ENDPOINTS];
    int clk_sig[PTM_MAX_ENDPOINTS + 1];
    unsigned clk_bit[PTM_MAX_ENDPOINTS + 1];
    uint64_t time;
    bool timed;                 /* a timestamp was seen */
    uint32_t dirty;             /* probes whose inputs changed */
    uint32_t cur[PROBES];       /* their sample now */
    bool cur_xz[PROBES];
    bool xz;                    /* the sample being built read x/z */
    char *xz_note;              /* the first x/z read as 0 */
} Vcd;

static bool sig_bit(const uint64_t *w, unsigned b)
{
    return w[b / 64] >> (b % 64) & 1;
}

static void set_bit(uint64_t *w, unsigned b)
{
    w[b / 64] |= 1ull << (b % 64);
}

/* Reference as written -> lower-case base name and up to two indices. */
static bool parse_ref(const char *ref, char **base, Sel *sel, unsigned *nsel)
{
    g_autoptr(GString) s = g_string_new(NULL);
    const char *q;

    /* extended identifiers (\name(0)\ in GHDL) lose their backslashes */
    for (const char *p = ref; *p; p++) {
        if (*p == '\\') {
            if (p[1] == '\\') {
                g_string_append_c(s, '\\');
                p++;
            }
            continue;
        }
        g_string_append_c(s, g_ascii_tolower(*p));
    }
    q = s->str;
    while (*q && *q != '(' && *q != '[') {
        q++;
    }
    *base = g_strndup(s->str, q - s->str);
    *nsel = 0;
    while (*q) {
        char close = *q == '(' ? ')' : *q == '[' ? ']' : 0;
        char *e;
        Sel sl = { 0 };

        if (!close || *nsel == 2) {
            return false;
        }
        sl.a = g_ascii_strtoll(q + 1, &e, 10);
        if (e == q + 1) {
            return false;
        }
        q = e;
        if (*q == ':' || g_str_has_prefix(q, "downto") ||
            g_str_has_prefix(q, "to")) {
            q += *q == ':' ? 1 : *q == 'd' ? 6 : 2;
            sl.b = g_ascii_strtoll(q, &e, 10);
            if (e == q) {
                return false;
            }
            sl.range = true;
            q = e;
        }
        if (*q != close) {
            return false;
        }
        q++;
        sel[(*nsel)++] = sl;
    }
    return true;
}

/* GHDL's " name is not handled $end": a port it could not dump. */
static void vcd_note_unhandled(Vcd *v, const char *text, unsigned scope,
                               unsigned line)
{
    g_autofree char *lower = g_ascii_strdown(text, -1);
    g_auto(GStrv) w = g_strsplit(g_strstrip(lower), " ", 0);
    int port;

    if (g_strv_length(w) != 5 || strcmp(w[1], "is") || strcmp(w[2], "not") ||
        strcmp(w[3], "handled")) {
        return;
    }
    port = port_find(w[0]);
    if (port >= 0) {
        Unhandled u = { scope, port, line };

        g_array_append_val(v->unhandled, u);
    }
}

static char *vcd_header(Vcd *v)
{
    Rd *r = &v->rd;
    const char *t;
    size_t n;
    int cur = 0;
    Scope root = { .parent = -1, .path = g_strdup("") };

    g_array_append_val(v->scopes, root);
    while (rd_token(r, &t, &n)) {
        unsigned line = r->line;

        if (tok_is(t, n, "$enddefinitions")) {
            while (rd_token(r, &t, &n) && !tok_is(t, n, "$end")) {
            }
            return NULL;
        }
        if (tok_is(t, n, "$scope")) {
            const char *nm;
            size_t nn;
            Scope sc;
            const Scope *par = &g_array_index(v->scopes, Scope, cur);
            g_autofree char *name = NULL;

            if (!rd_token(r, &t, &n) || !rd_token(r, &nm, &nn)) {
                return rd_error(r->path, line, "unfinished $scope");
            }
            name = g_ascii_strdown(nm, nn);
            sc.parent = cur;
            sc.depth = par->depth + 1;
            sc.path = *par->path ? g_strdup_printf("%s.%s", par->path, name)
                                 : g_strdup(name);
            g_array_append_val(v->scopes, sc);
            cur = v->scopes->len - 1;
            while (rd_token(r, &t, &n) && !tok_is(t, n, "$end")) {
            }
        } else if (tok_is(t, n, "$upscope")) {
            if (cur == 0) {
                return rd_error(r->path, line, "$upscope without $scope");
            }
            cur = g_array_index(v->scopes, Scope, cur).parent;
            while (rd_token(r, &t, &n) && !tok_is(t, n, "$end")) {
            }
        } else if (tok_is(t, n, "$var")) {
            const char *sz, *id;
            size_t szn, idn;
            uint64_t size;
            g_autoptr(GString) ref = g_string_new(NULL);
            g_autofree char *base = NULL;
            Cand c = { .scope = cur, .line = line };
            int port;

            if (!rd_token(r, &t, &n) || !rd_token(r, &sz, &szn) ||
                !rd_token(r, &id, &idn)) {
                return rd_error(r->path, line, "unfinished $var");
            }
            if (!parse_u64(sz, szn, &size) || size == 0 || size > 65536) {
                return rd_error(r->path, line, "bad size '%.*s' in $var",
                                (int)szn, sz);
            }
            while (rd_token(r, &t, &n) && !tok_is(t, n, "$end")) {
                g_string_append_len(ref, t, n);
            }
            if (!parse_ref(ref->str, &base, c.sel, &c.nsel)) {
                port = port_find(base);
                if (port >= 0) {
                    return rd_error(r->path, line, "cannot read the index "
                                    "of '%s'", ref->str);
                }
                continue;
            }
            port = port_find(base);
            if (port < 0) {
                continue;
            }
            c.port = port;
            c.size = size;
            c.id = g_strndup(id, idn);
            c.ref = g_strdup(ref->str);
            g_array_append_val(v->cands, c);
        } else if (n && t[0] == '$') {
            /* $date, $version, $timescale, $comment, ...: skipped */
            bool comment = tok_is(t, n, "$comment");
            g_autoptr(GString) text = g_string_new(NULL);

            while (n < 4 || memcmp(t + n - 4, "$end", 4)) {
                if (!rd_token(r, &t, &n)) {
                    return rd_error(r->path, line, "section without $end");
                }
                if (comment && text->len < 200) {
                    g_string_append_printf(text, " %.*s", (int)n, t);
                }
            }
            vcd_note_unhandled(v, text->str, cur, line);
        } else {
            return rd_error(r->path, line, "unexpected '%.*s' in the "
                            "header", (int)MIN(n, 40), t);
        }
    }
    return rd_error(r->path, 0, "no $enddefinitions: not a complete VCD "
                    "file");
}

/* The scope whose signals are replayed. */
static char *vcd_pick_scope(Vcd *v, const char *want, unsigned *pick)
{
    unsigned ns = v->scopes->len;
    g_autofree uint32_t *ports = g_new0(uint32_t, ns);
    g_autofree unsigned *count = g_new0(unsigned, ns);
    int best = -1;

    for (unsigned i = 0; i < v->cands->len; i++) {
        const Cand *c = &g_array_index(v->cands, Cand, i);

        if (!(ports[c->scope] >> c->port & 1)) {
            ports[c->scope] |= 1u << c->port;
            count[c->scope]++;
        }
    }
    if (*want) {
        g_autofree char *w = g_ascii_strdown(want, -1);
        char *p = w;

        g_strdelimit(w, "/", '.');
        while (*p == '.') {
            p++;
        }
        while (*p && p[strlen(p) - 1] == '.') {
            p[strlen(p) - 1] = 0;
        }
        for (unsigned s = 0; s < ns; s++) {
            if (!strcmp(g_array_index(v->scopes, Scope, s).path, p)) {
                *pick = s;
                return NULL;
            }
        }
        for (unsigned s = 0; s < ns; s++) {
            if (count[s] && (best < 0 || count[s] > count[best])) {
                best = s;
            }
        }
        return rd_error(v->rd.path, 0, "no scope '%s'%s%s%s", want,
                        best >= 0 ? " (the ports are in '" : "",
                        best >= 0 ? g_array_index(v->scopes, Scope,
                                                  best).path : "",
                        best >= 0 ? "')" : "");
    }
    /* the most ports; among equals the one nearest the top, then the first */
    for (unsigned s = 0; s < ns; s++) {
        const Scope *sc = &g_array_index(v->scopes, Scope, s);

        if (count[s] && (best < 0 || count[s] > count[best] ||
                         (count[s] == count[best] &&
                          sc->depth < g_array_index(v->scopes, Scope,
                                                    best).depth))) {
            best = s;
        }
    }
    if (best < 0) {
        return rd_error(v->rd.path, 0, "no port of PCIE_TELEMETRY_MI (such "
                        "as PCIE_CLK, PCIE_MFB_SOF, DMA_CLK) in the file");
    }
    *pick = best;
    return NULL;
}

static Sig *vcd_sig(Vcd *v, const Cand *c, uint32_t *index, char **err)
{
    gpointer got = g_hash_table_lookup(v->ids, c->id);
    Sig *s;

    if (got) {
        *index = GPOINTER_TO_UINT(got) - 1;
        s = g_ptr_array_index(v->sigs, *index);
        if (s->size != c->size) {
            *err = rd_error(v->rd.path, c->line, "'%s' has %u bits, an "
                            "earlier $var of code '%s' has %u", c->ref,
                            c->size, c->id, s->size);
            return NULL;
        }
        return s;
    }
    s = g_new0(Sig, 1);
    s->size = c->size;
    s->words = (c->size + 63) / 64;
    s->cur_v = g_new0(uint64_t, 4 * s->words);
    s->cur_u = s->cur_v + s->words;
    s->nxt_v = s->cur_u + s->words;
    s->nxt_u = s->nxt_v + s->words;
    /* nothing dumped yet reads as x */
    for (unsigned b = 0; b < s->size; b++) {
        set_bit(s->cur_u, b);
    }
    g_ptr_array_add(v->sigs, s);
    *index = v->sigs->len - 1;
    g_hash_table_insert(v->ids, g_strdup(c->id), GUINT_TO_POINTER(*index + 1));
    return s;
}

static void sig_free(gpointer p)
{
    Sig *s = p;

    g_free(s->cur_v);
    g_free(s);
}

/* Tie a port-named $var of the replayed scope to its port elements. */
static char *vcd_bind(Vcd *v, const Cand *c)
{
    const PortDesc *pd = &port_tab[c->port];
    const Sel *s0 = &c->sel[0], *s1 = &c->sel[1];
    unsigned elem = 0;          /* ARRAY: the element */
    int64_t first = 0, dir = 1; /* sig bit i -> index first + i * dir */
    bool per_endpoint = pd->kind == PK_EPVEC;
    char why[80];
    unsigned width = port_width(v->sh, c->port, why, sizeof(why));
    char *err = NULL;
    uint32_t si;
    Sig *sig;
    bool bad = false;

#define RANGE(sl)                                                           \
    do {                                                                    \
        first = (sl)->b;                                                    \
        dir = (sl)->a >= (sl)->b ? 1 : -1;                                  \
        bad |= (uint64_t)(((sl)->a - (sl)->b) * dir + 1) != c->size;        \
    } while (0)

    for (unsigned i = 0; i < c->nsel; i++) {
        const Sel *sl = &c->sel[i];

        bad |= sl->a < 0 || sl->a > 65535 ||
               (sl->range && (sl->b < 0 || sl->b > 65535));
    }
    if (pd->kind == PK_SCALAR) {
        bad |= c->size != 1 || c->nsel > 1 ||
               (c->nsel == 1 && (s0->a != 0 || (s0->range && s0->b != 0)));
    } else if (pd->kind == PK_EPVEC) {
        /* name: bits are endpoints; name[e] / name(e): one endpoint */
        if (c->nsel == 1 && s0->range) {
            RANGE(s0);
        } else if (c->nsel == 1) {
            first = s0->a;
            bad |= c->size != 1;
        } else {
            bad |= c->nsel != 0;
        }
    } else if (c->nsel == 0) {
        /* a plain vector is element 0 */
    } else if (c->nsel == 1 && s0->range) {
        RANGE(s0);
    } else if (c->nsel == 1 && c->size > 1) {
        elem = s0->a;           /* name(e) / name[e] */
    } else if (c->nsel == 1) {
        first = s0->a;          /* one bit of a vector, written bit by bit */
    } else if (!s0->range && s1->range) {
        elem = s0->a;
        RANGE(s1);
    } else if (!s0->range) {
        elem = s0->a;
        first = s1->a;
        bad |= c->size != 1;
    } else {
        bad = true;
    }
#undef RANGE
    if (bad) {
        return rd_error(v->rd.path, c->line, "cannot map '%s' (%u bits) onto "
                        "port %s: use a vector, name(e), name[e], "
                        "name(e)[m:l] or one bit", c->ref, c->size,
                        pd->name);
    }
    sig = vcd_sig(v, c, &si, &err);
    if (!sig) {
        return err;
    }
    if (pd->kind == PK_ARRAY && elem >= v->sh->endpoints) {
        return NULL;            /* an endpoint the card does not have */
    }
    /* a vector from bit 0 is a whole element: its width must be the card's */
    if (pd->kind == PK_ARRAY && c->size > 1 &&
        MIN(first, first + (int64_t)(c->size - 1) * dir) == 0 &&
        c->size != width) {
        return rd_error(v->rd.path, c->line, "'%s' has %u bits, but %s(%u) "
                        "has %u on this card (%s): the card's geometry "
                        "differs from the simulated design", c->ref, c->size,
                        pd->name, elem, width, why);
    }
    for (unsigned i = 0; i < c->size; i++) {
        int64_t idx = first + (int64_t)i * dir;
        unsigned e = per_endpoint ? idx : elem;
        unsigned bit = per_endpoint || pd->kind == PK_SCALAR ? 0 : idx;
        Elem *el;
        BitRef br = { si, i, bit };

        if (e >= v->sh->endpoints) {
            continue;
        }
        if (bit >= width) {
            return rd_error(v->rd.path, c->line, "'%s' has bit %u, but "
                            "%s(%u) has %u bits on this card (%s)", c->ref,
                            bit, pd->name, e, width, why);
        }
        if (port_is_clock(c->port)) {
            unsigned slot = pd->kind == PK_SCALAR ? DMA_CLOCK : e;

            if (v->clk_sig[slot] >= 0) {
                return rd_error(v->rd.path, c->line, "'%s' gives a clock "
                                "that an earlier $var gives already", c->ref);
            }
            v->clk_sig[slot] = si;
            v->clk_bit[slot] = i;
            continue;
        }
        el = &v->elem[c->port][e];
        if (!el->bits) {
            el->bits = g_array_new(FALSE, FALSE, sizeof(BitRef));
            el->width = width;
            el->line = c->line;
            el->v = g_new0(uint64_t, 3 * ((width + 63) / 64));
            el->u = el->v + (width + 63) / 64;
            el->seen = el->u + (width + 63) / 64;
        }
        if (sig_bit(el->seen, bit)) {
            return rd_error(v->rd.path, c->line, "bit %u of %s(%u) is "
                            "given twice (also on line %u)", bit, pd->name,
                            e, el->line);
        }
        set_bit(el->seen, bit);
        g_array_append_val(el->bits, br);
        sig->probes |= 1u << PROBE_INDEX(e, pd->dom);
    }
    return NULL;
}

/*
 * A port that GHDL could not dump (an array of vectors) and that the scope
 * has in no other form would replay as idle: say so instead.
 */
static char *vcd_check_unhandled(Vcd *v, unsigned scope)
{
    for (unsigned i = 0; i < v->unhandled->len; i++) {
        const Unhandled *u = &g_array_index(v->unhandled, Unhandled, i);
        bool found = false;

        if (u->scope != scope) {
            continue;
        }
        for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
            found |= v->elem[u->port][e].bits != NULL;
        }
        if (!found) {
            return rd_error(v->rd.path, u->line, "the simulator left out %s "
                            "(GHDL writes no arrays of vectors to VCD): "
                            "record it per endpoint, as a plain vector for "
                            "endpoint 0 or as signals named like "
                            "\\%s(0)\\ (see docs/replay.md)",
                            port_tab[u->port].name, port_tab[u->port].name);
        }
    }
    return NULL;
}

/* Every sampled port needs the clock of its domain. */
static char *vcd_check_clocks(Vcd *v)
{
    bool any = v->clk_sig[DMA_CLOCK] >= 0;

    for (unsigned e = 0; e < v->sh->endpoints; e++) {
        any |= v->clk_sig[e] >= 0;
        for (unsigned p = 0; p < NPORTS; p++) {
            const Elem *el = &v->elem[p][e];
            PtmDomain d = port_tab[p].dom;
            int clk = v->clk_sig[d == PTM_DOMAIN_PCIE ? e : DMA_CLOCK];

            if (!el->bits) {
                continue;
            }
            any = true;
            if (clk < 0) {
                return rd_error(v->rd.path, el->line, "%s(%u) has no clock "
                                "to sample it: the file lacks %s", 
                                port_tab[p].name, e,
                                d == PTM_DOMAIN_PCIE ? "PCIE_CLK" : "DMA_CLK");
            }
        }
    }
    if (!any) {
        return rd_error(v->rd.path, 0, "no port of PCIE_TELEMETRY_MI that "
                        "this card has (endpoints 0 to %u)",
                        v->sh->endpoints - 1);
    }
    return NULL;
}

/* Bits [lo, lo + n) of element e of a port; x/z read as 0 and noted. */
static uint32_t vcd_get(Vcd *v, unsigned port, unsigned e, unsigned lo,
                        unsigned n)
{
    const Elem *el = &v->elem[port][e];
    uint32_t r = 0;

    if (!el->bits) {
        return 0;
    }
    for (unsigned i = 0; i < n; i++) {
        unsigned b = lo + i;

        if (sig_bit(el->u, b)) {
            if (!v->xz_note) {
                v->xz_note = g_strdup_printf("%s(%u) bit %u at time %"
                                             PRIu64, port_tab[port].name, e,
                                             b, v->time);
            }
            v->xz = true;
            continue;
        }
        r |= (uint32_t)sig_bit(el->v, b) << i;
    }
    return r;
}

static void vcd_assemble(Vcd *v, unsigned port, unsigned e)
{
    Elem *el = &v->elem[port][e];
    unsigned words = (el->width + 63) / 64;

    memset(el->v, 0, 2 * words * sizeof(uint64_t));
    for (unsigned i = 0; i < el->bits->len; i++) {
        const BitRef *br = &g_array_index(el->bits, BitRef, i);
        const Sig *s = g_ptr_array_index(v->sigs, br->sig);

        if (sig_bit(s->cur_u, br->sig_bit)) {
            set_bit(el->u, br->elem_bit);
        } else if (sig_bit(s->cur_v, br->sig_bit)) {
            set_bit(el->v, br->elem_bit);
        }
    }
}

/* What probe (e, d) sees now; fields that no counter reads stay unread. */
static void vcd_decode(Vcd *v, unsigned e, PtmDomain d, Sample *s)
{
    const Shape *sh = v->sh;
    unsigned B = sh->buses[d], R = sh->regions[d], W = sh->pos_width[d];
    bool pcie = d == PTM_DOMAIN_PCIE;
    unsigned p_sof = pcie ? PORT_PCIE_SOF : PORT_DMA_SOF;
    unsigned p_eof = pcie ? PORT_PCIE_EOF : PORT_DMA_EOF;
    unsigned p_pos = pcie ? PORT_PCIE_EOF_POS : PORT_DMA_EOF_POS;
    unsigned p_src = pcie ? PORT_PCIE_SRC_RDY : PORT_DMA_SRC_RDY;
    unsigned p_dst = pcie ? PORT_PCIE_DST_RDY : PORT_DMA_DST_RDY;

    for (unsigned p = 0; p < NPORTS; p++) {
        if (port_tab[p].dom == d && v->elem[p][e].bits) {
            vcd_assemble(v, p, e);
        }
    }
    sample_idle(sh, s);
    v->xz = false;
    for (unsigned b = 0; b < B; b++) {
        SampleBus *sb = &s->bus[b];

        sb->src = vcd_get(v, p_src, e, b, 1);
        if (sb->src) {
            sb->dst = vcd_get(v, p_dst, e, b, 1);
            sb->sof = vcd_get(v, p_sof, e, b * R, R);
            sb->eof = vcd_get(v, p_eof, e, b * R, R);
            for (unsigned r = 0; r < R; r++) {
                if (sb->eof >> r & 1) {
                    sb->pos[r] = vcd_get(v, p_pos, e, (b * R + r) * W, W);
                }
            }
        }
        if (!pcie) {
            sb->msrc = vcd_get(v, PORT_MVB_SRC_RDY, e, b, 1);
            if (sb->msrc) {
                sb->mdst = vcd_get(v, PORT_MVB_DST_RDY, e, b, 1);
                sb->vld = vcd_get(v, PORT_MVB_VLD, e, b * R, R);
            }
        }
    }
    if (!pcie) {
        return;
    }
    s->brake = vcd_get(v, PORT_BRAKE, e, 0, 6);
    if (v->elem[PORT_TAG_FREE][e].bits) {
        s->tags = vcd_get(v, PORT_TAG_FREE, e, 0, 11);
    }
    if (v->elem[PORT_STFIFO_FREE][e].bits) {
        s->stfifo = vcd_get(v, PORT_STFIFO_FREE, e, 0, 16);
    }
    if (v->elem[PORT_LINK_UP][e].bits) {
        s->link = vcd_get(v, PORT_LINK_UP, e, 0, 1);
    }
    if (v->elem[PORT_MPS][e].bits) {
        s->set_mask |= SET_MPS;
        s->set.mps = vcd_get(v, PORT_MPS, e, 0, 3);
    }
    if (v->elem[PORT_MRRS][e].bits) {
        s->set_mask |= SET_MRRS;
        s->set.mrrs = vcd_get(v, PORT_MRRS, e, 0, 3);
    }
    if (v->elem[PORT_EXT_TAG][e].bits) {
        s->set_mask |= SET_EXT_TAG;
        s->set.ext_tag = vcd_get(v, PORT_EXT_TAG, e, 0, 1);
    }
    if (v->elem[PORT_TAG_10B][e].bits) {
        s->set_mask |= SET_TAG_10B;
        s->set.tag_10bit = vcd_get(v, PORT_TAG_10B, e, 0, 1);
    }
    if (v->elem[PORT_RCB][e].bits) {
        s->set_mask |= SET_RCB;
        s->set.rcb_128 = vcd_get(v, PORT_RCB, e, 0, 1);
    }
}

/* One more cycle of probe (e, d): a rising edge of its clock. */
static void vcd_sample(Vcd *v, unsigned e, PtmDomain d)
{
    unsigned pi = PROBE_INDEX(e, d);

    if (v->dirty >> pi & 1) {
        Sample s;

        vcd_decode(v, e, d, &s);
        v->cur[pi] = trace_add(v->t, e, d, &s, 1);
        v->cur_xz[pi] = v->xz;
        v->dirty &= ~(1u << pi);
    } else {
        probe_push(&v->t->probe[pi], v->cur[pi], 1);
    }
    if (v->cur_xz[pi]) {
        v->t->xz_cycles++;
    }
}

/* Is clock slot c rising at this timestamp (known 0 before, 1 after)? */
static bool vcd_rising(Vcd *v, unsigned c)
{
    const Sig *s;
    unsigned b = v->clk_bit[c];

    if (v->clk_sig[c] < 0) {
        return false;
    }
    s = g_ptr_array_index(v->sigs, v->clk_sig[c]);
    return s->touched && !sig_bit(s->cur_u, b) && !sig_bit(s->cur_v, b) &&
           !sig_bit(s->nxt_u, b) && sig_bit(s->nxt_v, b);
}

/* End of a timestamp: sample at the rising edges, then take the changes. */
static void vcd_timestamp_done(Vcd *v)
{
    for (unsigned e = 0; e < v->sh->endpoints; e++) {
        if (vcd_rising(v, e)) {
            vcd_sample(v, e, PTM_DOMAIN_PCIE);
        }
    }
    if (vcd_rising(v, DMA_CLOCK)) {
        for (unsigned e = 0; e < v->sh->endpoints; e++) {
            vcd_sample(v, e, PTM_DOMAIN_DMA);
        }
    }
    for (unsigned i = 0; i < v->touched->len; i++) {
        Sig *s = g_ptr_array_index(v->touched, i);

        memcpy(s->cur_v, s->nxt_v, 2 * s->words * sizeof(uint64_t));
        s->touched = false;
        v->dirty |= s->probes;
    }
    g_ptr_array_set_size(v->touched, 0);
}

static int logic_value(char c)
{
    switch (c) {
    case '0': case 'l': case 'L':
        return 0;
    case '1': case 'h': case 'H':
        return 1;
    case 'x': case 'X': case 'z': case 'Z': case 'u': case 'U':
    case 'w': case 'W': case '-':
        return 2;
    default:
        return -1;
    }
}

/* A value change of a needed signal (vector digits, most significant first). */
static char *vcd_change(Vcd *v, Sig *s, const char *val, size_t len)
{
    int pad;

    /* longer than the signal: only leading zeros may go */
    while (len > s->size && (val[0] == '0' || val[0] == 'l' ||
                             val[0] == 'L')) {
        val++;
        len--;
    }
    if (len > s->size || len == 0) {
        return rd_error(v->rd.path, v->rd.line, "value '%.*s' does not fit "
                        "%u bits", (int)MIN(len, 80), val, s->size);
    }
    /* a shorter value extends 0 and 1 with 0, x and z with themselves */
    pad = logic_value(val[0]) == 2 ? 2 : 0;
    memset(s->nxt_v, 0, 2 * s->words * sizeof(uint64_t));
    for (unsigned b = 0; b < s->size; b++) {
        int x = b < len ? logic_value(val[len - 1 - b]) : pad;

        if (x < 0) {
            return rd_error(v->rd.path, v->rd.line, "bad value '%.*s'",
                            (int)MIN(len, 80), val);
        }
        if (x == 2) {
            set_bit(s->nxt_u, b);
        } else if (x) {
            set_bit(s->nxt_v, b);
        }
    }
    if (!s->touched) {
        s->touched = true;
        g_ptr_array_add(v->touched, s);
    }
    return NULL;
}

static Sig *vcd_lookup(Vcd *v, const char *id, size_t n)
{
    char buf[64];
    g_autofree char *big = NULL;
    char *key = buf;
    gpointer got;

    if (n >= sizeof(buf)) {
        key = big = g_malloc(n + 1);
    }
    memcpy(key, id, n);
    key[n] = 0;
    got = g_hash_table_lookup(v->ids, key);
    return got ? g_ptr_array_index(v->sigs, GPOINTER_TO_UINT(got) - 1) : NULL;
}

static char *vcd_body(Vcd *v)
{
    Rd *r = &v->rd;
    const char *t, *id;
    size_t n, idn;
    char *err;

    while (rd_token(r, &t, &n)) {
        Sig *s;

        switch (t[0]) {
        case '#': {
            uint64_t time;

            if (!parse_u64(t + 1, n - 1, &time)) {
                return rd_error(r->path, r->line, "bad timestamp '%.*s'",
                                (int)MIN(n, 40), t);
            }
            if (v->timed && time < v->time) {
                return rd_error(r->path, r->line, "time goes back from %"
                                PRIu64 " to %" PRIu64, v->time, time);
            }
            vcd_timestamp_done(v);
            v->time = time;
            v->timed = true;
            break;
        }
        case '$':
            if (tok_is(t, n, "$comment")) {
                unsigned line = r->line;

                while (!tok_is(t, n, "$end")) {
                    if (!rd_token(r, &t, &n)) {
                        return rd_error(r->path, line, "$comment without "
                                        "$end");
                    }
                }
            } else if (!tok_is(t, n, "$dumpvars") &&
                       !tok_is(t, n, "$dumpall") &&
                       !tok_is(t, n, "$dumpon") &&
                       !tok_is(t, n, "$dumpoff") && !tok_is(t, n, "$end")) {
                return rd_error(r->path, r->line, "unexpected '%.*s'",
                                (int)MIN(n, 40), t);
            }
            break;
        case 'b': case 'B': case 'r': case 'R': case 's': case 'S':
            if (!rd_token(r, &id, &idn)) {
                return rd_error(r->path, r->line, "value without identifier "
                                "code");
            }
            s = vcd_lookup(v, id, idn);
            if (!s) {
                break;
            }
            if (t[0] != 'b' && t[0] != 'B') {
                return rd_error(r->path, r->line, "a port cannot take the "
                                "value '%.*s'", (int)MIN(n, 40), t);
            }
            err = vcd_change(v, s, t + 1, n - 1);
            if (err) {
                return err;
            }
            break;
        default:
            if (logic_value(t[0]) < 0 || n < 2) {
                return rd_error(r->path, r->line, "unexpected '%.*s'",
                                (int)MIN(n, 40), t);
            }
            s = vcd_lookup(v, t + 1, n - 1);
            if (s) {
                err = vcd_change(v, s, t, 1);
                if (err) {
                    return err;
                }
            }
            break;
        }
    }
    vcd_timestamp_done(v);
    return NULL;
}

static char *vcd_load(PtmReplayTrace *t, const char *path, const char *scope,
                      const char *buf, size_t len)
{
    Vcd v = {
        .rd = { .path = path, .p = buf, .end = buf + len, .line = 1 },
        .t = t,
        .sh = &t->sh,
        .scopes = g_array_new(FALSE, FALSE, sizeof(Scope)),
        .cands = g_array_new(FALSE, FALSE, sizeof(Cand)),
        .unhandled = g_array_new(FALSE, FALSE, sizeof(Unhandled)),
        .sigs = g_ptr_array_new_with_free_func(sig_free),
        .ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
        .touched = g_ptr_array_new(),
        .dirty = ~0u,
    };
    unsigned pick = 0;
    char *err;

    for (unsigned c = 0; c <= DMA_CLOCK; c++) {
        v.clk_sig[c] = -1;
    }
    err = vcd_header(&v);
    if (!err) {
        err = vcd_pick_scope(&v, scope, &pick);
    }
    for (unsigned i = 0; !err && i < v.cands->len; i++) {
        const Cand *c = &g_array_index(v.cands, Cand, i);

        if (c->scope == pick) {
            err = vcd_bind(&v, c);
        }
    }
    if (!err) {
        err = vcd_check_unhandled(&v, pick);
    }
    if (!err) {
        err = vcd_check_clocks(&v);
    }
    if (!err) {
        err = vcd_body(&v);
    }
    if (!err && v.xz_note) {
        g_message("replay: %s: x/z read as 0 in %" PRIu64 " probe cycles, "
                  "first %s", path, t->xz_cycles, v.xz_note);
    }

    for (unsigned i = 0; i < v.scopes->len; i++) {
        g_free(g_array_index(v.scopes, Scope, i).path);
    }
    for (unsigned i = 0; i < v.cands->len; i++) {
        g_free(g_array_index(v.cands, Cand, i).id);
        g_free(g_array_index(v.cands, Cand, i).ref);
    }
    for (unsigned p = 0; p < NPORTS; p++) {
        for (unsigned e = 0; e < PTM_MAX_ENDPOINTS; e++) {
            if (v.elem[p][e].bits) {
                g_array_free(v.elem[p][e].bits, TRUE);
                g_free(v.elem[p][e].v);
            }
        }
    }
    g_array_free(v.scopes, TRUE);
    g_array_free(v.cands, TRUE);
    g_array_free(v.unhandled, TRUE);
    g_ptr_array_free(v.sigs, TRUE);
    g_hash_table_destroy(v.ids);
    g_ptr_array_free(v.touched, TRUE);
    g_free(v.xz_note);
    return err;
}

/* --------------------------------------------------------- text traces */

/* Bus of a text field prefix ("rq", "up1", ...); -1 if none. */
static int text_bus(const Shape *sh, PtmDomain d, const char *nm, size_t n,
                    char **err, const char *path, unsigned line)
{
    if (d == PTM_DOMAIN_PCIE) {
        return tok_is(nm, n, "rq") ? 0 : tok_is(nm, n, "rc") ? 1 : -1;
    }
    for (unsigned down = 0; down < 2; down++) {
        const char *kw = down ? "down" : "up";
        size_t kl = strlen(kw);
        uint64_t port = 0;

        if (n < kl || memcmp(nm, kw, kl) ||
            (n > kl && !parse_u64(nm + kl, n - kl, &port))) {
            continue;
        }
        if (port >= sh->buses[d] / 2) {
            *err = rd_error(path, line, "bus %.*s: the card has %u DMA "
                            "port(s)", (int)n, nm, sh->buses[d] / 2);
            return -1;
        }
        return 2 * port + down;
    }
    return -1;
}

/* One "key=value" field of a text line. */
static char *text_field(const Shape *sh, PtmDomain d, Sample *s,
                        uint64_t *cycles, const char *key, size_t kn,
                        uint64_t val, const char *path, unsigned line)
{
    const char *dot = memchr(key, '.', kn);
    unsigned R = sh->regions[d], W = sh->pos_width[d];
    bool pcie = d == PTM_DOMAIN_PCIE;
    char *err = NULL;

#define LIMIT(max)                                                          \
    do {                                                                    \
        if (val > (uint64_t)(max)) {                                        \
            return rd_error(path, line, "%.*s=%" PRIu64 " is above %"       \
                            PRIu64, (int)kn, key, val, (uint64_t)(max));    \
        }                                                                   \
    } while (0)

    if (dot) {
        int b = text_bus(sh, d, key, dot - key, &err, path, line);
        const char *f = dot + 1;
        size_t fn = kn - (f - key);
        SampleBus *sb;
        uint64_t r;

        if (err) {
            return err;
        }
        if (b < 0) {
            return rd_error(path, line, "no bus '%.*s' on a %s line (%s)",
                            (int)(dot - key), key, pcie ? "pcie" : "dma",
                            pcie ? "rq, rc" : "up<p>, down<p>");
        }
        sb = &s->bus[b];
        if (tok_is(f, fn, "src")) {
            LIMIT(1);
            sb->src = val;
        } else if (tok_is(f, fn, "dst")) {
            LIMIT(1);
            sb->dst = val;
        } else if (tok_is(f, fn, "sof")) {
            LIMIT((1u << R) - 1);
            sb->sof = val;
        } else if (tok_is(f, fn, "eof")) {
            LIMIT((1u << R) - 1);
            sb->eof = val;
        } else if (fn > 3 && !memcmp(f, "pos", 3) &&
                   parse_u64(f + 3, fn - 3, &r) && r < R) {
            LIMIT((1u << W) - 1);
            sb->pos[r] = val;
        } else if (!pcie && tok_is(f, fn, "vld")) {
            LIMIT((1u << R) - 1);
            sb->vld = val;
        } else if (!pcie && tok_is(f, fn, "msrc")) {
            LIMIT(1);
            sb->msrc = val;
        } else if (!pcie && tok_is(f, fn, "mdst")) {
            LIMIT(1);
            sb->mdst = val;
        } else {
            return rd_error(path, line, "unknown field '%.*s' (src, dst, "
                            "sof, eof, pos0..pos%u%s)", (int)kn, key, R - 1,
                            pcie ? "" : ", vld, msrc, mdst");
        }
        return NULL;
    }
    if (tok_is(key, kn, "cycles")) {
        if (val == 0 || val > (1ull << 48)) {
            return rd_error(path, line, "cycles=%" PRIu64 ": allowed 1 to "
                            "2^48", val);
        }
        *cycles = val;
        return NULL;
    }
    if (!pcie) {
        return rd_error(path, line, "unknown field '%.*s' on a dma line",
                        (int)kn, key);
    }
    if (tok_is(key, kn, "brake")) {
        LIMIT(0x3F);
        s->brake = val;
    } else if (tok_is(key, kn, "tags")) {
        LIMIT(0x7FF);
        s->tags = val;
    } else if (tok_is(key, kn, "stfifo")) {
        LIMIT(0xFFFF);
        s->stfifo = val;
    } else if (tok_is(key, kn, "link")) {
        LIMIT(1);
        s->link = val;
    } else if (tok_is(key, kn, "mps")) {
        LIMIT(7);
        s->set_mask |= SET_MPS;
        s->set.mps = val;
    } else if (tok_is(key, kn, "mrrs")) {
        LIMIT(7);
        s->set_mask |= SET_MRRS;
        s->set.mrrs = val;
    } else if (tok_is(key, kn, "ext_tag")) {
        LIMIT(1);
        s->set_mask |= SET_EXT_TAG;
        s->set.ext_tag = val;
    } else if (tok_is(key, kn, "tag_10b")) {
        LIMIT(1);
        s->set_mask |= SET_TAG_10B;
        s->set.tag_10bit = val;
    } else if (tok_is(key, kn, "rcb")) {
        LIMIT(1);
        s->set_mask |= SET_RCB;
        s->set.rcb_128 = val;
    } else {
        return rd_error(path, line, "unknown field '%.*s'", (int)kn, key);
    }
#undef LIMIT
    return NULL;
}

static char *text_load(PtmReplayTrace *t, const char *path, const char *buf,
                       size_t len)
{
    const char *p = buf, *end = buf + len;
    unsigned line = 0;

    while (p < end) {
        const char *eol = memchr(p, '\n', end - p);
        const char *hash, *q;
        Rd r;
        const char *tok;
        size_t n;
        PtmDomain d;
        uint64_t e = 0, cycles = 1;
        Sample s;

        eol = eol ? eol : end;
        line++;
        hash = memchr(p, '#', eol - p);
        r = (Rd) { .path = path, .p = p, .end = hash ? hash : eol };
        p = eol + 1;
        if (!rd_token(&r, &tok, &n)) {
            continue;           /* blank or comment */
        }
        if (n >= 4 && !g_ascii_strncasecmp(tok, "pcie", 4)) {
            d = PTM_DOMAIN_PCIE;
            q = tok + 4;
        } else if (n >= 3 && !g_ascii_strncasecmp(tok, "dma", 3)) {
            d = PTM_DOMAIN_DMA;
            q = tok + 3;
        } else {
            return rd_error(path, line, "a line starts with pcie<e> or "
                            "dma<e>, not '%.*s'", (int)MIN(n, 40), tok);
        }
        if (q < tok + n && !parse_u64(q, tok + n - q, &e)) {
            return rd_error(path, line, "bad endpoint in '%.*s'",
                            (int)MIN(n, 40), tok);
        }
        if (e >= t->sh.endpoints) {
            continue;           /* an endpoint the card does not have */
        }
        sample_idle(&t->sh, &s);
        while (rd_token(&r, &tok, &n)) {
            const char *eq = memchr(tok, '=', n);
            g_autofree char *key = NULL;
            uint64_t val;
            char *err;

            if (!eq || eq == tok) {
                return rd_error(path, line, "'%.*s' is not key=value",
                                (int)MIN(n, 40), tok);
            }
            if (!parse_u64(eq + 1, tok + n - eq - 1, &val)) {
                return rd_error(path, line, "bad number in '%.*s'",
                                (int)MIN(n, 40), tok);
            }
            key = g_ascii_strdown(tok, eq - tok);
            err = text_field(&t->sh, d, &s, &cycles, key, strlen(key), val,
                             path, line);
            if (err) {
                return err;
            }
        }
        trace_add(t, e, d, &s, cycles);
    }
    return NULL;
}

/* -------------------------------------------------------------- loading */

static char *trace_read(PtmReplayTrace *t, const char *path,
                        const char *scope)
{
    g_autoptr(GError) gerr = NULL;
    GMappedFile *mf = g_mapped_file_new(path, FALSE, &gerr);
    const char *buf, *p;
    size_t len;
    char *err;

    if (!mf) {
        return g_strdup_printf("%s: %s", path, gerr->message);
    }
    buf = g_mapped_file_get_contents(mf);
    len = g_mapped_file_get_length(mf);
    p = buf;
    while (p && p < buf + len && g_ascii_isspace(*p)) {
        p++;
    }
    /* a VCD starts with a section keyword ($date, $timescale, ...) */
    if (p && p < buf + len && *p == '$') {
        err = vcd_load(t, path, scope, buf, len);
    } else {
        err = text_load(t, path, buf ? buf : "", buf ? len : 0);
    }
    g_mapped_file_unref(mf);
    return err;
}

/* The last trace read, so that check() and fill() read a file once. */
static struct {
    char *path, *scope;
    PtmGeometry geo;
    struct stat st;
    PtmReplayTrace *t;
} last;
G_LOCK_DEFINE_STATIC(last);

static bool geo_same(const PtmGeometry *a, const PtmGeometry *b)
{
    return a->endpoints == b->endpoints && a->dma_ports == b->dma_ports &&
           a->rq_regions == b->rq_regions && a->rc_regions == b->rc_regions &&
           a->up_regions == b->up_regions &&
           a->down_regions == b->down_regions &&
           a->rq_region_bytes == b->rq_region_bytes &&
           a->rc_region_bytes == b->rc_region_bytes &&
           a->up_region_bytes == b->up_region_bytes &&
           a->down_region_bytes == b->down_region_bytes &&
           a->item_bytes == b->item_bytes &&
           a->tag_capacity == b->tag_capacity &&
           a->stfifo_capacity == b->stfifo_capacity;
}

static bool stat_same(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
           a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

PtmReplayTrace *ptm_replay_load(const char *path, const char *scope,
                                const PtmGeometry *geo, char **err)
{
    struct stat st;
    PtmReplayTrace *t;

    *err = NULL;
    if (!*path) {
        *err = g_strdup("file is empty: give the path of a .vcd file or of "
                        "a text trace");
        return NULL;
    }
    if (stat(path, &st) < 0) {
        *err = g_strdup_printf("%s: %s", path, g_strerror(errno));
        return NULL;
    }
    G_LOCK(last);
    if (last.t && !strcmp(last.path, path) && !strcmp(last.scope, scope) &&
        geo_same(&last.geo, geo) && stat_same(&last.st, &st)) {
        t = last.t;
        g_atomic_int_inc(&t->ref);
        G_UNLOCK(last);
        return t;
    }
    G_UNLOCK(last);

    t = trace_new(geo);
    *err = trace_read(t, path, scope);
    if (*err) {
        ptm_replay_unref(t);
        return NULL;
    }
    trace_finish(t);

    G_LOCK(last);
    ptm_replay_unref(last.t);
    g_free(last.path);
    g_free(last.scope);
    last.path = g_strdup(path);
    last.scope = g_strdup(scope);
    last.geo = *geo;
    last.st = st;
    last.t = t;
    g_atomic_int_inc(&t->ref);
    G_UNLOCK(last);
    return t;
}

/* ------------------------------------------------------------ the model */

typedef enum EndMode { END_IDLE, END_HOLD, END_LOOP, END_BAD } EndMode;

static EndMode end_mode(const char *s)
{
    if (!g_ascii_strcasecmp(s, "idle")) {
        return END_IDLE;
    }
    if (!g_ascii_strcasecmp(s, "hold")) {
        return END_HOLD;
    }
    if (!g_ascii_strcasecmp(s, "loop")) {
        return END_LOOP;
    }
    return END_BAD;
}

void ptm_replay_params_default(PtmReplayParams *p)
{
    memset(p, 0, sizeof(*p));
    strcpy(p->end, "idle");
}

static void replay_defaults(void *params)
{
    ptm_replay_params_default(params);
}

static char *replay_check(const void *params, const PtmGeometry *geo)
{
    const PtmReplayParams *p = params;
    PtmReplayTrace *t;
    char *err;

    if (end_mode(p->end) == END_BAD) {
        return g_strdup_printf("end is '%s', allowed: idle, hold, loop",
                               p->end);
    }
    t = ptm_replay_load(p->file, p->scope, geo, &err);
    ptm_replay_unref(t);
    return err;
}

/* A trace in use: one per (file, scope) of the parameter history. */
typedef struct Slot {
    char file[PTM_PARAM_STR_LEN];
    char scope[PTM_PARAM_STR_LEN];
    PtmReplayTrace *t;          /* NULL: unreadable now, replayed as idle */
    uint64_t used;
    uint32_t hint[PROBES];      /* run of the last fill */
} Slot;

typedef struct ReplayCache {
    Slot slot[PTM_GEN_HISTORY];
    uint64_t clock;
} ReplayCache;

static void replay_cache_free(void *cache)
{
    ReplayCache *c = cache;

    for (unsigned i = 0; i < PTM_GEN_HISTORY; i++) {
        ptm_replay_unref(c->slot[i].t);
    }
    g_free(c);
}

static Slot *replay_slot(const PtmGen *gen, const PtmReplayParams *p)
{
    PtmGen *g = (PtmGen *)gen;      /* the cache is derived data only */
    ReplayCache *c;
    Slot *s = NULL;
    char *err = NULL;

    if (!g->cache) {
        g->cache = g_new0(ReplayCache, 1);
    }
    c = g->cache;
    for (unsigned i = 0; i < PTM_GEN_HISTORY; i++) {
        Slot *x = &c->slot[i];

        if (x->used && !strcmp(x->file, p->file) &&
            !strcmp(x->scope, p->scope)) {
            x->used = ++c->clock;
            return x;
        }
        if (!s || x->used < s->used) {
            s = x;
        }
    }
    ptm_replay_unref(s->t);
    memset(s, 0, sizeof(*s));
    g_strlcpy(s->file, p->file, sizeof(s->file));
    g_strlcpy(s->scope, p->scope, sizeof(s->scope));
    s->used = ++c->clock;
    s->t = ptm_replay_load(p->file, p->scope, &gen->geo, &err);
    if (!s->t) {
        /* checked when set; gone or broken since: better idle than abort */
        g_message("replay: %s; replaying idle", err);
        g_free(err);
    }
    return s;
}

/*
 * Cycle 0 of the trace is the first cycle of the parameters in force: a
 * change made while the card runs starts the trace again from the moment
 * it applies (the cycles gen_fill() cuts spans at).
 */
static uint64_t replay_origin(const PtmGen *gen, const void *params,
                              uint64_t hz)
{
    uint64_t pcie = gen->geo.pcie_hz;

    for (unsigned i = 0; i < gen->nver; i++) {
        if (gen->params[i] == params) {
            return (uint64_t)(((unsigned __int128)gen->from[i] * hz +
                               pcie - 1) / pcie);
        }
    }
    return 0;
}

static void idle_segment(const Shape *sh, PtmSegment *seg, uint64_t n)
{
    memset(seg, 0, sizeof(*seg));
    seg->cycles = n;
    seg->link_up = 1;
    seg->tag_free = sh->tags_idle;
    seg->stfifo_free = sh->stfifo_idle;
}

static uint64_t replay_fill(const PtmGen *gen, const void *params,
                            const PtmProbeInfo *probe, uint64_t start,
                            uint64_t max, PtmChunk *out)
{
    const PtmReplayParams *p = params;
    EndMode mode = end_mode(p->end);
    Slot *sl = replay_slot(gen, p);
    const Probe *pr = sl->t ? trace_probe(sl->t, probe->endpoint,
                                          probe->domain) : NULL;
    uint64_t origin = replay_origin(gen, params, probe->hz);
    uint64_t n = pr ? probe_cycles(pr) : 0;
    uint64_t k = start > origin ? start - origin : 0, done = 0;
    uint32_t *hint = &sl->hint[PROBE_INDEX(probe->endpoint, probe->domain)];
    unsigned B, R;
    uint32_t i;
    Shape sh;

    out->seg = out->scratch;
    out->repeat = 1;
    out->nseg = 1;
    if (n == 0 || (k >= n && mode == END_IDLE)) {
        shape_init(&sh, &gen->geo);
        idle_segment(&sh, &out->seg[0], max);
        return max;
    }
    B = pr->buses;
    R = pr->regions;
    if (k >= n && mode == END_HOLD) {
        unpack_segment(run_sample(pr, pr->nruns - 1), B, R, &out->seg[0]);
        out->seg[0].cycles = max;
        return max;
    }
    k %= n;
    i = probe_find(pr, k, *hint);
    out->nseg = 0;

    if (mode == END_LOOP && pr->nruns < PTM_CHUNK_SEGMENTS && max >= n) {
        /* one whole turn from k, as often as it fits */
        for (uint32_t j = 0; j <= pr->nruns; j++) {
            uint32_t ri = (i + j) % pr->nruns;
            uint64_t from = j ? run_start(pr, ri) : k;
            uint64_t to = j == pr->nruns ? k : pr->end[ri];
            PtmSegment *seg;

            if (to <= from) {
                continue;
            }
            seg = &out->seg[out->nseg++];
            unpack_segment(run_sample(pr, ri), B, R, seg);
            seg->cycles = to - from;
        }
        *hint = i;
        out->repeat = max / n;
        return out->repeat * n;
    }

    while (done < max && out->nseg < PTM_CHUNK_SEGMENTS) {
        PtmSegment *seg;
        uint64_t len;

        if (k == n) {
            if (mode == END_LOOP) {
                k = 0;
                i = 0;
            } else if (mode == END_HOLD) {
                /* the last run goes on */
                out->seg[out->nseg - 1].cycles += max - done;
                done = max;
                break;
            } else {
                shape_init(&sh, &gen->geo);
                idle_segment(&sh, &out->seg[out->nseg++], max - done);
                done = max;
                break;
            }
        }
        len = MIN(pr->end[i] - k, max - done);
        seg = &out->seg[out->nseg++];
        unpack_segment(run_sample(pr, i), B, R, seg);
        seg->cycles = len;
        done += len;
        k += len;
        if (k == pr->end[i] && k < n) {
            i++;
        }
    }
    *hint = i;
    return done;
}

/*
 * Counts from prefix sums: O(log n + BLOCK_RUNS) per span, and a looped
 * trace costs nothing per turn.
 */
static bool replay_count(const PtmGen *gen, const void *params,
                         const PtmProbeShape *sh, uint64_t start, uint64_t end,
                         PtmCountState *st, uint64_t *acc)
{
    const PtmProbeInfo *probe = &sh->info;
    const PtmReplayParams *p = params;
    EndMode mode = end_mode(p->end);
    Slot *sl;
    Probe *pr;
    uint64_t origin, n, k;
    Shape shp;

    if (start == end) {
        return true;
    }
    sl = replay_slot(gen, p);
    pr = sl->t ? (Probe *)trace_probe(sl->t, probe->endpoint, probe->domain)
               : NULL;
    origin = replay_origin(gen, params, probe->hz);
    n = pr ? probe_cycles(pr) : 0;
    if (start < origin && n) {
        return false;       /* before the trace: as fill has it, not here */
    }
    k = start - MIN(start, origin);
    while (start < end) {
        uint64_t len = end - start;
        PtmSegment seg;
        PtmChunk ch = { .repeat = 1, .nseg = 1, .seg = &seg };

        if (n && k >= n && mode == END_LOOP) {
            k %= n;
        }
        if (n == 0 || (k >= n && mode == END_IDLE)) {
            shape_init(&shp, &gen->geo);
            idle_segment(&shp, &seg, len);
            ptm_count_chunk(sh, st, &ch, acc);
            return true;
        }
        if (k >= n) {           /* hold: the last cycle goes on */
            unpack_segment(run_sample(pr, pr->nruns - 1), pr->buses,
                           pr->regions, &seg);
            seg.cycles = len;
            ptm_count_chunk(sh, st, &ch, acc);
            return true;
        }
        if (k == 0 && mode == END_LOOP && len >= n) {
            /*
             * Whole turns. A turn maps each bus's frame-open bit by a
             * constant, the identity or a negation, so from the second
             * turn on the turns repeat with period 1 or 2.
             */
            uint64_t turns = len / n, rem, d1[256], d2[256];
            unsigned nch = sh->channels;
            uint32_t s0 = st->open, s1, s2;

            memset(d1, 0, nch * sizeof(d1[0]));
            count_trace(pr, sh, 0, n, st, d1);
            s1 = st->open;
            rem = turns - 1;
            if (s1 == s0 || !rem) {
                for (unsigned c = 0; c < nch; c++) {
                    acc[c] += d1[c] * turns;
                }
            } else {
                for (unsigned c = 0; c < nch; c++) {
                    acc[c] += d1[c];
                }
                memset(d1, 0, nch * sizeof(d1[0]));
                count_trace(pr, sh, 0, n, st, d1);
                s2 = st->open;
                if (s2 == s1) {
                    for (unsigned c = 0; c < nch; c++) {
                        acc[c] += d1[c] * rem;
                    }
                } else {
                    memset(d2, 0, nch * sizeof(d2[0]));
                    count_trace(pr, sh, 0, n, st, d2);  /* back to s1 */
                    for (unsigned c = 0; c < nch; c++) {
                        acc[c] += d1[c] * ((rem + 1) / 2) + d2[c] * (rem / 2);
                    }
                    st->open = (rem & 1) ? s2 : s1;
                }
            }
            start += turns * n;
            continue;
        }
        len = MIN(len, n - k);
        count_trace(pr, sh, k, k + len, st, acc);
        start += len;
        k += len;
    }
    return true;
}

static void replay_settings(const PtmGen *gen, const void *params,
                            unsigned e, uint64_t cycle, PtmSettings *set)
{
    const PtmReplayParams *p = params;
    EndMode mode = end_mode(p->end);
    Slot *sl = replay_slot(gen, p);
    const Probe *pr = sl->t ? trace_probe(sl->t, e, PTM_DOMAIN_PCIE) : NULL;
    uint64_t origin = replay_origin(gen, params, gen->geo.pcie_hz);
    uint64_t n = pr ? probe_cycles(pr) : 0;
    uint64_t k;

    if (n == 0) {
        return;
    }
    /* the window's last cycle, the one whose link state PCIE_STATUS shows */
    k = cycle > origin ? cycle - 1 - origin : 0;
    if (k >= n) {
        if (mode == END_IDLE) {
            return;
        }
        k = mode == END_HOLD ? n - 1 : k % n;
    }
    unpack_settings(run_sample(pr, probe_find(pr, k, 0)), set);
}

#define OFF(f) offsetof(PtmReplayParams, f)
static const PtmParamDesc replay_params[] = {
    { "file", PTM_PARAM_STR, OFF(file), 0, 0,
      "trace to replay: a VCD file or a text trace (docs/replay.md)" },
    { "scope", PTM_PARAM_STR, OFF(scope), 0, 0,
      "VCD scope of the ports, e.g. tb.dut (empty: the scope with most)" },
    { "end", PTM_PARAM_STR, OFF(end), 0, 0,
      "after the trace: idle, hold (the last cycle) or loop" },
};
#undef OFF

const PtmGenModel ptm_model_replay = {
    .name = "replay",
    .summary = "signals recorded by an HDL simulation (VCD or text trace)",
    .params_size = sizeof(PtmReplayParams),
    .params = replay_params,
    .nparams = G_N_ELEMENTS(replay_params),
    .defaults = replay_defaults,
    .check = replay_check,
    .fill = replay_fill,
    .count = replay_count,
    .settings = replay_settings,
    .cache_free = replay_cache_free,
};
