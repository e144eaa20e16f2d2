/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie-telemetry --pg381: the PG381 generator's node found in the card's
 * device tree as the card builds it (and its absence), its counters read
 * through CAPTURE_ALL and the figures worked out of them against values
 * worked out by hand, and the tool on a sysfs tree whose resource0 holds
 * the generator's registers.
 */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcie-telemetry.h"
#include "ptm-devtree.h"
#include "test-sysfs-support.h"

/* A device-tree VSEC at 0x100 on endpoint 0 that serves xz[] word by word */
typedef struct TCard {
    const uint8_t *xz;
    size_t len;
    uint32_t index;
} TCard;

static bool tcard_read32(void *opaque, uint32_t offset, uint32_t *value)
{
    TCard *c = opaque;

    switch (offset) {
    case 0x108:
        *value = 0x80000000u;
        return true;
    case 0x10c:
        *value = c->len;
        return true;
    case 0x114:
        *value = ptm_devtree_word(c->xz, c->len, c->index);
        return true;
    default:
        return false;
    }
}

static bool tcard_write32(void *opaque, uint32_t offset, uint32_t value)
{
    TCard *c = opaque;

    c->index = value;
    return offset == 0x110;
}

static const ptl_config_ops tcard_ops = {
    .read32 = tcard_read32,
    .write32 = tcard_write32,
};

/* The node as docs/pg381.md shows it, on a card at 250 MHz. */
static void test_find(void)
{
    const PtmDevtreePg381 pg = { 0x01800000, 0x10000, 250000000 };
    char *msg = NULL;
    TCard c = { 0 };
    ptl_dt_node node;
    ptl_error e = { 0 };
    uint8_t *xz;

    xz = ptm_devtree_build_card(NULL, NULL, &pg, 0, 0x00020000, 1, &c.len,
                                &msg);
    g_assert_null(msg);
    c.xz = xz;
    g_assert_cmpint(ptl_pg381_find(&tcard_ops, &c, 0x100, "card0", &node,
                                   &e), ==, PTL_OK);
    g_assert_cmpstr(node.path, ==, "/firmware/mi_bus0/perf_axi_tg0@1800000");
    g_assert_cmpuint(node.bar, ==, 0);
    g_assert_cmpuint(node.offset, ==, 0x01800000);
    g_assert_cmpuint(node.size, ==, 0x10000);
    g_assert_cmpuint(node.clock_hz, ==, 250000000);
    g_free(xz);
}

/* A tree without the generator: PTL_E_NO_NODE, naming the card. */
static void test_no_node(void)
{
    char *msg = NULL;
    TCard c = { 0 };
    ptl_dt_node node;
    ptl_error e = { 0 };
    uint8_t *xz;

    xz = ptm_devtree_build(0, 0x00020000, 1, &c.len, &msg);
    g_assert_null(msg);
    c.xz = xz;
    g_assert_cmpint(ptl_pg381_find(&tcard_ops, &c, 0x100, "0000:01:00.0",
                                   &node, &e), ==, PTL_E_NO_NODE);
    g_assert_cmpint(e.code, ==, 6);
    g_assert_cmpstr(e.msg, ==, "0000:01:00.0 has no PG381 traffic generator "
                    "(no node compatible with xlnx,perf-axi-tg-1.0 on "
                    "endpoint 0 in its device tree)");
    g_free(xz);
}

/*
 * The generator's window with a finished run's counters in the
 * CAPTURE_ALL copies (0x2238 + (register - 0x2000)) and other values in
 * the live registers, which must not be taken:
 *  - reads: 16 requests of 4 beats (64 beats, 16 RLASTs) of 64 B
 *    (instruction 0: AXI 0x1603, axi_size 6) in 512 cycles at 250 MHz
 *    (4 ns a cycle): 4096 B in 2.048 us = 2 000 000 000 B/s; latency best
 *    405 cycles = 1620 ns, worst 465 = 1860 ns, sum 6960 / 16 = 435
 *    cycles = 1740 ns;
 *  - writes: 8 requests of 4 beats of 32 B (instruction 1: AXI 0x1502,
 *    axi_size 5), 8 WLASTs and B responses, in 100 cycles: 1024 B in
 *    400 ns = 2 560 000 000 B/s; best 10 cycles = 40 ns, worst 14 = 56 ns,
 *    sum 90 / 8 = 11.25 cycles = 45 ns;
 *  - FLOW_EMPTY 0x1F80: done (bit 9), no error (bit 4); ERROR 0.
 */
