/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Channel definitions on hand-made cycles (expected counts worked out from
 * FACTS.md by hand), band edges, and the fast chunk counter against the
 * literal per-cycle reference on random input.
 */
#include <glib.h>
#include <string.h>

#include "ptm-core.h"

/* Channels of the default PCIe probe (2 regions) */
#define BUS(b, k)   (1 + (b) * 8 + (k))
#define WORDS(b)    BUS(b, 0)
#define STALL(b)    BUS(b, 1)
#define SOF(b)      BUS(b, 2)
#define MVB(b)      BUS(b, 3)
#define MVBSTALL(b) BUS(b, 4)
#define ITEMS(b)    BUS(b, 5)
#define REG(b, r)   BUS(b, 6 + (r))
#define BRAKE(k)    (17 + (k))
#define TAGBAND(j)  (23 + (j))
#define FIFOBAND(j) (27 + (j))

static void pcie_shape(PtmProbeShape *sh)
{
    memset(sh, 0, sizeof(*sh));
    sh->info.domain = PTM_DOMAIN_PCIE;
    sh->info.buses = 2;
    sh->info.regions = 2;
    sh->info.bus_regions[0] = sh->info.bus_regions[1] = 2;
    sh->info.bus_items[0] = sh->info.bus_items[1] = 8;
    sh->info.hz = 400000000;
    sh->channels = 31;
    sh->brakes = 14;
    sh->eof_pos_mask = 7;
    sh->tag_capacity = 256;
    sh->stfifo_capacity = 1024;
}

/* A sequence of single cycles, counted both ways. */
typedef struct Seq {
    PtmProbeShape sh;
    PtmChunk ch;
    PtmSegment segs[64];
    uint64_t ref[256], fast[256];
} Seq;

static PtmSegment *seq_add(Seq *s)
{
    PtmSegment *g = &s->ch.seg[s->ch.nseg++];

    memset(g, 0, sizeof(*g));
    g->cycles = 1;
    g->tag_free = 200;
    g->stfifo_free = 1000;
    return g;
}

static void seq_init(Seq *s)
{
    memset(s, 0, sizeof(*s));
    pcie_shape(&s->sh);
    s->ch.repeat = 1;
    s->ch.seg = s->segs;
}

static void seq_count(Seq *s)
{
    PtmCountState a = { 0 }, b = { 0 };

    ptm_count_state_window_start(&a);
    ptm_count_state_window_start(&b);
    ptm_count_chunk_reference(&s->sh, &a, &s->ch, s->ref);
    ptm_count_chunk(&s->sh, &b, &s->ch, s->fast);
    for (unsigned c = 0; c < s->sh.channels; c++) {
        g_assert_cmpuint(s->ref[c], ==, s->fast[c]);
    }
    g_assert_cmpuint(a.open, ==, b.open);
    g_assert_cmpuint(s->ref[0], ==, s->ch.nseg);
}

static void word(PtmBusCycle *bc)
{
    bc->src_rdy = 1;
    bc->dst_rdy = 1;
}

static void test_single_word_frame(void)
{
    Seq s;
    PtmSegment *g;

    seq_init(&s);
    g = seq_add(&s);
    word(&g->bus[0]);
    g->bus[0].sof = 1;
    g->bus[0].eof = 1;
    g->bus[0].eof_pos[0] = 3;
    seq_count(&s);
    g_assert_cmpuint(s.ref[WORDS(0)], ==, 1);
    g_assert_cmpuint(s.ref[SOF(0)], ==, 1);
    g_assert_cmpuint(s.ref[ITEMS(0)], ==, 4);
    g_assert_cmpuint(s.ref[REG(0, 0)], ==, 1);
    g_assert_cmpuint(s.ref[REG(0, 1)], ==, 0);
    g_assert_cmpuint(s.ref[WORDS(1)], ==, 0);
}

/* SOF and EOF in cycles in which no word moves change nothing. */
static void test_no_word_no_count(void)
{
    Seq s;
    PtmSegment *g;

    seq_init(&s);
    g = seq_add(&s);            /* stalled word with SOF */
    g->bus[0].src_rdy = 1;
    g->bus[0].sof = 1;
    g = seq_add(&s);            /* SOF and EOF without SRC_RDY */
    g->bus[0].dst_rdy = 1;
    g->bus[0].sof = 3;
    g->bus[0].eof = 3;
    g = seq_add(&s);            /* a moving word that continues nothing */
    word(&g->bus[0]);
    seq_count(&s);
    g_assert_cmpuint(s.ref[STALL(0)], ==, 1);
    g_assert_cmpuint(s.ref[WORDS(0)], ==, 1);
    g_assert_cmpuint(s.ref[SOF(0)], ==, 0);
    g_assert_cmpuint(s.ref[ITEMS(0)], ==, 0);
    g_assert_cmpuint(s.ref[REG(0, 0)], ==, 0);
    g_assert_cmpuint(s.ref[REG(0, 1)], ==, 0);
}

