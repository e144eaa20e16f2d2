/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The QEMU-free half of the soak run (tests/bench/soak.py): replays the
 * schedule of a QEMU run, every access at its virtual time, on a core with
 * the default card and the ptc generator with default parameters. Since
 * the model's results depend only on the sequence of (time, access) pairs,
 * every read must return QEMU's value exactly. At sampled intervals the
 * fast core's state is loaded into a reference core, which evaluates that
 * interval cycle by cycle with the same accesses and must agree as well.
 * Not a test: soak.py reads what it prints.
 *
 * usage: ptm-soak-ref [--sample N] [SCHEDULE]   (stdin without SCHEDULE)
 *
 * Schedule lines (times in ns decimal, the rest hex):
 *   power_on T | reset T
 *   settings T MPS MRRS EXT_TAG TAG_10BIT RCB_128   (every endpoint)
 *   interval K          interval K begins; sampled when K = 1 or N | K
 *   w T ADDR SIZE VAL   a BAR access; r: the value QEMU read
 *   r T ADDR SIZE VAL
 *   end
 * Prints key=value lines at the end; exits 1 on any disagreement.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptm-core.h"
#include "ptm-gen.h"

/* Disagreements reported one by one before only counting them */
#define REPORT_MAX 10

typedef struct Replay {
    PtmConfig cfg;
    PtmGen *gen;
    PtmCore *fast;
    PtmCore *ref;               /* over the sampled interval, else NULL */
    uint64_t sample;
    uint64_t interval;
    uint64_t accesses, reads;
    uint64_t fast_bad, ref_bad, check_bad;
    uint64_t checked;
    double ref_start, ref_cpu, ref_max;
    bool ended;
} Replay;

static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void check_state(Replay *r, PtmCore *core, const char *which)
{
    g_autofree char *err = ptm_core_check(core);

    if (err) {
        if (r->check_bad++ < REPORT_MAX) {
            fprintf(stderr, "interval %" G_GUINT64_FORMAT ": %s core: %s\n",
                    r->interval, which, err);
        }
    }
}

/* The end of a sampled interval: its cost, its state, and it is gone. */
static void ref_finish(Replay *r)
{
    double cpu;

    if (!r->ref) {
        return;
    }
    cpu = cpu_now() - r->ref_start;
    r->ref_cpu += cpu;
    r->ref_max = MAX(r->ref_max, cpu);
    check_state(r, r->ref, "reference");
    ptm_core_free(r->ref);
    r->ref = NULL;
}

/* A reference core that goes on from the fast core's present state. */
static void ref_start(Replay *r)
{
    g_autofree void *blob = NULL;
    g_autofree char *err = NULL;
    size_t len;

    check_state(r, r->fast, "fast");
    r->ref_start = cpu_now();
    blob = ptm_core_save(r->fast, &len);
    r->ref = ptm_core_new(&r->cfg);
    /* before anything runs, as the reference evaluation requires */
    ptm_core_set_reference(r->ref, true);
    ptm_core_set_source(r->ref, &ptm_gen_source_ops, r->gen);
    err = ptm_core_load(r->ref, blob, len);
    if (err) {
        g_error("interval %" G_GUINT64_FORMAT ": the fast state does not "
                "load into the reference: %s", r->interval, err);
    }
    r->checked++;
}

static void mismatch(Replay *r, uint64_t *count, const char *which,
                     uint64_t t, uint32_t addr, uint64_t want, uint64_t got)
{
    if ((*count)++ < REPORT_MAX) {
        fprintf(stderr, "interval %" G_GUINT64_FORMAT " t=%" G_GUINT64_FORMAT
                " read 0x%x: QEMU 0x%" G_GINT64_MODIFIER "x, %s core 0x%"
                G_GINT64_MODIFIER "x\n", r->interval, t, addr, want, which,
                got);
    }
}

static void replay_access(Replay *r, bool is_read, uint64_t t,
                          uint32_t addr, unsigned size, uint64_t val)
{
    uint64_t got;

    r->accesses++;
    if (!is_read) {
        ptm_core_write(r->fast, t, addr, val, size);
        if (r->ref) {
            ptm_core_write(r->ref, t, addr, val, size);
        }
        return;
    }
    r->reads++;
    got = ptm_core_read(r->fast, t, addr, size);

    if (got != val) {
        mismatch(r, &r->fast_bad, "fast", t, addr, val, got);
    }
    if (r->ref) {
        got = ptm_core_read(r->ref, t, addr, size);
        if (got != val) {
            mismatch(r, &r->ref_bad, "reference", t, addr, val, got);
        }
    }
}

static void settings(Replay *r, uint64_t t, const uint64_t *v)
{
    PtmSettings s = {
        .mps = v[0], .mrrs = v[1], .ext_tag = v[2], .tag_10bit = v[3],
        .rcb_128 = v[4],
    };

    for (unsigned e = 0; e < r->cfg.pcie_endpoints; e++) {
        ptm_core_set_settings(r->fast, t, e, &s);
    }
}

