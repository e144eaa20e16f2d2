/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The replay generator: a hand-written VCD and a hand-written text trace
 * replay to counts worked out by hand (through the fills and through the
 * core); random traces (test-replay-random.c); the name forms
 * simulators write; x/z read as 0 where it matters; bad files refused
 * with their file and line; a live change that restarts the trace; the
 * replay rate; and, when tests/replay/ghdl-vcd.sh
 * runs this with the VCD GHDL writes from tests/replay/tb_replay.vhd, the
 * counts that testbench implies.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "replay-support.h"

/* ------------------------------------------------- hand-written traces */

/*
 * The default card: 1 endpoint, 1 DMA port, 2 regions of 8 items on every
 * bus, 3-bit EOF_POS fields. PCIE_CLK rises at 5, 15, ..., 55 (6 cycles),
 * DMA_CLK at 5, 25, 45 (3 cycles). Values change at the rising edges, so
 * each edge samples what the previous one set. The names use the forms
 * simulators write: any case, name(0) with a range, name[0], a plain
 * vector, bits one by one, a [0:0] vector; tb.dut is the only scope with
 * ports. x and z appear only where SRC_RDY (MVB SRC_RDY) is low.
 *
 * PCIe cycles:
 *   0  idle                                           tags 200 (band 3)
 *   1  RQ word: SOF r0, no EOF: 8 + 8 items           tags 200
 *   2  RQ held: SRC_RDY, no DST_RDY: one stall        tags 200
 *   3  RQ word: r0 open 8, EOF r1 at 5: 6 items;      tags 200
 *      RC word: SOF and EOF in r0 at 3: 4 items
 *   4  idle (SOF/EOF x)                               tags 10 (band 1)
 *   5  idle                                           tags 10
 * RQ: 2 words, 1 stall, 1 SOF, 30 items, r0 2, r1 2.
 * RC: 1 word, 1 SOF, 4 items, r0 1, r1 0. Tags: band 3 x 4, band 1 x 2;
 * no PCIE_STFIFO_FREE: the capacity, band 3 x 6. PCIE_MPS 1.
 * DMA cycles:
 *   0  idle
 *   1  UP word: SOF r0, EOF r1 at 7: 16 items; MVB item r0 with handshake
 *   2  MVB alone: two items (r0, r1), handshake
 * UP: 1 word, 1 SOF, 16 items, r0 1, r1 1, MVB 3.
 */
static const char hand_vcd[] =
    "$date today $end\n"
    "$version by hand $end\n"
    "$timescale 1ns $end\n"
    "$scope module tb $end\n"
    "$var wire 1 ! clk $end\n"
    "$scope module dut $end\n"
    "$var wire 1 ! PCIE_CLK $end\n"
    "$var wire 4 \" pcie_mfb_sof(0) [3:0] $end\n"
    "$var wire 4 # Pcie_Mfb_Eof[0] $end\n"
    "$var wire 12 $ pcie_mfb_eof_pos [11:0] $end\n"
    "$var wire 2 % PCIE_MFB_SRC_RDY $end\n"
    "$var wire 1 & pcie_mfb_dst_rdy(0)[0] $end\n"
    "$var wire 1 ' pcie_mfb_dst_rdy(0)[1] $end\n"
    "$var wire 11 ( pcie_tag_free [10:0] $end\n"
    "$var wire 1 ) pcie_link_up [0:0] $end\n"
    "$var wire 3 * PCIE_MPS $end\n"
    "$var wire 1 + dma_clk $end\n"
    "$var wire 4 , DMA_MFB_SOF[0] $end\n"
    "$var wire 4 - dma_mfb_eof $end\n"
    "$var wire 12 . dma_mfb_eof_pos $end\n"
    "$var wire 2 / dma_mfb_src_rdy [1:0] $end\n"
    "$var wire 2 0 dma_mfb_dst_rdy [1:0] $end\n"
    "$var wire 4 1 dma_mvb_vld $end\n"
    "$var wire 2 2 dma_mvb_src_rdy $end\n"
    "$var wire 2 3 dma_mvb_dst_rdy $end\n"
    "$var wire 8 4 unrelated [7:0] $end\n"
    "$var real 64 5 temperature $end\n"
    "$upscope $end\n"
    "$upscope $end\n"
    "$enddefinitions $end\n"
    "#0\n"
    "$dumpvars\n"
    "0!\n" "b0000 \"\n" "b0000 #\n" "bxxxxxxxxxxxx $\n" "b00 %\n"
    "x&\n" "x'\n" "b11001000 (\n" "1)\n" "b1 *\n"
    "0+\n" "bxxxx ,\n" "bxxxx -\n" "bx .\n" "b00 /\n" "bzz 0\n" "b0 1\n"
    "b0 2\n" "b0 3\n" "b10101010 4\n" "r36.6 5\n"
    "$end\n"
    "#5\n"
    "1!\n" "1+\n"
    "b0001 \"\n" "b01 %\n" "1&\n"
    "b0001 ,\n" "b0010 -\n" "b000000111000 .\n" "b01 /\n" "b01 0\n"
    "b0001 1\n" "b01 2\n" "b01 3\n"
    "#10\n"
    "0!\n"
    "#15\n"
    "1!\n" "0+\n"
    "b0000 \"\n" "b0010 #\n" "b000000101000 $\n" "0&\n"
    "#20\n"
    "0!\n"
    "$comment the RC word joins the RQ one $end\n"
    "#25\n"
    "1!\n" "1+\n"
    "1&\n" "b0100 \"\n" "b0110 #\n" "b000011101000 $\n" "b11 %\n" "1'\n"
    "b00 /\n" "b0011 1\n"
    "#30\n"
    "0!\n"
    "#35\n"
    "1!\n" "0+\n"
    "b00 %\n" "bxxxx \"\n" "bzzzz #\n" "x&\n" "x'\n" "b1010 (\n"
    "#40\n"
    "0!\n"
    "#45\n"
    "1!\n" "1+\n"
    "b00 2\n" "b1111 1\n" "b11110000 4\n"
    "#50\n"
    "0!\n"
    "#55\n"
    "1!\n" "0+\n"
    "#60\n"
    "0!\n";

