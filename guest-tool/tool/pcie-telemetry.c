/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie-telemetry: report the traffic counted by the PCIE_TELEMETRY_MI
 * block of a CESNET NDK card. A thin client of libpcie-telemetry: find the
 * block, take readings under the card's lock, print them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pcie-telemetry.h"
#include "exporter.h"
#include "live.h"
#include "options.h"
#include "wait.h"

#define PROG "pcie-telemetry"

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    stop_requested = 1;
}

/* Written whole before the first BAR access it covers, then only read. */
static char sigbus_msg[256] = PROG ": the card disappeared (bus error on "
                              "its BAR)\n";

/*
 * A BAR whose device went away can fault instead of reading all ones or 0
 * (a mapping the kernel revoked once a driver claimed the range again).
 * Say so and leave; nothing is held that the kernel does not release.
 */
static void on_sigbus(int sig)
{
    ssize_t r = write(STDERR_FILENO, sigbus_msg, strlen(sigbus_msg));

    (void)r;
    _exit(PTL_E_GONE);
}

static int report(const ptl_error *e)
{
    fprintf(stderr, PROG ": %s\n", e->msg);
    return e->code ? (int)e->code : PTL_E_INTERNAL;
}

static int write_failed(void)
{
    fprintf(stderr, PROG ": cannot write the output: %s\n", strerror(errno));
    return PTL_E_INTERNAL;
}

static double unix_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleeps until the monotonic deadline; false when asked to stop. */
static bool sleep_until(uint64_t deadline)
{
    return ptt_sleep_until(deadline, &stop_requested);
}

static void format_node_line(const ptl_node_info *n, unsigned i)
{
    printf("    %u: BAR%u offset 0x%llx size 0x%llx version 0x%08x "
           "pcie-endpoints %u  %s\n", i, n->bar,
           (unsigned long long)n->offset, (unsigned long long)n->size,
           n->version, n->pcie_endpoints, n->path);
}

/*
 * The DesignWare PMUs above a card, as --port would take them (the first
 * one), nearest first; nothing when there is none.
 */
static void list_pmus(const ptl_card_info *c)
{
    ptl_pmu *pmus;
    unsigned n;
    ptl_error e = { 0 };

    if (ptl_dwc_find(c->slot, &pmus, &n, &e) != PTL_OK) {
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        printf("    port %s  PMU %s (type %u, cpu %d)\n", pmus[i].bridge,
               pmus[i].name, pmus[i].type, pmus[i].cpu);
    }
    free(pmus);
}

/*
 * The card and every port above it with flit mode or a flit capability,
 * as --flit takes them; nothing for those without (or without root).
 */
static int list_flit(const ptl_card_info *c)
{
    ptl_flit_run *run;
    const ptl_flit_dev *devs;
    ptl_error e = { 0 };
    unsigned n;
    int rc = 0;

    if (ptl_flit_run_open(c->slot, PTT_FLIT_INSTANCES_DEFAULT, false, &run,
                          &e) != PTL_OK) {
        return 0;
    }
    devs = ptl_flit_run_devs(run, &n);
    for (unsigned i = 0; i < n && rc == 0; i++) {
        rc = ptl_flit_format_list(stdout, &devs[i], "    ");
    }
    ptl_flit_run_close(run);
    return rc;
}

static int do_list(const ptl_find_opts *fo)
{
    ptl_card_info *cards;
    unsigned n;
    ptl_error e = { 0 };
    bool perm = false;

    if (ptl_list(fo, &cards, &n, &e) != PTL_OK) {
        return report(&e);
    }
    for (unsigned i = 0; i < n; i++) {
        const ptl_card_info *c = &cards[i];

        printf("%s  %04x:%04x  ", c->slot, c->vendor, c->device);
        if (c->endpoint >= 0) {
            printf("endpoint %d  ", c->endpoint);
        }
        if (c->nnodes) {
            printf("%u telemetry block%s\n", c->nnodes,
                   c->nnodes == 1 ? "" : "s");
        } else {
            printf("no telemetry block\n");
        }
        /* the link and the firmware's identity, as lspci and nfb-info */
        if (ptl_format_card_lines(stdout, c, "    ") != 0) {
            ptl_list_free(cards, n);
            return write_failed();
        }
        for (unsigned k = 0; k < c->nnodes; k++) {
            format_node_line(&c->nodes[k], k);
        }
        if (!c->nnodes) {
            printf("    %s\n", c->tree_error);
        }
        list_pmus(c);
        if (list_flit(c) != 0) {
            ptl_list_free(cards, n);
            return write_failed();
        }
        perm |= strstr(c->tree_error, "needs root") != NULL;
    }
    ptl_list_free(cards, n);
    if (fflush(stdout) != 0) {
        return write_failed();
    }
    return perm ? PTL_E_PERM : 0;
}