static void test_eof_without_frame(void)
{
    Seq s;
    PtmSegment *g;

    seq_init(&s);
    g = seq_add(&s);
    word(&g->bus[1]);
    g->bus[1].eof = 1;
    g->bus[1].eof_pos[0] = 5;
    seq_count(&s);
    g_assert_cmpuint(s.ref[WORDS(1)], ==, 1);
    g_assert_cmpuint(s.ref[ITEMS(1)], ==, 0);
    g_assert_cmpuint(s.ref[REG(1, 0)], ==, 0);
}

static void test_two_frames_in_one_word(void)
{
    Seq s;
    PtmSegment *g;

    seq_init(&s);
    g = seq_add(&s);
    word(&g->bus[0]);
    g->bus[0].sof = 3;
    g->bus[0].eof = 3;
    g->bus[0].eof_pos[0] = 1;
    g->bus[0].eof_pos[1] = 7;
    seq_count(&s);
    g_assert_cmpuint(s.ref[SOF(0)], ==, 2);
    g_assert_cmpuint(s.ref[ITEMS(0)], ==, 2 + 8);
    g_assert_cmpuint(s.ref[REG(0, 0)], ==, 1);
    g_assert_cmpuint(s.ref[REG(0, 1)], ==, 1);
}

static void test_stall_mid_frame(void)
{
    Seq s;
    PtmSegment *g;

    seq_init(&s);
    g = seq_add(&s);            /* first word, frame continues */
    word(&g->bus[0]);
    g->bus[0].sof = 1;
    g = seq_add(&s);            /* stalled: the open frame waits */
    g->bus[0].src_rdy = 1;
    g->bus[0].eof = 1;
    g->bus[0].eof_pos[0] = 2;
    g = seq_add(&s);            /* the frame ends in region 0 */
    word(&g->bus[0]);
    g->bus[0].eof = 1;
    g->bus[0].eof_pos[0] = 2;
    g = seq_add(&s);            /* closed: an idle moving word adds 0 */
    word(&g->bus[0]);
    seq_count(&s);
    g_assert_cmpuint(s.ref[WORDS(0)], ==, 3);
    g_assert_cmpuint(s.ref[STALL(0)], ==, 1);
    g_assert_cmpuint(s.ref[SOF(0)], ==, 1);
    g_assert_cmpuint(s.ref[ITEMS(0)], ==, 16 + 3);
    g_assert_cmpuint(s.ref[REG(0, 0)], ==, 2);
    g_assert_cmpuint(s.ref[REG(0, 1)], ==, 1);
}

static void test_frame_from_region1(void)
{
    Seq s;
    PtmSegment *g;

    seq_init(&s);
    g = seq_add(&s);
    word(&g->bus[0]);
    g->bus[0].sof = 2;
    g = seq_add(&s);
    word(&g->bus[0]);
    g->bus[0].eof = 1;
    g->bus[0].eof_pos[0] = 0;
    seq_count(&s);
    g_assert_cmpuint(s.ref[ITEMS(0)], ==, 8 + 1);
    g_assert_cmpuint(s.ref[REG(0, 0)], ==, 1);
    g_assert_cmpuint(s.ref[REG(0, 1)], ==, 1);
}

