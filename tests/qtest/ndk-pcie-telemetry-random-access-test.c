/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest of ndk-pcie-telemetry: seeded random accesses of every kind, one
 * case for each traffic generator (see the comment of the section below
 * for what must hold whatever happened), and one for the RAS DES
 * capability of a dwc-pcie-root-port with a card below it; further cases
 * for the flit capabilities, the HiSilicon PTT, the DesignWare xData and
 * the card's PG381 generator.
 *
 * Environment (besides QTEST_QEMU_BINARY):
 *   NDK_QTEST_SEED     seed of the cases (decimal or 0x hex; default
 *                      fixed); each case prints the seed it used.
 *   PTM_SAMPLE_PLUGIN  the sample plugin for the plugin case, which skips
 *                      without it (run-qtest.sh sets it).
 * The replay and scenario cases write their files into a temporary
 * directory of their own.
 */

#include "ndk-common.h"

/* ------------------------------------------------------------------ */
/* Seeded random accesses of every kind, for every generator          */

/*
 * Each case makes a card with a random block offset and geometry, driven
 * by one generator, and throws a few thousand random accesses at BAR0
 * (1, 2, 4 and 8 bytes at any offset, inside and outside the block),
 * random COMMAND values, random configuration writes (Device Control
 * among them), live changes of the generator and clock steps at it, then
 * resets the machine while a SNAPSHOT keeps the block BUSY, and at last
 * unplugs a card (ACPI hotplug on pc) while traffic runs. What must hold
 * whatever happened: bytes outside the block read 0, MAGIC and VERSION
 * read back at every alias, counter bits above CNT_WIDTH and entries past
 * the last endpoint read 0, BUSY falls within the documented time,
 * counters never decrease from one SNAPSHOT to the next without a CLEAR
 * (modulo 2^CNT_WIDTH; a card starts from zeros) and gain at most what
 * the elapsed cycles allow, and QEMU lives on. NDK_QTEST_SEED (decimal or
 * 0x hex) replays a run; the seed in use is printed.
 */
#define STORM_SEED              0x4E444B31u
#define STORM_ROUNDS            6
#define STORM_OPS               450
#define STORM_UNPLUG_OPS        200
#define STORM_MAX_ENTRIES       256
#define STORM_BLOCK_SIZE        0x10000u
/* ACPI PCI hotplug eject register of -machine pc (as libqos/pci-pc.c) */
#define PC_ACPI_PCIHP_EJ        0xae08

typedef enum {
    GEN_IDLE, GEN_PATTERN, GEN_PTC, GEN_RANDOM, GEN_REPLAY, GEN_SCENARIO,
    GEN_PLUGIN, GEN_COUNT
} StormGen;

static const char *const storm_gen_name[GEN_COUNT] = {
    "idle", "pattern", "ptc", "random", "replay", "scenario", "plugin",
};

/* A card: its geometry and clocks, and the generator that drives it */
typedef struct StormCard {
    StormGen gen;
    unsigned endpoints, ports, item, regions[4], items[4];
    unsigned cnt_width, drain;
    uint64_t pcie_hz, dma_hz, mi_hz;
    uint32_t offset;
    uint64_t bar_size;
    char *props;                /* the device's properties */
    char *object;               /* -object argument, shell-quoted */
} StormCard;

typedef struct Storm {
    Ndk n;
    GRand *rng;
    const StormCard *card;
    unsigned entries;           /* ENTRIES */
    unsigned used;              /* entries of the card's endpoints */
    uint64_t max_inc;           /* most a counter gains in a probe cycle */
    uint8_t exp;                /* PCIe capability, 0 on a PCI bus */
    bool ecam;                  /* q35: extended config space via ECAM */
    bool mem;                   /* memory decoding enabled */
    bool cleared;               /* a CLEAR may have come since base */
    int64_t busy_by;            /* BUSY must read 0 from then on */
    uint64_t base[STORM_MAX_ENTRIES];
    int64_t base_t;
    unsigned accesses;
} Storm;

static uint32_t storm_seed(void)
{
    const char *env = g_getenv("NDK_QTEST_SEED");
    uint64_t v;
    char *end;

    if (!env || !*env) {
        return STORM_SEED;
    }
    v = g_ascii_strtoull(env, &end, 0);
    g_assert_true(*end == 0 && v <= UINT32_MAX);
    return v;
}

static uint32_t rnd(GRand *r, uint32_t lo, uint32_t hi)
{
    return lo + g_rand_int_range(r, 0, hi - lo + 1);
}

static unsigned clog2u(unsigned x)
{
    return x <= 1 ? 0 : 32 - clz32(x - 1);
}

/* A short text trace for any geometry: region 0 of port 0, with resets */
static const char storm_trace[] =
    "# written by the QTest\n"
    "pcie0 cycles=3 reset=1\n"
    "pcie0 rq.src=1 rq.dst=1 rq.sof=1 rq.eof=1 rq.pos0=0 tags=1\n"
    "pcie0 rc.src=1 rc.sof=1 brake=0x21 stfifo=0\n"
    "pcie0 rc.src=1 rc.dst=1 rc.sof=1 rc.eof=1 rc.pos0=0 link=0\n"
    "pcie0 cycles=40 tags=0 brake=0x3f\n"
    "dma0 cycles=2 reset=1\n"
    "dma0 up.src=1 up.dst=1 up.sof=1 up.eof=1 up.pos0=0 up.vld=1 "
    "up.msrc=1 up.mdst=1\n"
    "dma0 down.src=1 down.sof=1 down.vld=1 down.msrc=1\n"
    "dma0 down.src=1 down.dst=1 down.sof=1 down.eof=1 down.pos0=0 "
    "down.vld=1 down.msrc=1 down.mdst=1\n"
    "dma0 cycles=30\n"
    "pcie1 rq.src=1 rq.dst=1 rq.sof=1\n"
    "pcie1 cycles=7 reset=1\n"
    "dma1 cycles=5 up.src=1 up.dst=1 up.sof=1 up.eof=1\n";

static const char *const storm_ends[] = { "idle", "hold", "loop" };

/*
 * Values drawn one after the other (not as arguments of one call, whose
 * order C leaves open): v[i] from lim[i][0] to lim[i][1].
 */
static void rnd_n(GRand *r, uint32_t *v, const uint32_t (*lim)[2],
                  unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        v[i] = rnd(r, lim[i][0], lim[i][1]);
    }
}

static char *storm_object(GRand *r, StormGen g, const StormCard *c,
                          const char *dir)
{
    const char *so = g_getenv("PTM_SAMPLE_PLUGIN");
    g_autofree char *file = NULL, *text = NULL, *raw = NULL;
    uint32_t v[16], s1, s2;

    switch (g) {
    case GEN_IDLE: {
        const uint32_t lim[][2] = { { 0, 3 }, { 0, 2048 }, { 0, 65536 } };

        rnd_n(r, v, lim, G_N_ELEMENTS(lim));
        raw = g_strdup_printf("telemetry-traffic-idle,id=t0,link-up=%s,"
                              "tags-free=%d,stfifo-free=%d",
                              v[0] ? "on" : "off", (int)v[1] - 1,
                              (int)v[2] - 1);
        break;
    }
    case GEN_PATTERN: {
        const uint32_t lim[][2] = {
            { 0, 600 }, { 0, 8 }, { 0, 3 }, { 0, 600 }, { 0, 8 },
            { 0, 600 }, { 0, 3 }, { 0, 600 }, { 0, 8 },
            { 1, c->regions[2] }, { 1, c->regions[3] }, { 0, 0x3F },
            { 0, 100 }, { 1, 100 }, { 0, 300 }, { 0, 3000 },
        };

        rnd_n(r, v, lim, G_N_ELEMENTS(lim));
        raw = g_strdup_printf(
            "telemetry-traffic-pattern,id=t0,rq-frame-bytes=%u,rq-gap=%u,"
            "rq-stall=%u,rc-frame-bytes=%u,rc-gap=%u,up-frame-bytes=%u,"
            "up-stall=%u,down-frame-bytes=%u,down-gap=%u,up-mvb-items=%u,"
            "down-mvb-items=%u,brake=%u,brake-duty=%u,brake-period=%u,"
            "tags-free=%d,stfifo-free=%d", v[0], v[1], v[2], v[3], v[4],
            v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13],
            (int)v[14] - 1, (int)v[15] - 1);
        break;
    }
    case GEN_PTC: {
        const uint32_t lim[][2] = {
            { 10, 100 }, { 0, 100 }, { 0, 64 }, { 100, 5000 }, { 0, 90 },
            { 0, 10 }, { 0, 20 }, { 0, 1 }, { 1, 32 },
        };

        s1 = g_rand_int(r);
        rnd_n(r, v, lim, G_N_ELEMENTS(lim));
        raw = g_strdup_printf(
            "telemetry-traffic-ptc,id=t0,seed=%u,load=%u,read-percent=%u,"
            "tags=%u,latency-ns=%u,jitter-percent=%u,rq-stall=%u,"
            "down-stall=%u,cplh-credits=%u", s1, v[0], v[1], v[2], v[3],
            v[4], v[5], v[6], v[7] ? 0 : v[8]);
        break;
    }
    case GEN_RANDOM: {
        const uint32_t lim[][2] = {
            { 0, 100 }, { 0, 100 }, { 0, 100 }, { 0, 100 }, { 64, 2048 },
            { 1, 512 }, { 0, 30 }, { 0, 60 }, { 0, 100 }, { 0, 300 },
        };

        s1 = g_rand_int(r);
        rnd_n(r, v, lim, G_N_ELEMENTS(lim));
        raw = g_strdup_printf(
            "telemetry-traffic-random,id=t0,seed=%u,rq-load=%u,rc-load=%u,"
            "up-load=%u,down-load=%u,rq-max-bytes=%u,up-min-bytes=%u,"
            "down-stall=%u,brake-percent=%u,up-read-percent=%u,tags-free=%d",
            s1, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8],
            (int)v[9] - 1);
        break;
    }
    case GEN_REPLAY:
        file = write_tmp(dir, "storm.trace", storm_trace);
        raw = g_strdup_printf("telemetry-traffic-replay,id=t0,file=%s,end=%s",
                              file, storm_ends[rnd(r, 0, 2)]);
        break;
    case GEN_SCENARIO: {
        const uint32_t lim[][2] = {
            { 1, 40 }, { 1, 90 }, { 1, 600 }, { 1, 600 }, { 0, 5 },
            { 0, 0x3F }, { 1, 120 }, { 1, 150 }, { 0, 3 },
        };

        rnd_n(r, v, lim, G_N_ELEMENTS(lim));
        s1 = g_rand_int(r);
        s2 = g_rand_int(r);
        text = g_strdup_printf(
            "# written by the QTest\n"
            "[phase down]\nmodel=idle\nduration=%uus\nlink-up=false\n\n"
            "[phase burst]\nmodel=pattern\nduration=%uus\n"
            "rq-frame-bytes=%u\nup-frame-bytes=%u\nup-gap=%u\nbrake=%u\n"
            "reset=dma\n\n"
            "[phase random]\nmodel=random\nduration=%uus\nseed=%u\n"
            "brake-percent=20\n\n"
            "[phase ptc]\nmodel=ptc\nduration=%uus\nseed=%u\nreset=pcie0\n",
            v[0], v[1], v[2], v[3], v[4], v[5], v[6], s1, v[7], s2);
        file = write_tmp(dir, "storm.ini", text);
        raw = g_strdup_printf("telemetry-traffic-scenario,id=t0,file=%s,"
                              "loop=%s", file, v[8] ? "on" : "off");
        break;
    }
    case GEN_PLUGIN: {
        /* a frame is one word of RQ and of UP */
        const uint32_t word = MIN(c->regions[0] * c->items[0],
                                  c->regions[2] * c->items[2]) * c->item;
        const uint32_t lim[][2] = {
            { 1, 50 }, { 0, 50 }, { 1, word }, { 0, 2047 }, { 0, 100000 },
            { 1, 5000 },
        };

        rnd_n(r, v, lim, G_N_ELEMENTS(lim));
        raw = g_strdup_printf(
            "telemetry-traffic-plugin,id=t0,path=%s,args=burst=%u,,idle=%u,,"
            "bytes=%u,,tags=%u,,reset=%u,,hold=%u", so, v[0], v[1], v[2],
            v[3], v[4], v[5]);
        break;
    }
    default:
        g_assert_not_reached();
    }
    return g_shell_quote(raw);
}