/*
 * --port: the payload events of the PMU above the card. Each direction's
 * event is opened once (disabled) and counts over windows: the whole
 * interval for rx or tx alone (it stays enabled through a watch, read at
 * every interval's end), or half an interval each for both (rx enabled
 * over the first half, tx over the second: the port has one counter for
 * such events).
 */
static const char *const port_event[2] = {
    "Rx_PCIe_TLP_Data_Payload", "Tx_PCIe_TLP_Data_Payload",
};

typedef struct port_run {
    ptl_pmu pmu;
    ptl_pmu_counter *c[2];      /* [0] rx, [1] tx; NULL when not counted */
    bool enabled[2];
    ptl_pmu_value start[2];     /* the counts when its window began */
    ptl_port_data data;         /* of the interval going on */
    ptl_port_data shown;        /* of the interval last ended */
} port_run;

typedef struct run {
    const ptt_opts *o;
    ptl_handle *h;
    ptl_block *b;
    const ptl_layout *lay;
    const char *slot;
    bool csv_header_done;
    port_run *port;             /* --port, or NULL */
} run;

static void port_close(port_run *p)
{
    if (p) {
        ptl_pmu_counter_close(p->c[0]);
        ptl_pmu_counter_close(p->c[1]);
        free(p);
    }
}

/*
 * The PMU above the card and its events, opened disabled; the nearest
 * PMU when there are several.
 */
static int port_open(run *r)
{
    const ptl_card_info *ci = ptl_handle_card(r->h);
    ptl_pmu *pmus;
    unsigned n;
    ptl_error e = { 0 };
    port_run *p = calloc(1, sizeof(*p));

    if (!p) {
        fprintf(stderr, PROG ": out of memory\n");
        return PTL_E_INTERNAL;
    }
    if (ptl_dwc_find(ci->slot, &pmus, &n, &e) != PTL_OK) {
        free(p);
        return report(&e);
    }
    p->pmu = pmus[0];
    free(pmus);
    snprintf(p->data.port, sizeof(p->data.port), "%s", p->pmu.bridge);
    snprintf(p->data.pmu, sizeof(p->data.pmu), "%s", p->pmu.name);
    snprintf(p->data.card, sizeof(p->data.card), "%s", ci->slot);
    p->data.endpoint = ci->endpoint >= 0 ? (unsigned)ci->endpoint : 0;
    for (int k = 0; k < 2; k++) {
        ptl_pmu_event ev;

        if ((k == 0 && r->o->port == PTT_PORT_TX) ||
            (k == 1 && r->o->port == PTT_PORT_RX)) {
            continue;
        }
        if (ptl_pmu_event_get(&p->pmu, port_event[k], &ev, &e) != PTL_OK ||
            ptl_pmu_counter_open(&p->pmu, &ev, &p->c[k], &e) != PTL_OK) {
            port_close(p);
            return report(&e);
        }
    }
    r->port = p;
    return 0;
}

/* Counter k: its window starts now (enabled if it was not). */
static ptl_err port_window_start(port_run *p, int k, ptl_error *e)
{
    ptl_err rc = PTL_OK;

    if (!p->enabled[k]) {
        rc = ptl_pmu_counter_enable(p->c[k], e);
        p->enabled[k] = rc == PTL_OK;
    }
    if (rc == PTL_OK) {
        rc = ptl_pmu_counter_read(p->c[k], &p->start[k], e);
        /* not yet scheduled in is no error here: the end tells */
        rc = rc == PTL_E_BUSY ? PTL_OK : rc;
    }
    return rc;
}

/*
 * Counter k: its window ends now (disabled first when disable); what it
 * counted since its start goes into the interval's data.
 */
static ptl_err port_window_end(port_run *p, int k, bool disable,
                               ptl_error *e)
{
    ptl_port_count *pc = k ? &p->data.tx : &p->data.rx;
    ptl_pmu_value v;
    uint64_t en, run;
    ptl_err rc = PTL_OK;

    if (disable) {
        rc = ptl_pmu_counter_disable(p->c[k], e);
        p->enabled[k] = false;
    }
    if (rc == PTL_OK) {
        rc = ptl_pmu_counter_read(p->c[k], &v, e);
    }
    if (rc != PTL_OK) {
        return rc;
    }
    en = v.enabled_ns - p->start[k].enabled_ns;
    run = v.running_ns - p->start[k].running_ns;
    if (en > 0 && run == 0) {
        return ptl_set_error(e, PTL_E_BUSY, "%s/%s/ was enabled for %.3f s "
                             "but never counted: the PMU's counter is in use "
                             "by another perf session; try again when it "
                             "ends", p->pmu.name, port_event[k], en / 1e9);
    }
    pc->measured = true;
    snprintf(pc->event, sizeof(pc->event), "%s", port_event[k]);
    pc->value = v.value - p->start[k].value;
    pc->seconds = run / 1e9;
    pc->enabled_seconds = en / 1e9;
    return PTL_OK;
}

