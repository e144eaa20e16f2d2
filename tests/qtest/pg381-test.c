/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The card's PG381 performance traffic generator through QEMU
 * (docs/pg381.md): its identity and registers at BAR0 + 0x01800000, its
 * node in the device tree, a read and a write program written into the
 * program block and run with START, its counters against the timing rule
 * worked out here, the telemetry block's counts of the same transfers by
 * the PTC's rule (docs/dma.md), runs that add up and soft reset, programs
 * that reach no memory, a migration mid-run, and properties refused.
 *
 * The default card: PCIe clock 400 MHz (2.5 ns a cycle), RQ and RC of
 * 2 x 32 = 64 bytes a cycle, 256 tags; the tests negotiate MPS 256,
 * MRRS 512, RCB 64 and extended tags. The PTC's latency of 1000 ns is
 * L = 400 cycles; an MRd of 16 bytes takes q = 1 RQ cycle.
 */
#include "ndk-common.h"
#include <libfdt.h>

#include "pg381-core.h"

#define PG_WINDOW_AT    0x01800000u     /* the window in BAR0 */
#define PG_BAR          (32u << 20)
#define PG_ARGS         "-m 256M -device ndk-pcie-telemetry,addr=04.0,pg381=on"
#define PG_EXP          0x80            /* the card's PCIe capability */
#define LAT_CYCLES      400             /* ceil(1000 ns x 400 MHz) */
#define BUS_W           64u             /* bytes a cycle on every bus */
#define MPS             256u
#define MRRS            512u
#define RCB             64u

#define READ_AT         0x100000u
#define WRITE_AT        0x200000u
#define NO_MEMORY       0x4000000000ull /* 256 GiB: nothing there */

static uint32_t pg_rd(Ndk *n, uint32_t off)
{
    return qtest_readl(n->t->qts, n->t->bar.addr + PG_WINDOW_AT + off);
}

static void pg_wr(Ndk *n, uint32_t off, uint32_t v)
{
    qtest_writel(n->t->qts, n->t->bar.addr + PG_WINDOW_AT + off, v);
}

/* One READ or WRITE instruction of the program block's encoding */
typedef struct PgInstr {
    uint32_t cmd;               /* PG381_CMD_* and flags */
    uint32_t count, delay;
    uint32_t len, size;         /* axi_len, axi_size */
    uint64_t base, high, offset;
    uint32_t pattern;
} PgInstr;

static void pg_put(Ndk *n, unsigned k, const PgInstr *in)
{
    uint32_t w[PG381_INSTR_WORDS] = {
        [0] = in->cmd,
        [1] = in->count,
        [2] = in->delay,
        /* burst INCR (1) in bits 13:12 */
        [3] = in->len | in->size << 8 | 1u << 12,
        [5] = in->pattern,
        [6] = (uint32_t)in->base, [7] = in->base >> 32,
        [8] = (uint32_t)in->high, [9] = in->high >> 32,
        [10] = (uint32_t)in->offset, [11] = in->offset >> 32,
    };

    for (unsigned i = 0; i < PG381_INSTR_WORDS; i++) {
        pg_wr(n, PG381_INSTR(k) + 4 * i, w[i]);
    }
}

/* Requests of 2^size x (len + 1) bytes, each at the next address */
static PgInstr pg_instr(uint32_t cmd, uint32_t count, uint32_t len,
                        uint64_t base)
{
    return (PgInstr) {
        .cmd = cmd | PG381_C_LAST | PG381_C_ADDR_AUTO,
        .count = count, .len = len, .size = 6,
        .base = base, .high = base + 0xFFFF,
    };
}

static void pg_open(Ndk *n, const char *args)
{
    ndk_open_sized(n, "q35", PG_BAR, args);
    set_pcie_settings(n, PG_EXP, 1, 2, true, false, false);
}

/* START at the current instant; returns its time (cycle 0) */
static int64_t pg_start(Ndk *n)
{
    int64_t t0 = n->t->now;

    pg_wr(n, PG381_START, 1);
    return t0;
}

