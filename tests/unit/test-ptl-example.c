/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reference tool's example report, reproduced. The specification of
 * PCIE_TELEMETRY_MI shows one report of nfb-pcie-telemetry (one endpoint,
 * one DMA port, 4 regions on RQ and RC, 2 on UP and DOWN, one second at
 * 400 and 200 MHz). Counters were worked out by hand from its figures
 * (share x cycles, Gbps x 1e9 / 32 items, ...) and are served here by a
 * plain register image, read through the library exactly as on a BAR. The
 * text the library prints must then equal the example token by token: the
 * specification's copy lost the column spacing, so whitespace runs are
 * compared as one space (the whole text, spacing included, is checked
 * against the reference's own output in test-ptl-format). This checks the layout decoding, the difference
 * of two readings across a wrap of the 48-bit counters and every formula of
 * the report against the reference's own numbers.
 */
#include <glib.h>
#include <string.h>

#include "pcie-telemetry.h"

/* The card of the example: configuration registers by hand (FACTS.md). */
#define ENTRIES 64
static const struct {
    uint32_t off, val;
} config_regs[] = {
    { 0x00, 0x50544C4D },   /* MAGIC */
    { 0x04, 0x00020000 },   /* VERSION 2.0 */
    { 0x08, 0x00020101 },   /* 1 endpoint, 1 port, 2 probes */
    { 0x0C, 0x34300040 },   /* 64 entries, 48 bit, 52 per endpoint */
    { 0x10, 0x0E040223 },   /* PCIe: 35 channels, 2 buses, 4 regions, 14 */
    { 0x14, 0x00020211 },   /* DMA: 17 channels, 2 buses, 2 regions */
    { 0x18, 0x00041000 },   /* DRAIN_PERIOD 4096, 4-byte items */
    { 0x1C, 0x00008000 },   /* CNT_BASE */
    { 0x2C, 0x02020404 },   /* regions RQ 4, RC 4, UP 2, DOWN 2 */
    { 0x30, 0x00200020 },   /* 32-byte regions */
    { 0x34, 0x00000204 },   /* 4 bands, 2 PCIe histograms */
    { 0x38, 0x04000100 },   /* 256 tags, 1024 FIFO words */
    { 0x3C, 0x00200020 },
    /* MPS 512 (2), MRRS 4096 (5), ext tag, RCB 64, link up */
    { 0x40, 2 | 5 << 3 | 1 << 6 | 1 << 9 },
    { 0x80, 3 << 16 | 118 },        /* tags free 118, lowest 3 */
    { 0xC0, 96 << 16 | 640 },       /* FIFO free 640, lowest 96 */
};

/*
 * What one second adds to each counter. PCIe probe (R = 4): 0 cycles, RQ
 * 1-10, RC 11-20 (words, stall, SOF, MVB, MVB stall, items, 4 regions),
 * reasons 21-26, tag bands 27-30, FIFO bands 31-34. DMA probe from 35:
 * cycles, UP 36-43, DOWN 44-51 (2 regions each).
 */
#define PCIE 400000000ull
#define DMA  200000000ull
static const uint64_t delta[ENTRIES] = {
    [0] = PCIE,
    /* RQ: 89.90 % words, 0.01 % stall, 58 M SOF, 287.33 Gbps */
    [1] = 359600000, [2] = 40000, [3] = 58000000, [6] = 8979062500,
    /* regions 89.9, 63.6, 63.6, 63.5: used 70.15 % */
    [7] = 359600000, [8] = 254400000, [9] = 254400000, [10] = 254000000,
    /* RC: 49.40 % words, 34 M SOF, 182.99 Gbps */
    [11] = 197600000, [13] = 34000000, [16] = 5718437500,
    /* regions 44.8, 44.7, 44.6, 44.57: used 44.67 % */
    [17] = 179200000, [18] = 178800000, [19] = 178400000, [20] = 178280000,
    /* reasons: 13.60, 0.40, 0, 0, 8.40, 0.10 % */
    [21] = 54400000, [22] = 1600000, [25] = 33600000, [26] = 400000,
    /* tags: 0.30, 39.80, 7.90, 52.00 %; FIFO: 0, 21, 27, 52 % */
    [27] = 1200000, [28] = 159200000, [29] = 31600000, [30] = 208000000,
    [32] = 84000000, [33] = 108000000, [34] = 208000000,
    [35] = DMA,
    /*
     * UP: 66.90 % words, 22.70 % stall, 58 M MVB items of which 25.86 %
     * without payload (43001200 SOF), 13.90 % MVB stall, 68.04 Gbps;
     * regions 66.7 and 66.205: used 66.45 %
     */
    [36] = 133800000, [37] = 45400000, [38] = 43001200, [39] = 58000000,
    [40] = 27800000, [41] = 2126250000, [42] = 133400000, [43] = 132410000,
    /*
     * DOWN: 48.60 % words, 0.80 % stall, 34.8 M SOF and MVB items, 0.30 %
     * MVB stall, 46.54 Gbps; regions 45.5 and 45.405: used 45.45 %
     */
    [44] = 97200000, [45] = 1600000, [46] = 34800000, [47] = 34800000,
    [48] = 600000, [49] = 1454375000, [50] = 91000000, [51] = 90810000,
};

/* The example as the specification prints it (spacing lost). */
static const char *const example[] = {
    "PCIe telemetry - 1 endpoint(s), 1 DMA port(s) per endpoint",
    "==========================================================",
    "Measured over 1.00 s",
    "PCIe endpoint 0",
    "------------------------------------------------------------",
    "Link up",
    "Max payload size (MPS) 512 B",
    "Max read request (MRRS) 4096 B",
    "Extended tag (8-bit) on",
    "10-bit tag off",
    "Read completion boundary 64 B",
    "PTC tags free 118 (lowest 3)",
    "PTC storage FIFO free 640 words (lowest 96)",
    "PCIe clock 400.0 MHz, DMA clock 200.0 MHz",
    "Bus Used % Words % MFB stall % MVB stall % Used per region % Gbps Mpps "
    "RD % Avg B",
    /* the specification's copy shows narrower dashes under the headers
     * than the reference prints: tabulate's "simple" makes a column at
     * least its header plus two wide */
    "------------------ -------- --------- ------------- ------------- "
    "------------------- ------ ------ ------ -------",
    "PTC -> PCIe (RQ) 70.15 89.90 0.01 - 89.9 63.6 63.6 63.5 287.33 58.000 "
    "- 619",
    "PCIe -> PTC (RC) 44.67 49.40 0.00 - 44.8 44.7 44.6 44.6 182.99 34.000 "
    "- 673",
    "DMA0 -> PTC (UP) 66.45 66.90 22.70 13.90 66.7 66.2 68.04 58.000 25.86 "
    "198",
    "PTC -> DMA0 (DOWN) 45.45 48.60 0.80 0.30 45.5 45.4 46.54 34.800 - 167",
    "Why the PCIe transfer stopped (share of PCIe clock cycles)",
    "UP stream DOWN stream",
    "no free PCIe tag 13.60 % MFB stalled towards DMA 8.40 %",
    "PCIe tag not ready 0.40 % MVB stalled towards DMA 0.10 %",
    "no room for completions 0.00 %",
    "no completion header entry 0.00 %",
    "PCIe endpoint not ready 0.01 %",
    "Time spent low of none <=1/8 <=1/2 rest",
    "---------------------- ---- ------ ------- ------- ------",
    "PCIe tags 256 0.30 39.80 7.90 52.00",
    "PTC storage FIFO words 1024 0.00 21.00 27.00 52.00",
};

typedef struct Image {
    uint64_t counters[ENTRIES];
    uint64_t now;
} Image;

static uint32_t img_read32(void *opaque, uint32_t off)
{
    Image *img = opaque;

    if (off >= 0x8000) {
        uint64_t v = img->counters[((off - 0x8000) / 8) % ENTRIES];

        return off & 4 ? v >> 32 : (uint32_t)v;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(config_regs); i++) {
        if (config_regs[i].off == off) {
            return config_regs[i].val;
        }
    }
    return 0;                   /* STATUS: never busy, no flags */
}

static void img_write32(void *opaque, uint32_t off, uint32_t val)
{
}

static uint64_t img_read64(void *opaque, uint32_t off)
{
    Image *img = opaque;

    return img->counters[((off - 0x8000) / 8) % ENTRIES];
}

static uint64_t img_now(void *opaque)
{
    return ((Image *)opaque)->now;
}

static const ptl_regs_ops img_ops = {
    .read32 = img_read32,
    .write32 = img_write32,
    .read64 = img_read64,
    .now_ns = img_now,
};

/* Collapse runs of blanks, drop empty lines. */
static GPtrArray *tokens_by_line(const char *text)
{
    GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
    g_auto(GStrv) raw = g_strsplit(text, "\n", -1);

    for (char **l = raw; *l; l++) {
        g_auto(GStrv) words = g_strsplit_set(*l, " ", -1);
        GString *s = g_string_new(NULL);

        for (char **w = words; *w; w++) {
            if (**w) {
                g_string_append_printf(s, "%s%s", s->len ? " " : "", *w);
            }
        }
        if (s->len) {
            g_ptr_array_add(lines, g_string_free(s, FALSE));
        } else {
            g_string_free(s, TRUE);
        }
    }
    return lines;
}

/*
 * The example's reading as -j writes it: compared with the saved one,
 * whose reference report test-ptl-format checks, or written into the
 * directory PTL_REPORT_REGEN names.
 */
static void save_or_compare(const ptl_data *d, double seconds)
{
    const char *regen = g_getenv("PTL_REPORT_REGEN");
    const char *dir = g_getenv("PTL_REPORT_DATA");
    char *json = NULL, *path, *want = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);

    g_assert_cmpint(ptl_format_json(f, d, seconds), ==, 0);
    fclose(f);
    path = g_strdup_printf("%s/example.json", regen ? regen
                           : dir ? dir : "tests/unit/data/report");
    if (regen) {
        g_assert_true(g_file_set_contents(path, json, -1, NULL));
    } else {
        g_assert_true(g_file_get_contents(path, &want, NULL, NULL));
        g_assert_cmpstr(json, ==, want);
    }
    g_free(want);
    g_free(path);
    free(json);
}

