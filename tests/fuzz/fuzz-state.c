/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The QEMU-free state loaders, as an incoming migration feeds them: any
 * byte string is refused by ptm_gen_load / ptm_core_load, or loaded into
 * a state that passes ptm_core_check() and that the model evaluates on,
 * for a bounded stretch of virtual time, in bounded work and keeping its
 * invariants.
 *
 * Input: byte 0 picks one of the cards below (configuration and traffic
 * generator, as the device's properties would make them), a 32-bit
 * little-endian length, that many bytes of generator state, and the rest
 * is the core's state. With FUZZ_STATE_SEEDS=DIR set, the target instead
 * writes seeds into DIR: real states of each card at various moments
 * (idle, during a command, losing deltas, after parameter changes).
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptm-core.h"
#include "ptm-gen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

typedef struct Card {
    const char *model;
    unsigned endpoints, ports, drain_period, cnt_width;
    uint64_t pcie_hz;
} Card;

static const Card cards[] = {
    { "pattern", 1, 1, 0, 0, 0 },
    { "ptc", 2, 2, 0, 0, 0 },
    { "random", 3, 1, 512, 33, 0 },         /* loses deltas */
    { "pattern", 1, 2, 1024, 0, 4000000000ull },
};
#define NCARDS (sizeof(cards) / sizeof(cards[0]))

typedef struct Rig {
    PtmConfig cfg;
    PtmCore *core;
    PtmGen *gen;
    const PtmGenModel *m;
} Rig;

/* FUZZ_STATE_VERBOSE=1: say why a state was refused (seed checking) */
static bool verbose;

static void rig_init(Rig *r, const Card *c)
{
    PtmGeometry geo;
    void *par;
    char *err = NULL;

    ptm_config_default(&r->cfg);
    r->cfg.pcie_endpoints = c->endpoints;
    r->cfg.dma_ports = c->ports;
    if (c->drain_period) {
        r->cfg.drain_period = c->drain_period;
    }
    if (c->cnt_width) {
        r->cfg.cnt_width = c->cnt_width;
    }
    if (c->pcie_hz) {
        r->cfg.pcie_clk_hz = c->pcie_hz;
    }
    r->core = ptm_core_new(&r->cfg);
    ptm_core_geometry(r->core, &geo);
    r->m = ptm_gen_model_find(c->model);
    par = g_malloc0(r->m->params_size);
    r->m->defaults(par);
    r->gen = ptm_gen_new(r->m, par, &geo, &err);
    g_free(par);
    if (!r->gen) {
        fprintf(stderr, "fuzz-state: %s: %s\n", c->model, err);
        abort();
    }
    ptm_core_set_source(r->core, &ptm_gen_source_ops, r->gen);
    ptm_core_power_on(r->core, 0);
}

static void rig_free(Rig *r)
{
    ptm_core_free(r->core);
    ptm_gen_free(r->gen);
}

static void must_pass(PtmCore *core, const char *when)
{
    char *why = ptm_core_check(core);

    if (why) {
        fprintf(stderr, "fuzz-state: %s: %s\n", when, why);
        abort();
    }
}

/* A little of everything a guest does, within ~200 us of virtual time. */
static void run_after_load(Rig *r, const uint8_t *salt, size_t n)
{
    const PtmLayout *lay = ptm_core_layout(r->core);
    uint64_t t = ptm_core_done_ns(r->core);

    for (unsigned i = 0; i < 12; i++) {
        unsigned b = n ? salt[i % n] : i;

        t += 1 + (b & 0x3F) * 250;
        switch (b >> 6) {
        case 0:
            ptm_core_write(r->core, t, PTM_REG_COMMAND, 1 + (b & 0xF), 4);
            break;
        case 1:
            ptm_core_read(r->core, t, PTM_REG_STATUS, 4);
            break;
        case 2:
            ptm_core_read(r->core, t, PTM_CNT_BASE + 8 * (b % lay->entries),
                          8);
            break;
        default:
            ptm_core_read(r->core, t, PTM_REG_PCIE_STATUS, 4);
            break;
        }
        must_pass(r->core, "after an access following a load");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Rig r;
    uint32_t glen;
    char *err;

    if (size < 5) {
        return 0;
    }
    rig_init(&r, &cards[data[0] % NCARDS]);
    glen = data[1] | data[2] << 8 | data[3] << 16 | (uint32_t)data[4] << 24;
    data += 5;
    size -= 5;
    if (glen > size) {
        rig_free(&r);
        return 0;
    }
    err = ptm_gen_load(r.gen, data, glen);
    if (err) {
        if (verbose) {
            fprintf(stderr, "fuzz-state: generator: %s\n", err);
        }
        g_free(err);
    }
    /* a refused generator state changes nothing: go on with the core */
    err = ptm_core_load(r.core, data + glen, size - glen);
    if (err) {
        if (verbose) {
            fprintf(stderr, "fuzz-state: core: %s\n", err);
        }
        g_free(err);
    } else {
        must_pass(r.core, "loaded");
        run_after_load(&r, data, glen);
    }
    rig_free(&r);
    return 0;
}

/* ---- seeds: real states of each card ---- */

static void write_seed(const char *dir, unsigned card, const char *what,
                       Rig *r)
{
    size_t glen, clen;
    void *g = ptm_gen_save(r->gen, &glen);
    void *c = ptm_core_save(r->core, &clen);
    char *path = g_strdup_printf("%s/card%u-%s", dir, card, what);
    FILE *f = fopen(path, "wb");
    uint8_t hdr[5] = { card, glen, glen >> 8, glen >> 16, glen >> 24 };

    if (!f || fwrite(hdr, 1, 5, f) != 5 || fwrite(g, 1, glen, f) != glen ||
        fwrite(c, 1, clen, f) != clen || fclose(f)) {
        fprintf(stderr, "fuzz-state: cannot write %s\n", path);
        exit(1);
    }
    g_free(path);
    g_free(g);
    g_free(c);
}

static void make_seeds(const char *dir)
{
    for (unsigned k = 0; k < NCARDS; k++) {
        Rig r;
        uint64_t t = 0;

        rig_init(&r, &cards[k]);
        write_seed(dir, k, "power-on", &r);
        t += 3000000;
        ptm_core_read(r.core, t, PTM_REG_STATUS, 4);
        write_seed(dir, k, "running", &r);
        /* a SNAPSHOT and a CLEAR waiting behind it */
        ptm_core_write(r.core, t, PTM_REG_COMMAND, PTM_CMD_SNAPSHOT, 4);
        t += 20;
        ptm_core_write(r.core, t, PTM_REG_COMMAND, PTM_CMD_CLEAR, 4);
        t += 40;
        ptm_core_read(r.core, t, PTM_REG_STATUS, 4);
        write_seed(dir, k, "busy", &r);
        /* negotiated settings waiting for their cycle, flags cleared */
        PtmSettings s = { .mps = 1, .mrrs = 3, .ext_tag = 1 };
        ptm_core_set_settings(r.core, t + 5000, 0, &s);
        ptm_core_write(r.core, t, PTM_REG_COMMAND,
                       PTM_CMD_CLEAR_FLAGS | PTM_CMD_CLEAR_LOWEST, 4);
        write_seed(dir, k, "changes", &r);
        /* a newer generator version waiting for its cycle */
        if (r.m->nparams) {
            void *par = g_memdup2(ptm_gen_params(r.gen), r.m->params_size);
            const PtmParamDesc *d = &r.m->params[0];
            char *e;

            if (d->type != PTM_PARAM_STR) {
                int64_t v = ptm_param_get(d, par);
                char *bad = ptm_param_check(d, v + 1);

                if (!bad) {
                    ptm_param_set(d, par, v + 1);
                }
                g_free(bad);
            }
            e = ptm_gen_set_params(r.gen, par,
                                   ptm_core_next_pcie_window(r.core, t), t);
            g_free(e);
            g_free(par);
        }
        t += 7000000;
        ptm_core_read(r.core, t, PTM_REG_STATUS, 4);
        write_seed(dir, k, "later", &r);
        ptm_core_reset(r.core, t + 10);
        ptm_core_read(r.core, t + 20, PTM_REG_STATUS, 4);
        write_seed(dir, k, "after-reset", &r);
        rig_free(&r);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *dir = getenv("FUZZ_STATE_SEEDS");

    (void)argc;
    (void)argv;
    verbose = getenv("FUZZ_STATE_VERBOSE") != NULL;
    if (dir) {
        make_seeds(dir);
        exit(0);
    }
    return 0;
}