/* The first ns of cycle c (2.5 ns each) after a START at t0 */
static int64_t at_cycle(int64_t t0, uint64_t c)
{
    return t0 + (int64_t)(c * 5 + 1) / 2;
}

/* ---- the telemetry's counts by the PTC's rule (docs/dma.md) ------ */

typedef struct BusExp {
    uint64_t words, sof, mvb, items;
} BusExp;

static void bus_frame(BusExp *b, uint32_t bytes, bool mvb)
{
    if (bytes) {
        b->words += DIV_ROUND_UP(bytes, BUS_W);
        b->sof++;
        b->items += DIV_ROUND_UP(bytes, 4);
    }
    b->mvb += mvb;
}

/*
 * A read: a header up; an MRd of 16 bytes per MRRS-aligned block, each
 * answered by completions split at the RCB and then every MPS bytes,
 * 12 + their bytes on RC and their bytes down.
 */
static void rule_read(BusExp *e, uint64_t addr, uint32_t bytes)
{
    bus_frame(&e[QNDK_UP], 0, true);
    for (uint64_t a = addr, end = addr + bytes; a < end;) {
        uint64_t block = MIN(ROUND_DOWN(a, MRRS) + MRRS, end) - a;

        bus_frame(&e[QNDK_RQ], 16, false);
        for (uint64_t c = a; c < a + block;) {
            uint64_t piece = c == a && c % RCB ?
                             MIN(ROUND_DOWN(c, RCB) + RCB, a + block) - c :
                             MIN(MPS, a + block - c);

            bus_frame(&e[QNDK_RC], 12 + piece, false);
            bus_frame(&e[QNDK_DOWN], piece, true);
            c += piece;
        }
        a += block;
    }
}

/* A write: its bytes up, an MWr of 16 + p per MPS-aligned block on RQ */
static void rule_write(BusExp *e, uint64_t addr, uint32_t bytes)
{
    bus_frame(&e[QNDK_UP], bytes, true);
    for (uint64_t a = addr, end = addr + bytes; a < end;) {
        uint64_t block = MIN(ROUND_DOWN(a, MPS) + MPS, end) - a;

        bus_frame(&e[QNDK_RQ], 16 + block, false);
        a += block;
    }
}

static void check_rule(Ndk *n, const BusExp *e)
{
    qndk_snapshot(n->t);
    for (unsigned b = 0; b < 4; b++) {
        g_test_message("%s: words %" PRIu64 " sof %" PRIu64 " items %"
                       PRIu64, bus_name[b],
                       qndk_bus_counter(n->t, 0, b, 0, PTL_CH_WORDS),
                       qndk_bus_counter(n->t, 0, b, 0, PTL_CH_SOF),
                       qndk_bus_counter(n->t, 0, b, 0, PTL_CH_ITEMS));
        g_assert_cmpuint(qndk_bus_counter(n->t, 0, b, 0, PTL_CH_WORDS), ==,
                         e[b].words);
        g_assert_cmpuint(qndk_bus_counter(n->t, 0, b, 0, PTL_CH_SOF), ==,
                         e[b].sof);
        g_assert_cmpuint(qndk_bus_counter(n->t, 0, b, 0, PTL_CH_ITEMS), ==,
                         e[b].items);
        if (b == QNDK_UP || b == QNDK_DOWN) {
            g_assert_cmpuint(qndk_bus_counter(n->t, 0, b, 0, PTL_CH_MVB), ==,
                             e[b].mvb);
        }
    }
}

/* ---- identity, registers, device tree ---------------------------- */

static uint32_t fdt_cell(const void *fdt, int node, const char *name,
                         unsigned i)
{
    int len;
    const fdt32_t *p = fdt_getprop(fdt, node, name, &len);

    g_assert_nonnull(p);
    g_assert_cmpint(len, >=, 4 * (i + 1));
    return fdt32_to_cpu(p[i]);
}

