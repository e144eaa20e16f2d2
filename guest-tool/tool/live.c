/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie-telemetry --live: one screen redrawn in place every interval, like
 * top. Every interval a reading is taken under the card's lock and the
 * difference to the previous one is shown: a bar of each bus's words per
 * cycle with its figures, the BRAKE reasons and the histogram bands. The
 * flags and lowest values are never cleared, so that the view can run
 * beside an exporter or a watch; the flags shown are those since the last
 * clear.
 *
 * The terminal is put in non-canonical mode without echo (ISIG kept:
 * Ctrl-C is SIGINT) on the alternate screen with the cursor hidden, and
 * every way out restores it: q, SIGINT, SIGTERM, SIGHUP, a failed reading
 * (restored before its message), a bus error on the BAR (restored by the
 * handler, which then exits) and Ctrl-Z (restored until the job goes on).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "live.h"
#include "wait.h"

#define PROG "pcie-telemetry"

/* ------------------------------------------------------------ strings */

typedef struct str {
    char *p;
    size_t len, cap;
    bool oom;
} str;

static void str_addn(str *s, const char *t, size_t n)
{
    if (s->oom) {
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
    memcpy(s->p + s->len, t, n);
    s->len += n;
    s->p[s->len] = '\0';
}

static void __attribute__((format(printf, 2, 3)))
str_addf(str *s, const char *fmt, ...)
{
    char buf[256];
    char *big = NULL;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0) {
        s->oom = true;
        return;
    }
    if ((size_t)n >= sizeof(buf)) {
        va_start(ap, fmt);
        n = vasprintf(&big, fmt, ap);
        va_end(ap);
        if (n < 0) {
            s->oom = true;
            return;
        }
    }
    str_addn(s, big ? big : buf, n);
    free(big);
}

static void str_pad(str *s, size_t width)
{
    while (s->len < width && !s->oom) {
        str_addn(s, " ", 1);
    }
}

/* The lines of a frame before they are fitted to the terminal. */
typedef struct lines {
    char **v;
    unsigned n, cap;
    bool oom;
} lines;

/* Takes the text of s (s is empty afterwards). */
static void lines_take(lines *ls, str *s)
{
    if (s->oom || ls->oom) {
        ls->oom = true;
        free(s->p);
        *s = (str) { 0 };
        return;
    }
    if (ls->n == ls->cap) {
        unsigned cap = ls->cap ? ls->cap * 2 : 32;
        char **v = realloc(ls->v, cap * sizeof(char *));

        if (!v) {
            ls->oom = true;
            free(s->p);
            *s = (str) { 0 };
            return;
        }
        ls->v = v;
        ls->cap = cap;
    }
    ls->v[ls->n++] = s->p ? s->p : strdup("");
    ls->oom |= ls->v[ls->n - 1] == NULL;
    *s = (str) { 0 };
}

static void __attribute__((format(printf, 2, 3)))
lines_addf(lines *ls, const char *fmt, ...)
{
    str s = { 0 };
    char *t = NULL;
    va_list ap;

    va_start(ap, fmt);
    if (vasprintf(&t, fmt, ap) < 0) {
        t = NULL;
    }
    va_end(ap);
    s.p = t;
    s.oom = t == NULL;
    s.len = t ? strlen(t) : 0;
    lines_take(ls, &s);
}

static void lines_free(lines *ls)
{
    for (unsigned i = 0; i < ls->n; i++) {
        free(ls->v[i]);
    }
    free(ls->v);
}

/* Length of label and items on one line (one space after the label). */
static size_t flow_width(const char *label, char *const *items, unsigned n)
{
    size_t w = strlen(label);

    for (unsigned i = 0; i < n; i++) {
        w += (i ? 2 : 1) + strlen(items[i]);
    }
    return w;
}

/*
 * A label and its items on as few lines of cols as they take, two spaces
 * between items, later lines indented by 4.
 */
static void lines_flow(lines *ls, unsigned cols, const char *label,
                       char *const *items, unsigned n)
{
    str s = { 0 };
    bool first = true;

    str_addf(&s, "%s", label);
    for (unsigned i = 0; i < n; i++) {
        size_t w = strlen(items[i]);

        if (!first && s.len + 2 + w > cols) {
            lines_take(ls, &s);
            str_addf(&s, "    %s", items[i]);
        } else {
            str_addf(&s, "%s%s", first ? " " : "  ", items[i]);
        }
        first = false;
    }
    lines_take(ls, &s);
}

