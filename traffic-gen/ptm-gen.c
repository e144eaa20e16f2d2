/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The common frame of the traffic generators: parameter tables, the
 * parameter history of a running generator, and its migration format.
 */
#include <glib.h>
#include <string.h>

#include "ptm-gen.h"

typedef unsigned __int128 u128;

uint64_t ptm_cycle_ns(uint64_t c, uint64_t hz)
{
    return (uint64_t)((u128)c * 1000000000ull / hz);
}

uint64_t ptm_serve_periodic(const PtmSegment *seg, unsigned nseg,
                            uint64_t period, uint64_t phase, uint64_t max,
                            uint64_t id, PtmChunk *out)
{
    uint64_t t = 0;

    if (phase == 0 && max >= period) {
        out->id = id;
        out->seg = (PtmSegment *)seg;
        out->nseg = nseg;
        out->repeat = max / period;
        return out->repeat * period;
    }
    out->repeat = 1;
    for (unsigned i = 0; i < nseg; i++) {
        uint64_t end = t + seg[i].cycles;

        if (end > phase) {
            unsigned j = i;
            uint64_t n = 0;

            if (t == phase) {
                while (j < nseg && n + seg[j].cycles <= max) {
                    n += seg[j++].cycles;
                }
            }
            if (j > i) {
                /* a part of a named list is named by its bounds too */
                out->id = id ? ptm_hash(id, i, j, 0) | 1 : 0;
                out->seg = (PtmSegment *)&seg[i];
                out->nseg = j - i;
                return n;
            }
            out->seg = out->scratch;
            out->seg[0] = seg[i];
            out->seg[0].cycles = MIN(end - phase, max);
            out->nseg = 1;
            return out->seg[0].cycles;
        }
        t = end;
    }
    g_assert_not_reached();
}

/* the splitmix64 finaliser over a running sum of the words */
uint64_t ptm_hash(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    uint64_t h = ptm_mix64(a + 0x9e3779b97f4a7c15ull);

    h = ptm_mix64(h ^ (b + 0x9e3779b97f4a7c15ull));
    h = ptm_mix64(h ^ (c + 0x9e3779b97f4a7c15ull));
    return ptm_mix64(h ^ (d + 0x9e3779b97f4a7c15ull));
}

void ptm_frame_shape(uint32_t bytes, unsigned item_bytes, unsigned ipr,
                     unsigned regions, PtmFrame *f)
{
    f->items = (bytes + item_bytes - 1) / item_bytes;
    f->nreg = (f->items + ipr - 1) / ipr;
    f->words = (f->nreg + regions - 1) / regions;
    f->ipr = ipr;
    f->regions = regions;
}

void ptm_frame_word(const PtmFrame *f, uint32_t j, unsigned mvb_items,
                    PtmBusCycle *bc)
{
    if (j == 0) {
        bc->sof = 1;
        if (mvb_items) {
            bc->mvb_vld = (1u << mvb_items) - 1;
            bc->mvb_src_rdy = 1;
        }
    }
    if (j == f->words - 1) {
        uint32_t first = j * f->regions;
        unsigned r = MIN(f->nreg, first + f->regions) - 1 - first;

        bc->eof = 1u << r;
        bc->eof_pos[r] = (f->items - 1) % f->ipr;
    }
}

int64_t ptm_param_get(const PtmParamDesc *d, const void *params)
{
    const char *p = (const char *)params + d->offset;

    switch (d->type) {
    case PTM_PARAM_BOOL:
        return *(const bool *)p;
    case PTM_PARAM_U32:
        return *(const uint32_t *)p;
    case PTM_PARAM_I32:
        return *(const int32_t *)p;
    default:
        return 0;
    }
}

const char *ptm_param_get_str(const PtmParamDesc *d, const void *params)
{
    return (const char *)params + d->offset;
}

char *ptm_param_set_str(const PtmParamDesc *d, void *params, const char *s)
{
    if (strlen(s) >= PTM_PARAM_STR_LEN) {
        return g_strdup_printf("%s is longer than %d characters", d->name,
                               PTM_PARAM_STR_LEN - 1);
    }
    g_strlcpy((char *)params + d->offset, s, PTM_PARAM_STR_LEN);
    return NULL;
}

