/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host CPU time of libpcie-telemetry per reading, for the default card and
 * a 16-endpoint x 4-port card. Not a test: it prints figures.
 *
 * Two sources answer the library's register accesses:
 *  - a register image in memory: identity and configuration registers of
 *    the card, STATUS never BUSY, counters that grow at every SNAPSHOT. An
 *    access costs a few nanoseconds, so this is the library's own cost:
 *    ptl_block_read, ptl_reading_diff, ptl_data_decode and each format
 *    written to /dev/null;
 *  - the QEMU-free model (PtmCore through the unit tests' accessors, 100 ns
 *    of virtual time per access), which adds the model's register emulation
 *    and its catch-up to each access, for comparison with the image.
 *
 * usage: ptl-bench [readings]   (default 20000 on the default card, a tenth
 *                                of it on the large card)
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcie-telemetry.h"
#include "ptm-core.h"
#include "test-ptl-support.h"

/* live per-endpoint registers: link up, MPS 256, MRRS 512, ext tag, RCB 128 */
#define IMG_PCIE_STATUS  0x351u
#define IMG_TAGS         (200u | 20u << 16)     /* now | lowest << 16 */
#define IMG_STFIFO       (900u | 700u << 16)

typedef struct Image {
    uint32_t regs[PTM_CNT_BASE / 4];
    unsigned entries;
    uint64_t mask;
    uint64_t gen;               /* SNAPSHOTs so far */
    /* accesses since the last reset */
    uint64_t writes, status_reads, loads64, reads32;
} Image;

static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Counter e after g snapshots: grows by a different step per counter, so
 * that differences and decoded figures are not all alike. Computed on the
 * fly rather than stored, so that a SNAPSHOT costs the image nothing.
 */
static uint64_t img_counter(const Image *im, unsigned e)
{
    return ((uint64_t)(e + 1) * 0x10001u * (im->gen + 1)) & im->mask;
}

static uint32_t img_read32(void *opaque, uint32_t off)
{
    Image *im = opaque;

    if (off == PTM_REG_STATUS) {
        im->status_reads++;
        return 0;
    }
    im->reads32++;
    if (off >= PTM_CNT_BASE) {
        uint64_t v = img_counter(im, (off - PTM_CNT_BASE) / 8);

        return off & 4 ? v >> 32 : (uint32_t)v;
    }
    return im->regs[off / 4];
}

static uint64_t img_read64(void *opaque, uint32_t off)
{
    Image *im = opaque;

    im->loads64++;
    return img_counter(im, (off - PTM_CNT_BASE) / 8);
}

static void img_write32(void *opaque, uint32_t off, uint32_t val)
{
    Image *im = opaque;

    im->writes++;
    if (off == PTM_REG_COMMAND && (val & PTM_CMD_SNAPSHOT)) {
        im->gen++;
    }
}

static const ptl_regs_ops img_ops = {
    .read32 = img_read32,
    .write32 = img_write32,
    .read64 = img_read64,
    /* now_ns NULL: CLOCK_MONOTONIC, as on a mapped BAR */
};

/*
 * The configuration registers are taken from the model of the same card,
 * whose values the QTest checks against the firmware's; everything else
 * of the image is fixed here.
 */
static void img_init(Image *im, const PtmConfig *cfg)
{
    PtmCore *core = ptm_core_new(cfg);

    memset(im, 0, sizeof(*im));
    ptm_core_power_on(core, 0);
    for (uint32_t off = 0; off <= PTM_REG_CFG_WIDTH_DMA; off += 4) {
        im->regs[off / 4] = (uint32_t)ptm_core_read(core, 0, off, 4);
    }
    im->regs[PTM_REG_STATUS / 4] = 0;
    im->regs[PTM_REG_COMMAND / 4] = 0;
    im->regs[PTM_REG_READ_SEL / 4] = 0;
    for (unsigned e = 0; e < cfg->pcie_endpoints; e++) {
        im->regs[(PTM_REG_PCIE_STATUS + 4 * e) / 4] = IMG_PCIE_STATUS;
        im->regs[(PTM_REG_PCIE_TAGS + 4 * e) / 4] = IMG_TAGS;
        im->regs[(PTM_REG_PCIE_STFIFO + 4 * e) / 4] = IMG_STFIFO;
    }
    im->entries = im->regs[PTM_REG_CFG_LAYOUT / 4] & 0xFFFF;
    im->mask = (1ull << cfg->cnt_width) - 1;
    ptm_core_free(core);
}

static void img_reset_counts(Image *im)
{
    im->writes = im->status_reads = im->loads64 = im->reads32 = 0;
}

static ptl_block *open_or_die(const ptl_regs_ops *ops, void *opaque)
{
    ptl_block *b;
    ptl_error err;

    if (ptl_block_open(ops, opaque, &b, &err) != PTL_OK) {
        g_error("ptl_block_open: %s", err.msg);
    }
    return b;
}

static void read_or_die(ptl_block *b, ptl_reading *r)
{
    ptl_error err;

    if (ptl_block_read(b, r, &err) != PTL_OK) {
        g_error("ptl_block_read: %s", err.msg);
    }
}

/* CPU microseconds per call of the statement, over n calls */
#define TIME_US(n, stmt) ({                                     \
        double t0_ = cpu_now();                                 \
        for (unsigned i_ = 0; i_ < (n); i_++) {                 \
            stmt;                                               \
        }                                                       \
        (cpu_now() - t0_) * 1e6 / (n);                          \
    })

