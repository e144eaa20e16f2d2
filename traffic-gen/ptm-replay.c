/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The replay generator: per-cycle signals recorded by an HDL simulation of
 * the firmware, from a VCD file that uses the port names of
 * PCIE_TELEMETRY_MI or from the plain text format of docs/replay.md.
 *
 * A file is read once per (file, scope, card geometry) into one run-length
 * list per probe: cycle k of a probe is the k-th rising edge of its clock in
 * the file, sampled with the values from before that timestamp's changes.
 * A run is an index into the probe's table of distinct samples, each packed
 * into a few bytes per bus, so a long trace costs 12 bytes per change of
 * what the probe sees. fill() unpacks runs into segments; a looped trace of
 * fewer runs than a chunk holds is played whole with the chunk's repeat.

 *
 * The trace's store, ports and tokenizer are ptm-trace.c's; the VCD
 * reader is ptm-vcd.c.
 */
#include <glib.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ptm-count.h"
#include "ptm-replay.h"
#include "ptm-trace.h"
#include "ptm-vcd.h"


#define BLOCK_RUNS 64

typedef struct Blocks {
    unsigned nch;
    uint32_t nblocks;
    uint64_t *cum;              /* (nblocks + 1) x nch */
    uint32_t *open;             /* nblocks + 1 */
    uint16_t *tag_min, *fifo_min;
} Blocks;

static void blocks_free(struct Blocks *b)
{
    if (b) {
        g_free(b->cum);
        g_free(b->open);
        g_free(b->tag_min);
        g_free(b->fifo_min);
        g_free(b);
    }
}

/* Run i's sample, cycles [from, to) of it, counted into acc and st. */
static void count_run(const Probe *pr, const PtmProbeShape *sh, uint32_t i,
                      uint64_t from, uint64_t to, PtmCountState *st,
                      uint64_t *acc)
{
    PtmSegment seg;
    PtmChunk ch = { .repeat = 1, .nseg = 1, .seg = &seg };

    ptm_trace_unpack_segment(ptm_trace_run_sample(pr, i), pr->buses,
                             pr->regions, &seg);
    seg.cycles = to - from;
    ptm_count_chunk(sh, st, &ch, acc);
}

static Blocks *blocks_get(Probe *pr, const PtmProbeShape *sh)
{
    Blocks *b = pr->blk;
    PtmCountState st = { 0 };

    if (b) {
        return b;
    }
    b = g_new0(Blocks, 1);
    b->nch = sh->channels;
    b->nblocks = (pr->nruns + BLOCK_RUNS - 1) / BLOCK_RUNS;
    b->cum = g_new0(uint64_t, (size_t)(b->nblocks + 1) * b->nch);
    b->open = g_new0(uint32_t, b->nblocks + 1);
    b->tag_min = g_new0(uint16_t, b->nblocks + 1);
    b->fifo_min = g_new0(uint16_t, b->nblocks + 1);
    for (uint32_t k = 0; k < b->nblocks; k++) {
        uint64_t *acc = &b->cum[(size_t)(k + 1) * b->nch];

        memcpy(acc, &b->cum[(size_t)k * b->nch], b->nch * sizeof(*acc));
        b->open[k] = st.open;
        ptm_count_state_window_start(&st);
        for (uint32_t i = k * BLOCK_RUNS;
             i < MIN((k + 1) * BLOCK_RUNS, pr->nruns); i++) {
            count_run(pr, sh, i, ptm_trace_run_start(pr, i), pr->end[i], &st,
                      acc);
        }
        b->tag_min[k] = st.tag_min;
        b->fifo_min[k] = st.stfifo_min;
    }
    b->open[b->nblocks] = st.open;
    pr->blk = b;
    return b;
}

/*
 * Trace cycles [k, kend) (kend <= the trace's cycles) into acc and st:
 * run by run until the frame-open bits agree with the prefix sums' at a
 * block's start, then whole blocks, then run by run again.
 */