static void test_registers(void)
{
    Ndk n;
    g_autofree void *fdt = NULL;
    size_t size;
    int node;

    pg_open(&n, PG_ARGS);
    g_assert_cmphex(pg_rd(&n, PG381_CARD_ID), ==, 0x50473831);
    g_assert_cmphex(pg_rd(&n, PG381_CARD_PARAMS), ==, 0);
    g_assert_cmpuint(pg_rd(&n, PG381_CARD_CLOCK), ==, PCIE_HZ);
    g_assert_cmphex(pg_rd(&n, PG381_CARD_ERROR), ==, 0);
    g_assert_cmpuint(pg_rd(&n, PG381_CARD_PROG_LEN), ==, 0);
    g_assert_cmphex(pg_rd(&n, PG381_SOFT_RST), ==, 1);
    g_assert_cmphex(pg_rd(&n, PG381_START), ==, 0);
    g_assert_cmphex(pg_rd(&n, PG381_OUTSTND_RESP_LIMIT), ==, 0xFFF);
    /* 12 bits of the limit are kept */
    pg_wr(&n, PG381_OUTSTND_RESP_LIMIT, 0x12345);
    g_assert_cmphex(pg_rd(&n, PG381_OUTSTND_RESP_LIMIT), ==, 0x345);
    /* the program block holds what is written; LAST sets PROG_LEN */
    pg_wr(&n, PG381_INSTR(2) + PG381_I_PATTERN, 0xCAFEF00D);
    g_assert_cmphex(pg_rd(&n, PG381_INSTR(2) + PG381_I_PATTERN), ==,
                    0xCAFEF00D);
    pg_wr(&n, PG381_INSTR(2) + PG381_I_CMD, PG381_C_LAST);
    g_assert_cmpuint(pg_rd(&n, PG381_CARD_PROG_LEN), ==, 3);
    /* 32-bit registers: a byte reads 0, an aligned quad two of them */
    g_assert_cmphex(qtest_readb(n.t->qts, n.t->bar.addr + PG_WINDOW_AT +
                                PG381_CARD_ID), ==, 0);
    pg_wr(&n, PG381_INSTR(2) + PG381_I_BASE, 0x11223344);
    pg_wr(&n, PG381_INSTR(2) + PG381_I_BASE + 4, 0x55667788);
    g_assert_cmphex(qtest_readq(n.t->qts, n.t->bar.addr + PG_WINDOW_AT +
                                PG381_INSTR(2) + PG381_I_BASE), ==,
                    0x5566778811223344ull);
    qtest_writeq(n.t->qts, n.t->bar.addr + PG_WINDOW_AT + PG381_INSTR(3) +
                 PG381_I_HIGH, 0x0123456789ABCDEFull);
    g_assert_cmphex(pg_rd(&n, PG381_INSTR(3) + PG381_I_HIGH), ==, 0x89ABCDEF);
    g_assert_cmphex(pg_rd(&n, PG381_INSTR(3) + PG381_I_HIGH + 4), ==,
                    0x01234567);
    /* a quad at a word that is not 8-aligned does nothing */
    qtest_writeq(n.t->qts, n.t->bar.addr + PG_WINDOW_AT + PG381_INSTR(3) +
                 PG381_I_PATTERN, ~0ull);
    g_assert_cmphex(pg_rd(&n, PG381_INSTR(3) + PG381_I_PATTERN), ==, 0);
    /* the telemetry block stays at offset 0 */
    g_assert_cmphex(rd(&n, PTL_REG_MAGIC), ==, PTL_MAGIC);

    fdt = qndk_devtree(n.t, &size);
    g_assert_nonnull(fdt);
    node = fdt_path_offset(fdt, "/firmware/mi_bus0/perf_axi_tg0@1800000");
    g_assert_cmpint(node, >=, 0);
    g_assert_cmpstr(fdt_getprop(fdt, node, "compatible", NULL), ==,
                    "xlnx,perf-axi-tg-1.0");
    g_assert_cmphex(fdt_cell(fdt, node, "reg", 0), ==, PG_WINDOW_AT);
    g_assert_cmphex(fdt_cell(fdt, node, "reg", 1), ==, 0x10000);
    g_assert_cmpuint(fdt_cell(fdt, node, "clock-frequency", 0), ==,
                     PCIE_HZ);
    ndk_close(&n);

    /* the IP generation parameters and the clock as the card has them */
    ndk_open_sized(&n, "q35", PG_BAR, "-device ndk-pcie-telemetry,pg381=on,"
                   "pg381-out-of-order=on,pg381-data-integrity=on,"
                   "pcie-clk-freq=250000000");
    g_assert_cmphex(pg_rd(&n, PG381_CARD_PARAMS), ==, 3);
    g_assert_cmpuint(pg_rd(&n, PG381_CARD_CLOCK), ==, 250000000);
    ndk_close(&n);
}