/* ------------------------------------------------------------- frames */

/* Columns right of the bar: words %, Gbps, Mpps, stall % */
#define FIGS_WIDTH  (7 + 1 + 8 + 1 + 8 + 1 + 7)
#define BAR_MIN     8

static void fmt_seconds(char *buf, size_t len, double s)
{
    if (s >= 1 || s <= 0) {
        snprintf(buf, len, "%.2f s", s);
    } else if (s >= 1e-3) {
        snprintf(buf, len, "%.1f ms", s * 1e3);
    } else {
        snprintf(buf, len, "%.1f us", s * 1e6);
    }
}

/* A figure right-aligned in width, "-" when it does not exist. */
static void fmt_fig(char *buf, size_t len, int width, int prec, double v)
{
    if (isnan(v) || isinf(v)) {
        snprintf(buf, len, "%*s", width, "-");
    } else {
        snprintf(buf, len, "%*.*f", width, prec, v);
    }
}

static double share(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : NAN;
}

static void fmt_share(char *buf, size_t len, const char *label, double pct)
{
    if (isnan(pct)) {
        snprintf(buf, len, "%s -", label);
    } else {
        snprintf(buf, len, "%s %.1f%%", label, pct);
    }
}

/* "250.0", or "249.9-250.1" when the endpoints' clocks differ. */
static void fmt_mhz_range(char *buf, size_t len, double lo, double hi)
{
    char a[32], b[32];

    if (isnan(lo)) {
        snprintf(buf, len, "-");
        return;
    }
    snprintf(a, sizeof(a), "%.1f", lo);
    snprintf(b, sizeof(b), "%.1f", hi);
    if (!strcmp(a, b)) {
        snprintf(buf, len, "%s", a);
    } else {
        snprintf(buf, len, "%s-%s", a, b);
    }
}

static void render_header(lines *ls, const ptt_live_view *v)
{
    const ptl_data *d = v->data;
    double plo = NAN, phi = NAN, dlo = NAN, dhi = NAN;
    char secs[32], pcie[64], dma[64];

    fmt_seconds(secs, sizeof(secs), v->seconds);
    for (unsigned e = 0; e < d->nendpoints && v->seconds > 0; e++) {
        double p = d->endpoints[e].pcie_cycles / v->seconds / 1e6;
        double q = d->endpoints[e].dma_cycles / v->seconds / 1e6;

        plo = isnan(plo) || p < plo ? p : plo;
        phi = isnan(phi) || p > phi ? p : phi;
        dlo = isnan(dlo) || q < dlo ? q : dlo;
        dhi = isnan(dhi) || q > dhi ? q : dhi;
    }
    fmt_mhz_range(pcie, sizeof(pcie), plo, phi);
    fmt_mhz_range(dma, sizeof(dma), dlo, dhi);
    lines_addf(ls, "%s | measured over %s | q: quit", v->title, secs);
    lines_addf(ls, "PCIe clock %s MHz | DMA clock %s MHz | flags since the "
               "last clear: %s", pcie, dma,
               d->lost_deltas && d->readout_overrun
               ? "LOST DELTAS, READ-OUT OVERRUN"
               : d->lost_deltas ? "LOST DELTAS"
               : d->readout_overrun ? "READ-OUT OVERRUN" : "none");
}

static void render_bus(lines *ls, const ptl_data *d, const ptl_endpoint *ep,
                       const ptl_bus *bus, double seconds, size_t name_w,
                       unsigned bar_w)
{
    double region_pct[64];
    ptl_bus_figures f;
    char w[32], g[32], m[32], st[32];
    str s = { 0 };

    ptl_bus_compute(ep, bus, d->config.item_bytes, seconds, &f,
                    bus->nregions <= 64 ? region_pct : NULL);
    fmt_fig(w, sizeof(w), 7, 1, f.words_pct);
    fmt_fig(g, sizeof(g), 8, 2, f.gbps);
    fmt_fig(m, sizeof(m), 8, 3, f.mpps);
    fmt_fig(st, sizeof(st), 7, 1, f.mfb_stall_pct);
    str_addf(&s, "  %-*s ", (int)name_w, bus->name);
    if (bar_w) {
        double u = isnan(f.words_pct) ? 0 : f.words_pct / 100;
        unsigned fill;

        u = u < 0 ? 0 : u > 1 ? 1 : u;
        fill = (unsigned)(u * bar_w + 0.5);
        str_addn(&s, "[", 1);
        for (unsigned i = 0; i < bar_w; i++) {
            str_addn(&s, i < fill ? "#" : ".", 1);
        }
        str_addn(&s, "] ", 2);
    }
    str_addf(&s, "%s %s %s %s", w, g, m, st);
    lines_take(ls, &s);
}