void ptm_param_set(const PtmParamDesc *d, void *params, int64_t v)
{
    char *p = (char *)params + d->offset;

    switch (d->type) {
    case PTM_PARAM_BOOL:
        *(bool *)p = v != 0;
        break;
    case PTM_PARAM_U32:
        *(uint32_t *)p = (uint32_t)v;
        break;
    case PTM_PARAM_I32:
        *(int32_t *)p = (int32_t)v;
        break;
    default:
        break;
    }
}

char *ptm_param_check(const PtmParamDesc *d, int64_t v)
{
    if (d->type != PTM_PARAM_STR && (v < d->min || v > d->max)) {
        return g_strdup_printf("%s is %" G_GINT64_FORMAT ", allowed: %"
                               G_GINT64_FORMAT " to %" G_GINT64_FORMAT,
                               d->name, v, d->min, d->max);
    }
    return NULL;
}

static char *check_all(const PtmGenModel *m, const void *params,
                       const PtmGeometry *geo)
{
    for (unsigned i = 0; i < m->nparams; i++) {
        char *err = ptm_param_check(&m->params[i],
                                    ptm_param_get(&m->params[i], params));
        if (err) {
            return err;
        }
    }
    return m->check ? m->check(params, geo) : NULL;
}

/*
 * Every version of every generator gets a number no other has, so that the
 * names a model gives its segment lists (PtmChunk.id) can be made unique in
 * the process: two models, or two versions of one, may use the same names.
 */
static uint64_t next_serial(void)
{
    static uint64_t serial;

    return __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED);
}

PtmGen *ptm_gen_new(const PtmGenModel *m, const void *params,
                    const PtmGeometry *geo, char **err)
{
    PtmGen *g;

    *err = check_all(m, params, geo);
    if (*err) {
        return NULL;
    }
    g = g_new0(PtmGen, 1);
    g->model = m;
    g->geo = *geo;
    g->nver = 1;
    g->from[0] = 0;
    g->params[0] = g_memdup2(params, m->params_size);
    g->serial[0] = next_serial();
    return g;
}

void ptm_gen_free(PtmGen *g)
{
    if (!g) {
        return;
    }
    for (unsigned i = 0; i < g->nver; i++) {
        g_free(g->params[i]);
    }
    if (g->cache && g->model->cache_free) {
        g->model->cache_free(g->cache);
    }
    g_free(g);
}

/* Longest drain window of the card, in PCIe cycles, rounded up. */
static uint64_t longest_window(const PtmGeometry *geo)
{
    uint64_t slow = MIN(geo->pcie_hz, geo->dma_hz);

    return (uint64_t)((u128)geo->drain_period * geo->pcie_hz / slow) + 1;
}

static void drop_version(PtmGen *g, unsigned i)
{
    g_free(g->params[i]);
    memmove(&g->params[i], &g->params[i + 1],
            (g->nver - i - 1) * sizeof(g->params[0]));
    memmove(&g->from[i], &g->from[i + 1],
            (g->nver - i - 1) * sizeof(g->from[0]));
    memmove(&g->serial[i], &g->serial[i + 1],
            (g->nver - i - 1) * sizeof(g->serial[0]));
    g->nver--;
}

char *ptm_gen_set_params(PtmGen *g, const void *params, uint64_t from,
                         uint64_t now_ns)
{
    /* a window not yet counted started at most two windows ago */
    uint64_t horizon = 2 * longest_window(&g->geo);
    uint64_t now = (uint64_t)((u128)now_ns * g->geo.pcie_hz / 1000000000ull);
    uint64_t oldest = now > horizon ? now - horizon : 0;
    char *err = check_all(g->model, params, &g->geo);

    if (err) {
        return err;
    }
    /* versions that would start at or after from are replaced */
    while (g->nver > 1 && g->from[g->nver - 1] >= from) {
        drop_version(g, g->nver - 1);
    }
    if (g->nver == 1 && g->from[0] >= from) {
        drop_version(g, 0);
    }
    /* versions superseded before anything still needed */
    while (g->nver > 1 && g->from[1] <= oldest) {
        drop_version(g, 0);
    }
    if (g->nver == PTM_GEN_HISTORY) {
        /* every version may still be needed: keep them, refuse this */
        return g_strdup_printf("%d changes within two drain windows are "
                               "the most; try again later",
                               PTM_GEN_HISTORY - 1);
    }
    g->from[g->nver] = g->nver ? from : 0;
    g->params[g->nver] = g_memdup2(params, g->model->params_size);
    g->serial[g->nver] = next_serial();
    g->nver++;
    return NULL;
}

