/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Output formats: the reference reader's text report and JSON, CSV rows
 * and the Prometheus text exposition.
 *
 * The text report follows the example of the reference tool: labels
 * left-aligned, numbers right-aligned, one space between table columns,
 * columns as wide as the example's dashed lines and wider when a cell
 * needs it. With totals (seconds <= 0) the Gbps and Mpps columns and the
 * clock line are left out, as the reference does with -t 0.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pcie-telemetry.h"

/* The settings of an endpoint: labels in one column, values after it. */
#define HDR "%-25s "

/* ------------------------------------------------------------ strings */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool oom;
} sbuf;

static void sb_vadd(sbuf *s, const char *fmt, va_list ap)
{
    va_list aq;
    int n;

    if (s->oom) {
        return;
    }
    va_copy(aq, ap);
    n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (n < 0) {
        s->oom = true;
        return;
    }
    if (s->len + n + 1 > s->cap) {
        size_t cap = (s->len + n + 1) * 2;
        char *p = realloc(s->p, cap);

        if (!p) {
            s->oom = true;
            return;
        }
        s->p = p;
        s->cap = cap;
    }
    vsnprintf(s->p + s->len, s->cap - s->len, fmt, ap);
    s->len += n;
}

static void __attribute__((format(printf, 2, 3)))
sb_add(sbuf *s, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    sb_vadd(s, fmt, ap);
    va_end(ap);
}

static char * __attribute__((format(printf, 1, 2)))
str_printf(const char *fmt, ...)
{
    sbuf s = { 0 };
    va_list ap;

    va_start(ap, fmt);
    sb_vadd(&s, fmt, ap);
    va_end(ap);
    if (s.oom) {
        free(s.p);
        return NULL;
    }
    return s.p ? s.p : strdup("");
}

/* A number with printf format fmt, or "-" for NAN. */
static char *num(const char *fmt, double v)
{
    return isnan(v) ? strdup("-") : str_printf(fmt, v);
}

/* Write a line without its trailing blanks. */
static void put_line(FILE *f, sbuf *line)
{
    size_t n = line->oom ? 0 : line->len;

    while (n > 0 && line->p[n - 1] == ' ') {
        n--;
    }
    fwrite(line->p ? line->p : "", 1, n, f);
    fputc('\n', f);
    line->len = 0;
    line->oom = false;
}

static int finish(FILE *f, bool oom)
{
    if (fflush(f) != 0 || ferror(f)) {
        return -1;
    }
    return oom ? -1 : 0;
}

/* ------------------------------------------------------------- names */

static const char *const reason_name[] = {
    "no free PCIe tag", "PCIe tag not ready", "no room for completions",
    "no completion header entry", "MFB stalled towards DMA",
    "MVB stalled towards DMA",
};
static const char *const reason_slug[] = {
    "no_free_pcie_tag", "pcie_tag_not_ready", "no_room_for_completions",
    "no_completion_header_entry", "mfb_stalled_towards_dma",
    "mvb_stalled_towards_dma",
};
#define NAMED_REASONS 6
/* The reasons of the UP stream (0-3), of the DOWN stream (4-5). */
#define UP_REASONS    4

static const char *const band4_name[] = { "none", "<=1/8", "<=1/2", "rest" };

static const char *const kind_name[] = { "RQ", "RC", "UP", "DOWN" };

/* ------------------------------------------------------------- tables */

typedef struct table {
    unsigned ncols, nrows;
    const char **head;
    const unsigned *min_width;
    const bool *left;
    char **cell;                /* [nrows][ncols], NULL = empty */
    bool oom;
} table;

static bool table_init(table *t, unsigned ncols, unsigned nrows,
                       const char **head, const unsigned *min_width,
                       const bool *left)
{
    t->ncols = ncols;
    t->nrows = nrows;
    t->head = head;
    t->min_width = min_width;
    t->left = left;
    t->oom = false;
    t->cell = calloc((size_t)ncols * nrows + 1, sizeof(char *));
    return t->cell != NULL;
}

static void table_set(table *t, unsigned row, unsigned col, char *s)
{
    if (!s) {
        t->oom = true;
    }
    t->cell[row * t->ncols + col] = s;
}

static void table_row_out(FILE *f, const table *t, const unsigned *w,
                          const char *const *cells, sbuf *line)
{
    for (unsigned c = 0; c < t->ncols; c++) {
        const char *s = cells[c] ? cells[c] : "";

        sb_add(line, t->left[c] ? "%s%-*s" : "%s%*s", c ? " " : "",
               (int)w[c], s);
    }
    put_line(f, line);
}

