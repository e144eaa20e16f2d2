/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Output formats: the reference reader's text report and JSON, and CSV
 * rows (the Prometheus exposition is in ptl-prometheus.c).
 *
 * The text report is the reference's format_report byte for byte: its
 * tables as Python's tabulate 0.8.9 lays them out, its figures computed
 * and rounded as Python does. With totals (seconds <= 0) the clock line
 * is left out and the Gbps and Mpps columns stay empty, as the reference
 * does with -t 0.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pcie-telemetry.h"
#include "ptl-jw.h"
#include "ptl-names.h"


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

static const char *const reason_name[PTL_NAMED_REASONS] = {
    "no free PCIe tag", "PCIe tag not ready", "no room for completions",
    "no completion header entry", "MFB stalled towards DMA",
    "MVB stalled towards DMA",
};
const char *const ptl_reason_slug[PTL_NAMED_REASONS] = {
    "no_free_pcie_tag", "pcie_tag_not_ready", "no_room_for_completions",
    "no_completion_header_entry", "mfb_stalled_towards_dma",
    "mvb_stalled_towards_dma",
};
#define NAMED_REASONS PTL_NAMED_REASONS
/* The reasons of the UP stream (0-3), of the DOWN stream (4-5). */
#define UP_REASONS    4

static const char *const band_name[] = { "none", "<=1/8", "<=1/2", "rest" };
#define NAMED_BANDS 4

const char *const ptl_kind_name[4] = { "RQ", "RC", "UP", "DOWN" };

const char *ptl_reason_name(unsigned k)
{
    return k < NAMED_REASONS ? reason_name[k] : NULL;
}

const char *ptl_band_name(unsigned k)
{
    return k < NAMED_BANDS ? band_name[k] : NULL;
}

/* ------------------------------------------------------------- tables */

/*
 * The tables of the reference's report as Python's tabulate 0.8.9 prints
 * them: every cell stripped of surrounding blanks and left-aligned, a
 * column as wide as its widest cell (and, under a header, at least the
 * header plus two), two spaces between columns, a dashed line under the
 * header, no blanks at the end of a line. Without a header ("plain") only
 * the rows.
 */
typedef struct table {
    unsigned ncols, nrows;
    char **head;                /* [ncols] or NULL (plain) */
    char **cell;                /* [nrows][ncols], NULL = empty */
    bool oom;
} table;

static bool table_init(table *t, unsigned ncols, unsigned nrows, bool head)
{
    t->ncols = ncols;
    t->nrows = nrows;
    t->oom = false;
    t->head = head ? calloc(ncols + 1, sizeof(char *)) : NULL;
    t->cell = calloc((size_t)ncols * nrows + 1, sizeof(char *));
    return t->cell != NULL && (!head || t->head != NULL);
}

/* Takes s (NULL: out of memory) and strips it as tabulate does. */
static char *strip(char *s)
{
    size_t b = 0, n;

    if (!s) {
        return NULL;
    }
    n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) {
        n--;
    }
    while (b < n && (s[b] == ' ' || s[b] == '\t')) {
        b++;
    }
    memmove(s, s + b, n - b);
    s[n - b] = '\0';
    return s;
}

static void table_set(table *t, unsigned row, unsigned col, char *s)
{
    if (!s) {
        t->oom = true;
    }
    t->cell[(size_t)row * t->ncols + col] = strip(s);
}

static void table_head(table *t, unsigned col, char *s)
{
    if (!s) {
        t->oom = true;
    }
    t->head[col] = strip(s);
}

static void table_row_out(FILE *f, const table *t, const size_t *w,
                          char *const *cells, sbuf *line)
{
    for (unsigned c = 0; c < t->ncols; c++) {
        const char *s = cells[c] ? cells[c] : "";

        sb_add(line, "%s%s%*s", c ? "  " : "", s, (int)(w[c] - strlen(s)),
               "");
    }
    put_line(f, line);
}

