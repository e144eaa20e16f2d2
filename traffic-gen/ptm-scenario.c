/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scenario generator. A parsed file is a list of phases, each with a
 * generator of its own made by ptm_gen_new() from its model and parameters
 * on the card's geometry; fill and settings find the phase of a cycle and
 * delegate to it, cutting a span where the next phase starts.
 *
 * The parsed files are derived data and live in PtmGen.cache, keyed by
 * the file named in the versions of the parameter history. A file is read
 * once while any version names it, so what plays never changes under the
 * core's feet, even if the file is edited meanwhile; it is read anew only
 * after no version names it any more.
 */
#include <errno.h>
#include <glib.h>
#include <stdarg.h>
#include <string.h>

#include "ptm-scenario.h"
#include "ptm-pattern.h"

typedef unsigned __int128 u128;

/* One pass of a schedule may last up to 2^62 ns (about 146 years). */
#define MAX_PASS_NS (1ull << 62)

typedef struct Phase {
    char *group;
    uint64_t start_ns;          /* from the start of a pass */
    PtmGen *gen;
    bool owns_gen;              /* else an earlier phase's with equal values */
    uint32_t reset;             /* probes held in reset: bit 2 e + domain */
} Phase;

typedef struct Scenario {
    char *file;                 /* the key: the file a version names */
    unsigned nphases;
    Phase *phase;
    uint64_t total_ns;          /* one pass */
} Scenario;

typedef struct ScenarioCache {
    GPtrArray *scenarios;       /* Scenario *, the files of live versions */
    Scenario *last;             /* the one the previous call used */
} ScenarioCache;

static void scenario_free(Scenario *sc)
{
    if (!sc) {
        return;
    }
    for (unsigned i = 0; i < sc->nphases; i++) {
        if (sc->phase[i].owns_gen) {
            ptm_gen_free(sc->phase[i].gen);
        }
        g_free(sc->phase[i].group);
    }
    g_free(sc->phase);
    g_free(sc->file);
    g_free(sc);
}

/* ------------------------------------------------------------ parsing */

char *ptm_scenario_parse_duration(const char *text, uint64_t *ns)
{
    static const struct {
        const char *unit;
        uint64_t ns;
    } units[] = {
        { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
    };
    g_autofree char *s = g_strstrip(g_strdup(text));
    char *end;
    guint64 v;

    if (g_ascii_isdigit(s[0])) {
        errno = 0;
        v = g_ascii_strtoull(s, &end, 10);
        while (g_ascii_isspace(*end)) {
            end++;
        }
        for (unsigned i = 0; i < G_N_ELEMENTS(units) && !errno; i++) {
            if (strcmp(end, units[i].unit)) {
                continue;
            }
            if (v == 0) {
                break;
            }
            if (v > MAX_PASS_NS / units[i].ns) {
                return g_strdup_printf("'%s' is too long (at most 2^62 ns)",
                                       text);
            }
            *ns = v * units[i].ns;
            return NULL;
        }
    }
    return g_strdup_printf("'%s' is not a duration: a whole number above 0 "
                           "with a unit ns, us, ms or s, e.g. 500us", text);
}

static char *G_GNUC_PRINTF(3, 4) file_error(const char *file,
                                            const char *group,
                                            const char *fmt, ...)
{
    g_autofree char *msg = NULL;
    va_list ap;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (group) {
        return g_strdup_printf("scenario %s, [%s]: %s", file, group, msg);
    }
    return g_strdup_printf("scenario %s: %s", file, msg);
}

/*
 * GKeyFile merges a group given twice into one, which would silently mix
 * two phases: find such a group in the text itself.
 */
static char *duplicate_group(const char *text)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash,
                                                       g_str_equal,
                                                       g_free, NULL);

    for (unsigned i = 0; lines[i]; i++) {
        const char *l = lines[i], *end;
        char *name;

        while (g_ascii_isspace(*l)) {
            l++;
        }
        end = strrchr(l, ']');
        if (*l != '[' || !end) {
            continue;
        }
        name = g_strndup(l + 1, end - l - 1);
        if (g_hash_table_contains(seen, name)) {
            return name;
        }
        g_hash_table_add(seen, name);
    }
    return NULL;
}