/*
 * The BRAKE reasons: all of them when they fit on one line, else the
 * ones that braked.
 */
static void render_brakes(lines *ls, const ptl_endpoint *ep, unsigned cols)
{
    char **items = calloc(ep->nbrakes + 1, sizeof(char *));
    unsigned n = 0;

    if (!items) {
        ls->oom = true;
        return;
    }
    for (unsigned pass = 0; pass < 2; pass++) {
        for (unsigned k = 0; k < ep->nbrakes; k++) {
            const char *name = ptl_reason_name(k);
            char label[32], item[96];

            if (pass && !ep->brakes[k]) {
                continue;
            }
            if (name) {
                snprintf(label, sizeof(label), "%s", name);
            } else {
                snprintf(label, sizeof(label), "reason %u", k);
            }
            fmt_share(item, sizeof(item), label,
                      share(ep->brakes[k], ep->pcie_cycles));
            items[n] = strdup(item);
            ls->oom |= items[n++] == NULL;
        }
        if (pass || ls->oom ||
            flow_width("  brakes:", items, n) <= cols) {
            break;
        }
        while (n) {
            free(items[--n]);
        }
    }
    if (!ls->oom) {
        if (n) {
            lines_flow(ls, cols, "  brakes:", items, n);
        } else {
            lines_addf(ls, "  brakes: none");
        }
    }
    while (n) {
        free(items[--n]);
    }
    free(items);
}

/* Per histogram: how much is free now, and the time in each band. */
static void render_hists(lines *ls, const ptl_data *d,
                         const ptl_endpoint *ep, unsigned cols)
{
    char **items = calloc(ep->nbands + 1, sizeof(char *));

    if (!items) {
        ls->oom = true;
        return;
    }
    for (unsigned h = 0; h < ep->nhists && !ls->oom; h++) {
        char label[96];

        if (h == 0) {
            snprintf(label, sizeof(label), "  PTC tags free %u/%u, time at",
                     ep->tags_free, d->config.tag_capacity);
        } else if (h == 1) {
            snprintf(label, sizeof(label), "  PTC FIFO free %u/%u, time at",
                     ep->stfifo_free, d->config.stfifo_capacity);
        } else {
            snprintf(label, sizeof(label), "  resource %u, time at", h);
        }
        for (unsigned k = 0; k < ep->nbands; k++) {
            const char *band = ptl_band_name(k);
            char name[16], item[48];

            if (band) {
                snprintf(name, sizeof(name), "%s", band);
            } else {
                snprintf(name, sizeof(name), "band %u", k);
            }
            fmt_share(item, sizeof(item), name,
                      share(ep->hists[(size_t)h * ep->nbands + k],
                            ep->pcie_cycles));
            items[k] = strdup(item);
            ls->oom |= items[k] == NULL;
        }
        if (!ls->oom) {
            lines_flow(ls, cols, label, items, ep->nbands);
        }
        for (unsigned k = 0; k < ep->nbands; k++) {
            free(items[k]);
            items[k] = NULL;
        }
    }
    free(items);
}