/* false when out of memory */
static bool table_print(FILE *f, table *t)
{
    size_t *w = calloc(t->ncols + 1, sizeof(size_t));
    sbuf line = { 0 };

    if (!w || t->oom) {
        free(w);
        return false;
    }
    for (unsigned c = 0; c < t->ncols; c++) {
        w[c] = t->head ? strlen(t->head[c]) + 2 : 0;
        for (unsigned r = 0; r < t->nrows; r++) {
            const char *s = t->cell[(size_t)r * t->ncols + c];

            if (s && strlen(s) > w[c]) {
                w[c] = strlen(s);
            }
        }
    }
    if (t->head) {
        table_row_out(f, t, w, t->head, &line);
        for (unsigned c = 0; c < t->ncols; c++) {
            sb_add(&line, "%s", c ? "  " : "");
            for (size_t i = 0; i < w[c]; i++) {
                sb_add(&line, "-");
            }
        }
        put_line(f, &line);
    }
    for (unsigned r = 0; r < t->nrows; r++) {
        table_row_out(f, t, w, &t->cell[(size_t)r * t->ncols], &line);
    }
    t->oom |= line.oom;
    free(line.p);
    free(w);
    return !t->oom;
}

static void table_free(table *t)
{
    if (t->cell) {
        for (size_t i = 0; i < (size_t)t->ncols * t->nrows; i++) {
            free(t->cell[i]);
        }
    }
    if (t->head) {
        for (unsigned c = 0; c < t->ncols; c++) {
            free(t->head[c]);
        }
    }
    free(t->cell);
    free(t->head);
    t->cell = NULL;
    t->head = NULL;
}

/* --------------------------------------------------------------- text */

/*
 * The figures as the reference computes them, in the same order of
 * operations so that they round alike: a share is 100.0 x part / whole,
 * "   -  " when the whole is 0 (tabulate strips it to "-" in its tables,
 * the BRAKE block keeps it). Sums and products of counters are exact (as
 * Python's integers are) before they become doubles.
 */
typedef unsigned __int128 u128;

static char *pct(u128 part, u128 whole)
{
    if (whole == 0) {
        return strdup("   -  ");
    }
    return str_printf("%6.2f", 100.0 * (double)part / (double)whole);
}

static bool text_buses(FILE *f, const ptl_data *d, const ptl_endpoint *ep,
                       double seconds)
{
    static const char *const head[] = {
        "Bus", "Used %", "Words %", "MFB stall %", "MVB stall %",
        "Used per region %", "Gbps", "Mpps", "RD %", "Avg B",
    };
    enum { NCOLS = sizeof(head) / sizeof(head[0]) };
    bool rates = seconds > 0;
    table t;
    bool ok;

    if (!table_init(&t, NCOLS, ep->nbuses, true)) {
        table_free(&t);
        return false;
    }
    for (unsigned c = 0; c < NCOLS; c++) {
        table_head(&t, c, strdup(head[c]));
    }
    for (unsigned b = 0; b < ep->nbuses && !t.oom; b++) {
        const ptl_bus *bus = &ep->buses[b];
        uint64_t cycles = bus->pcie_clk ? ep->pcie_cycles : ep->dma_cycles;
        uint64_t requests = bus->has_mvb ? bus->mvb : bus->transactions;
        u128 used = 0, data_bytes = (u128)bus->items * d->config.item_bytes;
        sbuf regs = { 0 };

        for (unsigned r = 0; r < bus->nregions; r++) {
            used += bus->regions[r];
            if (cycles) {
                sb_add(&regs, "%s%.1f", r ? " " : "",
                       100.0 * (double)bus->regions[r] / (double)cycles);
            } else {
                sb_add(&regs, "%s-", r ? " " : "");
            }
        }
        if (regs.oom) {
            free(regs.p);
            regs.p = NULL;
        } else if (!regs.p) {
            regs.p = strdup("");
        }
        table_set(&t, b, 0, strdup(bus->name));
        table_set(&t, b, 1, pct(used, (u128)cycles * bus->nregions));
        table_set(&t, b, 2, pct(bus->words, cycles));
        table_set(&t, b, 3, pct(bus->backpressure, cycles));
        table_set(&t, b, 4, bus->has_mvb ? pct(bus->mvb_backpressure, cycles)
                                         : strdup("-"));
        table_set(&t, b, 5, regs.p);
        if (rates) {
            table_set(&t, b, 6, str_printf("%.2f", (double)(data_bytes * 8) /
                                           seconds / 1e9));
            table_set(&t, b, 7, str_printf("%.3f", (double)requests /
                                           seconds / 1e6));
        }
        table_set(&t, b, 8, bus->dma_up
                  ? pct(requests > bus->transactions
                        ? requests - bus->transactions : 0, requests)
                  : strdup("-"));
        table_set(&t, b, 9, bus->transactions
                  ? str_printf("%.0f", (double)data_bytes /
                               (double)bus->transactions)
                  : strdup("-"));
    }
    ok = table_print(f, &t);
    table_free(&t);
    return ok;
}