/* ---- programs ------------------------------------------------------ */

/*
 * 16 reads of 256 bytes (4 beats of 64): one MRd each (g = 1 cycle
 * apart), one completion of 256 bytes, a frame of 268 bytes: C = k1 = 5
 * RC cycles. L' = 405, W = min(509, 0xFFF, 256 tags) = 256, not
 * saturated (405 <= 256 x 5). So request i's handshake is at i, its
 * first beat and RLAST at 405 + 5 i: latency 405 + 4 i.
 */
#define RD_N            16u
#define RD_LATENCY(i)   (405u + 4u * (i))
#define RD_LAST         (405u + 5u * (RD_N - 1))      /* 480 */

static void check_read_counters(Ndk *n, unsigned runs)
{
    uint64_t sum = 0;

    for (unsigned i = 0; i < RD_N; i++) {
        sum += RD_LATENCY(i);
    }
    g_assert_cmpuint(sum, ==, 6960);
    g_assert_cmpuint(pg_rd(n, PG381_ARREQ), ==, runs * RD_N);
    g_assert_cmpuint(pg_rd(n, PG381_RLAST), ==, runs * RD_N);
    g_assert_cmpuint(pg_rd(n, PG381_RBEAT), ==, runs * RD_N * 4);
    g_assert_cmpuint(pg_rd(n, PG381_RBEST), ==, RD_LATENCY(0));
    g_assert_cmpuint(pg_rd(n, PG381_RWORST), ==, RD_LATENCY(RD_N - 1));
    g_assert_cmpuint(pg_rd(n, PG381_RAVG), ==, runs * sum);
    g_assert_cmpuint(pg_rd(n, PG381_RBW_EFF_CLK), ==, runs * RD_LAST);
    g_assert_cmpuint(pg_rd(n, PG381_AWREQ), ==, 0);
    g_assert_cmpuint(pg_rd(n, PG381_BRESP), ==, 0);
    g_assert_cmpuint(pg_rd(n, PG381_WBW_EFF_CLK), ==, 0);
    g_assert_cmphex(pg_rd(n, PG381_FLOW_EMPTY), ==,
                    PG381_FE_DONE | PG381_FE_WR_DONE | PG381_FE_RD_DONE |
                    PG381_FE_EMPTY);
    g_assert_cmphex(pg_rd(n, PG381_CARD_ERROR), ==, 0);
}