/*
 * A random card: 1 or 2 endpoints, 1 or 2 DMA ports, 1 to 4 regions of
 * 1 to 16 items (sometimes up to 256), clocks that also suit ptc (a PCIe
 * clock of a multiple of 4 MHz, a DMA clock of j / 256 of it with j <=
 * 256), a drain period that keeps the accumulator's load at most 0.5, and
 * a block offset that keeps BAR0 within 16 MiB (test_block_offset has the
 * largest).
 */
static void storm_card(StormCard *c, GRand *r, StormGen g, const char *dir)
{
    static const unsigned item_bytes[] = { 1, 2, 3, 4, 8, 16 };
    static const char *const fpga[] = {
        "AGILEX", "STRATIX10", "ULTRASCALE", "7SERIES",
    };
    static const uint32_t lim[][2] = {
        { 1, 2047 }, { 1, 65535 }, { 0, 5 }, { 0, 1 }, { 0, 1 }, { 0, 3 },
        { 0, 4 },
    };
    unsigned rp, rd, pch, dch, gmax, min_drain, bytes[4];
    uint32_t v[G_N_ELEMENTS(lim)];
    double load;

    memset(c, 0, sizeof(*c));
    c->gen = g;
    c->endpoints = rnd(r, 1, 2);
    c->ports = rnd(r, 1, 2);
    c->item = item_bytes[rnd(r, 0, G_N_ELEMENTS(item_bytes) - 1)];
    for (unsigned k = 0; k < 4; k++) {
        c->regions[k] = rnd(r, 1, 4);
        c->items[k] = rnd(r, 0, 5) ? rnd(r, 1, 16) : rnd(r, 1, 256);
        bytes[k] = c->items[k] * c->item;
    }
    rp = MAX(c->regions[0], c->regions[1]);
    rd = MAX(c->regions[2], c->regions[3]);
    pch = 1 + 2 * (6 + rp) + 14;
    dch = 1 + 2 * c->ports * (6 + rd);
    c->cnt_width = rnd(r, 33, 64);
    c->pcie_hz = 4000000ull * rnd(r, 25, 125);
    c->dma_hz = c->pcie_hz * rnd(r, 64, 256) / 256;
    c->mi_hz = 1000000ull * rnd(r, 50, 250);
    gmax = (MAX(pch, dch) + 7) / 8;
    min_drain = 8 * (gmax + 1) + 1;
    c->drain = 256;
    while (c->drain < min_drain) {
        c->drain *= 2;
    }
    c->drain <<= rnd(r, 0, 3);
    load = c->endpoints * 3.0 * (pch * (double)c->pcie_hz +
                                 dch * (double)c->dma_hz) /
           (c->drain * (double)c->mi_hz);
    while (load > 0.5 && c->drain < 32768) {
        c->drain *= 2;
        load /= 2;
    }
    switch (rnd(r, 0, 3)) {
    case 0:
        c->offset = 0;
        break;
    case 1:
        c->offset = 0x1000 * rnd(r, 1, 15);
        break;
    case 2:
        c->offset = 0x1000 * rnd(r, 16, 0xFF);
        break;
    default:
        c->offset = 0x10000 * rnd(r, 0x10, 0xFF);
        break;
    }
    c->bar_size = pow2ceil((uint64_t)c->offset + STORM_BLOCK_SIZE);
    rnd_n(r, v, lim, G_N_ELEMENTS(lim));
    c->props = g_strdup_printf(
        "pcie-endpoints=%u,dma-ports=%u,mfb-item-bytes=%u,"
        "pcie-rq-mfb-regions=%u,pcie-rc-mfb-regions=%u,"
        "dma-up-mfb-regions=%u,dma-down-mfb-regions=%u,"
        "pcie-rq-mfb-region-bytes=%u,pcie-rc-mfb-region-bytes=%u,"
        "dma-up-mfb-region-bytes=%u,dma-down-mfb-region-bytes=%u,"
        "pcie-eof-pos-width=%u,dma-eof-pos-width=%u,cnt-width=%u,"
        "drain-period=%u,tag-capacity=%u,stfifo-capacity=%u,"
        "pcie-clk-freq=%" PRIu64 ",dma-clk-freq=%" PRIu64 ","
        "mi-clk-freq=%" PRIu64 ",block-offset=0x%x,max-payload-size=%u,"
        "ext-tag=%s,tag-10bit=%s,device=%s,devtree=%s",
        c->endpoints, c->ports, c->item, c->regions[0], c->regions[1],
        c->regions[2], c->regions[3], bytes[0], bytes[1], bytes[2], bytes[3],
        clog2u(MAX(c->items[0], c->items[1])),
        clog2u(MAX(c->items[2], c->items[3])), c->cnt_width, c->drain,
        v[0], v[1], c->pcie_hz, c->dma_hz, c->mi_hz, c->offset, 128u << v[2],
        v[3] ? "on" : "off", v[4] ? "on" : "off", fpga[v[5]],
        v[6] ? "on" : "off");
    c->object = storm_object(r, g, c, dir);
}

static void storm_card_free(StormCard *c)
{
    g_free(c->props);
    g_free(c->object);
}

static int64_t storm_mi_ns(const Storm *s, uint64_t c)
{
    return cycle_ns(c, s->card->mi_hz);
}

static uint64_t storm_mi_now(const Storm *s)
{
    return cycle_at(s->n.t->now, s->card->mi_hz);
}

/* the BUSY bound of a sweep requested in MI cycle w: running + pending */
static void storm_busy_after(Storm *s, uint64_t w, uint64_t cycles)
{
    s->busy_by = MAX(s->busy_by, storm_mi_ns(s, w + cycles + 1));
}

static uint64_t storm_read(Storm *s, uint64_t o, unsigned size)
{
    uint64_t a = s->n.t->bar.addr + o;

    s->accesses++;
    switch (size) {
    case 1:
        return qtest_readb(s->n.t->qts, a);
    case 2:
        return qtest_readw(s->n.t->qts, a);
    case 4:
        return qtest_readl(s->n.t->qts, a);
    default:
        return qtest_readq(s->n.t->qts, a);
    }
}

static void storm_write(Storm *s, uint64_t o, unsigned size, uint64_t v)
{
    uint64_t a = s->n.t->bar.addr + o;

    s->accesses++;
    switch (size) {
    case 1:
        qtest_writeb(s->n.t->qts, a, v);
        break;
    case 2:
        qtest_writew(s->n.t->qts, a, v);
        break;
    case 4:
        qtest_writel(s->n.t->qts, a, v);
        break;
    default:
        qtest_writeq(s->n.t->qts, a, v);
        break;
    }
}

/* A byte read at BAR0 offset o: what it must be, as far as known */
static void storm_check_byte(Storm *s, uint64_t o, uint8_t b)
{
    const StormCard *c = s->card;
    uint32_t rel, e, j;

    if (o < c->offset || o >= c->offset + STORM_BLOCK_SIZE) {
        if (b) {
            g_test_message("BAR0 + 0x%" PRIx64 " (outside the block at "
                           "0x%x) reads 0x%02x", o, c->offset, b);
        }
        g_assert_cmphex(b, ==, 0);
        return;
    }
    rel = o - c->offset;
    if (rel < PTL_CNT_BASE_VALUE) {
        /* below the counters only bits 7..2 decode */
        if ((rel & 0xFC) == PTL_REG_MAGIC) {
            g_assert_cmphex(b, ==, (PTL_MAGIC >> 8 * (rel & 3)) & 0xFF);
        } else if ((rel & 0xFC) == PTL_REG_VERSION) {
            g_assert_cmphex(b, ==, (PTL_VERSION_VALUE >> 8 * (rel & 3)) & 0xFF);
        }
        return;
    }
    e = ((rel - PTL_CNT_BASE_VALUE) >> 3) & (s->entries - 1);
    j = rel & 7;
    if (e >= s->used) {
        g_assert_cmphex(b, ==, 0);
    } else if (8 * j + 8 > c->cnt_width) {
        /* counter bits from CNT_WIDTH up */
        unsigned keep = c->cnt_width > 8 * j ? c->cnt_width - 8 * j : 0;

        g_assert_cmphex(b >> keep, ==, 0);
    }
}

/* An offset in BAR0 for an access of size bytes, mostly where it matters */
static uint64_t storm_offset(Storm *s, unsigned size)
{
    const StormCard *c = s->card;
    GRand *r = s->rng;
    int64_t o;
    unsigned k = rnd(r, 0, 99);

    if (k < 35) {
        /* the registers, sometimes at an alias */
        o = c->offset + rnd(r, 0, 0xFF);
        if (!rnd(r, 0, 3)) {
            o += 0x100 * rnd(r, 1, 0x7F);
        }
    } else if (k < 60) {
        /* the counters and their first alias */
        o = c->offset + PTL_CNT_BASE_VALUE + rnd(r, 0, 16 * s->entries - 1);
    } else if (k < 75) {
        o = c->offset + rnd(r, 0, STORM_BLOCK_SIZE - 1);
    } else if (k < 88) {
        /* across either edge of the block */
        o = (int64_t)c->offset + (rnd(r, 0, 1) ? STORM_BLOCK_SIZE : 0);
        o += (int64_t)rnd(r, 0, 32) - 16;
    } else {
        o = (int64_t)(g_rand_double(r) * c->bar_size);
    }
    return MAX(0, MIN(o, (int64_t)c->bar_size - (int64_t)size));
}

static void storm_bar_read(Storm *s)
{
    unsigned size = 1u << rnd(s->rng, 0, 3);
    uint64_t o = storm_offset(s, size), v = storm_read(s, o, size);

    /* with memory decoding off the BAR is not there */
    if (!s->mem) {
        return;
    }
    for (unsigned i = 0; i < size && !g_test_failed(); i++) {
        storm_check_byte(s, o + i, v >> 8 * i);
        if (g_test_failed()) {
            g_test_message("a read of %u bytes at BAR0 + 0x%" PRIx64
                           " at %" PRId64 " ns: 0x%" PRIx64, size, o,
                           s->n.t->now, v);
        }
    }
}

/*
 * The bytes of a write that land in lane 0 of a COMMAND alias: a command
 * (SNAPSHOT or CLEAR) moves the BUSY bound, a CLEAR the counters' base;
 * without may_clear the CLEAR bits are taken out.
 */
static uint64_t storm_note_write(Storm *s, uint64_t o, unsigned size,
                                 uint64_t v, bool may_clear)
{
    const StormCard *c = s->card;
    unsigned e = s->entries;

    for (unsigned i = 0; i < size; i++) {
        uint64_t a = o + i;
        uint32_t rel = a - c->offset;
        uint8_t b;

        if (a < c->offset || a >= c->offset + STORM_BLOCK_SIZE ||
            rel >= PTL_CNT_BASE_VALUE || (rel & 0xFF) != PTL_REG_COMMAND) {
            continue;
        }
        if (!may_clear) {
            v &= ~((uint64_t)PTL_CMD_CLEAR << 8 * i);
        }
        b = v >> 8 * i;
        if (b & (PTL_CMD_SNAPSHOT | PTL_CMD_CLEAR)) {
            /* a sweep may run (both: 2 + 4 E) and this one wait behind */
            storm_busy_after(s, storm_mi_now(s), 2 * (4 * e + 8) + 16);
        }
        if (b & PTL_CMD_CLEAR) {
            s->cleared = true;
        }
    }
    return v;
}

static void storm_bar_write(Storm *s, bool may_clear)
{
    unsigned size = 1u << rnd(s->rng, 0, 3);
    uint64_t o = storm_offset(s, size);
    uint64_t v = g_rand_int(s->rng);

    v |= (uint64_t)g_rand_int(s->rng) << 32;
    storm_write(s, o, size, storm_note_write(s, o, size, v, may_clear));
}

/* A random value for COMMAND: mostly one or two commands, some noise */
static void storm_command(Storm *s, bool may_clear)
{
    uint64_t o = s->card->offset + PTL_REG_COMMAND;
    uint32_t v = rnd(s->rng, 0, 3) ? rnd(s->rng, 0, 0xF) : g_rand_int(s->rng);

    storm_write(s, o, 4, storm_note_write(s, o, 4, v, may_clear));
}

static void storm_mem_sync(Storm *s)
{
    s->mem = qpci_config_readw(s->n.t->dev, PCI_COMMAND) & PCI_COMMAND_MEMORY;
}

