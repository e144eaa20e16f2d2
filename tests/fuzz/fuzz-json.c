/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Saved readings, the tool's --input: the input as a stream of documents
 * read by ptl_input_next, each rendered in every output format (to
 * /dev/null: only the formatting is of interest), and the input given to
 * the JSON parser directly, whole and as a value followed by anything.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcie-telemetry.h"

static FILE *sink;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    sink = fopen("/dev/null", "w");
    if (!sink) {
        abort();
    }
    return 0;
}

static void check_error(const ptl_error *e)
{
    if (!memchr(e->msg, '\0', sizeof(e->msg)) || e->msg[0] == '\0') {
        abort();
    }
}

static void render(const ptl_data *d, double seconds, unsigned n)
{
    ptl_format_text(sink, d, seconds);
    ptl_format_json(sink, d, seconds);
    if (n == 1) {
        ptl_format_csv_header(sink);
    }
    ptl_format_csv(sink, d, seconds, NAN, "watch.json", UINT_MAX);
    ptl_format_csv(sink, d, seconds, 1.7e9, NULL, n);
    ptl_format_prometheus(sink, d, "watch.json", UINT_MAX);
}

static void stream(const uint8_t *data, size_t size)
{
    FILE *f = fmemopen((void *)data, size, "r");
    ptl_input *in;

    if (!f) {
        return;                 /* glibc refuses an empty buffer */
    }
    in = ptl_input_new(f);
    if (!in) {
        abort();
    }
    for (;;) {
        ptl_error e = { 0 };
        ptl_data *d;
        double seconds = -1;
        ptl_err r = ptl_input_next(in, &d, &seconds, &e);

        if (r != PTL_OK) {
            if (d) {
                abort();
            }
            check_error(&e);
            break;
        }
        if (!d) {
            break;
        }
        if (!(seconds == 0 || (isfinite(seconds) && seconds > 0))) {
            abort();
        }
        render(d, seconds, ptl_input_count(in));
        ptl_data_free(d);
    }
    ptl_input_free(in);
    fclose(f);
}

static void parse(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    ptl_error e = { 0 };
    ptl_json *v;
    size_t end = SIZE_MAX;

    if (ptl_json_parse(text, size, 0, 0, NULL, &v, &e) == PTL_OK) {
        ptl_data *d;
        double seconds;

        ptl_json_get(v, "data");
        if (ptl_data_from_json(v, &d, &seconds, &e) == PTL_OK) {
            ptl_data_free(d);
        } else {
            check_error(&e);
        }
        ptl_json_free(v);
    } else {
        check_error(&e);
    }
    if (ptl_json_parse(text, size, 3, 7, &end, &v, &e) == PTL_OK) {
        if (end > size) {
            abort();
        }
        ptl_json_free(v);
    } else {
        check_error(&e);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    stream(data, size);
    parse(data, size);
    return 0;
}
