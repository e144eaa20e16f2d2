/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PG381 traffic generator (qemu-device/pg381): its counters against
 * values worked out by hand from docs/pg381.md's rule (steady reads not
 * saturated and saturated by the outstanding limit, steady writes, the
 * limits of both latency modes), against a reference simulation
 * (pg381-ref.c) that places every request and every completion frame one
 * by one (randomized steady programs), and its soft reset, capture window,
 * CAPTURE_ALL, program errors, transfers, migration and CSV programs.
 */
#include <glib.h>
#include <string.h>

#include "pg381-core.h"
#include "pg381-csv.h"
#include "pg381-ref.h"
#include "ptm-dma-traffic.h"

#define MEM_BASE    0x10000000ull
#define MEM_SIZE    0x10000000ull
#define DATA_SIZE   0x20000u
#define T0          1000000ull      /* START's ns */

typedef struct Xfer {
    uint64_t t_ns, addr;
    uint32_t bytes;
    bool write;
} Xfer;

/* The glue's side: guest memory [MEM_BASE, + MEM_SIZE), its first bytes kept */
typedef struct Env {
    GArray *xfers;
    uint8_t data[DATA_SIZE];
} Env;

static void env_xfer(void *opaque, uint64_t t_ns, bool write, uint64_t addr,
                     uint32_t bytes)
{
    Env *e = opaque;
    Xfer x = { .t_ns = t_ns, .addr = addr, .bytes = bytes, .write = write };

    if (e->xfers->len) {
        g_assert_cmpuint(t_ns, >=, g_array_index(e->xfers, Xfer,
                                                 e->xfers->len - 1).t_ns);
    }
    g_array_append_val(e->xfers, x);
}

static bool env_valid(void *opaque, uint64_t addr, uint64_t len)
{
    return addr >= MEM_BASE && len <= MEM_SIZE &&
           addr - MEM_BASE <= MEM_SIZE - len;
}

static bool env_write(void *opaque, uint64_t addr, const void *buf,
                      uint32_t len)
{
    Env *e = opaque;

    g_assert_true(env_valid(opaque, addr, len));
    if (addr - MEM_BASE + len <= DATA_SIZE) {
        memcpy(e->data + (addr - MEM_BASE), buf, len);
    }
    return true;
}

static const Pg381Ops env_ops = {
    .transfer = env_xfer, .mem_valid = env_valid, .mem_write = env_write,
};

static Env *env_new(void)
{
    Env *e = g_new0(Env, 1);

    e->xfers = g_array_new(FALSE, FALSE, sizeof(Xfer));
    return e;
}

static void env_free(Env *e)
{
    g_array_free(e->xfers, TRUE);
    g_free(e);
}

/* 250 MHz (4 ns a cycle), 64-byte RQ and RC, the DMA log's PTC constants */
static Pg381Config cfg_std(bool ooo)
{
    Pg381Config c = {
        .clock_hz = 250000000, .rq_bytes = 64, .rc_bytes = 64,
        .rq_hdr = PTM_DMA_RQ_HDR, .rc_hdr = PTM_DMA_RC_HDR,
        .latency_ns = PTM_DMA_LATENCY_NS, .out_of_order = ooo,
    };
    return c;
}

static const Pg381Pcie pcie_std = { .mps = 256, .mrrs = 512, .rcb = 64,
                                    .tags = 256 };

static Pg381Instr req(uint8_t cmd, uint32_t count, uint8_t len, uint8_t size)
{
    Pg381Instr in = {
        .cmd = cmd, .count = count, .len = len, .size = size,
        .burst = PG381_BURST_INCR, .base = MEM_BASE,
        .high = MEM_BASE + 0xFFFFF, .addr_auto = true,
    };
    return in;
}

static Pg381Core *core_new(const Pg381Config *c, const Pg381Pcie *p, Env *e)
{
    Pg381Core *s = pg381_new(c, &env_ops, e);

    pg381_set_pcie(s, p);
    return s;
}

/* Loads prog (LAST on its last) and STARTs at T0 */
static void run(Pg381Core *s, Pg381Instr *prog, unsigned n)
{
    prog[n - 1].last = true;
    pg381_load_program(s, prog, n, T0 - 10);
    pg381_write(s, PG381_START, 1, T0);
}

/* At 250 MHz cycle c begins at T0 + 4 c */
static uint32_t at(Pg381Core *s, uint32_t off, uint64_t cycle)
{
    return pg381_read(s, off, T0 + 4 * cycle);
}

/* ------------------------------------------------------------------ */
/* By hand                                                            */

/*
 * 100 reads of 256 B: each one MRd (1 RQ cycle: 16 B on a 64 B bus) and
 * one completion of 268 B (5 RC cycles). The MRds go back to back,
 * s_i = i; the completions are ready at i + 250 (1000 ns) but RC takes 5
 * cycles each: request i's ends at 255 + 5 i, its latency 255 + 4 i.
 */
static void test_read_unsaturated(void)
{
    Pg381Config c = cfg_std(false);
    Env *e = env_new();
    Pg381Core *s = core_new(&c, &pcie_std, e);
    Pg381Instr p[] = { req(PG381_CMD_READ, 100, 3, 6) };
    uint64_t sum = 0, n400 = (400 - 255) / 5 + 1;

    run(s, p, 1);
    g_assert_cmpuint(at(s, PG381_ARREQ, 50), ==, 51);
    pg381_write(s, PG381_INSTR(0) + PG381_I_COUNT, 7, T0 + 4 * 50);
    g_assert_cmpuint(at(s, PG381_INSTR(0) + PG381_I_COUNT, 50), ==, 100);
    g_assert_cmpuint(at(s, PG381_RLAST, 50), ==, 0);
    g_assert_cmpuint(at(s, PG381_RBEST, 50), ==, 0);
    g_assert_cmpuint(at(s, PG381_RLAST, 254), ==, 0);
    g_assert_cmpuint(at(s, PG381_RLAST, 255), ==, 1);
    /* at cycle 400 */
    for (uint64_t i = 0; i < n400; i++) {
        sum += 255 + 4 * i;
    }
    g_assert_cmpuint(at(s, PG381_ARREQ, 400), ==, 100);
    g_assert_cmpuint(at(s, PG381_RLAST, 400), ==, n400);
    g_assert_cmpuint(at(s, PG381_RBEAT, 400), ==, 4 * n400);
    g_assert_cmpuint(at(s, PG381_RAVG, 400), ==, sum);
    g_assert_cmpuint(at(s, PG381_RWORST, 400), ==, 255 + 4 * (n400 - 1));
    g_assert_cmpuint(at(s, PG381_RBW_EFF_CLK, 400), ==, 400);
    g_assert_cmphex(at(s, PG381_FLOW_EMPTY, 400), ==,
                    PG381_FE_EMPTY | PG381_FE_WR_DONE);
    /* the last ends at 255 + 495 = 750; done 200 cycles later */
    g_assert_cmpuint(at(s, PG381_RAVG, 2000), ==, 100 * 255 + 4 * 4950);
    g_assert_cmpuint(at(s, PG381_RBEST, 2000), ==, 255);
    g_assert_cmpuint(at(s, PG381_RWORST, 2000), ==, 255 + 4 * 99);
    g_assert_cmpuint(at(s, PG381_RBEAT, 2000), ==, 400);
    g_assert_cmpuint(at(s, PG381_RBW_EFF_CLK, 2000), ==, 750);
    g_assert_cmpuint(at(s, PG381_WBW_EFF_CLK, 2000), ==, 0);
    g_assert_cmpuint(at(s, PG381_START, 949), ==, 1);
    g_assert_cmphex(at(s, PG381_FLOW_EMPTY, 949) & PG381_FE_DONE, ==, 0);
    g_assert_cmphex(at(s, PG381_FLOW_EMPTY, 950), ==,
                    PG381_FE_EMPTY | PG381_FE_WR_DONE | PG381_FE_RD_DONE |
                    PG381_FE_DONE);
    g_assert_cmpuint(at(s, PG381_START, 950), ==, 0);
    /* the program is written while the generator is stopped only */
    pg381_write(s, PG381_INSTR(0) + PG381_I_COUNT, 7, T0 + 4 * 951);
    g_assert_cmpuint(at(s, PG381_INSTR(0) + PG381_I_COUNT, 951), ==, 7);
    /* one transfer a request at its MRd's cycle */
    g_assert_cmpuint(e->xfers->len, ==, 100);
    for (unsigned i = 0; i < 100; i++) {
        Xfer *x = &g_array_index(e->xfers, Xfer, i);

        g_assert_cmpuint(x->t_ns, ==, T0 + 4 * i);
        g_assert_cmphex(x->addr, ==, MEM_BASE + 256 * i);
        g_assert_cmpuint(x->bytes, ==, 256);
        g_assert_false(x->write);
    }
    pg381_free(s);
    env_free(e);
}