/*
 * The same traffic as a text trace, plus: BRAKE bits 0 and 5 in the stall
 * cycle, 100 free FIFO words (band 1) in cycles 4 and 5, MRRS 3 from
 * cycle 3. Absent fields are idle; tags absent in cycle 0 read as the
 * capacity, 256, band 3 like 200.
 */
static const char hand_text[] =
    "# hand-written trace of the replay test\n"
    "pcie0                                      # cycle 0: idle\n"
    "pcie0 rq.src=1 rq.dst=1 rq.sof=1 tags=200 mps=1\n"
    "PCIE0 rq.src=1 rq.eof=0b10 rq.pos1=5 tags=200 brake=0x21 mps=1\n"
    "dma0\n"
    "pcie0 rq.src=1 rq.dst=1 rq.eof=2 rq.pos1=5 rc.src=1 rc.dst=1 "
    "rc.sof=1 rc.eof=1 rc.pos0=3 tags=200 mps=1 mrrs=3\n"
    "dma0 up.src=1 up.dst=1 up.sof=1 up.eof=2 up.pos1=7 up.vld=1 "
    "up.msrc=1 up.mdst=1\n"
    "pcie0 cycles=2 tags=10 stfifo=100 mps=1 mrrs=3\n"
    "dma up0.vld=3 up0.msrc=1 up0.mdst=1   # endpoint 0 by default\n"
    "pcie1 rq.src=1                         # no endpoint 1: skipped\n";

static void hand_expect(uint64_t *pcie, uint64_t *dma, bool text)
{
    uint64_t *k = brakes_of(pcie, 2);

    memset(pcie, 0, 31 * sizeof(pcie[0]));
    memset(dma, 0, 17 * sizeof(dma[0]));
    pcie[0] = 6;
    expect_bus(pcie, 2, 0, 2, 1, 1, 0, 0, 30, 2, 2);
    expect_bus(pcie, 2, 1, 1, 0, 1, 0, 0, 4, 1, 0);
    k[PTM_BRAKES + 3] = 4;      /* tags 200 (or 256) */
    k[PTM_BRAKES + 1] = 2;      /* tags 10 */
    if (text) {
        k[0] = k[5] = 1;
        k[PTM_BRAKES + 4 + 3] = 4;
        k[PTM_BRAKES + 4 + 1] = 2;
    } else {
        k[PTM_BRAKES + 4 + 3] = 6;
    }
    dma[0] = 3;
    expect_bus(dma, 2, 0, 1, 0, 1, 3, 0, 16, 1, 1);
}

static void check_hand(const char *suffix, const char *text, bool is_text)
{
    g_autofree char *path = tmp_file(suffix, text);
    PtmConfig cfg;
    PtmGeometry geo;
    PtmProbeShape ps, ds;
    uint64_t got[256], exp_p[31], exp_d[17];
    PtmReplayTrace *t;
    PtmSettings set = { .mps = 0, .mrrs = 2 };
    char *err;
    PtmGen *g;

    ptm_config_default(&cfg);
    card_geometry(&cfg, &geo);
    probe_shape(&cfg, 0, PTM_DOMAIN_PCIE, &ps);
    probe_shape(&cfg, 0, PTM_DOMAIN_DMA, &ds);
    hand_expect(exp_p, exp_d, is_text);

    t = ptm_replay_load(path, "", &geo, &err);
    g_assert_null(err);
    g_assert_cmpuint(ptm_replay_cycles(t, 0, PTM_DOMAIN_PCIE), ==, 6);
    g_assert_cmpuint(ptm_replay_cycles(t, 0, PTM_DOMAIN_DMA), ==, 3);
    g_assert_cmpuint(ptm_replay_runs(t, 0, PTM_DOMAIN_PCIE), ==, 5);
    g_assert_cmpuint(ptm_replay_xz_cycles(t), ==, 0);
    ptm_replay_unref(t);

    g = replay_ok(&geo, path, "", "idle");
    for (uint64_t step = 1; step <= 8; step *= 2) {
        count_span(g, &ps, 0, 6, step, got);
        assert_counts(got, exp_p, 31);
        count_span(g, &ds, 0, 3, step, got);
        assert_counts(got, exp_d, 17);
    }
    /*
     * PCIE_MPS is reported; MRRS only where the trace has it (the settings
     * of a drain are those of the cycle its tick samples)
     */
    ptm_gen_source_ops.settings(g, 0, 2, &set);
    g_assert_cmpuint(set.mps, ==, 1);
    g_assert_cmpuint(set.mrrs, ==, 2);
    ptm_gen_source_ops.settings(g, 0, 4, &set);
    g_assert_cmpuint(set.mrrs, ==, is_text ? 3 : 2);
    /* after the end, idle: the card's own settings again */
    set.mps = 0;
    ptm_gen_source_ops.settings(g, 0, 100, &set);
    g_assert_cmpuint(set.mps, ==, 0);
    ptm_gen_free(g);

    /*
     * Through the core: by 60 us both probes have drained the windows
     * holding the trace; the buses count exactly the trace, the bands the
     * rest of the drained PCIe cycles as idle (all free: band 3).
     */
    {
        PtmCore *core = ptm_core_new(&cfg);
        const PtmLayout *lay = ptm_core_layout(core);
        uint64_t c[64], pcycles;
        uint64_t *k = brakes_of(c, 2);

        g = replay_ok(&geo, path, "", "idle");
        ptm_core_set_source(core, &ptm_gen_source_ops, g);
        ptm_core_power_on(core, 0);
        ptm_core_advance(core, 60000);
        for (unsigned i = 0; i < lay->entries; i++) {
            c[i] = ptm_core_counter(core, false, i);
        }
        pcycles = c[0];
        g_assert_cmpuint(pcycles, >=, 4095);
        g_assert_cmpuint(c[lay->pcie_channels], >=, 4095);
        assert_counts(c + 1, exp_p + 1, 2 * (6 + 2) + PTM_BRAKES);
        assert_counts(c + lay->pcie_channels + 1, exp_d + 1, 16);
        /*
         * The bands of channel c (slot c mod 8 of 4 groups) close their
         * windows 5 (c mod 8) - 1 cycles after the cycle counter's, and see
         * the cycle after an MI reset: tag band 3 (channel 26) 9 cycles more
         * than the cycle counter, storage-FIFO band 3 (channel 30) 29.
         */
        g_assert_cmpuint(k[PTM_BRAKES + 1], ==, 2);
        g_assert_cmpuint(k[PTM_BRAKES + 3], ==, pcycles + 9 - 2);
        if (is_text) {
            g_assert_cmpuint(k[PTM_BRAKES + 4 + 1], ==, 2);
            g_assert_cmpuint(k[PTM_BRAKES + 4 + 3], ==, pcycles + 29 - 2);
        } else {
            g_assert_cmpuint(k[PTM_BRAKES + 4 + 3], ==, pcycles + 29);
        }
        ptm_core_free(core);
        ptm_gen_free(g);
    }
    g_unlink(path);
}

