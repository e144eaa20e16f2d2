/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The tool's command line: the input split at NUL bytes into the
 * arguments after the program name (at most MAX_ARGS), parsed by
 * ptt_parse_options, which must leave getopt ready for the next parse.
 * Checked: the result is 0 or 2, a 2 comes with a message (which quotes
 * the arguments as they are), a 0 with options that hold together.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const ptt_opts *o, int rc, const char *msg, size_t len)
{
    if (rc != 0 && rc != 2) {
        abort();
    }
    if (!memchr(msg, '\0', len)) {
        abort();
    }
    if (rc == 2) {
        if (msg[0] == '\0') {
            abort();
        }
        return;
    }
    if (o->help || o->version) {
        return;
    }
    if (o->nadd_ids > PTT_MAX_ADD_IDS || o->add_ids[o->nadd_ids] ||
        o->bar > 5 || (o->bar >= 0 && o->offset < 0) ||
        !(o->interval >= 0 && o->interval <= 86400.0) ||
        (o->watch && o->interval == 0) || (o->device && !*o->device) ||
        (o->input && !*o->input) || o->index > INT_MAX) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a private copy: every argument ends in a NUL, getopt permutes argv */
    char *buf = malloc(size + 1);
    char *argv[MAX_ARGS + 2], *again[MAX_ARGS + 2];
    char msg[160], cut[8];
    ptt_opts o, o2;
    int argc = 0, rc;
    size_t at = 0;

    if (!buf) {
        return 0;
    }
    memcpy(buf, data, size);
    buf[size] = '\0';
    argv[argc++] = (char *)"pcie-telemetry";
    while (at < size && argc < MAX_ARGS + 1) {
        argv[argc++] = buf + at;
        at += strlen(buf + at) + 1;
    }
    argv[argc] = NULL;
    memcpy(again, argv, sizeof(argv));

    memset(msg, 'x', sizeof(msg));
    rc = ptt_parse_options(argc, argv, &o, msg, sizeof(msg));
    check(&o, rc, msg, sizeof(msg));
    /*
     * The same arguments again, unpermuted, into a short buffer: the same
     * result (getopt was reset), the message cut and still terminated.
     */
    memset(cut, 'x', sizeof(cut));
    if (ptt_parse_options(argc, again, &o2, cut, sizeof(cut)) != rc ||
        !memchr(cut, '\0', sizeof(cut)) ||
        strncmp(cut, msg, sizeof(cut) - 1) != 0 ||
        (rc == 0 && memcmp(&o, &o2, sizeof(o)) != 0)) {
        abort();
    }
    free(buf);
    return 0;
}