static void test_read(void)
{
    Ndk n;
    PgInstr in = pg_instr(PG381_CMD_READ, RD_N, 3, READ_AT);
    BusExp e[4] = { 0 };
    int64_t t0;

    pg_open(&n, PG_ARGS);
    pg_put(&n, 0, &in);
    g_assert_cmpuint(pg_rd(&n, PG381_CARD_PROG_LEN), ==, 1);
    t0 = pg_start(&n);
    g_assert_cmphex(pg_rd(&n, PG381_START), ==, 1);
    /* done 200 cycles after the last RLAST, not a cycle earlier */
    step_to(&n, at_cycle(t0, RD_LAST + 200) - 1);
    g_assert_cmphex(pg_rd(&n, PG381_FLOW_EMPTY) & PG381_FE_DONE, ==, 0);
    g_assert_cmphex(pg_rd(&n, PG381_START), ==, 1);
    step_to(&n, at_cycle(t0, RD_LAST + 200));
    g_assert_cmphex(pg_rd(&n, PG381_FLOW_EMPTY) & PG381_FE_DONE, ==,
                    PG381_FE_DONE);
    g_assert_cmphex(pg_rd(&n, PG381_START), ==, 0);
    step(&n, 2000000);
    check_read_counters(&n, 1);
    /* CAPTURE_ALL latches the same values into the copies */
    g_assert_cmphex(pg_rd(&n, PG381_CAPTURE_ALL), ==, 0);
    g_assert_cmpuint(pg_rd(&n, PG381_AL_BASE + PG381_ARREQ - 0x2000), ==,
                     RD_N);
    g_assert_cmpuint(pg_rd(&n, PG381_AL_BASE + PG381_RAVG - 0x2000), ==,
                     6960);
    for (unsigned i = 0; i < RD_N; i++) {
        rule_read(e, READ_AT + 256 * i, 256);
    }
    /* 16 MRds of one word; 16 completions of 268 bytes, 5 words each */
    g_assert_cmpuint(e[QNDK_RQ].sof, ==, 16);
    g_assert_cmpuint(e[QNDK_RC].words, ==, 80);
    check_rule(&n, e);

    /* a second START adds its run to the first's */
    pg_start(&n);
    step(&n, 2000000);
    check_read_counters(&n, 2);
    for (unsigned i = 0; i < RD_N; i++) {
        rule_read(e, READ_AT + 256 * i, 256);
    }
    check_rule(&n, e);
    ndk_close(&n);
}

/*
 * Reads of 1024 bytes at 0x120 past each 1 KiB: 224, 512 and 288 bytes
 * up to the MRRS boundaries (3 MRds), completions 32 + 192 (the RCB
 * first), 256 + 256, 256 + 32: 6 RC frames a request.
 */
static void test_read_split(void)
{
    Ndk n;
    PgInstr in = pg_instr(PG381_CMD_READ, 4, 15, READ_AT);
    BusExp e[4] = { 0 };

    pg_open(&n, PG_ARGS);
    in.offset = 0x120;
    pg_put(&n, 0, &in);
    pg_start(&n);
    step(&n, 2000000);
    g_assert_cmpuint(pg_rd(&n, PG381_ARREQ), ==, 4);
    g_assert_cmpuint(pg_rd(&n, PG381_RBEAT), ==, 4 * 16);
    g_assert_cmphex(pg_rd(&n, PG381_FLOW_EMPTY) & PG381_FE_DONE, ==,
                    PG381_FE_DONE);
    for (unsigned i = 0; i < 4; i++) {
        rule_read(e, READ_AT + 0x120 + 1024 * i, 1024);
    }
    g_assert_cmpuint(e[QNDK_RQ].sof, ==, 4 * 3);
    g_assert_cmpuint(e[QNDK_RC].sof, ==, 4 * 6);
    check_rule(&n, e);
    ndk_close(&n);
}

/*
 * 8 writes of 512 bytes (8 beats of 64): two MWrs of 272 bytes, 5 RQ
 * cycles each, wc = 10; B at handshake + 10, the next handshake then:
 * s_i = 10 i, latency 10, the last B at 80; done at 280.
 */
#define WR_N            8u
#define WR_PATTERN      0xA5C3F00Du