static void count_trace(Probe *pr, const PtmProbeShape *sh, uint64_t k,
                        uint64_t kend, PtmCountState *st, uint64_t *acc)
{
    Blocks *b = blocks_get(pr, sh);
    uint32_t i = ptm_trace_probe_find(pr, k, 0);
    uint32_t last = ptm_trace_probe_find(pr, kend - 1, i);

    while (i <= last) {
        uint32_t blk = i / BLOCK_RUNS;
        uint32_t stop = blk;

        if (i % BLOCK_RUNS == 0 && k == ptm_trace_run_start(pr, i) &&
            st->open == b->open[blk]) {
            /* whole blocks, while one more run is left after them */
            while (stop < b->nblocks && (stop + 1) * BLOCK_RUNS <= last) {
                st->tag_min = MIN(st->tag_min, b->tag_min[stop]);
                st->stfifo_min = MIN(st->stfifo_min, b->fifo_min[stop]);
                stop++;
            }
        }
        if (stop > blk) {
            const uint64_t *lo = &b->cum[(size_t)blk * b->nch];
            const uint64_t *hi = &b->cum[(size_t)stop * b->nch];

            for (unsigned c = 0; c < b->nch; c++) {
                acc[c] += hi[c] - lo[c];
            }
            st->open = b->open[stop];
            i = stop * BLOCK_RUNS;
            k = ptm_trace_run_start(pr, i);
            continue;
        }
        count_run(pr, sh, i, k, MIN(pr->end[i], kend), st, acc);
        k = pr->end[i];
        i++;
    }
}

static void trace_free(PtmReplayTrace *t)
{
    for (unsigned i = 0; i < PROBES; i++) {
        g_free(t->probe[i].pool);
        g_free(t->probe[i].end);
        g_free(t->probe[i].idx);
        g_free(t->probe[i].rst);
        g_free(t->probe[i].hash);
        blocks_free(t->probe[i].blk);
    }
    g_free(t);
}

void ptm_replay_unref(PtmReplayTrace *t)
{
    if (t && g_atomic_int_dec_and_test(&t->ref)) {
        trace_free(t);
    }
}

static const Probe *trace_probe(const PtmReplayTrace *t, unsigned e,
                                PtmDomain d)
{
    return e < t->sh.endpoints ? &t->probe[PROBE_INDEX(e, d)] : NULL;
}

uint64_t ptm_replay_cycles(const PtmReplayTrace *t, unsigned e, PtmDomain d)
{
    const Probe *p = trace_probe(t, e, d);

    return p ? ptm_trace_probe_cycles(p) : 0;
}

uint64_t ptm_replay_runs(const PtmReplayTrace *t, unsigned e, PtmDomain d)
{
    const Probe *p = trace_probe(t, e, d);

    return p ? p->nruns : 0;
}

uint64_t ptm_replay_samples(const PtmReplayTrace *t, unsigned e,
                            PtmDomain d)
{
    const Probe *p = trace_probe(t, e, d);

    return p ? p->nsamp : 0;
}

uint64_t ptm_replay_xz_cycles(const PtmReplayTrace *t)
{
    return t->xz_cycles;
}

static int text_bus(const Shape *sh, PtmDomain d, const char *nm, size_t n,
                    char **err, const char *path, unsigned line)
{
    if (d == PTM_DOMAIN_PCIE) {
        return ptm_tok_is(nm, n, "rq") ? 0 : ptm_tok_is(nm, n, "rc") ? 1 : -1;
    }
    for (unsigned down = 0; down < 2; down++) {
        const char *kw = down ? "down" : "up";
        size_t kl = strlen(kw);
        uint64_t port = 0;

        if (n < kl || memcmp(nm, kw, kl) ||
            (n > kl && !ptm_parse_u64(nm + kl, n - kl, &port))) {
            continue;
        }
        if (port >= sh->buses[d] / 2) {
            *err = ptm_rd_error(path, line, "bus %.*s: the card has %u DMA "
                            "port(s)", (int)n, nm, sh->buses[d] / 2);
            return -1;
        }
        return 2 * port + down;
    }
    return -1;
}