static void test_hand_vcd(void)
{
    check_hand(".vcd", hand_vcd, false);
}

static void test_hand_text(void)
{
    check_hand(".txt", hand_text, true);
}

/* The scope: found by itself, named with dots or slashes, or missing. */
static void test_scope(void)
{
    g_autofree char *path = tmp_file(".vcd", hand_vcd);
    PtmConfig cfg;
    PtmGeometry geo;
    char *err;
    PtmGen *g;

    ptm_config_default(&cfg);
    card_geometry(&cfg, &geo);
    g = replay_ok(&geo, path, "TB/DUT", "idle");
    ptm_gen_free(g);
    g = replay_ok(&geo, path, "tb.dut", "idle");
    ptm_gen_free(g);
    /* tb holds only clk, no port name */
    g_assert_null(replay_gen(&geo, path, "tb", "idle", &err));
    g_assert_nonnull(strstr(err, "no port"));
    g_free(err);
    g_assert_null(replay_gen(&geo, path, "tb.nothere", "idle", &err));
    g_assert_nonnull(strstr(err, "no scope 'tb.nothere'"));
    g_assert_nonnull(strstr(err, "tb.dut"));
    g_free(err);
    g_unlink(path);
}

/* ------------------------------------------------------ end modes */

static void test_end_modes(void)
{
    g_autofree char *path = tmp_file(".txt", hand_text);
    PtmConfig cfg;
    PtmGeometry geo;
    PtmProbeShape ps;
    PtmChunk *ch = ptm_chunk_new();
    uint64_t got[256], once[256], exp_p[31], exp_d[17], n;
    PtmGen *g;

    ptm_config_default(&cfg);
    card_geometry(&cfg, &geo);
    probe_shape(&cfg, 0, PTM_DOMAIN_PCIE, &ps);
    hand_expect(exp_p, exp_d, true);

    /* idle: one idle segment from the end on, link up, all free */
    g = replay_ok(&geo, path, "", "idle");
    n = ptm_gen_source_ops.fill(g, &ps.info, 6, 100, ch);
    g_assert_cmpuint(n, ==, 100);
    g_assert_cmpuint(ch->nseg, ==, 1);
    g_assert_cmpuint(ch->seg[0].bus[0].src_rdy, ==, 0);
    g_assert_cmpuint(ch->seg[0].link_up, ==, 1);
    g_assert_cmpuint(ch->seg[0].tag_free, ==, 256);
    g_assert_cmpuint(ch->seg[0].stfifo_free, ==, 1024);
    /* a span across the end: the rest of the trace, then idle */
    ch->seg = ch->scratch;
    n = ptm_gen_source_ops.fill(g, &ps.info, 3, 100, ch);
    g_assert_cmpuint(n, ==, 100);
    g_assert_cmpuint(ch->seg[ch->nseg - 1].cycles, ==, 97);
    count_span(g, &ps, 0, 1000, 4096, got);
    g_assert_cmpuint(got[ptm_ch_bus(2, 0, PTM_CH_WORDS)], ==, 2);
    g_assert_cmpuint(brakes_of(got, 2)[PTM_BRAKES + 3], ==, 1000 - 2);
    ptm_gen_free(g);

    /* hold: the last cycle forever (tags 10, FIFO 100, no traffic) */
    g = replay_ok(&geo, path, "", "hold");
    ch->seg = ch->scratch;
    n = ptm_gen_source_ops.fill(g, &ps.info, 50, 100, ch);
    g_assert_cmpuint(n, ==, 100);
    g_assert_cmpuint(ch->nseg, ==, 1);
    g_assert_cmpuint(ch->seg[0].tag_free, ==, 10);
    g_assert_cmpuint(ch->seg[0].stfifo_free, ==, 100);
    count_span(g, &ps, 0, 1000, 7, got);
    g_assert_cmpuint(brakes_of(got, 2)[PTM_BRAKES + 1], ==, 1000 - 4);
    ptm_gen_free(g);

    /* loop: whole turns with the chunk's repeat, from any phase */
    g = replay_ok(&geo, path, "", "loop");
    ch->seg = ch->scratch;
    n = ptm_gen_source_ops.fill(g, &ps.info, 0, 1000, ch);
    g_assert_cmpuint(ch->repeat, ==, 1000 / 6);
    g_assert_cmpuint(n, ==, 1000 / 6 * 6);
    g_assert_cmpuint(ch->nseg, <=, 6);
    ch->seg = ch->scratch;
    n = ptm_gen_source_ops.fill(g, &ps.info, 6 * 1000 + 2, 1000, ch);
    g_assert_cmpuint(ch->repeat, ==, 1000 / 6);
    g_assert_cmpuint(n, ==, 1000 / 6 * 6);
    count_span(g, &ps, 0, 6, 4096, once);
    assert_counts(once, exp_p, 31);
    for (uint64_t step = 5; step <= 5000; step *= 10) {
        count_span(g, &ps, 0, 6 * 1234, step, got);
        for (unsigned c = 0; c < ps.channels; c++) {
            g_assert_cmpuint(got[c], ==, 1234 * once[c]);
        }
    }
    ptm_gen_free(g);

    ptm_chunk_free(ch);
    g_unlink(path);
}

