/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The card's TLPs with their headers, for a tracer above its port (the
 * HiSilicon PTT, through pcie-link-traffic's tlps method):
 *  - the guest's accesses to BAR0 as the link carries them. A read is a
 *    memory read request down and its completion with data up, a write a
 *    posted memory write down; the root complex (requester ID 0) asks,
 *    with a tag that counts on. The card keeps the last NDK_TLP_LOG
 *    accesses: a tracer that asks less often than that loses the oldest.
 *  - the frames of its traffic source (generators or DMA engine) on RQ
 *    and RC, walked one by one from where the tracer last was
 *    (ptm-frames.c): an RQ frame with payload is a memory write up, one
 *    without a memory read up, an RC frame a completion with data down.
 * What the frames do not say (addresses, tags, a read's length) the model
 * fills in as docs/ptt.md describes.
 */
#include "ndk-card.h"

void ndk_telemetry_log_access(NdkPcieTelemetryState *s, bool write,
                              hwaddr bar_off, unsigned size)
{
    NdkBarAccess *a;

    if (!s->tlp_log) {
        return;
    }
    a = &s->tlp_log[s->tlp_log_total % NDK_TLP_LOG];
    a->t_ns = now_ns();
    a->addr = pci_get_bar_addr(PCI_DEVICE(s), 0) + bar_off;
    a->size = size;
    a->write = write;
    a->tag = s->tlp_tag++;
    s->tlp_log_total++;
}

void ndk_telemetry_tlps_reset(NdkPcieTelemetryState *s)
{
    s->tlp_log_total = 0;
    s->tlp_tag = 0;
    ptm_frames_free(s->tlp_frames);
    s->tlp_frames = NULL;
    ptm_link_free(s->tlp_count);
    s->tlp_count = NULL;
    s->tlp_counted = 0;
    s->tlp_frame_no = 0;
}

/* The first ns at or after cycle c starts */
static uint64_t ndk_tlp_ns(NdkPcieTelemetryState *s, uint64_t c)
{
    unsigned __int128 x = (unsigned __int128)c * NANOSECONDS_PER_SECOND;

    return (uint64_t)((x + s->cfg.pcie_clk_hz - 1) / s->cfg.pcie_clk_hz);
}

/* The walk and its count, from cycle c0 on; false without a source */
static bool ndk_tlp_frames_at(NdkPcieTelemetryState *s, uint64_t c0)
{
    PtmProbeShape sh;
    PtmLinkTotals t;

    if (!s->src_ops) {
        return false;
    }
    if (!s->tlp_frames) {
        ndk_telemetry_link_shape(s, &sh);
        s->tlp_frames = ptm_frames_new(&sh, s->cfg.mfb_item_bytes, c0);
        s->tlp_count = ptm_link_new(&sh, s->cfg.mfb_item_bytes, c0);
        s->tlp_counted = 0;
    }
    if (ptm_frames_done(s->tlp_frames) < c0) {
        /* a tracer that comes back later: from there on */
        ptm_frames_skip(s->tlp_frames, c0);
        ptm_link_advance(s->tlp_count, s->src_ops, s->src_opaque, c0,
                         s->src_ops == ptm_dma_traffic_ops());
        ptm_link_totals(s->tlp_count, &t);
        s->tlp_counted = t.frames_up + t.frames_down;
    }
    return true;
}

/* The count follows the walk: what it passed is counted */
static uint64_t ndk_tlp_count_to(NdkPcieTelemetryState *s, uint64_t c)
{
    PtmLinkTotals t;
    uint64_t n;

    ptm_link_advance(s->tlp_count, s->src_ops, s->src_opaque, c,
                     s->src_ops == ptm_dma_traffic_ops());
    ptm_link_totals(s->tlp_count, &t);
    n = t.frames_up + t.frames_down - s->tlp_counted;
    s->tlp_counted = t.frames_up + t.frames_down;
    return n;
}

static void ndk_tlp_of_frame(NdkPcieTelemetryState *s,
                             const PtmLinkFrame *f, PcieTlp *out)
{
    uint32_t bdf = pci_requester_id(PCI_DEVICE(s));
    uint8_t tag = s->tlp_tag++;

    memset(out, 0, sizeof(*out));
    out->t_ns = ndk_tlp_ns(s, f->sof_cycle);
    if (f->bus == 0) {
        uint64_t pay = f->bytes > PTM_LINK_RQ_HDR ?
                       f->bytes - PTM_LINK_RQ_HDR : 0;
        uint64_t addr = NDK_TLP_ADDR_BASE +
                        (s->tlp_frame_no++ % NDK_TLP_ADDR_PAGES) * 4096;
        unsigned dws = pay ? pay / 4 : (128u << s->settings.mrrs) / 4;

        out->up = true;
        out->type = pay ? PCIE_TLP_P : PCIE_TLP_NP;
        out->hdr[0] = pcie_tlp_dw0(pay ? PCIE_TLP_FMT_4DW_DATA
                                       : PCIE_TLP_FMT_4DW,
                                   PCIE_TLP_TYPE_MEM, dws);
        out->hdr[1] = bdf << 16 | (uint32_t)tag << 8 |
                      (dws > 1 ? 0xF0 : 0) | 0x0F;
        out->hdr[2] = addr >> 32;
        out->hdr[3] = (uint32_t)addr;
    } else {
        uint64_t pay = f->bytes > PTM_LINK_RC_HDR ?
                       f->bytes - PTM_LINK_RC_HDR : 0;

        out->up = false;
        out->type = PCIE_TLP_CPL;
        out->hdr[0] = pcie_tlp_dw0(PCIE_TLP_FMT_3DW_DATA, PCIE_TLP_TYPE_CPL,
                                   pay / 4);
        out->hdr[1] = pay & 0xFFF;             /* completer 0: the host */
        out->hdr[2] = bdf << 16 | (uint32_t)tag << 8;
    }
}

static int ndk_tlp_cmp(const void *a, const void *b)
{
    const PcieTlp *x = a, *y = b;

    return x->t_ns < y->t_ns ? -1 : x->t_ns > y->t_ns;
}

/* Byte enables of the first and last DW of [addr, addr + size) */
static void ndk_tlp_bytes(uint64_t addr, unsigned size, unsigned *dws,
                          unsigned *first_be, unsigned *last_be)
{
    unsigned lead = addr & 3, end = lead + size;

    *dws = DIV_ROUND_UP(end, 4);
    if (*dws == 1) {
        *first_be = ((1u << size) - 1) << lead;
        *last_be = 0;
    } else {
        *first_be = 0xF & (0xF << lead);
        *last_be = 0xF >> (4 * *dws - end);
    }
}

/* The TLPs of one access, oldest first: 1 for a write, 2 for a read */
static unsigned ndk_tlp_of(NdkPcieTelemetryState *s, const NdkBarAccess *a,
                           PcieTlp *out)
{
    bool wide = a->addr >= (1ull << 32);
    unsigned dws, fbe, lbe;
    uint32_t dw1;

    ndk_tlp_bytes(a->addr, a->size, &dws, &fbe, &lbe);
    dw1 = (uint32_t)a->tag << 8 | lbe << 4 | fbe;   /* requester 0 */
    memset(out, 0, sizeof(*out));
    out->t_ns = a->t_ns;
    out->up = false;
    out->type = a->write ? PCIE_TLP_P : PCIE_TLP_NP;
    out->hdr[0] = pcie_tlp_dw0(a->write ? (wide ? PCIE_TLP_FMT_4DW_DATA
                                                : PCIE_TLP_FMT_3DW_DATA)
                                        : (wide ? PCIE_TLP_FMT_4DW
                                                : PCIE_TLP_FMT_3DW),
                               PCIE_TLP_TYPE_MEM, dws);
    out->hdr[1] = dw1;
    if (wide) {
        out->hdr[2] = a->addr >> 32;
        out->hdr[3] = a->addr & ~3u;
    } else {
        out->hdr[2] = a->addr & ~3u;
    }
    if (a->write) {
        return 1;
    }
    /* the completion: completer (the card), byte count, requester, tag */
    memset(&out[1], 0, sizeof(out[1]));
    out[1].t_ns = a->t_ns;
    out[1].up = true;
    out[1].type = PCIE_TLP_CPL;
    out[1].hdr[0] = pcie_tlp_dw0(PCIE_TLP_FMT_3DW_DATA, PCIE_TLP_TYPE_CPL,
                                 dws);
    out[1].hdr[1] = (uint32_t)pci_requester_id(PCI_DEVICE(s)) << 16 |
                    a->size;
    out[1].hdr[2] = (uint32_t)a->tag << 8 | (a->addr & 0x7F);
    return 2;
}

size_t ndk_telemetry_tlps(Object *obj, uint64_t from, uint64_t to,
                          PcieTlp *out, size_t max, uint64_t *resume)
{
    NdkPcieTelemetryState *s = NDK_PCIE_TELEMETRY(obj);
    uint64_t first = s->tlp_log_total > NDK_TLP_LOG ?
                     s->tlp_log_total - NDK_TLP_LOG : 0;
    uint64_t cto = ndk_telemetry_pcie_cycle(s, to);
    size_t nbar = 0, n = 0, nf = 0;
    g_autofree PtmLinkFrame *fr = NULL;

    *resume = to;
    ndk_telemetry_quiesce(s);
    if (!s->tlp_log) {
        return 0;
    }
    /* the BAR accesses: how many TLPs, to leave room for them */
    for (uint64_t i = first; i < s->tlp_log_total; i++) {
        const NdkBarAccess *a = &s->tlp_log[i % NDK_TLP_LOG];

        if (a->t_ns >= from && a->t_ns < to) {
            nbar += a->write ? 1 : 2;
        }
    }
    if (ndk_tlp_frames_at(s, ndk_telemetry_pcie_cycle(s, from))) {
        if (!out) {
            /* counted, not walked: the tracer drops them */
            n = ndk_tlp_count_to(s, cto);
            ptm_frames_skip(s->tlp_frames, cto);
            return nbar + n;
        }
        if (max > nbar) {
            fr = g_new(PtmLinkFrame, max - nbar);
            nf = ptm_frames_walk(s->tlp_frames, s->src_ops, s->src_opaque,
                                 cto, fr, max - nbar);
            ndk_tlp_count_to(s, ptm_frames_done(s->tlp_frames));
        }
        if (ptm_frames_done(s->tlp_frames) < cto) {
            /* frames wait: so do the accesses after them */
            *resume = ndk_tlp_ns(s, ptm_frames_done(s->tlp_frames));
        }
    } else if (!out) {
        return nbar;
    }
    for (uint64_t i = first; i < s->tlp_log_total && n < max; i++) {
        const NdkBarAccess *a = &s->tlp_log[i % NDK_TLP_LOG];

        if (a->t_ns < from || a->t_ns >= *resume) {
            continue;
        }
        if (n + (a->write ? 1 : 2) > max) {
            break;
        }
        n += ndk_tlp_of(s, a, &out[n]);
    }
    for (size_t i = 0; i < nf && n < max; i++) {
        ndk_tlp_of_frame(s, &fr[i], &out[n++]);
    }
    qsort(out, n, sizeof(*out), ndk_tlp_cmp);
    return n;
}