/* An interval begins: rx (or the one direction) counts from now. */
static ptl_err port_begin(run *r, ptl_error *e)
{
    port_run *p = r->port;

    if (!p) {
        return PTL_OK;
    }
    memset(&p->data.rx, 0, sizeof(p->data.rx));
    memset(&p->data.tx, 0, sizeof(p->data.tx));
    return port_window_start(p, p->c[0] ? 0 : 1, e);
}

/* Half way through an interval with both: rx ends, tx starts. */
static ptl_err port_half(run *r, ptl_error *e)
{
    ptl_err rc = port_window_end(r->port, 0, true, e);

    return rc == PTL_OK ? port_window_start(r->port, 1, e) : rc;
}

/*
 * The interval ends: the direction counting ends (a lone direction stays
 * enabled into the next interval, tx of both is disabled).
 */
static ptl_err port_end(run *r, ptl_error *e)
{
    port_run *p = r->port;
    ptl_err rc;

    if (!p) {
        return PTL_OK;
    }
    if (r->o->port == PTT_PORT_BOTH) {
        rc = port_window_end(p, 1, true, e);
    } else {
        rc = port_window_end(p, p->c[0] ? 0 : 1, false, e);
    }
    p->shown = p->data;
    return rc;
}

/*
 * One reading (and optionally the flags cleared after it) under the lock;
 * a card removed meanwhile is PTL_E_GONE, not a reading of zeros.
 */
static ptl_err locked_read(run *r, ptl_reading *rd, bool clear_after,
                           ptl_error *e)
{
    ptl_err rc = ptl_handle_lock(r->h, e);

    if (rc == PTL_OK) {
        rc = ptl_handle_read(r->h, rd, e);
        if (rc == PTL_OK && clear_after) {
            rc = ptl_block_clear_flags(r->b, true, e);
        }
        ptl_handle_unlock(r->h);
    }
    return rc;
}

static int print_data(run *r, const ptl_reading *rd, double seconds)
{
    ptl_data *d = ptl_data_decode(r->lay, rd);
    int rc = 0;

    if (d && r->port) {
        d->port = malloc(sizeof(*d->port));
        if (d->port) {
            *d->port = r->port->shown;
        } else {
            ptl_data_free(d);
            d = NULL;
        }
    }
    if (!d) {
        fprintf(stderr, PROG ": out of memory\n");
        return PTL_E_INTERNAL;
    }
    switch (r->o->format) {
    case PTT_TEXT:
        rc = ptl_format_text(stdout, d, seconds);
        break;
    case PTT_JSON:
        rc = ptl_format_json(stdout, d, seconds);
        break;
    case PTT_CSV:
        if (!r->csv_header_done) {
            rc = ptl_format_csv_header(stdout);
            r->csv_header_done = true;
        }
        if (rc == 0) {
            rc = ptl_format_csv(stdout, d, seconds, unix_now(), r->slot,
                                r->o->index);
        }
        break;
    case PTT_PROMETHEUS:
        rc = ptl_format_prometheus(stdout, d, r->slot, r->o->index);
        break;
    }
    ptl_data_free(d);
    /* a watch prints an empty line after each report, as the reference */
    if (rc == 0 && r->o->watch &&
        (r->o->format == PTT_TEXT || r->o->format == PTT_JSON)) {
        rc = putchar('\n') == EOF ? -1 : 0;
    }
    if (rc != 0 || fflush(stdout) != 0) {
        return write_failed();
    }
    return 0;
}

/*
 * --input: the saved documents one after the other, each rendered as soon
 * as it is read (a watch piped in is shown as it runs). Of two or more
 * documents (a watch's), each text or JSON report is followed by an empty
 * line, as the reference's -w prints them; one document stands alone.
 */