/* Names of the models a phase may use, for messages. */
static char *model_names(void)
{
    GString *s = g_string_new(NULL);

    for (unsigned i = 0; ptm_gen_phase_models[i]; i++) {
        g_string_append_printf(s, "%s%s", s->len ? ", " : "",
                               ptm_gen_phase_models[i]->name);
    }
    return g_string_free(s, FALSE);
}

static char *param_names(const PtmGenModel *m)
{
    GString *s = g_string_new(NULL);

    for (unsigned i = 0; i < m->nparams; i++) {
        g_string_append_printf(s, "%s%s", i ? ", " : "", m->params[i].name);
    }
    return g_string_free(s, FALSE);
}

static const PtmParamDesc *find_param(const PtmGenModel *m, const char *name)
{
    for (unsigned i = 0; i < m->nparams; i++) {
        if (!strcmp(m->params[i].name, name)) {
            return &m->params[i];
        }
    }
    return NULL;
}

/* One key's value into the parameters; NULL or a message naming the key. */
static char *set_param(const PtmParamDesc *d, void *params, const char *text)
{
    g_autofree char *v = g_strstrip(g_strdup(text));
    static const char *const yes[] = { "true", "on", "yes", "1" };
    static const char *const no[] = { "false", "off", "no", "0" };
    const char *digits = v;
    int64_t n = -1;
    char *end;

    switch (d->type) {
    case PTM_PARAM_STR:
        return ptm_param_set_str(d, params, v);
    case PTM_PARAM_BOOL:
        for (unsigned i = 0; i < G_N_ELEMENTS(yes); i++) {
            if (!g_ascii_strcasecmp(v, yes[i])) {
                n = 1;
            } else if (!g_ascii_strcasecmp(v, no[i])) {
                n = 0;
            }
        }
        if (n < 0) {
            return g_strdup_printf("%s=%s: expected true or false (or on, "
                                   "off)", d->name, v);
        }
        break;
    default:
        /* decimal, or hexadecimal with 0x; never octal by surprise */
        if (*digits == '-' || *digits == '+') {
            digits++;
        }
        errno = 0;
        n = g_ascii_strtoll(v, &end, g_str_has_prefix(digits, "0x") ||
                                     g_str_has_prefix(digits, "0X") ? 16 : 10);
        if (!g_ascii_isxdigit(*digits) || *end || errno) {
            return g_strdup_printf("%s=%s: not a whole number", d->name, v);
        }
        break;
    }
    {
        char *err = ptm_param_check(d, n);

        if (err) {
            return err;
        }
    }
    ptm_param_set(d, params, n);
    return NULL;
}

/*
 * The probes a phase holds in reset: a comma list of pcie (every
 * endpoint's PCIe probe), pcie<e>, dma (DMA_RESET: every DMA probe), all,
 * or none.
 */
static char *parse_reset(const char *text, const PtmGeometry *geo,
                         uint32_t *mask)
{
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    uint32_t pcie = 0, dma = 0;

    for (unsigned e = 0; e < geo->endpoints && e < 16; e++) {
        pcie |= 1u << (2 * e);
        dma |= 1u << (2 * e + 1);
    }
    *mask = 0;
    for (unsigned i = 0; items[i]; i++) {
        char *it = g_strstrip(items[i]);
        char *end;
        unsigned long e;

        if (!g_ascii_strcasecmp(it, "none")) {
            continue;
        } else if (!g_ascii_strcasecmp(it, "all")) {
            *mask |= pcie | dma;
        } else if (!g_ascii_strcasecmp(it, "pcie")) {
            *mask |= pcie;
        } else if (!g_ascii_strcasecmp(it, "dma")) {
            *mask |= dma;
        } else if (!g_ascii_strncasecmp(it, "pcie", 4) &&
                   g_ascii_isdigit(it[4]) &&
                   (e = strtoul(it + 4, &end, 10), !*end)) {
            if (e >= geo->endpoints) {
                return g_strdup_printf("%s: the card has %u endpoint%s", it,
                                       geo->endpoints,
                                       geo->endpoints == 1 ? "" : "s");
            }
            *mask |= 1u << (2 * e);
        } else {
            return g_strdup_printf("'%s': not none, all, pcie, pcie<e> or "
                                   "dma (DMA_RESET is one for all "
                                   "endpoints)", it);
        }
    }
    return NULL;
}

