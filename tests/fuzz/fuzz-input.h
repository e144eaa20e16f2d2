/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A fuzz input read as little-endian numbers, 0 once it runs out. */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct Input {
    const uint8_t *p;
    size_t left;
} Input;

static inline uint64_t take(Input *in, unsigned bytes)
{
    uint64_t v = 0;

    for (unsigned i = 0; i < bytes && in->left; i++) {
        v |= (uint64_t)*in->p++ << 8 * i;
        in->left--;
    }
    return v;
}

#endif