static void table_print(FILE *f, table *t)
{
    unsigned *w = calloc(t->ncols, sizeof(unsigned));
    sbuf line = { 0 };

    if (!w) {
        t->oom = true;
        return;
    }
    for (unsigned c = 0; c < t->ncols; c++) {
        w[c] = t->min_width[c];
        if (strlen(t->head[c]) > w[c]) {
            w[c] = strlen(t->head[c]);
        }
        for (unsigned r = 0; r < t->nrows; r++) {
            const char *s = t->cell[r * t->ncols + c];

            if (s && strlen(s) > w[c]) {
                w[c] = strlen(s);
            }
        }
    }
    table_row_out(f, t, w, t->head, &line);
    for (unsigned c = 0; c < t->ncols; c++) {
        sb_add(&line, "%s", c ? " " : "");
        for (unsigned i = 0; i < w[c]; i++) {
            sb_add(&line, "-");
        }
    }
    put_line(f, &line);
    for (unsigned r = 0; r < t->nrows; r++) {
        table_row_out(f, t, w, (const char *const *)&t->cell[r * t->ncols],
                      &line);
    }
    t->oom |= line.oom;
    free(line.p);
    free(w);
}

static void table_free(table *t)
{
    if (!t->cell) {
        return;
    }
    for (unsigned i = 0; i < t->ncols * t->nrows; i++) {
        free(t->cell[i]);
    }
    free(t->cell);
    t->cell = NULL;
}

/* --------------------------------------------------------------- text */

enum {
    COL_BUS, COL_USED, COL_WORDS, COL_MFB, COL_MVB, COL_REGIONS, COL_GBPS,
    COL_MPPS, COL_RD, COL_AVG, NCOLS,
};

static bool text_buses(FILE *f, const ptl_data *d, const ptl_endpoint *ep,
                       double seconds)
{
    static const char *head_all[NCOLS] = {
        "Bus", "Used %", "Words %", "MFB stall %", "MVB stall %",
        "Used per region %", "Gbps", "Mpps", "RD %", "Avg B",
    };
    static const unsigned width_all[NCOLS] = {
        18, 6, 7, 11, 11, 19, 6, 6, 5, 5,
    };
    bool rates = seconds > 0;
    /* the columns shown: without rates Gbps and Mpps are left out */
    unsigned map[NCOLS], ncols = 0;
    const char *head[NCOLS];
    unsigned width[NCOLS];
    bool left[NCOLS] = { true };
    table t;
    bool ok;

    for (unsigned c = 0; c < NCOLS; c++) {
        if (!rates && (c == COL_GBPS || c == COL_MPPS)) {
            continue;
        }
        head[ncols] = head_all[c];
        width[ncols] = width_all[c];
        left[ncols] = c == COL_BUS;
        map[c] = ncols++;
    }
    if (!table_init(&t, ncols, ep->nbuses, head, width, left)) {
        return false;
    }
    for (unsigned b = 0; b < ep->nbuses; b++) {
        const ptl_bus *bus = &ep->buses[b];
        double *rp = calloc(bus->nregions + 1, sizeof(double));
        ptl_bus_figures fg;
        sbuf regs = { 0 };

        if (!rp) {
            t.oom = true;
            break;
        }
        ptl_bus_compute(ep, bus, d->config.item_bytes, seconds, &fg, rp);
        for (unsigned r = 0; r < bus->nregions; r++) {
            if (isnan(rp[r])) {
                sb_add(&regs, "%s-", r ? " " : "");
            } else {
                sb_add(&regs, "%s%.1f", r ? " " : "", rp[r]);
            }
        }
        free(rp);
        if (regs.oom) {
            t.oom = true;
        }
        table_set(&t, b, map[COL_BUS], strdup(bus->name));
        table_set(&t, b, map[COL_USED], num("%.2f", fg.used_pct));
        table_set(&t, b, map[COL_WORDS], num("%.2f", fg.words_pct));
        table_set(&t, b, map[COL_MFB], num("%.2f", fg.mfb_stall_pct));
        table_set(&t, b, map[COL_MVB], num("%.2f", fg.mvb_stall_pct));
        table_set(&t, b, map[COL_REGIONS],
                  regs.p ? regs.p : strdup("-"));
        if (rates) {
            table_set(&t, b, map[COL_GBPS], num("%.2f", fg.gbps));
            table_set(&t, b, map[COL_MPPS], num("%.3f", fg.mpps));
        }
        table_set(&t, b, map[COL_RD], num("%.2f", fg.rd_pct));
        table_set(&t, b, map[COL_AVG], num("%.0f", fg.avg_bytes));
    }
    if (!t.oom) {
        table_print(f, &t);
    }
    ok = !t.oom;
    table_free(&t);
    return ok;
}

