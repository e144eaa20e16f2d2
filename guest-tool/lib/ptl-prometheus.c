/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Prometheus text exposition (format 0.0.4) of one or more blocks, and
 * the 64-bit extension of counters narrower than 64 bits that lets an
 * exporter serve them as counters that never wrap.
 *
 * Samples of all blocks are grouped under one HELP/TYPE pair per metric,
 * as the format requires of a metric family.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcie-telemetry.h"
#include "ptl-names.h"

#define PROM_PREFIX "ndk_pcie_telemetry_"

/* A label value escaped as the text format wants: \\, \" and \n. */
static void prom_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\') {
            fputs("\\\\", f);
        } else if (*s == '"') {
            fputs("\\\"", f);
        } else if (*s == '\n') {
            fputs("\\n", f);
        } else {
            fputc(*s, f);
        }
    }
}

typedef struct prom {
    FILE *f;
    const ptl_prom_block *blk;  /* the block whose samples are written */
} prom;

static void prom_family(prom *p, const char *name, const char *type,
                        const char *help)
{
    fprintf(p->f, "# HELP " PROM_PREFIX "%s %s\n", name, help);
    fprintf(p->f, "# TYPE " PROM_PREFIX "%s %s\n", name, type);
}

/* The name and the labels device and index, the brace left open. */
static void prom_labels(prom *p, const char *name)
{
    fprintf(p->f, PROM_PREFIX "%s{device=\"", name);
    prom_escape(p->f, p->blk->device ? p->blk->device : "");
    if (p->blk->index == UINT_MAX) {
        fprintf(p->f, "\",index=\"\"");
    } else {
        fprintf(p->f, "\",index=\"%u\"", p->blk->index);
    }
}

/* name{device,index[,endpoint][,extra]} value; extra is preformatted */
static void prom_sample(prom *p, const char *name, int endpoint,
                        const char *extra, uint64_t v)
{
    prom_labels(p, name);
    if (endpoint >= 0) {
        fprintf(p->f, ",endpoint=\"%d\"", endpoint);
    }
    fprintf(p->f, "%s%s} %llu\n", extra ? "," : "", extra ? extra : "",
            (unsigned long long)v);
}

/* bus="RQ" or bus="UP",port="0" */
static void bus_labels(const ptl_bus *bus, char *buf, size_t len)
{
    if (bus->kind == PTL_BUS_UP || bus->kind == PTL_BUS_DOWN) {
        snprintf(buf, len, "bus=\"%s\",port=\"%u\"", ptl_kind_name[bus->kind],
                 bus->port);
    } else {
        snprintf(buf, len, "bus=\"%s\"", ptl_kind_name[bus->kind]);
    }
}

enum { BF_WORDS, BF_STALL, BF_SOF, BF_MVB, BF_MVB_STALL, BF_ITEMS, BF_N };

static uint64_t bus_field(const ptl_bus *bus, unsigned k)
{
    switch (k) {
    case BF_WORDS:
        return bus->words;
    case BF_STALL:
        return bus->backpressure;
    case BF_SOF:
        return bus->transactions;
    case BF_MVB:
        return bus->mvb;
    case BF_MVB_STALL:
        return bus->mvb_backpressure;
    default:
        return bus->items;
    }
}

/* name{device,index} value */
static void prom_sample_double(prom *p, const char *name, double v)
{
    prom_labels(p, name);
    fprintf(p->f, "} %.9g\n", v);
}

/* The samples one block contributes to a family (k selects a field). */
typedef void (*prom_fill)(prom *p, const ptl_data *d, unsigned k);

typedef struct prom_blocks {
    const ptl_prom_block *b;
    unsigned n;
} prom_blocks;

/* HELP and TYPE once, then the samples of every block that was read. */
static void prom_emit(prom *p, const prom_blocks *bl, const char *name,
                      const char *type, const char *help, prom_fill fill,
                      unsigned k)
{
    prom_family(p, name, type, help);
    for (unsigned i = 0; i < bl->n; i++) {
        if (bl->b[i].data) {
            p->blk = &bl->b[i];
            fill(p, bl->b[i].data, k);
        }
    }
}