static void test_write(void)
{
    Ndk n;
    PgInstr in = pg_instr(PG381_CMD_WRITE, WR_N, 7, WRITE_AT);
    BusExp e[4] = { 0 };
    int64_t t0;

    pg_open(&n, PG_ARGS);
    qtest_memset(n.t->qts, WRITE_AT, 0x11, 8192);
    in.pattern = WR_PATTERN;
    pg_put(&n, 0, &in);
    t0 = pg_start(&n);
    step_to(&n, at_cycle(t0, 80 + 200) - 1);
    g_assert_cmphex(pg_rd(&n, PG381_FLOW_EMPTY) & PG381_FE_DONE, ==, 0);
    step_to(&n, at_cycle(t0, 80 + 200));
    g_assert_cmphex(pg_rd(&n, PG381_FLOW_EMPTY), ==,
                    PG381_FE_DONE | PG381_FE_WR_DONE | PG381_FE_RD_DONE |
                    PG381_FE_EMPTY);
    step(&n, 2000000);
    g_assert_cmpuint(pg_rd(&n, PG381_AWREQ), ==, WR_N);
    g_assert_cmpuint(pg_rd(&n, PG381_WLAST), ==, WR_N);
    g_assert_cmpuint(pg_rd(&n, PG381_BRESP), ==, WR_N);
    g_assert_cmpuint(pg_rd(&n, PG381_WRBEAT), ==, WR_N * 8);
    g_assert_cmpuint(pg_rd(&n, PG381_WBEST), ==, 10);
    g_assert_cmpuint(pg_rd(&n, PG381_WWORST), ==, 10);
    g_assert_cmpuint(pg_rd(&n, PG381_WAVG), ==, WR_N * 10);
    g_assert_cmpuint(pg_rd(&n, PG381_WBW_EFF_CLK), ==, 80);
    g_assert_cmpuint(pg_rd(&n, PG381_ARREQ), ==, 0);
    g_assert_cmpuint(pg_rd(&n, PG381_RBW_EFF_CLK), ==, 0);
    /* the pattern in guest memory, and nothing past the 4 KiB written */
    for (uint32_t off = 0; off < WR_N * 512; off += 4) {
        g_assert_cmphex(qtest_readl(n.t->qts, WRITE_AT + off), ==,
                        WR_PATTERN);
    }
    g_assert_cmphex(qtest_readl(n.t->qts, WRITE_AT + WR_N * 512), ==,
                    0x11111111);
    for (unsigned i = 0; i < WR_N; i++) {
        rule_write(e, WRITE_AT + 512 * i, 512);
    }
    /* 16 MWrs of 272 bytes, 5 words each */
    g_assert_cmpuint(e[QNDK_RQ].sof, ==, 16);
    g_assert_cmpuint(e[QNDK_RQ].words, ==, 80);
    check_rule(&n, e);
    ndk_close(&n);
}

/*
 * Beside the DMA engine (dma-queues): the same write program, the same
 * counters and telemetry counts, the engine's nodes and the generator's
 * in one tree.
 */
static void test_with_dma_engine(void)
{
    Ndk n;
    PgInstr in = pg_instr(PG381_CMD_WRITE, WR_N, 7, WRITE_AT);
    BusExp e[4] = { 0 };
    g_autofree void *fdt = NULL;
    size_t size;

    pg_open(&n, PG_ARGS ",dma-queues=1");
    fdt = qndk_devtree(n.t, &size);
    g_assert_cmpint(fdt_path_offset(fdt, "/firmware/mi_bus0/dbg_gls0"), >=,
                    0);
    g_assert_cmpint(fdt_path_offset(fdt, "/firmware/mi_bus0/"
                                    "perf_axi_tg0@1800000"), >=, 0);
    pg_put(&n, 0, &in);
    pg_start(&n);
    step(&n, 2000000);
    g_assert_cmpuint(pg_rd(&n, PG381_BRESP), ==, WR_N);
    g_assert_cmpuint(pg_rd(&n, PG381_WAVG), ==, WR_N * 10);
    g_assert_cmpuint(pg_rd(&n, PG381_WBW_EFF_CLK), ==, 80);
    for (unsigned i = 0; i < WR_N; i++) {
        rule_write(e, WRITE_AT + 512 * i, 512);
    }
    check_rule(&n, e);
    ndk_close(&n);
}

