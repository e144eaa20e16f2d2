/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Figures and output formats of libpcie-telemetry on readings of the
 * QEMU-free core driven by the test pattern (test-ptl-support.h). Over the
 * interval between PTL_T_FIRST and PTL_T_SECOND the default card counts
 * C = 32768 PCIe and D = 16384 DMA cycles; with seconds = C / 400 MHz the
 * figures worked out by hand from the pattern are:
 *   RQ   used (4 + 3) / 16 = 43.75 %, words 50 %, stall 25 %, regions 50 %
 *        and 37.5 %, 200 B per 8 cycles = 80 Gbps, 50 Mpps, Avg 200 B
 *   RC   used 12.5 %, words 12.5 %, 64 B per 8 cycles = 25.6 Gbps, 50 Mpps
 *   UP   used 25 %, words 25 %, MFB and MVB stall 12.5 %, 128 B per 8 DMA
 *        cycles = 25.6 Gbps, 2 MVB items per 8 cycles = 50 Mpps, RD 50 %
 *   DOWN used 6.25 %, words 12.5 %, regions 12.5 % and 0 %, 6.4 Gbps,
 *        25 Mpps, Avg 32 B
 *   BRAKE 0 and 2: 25 %; tags all in band 1, storage FIFO all in band 3.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test-ptl-support.h"
#include "test-support.h"

#define C_CYC   ((double)PTL_PCIE_CYC)
#define SECONDS (PTL_PCIE_CYC / 400e6)

/* Cost of a register access in pattern_data's bench (0: the default);
 * a card of many endpoints needs cheaper ones to read between the two
 * moments. */
static uint64_t pattern_access_ns;

/* The pattern's interval (totals: since a CLEAR at PTL_T_FIRST, the same
 * windows), with MPS 512, MRRS 4096 and extended tags. */
static ptl_data *pattern_data(const PtmConfig *cfg_in, bool totals,
                              ptl_layout *lay_out)
{
    PtmConfig cfg;
    PtmPatternParams par;
    PtmSettings s = { .mps = 2, .mrrs = 5, .ext_tag = true };
    PtlBench *b;
    ptl_block *blk;
    ptl_reading *r1, *r2;
    ptl_error err;
    ptl_data *d;

    if (cfg_in) {
        cfg = *cfg_in;
    } else {
        ptm_config_default(&cfg);
    }
    ptl_test_pattern(&par);
    if (cfg.pcie_rq_mfb_regions == 4) {
        /* RQ frames of 2 words: 2 stalled, 2 words, 4 idle keep period 8 */
        par.bus[PTM_BUS_RQ].gap = 4;
    }
    b = ptl_bench_new(&cfg, &par);
    if (pattern_access_ns) {
        b->access_ns = pattern_access_ns;
    }
    for (unsigned e = 0; e < cfg.pcie_endpoints; e++) {
        ptm_core_set_settings(b->core, 0, e, &s);
    }
    blk = ptl_bench_open(b);
    r1 = ptl_reading_new(ptl_block_layout(blk));
    r2 = ptl_reading_new(ptl_block_layout(blk));
    ptl_bench_at(b, PTL_T_FIRST);
    if (totals) {
        g_assert_cmpint(ptl_block_clear(blk, &err), ==, 0);
    } else {
        g_assert_cmpint(ptl_block_read(blk, r1, &err), ==, 0);
    }
    ptl_bench_at(b, PTL_T_SECOND);
    g_assert_cmpint(ptl_block_read(blk, r2, &err), ==, 0);
    if (!totals) {
        ptl_reading_diff(ptl_block_layout(blk), r1, r2, r2);
    }
    d = ptl_data_decode(ptl_block_layout(blk), r2);
    g_assert_nonnull(d);
    if (lay_out) {
        *lay_out = *ptl_block_layout(blk);
    }
    ptl_reading_free(r1);
    ptl_reading_free(r2);
    ptl_block_close(blk);
    ptl_bench_free(b);
    return d;
}

static char *capture(int (*fn)(FILE *, const ptl_data *, double),
                     const ptl_data *d, double seconds)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    g_assert_nonnull(f);
    g_assert_cmpint(fn(f, d, seconds), ==, 0);
    fclose(f);
    return buf;
}

#define assert_near(a, b) g_assert_cmpfloat_with_epsilon((a), (b), 1e-9)

static void test_figures(void)
{
    ptl_data *d = pattern_data(NULL, false, NULL);
    const ptl_endpoint *ep = &d->endpoints[0];
    ptl_bus_figures f;
    double rp[2];

    ptl_bus_compute(ep, &ep->buses[0], 4, SECONDS, &f, rp);
    g_assert_true(f.region_pct == rp);
    assert_near(f.used_pct, 43.75);
    assert_near(f.words_pct, 50);
    assert_near(f.mfb_stall_pct, 25);
    g_assert_true(isnan(f.mvb_stall_pct));
    assert_near(rp[0], 50);
    assert_near(rp[1], 37.5);
    assert_near(f.gbps, 80);
    assert_near(f.mpps, 50);
    g_assert_true(isnan(f.rd_pct));
    assert_near(f.avg_bytes, 200);

    ptl_bus_compute(ep, &ep->buses[1], 4, SECONDS, &f, rp);
    assert_near(f.used_pct, 12.5);
    assert_near(f.gbps, 25.6);
    assert_near(f.mpps, 50);
    assert_near(f.avg_bytes, 64);

    /* UP: the DMA clock's cycles; Mpps from the MVB, RD % = (2 - 1) / 2 */
    ptl_bus_compute(ep, &ep->buses[2], 4, SECONDS, &f, rp);
    assert_near(f.used_pct, 25);
    assert_near(f.words_pct, 25);
    assert_near(f.mfb_stall_pct, 12.5);
    assert_near(f.mvb_stall_pct, 12.5);
    assert_near(rp[0], 25);
    assert_near(f.gbps, 25.6);
    assert_near(f.mpps, 50);
    assert_near(f.rd_pct, 50);
    assert_near(f.avg_bytes, 128);

    ptl_bus_compute(ep, &ep->buses[3], 4, SECONDS, &f, rp);
    assert_near(f.used_pct, 6.25);
    assert_near(f.words_pct, 12.5);
    assert_near(f.mvb_stall_pct, 0);
    assert_near(rp[0], 12.5);
    assert_near(rp[1], 0);
    assert_near(f.gbps, 6.4);
    assert_near(f.mpps, 25);
    g_assert_true(isnan(f.rd_pct));
    assert_near(f.avg_bytes, 32);

    /* totals: no rates, the rest unchanged */
    ptl_bus_compute(ep, &ep->buses[0], 4, 0, &f, NULL);
    g_assert_null(f.region_pct);
    g_assert_true(isnan(f.gbps) && isnan(f.mpps));
    assert_near(f.used_pct, 43.75);
    ptl_data_free(d);
}

