/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plugin generator: loads a shared object that implements the ABI of
 * ptm-plugin-abi.h and passes the core's questions to an instance of it.
 *
 * check() loads the object and creates an instance once, so that a wrong
 * path or bad arguments are refused at start-up and on qom-set. The
 * instances that answer fill() are derived data in PtmGen.cache, one per
 * (path, args) of the live parameter versions, unloaded with the cache.
 */
#include <glib.h>
#include <gmodule.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ptm-plugin.h"
#include "ptm-count.h"
#include "ptm-plugin-abi.h"

typedef unsigned __int128 u128;

typedef struct Plugin {
    char *path, *args;          /* the key */
    GModule *module;            /* NULL: it could not be loaded, idle */
    const PtmPluginApi *api;
    void *inst;
    bool warned;                /* about a chunk that broke the rules */
    /* the table's count(), NULL for a version 1 table */
    bool (*count)(void *inst, const PtmProbeShape *probe, uint64_t start,
                  uint64_t end, PtmCountState *st, uint64_t *acc);
    /* the table's reset(), NULL for a version 1 table */
    uint64_t (*reset)(void *inst, const PtmProbeInfo *probe, uint64_t start,
                      uint64_t max, bool *held);
    /* the table's cost(), NULL before version 3 */
    PtmCost (*cost)(void *inst);
    /* the table's period(), NULL before version 4 */
    uint64_t (*period)(void *inst, const PtmProbeInfo *probe, uint64_t cycle,
                       uint64_t *from, uint64_t *until, uint64_t *id);
} Plugin;

typedef struct PluginCache {
    GPtrArray *plugins;         /* Plugin *, of the live versions */
    Plugin *last;               /* the one the previous call used */
} PluginCache;

static void plugin_free(Plugin *pl)
{
    if (pl->inst) {
        pl->api->destroy(pl->inst);
    }
    if (pl->module) {
        g_module_close(pl->module);
    }
    g_free(pl->path);
    g_free(pl->args);
    g_free(pl);
}

/* Load the object and make an instance; NULL and *err on a refusal. */
static Plugin *plugin_load(const char *path, const char *args,
                           const PtmGeometry *geo, char **err)
{
    g_autofree char *full = NULL;
    const PtmPluginApi *api;
    PtmPluginEntry entry;
    char *perr = NULL;
    gpointer sym;
    GModule *mod;
    Plugin *pl;
    void *inst;

    if (!path[0]) {
        *err = g_strdup("path is empty: give the path of a plugin shared "
                        "object");
        return NULL;
    }
    /* relative to the current directory, not dlopen()'s search path */
    full = g_canonicalize_filename(path, NULL);
    if (!g_file_test(full, G_FILE_TEST_EXISTS)) {
        *err = g_strdup_printf("plugin %s: no such file", path);
        return NULL;
    }
    if (!g_file_test(full, G_FILE_TEST_IS_REGULAR)) {
        *err = g_strdup_printf("plugin %s: not a regular file", path);
        return NULL;
    }
    mod = g_module_open(full, G_MODULE_BIND_LOCAL);
    if (!mod) {
        *err = g_strdup_printf("plugin %s: not a shared object that can be "
                               "loaded (%s)", path, g_module_error());
        return NULL;
    }
    if (!g_module_symbol(mod, PTM_PLUGIN_ENTRY, &sym) || !sym) {
        *err = g_strdup_printf("plugin %s: no symbol %s, not a telemetry "
                               "traffic plugin", path, PTM_PLUGIN_ENTRY);
        g_module_close(mod);
        return NULL;
    }
    entry = (PtmPluginEntry)sym;
    api = entry();
    if (!api) {
        *err = g_strdup_printf("plugin %s: %s() returned NULL", path,
                               PTM_PLUGIN_ENTRY);
        g_module_close(mod);
        return NULL;
    }
    if (api->abi_version < PTM_PLUGIN_ABI_OLDEST ||
        api->abi_version > PTM_PLUGIN_ABI_VERSION) {
        *err = g_strdup_printf("plugin %s: ABI version %u, this build takes "
                               "versions %u to %u: rebuild the plugin "
                               "against its ptm-plugin-abi.h", path,
                               api->abi_version, PTM_PLUGIN_ABI_OLDEST,
                               PTM_PLUGIN_ABI_VERSION);
        g_module_close(mod);
        return NULL;
    }
    if (!api->create || !api->fill || !api->destroy) {
        *err = g_strdup_printf("plugin %s: create, fill and destroy are "
                               "required", path);
        g_module_close(mod);
        return NULL;
    }
    inst = api->create(args, geo, &perr);
    if (!inst) {
        *err = g_strdup_printf("plugin %s (%s): %s", path,
                               api->name ? api->name : "?",
                               perr ? perr : "create() failed");
        free(perr);
        g_module_close(mod);
        return NULL;
    }
    free(perr);     /* a message without a refusal means nothing */
    pl = g_new0(Plugin, 1);
    pl->module = mod;
    pl->api = api;
    pl->inst = inst;
    /* a version 1 table ends before count(): never read past it */
    pl->count = api->abi_version >= 2 ? api->count : NULL;
    pl->reset = api->abi_version >= 2 ? api->reset : NULL;
    pl->cost = api->abi_version >= 3 ? api->cost : NULL;
    pl->period = api->abi_version >= 4 ? api->period : NULL;
    return pl;
}