/*
 * 40 reads of 64 B (76 B completions: 2 RC cycles) with OUTSTND_RESP_LIMIT
 * 8: requests 0..7 go at 0..7, their completions queue on RC and end at
 * 252 + 2 i; each later one waits for the one 8 before it to end, so
 * burst k (8 requests) issues at 252 k + 2 r and ends 252 later. Latency
 * 252 + i in the first burst, 252 after.
 */
static void test_read_saturated(void)
{
    Pg381Config c = cfg_std(false);
    Env *e = env_new();
    Pg381Core *s = core_new(&c, &pcie_std, e);
    Pg381Instr p[] = { req(PG381_CMD_READ, 40, 0, 6) };
    uint64_t sum = 0;

    pg381_write(s, PG381_OUTSTND_RESP_LIMIT, 8, T0 - 1);
    run(s, p, 1);
    /* at cycle 260: the first 8, and 252, 254, ..., 260 of the second */
    g_assert_cmpuint(at(s, PG381_ARREQ, 260), ==, 8 + 5);
    pg381_advance(s, T0 + 4 * 2000);
    for (unsigned i = 0; i < 40; i++) {
        uint64_t si = i < 8 ? i : 252 * (i / 8) + 2 * (i % 8);

        sum += i < 8 ? 252 + i : 252;
        g_assert_cmpuint(g_array_index(e->xfers, Xfer, i).t_ns, ==,
                         T0 + 4 * si);
    }
    g_assert_cmpuint(at(s, PG381_RAVG, 5000), ==, sum);
    g_assert_cmpuint(at(s, PG381_RBEST, 5000), ==, 252);
    g_assert_cmpuint(at(s, PG381_RWORST, 5000), ==, 259);
    g_assert_cmpuint(at(s, PG381_RLAST, 5000), ==, 40);
    g_assert_cmpuint(at(s, PG381_RBW_EFF_CLK, 5000), ==, 252 * 5 + 2 * 7);
    pg381_free(s);
    env_free(e);
}

/*
 * 50 writes of 1024 B, start_delay 10: four MWr of 256 B, 272 B frames of
 * 5 RQ cycles, 20 cycles a request; s_i = 10 + 30 i, WLAST at s_i + 19,
 * B at s_i + 20: latency 20. The data: the constant pattern.
 */
static void test_write_steady(void)
{
    Pg381Config c = cfg_std(false);
    Env *e = env_new();
    Pg381Core *s = core_new(&c, &pcie_std, e);
    Pg381Instr p[] = { req(PG381_CMD_WRITE, 50, 15, 6) };

    p[0].start_delay = 10;
    p[0].pattern_value = 0x11223344;
    run(s, p, 1);
    g_assert_cmpuint(at(s, PG381_AWREQ, 10), ==, 1);
    g_assert_cmpuint(at(s, PG381_WLAST, 28), ==, 0);
    g_assert_cmpuint(at(s, PG381_WLAST, 29), ==, 1);
    g_assert_cmpuint(at(s, PG381_WRBEAT, 29), ==, 16);
    g_assert_cmpuint(at(s, PG381_BRESP, 29), ==, 0);
    g_assert_cmpuint(at(s, PG381_BRESP, 30), ==, 1);
    g_assert_cmpuint(at(s, PG381_AWREQ, 40), ==, 2);
    g_assert_cmpuint(at(s, PG381_AWREQ, 5000), ==, 50);
    g_assert_cmpuint(at(s, PG381_BRESP, 5000), ==, 50);
    g_assert_cmpuint(at(s, PG381_WRBEAT, 5000), ==, 800);
    g_assert_cmpuint(at(s, PG381_WAVG, 5000), ==, 50 * 20);
    g_assert_cmpuint(at(s, PG381_WBEST, 5000), ==, 20);
    g_assert_cmpuint(at(s, PG381_WWORST, 5000), ==, 20);
    g_assert_cmpuint(at(s, PG381_WBW_EFF_CLK, 5000), ==, 10 + 30 * 49 + 20);
    g_assert_cmpuint(at(s, PG381_RBW_EFF_CLK, 5000), ==, 0);
    g_assert_cmphex(at(s, PG381_FLOW_EMPTY, 1699) & PG381_FE_DONE, ==, 0);
    g_assert_cmphex(at(s, PG381_FLOW_EMPTY, 1700) & PG381_FE_DONE, !=, 0);
    g_assert_cmpuint(e->xfers->len, ==, 50);
    for (unsigned i = 0; i < 50; i++) {
        Xfer *x = &g_array_index(e->xfers, Xfer, i);

        g_assert_true(x->write);
        g_assert_cmpuint(x->t_ns, ==, T0 + 4 * (10 + 30 * i));
        g_assert_cmphex(x->addr, ==, MEM_BASE + 1024 * i);
    }
    for (unsigned b = 0; b < 50 * 1024; b += 4) {
        g_assert_cmphex(e->data[b], ==, 0x44);
        g_assert_cmphex(e->data[b + 3], ==, 0x11);
    }
    pg381_free(s);
    env_free(e);
}

/*
 * 600 reads of 64 B with 768 tags and 128 B of RC a cycle (76 B: 1
 * cycle): in order, 509 may be out and 251 cycles (1000 ns and the frame)
 * never fill them: s_i = i, each 251 cycles. Out of order, 128 in all:
 * bursts of 128 every 251 cycles; the latency pairs by ID (auto_incr, 128
 * IDs) and is 251 all the same.
 */
static void test_limits_in_and_out_of_order(void)
{
    Pg381Pcie p768 = pcie_std;

    p768.tags = 768;
    for (int ooo = 0; ooo < 2; ooo++) {
        Pg381Config c = cfg_std(ooo);
        Env *e = env_new();
        Pg381Core *s;
        Pg381Instr p[] = { req(PG381_CMD_READ, 600, 0, 6) };
        uint64_t last = ooo ? 251 * 4 + 599 % 128 : 599;

        c.rc_bytes = 128;
        s = core_new(&c, &p768, e);
        p[0].id_incr = ooo;
        run(s, p, 1);
        g_assert_cmpuint(at(s, PG381_ARREQ, 200), ==, ooo ? 128 : 201);
        g_assert_cmpuint(at(s, PG381_ARREQ, 251), ==, ooo ? 129 : 252);
        g_assert_cmpuint(at(s, PG381_RBW_EFF_CLK, 9999), ==, last + 251);
        g_assert_cmpuint(at(s, PG381_RAVG, 9999), ==, 600 * 251);
        g_assert_cmpuint(at(s, PG381_RBEST, 9999), ==, 251);
        g_assert_cmpuint(at(s, PG381_RWORST, 9999), ==, 251);
        g_assert_cmphex(at(s, PG381_CARD_PARAMS, 9999), ==, ooo);
        /* each mode takes its own IDs only: constant in order, auto_incr not */
        p[0].id_incr = !ooo;
        pg381_load_program(s, p, 1, T0 + 4 * 10000);
        pg381_write(s, PG381_START, 1, T0 + 4 * 10001);
        g_assert_cmphex(pg381_read(s, PG381_CARD_ERROR, T0 + 4 * 10002), ==,
                        PG381_ERR_VALID | PG381_ERR_ID << 16);
        g_assert_cmpuint(pg381_read(s, PG381_ARREQ, T0 + 4 * 10002), ==, 600);
        pg381_free(s);
        env_free(e);
    }
}