static void render_data(lines *ls, const ptt_live_view *v, unsigned cols)
{
    const ptl_data *d = v->data;
    size_t name_w = 0, fixed;
    unsigned bar_w = 0;

    for (unsigned e = 0; e < d->nendpoints; e++) {
        for (unsigned b = 0; b < d->endpoints[e].nbuses; b++) {
            size_t n = strlen(d->endpoints[e].buses[b].name);

            name_w = n > name_w ? n : name_w;
        }
    }
    /* "  name [bar] figures"; without room for a bar, the figures only */
    fixed = 2 + name_w + 1 + 2 + 1 + FIGS_WIDTH;
    if (cols >= fixed + BAR_MIN) {
        bar_w = cols - fixed;
    }
    render_header(ls, v);
    for (unsigned e = 0; e < d->nendpoints && !ls->oom; e++) {
        const ptl_endpoint *ep = &d->endpoints[e];
        str s = { 0 };
        size_t figs_at;

        lines_addf(ls, "%s", "");
        str_addf(&s, "Endpoint %u, link %s", ep->index,
                 ep->link_up ? "up" : "DOWN");
        figs_at = 2 + name_w + 1 + (bar_w ? bar_w + 3 : 0);
        if (s.len < figs_at) {
            str_pad(&s, figs_at);
        } else {
            str_addn(&s, " ", 1);
        }
        str_addf(&s, "%7s %8s %8s %7s", "words %", "Gbps", "Mpps",
                 "stall %");
        lines_take(ls, &s);
        for (unsigned b = 0; b < ep->nbuses; b++) {
            render_bus(ls, d, ep, &ep->buses[b], v->seconds, name_w, bar_w);
        }
        render_brakes(ls, ep, cols);
        render_hists(ls, d, ep, cols);
    }
}

/* One row: its text cut at the last column, the rest of the row cleared. */
static void put_row(str *s, unsigned row, const char *text, unsigned cols)
{
    size_t n = strlen(text);

    if (row == 1) {
        str_addf(s, "\033[H");
    } else {
        str_addf(s, "\033[%u;1H", row);
    }
    n = n < cols ? n : cols;
    str_addn(s, text, n);
    /* at the last column the cursor stays on it: EL would erase it */
    if (n < cols) {
        str_addf(s, "\033[K");
    }
}

char *ptt_live_render(const ptt_live_view *v, unsigned rows, unsigned cols)
{
    lines ls = { 0 };
    str s = { 0 };
    unsigned shown, used;

    rows = rows ? rows : 1;
    cols = cols ? cols : 1;
    if (v->data) {
        render_data(&ls, v, cols);
    } else {
        char secs[32];

        fmt_seconds(secs, sizeof(secs), v->interval);
        lines_addf(&ls, "%s | q: quit", v->title);
        lines_addf(&ls, "measuring... (the first interval of %s)", secs);
    }
    if (ls.oom) {
        lines_free(&ls);
        return NULL;
    }
    shown = ls.n <= rows ? ls.n : rows - 1;
    /* synchronized update: terminals that know it show whole frames */
    str_addf(&s, "\033[?2026h");
    for (unsigned i = 0; i < shown; i++) {
        put_row(&s, i + 1, ls.v[i], cols);
    }
    used = shown;
    if (shown < ls.n) {
        char more[64];

        snprintf(more, sizeof(more), "... %u more lines", ls.n - shown);
        put_row(&s, ++used, more, cols);
    }
    if (used < rows) {
        str_addf(&s, "\033[%u;1H\033[J", used + 1);
    }
    str_addf(&s, "\033[?2026l");
    lines_free(&ls);
    if (s.oom) {
        free(s.p);
        return NULL;
    }
    return s.p;
}

/* ----------------------------------------------------------- terminal */

static const char enter_seq[] = "\033[?1049h\033[?25l";
static const char leave_seq[] = "\033[?25h\033[?1049l";

/*
 * What the terminal looked like before, and whether it is changed: read
 * by the signal handlers, so written only with the signals that reach
 * them blocked (SIGBUS comes from a BAR access, never meanwhile).
 */
static struct termios tty_saved, tty_raw;
static volatile sig_atomic_t tty_termios_set, tty_screen_set;
static int tty_fd = -1, tty_out = -1;
static const char *tty_sigbus_msg;

static volatile sig_atomic_t live_stop, live_resized, live_suspended,
                             live_continued;

/* Async-signal-safe; false with errno on a write error. */
static bool write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);

        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w < 0 && errno == EAGAIN) {
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };

            poll(&pfd, 1, -1);
            continue;
        }
        if (w <= 0) {
            errno = w < 0 ? errno : EIO;
            return false;
        }
        p += w;
        n -= w;
    }
    return true;
}

/* Async-signal-safe: the settings saved first, then the screen. */
static void tty_leave(void)
{
    int saved_errno = errno;

    if (tty_termios_set) {
        tcsetattr(tty_fd, TCSANOW, &tty_saved);
        tty_termios_set = 0;
    }
    if (tty_screen_set) {
        write_all(tty_out, leave_seq, strlen(leave_seq));
        tty_screen_set = 0;
    }
    errno = saved_errno;
}

