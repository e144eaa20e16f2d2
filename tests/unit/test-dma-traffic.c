/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The DMA engine's transfers on the probes' buses (ptm-dma-traffic.c):
 * counters of a default card after writes and reads against the rule of
 * docs/dma.md worked out here transfer by transfer (TLPs at MPS and MRRS
 * boundaries, completions at the RCB and then every MPS bytes, one frame
 * per bus from the first region of a cycle), the tag limit of the
 * negotiated tag field, the fast counting against the per-cycle
 * reference, laziness while nothing moves, pruning and migration.
 */
#include <glib.h>
#include <string.h>

#include "ptm-core.h"
#include "ptm-dma-traffic.h"

/* Entries of the default card (2 regions a bus, 1 DMA port) */
#define PCH(b, k)   (1 + 8 * (b) + (k))
#define DCH(b, k)   (32 + 8 * (b) + (k))
enum { WORDS = 0, STALL = 1, SOF = 2, MVB = 3, MVB_STALL = 4, ITEMS = 5,
       REGION0 = 6 };
enum { RQ = 0, RC = 1 };
enum { UP = 0, DOWN = 1 };

#define W       64u     /* bytes per cycle of every bus of the defaults */
#define ITEM    4u

typedef struct Rig {
    PtmConfig cfg;
    PtmCore *core;
    PtmDmaTraffic *log;
} Rig;

static void rig_init(Rig *r, bool reference)
{
    PtmGeometry geo;

    ptm_config_default(&r->cfg);
    r->core = ptm_core_new(&r->cfg);
    ptm_core_set_reference(r->core, reference);
    ptm_core_geometry(r->core, &geo);
    r->log = ptm_dma_traffic_new(&geo);
    ptm_core_set_source(r->core, ptm_dma_traffic_ops(), r->log);
    ptm_core_power_on(r->core, 0);
}

static void rig_fini(Rig *r)
{
    ptm_core_free(r->core);
    ptm_dma_traffic_free(r->log);
}

static uint64_t live(Rig *r, unsigned e)
{
    return ptm_core_counter(r->core, false, e);
}

/* Expected counts of one bus */
typedef struct Bus {
    uint64_t words, sof, mvb, items;
} Bus;

static void frame(Bus *b, uint32_t bytes, bool mvb)
{
    if (bytes) {
        b->words += (bytes + W - 1) / W;
        b->sof++;
        b->items += (bytes + ITEM - 1) / ITEM;
    }
    b->mvb += mvb;
}

static void check_bus(Rig *r, const char *what, bool dma, unsigned bus,
                      const Bus *exp)
{
    unsigned base = dma ? DCH(bus, 0) : PCH(bus, 0);

    g_test_message("%s: words %" G_GUINT64_FORMAT " sof %" G_GUINT64_FORMAT
                   " mvb %" G_GUINT64_FORMAT " items %" G_GUINT64_FORMAT,
                   what, live(r, base + WORDS), live(r, base + SOF),
                   live(r, base + MVB), live(r, base + ITEMS));
    g_assert_cmpuint(live(r, base + WORDS), ==, exp->words);
    g_assert_cmpuint(live(r, base + SOF), ==, exp->sof);
    g_assert_cmpuint(live(r, base + MVB), ==, exp->mvb);
    g_assert_cmpuint(live(r, base + ITEMS), ==, exp->items);
    g_assert_cmpuint(live(r, base + STALL), ==, 0);
    g_assert_cmpuint(live(r, base + MVB_STALL), ==, 0);
}

static const PtmSettings set_a = {
    .mps = 1, .mrrs = 2, .ext_tag = true, .rcb_128 = false,
};

/* The rule for a write of `bytes` at addr with MPS bytes */
static void expect_write(Bus *up, Bus *rq, uint64_t addr, uint32_t bytes,
                         uint64_t mps)
{
    frame(up, bytes, true);
    for (uint64_t a = addr, e = addr + bytes; a < e;) {
        uint64_t len = MIN((a / mps + 1) * mps, e) - a;

        frame(rq, 16 + len, false);
        a += len;
    }
}

