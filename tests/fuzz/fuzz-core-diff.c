/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The device core, differential: the fast evaluation and the per-cycle
 * reference (every window counted at its drain, every delta carried with
 * its value) run side by side on one traffic generator and must return
 * the same value for every read, and both must keep ptm_core_check().
 *
 * The input is decoded into a card (endpoints, ports, regions, drain
 * period, counter width, three clocks), a generator with some of its
 * parameters, and a sequence of operations: reads and writes of 1, 2, 4
 * or 8 bytes at any offset of the BAR, commands, steps of the virtual
 * clock, live parameter changes, negotiated settings and MI resets. The
 * virtual time of one input is capped so that the reference stays fast.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptm-core.h"
#include "ptm-gen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Virtual time one input may cover, and the operations it may make. */
#define TIME_CAP_NS 150000
#define MAX_OPS 96

typedef struct In {
    const uint8_t *p;
    size_t left;
} In;

static unsigned take(In *in, unsigned bytes)
{
    unsigned v = 0;

    for (unsigned i = 0; i < bytes; i++) {
        v <<= 8;
        if (in->left) {
            v |= *in->p++;
            in->left--;
        }
    }
    return v;
}

static const char *const models[] = { "idle", "pattern", "ptc", "random" };
static const uint32_t drain_periods[] = { 64, 128, 256, 512, 1024, 4096 };
static const uint64_t clocks[] = {
    250000000, 125000000, 200000000, 156250000, 100000000, 400000000,
    62500000, 4000000000ull,
};

typedef struct Twin {
    PtmCore *fast, *ref;
    PtmGen *gen;
    const PtmGenModel *m;
    PtmConfig cfg;
    uint64_t t;
} Twin;

static void check_both(Twin *tw, const char *after)
{
    char *ef = ptm_core_check(tw->fast), *er = ptm_core_check(tw->ref);

    if (ef || er) {
        fprintf(stderr, "fuzz-core-diff: t=%" G_GUINT64_FORMAT " ns after %s:"
                " fast: %s; reference: %s\n", tw->t, after, ef ? ef : "ok",
                er ? er : "ok");
        abort();
    }
}

static void read_both(Twin *tw, uint32_t addr, unsigned size)
{
    uint64_t a = ptm_core_read(tw->fast, tw->t, addr, size);
    uint64_t b = ptm_core_read(tw->ref, tw->t, addr, size);

    if (a != b) {
        fprintf(stderr, "fuzz-core-diff: t=%" G_GUINT64_FORMAT " ns: read of "
                "%u bytes at 0x%x: fast 0x%" G_GINT64_MODIFIER "x, reference "
                "0x%" G_GINT64_MODIFIER "x\n", tw->t, size, addr, a, b);
        abort();
    }
    check_both(tw, "a read");
}

static void write_both(Twin *tw, uint32_t addr, uint64_t v, unsigned size)
{
    ptm_core_write(tw->fast, tw->t, addr, v, size);
    ptm_core_write(tw->ref, tw->t, addr, v, size);
    check_both(tw, "a write");
}

/* The card: NULL if the bytes make one the firmware cannot be built as. */
static bool decode_card(In *in, PtmConfig *cfg)
{
    unsigned a = take(in, 1), b = take(in, 1), c = take(in, 1);
    char *err;

    ptm_config_default(cfg);
    cfg->pcie_endpoints = 1 + a % 3;
    cfg->dma_ports = 1 + (a >> 2) % 3;
    cfg->pcie_rq_mfb_regions = 1 << ((a >> 4) % 3);
    cfg->pcie_rc_mfb_regions = 1 << ((a >> 6) % 2);
    cfg->dma_up_mfb_regions = 1 << (b % 2);
    cfg->drain_period = drain_periods[(b >> 1) % 6];
    cfg->cnt_width = (b >> 4) & 1 ? 33 + (b >> 5) % 8 * 4 : 64;
    cfg->pcie_clk_hz = clocks[c % 8];
    cfg->dma_clk_hz = clocks[(c >> 3) % 8];
    cfg->mi_clk_hz = clocks[(c >> 6) % 4];
    err = ptm_config_check(cfg);
    if (err) {
        g_free(err);
        return false;
    }
    return true;
}

/* Numeric parameters from the input, each checked as qom-set checks it. */
static void decode_params(In *in, const PtmGenModel *m, void *par,
                          unsigned n)
{
    for (unsigned i = 0; i < n && m->nparams; i++) {
        const PtmParamDesc *d = &m->params[take(in, 1) % m->nparams];
        int64_t span, v;
        char *err;

        if (d->type == PTM_PARAM_STR) {
            continue;
        }
        span = d->max - d->min;
        v = d->min + (int64_t)(take(in, 4) % ((uint64_t)span + 1));
        err = ptm_param_check(d, v);
        if (err) {
            g_free(err);
            continue;
        }
        ptm_param_set(d, par, v);
    }
}

