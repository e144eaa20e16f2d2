/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The DMA engine's transfers on the probes' buses (ptm-dma-*.c):
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
#include "ptm-gen.h"
#include "ptm-transfers.h"

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

static void rig_init_drain(Rig *r, bool reference, uint32_t drain_period)
{
    PtmGeometry geo;

    ptm_config_default(&r->cfg);
    if (drain_period) {
        r->cfg.drain_period = drain_period;
    }
    r->core = ptm_core_new(&r->cfg);
    ptm_core_set_reference(r->core, reference);
    ptm_core_geometry(r->core, &geo);
    r->log = ptm_dma_traffic_new(&geo);
    ptm_core_set_source(r->core, ptm_dma_traffic_ops(), r->log);
    ptm_core_power_on(r->core, 0);
}

static void rig_init(Rig *r, bool reference)
{
    rig_init_drain(r, reference, 0);
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
    /* long runs of equal completions, counted in uneven steps */
    for (unsigned k = 0; k < 2; k++) {
        Rig *r = k ? &b : &a;

        ptm_dma_traffic_add(r->log, 250000, 0, false, 0x40000010, 8000,
                            &set);
        ptm_dma_traffic_add(r->log, 250000, 0, false, 0x50000000, 16384,
                            &set);
    }
    for (uint64_t t = 200000; t < 400000; t += 1111) {
        ptm_core_advance(a.core, t);
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

/*
 * Trains as a TX queue makes them (a descriptor fetch, then 16 data reads
 * of equal buffers, again and again, then the update write, all at one
 * moment) and RX-like trains of writes: the requests and steps of a train
 * are kept as runs with a pace, and counting them a period at a time must
 * give what the per-cycle reference gives, every counter, with 5-bit,
 * 8-bit and 10-bit tags (the 5-bit ones run out), across a save and load.
 */
static void test_trains(void)
{
    static const PtmSettings sets[] = {
        { .mps = 1, .mrrs = 2, .ext_tag = false },
        { .mps = 0, .mrrs = 1, .ext_tag = true, .rcb_128 = true },
        { .mps = 2, .mrrs = 5, .tag_10bit = true },
    };

    for (unsigned si = 0; si < G_N_ELEMENTS(sets); si++) {
        Rig a, b;
        const PtmLayout *lay;
        uint64_t t = 2000, step = 700 + 300 * si;

        /* short drain windows: many of them end inside a train */
        rig_init_drain(&a, false, 512);
        rig_init_drain(&b, true, 512);
        for (unsigned burst = 0; burst < 40; burst++) {
            for (unsigned k = 0; k < 2; k++) {
                Rig *r = k ? &b : &a;
                uint32_t size = burst % 3 == 2 ? 1500 : 64;

                for (unsigned g = 0; g < 4; g++) {
                    ptm_dma_traffic_add(r->log, t, 0, false,
                                        0x7000000 + g * 128, 128, &sets[si]);
                    for (unsigned i = 0; i < 16; i++) {
                        ptm_dma_traffic_add(r->log, t, 0, burst % 4 == 3,
                                            0x10000000 +
                                            (uint64_t)(g * 16 + i) * 4096,
                                            size, &sets[si]);
                    }
                }
                ptm_dma_traffic_add(r->log, t, 0, true, 0x8000000, 4,
                                    &sets[si]);
            }
            /* the next burst while this one is still on the buses, or not */
            t += burst % 2 ? 900 : 3000 + 37 * burst;
        }
        /*
         * counted in uneven steps, a save and load half way; the least
         * free tags and FIFO words of each step (PCIE_TAGS and PCIE_STFIFO,
         * the lowest cleared after each read) equal
         */
        for (uint64_t c = 1000; c < t + 100000; c += step) {
            ptm_core_advance(a.core, c);
            ptm_core_advance(b.core, c);
            g_assert_cmphex(ptm_core_read(a.core, c, PTM_REG_PCIE_TAGS, 4), ==,
                            ptm_core_read(b.core, c, PTM_REG_PCIE_TAGS, 4));
            g_assert_cmphex(ptm_core_read(a.core, c, PTM_REG_PCIE_STFIFO, 4),
                            ==,
                            ptm_core_read(b.core, c, PTM_REG_PCIE_STFIFO, 4));
            ptm_core_write(a.core, c, PTM_REG_COMMAND, PTM_CMD_CLEAR_LOWEST, 4);
            ptm_core_write(b.core, c, PTM_REG_COMMAND, PTM_CMD_CLEAR_LOWEST, 4);
            if (c / step == 300) {
                size_t len;
                void *st = ptm_dma_traffic_save(a.log, &len);
                char *err;

                ptm_dma_traffic_reset(a.log, 0);
                err = ptm_dma_traffic_load(a.log, st, len);
                g_assert_null(err);
                g_free(st);
            }
        }
        ptm_core_advance(a.core, t + 200000);
        ptm_core_advance(b.core, t + 200000);
        lay = ptm_core_layout(a.core);
        for (unsigned e = 0; e < lay->entries; e++) {
            if (live(&a, e) != live(&b, e)) {
                g_test_message("settings %u entry %u: %" G_GUINT64_FORMAT
                               " != %" G_GUINT64_FORMAT, si, e, live(&a, e),
                               live(&b, e));
            }
            g_assert_cmpuint(live(&a, e), ==, live(&b, e));
        }
        g_assert_cmpuint(live(&a, PCH(RQ, SOF)), >, 40 * 64);
        rig_fini(&a);
        rig_fini(&b);
    }
}

/*
 * The source's count of any span of a train log, against the same span
 * counted cycle by cycle from its fill: the PCIe probe's cycles,
 * histograms, least and last free tags and FIFO words (what the steady
 * pace of the steps is counted a period at a time for), over spans that
 * start and end anywhere, inside a ramp of the tags or in its steady part.
 */
static void test_train_spans(void)
{
    Rig r;
    PtmSettings set = set_a;
    PtmProbeShape sh;
    PtmChunk *ch = ptm_chunk_new();
    const PtmSourceOps *ops = ptm_dma_traffic_ops();
    GRand *rnd = g_rand_new_with_seed(20261206);
    uint64_t end = 0;

    set.ext_tag = false;
    rig_init(&r, false);
    for (unsigned burst = 0; burst < 6; burst++) {
        uint64_t t = 1000 + burst * 20000;

        for (unsigned i = 0; i < 300; i++) {
            ptm_dma_traffic_add(r.log, t, 0, false, 0x10000000 + i * 4096,
                                i % 17 ? 64 : 128, &set);
        }
    }
    ptm_core_probe_shape(r.core, 0, PTM_DOMAIN_PCIE, &sh);
    g_assert_cmpuint(sh.brakes, >, 0);
    end = 130000 * 4 / 10;      /* PCIe cycles (400 MHz) past the last read */
    for (unsigned n = 0; n < 3000; n++) {
        uint64_t s = g_rand_int_range(rnd, 0, end);
        uint64_t len = n % 3 ? g_rand_int_range(rnd, 1, 300)
                             : g_rand_int_range(rnd, 1, 20000);
        uint64_t e = MIN(s + len, end), c = s;
        uint64_t fast[256] = { 0 }, ref[256] = { 0 };
        PtmCountState sf = { 0 }, sr = { 0 };
        unsigned base = 1 + sh.info.buses * (6 + sh.info.regions);

        ptm_count_state_window_start(&sf);
        ptm_count_state_window_start(&sr);
        g_assert_true(ops->count(r.log, &sh, s, e, &sf, fast));
        while (c < e) {
            ch->seg = ch->scratch;
            c += ops->fill(r.log, &sh.info, c, e - c, ch);
            ptm_count_chunk_reference(&sh, &sr, ch, ref);
        }
        g_assert_cmpuint(fast[0], ==, ref[0]);
        for (unsigned k = 0; k < 2 * PTM_HIST_BANDS; k++) {
            g_assert_cmpuint(fast[base + PTM_BRAKES + k], ==,
                             ref[base + PTM_BRAKES + k]);
        }
        g_assert_cmpuint(sf.tag_min, ==, sr.tag_min);
        g_assert_cmpuint(sf.stfifo_min, ==, sr.stfifo_min);
        g_assert_cmpuint(sf.tag_last, ==, sr.tag_last);
        g_assert_cmpuint(sf.stfifo_last, ==, sr.stfifo_last);
    }
    g_rand_free(rnd);
    ptm_chunk_free(ch);
    rig_fini(&r);
}

/*
 * Every cycle of a probe from two logs alike, [0, end): their fills'
 * segments walked side by side, compared where they overlap.
 */
static void same_cycles(PtmDmaTraffic *a, PtmDmaTraffic *b,
                        const PtmProbeInfo *info, uint64_t end)
{
    const PtmSourceOps *ops = ptm_dma_traffic_ops();
    PtmDmaTraffic *log[2] = { a, b };
    PtmChunk *ch[2] = { ptm_chunk_new(), ptm_chunk_new() };
    unsigned at[2] = { 0, 0 };
    uint64_t left[2] = { 0, 0 };        /* cycles left in segment at[] */
    size_t from = offsetof(PtmSegment, brake);
    size_t cmp = offsetof(PtmSegment, bus) +
                 info->buses * sizeof(PtmBusCycle) - from;

    for (uint64_t c = 0; c < end;) {
        uint64_t step;

        for (unsigned k = 0; k < 2; k++) {
            if (!left[k] && ++at[k] >= ch[k]->nseg) {
                ch[k]->seg = ch[k]->scratch;
                g_assert_cmpuint(ops->fill(log[k], info, c, end - c, ch[k]),
                                 >, 0);
                at[k] = 0;
            }
            if (!left[k]) {
                left[k] = ch[k]->seg[at[k]].cycles;
            }
        }
        if (memcmp((char *)&ch[0]->seg[at[0]] + from,
                   (char *)&ch[1]->seg[at[1]] + from, cmp)) {
            g_test_message("%s probe, cycle %" G_GUINT64_FORMAT,
                           info->domain == PTM_DOMAIN_PCIE ? "PCIe" : "DMA",
                           c);
            g_assert_not_reached();
        }
        step = MIN(left[0], left[1]);
        left[0] -= step;
        left[1] -= step;
        c += step;
    }
    ptm_chunk_free(ch[0]);
    ptm_chunk_free(ch[1]);
}

/*
 * The equal completions of a read and the equal requests of a write are
 * put on the buses in runs at once: the same frames at the same cycles as
 * one by one, for random trains of transfers (some of equal ones, 5-bit
 * tags among the settings) at DMA clocks whose ratio to the PCIe clock is
 * 2, 8/5, 1 and 1/2 (400 MHz PCIe).
 */
static void test_runs_at_once(void)
{
    static const uint64_t dma_hz[] = {
        200000000, 250000000, 400000000, 800000000,
    };
    static const uint32_t sizes[] = { 4, 8, 64, 128, 500, 1500, 4096, 9000 };
    GRand *rnd = g_rand_new_with_seed(612);

    for (unsigned h = 0; h < G_N_ELEMENTS(dma_hz); h++) {
        PtmConfig cfg;
        PtmCore *core;
        PtmGeometry geo;
        PtmProbeShape pcie, dma;
        PtmDmaTraffic *a, *b;
        uint64_t t = 1000;

        ptm_config_default(&cfg);
        cfg.dma_clk_hz = dma_hz[h];
        core = ptm_core_new(&cfg);
        ptm_core_geometry(core, &geo);
        ptm_core_probe_shape(core, 0, PTM_DOMAIN_PCIE, &pcie);
        ptm_core_probe_shape(core, 0, PTM_DOMAIN_DMA, &dma);
        a = ptm_dma_traffic_new(&geo);
        b = ptm_dma_traffic_new(&geo);
        ptm_dma_traffic_set_frame_by_frame(b, true);
        for (unsigned i = 0; i < 600; i++) {
            PtmSettings set = {
                .mps = g_rand_int_range(rnd, 0, 4),
                .mrrs = g_rand_int_range(rnd, 0, 6),
                .ext_tag = g_rand_boolean(rnd),
                .rcb_128 = g_rand_boolean(rnd),
            };
            bool write = g_rand_boolean(rnd);
            uint64_t addr = 0x10000000 + g_rand_int_range(rnd, 0, 1 << 20);
            uint32_t bytes = g_rand_int_range(rnd, 0, 4)
                             ? sizes[g_rand_int_range(rnd, 0,
                                                      G_N_ELEMENTS(sizes))]
                             : (uint32_t)g_rand_int_range(rnd, 1, 16384);

            /* a train of equal ones now and then */
            unsigned reps = g_rand_int_range(rnd, 0, 4) ? 1
                            : g_rand_int_range(rnd, 2, 90);

            if (g_rand_int_range(rnd, 0, 3) == 0) {
                addr &= ~(uint64_t)0x3F;        /* often aligned */
            }
            if (reps > 1 && g_rand_boolean(rnd)) {
                bytes = g_rand_boolean(rnd) ? 64 : 256;
            }
            /* trains: most at the moment of the one before */
            if (g_rand_int_range(rnd, 0, 8) == 0) {
                t += g_rand_int_range(rnd, 1, 30000);
            }
            /* buffers 4 KiB apart, or 2 KiB (equal below MPS 4 KiB) */
            uint64_t stride = g_rand_boolean(rnd) ? 4096 : 2048;

            for (unsigned r = 0; r < reps; r++) {
                ptm_dma_traffic_add(a, t, 0, write, addr + r * stride, bytes,
                                    &set);
                ptm_dma_traffic_add(b, t, 0, write, addr + r * stride, bytes,
                                    &set);
            }
        }
        /* long trains of 64-byte reads: with 5-bit tags they run out */
        for (unsigned tags = 0; tags < 2; tags++) {
            PtmSettings set = { .mps = 1, .mrrs = 2, .ext_tag = tags };

            t += 3000000;       /* after all before has drained */
            for (unsigned r = 0; r < 300; r++) {
                ptm_dma_traffic_add(a, t, 0, false, 0x20000040 + r * 4096, 64,
                                    &set);
                ptm_dma_traffic_add(b, t, 0, false, 0x20000040 + r * 4096, 64,
                                    &set);
            }
        }
        /* past the last frame: 3 ms at the fastest clock */
        same_cycles(a, b, &pcie.info, (t + 3000000) * 4 / 10);
        same_cycles(a, b, &dma.info, (t + 3000000) * dma_hz[h] / 1000000000);
        ptm_dma_traffic_free(a);
        ptm_dma_traffic_free(b);
        ptm_core_free(core);
    }
    g_rand_free(rnd);
}

/*
 * Two cards of tags and FIFO words: r[0] counts the log as the device
 * does, r[1] places every frame one by one and counts every cycle
 */
static void rig_pair(Rig r[2], uint32_t tags, uint32_t words)
{
    for (unsigned k = 0; k < 2; k++) {
        PtmGeometry geo;

        ptm_config_default(&r[k].cfg);
        r[k].cfg.tag_capacity = tags;
        r[k].cfg.stfifo_capacity = words;
        r[k].core = ptm_core_new(&r[k].cfg);
        ptm_core_set_reference(r[k].core, k == 1);
        ptm_core_geometry(r[k].core, &geo);
        r[k].log = ptm_dma_traffic_new(&geo);
        ptm_dma_traffic_set_frame_by_frame(r[k].log, k == 1);
        ptm_core_set_source(r[k].core, ptm_dma_traffic_ops(), r[k].log);
        ptm_core_power_on(r[k].core, 0);
    }
}

/*
 * Bursts as the engine makes them (a descriptor fetch, a train of equal
 * frames, an update write, all at the doorbell's time), held as trains and
 * counted from the log, against the per-cycle reference fed one transfer
 * at a time: every counter equal. Few tags and FIFO words, so that the
 * histograms move through their bands within a train.
 */
static void test_trains_counted(void)
{
    Rig r[2];
    const PtmLayout *lay;
    GRand *rnd = g_rand_new_with_seed(2026);
    PtmSettings set = { .mps = 0, .mrrs = 5, .ext_tag = true };
    uint64_t t = 1000, tag_bands = 0, fifo_bands = 0;
    unsigned hist;

    rig_pair(r, 64, 96);
    for (unsigned burst = 0; burst < 200; burst++) {
        unsigned n = g_rand_int_range(rnd, 1, 80);
        bool write = burst % 5 == 4;
        uint32_t bytes = g_rand_boolean(rnd) ? 64 : 128;

        for (unsigned k = 0; k < 2; k++) {
            ptm_dma_traffic_add(r[k].log, t, 0, false, 0x1000000 + burst * 8,
                                MIN(n, 16u) * 8, &set);
            for (unsigned i = 0; i < n; i++) {
                ptm_dma_traffic_add(r[k].log, t, 0, write,
                                    0x2000000 + (uint64_t)i * 4096, bytes,
                                    &set);
            }
            ptm_dma_traffic_add(r[k].log, t, 0, true, 0x3000000, 4, &set);
        }
        t += g_rand_int_range(rnd, 300, 20000);
        if (burst % 7 == 0) {
            ptm_core_advance(r[0].core, t);
        }
    }
    for (unsigned k = 0; k < 2; k++) {
        ptm_core_advance(r[k].core, t + 1000000);
    }
    lay = ptm_core_layout(r[0].core);
    for (unsigned e = 0; e < lay->entries; e++) {
        g_assert_cmpuint(live(&r[0], e), ==, live(&r[1], e));
    }
    /* the histograms saw more than one band each */
    hist = 1 + 2 * (6 + lay->pcie_regions) + 6;
    for (unsigned i = 0; i < 4; i++) {
        tag_bands += live(&r[1], hist + i) > 0;
        fifo_bands += live(&r[1], hist + 4 + i) > 0;
    }
    g_assert_cmpuint(tag_bands, >=, 3);
    g_assert_cmpuint(fifo_bands, >=, 3);
    for (unsigned k = 0; k < 2; k++) {
        rig_fini(&r[k]);
    }
    g_rand_free(rnd);
}

/* a - b of two staircases after a's step i, worked out step by step */
static uint64_t stairs_at(const PtmStairs *a, const PtmStairs *b, uint64_t i)
{
    uint64_t at = a->cycle + i * a->period;
    uint64_t x = a->before + (i + 1) * a->amt;
    uint64_t y = b->before + ((at - b->cycle) / b->period + 1) * b->amt;

    return x - y;
}

/*
 * The closed form of a staircase's peak over another's against every
 * step tried, with paces either way and equal ones.
 */
static void test_stairs_peak(void)
{
    GRand *rnd = g_rand_new_with_seed(11);
    unsigned found = 0, declined = 0, inner = 0;

    for (unsigned n = 0; n < 200000; n++) {
        PtmStairs a, b;
        uint64_t i0 = g_rand_int_range(rnd, 0, 50);
        uint64_t i1 = i0 + g_rand_int_range(rnd, 0, 200);
        uint64_t want = 0, got = 0, at_end;

        b.period = g_rand_int_range(rnd, 1, 40);
        b.amt = g_rand_int_range(rnd, 1, 20);
        b.cycle = g_rand_int_range(rnd, 0, 1000);
        b.before = g_rand_int_range(rnd, 0, 1000);
        a.period = g_rand_int_range(rnd, 1, 40);
        a.amt = g_rand_int_range(rnd, 1, 20);
        /* a's step i0 at or after b's first */
        a.cycle = b.cycle + g_rand_int_range(rnd, 0, 200);
        a.before = 1000000000;
        for (uint64_t i = i0; i <= i1; i++) {
            want = MAX(want, stairs_at(&a, &b, i));
        }
        if (!ptm_stairs_peak(&a, &b, i0, i1, 64, &got)) {
            declined++;
            g_assert_cmpuint(got, ==, 0);
            continue;
        }
        g_assert_cmpuint(got, ==, want);
        found++;
        /* the peak of the ends alone is not always the peak */
        at_end = MAX(stairs_at(&a, &b, i0), stairs_at(&a, &b, i1));
        inner += at_end != want;
    }
    g_test_message("%u found, %u declined, %u inside", found, declined, inner);
    g_assert_cmpuint(found, >, 150000);
    g_assert_cmpuint(inner, >, 10000);
    /* an existing peak above stays */
    {
        PtmStairs a = { 0, 2, 100, 1 }, b = { 0, 1, 0, 1 };
        uint64_t got = 1000;

        g_assert_true(ptm_stairs_peak(&a, &b, 0, 10, 64, &got));
        g_assert_cmpuint(got, ==, 1000);
    }
    g_rand_free(rnd);
}

/*
 * The lowest free tags and FIFO words (PCIE_TAGS and PCIE_STFIFO, reset
 * after each reading) and every counter against the per-cycle reference,
 * on cards of the default capacities (where a burst mostly stays in one
 * band of each histogram, and only its peaks are looked for) and of
 * smaller ones, with bursts of many sizes, settings and paces.
 */
static void lowest_counted(uint32_t tags, uint32_t words, uint32_t seed)
{
    Rig r[2];
    const PtmLayout *lay;
    GRand *rnd = g_rand_new_with_seed(seed);
    static const uint32_t sizes[] = { 4, 64, 100, 128, 256, 512, 1500, 4096 };
    uint64_t t = 1000;
    GHashTable *seen = g_hash_table_new(NULL, NULL);

    rig_pair(r, tags, words);
    for (unsigned burst = 0; burst < 300; burst++) {
        unsigned n = g_rand_int_range(rnd, 1, 400);
        bool write = g_rand_int_range(rnd, 0, 4) == 0;
        uint32_t bytes = sizes[g_rand_int_range(rnd, 0, G_N_ELEMENTS(sizes))];
        PtmSettings set = {
            .mps = g_rand_int_range(rnd, 0, 3),
            .mrrs = g_rand_int_range(rnd, 0, 6),
            .ext_tag = g_rand_boolean(rnd),
            .rcb_128 = g_rand_boolean(rnd),
        };

        for (unsigned k = 0; k < 2; k++) {
            for (unsigned i = 0; i < n; i++) {
                if (i % 16 == 0) {
                    /* a descriptor fetch every 16, as the engine makes */
                    ptm_dma_traffic_add(r[k].log, t, 0, false,
                                        0x1000000 + i * 8, 128, &set);
                }
                ptm_dma_traffic_add(r[k].log, t, 0, write,
                                    0x2000000 + (uint64_t)i * 8192, bytes,
                                    &set);
            }
            ptm_dma_traffic_add(r[k].log, t, 0, true, 0x3000000, 64, &set);
        }
        /* readings through the burst, a drain period or so apart */
        for (uint64_t end = t + g_rand_int_range(rnd, 100, 40000); t < end;) {
            t = MIN(end, t + g_rand_int_range(rnd, 5000, 15000));
            for (unsigned reg = 0x80; reg <= 0xC0; reg += 0x40) {
                uint32_t v = ptm_core_read(r[0].core, t, reg, 4);

                g_assert_cmphex(v, ==, ptm_core_read(r[1].core, t, reg, 4));
                g_hash_table_add(seen, GUINT_TO_POINTER(v >> 16 | reg << 16));
            }
            for (unsigned k = 0; k < 2; k++) {
                ptm_core_write(r[k].core, t, 0x20, 8, 4);
            }
        }
    }
    for (unsigned k = 0; k < 2; k++) {
        ptm_core_advance(r[k].core, t + 1000000);
    }
    lay = ptm_core_layout(r[0].core);
    for (unsigned e = 0; e < lay->entries; e++) {
        g_assert_cmpuint(live(&r[0], e), ==, live(&r[1], e));
    }
    /* the lowest values read were many, not one idle value */
    g_assert_cmpuint(g_hash_table_size(seen), >=, 10);
    for (unsigned k = 0; k < 2; k++) {
        rig_fini(&r[k]);
    }
    g_hash_table_destroy(seen);
    g_rand_free(rnd);
}

static void test_lowest_counted(void)
{
    lowest_counted(256, 1024, 7);
    lowest_counted(2047, 4096, 8);
    lowest_counted(64, 96, 9);
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
            ptm_dma_traffic_reset(b.log, 0);
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

/*
 * A migration state of the log's earlier format (back-to-back runs, one
 * step an entry; tests/unit/data/dma-log-v1.bin, saved by the build of
 * that format right after these 40 transfers) loads, and counts as the
 * same transfers logged here.
 */
static void test_load_v1(void)
{
    Rig a, b;
    const PtmLayout *lay;
    g_autofree char *path = g_build_filename(g_getenv("PTM_SOURCE_ROOT"),
                                             "tests/unit/data/dma-log-v1.bin",
                                             NULL);
    g_autofree char *buf = NULL;
    gsize len = 0;
    char *err;

    g_assert_true(g_file_get_contents(path, &buf, &len, NULL));
    rig_init(&a, false);
    rig_init(&b, false);
    err = ptm_dma_traffic_load(a.log, buf, len);
    g_assert_null(err);
    for (unsigned i = 0; i < 40; i++) {
        ptm_dma_traffic_add(b.log, 3000 + (i / 8) * 2000, 0, i % 3 == 0,
                            0x20000000 + i * 4100, 64 + i * 97, &set_a);
    }
    ptm_core_advance(a.core, 2000000);
    ptm_core_advance(b.core, 2000000);
    lay = ptm_core_layout(a.core);
    for (unsigned e = 0; e < lay->entries; e++) {
        g_assert_cmpuint(live(&a, e), ==, live(&b, e));
    }
    g_assert_cmphex(ptm_core_read(a.core, 2000000, PTM_REG_PCIE_TAGS, 4), ==,
                    ptm_core_read(b.core, 2000000, PTM_REG_PCIE_TAGS, 4));
    g_assert_cmpuint(live(&a, DCH(DOWN, SOF)), >, 0);
    /* cut short, it is refused */
    err = ptm_dma_traffic_load(a.log, buf, len - 8);
    g_assert_nonnull(err);
    g_free(err);
    rig_fini(&a);
    rig_fini(&b);
}

/*
 * Background transfers of a transfers generator: the log plays its slots
 * as if each had been added at its time, before an engine's transfer of
 * the same time, with the parameters of the slot's PCIe cycle, whatever
 * order the block asks for cycles in and across a save and load. Three
 * cards: a counted fast in one go, c in small steps with a migration in
 * the middle, and b counted per cycle with every slot added by hand; all
 * equal, and equal to the rule over every transfer.
 */
static void test_background(void)
{
    Rig a, b, c;
    PtmGeometry geo;
    PtmGen *ga, *gc;
    PtmTransfersParams p[3] = {
        { .port = 0, .interval_ns = 3000, .write_bytes = 700,
          .read_bytes = 1500, .address = 0x10000F00, .stride = 0x1234 },
        { .port = 0, .interval_ns = 4500, .write_bytes = 64,
          .read_bytes = 0, .address = 0x20000000, .stride = 64 },
        { .port = 0, .interval_ns = 1000, .write_bytes = 0,
          .read_bytes = 0 },
    };
    uint64_t from[3], slot_t = 0, slot_k = 0, eng_t;
    const uint64_t end = 600000;
    Bus up = { 0 }, rq = { 0 }, rc = { 0 }, down = { 0 };
    const PtmLayout *lay;
    char *err = NULL;
    unsigned i = 0;

    rig_init(&a, false);
    rig_init(&b, true);
    rig_init(&c, false);
    ptm_core_geometry(a.core, &geo);
    /* the parameters change at PCIe cycles of 60 us and 150 us */
    from[0] = 0;
    from[1] = 60000 * geo.pcie_hz / 1000000000;
    from[2] = 150000 * geo.pcie_hz / 1000000000;
    ga = ptm_gen_new(&ptm_model_transfers, &p[0], &geo, &err);
    g_assert_null(err);
    gc = ptm_gen_new(&ptm_model_transfers, &p[0], &geo, &err);
    g_assert_null(err);
    for (unsigned v = 1; v < 3; v++) {
        g_assert_null(ptm_gen_set_params(ga, &p[v], from[v], 0));
        g_assert_null(ptm_gen_set_params(gc, &p[v], from[v], 0));
    }
    ptm_dma_traffic_set_settings(a.log, 0, &set_a);
    ptm_dma_traffic_set_settings(c.log, 0, &set_a);
    ptm_dma_traffic_set_background(a.log, ga);
    ptm_dma_traffic_set_background(c.log, gc);

    /* b by hand: slots and the engine's transfers in time order */
    slot_t = p[0].interval_ns;
    slot_k = 1;
    for (eng_t = 4500; slot_t <= end || eng_t <= 180000;) {
        if (slot_t <= end && (slot_t <= eng_t || eng_t > 180000)) {
            uint64_t cyc = slot_t * geo.pcie_hz / 1000000000;
            unsigned v = cyc >= from[2] ? 2 : cyc >= from[1] ? 1 : 0;
            uint64_t addr = (uint32_t)(p[v].address +
                                       (uint32_t)(slot_k - 1) *
                                       p[v].stride);

            if (p[v].write_bytes) {
                ptm_dma_traffic_add(b.log, slot_t, 0, true, addr,
                                    p[v].write_bytes, &set_a);
                expect_write(&up, &rq, addr, p[v].write_bytes, 256);
            }
            if (p[v].read_bytes) {
                ptm_dma_traffic_add(b.log, slot_t, 0, false, addr,
                                    p[v].read_bytes, &set_a);
                expect_read(&up, &rq, &rc, &down, addr, p[v].read_bytes,
                            256, 512, 64);
            }
            slot_t += p[v].interval_ns;
            slot_k++;
            continue;
        }
        /* the engine: some at a slot's very time (every 9 us) */
        for (unsigned k = 0; k < 2; k++) {
            Rig *r = k ? &c : &a;

            ptm_dma_traffic_add(r->log, eng_t, 0, i % 2, 0x30000000 + i * 8,
                                96, &set_a);
        }
        ptm_dma_traffic_add(b.log, eng_t, 0, i % 2, 0x30000000 + i * 8, 96,
                            &set_a);
        if (i % 2) {
            expect_write(&up, &rq, 0x30000000 + i * 8, 96, 256);
        } else {
            expect_read(&up, &rq, &rc, &down, 0x30000000 + i * 8, 96, 256,
                        512, 64);
        }
        /* c counts up to each engine transfer, and migrates once */
        ptm_core_advance(c.core, eng_t);
        if (i == 10) {
            size_t len;
            void *st = ptm_dma_traffic_save(c.log, &len);

            ptm_dma_traffic_reset(c.log, 0);
            g_assert_null(ptm_dma_traffic_load(c.log, st, len));
            g_free(st);
        }
        i++;
        eng_t += i % 3 ? 9000 : 4500;
    }
    ptm_core_advance(a.core, end);
    ptm_core_advance(b.core, end);
    for (uint64_t t = 0; t < end; t += 7777) {
        ptm_core_advance(c.core, t);
    }
    ptm_core_advance(c.core, end);
    lay = ptm_core_layout(a.core);
    for (unsigned e = 0; e < lay->entries; e++) {
        g_assert_cmpuint(live(&a, e), ==, live(&b, e));
        g_assert_cmpuint(live(&c, e), ==, live(&b, e));
    }
    check_bus(&a, "UP", true, UP, &up);
    check_bus(&a, "RQ", false, RQ, &rq);
    check_bus(&a, "RC", false, RC, &rc);
    check_bus(&a, "DOWN", true, DOWN, &down);
    /* slots of all three versions were played */
    g_assert_cmpuint(slot_k, >, 40);
    rig_fini(&a);
    rig_fini(&b);
    rig_fini(&c);
    ptm_gen_free(ga);
    ptm_gen_free(gc);
}

/* A reset drops the slots before it; later ones play on. */
static void test_background_reset(void)
{
    Rig r;
    PtmGeometry geo;
    PtmGen *g;
    PtmTransfersParams p = {
        .port = 0, .interval_ns = 10000, .write_bytes = 128,
        .read_bytes = 0, .address = 0x10000000, .stride = 0,
    };
    char *err = NULL;

    rig_init(&r, false);
    ptm_core_geometry(r.core, &geo);
    g = ptm_gen_new(&ptm_model_transfers, &p, &geo, &err);
    g_assert_null(err);
    /* no more writes from 495 us on */
    p.write_bytes = 0;
    g_assert_null(ptm_gen_set_params(g, &p, 495000 * geo.pcie_hz /
                                     1000000000, 0));
    ptm_dma_traffic_set_settings(r.log, 0, &set_a);
    ptm_dma_traffic_set_background(r.log, g);
    /* a source with slots to come is never counted as idle */
    g_assert_true(ptm_dma_traffic_holds(r.log));
    g_assert_cmpint(ptm_dma_traffic_ops()->cost(r.log), ==, PTM_COST_WINDOW);
    /* nothing counted up to 95 us: the reset drops slots 1..9 */
    ptm_dma_traffic_reset(r.log, 95000);
    ptm_core_advance(r.core, 1000000);
    /* slots 10 .. 49 (100 us .. 490 us), a 128 B frame on UP each */
    g_assert_cmpuint(live(&r, DCH(UP, SOF)), ==, 40);
    g_assert_cmpuint(live(&r, PCH(RQ, SOF)), ==, 40);
    rig_fini(&r);
    ptm_gen_free(g);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/dma-traffic/writes", test_writes);
    g_test_add_func("/dma-traffic/reads", test_reads);
    g_test_add_func("/dma-traffic/tag-limit", test_tag_limit);
    g_test_add_func("/dma-traffic/reference", test_reference);
    g_test_add_func("/dma-traffic/trains", test_trains);
    g_test_add_func("/dma-traffic/train-spans", test_train_spans);
    g_test_add_func("/dma-traffic/runs-at-once", test_runs_at_once);
    g_test_add_func("/dma-traffic/trains-counted", test_trains_counted);
    g_test_add_func("/dma-traffic/stairs-peak", test_stairs_peak);
    g_test_add_func("/dma-traffic/lowest-counted", test_lowest_counted);
    g_test_add_func("/dma-traffic/lazy", test_lazy);
    g_test_add_func("/dma-traffic/prune-and-migrate", test_prune_and_migrate);
    g_test_add_func("/dma-traffic/load-v1", test_load_v1);
    g_test_add_func("/dma-traffic/background", test_background);
    g_test_add_func("/dma-traffic/background-reset", test_background_reset);
    return g_test_run();
}