/* A reading of zeros: every figure is NAN, nothing crashes. */
static void test_figures_zero(void)
{
    PtmConfig cfg;
    PtlBench *b;
    ptl_block *blk;
    ptl_reading *r;
    ptl_data *d;
    ptl_bus_figures f;
    double rp[2];
    char *txt;

    ptm_config_default(&cfg);
    b = ptl_bench_new(&cfg, NULL);
    blk = ptl_bench_open(b);
    r = ptl_reading_new(ptl_block_layout(blk));
    d = ptl_data_decode(ptl_block_layout(blk), r);
    for (unsigned k = 0; k < 4; k++) {
        ptl_bus_compute(&d->endpoints[0], &d->endpoints[0].buses[k], 4, 1.0,
                        &f, rp);
        g_assert_true(isnan(f.used_pct) && isnan(f.words_pct) &&
                      isnan(f.mfb_stall_pct) && isnan(f.mvb_stall_pct) &&
                      isnan(rp[0]) && isnan(rp[1]) && isnan(f.avg_bytes));
        g_assert_true(isnan(f.rd_pct));
        assert_near(f.gbps, 0);
    }
    txt = capture(ptl_format_text, d, 1.0);
    /* the reference: "-" in the tables, "   -  " in the BRAKE block, the
     * clocks 0.0 MHz */
    g_assert_nonnull(strstr(txt, "\nPTC -> PCIe (RQ)    -         -      "
                            "    -              -              - -        "
                            "          0.00    0.000   -       -\n"));
    g_assert_nonnull(strstr(txt, "\n  PCIe clock 0.0 MHz, DMA clock 0.0 "
                            "MHz\n"));
    g_assert_nonnull(strstr(txt, "\n    no free PCIe tag              -   %"
                            "    MFB stalled towards DMA    -   %\n"));
    g_assert_nonnull(strstr(txt, "\nPCIe tags               256   -       "
                            "-        -        -\n"));
    free(txt);
    ptl_data_free(d);
    ptl_reading_free(r);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

/*
 * The whole report: the reference's format_report of this reading (it is
 * tests/unit/data/report/pattern-1x1.txt).
 */
static const char expected_text[] =
    "PCIe telemetry - 1 endpoint(s), 1 DMA port(s) per endpoint\n"
    "==========================================================\n"
    "Measured over 0.00 s\n"
    "\n"
    "PCIe endpoint 0\n"
    "------------------------------------------------------------\n"
    "Link                      up\n"
    "Max payload size (MPS)    512 B\n"
    "Max read request (MRRS)   4096 B\n"
    "Extended tag (8-bit)      on\n"
    "10-bit tag                off\n"
    "Read completion boundary  64 B\n"
    "PTC tags free             20 (lowest 20)\n"
    "PTC storage FIFO free     700 words (lowest 700)\n"
    "\n"
    "  PCIe clock 400.0 MHz, DMA clock 200.0 MHz\n"
    "\n"
    "Bus                 Used %    Words %    MFB stall %    MVB stall % "
    "   Used per region %    Gbps    Mpps    RD %    Avg B\n"
    "------------------  --------  ---------  -------------  ------------"
    "-  -------------------  ------  ------  ------  -------\n"
    "PTC -> PCIe (RQ)    43.75     50.00      25.00          -           "
    "   50.0 37.5            80.00   50.000  -       200\n"
    "PCIe -> PTC (RC)    12.50     12.50      0.00           -           "
    "   12.5 12.5            25.60   50.000  -       64\n"
    "DMA0 -> PTC (UP)    25.00     25.00      12.50          12.50       "
    "   25.0 25.0            25.60   50.000  50.00   128\n"
    "PTC -> DMA0 (DOWN)  6.25      12.50      0.00           0.00        "
    "   12.5 0.0             6.40    25.000  -       32\n"
    "\n"
    "  Why the PCIe transfer stopped (share of PCIe clock cycles)\n"
    "    UP stream                              DOWN stream\n"
    "    no free PCIe tag            25.00 %    MFB stalled towards DMA  "
    " 0.00 %\n"
    "    PCIe tag not ready           0.00 %    MVB stalled towards DMA  "
    " 0.00 %\n"
    "    no room for completions     25.00 %\n"
    "    no completion header entry   0.00 %\n"
    "    PCIe endpoint not ready     25.00 %\n"
    "\n"
    "Time spent low          of    none    <=1/8    <=1/2    rest\n"
    "----------------------  ----  ------  -------  -------  ------\n"
    "PCIe tags               256   0.00    100.00   0.00     0.00\n"
    "PTC storage FIFO words  1024  0.00    0.00     0.00     100.00\n";

static void test_text_interval(void)
{
    ptl_data *d = pattern_data(NULL, false, NULL);
    char *txt = capture(ptl_format_text, d, SECONDS);

    g_assert_cmpstr(txt, ==, expected_text);
    free(txt);
    ptl_data_free(d);
}

/* Totals: third line, no clock line, Gbps and Mpps columns empty. */
static void test_text_totals(void)
{
    ptl_data *d = pattern_data(NULL, true, NULL);
    char *txt = capture(ptl_format_text, d, 0);
    char **lines = g_strsplit(txt, "\n", -1);

    g_assert_cmpstr(lines[2], ==, "Totals since the last clear");
    g_assert_null(strstr(txt, "MHz"));
    g_assert_nonnull(strstr(txt, "\nBus                 Used %    Words %  "
                            "  MFB stall %    MVB stall %    Used per region"
                            " %    Gbps    Mpps    RD %    Avg B\n"));
    g_assert_nonnull(strstr(txt, "\nDMA0 -> PTC (UP)    25.00     25.00    "
                            "  12.50          12.50          25.0 25.0      "
                            "                      50.00   128\n"));
    g_strfreev(lines);
    free(txt);
    ptl_data_free(d);
}

/* Both warnings after the third line and an empty line. */
static void test_text_warnings(void)
{
    ptl_data *d = pattern_data(NULL, false, NULL);
    char *txt;
    char **lines;

    txt = capture(ptl_format_text, d, SECONDS);
    g_assert_null(strstr(txt, "!!"));
    free(txt);
    d->lost_deltas = true;
    txt = capture(ptl_format_text, d, SECONDS);
    lines = g_strsplit(txt, "\n", -1);
    g_assert_cmpstr(lines[2], ==, "Measured over 0.00 s");
    g_assert_cmpstr(lines[3], ==, "");
    g_assert_cmpstr(lines[4], ==,
                    "  !! LOST DELTAS - the counters are not exact");
    g_assert_cmpstr(lines[5], ==, "");
    g_assert_cmpstr(lines[6], ==, "PCIe endpoint 0");
    g_strfreev(lines);
    free(txt);
    d->readout_overrun = true;
    txt = capture(ptl_format_text, d, SECONDS);
    lines = g_strsplit(txt, "\n", -1);
    g_assert_cmpstr(lines[4], ==,
                    "  !! LOST DELTAS - the counters are not exact");
    g_assert_cmpstr(lines[5], ==,
                    "  !! READ-OUT OVERRUN - the counters are not exact");
    g_strfreev(lines);
    free(txt);
    ptl_data_free(d);
}

/* Two endpoints, two ports, 4 RQ regions; more and fewer BRAKE reasons. */
static void test_text_shapes(void)
{
    PtmConfig cfg;
    ptl_data *d;
    ptl_endpoint *ep;
    char *txt, **lines;
    unsigned n_ep = 0, n_dash = 0;

    ptm_test_make_cfg(&ptm_test_geos[1], &cfg);
    d = pattern_data(&cfg, false, NULL);
    txt = capture(ptl_format_text, d, SECONDS);
    lines = g_strsplit(txt, "\n", -1);
    g_assert_cmpstr(lines[0], ==,
                    "PCIe telemetry - 2 endpoint(s), 2 DMA port(s) per "
                    "endpoint");
    g_assert_cmpuint(strlen(lines[1]), ==, strlen(lines[0]));
    g_assert_true(strspn(lines[1], "=") == strlen(lines[1]));
    for (unsigned i = 0; lines[i]; i++) {
        n_ep += g_str_has_prefix(lines[i], "PCIe endpoint ") &&
                g_ascii_isdigit(lines[i][14]);
        n_dash += !strcmp(lines[i], "------------------------------------"
                          "------------------------");
    }
    g_assert_cmpuint(n_ep, ==, 2);
    g_assert_cmpuint(n_dash, ==, 2);
    g_assert_nonnull(strstr(txt, "\nPCIe endpoint 1\n"));
    /* RQ of 4 regions: 200 B in 7 regions over 2 words, one frame per 8
     * cycles: regions 0-2 in 25 %, region 3 in 12.5 % of the cycles */
    g_assert_nonnull(strstr(txt, "  25.0 25.0 25.0 12.5  "));
    g_assert_nonnull(strstr(txt, "\nDMA1 -> PTC (UP)    25.00"));
    g_assert_nonnull(strstr(txt, "\nPTC -> DMA1 (DOWN)  6.25"));
    g_strfreev(lines);
    free(txt);

    /* 8 reasons: 6 and 7 by index in the UP stream column, before the
     * RQ bus's stall */
    ep = &d->endpoints[0];
    ep->brakes = realloc(ep->brakes, 8 * sizeof(uint64_t));
    ep->brakes[6] = 0;
    ep->brakes[7] = ep->pcie_cycles / 2;
    ep->nbrakes = 8;
    txt = capture(ptl_format_text, d, SECONDS);
    g_assert_nonnull(strstr(txt, "\n    UP stream                          "
                            "    DOWN stream\n"));
    g_assert_nonnull(strstr(txt, "\n    no completion header entry   0.00 "
                            "%\n    reason 6                     0.00 %\n"
                            "    reason 7                    50.00 %\n"
                            "    PCIe endpoint not ready     25.00 %\n"));
    free(txt);

    /* 3 reasons: no DOWN column, the RQ stall still listed */
    ep->nbrakes = 3;
    d->endpoints[1].nbrakes = 3;
    txt = capture(ptl_format_text, d, SECONDS);
    g_assert_null(strstr(txt, "DOWN stream"));
    g_assert_null(strstr(txt, "no completion header entry"));
    g_assert_nonnull(strstr(txt, "\n    UP stream\n"));
    g_assert_nonnull(strstr(txt, "\n    no room for completions  25.00 %\n"
                            "    PCIe endpoint not ready  25.00 %\n"));
    free(txt);
    ptl_data_free(d);
}

/*
 * As many reasons as CFG_PCIE's 8-bit BRAKE field can give: every one past
 * the 6 named ones gets a row of its own in the UP stream column.
 */
static void test_text_many_reasons(void)
{
    ptl_data *d = pattern_data(NULL, false, NULL);
    ptl_endpoint *ep = &d->endpoints[0];
    unsigned n_other = 0;
    char *txt, **lines, want[128];

    ep->brakes = realloc(ep->brakes, 255 * sizeof(uint64_t));
    for (unsigned k = 6; k < 255; k++) {
        ep->brakes[k] = 0;
    }
    ep->brakes[254] = ep->pcie_cycles / 4;
    ep->nbrakes = 255;
    txt = capture(ptl_format_text, d, SECONDS);
    lines = g_strsplit(txt, "\n", -1);
    for (unsigned i = 0; lines[i]; i++) {
        n_other += g_str_has_prefix(lines[i], "    reason ");
    }
    g_assert_cmpuint(n_other, ==, 255 - 6);
    snprintf(want, sizeof(want), "\n    reason 254                  25.00 "
             "%%\n    PCIe endpoint not ready     25.00 %%\n");
    g_assert_nonnull(strstr(txt, want));
    g_strfreev(lines);
    free(txt);
    ptl_data_free(d);
}

/* ------------------------------------------------------- JSON checker */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } JType;

