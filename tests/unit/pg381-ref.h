/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A reference for test-pg381 (pg381-ref.c): a PG381 program simulated
 * one request and one completion frame at a time.
 */
#ifndef PG381_REF_H
#define PG381_REF_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

#include "pg381-core.h"

/* One request: cycles of its handshake, first response, B or RLAST, beats */
typedef struct RefReq {
    bool write;
    uint64_t s, first, done, beats_at, addr;
    uint32_t beats, bytes, m;   /* m: its MRds, the tags it holds */
} RefReq;

typedef struct Ref {
    GArray *r;
    uint64_t wr_done, rd_done, prog_end, done;
    /* how often each rule held a request or frame back */
    unsigned window, tags, ooo_write, rc_queue, rc_gap;
} Ref;

/*
 * Runs a valid program whose instructions split every request alike
 * (the model's closed form is exact for those), OUTSTND_RESP_LIMIT limreg
 */
Ref ref_run(const Pg381Config *c, const Pg381Pcie *p, uint32_t limreg,
            const Pg381Instr *prog);
/* Its status registers at cycle c, offset -> value, window [cap_s, cap_e) */
void ref_regs(const Ref *ref, uint64_t c, uint32_t cap_s, uint32_t cap_e,
              GHashTable *out);

#endif