static bool twin_init(Twin *tw, In *in)
{
    PtmGeometry geo;
    void *par;
    char *err = NULL;

    memset(tw, 0, sizeof(*tw));
    if (!decode_card(in, &tw->cfg)) {
        return false;
    }
    tw->m = ptm_gen_model_find(models[take(in, 1) % 4]);
    tw->fast = ptm_core_new(&tw->cfg);
    ptm_core_geometry(tw->fast, &geo);
    par = g_malloc0(tw->m->params_size);
    tw->m->defaults(par);
    decode_params(in, tw->m, par, take(in, 1) % 6);
    tw->gen = ptm_gen_new(tw->m, par, &geo, &err);
    g_free(par);
    if (!tw->gen) {
        /* parameters that do not fit the card: refused, as by QEMU */
        g_free(err);
        ptm_core_free(tw->fast);
        return false;
    }
    tw->ref = ptm_core_new(&tw->cfg);
    ptm_core_set_reference(tw->ref, true);
    ptm_core_set_source(tw->fast, &ptm_gen_source_ops, tw->gen);
    ptm_core_set_source(tw->ref, &ptm_gen_source_ops, tw->gen);
    ptm_core_power_on(tw->fast, 0);
    ptm_core_power_on(tw->ref, 0);
    return true;
}

static void twin_free(Twin *tw)
{
    ptm_core_free(tw->fast);
    ptm_core_free(tw->ref);
    ptm_gen_free(tw->gen);
}

static void live_change(Twin *tw, In *in)
{
    void *par = g_memdup2(ptm_gen_params(tw->gen), tw->m->params_size);
    char *err;

    decode_params(in, tw->m, par, 1 + take(in, 1) % 3);
    /* as the device does: the model up to now, the change at the next
     * window of endpoint 0's PCIe probe */
    ptm_core_advance(tw->fast, tw->t);
    ptm_core_advance(tw->ref, tw->t);
    err = ptm_gen_set_params(tw->gen, par,
                             ptm_core_next_pcie_window(tw->fast, tw->t),
                             tw->t);
    g_free(err);
    g_free(par);
    check_both(tw, "a parameter change");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned sizes[] = { 1, 2, 4, 8 };
    In in = { data, size };
    Twin tw;

    if (!twin_init(&tw, &in)) {
        if (getenv("FUZZ_VERBOSE")) {
            fprintf(stderr, "fuzz-core-diff: no card or generator\n");
        }
        return 0;
    }
    for (unsigned i = 0; i < MAX_OPS && in.left && tw.t < TIME_CAP_NS; i++) {
        unsigned op = take(&in, 1);
        uint32_t addr;

        switch (op & 0xF) {
        case 0: case 1: case 2:         /* a register or counter */
            addr = take(&in, 2);
            read_both(&tw, addr, sizes[op >> 6]);
            break;
        case 3:                         /* anywhere, any size */
            addr = take(&in, 2);
            write_both(&tw, addr, (uint64_t)take(&in, 4) << 32 |
                       take(&in, 4), sizes[op >> 6]);
            break;
        case 4: case 5:                 /* commands */
            write_both(&tw, PTM_REG_COMMAND, op >> 4, 4);
            break;
        case 6:
            write_both(&tw, PTM_REG_READ_SEL, op >> 4, 4);
            break;
        case 7:                         /* counters of one entry */
            addr = PTM_CNT_BASE + 8 * (take(&in, 2) %
                                       ptm_core_layout(tw.fast)->entries);
            read_both(&tw, addr, 8);
            read_both(&tw, addr + 4, 4);
            break;
        case 8: case 9: case 10:        /* a short step */
            tw.t += take(&in, 1) * (1 + (op >> 4));
            break;
        case 11:                        /* a long one */
            tw.t += take(&in, 2) * (1 + (op >> 6));
            break;
        case 12:
            live_change(&tw, &in);
            break;
        case 13: {                      /* Device Control of an endpoint */
            unsigned v = take(&in, 2);
            PtmSettings s = {
                .mps = v % 6, .mrrs = (v >> 3) % 6, .ext_tag = v >> 6 & 1,
                .tag_10bit = v >> 7 & 1, .rcb_128 = v >> 8 & 1,
            };

            ptm_core_set_settings(tw.fast, tw.t, (op >> 4) % 4, &s);
            ptm_core_set_settings(tw.ref, tw.t, (op >> 4) % 4, &s);
            check_both(&tw, "a settings change");
            break;
        }
        case 14:                        /* MI_RESET for some MI cycles */
            ptm_core_mi_reset(tw.fast, tw.t, 1 + (op >> 4));
            ptm_core_mi_reset(tw.ref, tw.t, 1 + (op >> 4));
            check_both(&tw, "an MI reset");
            break;
        default:                        /* the live PCIe registers */
            read_both(&tw, PTM_REG_PCIE_STATUS + 0x40 * ((op >> 4) % 3) +
                      4 * ((op >> 6) % tw.cfg.pcie_endpoints), 4);
            break;
        }
    }
    /* at the end every counter of both copies, after the last drains */
    tw.t += 20000;
    write_both(&tw, PTM_REG_COMMAND, PTM_CMD_SNAPSHOT, 4);
    tw.t += 20000;
    for (unsigned sel = 0; sel < 2; sel++) {
        write_both(&tw, PTM_REG_READ_SEL, sel, 4);
        for (unsigned e = 0; e < ptm_core_layout(tw.fast)->entries; e++) {
            read_both(&tw, PTM_CNT_BASE + 8 * e, 8);
        }
    }
    read_both(&tw, PTM_REG_STATUS, 4);
    twin_free(&tw);
    return 0;
}
