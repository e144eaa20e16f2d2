/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PG381 model's migration (pg381-core.h): registers, program and
 * counters as bytes, and of a run its position in the program and the
 * phases not yet folded, each as the instruction, loop iteration and
 * start it was made with (their timing follows from those again).
 */
#include "ptm-bytes.h"
#include "pg381-int.h"

#define PG381_STATE_MAGIC       0x3174733138334750ull  /* "PG381st1" */

static void put_totals(GByteArray *b, const Pg381Totals *t)
{
    const uint64_t *v = (const uint64_t *)t;

    for (size_t i = 0; i < sizeof(*t) / 8; i++) {
        ptm_put64(b, v[i]);
    }
}

static void get_totals(PtmReader *rd, Pg381Totals *t)
{
    uint64_t *v = (uint64_t *)t;

    for (size_t i = 0; i < sizeof(*t) / 8; i++) {
        v[i] = ptm_get64(rd);
    }
}

static void put_words(GByteArray *b, const uint32_t *w, size_t n)
{
    for (size_t i = 0; i < n; i += 2) {
        ptm_put64(b, w[i] | (i + 1 < n ? (uint64_t)w[i + 1] << 32 : 0));
    }
}

static void get_words(PtmReader *rd, uint32_t *w, size_t n)
{
    for (size_t i = 0; i < n; i += 2) {
        uint64_t v = ptm_get64(rd);

        w[i] = v;
        if (i + 1 < n) {
            w[i + 1] = v >> 32;
        }
    }
}

static void put_phase(GByteArray *b, const Pg381Phase *ph)
{
    ptm_put64(b, ph->cmd | (uint64_t)ph->pc << 8 | (uint64_t)ph->iter << 32);
    ptm_put64(b, ph->start);
    ptm_put64(b, ph->emitted);
}

static bool get_phase(Pg381Core *s, PtmReader *rd, Pg381Phase *ph)
{
    uint64_t v = ptm_get64(rd);

    memset(ph, 0, sizeof(*ph));
    ph->cmd = v & 0xFF;
    ph->pc = (v >> 8) & 0xFFFF;
    ph->iter = v >> 32;
    ph->start = ptm_get64(rd);
    v = ptm_get64(rd);
    if (rd->bad || ph->pc >= PG381_INSTRS ||
        s->run.prog[ph->pc].cmd != ph->cmd || ph->cmd == PG381_CMD_WAIT ||
        !s->run.prog[ph->pc].count ||
        s->run.prog[ph->pc].count > PG381_MAX_REQUESTS ||
        pg381_instr_bytes(&s->run.prog[ph->pc]) > PG381_MAX_BYTES ||
        pg381_phase_setup(s, ph) || v > ph->tm.n) {
        return false;
    }
    ph->emitted = v;
    return true;
}

static uint64_t cfg_word(const Pg381Config *c)
{
    return c->rq_bytes | (uint64_t)c->rc_bytes << 16 |
           (uint64_t)c->rq_hdr << 32 | (uint64_t)c->rc_hdr << 40 |
           (uint64_t)c->out_of_order << 48 | (uint64_t)c->data_integrity << 49;
}

void *pg381_save(Pg381Core *s, size_t *len)
{
    GByteArray *b = g_byte_array_new();
    Pg381Run *r = &s->run;

    ptm_put64(b, PG381_STATE_MAGIC);
    ptm_put64(b, s->cfg.clock_hz);
    ptm_put64(b, cfg_word(&s->cfg));
    ptm_put64(b, s->cfg.latency_ns);
    ptm_put64(b, s->pcie.mps | (uint64_t)s->pcie.mrrs << 32);
    ptm_put64(b, s->pcie.rcb | (uint64_t)s->pcie.tags << 32);
    ptm_put64(b, s->soft_rst | (uint64_t)s->limit_reg << 32);
    ptm_put64(b, s->credit[0] | (uint64_t)s->credit[1] << 32);
    ptm_put64(b, s->cap_en);
    ptm_put64(b, s->cap_s | (uint64_t)s->cap_e << 32);
    put_words(b, s->ram, PG381_RAM_WORDS);
    put_words(b, s->al, PG381_AL_COUNT);
    put_totals(b, &s->base);
    ptm_put64(b, s->base_wr_eff);
    ptm_put64(b, s->base_rd_eff);
    ptm_put64(b, r->on);
    if (r->on) {
        ptm_put64(b, r->t0_ns);
        ptm_put64(b, r->pcie.mps | (uint64_t)r->pcie.mrrs << 32);
        ptm_put64(b, r->pcie.rcb | (uint64_t)r->pcie.tags << 32);
        ptm_put64(b, r->limit | (uint64_t)r->cap_en << 32);
        ptm_put64(b, r->cap_s | (uint64_t)r->cap_e << 32);
        put_words(b, r->ram, PG381_RAM_WORDS);
        ptm_put64(b, r->pc | (uint64_t)r->loop_pc << 32);
        ptm_put64(b, r->iter | (uint64_t)r->in_loop << 32 |
                  (uint64_t)r->ended << 33 | (uint64_t)r->wr_final << 34 |
                  (uint64_t)r->rd_final << 35 |
                  (uint64_t)r->prog_final << 36 |
                  (uint64_t)r->have_read << 37);
        ptm_put64(b, r->next_t);
        ptm_put64(b, r->rd_done);
        ptm_put64(b, r->wr_done);
        ptm_put64(b, r->prog_end);
        ptm_put64(b, r->err | (uint64_t)r->err_pc << 32);
        ptm_put64(b, r->err_cycle);
        if (r->have_read) {
            put_phase(b, &r->last_read);
        }
        put_totals(b, &r->folded);
        ptm_put64(b, r->phases->len);
        for (guint i = 0; i < r->phases->len; i++) {
            put_phase(b, &g_array_index(r->phases, Pg381Phase, i));
        }
    }
    *len = b->len;
    return g_byte_array_free(b, FALSE);
}

