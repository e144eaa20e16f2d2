/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest of ndk-pcie-telemetry: migration. A card A runs to T1 and
 * migrates into a file; B loads it, continues at T1 and runs to T2; C
 * makes the same accesses without migrating. B and C must read the same
 * registers and counters, and those the prediction where the traffic is
 * the pattern (ndk-sim.h): with a SNAPSHOT running at T1, with a qom-set
 * still pending, with random and ptc traffic, and on an overloaded card
 * counted in the background. The tests write the stream into a temporary
 * directory of their own.
 */

#include "ndk-common.h"
#include "ndk-sim.h"

/* ------------------------------------------------------------------ */
/* Migration with traffic                                             */

#define MIG_ARGS PATTERN_ARGS "-device ndk-pcie-telemetry,addr=04.0,traffic=tp0"

/* Up to T1: READ_SEL = 1, a SNAPSHOT, another one running at T1. */
static void mig_phase1(Ndk *n, int64_t t1)
{
    step_to(n, n->t->t0 + 3000);
    wr(n, PTL_REG_READ_SEL, 1);
    step_to(n, n->t->t0 + 15000);
    snapshot(n, DEF_ENTRIES);
    /* just after the drain of PCIe window 2, deltas on their way */
    step_to(n, t1 - 200);
    wr(n, PTL_REG_COMMAND, PTL_CMD_SNAPSHOT);
    step_to(n, t1);
    g_assert_cmphex(rd(n, PTL_REG_STATUS), ==, PTL_STATUS_BUSY);
}

typedef struct MigResult {
    uint32_t status, read_sel, tags, stfifo, pcie_status;
    uint64_t snap1[DEF_ENTRIES];    /* snapshot taken before T1 */
    uint64_t live[DEF_ENTRIES];
    uint64_t snap2[DEF_ENTRIES];
} MigResult;

static void mig_phase2(Ndk *n, int64_t t2, MigResult *r)
{
    step_to(n, t2);
    r->status = rd(n, PTL_REG_STATUS);
    r->read_sel = rd(n, PTL_REG_READ_SEL);
    r->tags = rd(n, PTL_REG_PCIE_TAGS(0));
    r->stfifo = rd(n, PTL_REG_PCIE_STFIFO(0));
    r->pcie_status = rd(n, PTL_REG_PCIE_STATUS(0));
    read_counters(n, DEF_ENTRIES, r->live);
    wr(n, PTL_REG_READ_SEL, 0);
    read_counters(n, DEF_ENTRIES, r->snap1);
    snapshot(n, DEF_ENTRIES);
    read_counters(n, DEF_ENTRIES, r->snap2);
}
static void test_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-mig-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    MigResult *rb = g_new0(MigResult, 1), *rc = g_new0(MigResult, 1);
    uint64_t exp[DEF_ENTRIES];
    int64_t t0, t1, t2;
    Ndk a, b, c;

    g_assert(dir);

    /* A: to T1, then migrate into the file */
    ndk_open(&a, "q35", MIG_ARGS);
    t0 = a.t->t0;
    t1 = t0 + 30000 + 1000;
    t2 = t0 + 24 * 10240 + 5120;
    mig_phase1(&a, t1);
    migrate_out(&a, uri);

    /* B: load it, continue at T1 and run to T2 */
    migrate_in(&b, "q35", MIG_ARGS, uri, t0, t1);
    g_assert_cmphex(rd(&b, PTL_REG_STATUS), ==, PTL_STATUS_BUSY);
    mig_phase2(&b, t2, rb);
    ndk_close(&b);
    unlink(file);
    rmdir(dir);

    /* C: the same accesses without the migration */
    ndk_open(&c, "q35", MIG_ARGS);
    g_assert_cmpint(c.t->t0, ==, t0);
    mig_phase1(&c, t1);
    mig_phase2(&c, t2, rc);
    ndk_close(&c);

    g_assert_cmphex(rb->status, ==, rc->status);
    g_assert_cmphex(rb->read_sel, ==, 1);
    g_assert_cmphex(rc->read_sel, ==, 1);
    g_assert_cmphex(rb->tags, ==, rc->tags);
    g_assert_cmphex(rb->stfifo, ==, rc->stfifo);
    g_assert_cmphex(rb->pcie_status, ==, rc->pcie_status);
    check_counters("B vs C, live", rb->live, rc->live, DEF_ENTRIES);
    check_counters("B vs C, snapshot before T1", rb->snap1, rc->snap1,
                   DEF_ENTRIES);
    check_counters("B vs C, snapshot at T2", rb->snap2, rc->snap2,
                   DEF_ENTRIES);

    /* and both equal the prediction: PCIe windows 0..23, DMA 0..11 */
    pattern_expect(t0, t2, exp);
    g_assert_cmpuint(exp[0], ==, 24 * 4096 - 1);
    g_assert_cmpuint(exp[31], ==, 12 * 4096 - 1);
    check_counters("B, live", rb->live, exp, DEF_ENTRIES);
    check_counters("B, snapshot at T2", rb->snap2, exp, DEF_ENTRIES);
    check_counters("C, live", rc->live, exp, DEF_ENTRIES);
    g_assert_cmpuint(rb->snap1[0], >, 0);
    g_free(rb);
    g_free(rc);
}