/* One "key=value" field of a text line. */
static char *text_field(const Shape *sh, PtmDomain d, Sample *s,
                        uint64_t *cycles, const char *key, size_t kn,
                        uint64_t val, const char *path, unsigned line)
{
    const char *dot = memchr(key, '.', kn);
    unsigned R = sh->regions[d], W = sh->pos_width[d];
    bool pcie = d == PTM_DOMAIN_PCIE;
    char *err = NULL;

#define LIMIT(max)                                                          \
    do {                                                                    \
        if (val > (uint64_t)(max)) {                                        \
            return ptm_rd_error(path, line, "%.*s=%" PRIu64 " is above %"       \
                            PRIu64, (int)kn, key, val, (uint64_t)(max));    \
        }                                                                   \
    } while (0)

    if (dot) {
        int b = text_bus(sh, d, key, dot - key, &err, path, line);
        const char *f = dot + 1;
        size_t fn = kn - (f - key);
        SampleBus *sb;
        uint64_t r;

        if (err) {
            return err;
        }
        if (b < 0) {
            return ptm_rd_error(path, line, "no bus '%.*s' on a %s line (%s)",
                            (int)(dot - key), key, pcie ? "pcie" : "dma",
                            pcie ? "rq, rc" : "up<p>, down<p>");
        }
        sb = &s->bus[b];
        if (ptm_tok_is(f, fn, "src")) {
            LIMIT(1);
            sb->src = val;
        } else if (ptm_tok_is(f, fn, "dst")) {
            LIMIT(1);
            sb->dst = val;
        } else if (ptm_tok_is(f, fn, "sof")) {
            LIMIT((1u << R) - 1);
            sb->sof = val;
        } else if (ptm_tok_is(f, fn, "eof")) {
            LIMIT((1u << R) - 1);
            sb->eof = val;
        } else if (fn > 3 && !memcmp(f, "pos", 3) &&
                   ptm_parse_u64(f + 3, fn - 3, &r) && r < R) {
            LIMIT((1u << W) - 1);
            sb->pos[r] = val;
        } else if (!pcie && ptm_tok_is(f, fn, "vld")) {
            LIMIT((1u << R) - 1);
            sb->vld = val;
        } else if (!pcie && ptm_tok_is(f, fn, "msrc")) {
            LIMIT(1);
            sb->msrc = val;
        } else if (!pcie && ptm_tok_is(f, fn, "mdst")) {
            LIMIT(1);
            sb->mdst = val;
        } else {
            return ptm_rd_error(path, line, "unknown field '%.*s' (src, dst, "
                            "sof, eof, pos0..pos%u%s)", (int)kn, key, R - 1,
                            pcie ? "" : ", vld, msrc, mdst");
        }
        return NULL;
    }
    if (ptm_tok_is(key, kn, "cycles")) {
        if (val == 0 || val > (1ull << 48)) {
            return ptm_rd_error(path, line, "cycles=%" PRIu64 ": allowed 1 to "
                            "2^48", val);
        }
        *cycles = val;
        return NULL;
    }
    if (ptm_tok_is(key, kn, "reset")) {
        LIMIT(1);
        s->reset = val;
        return NULL;
    }
    if (!pcie) {
        return ptm_rd_error(path, line, "unknown field '%.*s' on a dma line",
                        (int)kn, key);
    }
    if (ptm_tok_is(key, kn, "brake")) {
        LIMIT(0x3F);
        s->brake = val;
    } else if (ptm_tok_is(key, kn, "tags")) {
        LIMIT(0x7FF);
        s->tags = val;
    } else if (ptm_tok_is(key, kn, "stfifo")) {
        LIMIT(0xFFFF);
        s->stfifo = val;
    } else if (ptm_tok_is(key, kn, "link")) {
        LIMIT(1);
        s->link = val;
    } else if (ptm_tok_is(key, kn, "mps")) {
        LIMIT(7);
        s->set_mask |= SET_MPS;
        s->set.mps = val;
    } else if (ptm_tok_is(key, kn, "mrrs")) {
        LIMIT(7);
        s->set_mask |= SET_MRRS;
        s->set.mrrs = val;
    } else if (ptm_tok_is(key, kn, "ext_tag")) {
        LIMIT(1);
        s->set_mask |= SET_EXT_TAG;
        s->set.ext_tag = val;
    } else if (ptm_tok_is(key, kn, "tag_10b")) {
        LIMIT(1);
        s->set_mask |= SET_TAG_10B;
        s->set.tag_10bit = val;
    } else if (ptm_tok_is(key, kn, "rcb")) {
        LIMIT(1);
        s->set_mask |= SET_RCB;
        s->set.rcb_128 = val;
    } else {
        return ptm_rd_error(path, line, "unknown field '%.*s'", (int)kn, key);
    }
#undef LIMIT
    return NULL;
}