static int do_input(const ptt_opts *o)
{
    bool is_stdin = !strcmp(o->input, "-");
    const char *name = is_stdin ? "standard input" : o->input;
    FILE *f = is_stdin ? stdin : fopen(o->input, "r");
    ptl_input *in;
    ptl_error e = { 0 };
    int rc = 0;

    if (!f) {
        fprintf(stderr, PROG ": %s: %s\n", name, strerror(errno));
        return PTL_E_USAGE;
    }
    in = ptl_input_new(f);
    if (!in) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = PTL_E_INTERNAL;
    }
    while (in) {
        ptl_data *d;
        double seconds;
        ptl_err err = ptl_input_next(in, &d, &seconds, &e);
        int w = 0;

        if (err != PTL_OK) {
            fprintf(stderr, PROG ": %s: %s\n", name, e.msg);
            rc = err;
            break;
        }
        if (!d) {
            if (ptl_input_count(in) == 0) {
                fprintf(stderr, PROG ": %s: no document\n", name);
                rc = PTL_E_USAGE;
            } else if (ptl_input_count(in) > 1 &&
                       (o->format == PTT_TEXT || o->format == PTT_JSON) &&
                       (putchar('\n') == EOF || fflush(stdout) != 0)) {
                /* a watch's documents: the reference's -w output ends so */
                rc = write_failed();
            }
            break;
        }
        if (ptl_input_count(in) > 1 &&
            (o->format == PTT_TEXT || o->format == PTT_JSON)) {
            w = putchar('\n') == EOF ? -1 : 0;
        }
        switch (o->format) {
        case PTT_TEXT:
            w = w ? w : ptl_format_text(stdout, d, seconds);
            break;
        case PTT_JSON:
            w = w ? w : ptl_format_json(stdout, d, seconds);
            break;
        case PTT_CSV:
            if (ptl_input_count(in) == 1) {
                w = ptl_format_csv_header(stdout);
            }
            w = w ? w : ptl_format_csv(stdout, d, seconds, NAN, o->input,
                                       UINT_MAX);
            break;
        case PTT_PROMETHEUS:
            if (seconds > 0) {
                fprintf(stderr, PROG ": %s: document %u: --prometheus needs "
                        "totals (\"seconds\": null), this document covers "
                        "%g s\n", name, ptl_input_count(in), seconds);
                rc = PTL_E_USAGE;
            } else {
                w = ptl_format_prometheus(stdout, d, o->input, UINT_MAX);
            }
            break;
        }
        ptl_data_free(d);
        if (w != 0 || fflush(stdout) != 0) {
            rc = write_failed();
        }
        if (rc) {
            break;
        }
    }
    ptl_input_free(in);
    if (!is_stdin) {
        fclose(f);
    }
    return rc;
}

/* -t 0 and --prometheus: totals since the last clear, once or per -t. */
static int measure_totals(run *r, ptl_reading *a)
{
    uint64_t period = (uint64_t)(r->o->interval * 1e9);
    uint64_t deadline = ptt_mono_ns();
    ptl_error e = { 0 };
    int rc;

    for (;;) {
        if (locked_read(r, a, false, &e) != PTL_OK) {
            return report(&e);
        }
        rc = print_data(r, a, 0);
        if (rc || !r->o->watch) {
            return rc;
        }
        deadline += period;
        if (deadline < ptt_mono_ns()) {
            deadline = ptt_mono_ns();
        }
        if (!sleep_until(deadline)) {
            return 0;
        }
    }
}

/*
 * One interval: clear the flags and lowest values, reading A, sleep,
 * reading B, difference. In watch mode B is the next interval's A, and the
 * flags are cleared right after its read-out.
 */
static int measure_intervals(run *r, ptl_reading *a, ptl_reading *b,
                             ptl_reading *diff)
{
    uint64_t period = (uint64_t)(r->o->interval * 1e9);
    ptl_error e = { 0 };
    uint64_t deadline;
    ptl_err rc = ptl_handle_lock(r->h, &e);

    if (rc == PTL_OK) {
        rc = ptl_block_clear_flags(r->b, true, &e);
        if (rc == PTL_OK) {
            rc = ptl_handle_read(r->h, a, &e);
        }
        ptl_handle_unlock(r->h);
    }
    if (rc == PTL_OK) {
        rc = port_begin(r, &e);
    }
    if (rc != PTL_OK) {
        return report(&e);
    }
    deadline = ptt_mono_ns();
    for (;;) {
        ptl_reading *t;
        int prc;

        deadline += period;
        if (deadline < ptt_mono_ns()) {
            deadline = ptt_mono_ns();   /* fell behind: do not catch up */
        }
        /* both directions: rx over the first half, tx over the second */
        if (r->port && r->o->port == PTT_PORT_BOTH) {
            if (!sleep_until(deadline - period / 2)) {
                return 0;
            }
            if (port_half(r, &e) != PTL_OK) {
                return report(&e);
            }
        }
        if (!sleep_until(deadline)) {
            return 0;
        }
        /* the port's next window starts before the report is written */
        if (locked_read(r, b, r->o->watch, &e) != PTL_OK ||
            port_end(r, &e) != PTL_OK ||
            (r->o->watch && port_begin(r, &e) != PTL_OK)) {
            return report(&e);
        }
        ptl_reading_diff(r->lay, a, b, diff);
        prc = print_data(r, diff, (double)(b->t_ns - a->t_ns) / 1e9);
        if (prc || !r->o->watch || stop_requested) {
            return prc;
        }
        t = a;
        a = b;
        b = t;
    }
}