typedef struct JVal {
    JType type;
    bool b;
    double num;
    bool is_int;
    char *str;
    GPtrArray *items;           /* JVal *, arrays and object values */
    GPtrArray *keys;            /* char *, objects */
} JVal;

static void jfree(gpointer p)
{
    JVal *v = p;

    if (!v) {
        return;
    }
    g_free(v->str);
    if (v->items) {
        g_ptr_array_free(v->items, true);
    }
    if (v->keys) {
        g_ptr_array_free(v->keys, true);
    }
    g_free(v);
}

static void jws(const char **p)
{
    while (**p == ' ' || **p == '\n' || **p == '\t' || **p == '\r') {
        (*p)++;
    }
}

static char *jstring(const char **p)
{
    GString *s = g_string_new(NULL);

    g_assert_cmpint(**p, ==, '"');
    (*p)++;
    while (**p != '"') {
        g_assert_cmpint(**p, !=, 0);
        if (**p == '\\') {
            (*p)++;
            switch (**p) {
            case 'n':
                g_string_append_c(s, '\n');
                break;
            case '"':
            case '\\':
            case '/':
                g_string_append_c(s, **p);
                break;
            default:
                g_error("unexpected escape \\%c", **p);
            }
        } else {
            g_assert_cmpint((unsigned char)**p, >=, 0x20);
            g_string_append_c(s, **p);
        }
        (*p)++;
    }
    (*p)++;
    return g_string_free(s, false);
}