/* One column of the BRAKE block: labels and "x.xx %" values. */
typedef struct brake_col {
    const char *head;
    unsigned n, cap;
    char **label;
    char **value;
    unsigned lw, vw;
} brake_col;

/* false when out of memory */
static bool brake_add(brake_col *c, char *label, double v)
{
    if (!label) {
        return false;
    }
    if (c->n == c->cap) {
        unsigned cap = c->cap ? 2 * c->cap : 8;
        char **l = realloc(c->label, cap * sizeof(char *));
        char **vv;

        if (l) {
            c->label = l;
        }
        vv = l ? realloc(c->value, cap * sizeof(char *)) : NULL;
        if (!vv) {
            free(label);
            return false;
        }
        c->value = vv;
        c->cap = cap;
    }
    c->label[c->n] = label;
    c->value[c->n] = isnan(v) ? strdup("-") : str_printf("%.2f %%", v);
    if (strlen(label) > c->lw) {
        c->lw = strlen(label);
    }
    if (c->value[c->n] && strlen(c->value[c->n]) > c->vw) {
        c->vw = strlen(c->value[c->n]);
    }
    c->n++;
    return c->value[c->n - 1] != NULL;
}

static bool text_brakes(FILE *f, const ptl_endpoint *ep)
{
    double cyc = (double)ep->pcie_cycles;
    double not_ready = cyc > 0 ? ep->buses[0].backpressure / cyc * 100 : NAN;
    brake_col col[3] = {
        { .head = "UP stream" }, { .head = "DOWN stream" },
        { .head = "other" },
    };
    unsigned rows = 0, ncol = 0;
    sbuf line = { 0 };
    bool ok = true;

    for (unsigned k = 0; k < ep->nbrakes && ok; k++) {
        double v = cyc > 0 ? ep->brakes[k] / cyc * 100 : NAN;
        unsigned c = k < UP_REASONS ? 0 : k < NAMED_REASONS ? 1 : 2;
        char *label = k < NAMED_REASONS ? strdup(reason_name[k])
                                        : str_printf("reason %u", k);

        ok = brake_add(&col[c], label, v);
        if (ok && (k + 1 == UP_REASONS ||
                   (k + 1 == ep->nbrakes && k < UP_REASONS))) {
            /* the RQ stall repeated among the UP reasons */
            ok = brake_add(&col[0], strdup("PCIe endpoint not ready"),
                           not_ready);
        }
    }
    if (ep->nbrakes == 0) {
        ok = brake_add(&col[0], strdup("PCIe endpoint not ready"), not_ready);
    }
    for (unsigned c = 0; c < 3; c++) {
        if (col[c].n) {
            ncol = c + 1;
        }
        if (col[c].n > rows) {
            rows = col[c].n;
        }
        /* the head sits above the labels and values */
        if (strlen(col[c].head) > col[c].lw + 1 + col[c].vw) {
            col[c].lw = strlen(col[c].head) - 1 - col[c].vw;
        }
    }
    if (ok) {
        fprintf(f, "Why the PCIe transfer stopped (share of PCIe clock "
                "cycles)\n");
        for (unsigned c = 0; c < ncol; c++) {
            sb_add(&line, "%s%-*s", c ? "   " : "",
                   (int)(col[c].lw + 1 + col[c].vw),
                   col[c].n ? col[c].head : "");
        }
        put_line(f, &line);
        for (unsigned r = 0; r < rows; r++) {
            for (unsigned c = 0; c < ncol; c++) {
                const char *l = r < col[c].n ? col[c].label[r] : "";
                const char *v = r < col[c].n ? col[c].value[r] : "";

                sb_add(&line, "%s%-*s %*s", c ? "   " : "", (int)col[c].lw,
                       l, (int)col[c].vw, v);
            }
            put_line(f, &line);
        }
        ok = !line.oom;
    }
    free(line.p);
    for (unsigned c = 0; c < 3; c++) {
        for (unsigned r = 0; r < col[c].n; r++) {
            free(col[c].label[r]);
            free(col[c].value[r]);
        }
        free(col[c].label);
        free(col[c].value);
    }
    return ok;
}