static int measure(run *r)
{
    ptl_reading *a = ptl_reading_new(r->lay);
    ptl_reading *b = ptl_reading_new(r->lay);
    ptl_reading *d = ptl_reading_new(r->lay);
    int rc;

    if (!a || !b || !d) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = PTL_E_INTERNAL;
    } else if (r->o->interval == 0 || r->o->format == PTT_PROMETHEUS) {
        rc = measure_totals(r, a);
    } else {
        rc = measure_intervals(r, a, b, d);
    }
    ptl_reading_free(a);
    ptl_reading_free(b);
    ptl_reading_free(d);
    return rc;
}

/*
 * --flit: the card (the one -d names, else the first function taken
 * whose path has flit mode) and every port above it with the flit
 * capabilities, measured over the tool's intervals as the block's report
 * is: FBER and Flit->Ack latency run from each interval's start to its
 * end, the next interval starting before the report is written. What
 * the measurements changed is written back on every way out.
 */
static int flit_report(const ptt_opts *o, ptl_flit_run *run, double seconds)
{
    const ptl_flit_dev *devs;
    unsigned n;
    int rc;

    devs = ptl_flit_run_devs(run, &n);
    if (o->format == PTT_JSON) {
        rc = ptl_flit_format_json(stdout, devs, n, seconds);
    } else {
        rc = ptl_flit_format_text(stdout, devs, n, seconds);
    }
    if (rc == 0 && o->watch) {
        rc = putchar('\n') == EOF ? -1 : 0;
    }
    if (rc != 0 || fflush(stdout) != 0) {
        return write_failed();
    }
    return 0;
}

/* Sleeps to the deadline, reading the Flit Counters on the way. */
static bool flit_sleep(ptl_flit_run *run, uint64_t deadline, ptl_error *e,
                       ptl_err *rc)
{
    /* the Flit Counter wraps after 2^32 flits: 8.6 s at x16 */
    const uint64_t poll = 2000000000ull;

    for (;;) {
        uint64_t now = ptt_mono_ns();
        uint64_t until = deadline > now && deadline - now > poll
                         ? now + poll : deadline;

        if (!sleep_until(until)) {
            return false;
        }
        if (until >= deadline) {
            return true;
        }
        *rc = ptl_flit_run_poll(run, e);
        if (*rc != PTL_OK) {
            return false;
        }
    }
}

static int flit_measure(const ptt_opts *o, ptl_flit_run *run)
{
    uint64_t period = (uint64_t)(o->interval * 1e9);
    uint64_t deadline;
    ptl_error e = { 0 };
    ptl_err rc = ptl_flit_run_start(run, &e);

    if (rc != PTL_OK) {
        return report(&e);
    }
    deadline = ptt_mono_ns();
    for (;;) {
        double seconds;
        int prc;

        deadline += period;
        if (deadline < ptt_mono_ns()) {
            deadline = ptt_mono_ns();   /* fell behind: do not catch up */
        }
        if (!flit_sleep(run, deadline, &e, &rc)) {
            return rc == PTL_OK ? 0 : report(&e);
        }
        rc = ptl_flit_run_end(run, &seconds, &e);
        if (rc == PTL_OK && o->watch) {
            rc = ptl_flit_run_start(run, &e);
        }
        if (rc != PTL_OK) {
            return report(&e);
        }
        prc = flit_report(o, run, seconds);
        if (prc || !o->watch || stop_requested) {
            return prc;
        }
    }
}

static int do_flit(const ptt_opts *o, const ptl_find_opts *fo)
{
    ptl_card_info *cards;
    ptl_flit_run *run = NULL;
    ptl_error e = { 0 }, first = { 0 };
    unsigned n;
    int rc;

    if (ptl_list(fo, &cards, &n, &e) != PTL_OK) {
        return report(&e);
    }
    /* the first card whose link has flit mode; else the first's error */
    for (unsigned i = 0; i < n; i++) {
        ptl_err r = ptl_flit_run_open(cards[i].slot, o->flit_instances,
                                      true, &run, &e);

        if (r == PTL_OK) {
            r = ptl_flit_run_check(run, &e);
        }
        if (r == PTL_OK) {
            break;
        }
        ptl_flit_run_close(run);
        run = NULL;
        if (i == 0 || (r == PTL_E_PERM && first.code != PTL_E_PERM)) {
            first = e;
        }
    }
    ptl_list_free(cards, n);
    if (!run) {
        return report(&first);
    }
    rc = flit_measure(o, run);
    /*
     * FBER and latency measurement back as found, also after an error;
     * after one (a function gone) a failed write adds nothing to say
     */
    if (ptl_flit_run_restore(run, &e) != PTL_OK && rc == 0) {
        fprintf(stderr, PROG ": writing back the flit registers: %s\n",
                e.msg);
        rc = (int)e.code;
    }
    ptl_flit_run_close(run);
    return rc;
}