static void test_example_report(void)
{
    const uint64_t mask = (1ull << 48) - 1;
    Image img = { .now = 5000000000ull };
    ptl_block *blk = NULL;
    ptl_reading *a, *b;
    ptl_data *d;
    ptl_error err;
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    GPtrArray *got;

    /* the first reading sits just below the wrap of the 48-bit counters */
    for (unsigned e = 0; e < ENTRIES; e++) {
        img.counters[e] = (mask - 1000 * e) & mask;
    }
    g_assert_cmpint(ptl_block_open(&img_ops, &img, &blk, &err), ==, PTL_OK);
    a = ptl_reading_new(ptl_block_layout(blk));
    b = ptl_reading_new(ptl_block_layout(blk));
    g_assert_cmpint(ptl_block_read(blk, a, &err), ==, PTL_OK);
    for (unsigned e = 0; e < ENTRIES; e++) {
        img.counters[e] = (img.counters[e] + delta[e]) & mask;
    }
    img.now += 1000000000ull;
    g_assert_cmpint(ptl_block_read(blk, b, &err), ==, PTL_OK);
    g_assert_cmpuint(b->t_ns - a->t_ns, ==, 1000000000ull);

    ptl_reading_diff(ptl_block_layout(blk), a, b, b);
    d = ptl_data_decode(ptl_block_layout(blk), b);
    g_assert_nonnull(d);
    f = open_memstream(&text, &len);
    g_assert_cmpint(ptl_format_text(f, d, 1.0), ==, 0);
    fclose(f);

    /* the reading as -j saves it (tests/unit/data/report/example.json) */
    save_or_compare(d, 1.0);

    got = tokens_by_line(text);
    for (guint i = 0; i < MAX(got->len, G_N_ELEMENTS(example)); i++) {
        const char *g = i < got->len ? g_ptr_array_index(got, i) : "(none)";
        const char *x = i < G_N_ELEMENTS(example) ? example[i] : "(none)";

        if (strcmp(g, x) != 0) {
            g_test_message("report:\n%s", text);
        }
        g_assert_cmpstr(g, ==, x);
    }
    g_ptr_array_unref(got);
    free(text);
    ptl_data_free(d);
    ptl_reading_free(a);
    ptl_reading_free(b);
    ptl_block_close(blk);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ptl/example/report", test_example_report);
    return g_test_run();
}