static bool text_hists(FILE *f, const ptl_data *d, const ptl_endpoint *ep)
{
    unsigned ncols = 2 + ep->nbands;
    const char **head = calloc(ncols, sizeof(char *));
    unsigned *width = calloc(ncols, sizeof(unsigned));
    bool *left = calloc(ncols, sizeof(bool));
    char **band_head = calloc(ep->nbands + 1, sizeof(char *));
    double cyc = (double)ep->pcie_cycles;
    bool ok = false;
    table t = { 0 };

    if (!head || !width || !left || !band_head) {
        goto out;
    }
    head[0] = "Time spent low";
    width[0] = 22;
    left[0] = true;
    head[1] = "of";
    width[1] = 4;
    for (unsigned k = 0; k < ep->nbands; k++) {
        static const unsigned w4[] = { 6, 7, 7, 6 };

        band_head[k] = ep->nbands == 4 ? strdup(band4_name[k])
                                       : str_printf("band %u", k);
        if (!band_head[k]) {
            goto out;
        }
        head[2 + k] = band_head[k];
        width[2 + k] = ep->nbands == 4 ? w4[k] : 7;
    }
    if (!table_init(&t, ncols, ep->nhists, head, width, left)) {
        goto out;
    }
    for (unsigned h = 0; h < ep->nhists; h++) {
        if (h == 0) {
            table_set(&t, h, 0, strdup("PCIe tags"));
            table_set(&t, h, 1, str_printf("%u", d->config.tag_capacity));
        } else if (h == 1) {
            table_set(&t, h, 0, strdup("PTC storage FIFO words"));
            table_set(&t, h, 1, str_printf("%u", d->config.stfifo_capacity));
        } else {
            table_set(&t, h, 0, str_printf("histogram %u", h));
            table_set(&t, h, 1, strdup("-"));
        }
        for (unsigned k = 0; k < ep->nbands; k++) {
            double v = (double)ep->hists[h * ep->nbands + k];

            table_set(&t, h, 2 + k, num("%.2f", cyc > 0 ? v / cyc * 100
                                                        : NAN));
        }
    }
    if (!t.oom) {
        table_print(f, &t);
    }
    ok = !t.oom;
out:
    table_free(&t);
    if (band_head) {
        for (unsigned k = 0; k < ep->nbands; k++) {
            free(band_head[k]);
        }
    }
    free(band_head);
    free(head);
    free(width);
    free(left);
    return ok;
}

static void mhz(FILE *f, uint64_t cycles, double seconds)
{
    if (cycles) {
        fprintf(f, "%.1f MHz", cycles / seconds / 1e6);
    } else {
        fprintf(f, "- MHz");
    }
}

int ptl_format_text(FILE *f, const ptl_data *d, double seconds)
{
    const ptl_layout *l = &d->config;
    bool ok = true;
    int n;

    n = fprintf(f, "PCIe telemetry - %u endpoint(s), %u DMA port(s) per "
                "endpoint\n", d->nendpoints, l->dma_ports);
    for (int i = 0; i < n - 1; i++) {
        fputc('=', f);
    }
    fputc('\n', f);
    if (d->lost_deltas) {
        fprintf(f, "  !! LOST DELTAS - the counters are not exact\n");
    }
    if (d->readout_overrun) {
        fprintf(f, "  !! READ-OUT OVERRUN - the counters are not exact\n");
    }
    if (seconds > 0) {
        fprintf(f, "Measured over %.2f s\n", seconds);
    } else {
        fprintf(f, "Totals since the last clear\n");
    }
    for (unsigned e = 0; e < d->nendpoints && ok; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];

        fprintf(f, "\nPCIe endpoint %u\n", ep->index);
        fprintf(f, "------------------------------------------------------"
                "------\n");
        fprintf(f, "Link %s\n", ep->link_up ? "up" : "down");
        fprintf(f, HDR "%u B\n", "Max payload size (MPS)", ep->mps);
        fprintf(f, HDR "%u B\n", "Max read request (MRRS)", ep->mrrs);
        fprintf(f, HDR "%s\n", "Extended tag (8-bit)",
                ep->ext_tag ? "on" : "off");
        fprintf(f, HDR "%s\n", "10-bit tag", ep->tag_10b ? "on" : "off");
        fprintf(f, HDR "%u B\n", "Read completion boundary", ep->rcb);
        fprintf(f, HDR "%u (lowest %u)\n", "PTC tags free", ep->tags_free,
                ep->tags_free_min);
        fprintf(f, HDR "%u words (lowest %u)\n", "PTC storage FIFO free",
                ep->stfifo_free, ep->stfifo_free_min);
        if (seconds > 0) {
            fprintf(f, "PCIe clock ");
            mhz(f, ep->pcie_cycles, seconds);
            fprintf(f, ", DMA clock ");
            mhz(f, ep->dma_cycles, seconds);
            fputc('\n', f);
        }
        fputc('\n', f);
        ok = text_buses(f, d, ep, seconds);
        fputc('\n', f);
        ok = ok && text_brakes(f, ep);
        if (ep->nhists && ep->nbands) {
            fputc('\n', f);
            ok = ok && text_hists(f, d, ep);
        }
    }
    return finish(f, !ok);
}