/* ------------------------------------------------- names, x/z, runs */

/*
 * GHDL's letters (U, -, W, H, L), shortened vector values, an x where
 * SRC_RDY is high (read as 0 and counted), one where it is low (not
 * counted), and PCIE_CLK(1) of a second endpoint the card lacks.
 * PCIe cycles: 0 idle; 1 RQ word, SOF r0 and EOF r0 at 'H0L' = 4, but
 * DST_RDY 'x': read as 0, a stall; 2 RQ word (H, L), SOF r0 and EOF r1 at
 * 1: 8 + 2 items, SOF x in region 1 of RC, whose SRC_RDY is low.
 */
static const char letters_vcd[] =
    "$timescale 1 fs $end\n"
    "$scope module \\tb\\ $end\n"
    "$var reg 1 a \\PCIE_CLK(0)\\ $end\n"
    "$var reg 1 b \\pcie_clk(1)\\ $end\n"
    "$var reg 4 c \\PCIE_MFB_SOF(0)\\[3:0] $end\n"
    "$var reg 4 d \\pcie_mfb_eof[0]\\[3:0] $end\n"
    "$var reg 12 e pcie_mfb_eof_pos(0)(11 downto 0) $end\n"
    "$var reg 2 f pcie_mfb_src_rdy[0:1] $end\n"
    "$var reg 1 g pcie_mfb_dst_rdy[0] $end\n"
    "$var reg 1 h pcie_mfb_dst_rdy[1] $end\n"
    "$var reg 6 i pcie_ptc_brake [5:0] $end\n"
    "$upscope $end\n"
    "$enddefinitions $end\n"
    "#0\n"
    "0a\n" "0b\n" "bUUUU c\n" "b- d\n" "bWWWWWWWWWWWW e\n" "bLL f\n"
    "Ug\n" "-h\n" "b0 i\n"
    "#10\n"
    "1a\n"
    "b0001 c\n" "b0001 d\n" "b000000000H0L e\n" "bHL f\n" "xg\n"
    "#20\n"
    "0a\n"
    "#30\n"
    "1a\n" "1b\n"
    "b0X01 c\n" "b0010 d\n" "b000000001000 e\n" "Hg\n" "b11 i\n"
    "#40\n"
    "0a\n" "0b\n"
    "#50\n"
    "1a\n"
    "b00 f\n"
    "#60\n"
    "0a\n";

static void test_letters_and_xz(void)
{
    g_autofree char *path = tmp_file(".vcd", letters_vcd);
    PtmConfig cfg;
    PtmGeometry geo;
    PtmProbeShape ps;
    uint64_t got[256], exp[31] = { 0 };
    PtmReplayTrace *t;
    char *err;
    PtmGen *g;

    ptm_config_default(&cfg);
    card_geometry(&cfg, &geo);
    probe_shape(&cfg, 0, PTM_DOMAIN_PCIE, &ps);
    t = ptm_replay_load(path, "", &geo, &err);
    g_assert_null(err);
    g_assert_cmpuint(ptm_replay_cycles(t, 0, PTM_DOMAIN_PCIE), ==, 3);
    g_assert_cmpuint(ptm_replay_cycles(t, 0, PTM_DOMAIN_DMA), ==, 0);
    /* cycle 1's DST_RDY; cycle 2's x is in RC, whose SRC_RDY is low */
    g_assert_cmpuint(ptm_replay_xz_cycles(t), ==, 1);
    ptm_replay_unref(t);

    /*
     * src[0:1] is ascending: its left digit is bit 0 (RQ). Cycle 1: RQ
     * stalls (DST_RDY x read as 0). Cycle 2: RQ word, SOF r0, EOF r1 at
     * 1: r0 8 items, r1 2 items; BRAKE 0b11 counts the cycle in bits 0, 1.
     * No tags or FIFO signal: both at capacity, band 3.
     */
    g = replay_ok(&geo, path, "", "idle");
    count_span(g, &ps, 0, 3, 4096, got);
    exp[0] = 3;
    expect_bus(exp, 2, 0, 1, 1, 1, 0, 0, 10, 1, 1);
    brakes_of(exp, 2)[0] = 1;
    brakes_of(exp, 2)[1] = 1;
    brakes_of(exp, 2)[PTM_BRAKES + 3] = 3;
    brakes_of(exp, 2)[PTM_BRAKES + 4 + 3] = 3;
    assert_counts(got, exp, 31);
    /* the DMA probe has no clock in the file: idle */
    {
        PtmProbeShape ds;
        uint64_t d[256];

        probe_shape(&cfg, 0, PTM_DOMAIN_DMA, &ds);
        count_span(g, &ds, 0, 50, 4096, d);
        g_assert_cmpuint(d[0], ==, 50);
        for (unsigned c = 1; c < ds.channels; c++) {
            g_assert_cmpuint(d[c], ==, 0);
        }
    }
    ptm_gen_free(g);
    g_unlink(path);
}