/* Group `group` of the file as the next phase of sc. */
static char *parse_phase(const char *file, GKeyFile *kf, const char *group,
                         const PtmGeometry *geo, Scenario *sc)
{
    static const char *const reserved[] = { "model", "duration", "reset" };
    Phase *ph = &sc->phase[sc->nphases];
    g_autofree char *model = NULL, *dur = NULL;
    g_autofree void *params = NULL;
    g_auto(GStrv) keys = NULL;
    const PtmGenModel *m;
    uint64_t ns;
    char *err;

    if (strcmp(group, "phase") && !g_str_has_prefix(group, "phase ")) {
        return file_error(file, group, "not a phase: every group is a "
                          "phase named [phase <name>]");
    }
    model = g_key_file_get_string(kf, group, "model", NULL);
    if (!model) {
        return file_error(file, group, "no model= key");
    }
    g_strstrip(model);
    if (!strcmp(model, ptm_model_scenario.name)) {
        return file_error(file, group, "model=scenario: a scenario cannot "
                          "be a phase of a scenario");
    }
    m = ptm_gen_phase_model_find(model);
    if (!m) {
        g_autofree char *names = model_names();

        return file_error(file, group, "model=%s: no such model (models: "
                          "%s)", model, names);
    }
    dur = g_key_file_get_string(kf, group, "duration", NULL);
    if (!dur) {
        return file_error(file, group, "no duration= key");
    }
    err = ptm_scenario_parse_duration(dur, &ns);
    if (err) {
        g_autofree char *msg = err;

        return file_error(file, group, "duration: %s", msg);
    }
    if (ns > MAX_PASS_NS - sc->total_ns) {
        return file_error(file, group, "duration: the phases last longer "
                          "than 2^62 ns together");
    }

    g_autofree char *rst = g_key_file_get_string(kf, group, "reset", NULL);
    if (rst) {
        err = parse_reset(rst, geo, &ph->reset);
        if (err) {
            g_autofree char *msg = err;

            return file_error(file, group, "reset: %s", msg);
        }
    }

    params = g_malloc0(m->params_size);
    m->defaults(params);
    keys = g_key_file_get_keys(kf, group, NULL, NULL);
    for (unsigned i = 0; keys && keys[i]; i++) {
        const char *k = keys[i];
        const PtmParamDesc *d;
        g_autofree char *val = NULL;
        g_autoptr(GError) gerr = NULL;
        bool skip = false;

        for (unsigned r = 0; r < G_N_ELEMENTS(reserved); r++) {
            skip |= !strcmp(k, reserved[r]);
        }
        if (skip) {
            continue;
        }
        d = find_param(m, k);
        if (!d) {
            g_autofree char *names = param_names(m);

            return file_error(file, group, "%s: %s has no such parameter "
                              "(it has: %s)", k, m->name,
                              m->nparams ? names : "none");
        }
        val = g_key_file_get_string(kf, group, k, &gerr);
        if (!val) {
            return file_error(file, group, "%s: %s", k, gerr->message);
        }
        err = set_param(d, params, val);
        if (err) {
            g_autofree char *msg = err;

            return file_error(file, group, "%s", msg);
        }
    }

    /* phases with equal values share one generator and its cache */
    for (unsigned j = 0; j < sc->nphases; j++) {
        PtmGen *o = sc->phase[j].gen;

        if (o->model == m &&
            !memcmp(ptm_gen_params(o), params, m->params_size)) {
            ph->gen = o;
            break;
        }
    }
    if (!ph->gen) {
        ph->gen = ptm_gen_new(m, params, geo, &err);
        if (!ph->gen) {
            g_autofree char *msg = err;

            return file_error(file, group, "%s", msg);
        }
        ph->owns_gen = true;
    }
    ph->group = g_strdup(group);
    ph->start_ns = sc->total_ns;
    sc->total_ns += ns;
    sc->nphases++;
    return NULL;
}