static char *text_load(PtmReplayTrace *t, const char *path, const char *buf,
                       size_t len)
{
    const char *p = buf, *end = buf + len;
    unsigned line = 0;

    while (p < end) {
        const char *eol = memchr(p, '\n', end - p);
        const char *hash, *q;
        Rd r;
        const char *tok;
        size_t n;
        PtmDomain d;
        uint64_t e = 0, cycles = 1;
        Sample s;

        eol = eol ? eol : end;
        line++;
        hash = memchr(p, '#', eol - p);
        r = (Rd) { .path = path, .p = p, .end = hash ? hash : eol };
        p = eol + 1;
        if (!ptm_rd_token(&r, &tok, &n)) {
            continue;           /* blank or comment */
        }
        if (n >= 4 && !g_ascii_strncasecmp(tok, "pcie", 4)) {
            d = PTM_DOMAIN_PCIE;
            q = tok + 4;
        } else if (n >= 3 && !g_ascii_strncasecmp(tok, "dma", 3)) {
            d = PTM_DOMAIN_DMA;
            q = tok + 3;
        } else {
            return ptm_rd_error(path, line, "a line starts with pcie<e> or "
                            "dma<e>, not '%.*s'", (int)MIN(n, 40), tok);
        }
        if (q < tok + n && !ptm_parse_u64(q, tok + n - q, &e)) {
            return ptm_rd_error(path, line, "bad endpoint in '%.*s'",
                            (int)MIN(n, 40), tok);
        }
        if (e >= t->sh.endpoints) {
            continue;           /* an endpoint the card does not have */
        }
        ptm_sample_idle(&t->sh, &s);
        while (ptm_rd_token(&r, &tok, &n)) {
            const char *eq = memchr(tok, '=', n);
            g_autofree char *key = NULL;
            uint64_t val;
            char *err;

            if (!eq || eq == tok) {
                return ptm_rd_error(path, line, "'%.*s' is not key=value",
                                (int)MIN(n, 40), tok);
            }
            if (!ptm_parse_u64(eq + 1, tok + n - eq - 1, &val)) {
                return ptm_rd_error(path, line, "bad number in '%.*s'",
                                (int)MIN(n, 40), tok);
            }
            key = g_ascii_strdown(tok, eq - tok);
            err = text_field(&t->sh, d, &s, &cycles, key, strlen(key), val,
                             path, line);
            if (err) {
                return err;
            }
        }
        ptm_trace_add(t, e, d, &s, cycles);
    }
    return NULL;
}

/* -------------------------------------------------------------- loading */

static char *trace_read(PtmReplayTrace *t, const char *path,
                        const char *scope)
{
    g_autoptr(GError) gerr = NULL;
    GMappedFile *mf = g_mapped_file_new(path, FALSE, &gerr);
    const char *buf, *p;
    size_t len;
    char *err;

    if (!mf) {
        return g_strdup_printf("%s: %s", path, gerr->message);
    }
    buf = g_mapped_file_get_contents(mf);
    len = g_mapped_file_get_length(mf);
    p = buf;
    while (p && p < buf + len && g_ascii_isspace(*p)) {
        p++;
    }
    /* a VCD starts with a section keyword ($date, $timescale, ...) */
    if (p && p < buf + len && *p == '$') {
        err = ptm_vcd_load(t, path, scope, buf, len);
    } else {
        err = text_load(t, path, buf ? buf : "", buf ? len : 0);
    }
    g_mapped_file_unref(mf);
    return err;
}

/* The last trace read, so that check() and fill() read a file once. */
static struct {
    char *path, *scope;
    PtmGeometry geo;
    struct stat st;
    PtmReplayTrace *t;
} last;
G_LOCK_DEFINE_STATIC(last);

static bool geo_same(const PtmGeometry *a, const PtmGeometry *b)
{
    return a->endpoints == b->endpoints && a->dma_ports == b->dma_ports &&
           a->rq_regions == b->rq_regions && a->rc_regions == b->rc_regions &&
           a->up_regions == b->up_regions &&
           a->down_regions == b->down_regions &&
           a->rq_region_bytes == b->rq_region_bytes &&
           a->rc_region_bytes == b->rc_region_bytes &&
           a->up_region_bytes == b->up_region_bytes &&
           a->down_region_bytes == b->down_region_bytes &&
           a->item_bytes == b->item_bytes &&
           a->tag_capacity == b->tag_capacity &&
           a->stfifo_capacity == b->stfifo_capacity;
}