static void test_mvb_and_brakes(void)
{
    Seq s;
    PtmSegment *g;

    seq_init(&s);
    g = seq_add(&s);
    g->bus[0].mvb_src_rdy = 1;
    g->bus[0].mvb_dst_rdy = 1;
    g->bus[0].mvb_vld = 3;
    g->brake = 0x05;
    g = seq_add(&s);
    g->bus[0].mvb_src_rdy = 1;
    g->bus[0].mvb_vld = 1;
    g->brake = 0x21;
    g = seq_add(&s);            /* valid bits without SRC_RDY */
    g->bus[0].mvb_dst_rdy = 1;
    g->bus[0].mvb_vld = 3;
    seq_count(&s);
    /* FACTS.md: the PCIe side has no MVB, its counters stay 0 */
    g_assert_cmpuint(s.ref[MVB(0)], ==, 0);
    g_assert_cmpuint(s.ref[MVBSTALL(0)], ==, 0);
    g_assert_cmpuint(s.ref[BRAKE(0)], ==, 2);
    g_assert_cmpuint(s.ref[BRAKE(1)], ==, 0);
    g_assert_cmpuint(s.ref[BRAKE(2)], ==, 1);
    g_assert_cmpuint(s.ref[BRAKE(5)], ==, 1);

    /* the same bus cycles on a DMA probe (1 port, 2 regions, no BRAKE) */
    s.sh.info.domain = PTM_DOMAIN_DMA;
    s.sh.channels = 17;
    s.sh.brakes = 0;
    memset(s.ref, 0, sizeof(s.ref));
    memset(s.fast, 0, sizeof(s.fast));
    seq_count(&s);
    g_assert_cmpuint(s.ref[MVB(0)], ==, 2);
    g_assert_cmpuint(s.ref[MVBSTALL(0)], ==, 1);
}

/* FACTS.md: band 0 at 0, 1 up to C/8, 2 up to C/2, 3 above. */
static void test_band_edges(void)
{
    static const uint16_t tags[] = { 0, 1, 32, 33, 128, 129, 256 };
    static const uint16_t fifo[] = { 0, 1, 128, 129, 512, 513, 1024 };
    Seq s;

    seq_init(&s);
    for (unsigned i = 0; i < G_N_ELEMENTS(tags); i++) {
        PtmSegment *g = seq_add(&s);
        g->tag_free = tags[i];
        g->stfifo_free = fifo[i];
    }
    seq_count(&s);
    g_assert_cmpuint(s.ref[TAGBAND(0)], ==, 1);
    g_assert_cmpuint(s.ref[TAGBAND(1)], ==, 2);
    g_assert_cmpuint(s.ref[TAGBAND(2)], ==, 2);
    g_assert_cmpuint(s.ref[TAGBAND(3)], ==, 2);
    g_assert_cmpuint(s.ref[FIFOBAND(0)], ==, 1);
    g_assert_cmpuint(s.ref[FIFOBAND(1)], ==, 2);
    g_assert_cmpuint(s.ref[FIFOBAND(2)], ==, 2);
    g_assert_cmpuint(s.ref[FIFOBAND(3)], ==, 2);

    /* a capacity that is no multiple of 8: C/8 = 12.5, C/2 = 50 */
    g_assert_cmpuint(ptm_band(12, 100), ==, 1);
    g_assert_cmpuint(ptm_band(13, 100), ==, 2);
    g_assert_cmpuint(ptm_band(50, 100), ==, 2);
    g_assert_cmpuint(ptm_band(51, 100), ==, 3);
    /* a capacity below 8: nothing fits in band 1 */
    g_assert_cmpuint(ptm_band(1, 7), ==, 2);
    g_assert_cmpuint(ptm_band(4, 7), ==, 3);
}

static void random_bus(GRand *r, const PtmProbeShape *sh, PtmBusCycle *bc)
{
    unsigned rm = (1u << sh->info.regions) - 1;
    /* bias towards frames that span words */
    bc->src_rdy = g_rand_int_range(r, 0, 4) != 0;
    bc->dst_rdy = g_rand_int_range(r, 0, 4) != 0;
    bc->sof = g_rand_int_range(r, 0, 3) ? 0 : g_rand_int(r) & rm;
    bc->eof = g_rand_int_range(r, 0, 3) ? 0 : g_rand_int(r) & rm;
    bc->mvb_vld = g_rand_int(r) & rm;
    bc->mvb_src_rdy = g_rand_boolean(r);
    bc->mvb_dst_rdy = g_rand_boolean(r);
    for (unsigned i = 0; i < sh->info.regions; i++) {
        bc->eof_pos[i] = g_rand_int_range(r, 0, 256);
    }
}