/* The rules of a chunk the core relies on. */
static bool chunk_ok(const PtmChunk *ch, uint64_t n, uint64_t max)
{
    u128 sum = 0;

    if (n < 1 || n > max || !ch->seg || ch->nseg < 1 ||
        ch->nseg > PTM_CHUNK_SEGMENTS || ch->repeat < 1) {
        return false;
    }
    for (unsigned i = 0; i < ch->nseg; i++) {
        if (ch->seg[i].cycles == 0) {
            return false;
        }
        sum += ch->seg[i].cycles;
    }
    return sum * ch->repeat == n;
}

/* What the core itself assumes without a source. */
static uint64_t idle_fill(const PtmGeometry *geo, uint64_t max,
                          PtmChunk *out)
{
    PtmSegment *s = &out->scratch[0];

    memset(s, 0, sizeof(*s));
    s->cycles = max;
    s->link_up = 1;
    s->tag_free = MIN(geo->tag_capacity, 0x7FFu);
    s->stfifo_free = geo->stfifo_capacity;
    out->seg = out->scratch;
    out->nseg = 1;
    out->repeat = 1;
    out->id = 0;            /* not the list the plugin may have named */
    return max;
}

static bool plugin_is(const Plugin *pl, const PtmPluginParams *p)
{
    return !strcmp(pl->path, p->path) && !strcmp(pl->args, p->args);
}

static bool in_use(const PtmGen *gen, const Plugin *pl)
{
    for (unsigned i = 0; i < gen->nver; i++) {
        if (plugin_is(pl, gen->params[i])) {
            return true;
        }
    }
    return false;
}

static void cache_free(void *cache)
{
    PluginCache *c = cache;

    g_ptr_array_free(c->plugins, TRUE);
    g_free(c);
}

/* The instance for the parameters in force. */
static Plugin *plugin_for(const PtmGen *gen, const void *params)
{
    PtmGen *g = (PtmGen *)gen;      /* the cache is derived data only */
    const PtmPluginParams *p = params;
    PluginCache *c = g->cache;
    char *err = NULL;
    Plugin *pl;

    if (!c) {
        c = g->cache = g_new0(PluginCache, 1);
        c->plugins = g_ptr_array_new_with_free_func((GDestroyNotify)plugin_free);
    }
    if (c->last && plugin_is(c->last, p)) {
        return c->last;
    }
    for (unsigned i = 0; i < c->plugins->len; i++) {
        pl = g_ptr_array_index(c->plugins, i);
        if (plugin_is(pl, p)) {
            c->last = pl;
            return pl;
        }
    }
    /* new values: first unload what no version needs any more */
    c->last = NULL;
    for (unsigned i = c->plugins->len; i-- > 0;) {
        if (!in_use(gen, g_ptr_array_index(c->plugins, i))) {
            g_ptr_array_remove_index(c->plugins, i);
        }
    }
    pl = plugin_load(p->path, p->args, &gen->geo, &err);
    if (!pl) {
        /* it passed check() when set, so the file changed since */
        g_warning("%s; the card sees an idle link instead", err);
        g_free(err);
        pl = g_new0(Plugin, 1);
    }
    pl->path = g_strdup(p->path);
    pl->args = g_strdup(p->args);
    g_ptr_array_add(c->plugins, pl);
    c->last = pl;
    return pl;
}

static uint64_t plugin_fill(const PtmGen *gen, const void *params,
                            const PtmProbeInfo *probe, uint64_t start,
                            uint64_t max, PtmChunk *out)
{
    Plugin *pl = plugin_for(gen, params);
    uint64_t n;

    if (pl->inst) {
        n = pl->api->fill(pl->inst, probe, start, max, out);
        if (chunk_ok(out, n, max)) {
            return n;
        }
        if (!pl->warned) {
            g_warning("plugin %s: fill() broke the chunk rules at cycle %"
                      G_GUINT64_FORMAT " of endpoint %u's %s probe; such "
                      "spans are idle", pl->path, start, probe->endpoint,
                      probe->domain == PTM_DOMAIN_PCIE ? "PCIe" : "DMA");
            pl->warned = true;
        }
    }
    return idle_fill(&gen->geo, max, out);
}