static void fill_cycles(prom *p, const ptl_data *d, unsigned k)
{
    for (unsigned e = 0; e < d->nendpoints; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];

        prom_sample(p, "cycles_total", ep->index, "clock=\"pcie\"",
                    ep->pcie_cycles);
        prom_sample(p, "cycles_total", ep->index, "clock=\"dma\"",
                    ep->dma_cycles);
    }
}

static const struct {
    const char *name, *help;
} bus_fam[BF_N] = {
    { "words_total", "Cycles in which the bus moved a word" },
    { "backpressure_total", "Cycles in which the bus was stalled by its "
      "consumer (SRC_RDY without DST_RDY)" },
    { "transactions_total", "Frames started (SOF) on the bus" },
    { "mvb_items_total", "MVB items transferred on the bus" },
    { "mvb_backpressure_total", "Cycles in which the bus's MVB was "
      "stalled" },
    { "items_total", "MFB items transferred on the bus" },
};

static void fill_bus(prom *p, const ptl_data *d, unsigned k)
{
    char lab[64];

    for (unsigned e = 0; e < d->nendpoints; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];

        for (unsigned b = 0; b < ep->nbuses; b++) {
            bus_labels(&ep->buses[b], lab, sizeof(lab));
            prom_sample(p, bus_fam[k].name, ep->index, lab,
                        bus_field(&ep->buses[b], k));
        }
    }
}

static void fill_regions(prom *p, const ptl_data *d, unsigned k)
{
    char bl[64], lab[96];

    for (unsigned e = 0; e < d->nendpoints; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];

        for (unsigned b = 0; b < ep->nbuses; b++) {
            const ptl_bus *bus = &ep->buses[b];

            bus_labels(bus, bl, sizeof(bl));
            for (unsigned r = 0; r < bus->nregions; r++) {
                snprintf(lab, sizeof(lab), "%s,region=\"%u\"", bl, r);
                prom_sample(p, "region_cycles_total", ep->index, lab,
                            bus->regions[r]);
            }
        }
    }
}

static void fill_brakes(prom *p, const ptl_data *d, unsigned k)
{
    char lab[64];

    for (unsigned e = 0; e < d->nendpoints; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];

        for (unsigned r = 0; r < ep->nbrakes; r++) {
            if (r < PTL_NAMED_REASONS) {
                snprintf(lab, sizeof(lab), "reason=\"%s\"",
                         ptl_reason_slug[r]);
            } else {
                snprintf(lab, sizeof(lab), "reason=\"%u\"", r);
            }
            prom_sample(p, "brake_cycles_total", ep->index, lab,
                        ep->brakes[r]);
        }
    }
}

static void fill_hists(prom *p, const ptl_data *d, unsigned k)
{
    char lab[64];

    for (unsigned e = 0; e < d->nendpoints; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];

        for (unsigned h = 0; h < ep->nhists; h++) {
            for (unsigned band = 0; band < ep->nbands; band++) {
                if (h < 2) {
                    snprintf(lab, sizeof(lab), "hist=\"%s\",band=\"%u\"",
                             h ? "stfifo" : "tags", band);
                } else {
                    snprintf(lab, sizeof(lab), "hist=\"%u\",band=\"%u\"", h,
                             band);
                }
                prom_sample(p, "hist_cycles_total", ep->index, lab,
                            ep->hists[h * ep->nbands + band]);
            }
        }
    }
}