static void fill_window(uint32_t *w)
{
    memset(w, 0, PTL_PG381_WINDOW);
    w[0x6000 / 4] = 0x50473831;             /* CARD_ID */
    w[0x6008 / 4] = 250000000;              /* CLOCK */
    w[0x6010 / 4] = 2;                      /* PROG_LEN */
    w[0x8000 / 4] = 0x40;                   /* READ, addr auto_incr */
    w[0x800C / 4] = 0x1603;
    w[0x8040 / 4] = 0x45;                   /* WRITE, LAST */
    w[0x804C / 4] = 0x1502;
    w[0x224C / 4] = 64;                     /* RBEAT */
    w[0x2250 / 4] = 16;                     /* ARREQ */
    w[0x2254 / 4] = 16;                     /* RLAST */
    w[0x2258 / 4] = 512;                    /* RBW_EFF_CLK */
    w[0x225C / 4] = 465;                    /* RWORST */
    w[0x2260 / 4] = 405;                    /* RBEST */
    w[0x2264 / 4] = 6960;                   /* RAVG */
    w[0x2268 / 4] = 8;                      /* AWREQ */
    w[0x226C / 4] = 8;                      /* WLAST */
    w[0x2270 / 4] = 8;                      /* BRESP */
    w[0x2274 / 4] = 32;                     /* WRBEAT */
    w[0x2278 / 4] = 100;                    /* WBW_EFF_CLK */
    w[0x227C / 4] = 14;                     /* WWORST */
    w[0x2280 / 4] = 10;                     /* WBEST */
    w[0x2284 / 4] = 90;                     /* WAVG */
    w[0x2288 / 4] = 0x1F80;                 /* FLOW_EMPTY */
    /* the live registers, a later instant */
    for (uint32_t off = 0x2014; off <= 0x2050; off += 4) {
        w[off / 4] = 0xDEAD;
    }
}

typedef struct TWin {
    uint32_t *w;
    bool captured;              /* CAPTURE_ALL read */
    bool copy_before_capture;   /* a copy read before it */
} TWin;

static uint32_t twin_read32(void *opaque, uint32_t offset)
{
    TWin *t = opaque;

    if (offset == 0x2234) {
        t->captured = true;
    } else if (offset >= 0x2238 && offset < 0x22DC && !t->captured) {
        t->copy_before_capture = true;
    }
    return t->w[offset / 4];
}

static void twin_write32(void *opaque, uint32_t offset, uint32_t value)
{
    TWin *t = opaque;

    t->w[offset / 4] = value;
}

static const ptl_regs_ops twin_ops = {
    .read32 = twin_read32,
    .write32 = twin_write32,
};

