/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie-telemetry --listen: a Prometheus exporter.
 *
 * The blocks are found once at start (every card and block, or those -d,
 * -i and -D select). Each scrape of /metrics takes one SNAPSHOT of each
 * block under its card's lock, as every reading of the tool does, so that
 * scrapes and other readers never tear each other's readings. Only
 * SNAPSHOT and READ_SEL are written, never a clear bit. Counters are
 * extended to 64 bits (ptl_counter_ext), so that Prometheus sees a reset
 * only when someone clears the card's counters. A block that cannot be
 * read is reported with ndk_pcie_telemetry_up 0 and opened again at a
 * later scrape (at most every EXP_RETRY_NS).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exporter.h"
#include "http.h"
#include "wait.h"

#define PROG "pcie-telemetry"

typedef struct exp_block {
    char device[16];            /* PCI slot, the label device */
    unsigned index;             /* the label index */
    ptl_find_opts fo;           /* finds this card again */
    ptl_handle *h;              /* NULL while the block is down */
    const ptl_layout *lay;
    ptl_counter_ext *ext;
    ptl_reading *rd;
    ptl_data *data;             /* of the last scrape, NULL if down */
    bool up;                    /* at the last scrape (true at start) */
    bool warned_interval;
    uint64_t retry_ns;          /* down: no new open before (monotonic) */
} exp_block;

/*
 * A block that is down is opened again at most this often: an open scans
 * the PCI functions and reads the card's device tree, milliseconds of
 * CPU that a scrape every second should not pay while a card is away.
 */
#define EXP_RETRY_NS  (5 * 1000000000ull)

typedef struct exporter {
    exp_block *blocks;
    unsigned n;
    ptl_prom_block *prom;       /* [n] */
} exporter;

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    stop_requested = 1;
}

/*
 * A BAR access that faults (the card went away and its mapping was
 * revoked) ends the reading of that block, not the exporter: the handler
 * jumps back to the scrape, which reports the block down.
 */
static sigjmp_buf bar_fault;
static volatile sig_atomic_t in_bar_access;

static void on_sigbus(int sig)
{
    static const char msg[] = PROG ": bus error outside a BAR access\n";
    ssize_t r;

    if (in_bar_access) {
        siglongjmp(bar_fault, 1);
    }
    r = write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)r;
    _exit(PTL_E_INTERNAL);
}

static void block_close(exp_block *b)
{
    ptl_close(b->h);
    b->h = NULL;
    ptl_counter_ext_free(b->ext);
    b->ext = NULL;
    ptl_reading_free(b->rd);
    b->rd = NULL;
    b->warned_interval = false;
}

/*
 * Map the block's BAR, then open the block through it. The handle is the
 * block's before the first BAR access, so that a fault of one (see
 * block_read) can close it, dropping its mapping and the card's lock.
 */
static ptl_err block_open(exp_block *b, ptl_error *e)
{
    ptl_find_opts fo = b->fo;
    ptl_err rc;

    fo.device = b->device;
    rc = ptl_open_mapped(&fo, b->index, &b->h, e);
    if (rc == PTL_OK) {
        rc = ptl_handle_attach(b->h, e);
    }
    if (rc != PTL_OK) {
        block_close(b);
        return rc;
    }
    b->lay = ptl_block_layout(ptl_handle_block(b->h));
    b->ext = ptl_counter_ext_new(b->lay);
    b->rd = ptl_reading_new(b->lay);
    if (!b->ext || !b->rd) {
        block_close(b);
        return ptl_set_error(e, PTL_E_INTERNAL, "out of memory");
    }
    return PTL_OK;
}

/* Say once on stderr (the journal) when a block goes down or comes back. */
static void block_state(exp_block *b, bool up, const char *why)
{
    if (up != b->up) {
        if (up) {
            fprintf(stderr, PROG ": %s block %u: up again\n", b->device,
                    b->index);
        } else {
            fprintf(stderr, PROG ": %s block %u: down: %s\n", b->device,
                    b->index, why);
        }
    }
    b->up = up;
}

/*
 * Warn once when scrapes come too far apart for the 64-bit extension to
 * stay exact at the clock rates measured from the cycle counters.
 */
static void check_interval(exp_block *b, ptl_ext_result res)
{
    double span, limit;

    if (res != PTL_EXT_CONTINUED || b->warned_interval) {
        return;
    }
    limit = ptl_counter_ext_limit(b->ext, &span);
    if (span > limit) {
        fprintf(stderr, PROG ": %s block %u: scrapes %.1f s apart; "
                "%u-bit counters stay exact only up to %.1f s apart\n",
                b->device, b->index, span, b->lay->cnt_width, limit);
        b->warned_interval = true;
    }
}