/* --------------------------------------------------------------- JSON */

/*
 * A writer that produces what Python's json.dumps(obj, indent=4) does:
 * items on their own lines, ", " never, ": " between key and value, empty
 * containers as [] and {}.
 */
typedef struct jw {
    FILE *f;
    unsigned depth;
    bool first[16];
} jw;

static void jw_indent(jw *w)
{
    for (unsigned i = 0; i < w->depth * 4; i++) {
        fputc(' ', w->f);
    }
}

static void jw_item(jw *w)
{
    fputs(w->first[w->depth] ? "\n" : ",\n", w->f);
    w->first[w->depth] = false;
    jw_indent(w);
}

static void jw_open(jw *w, char c)
{
    fputc(c, w->f);
    w->depth++;
    w->first[w->depth] = true;
}

static void jw_close(jw *w, char c)
{
    bool empty = w->first[w->depth];

    w->depth--;
    if (!empty) {
        fputc('\n', w->f);
        jw_indent(w);
    }
    fputc(c, w->f);
}

static void jw_string(jw *w, const char *s)
{
    fputc('"', w->f);
    for (; *s; s++) {
        unsigned char c = *s;

        switch (c) {
        case '"':
            fputs("\\\"", w->f);
            break;
        case '\\':
            fputs("\\\\", w->f);
            break;
        case '\n':
            fputs("\\n", w->f);
            break;
        case '\r':
            fputs("\\r", w->f);
            break;
        case '\t':
            fputs("\\t", w->f);
            break;
        case '\b':
            fputs("\\b", w->f);
            break;
        case '\f':
            fputs("\\f", w->f);
            break;
        default:
            if (c < 0x20 || c >= 0x7F) {
                fprintf(w->f, "\\u%04x", c);
            } else {
                fputc(c, w->f);
            }
        }
    }
    fputc('"', w->f);
}

static void jw_key(jw *w, const char *key)
{
    jw_item(w);
    jw_string(w, key);
    fputs(": ", w->f);
}

static void jw_u64(jw *w, const char *key, uint64_t v)
{
    jw_key(w, key);
    fprintf(w->f, "%llu", (unsigned long long)v);
}

static void jw_bool(jw *w, const char *key, bool v)
{
    jw_key(w, key);
    fputs(v ? "true" : "false", w->f);
}

/*
 * Python's repr of a float: the shortest digits that read back as the same
 * double; positional for exponents -4..15, else d.ddde+XX; always with a
 * fraction or an exponent.
 */
static void py_float(FILE *f, double v)
{
    char buf[40], digits[24];
    int prec, exp, nd = 0;

    if (isnan(v)) {
        fputs("NaN", f);
        return;
    }
    if (isinf(v)) {
        fputs(v > 0 ? "Infinity" : "-Infinity", f);
        return;
    }
    for (prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
        if (strtod(buf, NULL) == v) {
            break;
        }
    }
    /* buf: [-]d[.ddd]e[+-]XX */
    {
        const char *p = buf;
        bool neg = *p == '-';

        if (neg) {
            fputc('-', f);
            p++;
        }
        for (; *p && *p != 'e'; p++) {
            if (*p != '.') {
                digits[nd++] = *p;
            }
        }
        exp = atoi(p + 1);
    }
    while (nd > 1 && digits[nd - 1] == '0') {
        nd--;
    }
    digits[nd] = 0;
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            fputs("0.", f);
            for (int i = -1; i > exp; i--) {
                fputc('0', f);
            }
            fputs(digits, f);
        } else {
            for (int i = 0; i <= exp; i++) {
                fputc(i < nd ? digits[i] : '0', f);
            }
            fputc('.', f);
            if (nd > exp + 1) {
                fputs(digits + exp + 1, f);
            } else {
                fputc('0', f);
            }
        }
    } else {
        fputc(digits[0], f);
        if (nd > 1) {
            fprintf(f, ".%s", digits + 1);
        }
        fprintf(f, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    }
}

static void jw_u64_list(jw *w, const uint64_t *v, unsigned n)
{
    jw_open(w, '[');
    for (unsigned i = 0; i < n; i++) {
        jw_item(w);
        fprintf(w->f, "%llu", (unsigned long long)v[i]);
    }
    jw_close(w, ']');
}

