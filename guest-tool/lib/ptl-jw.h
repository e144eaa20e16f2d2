/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The library's JSON writer, internal: what Python's json.dumps(obj,
 * indent=4) produces (items on their own lines, ": " between key and
 * value, empty containers as [] and {}), shared by the report's and the
 * flit report's output.
 */
#ifndef PTL_JW_H
#define PTL_JW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Internal to the library: not exported from libpcie-telemetry */
#define PTL_JW_API __attribute__((visibility("hidden")))

typedef struct jw {
    FILE *f;
    unsigned depth;
    bool first[16];
} jw;

/* Before an item of the open container: its separator and indent */
PTL_JW_API void jw_item(jw *w);
/* A container opened with c ('{' or '['), closed with its pair */
PTL_JW_API void jw_open(jw *w, char c);
PTL_JW_API void jw_close(jw *w, char c);
/* A string, escaped as JSON wants */
PTL_JW_API void jw_string(jw *w, const char *s);
/* The next member's key (an item of an object) */
PTL_JW_API void jw_key(jw *w, const char *key);
PTL_JW_API void jw_u64(jw *w, const char *key, uint64_t v);
PTL_JW_API void jw_bool(jw *w, const char *key, bool v);

#endif
