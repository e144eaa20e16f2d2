/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The link's payload and down time from a traffic source: see ptm-link.h. */
#include <string.h>
#include <glib.h>

#include "ptm-bytes.h"
#include "ptm-count.h"
#include "ptm-link.h"

struct PtmLinkCount {
    PtmProbeShape sh;
    unsigned item_bytes;
    uint64_t done;              /* the first cycle not counted */
    PtmCountState st;
    uint64_t rq_items, rq_sof, rc_items, rc_sof;
    uint64_t down_cycles;
    uint64_t *acc;              /* the probe's channels, scratch */
    PtmChunk *ch;
};

PtmLinkCount *ptm_link_new(const PtmProbeShape *sh, unsigned item_bytes,
                           uint64_t start)
{
    PtmLinkCount *lc = g_new0(PtmLinkCount, 1);

    lc->sh = *sh;
    lc->item_bytes = item_bytes;
    lc->done = start;
    ptm_count_state_window_start(&lc->st);
    lc->acc = g_new0(uint64_t, sh->channels);
    lc->ch = ptm_chunk_new();
    return lc;
}

void ptm_link_free(PtmLinkCount *lc)
{
    if (lc) {
        g_free(lc->acc);
        ptm_chunk_free(lc->ch);
        g_free(lc);
    }
}

uint64_t ptm_link_done(const PtmLinkCount *lc)
{
    return lc->done;
}

/* A chunk as the source gave it: its cycles, and those of a low link */
static uint64_t chunk_cycles(const PtmChunk *ch, uint64_t *down)
{
    uint64_t n = 0, low = 0;

    for (unsigned i = 0; i < ch->nseg; i++) {
        n += ch->seg[i].cycles;
        low += ch->seg[i].link_up ? 0 : ch->seg[i].cycles;
    }
    *down = low * ch->repeat;
    return n * ch->repeat;
}

/* [c, c + n) out of reset: frames counted, and the low link if asked */
static void count_up(PtmLinkCount *lc, const PtmSourceOps *ops, void *opaque,
                     uint64_t c, uint64_t n, bool link_always_up)
{
    bool counted = ops->count &&
                   ops->count(opaque, &lc->sh, c, c + n, &lc->st, lc->acc);

    if (counted && link_always_up) {
        return;
    }
    for (uint64_t end = c + n; c < end;) {
        uint64_t down, got;

        lc->ch->seg = lc->ch->scratch;
        lc->ch->repeat = 1;
        lc->ch->nseg = 0;
        lc->ch->id = 0;
        ops->fill(opaque, &lc->sh.info, c, end - c, lc->ch);
        got = lc->ch->nseg ? chunk_cycles(lc->ch, &down) : 0;
        if (got == 0 || got > end - c) {
            /* a source that describes nothing there: an idle link */
            break;
        }
        lc->down_cycles += down;
        if (!counted) {
            ptm_count_chunk(&lc->sh, &lc->st, lc->ch, lc->acc);
        }
        c += got;
    }
}

void ptm_link_advance(PtmLinkCount *lc, const PtmSourceOps *ops,
                      void *opaque, uint64_t end, bool link_always_up)
{
    unsigned rq = ptm_ch_bus(lc->sh.info.regions, 0, 0);
    unsigned rc = ptm_ch_bus(lc->sh.info.regions, 1, 0);

    if (!ops || end <= lc->done) {
        return;
    }
    memset(lc->acc, 0, lc->sh.channels * sizeof(uint64_t));
    for (uint64_t c = lc->done; c < end;) {
        uint64_t n = end - c;
        bool held = false;

        if (ops->reset && !link_always_up) {
            n = ops->reset(opaque, &lc->sh.info, c, end - c, &held);
            n = MAX(MIN(n, end - c), 1);
        }
        if (held) {
            /* in reset no TLP crosses, and frames start again after it */
            lc->down_cycles += n;
            lc->st.open = 0;
        } else {
            count_up(lc, ops, opaque, c, n, link_always_up);
        }
        c += n;
    }
    lc->rq_items += lc->acc[rq + PTM_CH_ITEMS];
    lc->rq_sof += lc->acc[rq + PTM_CH_SOF];
    lc->rc_items += lc->acc[rc + PTM_CH_ITEMS];
    lc->rc_sof += lc->acc[rc + PTM_CH_SOF];
    lc->done = end;
}

void ptm_link_totals(const PtmLinkCount *lc, PtmLinkTotals *out)
{
    uint64_t up = lc->rq_items * lc->item_bytes;
    uint64_t down = lc->rc_items * lc->item_bytes;
    uint64_t up_hdr = lc->rq_sof * PTM_LINK_RQ_HDR;
    uint64_t down_hdr = lc->rc_sof * PTM_LINK_RC_HDR;

    /* frames shorter than a header (synthetic ones can be) carry none */
    out->payload_up = up > up_hdr ? up - up_hdr : 0;
    out->payload_down = down > down_hdr ? down - down_hdr : 0;
    out->down_cycles = lc->down_cycles;
    out->frames_up = lc->rq_sof;
    out->frames_down = lc->rc_sof;
}

#define LINK_MAGIC 0x4C494E4Bu          /* "LINK" */

void *ptm_link_save(const PtmLinkCount *lc, size_t *len)
{
    GByteArray *b = g_byte_array_new();

    ptm_put64(b, LINK_MAGIC);
    ptm_put64(b, lc->done);
    ptm_put64(b, lc->st.open);
    ptm_put64(b, lc->rq_items);
    ptm_put64(b, lc->rq_sof);
    ptm_put64(b, lc->rc_items);
    ptm_put64(b, lc->rc_sof);
    ptm_put64(b, lc->down_cycles);
    *len = b->len;
    return g_byte_array_free(b, FALSE);
}

char *ptm_link_load(PtmLinkCount *lc, const void *buf, size_t len)
{
    PtmReader rd = { buf, len, false };
    uint64_t v[8];

    for (unsigned i = 0; i < 8; i++) {
        v[i] = ptm_get64(&rd);
    }
    if (rd.bad || rd.left || v[0] != LINK_MAGIC || v[2] > 3) {
        return g_strdup("link totals: malformed");
    }
    lc->done = v[1];
    ptm_count_state_window_start(&lc->st);
    lc->st.open = v[2];
    lc->rq_items = v[3];
    lc->rq_sof = v[4];
    lc->rc_items = v[5];
    lc->rc_sof = v[6];
    lc->down_cycles = v[7];
    return NULL;
}