/*
 * Non-canonical without echo, alternate screen, cursor hidden. Saves the
 * settings unless they are saved already (a second call after SIGCONT
 * only applies the view's again).
 */
static bool tty_enter(void)
{
    if (!tty_termios_set && tty_fd >= 0 &&
        tcgetattr(tty_fd, &tty_saved) == 0) {
        tty_raw = tty_saved;
        tty_raw.c_lflag &= ~(ICANON | ECHO);
        tty_raw.c_cc[VMIN] = 1;
        tty_raw.c_cc[VTIME] = 0;
        tty_termios_set = 1;
    }
    if (tty_termios_set) {
        tcsetattr(tty_fd, TCSANOW, &tty_raw);
    }
    tty_screen_set = 1;
    return write_all(tty_out, enter_seq, strlen(enter_seq));
}

static void on_live_signal(int sig)
{
    switch (sig) {
    case SIGWINCH:
        live_resized = 1;
        break;
    case SIGTSTP:
        live_suspended = 1;
        break;
    case SIGCONT:
        live_continued = 1;
        break;
    default:
        live_stop = 1;
    }
}

/* A BAR that faults: the terminal back first, then the tool's message. */
static void on_live_sigbus(int sig)
{
    tty_leave();
    if (tty_sigbus_msg) {
        write_all(STDERR_FILENO, tty_sigbus_msg, strlen(tty_sigbus_msg));
    }
    _exit(PTL_E_GONE);
}

static const int live_signals[] = {
    SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGTSTP, SIGCONT,
};
#define NSIGNALS (sizeof(live_signals) / sizeof(live_signals[0]))

typedef struct signals_saved {
    struct sigaction old[NSIGNALS], old_bus;
    sigset_t old_mask;
} signals_saved;

/*
 * The view's handlers (without SA_RESTART), its signals blocked except
 * while waiting in ppoll() with *wait_mask, so that none is missed.
 */
static void signals_install(signals_saved *sv, sigset_t *wait_mask)
{
    struct sigaction sa;
    sigset_t block;

    sigemptyset(&block);
    for (unsigned i = 0; i < NSIGNALS; i++) {
        sigaddset(&block, live_signals[i]);
    }
    sigprocmask(SIG_BLOCK, &block, &sv->old_mask);
    *wait_mask = sv->old_mask;
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_live_signal;
    for (unsigned i = 0; i < NSIGNALS; i++) {
        sigaction(live_signals[i], &sa, &sv->old[i]);
        sigdelset(wait_mask, live_signals[i]);
    }
    sa.sa_handler = on_live_sigbus;
    sigaction(SIGBUS, &sa, &sv->old_bus);
}

static void signals_restore(const signals_saved *sv)
{
    sigaction(SIGBUS, &sv->old_bus, NULL);
    for (unsigned i = 0; i < NSIGNALS; i++) {
        sigaction(live_signals[i], &sv->old[i], NULL);
    }
    sigprocmask(SIG_SETMASK, &sv->old_mask, NULL);
}

/* Ctrl-Z: the terminal as it was while the job is stopped. */
static void suspend(void)
{
    struct sigaction dfl, mine;
    sigset_t tstp;

    tty_leave();
    memset(&dfl, 0, sizeof(dfl));
    sigemptyset(&dfl.sa_mask);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGTSTP, &dfl, &mine);
    sigemptyset(&tstp);
    sigaddset(&tstp, SIGTSTP);
    raise(SIGTSTP);
    /* stops here until SIGCONT */
    sigprocmask(SIG_UNBLOCK, &tstp, NULL);
    sigprocmask(SIG_BLOCK, &tstp, NULL);
    sigaction(SIGTSTP, &mine, NULL);
    tty_enter();
}

const char *ptt_live_unusable(int out_fd, const char *term)
{
    if (!isatty(out_fd)) {
        return "standard output is not one";
    }
    if (!term) {
        return "TERM is not set";
    }
    if (!*term) {
        return "TERM is empty";
    }
    if (!strcmp(term, "dumb")) {
        return "TERM is dumb";
    }
    return NULL;
}

/* ---------------------------------------------------------------- loop */

