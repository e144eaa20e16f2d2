/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QTest of ndk-pcie-telemetry: timing and BUSY. SNAPSHOT, CLEAR and
 * READ_SEL cycle by cycle, a command behind a delta, lost deltas of an
 * overloaded card (and the sizing warning, and a read that waits for the
 * model to catch up), and counters wider than 32 bits. The MI cycles of
 * BUSY follow from the block's timing (docs/ndk-pcie-telemetry.md), the
 * counts from the clock arithmetic of ndk-common.h.
 */

#include "ndk-common.h"
#include "ndk-sim.h"

/* ------------------------------------------------------------------ */
/* SNAPSHOT, BUSY, READ_SEL, CLEAR                                    */

static void test_snapshot_clear(void)
{
    uint64_t got[DEF_ENTRIES], zero[DEF_ENTRIES] = { 0 };
    uint64_t origin, tick3;
    int64_t tw;
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0");
    origin = first_cycle(n.t->t0, PCIE_HZ);

    /* READ_SEL keeps bit 0 only */
    step_to(&n, n.t->t0 + 3000);
    wr(&n, PTL_REG_READ_SEL, 0xFFFFFFFF);
    g_assert_cmphex(rd(&n, PTL_REG_READ_SEL), ==, 1);
    wr(&n, PTL_REG_READ_SEL, 0xFFFFFFFE);
    g_assert_cmphex(rd(&n, PTL_REG_READ_SEL), ==, 0);
    wr(&n, PTL_REG_READ_SEL, 1);
    g_assert_cmphex(rd(&n, PTL_REG_READ_SEL), ==, 1);

    /*
     * At 15 us window 0 (4095 cycles) is in the live copy and the
     * accumulator is idle. SNAPSHOT written in MI cycle m: BUSY in
     * cycles m + 2 .. m + 2 + 128.
     */
    tw = mi_edge(n.t->t0 + 15000);
    step_to(&n, tw);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    wr(&n, PTL_REG_COMMAND, PTL_CMD_SNAPSHOT);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    step_to(&n, tw + MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    step_to(&n, tw + 2 * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, PTL_STATUS_BUSY);
    /* COMMAND reads 0 */
    g_assert_cmphex(rd(&n, PTL_REG_COMMAND), ==, 0);
    step_to(&n, tw + (2 + 128) * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, PTL_STATUS_BUSY);
    step_to(&n, tw + (2 + 129) * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    wr(&n, PTL_REG_READ_SEL, 0);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    /* tag band 3, slot 2: its window closes 5 x 2 - 1 cycles later */
    g_assert_cmpuint(cnt(&n, 26), ==, 4095 + 9);
    g_assert_cmpuint(cnt(&n, 31), ==, 0);

    /*
     * 25 us: live has PCIe windows 0, 1 and DMA window 0; the snapshot
     * still the state of 15 us
     */
    step_to(&n, n.t->t0 + 25000);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    g_assert_cmpuint(cnt(&n, 31), ==, 0);
    wr(&n, PTL_REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4095 + 4096);
    g_assert_cmpuint(cnt(&n, 31), ==, 4095);

    /* CLEAR: 1 + 2 x 64 = 129 cycles of BUSY, both copies zero */
    tw = mi_edge(n.t->t0 + 26000);
    step_to(&n, tw);
    wr(&n, PTL_REG_COMMAND, PTL_CMD_CLEAR);
    step_to(&n, tw + 2 * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, PTL_STATUS_BUSY);
    step_to(&n, tw + (2 + 128) * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, PTL_STATUS_BUSY);
    step_to(&n, tw + (2 + 129) * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("live after CLEAR", got, zero, DEF_ENTRIES);
    wr(&n, PTL_REG_READ_SEL, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("snapshot after CLEAR", got, zero, DEF_ENTRIES);

    /*
     * CLEAR leaves the probes alone: window 2 (4096 cycles) arrives whole
     * at 30.72 us; for channel 30 it is the cycles [E_2 + 29, E_3 + 29),
     * 4096 as well
     */
    step_to(&n, n.t->t0 + 35000);
    wr(&n, PTL_REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4096);
    g_assert_cmpuint(cnt(&n, 30), ==, 4096);
    g_assert_cmpuint(cnt(&n, 31), ==, 0);

    /* CLEAR | SNAPSHOT: 2 + 4 x 64 = 258 cycles; a snapshot of zeros */
    tw = mi_edge(n.t->t0 + 36000);
    step_to(&n, tw);
    wr(&n, PTL_REG_COMMAND, PTL_CMD_CLEAR | PTL_CMD_SNAPSHOT);
    step_to(&n, tw + MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    step_to(&n, tw + 2 * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, PTL_STATUS_BUSY);
    step_to(&n, tw + (2 + 257) * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, PTL_STATUS_BUSY);
    step_to(&n, tw + (2 + 258) * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("live after CLEAR|SNAPSHOT", got, zero, DEF_ENTRIES);
    wr(&n, PTL_REG_READ_SEL, 0);
    read_counters(&n, DEF_ENTRIES, got);
    check_counters("snapshot after CLEAR|SNAPSHOT", got, zero, DEF_ENTRIES);

    /*
     * A snapshot holds exactly the deltas applied before it starts: taken
     * 300 ns after the drain of PCIe window 3, it has the first channel
     * (cycles, the first delta) but not the last one (FIFO band 3, the
     * 31st delta, due about 31 x 30 ns after the drain); the live copy
     * gets it after BUSY.
     */
    tick3 = drain_cycle(origin, DP, 3);
    step_to(&n, cycle_ns(tick3, PCIE_HZ) + 300);
    wr(&n, PTL_REG_COMMAND, PTL_CMD_SNAPSHOT);
    step(&n, 2 * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS) & PTL_STATUS_BUSY, ==,
                    PTL_STATUS_BUSY);
    wait_busy(&n, 129 + 4);
    g_assert_cmpuint(cnt(&n, 0), ==, 4096);
    g_assert_cmpuint(cnt(&n, 30), ==, 0);
    step_to(&n, n.t->t0 + 45000);
    g_assert_cmpuint(cnt(&n, 30), ==, 0);
    wr(&n, PTL_REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 0), ==, 4096);
    g_assert_cmpuint(cnt(&n, 30), ==, 4096);
    g_assert_cmpuint(cnt(&n, 31), ==, 4096);     /* DMA window 1, whole */

    /* nothing was lost; CLEAR_FLAGS starts no BUSY */
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    wr(&n, PTL_REG_COMMAND, PTL_CMD_CLEAR_FLAGS);
    step(&n, 2 * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    ndk_close(&n);
}

/*
 * A command that arrives while the accumulator adds a delta waits for it.
 * PCIe window 0 ends at cycle E = origin + 4095; the drain tick samples
 * E + 1, slot 0 is captured at E + 2 and its first delta (cycles) written
 * into the FIFO at E + 4. The read side sees it from the fourth MI edge
 * after the first one past PCIe edge E + 5, the output registers hand it
 * on, and the idle accumulator pops it 3 edges later: in MI cycle
 * m = floor((E + 5) / 4) + 8 (1033 when the card starts at 0). A SNAPSHOT
 * written in m is seen from m + 2 (BUSY reads 1 from then); the delta's
 * sum is written in m + 2 and the sweep starts in m + 3, so BUSY falls at
 * m + 3 + 1 + 2 x 64.
 */
static void test_snapshot_behind_delta(void)
{
    uint64_t origin, m;
    int64_t tw;
    Ndk n;

    ndk_open(&n, "q35", PATTERN_ARGS
             "-device ndk-pcie-telemetry,addr=04.0,traffic=tp0");
    origin = first_cycle(n.t->t0, PCIE_HZ);
    m = (origin + 4095 + 5) * MI_HZ / PCIE_HZ + 8;
    tw = m * MI_NS;
    step_to(&n, tw);
    wr(&n, PTL_REG_COMMAND, PTL_CMD_SNAPSHOT);
    step_to(&n, tw + MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    step_to(&n, tw + 2 * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, PTL_STATUS_BUSY);
    step_to(&n, tw + (3 + 128) * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, PTL_STATUS_BUSY);
    step_to(&n, tw + (3 + 129) * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    /* the snapshot has that delta and none of the later ones */
    g_assert_cmpuint(cnt(&n, 0), ==, 4095);
    g_assert_cmpuint(cnt(&n, 1), ==, 0);
    /*
     * after BUSY the waiting deltas arrive: RQ moved a word every cycle;
     * its words (slot 1) count cycles [o + 1, o + 4095 + 5), its region 0
     * (slot 7) [o + 1, o + 4095 + 35) but for words 1..3 of the frame
     * whose SOF in cycle o was not seen
     */
    step_to(&n, n.t->t0 + 15000);
    wr(&n, PTL_REG_READ_SEL, 1);
    g_assert_cmpuint(cnt(&n, 1), ==, 4095 - 1 + 5);
    g_assert_cmpuint(cnt(&n, 1 + PTL_CH_REGION0), ==, 4095 - 1 + 35 - 3);

    /* CLEAR also resets the lowest values */
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 100 | 100 << 16);
    wr(&n, PTL_REG_COMMAND, PTL_CMD_CLEAR);
    step(&n, 2 * MI_NS);
    wait_busy(&n, 129);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_TAGS(0)), ==, 0x07FF0000 | 100);
    g_assert_cmphex(rd(&n, PTL_REG_PCIE_STFIFO(0)), ==, 0xFFFF0000 | 1024);
    g_assert_cmpuint(cnt(&n, 0), ==, 0);
    ndk_close(&n);
}

/* ------------------------------------------------------------------ */
/* Wide counters                                                      */

/*
 * Wide counters through 64-bit reads. At pcie-clk-freq=4 GHz and
 * DRAIN_PERIOD 32768 RQ moves 16 items per cycle; the probe starts at
 * cycle 4 t0 (a frame boundary, period 4). Half a window after the drain
 * of window W - 1 the RQ items counter (slot 6 of the 31 PCIe channels:
 * 30 cycles after the cycle counter's edge, from the origin's next cycle,
 * where words 1..3 of the frame whose SOF in the origin was not seen add
 * no items) is 16 (32768 W - 1 - 1 + 30 - 3).
 */
static void check_wide_counter(const char *props, unsigned width, uint64_t w)
{
    const uint64_t hz = 4000000000ull, dp = 32768;
    uint64_t items, origin, v;
    Ndk n;
    g_autofree char *args = g_strdup_printf(
        "-object telemetry-traffic-pattern,id=tp0,rq-frame-bytes=256 "
        "-device ndk-pcie-telemetry,addr=04.0,traffic=tp0,"
        "pcie-clk-freq=4000000000,drain-period=32768,%s", props);

    ndk_open(&n, "q35", args);
    origin = first_cycle(n.t->t0, hz);
    g_assert_cmpuint(origin % 4, ==, 0);
    step_to(&n, cycle_ns(origin + w * dp + dp / 2, hz));
    g_assert_cmpuint(windows_by(n.t->now, origin, hz, dp), ==, w);
    items = 16 * (w * dp - 1 - 1 + 30 - 3);
    if (width < 64) {
        items &= (1ull << width) - 1;
    }
    snapshot(&n, DEF_ENTRIES);
    v = rdq(&n, CNT(6));
    g_assert_cmphex(v, ==, items);
    g_assert_cmphex(rd(&n, CNT(6)), ==, (uint32_t)items);
    g_assert_cmphex(rd(&n, CNT(6) + 4), ==, items >> 32);
    g_assert_cmphex(rd(&n, CNT(6) + 4), !=, 0);
    g_assert_cmpuint(rdq(&n, CNT(0)), ==, w * dp - 1);
    wr(&n, PTL_REG_READ_SEL, 1);
    g_assert_cmphex(rdq(&n, CNT(6)), ==, items);
    ndk_close(&n);
}

static void test_counter_48(void)
{
    /* W = 12207: 16 x (12207 x 32768 + 25) = 6399984016 > 2^32 */
    check_wide_counter("cnt-width=48", 48, 12207);
}

static void test_counter_33(void)
{
    /*
     * W = 24584 = 16384 + 8200: 16 x 32768 W = W x 2^19 wraps modulo
     * 2^33 to 8200 x 2^19, plus 16 x 25: 4299162000, high word 1
     */
    check_wide_counter("cnt-width=33", 33, 24584);
}

/* ------------------------------------------------------------------ */
/* Lost deltas                                                        */

/*
 * Accumulator load = E x 3 x (31 x 400 MHz + 17 x 200 MHz) /
 * (1024 x 100 MHz) = E x 0.463: 1.39 with 3 endpoints, 0.93 with 2.
 */
static void test_lost_deltas_3(void)
{
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,"
             "pcie-endpoints=3,drain-period=1024");
    step_to(&n, n.t->t0 + 1000000);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, PTL_STATUS_LOST);
    /*
     * CLEAR_FLAGS clears it: the level change reaches each probe two of its
     * edges after the first one past the write's MI edge, and STATUS shows
     * the cleared flags from the third MI edge after that (4 MI cycles on
     * for the DMA probes); it comes back as deltas keep getting lost
     */
    wr(&n, PTL_REG_COMMAND, PTL_CMD_CLEAR_FLAGS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, PTL_STATUS_LOST);
    step(&n, 4 * MI_NS);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    step(&n, 100000);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, PTL_STATUS_LOST);
    ndk_close(&n);
}

static void test_lost_deltas_2(void)
{
    Ndk n;

    ndk_open(&n, "q35", "-device ndk-pcie-telemetry,addr=04.0,"
             "pcie-endpoints=2,drain-period=1024");
    step_to(&n, n.t->t0 + 1000000);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    step_to(&n, n.t->t0 + 2000000);
    g_assert_cmphex(rd(&n, PTL_REG_STATUS), ==, 0);
    ndk_close(&n);
}

/*
 * The standard error of a QEMU with a q35 machine and the arguments extra
 * (NULL-terminated) that starts, is told to quit over QMP on its standard
 * input, and exits with status 0.
 */
static char *started_stderr(const char *const *extra)
{
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    const char *base[] = {
        qemu, "-machine", "q35", "-nodefaults", "-display", "none",
        "-accel", "qtest", "-qmp", "stdio",
    };
    static const char quit[] = "{\"execute\": \"qmp_capabilities\"}\n"
                               "{\"execute\": \"quit\"}\n";
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    GString *err = g_string_new("");
    g_autoptr(GError) gerr = NULL;
    int status = 0, in, fd, i;
    GPid pid;
    pid_t r = 0;
    char buf[256];
    ssize_t len;

    g_assert(qemu);
    for (i = 0; i < (int)G_N_ELEMENTS(base); i++) {
        g_ptr_array_add(argv, (char *)base[i]);
    }
    for (i = 0; extra[i]; i++) {
        g_ptr_array_add(argv, (char *)extra[i]);
    }
    g_ptr_array_add(argv, NULL);
    g_assert(g_spawn_async_with_pipes(NULL, (char **)argv->pdata, NULL,
                                      G_SPAWN_DO_NOT_REAP_CHILD |
                                      G_SPAWN_STDOUT_TO_DEV_NULL,
                                      NULL, NULL, &pid, &in, NULL, &fd,
                                      &gerr));
    g_assert_cmpint(write(in, quit, strlen(quit)), ==, strlen(quit));
    g_assert(g_unix_set_fd_nonblocking(fd, true, NULL));
    for (i = 0; i < 1000; i++) {
        while ((len = read(fd, buf, sizeof(buf))) > 0) {
            g_string_append_len(err, buf, len);
        }
        r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            break;
        }
        g_usleep(10000);
    }
    if (r != pid) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    while ((len = read(fd, buf, sizeof(buf))) > 0) {
        g_string_append_len(err, buf, len);
    }
    close(fd);
    close(in);
    g_spawn_close_pid(pid);
    g_test_message("stderr: %s", err->str);
    g_assert_cmpint(r, ==, pid);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    return g_string_free(err, false);
}