/*
 * A random configuration write: COMMAND, Device Control, Device Control 2,
 * Link Control, any other offset of the first 256 bytes but BAR0's, and
 * on q35 the extended space (the device tree's index and data word).
 */
static void storm_config(Storm *s)
{
    QPCIDevice *d = s->n.t->dev;
    GRand *r = s->rng;
    unsigned k = rnd(r, 0, 9), size;
    uint32_t off, v = g_rand_int(r);
    uint64_t a;

    if (s->exp && k <= 2) {
        qpci_config_writew(d, s->exp + PCI_EXP_DEVCTL, v);
    } else if (s->exp && k == 3) {
        qpci_config_writew(d, s->exp + PCI_EXP_DEVCTL2, v);
    } else if (s->exp && k == 4) {
        qpci_config_writew(d, s->exp + PCI_EXP_LNKCTL, v);
    } else if (k == 5) {
        qpci_config_writew(d, PCI_COMMAND, v);
    } else if (s->ecam && k >= 8) {
        /* the VSEC's index (past the end too) and data word, or anywhere */
        if (k == 8) {
            qndk_ext_config_writel(s->n.t,
                                   PTL_QEMU_VSEC_OFFSET + PTL_VSEC_REG_INDEX,
                                   rnd(r, 0, 3) ? rnd(r, 0, 600) : v);
            qndk_ext_config_readl(s->n.t,
                                  PTL_QEMU_VSEC_OFFSET + PTL_VSEC_REG_DATA);
        } else {
            size = 1u << rnd(r, 0, 2);
            off = rnd(r, 0x100, 0xFFF);
            a = s->n.t->ecam + ROUND_DOWN(off, size);
            if (rnd(r, 0, 1)) {
                qtest_readl(s->n.t->qts, a & ~3ull);
            } else if (size == 1) {
                qtest_writeb(s->n.t->qts, a, v);
            } else if (size == 2) {
                qtest_writew(s->n.t->qts, a, v);
            } else {
                qtest_writel(s->n.t->qts, a, v);
            }
        }
    } else {
        size = 1u << rnd(r, 0, 2);
        off = rnd(r, 0, 0xFF);
        off = ROUND_DOWN(off, size);
        if (off < PCI_BASE_ADDRESS_1 && off + size > PCI_BASE_ADDRESS_0) {
            off = PCI_INTERRUPT_LINE;
            size = 1;
        }
        if (rnd(r, 0, 1)) {
            qpci_config_readl(d, off & ~3u);
        } else if (size == 1) {
            qpci_config_writeb(d, off, v);
        } else if (size == 2) {
            qpci_config_writew(d, off, v);
        } else {
            qpci_config_writel(d, off, v);
        }
    }
    storm_mem_sync(s);
}

/* A live change of one of the generator's parameters (qom-set) */
static void storm_qom_set(Storm *s)
{
    GRand *r = s->rng;
    g_autofree char *val = NULL, *out = NULL;
    const char *prop;
    unsigned k;

    switch (s->card->gen) {
    case GEN_IDLE:
        prop = "link-up";
        val = g_strdup(rnd(r, 0, 1) ? "on" : "off");
        break;
    case GEN_PATTERN:
        prop = "rq-frame-bytes";
        val = g_strdup_printf("%u", rnd(r, 0, 600));
        break;
    case GEN_PTC:
        prop = "load";
        val = g_strdup_printf("%u", rnd(r, 10, 100));
        break;
    case GEN_RANDOM:
        prop = "seed";
        val = g_strdup_printf("%u", g_rand_int(r));
        break;
    case GEN_REPLAY:
        prop = "end";
        val = g_strdup(storm_ends[rnd(r, 0, 2)]);
        break;
    case GEN_SCENARIO:
        prop = "loop";
        val = g_strdup(rnd(r, 0, 1) ? "on" : "off");
        break;
    default:
        prop = "args";
        k = rnd(r, 1, 50);
        val = g_strdup_printf("burst=%u,idle=%u,bytes=1", k, rnd(r, 0, 50));
        break;
    }
    out = qtest_hmp(s->n.t->qts, "qom-set /objects/t0 %s %s", prop, val);
    if (*out) {
        g_test_message("qom-set %s %s: %s", prop, val, out);
    }
    g_assert_cmpstr(out, ==, "");
}

static void storm_step(Storm *s)
{
    unsigned k = rnd(s->rng, 0, 99);

    step(&s->n, k < 50 ? rnd(s->rng, 1, 1000) :
                k < 85 ? rnd(s->rng, 1000, 20000) :
                         rnd(s->rng, 20000, 300000));
}

/* ops random operations; the memory decoding is back on at the end */
static void storm_round(Storm *s, unsigned ops, bool may_clear)
{
    for (unsigned i = 0; i < ops && !g_test_failed(); i++) {
        unsigned k = rnd(s->rng, 0, 99);

        if (k < 58) {
            storm_bar_read(s);
        } else if (k < 76) {
            storm_bar_write(s, may_clear);
        } else if (k < 81) {
            storm_command(s, may_clear);
        } else if (k < 89) {
            storm_config(s);
        } else if (k < 91) {
            storm_qom_set(s);
        } else {
            storm_step(s);
        }
    }
    qpci_device_enable(s->n.t->dev);
    s->mem = true;
}

/* Poll STATUS every MI cycle until BUSY falls; by busy_by at the latest */
static void storm_wait_idle(Storm *s, const char *what)
{
    int64_t period = storm_mi_ns(s, 1);

    while (storm_read(s, s->card->offset + PTL_REG_STATUS, 4) &
           PTL_STATUS_BUSY) {
        if (s->n.t->now >= s->busy_by) {
            g_test_message("%s: BUSY still set at %" PRId64 " ns, bound %"
                           PRId64 " ns", what, s->n.t->now, s->busy_by);
            g_assert_cmpint(s->n.t->now, <, s->busy_by);
            return;
        }
        step(&s->n, period);
    }
}

/*
 * A SNAPSHOT, checked: BUSY from w + 2, down by w + 6 + 2 ENTRIES; then
 * every counter against the previous snapshot (or the zeros of the new
 * card): never less without a CLEAR in between (modulo 2^CNT_WIDTH), at
 * most max_inc a cycle more over the time between them plus 4 windows.
 */
static void storm_checkpoint(Storm *s, const char *what)
{
    const StormCard *c = s->card;
    uint64_t cur[STORM_MAX_ENTRIES], mask, w, cycles, bound;
    unsigned bad = 0;
    int64_t t;

    storm_wait_idle(s, what);
    storm_write(s, c->offset + PTL_REG_READ_SEL, 4, 0);
    t = s->n.t->now;
    w = storm_mi_now(s);
    storm_write(s, c->offset + PTL_REG_COMMAND, 4, PTL_CMD_SNAPSHOT);
    storm_busy_after(s, w, 6 + 2 * s->entries);
    step_to(&s->n, storm_mi_ns(s, w + 2));
    g_assert_cmphex(storm_read(s, c->offset + PTL_REG_STATUS, 4) &
                    PTL_STATUS_BUSY, ==, PTL_STATUS_BUSY);
    storm_wait_idle(s, what);

    mask = c->cnt_width == 64 ? ~0ull : (1ull << c->cnt_width) - 1;
    cycles = cycle_at(t - s->base_t, MAX(c->pcie_hz, c->dma_hz)) +
             4ull * c->drain + 64;
    bound = cycles > mask / s->max_inc ? mask : cycles * s->max_inc;
    for (unsigned e = 0; e < s->used; e++) {
        uint64_t d;

        cur[e] = storm_read(s, c->offset + CNT(e), 8);
        g_assert_cmphex(cur[e] & ~mask, ==, 0);
        d = (cur[e] - s->base[e]) & mask;
        if (!s->cleared && d > bound && bad++ < 4) {
            g_test_message("%s: entry %u went from %" PRIu64 " to %" PRIu64
                           " (bound %" PRIu64 ")", what, e, s->base[e],
                           cur[e], bound);
        }
    }
    g_assert_cmpuint(bad, ==, 0);
    g_test_message("%s at %" PRId64 " ns: %u entries%s, %u accesses so far",
                   what, t, s->used, s->cleared ? " (after a CLEAR)" :
                   " checked", s->accesses);
    memcpy(s->base, cur, s->used * sizeof(cur[0]));
    s->base_t = t;
    s->cleared = false;
}