const void *ptm_gen_params_at(const PtmGen *g, uint64_t c)
{
    unsigned i = g->nver - 1;

    while (i > 0 && g->from[i] > c) {
        i--;
    }
    return g->params[i];
}

const void *ptm_gen_params(const PtmGen *g)
{
    return g->params[g->nver - 1];
}

static uint64_t gen_fill(void *opaque, const PtmProbeInfo *probe,
                         uint64_t start, uint64_t max, PtmChunk *out)
{
    const PtmGen *g = opaque;
    uint64_t pcie = g->geo.pcie_hz, n;
    unsigned i = g->nver - 1;

    /* the version whose first moment is at or before this cycle's */
    while (i > 0 && (u128)g->from[i] * probe->hz > (u128)start * pcie) {
        i--;
    }
    /* a span never straddles a change: cut it where the next one starts */
    if (i + 1 < g->nver) {
        uint64_t lim = (uint64_t)(((u128)g->from[i + 1] * probe->hz +
                                   pcie - 1) / pcie);
        if (lim > start && lim - start < max) {
            max = lim - start;
        }
    }
    n = g->model->fill(g, g->params[i], probe, start, max, out);
    if (out->id) {
        /* the model's name of the list, unique to this version */
        out->id = ptm_hash(out->id, g->serial[i], 0, 0) | 1;
    }
    return n;
}

/* The version in force at a probe's cycle, and where the next starts. */
static inline unsigned version_at(const PtmGen *g, const PtmProbeInfo *probe,
                           uint64_t c, uint64_t *next)
{
    uint64_t pcie = g->geo.pcie_hz;
    unsigned i = g->nver - 1;

    if (i == 0) {
        *next = UINT64_MAX;     /* (one version: the common case) */
        return 0;
    }
    while (i > 0 && (u128)g->from[i] * probe->hz > (u128)c * pcie) {
        i--;
    }
    *next = UINT64_MAX;
    if (i + 1 < g->nver) {
        *next = (uint64_t)(((u128)g->from[i + 1] * probe->hz + pcie - 1) /
                           pcie);
    }
    return i;
}

static bool gen_count(void *opaque, const PtmProbeShape *probe,
                      uint64_t start, uint64_t end, PtmCountState *st,
                      uint64_t *acc)
{
    const PtmGen *g = opaque;

    if (!g->model->count) {
        return false;
    }
    /*
     * piece by piece, each under one version of the parameters; a model
     * that counts declines at once or never
     */
    for (bool first = true; start < end; first = false) {
        uint64_t next, stop;
        unsigned i = version_at(g, &probe->info, start, &next);

        stop = next > start ? MIN(end, next) : end;
        if (!g->model->count(g, g->params[i], probe, start, stop, st, acc)) {
            g_assert(first);
            return false;
        }
        start = stop;
    }
    return true;
}

static void gen_settings(void *opaque, unsigned e, uint64_t cycle,
                         PtmSettings *set)
{
    const PtmGen *g = opaque;

    if (g->model->settings) {
        g->model->settings(g, ptm_gen_params_at(g, cycle), e, cycle, set);
    }
}

static uint64_t gen_reset(void *opaque, const PtmProbeInfo *probe,
                          uint64_t start, uint64_t max, bool *held)
{
    const PtmGen *g = opaque;
    uint64_t next;
    unsigned i = version_at(g, probe, start, &next);

    /* a span never straddles a change of the parameters */
    if (next > start && next - start < max) {
        max = next - start;
    }
    *held = false;
    if (!g->model->reset) {
        return max;
    }
    return g->model->reset(g, g->params[i], probe, start, max, held);
}

