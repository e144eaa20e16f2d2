/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest of ndk-pcie-telemetry: the replay generator on a hand-written VCD
 * of the default card, looped; the expected counts are the trace's
 * per-cycle adds, worked out by hand below, summed over each channel's
 * own span (ndk-sim.h). The test writes the trace into a temporary
 * directory of its own.
 */

#include "ndk-common.h"
#include "ndk-sim.h"

/* ------------------------------------------------------------------ */
/* The replay generator                                               */

/*
 * A hand-written VCD of the default card (R = 2, 3-bit EOF_POS: region r
 * of bus b is bit 2 b + r of SOF/EOF/MVB_VLD and bits 3 (2 b + r) + 2 ..
 * 3 (2 b + r) of EOF_POS). PCIE_CLK rises at 5, 15, ..., 75 (8 cycles),
 * DMA_CLK at 5, 25, 45, 65 (4 cycles); the values of PCIe cycle k are set
 * at 10 k, those of DMA cycle j at 20 j, before the edges that sample them.
 * Replayed with end=loop: PCIe cycle c of the card is cycle c % 8 of the
 * trace, DMA cycle c is c % 4.
 *
 * PCIe cycles (tags: PCIE_TAG_FREE; no PCIE_STFIFO_FREE: the capacity,
 * band 3; PCIE_MPS 3 throughout; no PCIE_LINK_UP: up):
 *   0  RQ word: SOF r0, no EOF: 8 + 8 items           tags 200 (band 3)
 *   1  RQ word: EOF r0 at 3: 4 items in r0             tags 200
 *   2  RQ held (SRC_RDY, no DST_RDY): a stall          tags 200
 *   3  RQ word: SOF r0, EOF r1 at 7: 8 + 8 items       tags 200
 *   4  RC word: SOF and EOF r0 at 2: 3 items           tags 200
 *   5  idle, BRAKE 3                                    tags 10 (band 1)
 *   6  idle                                             tags 10
 *   7  idle, BRAKE 0                                    tags 0 (band 0)
 * Per pass: RQ 3 words, 1 stall, 2 SOF, 36 items, r0 3, r1 2; RC 1 word,
 * 1 SOF, 3 items, r0 1; BRAKE 0 once, BRAKE 3 once; tag bands 0/1/3:
 * 1, 2, 5.
 * DMA cycles:
 *   0  UP word: SOF r0, EOF r1 at 7: 16 items; MVB item r0, handshake
 *   1  UP MVB alone: items r0 and r1, handshake
 *   2  UP MVB item r0 held (MVB stall); DOWN word held (stall)
 *   3  UP MVB item r0 taken; DOWN word taken: SOF and EOF r0 at 0, 1 item,
 *      with its MVB item (bit 2)
 * Per pass: UP 1 word, 1 SOF, 16 items, r0 1, r1 1, MVB 4, MVB stall 1;
 * DOWN 1 word, 1 stall, 1 SOF, 1 item, r0 1, MVB 1.
 */