int ptl_format_json(FILE *f, const ptl_data *d, double seconds)
{
    const ptl_layout *l = &d->config;
    jw w = { .f = f };

    jw_open(&w, '{');
    jw_key(&w, "seconds");
    if (seconds > 0) {
        py_float(f, seconds);
    } else {
        fputs("null", f);
    }
    jw_key(&w, "data");
    jw_open(&w, '{');

    jw_key(&w, "status");
    jw_open(&w, '{');
    jw_bool(&w, "busy", d->busy);
    jw_bool(&w, "lost_deltas", d->lost_deltas);
    jw_bool(&w, "readout_overrun", d->readout_overrun);
    jw_close(&w, '}');

    jw_key(&w, "config");
    jw_open(&w, '{');
    jw_u64(&w, "pcie_endpoints", l->endpoints);
    jw_u64(&w, "dma_ports", l->dma_ports);
    jw_u64(&w, "probe_pcie_regions", l->pcie_regions);
    jw_u64(&w, "probe_dma_regions", l->dma_regions);
    jw_u64(&w, "counter_width", l->cnt_width);
    jw_u64(&w, "item_bytes", l->item_bytes);
    jw_u64(&w, "drain_period", l->drain_period);
    jw_u64(&w, "hist_bands", l->hist_bands);
    jw_u64(&w, "tag_capacity", l->tag_capacity);
    jw_u64(&w, "stfifo_capacity", l->stfifo_capacity);
    jw_close(&w, '}');

    jw_key(&w, "endpoints");
    jw_open(&w, '[');
    for (unsigned e = 0; e < d->nendpoints; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];

        jw_item(&w);
        jw_open(&w, '{');
        jw_u64(&w, "index", ep->index);
        jw_bool(&w, "link_up", ep->link_up);
        jw_u64(&w, "mps", ep->mps);
        jw_u64(&w, "mrrs", ep->mrrs);
        jw_bool(&w, "ext_tag", ep->ext_tag);
        jw_bool(&w, "tag_10b", ep->tag_10b);
        jw_u64(&w, "rcb", ep->rcb);
        jw_u64(&w, "tags_free", ep->tags_free);
        jw_u64(&w, "tags_free_min", ep->tags_free_min);
        jw_u64(&w, "stfifo_free", ep->stfifo_free);
        jw_u64(&w, "stfifo_free_min", ep->stfifo_free_min);
        jw_u64(&w, "pcie_cycles", ep->pcie_cycles);
        jw_u64(&w, "dma_cycles", ep->dma_cycles);
        jw_key(&w, "brakes");
        jw_u64_list(&w, ep->brakes, ep->nbrakes);
        jw_key(&w, "hists");
        jw_open(&w, '[');
        for (unsigned h = 0; h < ep->nhists; h++) {
            jw_item(&w);
            jw_u64_list(&w, ep->hists + h * ep->nbands, ep->nbands);
        }
        jw_close(&w, ']');
        jw_key(&w, "buses");
        jw_open(&w, '{');
        for (unsigned b = 0; b < ep->nbuses; b++) {
            const ptl_bus *bus = &ep->buses[b];

            jw_key(&w, bus->name);
            jw_open(&w, '{');
            jw_u64(&w, "words", bus->words);
            jw_u64(&w, "backpressure", bus->backpressure);
            jw_u64(&w, "transactions", bus->transactions);
            jw_u64(&w, "mvb", bus->mvb);
            jw_u64(&w, "mvb_backpressure", bus->mvb_backpressure);
            jw_u64(&w, "items", bus->items);
            jw_key(&w, "regions");
            jw_u64_list(&w, bus->regions, bus->nregions);
            jw_u64(&w, "region_bytes", bus->region_bytes);
            jw_bool(&w, "pcie_clk", bus->pcie_clk);
            jw_bool(&w, "has_mvb", bus->has_mvb);
            jw_bool(&w, "dma_up", bus->dma_up);
            jw_close(&w, '}');
        }
        jw_close(&w, '}');
        jw_close(&w, '}');
    }
    jw_close(&w, ']');
    jw_close(&w, '}');
    jw_close(&w, '}');
    fputc('\n', f);
    return finish(f, false);
}

/* ---------------------------------------------------------------- CSV */

static const char *const csv_columns[] = {
    "unix_time", "seconds", "device", "index", "endpoint", "bus", "kind",
    "port", "cycles", "words", "backpressure", "transactions", "mvb",
    "mvb_backpressure", "items", "regions", "region_bytes", "item_bytes",
    "used_pct", "words_pct", "mfb_stall_pct", "mvb_stall_pct", "region_pct",
    "gbps", "mpps", "rd_pct", "avg_bytes", "lost_deltas", "readout_overrun",
};

/* A field, quoted (RFC 4180) when it holds a comma, quote or line break. */
static void csv_field(FILE *f, const char *s, bool last)
{
    if (strpbrk(s, ",\"\r\n")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"') {
                fputc('"', f);
            }
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputs(last ? "\n" : ",", f);
}