/*
 * Migration with a change still pending: A makes it at 30.9 us, inside
 * PCIe window 3 = [12287, 16383) (cycle 12360), so it applies from window
 * 4 (cycle 16383, 40.9575 us), after the migration point T1 = 31 us.
 */
static void live_change_phase1(Ndk *n, int64_t t1)
{
    step_to(n, n->t->t0 + 3000);
    wr(n, PTL_REG_READ_SEL, 1);
    step_to(n, n->t->t0 + 15000);
    snapshot(n, DEF_ENTRIES);
    step_to(n, n->t->t0 + 30900);
    qom_set_ok(n->t->qts, "/objects/tp0", "rq-frame-bytes", 128);
    qom_set_ok(n->t->qts, "/objects/tp0", "tags-free", 20);
    qom_set_ok(n->t->qts, "/objects/tp0", "brake", 2);
    step_to(n, t1);
}

static void check_changed_values(QTestState *qts)
{
    g_assert_cmpint(qom_get_int(qts, "/objects/tp0", "rq-frame-bytes"), ==,
                    128);
    g_assert_cmpint(qom_get_int(qts, "/objects/tp0", "tags-free"), ==, 20);
    g_assert_cmpint(qom_get_int(qts, "/objects/tp0", "brake"), ==, 2);
    /* untouched ones keep the command line's */
    g_assert_cmpint(qom_get_int(qts, "/objects/tp0", "up-frame-bytes"), ==,
                    100);
}