/* Long steady stretches cost one run, however long. */
static void test_runs_compact(void)
{
    GString *vcd = g_string_new("$timescale 1ns $end\n$scope module m $end\n"
                                "$var wire 1 ! pcie_clk $end\n"
                                "$var wire 2 \" pcie_mfb_src_rdy $end\n"
                                "$var wire 2 # pcie_mfb_dst_rdy $end\n"
                                "$var wire 4 $ pcie_mfb_sof $end\n"
                                "$var wire 4 % pcie_mfb_eof $end\n"
                                "$var wire 12 & pcie_mfb_eof_pos $end\n"
                                "$upscope $end\n$enddefinitions $end\n"
                                "#0\n0!\nb01 \"\nb01 #\nb0001 $\nb0001 %\n"
                                "b000000000111 &\n");
    g_autofree char *path = NULL;
    g_autofree char *tpath = NULL;
    PtmConfig cfg;
    PtmGeometry geo;
    PtmReplayTrace *t;
    char *err;
    const unsigned edges = 100000;

    /* a one-word frame (SOF and EOF in region 0) every cycle */
    for (unsigned k = 0; k < edges; k++) {
        g_string_append_printf(vcd, "#%u\n1!\n#%u\n0!\n", 10 * k + 5,
                               10 * k + 10);
    }
    path = tmp_file(".vcd", vcd->str);
    g_string_free(vcd, TRUE);
    ptm_config_default(&cfg);
    card_geometry(&cfg, &geo);
    t = ptm_replay_load(path, "", &geo, &err);
    g_assert_null(err);
    g_assert_cmpuint(ptm_replay_cycles(t, 0, PTM_DOMAIN_PCIE), ==, edges);
    g_assert_cmpuint(ptm_replay_runs(t, 0, PTM_DOMAIN_PCIE), ==, 1);
    g_assert_cmpuint(ptm_replay_samples(t, 0, PTM_DOMAIN_PCIE), ==, 1);
    ptm_replay_unref(t);
    g_unlink(path);

    tpath = tmp_file(".txt", "pcie0 cycles=1000000000 rq.src=1 rq.dst=1\n"
                             "pcie0 cycles=5\n"
                             "pcie0 cycles=1000000000 rq.src=1 rq.dst=1\n");
    t = ptm_replay_load(tpath, "", &geo, &err);
    g_assert_null(err);
    g_assert_cmpuint(ptm_replay_cycles(t, 0, PTM_DOMAIN_PCIE), ==,
                     2000000005ull);
    g_assert_cmpuint(ptm_replay_runs(t, 0, PTM_DOMAIN_PCIE), ==, 3);
    g_assert_cmpuint(ptm_replay_samples(t, 0, PTM_DOMAIN_PCIE), ==, 2);
    ptm_replay_unref(t);
    g_unlink(tpath);
}

/* ---------------------------------------------------------- bad files */

typedef struct Bad {
    const char *suffix;
    const char *text;
    const char *msg;            /* part of the message after "file:" */
} Bad;

#define VCD_HEAD "$timescale 1ns $end\n$scope module m $end\n" \
    "$var wire 1 ! pcie_clk $end\n"
#define VCD_DEFS "$upscope $end\n$enddefinitions $end\n"

