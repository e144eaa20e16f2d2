/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Migration states as bytes: 64-bit values little endian, appended to a
 * GByteArray and read back with a reader that notes running short.
 */
#ifndef PTM_BYTES_H
#define PTM_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>

static inline void ptm_put64(GByteArray *b, uint64_t v)
{
    uint8_t le[8];

    for (int i = 0; i < 8; i++) {
        le[i] = v >> (8 * i);
    }
    g_byte_array_append(b, le, 8);
}

typedef struct PtmReader {
    const uint8_t *p;
    size_t left;
    bool bad;                   /* a read ran past the end */
} PtmReader;

/* The next value, or 0 with r->bad set where fewer than 8 bytes are left */
static inline uint64_t ptm_get64(PtmReader *r)
{
    uint64_t v = 0;

    if (r->left < 8) {
        r->bad = true;
        return 0;
    }
    for (int i = 0; i < 8; i++) {
        v |= (uint64_t)r->p[i] << (8 * i);
    }
    r->p += 8;
    r->left -= 8;
    return v;
}

#endif