static void test_live_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-mig-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    MigResult *rb = g_new0(MigResult, 1), *rc = g_new0(MigResult, 1);
    uint64_t exp[DEF_ENTRIES] = { 0 };
    uint64_t op, od, wp, wd, from[2];
    SimProbe ver[2], dp;
    int64_t t0, t1, t2;
    Ndk a, b, c;

    g_assert(dir);

    ndk_open(&a, "q35", MIG_ARGS);
    t0 = a.t->t0;
    t1 = t0 + 31000;
    t2 = t0 + 24 * 10240 + 5120;
    live_change_phase1(&a, t1);
    migrate_out(&a, uri);

    /* B starts with the old values on its command line */
    migrate_in(&b, "q35", MIG_ARGS, uri, t0, t1);
    check_changed_values(b.t->qts);
    mig_phase2(&b, t2, rb);
    ndk_close(&b);
    unlink(file);
    rmdir(dir);

    ndk_open(&c, "q35", MIG_ARGS);
    g_assert_cmpint(c.t->t0, ==, t0);
    live_change_phase1(&c, t1);
    check_changed_values(c.t->qts);
    mig_phase2(&c, t2, rc);
    ndk_close(&c);

    g_assert_cmphex(rb->status, ==, rc->status);
    g_assert_cmphex(rb->read_sel, ==, rc->read_sel);
    g_assert_cmphex(rb->tags, ==, rc->tags);
    g_assert_cmphex(rb->stfifo, ==, rc->stfifo);
    g_assert_cmphex(rb->pcie_status, ==, rc->pcie_status);
    check_counters("B vs C, live", rb->live, rc->live, DEF_ENTRIES);
    check_counters("B vs C, snapshot before T1", rb->snap1, rc->snap1,
                   DEF_ENTRIES);
    check_counters("B vs C, snapshot at T2", rb->snap2, rc->snap2,
                   DEF_ENTRIES);

    /*
     * The prediction at T2: PCIe windows 0..23, the change from window 4
     * on (128-byte RQ frames, 20 free tags: band 1 of 256, BRAKE bit 1
     * instead of bits 0 and 2); the DMA side (windows 0..11) keeps its
     * traffic. PCIE_TAGS: 20 now, lowest min(100, 20).
     */
    op = first_cycle(t0, PCIE_HZ);
    od = first_cycle(t0, DMA_HZ);
    wp = windows_by(t2, op, PCIE_HZ, DP);
    wd = windows_by(t2, od, DMA_HZ, DP);
    g_assert_cmpuint(wp, ==, 24);
    g_assert_cmpuint(wd, ==, 12);
    pattern_probes(&ver[0], &dp);
    ver[1] = ver[0];
    ver[1].bus[0].frame_bytes = 128;
    ver[1].tags_free = 20;
    ver[1].brake = 2;
    from[0] = op;
    from[1] = drain_cycle(op, DP, 3);
    sim_windows_versions(ver, from, 2, op, DP, wp, exp);
    sim_windows(&dp, od, DP, wd, exp + 31);
    /*
     * BRAKE 0 and 2 in windows 0..3 only (but the origin), BRAKE 1 from
     * window 4 on; BRAKE 1 (slot 2) counts 10 cycles past the last edge,
     * tag band 1 (slot 0, a band) stops 1 cycle before it
     */
    g_assert_cmpuint(exp[17], ==, 4 * 4096 - 2);
    g_assert_cmpuint(exp[18], ==, 20 * 4096 + 10);
    g_assert_cmpuint(exp[19], ==, 4 * 4096 - 2);
    g_assert_cmpuint(exp[23 + 1], ==, 20 * 4096 - 1);
    check_counters("B, live", rb->live, exp, DEF_ENTRIES);
    check_counters("B, snapshot at T2", rb->snap2, exp, DEF_ENTRIES);
    check_counters("C, live", rc->live, exp, DEF_ENTRIES);
    g_assert_cmphex(rb->tags, ==, 20 | 20 << 16);
    g_free(rb);
    g_free(rc);
}

/* ------------------------------------------------------------------ */
/* Random and ptc traffic                                             */

