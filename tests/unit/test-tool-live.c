/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie-telemetry --live. The view runs in a child on the slave of a
 * pseudo-terminal, reading the QEMU-free model of the block driven by the
 * test pattern (test-ptl-support.h); the test plays the terminal with a
 * small VT100 interpreter and checks the screen, a resize, the keys and
 * signals that end it and that every way out gives the terminal back.
 * Also: frames of many sizes fed to the interpreter directly, and the tool
 * refusing --live without a terminal.
 *
 * The model's clock moves by STEP_NS from one reading to the next, at
 * moments when no delta is on its way, so each interval holds whole drain
 * windows and the pattern's words per cycle exactly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <math.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "live.h"
#include "test-ptl-support.h"
#include "test-support.h"

/* 8 PCIe and 4 DMA drain windows of the default clocks */
#define STEP_NS     81920u
#define INTERVAL    0.05
#define WAIT_US     (20 * G_USEC_PER_SEC)
#define TITLE       "pcie-telemetry test-card block 0"
#define GONE_MSG    "test-card disappeared (registers read all ones)"
#define SIGBUS_MSG  "pcie-telemetry: test-card disappeared (bus error)\n"
#define LEAVE       "\033[?25h\033[?1049l"

/* -------------------------------------------------- VT100 interpreter */

/*
 * Enough of a VT100 for the view: printable ASCII, CR, LF, CUP, EL, ED
 * and the private modes 1049 (alternate screen), 25 (cursor) and 2026
 * (synchronized update, which brackets each frame). Writing past the last
 * column wraps as a terminal with autowrap does, and is recorded as too
 * wide; a line feed or wrap on the last row scrolls and is recorded as
 * too long, and so is a CUP outside the screen. EL or ED with the cursor
 * on the last column just written erases that character in xterm: also
 * recorded.
 */
typedef struct Vt {
    unsigned rows, cols;
    char *cell;
    unsigned r, c;
    bool wrap_pending;
    bool entered, alt, cursor_visible;
    bool too_wide, too_long, bad_erase;     /* in the current frame */
    unsigned frames;            /* frames completed */
    unsigned fitting_run;       /* fitting frames completed in a row */
    char *first_frame;          /* the screen after the first frame */
    int state;
    char param[64];
    unsigned nparam;
} Vt;

enum { VT_GROUND, VT_ESC, VT_CSI };

static void vt_init(Vt *vt, unsigned rows, unsigned cols)
{
    memset(vt, 0, sizeof(*vt));
    vt->rows = rows;
    vt->cols = cols;
    vt->cell = g_malloc(rows * cols);
    memset(vt->cell, ' ', rows * cols);
    vt->cursor_visible = true;
}

static void vt_free(Vt *vt)
{
    g_free(vt->cell);
    g_free(vt->first_frame);
}

/* A terminal made smaller or larger keeps its top left corner. */
static void vt_resize(Vt *vt, unsigned rows, unsigned cols)
{
    char *cell = g_malloc(rows * cols);

    memset(cell, ' ', rows * cols);
    for (unsigned r = 0; r < rows && r < vt->rows; r++) {
        memcpy(cell + r * cols, vt->cell + r * vt->cols, MIN(cols, vt->cols));
    }
    g_free(vt->cell);
    vt->cell = cell;
    vt->rows = rows;
    vt->cols = cols;
    vt->r = MIN(vt->r, rows - 1);
    vt->c = MIN(vt->c, cols - 1);
    vt->wrap_pending = false;
    vt->fitting_run = 0;
}

/* Row r without its trailing blanks. */
static char *vt_row(const Vt *vt, unsigned r)
{
    unsigned n = vt->cols;

    while (n > 0 && vt->cell[r * vt->cols + n - 1] == ' ') {
        n--;
    }
    return g_strndup(vt->cell + r * vt->cols, n);
}

static char *vt_text(const Vt *vt)
{
    GString *s = g_string_new(NULL);

    for (unsigned r = 0; r < vt->rows; r++) {
        g_autofree char *row = vt_row(vt, r);

        g_string_append_printf(s, "%s\n", row);
    }
    return g_string_free(s, false);
}

static void vt_erase(Vt *vt, unsigned r, unsigned from, unsigned to)
{
    for (unsigned c = from; c < to && c < vt->cols; c++) {
        vt->cell[r * vt->cols + c] = ' ';
    }
}

static void vt_newline(Vt *vt)
{
    if (vt->r + 1 < vt->rows) {
        vt->r++;
        return;
    }
    vt->too_long = true;
    memmove(vt->cell, vt->cell + vt->cols, (vt->rows - 1) * vt->cols);
    vt_erase(vt, vt->rows - 1, 0, vt->cols);
}