/*
 * --ptt: a trace of the card's TLP headers with the HiSilicon PTT that
 * covers it (the hisi_ptt perf PMU), over one interval; the records
 * summed by kind and requester as they come out of the AUX area, and
 * written to --ptt-raw's file as they are.
 */
typedef struct ptt_sink {
    ptl_ptt_sums *sums;
    FILE *raw;
} ptt_sink;

static int ptt_take(void *opaque, const void *data, size_t len)
{
    ptt_sink *k = opaque;

    ptl_ptt_sums_feed(k->sums, data, len);
    if (k->raw && fwrite(data, 1, len, k->raw) != len) {
        return -1;
    }
    return 0;
}

static int ptt_print(const ptt_opts *o, const ptl_ptt_sums *sums,
                     const ptl_ptt_info *info)
{
    int rc = o->format == PTT_JSON ? ptl_ptt_format_json(stdout, sums, info)
                                   : ptl_ptt_format_text(stdout, sums, info);

    if (rc != 0 || fflush(stdout) != 0) {
        return write_failed();
    }
    return 0;
}

static ptl_ptt_dir ptt_dir(const ptt_opts *o)
{
    return o->ptt == PTT_TRACE_OUT ? PTL_PTT_OUT : PTL_PTT_IN;
}

/* The sums of a trace whose format is told by its first bytes. */
typedef struct ptt_input_sums {
    const ptt_opts *o;
    ptl_ptt_sums *sums;
    bool started;
} ptt_input_sums;

static int ptt_input_feed(void *opaque, const void *data, size_t len)
{
    ptt_input_sums *in = opaque;
    const ptt_opts *o = in->o;

    if (!in->started && len > 0) {
        /* the format as asked for, else told by the first record's mark */
        ptl_ptt_sums_init(in->sums, o->ptt_format_given
                          ? (o->ptt_8dw ? PTL_PTT_8DW : PTL_PTT_4DW)
                          : ptl_ptt_guess_format(data, len), ptt_dir(o));
        in->started = true;
    }
    ptl_ptt_sums_feed(in->sums, data, len);
    return 0;
}

/* --ptt-input of a file perf record wrote: its AUX data summed */
static int ptt_input_perf(const ptt_opts *o, FILE *f, const uint8_t *head,
                          size_t head_len, ptl_ptt_sums *sums)
{
    ptt_input_sums in = { o, sums, false };
    ptl_perf_data_info pinfo;
    ptl_ptt_info info = { 0 };
    ptl_error e = { 0 };
    const char *name = strcmp(o->ptt_input, "-") ? o->ptt_input
                       : "standard input";

    if (ptl_perf_data_aux(f, head, head_len, name, ptt_input_feed, &in,
                          &pinfo, &e) != PTL_OK) {
        return report(&e);
    }
    if (!in.started) {
        /* no AUX data at all */
        ptl_ptt_sums_init(sums, o->ptt_format_given && o->ptt_8dw
                          ? PTL_PTT_8DW : PTL_PTT_4DW, ptt_dir(o));
    }
    info.truncated = pinfo.aux_truncated;
    info.partial = pinfo.aux_partial;
    return ptt_print(o, sums, &info);
}

/*
 * --ptt-input: records saved with --ptt-raw (or by perf), or a file that
 * perf record wrote, summed again
 */
static int do_ptt_input(const ptt_opts *o)
{
    bool is_stdin = !strcmp(o->ptt_input, "-");
    FILE *f = is_stdin ? stdin : fopen(o->ptt_input, "rb");
    static uint8_t buf[1 << 16];
    ptl_ptt_sums *sums = calloc(1, sizeof(*sums));
    ptl_ptt_info info = { 0 };
    size_t got;
    int rc;

    if (!f) {
        fprintf(stderr, PROG ": %s: %s\n", o->ptt_input, strerror(errno));
        free(sums);
        return PTL_E_USAGE;
    }
    if (!sums) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = PTL_E_INTERNAL;
        goto out;
    }
    got = fread(buf, 1, sizeof(buf), f);
    if (ptl_perf_data_magic(buf, got)) {
        rc = ptt_input_perf(o, f, buf, got, sums);
        goto out;
    }
    /* the format as asked for, else told by the first record's mark */
    ptl_ptt_sums_init(sums, o->ptt_format_given
                      ? (o->ptt_8dw ? PTL_PTT_8DW : PTL_PTT_4DW)
                      : ptl_ptt_guess_format(buf, got), ptt_dir(o));
    while (got > 0) {
        ptl_ptt_sums_feed(sums, buf, got);
        got = fread(buf, 1, sizeof(buf), f);
    }
    if (ferror(f)) {
        fprintf(stderr, PROG ": %s: %s\n", is_stdin ? "standard input"
                : o->ptt_input, strerror(errno));
        rc = PTL_E_USAGE;
        goto out;
    }
    rc = ptt_print(o, sums, &info);