static void test_random_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-mig-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    g_autofree char *args = random_args("seed=7");
    uint64_t lb[DEF_ENTRIES], lc[DEF_ENTRIES];
    uint64_t sb[DEF_ENTRIES], sc[DEF_ENTRIES];
    uint32_t regs_b[4], regs_c[4];
    int64_t t0, t1, t2;
    Ndk a, b, c;

    g_assert(dir);

    /*
     * A to T1: 200 ns after the drain of PCIe window 49, its deltas on
     * their way to the live copy. T2: half a window after the drain of
     * PCIe window 99 (and of DMA window 49).
     */
    ndk_open(&a, "q35", args);
    t0 = a.t->t0;
    t1 = cycle_ns(drain_cycle(first_cycle(t0, PCIE_HZ), DP, 49), PCIE_HZ) +
         200;
    t2 = t0 + 100 * 10240 + 5120;
    step_to(&a, t1);
    migrate_out(&a, uri);

    migrate_in(&b, "q35", args, uri, t0, t1);
    g_assert_cmpint(qom_get_int(b.t->qts, "/objects/t0", "seed"), ==, 7);
    step_to(&b, t2);
    wr(&b, PTL_REG_READ_SEL, 1);
    read_counters(&b, DEF_ENTRIES, lb);
    regs_b[0] = rd(&b, PTL_REG_STATUS);
    regs_b[1] = rd(&b, PTL_REG_PCIE_STATUS(0));
    regs_b[2] = rd(&b, PTL_REG_PCIE_TAGS(0));
    regs_b[3] = rd(&b, PTL_REG_PCIE_STFIFO(0));
    snapshot(&b, DEF_ENTRIES);
    wr(&b, PTL_REG_READ_SEL, 0);
    read_counters(&b, DEF_ENTRIES, sb);
    ndk_close(&b);
    unlink(file);
    rmdir(dir);

    /* C: straight to T2 */
    ndk_open(&c, "q35", args);
    g_assert_cmpint(c.t->t0, ==, t0);
    step_to(&c, t2);
    wr(&c, PTL_REG_READ_SEL, 1);
    read_counters(&c, DEF_ENTRIES, lc);
    regs_c[0] = rd(&c, PTL_REG_STATUS);
    regs_c[1] = rd(&c, PTL_REG_PCIE_STATUS(0));
    regs_c[2] = rd(&c, PTL_REG_PCIE_TAGS(0));
    regs_c[3] = rd(&c, PTL_REG_PCIE_STFIFO(0));
    snapshot(&c, DEF_ENTRIES);
    wr(&c, PTL_REG_READ_SEL, 0);
    read_counters(&c, DEF_ENTRIES, sc);
    ndk_close(&c);

    check_counters("random, B vs C, live", lb, lc, DEF_ENTRIES);
    check_counters("random, B vs C, snapshot", sb, sc, DEF_ENTRIES);
    for (unsigned i = 0; i < 4; i++) {
        g_assert_cmphex(regs_b[i], ==, regs_c[i]);
    }
    g_assert_cmphex(regs_b[0], ==, 0);
    check_cycles("random, B", lb, t0, t2);
    /* traffic flowed on all four buses (default loads 70, 45, 60, 45 %) */
    g_assert_cmpuint(lb[1 + PTL_CH_WORDS], >, 0);
    g_assert_cmpuint(lb[1 + 8 + PTL_CH_WORDS], >, 0);
    g_assert_cmpuint(lb[32 + PTL_CH_WORDS], >, 0);
    g_assert_cmpuint(lb[32 + 8 + PTL_CH_WORDS], >, 0);
}

/* Every word of the register file below 0x100 */
static void read_regs(Ndk *n, uint32_t *regs)
{
    for (unsigned i = 0; i < 64; i++) {
        regs[i] = rd(n, 4 * i);
    }
}

/*
 * Every register, the live counters, then a snapshot of them (its BUSY
 * waited for as for busy_entries entries)
 */
static void read_all(Ndk *n, unsigned entries, unsigned busy_entries,
                     uint32_t *regs, uint64_t *live, uint64_t *snap)
{
    wr(n, PTL_REG_READ_SEL, 1);
    read_regs(n, regs);
    read_counters(n, entries, live);
    snapshot(n, busy_entries);
    wr(n, PTL_REG_READ_SEL, 0);
    read_counters(n, entries, snap);
}

/* The same at t, of a default card */
static void read_all_at(Ndk *n, int64_t t, uint32_t *regs, uint64_t *live,
                        uint64_t *snap)
{
    step_to(n, t);
    read_all(n, DEF_ENTRIES, DEF_ENTRIES, regs, live, snap);
}

/* Two copies of the 64 registers agree, or the first difference fails. */
static void check_regs(const char *what, const uint32_t *b, const uint32_t *c)
{
    for (unsigned i = 0; i < 64; i++) {
        if (b[i] != c[i]) {
            g_test_message("%s, register 0x%02x: B 0x%08x, C 0x%08x",
                           what, 4 * i, b[i], c[i]);
        }
        g_assert_cmphex(b[i], ==, c[i]);
    }
}