static void bench_card(const char *name, const PtmConfig *cfg, unsigned n)
{
    Image im;
    ptl_block *b;
    const ptl_layout *lay;
    ptl_reading *r[2], *diff;
    ptl_data *d;
    FILE *null = fopen("/dev/null", "w");
    double t_read, t_diff, t_decode, t_text, t_json, t_csv, t_prom, t_model;
    double t_ext, t_expo;
    ptl_counter_ext *ext;
    ptl_prom_block pb1 = { .device = "0000:01:00.0", .index = 0 };
    PtlBench *pb;
    unsigned k = 0;

    if (!null) {
        g_error("cannot open /dev/null");
    }
    img_init(&im, cfg);
    b = open_or_die(&img_ops, &im);
    lay = ptl_block_layout(b);
    r[0] = ptl_reading_new(lay);
    r[1] = ptl_reading_new(lay);
    diff = ptl_reading_new(lay);

    /* (a) the library alone */
    read_or_die(b, r[0]);
    img_reset_counts(&im);
    t_read = TIME_US(n, read_or_die(b, r[++k & 1]));
    printf("%s: %u endpoints x %u DMA ports, %u of %u entries read, "
           "%u readings\n", name, lay->endpoints, lay->dma_ports,
           lay->endpoints * lay->per_endpoint, lay->entries, n);
    printf("  accesses per reading: %.0f writes, %.0f STATUS reads, "
           "%.0f 64-bit loads, %.0f other 32-bit reads = %.0f\n",
           (double)im.writes / n, (double)im.status_reads / n,
           (double)im.loads64 / n, (double)im.reads32 / n,
           (double)(im.writes + im.status_reads + im.loads64 + im.reads32) / n);
    t_diff = TIME_US(n, ptl_reading_diff(lay, r[k & 1], r[(k + 1) & 1], diff));
    ptl_reading_diff(lay, r[(k + 1) & 1], r[k & 1], diff);
    t_decode = TIME_US(n, ptl_data_free(ptl_data_decode(lay, diff)));
    d = ptl_data_decode(lay, diff);
    /* each report is flushed, as the tool does after every interval */
    t_text = TIME_US(n, (ptl_format_text(null, d, 1.0), fflush(null)));
    t_json = TIME_US(n, (ptl_format_json(null, d, 1.0), fflush(null)));
    ptl_format_csv_header(null);
    t_csv = TIME_US(n, (ptl_format_csv(null, d, 1.0, 1.7e9, "0000:01:00.0", 0),
                        fflush(null)));
    ptl_data_free(d);
    /* Prometheus exposes the raw totals of one reading */
    d = ptl_data_decode(lay, r[k & 1]);
    t_prom = TIME_US(n, (ptl_format_prometheus(null, d, "0000:01:00.0", 0),
                         fflush(null)));
    ptl_data_free(d);
    /*
     * An exporter's scrape: the reading, the 64-bit extension, decoding
     * and the exposition with up and scrape duration (the image's counters
     * grow by less than 2^CNT_WIDTH per reading, so every update extends)
     */
    ext = ptl_counter_ext_new(lay);
    ptl_counter_ext_update(ext, r[k & 1]);
    t_ext = TIME_US(n, (read_or_die(b, r[++k & 1]),
                        ptl_counter_ext_update(ext, r[k & 1])));
    t_ext -= t_read;
    t_expo = TIME_US(n, (pb1.data = d = ptl_data_decode(lay, r[k & 1]),
                         ptl_format_prometheus_blocks(null, &pb1, 1, true),
                         fflush(null), ptl_data_free(d)));
    ptl_counter_ext_free(ext);
    printf("  register image, us per reading: ptl_block_read %.2f, "
           "ptl_reading_diff %.2f, ptl_data_decode %.2f\n",
           t_read, t_diff, t_decode);
    printf("  formats, us per report: text %.1f, JSON %.1f, CSV %.1f, "
           "Prometheus %.1f\n", t_text, t_json, t_csv, t_prom);
    printf("  one text report of an interval (read, diff, decode, text): "
           "%.1f us\n", t_read + t_diff + t_decode + t_text);
    printf("  one exporter scrape (read %.2f, 64-bit extension %.2f, "
           "decode and exposition %.1f): %.1f us\n", t_read, t_ext, t_expo,
           t_read + t_ext + t_expo);

    /* (b) the same reading against the model */
    pb = ptl_bench_new(cfg, NULL);
    ptl_block_close(b);
    b = ptl_bench_open(pb);
    read_or_die(b, r[0]);
    ptl_bench_reset_counts(pb);
    t_model = TIME_US(n, read_or_die(b, r[++k & 1]));
    printf("  model (PtmCore, idle card, %" G_GUINT64_FORMAT " ns per "
           "access): ptl_block_read %.2f us, %.1f accesses per reading "
           "(%.1f STATUS reads), %.0f us of virtual time\n",
           pb->access_ns, t_model, (double)pb->accesses / n,
           (double)pb->status_reads / n, (double)pb->accesses / n *
           pb->access_ns / 1e3);

    ptl_block_close(b);
    ptl_bench_free(pb);
    ptl_reading_free(r[0]);
    ptl_reading_free(r[1]);
    ptl_reading_free(diff);
    fclose(null);
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000;
    PtmConfig cfg;

    if (n < 10) {
        fprintf(stderr, "usage: ptl-bench [readings >= 10]\n");
        return 2;
    }
    ptm_config_default(&cfg);
    bench_card("default card", &cfg, n);
    cfg.pcie_endpoints = 16;
    cfg.dma_ports = 4;
    bench_card("16 x 4 card", &cfg, n / 10);
    return 0;
}