static void vt_put(Vt *vt, char ch)
{
    if (vt->wrap_pending) {
        vt->too_wide = true;
        vt->wrap_pending = false;
        vt->c = 0;
        vt_newline(vt);
    }
    vt->cell[vt->r * vt->cols + vt->c] = ch;
    if (vt->c + 1 == vt->cols) {
        vt->wrap_pending = true;
    } else {
        vt->c++;
    }
}

static void vt_mode(Vt *vt, unsigned mode, bool set)
{
    switch (mode) {
    case 1049:
        vt->alt = set;
        vt->entered |= set;
        memset(vt->cell, ' ', vt->rows * vt->cols);
        break;
    case 25:
        vt->cursor_visible = set;
        break;
    case 2026:
        if (set) {
            vt->too_wide = vt->too_long = vt->bad_erase = false;
            break;
        }
        vt->frames++;
        if (vt->too_wide || vt->too_long || vt->bad_erase) {
            vt->fitting_run = 0;
        } else {
            vt->fitting_run++;
        }
        if (vt->frames == 1) {
            vt->first_frame = vt_text(vt);
        }
        break;
    }
}

static void vt_csi(Vt *vt, char final)
{
    bool priv = vt->nparam && vt->param[0] == '?';
    unsigned p[8] = { 0 }, np = 1;

    for (unsigned i = priv; i < vt->nparam && np <= 8; i++) {
        if (vt->param[i] == ';') {
            np++;
        } else if (np <= 8) {
            p[np - 1] = p[np - 1] * 10 + (vt->param[i] - '0');
        }
    }
    switch (final) {
    case 'H':
    case 'f': {
        unsigned row = p[0] ? p[0] : 1, col = p[1] ? p[1] : 1;

        if (row > vt->rows) {
            vt->too_long = true;
            row = vt->rows;
        }
        if (col > vt->cols) {
            vt->too_wide = true;
            col = vt->cols;
        }
        vt->r = row - 1;
        vt->c = col - 1;
        vt->wrap_pending = false;
        break;
    }
    case 'K':
        vt->bad_erase |= vt->wrap_pending;
        if (p[0] == 0) {
            vt_erase(vt, vt->r, vt->c, vt->cols);
        } else if (p[0] == 1) {
            vt_erase(vt, vt->r, 0, vt->c + 1);
        } else {
            vt_erase(vt, vt->r, 0, vt->cols);
        }
        break;
    case 'J':
        vt->bad_erase |= vt->wrap_pending;
        if (p[0] == 2) {
            memset(vt->cell, ' ', vt->rows * vt->cols);
        } else if (p[0] == 0) {
            vt_erase(vt, vt->r, vt->c, vt->cols);
            for (unsigned r = vt->r + 1; r < vt->rows; r++) {
                vt_erase(vt, r, 0, vt->cols);
            }
        }
        break;
    case 'h':
    case 'l':
        if (priv) {
            for (unsigned i = 0; i < np && i < 8; i++) {
                vt_mode(vt, p[i], final == 'h');
            }
        }
        break;
    }
}

static void vt_feed(Vt *vt, const char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char ch = buf[i];

        switch (vt->state) {
        case VT_GROUND:
            if (ch == '\033') {
                vt->state = VT_ESC;
            } else if (ch == '\r') {
                vt->c = 0;
                vt->wrap_pending = false;
            } else if (ch == '\n') {
                vt_newline(vt);
            } else if ((unsigned char)ch >= 0x20 && ch != 0x7f) {
                vt_put(vt, ch);
            }
            break;
        case VT_ESC:
            vt->state = ch == '[' ? VT_CSI : VT_GROUND;
            vt->nparam = 0;
            break;
        case VT_CSI:
            if (ch >= 0x40 && ch <= 0x7e) {
                vt_csi(vt, ch);
                vt->state = VT_GROUND;
            } else if (vt->nparam < sizeof(vt->param)) {
                vt->param[vt->nparam++] = ch;
            }
            break;
        }
    }
}

/* ------------------------------------------------- the model's source */

typedef enum Fail { FAIL_NONE, FAIL_GONE, FAIL_SIGBUS } Fail;

/*
 * The block on the model, each reading STEP_NS after the last. Records
 * readings taken without the lock and COMMAND writes other than SNAPSHOT
 * (the view must never clear flags or lowest values).
 */
typedef struct Model {
    PtlBench *bench;
    ptl_block *blk;
    unsigned readings;
    unsigned fail_at;           /* that reading fails (from 1); 0: none */
    Fail fail;
    bool locked, misuse;
} Model;

