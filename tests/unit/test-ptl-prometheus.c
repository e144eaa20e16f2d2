/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The exporter's exposition of several blocks (families once, labels,
 * escaping, up and scrape duration, a block that could not be read) and
 * the 64-bit extension of counters across wrap-arounds and clears, on the
 * QEMU-free model of the block.
 */
#include <glib.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test-ptl-support.h"

/* ------------------------------------------------------- exposition */

typedef struct expo {
    GPtrArray *families;        /* names in their order */
    GHashTable *type;           /* name -> "counter" / "gauge" */
    GHashTable *samples;        /* "name{labels}" -> value text */
    GHashTable *count;          /* name -> number of samples */
} expo;

static void expo_free(expo *x)
{
    g_ptr_array_free(x->families, true);
    g_hash_table_destroy(x->type);
    g_hash_table_destroy(x->samples);
    g_hash_table_destroy(x->count);
}

/*
 * Parse the text format as a scraper does, asserting its rules on the
 * way: HELP then TYPE once per family, before the family's samples, which
 * follow each other; label values quoted and escaped.
 */
static void expo_parse(const char *text, expo *x)
{
    char **lines = g_strsplit(text, "\n", -1);
    const char *cur = NULL;
    bool typed = false;

    x->families = g_ptr_array_new_with_free_func(g_free);
    x->type = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    x->samples = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                       g_free);
    x->count = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    g_assert_true(g_str_has_suffix(text, "\n"));
    for (unsigned i = 0; lines[i] && lines[i][0]; i++) {
        const char *l = lines[i];

        if (g_str_has_prefix(l, "# HELP ")) {
            char **w = g_strsplit(l, " ", 4);

            g_assert_false(g_hash_table_contains(x->type, w[2]));
            g_assert_nonnull(w[3]);
            g_ptr_array_add(x->families, g_strdup(w[2]));
            cur = g_ptr_array_index(x->families, x->families->len - 1);
            typed = false;
            g_strfreev(w);
        } else if (g_str_has_prefix(l, "# TYPE ")) {
            char **w = g_strsplit(l, " ", 4);

            g_assert_cmpstr(w[2], ==, cur);
            g_assert_false(typed);
            g_assert_true(!strcmp(w[3], "counter") ||
                          !strcmp(w[3], "gauge"));
            g_hash_table_insert(x->type, g_strdup(w[2]), g_strdup(w[3]));
            typed = true;
            g_strfreev(w);
        } else {
            size_t n = strcspn(l, "{ ");
            const char *p = l + n, *sp;
            gpointer c;

            g_assert_true(typed);
            g_assert_cmpint(strncmp(l, cur, n), ==, 0);
            g_assert_cmpuint(strlen(cur), ==, n);
            g_assert_cmpint(*p, ==, '{');
            /* name="value" pairs, values with \\, \" and \n only */
            for (p++; *p != '}'; ) {
                g_assert_true(g_ascii_isalpha(*p) || *p == '_');
                while (g_ascii_isalnum(*p) || *p == '_') {
                    p++;
                }
                g_assert_cmpint(*p++, ==, '=');
                g_assert_cmpint(*p++, ==, '"');
                while (*p != '"') {
                    g_assert_cmpint(*p, !=, '\0');
                    g_assert_cmpint(*p, !=, '\n');
                    if (*p == '\\') {
                        p++;
                        g_assert_true(*p == '\\' || *p == '"' || *p == 'n');
                    }
                    p++;
                }
                p++;
                if (*p == ',') {
                    p++;
                }
            }
            sp = p + 1;
            g_assert_cmpint(*sp, ==, ' ');
            g_assert_false(g_hash_table_contains(x->samples, l));
            g_hash_table_insert(x->samples, g_strndup(l, sp - l),
                                g_strdup(sp + 1));
            c = g_hash_table_lookup(x->count, cur);
            g_hash_table_insert(x->count, g_strdup(cur),
                                GUINT_TO_POINTER(GPOINTER_TO_UINT(c) + 1));
        }
    }
    g_strfreev(lines);
}

static const char *expo_get(const expo *x, const char *key)
{
    return g_hash_table_lookup(x->samples, key);
}

static unsigned expo_count(const expo *x, const char *family)
{
    char *full = g_strconcat("ndk_pcie_telemetry_", family, NULL);
    unsigned n = GPOINTER_TO_UINT(g_hash_table_lookup(x->count, full));

    g_free(full);
    return n;
}