static const char *reason_label(unsigned k, char *buf, size_t len)
{
    const char *name = ptl_reason_name(k);

    if (name) {
        return name;
    }
    snprintf(buf, len, "reason %u", k);
    return buf;
}

/*
 * The BRAKE block: the UP stream column holds reasons 0-3, every unnamed
 * reason (6 on) and last the RQ bus's stalled cycles; the DOWN stream
 * column reasons 4 and 5. A cell is its label padded to the column's
 * longest label plus one, then the share ("%6.2f" or "   -  ") and " %".
 */
static bool text_brakes(FILE *f, const ptl_endpoint *ep)
{
    unsigned nup = 0, ndown = 0, rows;
    size_t up_label = strlen("PCIe endpoint not ready"), down_label = 0;
    size_t up_width;
    unsigned *up = calloc(ep->nbrakes + 1, sizeof(unsigned));
    unsigned *down = calloc(ep->nbrakes + 1, sizeof(unsigned));
    sbuf line = { 0 };
    char buf[32];
    bool ok;

    if (!up || !down) {
        free(up);
        free(down);
        return false;
    }
    for (unsigned k = 0; k < ep->nbrakes; k++) {
        size_t n = strlen(reason_label(k, buf, sizeof(buf)));

        if (k >= UP_REASONS && k < NAMED_REASONS) {
            down[ndown++] = k;
            down_label = n > down_label ? n : down_label;
        } else {
            up[nup++] = k;
            up_label = n > up_label ? n : up_label;
        }
    }
    up[nup++] = UINT_MAX;       /* the RQ bus's stalled cycles */
    up_label++;
    down_label++;
    up_width = up_label + 8;
    rows = nup > ndown ? nup : ndown;

    fprintf(f, "\n  Why the PCIe transfer stopped (share of PCIe clock "
            "cycles)\n");
    sb_add(&line, "    %-*s", (int)up_width, "UP stream");
    if (ndown) {
        sb_add(&line, "    DOWN stream");
    }
    put_line(f, &line);
    for (unsigned r = 0; r < rows; r++) {
        size_t start;

        sb_add(&line, "    ");
        start = line.len;
        for (unsigned side = 0; side < 2; side++) {
            unsigned n = side ? ndown : nup;
            const unsigned *k = side ? down : up;
            uint64_t v;
            char *p;

            if (side) {
                /* the left cell padded to the column, then 4 spaces */
                while (!line.oom && line.len - start < up_width) {
                    sb_add(&line, " ");
                }
                sb_add(&line, "    ");
            }
            if (r >= n) {
                continue;
            }
            v = k[r] == UINT_MAX ? ep->buses[0].backpressure
                                 : ep->brakes[k[r]];
            p = pct(v, ep->pcie_cycles);
            sb_add(&line, "%-*s%s %%", (int)(side ? down_label : up_label),
                   k[r] == UINT_MAX ? "PCIe endpoint not ready"
                                    : reason_label(k[r], buf, sizeof(buf)),
                   p ? p : "");
            line.oom |= !p;
            free(p);
        }
        put_line(f, &line);
    }
    ok = !line.oom;
    free(line.p);
    free(up);
    free(down);
    return ok;
}

static const char *const hist_name[] = {
    "PCIe tags", "PTC storage FIFO words",
};

static bool text_hists(FILE *f, const ptl_data *d, const ptl_endpoint *ep)
{
    unsigned nbands = d->config.hist_bands;
    table t;
    bool ok;

    if (!table_init(&t, 2 + nbands, ep->nhists, true)) {
        table_free(&t);
        return false;
    }
    table_head(&t, 0, strdup("Time spent low"));
    table_head(&t, 1, strdup("of"));
    for (unsigned k = 0; k < nbands; k++) {
        const char *name = ptl_band_name(k);

        table_head(&t, 2 + k, name ? strdup(name) : str_printf("band %u", k));
    }
    for (unsigned h = 0; h < ep->nhists && !t.oom; h++) {
        unsigned cap = h == 0 ? d->config.tag_capacity
                     : h == 1 ? d->config.stfifo_capacity : 0;

        table_set(&t, h, 0, h < 2 ? strdup(hist_name[h])
                                  : str_printf("resource %u", h));
        table_set(&t, h, 1, cap ? str_printf("%u", cap) : strdup("-"));
        for (unsigned k = 0; k < ep->nbands && k < nbands; k++) {
            table_set(&t, h, 2 + k, pct(ep->hists[(size_t)h * ep->nbands + k],
                                        ep->pcie_cycles));
        }
    }
    ok = table_print(f, &t);
    table_free(&t);
    return ok;
}