static void csv_num(FILE *f, const char *fmt, double v)
{
    if (!isnan(v)) {
        fprintf(f, fmt, v);
    }
    fputc(',', f);
}

int ptl_format_csv_header(FILE *f)
{
    unsigned n = sizeof(csv_columns) / sizeof(csv_columns[0]);

    for (unsigned i = 0; i < n; i++) {
        csv_field(f, csv_columns[i], i + 1 == n);
    }
    return finish(f, false);
}

int ptl_format_csv(FILE *f, const ptl_data *d, double seconds,
                   double unix_time, const char *device, unsigned index)
{
    for (unsigned e = 0; e < d->nendpoints; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];

        for (unsigned b = 0; b < ep->nbuses; b++) {
            const ptl_bus *bus = &ep->buses[b];
            double *rp = calloc(bus->nregions + 1, sizeof(double));
            ptl_bus_figures fg;

            if (!rp) {
                return finish(f, true);
            }
            ptl_bus_compute(ep, bus, d->config.item_bytes, seconds, &fg, rp);
            fprintf(f, "%.3f,", unix_time);
            csv_num(f, "%.6f", seconds > 0 ? seconds : NAN);
            csv_field(f, device ? device : "", false);
            fprintf(f, "%u,%u,", index, ep->index);
            csv_field(f, bus->name, false);
            fprintf(f, "%s,", kind_name[bus->kind]);
            if (bus->kind == PTL_BUS_UP || bus->kind == PTL_BUS_DOWN) {
                fprintf(f, "%u", bus->port);
            }
            fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%llu,%llu,",
                    (unsigned long long)(bus->pcie_clk ? ep->pcie_cycles
                                                       : ep->dma_cycles),
                    (unsigned long long)bus->words,
                    (unsigned long long)bus->backpressure,
                    (unsigned long long)bus->transactions,
                    (unsigned long long)bus->mvb,
                    (unsigned long long)bus->mvb_backpressure,
                    (unsigned long long)bus->items);
            for (unsigned r = 0; r < bus->nregions; r++) {
                fprintf(f, "%s%llu", r ? ";" : "",
                        (unsigned long long)bus->regions[r]);
            }
            fprintf(f, ",%u,%u,", bus->region_bytes, d->config.item_bytes);
            csv_num(f, "%.4f", fg.used_pct);
            csv_num(f, "%.4f", fg.words_pct);
            csv_num(f, "%.4f", fg.mfb_stall_pct);
            csv_num(f, "%.4f", fg.mvb_stall_pct);
            for (unsigned r = 0; r < bus->nregions; r++) {
                if (r) {
                    fputc(';', f);
                }
                if (!isnan(rp[r])) {
                    fprintf(f, "%.4f", rp[r]);
                }
            }
            fputc(',', f);
            csv_num(f, "%.4f", fg.gbps);
            csv_num(f, "%.6f", fg.mpps);
            csv_num(f, "%.4f", fg.rd_pct);
            csv_num(f, "%.2f", fg.avg_bytes);
            fprintf(f, "%d,%d\n", d->lost_deltas, d->readout_overrun);
            free(rp);
        }
    }
    return finish(f, false);
}

/* --------------------------------------------------------- Prometheus */

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
    const char *device;
    unsigned index;
} prom;

static void prom_family(prom *p, const char *name, const char *type,
                        const char *help)
{
    fprintf(p->f, "# HELP " PROM_PREFIX "%s %s\n", name, help);
    fprintf(p->f, "# TYPE " PROM_PREFIX "%s %s\n", name, type);
}