/*
 * Out of order the 128 are "in all": 200 reads of 256 B (5 RC cycles,
 * so RC-bound: request i >= 128 issues as i - 128 ends, f_i = 255 + 5 i)
 * and then a write. RQ is free at s_199 + 1 = 611, but 128 reads are out
 * until the 73rd ends at 255 + 5 x 72 = 615: the write goes then. In
 * order, at 200 (the reads are 200 < 256 of their own).
 */
static void test_out_of_order_in_all(void)
{
    for (int ooo = 0; ooo < 2; ooo++) {
        Pg381Config c = cfg_std(ooo);
        Env *e = env_new();
        Pg381Core *s = core_new(&c, &pcie_std, e);
        Pg381Instr p[] = { req(PG381_CMD_READ, 200, 3, 6),
                           req(PG381_CMD_WRITE, 1, 0, 6) };

        p[0].id_incr = p[1].id_incr = ooo;
        p[1].base = MEM_BASE + 0x100000;
        p[1].high = p[1].base + 0xFFF;
        run(s, p, 2);
        pg381_advance(s, T0 + 4 * 5000);
        g_assert_cmpuint(e->xfers->len, ==, 201);
        g_assert_cmpuint(g_array_index(e->xfers, Xfer, 200).t_ns, ==,
                         T0 + 4 * (ooo ? 615 : 200));
        g_assert_cmpuint(g_array_index(e->xfers, Xfer, 199).t_ns, ==,
                         T0 + 4 * (ooo ? 255 + 5 * 71 : 199));
        pg381_free(s);
        env_free(e);
    }
}

/*
 * A request the PTC splits unequally is timed as the slowest split of
 * its instruction (chosen): 96 B reads one after another visit three
 * splits (one frame of 108 B; 32 + 64 B; at 480 two MRds of 32 and 64
 * B), so every request takes 2 MRd cycles and 3 RC cycles, and its first
 * frame 2: s_i = 2 i, RLAST at 250 + 3 + 3 i.
 */
static void test_unequal_splits(void)
{
    Pg381Config c = cfg_std(false);
    Env *e = env_new();
    Pg381Core *s = core_new(&c, &pcie_std, e);
    Pg381Instr p[] = { req(PG381_CMD_READ, 16, 2, 5) };

    run(s, p, 1);
    g_assert_cmpuint(at(s, PG381_ARREQ, 9), ==, 5);
    g_assert_cmpuint(at(s, PG381_RLAST, 256), ==, 2);
    g_assert_cmpuint(at(s, PG381_RBW_EFF_CLK, 9999), ==, 253 + 3 * 15);
    pg381_free(s);
    env_free(e);
}

/*
 * One read of 128 B at 32 past a 64 B boundary: its completions split at
 * the RCB, then MPS each: 32 B (a 44 B frame, 1 cycle), then 96 B (108 B,
 * 2 cycles): latency 250 + 1, RLAST at 253. With an RCB of 128: 96 B
 * first (2 cycles), then 32 B (1): latency 252, RLAST at 253 as well.
 */
static void test_completion_split(void)
{
    for (unsigned rcb = 64; rcb <= 128; rcb += 64) {
        Pg381Config c = cfg_std(false);
        Pg381Pcie pc = pcie_std;
        Env *e = env_new();
        Pg381Core *s;
        Pg381Instr p[] = { req(PG381_CMD_READ, 1, 3, 5) };

        pc.rcb = rcb;
        s = core_new(&c, &pc, e);
        p[0].offset = 32;
        run(s, p, 1);
        g_assert_cmpuint(at(s, PG381_RBEST, 999), ==, rcb == 64 ? 251 : 252);
        g_assert_cmpuint(at(s, PG381_RBW_EFF_CLK, 999), ==, 253);
        g_assert_cmphex(g_array_index(e->xfers, Xfer, 0).addr, ==,
                        MEM_BASE + 32);
        pg381_free(s);
        env_free(e);
    }
}

/* ------------------------------------------------------------------ */
/* Against the reference (pg381-ref.c)                                */

static const uint32_t checked[] = {
    PG381_RBEAT, PG381_ARREQ, PG381_RLAST, PG381_RBW_EFF_CLK, PG381_RWORST,
    PG381_RBEST, PG381_RAVG, PG381_AWREQ, PG381_WLAST, PG381_BRESP,
    PG381_WRBEAT, PG381_WBW_EFF_CLK, PG381_WWORST, PG381_WBEST, PG381_WAVG,
    PG381_FLOW_EMPTY, PG381_WIN_AWREQ, PG381_WIN_WRBEAT, PG381_WIN_ARREQ,
    PG381_WIN_RBEAT,
};

/*
 * A steady instruction: every request starts on a 4 KiB boundary, or is
 * a power of 2 no larger than MPS and MRRS at addresses of its size
 */
static Pg381Instr random_instr(GRand *g, bool ooo, const Pg381Pcie *p)
{
    static const uint8_t cmds[] = { PG381_CMD_READ, PG381_CMD_READ,
                                    PG381_CMD_WRITE, PG381_CMD_WAIT };
    static const uint32_t delays[] = { 0, 0, 3, 40 };
    /*
     * One g_rand call a statement: the order of a call's arguments (or of
     * an initializer's) is the compiler's, and every compiler must make
     * the same programs
     */
    uint32_t count = g_rand_int_range(g, 1, 300);
    Pg381Instr in = req(cmds[g_rand_int_range(g, 0, 4)], count, 0, 0);
    uint32_t small = MIN(p->mps, p->mrrs);

    if (in.cmd == PG381_CMD_WAIT) {
        in.wait = g_rand_int_range(g, 0, 4);
        in.count = g_rand_int_range(g, 0, 400);
        return in;
    }
    in.id_incr = ooo;
    in.start_delay = delays[g_rand_int_range(g, 0, 4)];
    in.base = MEM_BASE + 0x1000 * (uint64_t)g_rand_int_range(g, 0, 0x8000);
    if (g_rand_boolean(g)) {
        /* a power of 2 up to min(MPS, MRRS), one after another */
        in.size = g_rand_int_range(g, 2, 8);
        in.len = (1u << g_rand_int_range(g, 0, 6)) - 1;
        while (pg381_instr_bytes(&in) > small) {
            in.len = in.len / 2;
        }
    } else {
        /* up to 4 KiB, each from a 4 KiB boundary */
        in.size = 6;
        in.len = g_rand_int_range(g, 0, 64);
        in.addr_auto = false;
        in.incr = 0x1000 * (uint64_t)g_rand_int_range(g, 0, 3);
    }
    /* room for 1 to 300 requests before the wrap to base */
    /* no more MRd a request than the card has tags */
    while ((pg381_instr_bytes(&in) + p->mrrs - 1) / p->mrrs > p->tags) {
        in.len /= 2;
    }
    in.high = in.base + (uint64_t)MAX(pg381_instr_bytes(&in),
                                      MAX(in.incr, 0x1000)) *
              g_rand_int_range(g, 1, 300) - 1;
    return in;
}

static void compare_at(Pg381Core *s, const Ref *ref, uint64_t cycle,
                       uint64_t clock, uint32_t cs, uint32_t ce)
{
    GHashTable *want = g_hash_table_new(NULL, NULL);
    uint64_t ns = T0 + ((unsigned __int128)cycle * 1000000000u + clock - 1) /
                  clock;

    ref_regs(ref, cycle, cs, ce, want);
    for (unsigned k = 0; k < G_N_ELEMENTS(checked); k++) {
        uint32_t got = pg381_read(s, checked[k], ns);
        uint32_t exp = GPOINTER_TO_UINT(g_hash_table_lookup(
                                        want, GUINT_TO_POINTER(checked[k])));

        if (got != exp) {
            g_test_message("register 0x%x at cycle %" G_GUINT64_FORMAT
                           ": 0x%x, the reference 0x%x", checked[k], cycle,
                           got, exp);
        }
        g_assert_cmphex(got, ==, exp);
    }
    g_hash_table_destroy(want);
}