static JVal *jparse(const char **p)
{
    JVal *v = g_new0(JVal, 1);

    jws(p);
    if (**p == '{' || **p == '[') {
        char close = **p == '{' ? '}' : ']';

        v->type = **p == '{' ? J_OBJ : J_ARR;
        v->items = g_ptr_array_new_with_free_func(jfree);
        v->keys = g_ptr_array_new_with_free_func(g_free);
        (*p)++;
        jws(p);
        if (**p == close) {
            (*p)++;
            return v;
        }
        for (;;) {
            jws(p);
            if (v->type == J_OBJ) {
                g_ptr_array_add(v->keys, jstring(p));
                jws(p);
                g_assert_cmpint(**p, ==, ':');
                (*p)++;
            }
            g_ptr_array_add(v->items, jparse(p));
            jws(p);
            if (**p == ',') {
                (*p)++;
                continue;
            }
            g_assert_cmpint(**p, ==, close);
            (*p)++;
            return v;
        }
    }
    if (**p == '"') {
        v->type = J_STR;
        v->str = jstring(p);
    } else if (g_str_has_prefix(*p, "true") ||
               g_str_has_prefix(*p, "false")) {
        v->type = J_BOOL;
        v->b = **p == 't';
        *p += v->b ? 4 : 5;
    } else if (g_str_has_prefix(*p, "null")) {
        v->type = J_NULL;
        *p += 4;
    } else {
        char *end;

        v->type = J_NUM;
        v->num = g_ascii_strtod(*p, &end);
        g_assert_true(end != *p);
        v->is_int = !memchr(*p, '.', end - *p) && !memchr(*p, 'e', end - *p);
        *p = end;
    }
    return v;
}

static JVal *jget(const JVal *o, const char *key)
{
    g_assert_cmpint(o->type, ==, J_OBJ);
    for (unsigned i = 0; i < o->keys->len; i++) {
        if (!strcmp(g_ptr_array_index(o->keys, i), key)) {
            return g_ptr_array_index(o->items, i);
        }
    }
    g_error("no key \"%s\"", key);
}

static void jkeys(const JVal *o, const char *const *keys, unsigned n)
{
    g_assert_cmpint(o->type, ==, J_OBJ);
    g_assert_cmpuint(o->keys->len, ==, n);
    for (unsigned i = 0; i < n; i++) {
        g_assert_cmpstr(g_ptr_array_index(o->keys, i), ==, keys[i]);
    }
}

static uint64_t jint(const JVal *o, const char *key)
{
    JVal *v = jget(o, key);

    g_assert_cmpint(v->type, ==, J_NUM);
    g_assert_true(v->is_int);
    return (uint64_t)v->num;
}

static bool jbool(const JVal *o, const char *key)
{
    JVal *v = jget(o, key);

    g_assert_cmpint(v->type, ==, J_BOOL);
    return v->b;
}

static JVal *jitem(const JVal *a, unsigned i)
{
    g_assert_cmpint(a->type, ==, J_ARR);
    g_assert_cmpuint(i, <, a->items->len);
    return g_ptr_array_index(a->items, i);
}