static void test_read(void)
{
    g_autofree uint32_t *w = g_malloc(PTL_PG381_WINDOW);
    TWin t = { .w = w };
    ptl_pg381 g = { 0 };
    ptl_error e = { 0 };

    fill_window(w);
    g_assert_cmpint(ptl_pg381_read(&twin_ops, &t, &g, &e), ==, PTL_OK);
    g_assert_true(t.captured);
    g_assert_false(t.copy_before_capture);
    g_assert_cmpuint(g.clock_hz, ==, 250000000);    /* from CLOCK */
    g_assert_cmpuint(g.rd.requests, ==, 16);
    g_assert_cmpuint(g.rd.beats, ==, 64);
    g_assert_cmpuint(g.rd.lasts, ==, 16);
    g_assert_cmpuint(g.rd.eff_cycles, ==, 512);
    g_assert_cmpuint(g.rd.beat_bytes, ==, 64);
    g_assert_cmpfloat(g.rd.bytes_per_s, ==, 2000000000.0);
    g_assert_cmpfloat(g.rd.best_ns, ==, 1620.0);
    g_assert_cmpfloat(g.rd.worst_ns, ==, 1860.0);
    g_assert_cmpfloat(g.rd.avg_ns, ==, 1740.0);
    g_assert_cmpuint(g.wr.requests, ==, 8);
    g_assert_cmpuint(g.wr.beats, ==, 32);
    g_assert_cmpuint(g.wr.lasts, ==, 8);
    g_assert_cmpuint(g.wr.responses, ==, 8);
    g_assert_cmpuint(g.wr.eff_cycles, ==, 100);
    g_assert_cmpuint(g.wr.beat_bytes, ==, 32);
    g_assert_cmpfloat(g.wr.bytes_per_s, ==, 2560000000.0);
    g_assert_cmpfloat(g.wr.best_ns, ==, 40.0);
    g_assert_cmpfloat(g.wr.worst_ns, ==, 56.0);
    g_assert_cmpfloat(g.wr.avg_ns, ==, 45.0);
    g_assert_true(g.done);
    g_assert_false(g.error);
    g_assert_cmpuint(g.error_reg, ==, 0);

    /*
     * The clock of the node wins over CLOCK: at 125 MHz every time
     * doubles and the bandwidth halves.
     */
    memset(&g, 0, sizeof(g));
    g.clock_hz = 125000000;
    g_assert_cmpint(ptl_pg381_read(&twin_ops, &t, &g, &e), ==, PTL_OK);
    g_assert_cmpfloat(g.rd.bytes_per_s, ==, 1000000000.0);
    g_assert_cmpfloat(g.rd.best_ns, ==, 3240.0);
    g_assert_cmpfloat(g.wr.avg_ns, ==, 90.0);

    /*
     * A run stopped on an error (reason 9 MEMORY at instruction 3), no
     * writes, reads of two sizes: no beat size, no bandwidth, no write
     * latencies.
     */
    w[0x2288 / 4] = 0x0010;
    w[0x600C / 4] = 0x80090003;
    w[0x2268 / 4] = 0;
    w[0x804C / 4] = 0x0500;
    w[0x8040 / 4] = 0x04;                   /* READ of 32 B, LAST */
    memset(&g, 0, sizeof(g));
    g_assert_cmpint(ptl_pg381_read(&twin_ops, &t, &g, &e), ==, PTL_OK);
    g_assert_false(g.done);
    g_assert_true(g.error);
    g_assert_cmpuint(g.error_reg, ==, 0x80090003);
    g_assert_cmpuint(g.rd.beat_bytes, ==, 0);
    g_assert_true(isnan(g.rd.bytes_per_s));
    g_assert_cmpfloat(g.rd.avg_ns, ==, 1740.0);
    g_assert_cmpuint(g.wr.beat_bytes, ==, 0);
    g_assert_true(isnan(g.wr.best_ns));
    g_assert_true(isnan(g.wr.avg_ns));

    /* not a generator; gone */
    w[0x6000 / 4] = 0;
    g_assert_cmpint(ptl_pg381_read(&twin_ops, &t, &g, &e), ==, PTL_E_MAGIC);
    w[0x6000 / 4] = 0xFFFFFFFF;
    g_assert_cmpint(ptl_pg381_read(&twin_ops, &t, &g, &e), ==, PTL_E_GONE);
}

/* ------------------------------------------------------------------
 * The tool on a sysfs tree: 00:04.0 with the generator at 0x10000 of a
 * 128 KiB BAR0 and no device tree (--offset places it).
 */
static char *root;

static void add_card(void)
{
    g_autofree char *dir = g_build_filename(root, "devices", "0000:00:04.0",
                                            NULL);
    g_autofree uint8_t *config = g_malloc0(4096);
    g_autofree uint32_t *bar = g_malloc0(0x20000);
    GString *r = g_string_new("0x00000000fe000000 0x00000000fe01ffff "
                              "0x0000000000040200\n");

    g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
    tsys_put(dir, "vendor", "0x1234\n", -1);
    tsys_put(dir, "device", "0x0d7b\n", -1);
    tsys_put(dir, "class", "0x020000\n", -1);
    tsys_put(dir, "irq", "0\n", -1);
    for (int i = 1; i < 7; i++) {
        g_string_append(r, "0x0000000000000000 0x0000000000000000 "
                        "0x0000000000000000\n");
    }
    tsys_put(dir, "resource", r->str, r->len);
    g_string_free(r, TRUE);
    config[0] = 0x34;
    config[1] = 0x12;
    config[2] = 0x7b;
    config[3] = 0x0d;
    config[4] = 0x06;           /* Command: memory, bus master */
    tsys_put(dir, "config", config, 4096);
    fill_window(bar + 0x10000 / 4);
    tsys_put(dir, "resource0", bar, 0x20000);
}

/* The whitespace-separated fields of line (a row of the table). */
static void assert_row(const char *line, const char *const *want)
{
    g_auto(GStrv) f = g_strsplit_set(line, " ", -1);
    unsigned k = 0;

    for (char **p = f; *p; p++) {
        if (**p) {
            g_assert_nonnull(want[k]);
            g_assert_cmpstr(*p, ==, want[k]);
            k++;
        }
    }
    g_assert_null(want[k]);
}