char *pg381_load(Pg381Core *s, const void *buf, size_t len)
{
    PtmReader rd = { .p = buf, .left = len };
    Pg381Core *n = g_malloc(sizeof(*s));
    Pg381Run *r = &n->run;
    uint64_t v, count;
    char *err = NULL;

    memcpy(n, s, sizeof(*s));
    r->phases = g_array_new(FALSE, FALSE, sizeof(Pg381Phase));
    if (ptm_get64(&rd) != PG381_STATE_MAGIC) {
        err = g_strdup("the PG381 state is not one this model saved");
        goto out;
    }
    if (ptm_get64(&rd) != s->cfg.clock_hz ||
        ptm_get64(&rd) != cfg_word(&s->cfg) ||
        ptm_get64(&rd) != s->cfg.latency_ns) {
        err = g_strdup("the PG381 state is of a card with another clock, "
                       "buses or latency mode");
        goto out;
    }
    v = ptm_get64(&rd);
    n->pcie.mps = v;
    n->pcie.mrrs = v >> 32;
    v = ptm_get64(&rd);
    n->pcie.rcb = v;
    n->pcie.tags = v >> 32;
    v = ptm_get64(&rd);
    n->soft_rst = v & 1;
    n->limit_reg = (v >> 32) & PG381_LIMIT_MASK;
    v = ptm_get64(&rd);
    n->credit[0] = v;
    n->credit[1] = v >> 32;
    n->cap_en = ptm_get64(&rd) & 1;
    v = ptm_get64(&rd);
    n->cap_s = v;
    n->cap_e = v >> 32;
    get_words(&rd, n->ram, PG381_RAM_WORDS);
    get_words(&rd, n->al, PG381_AL_COUNT);
    get_totals(&rd, &n->base);
    n->base_wr_eff = ptm_get64(&rd);
    n->base_rd_eff = ptm_get64(&rd);
    pg381_run_clear(r);
    memset(n->key, 0, sizeof(n->key));
    r->on = ptm_get64(&rd) & 1;
    if (r->on) {
        r->t0_ns = ptm_get64(&rd);
        v = ptm_get64(&rd);
        r->pcie.mps = v;
        r->pcie.mrrs = v >> 32;
        v = ptm_get64(&rd);
        r->pcie.rcb = v;
        r->pcie.tags = v >> 32;
        v = ptm_get64(&rd);
        r->limit = v & PG381_LIMIT_MASK;
        r->cap_en = (v >> 32) & 1;
        v = ptm_get64(&rd);
        r->cap_s = v;
        r->cap_e = v >> 32;
        get_words(&rd, r->ram, PG381_RAM_WORDS);
        if (rd.bad) {
            goto short_state;
        }
        {
            g_autofree char *bad = pg381_pcie_check(&r->pcie);

            if (bad) {
                err = g_strdup_printf("the PG381 state's run: %s", bad);
                goto out;
            }
        }
        /* the program's decoding, loops and channels, as at START */
        pg381_run_check(n);
        v = ptm_get64(&rd);
        r->pc = v & 0x1FF;
        r->loop_pc = (v >> 32) & 0x1FF;
        v = ptm_get64(&rd);
        r->iter = v & 0xFFFFFFFFu;
        r->in_loop = (v >> 32) & 1;
        r->ended = (v >> 33) & 1;
        r->wr_final = (v >> 34) & 1;
        r->rd_final = (v >> 35) & 1;
        r->prog_final = (v >> 36) & 1;
        r->have_read = (v >> 37) & 1;
        r->next_t = ptm_get64(&rd);
        r->rd_done = ptm_get64(&rd);
        r->wr_done = ptm_get64(&rd);
        r->prog_end = ptm_get64(&rd);
        v = ptm_get64(&rd);
        r->err = v & 0xFF;
        r->err_pc = (v >> 32) & 0x1FF;
        r->err_cycle = ptm_get64(&rd);
        if (r->have_read && !get_phase(n, &rd, &r->last_read)) {
            goto bad_phase;
        }
        get_totals(&rd, &r->folded);
        count = ptm_get64(&rd);
        if (rd.bad || count > 2 * PG381_INSTRS) {
            goto short_state;
        }
        for (uint64_t i = 0; i < count; i++) {
            Pg381Phase ph;

            if (!get_phase(n, &rd, &ph)) {
                goto bad_phase;
            }
            g_array_append_val(r->phases, ph);
        }
    }
    if (rd.bad || rd.left) {
        goto short_state;
    }
    g_array_free(s->run.phases, TRUE);
    memcpy(s, n, sizeof(*s));
    g_free(n);
    return NULL;
short_state:
    err = g_strdup_printf("the PG381 state is %zu bytes, not what this model "
                          "saves", len);
    goto out;
bad_phase:
    err = g_strdup("the PG381 state holds an instruction its program "
                   "does not");
out:
    g_array_free(r->phases, TRUE);
    g_free(n);
    return err;
}