/* A reading of the pattern at PTL_T_SECOND, decoded. */
static ptl_data *pattern_reading(const PtmConfig *cfg)
{
    PtmPatternParams par;
    PtlBench *b;
    ptl_block *blk;
    ptl_reading *r;
    ptl_error err;
    ptl_data *d;

    ptl_test_pattern(&par);
    b = ptl_bench_new(cfg, &par);
    blk = ptl_bench_open(b);
    r = ptl_reading_new(ptl_block_layout(blk));
    ptl_bench_at(b, PTL_T_SECOND);
    g_assert_cmpint(ptl_block_read(blk, r, &err), ==, PTL_OK);
    d = ptl_data_decode(ptl_block_layout(blk), r);
    ptl_reading_free(r);
    ptl_block_close(blk);
    ptl_bench_free(b);
    return d;
}

/*
 * Three blocks: two read (a default card and one of two endpoints with
 * two DMA ports), one not (its card gone): each family once, with the
 * samples of both read blocks; up and scrape duration of all three.
 */
static void test_blocks(void)
{
    PtmConfig cfg1, cfg2;
    ptl_data *d1, *d2;
    ptl_prom_block pb[3] = {
        { .device = "0000:01:00.0", .index = 0, .scrape_seconds = 0.00025 },
        { .device = "0000:02:00.0", .index = 1, .scrape_seconds = 0.5 },
        { .device = "gone \"a\\b\"\nx", .index = 0, .scrape_seconds = 2 },
    };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    expo x;
    char key[256];
    unsigned per_block1, per_block2;

    ptm_config_default(&cfg1);
    ptm_config_default(&cfg2);
    cfg2.pcie_endpoints = 2;
    cfg2.dma_ports = 2;
    d1 = pattern_reading(&cfg1);
    d2 = pattern_reading(&cfg2);
    pb[0].data = d1;
    pb[1].data = d2;
    g_assert_cmpint(ptl_format_prometheus_blocks(f, pb, 3, true), ==, 0);
    fclose(f);
    expo_parse(buf, &x);

    /* every family once; counters end in _total, gauges do not */
    g_assert_cmpuint(x.families->len, ==, 1 + 6 + 3 + 10 + 3 + 2);
    for (unsigned i = 0; i < x.families->len; i++) {
        const char *name = g_ptr_array_index(x.families, i);

        g_assert_true(g_str_has_prefix(name, "ndk_pcie_telemetry_"));
        g_assert_cmpint(g_str_has_suffix(name, "_total"), ==,
                        !strcmp(g_hash_table_lookup(x.type, name),
                                "counter"));
    }
    /* samples per family: endpoints x clocks, x buses, ... */
    g_assert_cmpuint(expo_count(&x, "cycles_total"), ==, 2 * (1 + 2));
    per_block1 = 1 * (2 + 2 * 1);
    per_block2 = 2 * (2 + 2 * 2);
    g_assert_cmpuint(expo_count(&x, "words_total"), ==,
                     per_block1 + per_block2);
    g_assert_cmpuint(expo_count(&x, "brake_cycles_total"), ==,
                     (1 + 2) * d1->endpoints[0].nbrakes);
    g_assert_cmpuint(expo_count(&x, "hist_cycles_total"), ==,
                     (1 + 2) * d1->endpoints[0].nhists *
                     d1->endpoints[0].nbands);
    g_assert_cmpuint(expo_count(&x, "link_up"), ==, 1 + 2);
    g_assert_cmpuint(expo_count(&x, "lost_deltas"), ==, 2);
    g_assert_cmpuint(expo_count(&x, "up"), ==, 3);
    g_assert_cmpuint(expo_count(&x, "scrape_duration_seconds"), ==, 3);

    /* values and labels of both read blocks */
    snprintf(key, sizeof(key), "ndk_pcie_telemetry_words_total{device=\"0000:"
             "01:00.0\",index=\"0\",endpoint=\"0\",bus=\"RQ\"}");
    g_assert_cmpuint(g_ascii_strtoull(expo_get(&x, key), NULL, 10), ==,
                     d1->endpoints[0].buses[0].words);
    snprintf(key, sizeof(key), "ndk_pcie_telemetry_items_total{device=\"0000:"
             "02:00.0\",index=\"1\",endpoint=\"1\",bus=\"DOWN\",port=\"1\"}");
    g_assert_nonnull(expo_get(&x, key));
    g_assert_cmpuint(g_ascii_strtoull(expo_get(&x, key), NULL, 10), ==,
                     d2->endpoints[1].buses[5].items);
    g_assert_cmpuint(d2->endpoints[1].buses[5].items, >, 0);
    snprintf(key, sizeof(key), "ndk_pcie_telemetry_cycles_total{device=\"0000:"
             "02:00.0\",index=\"1\",endpoint=\"1\",clock=\"dma\"}");
    g_assert_cmpuint(g_ascii_strtoull(expo_get(&x, key), NULL, 10), ==,
                     d2->endpoints[1].dma_cycles);
    g_assert_cmpstr(expo_get(&x, "ndk_pcie_telemetry_item_bytes{device=\"0000:"
                             "02:00.0\",index=\"1\"}"), ==, "4");

    /* up: 1, 1 and 0 for the block not read, whose label is escaped and
     * which has no other sample */
    g_assert_cmpstr(expo_get(&x, "ndk_pcie_telemetry_up{device=\"0000:01:00.0"
                             "\",index=\"0\"}"), ==, "1");
    g_assert_cmpstr(expo_get(&x, "ndk_pcie_telemetry_up{device=\"0000:02:00.0"
                             "\",index=\"1\"}"), ==, "1");
    g_assert_cmpstr(expo_get(&x, "ndk_pcie_telemetry_up{device=\"gone \\\"a"
                             "\\\\b\\\"\\nx\",index=\"0\"}"), ==, "0");
    g_assert_null(strstr(buf, "gone \\\"a\\\\b\\\"\\nx\",index=\"0\","));
    g_assert_cmpfloat(g_ascii_strtod(expo_get(&x,
        "ndk_pcie_telemetry_scrape_duration_seconds{device=\"0000:01:00.0\","
        "index=\"0\"}"), NULL), ==, 0.00025);
    g_assert_cmpfloat(g_ascii_strtod(expo_get(&x,
        "ndk_pcie_telemetry_scrape_duration_seconds{device=\"gone \\\"a"
        "\\\\b\\\"\\nx\",index=\"0\"}"), NULL), ==, 2);

    expo_free(&x);
    free(buf);
    ptl_data_free(d1);
    ptl_data_free(d2);
}