typedef struct live {
    const ptt_live_source *src;
    double interval;
    int out_fd;
    unsigned rows, cols;
    ptl_data *data;             /* the last interval, kept for redraws */
    double seconds;
} live;

static void window_size(live *l)
{
    struct winsize ws;

    if (ioctl(l->out_fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
        l->rows = ws.ws_row;
        l->cols = ws.ws_col;
    } else {
        l->rows = 24;
        l->cols = 80;
    }
}

/* 0, or an errno value */
static int draw(live *l)
{
    ptt_live_view v = {
        .title = l->src->title, .interval = l->interval,
        .data = l->data, .seconds = l->seconds,
    };
    char *frame = ptt_live_render(&v, l->rows, l->cols);
    int err = 0;

    if (!frame) {
        return ENOMEM;
    }
    if (!write_all(l->out_fd, frame, strlen(frame))) {
        err = errno;
    }
    free(frame);
    return err;
}

static ptl_err take(const ptt_live_source *src, ptl_reading *r,
                    ptl_error *e)
{
    ptl_err rc = src->lock(src->opaque, e);

    if (rc == PTL_OK) {
        rc = src->read(src->opaque, r, e);
        src->unlock(src->opaque);
    }
    return rc;
}

/*
 * Whether the keys read ask to leave (q or Q); Ctrl-L asks for a redraw.
 * The escape sequences of other keys are skipped (F2 is ESC O Q).
 */
static bool keys(const char *buf, size_t n, bool *redraw)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = buf[i];

        if (c == 0x1b) {
            if (i + 1 < n && buf[i + 1] == '[') {
                for (i += 2; i < n && !(buf[i] >= 0x40 && buf[i] <= 0x7e);
                     i++) {
                    /* parameters of a CSI sequence */
                }
            } else {
                i++;            /* ESC O x, or Alt with a key */
                if (i < n && buf[i] == 'O') {
                    i++;
                }
            }
            continue;
        }
        if (c == 'q' || c == 'Q') {
            return true;
        }
        if (c == 0x0c) {
            *redraw = true;
        }
    }
    return false;
}

int ptt_live_run(const ptt_live_source *src, double interval, int in_fd,
                 int out_fd)
{
    const ptl_layout *lay = ptl_block_layout(src->block);
    ptl_reading *a = ptl_reading_new(lay);
    ptl_reading *b = ptl_reading_new(lay);
    ptl_reading *diff = ptl_reading_new(lay);
    uint64_t period = (uint64_t)(interval * 1e9);
    live l = { .src = src, .interval = interval, .out_fd = out_fd };
    ptl_error e = { 0 };
    ptl_err err = PTL_OK;
    int out_err = 0;
    bool in_open = in_fd >= 0, redraw = false;
    signals_saved sv;
    sigset_t wait_mask;
    uint64_t deadline;

    if (!a || !b || !diff) {
        ptl_reading_free(a);
        ptl_reading_free(b);
        ptl_reading_free(diff);
        fprintf(stderr, PROG ": out of memory\n");
        return PTL_E_INTERNAL;
    }
    live_stop = live_resized = live_suspended = live_continued = 0;
    tty_fd = in_fd >= 0 && isatty(in_fd) ? in_fd : out_fd;
    tty_out = out_fd;
    tty_sigbus_msg = src->sigbus_msg;
    signals_install(&sv, &wait_mask);

    if (!tty_enter()) {
        out_err = errno;
    }
    window_size(&l);
    out_err = out_err ? out_err : draw(&l);
    if (!out_err) {
        err = take(src, a, &e);
    }
    deadline = ptt_mono_ns() + period;
    while (err == PTL_OK && !out_err && !live_stop) {
        struct pollfd pfd = { .fd = in_fd, .events = POLLIN };
        struct timespec ts;
        uint64_t now;
        char buf[64];
        ssize_t n;

        if (live_suspended) {
            live_suspended = 0;
            suspend();
            live_resized = 1;
        }
        if (live_continued) {
            live_continued = 0;
            tty_enter();
            live_resized = 1;
        }
        if (live_resized) {
            live_resized = 0;
            window_size(&l);
            redraw = true;
        }
        if (redraw) {
            redraw = false;
            out_err = draw(&l);
            continue;
        }
        now = ptt_mono_ns();
        if (now >= deadline) {
            ptl_reading *t;

            err = take(src, b, &e);
            if (err != PTL_OK) {
                break;
            }
            ptl_reading_diff(lay, a, b, diff);
            ptl_data_free(l.data);
            l.data = ptl_data_decode(lay, diff);
            if (!l.data) {
                out_err = ENOMEM;
                break;
            }
            l.seconds = (double)(int64_t)(b->t_ns - a->t_ns) / 1e9;
            t = a;
            a = b;
            b = t;
            deadline += period;
            if (deadline < ptt_mono_ns()) {
                deadline = ptt_mono_ns();   /* fell behind: no catching up */
            }
            out_err = draw(&l);
            continue;
        }
        ts.tv_sec = (deadline - now) / 1000000000u;
        ts.tv_nsec = (deadline - now) % 1000000000u;
        if (ppoll(in_open ? &pfd : NULL, in_open, &ts, &wait_mask) <= 0) {
            continue;           /* the deadline, or a signal */
        }
        if (pfd.revents & POLLNVAL) {
            in_open = false;
            continue;
        }
        n = read(in_fd, buf, sizeof(buf));
        if (n > 0) {
            if (keys(buf, n, &redraw)) {
                break;
            }
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
            in_open = false;    /* no more keys; signals still end it */
        }
    }
    tty_leave();
    signals_restore(&sv);
    ptl_data_free(l.data);
    ptl_reading_free(a);
    ptl_reading_free(b);
    ptl_reading_free(diff);
    if (err != PTL_OK) {
        fprintf(stderr, PROG ": %s\n", e.msg);
        return e.code ? (int)e.code : PTL_E_INTERNAL;
    }
    if (out_err && !live_stop) {
        if (out_err == ENOMEM) {
            fprintf(stderr, PROG ": out of memory\n");
        } else {
            fprintf(stderr, PROG ": cannot write the output: %s\n",
                    strerror(out_err));
        }
        return PTL_E_INTERNAL;
    }
    return 0;
}