static bool model_clears(PtlBench *b)
{
    for (unsigned i = 0; i < b->nlog; i++) {
        if (b->log[i].off == PTM_REG_COMMAND &&
            (b->log[i].val & ~PTM_CMD_SNAPSHOT)) {
            return true;
        }
    }
    return false;
}

static ptl_err model_lock(void *opaque, ptl_error *err)
{
    Model *m = opaque;

    /* a write since the last unlock was made without the lock */
    m->misuse |= m->locked || m->bench->writes > 0;
    m->locked = true;
    ptl_bench_at(m->bench, PTL_T_FIRST + (uint64_t)m->readings * STEP_NS);
    ptl_bench_reset_counts(m->bench);
    return PTL_OK;
}

static void model_unlock(void *opaque)
{
    Model *m = opaque;

    m->misuse |= !m->locked || m->bench->nlog >= PTL_BENCH_LOG ||
                 model_clears(m->bench);
    m->locked = false;
    ptl_bench_reset_counts(m->bench);
}

static ptl_err model_read(void *opaque, ptl_reading *r, ptl_error *err)
{
    Model *m = opaque;

    m->misuse |= !m->locked;
    if (++m->readings == m->fail_at) {
        if (m->fail == FAIL_SIGBUS) {
            raise(SIGBUS);
        }
        return ptl_set_error(err, PTL_E_GONE, GONE_MSG);
    }
    return ptl_block_read(m->blk, r, err);
}

/* The pattern, with RQ's period kept at 8 cycles on 4-region buses. */
static void model_pattern(const PtmConfig *cfg, PtmPatternParams *par)
{
    ptl_test_pattern(par);
    if (cfg->pcie_rq_mfb_regions == 4) {
        par->bus[PTM_BUS_RQ].gap = 4;
    }
}

/* In the child: the view on its terminal; exit code 97 for a misuse. */
static int child_main(const PtmConfig *cfg, unsigned fail_at, Fail fail)
{
    PtmPatternParams par;
    Model m = { .fail_at = fail_at, .fail = fail };
    ptt_live_source src = {
        .title = TITLE, .lock = model_lock, .unlock = model_unlock,
        .read = model_read, .opaque = &m, .sigbus_msg = SIGBUS_MSG,
    };
    int rc;

    model_pattern(cfg, &par);
    m.bench = ptl_bench_new(cfg, &par);
    m.blk = ptl_bench_open(m.bench);
    ptl_bench_reset_counts(m.bench);
    src.block = m.blk;
    rc = ptt_live_run(&src, INTERVAL, STDIN_FILENO, STDOUT_FILENO);
    return m.misuse ? 97 : rc;
}

/*
 * Words per cycle of a bus of the pattern, from its parameters: a frame
 * of B bytes is ceil(B / item) items in ceil(items / items per region)
 * regions, ceil(regions / regions per word) words, in a period of stall +
 * words + gap cycles.
 */
static double pattern_load(const PtmPatternBus *pb, unsigned regions,
                           unsigned region_bytes, unsigned item_bytes)
{
    unsigned items = (pb->frame_bytes + item_bytes - 1) / item_bytes;
    unsigned per_region = region_bytes / item_bytes;
    unsigned nreg = (items + per_region - 1) / per_region;
    unsigned words = (nreg + regions - 1) / regions;

    return (double)words / (pb->stall + words + pb->gap);
}

/* --------------------------------------------------- the child's pty */

typedef struct Live {
    pid_t pid;
    int master;
    int slave;                  /* kept open: its settings outlive the child */
    Vt vt;
    GString *out;               /* everything the child wrote */
} Live;

static void live_start(Live *l, const PtmConfig *cfg, unsigned rows,
                       unsigned cols, unsigned fail_at, Fail fail)
{
    struct winsize ws = { .ws_row = rows, .ws_col = cols };

    l->pid = forkpty(&l->master, NULL, NULL, &ws);
    g_assert_cmpint(l->pid, >=, 0);
    if (l->pid == 0) {
        _exit(child_main(cfg, fail_at, fail));
    }
    l->slave = open(ptsname(l->master), O_RDWR | O_NOCTTY);
    g_assert_cmpint(l->slave, >=, 0);
    vt_init(&l->vt, rows, cols);
    l->out = g_string_new(NULL);
}

static void live_free(Live *l)
{
    close(l->master);
    close(l->slave);
    vt_free(&l->vt);
    g_string_free(l->out, true);
}