static const char replay_vcd[] =
    "$date written by the QTest $end\n"
    "$version by hand $end\n"
    "$timescale 1ns $end\n"
    "$scope module tb $end\n"
    "$scope module dut $end\n"
    "$var wire 1 ! pcie_clk $end\n"
    "$var wire 4 \" pcie_mfb_sof [3:0] $end\n"
    "$var wire 4 # pcie_mfb_eof [3:0] $end\n"
    "$var wire 12 $ pcie_mfb_eof_pos [11:0] $end\n"
    "$var wire 2 % pcie_mfb_src_rdy [1:0] $end\n"
    "$var wire 2 & pcie_mfb_dst_rdy [1:0] $end\n"
    "$var wire 11 ' pcie_tag_free [10:0] $end\n"
    "$var wire 6 ( pcie_ptc_brake [5:0] $end\n"
    "$var wire 3 ) pcie_mps [2:0] $end\n"
    "$var wire 1 * dma_clk $end\n"
    "$var wire 4 + dma_mfb_sof [3:0] $end\n"
    "$var wire 4 , dma_mfb_eof [3:0] $end\n"
    "$var wire 12 - dma_mfb_eof_pos [11:0] $end\n"
    "$var wire 2 . dma_mfb_src_rdy [1:0] $end\n"
    "$var wire 2 / dma_mfb_dst_rdy [1:0] $end\n"
    "$var wire 4 0 dma_mvb_vld [3:0] $end\n"
    "$var wire 2 1 dma_mvb_src_rdy [1:0] $end\n"
    "$var wire 2 2 dma_mvb_dst_rdy [1:0] $end\n"
    "$upscope $end\n"
    "$upscope $end\n"
    "$enddefinitions $end\n"
    "#0\n"
    "$dumpvars\n"
    "0!\n" "b0001 \"\n" "b0000 #\n" "b000000000000 $\n" "b01 %\n" "b01 &\n"
    "b11001000 '\n" "b000000 (\n" "b011 )\n"
    "0*\n" "b0001 +\n" "b0010 ,\n" "b000000111000 -\n" "b01 .\n" "b01 /\n"
    "b0001 0\n" "b01 1\n" "b01 2\n"
    "$end\n"
    "#5\n" "1!\n" "1*\n"
    "#10\n" "0!\n"                                      /* PCIe 1 */
    "b0000 \"\n" "b0001 #\n" "b000000000011 $\n"
    "#15\n" "1!\n" "0*\n"
    "#20\n" "0!\n"                                      /* PCIe 2, DMA 1 */
    "b0001 \"\n" "b0010 #\n" "b000000111000 $\n" "b00 &\n"
    "b0000 +\n" "b0000 ,\n" "b000000000000 -\n" "b00 .\n" "b00 /\n"
    "b0011 0\n"
    "#25\n" "1!\n" "1*\n"
    "#30\n" "0!\n"                                      /* PCIe 3 */
    "b01 &\n"
    "#35\n" "1!\n" "0*\n"
    "#40\n" "0!\n"                                      /* PCIe 4, DMA 2 */
    "b0100 \"\n" "b0100 #\n" "b000010000000 $\n" "b10 %\n" "b10 &\n"
    "b0100 +\n" "b0100 ,\n" "b10 .\n" "b0001 0\n" "b00 2\n"
    "#45\n" "1!\n" "1*\n"
    "#50\n" "0!\n"                                      /* PCIe 5 */
    "b0000 \"\n" "b0000 #\n" "b000000000000 $\n" "b00 %\n" "b00 &\n"
    "b1010 '\n" "b001000 (\n"
    "#55\n" "1!\n" "0*\n"
    "#60\n" "0!\n"                                      /* PCIe 6, DMA 3 */
    "b000000 (\n"
    "b10 /\n" "b0101 0\n" "b11 1\n" "b11 2\n"
    "#65\n" "1!\n" "1*\n"
    "#70\n" "0!\n"                                      /* PCIe 7 */
    "b0 '\n" "b000001 (\n"
    "#75\n" "1!\n" "0*\n"
    "#80\n" "0!\n";

/*
 * What each cycle of the trace adds to the channels (the tables above;
 * every frame ends within the pass, so the adds do not depend on what
 * came before but for the RQ word of cycle 1, whose frame cycle 0 opens).
 */
static void replay_pcie_cycle(unsigned k, uint64_t *inc)
{
    memset(inc, 0, SIM_MAX_CH * sizeof(*inc));
    inc[0] = 1;
    inc[FIFO_BAND(3)] = 1;
    inc[TAG_BAND(k < 5 ? 3 : k < 7 ? 1 : 0)] = 1;
    switch (k) {
    case 0:
    case 3:
        inc[PCH(0, PTL_CH_WORDS)] = inc[PCH(0, PTL_CH_SOF)] = 1;
        inc[PCH(0, PTL_CH_ITEMS)] = 16;
        inc[PCH(0, PTL_CH_REGION0)] = inc[PCH(0, PTL_CH_REGION0 + 1)] = 1;
        break;
    case 1:
        inc[PCH(0, PTL_CH_WORDS)] = inc[PCH(0, PTL_CH_REGION0)] = 1;
        inc[PCH(0, PTL_CH_ITEMS)] = 4;
        break;
    case 2:
        inc[PCH(0, PTL_CH_STALL)] = 1;
        break;
    case 4:
        inc[PCH(1, PTL_CH_WORDS)] = inc[PCH(1, PTL_CH_SOF)] = 1;
        inc[PCH(1, PTL_CH_ITEMS)] = 3;
        inc[PCH(1, PTL_CH_REGION0)] = 1;
        break;
    case 5:
        inc[BRAKE_CH(3)] = 1;
        break;
    case 7:
        inc[BRAKE_CH(0)] = 1;
        break;
    }
}

static void replay_dma_cycle(unsigned k, uint64_t *inc)
{
    memset(inc, 0, SIM_MAX_CH * sizeof(*inc));
    inc[0] = 1;
    switch (k) {
    case 0:
        inc[1 + PTL_CH_WORDS] = inc[1 + PTL_CH_SOF] = inc[1 + PTL_CH_MVB] = 1;
        inc[1 + PTL_CH_ITEMS] = 16;
        inc[1 + PTL_CH_REGION0] = inc[1 + PTL_CH_REGION0 + 1] = 1;
        break;
    case 1:
        inc[1 + PTL_CH_MVB] = 2;
        break;
    case 2:
        inc[1 + PTL_CH_MVB_STALL] = 1;
        inc[9 + PTL_CH_STALL] = 1;
        break;
    case 3:
        inc[1 + PTL_CH_MVB] = 1;
        inc[9 + PTL_CH_WORDS] = inc[9 + PTL_CH_SOF] = inc[9 + PTL_CH_MVB] = 1;
        inc[9 + PTL_CH_ITEMS] = inc[9 + PTL_CH_REGION0] = 1;
        break;
    }
}