/* Up to n numbers after the keyword: the first decimal, the rest hex. */
static unsigned numbers(const char *p, uint64_t *v, unsigned n)
{
    unsigned i;

    for (i = 0; i < n; i++) {
        char *end;

        while (*p == ' ') {
            p++;
        }
        if (*p == '\n' || !*p) {
            break;
        }
        v[i] = g_ascii_strtoull(p, &end, i ? 16 : 10);
        if (end == p) {
            break;
        }
        p = end;
    }
    return i;
}

static void line(Replay *r, const char *l, unsigned lineno)
{
    const char *sp = strchr(l, ' ');
    size_t kw = sp ? (size_t)(sp - l) : strcspn(l, "\n");
    uint64_t v[6];
    unsigned n = sp ? numbers(sp, v, 6) : 0;

#define IS(word, args) (kw == strlen(word) && !strncmp(l, word, kw) && \
                        n == (args))
    if ((l[0] == 'r' || l[0] == 'w') && kw == 1 && n == 4) {
        replay_access(r, l[0] == 'r', v[0], v[1], v[2], v[3]);
    } else if (IS("interval", 1)) {
        ref_finish(r);
        r->interval = v[0];
        if (v[0] == 1 || (r->sample && v[0] % r->sample == 0)) {
            ref_start(r);
        }
    } else if (IS("settings", 6)) {
        settings(r, v[0], v + 1);
    } else if (IS("power_on", 1)) {
        ptm_core_power_on(r->fast, v[0]);
    } else if (IS("reset", 1)) {
        ptm_core_reset(r->fast, v[0]);
    } else if (IS("end", 0)) {
        ref_finish(r);
        r->ended = true;
    } else if (l[0] != '#' && l[0] != '\n') {
        g_error("schedule line %u: cannot read: %s", lineno, l);
    }
#undef IS
}

int main(int argc, char **argv)
{
    Replay r = { .sample = 600 };
    const PtmGenModel *m = ptm_gen_model_find("ptc");
    g_autofree void *params = NULL;
    g_autofree char *err = NULL;
    PtmGeometry geo;
    FILE *in = stdin;
    char buf[512];
    unsigned lineno = 0;
    int i;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sample") && i + 1 < argc) {
            r.sample = g_ascii_strtoull(argv[++i], NULL, 10);
        } else if (argv[i][0] == '-' || in != stdin) {
            fprintf(stderr, "usage: ptm-soak-ref [--sample N] [SCHEDULE]\n");
            return 2;
        } else {
            in = fopen(argv[i], "r");
            if (!in) {
                g_error("cannot open %s", argv[i]);
            }
        }
    }

    /* the card and the traffic as soak.py gives them to QEMU */
    ptm_config_default(&r.cfg);
    r.fast = ptm_core_new(&r.cfg);
    ptm_core_geometry(r.fast, &geo);
    params = g_malloc0(m->params_size);
    m->defaults(params);
    r.gen = ptm_gen_new(m, params, &geo, &err);
    if (!r.gen) {
        g_error("ptc: %s", err);
    }
    ptm_core_set_source(r.fast, &ptm_gen_source_ops, r.gen);

    while (fgets(buf, sizeof(buf), in)) {
        line(&r, buf, ++lineno);
    }
    if (!r.ended) {
        /* soak.py ended early; what was replayed still counts */
        ref_finish(&r);
    }
    check_state(&r, r.fast, "fast");

    printf("intervals=%" G_GUINT64_FORMAT "\n", r.interval);
    printf("complete=%d\n", r.ended);
    printf("accesses=%" G_GUINT64_FORMAT "\n", r.accesses);
    printf("reads=%" G_GUINT64_FORMAT "\n", r.reads);
    printf("fast_mismatches=%" G_GUINT64_FORMAT "\n", r.fast_bad);
    printf("checked=%" G_GUINT64_FORMAT "\n", r.checked);
    printf("ref_mismatches=%" G_GUINT64_FORMAT "\n", r.ref_bad);
    printf("check_failures=%" G_GUINT64_FORMAT "\n", r.check_bad);
    printf("lost_deltas=%" G_GUINT64_FORMAT "\n",
           ptm_core_lost_deltas(r.fast));
    printf("applied_deltas=%" G_GUINT64_FORMAT "\n",
           ptm_core_applied_deltas(r.fast));
    printf("cpu_s=%.3f\n", cpu_now());
    printf("ref_cpu_s=%.3f\n", r.ref_cpu);
    printf("ref_cpu_max_s=%.3f\n", r.ref_max);

    ptm_core_free(r.fast);
    ptm_gen_free(r.gen);
    if (in != stdin) {
        fclose(in);
    }
    return r.fast_bad || r.ref_bad || r.check_bad || !r.ended;
}