static const struct {
    const char *name, *help;
} gauge_fam[] = {
    { "link_up", "PCIe link up (1) or down (0)" },
    { "mps_bytes", "Max payload size in bytes" },
    { "mrrs_bytes", "Max read request size in bytes" },
    { "rcb_bytes", "Read completion boundary in bytes" },
    { "ext_tag", "Extended (8-bit) tags enabled" },
    { "tag_10b", "10-bit tags enabled" },
    { "tags_free", "Free PTC tags now" },
    { "tags_free_min", "Lowest free PTC tags since the last reset of the "
      "lowest values" },
    { "stfifo_free", "Free PTC storage FIFO words now" },
    { "stfifo_free_min", "Lowest free PTC storage FIFO words since the last "
      "reset of the lowest values" },
};
#define GAUGES (sizeof(gauge_fam) / sizeof(gauge_fam[0]))

static void fill_gauge(prom *p, const ptl_data *d, unsigned k)
{
    for (unsigned e = 0; e < d->nendpoints; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];
        const uint64_t v[GAUGES] = {
            ep->link_up, ep->mps, ep->mrrs, ep->rcb, ep->ext_tag,
            ep->tag_10b, ep->tags_free, ep->tags_free_min, ep->stfifo_free,
            ep->stfifo_free_min,
        };

        prom_sample(p, gauge_fam[k].name, ep->index, NULL, v[k]);
    }
}

static const struct {
    const char *name, *help;
} block_fam[] = {
    { "item_bytes", "Bytes of one MFB item" },
    { "lost_deltas", "A delta was lost since the flags were last cleared: "
      "the counters are not exact" },
    { "readout_overrun", "A read-out overrun happened since the flags were "
      "last cleared: the counters are not exact" },
};

/* block-wide: no endpoint label */
static void fill_block(prom *p, const ptl_data *d, unsigned k)
{
    const uint64_t v[] = {
        d->config.item_bytes, d->lost_deltas, d->readout_overrun,
    };

    prom_sample(p, block_fam[k].name, -1, NULL, v[k]);
}

int ptl_format_prometheus_blocks(FILE *f, const ptl_prom_block *blocks,
                                 unsigned n, bool exporter)
{
    prom_blocks bl = { .b = blocks, .n = n };
    prom p = { .f = f };

    prom_emit(&p, &bl, "cycles_total", "counter",
              "Elapsed cycles of the probe's clock", fill_cycles, 0);
    for (unsigned k = 0; k < BF_N; k++) {
        prom_emit(&p, &bl, bus_fam[k].name, "counter", bus_fam[k].help,
                  fill_bus, k);
    }
    prom_emit(&p, &bl, "region_cycles_total", "counter",
              "Cycles in which a region of the bus carried data",
              fill_regions, 0);
    prom_emit(&p, &bl, "brake_cycles_total", "counter",
              "Cycles in which a BRAKE reason stopped the PCIe transfer",
              fill_brakes, 0);
    prom_emit(&p, &bl, "hist_cycles_total", "counter",
              "PCIe cycles spent in a band of free PTC tags or storage FIFO "
              "words (band 0 none free ... highest band plenty)",
              fill_hists, 0);
    for (unsigned g = 0; g < GAUGES; g++) {
        prom_emit(&p, &bl, gauge_fam[g].name, "gauge", gauge_fam[g].help,
                  fill_gauge, g);
    }
    for (unsigned k = 0; k < sizeof(block_fam) / sizeof(block_fam[0]); k++) {
        prom_emit(&p, &bl, block_fam[k].name, "gauge", block_fam[k].help,
                  fill_block, k);
    }
    if (exporter) {
        prom_family(&p, "up", "gauge", "The block was read in this scrape "
                    "(0: its card is gone or cannot be read)");
        for (unsigned i = 0; i < n; i++) {
            p.blk = &blocks[i];
            prom_sample(&p, "up", -1, NULL, blocks[i].data != NULL);
        }
        prom_family(&p, "scrape_duration_seconds", "gauge",
                    "Time the block's snapshot and read-out took in this "
                    "scrape, under the card's lock");
        for (unsigned i = 0; i < n; i++) {
            p.blk = &blocks[i];
            prom_sample_double(&p, "scrape_duration_seconds",
                               blocks[i].scrape_seconds);
        }
    }
    if (fflush(f) != 0 || ferror(f)) {
        return -1;
    }
    return 0;
}