static void expect_read(Bus *up, Bus *rq, Bus *rc, Bus *down, uint64_t addr,
                        uint32_t bytes, uint64_t mps, uint64_t mrrs,
                        uint64_t rcb)
{
    frame(up, 0, true);
    for (uint64_t a = addr, e = addr + bytes; a < e;) {
        uint64_t len = MIN((a / mrrs + 1) * mrrs, e) - a;

        frame(rq, 16, false);
        for (uint64_t c = a; c < a + len;) {
            uint64_t n = c == a && c % rcb ? MIN((c / rcb + 1) * rcb, a + len) - c
                                           : MIN(mps, a + len - c);

            frame(rc, 12 + n, false);
            frame(down, n, true);
            c += n;
        }
        a += len;
    }
}

static void test_writes(void)
{
    Rig r;
    Bus up = { 0 }, rq = { 0 }, none = { 0 };
    static const struct { uint64_t addr; uint32_t bytes; } w[] = {
        { 0x10000040, 1500 }, { 0x10002000, 4 }, { 0x10003010, 8 },
        { 0x100000C0, 4096 }, { 0x10000FFC, 65 },
    };

    rig_init(&r, false);
    for (unsigned i = 0; i < 40; i++) {
        unsigned k = i % G_N_ELEMENTS(w);

        ptm_dma_traffic_add(r.log, 1000 + i * 20000, 0, true, w[k].addr,
                            w[k].bytes, &set_a);
        expect_write(&up, &rq, w[k].addr, w[k].bytes, 256);
    }
    ptm_core_advance(r.core, 2000000);
    check_bus(&r, "UP", true, UP, &up);
    check_bus(&r, "RQ", false, RQ, &rq);
    check_bus(&r, "RC", false, RC, &none);
    check_bus(&r, "DOWN", true, DOWN, &none);
    rig_fini(&r);
}

static void test_reads(void)
{
    Rig r;
    Bus up = { 0 }, rq = { 0 }, rc = { 0 }, down = { 0 };
    static const struct { uint64_t addr; uint32_t bytes; } rd[] = {
        { 0x10000100, 8 }, { 0x10010040, 3000 }, { 0x10020020, 100 },
        { 0x10030000, 4096 }, { 0x100401F8, 16 },
    };
    PtmSettings set = set_a;

    set.rcb_128 = true;
    rig_init(&r, false);
    for (unsigned i = 0; i < 40; i++) {
        unsigned k = i % G_N_ELEMENTS(rd);

        ptm_dma_traffic_add(r.log, 1000 + i * 30000, 0, false, rd[k].addr,
                            rd[k].bytes, &set);
        expect_read(&up, &rq, &rc, &down, rd[k].addr, rd[k].bytes, 256, 512,
                    128);
    }
    ptm_core_advance(r.core, 3000000);
    check_bus(&r, "UP", true, UP, &up);
    check_bus(&r, "RQ", false, RQ, &rq);
    check_bus(&r, "RC", false, RC, &rc);
    check_bus(&r, "DOWN", true, DOWN, &down);
    rig_fini(&r);
}

/*
 * Without extended tags 32 reads are out at most: a burst of reads
 * keeps exactly 32 tags taken at its peak, never more.
 */
static void test_tag_limit(void)
{
    Rig r;
    PtmSettings set = set_a;
    PtmProbeInfo info = { 0 };
    PtmChunk *ch = ptm_chunk_new();
    unsigned least = 0xFFFF;
    uint64_t c = 0, end = 400000;

    set.ext_tag = false;
    rig_init(&r, false);
    for (unsigned i = 0; i < 200; i++) {
        ptm_dma_traffic_add(r.log, 1000, 0, false, 0x10000000 + i * 512, 512,
                            &set);
    }
    info.endpoint = 0;
    info.domain = PTM_DOMAIN_PCIE;
    info.buses = 2;
    info.bus_regions[0] = info.bus_regions[1] = 2;
    while (c < end) {
        uint64_t n = ptm_dma_traffic_ops()->fill(r.log, &info, c, end - c,
                                                 ch);

        g_assert_cmpuint(n, >, 0);
        for (unsigned s = 0; s < ch->nseg; s++) {
            least = MIN(least, ch->seg[s].tag_free);
        }
        c += n;
    }
    g_assert_cmpuint(least, ==, 256 - 32);
    ptm_chunk_free(ch);
    rig_fini(&r);
}