out:
    free(sums);
    if (!is_stdin) {
        fclose(f);
    }
    return rc;
}

/* The card: -d's, else the first taken that a PTT covers. */
static int ptt_target(const ptl_find_opts *fo, ptl_ptt_target *t)
{
    ptl_card_info *cards;
    ptl_error e = { 0 }, first = { 0 };
    unsigned n;
    bool found = false;

    if (ptl_list(fo, &cards, &n, &e) != PTL_OK) {
        return report(&e);
    }
    for (unsigned i = 0; i < n && !found; i++) {
        ptl_err r = ptl_ptt_find(cards[i].slot, t, &e);

        found = r == PTL_OK;
        if (!found && (i == 0 || (r == PTL_E_PERM &&
                                  first.code != PTL_E_PERM))) {
            first = e;
        }
    }
    ptl_list_free(cards, n);
    return found ? 0 : report(&first);
}

static int do_ptt(const ptt_opts *o, const ptl_find_opts *fo)
{
    ptl_ptt_format fmt = o->ptt_8dw ? PTL_PTT_8DW : PTL_PTT_4DW;
    uint64_t period = (uint64_t)(o->interval * 1e9);
    /* drained often: the AUX area must never fill while the PTT writes */
    const uint64_t step = 50000000ull;
    ptl_ptt_target *t = calloc(1, sizeof(*t));
    ptl_ptt_sums *sums = calloc(1, sizeof(*sums));
    uint64_t config[PTL_PMU_CONFIG_WORDS];
    ptl_ptt_trace *tr = NULL;
    ptl_ptt_info info = { 0 };
    ptl_error e = { 0 };
    ptt_sink sink = { .sums = sums };
    uint64_t start, deadline, end;
    int rc;

    if (!t || !sums) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = PTL_E_INTERNAL;
        goto out;
    }
    rc = ptt_target(fo, t);
    if (rc) {
        goto out;
    }
    if (ptl_ptt_encode(&t->pmu.pmu, t->filter.value,
                       ptl_ptt_direction_code(ptt_dir(o), fmt),
                       PTL_PTT_TYPE_ALL, fmt, config, &e) != PTL_OK) {
        rc = report(&e);
        goto out;
    }
    if (o->ptt_raw) {
        sink.raw = fopen(o->ptt_raw, "wb");
        if (!sink.raw) {
            fprintf(stderr, PROG ": %s: %s\n", o->ptt_raw, strerror(errno));
            rc = PTL_E_USAGE;
            goto out;
        }
    }
    ptl_ptt_sums_init(sums, fmt, ptt_dir(o));
    if (ptl_ptt_trace_open(&t->pmu.pmu, config, PTL_PTT_AUX_MIN, &tr, &e)
            != PTL_OK ||
        ptl_ptt_trace_enable(tr, &e) != PTL_OK) {
        rc = report(&e);
        goto out;
    }
    start = ptt_mono_ns();
    deadline = start + period;
    /* Ctrl-C ends the trace early; what was recorded is still reported */
    for (;;) {
        uint64_t now = ptt_mono_ns();

        if (now >= deadline || !sleep_until(deadline - now > step
                                            ? now + step : deadline)) {
            break;
        }
        if (ptl_ptt_trace_drain(tr, ptt_take, &sink, &e) != PTL_OK) {
            rc = report(&e);
            goto out;
        }
    }
    /* disabling makes the driver hand over its last buffer: drain after */
    if (ptl_ptt_trace_disable(tr, &e) != PTL_OK ||
        ptl_ptt_trace_drain(tr, ptt_take, &sink, &e) != PTL_OK) {
        rc = report(&e);
        goto out;
    }
    end = ptt_mono_ns();
    if (sink.raw && fflush(sink.raw) != 0) {
        fprintf(stderr, PROG ": %s: %s\n", o->ptt_raw, strerror(errno));
        rc = PTL_E_INTERNAL;
        goto out;
    }
    info.pmu = t->pmu.pmu.name;
    info.card = t->card;
    info.filter = &t->filter;
    info.seconds = (double)(end - start) / 1e9;
    ptl_ptt_trace_flags(tr, &info.truncated, &info.partial);
    rc = ptt_print(o, sums, &info);
out:
    ptl_ptt_trace_close(tr);
    if (sink.raw && fclose(sink.raw) != 0 && rc == 0) {
        fprintf(stderr, PROG ": %s: %s\n", o->ptt_raw, strerror(errno));
        rc = PTL_E_INTERNAL;
    }
    free(sums);
    free(t);
    return rc;
}

static void install_signals(bool watch)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_sigbus;
    sigaction(SIGBUS, &sa, NULL);
    if (watch) {
        /* no SA_RESTART; ptt_sleep_until() ends at once */
        sa.sa_handler = on_stop;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
}