static void storm_alive(Storm *s)
{
    QDict *rsp = qtest_qmp(s->n.t->qts, "{ 'execute': 'query-status' }");

    g_assert_true(qtest_probe_child(s->n.t->qts));
    g_assert_true(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
}

static void storm_open(Storm *s, const StormCard *c, GRand *r,
                       const char *machine)
{
    g_autofree char *args = g_strdup_printf(
        "-object %s -device ndk-pcie-telemetry,id=ndk0,addr=04.0,traffic=t0,"
        "%s", c->object, c->props);
    uint32_t topo, layout, rp, rdma;

    memset(s, 0, sizeof(*s));
    s->card = c;
    s->rng = r;
    ndk_open_sized(&s->n, machine, c->bar_size, args);
    topo = bar_rd(&s->n, c->offset + PTL_REG_CFG_TOPOLOGY);
    layout = bar_rd(&s->n, c->offset + PTL_REG_CFG_LAYOUT);
    g_assert_cmpuint(topo & 0xFF, ==, c->endpoints);
    g_assert_cmpuint(layout >> 16 & 0xFF, ==, c->cnt_width);
    s->entries = layout & 0xFFFF;
    s->used = c->endpoints * (layout >> 24);
    g_assert_true(is_power_of_2(s->entries));
    g_assert_cmpuint(s->entries, <=, STORM_MAX_ENTRIES);
    g_assert_cmpuint(s->used, <=, s->entries);
    rp = MAX(c->regions[0], c->regions[1]);
    rdma = MAX(c->regions[2], c->regions[3]);
    s->max_inc = MAX(rp, rdma) * MAX(MAX(c->items[0], c->items[1]),
                                   MAX(c->items[2], c->items[3]));
    s->exp = qpci_find_capability(s->n.t->dev, PCI_CAP_ID_EXP, 0);
    s->ecam = !strcmp(machine, "q35");
    if (s->ecam) {
        ecam_enable(s->n.t->bus);
        g_assert_true(qndk_has_ecam(s->n.t));
    }
    s->mem = true;
    /* the counter memory of a new card is zeros */
    s->base_t = s->n.t->t0;
}

/*
 * A SNAPSHOT, and while its sweep runs a system reset: the counter memory
 * stays, BUSY and READ_SEL restart; the BAR comes back where it was.
 */
static void storm_reset_busy(Storm *s)
{
    const StormCard *c = s->card;
    uint64_t w;
    QDict *rsp;

    storm_wait_idle(s, "before the reset");
    storm_write(s, c->offset + PTL_REG_READ_SEL, 4, 1);
    w = storm_mi_now(s);
    storm_write(s, c->offset + PTL_REG_COMMAND, 4, PTL_CMD_SNAPSHOT);
    storm_busy_after(s, w, 6 + 2 * s->entries);
    step_to(&s->n, storm_mi_ns(s, w + 2 + rnd(s->rng, 0, 2 * s->entries)));
    g_assert_cmphex(storm_read(s, c->offset + PTL_REG_STATUS, 4) &
                    PTL_STATUS_BUSY, ==, PTL_STATUS_BUSY);
    g_test_message("system_reset %" PRIu64 " MI cycles into a SNAPSHOT",
                   storm_mi_now(s) - w);

    rsp = qtest_qmp(s->n.t->qts, "{ 'execute': 'system_reset' }");
    g_assert_true(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    qtest_qmp_eventwait(s->n.t->qts, "RESET");
    qpci_config_writel(s->n.t->dev, PCI_BASE_ADDRESS_0, s->n.t->bar.addr);
    qpci_device_enable(s->n.t->dev);
    s->mem = true;
    if (s->ecam) {
        ecam_enable(s->n.t->bus);
    }
    /* no sweep may outlast the reset by more than one SNAPSHOT's */
    s->busy_by = storm_mi_ns(s, storm_mi_now(s) + 7 + 2 * s->entries);
    storm_wait_idle(s, "after the reset");
    g_assert_cmphex(bar_rd(&s->n, c->offset + PTL_REG_MAGIC), ==, PTL_MAGIC);
    g_assert_cmphex(bar_rd(&s->n, c->offset + PTL_REG_READ_SEL), ==, 0);
}

/* After everything: MAGIC at the offset, zeros around the block */
static void storm_final(Storm *s)
{
    const StormCard *c = s->card;

    g_assert_cmphex(bar_rd(&s->n, c->offset + PTL_REG_MAGIC), ==, PTL_MAGIC);
    g_assert_cmphex(bar_rd(&s->n, c->offset + PTL_REG_VERSION), ==,
                    PTL_VERSION_VALUE);
    if (c->offset) {
        g_assert_cmphex(bar_rdq(&s->n, c->offset - 8), ==, 0);
        g_assert_cmphex(bar_rd(&s->n, 0), ==, 0);
    }
    if (c->offset + STORM_BLOCK_SIZE < c->bar_size) {
        g_assert_cmphex(bar_rdq(&s->n, c->offset + STORM_BLOCK_SIZE), ==, 0);
        g_assert_cmphex(bar_rd(&s->n, c->bar_size - 4), ==, 0);
    }
    storm_alive(s);
}

/*
 * On pc (conventional PCI, ACPI hotplug): traffic, a second card on the
 * same generator refused, a device_del, more traffic while the unplug
 * waits for the guest's eject, the eject, the DEVICE_DELETED event; the
 * clock runs on without the card, the generator then drives a new card,
 * which goes on counting when the generator's object is deleted under it
 * (allowed or refused, either is fine).
 */
static void storm_unplug(const StormCard *c, GRand *r)
{
    g_autofree char *out = NULL;
    QPCIBus *bus;
    int64_t now;
    Storm s;

    storm_open(&s, c, r, "pc");
    g_assert_cmpuint(s.exp, ==, 0);
    storm_round(&s, STORM_UNPLUG_OPS, true);
    storm_checkpoint(&s, "pc");
    /* a generator drives one card: a second one is refused */
    out = qtest_hmp(s.n.t->qts, "device_add ndk-pcie-telemetry,id=ndk2,"
                    "traffic=t0,%s", c->props);
    g_assert_nonnull(strstr(out, "already drives another card"));
    g_free(out);
    qtest_qmp_device_del_send(s.n.t->qts, "ndk0");
    storm_round(&s, STORM_UNPLUG_OPS, true);
    qtest_outl(s.n.t->qts, PC_ACPI_PCIHP_EJ, 1 << (s.n.t->dev->devfn >> 3));
    qtest_qmp_eventwait(s.n.t->qts, "DEVICE_DELETED");
    /* the old BAR is gone; accesses there reach nothing */
    qtest_readq(s.n.t->qts, s.n.t->bar.addr + c->offset);
    qtest_writel(s.n.t->qts, s.n.t->bar.addr + c->offset + PTL_REG_COMMAND,
                 PTL_CMD_SNAPSHOT | PTL_CMD_CLEAR);
    step(&s.n, 3000000);
    storm_alive(&s);

    out = qtest_hmp(s.n.t->qts, "device_add ndk-pcie-telemetry,id=ndk1,"
                    "traffic=t0,%s", c->props);
    g_assert_cmpstr(out, ==, "");
    /* the machine stays; the new card's node starts at its creation */
    bus = s.n.t->bus;
    now = s.n.t->now;
    qndk_close(s.n.t);
    ndk_open_plugged(&s.n, bus, now, c->bar_size);
    /* a new card: zeros from its creation on */
    s.base_t = s.n.t->now;
    memset(s.base, 0, sizeof(s.base));
    s.cleared = false;
    storm_round(&s, STORM_UNPLUG_OPS, false);
    storm_checkpoint(&s, "new card");
    qobject_unref(qtest_qmp(s.n.t->qts, "{ 'execute': 'object-del', "
                            "'arguments': { 'id': 't0' } }"));
    step(&s.n, 2000000);
    storm_checkpoint(&s, "generator deleted");
    storm_final(&s);
    ndk_close(&s.n);
}

static void test_storm(const void *data)
{
    StormGen g = GPOINTER_TO_INT(data);
    uint32_t seed = storm_seed();
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-storm-XXXXXX", NULL);
    g_autofree char *trace = NULL, *ini = NULL;
    const char *so = g_getenv("PTM_SAMPLE_PLUGIN");
    GRand *r;
    StormCard c;
    Storm s;

    g_assert(dir);
    g_test_message("seed %u (NDK_QTEST_SEED=%u replays this run)", seed,
                   seed);
    if (g == GEN_PLUGIN && (!so || !g_file_test(so, G_FILE_TEST_IS_REGULAR))) {
        g_test_skip("PTM_SAMPLE_PLUGIN names no file (run-qtest.sh sets it)");
        rmdir(dir);
        return;
    }
    r = g_rand_new_with_seed(seed ^ (g * 0x9E3779B9u));
    storm_card(&c, r, g, dir);
    g_test_message("%s: -object %s -device ndk-pcie-telemetry,%s",
                   storm_gen_name[g], c.object, c.props);

    storm_open(&s, &c, r, "q35");
    g_assert_cmpuint(s.exp, ==, 0x80);
    for (unsigned i = 0; i < STORM_ROUNDS && !g_test_failed(); i++) {
        g_autofree char *what = g_strdup_printf("round %u", i);

        storm_round(&s, STORM_OPS, rnd(r, 0, 2) == 0);
        storm_checkpoint(&s, what);
    }
    if (!g_test_failed()) {
        storm_reset_busy(&s);
        storm_round(&s, STORM_OPS, false);
        storm_checkpoint(&s, "after the reset");
    }
    storm_final(&s);
    ndk_close(&s.n);

    if (!g_test_failed()) {
        storm_unplug(&c, r);
    }
    storm_card_free(&c);
    g_rand_free(r);
    trace = g_build_filename(dir, "storm.trace", NULL);
    ini = g_build_filename(dir, "storm.ini", NULL);
    unlink(trace);
    unlink(ini);
    rmdir(dir);
}

/* ------------------------------------------------------------------ */
/* The DesignWare root port's RAS DES capability                      */

/*
 * A dwc-pcie-root-port of random width with a card of random width below
 * it takes seeded random configuration accesses: mostly 1, 2 and 4 bytes
 * anywhere in its RAS DES capability (headers included), pulses of its
 * secondary bus reset, writes anywhere else in its configuration space
 * (which may power the slot off and unplug the card), lane-error
 * injections of valid and invalid lanes, clock steps across timed runs,
 * and system resets. What must hold whatever happened: the capability's
 * headers and place in the chain stay, reserved bits and unmodelled
 * registers read 0, L0 and link-down time add up to the run's time,
 * which is no longer than the time since the last reset, an injection is
 * taken exactly when its lane is below the negotiated width, counters of
 * lanes never below it stay 0, and QEMU lives on.
 */
#define DWC_CAP                 0x200
#define DWC_OPS                 1500
#define DWC_ROUNDS              4
#define DWC_EXP                 0x70

typedef struct DwcStorm {
    QTestState *qts;
    QPCIBus *bus;
    GRand *rng;
    unsigned devfn;
    unsigned widest;            /* the widest link an injection saw */
    int64_t now, reset_at;
    unsigned taken, refused;
} DwcStorm;

static uint64_t dwc_at(const DwcStorm *d, uint32_t off)
{
    return ecam_at(0, d->devfn, off);
}

static uint32_t dwc_rd(const DwcStorm *d, uint32_t off)
{
    return qtest_readl(d->qts, dwc_at(d, off));
}

static void dwc_wr(const DwcStorm *d, uint32_t off, uint32_t v)
{
    qtest_writel(d->qts, dwc_at(d, off), v);
}

static void dwc_access(DwcStorm *d, uint32_t base, uint32_t span)
{
    unsigned size = 1u << rnd(d->rng, 0, 2);
    uint32_t off = ROUND_DOWN(base + rnd(d->rng, 0, span - 1), size);
    uint32_t v = rnd(d->rng, 0, 3) ? rnd(d->rng, 0, 0x3F) << (8 * (off & 3))
                                   : g_rand_int(d->rng);
    uint64_t a = dwc_at(d, off);

    if (rnd(d->rng, 0, 2) == 0) {
        if (size == 1) {
            qtest_readb(d->qts, a);
        } else if (size == 2) {
            qtest_readw(d->qts, a);
        } else {
            qtest_readl(d->qts, a);
        }
    } else if (size == 1) {
        qtest_writeb(d->qts, a, v);
    } else if (size == 2) {
        qtest_writew(d->qts, a, v);
    } else {
        qtest_writel(d->qts, a, v);
    }
}

/* A plausible control word more often than noise */
static void dwc_control(DwcStorm *d)
{
    static const uint32_t reports[] = { 0x00, 0x03, 0x07, 0x20, 0x21, 0x09 };
    static const uint32_t durs[] = { 0x00, 0x01, 0xFF, 0x02, 0x07 };
    static const uint32_t events[] = { 0x600, 0x606, 0x70C, 0x717, 0x70D };
    GRand *r = d->rng;

    if (rnd(r, 0, 1)) {
        dwc_wr(d, DWC_CAP + 0x10,
               reports[rnd(r, 0, G_N_ELEMENTS(reports) - 1)] << 24 |
               durs[rnd(r, 0, G_N_ELEMENTS(durs) - 1)] << 8 | rnd(r, 0, 1));
    } else {
        dwc_wr(d, DWC_CAP + 0x08,
               events[rnd(r, 0, G_N_ELEMENTS(events) - 1)] << 16 |
               rnd(r, 0, 15) << 8 | rnd(r, 0, 7) << 2 | rnd(r, 0, 3));
    }
}

static void dwc_inject(DwcStorm *d)
{
    static const char *const names[] = {
        "rx_memory_read", "tx_ack_dllp", "0x717", "rx_duplicate_tl",
    };
    unsigned width = (dwc_rd(d, DWC_EXP + PCI_EXP_LNKCTL) >> 16 &
                      PCI_EXP_LNKSTA_NLW) >> PCI_EXP_LNKSTA_NLW_SHIFT;
    unsigned lane = rnd(d->rng, 0, 15);
    g_autofree char *text = g_strdup_printf(
        "lane=%u,event=%s,count=%u", lane,
        names[rnd(d->rng, 0, G_N_ELEMENTS(names) - 1)], rnd(d->rng, 1, 9));
    g_autofree char *err = qom_set_error(
        qom_set_str(d->qts, "/machine/peripheral/rp0", "lane-error", text));

    g_assert_cmpuint(width, >=, 1);
    d->widest = MAX(d->widest, width);
    if (lane < width) {
        g_assert_cmpstr(err, ==, "");
        d->taken++;
    } else {
        g_assert_nonnull(strstr(err, "is not below the link's width"));
        d->refused++;
    }
}

static void dwc_sbr(DwcStorm *d)
{
    uint32_t v = dwc_rd(d, PCI_BRIDGE_CONTROL & ~3u);

    dwc_wr(d, PCI_BRIDGE_CONTROL & ~3u, v | PCI_BRIDGE_CTL_BUS_RESET << 16);
    d->now = qtest_clock_step(d->qts, rnd(d->rng, 1, 3000));
    dwc_wr(d, PCI_BRIDGE_CONTROL & ~3u, v & ~(PCI_BRIDGE_CTL_BUS_RESET << 16));
}

static void dwc_reset(DwcStorm *d)
{
    qtest_qmp_assert_success(d->qts, "{ 'execute': 'system_reset' }");
    qtest_qmp_eventwait(d->qts, "RESET");
    ecam_enable(d->bus);
    d->reset_at = d->now;
    for (uint32_t off = 0x08; off < 0x100; off += 4) {
        g_assert_cmphex(dwc_rd(d, DWC_CAP + off), ==, 0);
    }
}

/* The time-based data under report select r, the run left as it is */
static uint64_t dwc_tba(DwcStorm *d, uint32_t ctl, uint32_t r)
{
    dwc_wr(d, DWC_CAP + 0x10, (ctl & 0x00FFFFFF) | r << 24);
    return (uint64_t)dwc_rd(d, DWC_CAP + 0x18) << 32 |
           dwc_rd(d, DWC_CAP + 0x14);
}

static void dwc_check(DwcStorm *d)
{
    uint32_t ctl, ecc, h;
    uint64_t one, l0, down;

    /* the chain: AER, ACS, RAS DES with its headers */
    g_assert_cmphex(dwc_rd(d, 0x100) >> 20, ==, 0x148);
    g_assert_cmphex(dwc_rd(d, 0x148) >> 20, ==, DWC_CAP);
    h = dwc_rd(d, DWC_CAP);
    g_assert_cmphex(h, ==, 0x0001000B);
    g_assert_cmphex(dwc_rd(d, DWC_CAP + 4), ==, 0x10040002);
    g_assert_cmphex(dwc_rd(d, PCI_VENDOR_ID) & 0xFFFF, ==, 0x1ded);
    ecc = dwc_rd(d, DWC_CAP + 0x08);
    g_assert_cmphex(ecc & ~0x0FFF0F80u, ==, 0);
    ctl = dwc_rd(d, DWC_CAP + 0x10);
    g_assert_cmphex(ctl & ~0xFF00FF01u, ==, 0);
    for (uint32_t off = 0x1C; off < 0x100; off += 4) {
        g_assert_cmphex(dwc_rd(d, DWC_CAP + off), ==, 0);
    }
    one = dwc_tba(d, ctl, 0x00);
    l0 = dwc_tba(d, ctl, 0x03);
    down = dwc_tba(d, ctl, 0x07);
    g_assert_cmpuint(l0 + down, ==, one);
    g_assert_cmpuint(one, <=, d->now - d->reset_at);
    dwc_wr(d, DWC_CAP + 0x10, ctl);
    g_assert_cmphex(dwc_rd(d, DWC_CAP + 0x10), ==, ctl);
    /* counters of lanes no injection could reach */
    for (unsigned lane = d->widest; lane < 16; lane++) {
        dwc_wr(d, DWC_CAP + 0x08, 0x70C << 16 | lane << 8);
        g_assert_cmpuint(dwc_rd(d, DWC_CAP + 0x0C), ==, 0);
        dwc_wr(d, DWC_CAP + 0x08, 0x717 << 16 | lane << 8);
        g_assert_cmpuint(dwc_rd(d, DWC_CAP + 0x0C), ==, 0);
    }
    dwc_wr(d, DWC_CAP + 0x08, ecc & 0x0FFF0F00);
}

static void test_dwc_storm(void)
{
    static const unsigned widths[] = { 1, 2, 4, 8, 16 };
    uint32_t seed = storm_seed();
    g_autofree char *args = NULL;
    unsigned port_w, card_w;
    DwcStorm d = { 0 };

    g_test_message("seed %u (NDK_QTEST_SEED=%u replays this run)", seed,
                   seed);
    d.rng = g_rand_new_with_seed(seed ^ 0xD3C0FFEEu);
    port_w = widths[rnd(d.rng, 0, 4)];
    card_w = widths[rnd(d.rng, 0, 4)];
    args = g_strdup_printf(
        "-machine q35 -nodefaults "
        "-device dwc-pcie-root-port,id=rp0,chassis=1,slot=1,addr=02.0,"
        "x-width=%u -device ndk-pcie-telemetry,bus=rp0,link-width=%u",
        port_w, card_w);
    g_test_message("%s", args);
    d.qts = qtest_init(args);
    d.bus = qpci_new_pc(d.qts, NULL);
    d.devfn = QPCI_DEVFN(2, 0);
    ecam_enable(d.bus);
    dwc_check(&d);
    for (unsigned round = 0; round < DWC_ROUNDS && !g_test_failed();
         round++) {
        for (unsigned i = 0; i < DWC_OPS && !g_test_failed(); i++) {
            unsigned k = rnd(d.rng, 0, 99);

            if (k < 55) {
                dwc_access(&d, DWC_CAP, 0x100);
            } else if (k < 70) {
                dwc_control(&d);
            } else if (k < 78) {
                dwc_inject(&d);
            } else if (k < 80) {
                dwc_sbr(&d);
            } else if (k < 82) {
                dwc_access(&d, 0, 0x1000);
            } else if (k < 98) {
                d.now = qtest_clock_step(d.qts, rnd(d.rng, 0, 9) ?
                                         rnd(d.rng, 1, 5000) :
                                         rnd(d.rng, 5000, 3000000));
            } else {
                dwc_check(&d);
            }
        }
        dwc_check(&d);
        g_test_message("round %u at %" PRId64 " ns: %u injections taken, "
                       "%u refused, widest link x%u", round, d.now, d.taken,
                       d.refused, d.widest);
        if (round == DWC_ROUNDS / 2) {
            dwc_reset(&d);
            dwc_check(&d);
        }
    }
    g_assert_true(qtest_probe_child(d.qts));
    qpci_free_pc(d.bus);
    qtest_quit(d.qts);
    g_rand_free(d.rng);
}

/* ------------------------------------------------------------------ */
/* The flit-mode capabilities of both ends                            */

/*
 * A flit-mode link (port and card of random widths, random LTSSM
 * register counts) takes seeded random configuration accesses in the
 * three flit capabilities of both ends (headers included), plausible
 * control words, Flit Mode Disable and Retrain Link on either end,
 * flit-error injections of every kind with valid and invalid lanes,
 * clock steps and system resets. What must hold: both chains keep their
 * headers and next pointers, reserved bits read 0, the 64 GT/s status
 * says what Flit Mode Status says and both ends agree on it, an
 * injection is taken exactly when the link is in flit mode and its lane
 * (if it names one) is below the trained width, and QEMU lives on.
 */
#define FLIT_OPS                1500
#define FLIT_ROUNDS             4

typedef struct FlitStorm {
    QTestState *qts;
    QPCIBus *bus;
    GRand *rng;
    unsigned width;             /* the narrower end's */
    int64_t now;
    unsigned taken, refused;
} FlitStorm;

/* end 0: the port at 02.0 (capabilities at 0x300), 1: the card (0x200) */
static const uint32_t flit_base[2] = { 0x300, 0x200 };
static const uint32_t flit_exp[2] = { 0x70, 0x80 };

static uint64_t flit_at(int end, uint32_t off)
{
    return end ? ecam_at(1, 0, off) : ecam_at(0, QPCI_DEVFN(2, 0), off);
}

static uint32_t flit_rd(FlitStorm *f, int end, uint32_t off)
{
    return qtest_readl(f->qts, flit_at(end, off));
}

static void flit_wr(FlitStorm *f, int end, uint32_t off, uint32_t v)
{
    qtest_writel(f->qts, flit_at(end, off), v);
}

static void flit_bus_on(FlitStorm *f)
{
    ecam_enable(f->bus);
    qtest_writeb(f->qts, flit_at(0, PCI_SECONDARY_BUS), 1);
    qtest_writeb(f->qts, flit_at(0, PCI_SUBORDINATE_BUS), 1);
}

static void flit_access(FlitStorm *f)
{
    int end = rnd(f->rng, 0, 1);
    unsigned size = 1u << rnd(f->rng, 0, 2);
    uint32_t off = ROUND_DOWN(flit_base[end] + rnd(f->rng, 0, 0x8F), size);
    uint32_t v = rnd(f->rng, 0, 1) ? g_rand_int(f->rng)
                                   : rnd(f->rng, 0, 0xFF) << (8 * (off & 3));
    uint64_t a = flit_at(end, off);

    if (rnd(f->rng, 0, 2) == 0) {
        qtest_readl(f->qts, a & ~3ull);
    } else if (size == 1) {
        qtest_writeb(f->qts, a, v);
    } else if (size == 2) {
        qtest_writew(f->qts, a, v);
    } else {
        qtest_writel(f->qts, a, v);
    }
}

/* A plausible measurement more often than noise */
static void flit_control(FlitStorm *f)
{
    int end = rnd(f->rng, 0, 1);
    uint32_t perf = flit_base[end] + 0x60, log = flit_base[end] + 0x20;

    switch (rnd(f->rng, 0, 3)) {
    case 0:
        flit_wr(f, end, perf + 8, rnd(f->rng, 0, 1) |
                (1u << rnd(f->rng, 0, 2)) << 1 | rnd(f->rng, 0, 31) << 6 |
                rnd(f->rng, 0, 3) << 11 | rnd(f->rng, 0, 31) << 14 |
                rnd(f->rng, 0, 3) << 19 | rnd(f->rng, 0, 3) << 24);
        break;
    case 1:
        flit_wr(f, end, log + 0x10, rnd(f->rng, 0, 15));
        break;
    case 2:
        flit_wr(f, end, log + 0x0C, rnd(f->rng, 0, 0xFFF) |
                rnd(f->rng, 0, 1) << 18);
        break;
    default:
        /* Flit Mode Disable on either end, then Retrain Link */
        qtest_writew(f->qts, flit_at(end, flit_exp[end] + PCI_EXP_LNKCTL),
                     rnd(f->rng, 0, 3) ? 0 : 0x2000);
        qtest_writew(f->qts, flit_at(0, flit_exp[0] + PCI_EXP_LNKCTL),
                     (qtest_readw(f->qts, flit_at(0, flit_exp[0] +
                                                   PCI_EXP_LNKCTL)) &
                      0x2000) | 0x20);
        break;
    }
}

static bool flit_active(FlitStorm *f, int end)
{
    return qtest_readw(f->qts, flit_at(end, flit_exp[end] + 0x32)) & 0x400;
}

static void flit_inject(FlitStorm *f)
{
    static const char *const kinds[] = {
        "uncorrectable", "unrecognized", "correctable", "fatal"
    };
    int end = rnd(f->rng, 0, 1);
    unsigned k = rnd(f->rng, 0, 3), lane = rnd(f->rng, 0, 16);
    bool with_lane = k == 2 ? rnd(f->rng, 0, 7) != 0 : rnd(f->rng, 0, 7) == 0;
    g_autofree char *text = with_lane ?
        g_strdup_printf("kind=%s,count=%u,lane=%u", kinds[k],
                        rnd(f->rng, 1, 40), lane) :
        g_strdup_printf("kind=%s,count=%u", kinds[k], rnd(f->rng, 1, 40));
    g_autofree char *err = qom_set_error(
        qom_set_str(f->qts, end ? "/machine/peripheral/card"
                                : "/machine/peripheral/rp0",
                    "flit-error", text));
    bool ok = flit_active(f, end) && k < 3 && with_lane == (k == 2) &&
              (k != 2 || lane < f->width);

    if (ok) {
        g_assert_cmpstr(err, ==, "");
        f->taken++;
    } else {
        g_assert_cmpstr(err, !=, "");
        f->refused++;
    }
}

static void flit_check(FlitStorm *f)
{
    static const uint16_t ids[3] = { 0x31, 0x32, 0x33 };
    static const uint32_t at[3] = { 0x00, 0x20, 0x60 };

    g_assert_cmpint(flit_active(f, 0), ==, flit_active(f, 1));
    for (int end = 0; end < 2; end++) {
        uint32_t b = flit_base[end], regs;

        for (unsigned c = 0; c < 3; c++) {
            uint32_t h = flit_rd(f, end, b + at[c]);

            g_assert_cmphex(h & 0xFFFF, ==, ids[c]);
            g_assert_cmphex(h >> 16 & 0xF, ==, 1);
            g_assert_cmphex(h >> 20, ==, c < 2 ? b + at[c + 1] : 0);
        }
        g_assert_cmphex(flit_rd(f, end, b + 4), ==, 0);
        g_assert_cmphex(flit_rd(f, end, b + 8), ==, 0);
        g_assert_cmphex(flit_rd(f, end, b + 0x0C), ==,
                        flit_active(f, end) ? 0xF : 0);
        g_assert_cmphex(flit_rd(f, end, b + 0x20 + 0x0C) & 0x00F0F000u, ==, 0);
        g_assert_cmphex(flit_rd(f, end, b + 0x20 + 0x10) & ~0xDu, ==, 0);
        g_assert_cmphex(flit_rd(f, end, b + 0x20 + 0x18) >> 16, ==, 0);
        regs = flit_rd(f, end, b + 0x60 + 4) >> 10 & 7;
        g_assert_cmpuint(regs, <=, 5);
        g_assert_cmphex(flit_rd(f, end, b + 0x60 + 4) & ~0x1C00u, ==, 0);
        g_assert_cmphex(flit_rd(f, end, b + 0x60 + 8) & 0xC0000030u, ==, 0);
        for (uint32_t r = 0; r <= regs; r++) {
            g_assert_cmphex(flit_rd(f, end, b + 0x60 + 0x0C + 4 * r) >> 24,
                            ==, 0);
        }
    }
}

static void test_flit_storm(void)
{
    static const unsigned widths[] = { 1, 2, 4, 8, 16 };
    uint32_t seed = storm_seed();
    g_autofree char *args = NULL;
    unsigned port_w, card_w;
    FlitStorm f = { 0 };

    g_test_message("seed %u (NDK_QTEST_SEED=%u replays this run)", seed,
                   seed);
    f.rng = g_rand_new_with_seed(seed ^ 0xF117F117u);
    port_w = widths[rnd(f.rng, 0, 4)];
    card_w = widths[rnd(f.rng, 0, 4)];
    f.width = MIN(port_w, card_w);
    args = g_strdup_printf(
        "-machine q35 -nodefaults "
        "-device dwc-pcie-root-port,id=rp0,chassis=1,slot=1,addr=02.0,"
        "x-speed=64,x-width=%u,flit-mode=on,flit-ltssm-regs=%u "
        "-object telemetry-traffic-pattern,id=t0,rq-frame-bytes=256,rq-gap=4 "
        "-device ndk-pcie-telemetry,id=card,bus=rp0,traffic=t0,"
        "link-speed=64,link-width=%u,flit-mode=on,flit-ltssm-regs=%u",
        port_w, rnd(f.rng, 0, 5), card_w, rnd(f.rng, 0, 5));
    g_test_message("%s", args);
    f.qts = qtest_init(args);
    f.bus = qpci_new_pc(f.qts, NULL);
    flit_bus_on(&f);
    flit_check(&f);
    for (unsigned round = 0; round < FLIT_ROUNDS && !g_test_failed();
         round++) {
        for (unsigned i = 0; i < FLIT_OPS && !g_test_failed(); i++) {
            unsigned k = rnd(f.rng, 0, 99);

            if (k < 55) {
                flit_access(&f);
            } else if (k < 72) {
                flit_control(&f);
            } else if (k < 82) {
                flit_inject(&f);
            } else if (k < 98) {
                f.now = qtest_clock_step(f.qts, rnd(f.rng, 0, 9) ?
                                         rnd(f.rng, 1, 5000) :
                                         rnd(f.rng, 5000, 3000000));
            } else {
                flit_check(&f);
            }
        }
        flit_check(&f);
        g_test_message("round %u at %" PRId64 " ns: %u injections taken, "
                       "%u refused", round, f.now, f.taken, f.refused);
        if (round == FLIT_ROUNDS / 2) {
            qtest_qmp_assert_success(f.qts, "{ 'execute': 'system_reset' }");
            qtest_qmp_eventwait(f.qts, "RESET");
            flit_bus_on(&f);
            flit_check(&f);
            g_assert_true(flit_active(&f, 0));
        }
    }
    g_assert_cmpuint(f.taken, >, 0);
    g_assert_true(qtest_probe_child(f.qts));
    qpci_free_pc(f.bus);
    qtest_quit(f.qts);
    g_rand_free(f.rng);
}

/* ------------------------------------------------------------------ */
/* The HiSilicon PTT's BAR 2                                          */

/*
 * A hisi-ptt beside a covered root port with the card below takes seeded
 * random accesses anywhere in its BAR 2 (every width), driver-like
 * TRACE_CTRL sequences (reset, start with random filters, formats and
 * directions, stop), buffers in RAM and outside it, status writes, BAR
 * reads of the card that make TLPs, clock steps and system resets. What
 * must hold: LOCATION and DEVICE_RANGE keep their values, reserved bits
 * and unmodelled registers read 0, WR_STS stays below the buffer size,
 * the status has at most the four buffer bits, nothing is written outside
 * the four buffers' RAM, and QEMU lives on.
 */
#define PTT_OPS                 1200
#define PTT_ROUNDS              3
#define PTT_BAR_AT              0xD0000000u
#define PTT_CARD_BAR            0xE0000000u
#define PTT_RAM                 0x300000u
#define PTT_GUARD               0x1000u

typedef struct PttStorm {
    QTestState *qts;
    QPCIBus *bus;
    GRand *rng;
    uint32_t size;              /* the buffers' size as last written */
    unsigned starts, stops;
    bool wrote;                 /* a trace wrote records at some point */
} PttStorm;

static void ptt_setup(PttStorm *p)
{
    ecam_enable(p->bus);
    ecam_wr(p->qts, 0, QPCI_DEVFN(8, 0), PCI_BASE_ADDRESS_2, PTT_BAR_AT, 4);
    ecam_wr(p->qts, 0, QPCI_DEVFN(8, 0), PCI_BASE_ADDRESS_3, 0, 4);
    ecam_wr(p->qts, 0, QPCI_DEVFN(8, 0), PCI_COMMAND,
            PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
    ecam_wr(p->qts, 0, QPCI_DEVFN(0x10, 0), PCI_SECONDARY_BUS, 1, 1);
    ecam_wr(p->qts, 0, QPCI_DEVFN(0x10, 0), PCI_SUBORDINATE_BUS, 1, 1);
    ecam_wr(p->qts, 0, QPCI_DEVFN(0x10, 0), PCI_MEMORY_BASE, PTT_CARD_BAR >> 16,
            2);
    ecam_wr(p->qts, 0, QPCI_DEVFN(0x10, 0), PCI_MEMORY_LIMIT,
            (PTT_CARD_BAR + 0x00F00000) >> 16, 2);
    ecam_wr(p->qts, 0, QPCI_DEVFN(0x10, 0), PCI_COMMAND,
            PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
    ecam_wr(p->qts, 1, 0, PCI_BASE_ADDRESS_0, PTT_CARD_BAR, 4);
    ecam_wr(p->qts, 1, 0, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
}

static uint32_t ptt_rd(PttStorm *p, uint32_t off)
{
    return qtest_readl(p->qts, PTT_BAR_AT + off);
}

static void ptt_wr(PttStorm *p, uint32_t off, uint32_t v)
{
    qtest_writel(p->qts, PTT_BAR_AT + off, v);
}

static void ptt_any_access(PttStorm *p)
{
    unsigned size = 1u << rnd(p->rng, 0, 3);
    uint32_t off = ROUND_DOWN(rnd(p->rng, 0, 0xFFF), size);
    uint64_t a = PTT_BAR_AT + off, v = g_rand_int(p->rng);

    /* the buffers' registers and the control have their own ops */
    if ((off >= 0x800 && off < 0x860) || (off & ~7u) == 0x850) {
        return;
    }
    if (rnd(p->rng, 0, 1)) {
        qtest_readb(p->qts, a);
    } else if (size == 1) {
        qtest_writeb(p->qts, a, v);
    } else if (size == 2) {
        qtest_writew(p->qts, a, v);
    } else if (size == 4) {
        qtest_writel(p->qts, a, v);
    } else {
        qtest_writeq(p->qts, a, v);
    }
}

/* The driver's start with random settings, or its stop */
static void ptt_sequence(PttStorm *p)
{
    static const uint32_t sizes[] = { 0x40, 0x100, 0x1000, 0x20, 0x30 };

    if (rnd(p->rng, 0, 1)) {
        ptt_wr(p, 0x850, 0);
        ptt_wr(p, 0x894, 0xF);
        p->stops++;
        return;
    }
    ptt_wr(p, 0x850, 2);
    ptt_wr(p, 0x850, 0);
    p->size = sizes[rnd(p->rng, 0, G_N_ELEMENTS(sizes) - 1)];
    for (unsigned i = 0; i < 4; i++) {
        ptt_wr(p, 0x810 + 8 * i, PTT_RAM + i * 0x1000);
        ptt_wr(p, 0x814 + 8 * i, 0);
    }
    ptt_wr(p, 0x800, p->size);
    ptt_wr(p, 0x890, 0xF);
    ptt_wr(p, 0x894, rnd(p->rng, 0, 15));
    ptt_wr(p, 0x850, 1 | rnd(p->rng, 0, 3) << 2 | rnd(p->rng, 1, 15) << 4 |
           rnd(p->rng, 0, 1) << 14 | rnd(p->rng, 0, 1) << 15 |
           (rnd(p->rng, 0, 1) ? 1u : 0x0100u) << 16);
    p->starts++;
}

static void ptt_check(PttStorm *p)
{
    g_assert_cmphex(ptt_rd(p, 0xFE8), ==, 0x00020001);
    g_assert_cmphex(ptt_rd(p, 0xFE0), ==, 0x00FF0000);
    g_assert_cmphex(ptt_rd(p, 0x850) & 0x3F00, ==, 0);
    g_assert_cmphex(ptt_rd(p, 0x890) & ~0xFu, ==, 0);
    g_assert_cmphex(ptt_rd(p, 0x894) & ~0xFu, ==, 0);
    g_assert_cmphex(ptt_rd(p, 0x898), ==, 0);
    g_assert_cmphex(ptt_rd(p, 0x8B0) & ~1u, ==, 0);
    g_assert_cmpuint(ptt_rd(p, 0x8A0), <=, MAX(p->size, 0x1000u));
    p->wrote |= ptt_rd(p, 0x8A0) > 0 || ptt_rd(p, 0x890) != 0;
    for (uint32_t off = 0x900; off < 0xFE0; off += 0x40) {
        g_assert_cmphex(ptt_rd(p, off), ==, 0);
    }
    /* the guard page after the four buffers stays untouched */
    for (uint32_t off = 0; off < PTT_GUARD; off += 0x100) {
        g_assert_cmphex(qtest_readl(p->qts, PTT_RAM + 0x4000 + off), ==,
                        0x5A5A5A5A);
    }
}

static void test_ptt_storm(void)
{
    uint32_t seed = storm_seed();
    PttStorm p = { 0 };

    g_test_message("seed %u (NDK_QTEST_SEED=%u replays this run)", seed,
                   seed);
    p.rng = g_rand_new_with_seed(seed ^ 0x9177A12Eu);
    p.qts = qtest_init("-machine q35 -nodefaults "
                       "-device hisi-ptt,addr=08.0,sicl-id=2,core-id=1 "
                       "-device dwc-pcie-root-port,id=rp0,chassis=1,slot=1,"
                       "addr=10.0 -device ndk-pcie-telemetry,bus=rp0");
    p.bus = qpci_new_pc(p.qts, NULL);
    ptt_setup(&p);
    qtest_memset(p.qts, PTT_RAM + 0x4000, 0x5A, PTT_GUARD);
    p.size = 0x1000;
    ptt_check(&p);
    for (unsigned round = 0; round < PTT_ROUNDS && !g_test_failed();
         round++) {
        for (unsigned i = 0; i < PTT_OPS && !g_test_failed(); i++) {
            unsigned k = rnd(p.rng, 0, 99);

            if (k < 30) {
                ptt_any_access(&p);
            } else if (k < 45) {
                ptt_sequence(&p);
            } else if (k < 50) {
                ptt_wr(&p, 0x890, rnd(p.rng, 0, 15));
            } else if (k < 52) {
                /* a buffer where no memory is */
                ptt_wr(&p, 0x814 + 8 * rnd(p.rng, 0, 3), 0x100);
            } else if (k < 80) {
                qtest_readl(p.qts, PTT_CARD_BAR + 4 * rnd(p.rng, 0, 63));
            } else if (k < 96) {
                qtest_clock_step(p.qts, rnd(p.rng, 1, 3000000));
            } else {
                ptt_check(&p);
            }
        }
        ptt_check(&p);
        g_test_message("round %u: %u starts, %u stops", round, p.starts,
                       p.stops);
        if (round == PTT_ROUNDS / 2) {
            qtest_qmp_assert_success(p.qts, "{ 'execute': 'system_reset' }");
            qtest_qmp_eventwait(p.qts, "RESET");
            ptt_setup(&p);
            p.size = 0x1000;
            g_assert_cmphex(ptt_rd(&p, 0x850), ==, 0);
            ptt_check(&p);
        }
    }
    g_assert_true(p.wrote);
    g_assert_true(qtest_probe_child(p.qts));
    qpci_free_pc(p.bus);
    qtest_quit(p.qts);
    g_rand_free(p.rng);
}

/* ------------------------------------------------------------------ */
/* The DesignWare xData's BAR 0                                       */

/*
 * A dw-xdata-pcie of a random link below a dwc-pcie-root-port takes
 * seeded random accesses anywhere in its BAR 0 (1, 2, 4 and 8 bytes at
 * any offset), the dw-xdata-pcie driver's start with random directions,
 * lengths and burst counts, its stop and perf measurement, STATUS
 * writes, random MPS and MRRS (reserved codes too) and target addresses,
 * clock steps and a system reset. What must hold: reserved bits and
 * undefined bytes read 0, the counters never fall but at the reset and
 * gain no more than the negotiated link's raw rate carries, a test whose
 * STATUS says done moves nothing more, the port's Rx and Tx payload cover
 * the counters' gains, and QEMU lives on.
 */
#define XD_OPS                  1500
#define XD_ROUNDS               3
#define XD_BAR_AT               0xE0000000u
#define XD_RP                   QPCI_DEVFN(0x10, 0)
#define XD_TBA                  (0x200 + 0x10)
#define XD_MAX_XFER             (4095 * 4)

typedef struct XdStorm {
    QTestState *qts;
    QPCIBus *bus;
    GRand *rng;
    uint64_t raw_num, raw_den;  /* the link's bytes a ns, each way */
    int64_t now, since;         /* since: the port's run began */
    uint64_t wr0, rd0;          /* the counters then */
    unsigned starts, dones;
    bool moved;                 /* a counter gained at some point */
} XdStorm;

static uint32_t xd_rd(XdStorm *x, uint32_t off)
{
    return qtest_readl(x->qts, XD_BAR_AT + off);
}

static void xd_wr(XdStorm *x, uint32_t off, uint32_t v)
{
    qtest_writel(x->qts, XD_BAR_AT + off, v);
}

/* The port's run so far in bytes, Tx (0x20) or Rx (0x21) */
static uint64_t xd_port(XdStorm *x, uint32_t report)
{
    ecam_wr(x->qts, 0, XD_RP, XD_TBA, report << 24 | 1, 4);
    return ((uint64_t)qtest_readl(x->qts, ecam_at(0, XD_RP, XD_TBA + 8))
            << 32 | qtest_readl(x->qts, ecam_at(0, XD_RP, XD_TBA + 4))) * 16;
}

/* The port's bus and window, BAR 0, and a run of the port from now */
static void xd_setup(XdStorm *x)
{
    ecam_enable(x->bus);
    ecam_wr(x->qts, 0, XD_RP, PCI_SECONDARY_BUS, 1, 1);
    ecam_wr(x->qts, 0, XD_RP, PCI_SUBORDINATE_BUS, 1, 1);
    ecam_wr(x->qts, 0, XD_RP, PCI_MEMORY_BASE, XD_BAR_AT >> 16, 2);
    ecam_wr(x->qts, 0, XD_RP, PCI_MEMORY_LIMIT, XD_BAR_AT >> 16, 2);
    ecam_wr(x->qts, 0, XD_RP, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
    ecam_wr(x->qts, 1, 0, PCI_BASE_ADDRESS_0, XD_BAR_AT, 4);
    ecam_wr(x->qts, 1, 0, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
    ecam_wr(x->qts, 0, XD_RP, XD_TBA, 0, 4);
    ecam_wr(x->qts, 0, XD_RP, XD_TBA, 0x21u << 24 | 1, 4);
    x->since = x->now;
    x->wr0 = qtest_readq(x->qts, XD_BAR_AT + 0x100);
    x->rd0 = qtest_readq(x->qts, XD_BAR_AT + 0x108);
}

static void xd_any_access(XdStorm *x)
{
    unsigned size = 1u << rnd(x->rng, 0, 3);
    uint64_t a = XD_BAR_AT + rnd(x->rng, 0, 0x1000 - size);
    uint64_t v = (uint64_t)g_rand_int(x->rng) << 32 | g_rand_int(x->rng);

    /* mostly the registers, now and then anywhere */
    if (rnd(x->rng, 0, 3)) {
        a = XD_BAR_AT + rnd(x->rng, 0, 0x110 - size);
    }
    if (rnd(x->rng, 0, 1)) {
        qtest_readq(x->qts, a & ~7ull);
        qtest_readb(x->qts, a);
    } else if (size == 1) {
        qtest_writeb(x->qts, a, v);
    } else if (size == 2) {
        qtest_writew(x->qts, a, v);
    } else if (size == 4) {
        qtest_writel(x->qts, a, v);
    } else {
        qtest_writeq(x->qts, a, v);
    }
}

/* The driver's stop; its start with random settings */
static void xd_stop(XdStorm *x)
{
    uint32_t burst = xd_rd(x, 0x08);

    if (burst & (1u << 31)) {
        xd_wr(x, 0x08, burst & ~(1u << 31));
    }
}

static void xd_start(XdStorm *x)
{
    static const uint32_t lens[] = { 32, 64, 128, 1, 0, 1024, 4095 };
    static const uint32_t bursts[] = {
        0x80001001u, 0x80001001u, 0x80000000u, 0x1001, 10, 0,
    };
    uint32_t len = lens[rnd(x->rng, 0, G_N_ELEMENTS(lens) - 1)];

    xd_stop(x);
    xd_wr(x, 0x14, 0);
    xd_wr(x, 0x08, bursts[rnd(x->rng, 0, G_N_ELEMENTS(bursts) - 1)]);
    xd_wr(x, 0x10, 0);
    xd_wr(x, 0x0C, 1 | 1u << 16 | 1u << 18 | len << 2 |
          rnd(x->rng, 0, 1) << 1);
    x->starts++;
}

static void xd_check(XdStorm *x)
{
    uint64_t wr = qtest_readq(x->qts, XD_BAR_AT + 0x100);
    uint64_t rd = qtest_readq(x->qts, XD_BAR_AT + 0x108);
    uint64_t most = (uint64_t)(x->now - x->since) * x->raw_num /
                    x->raw_den + XD_MAX_XFER;

    g_assert_cmphex(xd_rd(x, 0x0C) & ~0x00053FFEu, ==, 0);
    g_assert_cmphex(xd_rd(x, 0x14) & ~1u, ==, 0);
    g_assert_cmphex(xd_rd(x, 0x58) & ~0x20u, ==, 0);
    for (uint32_t off = 0x20; off < 0x1000; off += off < 0x110 ? 4 : 0x7C) {
        if (off != 0x58 && (off < 0x100 || off >= 0x110)) {
            g_assert_cmphex(xd_rd(x, off), ==, 0);
        }
    }
    /* never falling, and no faster than the link */
    g_assert_cmpuint(wr, >=, x->wr0);
    g_assert_cmpuint(rd, >=, x->rd0);
    g_assert_cmpuint(wr - x->wr0, <=, most);
    g_assert_cmpuint(rd - x->rd0, <=, most);
    x->moved |= wr > x->wr0 || rd > x->rd0;
    /* the port saw at least what the counters counted (16-byte units) */
    g_assert_cmpuint(xd_port(x, 0x21) + 15, >=, wr - x->wr0);
    g_assert_cmpuint(xd_port(x, 0x20) + 15, >=, rd - x->rd0);
    /* done: nothing moves any more */
    if (xd_rd(x, 0x14) & 1) {
        x->now = qtest_clock_step(x->qts, rnd(x->rng, 1, 1000000));
        g_assert_cmpuint(qtest_readq(x->qts, XD_BAR_AT + 0x100), ==, wr);
        g_assert_cmpuint(qtest_readq(x->qts, XD_BAR_AT + 0x108), ==, rd);
        x->dones++;
    }
}

static void test_xdata_storm(void)
{
    static const char *const speeds[] = { "2_5", "5", "8", "16", "32" };
    static const uint32_t mts[] = { 2500, 5000, 8000, 16000, 32000 };
    static const unsigned widths[] = { 1, 2, 4, 8, 16 };
    uint32_t seed = storm_seed();
    g_autofree char *args = NULL;
    unsigned sp, w;
    XdStorm x = { 0 };

    g_test_message("seed %u (NDK_QTEST_SEED=%u replays this run)", seed,
                   seed);
    x.rng = g_rand_new_with_seed(seed ^ 0x16C3EDDAu);
    sp = rnd(x.rng, 0, G_N_ELEMENTS(speeds) - 1);
    w = widths[rnd(x.rng, 0, G_N_ELEMENTS(widths) - 1)];
    /* below a port of x8 at 16 GT/s: the narrower and slower */
    x.raw_num = (uint64_t)MIN(mts[sp], 16000u) * MIN(w, 8u) *
                (mts[sp] >= 8000 ? 128 : 8);
    x.raw_den = (mts[sp] >= 8000 ? 130 : 10) * 8000ull;
    args = g_strdup_printf(
        "-machine q35 -nodefaults -device dwc-pcie-root-port,id=rp0,"
        "chassis=1,slot=1,addr=10.0,x-speed=16,x-width=8 "
        "-device dw-xdata-pcie,bus=rp0,link-speed=%s,link-width=%u,"
        "max-payload-size=%u", speeds[sp], w, 128u << rnd(x.rng, 0, 5));
    g_test_message("%s", args);
    x.qts = qtest_init(args);
    x.bus = qpci_new_pc(x.qts, NULL);
    xd_setup(&x);
    xd_check(&x);
    for (unsigned round = 0; round < XD_ROUNDS && !g_test_failed();
         round++) {
        for (unsigned i = 0; i < XD_OPS && !g_test_failed(); i++) {
            unsigned k = rnd(x.rng, 0, 99);

            if (k < 30) {
                xd_any_access(&x);
            } else if (k < 40) {
                xd_start(&x);
            } else if (k < 48) {
                xd_stop(&x);
            } else if (k < 55) {
                xd_wr(&x, 0x58, 0);
                qtest_readq(x.qts, XD_BAR_AT + 0x100 + 8 * rnd(x.rng, 0, 1));
                xd_wr(&x, 0x58, 0x20);
            } else if (k < 60) {
                xd_wr(&x, 0x14, rnd(x.rng, 0, 1) ? 0 : g_rand_int(x.rng));
            } else if (k < 63) {
                /* MPS and MRRS codes 0 to 7, 6 and 7 reserved */
                ecam_wr(x.qts, 1, 0, 0x70 + PCI_EXP_DEVCTL,
                        rnd(x.rng, 0, 7) << 5 | rnd(x.rng, 0, 7) << 12, 2);
            } else if (k < 65) {
                xd_wr(&x, 0x04, rnd(x.rng, 0, 1) ? 0 : g_rand_int(x.rng));
            } else if (k < 92) {
                x.now = qtest_clock_step(x.qts, rnd(x.rng, 1, 2000000));
            } else {
                xd_check(&x);
            }
        }
        xd_check(&x);
        g_test_message("round %u: %u starts, %u checks found it done",
                       round, x.starts, x.dones);
        if (round == XD_ROUNDS / 2) {
            qtest_qmp_assert_success(x.qts, "{ 'execute': 'system_reset' }");
            qtest_qmp_eventwait(x.qts, "RESET");
            xd_setup(&x);
            g_assert_cmpuint(x.wr0, ==, 0);
            g_assert_cmpuint(x.rd0, ==, 0);
            for (uint32_t off = 0; off < 0x110; off += 4) {
                g_assert_cmphex(xd_rd(&x, off), ==, 0);
            }
            xd_check(&x);
        }
    }
    g_assert_true(x.moved);
    g_assert_cmpuint(x.dones, >, 0);
    g_assert_true(qtest_probe_child(x.qts));
    qpci_free_pc(x.bus);
    qtest_quit(x.qts);
    g_rand_free(x.rng);
}

/* ------------------------------------------------------------------ */
/* The PG381 generator's window                                       */

/*
 * A card with the PG381 generator (a random clock, RQ and RC width and
 * latency mode) takes seeded random accesses anywhere in the generator's
 * 64 KiB window (1, 2, 4 and 8 bytes at any offset, START and the program
 * block aside), random programs of up to 8 instructions (every command,
 * loops, waits, zero counts, bad bursts and sizes, addresses in guest
 * memory or where none is) started at random, soft resets, CAPTURE_ALL,
 * random MPS, MRRS (reserved codes too), RCB and tags, bus mastering off
 * and on, clock steps and a system reset. What must hold: the card's
 * identity registers keep their values, the unmodelled and reserved
 * registers and bits read 0, responses never outnumber requests nor beats
 * their lasts, the best latency is at most the worst, nothing is written
 * outside the programs' 64 KiB of RAM, the telemetry block still answers,
 * and QEMU lives on.
 */
#define PG_OPS                  1200
#define PG_ROUNDS               3
#define PG_AT                   0x01800000u
#define PG_TARGET               0x400000u   /* the programs' RAM */
#define PG_SPAN                 0x10000u
#define PG_GUARD                0x1000u

typedef struct PgStorm {
    Ndk n;
    GRand *rng;
    uint32_t clock_hz;
    bool out_of_order;
    unsigned starts, errors, dones;
} PgStorm;

static uint32_t pg_rd(PgStorm *p, uint32_t off)
{
    return qtest_readl(p->n.t->qts, p->n.t->bar.addr + PG_AT + off);
}

static void pg_wr(PgStorm *p, uint32_t off, uint32_t v)
{
    qtest_writel(p->n.t->qts, p->n.t->bar.addr + PG_AT + off, v);
}

static void pg_any_access(PgStorm *p)
{
    QTestState *qts = p->n.t->qts;
    unsigned size = 1u << rnd(p->rng, 0, 3);
    uint32_t off = rnd(p->rng, 0, 3) ? rnd(p->rng, 0x2000, 0x6020)
                                     : rnd(p->rng, 0, 0xFFF8);
    uint64_t a = p->n.t->bar.addr + PG_AT + off, v = g_rand_int(p->rng);

    v = v << 32 | g_rand_int(p->rng);
    /* START and the program have their own ops (their addresses) */
    if (rnd(p->rng, 0, 1) || (off <= 0x4007 && off + size > 0x4004) ||
        off + size > 0x8000) {
        switch (size) {
        case 1:
            qtest_readb(qts, a);
            break;
        case 2:
            qtest_readw(qts, a);
            break;
        case 4:
            qtest_readl(qts, a);
            break;
        default:
            qtest_readq(qts, a);
        }
    } else if (size == 1) {
        qtest_writeb(qts, a, v);
    } else if (size == 2) {
        qtest_writew(qts, a, v);
    } else if (size == 4) {
        qtest_writel(qts, a, v);
    } else {
        qtest_writeq(qts, a, v);
    }
}

/*
 * A program within [PG_TARGET, + PG_SPAN): mostly one the model runs to
 * the end (READ, WRITE and WAIT, a loop at most, the latency mode's ID
 * type), otherwise any fields at all, or addresses where no memory is.
 */
static void pg_program(PgStorm *p)
{
    unsigned len = rnd(p->rng, 1, 8), loop_at = rnd(p->rng, 0, 15);
    bool sane = rnd(p->rng, 0, 3);
    uint64_t base = sane || rnd(p->rng, 0, 3) ? PG_TARGET
                                                : 0x4000000000ull;

    for (unsigned k = 0; k < len; k++) {
        uint32_t w[16] = { 0 };
        uint32_t size = sane ? rnd(p->rng, 2, 6) : rnd(p->rng, 0, 7);
        uint32_t beats = sane ? rnd(p->rng, 0, 15) : rnd(p->rng, 0, 255);
        uint64_t bytes = (uint64_t)(beats + 1) << size;
        uint64_t high = base + PG_SPAN - 1 - rnd(p->rng, 0, 0x800);
        bool id_incr = sane ? p->out_of_order : !rnd(p->rng, 0, 3);

        w[0] = sane ? rnd(p->rng, 0, 2) : rnd(p->rng, 0, 3);
        w[0] |= (k == len - 1 ? 4u : 0) | (id_incr ? 1u << 5 : 0) |
                (rnd(p->rng, 0, 1) ? 1u << 6 : 0) | rnd(p->rng, 0, 3) << 8 |
                rnd(p->rng, 0, 1) << 13;
        if (sane && loop_at + 1 < len) {
            /* a loop of instructions loop_at and loop_at + 1 */
            w[0] |= (k == loop_at ? 1u << 3 : 0) |
                    (k == loop_at + 1 ? 1u << 4 : 0);
        } else if (!sane) {
            w[0] |= rnd(p->rng, 0, 3) << 3;
        }
        if ((w[0] & 3) == 2 && !((w[0] >> 8) & 3)) {
            w[1] = rnd(p->rng, 0, 2000);    /* WAIT clocks */
        } else {
            w[1] = sane || rnd(p->rng, 0, 7) ? rnd(p->rng, 1, 48) : 0;
        }
        w[2] = rnd(p->rng, 0, 3) ? 0 : rnd(p->rng, 0, 100);
        w[3] = beats | size << 8 |
               (sane || rnd(p->rng, 0, 3) ? 1u : rnd(p->rng, 0, 3)) << 12;
        w[4] = rnd(p->rng, 0, 3) ? 0 : rnd(p->rng, 0, 0xFFFF);
        w[5] = g_rand_int(p->rng);
        w[6] = (uint32_t)base;
        w[7] = base >> 32;
        w[8] = (uint32_t)high;
        w[9] = high >> 32;
        w[10] = bytes <= PG_SPAN / 2 ? rnd(p->rng, 0, PG_SPAN / 2) : 0;
        w[12] = rnd(p->rng, 0, 0x400);
        w[14] = (sane ? rnd(p->rng, 1, 4) : rnd(p->rng, 0, 7)) |
                rnd(p->rng, 0, 0x800) << 16;
        for (unsigned i = 0; i < 16; i++) {
            pg_wr(p, 0x8000 + 0x40 * k + 4 * i, w[i]);
        }
    }
}

static void pg_settings(PgStorm *p)
{
    uint16_t cmd;

    if (rnd(p->rng, 0, 3)) {
        set_pcie_settings(&p->n, 0x80, rnd(p->rng, 0, 7), rnd(p->rng, 0, 7),
                          rnd(p->rng, 0, 1), rnd(p->rng, 0, 1),
                          rnd(p->rng, 0, 1));
        return;
    }
    cmd = qpci_config_readw(p->n.t->dev, PCI_COMMAND);
    qpci_config_writew(p->n.t->dev, PCI_COMMAND, cmd ^ PCI_COMMAND_MASTER);
}

static void pg_check(PgStorm *p)
{
    uint32_t fe = pg_rd(p, 0x2050), arreq = pg_rd(p, 0x2018);
    uint32_t rlast = pg_rd(p, 0x201C), awreq = pg_rd(p, 0x2030);

    g_assert_cmphex(pg_rd(p, 0x6000), ==, 0x50473831);
    g_assert_cmphex(pg_rd(p, 0x6004), ==, p->out_of_order);
    g_assert_cmpuint(pg_rd(p, 0x6008), ==, p->clock_hz);
    g_assert_cmphex(pg_rd(p, 0x600C) & 0x7FF0FE00u, ==, 0);
    g_assert_cmpuint(pg_rd(p, 0x6010), <=, 512);
    /* FLOW_EMPTY: only done, the channels, error and empty */
    g_assert_cmphex(fe & ~0x1F90u, ==, 0);
    g_assert_cmpuint(rlast, <=, arreq);
    g_assert_cmpuint(pg_rd(p, 0x2038), <=, awreq);
    g_assert_cmpuint(pg_rd(p, 0x2034), <=, awreq);
    g_assert_cmpuint(pg_rd(p, 0x2014), <=, 256ull * rlast);
    if (rlast) {
        g_assert_cmpuint(pg_rd(p, 0x2028), <=, pg_rd(p, 0x2024));
    }
    /* every response OKAY, nothing checked, unmodelled registers 0 */
    for (uint32_t off = 0x2054; off < 0x20D0; off += 4) {
        g_assert_cmphex(pg_rd(p, off), ==, 0);
    }
    for (uint32_t off = 0x20D0; off <= 0x20D8; off += 4) {
        g_assert_cmphex(pg_rd(p, off), ==, 0);
    }
    for (uint32_t off = 0x219C; off <= 0x21B0; off += 4) {
        g_assert_cmphex(pg_rd(p, off), ==, 0);
    }
    for (uint32_t off = 0x6014; off < 0x8000; off += 0x1F4) {
        g_assert_cmphex(pg_rd(p, off), ==, 0);
    }
    p->errors += !!(fe & 0x10);
    p->dones += !!(fe & 0x200);
    /* the guards on both sides of the programs' RAM */
    for (uint32_t off = 0; off < PG_GUARD; off += 0x80) {
        g_assert_cmphex(qtest_readl(p->n.t->qts, PG_TARGET - PG_GUARD + off),
                        ==, 0x5A5A5A5A);
        g_assert_cmphex(qtest_readl(p->n.t->qts, PG_TARGET + PG_SPAN + off),
                        ==, 0x5A5A5A5A);
    }
    g_assert_cmphex(rd(&p->n, PTL_REG_MAGIC), ==, PTL_MAGIC);
}

static void test_pg381_storm(void)
{
    uint32_t seed = storm_seed();
    g_autofree char *args = NULL;
    PgStorm p = { 0 };

    g_test_message("seed %u (NDK_QTEST_SEED=%u replays this run)", seed,
                   seed);
    p.rng = g_rand_new_with_seed(seed ^ 0x96381381u);
    p.clock_hz = 4000000u * rnd(p.rng, 25, 125);
    p.out_of_order = rnd(p.rng, 0, 1);
    args = g_strdup_printf("-m 256M -device ndk-pcie-telemetry,addr=04.0,"
                           "pg381=on,pg381-out-of-order=%s,"
                           "pcie-clk-freq=%u,pcie-rq-mfb-regions=%u,"
                           "pcie-rc-mfb-regions=%u,tag-capacity=%u",
                           p.out_of_order ? "on" : "off", p.clock_hz,
                           rnd(p.rng, 1, 4), rnd(p.rng, 1, 4),
                           rnd(p.rng, 1, 300));
    g_test_message("%s", args);
    ndk_open_sized(&p.n, "q35", 32u << 20, args);
    qtest_memset(p.n.t->qts, PG_TARGET - PG_GUARD, 0x5A, PG_GUARD);
    qtest_memset(p.n.t->qts, PG_TARGET + PG_SPAN, 0x5A, PG_GUARD);
    pg_check(&p);
    for (unsigned round = 0; round < PG_ROUNDS && !g_test_failed();
         round++) {
        for (unsigned i = 0; i < PG_OPS && !g_test_failed(); i++) {
            unsigned k = rnd(p.rng, 0, 99);

            if (k < 35) {
                pg_any_access(&p);
            } else if (k < 45) {
                pg_program(&p);
            } else if (k < 57) {
                pg_wr(&p, 0x4004, 1);
                p.starts++;
            } else if (k < 62) {
                pg_wr(&p, 0x4000, rnd(p.rng, 0, 1));
            } else if (k < 66) {
                pg_rd(&p, 0x2234);
            } else if (k < 72) {
                pg_settings(&p);
            } else if (k < 90) {
                step(&p.n, rnd(p.rng, 0, 9) ? rnd(p.rng, 1, 5000)
                                            : rnd(p.rng, 5000, 3000000));
            } else {
                pg_check(&p);
            }
        }
        pg_check(&p);
        g_test_message("round %u: %u starts, %u checks saw an error, %u "
                       "done", round, p.starts, p.errors, p.dones);
        if (round == PG_ROUNDS / 2) {
            qtest_qmp_assert_success(p.n.t->qts,
                                     "{ 'execute': 'system_reset' }");
            qtest_qmp_eventwait(p.n.t->qts, "RESET");
            qpci_config_writel(p.n.t->dev, PCI_BASE_ADDRESS_0,
                               p.n.t->bar.addr);
            qpci_device_enable(p.n.t->dev);
            g_assert_cmpuint(pg_rd(&p, 0x6010), ==, 0);
            g_assert_cmpuint(pg_rd(&p, 0x2018), ==, 0);
            pg_check(&p);
        }
    }
    g_assert_cmpuint(p.starts, >, 0);
    g_assert_cmpuint(p.dones, >, 0);
    g_assert_true(qtest_probe_child(p.n.t->qts));
    ndk_close(&p.n);
    g_rand_free(p.rng);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_set_nonfatal_assertions();

    for (unsigned g = 0; g < GEN_COUNT; g++) {
        g_autofree char *path = g_strdup_printf(
            "/ndk-pcie-telemetry/random-access/%s", storm_gen_name[g]);

        g_test_add_data_func(path, GINT_TO_POINTER(g), test_storm);
    }

    g_test_add_func("/ndk-pcie-telemetry/random-access/dwc-root-port",
                    test_dwc_storm);
    g_test_add_func("/ndk-pcie-telemetry/random-access/flit-link",
                    test_flit_storm);
    g_test_add_func("/ndk-pcie-telemetry/random-access/hisi-ptt",
                    test_ptt_storm);
    g_test_add_func("/ndk-pcie-telemetry/random-access/dw-xdata",
                    test_xdata_storm);
    g_test_add_func("/ndk-pcie-telemetry/random-access/pg381",
                    test_pg381_storm);

    return g_test_run();
}