static void test_json(void)
{
    static const char *const top[] = { "seconds", "data" };
    /* the reference's order */
    static const char *const data_keys[] = { "endpoints", "status",
                                             "config" };
    static const char *const status_keys[] = { "busy", "lost_deltas",
                                               "readout_overrun" };
    static const char *const config_keys[] = {
        "pcie_endpoints", "dma_ports", "probe_pcie_regions",
        "probe_dma_regions", "counter_width", "item_bytes", "drain_period",
        "hist_bands", "tag_capacity", "stfifo_capacity",
    };
    static const char *const ep_keys[] = {
        "index", "link_up", "mps", "mrrs", "ext_tag", "tag_10b", "rcb",
        "tags_free", "tags_free_min", "stfifo_free", "stfifo_free_min",
        "pcie_cycles", "dma_cycles", "brakes", "hists", "buses",
    };
    static const char *const bus_names[] = {
        "PTC -> PCIe (RQ)", "PCIe -> PTC (RC)", "DMA0 -> PTC (UP)",
        "PTC -> DMA0 (DOWN)",
    };
    static const char *const bus_keys[] = {
        "words", "backpressure", "transactions", "mvb", "mvb_backpressure",
        "items", "regions", "region_bytes", "pcie_clk", "has_mvb", "dma_up",
    };
    const uint64_t c = PTL_PCIE_CYC, dc = PTL_DMA_CYC;
    ptl_data *d = pattern_data(NULL, false, NULL);
    char *txt = capture(ptl_format_json, d, 2.5);
    const char *p = txt;
    JVal *root = jparse(&p), *data, *cfg, *ep, *buses, *bus, *h;

    jws(&p);
    g_assert_cmpint(*p, ==, 0);
    /* json.dumps(indent=4): the layout of the first lines */
    g_assert_true(g_str_has_prefix(txt, "{\n    \"seconds\": 2.5,\n    "
                                   "\"data\": {\n        \"endpoints\": [\n"
                                   "            {\n                \"index\""
                                   ": 0,\n"));
    g_assert_true(g_str_has_suffix(txt, "\n            \"stfifo_capacity\": "
                                   "1024\n        }\n    }\n}\n"));
    jkeys(root, top, 2);
    g_assert_cmpfloat(jget(root, "seconds")->num, ==, 2.5);
    data = jget(root, "data");
    jkeys(data, data_keys, 3);
    jkeys(jget(data, "status"), status_keys, 3);
    g_assert_false(jbool(jget(data, "status"), "lost_deltas"));
    cfg = jget(data, "config");
    jkeys(cfg, config_keys, 10);
    g_assert_cmpuint(jint(cfg, "pcie_endpoints"), ==, 1);
    g_assert_cmpuint(jint(cfg, "probe_pcie_regions"), ==, 2);
    g_assert_cmpuint(jint(cfg, "counter_width"), ==, 48);
    g_assert_cmpuint(jint(cfg, "drain_period"), ==, 4096);
    g_assert_cmpuint(jint(cfg, "stfifo_capacity"), ==, 1024);
    g_assert_cmpuint(jget(data, "endpoints")->items->len, ==, 1);
    ep = jitem(jget(data, "endpoints"), 0);
    jkeys(ep, ep_keys, 16);
    g_assert_cmpuint(jint(ep, "mps"), ==, 512);
    g_assert_cmpuint(jint(ep, "mrrs"), ==, 4096);
    g_assert_cmpuint(jint(ep, "rcb"), ==, 64);
    g_assert_true(jbool(ep, "ext_tag"));
    g_assert_false(jbool(ep, "tag_10b"));
    g_assert_true(jbool(ep, "link_up"));
    g_assert_cmpuint(jint(ep, "tags_free_min"), ==, 20);
    g_assert_cmpuint(jint(ep, "stfifo_free"), ==, 700);
    g_assert_cmpuint(jint(ep, "pcie_cycles"), ==, c);
    g_assert_cmpuint(jint(ep, "dma_cycles"), ==, dc);
    g_assert_cmpuint(jget(ep, "brakes")->items->len, ==, 6);
    g_assert_cmpfloat(jitem(jget(ep, "brakes"), 2)->num, ==, c / 4);
    h = jget(ep, "hists");
    g_assert_cmpuint(h->items->len, ==, 2);
    g_assert_cmpuint(jitem(h, 0)->items->len, ==, 4);
    g_assert_cmpfloat(jitem(jitem(h, 0), 1)->num, ==, c);
    g_assert_cmpfloat(jitem(jitem(h, 1), 3)->num, ==, c);
    buses = jget(ep, "buses");
    jkeys(buses, bus_names, 4);
    for (unsigned k = 0; k < 4; k++) {
        jkeys(jget(buses, bus_names[k]), bus_keys, 11);
    }
    bus = jget(buses, "PTC -> PCIe (RQ)");
    g_assert_cmpuint(jint(bus, "words"), ==, c / 2);
    g_assert_cmpuint(jint(bus, "backpressure"), ==, c / 4);
    g_assert_cmpuint(jint(bus, "items"), ==, 50 * c / 8);
    g_assert_cmpfloat(jitem(jget(bus, "regions"), 1)->num, ==, 3 * c / 8);
    g_assert_cmpuint(jint(bus, "region_bytes"), ==, 32);
    g_assert_true(jbool(bus, "pcie_clk"));
    g_assert_false(jbool(bus, "has_mvb"));
    bus = jget(buses, "DMA0 -> PTC (UP)");
    g_assert_cmpuint(jint(bus, "mvb"), ==, dc / 4);
    g_assert_cmpuint(jint(bus, "mvb_backpressure"), ==, dc / 8);
    g_assert_true(jbool(bus, "dma_up") && jbool(bus, "has_mvb"));
    g_assert_false(jbool(bus, "pcie_clk"));
    g_assert_false(jbool(jget(buses, "PTC -> DMA0 (DOWN)"), "dma_up"));
    jfree(root);
    free(txt);

    /* totals: "seconds": null; an empty list is [] */
    d->endpoints[0].nbrakes = 0;
    txt = capture(ptl_format_json, d, 0);
    g_assert_true(g_str_has_prefix(txt, "{\n    \"seconds\": null,\n"));
    g_assert_nonnull(strstr(txt, "\n                \"brakes\": [],\n"));
    free(txt);
    ptl_data_free(d);
}

/* What Python's json.dumps(json.loads(x), indent=4) makes of our JSON must
 * be our JSON (when python3 is there to ask). */
static void test_json_python(void)
{
    PtmConfig cfg;
    ptl_data *d;
    char *txt, *path, *out = NULL, *py = g_find_program_in_path("python3");
    int fd, status;
    const char *argv[] = {
        NULL, "-c",
        "import json, sys\n"
        "s = open(sys.argv[1]).read()\n"
        "sys.stdout.write(json.dumps(json.loads(s), indent=4) + '\\n')\n",
        NULL, NULL,
    };

    if (!py) {
        g_test_skip("python3 not found");
        return;
    }
    ptm_test_make_cfg(&ptm_test_geos[1], &cfg);
    d = pattern_data(&cfg, false, NULL);
    d->lost_deltas = true;
    txt = capture(ptl_format_json, d, 1.0000123);
    fd = g_file_open_tmp("ptl-json-XXXXXX", &path, NULL);
    g_assert_cmpint(fd, >=, 0);
    g_assert_true(g_file_set_contents(path, txt, -1, NULL));
    close(fd);
    argv[0] = py;
    argv[3] = path;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, 0, NULL, NULL,
                               &out, NULL, &status, NULL));
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    g_assert_cmpstr(out, ==, txt);
    g_assert_nonnull(strstr(txt, "\"seconds\": 1.0000123,"));
    g_assert_nonnull(strstr(txt, "\"lost_deltas\": true,"));
    g_unlink(path);
    g_free(path);
    g_free(out);
    g_free(py);
    free(txt);
    ptl_data_free(d);
}

/* "seconds" as Python's repr writes floats. */
static void test_json_floats(void)
{
    static const struct {
        double v;
        const char *repr;
    } cases[] = {
        { 1.0, "1.0" }, { 0.5, "0.5" }, { 1.0000123, "1.0000123" },
        { 0.1, "0.1" }, { 1e-05, "1e-05" }, { 0.0001, "0.0001" },
        { 123456.0, "123456.0" }, { 1e16, "1e+16" },
        { 1234567890123456.0, "1234567890123456.0" },
        { 2.0 / 3, "0.6666666666666666" }, { 3.25e-07, "3.25e-07" },
        { 1.5e300, "1.5e+300" },
    };
    ptl_data *d = pattern_data(NULL, false, NULL);

    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *txt = capture(ptl_format_json, d, cases[i].v);
        char *want = g_strdup_printf("{\n    \"seconds\": %s,\n",
                                     cases[i].repr);

        if (!g_str_has_prefix(txt, want)) {
            g_error("seconds %g: got %.40s, expected %s", cases[i].v, txt,
                    want);
        }
        g_free(want);
        free(txt);
    }
    ptl_data_free(d);
}

/* ---------------------------------------------------------------- CSV */

