/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The link's totals (ptm-link.c) against closed forms: a pattern's frames
 * (payload = frames x (items x 4 - header)), a low link, the DMA engine's
 * transfers (payload = the bytes written and read), counted in uneven
 * steps and across a save and load.
 */
#include <glib.h>
#include <string.h>

#include "ptm-core.h"
#include "ptm-dma-traffic.h"
#include "ptm-frames.h"
#include "ptm-link.h"
#include "ptm-pattern.h"

typedef struct Card {
    PtmConfig cfg;
    PtmCore *core;
    PtmGeometry geo;
    PtmProbeShape sh;
} Card;

static void card_init(Card *c)
{
    ptm_config_default(&c->cfg);
    c->core = ptm_core_new(&c->cfg);
    ptm_core_geometry(c->core, &c->geo);
    ptm_core_probe_shape(c->core, 0, PTM_DOMAIN_PCIE, &c->sh);
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/*
 * RQ: frames of 300 B after a stalled cycle and before 3 idle ones; RC:
 * frames of 76 B back to back. Over whole periods of both the payload is
 * frames x (items x 4 - header), counted in steps of any length.
 */
static void test_pattern(void)
{
    Card c;
    PtmPatternParams par;
    PtmPattern pat;
    PtmLinkCount *lc;
    PtmLinkTotals tot;
    uint64_t w_rq, w_rc, p_rq, p_rc, n;

    card_init(&c);
    ptm_pattern_params_default(&par);
    for (unsigned k = 0; k < PTM_BUS_KINDS; k++) {
        par.bus[k].frame_bytes = 0;
    }
    par.bus[PTM_BUS_RQ].frame_bytes = 300;
    par.bus[PTM_BUS_RQ].gap = 3;
    par.bus[PTM_BUS_RQ].stall = 1;
    par.bus[PTM_BUS_RC].frame_bytes = 76;
    par.bus[PTM_BUS_RC].gap = 0;
    par.bus[PTM_BUS_RC].stall = 0;
    g_assert_null(ptm_pattern_check(&par, &c.geo));
    ptm_pattern_init(&pat, &par, &c.geo);
    w_rq = c.geo.rq_regions * c.geo.rq_region_bytes;
    w_rc = c.geo.rc_regions * c.geo.rc_region_bytes;
    p_rq = 1 + div_up(300, w_rq) + 3;
    p_rc = div_up(76, w_rc);
    n = p_rq * p_rc * 1000;
    lc = ptm_link_new(&c.sh, c.geo.item_bytes, 0);
    for (uint64_t t = 0; t < n; t += 1234) {
        ptm_link_advance(lc, &ptm_pattern_ops, &pat, t, false);
    }
    ptm_link_advance(lc, &ptm_pattern_ops, &pat, n, false);
    g_assert_cmpuint(ptm_link_done(lc), ==, n);
    ptm_link_totals(lc, &tot);
    g_assert_cmpuint(tot.payload_up, ==,
                     n / p_rq * (div_up(300, c.geo.item_bytes) *
                                 c.geo.item_bytes - 16));
    g_assert_cmpuint(tot.payload_down, ==,
                     n / p_rc * (div_up(76, c.geo.item_bytes) *
                                 c.geo.item_bytes - 12));
    g_assert_cmpuint(tot.down_cycles, ==, 0);
    ptm_link_free(lc);

    /* the link held low: every cycle counts as down */
    par.link_up = false;
    ptm_pattern_init(&pat, &par, &c.geo);
    lc = ptm_link_new(&c.sh, c.geo.item_bytes, 5000);
    ptm_link_advance(lc, &ptm_pattern_ops, &pat, 5000 + n, false);
    ptm_link_totals(lc, &tot);
    g_assert_cmpuint(tot.down_cycles, ==, n);
    ptm_link_free(lc);
    ptm_core_free(c.core);
}

/*
 * The same pattern's frames one by one (ptm-frames.c): every RQ frame of
 * 300 B rounded to items a period p_rq apart, every RC frame of 76 B a
 * period p_rc apart, walked in uneven steps with small batches; their
 * payload adds up to the link's totals; a skip drops what is open and
 * the walk goes on in step.
 */
static void test_frames(void)
{
    Card c;
    PtmPatternParams par;
    PtmPattern pat;
    PtmFrameWalk *w;
    PtmLinkCount *lc;
    PtmLinkTotals tot;
    PtmLinkFrame fr[37];
    uint64_t w_rq, w_rc, p_rq, p_rc, n, cnt[2] = { 0 }, pay[2] = { 0 };
    uint64_t last[2] = { 0 }, rq_bytes, rc_bytes;
    bool first[2] = { true, true };

    card_init(&c);
    ptm_pattern_params_default(&par);
    for (unsigned k = 0; k < PTM_BUS_KINDS; k++) {
        par.bus[k].frame_bytes = 0;
    }
    par.bus[PTM_BUS_RQ].frame_bytes = 300;
    par.bus[PTM_BUS_RQ].gap = 3;
    par.bus[PTM_BUS_RQ].stall = 1;
    par.bus[PTM_BUS_RC].frame_bytes = 76;
    ptm_pattern_init(&pat, &par, &c.geo);
    w_rq = c.geo.rq_regions * c.geo.rq_region_bytes;
    w_rc = c.geo.rc_regions * c.geo.rc_region_bytes;
    p_rq = 1 + div_up(300, w_rq) + 3;
    p_rc = div_up(76, w_rc);
    n = p_rq * p_rc * 200;
    rq_bytes = div_up(300, c.geo.item_bytes) * c.geo.item_bytes;
    rc_bytes = div_up(76, c.geo.item_bytes) * c.geo.item_bytes;
    w = ptm_frames_new(&c.sh, c.geo.item_bytes, 0);
    for (uint64_t t = 0; ptm_frames_done(w) < n; t = MIN(t + 777, n)) {
        size_t k;

        do {
            k = ptm_frames_walk(w, &ptm_pattern_ops, &pat, t, fr,
                                G_N_ELEMENTS(fr));
            for (size_t i = 0; i < k; i++) {
                unsigned b = fr[i].bus;

                g_assert_cmpuint(b, <, 2);
                g_assert_cmpuint(fr[i].bytes, ==, b ? rc_bytes : rq_bytes);
                g_assert_cmpuint(fr[i].eof_cycle, >=, fr[i].sof_cycle);
                if (!first[b]) {
                    g_assert_cmpuint(fr[i].sof_cycle - last[b], ==,
                                     b ? p_rc : p_rq);
                }
                first[b] = false;
                last[b] = fr[i].sof_cycle;
                cnt[b]++;
                pay[b] += fr[i].bytes - (b ? 12 : 16);
            }
        } while (k == G_N_ELEMENTS(fr) ||
                 (k && ptm_frames_done(w) < t));
    }
    g_assert_cmpuint(cnt[0], ==, n / p_rq);
    g_assert_cmpuint(cnt[1], ==, n / p_rc);
    lc = ptm_link_new(&c.sh, c.geo.item_bytes, 0);
    ptm_link_advance(lc, &ptm_pattern_ops, &pat, n, false);
    ptm_link_totals(lc, &tot);
    g_assert_cmpuint(pay[0], ==, tot.payload_up);
    g_assert_cmpuint(pay[1], ==, tot.payload_down);
    /* skipped: the next frames keep the period */
    ptm_frames_skip(w, n + 5 * p_rq * p_rc + 1);
    g_assert_cmpuint(ptm_frames_walk(w, &ptm_pattern_ops, &pat,
                                     n + 7 * p_rq * p_rc, fr, 1), ==, 1);
    g_assert_cmpuint(fr[0].sof_cycle % p_rq == 0 ||
                     fr[0].sof_cycle % p_rc == 0, ==, true);
    ptm_link_free(lc);
    ptm_frames_free(w);
    ptm_core_free(c.core);
}

/*
 * The DMA engine's writes and reads at DW-aligned addresses: the payload
 * up is the bytes written and down the bytes read, whatever the MPS, MRRS
 * and RCB split them into; a save and load in the middle changes nothing.
 */
static void test_dma(void)
{
    Card c;
    PtmDmaTraffic *log;
    PtmLinkCount *a, *b;
    PtmLinkTotals ta, tb;
    PtmSettings set = { .mps = 1, .mrrs = 2, .ext_tag = true };
    uint64_t wr = 0, rd = 0, end;
    char *err;

    card_init(&c);
    log = ptm_dma_traffic_new(&c.geo);
    a = ptm_link_new(&c.sh, c.geo.item_bytes, 0);
    b = ptm_link_new(&c.sh, c.geo.item_bytes, 0);
    for (unsigned i = 0; i < 200; i++) {
        uint32_t bytes = 4 * (1 + (i * 37) % 700);
        uint64_t addr = 0x10000000 + i * 0x1004;

        ptm_dma_traffic_add(log, 1000 + i * 5000, 0, i % 3 != 0, addr, bytes,
                            &set);
        if (i % 3 != 0) {
            wr += bytes;
        } else {
            rd += bytes;
        }
        if (i == 120) {
            size_t len;
            void *st;
            uint64_t at = (1000 + i * 5000) * (c.geo.pcie_hz / 1000000) /
                          1000;

            ptm_link_advance(b, ptm_dma_traffic_ops(), log, at, true);
            st = ptm_link_save(b, &len);
            ptm_link_free(b);
            b = ptm_link_new(&c.sh, c.geo.item_bytes, 0);
            g_assert_null(ptm_link_load(b, st, len));
            err = ptm_link_load(b, st, len - 1);
            g_assert_nonnull(err);
            g_free(err);
            g_free(st);
        }
    }
    end = 2000000 * (c.geo.pcie_hz / 1000000) / 1000;
    ptm_link_advance(a, ptm_dma_traffic_ops(), log, end, true);
    ptm_link_advance(b, ptm_dma_traffic_ops(), log, end, true);
    ptm_link_totals(a, &ta);
    ptm_link_totals(b, &tb);
    g_assert_cmpuint(ta.payload_up, ==, wr);
    g_assert_cmpuint(ta.payload_down, ==, rd);
    g_assert_cmpuint(tb.payload_up, ==, wr);
    g_assert_cmpuint(tb.payload_down, ==, rd);
    g_assert_cmpuint(ta.down_cycles, ==, 0);
    ptm_link_free(a);
    ptm_link_free(b);
    ptm_dma_traffic_free(log);
    ptm_core_free(c.core);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/link/pattern", test_pattern);
    g_test_add_func("/link/frames", test_frames);
    g_test_add_func("/link/dma", test_dma);
    return g_test_run();
}