static bool stat_same(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
           a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

PtmReplayTrace *ptm_replay_load(const char *path, const char *scope,
                                const PtmGeometry *geo, char **err)
{
    struct stat st;
    PtmReplayTrace *t;

    *err = NULL;
    if (!*path) {
        *err = g_strdup("file is empty: give the path of a .vcd file or of "
                        "a text trace");
        return NULL;
    }
    if (stat(path, &st) < 0) {
        *err = g_strdup_printf("%s: %s", path, g_strerror(errno));
        return NULL;
    }
    G_LOCK(last);
    if (last.t && !strcmp(last.path, path) && !strcmp(last.scope, scope) &&
        geo_same(&last.geo, geo) && stat_same(&last.st, &st)) {
        t = last.t;
        g_atomic_int_inc(&t->ref);
        G_UNLOCK(last);
        return t;
    }
    G_UNLOCK(last);

    t = ptm_trace_new(geo);
    *err = trace_read(t, path, scope);
    if (*err) {
        ptm_replay_unref(t);
        return NULL;
    }
    ptm_trace_finish(t);

    G_LOCK(last);
    ptm_replay_unref(last.t);
    g_free(last.path);
    g_free(last.scope);
    last.path = g_strdup(path);
    last.scope = g_strdup(scope);
    last.geo = *geo;
    last.st = st;
    last.t = t;
    g_atomic_int_inc(&t->ref);
    G_UNLOCK(last);
    return t;
}

/* ------------------------------------------------------------ the model */

typedef enum EndMode { END_IDLE, END_HOLD, END_LOOP, END_BAD } EndMode;

static EndMode end_mode(const char *s)
{
    if (!g_ascii_strcasecmp(s, "idle")) {
        return END_IDLE;
    }
    if (!g_ascii_strcasecmp(s, "hold")) {
        return END_HOLD;
    }
    if (!g_ascii_strcasecmp(s, "loop")) {
        return END_LOOP;
    }
    return END_BAD;
}

void ptm_replay_params_default(PtmReplayParams *p)
{
    memset(p, 0, sizeof(*p));
    strcpy(p->end, "idle");
}

static void replay_defaults(void *params)
{
    ptm_replay_params_default(params);
}

static char *replay_check(const void *params, const PtmGeometry *geo)
{
    const PtmReplayParams *p = params;
    PtmReplayTrace *t;
    char *err;

    if (end_mode(p->end) == END_BAD) {
        return g_strdup_printf("end is '%s', allowed: idle, hold, loop",
                               p->end);
    }
    t = ptm_replay_load(p->file, p->scope, geo, &err);
    ptm_replay_unref(t);
    return err;
}

/* A trace in use: one per (file, scope) of the parameter history. */
typedef struct Slot {
    char file[PTM_PARAM_STR_LEN];
    char scope[PTM_PARAM_STR_LEN];
    PtmReplayTrace *t;          /* NULL: unreadable now, replayed as idle */
    uint64_t used;
    uint32_t hint[PROBES];      /* run of the last fill */
} Slot;

typedef struct ReplayCache {
    Slot slot[PTM_GEN_HISTORY];
    uint64_t clock;
} ReplayCache;

static void replay_cache_free(void *cache)
{
    ReplayCache *c = cache;

    for (unsigned i = 0; i < PTM_GEN_HISTORY; i++) {
        ptm_replay_unref(c->slot[i].t);
    }
    g_free(c);
}

static Slot *replay_slot(const PtmGen *gen, const PtmReplayParams *p)
{
    PtmGen *g = (PtmGen *)gen;      /* the cache is derived data only */
    ReplayCache *c;
    Slot *s = NULL;
    char *err = NULL;

    if (!g->cache) {
        g->cache = g_new0(ReplayCache, 1);
    }
    c = g->cache;
    for (unsigned i = 0; i < PTM_GEN_HISTORY; i++) {
        Slot *x = &c->slot[i];

        if (x->used && !strcmp(x->file, p->file) &&
            !strcmp(x->scope, p->scope)) {
            x->used = ++c->clock;
            return x;
        }
        if (!s || x->used < s->used) {
            s = x;
        }
    }
    ptm_replay_unref(s->t);
    memset(s, 0, sizeof(*s));
    g_strlcpy(s->file, p->file, sizeof(s->file));
    g_strlcpy(s->scope, p->scope, sizeof(s->scope));
    s->used = ++c->clock;
    s->t = ptm_replay_load(p->file, p->scope, &gen->geo, &err);
    if (!s->t) {
        /* checked when set; gone or broken since: better idle than abort */
        g_message("replay: %s; replaying idle", err);
        g_free(err);
    }
    return s;
}

/*
 * Cycle 0 of the trace is the first cycle of the parameters in force: a
 * change made while the card runs starts the trace again from the moment
 * it applies (the cycles gen_fill() cuts spans at).
 */
static uint64_t replay_origin(const PtmGen *gen, const void *params,
                              uint64_t hz)
{
    uint64_t pcie = gen->geo.pcie_hz;

    for (unsigned i = 0; i < gen->nver; i++) {
        if (gen->params[i] == params) {
            return (uint64_t)(((unsigned __int128)gen->from[i] * hz +
                               pcie - 1) / pcie);
        }
    }
    return 0;
}

static void idle_segment(const Shape *sh, PtmSegment *seg, uint64_t n)
{
    memset(seg, 0, sizeof(*seg));
    seg->cycles = n;
    seg->link_up = 1;
    seg->tag_free = sh->tags_idle;
    seg->stfifo_free = sh->stfifo_idle;
}

/* The probe's part of the trace (NULL: none), its cycle 0 and length. */
static const Probe *replay_probe(const PtmGen *gen, const void *params,
                                 const PtmProbeInfo *probe, Slot **slot,
                                 uint64_t *origin, uint64_t *n)
{
    Slot *sl = replay_slot(gen, params);
    const Probe *pr = sl->t ? trace_probe(sl->t, probe->endpoint,
                                          probe->domain) : NULL;

    *slot = sl;
    *origin = replay_origin(gen, params, probe->hz);
    *n = pr ? ptm_trace_probe_cycles(pr) : 0;
    return pr;
}

static uint64_t replay_fill(const PtmGen *gen, const void *params,
                            const PtmProbeInfo *probe, uint64_t start,
                            uint64_t max, PtmChunk *out)
{
    const PtmReplayParams *p = params;
    EndMode mode = end_mode(p->end);
    Slot *sl;
    uint64_t origin, n;
    const Probe *pr = replay_probe(gen, params, probe, &sl, &origin, &n);
    uint64_t k = start > origin ? start - origin : 0, done = 0;
    uint32_t *hint = &sl->hint[PROBE_INDEX(probe->endpoint, probe->domain)];
    unsigned B, R;
    uint32_t i;
    Shape sh;

    out->seg = out->scratch;
    out->repeat = 1;
    out->nseg = 1;
    if (n == 0 || (k >= n && mode == END_IDLE)) {
        ptm_trace_shape_init(&sh, &gen->geo);
        idle_segment(&sh, &out->seg[0], max);
        return max;
    }
    B = pr->buses;
    R = pr->regions;
    if (k >= n && mode == END_HOLD) {
        ptm_trace_unpack_segment(ptm_trace_run_sample(pr, pr->nruns - 1), B, R,
                                 &out->seg[0]);
        out->seg[0].cycles = max;
        return max;
    }
    k %= n;
    i = ptm_trace_probe_find(pr, k, *hint);
    out->nseg = 0;

    if (mode == END_LOOP && pr->nruns < PTM_CHUNK_SEGMENTS && max >= n) {
        /* one whole turn from k, as often as it fits */
        for (uint32_t j = 0; j <= pr->nruns; j++) {
            uint32_t ri = (i + j) % pr->nruns;
            uint64_t from = j ? ptm_trace_run_start(pr, ri) : k;
            uint64_t to = j == pr->nruns ? k : pr->end[ri];
            PtmSegment *seg;

            if (to <= from) {
                continue;
            }
            seg = &out->seg[out->nseg++];
            ptm_trace_unpack_segment(ptm_trace_run_sample(pr, ri), B, R, seg);
            seg->cycles = to - from;
        }
        *hint = i;
        out->repeat = max / n;
        return out->repeat * n;
    }

    while (done < max && out->nseg < PTM_CHUNK_SEGMENTS) {
        PtmSegment *seg;
        uint64_t len;

        if (k == n) {
            if (mode == END_LOOP) {
                k = 0;
                i = 0;
            } else if (mode == END_HOLD) {
                /* the last run goes on */
                out->seg[out->nseg - 1].cycles += max - done;
                done = max;
                break;
            } else {
                ptm_trace_shape_init(&sh, &gen->geo);
                idle_segment(&sh, &out->seg[out->nseg++], max - done);
                done = max;
                break;
            }
        }
        len = MIN(pr->end[i] - k, max - done);
        seg = &out->seg[out->nseg++];
        ptm_trace_unpack_segment(ptm_trace_run_sample(pr, i), B, R, seg);
        seg->cycles = len;
        done += len;
        k += len;
        if (k == pr->end[i] && k < n) {
            i++;
        }
    }
    *hint = i;
    return done;
}

typedef struct TurnPass {
    Probe *pr;
    const PtmProbeShape *sh;
} TurnPass;

/* One turn of a looped trace. */
static void turn_pass(void *opaque, PtmCountState *st, uint64_t *acc)
{
    const TurnPass *tp = opaque;

    count_trace(tp->pr, tp->sh, 0, ptm_trace_probe_cycles(tp->pr), st, acc);
}

/*
 * Counts from prefix sums: O(log n + BLOCK_RUNS) per span, and a looped
 * trace costs nothing per turn.
 */
static bool replay_count(const PtmGen *gen, const void *params,
                         const PtmProbeShape *sh, uint64_t start, uint64_t end,
                         PtmCountState *st, uint64_t *acc)
{
    const PtmProbeInfo *probe = &sh->info;
    const PtmReplayParams *p = params;
    EndMode mode = end_mode(p->end);
    Slot *sl;
    Probe *pr;
    uint64_t origin, n, k;
    Shape shp;

    if (start == end) {
        return true;
    }
    sl = replay_slot(gen, p);
    pr = sl->t ? (Probe *)trace_probe(sl->t, probe->endpoint, probe->domain)
               : NULL;
    origin = replay_origin(gen, params, probe->hz);
    n = pr ? ptm_trace_probe_cycles(pr) : 0;
    if (start < origin && n) {
        return false;       /* before the trace: as fill has it, not here */
    }
    k = start - MIN(start, origin);
    while (start < end) {
        uint64_t len = end - start;
        PtmSegment seg;
        PtmChunk ch = { .repeat = 1, .nseg = 1, .seg = &seg };

        if (n && k >= n && mode == END_LOOP) {
            k %= n;
        }
        if (n == 0 || (k >= n && mode == END_IDLE)) {
            ptm_trace_shape_init(&shp, &gen->geo);
            idle_segment(&shp, &seg, len);
            ptm_count_chunk(sh, st, &ch, acc);
            return true;
        }
        if (k >= n) {           /* hold: the last cycle goes on */
            ptm_trace_unpack_segment(ptm_trace_run_sample(pr, pr->nruns - 1),
                                     pr->buses, pr->regions, &seg);
            seg.cycles = len;
            ptm_count_chunk(sh, st, &ch, acc);
            return true;
        }
        if (k == 0 && mode == END_LOOP && len >= n) {
            /* whole turns, as often as they fit */
            TurnPass tp = { .pr = pr, .sh = sh };
            uint64_t turns = len / n;

            ptm_count_repeat(sh->channels, st, acc, turns, turn_pass, &tp);
            start += turns * n;
            continue;
        }
        len = MIN(len, n - k);
        count_trace(pr, sh, k, k + len, st, acc);
        start += len;
        k += len;
    }
    return true;
}

static void replay_settings(const PtmGen *gen, const void *params,
                            unsigned e, uint64_t cycle, PtmSettings *set)
{
    const PtmReplayParams *p = params;
    EndMode mode = end_mode(p->end);
    Slot *sl = replay_slot(gen, p);
    const Probe *pr = sl->t ? trace_probe(sl->t, e, PTM_DOMAIN_PCIE) : NULL;
    uint64_t origin = replay_origin(gen, params, gen->geo.pcie_hz);
    uint64_t n = pr ? ptm_trace_probe_cycles(pr) : 0;
    uint64_t k;

    if (n == 0) {
        return;
    }
    /* the drain tick's sample, the one whose link state PCIE_STATUS shows */
    k = cycle > origin ? cycle - origin : 0;
    if (k >= n) {
        if (mode == END_IDLE) {
            return;
        }
        k = mode == END_HOLD ? n - 1 : k % n;
    }
    ptm_trace_unpack_settings(
        ptm_trace_run_sample(pr, ptm_trace_probe_find(pr, k, 0)), set);
}

/*
 * Trace cycle k of a probe: held in reset, and for how many cycles (up to
 * max) that stays so.
 */
static uint64_t trace_reset_at(const Probe *pr, uint64_t k, uint64_t max,
                               bool *held)
{
    uint32_t lo = 0, hi = pr->nrst;

    /* the first span that ends after k */
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;

        if (pr->rst[2 * mid + 1] <= k) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo < pr->nrst && pr->rst[2 * lo] <= k) {
        *held = true;
        return MIN(max, pr->rst[2 * lo + 1] - k);
    }
    *held = false;
    return MIN(max, (lo < pr->nrst ? pr->rst[2 * lo]
                                   : ptm_trace_probe_cycles(pr)) - k);
}