/* Fields of one CSV line (RFC 4180 quotes). */
static GPtrArray *csv_split(const char *line)
{
    GPtrArray *f = g_ptr_array_new_with_free_func(g_free);
    GString *cur = g_string_new(NULL);
    bool quoted = false;

    for (const char *p = line;; p++) {
        if (quoted) {
            g_assert_cmpint(*p, !=, 0);
            if (*p == '"' && p[1] == '"') {
                g_string_append_c(cur, '"');
                p++;
            } else if (*p == '"') {
                quoted = false;
            } else {
                g_string_append_c(cur, *p);
            }
        } else if (*p == '"') {
            quoted = true;
        } else if (*p == ',' || *p == 0) {
            g_ptr_array_add(f, g_strdup(cur->str));
            g_string_truncate(cur, 0);
            if (!*p) {
                break;
            }
        } else {
            g_string_append_c(cur, *p);
        }
    }
    g_string_free(cur, true);
    return f;
}

static int csv_col(GPtrArray *head, const char *name)
{
    for (unsigned i = 0; i < head->len; i++) {
        if (!strcmp(g_ptr_array_index(head, i), name)) {
            return i;
        }
    }
    g_error("no CSV column %s", name);
}

#define FIELD(row, name) \
    ((const char *)g_ptr_array_index(row, csv_col(head, name)))

static void test_csv(void)
{
    static const char *const needed[] = {
        "unix_time", "seconds", "device", "index", "endpoint", "bus",
        "cycles", "words", "backpressure", "transactions", "mvb",
        "mvb_backpressure", "items", "regions", "used_pct", "words_pct",
        "mfb_stall_pct", "mvb_stall_pct", "region_pct", "gbps", "mpps",
        "rd_pct", "avg_bytes",
    };
    PtmConfig cfg;
    ptl_data *d;
    char *buf = NULL, **lines;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    GPtrArray *head, *row;
    unsigned nlines;

    ptm_test_make_cfg(&ptm_test_geos[1], &cfg);
    d = pattern_data(&cfg, false, NULL);
    g_assert_cmpint(ptl_format_csv_header(f), ==, 0);
    g_assert_cmpint(ptl_format_csv(f, d, SECONDS, 1700000000.25, "card,\"1\"",
                                   3), ==, 0);
    fclose(f);
    lines = g_strsplit(buf, "\n", -1);
    nlines = g_strv_length(lines);
    /* header + 2 endpoints x 6 buses, and the final newline */
    g_assert_cmpuint(nlines, ==, 1 + 12 + 1);
    g_assert_cmpstr(lines[nlines - 1], ==, "");
    head = csv_split(lines[0]);
    for (unsigned i = 0; i < G_N_ELEMENTS(needed); i++) {
        csv_col(head, needed[i]);
    }
    for (unsigned i = 1; i < nlines - 1; i++) {
        row = csv_split(lines[i]);
        g_assert_cmpuint(row->len, ==, head->len);
        g_assert_cmpstr(FIELD(row, "device"), ==, "card,\"1\"");
        g_assert_cmpstr(FIELD(row, "index"), ==, "3");
        g_assert_cmpstr(FIELD(row, "endpoint"), ==, i <= 6 ? "0" : "1");
        g_ptr_array_free(row, true);
    }
    g_assert_true(g_str_has_prefix(lines[1], "1700000000.250,"));
    /* endpoint 1's RQ (4 regions, gap 2): 200 B per 8 cycles */
    row = csv_split(lines[7]);
    g_assert_cmpstr(FIELD(row, "bus"), ==, "PTC -> PCIe (RQ)");
    g_assert_cmpstr(FIELD(row, "cycles"), ==, "32768");
    g_assert_cmpstr(FIELD(row, "words"), ==, "8192");
    g_assert_cmpstr(FIELD(row, "items"), ==, "204800");
    g_assert_cmpstr(FIELD(row, "regions"), ==, "8192;8192;8192;4096");
    g_assert_cmpstr(FIELD(row, "mvb_stall_pct"), ==, "");
    g_assert_cmpstr(FIELD(row, "rd_pct"), ==, "");
    g_assert_cmpstr(FIELD(row, "region_pct"), ==,
                    "25.0000;25.0000;25.0000;12.5000");
    g_assert_cmpfloat_with_epsilon(g_ascii_strtod(FIELD(row, "gbps"), NULL),
                                   80, 1e-3);
    g_ptr_array_free(row, true);
    /* endpoint 1, DMA1 UP */
    row = csv_split(lines[11]);
    g_assert_cmpstr(FIELD(row, "bus"), ==, "DMA1 -> PTC (UP)");
    g_assert_cmpstr(FIELD(row, "cycles"), ==, "16384");
    g_assert_cmpfloat_with_epsilon(g_ascii_strtod(FIELD(row, "rd_pct"),
                                                  NULL), 50, 1e-6);
    g_assert_cmpfloat_with_epsilon(g_ascii_strtod(FIELD(row, "mpps"), NULL),
                                   50, 1e-6);
    g_ptr_array_free(row, true);
    g_ptr_array_free(head, true);
    g_strfreev(lines);
    free(buf);
    ptl_data_free(d);
}

/* --------------------------------------------------------- Prometheus */