/*
 * Randomized steady programs (reads, writes, waits, a loop, both latency
 * modes, other clocks, buses and PCIe settings): every counter at many
 * instants, and every transfer, against the reference.
 */
static void test_against_reference(void)
{
    static const uint32_t tag_counts[] = { 8, 32, 256, 768 };
    static const uint64_t clocks[] = { 250000000, 312500000, 200000000 };
    GRand *g = g_rand_new_with_seed(381);
    unsigned window = 0, tags = 0, ooo_write = 0, rc_queue = 0, rc_gap = 0;

    for (unsigned trial = 0; trial < 150; trial++) {
        bool ooo = g_rand_boolean(g);
        Pg381Config c = cfg_std(ooo);
        Pg381Pcie p = { 0 };
        uint32_t limreg, cs, ce;
        unsigned n;
        Pg381Instr prog[8];
        Env *e = env_new();
        Pg381Core *s;
        Ref ref;

        p.mps = 128 << g_rand_int_range(g, 0, 3);
        p.mrrs = 128 << g_rand_int_range(g, 0, 4);
        p.rcb = g_rand_boolean(g) ? 64 : 128;
        p.tags = tag_counts[g_rand_int_range(g, 0, 4)];
        limreg = g_rand_boolean(g) ? 0xFFF : g_rand_int_range(g, 1, 40);
        n = g_rand_int_range(g, 1, 7);
        cs = g_rand_int_range(g, 0, 3000);
        ce = cs + g_rand_int_range(g, 0, 20000);
        c.clock_hz = clocks[g_rand_int_range(g, 0, 3)];
        /* an 8 B RQ spaces a request's MRds 2 cycles apart */
        c.rq_bytes = 8 << g_rand_int_range(g, 0, 4);
        c.rc_bytes = 32 << g_rand_int_range(g, 0, 4);
        for (unsigned k = 0; k < n; k++) {
            prog[k] = random_instr(g, ooo, &p);
        }
        if (n >= 3 && g_rand_boolean(g)) {
            prog[1].loop_start = true;
            prog[1].loop_count = g_rand_int_range(g, 2, 4);
            prog[1].loop_incr = 0x1000 * g_rand_int_range(g, 0, 3);
            prog[n - 2].loop_end = true;
        }
        prog[n - 1].last = true;
        s = core_new(&c, &p, e);
        pg381_write(s, PG381_OUTSTND_RESP_LIMIT, limreg, T0 - 5);
        pg381_write(s, PG381_CAPTURE_ENABLE, 1, T0 - 5);
        pg381_write(s, PG381_CAPTURE_START, cs, T0 - 5);
        pg381_write(s, PG381_CAPTURE_END, ce, T0 - 5);
        pg381_load_program(s, prog, n, T0 - 5);
        pg381_write(s, PG381_START, 1, T0);
        ref = ref_run(&c, &p, limreg, prog);
        g_test_message("trial %u: %u instructions, %u requests, done at %"
                       G_GUINT64_FORMAT, trial, n, ref.r->len, ref.done);
        /* instants in order (a model's time only goes on) */
        for (unsigned k = 0, cyc = 0; k < 12; k++) {
            cyc = MAX(cyc, ref.done * k / 11 + g_rand_int_range(g, 0, 50));
            compare_at(s, &ref, cyc, c.clock_hz, cs, ce);
        }
        compare_at(s, &ref, ref.done + 7, c.clock_hz, cs, ce);
        g_assert_cmpuint(e->xfers->len, ==, ref.r->len);
        for (unsigned k = 0; k < ref.r->len; k++) {
            RefReq *q = &g_array_index(ref.r, RefReq, k);
            Xfer *x = &g_array_index(e->xfers, Xfer, k);

            g_assert_cmpuint(x->t_ns, ==, T0 + ((unsigned __int128)q->s *
                             1000000000u + c.clock_hz - 1) / c.clock_hz);
            g_assert_cmphex(x->addr, ==, q->addr);
            g_assert_cmpuint(x->bytes, ==, q->bytes);
            g_assert_cmpint(x->write, ==, q->write);
        }
        window += ref.window;
        tags += ref.tags;
        ooo_write += ref.ooo_write;
        rc_queue += ref.rc_queue;
        rc_gap += ref.rc_gap;
        g_array_free(ref.r, TRUE);
        pg381_free(s);
        env_free(e);
    }
    /* the programs met every rule that holds a request back */
    g_test_message("held by the window %u, tags %u, out of order writes %u, "
                   "queued on RC %u, RC idle inside a request %u", window,
                   tags, ooo_write, rc_queue, rc_gap);
    g_assert_cmpuint(window, >, 0);
    g_assert_cmpuint(tags, >, 0);
    g_assert_cmpuint(ooo_write, >, 0);
    g_assert_cmpuint(rc_queue, >, 0);
    g_assert_cmpuint(rc_gap, >, 0);
    g_rand_free(g);
}

/* ------------------------------------------------------------------ */
/* Registers, runs, errors                                            */

static void test_registers(void)
{
    Pg381Config c = cfg_std(false);
    Env *e = env_new();
    Pg381Core *s = core_new(&c, &pcie_std, e);
    Pg381Instr in = req(PG381_CMD_WRITE, 65536, 0xAB, 5), out;
    uint32_t w[PG381_INSTR_WORDS];

    g_assert_cmphex(pg381_read(s, PG381_SOFT_RST, 0), ==, 1);
    g_assert_cmphex(pg381_read(s, PG381_OUTSTND_RESP_LIMIT, 0), ==, 0xFFF);
    g_assert_cmphex(pg381_read(s, PG381_FLOW_EMPTY, 0), ==, PG381_FE_EMPTY);
    g_assert_cmphex(pg381_read(s, PG381_START, 0), ==, 0);
    g_assert_cmphex(pg381_read(s, PG381_CARD_ID, 0), ==, 0x50473831);
    g_assert_cmpuint(pg381_read(s, PG381_CARD_CLOCK, 0), ==, 250000000);
    g_assert_cmphex(pg381_read(s, PG381_CARD_ERROR, 0), ==, 0);
    g_assert_cmpuint(pg381_read(s, PG381_CARD_PROG_LEN, 0), ==, 0);
    pg381_write(s, PG381_OUTSTND_RESP_LIMIT, 0xFFFF1234, 0);
    g_assert_cmphex(pg381_read(s, PG381_OUTSTND_RESP_LIMIT, 0), ==, 0x234);
    pg381_write(s, PG381_CREDIT_FLOW1, 0xCAFE, 0);
    g_assert_cmphex(pg381_read(s, PG381_CREDIT_FLOW1, 0), ==, 0xCAFE);
    pg381_write(s, PG381_CAPTURE_ENABLE, 3, 0);
    g_assert_cmphex(pg381_read(s, PG381_CAPTURE_ENABLE, 0), ==, 1);
    g_assert_cmphex(pg381_read(s, PG381_RBEAT + 1, 0), ==, 0);
    g_assert_cmphex(pg381_read(s, PG381_WINDOW, 0), ==, 0);
    /* an instruction's words, field by field, and back */
    in.id = 0x1234;
    in.user = 0x5A;
    in.cache = 0xC;
    in.qos = 0x9;
    in.pattern = PG381_PAT_ADDR;
    in.base = 0x123456789Aull;
    in.high = 0x223456789Aull;
    in.offset = 0x40;
    in.incr = 0x1000000000ull;
    in.loop_start = in.loop_end = in.last = true;
    in.loop_count = 7;
    in.loop_incr = 0x2000;
    pg381_instr_encode(&in, w);
    g_assert_cmphex(w[0], ==, 0x1 | 0x4 | 0x8 | 0x10 | 0x40 | 1u << 13);
    g_assert_cmphex(w[1], ==, 65536);
    g_assert_cmphex(w[3], ==, 0xAB | 5 << 8 | 1 << 12 | 0xC << 16 | 9 << 24);
    g_assert_cmphex(w[4], ==, 0x5A1234);
    g_assert_cmphex(w[6], ==, 0x3456789A);
    g_assert_cmphex(w[7], ==, 0x12);
    g_assert_cmphex(w[13], ==, 0x10);
    g_assert_cmphex(w[14], ==, 0x20000007);
    pg381_instr_decode(w, &out);
    g_assert_cmpuint(out.cmd, ==, PG381_CMD_WRITE);
    g_assert_cmpuint(out.count, ==, 65536);
    g_assert_cmphex(out.incr, ==, in.incr);
    g_assert_cmpuint(out.loop_incr, ==, 0x2000);
    g_assert_true(out.last && out.loop_start && out.loop_end);
    {
        uint32_t again[PG381_INSTR_WORDS];

        pg381_instr_encode(&out, again);
        g_assert_cmpmem(w, sizeof(w), again, sizeof(again));
    }
    pg381_load_program(s, &in, 1, 0);
    g_assert_cmphex(pg381_read(s, PG381_INSTR(0) + 0x38, 0), ==, 0x20000007);
    g_assert_cmpuint(pg381_read(s, PG381_CARD_PROG_LEN, 0), ==, 1);
    pg381_free(s);
    env_free(e);
}