/* How many times needle occurs in hay. */
static unsigned occurrences(const char *hay, const char *needle)
{
    unsigned n = 0;

    for (const char *p = strstr(hay, needle); p;
         p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

/*
 * A card whose accumulator cannot keep up starts, with one warning that
 * names the drain period that avoids the losses; the defaults start
 * without a word.
 */
static void test_sizing_warning(void)
{
    const char *plain[] = { "-device", "ndk-pcie-telemetry", NULL };
    /* load 16 x 3 x (31 x 400 MHz + 65 x 200 MHz) / (4096 x 100 MHz) */
    const char *big[] = {
        "-device", "ndk-pcie-telemetry,pcie-endpoints=16,dma-ports=4", NULL
    };
    /* load 0.93: only a SNAPSHOT's pause overflows the FIFOs */
    const char *close[] = {
        "-device", "ndk-pcie-telemetry,pcie-endpoints=2,drain-period=1024",
        NULL
    };
    g_autofree char *e0 = started_stderr(plain);
    g_autofree char *e1 = started_stderr(big);
    g_autofree char *e2 = started_stderr(close);

    g_assert_null(strstr(e0, "ndk-pcie-telemetry"));
    g_assert_cmpuint(occurrences(e1, "ndk-pcie-telemetry: "), ==, 1);
    g_assert_nonnull(strstr(e1, "accumulator load 2.98 at "
                            "drain-period=4096: the card loses deltas"));
    g_assert_nonnull(strstr(e1, "drain-period=16384 is the smallest"));
    g_assert_cmpuint(occurrences(e2, "ndk-pcie-telemetry: "), ==, 1);
    g_assert_nonnull(strstr(e2, "accumulator load 0.93 at "
                            "drain-period=1024: a SNAPSHOT's pause"));
    g_assert_nonnull(strstr(e2, "drain-period=2048 is the smallest"));
}

/* Send one qtest command over fd `in` and read its reply line from `out`. */
static void raw_ask(int in, FILE *out, const char *cmd)
{
    char line[256];

    g_assert_cmpint(write(in, cmd, strlen(cmd)), ==, strlen(cmd));
    do {
        g_assert_nonnull(fgets(line, sizeof(line), out));
    } while (strncmp(line, "OK", 2) && strncmp(line, "FAIL", 4));
    g_assert_cmpint(strncmp(line, "OK", 2), ==, 0);
}

/*
 * SIGTERM while a read of an overloaded card waits for a catch-up of many
 * host seconds: the read gives up and QEMU exits (over the raw qtest
 * protocol, since libqtest would wait for the reply itself). Random
 * traffic on 16 endpoints that lose deltas all the time costs about two
 * thirds of a host second per virtual second, so 200 virtual seconds leave
 * the read a catch-up of minutes: far more than the one second the test
 * waits, on any host.
 */
static void test_sigterm_during_read(void)
{
    const char *argv[] = {
        g_getenv("QTEST_QEMU_BINARY"), "-machine", "q35", "-nodefaults",
        "-display", "none", "-accel", "qtest", "-qtest", "stdio",
        "-object", "telemetry-traffic-random,id=t0", "-device",
        "ndk-pcie-telemetry,addr=04.0,traffic=t0,pcie-endpoints=16,"
        "dma-ports=4", NULL,
    };
    static const char read_status[] = "readl 0xe0000024\n";
    g_autoptr(GError) gerr = NULL;
    int in, out, status = 0;
    pid_t r = 0;
    GPid pid;
    FILE *rsp;
    char buf[256];

    g_assert_nonnull(argv[0]);
    g_assert(g_spawn_async_with_pipes(NULL, (char **)argv, NULL,
                                      G_SPAWN_DO_NOT_REAP_CHILD |
                                      G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                                      &pid, &in, &out, NULL, &gerr));
    rsp = fdopen(out, "r");
    raw_ask(in, rsp, "clock_step 1000\n");
    /* BAR0 at 0xe0000000, memory decoding on (config through CF8/CFC) */
    raw_ask(in, rsp, "outl 0xcf8 0x80002010\n");
    raw_ask(in, rsp, "outl 0xcfc 0xe0000000\n");
    raw_ask(in, rsp, "outl 0xcf8 0x80002004\n");
    raw_ask(in, rsp, "outl 0xcfc 0x2\n");
    /* 200 virtual seconds: minutes of catch-up */
    raw_ask(in, rsp, "clock_step 200000000000\n");
    g_assert_cmpint(write(in, read_status, strlen(read_status)), ==,
                    strlen(read_status));
    g_usleep(G_USEC_PER_SEC);
    /* the read still waits: no reply yet */
    g_assert(g_unix_set_fd_nonblocking(out, true, NULL));
    g_assert_null(fgets(buf, sizeof(buf), rsp));
    kill(pid, SIGTERM);
    for (int i = 0; i < 1000 && r != pid; i++) {
        r = waitpid(pid, &status, WNOHANG);
        if (r != pid) {
            g_usleep(10000);
        }
    }
    if (r != pid) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    fclose(rsp);
    close(in);
    g_spawn_close_pid(pid);
    g_assert_cmpint(r, ==, pid);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_set_nonfatal_assertions();

    g_test_add_func("/ndk-pcie-telemetry/snapshot/busy-readsel-clear",
                    test_snapshot_clear);
    g_test_add_func("/ndk-pcie-telemetry/snapshot/behind-delta",
                    test_snapshot_behind_delta);
    g_test_add_func("/ndk-pcie-telemetry/counters/64bit-read-48",
                    test_counter_48);
    g_test_add_func("/ndk-pcie-telemetry/counters/wrap-33", test_counter_33);
    g_test_add_func("/ndk-pcie-telemetry/lost-deltas/3-endpoints",
                    test_lost_deltas_3);
    g_test_add_func("/ndk-pcie-telemetry/lost-deltas/sizing-warning",
                    test_sizing_warning);
    g_test_add_func("/ndk-pcie-telemetry/lost-deltas/sigterm-during-read",
                    test_sigterm_during_read);
    g_test_add_func("/ndk-pcie-telemetry/lost-deltas/2-endpoints",
                    test_lost_deltas_2);

    return g_test_run();
}