static uint64_t replay_reset(const PtmGen *gen, const void *params,
                             const PtmProbeInfo *probe, uint64_t start,
                             uint64_t max, bool *held)
{
    const PtmReplayParams *p = params;
    EndMode mode = end_mode(p->end);
    Slot *sl;
    uint64_t origin, n, k;
    const Probe *pr = replay_probe(gen, params, probe, &sl, &origin, &n);

    *held = false;
    if (!pr || !pr->nrst || n == 0) {
        return max;
    }
    if (start < origin) {
        return MIN(max, origin - start);
    }
    k = start - origin;
    if (k >= n) {
        if (mode == END_IDLE) {
            return max;
        }
        if (mode == END_HOLD) {
            trace_reset_at(pr, n - 1, 1, held);
            return max;
        }
        k %= n;
    }
    return trace_reset_at(pr, k, max, held);
}

/*
 * A looped trace repeats with its length from its cycle 0 on; one that
 * idles or holds after its end is constant from there. A trace that
 * holds the probe in reset gives no period: a span of one has none.
 */
static uint64_t replay_period(const PtmGen *gen, const void *params,
                              const PtmProbeInfo *probe, uint64_t cycle,
                              uint64_t *from, uint64_t *until, uint64_t *id)
{
    const PtmReplayParams *p = params;
    EndMode mode = end_mode(p->end);
    Slot *sl;
    uint64_t origin, n;
    const Probe *pr = replay_probe(gen, params, probe, &sl, &origin, &n);

    if (n == 0) {
        return 1;           /* idle all the way */
    }
    if (pr->nrst) {
        return 0;
    }
    *from = MAX(*from, origin);
    if (mode == END_LOOP) {
        return n;
    }
    if (cycle >= origin + n) {
        *from = origin + n;
        return 1;
    }
    *until = MIN(*until, origin + n);
    return 0;
}