/* Without the exporter's families, one block is --prometheus's output. */
static void test_single(void)
{
    PtmConfig cfg;
    ptl_data *d;
    ptl_prom_block pb = { .device = "0000:01:00.0", .index = UINT_MAX };
    char *b1 = NULL, *b2 = NULL;
    size_t l1 = 0, l2 = 0;
    FILE *f1 = open_memstream(&b1, &l1), *f2 = open_memstream(&b2, &l2);

    ptm_config_default(&cfg);
    d = pattern_reading(&cfg);
    pb.data = d;
    g_assert_cmpint(ptl_format_prometheus(f1, d, "0000:01:00.0", UINT_MAX),
                    ==, 0);
    g_assert_cmpint(ptl_format_prometheus_blocks(f2, &pb, 1, false), ==, 0);
    fclose(f1);
    fclose(f2);
    g_assert_cmpstr(b1, ==, b2);
    g_assert_null(strstr(b1, "ndk_pcie_telemetry_up{"));
    g_assert_nonnull(strstr(b1, "index=\"\""));
    free(b1);
    free(b2);
    ptl_data_free(d);
}

/* -------------------------------------------------- 64-bit extension */

typedef struct card {
    PtlBench *b;
    ptl_block *blk;
    ptl_reading *r;
} card;

static void card_open(card *c, uint32_t cnt_width)
{
    PtmConfig cfg;
    PtmPatternParams par;

    ptm_config_default(&cfg);
    cfg.cnt_width = cnt_width;
    ptl_test_pattern(&par);
    c->b = ptl_bench_new(&cfg, &par);
    c->blk = ptl_bench_open(c->b);
    c->r = ptl_reading_new(ptl_block_layout(c->blk));
}

static void card_close(card *c)
{
    ptl_reading_free(c->r);
    ptl_block_close(c->blk);
    ptl_bench_free(c->b);
}

static void card_read(card *c, uint64_t t)
{
    ptl_error err;

    ptl_bench_at(c->b, t);
    g_assert_cmpint(ptl_block_read(c->blk, c->r, &err), ==, PTL_OK);
}

/*
 * The same traffic on a card of 33-bit counters and on one of 64-bit
 * counters: read at the same moments, the extension of the first equals
 * the second, counter for counter, through many wrap-arounds, as long as
 * the readings are closer than ptl_counter_ext_max_seconds.
 */