/* Fast counting equals the per-cycle reference, every counter. */
static void test_reference(void)
{
    Rig a, b;
    const PtmLayout *lay;
    PtmSettings set = set_a;

    rig_init(&a, false);
    rig_init(&b, true);
    set.rcb_128 = false;
    for (unsigned i = 0; i < 30; i++) {
        for (unsigned k = 0; k < 2; k++) {
            Rig *r = k ? &b : &a;

            ptm_dma_traffic_add(r->log, 500 + i * 7000, 0, i % 3 == 0,
                                0x20000000 + i * 4100, 64 + i * 97, &set);
            ptm_dma_traffic_add(r->log, 500 + i * 7000, 0, true,
                                0x30000000 + i * 8, 4, &set);
        }
    }
    ptm_core_advance(a.core, 400000);
    ptm_core_advance(b.core, 400000);
    lay = ptm_core_layout(a.core);
    for (unsigned e = 0; e < lay->entries; e++) {
        g_assert_cmpuint(live(&a, e), ==, live(&b, e));
    }
    g_assert_cmpuint(live(&a, PCH(RQ, SOF)), >, 0);
    rig_fini(&a);
    rig_fini(&b);
}

/* Nothing in flight: the source counts any span at once. */
static void test_lazy(void)
{
    Rig r;
    const PtmSourceOps *ops = ptm_dma_traffic_ops();

    rig_init(&r, false);
    /* past the periods after power-on, which the core counts one by one */
    ptm_core_advance(r.core, 1000000);
    ptm_dma_traffic_set_now(r.log, 1000000);
    g_assert_cmpint(ops->cost(r.log), ==, PTM_COST_RANGE);
    g_assert_true(ptm_core_lazy(r.core));
    ptm_dma_traffic_add(r.log, 1000000, 0, true, 0x1000, 4096, &set_a);
    g_assert_cmpint(ops->cost(r.log), ==, PTM_COST_WINDOW);
    g_assert_false(ptm_core_lazy(r.core));
    /* the frames end within microseconds */
    ptm_dma_traffic_set_now(r.log, 1100000);
    g_assert_cmpint(ops->cost(r.log), ==, PTM_COST_RANGE);
    ptm_core_advance(r.core, 1200000);
    g_assert_true(ptm_core_lazy(r.core));
    g_assert_cmpuint(live(&r, DCH(UP, SOF)), ==, 1);
    rig_fini(&r);
}

/*
 * Pruning what the core counted and migrating the log mid-transfer
 * change no count: three cards, one pruned, one reloaded, one left alone.
 */
static void test_prune_and_migrate(void)
{
    Rig a, b, c;
    const PtmLayout *lay;
    size_t len;
    void *st;
    char *err;

    rig_init(&a, false);
    rig_init(&b, false);
    rig_init(&c, false);
    for (unsigned i = 0; i < 100; i++) {
        for (unsigned k = 0; k < 3; k++) {
            Rig *r = k == 0 ? &a : k == 1 ? &b : &c;

            ptm_dma_traffic_add(r->log, 1000 + i * 3000, 0, i & 1,
                                0x40000000 + i * 1000, 100 + i * 37,
                                &set_a);
            if (i == 50) {
                ptm_core_advance(r->core, 1000 + i * 3000);
            }
        }
        if (i == 50) {
            ptm_dma_traffic_prune(a.log, 1000 + i * 3000 - 20000);
            st = ptm_dma_traffic_save(b.log, &len);
            ptm_dma_traffic_reset(b.log);
            err = ptm_dma_traffic_load(b.log, st, len);
            g_assert_null(err);
            /* a malformed log is refused and changes nothing */
            err = ptm_dma_traffic_load(b.log, st, len - 8);
            g_assert_nonnull(err);
            g_free(err);
            g_free(st);
        }
    }
    ptm_core_advance(a.core, 2000000);
    ptm_core_advance(b.core, 2000000);
    ptm_core_advance(c.core, 2000000);
    lay = ptm_core_layout(a.core);
    for (unsigned e = 0; e < lay->entries; e++) {
        g_assert_cmpuint(live(&a, e), ==, live(&c, e));
        g_assert_cmpuint(live(&b, e), ==, live(&c, e));
    }
    g_assert_cmpuint(live(&c, DCH(DOWN, SOF)), >, 0);
    rig_fini(&a);
    rig_fini(&b);
    rig_fini(&c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/dma-traffic/writes", test_writes);
    g_test_add_func("/dma-traffic/reads", test_reads);
    g_test_add_func("/dma-traffic/tag-limit", test_tag_limit);
    g_test_add_func("/dma-traffic/reference", test_reference);
    g_test_add_func("/dma-traffic/lazy", test_lazy);
    g_test_add_func("/dma-traffic/prune-and-migrate", test_prune_and_migrate);
    return g_test_run();
}