/*
 * Soft reset clears every counter and stops the run; without it a second
 * run adds to the first (best and worst over both).
 */
static void test_soft_reset_and_runs(void)
{
    Pg381Config c = cfg_std(false);
    Env *e = env_new();
    Pg381Core *s = core_new(&c, &pcie_std, e);
    Pg381Instr p[] = { req(PG381_CMD_READ, 100, 3, 6) };
    uint64_t t2 = T0 + 4 * 2000;

    run(s, p, 1);
    g_assert_cmpuint(at(s, PG381_ARREQ, 60), ==, 61);
    pg381_write(s, PG381_SOFT_RST, 0, T0 + 4 * 60);
    g_assert_cmpuint(at(s, PG381_ARREQ, 61), ==, 0);
    g_assert_cmphex(at(s, PG381_FLOW_EMPTY, 61), ==, PG381_FE_EMPTY);
    pg381_write(s, PG381_START, 1, T0 + 4 * 62);       /* held in reset */
    g_assert_cmpuint(at(s, PG381_ARREQ, 900), ==, 0);
    g_assert_cmpuint(e->xfers->len, ==, 61);
    pg381_write(s, PG381_SOFT_RST, 1, T0 + 4 * 901);
    g_assert_cmpuint(at(s, PG381_START, 902), ==, 0);
    /* the program stayed; a run at t2 goes as the first would */
    pg381_write(s, PG381_START, 1, t2);
    g_assert_cmpuint(pg381_read(s, PG381_RAVG, t2 + 4 * 2000), ==,
                     100 * 255 + 4 * 4950);
    /* a third, with 8 out at most, adds to it */
    pg381_write(s, PG381_OUTSTND_RESP_LIMIT, 1, t2 + 4 * 2000);
    pg381_write(s, PG381_START, 1, t2 + 4 * 2001);
    g_assert_cmpuint(pg381_read(s, PG381_ARREQ, t2 + 4 * 2002), ==, 101);
    /* one out at a time: each 255 (the first frame waits for nothing) */
    g_assert_cmpuint(pg381_read(s, PG381_RAVG, t2 + 4 * 99999), ==,
                     100 * 255 + 4 * 4950 + 100 * 255);
    g_assert_cmpuint(pg381_read(s, PG381_RLAST, t2 + 4 * 99999), ==, 200);
    g_assert_cmpuint(pg381_read(s, PG381_RBEST, t2 + 4 * 99999), ==, 255);
    g_assert_cmpuint(pg381_read(s, PG381_RWORST, t2 + 4 * 99999), ==, 651);
    g_assert_cmpuint(pg381_read(s, PG381_RBW_EFF_CLK, t2 + 4 * 99999), ==,
                     750 + 100 * 255);
    pg381_free(s);
    env_free(e);
}

/*
 * The capture window [50, 300) of the first read program: requests
 * 50..99 issue in it; RLAST 255 + 5 i falls in it for i = 0..8. CAPTURE_ALL
 * at cycle 400 latches the values of that instant (30 RLASTs).
 */
static void test_capture(void)
{
    Pg381Config c = cfg_std(false);
    Env *e = env_new();
    Pg381Core *s = core_new(&c, &pcie_std, e);
    Pg381Instr p[] = { req(PG381_CMD_READ, 100, 3, 6),
                       req(PG381_CMD_WRITE, 10, 0, 6) };
    uint32_t live[PG381_AL_COUNT];

    pg381_write(s, PG381_CAPTURE_ENABLE, 1, 0);
    pg381_write(s, PG381_CAPTURE_START, 50, 0);
    pg381_write(s, PG381_CAPTURE_END, 300, 0);
    run(s, p, 2);
    /* a later change is the next run's */
    pg381_write(s, PG381_CAPTURE_END, 100000, T0 + 4);
    g_assert_cmpuint(at(s, PG381_WIN_ARREQ, 49), ==, 0);
    g_assert_cmpuint(at(s, PG381_WIN_ARREQ, 60), ==, 11);
    g_assert_cmpuint(at(s, PG381_WIN_RBEAT, 260), ==, 4 * 2);
    for (unsigned k = 0; k < PG381_AL_COUNT; k++) {
        live[k] = at(s, PG381_STATUS_BASE + 4 * k, 400);
    }
    g_assert_cmpuint(live[(PG381_RLAST - PG381_STATUS_BASE) / 4], ==, 30);
    g_assert_cmpuint(at(s, PG381_CAPTURE_ALL, 400), ==, 0);
    for (unsigned k = 0; k < PG381_AL_COUNT; k++) {
        g_assert_cmphex(at(s, PG381_AL_BASE + 4 * k, 3000), ==, live[k]);
    }
    g_assert_cmpuint(at(s, PG381_RLAST, 3000), ==, 100);
    g_assert_cmpuint(at(s, PG381_WIN_ARREQ, 3000), ==, 50);
    g_assert_cmpuint(at(s, PG381_WIN_RBEAT, 3000), ==, 4 * 9);
    /* the writes, from 100 (after the last MRd) at 2 RQ cycles each, too */
    g_assert_cmpuint(at(s, PG381_AWREQ, 3000), ==, 10);
    g_assert_cmpuint(at(s, PG381_WIN_AWREQ, 3000), ==, 10);
    g_assert_cmpuint(at(s, PG381_WIN_WRBEAT, 3000), ==, 10);
    pg381_write(s, PG381_CAPTURE_ENABLE, 0, T0 + 4 * 3001);
    g_assert_cmpuint(at(s, PG381_WIN_ARREQ, 3002), ==, 50);
    pg381_free(s);
    env_free(e);
}

typedef struct BadCase {
    const char *what;
    uint8_t why;
    unsigned pc;
    unsigned issued;            /* transfers made before it */
    uint64_t at;                /* the cycle it shows from */
} BadCase;

/*
 * Each broken rule: the error bit, its reason and instruction, nothing
 * issued past it. A rule of the program's fields stops it at START; tags
 * and memory are checked as the instruction comes, here after the 10
 * writes of 2 RQ cycles (80 B frames) end at cycle 20.
 */