/* Reads what is there within timeout_ms; false at the end of the output. */
static bool live_pump(Live *l, int timeout_ms)
{
    struct pollfd p = { .fd = l->master, .events = POLLIN };
    char buf[4096];
    ssize_t n;

    if (poll(&p, 1, timeout_ms) <= 0) {
        return true;
    }
    n = read(l->master, buf, sizeof(buf));
    if (n <= 0) {
        return n < 0 && (errno == EINTR || errno == EAGAIN);
    }
    vt_feed(&l->vt, buf, n);
    g_string_append_len(l->out, buf, n);
    return true;
}

typedef bool (*LiveCond)(Live *l, const void *arg);

/* Reads the child's output until cond holds; false after WAIT_US. */
static bool live_until(Live *l, LiveCond cond, const void *arg)
{
    gint64 end = g_get_monotonic_time() + WAIT_US;

    while (!cond(l, arg)) {
        gint64 left = end - g_get_monotonic_time();

        if (left <= 0 || !live_pump(l, (int)MIN(left / 1000 + 1, 100))) {
            return cond(l, arg);
        }
    }
    return true;
}

static bool cond_data_frame(Live *l, const void *arg)
{
    g_autofree char *row = l->vt.frames ? vt_row(&l->vt, 0) : NULL;

    return row && strstr(row, "measured over");
}

static bool cond_frames(Live *l, const void *arg)
{
    return l->vt.frames >= *(const unsigned *)arg;
}

static bool cond_fitting(Live *l, const void *arg)
{
    return l->vt.fitting_run >= *(const unsigned *)arg;
}

/* The child's wait status once it has exited; all its output read. */
static int live_wait(Live *l)
{
    gint64 end = g_get_monotonic_time() + WAIT_US;
    int status;
    pid_t r;

    while ((r = waitpid(l->pid, &status, WNOHANG)) == 0) {
        if (g_get_monotonic_time() > end) {
            kill(l->pid, SIGKILL);
            waitpid(l->pid, &status, 0);
            g_error("the view did not exit; its output: %s", l->out->str);
        }
        live_pump(l, 10);
    }
    g_assert_cmpint(r, ==, l->pid);
    while (live_pump(l, 0)) {
        struct pollfd p = { .fd = l->master, .events = POLLIN };

        if (poll(&p, 1, 0) <= 0) {
            break;
        }
    }
    return status;
}

static void assert_exited(int status, int code)
{
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, code);
}

/* The slave's settings are the view's: no echo, non-canonical, ISIG. */
static void assert_view_mode(Live *l)
{
    struct termios t;

    g_assert_cmpint(tcgetattr(l->slave, &t), ==, 0);
    g_assert_false(t.c_lflag & ICANON);
    g_assert_false(t.c_lflag & ECHO);
    g_assert_true(t.c_lflag & ISIG);
}

/* The terminal given back: settings, cursor, main screen. */
static void assert_restored(Live *l)
{
    struct termios t;

    g_assert_cmpint(tcgetattr(l->slave, &t), ==, 0);
    g_assert_true(t.c_lflag & ICANON);
    g_assert_true(t.c_lflag & ECHO);
    g_assert_true(l->vt.entered);
    g_assert_false(l->vt.alt);
    g_assert_true(l->vt.cursor_visible);
}

static void live_wait_data(Live *l)
{
    if (!live_until(l, cond_data_frame, NULL)) {
        g_error("no frame with data; output: %s", l->out->str);
    }
}

/* Leaves with q: exit 0, the terminal back as the last thing written. */
static void live_quit(Live *l, const char *key)
{
    g_assert_cmpint(write(l->master, key, strlen(key)), ==, strlen(key));
    assert_exited(live_wait(l), 0);
    g_assert_true(g_str_has_suffix(l->out->str, LEAVE));
    assert_restored(l);
}

/* -------------------------------------------------------------- tests */

typedef struct BusLine {
    const char *name;
    double load;
} BusLine;

/* The row that starts with prefix at or after row *from, or -1. */
static int find_row(const Vt *vt, unsigned from, const char *prefix)
{
    for (unsigned r = from; r < vt->rows; r++) {
        g_autofree char *row = vt_row(vt, r);

        if (g_str_has_prefix(row, prefix)) {
            return r;
        }
    }
    return -1;
}

/* The bar of a bus row: its cells, and those filled. */
static void parse_bar(const char *row, unsigned *width, unsigned *filled)
{
    const char *open = strchr(row, '[');
    const char *close = open ? strchr(open, ']') : NULL;
    const char *p;

    g_assert_nonnull(close);
    *width = close - open - 1;
    for (p = open + 1; p < close && *p == '#'; p++) {
    }
    *filled = p - open - 1;
    for (; p < close; p++) {
        g_assert_cmpint(*p, ==, '.');
    }
}

/*
 * Every endpoint and every bus of the card by name, each with a bar
 * within one cell of the pattern's words per cycle.
 */