static void test_extension_wraps(void)
{
    card narrow, wide;
    const ptl_layout *lay;
    ptl_counter_ext *x;
    unsigned n, wrapped_cycles = 0;
    double limit;
    uint64_t step, t = PTL_T_FIRST, prev_raw = 0;

    card_open(&narrow, 33);
    card_open(&wide, 64);
    lay = ptl_block_layout(narrow.blk);
    g_assert_cmpuint(lay->cnt_width, ==, 33);
    n = lay->endpoints * lay->per_endpoint;
    x = ptl_counter_ext_new(lay);
    limit = ptl_counter_ext_max_seconds(lay, narrow.b->cfg.pcie_clk_hz,
                                        narrow.b->cfg.dma_clk_hz);
    /* the pattern's RQ moves 50 items in 8 cycles, under the bound */
    g_assert_cmpfloat(limit, <=, (double)((1ull << 33) - 1) /
                      (50.0 / 8 * narrow.b->cfg.pcie_clk_hz));
    step = (uint64_t)(limit * 0.9 * 1e9);

    card_read(&narrow, t);
    card_read(&wide, t);
    g_assert_cmpint(ptl_counter_ext_update(x, narrow.r), ==, PTL_EXT_FIRST);
    for (unsigned i = 0; i < 60; i++) {
        uint64_t raw;

        t += step;
        card_read(&narrow, t);
        card_read(&wide, t);
        raw = narrow.r->counters[0];
        wrapped_cycles += raw < prev_raw;
        prev_raw = raw;
        g_assert_cmpint(ptl_counter_ext_update(x, narrow.r), ==,
                        PTL_EXT_CONTINUED);
        for (unsigned k = 0; k < n; k++) {
            g_assert_cmpuint(narrow.r->counters[k], ==, wide.r->counters[k]);
        }
    }
    /* the cycles of 60 x 0.9 x limit s: several wrap-arounds of 2^33 */
    g_assert_cmpuint(narrow.r->counters[0], >, 2ull << 33);
    g_assert_cmpuint(wrapped_cycles, >=, 2);
    ptl_counter_ext_free(x);
    card_close(&narrow);
    card_close(&wide);
}

/*
 * A clear of the counters is a restart (the counters go back, Prometheus
 * sees a reset), not a wrap-around that adds almost 2^33; after it the
 * extension goes on from the cleared counters.
 */
static void test_extension_clear(void)
{
    card c;
    ptl_counter_ext *x;
    ptl_error err;
    uint64_t t = PTL_T_FIRST, before;

    card_open(&c, 33);
    x = ptl_counter_ext_new(ptl_block_layout(c.blk));
    for (unsigned i = 0; i < 3; i++) {
        card_read(&c, t);
        g_assert_cmpint(ptl_counter_ext_update(x, c.r), ==,
                        i ? PTL_EXT_CONTINUED : PTL_EXT_FIRST);
        t += 1000000000;
    }
    before = c.r->counters[0];
    g_assert_cmpuint(before, >, 700000000);
    ptl_bench_at(c.b, t);
    g_assert_cmpint(ptl_block_clear(c.blk, &err), ==, PTL_OK);
    t += 1000000000;
    card_read(&c, t);
    g_assert_cmpint(ptl_counter_ext_update(x, c.r), ==, PTL_EXT_RESTARTED);
    /* one second of PCIe cycles at most, not before + 2^33 - ... */
    g_assert_cmpuint(c.r->counters[0], <=, c.b->cfg.pcie_clk_hz + 10000);
    /* rates are measured again before the next clear can be told */
    for (unsigned i = 0; i < 3; i++) {
        uint64_t prev = c.r->counters[0];

        t += 1000000000;
        card_read(&c, t);
        g_assert_cmpint(ptl_counter_ext_update(x, c.r), ==,
                        PTL_EXT_CONTINUED);
        g_assert_cmpuint(c.r->counters[0], >, prev);
    }
    ptl_counter_ext_forget(x);
    card_read(&c, t + 1000000);
    g_assert_cmpint(ptl_counter_ext_update(x, c.r), ==, PTL_EXT_FIRST);
    ptl_counter_ext_free(x);
    card_close(&c);
}