/* The schedule in the file; NULL and *err when the file is refused. */
static Scenario *scenario_parse(const char *file, const PtmGeometry *geo,
                                char **err)
{
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autoptr(GError) gerr = NULL;
    g_autofree char *text = NULL, *dup = NULL;
    g_auto(GStrv) groups = NULL;
    gsize ngroups;
    Scenario *sc;

    if (!file[0]) {
        *err = g_strdup("file is empty: give the path of a scenario key "
                        "file");
        return NULL;
    }
    if (!g_file_get_contents(file, &text, NULL, &gerr)) {
        *err = g_strdup_printf("scenario: %s", gerr->message);
        return NULL;
    }
    if (!g_key_file_load_from_data(kf, text, -1, G_KEY_FILE_NONE, &gerr)) {
        *err = file_error(file, NULL, "%s", gerr->message);
        return NULL;
    }
    dup = duplicate_group(text);
    if (dup) {
        *err = file_error(file, NULL, "group [%s] is given twice", dup);
        return NULL;
    }
    groups = g_key_file_get_groups(kf, &ngroups);
    if (ngroups == 0) {
        *err = file_error(file, NULL, "no phases (groups named [phase "
                          "<name>])");
        return NULL;
    }
    sc = g_new0(Scenario, 1);
    sc->phase = g_new0(Phase, ngroups);
    for (gsize i = 0; i < ngroups; i++) {
        *err = parse_phase(file, kf, groups[i], geo, sc);
        if (*err) {
            scenario_free(sc);
            return NULL;
        }
    }
    return sc;
}

/* In place of a file that passed check() but is unreadable by now. */
static Scenario *scenario_idle(const PtmGeometry *geo)
{
    Scenario *sc = g_new0(Scenario, 1);
    g_autofree void *params = g_malloc0(ptm_model_idle.params_size);
    char *err = NULL;

    ptm_model_idle.defaults(params);
    sc->phase = g_new0(Phase, 1);
    sc->phase[0].group = g_strdup("idle");
    sc->phase[0].gen = ptm_gen_new(&ptm_model_idle, params, geo, &err);
    sc->phase[0].owns_gen = true;
    g_assert(sc->phase[0].gen);
    sc->nphases = 1;
    sc->total_ns = MAX_PASS_NS;     /* one phase, whether it loops or not */
    return sc;
}

/* ------------------------------------------------------------ playing */

static bool in_use(const PtmGen *gen, const Scenario *sc)
{
    for (unsigned i = 0; i < gen->nver; i++) {
        const PtmScenarioParams *p = gen->params[i];

        if (!strcmp(sc->file, p->file)) {
            return true;
        }
    }
    return false;
}

static void cache_free(void *cache)
{
    ScenarioCache *c = cache;

    g_ptr_array_free(c->scenarios, TRUE);
    g_free(c);
}

/* The parsed file the parameters name. */
static const Scenario *scenario_for(const PtmGen *gen, const void *params)
{
    PtmGen *g = (PtmGen *)gen;      /* the cache is derived data only */
    const PtmScenarioParams *p = params;
    ScenarioCache *c = g->cache;
    Scenario *sc;
    char *err = NULL;

    if (!c) {
        c = g->cache = g_new0(ScenarioCache, 1);
        c->scenarios =
            g_ptr_array_new_with_free_func((GDestroyNotify)scenario_free);
    }
    if (c->last && !strcmp(c->last->file, p->file)) {
        return c->last;
    }
    for (unsigned i = 0; i < c->scenarios->len; i++) {
        sc = g_ptr_array_index(c->scenarios, i);
        if (!strcmp(sc->file, p->file)) {
            c->last = sc;
            return sc;
        }
    }
    /* a file not seen before: first forget those no version names */
    c->last = NULL;
    for (unsigned i = c->scenarios->len; i-- > 0;) {
        if (!in_use(gen, g_ptr_array_index(c->scenarios, i))) {
            g_ptr_array_remove_index(c->scenarios, i);
        }
    }
    sc = scenario_parse(p->file, &gen->geo, &err);
    if (!sc) {
        /* it passed check() when set, so it changed since: say so once */
        g_warning("%s; the card sees an idle link instead", err);
        g_free(err);
        sc = scenario_idle(&gen->geo);
    }
    sc->file = g_strdup(p->file);
    g_ptr_array_add(c->scenarios, sc);
    c->last = sc;
    return sc;
}

/* The first cycle of a clock of hz Hz whose time (rounded down) is >= ns. */
static uint64_t ns_cycle(uint64_t ns, uint64_t hz)
{
    return (uint64_t)(((u128)ns * hz + 999999999ull) / 1000000000ull);
}