static void check_buses(const Vt *vt, const PtmConfig *cfg)
{
    PtmPatternParams par;
    unsigned ib = cfg->mfb_item_bytes;
    int r = 0;

    model_pattern(cfg, &par);
    for (unsigned e = 0; e < cfg->pcie_endpoints; e++) {
        g_autofree char *head = g_strdup_printf("Endpoint %u, link up", e);
        g_autoptr(GPtrArray) buses = g_ptr_array_new_with_free_func(g_free);
        double load[2 + 2 * 16];

        g_ptr_array_add(buses, g_strdup("PTC -> PCIe (RQ)"));
        load[0] = pattern_load(&par.bus[PTM_BUS_RQ], cfg->pcie_rq_mfb_regions,
                               cfg->pcie_rq_mfb_region_bytes, ib);
        g_ptr_array_add(buses, g_strdup("PCIe -> PTC (RC)"));
        load[1] = pattern_load(&par.bus[PTM_BUS_RC], cfg->pcie_rc_mfb_regions,
                               cfg->pcie_rc_mfb_region_bytes, ib);
        for (unsigned p = 0; p < cfg->dma_ports; p++) {
            g_ptr_array_add(buses, g_strdup_printf("DMA%u -> PTC (UP)", p));
            load[2 + 2 * p] = pattern_load(&par.bus[PTM_BUS_UP],
                                           cfg->dma_up_mfb_regions,
                                           cfg->dma_up_mfb_region_bytes, ib);
            g_ptr_array_add(buses, g_strdup_printf("PTC -> DMA%u (DOWN)", p));
            load[3 + 2 * p] = pattern_load(&par.bus[PTM_BUS_DOWN],
                                           cfg->dma_down_mfb_regions,
                                           cfg->dma_down_mfb_region_bytes, ib);
        }
        r = find_row(vt, r, head);
        g_assert_cmpint(r, >=, 0);
        for (unsigned b = 0; b < buses->len; b++) {
            g_autofree char *want = g_strdup_printf("  %s ",
                                                    (char *)buses->pdata[b]);
            g_autofree char *row = vt_row(vt, ++r);
            unsigned width, filled;

            g_assert_true(g_str_has_prefix(row, want));
            parse_bar(row, &width, &filled);
            g_assert_cmpuint(width, >=, 20);
            g_assert_cmpfloat(fabs(filled - load[b] * width), <=, 1.0);
        }
    }
}

/* A card of 2 endpoints and 2 DMA ports on a 100 x 40 terminal. */
static void test_screen(void)
{
    PtmConfig cfg;
    g_autofree char *row0 = NULL, *row1 = NULL, *clocks = NULL;
    Live l;

    ptm_test_make_cfg(&ptm_test_geos[1], &cfg);
    live_start(&l, &cfg, 40, 100, 0, FAIL_NONE);
    live_wait_data(&l);
    /* the first frame is drawn before the first interval ends */
    g_assert_nonnull(strstr(l.vt.first_frame, "measuring..."));
    g_assert_true(l.vt.alt);
    g_assert_false(l.vt.cursor_visible);
    assert_view_mode(&l);

    row0 = vt_row(&l.vt, 0);
    row1 = vt_row(&l.vt, 1);
    g_assert_true(g_str_has_prefix(row0, TITLE " | measured over "));
    /* the clocks measured over whole windows are the model's */
    clocks = g_strdup_printf("PCIe clock %.1f MHz | DMA clock %.1f MHz | "
                             "flags since the last clear: none",
                             cfg.pcie_clk_hz / 1e6, cfg.dma_clk_hz / 1e6);
    g_assert_cmpstr(row1, ==, clocks);
    check_buses(&l.vt, &cfg);
    /* BRAKE reasons 0 and 2 on a quarter of the cycles, bands 1 and 3 */
    g_assert_cmpint(find_row(&l.vt, 0, "  brakes: no free PCIe tag 25.0%  "
                             "no room for completions 25.0%"), >, 0);
    g_assert_cmpint(find_row(&l.vt, 0, "  PTC tags free 20/256, time at "
                             "none 0.0%  <=1/8 100.0%  <=1/2 0.0%  rest "
                             "0.0%"), >, 0);
    g_assert_cmpint(find_row(&l.vt, 0, "  PTC FIFO free 700/1024, time at "
                             "none 0.0%  <=1/8 0.0%  <=1/2 0.0%  rest "
                             "100.0%"), >, 0);
    live_quit(&l, "q");
    live_free(&l);
}