static const Bad bad_files[] = {
    { ".vcd", VCD_HEAD VCD_DEFS "#0\n0!\n#5\nbq !\n", ":9: bad value 'q'" },
    { ".vcd", VCD_HEAD VCD_DEFS "#0\nb101 !\n", ":7: value '101' does not fit "
      "1 bits" },
    { ".vcd", VCD_HEAD VCD_DEFS "#10\n1!\n#5\n0!\n", ":8: time goes back" },
    { ".vcd", VCD_HEAD "$var wire 8 \" pcie_mfb_sof $end\n" VCD_DEFS,
      ":4: 'pcie_mfb_sof' has 8 bits, but pcie_mfb_sof(0) has 4 on this "
      "card (2 buses x 2 regions)" },
    { ".vcd", VCD_HEAD "$var wire 4 \" pcie_mfb_sof(0)[7:4] $end\n" VCD_DEFS,
      ":4: 'pcie_mfb_sof(0)[7:4]' has bit 4, but pcie_mfb_sof(0) has 4 "
      "bits" },
    { ".vcd", "$scope module m $end\n$var wire 2 \" pcie_mfb_src_rdy $end\n"
      VCD_DEFS, ":2: pcie_mfb_src_rdy(0) has no clock to sample it: the "
      "file lacks PCIE_CLK" },
    { ".vcd", "$scope module m $end\n$var wire 4 \" dma_mvb_vld(0) $end\n"
      "$var wire 1 ! pcie_clk $end\n" VCD_DEFS, "lacks DMA_CLK" },
    { ".vcd", "$scope module m $end\n$var wire 2 \" foo $end\n" VCD_DEFS,
      "no port of PCIE_TELEMETRY_MI" },
    { ".vcd", VCD_HEAD "$var wire 2 \" pcie_mfb_src_rdy(0)(x) $end\n"
      VCD_DEFS, ":4: cannot read the index" },
    { ".vcd", VCD_HEAD "$var wire 3 \" pcie_mfb_src_rdy[0][2:0] $end\n"
      VCD_DEFS, ":4: 'pcie_mfb_src_rdy[0][2:0]' has 3 bits, but "
      "pcie_mfb_src_rdy(0) has 2 on this card (one bit per bus, 2 buses)" },
    { ".vcd", VCD_HEAD "$var wire 1 \" pcie_mfb_sof(0)[1] $end\n"
      "$var wire 2 # pcie_mfb_sof(0)[2:1] $end\n" VCD_DEFS,
      ":5: bit 1 of pcie_mfb_sof(0) is given twice (also on line 4)" },
    { ".vcd", VCD_HEAD, "no $enddefinitions" },
    { ".vcd", VCD_HEAD "$comment PCIE_MFB_SOF is not handled $end\n"
      VCD_DEFS, ":4: the simulator left out pcie_mfb_sof (GHDL writes no "
      "arrays of vectors to VCD)" },
    { ".vcd", VCD_HEAD "$comment pcie_mfb_sof is not handled $end\n"
      "$var wire 4 \" pcie_mfb_sof $end\n" VCD_DEFS, "" },
    { ".vcd", VCD_HEAD VCD_DEFS "#0\n1!\n0#\n", "" },   /* not ours: fine */
    { ".txt", "pcie0 rq.src=1\npcie0 rq.sorf=1\n", ":2: unknown field "
      "'rq.sorf'" },
    { ".txt", "pcie0 tags=3000\n", ":1: tags=3000 is above 2047" },
    { ".txt", "\n\npcie0 rq.pos0=8\n", ":3: rq.pos0=8 is above 7" },
    { ".txt", "dma0 up1.src=1\n", ":1: bus up1: the card has 1 DMA port" },
    { ".txt", "dma0 brake=1\n", ":1: unknown field 'brake' on a dma line" },
    { ".txt", "pci0 rq.src=1\n", ":1: a line starts with pcie<e> or dma<e>" },
    { ".txt", "pcie0 rq.src\n", ":1: 'rq.src' is not key=value" },
    { ".txt", "pcie0 rq.sof=4\n", ":1: rq.sof=4 is above 3" },
    { ".txt", "pcie0 cycles=0\n", ":1: cycles=0" },
    { ".txt", "pcie0 up.src=1\n", ":1: no bus 'up' on a pcie line" },
};

static void test_bad_files(void)
{
    PtmConfig cfg;
    PtmGeometry geo;
    char *err;

    ptm_config_default(&cfg);
    card_geometry(&cfg, &geo);
    for (unsigned i = 0; i < G_N_ELEMENTS(bad_files); i++) {
        const Bad *b = &bad_files[i];
        g_autofree char *path = tmp_file(b->suffix, b->text);
        PtmGen *g = replay_gen(&geo, path, "", "idle", &err);

        if (!*b->msg) {
            g_assert_nonnull(g);
            ptm_gen_free(g);
        } else {
            g_assert_null(g);
            g_test_message("%s", err);
            if (!g_str_has_prefix(err, path) || !strstr(err, b->msg)) {
                g_error("case %u: '%s' lacks '%s'", i, err, b->msg);
            }
            g_free(err);
        }
        g_unlink(path);
    }

    /* parameters */
    g_assert_null(replay_gen(&geo, "", "", "idle", &err));
    g_assert_nonnull(strstr(err, "file is empty"));
    g_free(err);
    g_assert_null(replay_gen(&geo, "/nonexistent/trace.vcd", "", "idle",
                             &err));
    g_assert_nonnull(strstr(err, "/nonexistent/trace.vcd: "));
    g_free(err);
    {
        g_autofree char *path = tmp_file(".txt", hand_text);

        g_assert_null(replay_gen(&geo, path, "", "stop", &err));
        g_assert_cmpstr(err, ==, "end is 'stop', allowed: idle, hold, loop");
        g_free(err);
        g_unlink(path);
    }
}

/* ---------------------------------------------------------- live change */

/*
 * A new file from PCIe cycle 1000 on starts at its own cycle 0 there, and
 * on the DMA side at the same moment: DMA cycle 500.
 */
static void test_live_restart(void)
{
    g_autofree char *a = tmp_file(".txt", "pcie0 cycles=10\ndma0 cycles=10\n");
    g_autofree char *b = tmp_file(".txt", "pcie0 rq.src=1\ndma0 up.src=1\n");
    PtmConfig cfg;
    PtmGeometry geo;
    PtmProbeShape ps, ds;
    PtmReplayParams p;
    PtmChunk *ch = ptm_chunk_new();
    PtmGen *g;
    uint64_t n;

    ptm_config_default(&cfg);
    card_geometry(&cfg, &geo);
    probe_shape(&cfg, 0, PTM_DOMAIN_PCIE, &ps);
    probe_shape(&cfg, 0, PTM_DOMAIN_DMA, &ds);
    g = replay_ok(&geo, a, "", "idle");
    p = *(const PtmReplayParams *)ptm_gen_params(g);
    g_strlcpy(p.file, b, sizeof(p.file));
    g_assert_null(ptm_gen_set_params(g, &p, 1000, 0));

    n = ptm_gen_source_ops.fill(g, &ps.info, 0, 5000, ch);
    g_assert_cmpuint(n, ==, 1000);
    ch->seg = ch->scratch;
    n = ptm_gen_source_ops.fill(g, &ps.info, 1000, 5000, ch);
    g_assert_cmpuint(ch->seg[0].bus[0].src_rdy, ==, 1);
    g_assert_cmpuint(ch->seg[0].cycles, ==, 1);
    ch->seg = ch->scratch;
    n = ptm_gen_source_ops.fill(g, &ds.info, 0, 5000, ch);
    g_assert_cmpuint(n, ==, 500);
    ch->seg = ch->scratch;
    n = ptm_gen_source_ops.fill(g, &ds.info, 500, 5000, ch);
    g_assert_cmpuint(ch->seg[0].bus[0].src_rdy, ==, 1);
    g_assert_cmpuint(ch->seg[0].cycles, ==, 1);
    g_assert_cmpuint(n, ==, 5000);

    ptm_chunk_free(ch);
    ptm_gen_free(g);
    g_unlink(a);
    g_unlink(b);
}