static void test_bad_programs(void)
{
    static const BadCase cases[] = {
        { "no LAST", PG381_ERR_NO_LAST, 511, 0, 0 },
        { "zero requests", PG381_ERR_ZERO, 1, 0, 0 },
        { "zero loop", PG381_ERR_ZERO, 1, 0, 0 },
        { "16 KiB", PG381_ERR_TOO_LONG, 1, 0, 0 },
        { "limit 0", PG381_ERR_LIMIT, 0, 0, 0 },
        { "more MRd than tags", PG381_ERR_LIMIT, 1, 10, 20 },
        { "auto_incr in order", PG381_ERR_ID, 1, 0, 0 },
        { "END_LOOP alone", PG381_ERR_LOOP, 1, 0, 0 },
        { "nested loop", PG381_ERR_LOOP, 1, 0, 0 },
        { "WRAP", PG381_ERR_BURST, 1, 0, 0 },
        { "past high", PG381_ERR_ADDR, 1, 0, 0 },
        { "not memory", PG381_ERR_MEMORY, 1, 10, 20 },
        { "command 3", PG381_ERR_CMD, 1, 0, 0 },
    };

    for (unsigned k = 0; k < G_N_ELEMENTS(cases); k++) {
        const BadCase *b = &cases[k];
        Pg381Config c = cfg_std(false);
        Env *e = env_new();
        Pg381Pcie p = pcie_std;
        Pg381Core *s;
        Pg381Instr prog[] = { req(PG381_CMD_WRITE, 10, 0, 6),
                              req(PG381_CMD_READ, 10, 0, 6),
                              req(PG381_CMD_READ, 10, 0, 6) };
        uint32_t fe;

        g_test_message("%s", b->what);
        p.tags = 4;
        s = core_new(&c, &p, e);
        switch (k) {
        case 1:
            prog[1].count = 0;
            break;
        case 2:
            prog[1].loop_start = prog[2].loop_end = true;
            break;
        case 3:
            prog[1].len = 255;
            break;
        case 4:
            pg381_write(s, PG381_OUTSTND_RESP_LIMIT, 0, 0);
            break;
        case 5:
            prog[1].len = 63;                   /* 4 KiB: 8 MRd of 512 */
            break;
        case 6:
            prog[1].id_incr = true;
            break;
        case 7:
            prog[1].loop_end = true;
            break;
        case 8:
            prog[0].loop_start = prog[1].loop_start = true;
            prog[0].loop_count = prog[1].loop_count = 2;
            prog[2].loop_end = true;
            break;
        case 9:
            prog[1].burst = PG381_BURST_WRAP;
            break;
        case 10:
            prog[1].high = prog[1].base + 62;
            break;
        case 11:
            prog[1].base = MEM_BASE + MEM_SIZE - 64 * 5;
            prog[1].high = prog[1].base + 0xFFFFF;
            break;
        case 12:
            prog[1].cmd = 3;
            break;
        }
        if (k) {
            prog[2].last = true;
        }
        pg381_load_program(s, prog, 3, T0 - 1);
        pg381_write(s, PG381_START, 1, T0);
        if (b->at) {
            g_assert_cmphex(at(s, PG381_FLOW_EMPTY, b->at - 1) &
                            PG381_FE_ERROR, ==, 0);
        }
        fe = at(s, PG381_FLOW_EMPTY, b->at + 5000);
        g_assert_cmphex(fe & PG381_FE_ERROR, !=, 0);
        g_assert_cmphex(fe & PG381_FE_DONE, ==, 0);
        g_assert_cmphex(at(s, PG381_CARD_ERROR, b->at + 5000), ==,
                        PG381_ERR_VALID | (uint32_t)b->why << 16 | b->pc);
        g_assert_cmpuint(e->xfers->len, ==, b->issued);
        g_assert_cmpuint(at(s, PG381_AWREQ, b->at + 5000), ==, b->issued);
        g_assert_cmpuint(at(s, PG381_ARREQ, b->at + 5000), ==, 0);
        g_assert_cmpuint(at(s, PG381_START, b->at + 5000), ==, 0);
        /* the cycles stop with the run */
        g_assert_cmpuint(at(s, PG381_RBW_EFF_CLK, b->at + 5000), ==, b->at);
        pg381_free(s);
        env_free(e);
    }
}

/*
 * Transfers come lazily: up to the time asked and no further, in order;
 * next_ns says when the next is due. Addresses wrap at high_addr to
 * base_addr; a loop moves them on by its START's loop_addr_incr_by;
 * same_as_addr writes each word's address.
 */
static void test_transfers(void)
{
    Pg381Config c = cfg_std(false);
    Env *e = env_new();
    Pg381Core *s = core_new(&c, &pcie_std, e);
    Pg381Instr p[] = { req(PG381_CMD_WRITE, 10, 0, 6),
                       req(PG381_CMD_READ, 3, 0, 6) };

    p[0].high = MEM_BASE + 4 * 64 - 1;          /* room for 4 */
    p[0].pattern = PG381_PAT_ADDR;
    p[0].loop_start = p[1].loop_end = true;
    p[0].loop_count = 2;
    p[0].loop_incr = 0x40;
    p[1].base = MEM_BASE + 0x1000;
    p[1].offset = 0x100;
    p[1].loop_incr = 0x1000;                    /* only START's counts */
    run(s, p, 2);
    /* 10 writes of 2 cycles (80 B frames on 64 B) from 0 */
    g_assert_cmpuint(pg381_next_ns(s), ==, T0);
    pg381_advance(s, T0 + 4 * 7 + 3);
    g_assert_cmpuint(e->xfers->len, ==, 4);
    g_assert_cmpuint(pg381_next_ns(s), ==, T0 + 4 * 8);
    pg381_advance(s, T0 + 4 * 8);
    g_assert_cmpuint(e->xfers->len, ==, 5);
    pg381_advance(s, T0 + 4 * 100000);
    g_assert_cmpuint(e->xfers->len, ==, 26);
    g_assert_cmpuint(pg381_next_ns(s), ==, UINT64_MAX);
    for (unsigned i = 0; i < 26; i++) {
        Xfer *x = &g_array_index(e->xfers, Xfer, i);
        unsigned it = i / 13, j = i % 13;

        if (j < 10) {
            /* from 0x40 the second time: 0x40, 0x80, 0xC0, then base */
            uint64_t first = 0x40 * it, off = (first / 64 + j) % 4 * 64;

            if (it && j >= 3) {
                off = (j - 3) % 4 * 64;
            }
            g_assert_true(x->write);
            g_assert_cmphex(x->addr, ==, MEM_BASE + off);
        } else {
            g_assert_false(x->write);
            g_assert_cmphex(x->addr, ==, MEM_BASE + 0x1100 + 0x40 * it +
                            64 * (j - 10));
        }
    }
    /* the read after the writes: at 20 (RQ free), 21, 22 */
    g_assert_cmpuint(g_array_index(e->xfers, Xfer, 10).t_ns, ==, T0 + 4 * 20);
    for (unsigned w = 0; w < 64; w += 4) {
        uint32_t word;

        memcpy(&word, e->data + 0x80 + w, 4);
        g_assert_cmphex(word, ==, (uint32_t)(MEM_BASE + 0x80 + w));
    }
    pg381_free(s);
    env_free(e);
}

/*
 * A run saved and loaded mid-way into another model goes on as the
 * unmigrated one: the same counters at every later instant, the same
 * transfers from then on.
 */
