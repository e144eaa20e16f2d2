/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The library's JSON writer (ptl-jw.h).
 */
#include "ptl-jw.h"

static void jw_indent(jw *w)
{
    for (unsigned i = 0; i < w->depth * 4; i++) {
        fputc(' ', w->f);
    }
}

void jw_item(jw *w)
{
    fputs(w->first[w->depth] ? "\n" : ",\n", w->f);
    w->first[w->depth] = false;
    jw_indent(w);
}

void jw_open(jw *w, char c)
{
    fputc(c, w->f);
    w->depth++;
    w->first[w->depth] = true;
}

void jw_close(jw *w, char c)
{
    bool empty = w->first[w->depth];

    w->depth--;
    if (!empty) {
        fputc('\n', w->f);
        jw_indent(w);
    }
    fputc(c, w->f);
}

void jw_string(jw *w, const char *s)
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

void jw_key(jw *w, const char *key)
{
    jw_item(w);
    jw_string(w, key);
    fputs(": ", w->f);
}

void jw_u64(jw *w, const char *key, uint64_t v)
{
    jw_key(w, key);
    fprintf(w->f, "%llu", (unsigned long long)v);
}

void jw_bool(jw *w, const char *key, bool v)
{
    jw_key(w, key);
    fputs(v ? "true" : "false", w->f);
}
