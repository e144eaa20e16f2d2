/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the replay generator's unit tests share (replay-support.h). */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#include "replay-support.h"

char *tmp_file(const char *suffix, const char *text)
{
    g_autofree char *tmpl = g_strdup_printf("ptm-replay-XXXXXX%s", suffix);
    GError *err = NULL;
    char *path;
    int fd = g_file_open_tmp(tmpl, &path, &err);

    g_assert_no_error(err);
    g_close(fd, NULL);
    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    return path;
}

void card_geometry(const PtmConfig *cfg, PtmGeometry *geo)
{
    PtmCore *core = ptm_core_new(cfg);

    ptm_core_geometry(core, geo);
    ptm_core_free(core);
}

/* The probe as the core describes it to sources and counters. */
void probe_shape(const PtmConfig *cfg, unsigned e, PtmDomain d,
                 PtmProbeShape *sh)
{
    PtmCore *core = ptm_core_new(cfg);

    ptm_core_probe_shape(core, e, d, sh);
    ptm_core_free(core);
}

PtmGen *replay_gen(const PtmGeometry *geo, const char *file,
                   const char *scope, const char *end, char **err)
{
    PtmReplayParams p;

    ptm_replay_params_default(&p);
    g_strlcpy(p.file, file, sizeof(p.file));
    g_strlcpy(p.scope, scope, sizeof(p.scope));
    g_strlcpy(p.end, end, sizeof(p.end));
    *err = NULL;
    return ptm_gen_new(&ptm_model_replay, &p, geo, err);
}

PtmGen *replay_ok(const PtmGeometry *geo, const char *file,
                  const char *scope, const char *end)
{
    char *err;
    PtmGen *g = replay_gen(geo, file, scope, end, &err);

    if (!g) {
        g_error("%s", err);
    }
    return g;
}

/*
 * Counts of the cycles [start, start + n) of a probe as the generator
 * describes them, in fills of at most `step` cycles: the per-cycle
 * reference, asserted equal to the fast path.
 */
void count_span(PtmGen *g, const PtmProbeShape *sh, uint64_t start,
                uint64_t n, uint64_t step, uint64_t *acc)
{
    PtmChunk *ch = ptm_chunk_new();
    PtmCountState a = { 0 }, b = { 0 };
    uint64_t ref[256] = { 0 }, fast[256] = { 0 };
    uint64_t end = start + n;

    ptm_count_state_window_start(&a);
    ptm_count_state_window_start(&b);
    while (start < end) {
        uint64_t max = MIN(end - start, step), got, sum = 0;

        ch->seg = ch->scratch;
        ch->nseg = 0;
        ch->repeat = 1;
        got = ptm_gen_source_ops.fill(g, &sh->info, start, max, ch);
        g_assert_cmpuint(got, >=, 1);
        g_assert_cmpuint(got, <=, max);
        g_assert_cmpuint(ch->nseg, >=, 1);
        g_assert_cmpuint(ch->nseg, <=, PTM_CHUNK_SEGMENTS);
        for (unsigned i = 0; i < ch->nseg; i++) {
            g_assert_cmpuint(ch->seg[i].cycles, >=, 1);
            sum += ch->seg[i].cycles;
        }
        g_assert_cmpuint(sum * ch->repeat, ==, got);
        ptm_count_chunk_reference(sh, &a, ch, ref);
        ptm_count_chunk(sh, &b, ch, fast);
        start += got;
    }
    g_assert_cmpmem(ref, sh->channels * sizeof(ref[0]),
                    fast, sh->channels * sizeof(fast[0]));
    g_assert_cmpuint(a.open, ==, b.open);
    memcpy(acc, ref, sh->channels * sizeof(ref[0]));
    ptm_chunk_free(ch);
}

/* Channels of bus b of a probe of R regions (two regions assumed). */
void expect_bus(uint64_t *exp, unsigned R, unsigned b, uint64_t words,
                uint64_t stall, uint64_t sof, uint64_t mvb,
                uint64_t mvb_stall, uint64_t items, uint64_t r0,
                uint64_t r1)
{
    uint64_t *x = exp + ptm_ch_bus(R, b, 0);

    x[PTM_CH_WORDS] = words;
    x[PTM_CH_STALL] = stall;
    x[PTM_CH_SOF] = sof;
    x[PTM_CH_MVB] = mvb;
    x[PTM_CH_MVB_STALL] = mvb_stall;
    x[PTM_CH_ITEMS] = items;
    x[PTM_CH_REGION0] = r0;
    x[PTM_CH_REGION0 + 1] = r1;
}

/* BRAKE channels of a PCIe probe of R regions: reasons, tag and FIFO bands */
uint64_t *brakes_of(uint64_t *c, unsigned R)
{
    return c + 1 + 2 * (6 + R);
}

void assert_counts(const uint64_t *got, const uint64_t *exp,
                   unsigned n)
{
    for (unsigned c = 0; c < n; c++) {
        if (got[c] != exp[c]) {
            g_error("channel %u: %" G_GUINT64_FORMAT ", expected %"
                    G_GUINT64_FORMAT, c, got[c], exp[c]);
        }
    }
}

uint32_t rnd(Rng *r, uint32_t n)
{
    uint64_t x = (r->s += 0x9e3779b97f4a7c15ull);

    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return (uint32_t)((x ^ (x >> 31)) % n);
}