/*
 * Open the block if it is down (at most every EXP_RETRY_NS) and, with
 * take, take one reading under the card's lock. A bus error on the BAR,
 * in the open or the reading, comes back here through siglongjmp and
 * closes the block.
 */
static ptl_err block_read(exp_block *b, bool take, ptl_error *e)
{
    volatile ptl_err rc = PTL_OK;
    volatile bool locked = false;

    if (!b->h && ptt_mono_ns() < b->retry_ns) {
        return ptl_set_error(e, PTL_E_GONE, "%s: opened again in a few "
                             "seconds", b->device);
    }
    if (sigsetjmp(bar_fault, 1) == 0) {
        in_bar_access = 1;
        if (!b->h) {
            rc = block_open(b, e);
        }
        if (rc == PTL_OK && take) {
            rc = ptl_handle_lock(b->h, e);
            locked = rc == PTL_OK;
        }
        if (locked) {
            rc = ptl_handle_read(b->h, b->rd, e);
        }
        in_bar_access = 0;
    } else {
        in_bar_access = 0;
        rc = ptl_set_error(e, PTL_E_GONE, "%s disappeared (bus error on "
                           "its BAR)", b->device);
    }
    if (locked && b->h) {
        ptl_handle_unlock(b->h);
    }
    /* a lock held too long is no reason to drop the mapping */
    if (rc != PTL_OK && rc != PTL_E_BUSY) {
        bool was_open = b->h && b->rd;

        block_close(b);
        /* a block that was read before is tried again at once */
        b->retry_ns = was_open ? 0 : ptt_mono_ns() + EXP_RETRY_NS;
    }
    return rc;
}

/* One block's reading for this scrape; false when it is down. */
static bool block_scrape(exp_block *b, ptl_error *e)
{
    ptl_ext_result res;

    ptl_data_free(b->data);
    b->data = NULL;
    if (block_read(b, true, e) != PTL_OK) {
        return false;
    }
    res = ptl_counter_ext_update(b->ext, b->rd);
    b->data = ptl_data_decode(b->lay, b->rd);
    if (!b->data) {
        ptl_set_error(e, PTL_E_INTERNAL, "out of memory");
        return false;
    }
    if (res == PTL_EXT_RESTARTED) {
        fprintf(stderr, PROG ": %s block %u: counters cleared\n", b->device,
                b->index);
    }
    check_interval(b, res);
    return true;
}

static void scrape(exporter *x, ptt_http_response *resp)
{
    char *body = NULL;
    size_t len = 0;
    FILE *f;

    for (unsigned i = 0; i < x->n; i++) {
        exp_block *b = &x->blocks[i];
        uint64_t t0 = ptt_mono_ns();
        ptl_error e = { 0 };
        bool ok = block_scrape(b, &e);

        block_state(b, ok, e.msg);
        x->prom[i].data = b->data;
        x->prom[i].scrape_seconds = (double)(ptt_mono_ns() - t0) / 1e9;
    }
    f = open_memstream(&body, &len);
    if (!f) {
        resp->status = 500;
        return;
    }
    if (ptl_format_prometheus_blocks(f, x->prom, x->n, true) != 0) {
        fclose(f);
        free(body);
        resp->status = 500;
        return;
    }
    fclose(f);
    resp->status = 200;
    resp->body = body;
    resp->len = len;
    resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

static void index_page(exporter *x, ptt_http_response *resp)
{
    char *body = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&body, &len);

    if (!f) {
        resp->status = 500;
        return;
    }
    fprintf(f, "<!DOCTYPE html>\n<html><head><title>pcie-telemetry "
            "exporter</title></head>\n<body><h1>pcie-telemetry exporter"
            "</h1>\n<p><a href=\"/metrics\">Metrics</a> of %u telemetry "
            "block%s:</p>\n<ul>\n", x->n, x->n == 1 ? "" : "s");
    for (unsigned i = 0; i < x->n; i++) {
        fprintf(f, "<li>%s block %u</li>\n", x->blocks[i].device,
                x->blocks[i].index);
    }
    fprintf(f, "</ul>\n<p>pcie-telemetry %s</p>\n</body></html>\n",
            ptl_version_string());
    fclose(f);
    resp->status = 200;
    resp->body = body;
    resp->len = len;
    resp->content_type = "text/html; charset=utf-8";
}

static void handle(void *opaque, const char *path, ptt_http_response *resp)
{
    exporter *x = opaque;

    if (!strcmp(path, "/metrics")) {
        scrape(x, resp);
    } else if (!strcmp(path, "/")) {
        index_page(x, resp);
    } else {
        resp->status = 404;
    }
}