/* A range query over any span: only if every version answers in one. */
static PtmCost gen_cost(void *opaque)
{
    const PtmGen *g = opaque;

    if (!g->model->count || !g->model->cost) {
        return PTM_COST_WINDOW;
    }
    for (unsigned i = 0; i < g->nver; i++) {
        if (g->model->cost(g, g->params[i]) != PTM_COST_RANGE) {
            return PTM_COST_WINDOW;
        }
    }
    return PTM_COST_RANGE;
}

/* The model's period within the version in force at the cycle. */
static uint64_t gen_period(void *opaque, const PtmProbeInfo *probe,
                           uint64_t cycle, uint64_t *from, uint64_t *until,
                           uint64_t *id)
{
    const PtmGen *g = opaque;
    uint64_t pcie = g->geo.pcie_hz, span_id = 0, P;
    unsigned i = version_at(g, probe, cycle, until);

    if (!g->model->period) {
        return 0;
    }
    *from = (uint64_t)(((u128)g->from[i] * probe->hz + pcie - 1) / pcie);
    P = g->model->period(g, g->params[i], probe, cycle, from, until,
                         &span_id);
    *id = span_id ? (span_id ^ ptm_mix64(g->serial[i])) | 1 : g->serial[i];
    return P;
}

/* The model's name of a span, cut where the next parameter version starts. */
static uint64_t gen_span_id(void *opaque, const PtmProbeInfo *probe,
                            uint64_t start, uint64_t max, uint64_t *len)
{
    const PtmGen *g = opaque;
    uint64_t next, id;
    unsigned i;

    if (!g->model->span_id || max == 0) {
        return 0;
    }
    i = version_at(g, probe, start, &next);
    if (next > start && next - start < max) {
        max = next - start;
    }
    id = g->model->span_id(g, g->params[i], probe, start, max, len);
    /* (a hash of the version alone: it runs beside the model's naming) */
    return id ? (id ^ ptm_mix64(g->serial[i])) | 1 : 0;
}

/*
 * The names of [start, end): from the model's span_ids version by version,
 * or piece by piece from gen_span_id where it has none.
 */
static unsigned gen_span_ids(void *opaque, const PtmProbeInfo *probe,
                             uint64_t start, uint64_t end, uint64_t *ids,
                             uint64_t *lens, unsigned max)
{
    const PtmGen *g = opaque;
    unsigned n = 0;

    if (!g->model->span_ids) {
        for (; start < end; start += lens[n++]) {
            if (n == max) {
                return 0;
            }
            ids[n] = gen_span_id(opaque, probe, start, end - start, &lens[n]);
            if (!ids[n] || lens[n] == 0 || lens[n] > end - start) {
                return 0;
            }
        }
        return n;
    }
    while (start < end) {
        uint64_t next, lim, ver;
        unsigned i = version_at(g, probe, start, &next), k;

        lim = next > start && next < end ? next : end;
        /* (as gen_span_id names a piece of this version) */
        ver = ptm_mix64(g->serial[i]);
        k = g->model->span_ids(g, g->params[i], probe, start, lim,
                               ids + n, lens + n, max - n);
        if (!k) {
            return 0;
        }
        for (unsigned j = n; j < n + k; j++) {
            ids[j] = (ids[j] ^ ver) | 1;
        }
        n += k;
        start = lim;
    }
    return n;
}

const PtmSourceOps ptm_gen_source_ops = {
    .fill = gen_fill,
    .count = gen_count,
    .settings = gen_settings,
    .reset = gen_reset,
    .period = gen_period,
    .span_id = gen_span_id,
    .span_ids = gen_span_ids,
    .cost = gen_cost,
};

/* ---------------------------------------------------------------- state */

#define GEN_SAVE_MAGIC 0x50544d47u      /* "PTMG" */

static void put64(GByteArray *b, uint64_t v)
{
    uint8_t le[8];

    for (int i = 0; i < 8; i++) {
        le[i] = v >> (8 * i);
    }
    g_byte_array_append(b, le, 8);
}