/* The fast counter equals the per-cycle reference on random chunks. */
static void check_random(PtmProbeShape *sh, unsigned seed)
{
    GRand *r = g_rand_new_with_seed(seed);
    PtmChunk *ch = ptm_chunk_new();
    PtmCountState a = { 0 }, b = { 0 };
    uint64_t ref[256] = { 0 }, fast[256] = { 0 };

    ptm_count_state_window_start(&a);
    ptm_count_state_window_start(&b);
    for (unsigned round = 0; round < 20; round++) {
        ch->nseg = g_rand_int_range(r, 1, 6);
        ch->repeat = g_rand_int_range(r, 1, 8);
        for (unsigned i = 0; i < ch->nseg; i++) {
            PtmSegment *g = &ch->seg[i];

            memset(g, 0, sizeof(*g));
            g->cycles = g_rand_int_range(r, 1, 6);
            g->brake = g_rand_int(r) & 0x3F;
            g->tag_free = g_rand_int_range(r, 0, 300);
            g->stfifo_free = g_rand_int_range(r, 0, 1100);
            g->link_up = g_rand_boolean(r);
            for (unsigned bb = 0; bb < sh->info.buses; bb++) {
                random_bus(r, sh, &g->bus[bb]);
            }
        }
        ptm_count_chunk_reference(sh, &a, ch, ref);
        ptm_count_chunk(sh, &b, ch, fast);
        g_assert_cmpuint(a.open, ==, b.open);
        g_assert_cmpuint(a.tag_min, ==, b.tag_min);
        g_assert_cmpuint(a.stfifo_min, ==, b.stfifo_min);
        g_assert_cmpuint(a.tag_last, ==, b.tag_last);
        g_assert_cmpuint(a.link_last, ==, b.link_last);
    }
    for (unsigned c = 0; c < sh->channels; c++) {
        if (ref[c] != fast[c]) {
            g_error("seed %u channel %u: reference %" G_GUINT64_FORMAT
                    " fast %" G_GUINT64_FORMAT, seed, c, ref[c], fast[c]);
        }
    }
    ptm_chunk_free(ch);
    g_rand_free(r);
}

static void test_fast_equals_reference(void)
{
    PtmProbeShape pcie, dma;

    pcie_shape(&pcie);
    memset(&dma, 0, sizeof(dma));
    dma.info.domain = PTM_DOMAIN_DMA;
    dma.info.buses = 6;
    dma.info.regions = 4;
    for (unsigned b = 0; b < 6; b++) {
        dma.info.bus_regions[b] = (b & 1) ? 2 : 4;
        dma.info.bus_items[b] = (b & 1) ? 16 : 4;
    }
    dma.channels = 1 + 6 * 10;
    dma.eof_pos_mask = 15;
    for (unsigned seed = 1; seed <= 400; seed++) {
        check_random(&pcie, seed);
        check_random(&dma, seed);
    }
}

/* Long runs: a repeated chunk of a frame that alternates the open state. */
static void test_long_runs(void)
{
    PtmProbeShape sh;
    PtmChunk *ch = ptm_chunk_new();
    PtmCountState st = { 0 };
    uint64_t acc[256] = { 0 };

    pcie_shape(&sh);
    ptm_count_state_window_start(&st);
    /* one segment: a word with SOF in region 1 and no EOF, 10^9 times.
     * Every word adds region 1 (8 items); region 0 is valid only when the
     * frame is open from the word before, which is every word but the
     * first. */
    ch->nseg = 1;
    ch->repeat = 1000;
    ch->seg[0].cycles = 1000000;
    word(&ch->seg[0].bus[0]);
    ch->seg[0].bus[0].sof = 2;
    ptm_count_chunk(&sh, &st, ch, acc);
    g_assert_cmpuint(acc[0], ==, 1000000000ull);
    g_assert_cmpuint(acc[REG(0, 1)], ==, 1000000000ull);
    g_assert_cmpuint(acc[REG(0, 0)], ==, 1000000000ull - 1);
    g_assert_cmpuint(acc[ITEMS(0)], ==, 16 * 1000000000ull - 8);
    g_assert_cmpuint(acc[SOF(0)], ==, 1000000000ull);
    ptm_chunk_free(ch);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/count/single-word-frame", test_single_word_frame);
    g_test_add_func("/count/no-word-no-count", test_no_word_no_count);
    g_test_add_func("/count/eof-without-frame", test_eof_without_frame);
    g_test_add_func("/count/two-frames-in-one-word",
                    test_two_frames_in_one_word);
    g_test_add_func("/count/stall-mid-frame", test_stall_mid_frame);
    g_test_add_func("/count/frame-from-region1", test_frame_from_region1);
    g_test_add_func("/count/mvb-and-brakes", test_mvb_and_brakes);
    g_test_add_func("/count/band-edges", test_band_edges);
    g_test_add_func("/count/fast-equals-reference",
                    test_fast_equals_reference);
    g_test_add_func("/count/long-runs", test_long_runs);
    return g_test_run();
}