/* ---------------------------------------------------------------- rate */

static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Host CPU seconds of a replay of `path` through the default card. */
static double replay_cpu(const char *path, uint64_t vns)
{
    PtmConfig cfg;
    PtmGeometry geo;
    PtmCore *core;
    PtmGen *g;
    double t0;

    ptm_config_default(&cfg);
    card_geometry(&cfg, &geo);
    core = ptm_core_new(&cfg);
    g = replay_ok(&geo, path, "", "loop");
    ptm_core_set_source(core, &ptm_gen_source_ops, g);
    ptm_core_power_on(core, 0);
    t0 = cpu_now();
    for (uint64_t ns = 1000000; ns <= vns; ns += 1000000) {
        ptm_core_advance(core, ns);
    }
    t0 = cpu_now() - t0;
    /* the core saw the traffic: RQ words, UP MVB items */
    g_assert_cmpuint(ptm_core_counter(core, false, 1), >, 0);
    g_assert_cmpuint(ptm_core_counter(core, false,
                                      ptm_core_layout(core)->pcie_channels +
                                      1 + PTM_CH_MVB), >, 0);
    ptm_core_free(core);
    ptm_gen_free(g);
    return t0;
}

/*
 * The rate of a replay through the core, looped for 20 ms of virtual time:
 * a text trace of 200000 PCIe and 100000 DMA cycles of back-to-back frames
 * of random length (about 0.4 runs per cycle, each a segment to count),
 * and the short hand-written trace, played whole with the chunk's repeat.
 */
static void test_rate(void)
{
    GString *text = g_string_new(NULL);
    g_autofree char *path = NULL;
    g_autofree char *short_path = NULL;
    PtmConfig cfg;
    PtmGeometry geo;
    PtmReplayTrace *t;
    Rng r = { 5 };
    char *err;
    double t0;
    const uint64_t vns = 20000000;
    const double cycles = vns * 1e-9 * (400e6 + 200e6);

    for (unsigned d = 0; d < 2; d++) {
        uint64_t cycles = 0, limit = d ? 100000 : 200000;

        while (cycles < limit) {
            unsigned words = 1 + rnd(&r, 16), gap = rnd(&r, 4);
            const char *bus = d ? "up" : "rq";
            const char *probe = d ? "dma0" : "pcie0";

            g_string_append_printf(text, "%s %s.src=1 %s.dst=1 %s.sof=1%s\n",
                                   probe, bus, bus, bus,
                                   d ? " up.vld=1 up.msrc=1 up.mdst=1" : "");
            if (words > 2) {
                g_string_append_printf(text, "%s cycles=%u %s.src=1 "
                                       "%s.dst=1\n", probe, words - 2, bus,
                                       bus);
            }
            if (words > 1) {
                g_string_append_printf(text, "%s %s.src=1 %s.dst=1 %s.eof=2 "
                                       "%s.pos1=%u\n", probe, bus, bus, bus,
                                       bus, rnd(&r, 8));
            }
            if (gap) {
                g_string_append_printf(text, "%s cycles=%u\n", probe, gap);
            }
            cycles += words + gap;
        }
    }
    path = tmp_file(".txt", text->str);
    g_string_free(text, TRUE);
    short_path = tmp_file(".txt", hand_text);

    ptm_config_default(&cfg);
    card_geometry(&cfg, &geo);
    t0 = cpu_now();
    t = ptm_replay_load(path, "", &geo, &err);
    g_assert_null(err);
    t0 = cpu_now() - t0;
    g_test_message("long trace: %" G_GUINT64_FORMAT " PCIe cycles in %"
                   G_GUINT64_FORMAT " runs of %" G_GUINT64_FORMAT
                   " samples, read in %.3f s",
                   ptm_replay_cycles(t, 0, PTM_DOMAIN_PCIE),
                   ptm_replay_runs(t, 0, PTM_DOMAIN_PCIE),
                   ptm_replay_samples(t, 0, PTM_DOMAIN_PCIE), t0);
    ptm_replay_unref(t);
    for (unsigned i = 0; i < 2; i++) {
        double cpu = replay_cpu(i ? short_path : path, vns);

        g_test_message("replay rate, %s: %.3g probe cycles per host second "
                       "(%.2fx real time)", i ? "short trace, repeated"
                       : "long random trace", cycles / cpu, vns * 1e-9 / cpu);
    }
    g_unlink(path);
    g_unlink(short_path);
}

/* ------------------------------------------------------------- GHDL */

/*
 * The VCD GHDL writes from tests/replay/tb_replay.vhd (see there): 400
 * PCIe and 200 DMA cycles of one endpoint on the default card.
 *
 * RQ: 5 frames of 25 items, each a word of 16 (SOF r0, r0 and r1 full)
 *     and a word of 9 (r0 full, EOF r1 at 0): 10 words, 5 SOF,
 *     125 items, r0 10, r1 10; frame 2's first word held: 1 stall.
 * RC: 3 words with SOF and EOF in both regions at 7: 6 SOF, 48 items,
 *     r0 3, r1 3; a word with only an EOF (no open frame): a word, no
 *     items: 4 words.
 * BRAKE: bit 0 10 cycles, bit 5 7, bit 3 3.
 * Tags (capacity 256: bands 0, 1..32, 33..128, 129..): 200 for 365
 *     cycles (band 3), 20 for 30 (band 1), 0 for 5 (band 0).
 * FIFO (capacity 1024: 0, 1..128, 129..512, 513..): 1024 for 335 cycles,
 *     100 for 40 (band 1), 300 for 25 (band 2).
 * UP: 4 words of 16 items (SOF r0, EOF r1 at 7), each with an MVB
 *     header: 4 SOF, 64 items, r0 4, r1 4; 2 more headers alone, the
 *     first held a cycle: MVB 6 items, 1 MVB stall.
 * DOWN: 3 words of 9 items (r0 full, EOF r1 at 0), the second held a
 *     cycle: 3 words, 1 stall, 3 SOF, 27 items, r0 3, r1 3.
 * Settings: MPS 1, MRRS 2, extended tags on, RCB 128 B; no 10-bit tag
 * signal, so the card's value stays. No x or z is read anywhere.
 */