static bool get64(const uint8_t **p, size_t *left, uint64_t *v)
{
    if (*left < 8) {
        return false;
    }
    *v = 0;
    for (int i = 0; i < 8; i++) {
        *v |= (uint64_t)(*p)[i] << (8 * i);
    }
    *p += 8;
    *left -= 8;
    return true;
}

void *ptm_gen_save(const PtmGen *g, size_t *len)
{
    GByteArray *b = g_byte_array_new();
    const PtmGenModel *m = g->model;

    put64(b, GEN_SAVE_MAGIC);
    put64(b, m->nparams);
    put64(b, g->nver);
    for (unsigned i = 0; i < g->nver; i++) {
        put64(b, g->from[i]);
        for (unsigned k = 0; k < m->nparams; k++) {
            const PtmParamDesc *d = &m->params[k];

            if (d->type == PTM_PARAM_STR) {
                const char *s = ptm_param_get_str(d, g->params[i]);
                size_t n = strlen(s);
                static const uint8_t zero[8];

                put64(b, n);
                g_byte_array_append(b, (const uint8_t *)s, n);
                g_byte_array_append(b, zero, (8 - n % 8) % 8);
                continue;
            }
            put64(b, (uint64_t)ptm_param_get(d, g->params[i]));
        }
    }
    *len = b->len;
    return g_byte_array_free(b, FALSE);
}

char *ptm_gen_load(PtmGen *g, const void *buf, size_t len)
{
    const PtmGenModel *m = g->model;
    const uint8_t *p = buf;
    uint64_t magic, np, nver, v;
    void *params[PTM_GEN_HISTORY] = { 0 };
    uint64_t from[PTM_GEN_HISTORY];
    char *err = NULL;

    if (!get64(&p, &len, &magic) || magic != GEN_SAVE_MAGIC ||
        !get64(&p, &len, &np) || np != m->nparams ||
        !get64(&p, &len, &nver) ||
        nver < 1 || nver > PTM_GEN_HISTORY) {
        return g_strdup_printf("traffic state: not a state of a %s "
                               "generator", m->name);
    }
    for (unsigned i = 0; i < nver && !err; i++) {
        params[i] = g_malloc0(m->params_size);
        if (!get64(&p, &len, &from[i])) {
            err = g_strdup("traffic state: truncated");
        }
        for (unsigned k = 0; k < m->nparams && !err; k++) {
            if (!get64(&p, &len, &v)) {
                err = g_strdup("traffic state: truncated");
            } else if (m->params[k].type == PTM_PARAM_STR) {
                size_t padded = (v + 7) / 8 * 8;
                g_autofree char *s = NULL;

                if (v >= PTM_PARAM_STR_LEN || padded > len) {
                    err = g_strdup("traffic state: bad string");
                    break;
                }
                s = g_strndup((const char *)p, v);
                p += padded;
                len -= padded;
                err = ptm_param_set_str(&m->params[k], params[i], s);
            } else {
                err = ptm_param_check(&m->params[k], (int64_t)v);
                ptm_param_set(&m->params[k], params[i], (int64_t)v);
            }
        }
        if (!err && m->check) {
            err = m->check(params[i], &g->geo);
        }
        /* versions take effect one after another */
        if (!err && i && from[i] <= from[i - 1]) {
            err = g_strdup("traffic state: versions out of order");
        }
    }
    if (!err && len) {
        err = g_strdup("traffic state: trailing bytes");
    }
    if (err) {
        for (unsigned i = 0; i < nver; i++) {
            g_free(params[i]);
        }
        return err;
    }
    for (unsigned i = 0; i < g->nver; i++) {
        g_free(g->params[i]);
    }
    g->nver = nver;
    memcpy(g->from, from, nver * sizeof(from[0]));
    memcpy(g->params, params, nver * sizeof(params[0]));
    for (unsigned i = 0; i < nver; i++) {
        g->serial[i] = next_serial();
    }
    return NULL;
}

const PtmGenModel *ptm_gen_model_in(const PtmGenModel *const *list,
                                    const char *name)
{
    for (unsigned i = 0; list[i]; i++) {
        if (!strcmp(list[i]->name, name)) {
            return list[i];
        }
    }
    return NULL;
}