/* Soft reset clears the counters and holds START off until it ends */
static void test_soft_reset(void)
{
    Ndk n;
    PgInstr in = pg_instr(PG381_CMD_READ, RD_N, 3, READ_AT);

    pg_open(&n, PG_ARGS);
    pg_put(&n, 0, &in);
    pg_start(&n);
    step(&n, 2000000);
    g_assert_cmpuint(pg_rd(&n, PG381_ARREQ), ==, RD_N);
    pg_wr(&n, PG381_SOFT_RST, 0);
    g_assert_cmpuint(pg_rd(&n, PG381_ARREQ), ==, 0);
    g_assert_cmpuint(pg_rd(&n, PG381_RBEAT), ==, 0);
    g_assert_cmpuint(pg_rd(&n, PG381_RBEST), ==, 0);
    g_assert_cmpuint(pg_rd(&n, PG381_RAVG), ==, 0);
    g_assert_cmpuint(pg_rd(&n, PG381_RBW_EFF_CLK), ==, 0);
    pg_start(&n);
    g_assert_cmphex(pg_rd(&n, PG381_START), ==, 0);
    step(&n, 2000000);
    g_assert_cmpuint(pg_rd(&n, PG381_ARREQ), ==, 0);
    /* the program survives; out of reset a run counts from 0 again */
    pg_wr(&n, PG381_SOFT_RST, 1);
    pg_start(&n);
    step(&n, 2000000);
    check_read_counters(&n, 1);
    /* a device reset clears the program too */
    qtest_qmp_assert_success(n.t->qts, "{ 'execute': 'system_reset' }");
    qtest_qmp_eventwait(n.t->qts, "RESET");
    qpci_config_writel(n.t->dev, PCI_BASE_ADDRESS_0, n.t->bar.addr);
    qpci_device_enable(n.t->dev);
    g_assert_cmphex(pg_rd(&n, PG381_CARD_ID), ==, 0x50473831);
    g_assert_cmpuint(pg_rd(&n, PG381_CARD_PROG_LEN), ==, 0);
    g_assert_cmpuint(pg_rd(&n, PG381_ARREQ), ==, 0);
    ndk_close(&n);
}

/*
 * A program that reaches no memory stops at its instruction: error bit 4
 * of FLOW_EMPTY, reason 9 (MEMORY) at instruction 0, nothing issued or
 * written, nothing on the buses, never done.
 */
static void check_memory_error(Ndk *n)
{
    BusExp none[4] = { 0 };

    g_assert_cmphex(pg_rd(n, PG381_FLOW_EMPTY) &
                    (PG381_FE_ERROR | PG381_FE_DONE), ==, PG381_FE_ERROR);
    g_assert_cmphex(pg_rd(n, PG381_CARD_ERROR), ==, 0x80090000);
    g_assert_cmpuint(pg_rd(n, PG381_AWREQ), ==, 0);
    g_assert_cmpuint(pg_rd(n, PG381_WRBEAT), ==, 0);
    g_assert_cmpuint(pg_rd(n, PG381_ARREQ), ==, 0);
    check_rule(n, none);
}

static void test_no_memory(void)
{
    Ndk n;
    PgInstr in = pg_instr(PG381_CMD_WRITE, 4, 0, NO_MEMORY);
    uint16_t cmd;

    pg_open(&n, PG_ARGS);
    in.pattern = WR_PATTERN;
    pg_put(&n, 0, &in);
    pg_start(&n);
    step(&n, 2000000);
    check_memory_error(&n);
    ndk_close(&n);

    /* guest memory, but bus mastering off */
    pg_open(&n, PG_ARGS);
    qtest_memset(n.t->qts, WRITE_AT, 0x5A, 4096);
    in = pg_instr(PG381_CMD_WRITE, 4, 0, WRITE_AT);
    in.pattern = WR_PATTERN;
    pg_put(&n, 0, &in);
    cmd = qpci_config_readw(n.t->dev, PCI_COMMAND);
    qpci_config_writew(n.t->dev, PCI_COMMAND, cmd & ~PCI_COMMAND_MASTER);
    pg_start(&n);
    step(&n, 2000000);
    check_memory_error(&n);
    for (uint32_t off = 0; off < 4096; off += 4) {
        g_assert_cmphex(qtest_readl(n.t->qts, WRITE_AT + off), ==,
                        0x5A5A5A5A);
    }
    ndk_close(&n);
}

