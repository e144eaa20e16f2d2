/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie-telemetry --live: one screen redrawn in place every interval.
 */
#ifndef PTT_LIVE_H
#define PTT_LIVE_H

#include "pcie-telemetry.h"
#include "options.h"

/* Runs until q or Ctrl-C; returns the tool's exit code. */
int ptt_live(const ptt_opts *o, const ptl_find_opts *fo);

/*
 * NULL when the view can be drawn on out_fd with the terminal type term
 * (getenv("TERM")), else why not ("standard output is not one", "TERM is
 * not set", "TERM is empty", "TERM is dumb").
 */
const char *ptt_live_unusable(int out_fd, const char *term);

/*
 * The title of the view of the block ptl_open(fo, index, ...) opened on
 * the card slot, node being the node it found: "pcie-telemetry SLOT block
 * INDEX", or "pcie-telemetry SLOT BAR0 0x8000" when --bar/--offset placed
 * the block (the index then selects nothing).
 */
void ptt_live_title(char *buf, size_t len, const ptl_find_opts *fo,
                    unsigned index, const char *slot,
                    const ptl_node_info *node);

/*
 * Where the readings come from: a block and how one reading is taken
 * under the card's lock (the tool: ptl_handle_lock, ptl_handle_read,
 * ptl_handle_unlock on its handle).
 */
typedef struct ptt_live_source {
    ptl_block *block;
    const char *title;          /* first words of the screen */
    ptl_err (*lock)(void *opaque, ptl_error *err);
    void (*unlock)(void *opaque);
    ptl_err (*read)(void *opaque, ptl_reading *r, ptl_error *err);
    void *opaque;
    /* written on a bus error before the exit with PTL_E_GONE, or NULL */
    const char *sigbus_msg;
} ptt_live_source;

/*
 * The view on the terminal out_fd, keys from in_fd, a reading every
 * interval seconds; never clears the flags or lowest values. Leaves on q,
 * Q, SIGINT, SIGTERM or SIGHUP (0), on a failed reading (its message on
 * stderr after the terminal is restored, its code) or a bus error (exit
 * PTL_E_GONE from the signal handler, the terminal restored first).
 */
int ptt_live_run(const ptt_live_source *src, double interval, int in_fd,
                 int out_fd);

/* What one frame shows. */
typedef struct ptt_live_view {
    const char *title;
    double interval;            /* what -t asked for */
    const ptl_data *data;       /* NULL: the first interval still runs */
    double seconds;             /* the interval data covers */
} ptt_live_view;

/*
 * One frame for a terminal of rows x cols: the text and the escape
 * sequences that draw it from the home position, never past the last
 * column or row. NUL-terminated, to free(); NULL when out of memory.
 */
char *ptt_live_render(const ptt_live_view *v, unsigned rows, unsigned cols);

#endif