/*
 * --pg381: the card's PG381 traffic generator, its counters read once
 * (CAPTURE_ALL: one instant for all of them) under the card's lock, as
 * any other reader of the BAR.
 */
static int do_pg381(const ptt_opts *o, const ptl_find_opts *fo)
{
    ptl_handle *h;
    ptl_dt_node node;
    ptl_pg381 g = { 0 };
    ptl_error e = { 0 };
    ptl_err r;
    int rc;

    if (ptl_pg381_open(fo, &h, &node, &e) != PTL_OK) {
        return report(&e);
    }
    snprintf(g.slot, sizeof(g.slot), "%s", ptl_handle_card(h)->slot);
    snprintf(g.path, sizeof(g.path), "%s", node.path);
    g.bar = node.bar;
    g.offset = node.offset;
    g.clock_hz = node.clock_hz;
    snprintf(sigbus_msg, sizeof(sigbus_msg), PROG ": %s disappeared (bus "
             "error on BAR%u: removed, or its BAR is no longer mapped)\n",
             g.slot, node.bar);
    r = ptl_handle_lock(h, &e);
    if (r == PTL_OK) {
        r = ptl_pg381_read(ptl_handle_regs(h), h, &g, &e);
        ptl_handle_unlock(h);
    }
    if (r == PTL_OK) {
        r = ptl_handle_present(h, &e);
    }
    ptl_close(h);
    if (r != PTL_OK) {
        return report(&e);
    }
    rc = o->format == PTT_JSON ? ptl_pg381_format_json(stdout, &g)
                               : ptl_pg381_format_text(stdout, &g);
    if (rc != 0 || fflush(stdout) != 0) {
        return write_failed();
    }
    return 0;
}

int main(int argc, char **argv)
{
    ptt_opts o;
    ptl_find_opts fo;
    ptl_error e = { 0 };
    char msg[256];
    run r = { .o = &o };
    int rc;

    if (ptt_parse_options(argc, argv, &o, msg, sizeof(msg)) != 0) {
        fprintf(stderr, PROG ": %s (see " PROG " --help)\n", msg);
        return PTL_E_USAGE;
    }
    if (o.help) {
        ptt_print_help(stdout);
        return fflush(stdout) == 0 ? 0 : PTL_E_INTERNAL;
    }
    if (o.version) {
        printf(PROG " %s\n", ptl_version_string());
        return fflush(stdout) == 0 ? 0 : PTL_E_INTERNAL;
    }
    if (o.input) {
        return do_input(&o);
    }
    if (o.ptt_input) {
        return do_ptt_input(&o);
    }
    /*
     * --flit writes registers it must write back, also on SIGINT; --ptt
     * stops its trace and reports it
     */
    install_signals(o.watch || o.flit || o.ptt);

    ptl_find_opts_init(&fo);
    fo.device = o.device;
    fo.id_filter = o.id_filter;
    fo.extra_ids = o.nadd_ids ? o.add_ids : NULL;
    fo.bar = o.bar;
    fo.offset = o.offset;
    if (o.offset >= 0 && o.bar < 0) {
        fo.bar = 0;
    }
    if (o.list) {
        return do_list(&fo);
    }
    if (o.flit) {
        return do_flit(&o, &fo);
    }
    if (o.pg381) {
        return do_pg381(&o, &fo);
    }
    if (o.ptt) {
        return do_ptt(&o, &fo);
    }
    if (o.listen) {
        return ptt_exporter(&o, &fo);
    }
    if (o.live) {
        return ptt_live(&o, &fo);
    }

    if (ptl_open(&fo, o.index, &r.h, &e) != PTL_OK) {
        return report(&e);
    }
    r.b = ptl_handle_block(r.h);
    r.lay = ptl_block_layout(r.b);
    r.slot = ptl_handle_card(r.h)->slot;
    snprintf(sigbus_msg, sizeof(sigbus_msg), PROG ": %s disappeared (bus "
             "error on BAR%u: removed, or its BAR is no longer mapped)\n",
             r.slot, ptl_handle_node(r.h)->bar);

    if (o.port && (rc = port_open(&r)) != 0) {
        ptl_close(r.h);
        return rc;
    }
    if (o.clear) {
        rc = ptl_handle_lock(r.h, &e);
        if (rc == PTL_OK) {
            rc = ptl_handle_clear(r.h, &e);
            ptl_handle_unlock(r.h);
        }
        if (rc == PTL_OK) {
            /* the reference's words after its clear */
            printf("Counters cleared.\n");
        }
        rc = rc == PTL_OK ? 0 : report(&e);
    } else {
        rc = measure(&r);
    }
    port_close(r.port);
    ptl_close(r.h);
    return rc;
}