static void test_ghdl(void)
{
    const char *path = g_getenv("PTM_REPLAY_GHDL_VCD");
    PtmConfig cfg;
    PtmGeometry geo;
    PtmProbeShape ps, ds;
    uint64_t got[256], exp_p[31] = { 0 }, exp_d[17] = { 0 };
    uint64_t *k = brakes_of(exp_p, 2);
    PtmSettings set = { .mps = 0, .mrrs = 5, .tag_10bit = true };
    PtmReplayTrace *t;
    char *err;
    PtmGen *g;

    ptm_config_default(&cfg);
    card_geometry(&cfg, &geo);
    probe_shape(&cfg, 0, PTM_DOMAIN_PCIE, &ps);
    probe_shape(&cfg, 0, PTM_DOMAIN_DMA, &ds);

    exp_p[0] = 400;
    expect_bus(exp_p, 2, 0, 10, 1, 5, 0, 0, 125, 10, 10);
    expect_bus(exp_p, 2, 1, 4, 0, 6, 0, 0, 48, 3, 3);
    k[0] = 10;
    k[3] = 3;
    k[5] = 7;
    k[PTM_BRAKES + 0] = 5;
    k[PTM_BRAKES + 1] = 30;
    k[PTM_BRAKES + 3] = 365;
    k[PTM_BRAKES + 4 + 1] = 40;
    k[PTM_BRAKES + 4 + 2] = 25;
    k[PTM_BRAKES + 4 + 3] = 335;
    exp_d[0] = 200;
    expect_bus(exp_d, 2, 0, 4, 0, 4, 6, 1, 64, 4, 4);
    expect_bus(exp_d, 2, 1, 3, 1, 3, 0, 0, 27, 3, 3);

    t = ptm_replay_load(path, "", &geo, &err);
    if (!t) {
        g_error("%s", err);
    }
    g_assert_cmpuint(ptm_replay_cycles(t, 0, PTM_DOMAIN_PCIE), ==, 400);
    g_assert_cmpuint(ptm_replay_cycles(t, 0, PTM_DOMAIN_DMA), ==, 200);
    g_assert_cmpuint(ptm_replay_xz_cycles(t), ==, 0);
    g_test_message("GHDL trace: %" G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT
                   " runs of PCIe and DMA cycles",
                   ptm_replay_runs(t, 0, PTM_DOMAIN_PCIE),
                   ptm_replay_runs(t, 0, PTM_DOMAIN_DMA));
    ptm_replay_unref(t);

    g = replay_ok(&geo, path, "", "idle");
    count_span(g, &ps, 0, 400, 4096, got);
    assert_counts(got, exp_p, 31);
    count_span(g, &ds, 0, 200, 4096, got);
    assert_counts(got, exp_d, 17);
    ptm_gen_source_ops.settings(g, 0, 200, &set);
    g_assert_cmpuint(set.mps, ==, 1);
    g_assert_cmpuint(set.mrrs, ==, 2);
    g_assert_true(set.ext_tag);
    g_assert_true(set.rcb_128);
    g_assert_true(set.tag_10bit);
    ptm_gen_free(g);

    /* looped: every turn the same */
    g = replay_ok(&geo, path, "", "loop");
    count_span(g, &ps, 0, 400 * 25, 4096, got);
    for (unsigned c = 0; c < 31; c++) {
        g_assert_cmpuint(got[c], ==, 25 * exp_p[c]);
    }
    ptm_gen_free(g);

    /* the instance dut has the PCIe buses only: no BRAKE, tags at capacity */
    g = replay_ok(&geo, path, "tb_replay.dut", "idle");
    count_span(g, &ps, 0, 400, 4096, got);
    assert_counts(got, exp_p, 1 + 2 * 8);
    count_span(g, &ds, 0, 200, 4096, got);
    g_assert_cmpuint(got[ptm_ch_bus(2, 0, PTM_CH_WORDS)], ==, 0);
    ptm_gen_free(g);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/replay/hand-vcd", test_hand_vcd);
    g_test_add_func("/replay/hand-text", test_hand_text);
    g_test_add_func("/replay/scope", test_scope);
    g_test_add_func("/replay/end-modes", test_end_modes);
    g_test_add_func("/replay/random-vcd", test_random_vcd);
    g_test_add_func("/replay/random-text", test_random_text);
    g_test_add_func("/replay/letters-and-xz", test_letters_and_xz);
    g_test_add_func("/replay/runs-compact", test_runs_compact);
    g_test_add_func("/replay/bad-files", test_bad_files);
    g_test_add_func("/replay/live-restart", test_live_restart);
    g_test_add_func("/replay/rate", test_rate);
    /* run by tests/replay/ghdl-vcd.sh with the VCD GHDL wrote */
    if (g_getenv("PTM_REPLAY_GHDL_VCD")) {
        g_test_add_func("/replay/ghdl", test_ghdl);
    }
    return g_test_run();
}