/* Smaller: the view fits the new size; larger: the bars grow. */
static void test_resize(void)
{
    struct winsize small = { .ws_row = 8, .ws_col = 50 };
    struct winsize big = { .ws_row = 30, .ws_col = 140 };
    const unsigned two = 2;
    g_autofree char *row0 = NULL, *last = NULL;
    PtmConfig cfg;
    unsigned more;
    Live l;

    ptm_config_default(&cfg);
    live_start(&l, &cfg, 40, 100, 0, FAIL_NONE);
    live_wait_data(&l);
    check_buses(&l.vt, &cfg);

    g_assert_cmpint(ioctl(l.master, TIOCSWINSZ, &small), ==, 0);
    vt_resize(&l.vt, small.ws_row, small.ws_col);
    /* frames drawn for the old size may still come; then none too wide */
    if (!live_until(&l, cond_fitting, &two)) {
        g_error("no frame fits 8 x 50; output: %s", l.out->str);
    }
    row0 = vt_row(&l.vt, 0);
    last = vt_row(&l.vt, small.ws_row - 1);
    g_assert_true(g_str_has_prefix(row0, "pcie-telemetry test-card"));
    g_assert_cmpint(sscanf(last, "... %u more lines", &more), ==, 1);
    g_assert_cmpuint(more, >=, 2);

    g_assert_cmpint(ioctl(l.master, TIOCSWINSZ, &big), ==, 0);
    vt_resize(&l.vt, big.ws_row, big.ws_col);
    if (!live_until(&l, cond_fitting, &two)) {
        g_error("no frame fits 30 x 140; output: %s", l.out->str);
    }
    check_buses(&l.vt, &cfg);
    g_assert_cmpint(find_row(&l.vt, 0, "... "), <, 0);
    live_quit(&l, "q");
    live_free(&l);
}

/* F2 (ESC O Q) and arrows are not Q; Q leaves as q does. */
static void test_keys(void)
{
    PtmConfig cfg;
    unsigned frames;
    int status;
    Live l;

    ptm_config_default(&cfg);
    live_start(&l, &cfg, 24, 80, 0, FAIL_NONE);
    live_wait_data(&l);
    g_assert_cmpint(write(l.master, "\033OQ\033[A\033[1;5Q", 12), ==, 12);
    frames = l.vt.frames + 3;
    g_assert_true(live_until(&l, cond_frames, &frames));
    g_assert_cmpint(waitpid(l.pid, &status, WNOHANG), ==, 0);
    g_assert_true(l.vt.alt);
    live_quit(&l, "Q");
    live_free(&l);
}

/* Ctrl-C reaches the view as SIGINT (ISIG kept) and ends it with 0. */
static void test_ctrl_c(void)
{
    PtmConfig cfg;
    Live l;

    ptm_config_default(&cfg);
    live_start(&l, &cfg, 24, 80, 0, FAIL_NONE);
    live_wait_data(&l);
    g_assert_cmpint(write(l.master, "\003", 1), ==, 1);
    assert_exited(live_wait(&l), 0);
    g_assert_true(g_str_has_suffix(l.out->str, LEAVE));
    assert_restored(&l);
    live_free(&l);
}

static void test_sigterm(void)
{
    PtmConfig cfg;
    Live l;

    ptm_config_default(&cfg);
    live_start(&l, &cfg, 24, 80, 0, FAIL_NONE);
    live_wait_data(&l);
    g_assert_cmpint(kill(l.pid, SIGTERM), ==, 0);
    assert_exited(live_wait(&l), 0);
    g_assert_true(g_str_has_suffix(l.out->str, LEAVE));
    assert_restored(&l);
    live_free(&l);
}

/* A failed reading: the terminal back first, then the message and code. */
static void test_gone(void)
{
    PtmConfig cfg;
    const char *leave, *msg;
    Live l;

    ptm_config_default(&cfg);
    live_start(&l, &cfg, 24, 80, 3, FAIL_GONE);
    assert_exited(live_wait(&l), PTL_E_GONE);
    assert_restored(&l);
    leave = g_strrstr(l.out->str, LEAVE);
    msg = strstr(l.out->str, "pcie-telemetry: " GONE_MSG "\r\n");
    g_assert_nonnull(leave);
    g_assert_nonnull(msg);
    g_assert_true(leave < msg);
    /* it had shown data before */
    g_assert_nonnull(strstr(l.out->str, "measured over"));
    live_free(&l);
}

/* A bus error on the BAR: restored by the handler, which exits 11. */
static void test_sigbus(void)
{
    PtmConfig cfg;
    const char *leave, *msg;
    Live l;

    ptm_config_default(&cfg);
    live_start(&l, &cfg, 24, 80, 3, FAIL_SIGBUS);
    assert_exited(live_wait(&l), PTL_E_GONE);
    assert_restored(&l);
    leave = g_strrstr(l.out->str, LEAVE);
    msg = strstr(l.out->str, "test-card disappeared (bus error)\r\n");
    g_assert_nonnull(leave);
    g_assert_nonnull(msg);
    g_assert_true(leave < msg);
    live_free(&l);
}