#define OFF(f) offsetof(PtmReplayParams, f)
static const PtmParamDesc replay_params[] = {
    { "file", PTM_PARAM_STR, OFF(file), 0, 0,
      "trace to replay: a VCD file or a text trace (docs/replay.md)" },
    { "scope", PTM_PARAM_STR, OFF(scope), 0, 0,
      "VCD scope of the ports, e.g. tb.dut (empty: the scope with most)" },
    { "end", PTM_PARAM_STR, OFF(end), 0, 0,
      "after the trace: idle, hold (the last cycle) or loop" },
};
#undef OFF

/* Prefix sums: O(log n) per span, whole turns of a loop in one. */
static PtmCost replay_cost(const PtmGen *gen, const void *params)
{
    return PTM_COST_RANGE;
}

const PtmGenModel ptm_model_replay = {
    .name = "replay",
    .summary = "signals recorded by an HDL simulation (VCD or text trace)",
    .params_size = sizeof(PtmReplayParams),
    .params = replay_params,
    .nparams = G_N_ELEMENTS(replay_params),
    .defaults = replay_defaults,
    .check = replay_check,
    .fill = replay_fill,
    .count = replay_count,
    .settings = replay_settings,
    .reset = replay_reset,
    .cost = replay_cost,
    .period = replay_period,
    .cache_free = replay_cache_free,
};