/* The settings of an endpoint: tabulate's "plain" table of two columns. */
static bool text_link(FILE *f, const ptl_endpoint *ep)
{
    static const char *const label[] = {
        "Link", "Max payload size (MPS)", "Max read request (MRRS)",
        "Extended tag (8-bit)", "10-bit tag", "Read completion boundary",
        "PTC tags free", "PTC storage FIFO free",
    };
    table t;
    bool ok;

    if (!table_init(&t, 2, 8, false)) {
        table_free(&t);
        return false;
    }
    for (unsigned r = 0; r < 8; r++) {
        table_set(&t, r, 0, strdup(label[r]));
    }
    table_set(&t, 0, 1, strdup(ep->link_up ? "up" : "DOWN"));
    table_set(&t, 1, 1, str_printf("%u B", ep->mps));
    table_set(&t, 2, 1, str_printf("%u B", ep->mrrs));
    table_set(&t, 3, 1, strdup(ep->ext_tag ? "on" : "off"));
    table_set(&t, 4, 1, strdup(ep->tag_10b ? "on" : "off"));
    table_set(&t, 5, 1, str_printf("%u B", ep->rcb));
    table_set(&t, 6, 1, str_printf("%u (lowest %u)", ep->tags_free,
                                   ep->tags_free_min));
    table_set(&t, 7, 1, str_printf("%u words (lowest %u)", ep->stfifo_free,
                                   ep->stfifo_free_min));
    ok = table_print(f, &t);
    table_free(&t);
    return ok;
}

/* The bus of a kind (RQ, RC) of the endpoint of the card's function. */
static const ptl_bus *port_bus(const ptl_data *d, ptl_bus_kind kind)
{
    const ptl_endpoint *ep = NULL;

    for (unsigned e = 0; e < d->nendpoints; e++) {
        if (d->endpoints[e].index == d->port->endpoint) {
            ep = &d->endpoints[e];
        }
    }
    for (unsigned b = 0; ep && b < ep->nbuses; b++) {
        if (ep->buses[b].kind == kind) {
            return &ep->buses[b];
        }
    }
    return NULL;
}

static char *gbps(double bytes, double seconds)
{
    if (!(seconds > 0)) {
        return strdup("-");
    }
    return str_printf("%.2f", bytes * 8 / seconds / 1e9);
}

/*
 * Both ends of the link: per direction the card's bus (its bytes over the
 * interval) beside what the port's PMU counted (bytes over the time it
 * counted).
 */
static bool text_port(FILE *f, const ptl_data *d, double seconds)
{
    static const char *const head[] = {
        "Direction", "Card bus", "Card Gbps", "Port event", "Port bytes",
        "Port s", "Port Gbps",
    };
    enum { NCOLS = sizeof(head) / sizeof(head[0]) };
    const ptl_port_data *p = d->port;
    const ptl_port_count *cnt[2] = { &p->rx, &p->tx };
    static const char *const dir[2] = { "card -> port (Rx)",
                                        "port -> card (Tx)" };
    static const ptl_bus_kind kind[2] = { PTL_BUS_RQ, PTL_BUS_RC };
    table t;
    bool ok;
    int n;

    n = fprintf(f, "\nRoot port %s (%s) above %s, PCIe endpoint %u\n",
                p->port, p->pmu, p->card, p->endpoint);
    for (int i = 0; i < n - 2; i++) {
        fputc('-', f);
    }
    fputc('\n', f);
    if (!table_init(&t, NCOLS, 2, true)) {
        table_free(&t);
        return false;
    }
    for (unsigned c = 0; c < NCOLS; c++) {
        table_head(&t, c, strdup(head[c]));
    }
    for (unsigned r = 0; r < 2; r++) {
        const ptl_bus *bus = port_bus(d, kind[r]);
        const ptl_port_count *pc = cnt[r];

        table_set(&t, r, 0, strdup(dir[r]));
        table_set(&t, r, 1, strdup(bus ? bus->name : "-"));
        table_set(&t, r, 2, bus && seconds > 0
                  ? gbps((double)bus->items * d->config.item_bytes, seconds)
                  : strdup("-"));
        if (pc->measured) {
            table_set(&t, r, 3, strdup(pc->event));
            table_set(&t, r, 4, str_printf("%llu",
                                           (unsigned long long)pc->value));
            table_set(&t, r, 5, str_printf("%.2f", pc->seconds));
            table_set(&t, r, 6, gbps((double)pc->value, pc->seconds));
        } else {
            table_set(&t, r, 3, strdup("not counted"));
            for (unsigned c = 4; c < NCOLS; c++) {
                table_set(&t, r, c, strdup("-"));
            }
        }
    }
    ok = table_print(f, &t);
    table_free(&t);
    return ok;
}

