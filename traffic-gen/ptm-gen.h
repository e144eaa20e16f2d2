/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Traffic generators: the common frame around every model of synthetic
 * traffic (pattern, random, ...).
 *
 * A model is a table: its parameters (name, type, range, offset in its
 * parameter struct), a check against the card's geometry, and a fill
 * function that describes a probe's cycles as the core's signal interface
 * asks (ptm-signals.h). A generator is a model bound to one card: its
 * geometry, a seed, and its parameters over time. A parameter change made
 * while the card runs takes effect from a moment the caller gives, as a
 * cycle of the PCIe clock (the start of the next PCIe drain window): PCIe
 * windows that started before keep the old values, DMA-clock cycles switch
 * at that same moment, and the description stays a pure function of
 * (probe, cycle) for every cycle the core may still ask about. Models keep no other state: whatever varies
 * (random choices, jitter) is derived from the seed, the probe and the
 * cycle, so a generator is saved for migration as its parameter history
 * alone. Models that draw random numbers have a `seed` parameter.
 */
#ifndef PTM_GEN_H
#define PTM_GEN_H

#include <stddef.h>

#include "ptm-signals.h"

typedef enum PtmParamType {
    PTM_PARAM_BOOL,                 /* bool */
    PTM_PARAM_U32,                  /* uint32_t */
    PTM_PARAM_I32,                  /* int32_t */
    PTM_PARAM_STR,                  /* char[PTM_PARAM_STR_LEN], NUL ended */
} PtmParamType;

#define PTM_PARAM_STR_LEN 256

typedef struct PtmParamDesc {
    const char *name;               /* as the QOM property is named */
    PtmParamType type;
    size_t offset;                  /* in the model's parameter struct */
    int64_t min, max;
    const char *desc;
} PtmParamDesc;

typedef struct PtmGen PtmGen;

typedef struct PtmGenModel {
    const char *name;               /* telemetry-traffic-<name> */
    const char *summary;
    size_t params_size;
    const PtmParamDesc *params;
    unsigned nparams;
    void (*defaults)(void *params);
    /* NULL if the parameters fit the card, else a message to g_free() */
    char *(*check)(const void *params, const PtmGeometry *geo);
    /* as PtmSourceOps.fill, with the parameters in force at `start` */
    uint64_t (*fill)(const PtmGen *gen, const void *params,
                     const PtmProbeInfo *probe, uint64_t start, uint64_t max,
                     PtmChunk *out);
    /*
     * optional, as PtmSourceOps.count, with the parameters in force over
     * the whole span
     */
    bool (*count)(const PtmGen *gen, const void *params,
                  const PtmProbeShape *probe, uint64_t start, uint64_t end,
                  PtmCountState *st, uint64_t *acc);
    /* optional, as PtmSourceOps.settings */
    void (*settings)(const PtmGen *gen, const void *params, unsigned e,
                     uint64_t cycle, PtmSettings *set);
    /*
     * optional (NULL: never), as PtmSourceOps.reset, with the parameters in
     * force at `start`
     */
    uint64_t (*reset)(const PtmGen *gen, const void *params,
                      const PtmProbeInfo *probe, uint64_t start, uint64_t max,
                      bool *held);
    /*
     * optional (NULL: PTM_COST_WINDOW), as PtmSourceOps.cost, for the
     * parameters given
     */
    PtmCost (*cost)(const PtmGen *gen, const void *params);
    /*
     * optional (NULL: none), as PtmSourceOps.period: a period of the
     * probe's traffic under these parameters around `cycle`, 0 if none.
     * [*from, *until) comes in as the span the parameters hold; a model
     * whose traffic changes within it (decision blocks, phases) narrows it
     * to the span around `cycle` and names that span's traffic in *id
     * (which comes in as 0: the parameters' version names it). Where it
     * knows no period it may set *until to where it may know one again.
     */
    uint64_t (*period)(const PtmGen *gen, const void *params,
                       const PtmProbeInfo *probe, uint64_t cycle,
                       uint64_t *from, uint64_t *until, uint64_t *id);
    /*
     * optional (NULL: none), as PtmSourceOps.span_id, for a span under
     * these parameters alone
     */
    uint64_t (*span_id)(const PtmGen *gen, const void *params,
                        const PtmProbeInfo *probe, uint64_t start,
                        uint64_t max, uint64_t *len);
    /* optional, as PtmSourceOps.span_ids, under these parameters alone */
    unsigned (*span_ids)(const PtmGen *gen, const void *params,
                         const PtmProbeInfo *probe, uint64_t start,
                         uint64_t end, uint64_t *ids, uint64_t *lens,
                         unsigned max);
    /* optional: frees PtmGen.cache */
    void (*cache_free)(void *cache);
} PtmGenModel;

#define PTM_GEN_HISTORY 64

struct PtmGen {
    const PtmGenModel *model;
    PtmGeometry geo;
    unsigned nver;
    uint64_t from[PTM_GEN_HISTORY];     /* PCIe cycles, ascending; [0] = 0 */
    void *params[PTM_GEN_HISTORY];
    uint64_t serial[PTM_GEN_HISTORY];   /* unique in the process, per version */
    void *cache;        /* the model's, derived data only, not migrated */
};