int ptl_format_prometheus(FILE *f, const ptl_data *d, const char *device,
                          unsigned index)
{
    ptl_prom_block b = { .device = device, .index = index, .data = d };

    return ptl_format_prometheus_blocks(f, &b, 1, false);
}

/* ------------------------------------------------- 64-bit extension */

struct ptl_counter_ext {
    ptl_layout lay;
    unsigned n;                 /* counters of the existing endpoints */
    uint64_t mask;              /* 2^cnt_width - 1 */
    bool have;                  /* raw and ext hold a reading */
    uint64_t t_ns;
    uint64_t *raw, *ext;        /* [n] */
    double *rate;               /* [2 x endpoints] cycles per ns, or < 0 */
    uint64_t span_ns;           /* of the last continued update, or 0 */
};

ptl_counter_ext *ptl_counter_ext_new(const ptl_layout *lay)
{
    ptl_counter_ext *x = calloc(1, sizeof(*x));
    unsigned n = lay->endpoints * lay->per_endpoint;

    if (!x) {
        return NULL;
    }
    x->lay = *lay;
    x->n = n < lay->entries ? n : lay->entries;
    x->mask = lay->cnt_width >= 64 ? UINT64_MAX
                                   : (UINT64_C(1) << lay->cnt_width) - 1;
    x->raw = calloc(x->n + 1, sizeof(uint64_t));
    x->ext = calloc(x->n + 1, sizeof(uint64_t));
    x->rate = calloc(2 * lay->endpoints + 1, sizeof(double));
    if (!x->raw || !x->ext || !x->rate) {
        ptl_counter_ext_free(x);
        return NULL;
    }
    ptl_counter_ext_forget(x);
    return x;
}

void ptl_counter_ext_free(ptl_counter_ext *x)
{
    if (x) {
        free(x->raw);
        free(x->ext);
        free(x->rate);
        free(x);
    }
}

void ptl_counter_ext_forget(ptl_counter_ext *x)
{
    x->have = false;
    x->span_ns = 0;
    for (unsigned i = 0; i < 2 * x->lay.endpoints; i++) {
        x->rate[i] = -1;
    }
}

/* Entry of endpoint e's cycle counter of clock c (0 PCIe, 1 DMA). */
static unsigned cycles_entry(const ptl_layout *l, unsigned e, unsigned c)
{
    return e * l->per_endpoint + (c ? l->pcie_channels : 0);
}

/*
 * Whether the cycle counters moved as their clocks did since the last
 * reading. A clear of the counters brings them back near 0, which taken
 * as a wrap-around would be a jump by almost 2^CNT_WIDTH; a real
 * wrap-around advances them by what their rate predicts. The slack of
 * twice the prediction plus 1 ms of cycles covers the jitter of the
 * snapshot timestamps.
 */
static bool cycles_consistent(const ptl_counter_ext *x, const ptl_reading *r,
                              uint64_t dt)
{
    for (unsigned e = 0; e < x->lay.endpoints; e++) {
        for (unsigned c = 0; c < 2; c++) {
            unsigned i = cycles_entry(&x->lay, e, c);
            uint64_t d = (r->counters[i] - x->raw[i]) & x->mask;
            double rate = x->rate[2 * e + c];

            if (i >= x->n) {
                continue;
            }
            if (rate < 0) {
                /* no rate yet: only a 64-bit counter cannot wrap */
                if (x->mask == UINT64_MAX && r->counters[i] < x->raw[i]) {
                    return false;
                }
                continue;
            }
            if ((double)d > 2 * rate * (double)dt + rate * 1e6 + 1024) {
                return false;
            }
        }
    }
    return true;
}