int ptl_format_text(FILE *f, const ptl_data *d, double seconds)
{
    const ptl_layout *l = &d->config;
    bool ok = true;
    int n;

    n = fprintf(f, "PCIe telemetry - %u endpoint(s), %u DMA port(s) per "
                "endpoint\n", l->endpoints, l->dma_ports);
    for (int i = 0; i < n - 1; i++) {
        fputc('=', f);
    }
    fputc('\n', f);
    if (seconds > 0) {
        fprintf(f, "Measured over %.2f s\n", seconds);
    } else {
        fprintf(f, "Totals since the last clear\n");
    }
    if (d->lost_deltas || d->readout_overrun) {
        fputc('\n', f);
    }
    if (d->lost_deltas) {
        fprintf(f, "  !! LOST DELTAS - the counters are not exact\n");
    }
    if (d->readout_overrun) {
        fprintf(f, "  !! READ-OUT OVERRUN - the counters are not exact\n");
    }
    for (unsigned e = 0; e < d->nendpoints && ok; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];

        fprintf(f, "\nPCIe endpoint %u\n", ep->index);
        fprintf(f, "------------------------------------------------------"
                "------\n");
        ok = text_link(f, ep);
        if (seconds > 0) {
            fprintf(f, "\n  PCIe clock %.1f MHz, DMA clock %.1f MHz\n",
                    (double)ep->pcie_cycles / seconds / 1e6,
                    (double)ep->dma_cycles / seconds / 1e6);
        }
        fputc('\n', f);
        ok = ok && text_buses(f, d, ep, seconds);
        ok = ok && text_brakes(f, ep);
        if (ok && ep->nhists) {
            fputc('\n', f);
            ok = text_hists(f, d, ep);
        }
    }
    if (ok && d->port) {
        ok = text_port(f, d, seconds);
    }
    return finish(f, !ok);
}

/* --------------------------------------------------------------- JSON */

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

static void jw_port_count(jw *w, const char *key, const ptl_port_count *c)
{
    jw_key(w, key);
    if (!c->measured) {
        fputs("null", w->f);
        return;
    }
    jw_open(w, '{');
    jw_key(w, "event");
    jw_string(w, c->event);
    jw_u64(w, "value", c->value);
    jw_key(w, "seconds");
    py_float(w->f, c->seconds);
    jw_key(w, "enabled_seconds");
    py_float(w->f, c->enabled_seconds);
    jw_close(w, '}');
}

/* "port": what the port above the card counted (after "data") */
static void json_port(jw *w, const ptl_port_data *p)
{
    jw_key(w, "port");
    jw_open(w, '{');
    jw_key(w, "device");
    jw_string(w, p->port);
    jw_key(w, "pmu");
    jw_string(w, p->pmu);
    jw_key(w, "card");
    jw_string(w, p->card);
    jw_u64(w, "endpoint", p->endpoint);
    jw_port_count(w, "rx", &p->rx);
    jw_port_count(w, "tx", &p->tx);
    jw_close(w, '}');
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
    jw_close(&w, '}');
    if (d->port) {
        json_port(&w, d->port);
    }
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
            csv_num(f, "%.3f", unix_time);
            csv_num(f, "%.6f", seconds > 0 ? seconds : NAN);
            csv_field(f, device ? device : "", false);
            if (index != UINT_MAX) {
                fprintf(f, "%u", index);
            }
            fprintf(f, ",%u,", ep->index);
            csv_field(f, bus->name, false);
            fprintf(f, "%s,", ptl_kind_name[bus->kind]);
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