/*
 * Counters after w PCIe and wd DMA windows of a card reset at 0: each
 * channel sums the trace cycles (c % 8 of PCIe cycle c, c % 4 of DMA
 * cycle c) of its own span.
 */
static void replay_expect(uint64_t w, uint64_t wd, uint64_t *exp)
{
    const Layout lp = pcie_layout(2), ld = dma_layout(1, 2);
    uint64_t inc[SIM_MAX_CH], lo, hi;

    memset(exp, 0, DEF_ENTRIES * sizeof(*exp));
    for (unsigned c = 0; c < lp.n; c++) {
        ch_span(&lp, 0, DP, w, c, &lo, &hi);
        for (uint64_t t = lo; t < hi; t++) {
            replay_pcie_cycle(t % 8, inc);
            if (t == 1) {
                /* its frame's SOF, in cycle 0, was not seen */
                inc[PCH(0, PTL_CH_ITEMS)] = inc[PCH(0, PTL_CH_REGION0)] = 0;
            }
            exp[c] += inc[c];
        }
    }
    for (unsigned c = 0; c < ld.n; c++) {
        ch_span(&ld, 0, DP, wd, c, &lo, &hi);
        for (uint64_t t = lo; t < hi; t++) {
            replay_dma_cycle(t % 4, inc);
            exp[DMA_CYCLES + c] += inc[c];
        }
    }
}

static void test_replay_vcd(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-vcd-XXXXXX", NULL);
    g_autofree char *vcd = NULL, *args = NULL;
    uint64_t got[DEF_ENTRIES], exp[DEF_ENTRIES], origin;
    uint32_t st;
    uint8_t ecap;
    Ndk n;

    g_assert(dir);
    vcd = write_tmp(dir, "trace.vcd", replay_vcd);
    args = g_strdup_printf("-object telemetry-traffic-replay,id=t0,file=%s,"
                           "scope=tb.dut,end=loop "
                           "-device ndk-pcie-telemetry,addr=04.0,traffic=t0",
                           vcd);
    ndk_open(&n, "q35", args);
    g_assert_cmpint(n.t->t0, ==, 0);
    origin = first_cycle(n.t->t0, PCIE_HZ);
    ecap = qpci_find_capability(n.t->dev, PCI_CAP_ID_EXP, 0);
    st = status_from_config(qpci_config_readw(n.t->dev, ecap + PCI_EXP_DEVCTL),
                            qpci_config_readw(n.t->dev, ecap + PCI_EXP_DEVCTL2),
                            qpci_config_readw(n.t->dev, ecap + PCI_EXP_LNKCTL));
    /* PCIE_MPS of the trace instead of the host's MPS */
    st = (st & ~7u) | 3;

    /*
     * After the first drain: its tick samples cycle 4096, trace cycle 0:
     * 200 free tags now; cycle 7 of the cycles [1, 4096) had none: lowest
     * 0
     */
    step_to(&n, word_ns(origin, 0));
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STATUS(0)), ==, st);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 200);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STFIFO(0)), ==, 1024 | 1024 << 16);

    /* 15 us: PCIe window 0, no DMA window yet */
    step_to(&n, n.t->t0 + 15000);
    wr(&n, PTL_REG_READ_SEL, 1);
    replay_expect(1, 0, exp);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("replay, live, 15 us", got, exp, DEF_ENTRIES);

    /* PCIe windows 0..8, DMA windows 0..3, through a SNAPSHOT */
    step_to(&n, mid_window(&n, 9));
    replay_expect(9, 4, exp);
    /*
     * By hand: RQ words (slot 1) count the cycles [1, 36868): 4608 passes
     * of 3 words and cycles 36864..36867 (trace 0..3: 3 more), but cycle
     * 0; tag band 0 (slot 7: [0, 36897)) once a pass: 4612; DMA MVB items
     * (slot 4, from cycle 0: [0, 16399)) 4 a pass: 4099 passes and trace
     * cycles 0..2
     */
    g_assert_cmpuint(exp[PCH(0, PTL_CH_WORDS)], ==, 3 * 4608 + 3 - 1);
    g_assert_cmpuint(exp[TAG_BAND(0)], ==, 4612);
    g_assert_cmpuint(exp[DCH(0, PTL_CH_MVB)], ==, 4 * 4099 + 3);
    snapshot(&n, DEF_ENTRIES);
    wr(&n, PTL_REG_READ_SEL, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("replay, snapshot", got, exp, DEF_ENTRIES);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    /* now: cycle 36864, trace cycle 0; lowest 0 since the first drain */
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 200);
    ndk_close(&n);
    unlink(vcd);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_set_nonfatal_assertions();

    g_test_add_func("/ndk-pcie-telemetry/replay/vcd", test_replay_vcd);

    return g_test_run();
}