/*
 * Frames of every width from 1 to 150 columns and many heights, fed to a
 * terminal of that size: never wider or longer than it, no character
 * erased by EL at the last column; a cut frame shows the lines that fit
 * and says how many more there are.
 */
static void test_render_sizes(void)
{
    static const unsigned heights[] = { 1, 2, 3, 5, 8, 13, 24, 40 };
    PtmConfig cfg;
    PtmPatternParams par;
    PtlBench *b;
    ptl_block *blk;
    ptl_reading *r1, *r2;
    ptl_error err;
    ptl_data *d;
    const ptl_layout *lay;

    ptm_test_make_cfg(&ptm_test_geos[1], &cfg);
    model_pattern(&cfg, &par);
    b = ptl_bench_new(&cfg, &par);
    blk = ptl_bench_open(b);
    lay = ptl_block_layout(blk);
    r1 = ptl_reading_new(lay);
    r2 = ptl_reading_new(lay);
    ptl_bench_at(b, PTL_T_FIRST);
    g_assert_cmpint(ptl_block_read(blk, r1, &err), ==, PTL_OK);
    ptl_bench_at(b, PTL_T_FIRST + STEP_NS);
    g_assert_cmpint(ptl_block_read(blk, r2, &err), ==, PTL_OK);
    ptl_reading_diff(lay, r1, r2, r2);
    d = ptl_data_decode(lay, r2);
    g_assert_nonnull(d);

    for (unsigned cols = 1; cols <= 150; cols++) {
        ptt_live_view v = {
            .title = TITLE, .interval = 1, .data = d,
            .seconds = STEP_NS / 1e9,
        };
        g_autofree char *full = ptt_live_render(&v, 1000, cols);
        unsigned total;
        Vt big;

        /* the whole frame: its lines end where ED clears the rest */
        vt_init(&big, 1000, cols);
        vt_feed(&big, full, strlen(full));
        g_assert_false(big.too_wide || big.too_long || big.bad_erase);
        g_assert_cmpuint(big.frames, ==, 1);
        total = big.r;
        g_assert_cmpuint(total, >=, 2 + 2 * (1 + 6 + 3));

        for (unsigned h = 0; h < G_N_ELEMENTS(heights); h++) {
            unsigned rows = heights[h];
            g_autofree char *frame = NULL;
            unsigned shown = total <= rows ? total : rows - 1;
            Vt vt;

            frame = ptt_live_render(&v, rows, cols);
            vt_init(&vt, rows, cols);
            vt_feed(&vt, frame, strlen(frame));
            g_assert_false(vt.too_wide || vt.too_long || vt.bad_erase);
            g_assert_cmpuint(vt.frames, ==, 1);
            for (unsigned r = 0; r < shown; r++) {
                g_autofree char *want = vt_row(&big, r);
                g_autofree char *got = vt_row(&vt, r);

                g_assert_cmpstr(got, ==, want);
            }
            if (shown < total) {
                g_autofree char *want = g_strdup_printf(
                    "... %u more lines", total - shown);
                g_autofree char *got = vt_row(&vt, rows - 1);

                want[MIN(strlen(want), cols)] = '\0';
                g_assert_cmpstr(got, ==, g_strchomp(want));
            }
            vt_free(&vt);
        }
        vt_free(&big);
    }

    /* the frame before the first interval ends */
    for (unsigned cols = 1; cols <= 60; cols++) {
        static const char measuring[] =
            "measuring... (the first interval of 1.00 s)";
        ptt_live_view v = { .title = TITLE, .interval = 1 };
        g_autofree char *frame = ptt_live_render(&v, 2, cols);
        g_autofree char *row1 = NULL;
        g_autofree char *want = g_strndup(measuring, cols);
        Vt vt;

        vt_init(&vt, 2, cols);
        vt_feed(&vt, frame, strlen(frame));
        g_assert_false(vt.too_wide || vt.too_long || vt.bad_erase);
        row1 = vt_row(&vt, 1);
        g_assert_cmpstr(row1, ==, g_strchomp(want));
        vt_free(&vt);
    }
    ptl_data_free(d);
    ptl_reading_free(r1);
    ptl_reading_free(r2);
    ptl_block_close(blk);
    ptl_bench_free(b);
}

/* ------------------------------------------------ the tool, refusing */