/* ----------------------------------------------------------- the tool */

static ptl_err handle_lock(void *h, ptl_error *e)
{
    return ptl_handle_lock(h, e);
}

static void handle_unlock(void *h)
{
    ptl_handle_unlock(h);
}

static ptl_err handle_read(void *h, ptl_reading *r, ptl_error *e)
{
    return ptl_handle_read(h, r, e);
}

void ptt_live_title(char *buf, size_t len, const ptl_find_opts *fo,
                    unsigned index, const char *slot,
                    const ptl_node_info *node)
{
    /* what ptl_open takes for a place given by hand */
    if (fo->bar >= 0 || fo->offset >= 0) {
        snprintf(buf, len, PROG " %s BAR%u 0x%llx", slot, node->bar,
                 (unsigned long long)node->offset);
    } else {
        snprintf(buf, len, PROG " %s block %u", slot, index);
    }
}

int ptt_live(const ptt_opts *o, const ptl_find_opts *fo)
{
    const char *why = ptt_live_unusable(STDOUT_FILENO, getenv("TERM"));
    ptt_live_source src = {
        .lock = handle_lock, .unlock = handle_unlock, .read = handle_read,
    };
    char title[128], sigbus_msg[256];
    ptl_handle *h;
    ptl_error e = { 0 };
    int rc;

    if (why) {
        fprintf(stderr, PROG ": --live needs a terminal: %s\n", why);
        return PTL_E_USAGE;
    }
    if (ptl_open(fo, o->index, &h, &e) != PTL_OK) {
        fprintf(stderr, PROG ": %s\n", e.msg);
        return e.code ? (int)e.code : PTL_E_INTERNAL;
    }
    ptt_live_title(title, sizeof(title), fo, o->index,
                   ptl_handle_card(h)->slot, ptl_handle_node(h));
    snprintf(sigbus_msg, sizeof(sigbus_msg), PROG ": %s disappeared (bus "
             "error on BAR%u: removed, or its BAR is no longer mapped)\n",
             ptl_handle_card(h)->slot, ptl_handle_node(h)->bar);
    src.block = ptl_handle_block(h);
    src.title = title;
    src.opaque = h;
    src.sigbus_msg = sigbus_msg;
    rc = ptt_live_run(&src, o->interval, STDIN_FILENO, STDOUT_FILENO);
    ptl_close(h);
    return rc;
}