static void test_prometheus(void)
{
    static const char *const families[] = {
        "cycles_total", "words_total", "backpressure_total",
        "transactions_total", "mvb_items_total", "mvb_backpressure_total",
        "items_total", "region_cycles_total", "brake_cycles_total",
        "hist_cycles_total", "tags_free", "tags_free_min", "stfifo_free",
        "stfifo_free_min", "link_up", "mps_bytes", "mrrs_bytes",
        "lost_deltas", "readout_overrun",
    };
    ptl_data *d = pattern_data(NULL, true, NULL);
    const uint64_t c = PTL_PCIE_CYC, dc = PTL_DMA_CYC;
    char *buf = NULL, **lines;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    GHashTable *help = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                             NULL);
    GHashTable *type = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                             g_free);
    GHashTable *done = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                             NULL);
    char *last = NULL;
    const char *lab = "{device=\"0000:01:00.0 \\\"x\\\\\",index=\"1\","
                      "endpoint=\"0\"";
    char *want;

    g_assert_cmpint(ptl_format_prometheus(f, d, "0000:01:00.0 \"x\\", 1), ==,
                    0);
    fclose(f);
    lines = g_strsplit(buf, "\n", -1);
    for (unsigned i = 0; lines[i] && lines[i][0]; i++) {
        char **w = g_strsplit(lines[i], " ", 4);

        if (g_str_has_prefix(lines[i], "# HELP ")) {
            g_assert_false(g_hash_table_contains(help, w[2]));
            g_hash_table_add(help, g_strdup(w[2]));
        } else if (g_str_has_prefix(lines[i], "# TYPE ")) {
            g_assert_true(g_hash_table_contains(help, w[2]));
            g_assert_false(g_hash_table_contains(type, w[2]));
            g_assert_true(!strcmp(w[3], "counter") ||
                          !strcmp(w[3], "gauge"));
            g_assert_cmpint(g_str_has_suffix(w[2], "_total"), ==,
                            !strcmp(w[3], "counter"));
            g_hash_table_insert(type, g_strdup(w[2]), g_strdup(w[3]));
        } else {
            size_t n = strcspn(lines[i], "{ ");
            char *name = g_strndup(lines[i], n);

            /* a sample follows its family's HELP and TYPE, and the family's
             * samples are together */
            g_assert_true(g_hash_table_contains(type, name));
            g_assert_true(g_str_has_prefix(name, "ndk_pcie_telemetry_"));
            if (!last || strcmp(last, name)) {
                g_assert_false(g_hash_table_contains(done, name));
                g_hash_table_add(done, g_strdup(name));
            }
            g_free(last);
            last = name;
            g_assert_true(g_str_has_prefix(lines[i] + n,
                                           "{device=\"0000:01:00.0 \\\"x"
                                           "\\\\\",index=\"1\""));
        }
        g_strfreev(w);
    }
    for (unsigned i = 0; i < G_N_ELEMENTS(families); i++) {
        char *full = g_strconcat("ndk_pcie_telemetry_", families[i], NULL);

        g_assert_true(g_hash_table_contains(done, full));
        g_free(full);
    }
    /* samples equal the raw counters of the totals reading */
#define SAMPLE(fmt, ...)                                                    \
    do {                                                                    \
        want = g_strdup_printf("\nndk_pcie_telemetry_" fmt "\n",            \
                               __VA_ARGS__);                                \
        if (!strstr(buf, want)) {                                           \
            g_error("missing: %s", want);                                   \
        }                                                                   \
        g_free(want);                                                       \
    } while (0)
    SAMPLE("cycles_total%s,clock=\"pcie\"} %" G_GUINT64_FORMAT, lab, c);
    SAMPLE("cycles_total%s,clock=\"dma\"} %" G_GUINT64_FORMAT, lab, dc);
    SAMPLE("words_total%s,bus=\"RQ\"} %" G_GUINT64_FORMAT, lab, c / 2);
    SAMPLE("items_total%s,bus=\"RC\"} %" G_GUINT64_FORMAT, lab, 2 * c);
    SAMPLE("mvb_items_total%s,bus=\"UP\",port=\"0\"} %" G_GUINT64_FORMAT,
           lab, dc / 4);
    SAMPLE("backpressure_total%s,bus=\"UP\",port=\"0\"} %" G_GUINT64_FORMAT,
           lab, dc / 8);
    SAMPLE("region_cycles_total%s,bus=\"RQ\",region=\"1\"} %"
           G_GUINT64_FORMAT, lab, 3 * c / 8);
    SAMPLE("region_cycles_total%s,bus=\"DOWN\",port=\"0\",region=\"0\"} %"
           G_GUINT64_FORMAT, lab, dc / 8);
    SAMPLE("brake_cycles_total%s,reason=\"no_room_for_completions\"} %"
           G_GUINT64_FORMAT, lab, c / 4);
    SAMPLE("brake_cycles_total%s,reason=\"no_free_pcie_tag\"} %"
           G_GUINT64_FORMAT, lab, c / 4);
    SAMPLE("hist_cycles_total%s,hist=\"tags\",band=\"1\"} %"
           G_GUINT64_FORMAT, lab, c);
    SAMPLE("hist_cycles_total%s,hist=\"stfifo\",band=\"3\"} %"
           G_GUINT64_FORMAT, lab, c);
    SAMPLE("tags_free%s} %d", lab, 20);
    SAMPLE("stfifo_free_min%s} %d", lab, 700);
    SAMPLE("mps_bytes%s} %d", lab, 512);
    SAMPLE("link_up%s} %d", lab, 1);
    g_assert_nonnull(strstr(buf, "\nndk_pcie_telemetry_lost_deltas{device="
                            "\"0000:01:00.0 \\\"x\\\\\",index=\"1\"} 0\n"));
#undef SAMPLE
    g_free(last);
    g_hash_table_destroy(help);
    g_hash_table_destroy(type);
    g_hash_table_destroy(done);
    g_strfreev(lines);
    free(buf);
    ptl_data_free(d);
}

/* ------------------------------------------------------------ golden */

/*
 * Readings saved as -j writes them, next to what the reference reader
 * prints for them (tests/unit/data/report/README.md): NAME.json is the
 * reference's json.dumps of the reading, NAME.txt its format_report. The
 * readings came from the pattern on several cards; with PTL_REPORT_REGEN
 * set to a directory the first test writes them there again.
 */
static char *report_path(const char *name, const char *ext)
{
    const char *dir = g_getenv("PTL_REPORT_DATA");

    return g_strdup_printf("%s/%s.%s", dir ? dir : "tests/unit/data/report",
                           name, ext);
}

static char *read_file(const char *path)
{
    char *s = NULL;
    GError *e = NULL;

    if (!g_file_get_contents(path, &s, NULL, &e)) {
        g_error("%s", e->message);
    }
    return s;
}

/* A document of the -j output, written as NAME.json. */
static void golden_json(const char *name, const ptl_data *d, double seconds)
{
    char *txt = capture(ptl_format_json, d, seconds);
    char *path = g_strdup_printf("%s/%s.json", g_getenv("PTL_REPORT_REGEN"),
                                 name);

    g_assert_true(g_file_set_contents(path, txt, -1, NULL));
    g_free(path);
    free(txt);
}