/* name{device,index[,endpoint][,extra]} value; extra is preformatted */
static void prom_sample(prom *p, const char *name, int endpoint,
                        const char *extra, uint64_t v)
{
    fprintf(p->f, PROM_PREFIX "%s{device=\"", name);
    prom_escape(p->f, p->device ? p->device : "");
    fprintf(p->f, "\",index=\"%u\"", p->index);
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
        snprintf(buf, len, "bus=\"%s\",port=\"%u\"", kind_name[bus->kind],
                 bus->port);
    } else {
        snprintf(buf, len, "bus=\"%s\"", kind_name[bus->kind]);
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

int ptl_format_prometheus(FILE *f, const ptl_data *d, const char *device,
                          unsigned index)
{
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
        { "tags_free_min", "Lowest free PTC tags since the last reset of "
          "the lowest values" },
        { "stfifo_free", "Free PTC storage FIFO words now" },
        { "stfifo_free_min", "Lowest free PTC storage FIFO words since the "
          "last reset of the lowest values" },
    };
    prom p = { .f = f, .device = device, .index = index };
    char lab[160];

    prom_family(&p, "cycles_total", "counter",
                "Elapsed cycles of the probe's clock");
    for (unsigned e = 0; e < d->nendpoints; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];

        prom_sample(&p, "cycles_total", ep->index, "clock=\"pcie\"",
                    ep->pcie_cycles);
        prom_sample(&p, "cycles_total", ep->index, "clock=\"dma\"",
                    ep->dma_cycles);
    }
    for (unsigned k = 0; k < BF_N; k++) {
        prom_family(&p, bus_fam[k].name, "counter", bus_fam[k].help);
        for (unsigned e = 0; e < d->nendpoints; e++) {
            const ptl_endpoint *ep = &d->endpoints[e];

            for (unsigned b = 0; b < ep->nbuses; b++) {
                bus_labels(&ep->buses[b], lab, sizeof(lab));
                prom_sample(&p, bus_fam[k].name, ep->index, lab,
                            bus_field(&ep->buses[b], k));
            }
        }
    }
    prom_family(&p, "region_cycles_total", "counter",
                "Cycles in which a region of the bus carried data");
    for (unsigned e = 0; e < d->nendpoints; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];

        for (unsigned b = 0; b < ep->nbuses; b++) {
            const ptl_bus *bus = &ep->buses[b];
            char bl[64];

            bus_labels(bus, bl, sizeof(bl));
            for (unsigned r = 0; r < bus->nregions; r++) {
                snprintf(lab, sizeof(lab), "%s,region=\"%u\"", bl, r);
                prom_sample(&p, "region_cycles_total", ep->index, lab,
                            bus->regions[r]);
            }
        }
    }
    prom_family(&p, "brake_cycles_total", "counter",
                "Cycles in which a BRAKE reason stopped the PCIe transfer");
    for (unsigned e = 0; e < d->nendpoints; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];

        for (unsigned k = 0; k < ep->nbrakes; k++) {
            if (k < NAMED_REASONS) {
                snprintf(lab, sizeof(lab), "reason=\"%s\"", reason_slug[k]);
            } else {
                snprintf(lab, sizeof(lab), "reason=\"%u\"", k);
            }
            prom_sample(&p, "brake_cycles_total", ep->index, lab,
                        ep->brakes[k]);
        }
    }
    prom_family(&p, "hist_cycles_total", "counter",
                "PCIe cycles spent in a band of free PTC tags or storage "
                "FIFO words (band 0 none free ... highest band plenty)");
    for (unsigned e = 0; e < d->nendpoints; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];

        for (unsigned h = 0; h < ep->nhists; h++) {
            for (unsigned k = 0; k < ep->nbands; k++) {
                if (h < 2) {
                    snprintf(lab, sizeof(lab), "hist=\"%s\",band=\"%u\"",
                             h ? "stfifo" : "tags", k);
                } else {
                    snprintf(lab, sizeof(lab), "hist=\"%u\",band=\"%u\"", h,
                             k);
                }
                prom_sample(&p, "hist_cycles_total", ep->index, lab,
                            ep->hists[h * ep->nbands + k]);
            }
        }
    }
    for (unsigned g = 0; g < sizeof(gauge_fam) / sizeof(gauge_fam[0]); g++) {
        prom_family(&p, gauge_fam[g].name, "gauge", gauge_fam[g].help);
        for (unsigned e = 0; e < d->nendpoints; e++) {
            const ptl_endpoint *ep = &d->endpoints[e];
            const uint64_t v[] = {
                ep->link_up, ep->mps, ep->mrrs, ep->rcb, ep->ext_tag,
                ep->tag_10b, ep->tags_free, ep->tags_free_min,
                ep->stfifo_free, ep->stfifo_free_min,
            };

            prom_sample(&p, gauge_fam[g].name, ep->index, NULL, v[g]);
        }
    }
    /* block-wide: no endpoint label */
    prom_family(&p, "item_bytes", "gauge", "Bytes of one MFB item");
    prom_sample(&p, "item_bytes", -1, NULL, d->config.item_bytes);
    prom_family(&p, "lost_deltas", "gauge",
                "A delta was lost since the flags were last cleared: the "
                "counters are not exact");
    prom_sample(&p, "lost_deltas", -1, NULL, d->lost_deltas);
    prom_family(&p, "readout_overrun", "gauge",
                "A read-out overrun happened since the flags were last "
                "cleared: the counters are not exact");
    prom_sample(&p, "readout_overrun", -1, NULL, d->readout_overrun);
    return finish(f, false);
}