static void test_migration(void)
{
    Pg381Config c = cfg_std(false);
    Env *ea = env_new(), *eb = env_new();
    Pg381Core *a = core_new(&c, &pcie_std, ea), *b;
    Pg381Instr p[] = { req(PG381_CMD_READ, 300, 3, 6),
                       req(PG381_CMD_WAIT, 50, 0, 0),
                       req(PG381_CMD_WRITE, 40, 7, 6),
                       req(PG381_CMD_READ, 200, 0, 6) };
    Pg381Pcie other = pcie_std;
    size_t len;
    void *bytes;
    char *err;
    unsigned before;

    p[0].loop_start = p[2].loop_end = true;
    p[0].loop_count = 3;
    p[0].loop_incr = 0x2000;
    pg381_write(a, PG381_OUTSTND_RESP_LIMIT, 64, 0);
    pg381_write(a, PG381_CAPTURE_ENABLE, 1, 0);
    pg381_write(a, PG381_CAPTURE_END, 5000, 0);
    run(a, p, 4);
    g_assert_cmpuint(at(a, PG381_ARREQ, 1234), >, 0);
    bytes = pg381_save(a, &len);
    before = ea->xfers->len;
    other.mps = 128;
    b = core_new(&c, &other, eb);               /* the state brings its own */
    g_assert_null(pg381_load(b, bytes, len));
    for (uint64_t cyc = 1300; cyc < 12000; cyc += 777) {
        for (uint32_t off = PG381_STATUS_BASE; off < PG381_WINDOW; off += 4) {
            if (off == PG381_CAPTURE_ALL) {
                continue;
            }
            g_assert_cmphex(at(b, off, cyc), ==, at(a, off, cyc));
        }
    }
    g_assert_cmphex(at(a, PG381_FLOW_EMPTY, 12000) & PG381_FE_DONE, !=, 0);
    g_assert_cmpuint(eb->xfers->len, ==, ea->xfers->len - before);
    g_assert_cmpmem(eb->xfers->data, eb->xfers->len * sizeof(Xfer),
                    ea->xfers->data + before * sizeof(Xfer),
                    eb->xfers->len * sizeof(Xfer));
    /* refused: short, foreign, another card */
    err = pg381_load(b, bytes, len - 8);
    g_assert_nonnull(err);
    g_free(err);
    memset(bytes, 0, 8);
    err = pg381_load(b, bytes, len);
    g_assert_nonnull(strstr(err, "not one this model saved"));
    g_free(err);
    g_free(bytes);
    pg381_free(b);
    c.rc_bytes = 32;
    b = core_new(&c, &pcie_std, eb);
    bytes = pg381_save(a, &len);
    err = pg381_load(b, bytes, len);
    g_assert_nonnull(strstr(err, "another clock"));
    g_free(err);
    g_free(bytes);
    pg381_free(a);
    pg381_free(b);
    env_free(ea);
    env_free(eb);
}

/* ------------------------------------------------------------------ */
/* CSV                                                                */

#define CSV_HEADER "TG_NUM,cmd,txn_count/loop_count/wait_option," \
    "start_delay/loop_operation,loop_addr_incr_by,wdata_pattern," \
    "wdata_pat_value,data_integrity,dest_id,base_addr,high_addr," \
    "addr_incr_by,axi_addr_offset,axi_len,axi_size,axi_id,axi_burst," \
    "axi_lock,axi_cache,axi_prot,axi_qos,axi_region,axi_user,exp_resp\n"

static void test_csv(void)
{
    static const char text[] =
        "# Any line starting with # will be commented out,,,,,\n"
        CSV_HEADER
        ",WRITE,500,0,,constant,0xDEAD_BEEF,disabled,0x0,0x1000_0000,"
        "0x1FFF_FFFF,auto_incr,0x40,0x3,0x6,0x5,0x1,0x0,0x3,0x2,0x1,0x0,0x0,\r\n"
        "1,READ,7,0,,,,,,0x0,0xFFFF,auto_incr,0x0,0x0,0x6,0x0,INCR,,,,,,,\n"
        ",,,,,,,,,,,,,,,,,,,,,,,\n"
        "0,WAIT,all_wr_rd_resp,,,,,,,,,,,,,,,,,,,,,\n"
        "0,PHASE_DONE,,,,,,,,,,,,,,,,,,,,,,\n"
        ",START_LOOP,3,incr_original_addr,0x1000,,,,,,,,,,,,,,,,,,,\n"
        "0,READ,65536,12,,same_as_addr,0x0,enabled,0x0,0x0,0x7FFF_FFFF,"
        "0x1000,0x0,0x0,0x7,auto_incr,INCR,NORMAL,0x0,0x0,0x0,0x0,0x0,\n"
        ",WAIT,40,,,,,,,,,,,,,,,,,,,,,\n"
        ",END_LOOP,,,,,,,,,,,,,,,,,,,,,,\n";
    Pg381Instr prog[PG381_INSTRS];
    unsigned n = 0;

    g_assert_null(pg381_csv_parse(text, strlen(text), 0, prog, &n));
    g_assert_cmpuint(n, ==, 4);
    g_assert_cmpuint(prog[0].cmd, ==, PG381_CMD_WRITE);
    g_assert_cmpuint(prog[0].count, ==, 500);
    g_assert_cmphex(prog[0].pattern_value, ==, 0xDEADBEEF);
    g_assert_cmphex(prog[0].base, ==, 0x10000000);
    g_assert_cmphex(prog[0].high, ==, 0x1FFFFFFF);
    g_assert_true(prog[0].addr_auto);
    g_assert_cmphex(prog[0].offset, ==, 0x40);
    g_assert_cmpuint(prog[0].len, ==, 3);
    g_assert_cmpuint(prog[0].size, ==, 6);
    g_assert_cmphex(prog[0].id, ==, 5);
    g_assert_false(prog[0].id_incr);
    g_assert_cmpuint(prog[0].burst, ==, PG381_BURST_INCR);
    g_assert_cmpuint(prog[0].cache, ==, 3);
    g_assert_cmpuint(prog[0].prot, ==, 2);
    g_assert_cmpuint(prog[0].qos, ==, 1);
    g_assert_cmpuint(prog[1].cmd, ==, PG381_CMD_WAIT);
    g_assert_cmpuint(prog[1].wait, ==, PG381_WAIT_WR_RD);
    g_assert_true(prog[2].loop_start);
    g_assert_cmpuint(prog[2].loop_count, ==, 3);
    g_assert_cmphex(prog[2].loop_incr, ==, 0x1000);
    g_assert_cmpuint(prog[2].count, ==, 65536);
    g_assert_cmpuint(prog[2].start_delay, ==, 12);
    g_assert_cmpuint(prog[2].pattern, ==, PG381_PAT_ADDR);
    g_assert_true(prog[2].data_integrity);
    g_assert_false(prog[2].addr_auto);
    g_assert_cmphex(prog[2].incr, ==, 0x1000);
    g_assert_true(prog[2].id_incr);
    g_assert_cmpuint(prog[3].wait, ==, PG381_WAIT_CLOCKS);
    g_assert_cmpuint(prog[3].count, ==, 40);
    g_assert_true(prog[3].loop_end);
    g_assert_true(prog[3].last);
    g_assert_false(prog[2].last);
    /* TG 1 has its READ besides the lines for all */
    g_assert_null(pg381_csv_parse(text, strlen(text), 1, prog, &n));
    g_assert_cmpuint(n, ==, 3);
    g_assert_cmpuint(prog[1].cmd, ==, PG381_CMD_READ);
    g_assert_cmpuint(prog[1].count, ==, 7);
}

typedef struct CsvBad {
    const char *line;           /* after the header, line 2 */
    const char *error;
} CsvBad;