/* Widen a reading to n reasons and nhists x nbands histogram bands. */
static void widen(ptl_data *d, unsigned nbrakes, unsigned nhists,
                  unsigned nbands)
{
    d->config.hist_bands = nbands;
    for (unsigned e = 0; e < d->nendpoints; e++) {
        ptl_endpoint *ep = &d->endpoints[e];
        uint64_t *h = calloc((size_t)nhists * nbands + 1, sizeof(uint64_t));

        ep->brakes = realloc(ep->brakes, (nbrakes + 1) * sizeof(uint64_t));
        for (unsigned k = ep->nbrakes; k < nbrakes; k++) {
            ep->brakes[k] = ep->pcie_cycles / (k + 2);
        }
        ep->nbrakes = nbrakes;
        for (unsigned i = 0; i < nhists; i++) {
            for (unsigned k = 0; k < nbands; k++) {
                h[i * nbands + k] = k == i % nbands ? ep->pcie_cycles : 0;
            }
        }
        free(ep->hists);
        ep->hists = h;
        ep->nhists = nhists;
        ep->nbands = nbands;
    }
}

static void test_golden_readings(void)
{
    PtmConfig cfg;
    ptl_data *d;
    ptl_endpoint *ep;

    /* registered with PTL_REPORT_REGEN only: the saved readings stay */
    d = pattern_data(NULL, false, NULL);
    golden_json("pattern-1x1", d, SECONDS);
    d->lost_deltas = true;
    d->readout_overrun = true;
    golden_json("flags", d, SECONDS);
    ptl_data_free(d);

    d = pattern_data(NULL, true, NULL);
    golden_json("totals", d, 0);
    /* several reasons past the named ones, bands past the named ones and a
     * third, unnamed histogram */
    widen(d, 9, 3, 6);
    golden_json("unnamed-totals", d, 0);
    ptl_data_free(d);

    d = pattern_data(NULL, false, NULL);
    widen(d, 9, 3, 6);
    golden_json("unnamed", d, SECONDS);
    /* fewer reasons than the DOWN stream needs, no histogram */
    widen(d, 3, 0, 0);
    golden_json("few-reasons", d, SECONDS);
    ptl_data_free(d);

    ptm_test_make_cfg(&ptm_test_geos[1], &cfg);
    d = pattern_data(&cfg, false, NULL);
    golden_json("pattern-2x2", d, SECONDS);
    ptl_data_free(d);

    /* 16 endpoints; a faster MI clock keeps the accumulator up with them */
    ptm_config_default(&cfg);
    cfg.pcie_endpoints = 16;
    cfg.mi_clk_hz = 400000000;
    pattern_access_ns = 1;
    d = pattern_data(&cfg, false, NULL);
    pattern_access_ns = 0;
    g_assert_false(d->lost_deltas);
    golden_json("pattern-16ep", d, SECONDS);
    ptl_data_free(d);

    /* a card that counted nothing: every share is "-", clocks 0.0 MHz */
    d = pattern_data(NULL, false, NULL);
    for (unsigned e = 0; e < d->nendpoints; e++) {
        ep = &d->endpoints[e];
        ep->pcie_cycles = ep->dma_cycles = 0;
        memset(ep->brakes, 0, ep->nbrakes * sizeof(uint64_t));
        memset(ep->hists, 0, ep->nhists * ep->nbands * sizeof(uint64_t));
        for (unsigned b = 0; b < ep->nbuses; b++) {
            ptl_bus *bus = &ep->buses[b];

            bus->words = bus->backpressure = bus->transactions = 0;
            bus->mvb = bus->mvb_backpressure = bus->items = 0;
            memset(bus->regions, 0, bus->nregions * sizeof(uint64_t));
        }
        ep->link_up = false;
    }
    golden_json("zero", d, 1.0);
    golden_json("zero-totals", d, 0);
    ptl_data_free(d);
}

/*
 * Each saved reading read back: its text report is the reference's and
 * its JSON the saved one, byte for byte.
 */
static void test_golden_reports(void)
{
    static const char *const names[] = {
        "example", "pattern-1x1", "flags", "totals", "unnamed",
        "unnamed-totals", "few-reasons", "pattern-2x2", "pattern-16ep",
        "zero", "zero-totals",
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(names); i++) {
        char *jpath = report_path(names[i], "json");
        char *tpath = report_path(names[i], "txt");
        char *json = read_file(jpath), *want = read_file(tpath), *txt;
        ptl_json *doc;
        ptl_data *d;
        ptl_error err;
        double seconds;

        g_test_message("%s", names[i]);
        g_assert_cmpint(ptl_json_parse(json, strlen(json), 1, 1, NULL, &doc,
                                       &err), ==, PTL_OK);
        g_assert_cmpint(ptl_data_from_json(doc, &d, &seconds, &err), ==,
                        PTL_OK);
        txt = capture(ptl_format_text, d, seconds);
        g_assert_cmpstr(txt, ==, want);
        free(txt);
        txt = capture(ptl_format_json, d, seconds);
        g_assert_cmpstr(txt, ==, json);
        free(txt);
        ptl_data_free(d);
        ptl_json_free(doc);
        g_free(json);
        g_free(want);
        g_free(jpath);
        g_free(tpath);
    }
}

/* A write error is reported, not ignored. */
static void test_write_error(void)
{
    ptl_data *d = pattern_data(NULL, false, NULL);
    FILE *f = fopen("/dev/full", "w");

    if (!f) {
        g_test_skip("no /dev/full");
        ptl_data_free(d);
        return;
    }
    g_assert_cmpint(ptl_format_text(f, d, 1.0), ==, -1);
    clearerr(f);
    g_assert_cmpint(ptl_format_json(f, d, 1.0), ==, -1);
    fclose(f);
    ptl_data_free(d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ptl/figures/pattern", test_figures);
    g_test_add_func("/ptl/figures/zero", test_figures_zero);
    g_test_add_func("/ptl/text/interval", test_text_interval);
    g_test_add_func("/ptl/text/totals", test_text_totals);
    g_test_add_func("/ptl/text/warnings", test_text_warnings);
    g_test_add_func("/ptl/text/shapes", test_text_shapes);
    g_test_add_func("/ptl/text/many-reasons", test_text_many_reasons);
    g_test_add_func("/ptl/json/schema", test_json);
    g_test_add_func("/ptl/json/python", test_json_python);
    g_test_add_func("/ptl/json/floats", test_json_floats);
    g_test_add_func("/ptl/csv", test_csv);
    g_test_add_func("/ptl/prometheus", test_prometheus);
    g_test_add_func("/ptl/write-error", test_write_error);
    /*
     * PTL_REPORT_REGEN=<dir> writes the readings of tests/unit/data/report
     * anew (see its README) instead of checking the reports against them
     */
    if (g_getenv("PTL_REPORT_REGEN")) {
        g_test_add_func("/ptl/golden/readings", test_golden_readings);
    } else {
        g_test_add_func("/ptl/golden/reports", test_golden_reports);
    }
    return g_test_run();
}