static bool plugin_count(const PtmGen *gen, const void *params,
                         const PtmProbeShape *probe, uint64_t start,
                         uint64_t end, PtmCountState *st, uint64_t *acc)
{
    Plugin *pl = plugin_for(gen, params);

    if (!pl->inst || !pl->count) {
        return false;
    }
    if (start == end) {
        return pl->count(pl->inst, probe, start, end, NULL, NULL);
    }
    if (!pl->count(pl->inst, probe, start, end, st, acc)) {
        /* it said it counts: a span it declines is counted from fill() */
        PtmChunk *ch = ptm_chunk_new();

        while (start < end) {
            ch->seg = ch->scratch;
            ch->id = 0;
            start += plugin_fill(gen, params, &probe->info, start,
                                 end - start, ch);
            ptm_count_chunk(probe, st, ch, acc);
        }
        ptm_chunk_free(ch);
    }
    return true;
}

/* Per window unless a counting instance declares a range query. */
static PtmCost plugin_cost(const PtmGen *gen, const void *params)
{
    Plugin *pl = plugin_for(gen, params);

    if (!pl->inst || !pl->count || !pl->cost ||
        pl->cost(pl->inst) != PTM_COST_RANGE) {
        return PTM_COST_WINDOW;
    }
    return PTM_COST_RANGE;
}

/* The plugin's period within the span of the parameters' version. */
static uint64_t plugin_period(const PtmGen *gen, const void *params,
                              const PtmProbeInfo *probe, uint64_t cycle,
                              uint64_t *from, uint64_t *until, uint64_t *id)
{
    Plugin *pl = plugin_for(gen, params);
    uint64_t f = 0, u = UINT64_MAX, name = 0, P;

    if (!pl->inst || !pl->period) {
        return 0;
    }
    P = pl->period(pl->inst, probe, cycle, &f, &u, &name);
    if (P == 0 || f > cycle || u <= cycle) {
        /* none here, or an answer that breaks the rules: none */
        if (P == 0 && u > cycle) {
            *until = MIN(*until, u);
        }
        return 0;
    }
    *from = MAX(*from, f);
    *until = MIN(*until, u);
    *id = name | 1;
    return P;
}

static void plugin_settings(const PtmGen *gen, const void *params,
                            unsigned e, uint64_t cycle, PtmSettings *set)
{
    Plugin *pl = plugin_for(gen, params);

    if (pl->inst && pl->api->settings) {
        pl->api->settings(pl->inst, e, cycle, set);
    }
}

static char *plugin_check(const void *params, const PtmGeometry *geo)
{
    const PtmPluginParams *p = params;
    char *err = NULL;
    Plugin *pl = plugin_load(p->path, p->args, geo, &err);

    if (pl) {
        plugin_free(pl);
    }
    return err;
}

static void plugin_defaults(void *params)
{
    memset(params, 0, sizeof(PtmPluginParams));
}

static uint64_t plugin_reset(const PtmGen *gen, const void *params,
                             const PtmProbeInfo *probe, uint64_t start,
                             uint64_t max, bool *held)
{
    Plugin *pl = plugin_for(gen, params);
    uint64_t n;

    *held = false;
    if (!pl->inst || !pl->reset) {
        return max;
    }
    n = pl->reset(pl->inst, probe, start, max, held);
    if (n == 0 || n > max) {
        if (!pl->warned) {
            g_warning("plugin %s: reset() answered %" PRIu64 " cycles for "
                      "at most %" PRIu64 "; taken as no reset", pl->path, n,
                      max);
            pl->warned = true;
        }
        *held = false;
        return max;
    }
    return n;
}

#define OFF(f) offsetof(PtmPluginParams, f)
static const PtmParamDesc plugin_params[] = {
    { "path", PTM_PARAM_STR, OFF(path), 0, 0,
      "path of the plugin's shared object (see docs/plugins.md)" },
    { "args", PTM_PARAM_STR, OFF(args), 0, 0,
      "free text given to the plugin, e.g. \"load=50,seed=3\"" },
};
#undef OFF

const PtmGenModel ptm_model_plugin = {
    .name = "plugin",
    .summary = "traffic from a shared object (ptm-plugin-abi.h)",
    .params_size = sizeof(PtmPluginParams),
    .params = plugin_params,
    .nparams = G_N_ELEMENTS(plugin_params),
    .defaults = plugin_defaults,
    .check = plugin_check,
    .fill = plugin_fill,
    .count = plugin_count,
    .cost = plugin_cost,
    .period = plugin_period,
    .settings = plugin_settings,
    .reset = plugin_reset,
    .cache_free = cache_free,
};