static void test_csv_errors(void)
{
    static const CsvBad bad[] = {
        { ",WRITE,5,0,,constant,0x0,,,1000,0xFFFF,auto_incr,0x0,0x0,0x6,"
          "0x0,0x1,,,,,,,", "line 2, column 10 (base_addr): '1000' has no "
          "0x prefix" },
        { ",WRITE,5,0,,constant,0x0,,,0x0,0xFFFF,auto_incr,0x0,0x100,0x6,"
          "0x0,0x1,,,,,,,", "line 2, column 14 (axi_len): 0x100 is above "
          "0xff" },
        { ",WRITE,5,0,,constant,0x0,,,0x0,0xFFFF,auto_incr,0x0,0xFF,0x6,"
          "0x0,0x1,,,,,,,", "line 2, column 14 (axi_len): 256 beats of 64 "
          "bytes" },
        { ",WRITE,INF,0,,constant,0x0,,,0x0,0xFFFF,auto_incr,0x0,0x0,0x6,"
          "0x0,0x1,,,,,,,", "line 2, column 3 (txn_count): 'INF'" },
        { ",WRITE,65537,0,,constant,0x0,,,0x0,0xFFFF,auto_incr,0x0,0x0,0x6,"
          "0x0,0x1,,,,,,,", "line 2, column 3 (txn_count): '65537' is "
          "outside 1 to 65536" },
        { ",READ,5,1250MBps,,,,,,0x0,0xFFFF,auto_incr,0x0,0x0,0x6,0x0,0x1,,,"
          ",,,,", "line 2, column 4 (start_delay): '1250MBps'" },
        { ",READ,5,0,,,,,,0x0,0xFFFF,0x1122,random_aligned,0x0,0x6,0x0,0x1,"
          ",,,,,,", "line 2, column 13 (axi_addr_offset): 'random_aligned': "
          "random addresses are not modelled" },
        { ",READ,5,0,,hammer,,,,0x0,0xFFFF,auto_incr,0x0,0x0,0x6,0x0,0x1,,,"
          ",,,,", "line 2, column 6 (wdata_pattern): 'hammer'" },
        { ",READ,5,0,,,,,,0x0,0xFFFF,auto_incr,0x0,0x0,0x8,0x0,0x1,,,,,,,",
          "line 2, column 15 (axi_size): 0x8 is above 0x7" },
        { ",READ,5,0,,,,,,0x0,0xFFFF,auto_incr,0x0,0x0,0x6,0x0,SPLIT,,,,,,,",
          "line 2, column 17 (axi_burst): 'SPLIT' has no 0x prefix" },
        { ",FLUSH,,,,,,,,,,,,,,,,,,,,,,", "line 2, column 2 (cmd): 'FLUSH'" },
        { ",WAIT,soon,,,,,,,,,,,,,,,,,,,,,", "line 2, column 3 (txn_count): "
          "'soon'" },
        { ",END_LOOP,,,,,,,,,,,,,,,,,,,,,,", "line 2, column 2 (cmd): "
          "END_LOOP without START_LOOP" },
        { ",START_LOOP,2,,,,,,,,,,,,,,,,,,,,,\n"
          ",START_LOOP,2,,,,,,,,,,,,,,,,,,,,,", "line 3, column 2 (cmd): a "
          "loop inside the loop of line 2" },
        { ",START_LOOP,2,,,,,,,,,,,,,,,,,,,,,\n"
          ",END_LOOP,,,,,,,,,,,,,,,,,,,,,,", "line 3, column 2 (cmd): the "
          "loop of line 2 holds no instruction" },
        { ",START_LOOP,2,,,,,,,,,,,,,,,,,,,,,\n"
          ",WAIT,5,,,,,,,,,,,,,,,,,,,,,", "line 2: START_LOOP without "
          "END_LOOP" },
        { ",START_LOOP,0,,,,,,,,,,,,,,,,,,,,,", "line 2, column 3 (txn_count)"
          ": '0' is outside 1 to 65535" },
        { ",WAIT,5,,,,,,,,,,,,,,,,,,,,,,,,x", "line 2, column 27: 'x' past "
          "the 24 columns" },
        { ",WRITE,5,0,,constant,0x0,,,0x0,0x1_0000_0000_0000_0000,auto_incr,"
          "0x0,0x0,0x6,0x0,0x1,,,,,,,", "line 2, column 11 (high_addr): "
          "'0x1_0000_0000_0000_0000' is wider than 64 bits" },
        { "9,WAIT,5,,,,,,,,,,,,,,,,,,,,,", "line 2: no instruction for TG 0" },
    };
    Pg381Instr prog[PG381_INSTRS];
    unsigned n;

    for (unsigned k = 0; k < G_N_ELEMENTS(bad); k++) {
        g_autofree char *text = g_strconcat(CSV_HEADER, bad[k].line, "\n",
                                            NULL);
        g_autofree char *err = pg381_csv_parse(text, strlen(text), 0, prog,
                                               &n);

        g_test_message("%s", bad[k].line);
        g_assert_nonnull(err);
        if (!g_str_has_prefix(err, bad[k].error)) {
            g_test_message("got: %s", err);
        }
        g_assert_true(g_str_has_prefix(err, bad[k].error));
    }
    {
        /* the header, and the instruction RAM's 512 */
        g_autofree char *err = pg381_csv_parse("a,b\n", 4, 0, prog, &n);
        GString *big = g_string_new(CSV_HEADER);
        g_autofree char *err2 = NULL;

        g_assert_true(g_str_has_prefix(err, "line 1, column 1 (TG_NUM): the "
                                       "header names 'a'"));
        for (unsigned k = 0; k < 513; k++) {
            g_string_append(big, ",WAIT,5,,,,,,,,,,,,,,,,,,,,,\n");
        }
        err2 = pg381_csv_parse(big->str, big->len, 0, prog, &n);
        g_assert_true(g_str_has_prefix(err2, "line 514: more than 512 "
                                       "instructions"));
        g_string_free(big, TRUE);
    }
}

/* A parsed CSV runs as the same program loaded by hand */
static void test_csv_runs(void)
{
    static const char text[] = CSV_HEADER
        ",READ,100,0,,,,,,0x1000_0000,0x1FFF_FFFF,auto_incr,0x0,0x3,0x6,"
        "0x0,0x1,,,,,,,\n";
    Pg381Config c = cfg_std(false);
    Env *e = env_new();
    Pg381Core *s = core_new(&c, &pcie_std, e);
    Pg381Instr prog[PG381_INSTRS];
    unsigned n;

    g_assert_null(pg381_csv_parse(text, sizeof(text) - 1, 0, prog, &n));
    pg381_load_program(s, prog, n, 0);
    pg381_write(s, PG381_START, 1, T0);
    g_assert_cmpuint(at(s, PG381_RAVG, 2000), ==, 100 * 255 + 4 * 4950);
    pg381_free(s);
    env_free(e);
}

static void test_config(void)
{
    Pg381Config c = cfg_std(false);
    Pg381Pcie p = pcie_std;
    char *err;

    g_assert_null(pg381_config_check(&c));
    c.clock_hz = 10;
    err = pg381_config_check(&c);
    g_assert_nonnull(strstr(err, "clock"));
    g_free(err);
    c = cfg_std(false);
    c.rc_bytes = 0;
    err = pg381_config_check(&c);
    g_assert_nonnull(err);
    g_free(err);
    g_assert_null(pg381_pcie_check(&p));
    p.mps = 192;
    err = pg381_pcie_check(&p);
    g_assert_nonnull(strstr(err, "MPS"));
    g_free(err);
    p = pcie_std;
    p.rcb = 32;
    err = pg381_pcie_check(&p);
    g_assert_nonnull(strstr(err, "RCB"));
    g_free(err);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/pg381/registers", test_registers);
    g_test_add_func("/pg381/config", test_config);
    g_test_add_func("/pg381/read-unsaturated", test_read_unsaturated);
    g_test_add_func("/pg381/read-saturated", test_read_saturated);
    g_test_add_func("/pg381/write-steady", test_write_steady);
    g_test_add_func("/pg381/limits-in-and-out-of-order",
                    test_limits_in_and_out_of_order);
    g_test_add_func("/pg381/out-of-order-in-all", test_out_of_order_in_all);
    g_test_add_func("/pg381/unequal-splits", test_unequal_splits);
    g_test_add_func("/pg381/completion-split", test_completion_split);
    g_test_add_func("/pg381/against-reference", test_against_reference);
    g_test_add_func("/pg381/soft-reset-and-runs", test_soft_reset_and_runs);
    g_test_add_func("/pg381/capture", test_capture);
    g_test_add_func("/pg381/bad-programs", test_bad_programs);
    g_test_add_func("/pg381/transfers", test_transfers);
    g_test_add_func("/pg381/migration", test_migration);
    g_test_add_func("/pg381/csv", test_csv);
    g_test_add_func("/pg381/csv-errors", test_csv_errors);
    g_test_add_func("/pg381/csv-runs", test_csv_runs);
    return g_test_run();
}