static void test_unusable(void)
{
    int fds[2];

    g_assert_cmpint(pipe(fds), ==, 0);
    g_assert_cmpstr(ptt_live_unusable(fds[1], "xterm"), ==,
                    "standard output is not one");
    close(fds[0]);
    close(fds[1]);
}

/*
 * The title names the block by its index, or by its BAR and offset when
 * --bar/--offset placed it (the node ptl_open then fills in).
 */
static void test_title(void)
{
    ptl_node_info tree = { .path = "/firmware/mi_bus0/pcie_telemetry1",
                           .bar = 0, .offset = 0x8000 };
    ptl_node_info by_hand = { .path = "(--bar/--offset)", .bar = 2,
                              .offset = 0x10000 };
    ptl_find_opts fo;
    char title[128];

    ptl_find_opts_init(&fo);
    ptt_live_title(title, sizeof(title), &fo, 1, "0000:01:00.0", &tree);
    g_assert_cmpstr(title, ==, "pcie-telemetry 0000:01:00.0 block 1");

    fo.bar = 2;
    fo.offset = 0x10000;
    ptt_live_title(title, sizeof(title), &fo, 0, "0000:01:00.0", &by_hand);
    g_assert_cmpstr(title, ==, "pcie-telemetry 0000:01:00.0 BAR2 0x10000");
}

/* pcie-telemetry --live with standard output a pipe: exit 2, one line. */
static void test_tool_not_a_terminal(void)
{
    const char *tool = g_getenv("PTT_TOOL");
    char *argv[] = { (char *)tool, (char *)"--live", NULL };
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "TERM", "xterm",
                                         true);
    g_autofree char *out = NULL, *errs = NULL;
    g_autoptr(GError) error = NULL;
    int status;

    g_assert_nonnull(tool);
    g_assert_true(g_spawn_sync(NULL, argv, env, G_SPAWN_DEFAULT, NULL, NULL,
                               &out, &errs, &status, &error));
    g_assert_no_error(error);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, PTL_E_USAGE);
    g_assert_cmpstr(out, ==, "");
    g_assert_cmpstr(errs, ==, "pcie-telemetry: --live needs a terminal: "
                    "standard output is not one\n");
}

/*
 * The tool on a pseudo-terminal with TERM as given (NULL: unset): exit 2
 * with the reason, the terminal never switched.
 */
static void tool_on_pty(const char *term, const char *reason)
{
    const char *tool = g_getenv("PTT_TOOL");
    struct winsize ws = { .ws_row = 24, .ws_col = 80 };
    g_autofree char *want = g_strdup_printf(
        "pcie-telemetry: --live needs a terminal: %s\r\n", reason);
    GString *out = g_string_new(NULL);
    int master, status;
    pid_t pid;

    g_assert_nonnull(tool);
    pid = forkpty(&master, NULL, NULL, &ws);
    g_assert_cmpint(pid, >=, 0);
    if (pid == 0) {
        if (term) {
            setenv("TERM", term, 1);
        } else {
            unsetenv("TERM");
        }
        execl(tool, tool, "--live", (char *)NULL);
        _exit(127);
    }
    for (;;) {
        char buf[512];
        ssize_t n = read(master, buf, sizeof(buf));

        if (n > 0) {
            g_string_append_len(out, buf, n);
        } else if (n == 0 || errno != EINTR) {
            break;              /* EIO: the child closed the slave */
        }
    }
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, PTL_E_USAGE);
    g_assert_cmpstr(out->str, ==, want);
    g_string_free(out, true);
    close(master);
}

static void test_tool_term_dumb(void)
{
    tool_on_pty("dumb", "TERM is dumb");
}

static void test_tool_term_unset(void)
{
    tool_on_pty(NULL, "TERM is not set");
    tool_on_pty("", "TERM is empty");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ptt/live/screen", test_screen);
    g_test_add_func("/ptt/live/resize", test_resize);
    g_test_add_func("/ptt/live/keys", test_keys);
    g_test_add_func("/ptt/live/ctrl-c", test_ctrl_c);
    g_test_add_func("/ptt/live/sigterm", test_sigterm);
    g_test_add_func("/ptt/live/gone", test_gone);
    g_test_add_func("/ptt/live/sigbus", test_sigbus);
    g_test_add_func("/ptt/live/render-sizes", test_render_sizes);
    g_test_add_func("/ptt/live/unusable", test_unusable);
    g_test_add_func("/ptt/live/title", test_title);
    g_test_add_func("/ptt/live/tool-not-a-terminal",
                    test_tool_not_a_terminal);
    g_test_add_func("/ptt/live/tool-term-dumb", test_tool_term_dumb);
    g_test_add_func("/ptt/live/tool-term-unset", test_tool_term_unset);
    return g_test_run();
}