ptl_ext_result ptl_counter_ext_update(ptl_counter_ext *x, ptl_reading *r)
{
    uint64_t dt;

    if (x->have && r->t_ns >= x->t_ns) {
        dt = r->t_ns - x->t_ns;
    } else {
        dt = 0;
    }
    if (!x->have || !cycles_consistent(x, r, dt)) {
        ptl_ext_result res = x->have ? PTL_EXT_RESTARTED : PTL_EXT_FIRST;

        ptl_counter_ext_forget(x);
        for (unsigned i = 0; i < x->n; i++) {
            x->raw[i] = x->ext[i] = r->counters[i] & x->mask;
        }
        x->have = true;
        x->t_ns = r->t_ns;
        return res;
    }
    /* rates from spans of at least 1 ms, where timestamp jitter is small */
    if (dt >= 1000000) {
        for (unsigned e = 0; e < x->lay.endpoints; e++) {
            for (unsigned c = 0; c < 2; c++) {
                unsigned i = cycles_entry(&x->lay, e, c);

                if (i < x->n) {
                    x->rate[2 * e + c] =
                        (double)((r->counters[i] - x->raw[i]) & x->mask) /
                        (double)dt;
                }
            }
        }
    }
    for (unsigned i = 0; i < x->n; i++) {
        x->ext[i] += (r->counters[i] - x->raw[i]) & x->mask;
        x->raw[i] = r->counters[i] & x->mask;
        r->counters[i] = x->ext[i];
    }
    x->t_ns = r->t_ns;
    x->span_ns = dt;
    return PTL_EXT_CONTINUED;
}

double ptl_counter_ext_limit(const ptl_counter_ext *x, double *span_s)
{
    double pcie = 0, dma = 0;

    *span_s = (double)x->span_ns / 1e9;
    for (unsigned e = 0; e < x->lay.endpoints; e++) {
        pcie = x->rate[2 * e] > pcie ? x->rate[2 * e] : pcie;
        dma = x->rate[2 * e + 1] > dma ? x->rate[2 * e + 1] : dma;
    }
    if (pcie <= 0 && dma <= 0) {
        return INFINITY;
    }
    return ptl_counter_ext_max_seconds(&x->lay, pcie * 1e9, dma * 1e9);
}

/*
 * Per cycle a counter of a bus with R regions of B bytes advances by at
 * most R (SOFs, MVB items) or R x B / item_bytes (MFB items), every other
 * counter by at most 1.
 */
static double bus_max_per_cycle(unsigned regions, unsigned bytes,
                                unsigned item_bytes)
{
    double k = regions ? regions : 1;

    if (item_bytes && (double)regions * bytes / item_bytes > k) {
        k = (double)regions * bytes / item_bytes;
    }
    return k;
}

double ptl_counter_ext_max_seconds(const ptl_layout *lay, double pcie_hz,
                                   double dma_hz)
{
    double span = lay->cnt_width >= 64 ? 18446744073709551615.0
                  : (double)((UINT64_C(1) << lay->cnt_width) - 1);
    unsigned ib = lay->item_bytes;
    double kp = bus_max_per_cycle(lay->rq_regions, lay->rq_bytes, ib);
    double kd = 1, best = INFINITY;

    if (bus_max_per_cycle(lay->rc_regions, lay->rc_bytes, ib) > kp) {
        kp = bus_max_per_cycle(lay->rc_regions, lay->rc_bytes, ib);
    }
    if (lay->dma_ports) {
        kd = bus_max_per_cycle(lay->up_regions, lay->up_bytes, ib);
        if (bus_max_per_cycle(lay->down_regions, lay->down_bytes, ib) > kd) {
            kd = bus_max_per_cycle(lay->down_regions, lay->down_bytes, ib);
        }
    }
    if (pcie_hz > 0 && span / (kp * pcie_hz) < best) {
        best = span / (kp * pcie_hz);
    }
    if (dma_hz > 0 && span / (kd * dma_hz) < best) {
        best = span / (kd * dma_hz);
    }
    return best;
}
