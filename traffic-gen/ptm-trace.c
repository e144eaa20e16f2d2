/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The store of a replayed trace: the ports of PCIE_TELEMETRY_MI as a trace
 * names them, samples normalised and packed, one run-length list per
 * probe, and the tokenizer both readers use. The VCD reader (ptm-vcd.c)
 * and the text reader and the model (ptm-replay.c) build on it; it calls
 * neither.
 *
 * Samples are stored normalised: fields no counter can see (SOF, EOF,
 * EOF_POS and DST_RDY of a bus without SRC_RDY, the MVB valid bits and
 * DST_RDY without MVB SRC_RDY, EOF_POS of a region without EOF, the MVB of
 * the PCIe side) are cleared, so that runs merge and x/z there is ignored.
 */
#include <glib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ptm-trace.h"

/* ------------------------------------------------------------ the ports */


#define PORT(id, nm, k, d) [id] = { nm, k, d }
const PortDesc ptm_port_tab[NPORTS] = {
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
    PORT(PORT_PCIE_RESET, "pcie_reset", PK_EPVEC, PTM_DOMAIN_PCIE),
    PORT(PORT_DMA_RESET, "dma_reset", PK_SCALAR, PTM_DOMAIN_DMA),
};
#undef PORT

bool ptm_port_is_clock(unsigned port)
{
    return port == PORT_PCIE_CLK || port == PORT_DMA_CLK;
}

int ptm_port_find(const char *lower)
{
    for (unsigned i = 0; i < NPORTS; i++) {
        if (!strcmp(ptm_port_tab[i].name, lower)) {
            return i;
        }
    }
    return -1;
}

/* What the card's geometry makes of the ports. */

static unsigned clog2u(unsigned v)
{
    unsigned r = 0;

    while ((1u << r) < v) {
        r++;
    }
    return r;
}

void ptm_trace_shape_init(Shape *sh, const PtmGeometry *geo)
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
unsigned ptm_port_width(const Shape *sh, unsigned port, char *why,
                           size_t len)
{
    PtmDomain d = ptm_port_tab[port].dom;
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


/* A probe with all its ports absent. */
void ptm_sample_idle(const Shape *sh, Sample *s)
{
    memset(s, 0, sizeof(*s));
    s->link = 1;
    s->tags = sh->tags_idle;
    s->stfifo = sh->stfifo_idle;
}

/* Clear what no counter sees, so that equal counts mean equal samples. */
static void sample_normalize(const Shape *sh, PtmDomain d, Sample *s)
{
    s->reset &= 1;
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
    o[0] = (s->brake & 0x3F) | (s->link & 1) << 6 | (s->reset & 1) << 7;
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

void ptm_trace_unpack_segment(const uint8_t *in, unsigned B, unsigned R,
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

void ptm_trace_unpack_settings(const uint8_t *in, PtmSettings *set)
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
void ptm_trace_push(Probe *p, uint32_t s, uint64_t n)
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

uint64_t ptm_trace_probe_cycles(const Probe *p)
{
    return p->nruns ? p->end[p->nruns - 1] : 0;
}

/* The run holding cycle k < ptm_trace_probe_cycles(p); hint: look there. */
uint32_t ptm_trace_probe_find(const Probe *p, uint64_t k, uint32_t hint)
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

uint64_t ptm_trace_run_start(const Probe *p, uint32_t i)
{
    return i ? p->end[i - 1] : 0;
}

const uint8_t *ptm_trace_run_sample(const Probe *p, uint32_t i)
{
    return p->pool + (size_t)p->idx[i] * p->stride;
}

PtmReplayTrace *ptm_trace_new(const PtmGeometry *geo)
{
    PtmReplayTrace *t = g_new0(PtmReplayTrace, 1);

    t->ref = 1;
    ptm_trace_shape_init(&t->sh, geo);
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
void ptm_trace_finish(PtmReplayTrace *t)
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
        /* the spans in which the probe's own reset is held */
        for (uint32_t k = 0; k < p->nruns; k++) {
            uint64_t from = k ? p->end[k - 1] : 0;

            if (!(ptm_trace_run_sample(p, k)[0] >> 7)) {
                continue;
            }
            if (p->nrst && p->rst[2 * p->nrst - 1] == from) {
                p->rst[2 * p->nrst - 1] = p->end[k];
                continue;
            }
            p->rst = g_renew(uint64_t, p->rst, 2 * (p->nrst + 1));
            p->rst[2 * p->nrst] = from;
            p->rst[2 * p->nrst + 1] = p->end[k];
            p->nrst++;
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

/* Add a finished sample of probe (e, d) for n cycles. */
uint32_t ptm_trace_add(PtmReplayTrace *t, unsigned e, PtmDomain d,
                       Sample *s, uint64_t n)
{
    Probe *p = &t->probe[PROBE_INDEX(e, d)];
    uint8_t packed[PACK_MAX];
    uint32_t idx;

    sample_normalize(&t->sh, d, s);
    sample_pack(s, p->buses, p->regions, packed);
    idx = probe_intern(p, packed);
    ptm_trace_push(p, idx, n);
    return idx;
}

/* ------------------------------------------------------------- reading */


G_GNUC_PRINTF(3, 4) char *ptm_rd_error(const char *path, unsigned line,
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
bool ptm_rd_token(Rd *r, const char **tok, size_t *len)
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

bool ptm_tok_is(const char *t, size_t n, const char *s)
{
    return strlen(s) == n && !memcmp(t, s, n);
}

/* Unsigned number: decimal, 0x hex or 0b binary, all of s. */
bool ptm_parse_u64(const char *s, size_t n, uint64_t *v)
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