/*
 * A -> B at T1 = 200 ns after the drain of PCIe window 49 (about 1.02 ms),
 * with traffic on every bus and the deltas of that window on their way;
 * B runs to T2, half a window after the drain of PCIe window 99, and must
 * equal C, which ran 0 -> T2 without the migration, in every register and
 * counter. The negotiated settings (MPS 256 B) reach B in its config space
 * and must drive its traffic as they drive C's.
 */
static void test_ptc_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-mig-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    uint64_t at1[DEF_ENTRIES], ct1[DEF_ENTRIES];
    uint64_t lb[DEF_ENTRIES], lc[DEF_ENTRIES];
    uint64_t sb[DEF_ENTRIES], sc[DEF_ENTRIES];
    uint32_t rb[64], rc[64];
    int64_t t0, t1, t2;
    Ndk a, b, c;

    g_assert(dir);

    ptc_open(&a, PTC_ARGS);
    t0 = a.t->t0;
    t1 = cycle_ns(drain_cycle(first_cycle(t0, PCIE_HZ), DP, 49), PCIE_HZ) +
         200;
    t2 = mid_window(&a, 100);
    step_to(&a, t1);
    wr(&a, PTL_REG_READ_SEL, 1);
    read_counters(&a, DEF_ENTRIES, at1);
    migrate_out(&a, uri);

    migrate_in(&b, "q35", PTC_ARGS, uri, t0, t1);
    g_assert_cmpint(qom_get_int(b.t->qts, "/objects/t0", "tags"), ==, 48);
    read_all_at(&b, t2, rb, lb, sb);
    ndk_close(&b);
    unlink(file);
    rmdir(dir);

    ptc_open(&c, PTC_ARGS);
    g_assert_cmpint(c.t->t0, ==, t0);
    step_to(&c, t1);
    wr(&c, PTL_REG_READ_SEL, 1);
    read_counters(&c, DEF_ENTRIES, ct1);
    read_all_at(&c, t2, rc, lc, sc);
    ndk_close(&c);

    check_counters("ptc, A vs C at T1", at1, ct1, DEF_ENTRIES);
    check_regs("ptc", rb, rc);
    check_counters("ptc, B vs C, live at T2", lb, lc, DEF_ENTRIES);
    check_counters("ptc, B vs C, snapshot at T2", sb, sc, DEF_ENTRIES);

    /* what B must read whatever C does */
    for (unsigned i = 0; i < DEFAULT_CFG_REGS; i++) {
        g_assert_cmphex(rb[default_regs[i].off / 4], ==, default_regs[i].val);
    }
    g_assert_cmphex(rb[PTL_REG_STATUS / 4], ==, 0);
    g_assert_cmphex(rb[PTL_REG_READ_SEL / 4], ==, 1);
    g_assert_cmphex(rb[PTL_REG_PCIE_STATUS(0) / 4], ==, PTC_STATUS);
    check_cycles("ptc, B", lb, t0, t2);
    /* mid-window, all deltas in: the snapshot is the live copy */
    check_counters("ptc, B, snapshot vs live", sb, lb, DEF_ENTRIES);
    /* traffic flowed before T1, and more of it from T1 to T2 */
    for (unsigned i = 0; i < 4; i++) {
        static const unsigned k[] = { PTL_CH_WORDS, PTL_CH_SOF, PTL_CH_ITEMS };

        for (unsigned j = 0; j < G_N_ELEMENTS(k); j++) {
            unsigned e = bus_ch(i, k[j]);

            g_test_message("ptc, %s entry %u: %" PRIu64 " at T1, %" PRIu64
                           " at T2", bus_name[i], e, at1[e], lb[e]);
            g_assert_cmpuint(at1[e], >, 0);
            g_assert_cmpuint(lb[e], >, at1[e]);
        }
    }
}

/*
 * An overloaded card (3 endpoints at DRAIN_PERIOD 1024: load 1.39) with
 * ptc traffic is counted in the background as its clock runs, in steps of
 * 10 ms as a running VM's: A migrates at T1 with nothing read since the
 * start, while the model is behind by up to a tick and in the middle of a
 * lossy period. B, loaded from A's state, and C, which never migrated,
 * must then read the same registers, flags and counters at T2.
 */