static void test_tool(void)
{
    const char *text_args[] = { "-d", "00:04.0", "--pg381", "--offset",
                                "0x10000", NULL };
    const char *json_args[] = { "-d", "00:04.0", "--pg381", "--offset",
                                "0x10000", "-j", NULL };
    const char *tree_args[] = { "-d", "00:04.0", "--pg381", NULL };
    const char *bad_args[] = { "--pg381", "-c", NULL };
    static const char *const rd[] = {
        "read", "16", "64", "16", "16", "512", "64", "2000000000", "1620.0",
        "1860.0", "1740.0", NULL,
    };
    static const char *const wr[] = {
        "write", "8", "32", "8", "8", "100", "32", "2560000000", "40.0",
        "56.0", "45.0", NULL,
    };
    g_autofree char *out = NULL, *err = NULL;
    g_auto(GStrv) lines = NULL;
    const char *want_json =
        "{\n"
        "    \"pg381\": {\n"
        "        \"device\": \"0000:00:04.0\",\n"
        "        \"node\": \"(--bar/--offset)\",\n"
        "        \"bar\": 0,\n"
        "        \"offset\": 65536,\n"
        "        \"clock_hz\": 250000000,\n"
        "        \"read\": {\n"
        "            \"requests\": 16,\n"
        "            \"beats\": 64,\n"
        "            \"lasts\": 16,\n"
        "            \"effective_cycles\": 512,\n"
        "            \"beat_bytes\": 64,\n"
        "            \"bytes_per_s\": 2000000000,\n"
        "            \"best_cycles\": 405,\n"
        "            \"worst_cycles\": 465,\n"
        "            \"sum_cycles\": 6960,\n"
        "            \"best_ns\": 1620,\n"
        "            \"worst_ns\": 1860,\n"
        "            \"avg_ns\": 1740\n"
        "        },\n"
        "        \"write\": {\n"
        "            \"requests\": 8,\n"
        "            \"beats\": 32,\n"
        "            \"lasts\": 8,\n"
        "            \"responses\": 8,\n"
        "            \"effective_cycles\": 100,\n"
        "            \"beat_bytes\": 32,\n"
        "            \"bytes_per_s\": 2560000000,\n"
        "            \"best_cycles\": 10,\n"
        "            \"worst_cycles\": 14,\n"
        "            \"sum_cycles\": 90,\n"
        "            \"best_ns\": 40,\n"
        "            \"worst_ns\": 56,\n"
        "            \"avg_ns\": 45\n"
        "        },\n"
        "        \"flow_empty\": 8064,\n"
        "        \"done\": true,\n"
        "        \"error\": false,\n"
        "        \"error_register\": 0\n"
        "    }\n"
        "}\n";

    if (!tsys_have_tool()) {
        return;
    }
    root = g_dir_make_tmp("ptl-pg381-XXXXXX", NULL);
    g_assert_nonnull(root);
    g_setenv("PCIE_TELEMETRY_SYSFS", root, TRUE);
    add_card();

    g_assert_cmpint(tsys_run_tool(text_args, &out, &err), ==, 0);
    lines = g_strsplit(out, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 6);
    g_assert_cmpstr(lines[0], ==, "PG381 (--bar/--offset) of 0000:00:04.0: "
                    "BAR0 0x10000, clock 250000000 Hz");
    assert_row(lines[2], rd);
    assert_row(lines[3], wr);
    g_assert_cmpstr(lines[4], ==, "FLOW_EMPTY 0x00001f80: done, no error; "
                    "ERROR 0x00000000");
    g_assert_cmpstr(lines[5], ==, "");
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);

    g_assert_cmpint(tsys_run_tool(json_args, &out, &err), ==, 0);
    g_assert_cmpstr(out, ==, want_json);
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);

    /* the node is looked for in a tree the card does not have */
    g_assert_cmpint(tsys_run_tool(tree_args, &out, &err), ==, 5);
    g_assert_cmpstr(out, ==, "");
    g_assert_nonnull(strstr(err, "0000:00:04.0 has no NDK device tree"));
    g_clear_pointer(&out, g_free);
    g_clear_pointer(&err, g_free);

    g_assert_cmpint(tsys_run_tool(bad_args, &out, &err), ==, 2);
    g_assert_nonnull(strstr(err, "-c does not go with --pg381"));

    tsys_rm_rf(root);
    g_free(root);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ptl-pg381/find", test_find);
    g_test_add_func("/ptl-pg381/no-node", test_no_node);
    g_test_add_func("/ptl-pg381/read", test_read);
    g_test_add_func("/ptl-pg381/tool", test_tool);
    return g_test_run();
}