/*
 * A migration mid-run (after request 8's handshake, before the last
 * RLAST): the run ends on the destination with the counts of an
 * unmigrated run, and the telemetry counts every transfer once.
 */
static void test_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-pg381-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    PgInstr in = pg_instr(PG381_CMD_READ, RD_N, 3, READ_AT);
    BusExp e[4] = { 0 };
    Ndk a, b;
    int64_t t0, start;

    pg_open(&a, PG_ARGS);
    t0 = a.t->t0;
    pg_put(&a, 0, &in);
    start = pg_start(&a);
    step_to(&a, at_cycle(start, 430));
    g_assert_cmpuint(pg_rd(&a, PG381_RLAST), ==, 6);   /* 405 + 5 i <= 430 */
    migrate_out(&a, uri);
    migrate_in(&b, "q35", PG_ARGS, uri, t0, at_cycle(start, 430));
    set_pcie_settings(&b, PG_EXP, 1, 2, true, false, false);
    step(&b, 2000000);
    check_read_counters(&b, 1);
    for (unsigned i = 0; i < RD_N; i++) {
        rule_read(e, READ_AT + 256 * i, 256);
    }
    check_rule(&b, e);
    ndk_close(&b);
    unlink(path);
    rmdir(dir);
}

/* ---- properties ---------------------------------------------------- */

static void test_bad_props(void)
{
    const char *pattern[] = {
        "-object", "telemetry-traffic-pattern,id=t0",
        "-device", "ndk-pcie-telemetry,traffic=t0,pg381=on", NULL,
    };

    /* the block over the generator's window, from either side */
    expect_refused("pg381=on,block-offset=0x1800000", "block-offset");
    expect_refused("pg381=on,block-offset=0x17f8000", "block-offset");
    expect_refused("pg381=on,block-offset=0x180f000", "block-offset");
    expect_refused("pg381-out-of-order=on", "pg381-out-of-order");
    expect_refused("pg381-data-integrity=on", "pg381-data-integrity");
    expect_start_refused(pattern, "'pg381'");
}

/* Background transfers need the card's DMA log, which pg381 makes */
static void test_background_accepted(void)
{
    Ndk n;

    pg_open(&n, "-m 256M -object telemetry-traffic-transfers,id=bg,"
            "interval-ns=10000,write-bytes=0,read-bytes=0 "
            "-device ndk-pcie-telemetry,addr=04.0,pg381=on,traffic=bg,"
            "block-offset=0x1810000");
    g_assert_cmphex(pg_rd(&n, PG381_CARD_ID), ==, 0x50473831);
    g_assert_cmphex(bar_rd(&n, 0x1810000 + PTL_REG_MAGIC), ==, PTL_MAGIC);
    ndk_close(&n);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ndk-pcie-telemetry/pg381/registers", test_registers);
    qtest_add_func("/ndk-pcie-telemetry/pg381/read", test_read);
    qtest_add_func("/ndk-pcie-telemetry/pg381/read-split", test_read_split);
    qtest_add_func("/ndk-pcie-telemetry/pg381/write", test_write);
    qtest_add_func("/ndk-pcie-telemetry/pg381/with-dma-engine",
                   test_with_dma_engine);
    qtest_add_func("/ndk-pcie-telemetry/pg381/soft-reset", test_soft_reset);
    qtest_add_func("/ndk-pcie-telemetry/pg381/no-memory", test_no_memory);
    qtest_add_func("/ndk-pcie-telemetry/pg381/migration", test_migration);
    qtest_add_func("/ndk-pcie-telemetry/pg381/bad-props", test_bad_props);
    qtest_add_func("/ndk-pcie-telemetry/pg381/background",
                   test_background_accepted);
    return g_test_run();
}