#define LOSSY_BG_ARGS \
    "-object telemetry-traffic-ptc,id=t0 " \
    "-device ndk-pcie-telemetry,addr=04.0,traffic=t0,pcie-endpoints=3," \
    "drain-period=1024"
/* 3 endpoints of 48 entries each (the layout of this card), zeros past */
#define LOSSY_BG_CPE 48
#define LOSSY_BG_ENTRIES 160

static void step_paced(Ndk *n, int64_t t)
{
    while (n->t->now < t) {
        step_to(n, MIN(t, n->t->now + 10 * 1000 * 1000));
    }
}

/* (BUSY may wait for the adder: a generous bound) */
#define LOSSY_BG_BUSY_ENTRIES 4096

static void test_lossy_background_migration(void)
{
    g_autofree char *dir = g_dir_make_tmp("ndk-ptm-mig-XXXXXX", NULL);
    g_autofree char *file = g_build_filename(dir, "state.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    uint64_t *lb = g_new0(uint64_t, LOSSY_BG_ENTRIES);
    uint64_t *lc = g_new0(uint64_t, LOSSY_BG_ENTRIES);
    uint64_t *sb = g_new0(uint64_t, LOSSY_BG_ENTRIES);
    uint64_t *sc = g_new0(uint64_t, LOSSY_BG_ENTRIES);
    uint32_t rb[64], rc[64];
    int64_t t0, t1, t2;
    Ndk a, b, c;

    g_assert(dir);
    ptc_open(&a, LOSSY_BG_ARGS);
    t0 = a.t->t0;
    t1 = t0 + 123 * 1000 * 1000 + 4567;
    t2 = t1 + 77 * 1000 * 1000 + 891;
    step_paced(&a, t1);
    migrate_out(&a, uri);

    migrate_in(&b, "q35", LOSSY_BG_ARGS, uri, t0, t1);
    step_paced(&b, t2);
    read_all(&b, LOSSY_BG_ENTRIES, LOSSY_BG_BUSY_ENTRIES, rb, lb, sb);
    ndk_close(&b);
    unlink(file);
    rmdir(dir);

    ptc_open(&c, LOSSY_BG_ARGS);
    g_assert_cmpint(c.t->t0, ==, t0);
    step_paced(&c, t2);
    read_all(&c, LOSSY_BG_ENTRIES, LOSSY_BG_BUSY_ENTRIES, rc, lc, sc);
    ndk_close(&c);

    check_regs("lossy", rb, rc);
    check_counters("lossy, B vs C, live at T2", lb, lc, LOSSY_BG_ENTRIES);
    check_counters("lossy, B vs C, snapshot at T2", sb, sc,
                   LOSSY_BG_ENTRIES);
    /* the card lost deltas, and counted traffic on every endpoint */
    g_assert_cmphex(rb[PTL_REG_STATUS / 4] & PTL_STATUS_LOST, ==,
                    PTL_STATUS_LOST);
    for (unsigned e = 0; e < 3; e++) {
        g_assert_cmpuint(sb[LOSSY_BG_CPE * e + bus_ch(0, PTL_CH_WORDS)], >, 0);
    }
    g_free(lb);
    g_free(lc);
    g_free(sb);
    g_free(sc);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_set_nonfatal_assertions();

    g_test_add_func("/ndk-pcie-telemetry/migration/file-with-traffic",
                    test_migration);
    g_test_add_func("/ndk-pcie-telemetry/live/migration-keeps-change",
                    test_live_migration);
    g_test_add_func("/ndk-pcie-telemetry/random/migration-continues",
                    test_random_migration);
    g_test_add_func("/ndk-pcie-telemetry/ptc/migration-continues",
                    test_ptc_migration);
    g_test_add_func("/ndk-pcie-telemetry/lost-deltas/"
                    "migration-during-background",
                    test_lossy_background_migration);

    return g_test_run();
}