/* Models built into the library, NULL-terminated (ptm-models.c). */
extern const PtmGenModel *const ptm_gen_models[];
const PtmGenModel *ptm_gen_model_find(const char *name);
/*
 * The same without the scenario: the models a scenario's phase may be
 * (ptm-phase-models.c, below the scenario).
 */
extern const PtmGenModel *const ptm_gen_phase_models[];
const PtmGenModel *ptm_gen_phase_model_find(const char *name);
/* The model of that name in a NULL-terminated list, or NULL. */
const PtmGenModel *ptm_gen_model_in(const PtmGenModel *const *list,
                                    const char *name);

/*
 * Range check of one numeric parameter value; NULL or a message to
 * g_free(). Strings are checked by the model's check function.
 */
char *ptm_param_check(const PtmParamDesc *d, int64_t v);
int64_t ptm_param_get(const PtmParamDesc *d, const void *params);
void ptm_param_set(const PtmParamDesc *d, void *params, int64_t v);
const char *ptm_param_get_str(const PtmParamDesc *d, const void *params);
/* NULL, or a message to g_free() if s is too long (nothing changed). */
char *ptm_param_set_str(const PtmParamDesc *d, void *params, const char *s);

/* A generator with the given parameters; NULL and *err if they do not fit. */
PtmGen *ptm_gen_new(const PtmGenModel *m, const void *params,
                    const PtmGeometry *geo, char **err);
void ptm_gen_free(PtmGen *g);
/*
 * New parameters from PCIe cycle `from` on (cycles since virtual time 0).
 * Refused (message returned, nothing changed) if they do not fit the card,
 * or if too many changes wait to take effect. now_ns is the present:
 * versions no window can need any more are dropped.
 */
char *ptm_gen_set_params(PtmGen *g, const void *params, uint64_t from,
                         uint64_t now_ns);
/* The parameters in force at PCIe cycle c. */
const void *ptm_gen_params_at(const PtmGen *g, uint64_t c);
/*
 * The serial of the version whose parameters are at `params` (a pointer
 * the generator gave its model), 0 if none: a cheap name of them.
 */
static inline uint64_t ptm_gen_params_serial(const PtmGen *g,
                                             const void *params)
{
    /* (the newest first: it is the one asked for nearly always) */
    for (unsigned i = g->nver; i-- > 0;) {
        if (g->params[i] == params) {
            return g->serial[i];
        }
    }
    return 0;
}
/* The newest parameters. */
const void *ptm_gen_params(const PtmGen *g);

/* The core's view: opaque is the PtmGen. */
extern const PtmSourceOps ptm_gen_source_ops;

/* Migration: the parameter history. */
void *ptm_gen_save(const PtmGen *g, size_t *len);
char *ptm_gen_load(PtmGen *g, const void *buf, size_t len);

/*
 * Serve a span from a cached description of one period of `period` cycles
 * that repeats (its segments stay valid until the next call): whole
 * periods point at the cache with a repeat count; a piece of a period is
 * the cached segments that fit whole, or one cut segment in out's scratch.
 * phase is the span's start within the period; returns the cycles served.
 * id (0 or unique to this list, see PtmChunk.id) marks whole periods.
 */
uint64_t ptm_serve_periodic(const PtmSegment *seg, unsigned nseg,
                            uint64_t period, uint64_t phase, uint64_t max,
                            uint64_t id, PtmChunk *out);

/* Time of cycle c of a clock of hz Hz, rounded down to whole ns. */
uint64_t ptm_cycle_ns(uint64_t c, uint64_t hz);

/* A 64-bit mix of several words, for seeding per window or frame. */
uint64_t ptm_hash(uint64_t a, uint64_t b, uint64_t c, uint64_t d);

/* The splitmix64 finaliser. */
static inline uint64_t ptm_mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A splitmix64 random stream, seeded with ptm_hash(). */
typedef struct PtmRng {
    uint64_t s;
} PtmRng;

static inline uint64_t ptm_rng_next(PtmRng *r)
{
    return ptm_mix64(r->s += 0x9e3779b97f4a7c15ull);
}

/*
 * How a frame of some bytes lies on an MFB bus: it starts in region 0 of
 * its first word and fills the bus's regions in order.
 */
typedef struct PtmFrame {
    uint32_t items, nreg, words;
    unsigned ipr, regions;
} PtmFrame;

void ptm_frame_shape(uint32_t bytes, unsigned item_bytes, unsigned ipr,
                     unsigned regions, PtmFrame *f);
/*
 * Add to bc the SOF, EOF and EOF_POS of word j of the frame, and with the
 * first word mvb_items MVB items (0: none) and MVB SRC_RDY. The handshake
 * of the MFB (and MVB DST_RDY) is the caller's.
 */
void ptm_frame_word(const PtmFrame *f, uint32_t j, unsigned mvb_items,
                    PtmBusCycle *bc);

#endif