/*
 * The phase cycle c of a clock of hz Hz falls in, and the cycles
 * [*from, *to) it lasts (to UINT64_MAX: for ever).
 */
static const Phase *phase_at(const Scenario *sc, bool loop, uint64_t c,
                             uint64_t hz, uint64_t *from, uint64_t *to)
{
    uint64_t t = ptm_cycle_ns(c, hz), base = 0, end;
    unsigned n = sc->nphases, lo = 0, hi = n;

    if (t >= sc->total_ns) {
        if (!loop) {
            *from = ns_cycle(sc->phase[n - 1].start_ns, hz);
            *to = UINT64_MAX;
            return &sc->phase[n - 1];
        }
        base = t - t % sc->total_ns;
        t %= sc->total_ns;
    }
    /* the last phase that starts at or before t */
    while (hi - lo > 1) {
        unsigned mid = (lo + hi) / 2;

        if (sc->phase[mid].start_ns <= t) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    *from = ns_cycle(base + sc->phase[lo].start_ns, hz);
    if (lo + 1 == n && !loop) {
        *to = UINT64_MAX;
    } else {
        end = lo + 1 < n ? sc->phase[lo + 1].start_ns : sc->total_ns;
        *to = ns_cycle(base + end, hz);
    }
    return &sc->phase[lo];
}

static uint64_t scenario_fill(const PtmGen *gen, const void *params,
                              const PtmProbeInfo *probe, uint64_t start,
                              uint64_t max, PtmChunk *out)
{
    const PtmScenarioParams *p = params;
    const Scenario *sc = scenario_for(gen, params);
    uint64_t from, to;
    const Phase *ph = phase_at(sc, p->loop, start, probe->hz, &from, &to);

    /* a span never straddles a phase change */
    if (to - start < max) {
        max = to - start;
    }
    /* the phase's model sees its own time, from the phase's first cycle */
    return ptm_gen_source_ops.fill(ph->gen, probe, start - from, max, out);
}

/*
 * Phase by phase with the phase's model, when every phase's model counts
 * (else the scenario declines, at once).
 */
static bool scenario_count(const PtmGen *gen, const void *params,
                           const PtmProbeShape *sh, uint64_t start,
                           uint64_t end, PtmCountState *st, uint64_t *acc)
{
    const PtmScenarioParams *p = params;
    const Scenario *sc = scenario_for(gen, params);

    for (unsigned i = 0; i < sc->nphases; i++) {
        if (!ptm_gen_source_ops.count(sc->phase[i].gen, sh, 0, 0, NULL,
                                      NULL)) {
            return false;
        }
    }
    while (start < end) {
        uint64_t from, to;
        const Phase *ph = phase_at(sc, p->loop, start, sh->info.hz, &from,
                                   &to);
        uint64_t stop = MIN(end, to);

        ptm_gen_source_ops.count(ph->gen, sh, start - from, stop - from, st,
                                 acc);
        start = stop;
    }
    return true;
}

static void scenario_settings(const PtmGen *gen, const void *params,
                              unsigned e, uint64_t cycle, PtmSettings *set)
{
    const PtmScenarioParams *p = params;
    const Scenario *sc = scenario_for(gen, params);
    uint64_t from, to;
    const Phase *ph = phase_at(sc, p->loop, cycle, gen->geo.pcie_hz, &from,
                               &to);

    ptm_gen_source_ops.settings(ph->gen, e, cycle - from, set);
}

/* A phase's name in the ids it passes on: its place in the file. */
static uint64_t phase_mix(const Scenario *sc, const Phase *ph)
{
    return ptm_mix64((uint64_t)(ph - sc->phase) + 1);
}

/*
 * The period of the phase's model, its span cut to the phase (a phase
 * plays its model from its own first cycle on); where the model knows
 * none, none until the phase ends.
 */
static uint64_t scenario_period(const PtmGen *gen, const void *params,
                                const PtmProbeInfo *probe, uint64_t cycle,
                                uint64_t *from, uint64_t *until,
                                uint64_t *id)
{
    const PtmScenarioParams *p = params;
    const Scenario *sc = scenario_for(gen, params);
    uint64_t pf, pt, f = 0, u = 0, pid = 0, P;
    const Phase *ph = phase_at(sc, p->loop, cycle, probe->hz, &pf, &pt);

    P = ptm_gen_source_ops.period(ph->gen, probe, cycle - pf, &f, &u, &pid);
    /* (the model's span in the phase's own cycles, at most to its end) */
    u = u > pt - pf ? pt : pf + u;
    if (P == 0) {
        *until = MIN(*until, u > cycle ? u : pt);
        return 0;
    }
    *from = MAX(*from, pf + f);
    *until = MIN(*until, u);
    *id = (pid ^ phase_mix(sc, ph)) | 1;
    return P;
}

/* The phase model's name of a span, cut where the phase ends. */
static uint64_t scenario_span_id(const PtmGen *gen, const void *params,
                                 const PtmProbeInfo *probe, uint64_t start,
                                 uint64_t max, uint64_t *len)
{
    const PtmScenarioParams *p = params;
    const Scenario *sc = scenario_for(gen, params);
    uint64_t pf, pt, id;
    const Phase *ph = phase_at(sc, p->loop, start, probe->hz, &pf, &pt);

    if (pt - start < max) {
        max = pt - start;
    }
    id = ptm_gen_source_ops.span_id(ph->gen, probe, start - pf, max, len);
    return id ? (id ^ phase_mix(sc, ph)) | 1 : 0;
}

/* A phase's reset= key, else what the phase's model says. */
static uint64_t scenario_reset(const PtmGen *gen, const void *params,
                               const PtmProbeInfo *probe, uint64_t start,
                               uint64_t max, bool *held)
{
    const PtmScenarioParams *p = params;
    const Scenario *sc = scenario_for(gen, params);
    uint64_t from, to;
    const Phase *ph = phase_at(sc, p->loop, start, probe->hz, &from, &to);
    unsigned bit = 2 * probe->endpoint + probe->domain;

    if (to - start < max) {
        max = to - start;
    }
    if (bit < 32 && (ph->reset >> bit & 1)) {
        *held = true;
        return max;
    }
    return ptm_gen_source_ops.reset(ph->gen, probe, start - from, max, held);
}

/* The whole file is checked, so a bad one is refused when it is set. */
static char *scenario_check(const void *params, const PtmGeometry *geo)
{
    const PtmScenarioParams *p = params;
    char *err = NULL;

    scenario_free(scenario_parse(p->file, geo, &err));
    return err;
}

static void scenario_defaults(void *params)
{
    memset(params, 0, sizeof(PtmScenarioParams));
}

#define OFF(f) offsetof(PtmScenarioParams, f)
static const PtmParamDesc scenario_params[] = {
    { "file", PTM_PARAM_STR, OFF(file), 0, 0,
      "path of the scenario key file: its [phase <name>] groups in order, "
      "each with model=, duration= and that model's parameters" },
    { "loop", PTM_PARAM_BOOL, OFF(loop), 0, 1,
      "after the last phase start again with the first (else the last "
      "phase goes on for ever)" },
};
#undef OFF

/*
 * A span crosses every phase it covers: a looped schedule costs per turn;
 * one that ends costs per phase at most, plus what its phases cost.
 */
static PtmCost scenario_cost(const PtmGen *gen, const void *params)
{
    const PtmScenarioParams *p = params;
    const Scenario *sc = scenario_for(gen, params);

    if (p->loop) {
        return PTM_COST_WINDOW;
    }
    for (unsigned i = 0; i < sc->nphases; i++) {
        if (ptm_gen_source_ops.cost(sc->phase[i].gen) != PTM_COST_RANGE) {
            return PTM_COST_WINDOW;
        }
    }
    return PTM_COST_RANGE;
}

const PtmGenModel ptm_model_scenario = {
    .name = "scenario",
    .summary = "phases of other models, read from a key file",
    .params_size = sizeof(PtmScenarioParams),
    .params = scenario_params,
    .nparams = G_N_ELEMENTS(scenario_params),
    .defaults = scenario_defaults,
    .check = scenario_check,
    .fill = scenario_fill,
    .count = scenario_count,
    .settings = scenario_settings,
    .reset = scenario_reset,
    .cost = scenario_cost,
    .period = scenario_period,
    .span_id = scenario_span_id,
    .cache_free = cache_free,
};