static bool add_block(exporter *x, const ptl_find_opts *fo,
                      const char *slot, unsigned index)
{
    exp_block *nb = realloc(x->blocks, (x->n + 1) * sizeof(*nb));
    exp_block *b;

    if (!nb) {
        return false;
    }
    x->blocks = nb;
    b = &nb[x->n++];
    memset(b, 0, sizeof(*b));
    snprintf(b->device, sizeof(b->device), "%s", slot);
    b->index = index;
    b->fo = *fo;                /* its device: b->device, when opened */
    b->up = true;
    return true;
}

/*
 * Every block of every matching card, or the -i-th of each; with
 * --bar/--offset the one block there on each card. NULL-free error in e
 * when there is none: what ptl_open says about the first choice.
 */
static ptl_err find_blocks(exporter *x, const ptt_opts *o,
                           const ptl_find_opts *fo, ptl_error *e)
{
    ptl_card_info *cards;
    unsigned ncards;
    ptl_err rc = ptl_list(fo, &cards, &ncards, e);

    if (rc != PTL_OK) {
        return rc;
    }
    for (unsigned c = 0; c < ncards; c++) {
        const ptl_card_info *ci = &cards[c];

        if (fo->offset >= 0) {
            if (!add_block(x, fo, ci->slot, 0)) {
                rc = PTL_E_INTERNAL;
            }
            continue;
        }
        for (unsigned k = 0; k < ci->nnodes && rc == PTL_OK; k++) {
            if ((!o->index_given || k == o->index) &&
                !add_block(x, fo, ci->slot, k)) {
                rc = PTL_E_INTERNAL;
            }
        }
    }
    ptl_list_free(cards, ncards);
    if (rc != PTL_OK) {
        return ptl_set_error(e, rc, "out of memory");
    }
    if (x->n == 0) {
        ptl_handle *h;

        /* the reason, in the words the other modes use */
        rc = ptl_open(fo, o->index, &h, e);
        if (rc == PTL_OK) {
            ptl_close(h);
            return ptl_set_error(e, PTL_E_NO_NODE, "no telemetry block "
                                 "found");
        }
        return rc;
    }
    return PTL_OK;
}

static void install_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop;        /* no SA_RESTART: poll() returns */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_sigbus;
    sa.sa_flags = SA_NODEFER;       /* siglongjmp leaves the handler */
    sigaction(SIGBUS, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sa.sa_flags = 0;
    sigaction(SIGPIPE, &sa, NULL);
}

int ptt_exporter(const ptt_opts *o, const ptl_find_opts *fo)
{
    ptt_http_limits limits = PTT_HTTP_LIMITS_DEFAULT;
    exporter x = { 0 };
    ptl_error e = { 0 };
    char msg[512];
    bool usage = false;
    ptt_http *srv;
    int rc = 0;

    srv = ptt_http_new(o->listen, &limits, msg, sizeof(msg), &usage);
    if (!srv) {
        fprintf(stderr, PROG ": %s\n", msg);
        return usage ? PTL_E_USAGE : PTL_E_INTERNAL;
    }
    if (find_blocks(&x, o, fo, &e) != PTL_OK) {
        fprintf(stderr, PROG ": %s\n", e.msg);
        ptt_http_free(srv);
        free(x.blocks);
        return e.code ? (int)e.code : PTL_E_INTERNAL;
    }
    x.prom = calloc(x.n, sizeof(*x.prom));
    if (!x.prom) {
        fprintf(stderr, PROG ": out of memory\n");
        ptt_http_free(srv);
        free(x.blocks);
        return PTL_E_INTERNAL;
    }
    install_signals();
    for (unsigned i = 0; i < x.n; i++) {
        exp_block *b = &x.blocks[i];

        x.prom[i].device = b->device;
        x.prom[i].index = b->index;
        if (block_read(b, false, &e) != PTL_OK) {
            block_state(b, false, e.msg);
        }
    }
    fprintf(stderr, PROG ": serving %u telemetry block%s at http://%s/"
            "metrics\n", x.n, x.n == 1 ? "" : "s", ptt_http_address(srv));
    if (ptt_http_serve(srv, handle, &x, &stop_requested, -1) != 0) {
        fprintf(stderr, PROG ": %s: %s\n", ptt_http_address(srv),
                strerror(errno));
        rc = PTL_E_INTERNAL;
    }
    for (unsigned i = 0; i < x.n; i++) {
        block_close(&x.blocks[i]);
        ptl_data_free(x.blocks[i].data);
    }
    ptt_http_free(srv);
    free(x.prom);
    free(x.blocks);
    return rc;
}