/* The bound, worked out by hand for a layout. */
static void test_max_seconds(void)
{
    ptl_layout l = {
        .cnt_width = 33, .item_bytes = 4, .dma_ports = 1,
        .rq_regions = 2, .rq_bytes = 32, .rc_regions = 1, .rc_bytes = 32,
        .up_regions = 1, .up_bytes = 64, .down_regions = 4, .down_bytes = 8,
    };
    double span = 8589934591.0;

    /* PCIe: RQ 2 x 32 / 4 = 16 items per cycle; DMA: UP 16, DOWN 8 */
    g_assert_cmpfloat_with_epsilon(ptl_counter_ext_max_seconds(&l, 400e6, 0),
                                   span / (16 * 400e6), 1e-9);
    g_assert_cmpfloat_with_epsilon(ptl_counter_ext_max_seconds(&l, 0, 1e9),
                                   span / (16 * 1e9), 1e-9);
    l.up_bytes = 4;
    l.item_bytes = 8;
    /* DMA: UP 1 region, DOWN 4 regions of 8 B = 4 items: 4 per cycle */
    g_assert_cmpfloat_with_epsilon(ptl_counter_ext_max_seconds(&l, 0, 1e9),
                                   span / (4 * 1e9), 1e-9);
    l.cnt_width = 48;
    g_assert_cmpfloat_with_epsilon(ptl_counter_ext_max_seconds(&l, 400e6,
                                                               200e6),
                                   281474976710655.0 / (8 * 400e6), 1e-3);
    g_assert_true(isinf(ptl_counter_ext_max_seconds(&l, 0, 0)));
}

/*
 * The bound at the measured clock rates and the span of the last update,
 * as the exporter compares them: unknown before two readings, the card's
 * clocks after, and a span over the bound on 33-bit counters read 2 s
 * apart (the default geometry's items wrap in 1.34 s at 400 MHz).
 */
static void test_extension_limit(void)
{
    card c;
    ptl_counter_ext *x;
    const ptl_layout *lay;
    double span, limit, want;

    card_open(&c, 33);
    lay = ptl_block_layout(c.blk);
    x = ptl_counter_ext_new(lay);
    want = ptl_counter_ext_max_seconds(lay, c.b->cfg.pcie_clk_hz,
                                       c.b->cfg.dma_clk_hz);
    card_read(&c, PTL_T_FIRST);
    g_assert_cmpint(ptl_counter_ext_update(x, c.r), ==, PTL_EXT_FIRST);
    g_assert_true(isinf(ptl_counter_ext_limit(x, &span)));
    g_assert_cmpfloat(span, ==, 0);
    card_read(&c, PTL_T_FIRST + 1000000000);
    g_assert_cmpint(ptl_counter_ext_update(x, c.r), ==, PTL_EXT_CONTINUED);
    limit = ptl_counter_ext_limit(x, &span);
    g_assert_cmpfloat_with_epsilon(span, 1.0, 1e-5);
    g_assert_cmpfloat_with_epsilon(limit, want, want * 1e-4);
    g_assert_cmpfloat(limit, <, 2.0);
    g_assert_cmpfloat(span, <, limit);
    card_read(&c, PTL_T_FIRST + 3000000000ull);
    g_assert_cmpint(ptl_counter_ext_update(x, c.r), ==, PTL_EXT_CONTINUED);
    limit = ptl_counter_ext_limit(x, &span);
    g_assert_cmpfloat_with_epsilon(span, 2.0, 1e-5);
    g_assert_cmpfloat(span, >, limit);
    ptl_counter_ext_free(x);
    card_close(&c);
}

/*
 * A card that goes away: its reading fails, and the exposition of that
 * scrape reports it down with no stale counters.
 */
static void test_vanished(void)
{
    card c;
    ptl_error err;
    ptl_prom_block pb = { .device = "0000:03:00.0", .index = 0 };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    expo x;

    card_open(&c, 48);
    card_read(&c, PTL_T_FIRST);
    c.b->gone_after = 0;
    ptl_bench_at(c.b, PTL_T_SECOND);
    ptl_bench_reset_counts(c.b);
    g_assert_cmpint(ptl_block_read(c.blk, c.r, &err), ==, PTL_E_GONE);
    g_assert_cmpint(ptl_format_prometheus_blocks(f, &pb, 1, true), ==, 0);
    fclose(f);
    expo_parse(buf, &x);
    g_assert_cmpuint(g_hash_table_size(x.samples), ==, 2);
    g_assert_cmpstr(expo_get(&x, "ndk_pcie_telemetry_up{device=\"0000:03:00.0"
                             "\",index=\"0\"}"), ==, "0");
    expo_free(&x);
    free(buf);
    card_close(&c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ptl-prometheus/blocks", test_blocks);
    g_test_add_func("/ptl-prometheus/single", test_single);
    g_test_add_func("/ptl-prometheus/extension-wraps", test_extension_wraps);
    g_test_add_func("/ptl-prometheus/extension-clear", test_extension_clear);
    g_test_add_func("/ptl-prometheus/max-seconds", test_max_seconds);
    g_test_add_func("/ptl-prometheus/extension-limit", test_extension_limit);
    g_test_add_func("/ptl-prometheus/vanished", test_vanished);
    return g_test_run();
}
